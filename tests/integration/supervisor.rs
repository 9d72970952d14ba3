//! The helper supervisor with real child processes: spawn failure, stop
//! (TERM then KILL, whole group), eviction of an earlier run's tenant.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use stackless_tui::event::{Event, SupervisorKind, SupervisorNote};
use stackless_tui::supervisor::{HelperConfig, HelperHandle, ROLE};
use succession::supervision::Restart;

fn config(roles: &Path, argv: &[&str]) -> HelperConfig {
    HelperConfig {
        argv: argv.iter().map(|s| (*s).to_owned()).collect(),
        roles_dir: roles.to_owned(),
        restart: Restart {
            base: Duration::from_millis(50),
            ceiling: Duration::from_millis(200),
            healthy_after: Duration::from_secs(30),
        },
        grace: Duration::from_secs(1),
    }
}

fn wait_note(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
    within: Duration,
    mut want: impl FnMut(&SupervisorNote) -> bool,
) -> SupervisorNote {
    let started = Instant::now();
    let mut seen = Vec::new();
    while started.elapsed() < within {
        match rx.try_recv() {
            Ok(Event::Supervisor(note)) => {
                if want(&note) {
                    return note;
                }
                seen.push(note.text);
            }
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    panic!("no matching supervisor note within {within:?}; saw {seen:#?}");
}

/// Whether `pid` runs: it exists and is not a zombie (an orphan killed in
/// this container waits for a PID 1 that may never reap it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

#[test]
fn a_helper_that_cannot_be_spawned_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(HelperHandle::default());
    stackless_tui::supervisor::thread::spawn(
        config(dir.path(), &["/nonexistent/helper"]),
        tx,
        Arc::clone(&handle),
    )
    .unwrap();
    let note = wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::SpawnFailed
    });
    assert_eq!(
        note.text,
        "helper could not be started: No such file or directory (os error 2)"
    );
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::BackingOff && n.until.is_some()
    });
    handle.stop(Duration::from_millis(100));
}

#[test]
fn stop_terms_then_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    // The helper ignores TERM and leaves a grandchild in its group.
    let script = format!(
        "trap '' TERM; sleep 300 & echo $! > '{}'; while :; do sleep 1; done",
        pidfile.display()
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(HelperHandle::default());
    stackless_tui::supervisor::thread::spawn(
        config(&dir.path().join("roles"), &["/bin/sh", "-c", &script]),
        tx,
        Arc::clone(&handle),
    )
    .unwrap();
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Started
    });
    let helper = i32::try_from(handle.pid().unwrap()).unwrap();
    // The shell creates the file before it writes the pid: wait for a
    // whole number, not for the file.
    let started = Instant::now();
    let read_pid = || {
        std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|text| text.trim().parse::<i32>().ok())
    };
    while read_pid().is_none() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let grandchild: i32 = read_pid().expect("the helper wrote its child's pid");
    assert!(alive(helper) && alive(grandchild));
    let stopping = Instant::now();
    assert!(handle.stop(Duration::from_millis(500)));
    assert!(
        stopping.elapsed() >= Duration::from_millis(500),
        "TERM was ignored, so KILL came after the grace"
    );
    let note = wait_note(&mut rx, Duration::from_secs(5), |n| {
        n.kind == SupervisorKind::Stopped
    });
    assert!(
        note.text.starts_with("helper exited (signal 9) after "),
        "{}",
        note.text
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(helper), "the helper was waited for and is gone");
    assert!(!alive(grandchild), "nothing of its process group survives");
}

#[test]
fn a_verified_tenant_of_an_earlier_run_is_evicted() {
    let dir = tempfile::tempdir().unwrap();
    let roles = dir.path().join("roles");
    // An "orphaned helper" of an earlier console run: a real process, whose
    // claim record says who it is (pid, start time, image).
    let mut orphan = std::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    let orphan_pid = orphan.id();
    let tenant = succession::Tenant::look_up(orphan_pid).unwrap();
    // Reap it the moment it dies, as its real parent (init) would.
    let reaped = std::thread::spawn(move || orphan.wait().unwrap());
    let earlier = succession::Record::new(
        succession::Identity::new(
            succession::Run::from_raw(12345),
            stackless_tui::supervisor::COMPAT,
        ),
        tenant,
    );
    // This test holds the lock on the orphan's behalf.
    let tenancy = succession::Role::new(&roles, ROLE).claim(&earlier).unwrap();

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(HelperHandle::default());
    stackless_tui::supervisor::thread::spawn(
        config(&roles, &["/bin/sh", "-c", "sleep 300"]),
        tx,
        Arc::clone(&handle),
    )
    .unwrap();
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Superseded
    });
    let evicted = wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Evicted
    });
    assert_eq!(
        evicted.text,
        format!("evicted earlier tenant pid {orphan_pid}")
    );
    let status = reaped.join().unwrap();
    assert!(!status.success(), "the orphan was signalled");
    // The orphan is gone; its lock goes with it (here: the test lets go).
    drop(tenancy);
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Started
    });
    handle.stop(Duration::from_millis(200));
}

