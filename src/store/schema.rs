//! The stackless schema, migrations 1-4, exactly as stackless creates it
//! (tables, columns, constraints, STRICT). Used only to create a store that
//! does not exist yet (the default path's first run, `--demo`): an existing
//! store is never migrated.

/// Migration batches, in order; batch `i` sets `user_version = i + 1`. Run as
/// `BEGIN; <sql>; PRAGMA user_version = N; COMMIT;` (contract, "Schema").
pub(crate) const MIGRATIONS: [&str; 4] = [
    // 1: instances, leases, op_locks, checkpoints.
    "CREATE TABLE instances (
    -- One name, one truth (invariant 1). Unique across substrates by
    -- construction: uniqueness is scoped to the state store.
    name TEXT PRIMARY KEY,
    substrate TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'tombstoned')),
    -- The definition snapshot taken at creation: nothing is re-derived
    -- from ambient context at runtime (invariant 1).
    definition TEXT NOT NULL,
    -- Per-invocation --source pins, recorded JSON (service -> path).
    source_overrides TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    tombstoned_at INTEGER
) STRICT;
CREATE TABLE leases (
    instance TEXT PRIMARY KEY REFERENCES instances(name) ON DELETE CASCADE,
    duration_secs INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE TABLE op_locks (
    -- One operation at a time per instance (§2). Holder identified by
    -- PID + process start time so a crashed holder is detectable.
    instance TEXT PRIMARY KEY REFERENCES instances(name) ON DELETE CASCADE,
    operation TEXT NOT NULL,
    holder_pid INTEGER NOT NULL,
    holder_start_time INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL
) STRICT;
CREATE TABLE checkpoints (
    -- Every step that creates a resource records it before moving on,
    -- so an interrupted up resumes and an interrupted down knows
    -- everything it must hunt down (§2).
    instance TEXT NOT NULL REFERENCES instances(name) ON DELETE CASCADE,
    step_id TEXT NOT NULL,
    resource_kind TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '{}',
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (instance, step_id)
) STRICT;",
    // 2: where the definition was read from.
    "ALTER TABLE instances ADD COLUMN definition_dir TEXT NOT NULL DEFAULT '';",
    // 3: reap-attempt bookkeeping (§6).
    "CREATE TABLE reap_attempts (
    instance TEXT PRIMARY KEY REFERENCES instances(name) ON DELETE CASCADE,
    attempts INTEGER NOT NULL,
    last_error TEXT NOT NULL,
    -- Backoff gate: the reaper does not retry before this unix second.
    next_retry_at INTEGER NOT NULL
) STRICT;",
    // 4: the lock holder's host, so a lock from another machine is not
    // probed as local.
    "ALTER TABLE op_locks ADD COLUMN holder_host TEXT NOT NULL DEFAULT '';",
];
