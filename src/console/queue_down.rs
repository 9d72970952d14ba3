//! The operator's `d` on an instance with a pending controller operation
//! (stackless 0.4.0): re-read the instance's birth right before the command
//! runs (a name torn down and born again meanwhile is refused), then
//! `stackless down NAME --no-wait --json` ([`crate::controller::queue_down`])
//! on a task of the console's runtime, so the render loop never waits. A
//! dry run (`--dry-run`) says what it would run and runs nothing. Every
//! outcome is one Activity through the [`Recorder`] (the pane, the audit
//! trail, the log, redacted).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::controller::queue_down;
use crate::model::Instance;
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::birth_check::{BirthSeen, birth_refusal};
use crate::model::rows::Status;
use crate::recorder::Recorder;
use crate::store::{Access, Store};

/// What a queued teardown needs besides the instance.
#[derive(Debug, Clone)]
pub(super) struct QueueDownWiring {
    /// The stackless program (`--stackless`).
    pub(super) program: OsString,
    /// The store, re-read for the birth.
    pub(super) path: PathBuf,
    /// `--dry-run`: say what would run, run nothing.
    pub(super) dry_run: bool,
}

/// Why the teardown of `seen` may not be queued now, from a fresh read of
/// its row (`None`: it may): gone, another birth, no longer active.
fn recheck(path: &std::path::Path, seen: &Instance) -> Option<String> {
    let mut store = match Store::open(path, Access::ReadOnly) {
        Ok(store) => store,
        Err(error) => return Some(format!("cannot re-read the instance: {error}")),
    };
    match store.recheck(&seen.name) {
        Ok(None) => Some("refused: the instance is gone from the store; not queued".into()),
        Ok(Some(now)) => match birth_refusal(
            &BirthSeen::of(seen),
            &BirthSeen::new(now.birth.as_ref(), now.created_at),
        ) {
            Some(refusal) => Some(format!("{refusal}; not queued")),
            None if now.status != Status::Active => {
                Some("refused: no longer active; not queued".into())
            }
            None => None,
        },
        Err(error) => Some(format!("cannot re-read the instance: {error}")),
    }
}

/// Queue the teardown of `instance` (behind its `behind`) on a task of
/// `runtime`, reporting through `recorder` (stamped with `clock()`, unix
/// seconds). Returns at once.
pub(super) fn spawn(
    runtime: &tokio::runtime::Handle,
    wiring: QueueDownWiring,
    instance: Instance,
    behind: String,
    recorder: Recorder,
    clock: fn() -> i64,
) {
    spawn_all(runtime, wiring, vec![(instance, behind)], recorder, clock);
}

/// [`spawn`] for each of `queued` (a bulk `d`), one after another on one
/// task: never more than one `stackless` started at a time for them.
pub(super) fn spawn_all(
    runtime: &tokio::runtime::Handle,
    wiring: QueueDownWiring,
    queued: Vec<(Instance, String)>,
    recorder: Recorder,
    clock: fn() -> i64,
) {
    if queued.is_empty() {
        return;
    }
    runtime.spawn(async move {
        for (instance, behind) in queued {
            let activity = queue_one(&wiring, instance, &behind, clock).await;
            recorder.record(activity);
        }
    });
}