#[test]
fn an_unverifiable_pid_is_never_signalled() {
    let dir = tempfile::tempdir().unwrap();
    let roles = dir.path().join("roles");
    let mut bystander = std::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    // A record naming the bystander's pid with the wrong start time: a
    // recycled pid. It must be left alone.
    let earlier = succession::Record::new(
        succession::Identity::new(
            succession::Run::from_raw(999),
            stackless_tui::supervisor::COMPAT,
        ),
        succession::Tenant {
            pid: bystander.id(),
            started_at: Some(1),
            image: None,
        },
    );
    let tenancy = succession::Role::new(&roles, ROLE).claim(&earlier).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(HelperHandle::default());
    stackless_tui::supervisor::thread::spawn(
        config(&roles, &["/bin/sh", "-c", "sleep 300"]),
        tx,
        Arc::clone(&handle),
    )
    .unwrap();
    let note = wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Evicted
    });
    assert!(
        note.text
            .starts_with(&format!("did not evict pid {}", bystander.id())),
        "{}",
        note.text
    );
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "the bystander still runs"
    );
    bystander.kill().unwrap();
    bystander.wait().unwrap();
    drop(tenancy);
    handle.stop(Duration::from_millis(200));
}

#[test]
fn a_crashed_helpers_children_do_not_outlive_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let script = format!("sleep 300 & echo $! > '{}'; exit 1", pidfile.display());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(HelperHandle::default());
    stackless_tui::supervisor::thread::spawn(
        config(&dir.path().join("roles"), &["/bin/sh", "-c", &script]),
        tx,
        Arc::clone(&handle),
    )
    .unwrap();
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Exited
    });
    // The supervisor cleans the group up before it backs off.
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::BackingOff
    });
    let child: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let started = Instant::now();
    while alive(child) && started.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(child), "the crashed helper's child was stopped");
    handle.stop(Duration::from_millis(200));
}

#[test]
fn an_unidentified_tenant_is_evicted_by_image_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let roles = dir.path().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    // This console's helper image: a copy of sleep with a path of its own.
    let image = dir.path().join("helper");
    std::fs::copy("/bin/sleep", &image).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&image, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A tenant from an install that published no record: it runs the
    // helper's image, and the role's lock is held with no claim file.
    // Another test thread forking while the copy's write descriptor was
    // open leaves the file "busy" (ETXTBSY) in that child until it execs:
    // retry for a moment instead of failing on the race.
    let mut tries = 0;
    let mut tenant = loop {
        match std::process::Command::new(&image).arg("300").spawn() {
            Ok(child) => break child,
            Err(e) if e.raw_os_error() == Some(26) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("spawn the tenant: {e}"),
        }
    };
    let tenant_pid = tenant.id();
    let reaped = std::thread::spawn(move || tenant.wait().unwrap());
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(roles.join(format!("{ROLE}.lock")))
        .unwrap();
    lock.try_lock().unwrap();

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(HelperHandle::default());
    let started = Instant::now();
    stackless_tui::supervisor::thread::spawn(
        config(&roles, &[image.to_str().unwrap(), "300"]),
        tx,
        Arc::clone(&handle),
    )
    .unwrap();
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::SupersededAnonymously
    });
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "only after the grace"
    );
    let evicted = wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Evicted
    });
    assert_eq!(evicted.text, "evicted an unidentified tenant");
    let status = reaped.join().unwrap();
    assert!(!status.success(), "pid {tenant_pid} was signalled");
    drop(lock);
    wait_note(&mut rx, Duration::from_secs(10), |n| {
        n.kind == SupervisorKind::Started
    });
    handle.stop(Duration::from_millis(200));
}
