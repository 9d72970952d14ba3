//! Stores built by hand from the real releases' DDL (tests/fixtures/ddl/,
//! copied verbatim from stackless-core 0.4.0's migrations; 1-5 are
//! byte-identical in 0.2.2/0.3.3), run the way stackless runs them: each
//! migration then `user_version`, WAL. Scenarios with exact rows for the
//! v5 and v14 tests.

use std::path::{Path, PathBuf};

use super::CAPTURE;

/// Migrations 1..=14, in order.
pub const MIGRATIONS: [&str; 14] = [
    include_str!("../fixtures/ddl/001_init.sql"),
    include_str!("../fixtures/ddl/002_definition_dir.sql"),
    include_str!("../fixtures/ddl/003_reaper.sql"),
    include_str!("../fixtures/ddl/004_lock_host.sql"),
    include_str!("../fixtures/ddl/005_dirty.sql"),
    include_str!("../fixtures/ddl/006_operation_identity.sql"),
    include_str!("../fixtures/ddl/007_resources.sql"),
    include_str!("../fixtures/ddl/008_operations.sql"),
    include_str!("../fixtures/ddl/009_stripe_contexts.sql"),
    include_str!("../fixtures/ddl/010_secret_history.sql"),
    include_str!("../fixtures/ddl/011_revisions.sql"),
    include_str!("../fixtures/ddl/012_execution_grants.sql"),
    include_str!("../fixtures/ddl/013_operation_inputs.sql"),
    include_str!("../fixtures/ddl/014_placements.sql"),
];

/// Seven days, the tombstone GC window.
pub const WEEK: i64 = 7 * 86_400;

/// The birth of `alpha` in [`v14`].
pub const ALPHA_ID: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
/// The birth of `bravo` in [`v14`].
pub const BRAVO_ID: &str = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";
/// The birth of `charlie` in [`v14`].
pub const CHARLIE_ID: &str = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3";
/// The birth of `delta` in [`v14`].
pub const DELTA_ID: &str = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4";

/// The failed `up` of `bravo`: the real Report v2 of
/// `engine.source_override.shared` (core-0.4.0/src/engine/run.rs:809-851).
pub const SHARED_ERROR: &str = r#"{"schema_version":2,"code":"engine.source_override.shared","message":"service \"web\" --source path \"/srv/web\" is already pinned by active instance \"alpha\"","instance":"bravo","remediation":"use a separate git worktree per parallel agent, omit --source so stackless materializes per-instance checkouts, or `stackless down alpha` before reusing this checkout","context":{"service":"web","hook":null,"command":null,"source_dir":"/srv/web","log_path":null,"log_hint":null,"exit_status":null,"log_tail":null}}"#;

/// A store at `dir/state.db` with migrations `1..=user_version` applied.
pub fn migrated(dir: &Path, user_version: usize) -> PathBuf {
    let path = dir.join("state.db");
    let conn = rusqlite::Connection::open(&path).expect("create");
    let _: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .expect("wal");
    for (index, sql) in MIGRATIONS.iter().take(user_version).enumerate() {
        conn.execute_batch(&format!(
            "BEGIN; {sql} ; PRAGMA user_version = {}; COMMIT;",
            index + 1
        ))
        .expect("migration");
    }
    path
}

/// Run `sql` on the store at `path`.
pub fn exec(path: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch(sql).expect("sql");
}

/// The instance rows both scenarios share, as of [`CAPTURE`]: `alpha`
/// (active, expired 100 s ago), `bravo` (active, expired 200 s ago),
/// `charlie` (tombstoned 8 days ago: GC due), `delta` (active, 1 h left,
/// dirty), `echo` (tombstoned 1 day ago).
fn common_rows(v14: bool) -> String {
    let now = CAPTURE;
    let birth = |id: &str, ns: &str| {
        if v14 {
            format!(", '{id}', '{ns}'")
        } else {
            String::new()
        }
    };
    let cols = if v14 {
        ", instance_id, resource_namespace"
    } else {
        ""
    };
    format!(
        "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at, dirty{cols})
         VALUES ('alpha', 'local', 'active', '[stack]', {c}, NULL, 0{a}),
                ('bravo', 'local', 'active', '[stack]', {c}, NULL, 0{b}),
                ('charlie', 'local', 'tombstoned', '[stack]', {c}, {t_old}, 0{ch}),
                ('delta', 'local', 'active', '[stack]', {c}, NULL, 1{d}),
                ('echo', 'local', 'tombstoned', '[stack]', {c}, {t_new}, 0{e});
         INSERT INTO leases VALUES ('alpha', 60, {alpha_exp}), ('bravo', 60, {bravo_exp}),
                ('delta', 3600, {delta_exp});",
        c = now - 1000,
        t_old = now - WEEK - 86_400,
        t_new = now - 86_400,
        a = birth(ALPHA_ID, &format!("sl-{ALPHA_ID}")),
        b = birth(BRAVO_ID, &format!("sl-{BRAVO_ID}")),
        ch = birth(CHARLIE_ID, "charlie"),
        d = birth(DELTA_ID, &format!("sl-{DELTA_ID}")),
        e = birth("e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5", "echo"),
        alpha_exp = now - 100,
        bravo_exp = now - 200,
        delta_exp = now + 3600,
    )
}

