use super::*;

#[test]
fn sort_keys_cycle_through_all_six() {
    let mut key = SortKey::default();
    let mut labels = vec![];
    for _ in 0..6 {
        labels.push(key.label());
        key = key.next();
    }
    assert_eq!(key, SortKey::LeaseExpiry);
    assert_eq!(
        labels,
        [
            "lease expiry",
            "name",
            "substrate",
            "reap attempts",
            "status",
            "lock"
        ]
    );
    assert_eq!(SortKey::parse("REAP"), Some(SortKey::ReapAttempts));
    assert_eq!(SortKey::parse("lease"), Some(SortKey::LeaseExpiry));
    assert_eq!(SortKey::parse("colour"), None);
    assert_eq!(SortKey::Lock.column(), 5);
}

#[test]
fn the_lease_sort_is_the_cached_key_sort() {
    use crate::model::{Instance, Instances, Lease, Status};
    let leases = [
        Some(30),
        None,
        Some(i64::MAX),
        Some(10),
        None,
        Some(i64::MIN),
        Some(30),
        Some(10),
    ];
    let instances: Instances = leases
        .iter()
        .enumerate()
        .map(|(n, expires)| Instance {
            name: format!("i{n}"),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(0),
            tombstoned_at: None,
            lease: expires.map(|expires_at| Lease {
                duration_secs: 60,
                expires_at,
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        })
        .collect();
    // From any starting order (a new snapshot starts from the last).
    // (The last start is the answer: only checked.)
    for start in [
        vec![0, 1, 2, 3, 4, 5, 6, 7],
        vec![7, 6, 5, 4, 3, 2, 1, 0],
        vec![5, 3, 7, 0, 6, 2, 1, 4],
    ] {
        let mut sorted = start.clone();
        sort_by_lease(&mut sorted, &instances);
        let mut cached = start;
        cached.sort_by_cached_key(|&p| {
            let lease = instances[p as usize].lease;
            (lease.is_none(), lease.map_or(0, |l| l.expires_at), p)
        });
        assert_eq!(sorted, cached);
        assert_eq!(sorted, [5, 3, 7, 0, 6, 2, 1, 4]);
    }
}

#[test]
fn the_haystacks_are_each_rows_text_lower_cased() {
    use crate::model::{Instance, Instances, Status};
    let rows = [
        ("Alpha", "local", "active"),
        ("", "", "tombstoned"),
        ("ΣΑΣ", "Render", "Weird"),
        ("é\u{0}x", "vercel", "active"),
    ];
    let instances: Instances = rows
        .iter()
        .map(|(name, substrate, status)| Instance {
            name: (*name).to_owned(),
            substrate: (*substrate).into(),
            status: Status::parse(status),
            created_at: Some(0),
            tombstoned_at: None,
            lease: None,
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        })
        .collect();
    let haystacks = Haystacks::new(&instances);
    let read: Vec<&str> = (0..4).filter_map(|p| haystacks.get(p)).collect();
    assert_eq!(
        read,
        [
            "alpha\0local\0active",
            "\0\0tombstoned",
            "σας\0render\0weird",
            "é\0x\0vercel\0active"
        ]
    );
    assert_eq!(haystacks.get(4), None);
}

/// An app over `leases` (one instance each, `i0`, `i1`, ..., in name
/// order), at `now` 0.
fn app_over(leases: &[Option<i64>]) -> App {
    use crate::model::{Instance, Lease, Rows, Snapshot, Status};
    let rows = Rows {
        instances: leases
            .iter()
            .enumerate()
            .map(|(n, expires)| Instance {
                name: format!("i{n}"),
                substrate: "local".into(),
                status: Status::Active,
                created_at: Some(0),
                tombstoned_at: None,
                lease: expires.map(|expires_at| Lease {
                    duration_secs: 60,
                    expires_at,
                }),
                lock: None,
                anomalies: Default::default(),
                dirty: None,
                birth: None,
            })
            .collect(),
        ..Rows::default()
    };
    let config = crate::ui::AppConfig {
        store_label: "state.db".into(),
        reaper: crate::ui::ReaperMode::Off("--no-reaper".into()),
        helper: crate::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, 0);
    app.handle(
        crate::event::Event::Snapshot(Arc::new(Snapshot::from(rows))),
        0,
    );
    app
}

#[test]
fn with_no_filter_the_rows_shown_are_the_sorted_order_itself_not_a_copy() {
    let mut app = app_over(&[Some(30), None, Some(10), Some(20)]);
    let shared = |app: &App| Arc::ptr_eq(&app.instances.order, &app.instances.sorted);
    assert_eq!(app.visible(), [2, 3, 0, 1]);
    assert!(shared(&app));
    // A filter holds its own rows; `sorted` stays whole.
    app.instances.filter = "i2".into();
    app.refilter();
    assert_eq!(app.visible(), [2]);
    assert_eq!(*app.instances.sorted, [2, 3, 0, 1]);
    assert!(!shared(&app));
    // Cleared: shared again.
    app.instances.filter.clear();
    app.refilter();
    assert!(shared(&app));
    // Narrowed from no filter: the rows shown are copied, `sorted` is
    // not cut.
    app.instances.filter = "i".into();
    app.narrow_order();
    assert_eq!(app.visible(), [2, 3, 0, 1]);
    app.instances.filter = "i3".into();
    app.narrow_order();
    assert_eq!(app.visible(), [3]);
    assert_eq!(*app.instances.sorted, [2, 3, 0, 1]);
    // A new sort with the filter cleared: the one order again.
    app.instances.filter.clear();
    app.set_sort(SortKey::Name, None);
    assert_eq!(app.visible(), [0, 1, 2, 3]);
    assert!(shared(&app));
}

#[test]
fn steps_clamp() {
    assert_eq!(step(0, -1, 5), 0);
    assert_eq!(step(4, 1, 5), 4);
    assert_eq!(step(2, isize::MAX / 2, 5), 4);
    assert_eq!(step(2, isize::MIN / 2, 5), 0);
    assert_eq!(step(3, 1, 0), 0);
}