/// Re-read `instance`'s birth, then queue its teardown (or, dry, say what
/// would run): the one Activity that says how it went.
async fn queue_one(
    wiring: &QueueDownWiring,
    instance: Instance,
    behind: &str,
    clock: fn() -> i64,
) -> Activity {
    let name = instance.name.clone();
    let say = |kind, detail: String| Activity::new(clock(), Actor::Operator, &name, kind, detail);
    let argv = match queue_down::argv(&wiring.program, &instance.name) {
        Ok(argv) => argv,
        Err(why) => return say(ActivityKind::Refused, format!("refused: {why}")),
    };
    let path = wiring.path.clone();
    let refusal = tokio::task::spawn_blocking(move || recheck(&path, &instance))
        .await
        .unwrap_or_else(|error| Some(format!("cannot re-read the instance: {error}")));
    if let Some(refusal) = refusal {
        let kind = if refusal.starts_with("refused") {
            ActivityKind::Refused
        } else {
            ActivityKind::Error
        };
        return say(kind, refusal);
    }
    if wiring.dry_run {
        return say(
            ActivityKind::WouldReap,
            format!(
                "dry run: would run {} (behind its {behind}); nothing run",
                queue_down::shown(&argv)
            ),
        );
    }
    let outcome = queue_down::run(&argv, queue_down::TIMEOUT).await;
    queue_down::activity(&name, behind, &outcome, clock())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;

    /// The real 0.4.0 fixture (alpha active) in a temporary directory.
    fn store() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let source = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/real-0.4.0-v14.db"
        );
        std::fs::copy(source, &path).unwrap();
        (dir, path)
    }

    fn alpha(path: &std::path::Path) -> Instance {
        let mut store = Store::open(path, Access::ReadOnly).unwrap();
        let now = store.recheck("alpha").unwrap().unwrap();
        Instance {
            name: "alpha".into(),
            substrate: "local".into(),
            status: Status::Active,
            created_at: None,
            tombstoned_at: None,
            lease: None,
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: now.birth,
        }
    }

    /// What one queued teardown reports, `(kind, detail)`.
    fn report(wiring: QueueDownWiring, instance: Instance) -> (ActivityKind, String) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let recorder = Recorder::new(None, crate::recorder::Forward::Console(tx));
        spawn(
            runtime.handle(),
            wiring,
            instance,
            "up".into(),
            recorder,
            || 42,
        );
        let event = runtime.block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv()).await
        });
        let Ok(Some(Event::Activity(activity))) = event else {
            panic!("no activity: {event:?}");
        };
        assert_eq!((activity.at, activity.actor), (42, Actor::Operator));
        (activity.kind, activity.detail)
    }

    #[test]
    fn a_dry_run_says_what_it_would_run_and_a_reborn_name_is_refused() {
        let (_dir, path) = store();
        // A program that cannot run: nothing is run on either path.
        let wiring = QueueDownWiring {
            program: "/nonexistent/stackless".into(),
            path: path.clone(),
            dry_run: true,
        };
        assert_eq!(
            report(wiring.clone(), alpha(&path)),
            (
                ActivityKind::WouldReap,
                "dry run: would run /nonexistent/stackless down alpha --no-wait --json \
                 (behind its up); nothing run"
                    .into()
            )
        );
        let mut reborn = alpha(&path);
        let stored = reborn.birth.as_ref().unwrap().instance_id().to_owned();
        reborn.birth = Some(crate::model::rows::Birth::new("ffff", "sl-ffff"));
        assert_eq!(
            report(wiring.clone(), reborn),
            (
                ActivityKind::Refused,
                format!(
                    "refused: the birth asked about (ffff) is not the instance's ({stored}): \
                     it was born again, or another store was read; not queued"
                )
            )
        );
        let mut gone = alpha(&path);
        gone.name = "nosuch".into();
        assert_eq!(
            report(wiring.clone(), gone),
            (
                ActivityKind::Refused,
                "refused: the instance is gone from the store; not queued".into()
            )
        );
        let mut hostile = alpha(&path);
        hostile.name = "-rf".into();
        assert_eq!(
            report(wiring, hostile),
            (ActivityKind::Refused, "refused: not a DNS-safe name".into())
        );
    }

    #[test]
    fn not_a_dry_run_runs_the_command() {
        let (_dir, path) = store();
        let wiring = QueueDownWiring {
            program: "/nonexistent/stackless".into(),
            path: path.clone(),
            dry_run: false,
        };
        let (kind, detail) = report(wiring, alpha(&path));
        assert_eq!(kind, ActivityKind::Error);
        assert!(
            detail.starts_with("queued teardown: cannot run /nonexistent/stackless: "),
            "{detail}"
        );
    }
}
