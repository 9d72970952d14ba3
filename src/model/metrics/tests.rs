use super::*;

/// A hostile label value is escaped (`\`, `"`, newline) and cut.
#[test]
fn label_values_are_escaped_and_cut() {
    assert_eq!(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    let long = "x".repeat(MAX_LABEL_CHARS + 5);
    let cut = escape_label(&long);
    assert_eq!(cut.chars().count(), MAX_LABEL_CHARS);
    assert!(cut.ends_with('…'));
    assert_eq!(
        escape_label(&"y".repeat(MAX_LABEL_CHARS)),
        "y".repeat(MAX_LABEL_CHARS)
    );
}

/// A label keeps its first values and counts the rest as `other`.
#[test]
fn a_label_takes_at_most_its_cap_of_values() {
    let mut capped = Capped::default();
    let written: Vec<String> = (0..MAX_LABEL_VALUES + 3)
        .map(|n| capped.of(&format!("s{n:02}")))
        .collect();
    assert_eq!(
        written[MAX_LABEL_VALUES - 2],
        format!("s{:02}", MAX_LABEL_VALUES - 2)
    );
    assert_eq!(written[MAX_LABEL_VALUES - 1], OTHER);
    assert_eq!(written[MAX_LABEL_VALUES + 2], OTHER);
    assert_eq!(capped.of("s00"), "s00");
}

/// The text: HELP, TYPE, UNIT, samples, `# EOF`.
#[test]
fn families_are_written_in_the_text_format() {
    let text = encode(&[
        Family::gauge("stackless_x_seconds", "A \\ help.", 3.0),
        Family::labelled(
            "stackless_y",
            "Y.",
            "substrate",
            [("lo\"cal".to_owned(), 2.0)],
        ),
    ]);
    assert_eq!(
        text,
        "# HELP stackless_x_seconds A \\\\ help.\n\
         # TYPE stackless_x_seconds gauge\n\
         # UNIT stackless_x_seconds seconds\n\
         stackless_x_seconds 3\n\
         # HELP stackless_y Y.\n\
         # TYPE stackless_y gauge\n\
         stackless_y{substrate=\"lo\\\"cal\"} 2\n\
         # EOF\n"
    );
}

/// A store that could not be read says so and nothing else of it.
#[test]
fn an_unread_store_is_store_up_zero() {
    let text = document(
        None,
        Some(reaper_by(&crate::model::controller::Reaping::Nobody)),
        None,
    );
    assert_eq!(
        text,
        "# HELP stackless_store_up Whether the store could be read (1) or not (0).\n\
         # TYPE stackless_store_up gauge\n\
         stackless_store_up 0\n\
         # HELP stackless_reaper_info Who reaps the store's expired instances now (always 1; the label says who).\n\
         # TYPE stackless_reaper_info gauge\n\
         stackless_reaper_info{by=\"nobody\"} 1\n\
         # EOF\n"
    );
}

/// The histogram's buckets are cumulative, `+Inf` equal to `_count`.
#[test]
fn teardown_durations_are_a_cumulative_histogram() {
    let mut counts = AuditCounts::default();
    counts.add("reaper", "teardown", "succeeded", Some(500));
    counts.add("reaper", "teardown", "failed", Some(7_000));
    counts.add("reaper", "teardown", "started", None);
    counts.add("console", "teardown", "succeeded", Some(1));
    counts.add("reaper", "skip", "locked", None);
    let text = encode(&counts.families());
    for line in [
        "stackless_teardowns_total{actor=\"reaper\",outcome=\"attempted\"} 1\n",
        "stackless_teardowns_total{actor=\"reaper\",outcome=\"succeeded\"} 1\n",
        "stackless_teardowns_total{actor=\"reaper\",outcome=\"failed\"} 1\n",
        "stackless_teardowns_total{actor=\"operator\",outcome=\"failed\"} 0\n",
        "stackless_teardown_duration_seconds_bucket{actor=\"reaper\",le=\"1.0\"} 1\n",
        "stackless_teardown_duration_seconds_bucket{actor=\"reaper\",le=\"5.0\"} 1\n",
        "stackless_teardown_duration_seconds_bucket{actor=\"reaper\",le=\"15.0\"} 2\n",
        "stackless_teardown_duration_seconds_bucket{actor=\"reaper\",le=\"+Inf\"} 2\n",
        "stackless_teardown_duration_seconds_sum{actor=\"reaper\"} 7.5\n",
        "stackless_teardown_duration_seconds_count{actor=\"reaper\"} 2\n",
        "stackless_teardown_duration_seconds_count{actor=\"operator\"} 0\n",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
}

/// Helper restarts are a counter by helper name, escaped; no helper, no
/// family.
#[test]
fn helper_restarts_are_a_counter_by_helper() {
    let helpers = [("sh".to_owned(), 3), ("a\"b".to_owned(), 0)];
    let text = super::document_of(&super::Parts {
        helpers: &helpers,
        ..super::Parts::default()
    });
    assert_eq!(
        text,
        "# HELP stackless_store_up Whether the store could be read (1) or not (0).\n\
         # TYPE stackless_store_up gauge\n\
         stackless_store_up 0\n\
         # HELP stackless_helper_restarts_total How often the console's helper supervisor started a helper again after it exited, by helper.\n\
         # TYPE stackless_helper_restarts_total counter\n\
         stackless_helper_restarts_total{helper=\"sh\"} 3\n\
         stackless_helper_restarts_total{helper=\"a\\\"b\"} 0\n\
         # EOF\n"
    );
    assert!(!document(None, None, None).contains("helper"));
}

/// The controller's finished `down`s held are counted by outcome
/// (succeeded, failed; both always written); other verbs and outcomes,
/// and pending ones, are not.
#[test]
fn the_controller_s_finished_downs_are_counted_by_outcome() {
    use crate::model::rows::Rows;
    use crate::model::{OpStatus, Operation, Snapshot};
    let op = |verb: &str, status: OpStatus| Operation {
        id: format!("{verb}-{}", status.as_str()),
        instance: "a".into(),
        instance_id: None,
        verb: verb.into(),
        status,
        cancel_requested: false,
        created_at: 1,
        updated_at: 1,
        error_json: None,
        progress: None,
        ran: None,
    };
    let snapshot = Snapshot::from(Rows {
        generation: crate::model::Generation::new(14),
        operations: vec![
            op("down", OpStatus::Running),
            op("down", OpStatus::Succeeded),
            op("down", OpStatus::Succeeded),
            op("down", OpStatus::Cancelled),
            op("up", OpStatus::Failed),
        ],
        ..Rows::default()
    });
    let state = StoreState::of(&snapshot, 10);
    let text = encode(&state.families());
    for line in [
        "stackless_controller_teardowns{actor=\"controller\",outcome=\"succeeded\"} 2\n",
        "stackless_controller_teardowns{actor=\"controller\",outcome=\"failed\"} 0\n",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    let mut failed = Rows {
        generation: crate::model::Generation::new(14),
        operations: vec![op("down", OpStatus::Failed)],
        ..Rows::default()
    };
    failed.operations.push(op("down", OpStatus::Interrupted));
    let state = StoreState::of(&Snapshot::from(failed), 10);
    assert_eq!(state.controller_downs.get("failed"), Some(&1));
    assert_eq!(state.controller_downs.get("succeeded"), None);
    // A store without the controller's queue (schema 4) has no sample.
    let contract = StoreState::of(&Snapshot::from(Rows::default()), 10);
    assert!(!encode(&contract.families()).contains("stackless_controller_teardowns{"));
}
