//! `stackless-tui replay` in a PTY on a recording of a scripted run
//! (written through the recorder's own sink, at fixed times): the past
//! state at `--at`, the keys stepping to the next change, every action
//! refused with the replay's reason, and `T` answering "why was this
//! instance reaped at 03:12?" from the console alone.

use std::time::Duration;

use stackless_tui::history::files::Dir;
use stackless_tui::history::record::{Retention, Sink};

use crate::harness::Tui;

/// The reap: 2025-12-02T03:12:07Z.
const REAP: i64 = 1_764_645_127;

const WAIT: Duration = Duration::from_secs(20);

/// `payments-staging`'s row: its lease to `expires`, `status`, and the
/// reaper's `down` (pid 4242) holding its lock when `locked`.
fn row(status: &str, expires: i64, locked: bool) -> String {
    let lock = if locked {
        format!(
            r#"{{"operation":"down","holder_pid":4242,"holder_start_time":1,"holder_host":null,"acquired_at":{},"liveness_state":"alive","held":true}}"#,
            REAP - 5
        )
    } else {
        "null".to_owned()
    };
    let tombstoned = if status == "tombstoned" {
        REAP.to_string()
    } else {
        "null".to_owned()
    };
    format!(
        r#"{{"name":"payments-staging","birth":null,"dns_safe":true,"substrate":"local","status":"{status}","created_at":{},"tombstoned_at":{tombstoned},"lease":{{"duration_secs":600,"expires_at":{expires}}},"lock":{lock},"dirty":null,"failed_up":false,"services_dead":0,"gc":null}}"#,
        REAP - 3_600
    )
}

const WEB: &str = r#"{"name":"web-1","birth":null,"dns_safe":true,"substrate":"local","status":"active","created_at":1764640000,"tombstoned_at":null,"lease":{"duration_secs":86400,"expires_at":1764700000},"lock":null,"dirty":null,"failed_up":false,"services_dead":0,"gc":null}"#;

/// One `rows` line and its `synced`.
fn group(seq: u64, t: i64, table: &str, upsert: &str, remove: &str) -> String {
    format!(
        "{{\"type\":\"rows\",\"seq\":{seq},\"table\":\"{table}\",\"upsert\":[{upsert}],\"remove\":[{remove}]}}\n{{\"type\":\"synced\",\"seq\":{seq},\"at\":{t},\"counts\":{{}}}}\n"
    )
}

/// The scripted run, recorded: from 03:02:07 the store with both
/// instances (payments-staging's lease renewed at 03:04:07 to 03:09:07),
/// a failed reap at 03:10:27, the reaper's `down` taking the lock at
/// 03:12:02, then the reap (tombstoned, lock released, backoff cleared)
/// at 03:12:07; a heartbeat every 5 seconds until 03:13:07.
fn record(history: &std::path::Path) {
    let dir = Dir::create(history).expect("history dir");
    let retention = Retention {
        retain_secs: 7 * 86_400,
        max_bytes: 1 << 30,
    };
    let mut sink =
        Sink::new(dir, "/state/stackless/state.db".into(), None, retention).expect("sink");
    let start = REAP - 600;
    let mut script: Vec<(i64, String)> = vec![
        (
            start,
            format!(
                "{{\"type\":\"hello\",\"protocol\":1,\"program\":\"stackless-tui\",\"host\":\"db-1\",\"store\":\"/state/stackless/state.db\",\"schema\":5}}\n{{\"type\":\"reaper\",\"by\":\"console\",\"pid\":4242,\"paused\":false,\"text\":\"reaper: every 1m (console pid 4242)\"}}\n{{\"type\":\"reset\",\"seq\":1}}\n{}",
                group(
                    1,
                    start,
                    "instances",
                    &format!("{},{WEB}", row("active", REAP - 480, false)),
                    ""
                )
            ),
        ),
        (
            REAP - 480,
            group(
                2,
                REAP - 480,
                "instances",
                &row("active", REAP - 180, false),
                "",
            ),
        ),
        (
            REAP - 100,
            group(
                3,
                REAP - 100,
                "backoffs",
                &format!(
                    r#"{{"instance":"payments-staging","attempts":1,"last_error":"exit 1","code":null,"summary":"volume busy","remediation":null,"next_retry_at":{}}}"#,
                    REAP - 10
                ),
                "",
            ),
        ),
        (
            REAP - 5,
            group(
                4,
                REAP - 5,
                "instances",
                &row("active", REAP - 180, true),
                "",
            ),
        ),
        (
            REAP,
            format!(
                "{{\"type\":\"activity\",\"at\":{REAP},\"actor\":\"reaper\",\"instance\":\"payments-staging\",\"kind\":\"reaped\",\"detail\":\"down exited 0 after 5s\"}}\n{{\"type\":\"rows\",\"seq\":5,\"table\":\"backoffs\",\"upsert\":[],\"remove\":[{{\"instance\":\"payments-staging\"}}]}}\n{}",
                group(
                    5,
                    REAP,
                    "instances",
                    &row("tombstoned", REAP - 180, false),
                    ""
                )
            ),
        ),
    ];
    for t in (start..=REAP + 60).step_by(5) {
        script.push((
            t,
            format!("{{\"type\":\"heartbeat\",\"at\":{t},\"seq\":1}}\n"),
        ));
    }
    script.sort_by_key(|(t, _)| *t);
    for (t, lines) in script {
        sink.take(lines.as_bytes(), t);
        sink.tick(t);
    }
}

#[test]
fn replay_shows_the_past_steps_through_changes_refuses_actions_and_t_says_why_it_was_reaped() {
    let history = tempfile::tempdir().expect("tempdir");
    let history = history.path().join("history");
    record(&history);
    let at = (REAP - 60).to_string();
    let mut tui = Tui::spawn(
        &[
            "replay",
            "--history",
            history.to_str().expect("utf-8"),
            "--at",
            &at,
        ],
        120,
        40,
    );
    // 03:11:07: the lease ran out at 03:09:07, one reap failed.
    tui.wait_for_all(
        &[
            "replay 03:11:07",
            "schema v5",
            "payments-staging",
            "expired 2m 00s ago",
            "web-1",
            // The backoff's countdown at the cursor, not the wall clock.
            "retry in 50s",
        ],
        WAIT,
    );
    tui.select("payments-staging");
    // `]`: the next change, the reaper's `down` holding the lock.
    tui.send("]");
    tui.wait_for("replay 03:12:02", WAIT);
    // `]` again: the reap.
    tui.send("]");
    tui.wait_for_all(&["replay 03:12:07", "reaped: down exited 0 after 5s"], WAIT);
    // `d` then `y`: refused, nothing runs.
    tui.send("d");
    tui.wait_for("replay: a recording is read-only", WAIT);
    tui.send("y");
    // `T`: the instance's timeline up to the cursor.
    tui.send("T");
    let screen = tui.wait_for_all(
        &[
            "Timeline payments-staging (oldest first)",
            "lease renewed: expiry 03:04:07 -> 03:09:07",
            "reap attempt 1 failed: volume busy",
            "lock taken: down by pid 4242",
            "reaper reaped: down exited 0 after 5s",
            "03:12:07Z  tombstoned",
        ],
        WAIT,
    );
    assert!(
        screen.contains("who reaps: console pid 4242 reaps"),
        "{screen}"
    );
    // Esc, then Enter: the detail is the store's, never opened by a replay.
    tui.send("\x1b");
    tui.wait_gone("Timeline payments-staging", WAIT);
    tui.send("\r");
    tui.wait_for(
        "replay: the detail is read from the store, not recorded",
        WAIT,
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(WAIT), 0);
}