/// A stackless 0.2/0.3 store (v5) with the shared rows.
pub fn v5() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = migrated(dir.path(), 5);
    exec(&path, &common_rows(false));
    (dir, path)
}

/// A stackless 0.4.0 store (v14) with the shared rows and the controller's
/// queue, as of [`CAPTURE`]:
/// - `op-alpha-down`: alpha's `down`, running since -50 s, newest event
///   `Started start:web 2/3` (after `Completed materialize:web 1/3`);
/// - `op-delta-up`: delta's `up`, queued at -10 s, no events;
/// - `op-bravo-up`: bravo's failed `up` (-500 s .. -490 s), error
///   [`SHARED_ERROR`], newest event `Failed`;
/// - `op-charlie-down`: charlie's succeeded `down`, 8 days ago;
/// - `op-echo-verify`: a succeeded `verify` whose newest event is the
///   journal marker (no progress).
///
/// plus alpha's resources (one with a secret payload), placements, revision
/// (desired != applied), observation, and a `secret_history` row.
pub fn v14() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = migrated(dir.path(), 14);
    let now = CAPTURE;
    exec(&path, &common_rows(true));
    let op = |id: &str,
              instance: &str,
              verb: &str,
              status: &str,
              created: i64,
              updated: i64,
              error: &str| {
        format!(
            "INSERT INTO operations (id, instance, verb, status, request_json, error_json,
               created_at, updated_at, instance_id, output_version)
             VALUES ('{id}', '{instance}', '{verb}', '{status}', '{{\"secret\":\"do-not-read\"}}',
               {error}, {created}, {updated}, NULL, 1);"
        )
    };
    let shared = format!("'{}'", SHARED_ERROR.replace('\'', "''"));
    let sql = [
        op("op-charlie-down", "charlie", "down", "succeeded", now - WEEK - 86_400 - 5, now - WEEK - 86_400, "NULL"),
        op("op-bravo-up", "bravo", "up", "failed", now - 500, now - 490, &shared),
        op("op-echo-verify", "echo", "verify", "succeeded", now - 300, now - 290, "NULL"),
        op("op-alpha-down", "alpha", "down", "running", now - 50, now - 45, "NULL"),
        op("op-delta-up", "delta", "up", "queued", now - 10, now - 10, "NULL"),
        format!(
            "INSERT INTO operation_events (operation_id, event_json, recorded_at) VALUES
             ('op-bravo-up', '{{\"event\":\"Failed\",\"instance\":\"bravo\",\"step_id\":\"materialize:web\",\"step_kind\":\"materialize\",\"node\":\"web\",\"index\":1,\"total\":3,\"code\":\"engine.source_override.shared\",\"at_epoch_ms\":1,\"duration_ms\":3}}', {b}),
             ('op-alpha-down', '{{\"event\":\"Completed\",\"instance\":\"alpha\",\"step_id\":\"materialize:web\",\"step_kind\":\"materialize\",\"node\":\"web\",\"index\":1,\"total\":3,\"code\":null,\"at_epoch_ms\":1,\"duration_ms\":3}}', {a}),
             ('op-echo-verify', '{{\"event\":\"VerificationJournal\",\"version\":1}}', {e}),
             ('op-alpha-down', '{{\"event\":\"Started\",\"instance\":\"alpha\",\"step_id\":\"start:web\",\"step_kind\":\"start\",\"node\":\"web\",\"index\":2,\"total\":3,\"code\":null,\"at_epoch_ms\":2,\"duration_ms\":null}}', {a});",
            b = now - 491,
            a = now - 46,
            e = now - 291,
        ),
        format!(
            "INSERT INTO resources (owner_id, resource_key, step_id, provider, ownership, phase,
               resource_kind, resource_id, payload, created_at, updated_at) VALUES
             ('{ALPHA_ID}', 'process:web', 'start:web', 'local', 'owned', 'ready', 'process', '4242',
              '{{\"token\":\"sk_live_SECRET\"}}', {c}, {u}),
             ('{ALPHA_ID}', 'stripe:project', '', 'stripe', 'shared', 'created', 'stripe-environment',
              'prj_1', '{{\"key\":\"sk_live_SECRET\"}}', {c}, {c}),
             ('{BRAVO_ID}', 'process:web', 'start:web', 'local', 'owned', 'ready', 'process', '1', '{{}}', {c}, {c});
             INSERT INTO placements VALUES ('{ALPHA_ID}', 'service:web', 'local'),
               ('{ALPHA_ID}', 'integration:stripe', 'stripe'), ('{BRAVO_ID}', 'service:web', 'local');
             INSERT INTO instance_revisions VALUES ('{ALPHA_ID}', 'rev-2', 'rev-1'), ('{DELTA_ID}', 'rev-9', 'rev-9');
             INSERT INTO observations VALUES ('{ALPHA_ID}', 'service:web',
               '{{\"existence\":\"present\",\"configuration\":\"pending\",\"readiness\":\"ready\",\"observed_at\":1795960600000,\"error_code\":null,\"drift\":[]}}', {o}),
               ('{ALPHA_ID}', 'integration:stripe', 'not json', {o});
             INSERT INTO secret_history VALUES ('{ALPHA_ID}', 'sk_live_SECRET');",
            c = now - 1000,
            u = now - 900,
            o = now - 86,
        ),
    ]
    .join("\n");
    exec(&path, &sql);
    (dir, path)
}
