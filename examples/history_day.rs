//! A day's recording made in seconds, for BENCHMARKS.md ("The flight
//! recorder"): 10,000 instances, a lease renewed 1,000 times an hour, a
//! heartbeat every 5 s, fed to the recorder's `Sink` on a simulated clock
//! (segments, keyframes, retention and index as `record` writes them);
//! then its size on disk and how long `snapshot --at`'s seek
//! (`history::replay_at`: the index, one segment, the lines up to the
//! time) takes at 25 times spread over the day.
//!
//! ```sh
//! cargo run --release --example history_day -- [DIR] [INSTANCES] [CHANGES_PER_HOUR]
//! ```

use std::time::Instant;

use stackless_tui::history::files::Dir;
use stackless_tui::history::record::{Retention, Sink};

fn row(i: usize, expires_at: i64) -> String {
    format!(
        r#"{{"name":"inst-{i:05}","birth":{{"instance_id":"{i:032x}","resource_namespace":"sl-{i:032x}"}},"dns_safe":true,"substrate":"local","status":"active","created_at":1764000000,"tombstoned_at":null,"lease":{{"duration_secs":3600,"expires_at":{expires_at}}},"lock":null,"dirty":false,"failed_up":false,"services_dead":0,"gc":null}}"#
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir_path = std::path::PathBuf::from(
        args.get(1)
            .cloned()
            .unwrap_or_else(|| "/tmp/history-day".into()),
    );
    let instances: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let per_hour: i64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let _ = std::fs::remove_dir_all(&dir_path);
    let dir = Dir::create(&dir_path).expect("history dir");
    let retention = Retention {
        retain_secs: 7 * 86_400,
        max_bytes: 256_000_000,
    };
    let mut sink = Sink::new(dir.clone(), "/state.db".into(), None, retention).expect("sink");
    let start: i64 = 1_764_000_000;
    let mut seq = 1;
    let mut first = String::from("{\"type\":\"reset\",\"seq\":1}\n");
    for chunk in (0..instances).collect::<Vec<_>>().chunks(100) {
        let rows: Vec<String> = chunk.iter().map(|i| row(*i, start + 3_600)).collect();
        first.push_str(&format!(
            "{{\"type\":\"rows\",\"seq\":1,\"table\":\"instances\",\"upsert\":[{}],\"remove\":[]}}\n",
            rows.join(",")
        ));
    }
    first.push_str(&format!(
        "{{\"type\":\"synced\",\"seq\":1,\"at\":{start},\"counts\":{{\"instances\":{instances}}}}}\n"
    ));
    let made = Instant::now();
    sink.take(first.as_bytes(), start);
    sink.tick(start);
    let every = 3_600 / per_hour.max(1);
    let mut next_change = start + every;
    let mut quiet_since = start;
    for now in start + 1..start + 86_400 {
        if now >= next_change {
            seq += 1;
            let i = usize::try_from(now).unwrap_or(0) % instances;
            let line = format!(
                "{{\"type\":\"rows\",\"seq\":{seq},\"table\":\"instances\",\"upsert\":[{}],\"remove\":[]}}\n{{\"type\":\"synced\",\"seq\":{seq},\"at\":{now},\"counts\":{{\"instances\":{instances}}}}}\n",
                row(i, now + 3_600)
            );
            sink.take(line.as_bytes(), now);
            sink.tick(now);
            next_change += every;
            quiet_since = now;
        } else if now - quiet_since >= 5 {
            let line = format!("{{\"type\":\"heartbeat\",\"at\":{now},\"seq\":{seq}}}\n");
            sink.take(line.as_bytes(), now);
            sink.tick(now);
            quiet_since = now;
        }
    }
    let made = made.elapsed();
    let segments = dir.segments().expect("segments");
    let bytes: u64 = segments.iter().map(|s| s.bytes).sum();
    println!(
        "a day: {} segments, {:.1} MB on disk, made in {:.1} s",
        segments.len(),
        bytes as f64 / 1e6,
        made.as_secs_f64()
    );
    let mut times = Vec::new();
    for k in 0..25 {
        let at = start + 60 + k * (86_400 - 120) / 24;
        let seek = Instant::now();
        let replay = stackless_tui::history::replay_at(&dir, at).expect("recorded");
        let snapshot = replay.snapshot();
        let ms = seek.elapsed().as_secs_f64() * 1e3;
        assert_eq!(snapshot.instances.len(), instances);
        times.push(ms);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "seek (replay_at + the snapshot rebuilt), 25 times over the day: median {:.1} ms, max {:.1} ms",
        times[12], times[24]
    );
}
