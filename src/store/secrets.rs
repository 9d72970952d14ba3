//! `secret_history` (migration 10, stackless 0.4.0): the values stackless
//! redacts from everything it prints (`stackless-core-0.4.0/src/state/
//! secrets.rs:81-87`: `SELECT DISTINCT value FROM secret_history`, every
//! birth's, retired ones too). Read here and nowhere else: the values go
//! straight into a [`Redactor`] (whose `Debug` shows only how many there
//! are) and are never shown, written, or put in a snapshot's output.
//!
//! Texts this console reads from the store that stackless or its workloads
//! wrote (an operation's `error_json`, a reap attempt's `last_error`) are
//! redacted as they are read ([`redact_rows`]), so no reader of a snapshot
//! sees a value.

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::model::detail::InstanceDetail;
use crate::model::redact::Redactor;
use crate::model::{Operation, ReapAttempt};

/// The redactor of every value in `secret_history`, read on `conn` (inside
/// the caller's read transaction, so it matches the rows read with it).
/// A value that is not text (a hand-made store) is read as lossy UTF-8.
///
/// # Errors
/// `SQLite` errors (the caller checked that the table is there).
pub(super) fn redactor(conn: &Connection) -> rusqlite::Result<Redactor> {
    let mut stmt = conn.prepare_cached("SELECT DISTINCT value FROM secret_history")?;
    let mut rows = stmt.query([])?;
    let mut values = Vec::new();
    while let Some(row) = rows.next()? {
        match row.get_ref(0)? {
            ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
                values.push(String::from_utf8_lossy(bytes).into_owned());
            }
            ValueRef::Null | ValueRef::Integer(_) | ValueRef::Real(_) => {}
        }
    }
    Ok(Redactor::new(values))
}

/// Redact the texts of `operations` (`error_json`) and `reap_attempts`
/// (`last_error`) as they are read, through the rules a child's answer
/// goes through where it enters the program
/// ([`Redactor::child_output`]: JSON by field, as stackless redacts its
/// replies, and the credentials written as text: `token=x`, `Bearer x`,
/// `https://u:p@h`, ...): a text written by stackless itself, an older
/// console or by hand is never published (snapshot, stream, backoff rows,
/// detail) with more in clear than a fresh answer would be. Unchanged
/// texts are left as written.
pub(super) fn redact_rows(
    redactor: &Redactor,
    operations: &mut [Operation],
    reap_attempts: &mut [ReapAttempt],
) {
    let shown = |text: &mut String| {
        let redacted = redactor.child_output(text);
        if redacted != *text {
            *text = redacted;
        }
    };
    for operation in operations {
        if let Some(error) = &mut operation.error_json {
            shown(error);
        }
    }
    for attempt in reap_attempts {
        shown(&mut attempt.last_error);
    }
}

/// Whether `conn`'s store has a `secret_history` with its `value` column
/// (for reads that do not keep a [`super::Layout`], as the detail's).
///
/// # Errors
/// `SQLite` errors.
pub(super) fn has_history(conn: &Connection) -> rusqlite::Result<bool> {
    let found: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('secret_history') WHERE name = 'value'",
        [],
        |row| row.get(0),
    )?;
    Ok(found > 0)
}

/// Redact `detail` by the values of `conn`'s `secret_history`, when the
/// store has one (inside the detail's read transaction).
///
/// # Errors
/// `SQLite` errors.
pub(super) fn redact_detail_read(
    conn: &Connection,
    detail: &mut InstanceDetail,
) -> rusqlite::Result<()> {
    if has_history(conn)? {
        redact_detail(&redactor(conn)?, detail);
    }
    Ok(())
}

/// Redact every text of `detail` the detail view shows or copies: the
/// definition and its directory, `source_overrides`, the checkpoints, the
/// resources' ids, the revision and the observations' drift.
pub(super) fn redact_detail(redactor: &Redactor, detail: &mut InstanceDetail) {
    let text = |t: &mut String| *t = redactor.text(t);
    let json = |t: &mut String| *t = redactor.json_text(t);
    text(&mut detail.definition);
    text(&mut detail.definition_dir);
    json(&mut detail.source_overrides);
    for checkpoint in &mut detail.checkpoints {
        text(&mut checkpoint.step_id);
        text(&mut checkpoint.resource_id);
        json(&mut checkpoint.payload);
    }
    for resource in &mut detail.resources {
        text(&mut resource.id);
    }
    if let Some(revision) = &mut detail.revision {
        json(&mut revision.desired);
        if let Some(applied) = &mut revision.applied {
            json(applied);
        }
    }
    for observation in &mut detail.observations {
        for drift in &mut observation.drift {
            text(&mut drift.expected);
            text(&mut drift.actual);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_every_birth_read_distinct_and_rows_redacted() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE secret_history (owner_id TEXT NOT NULL, value TEXT NOT NULL,
                 PRIMARY KEY (owner_id, value));
             INSERT INTO secret_history VALUES ('a', 'sk_one'), ('b', 'sk_one'),
                 ('b', 'pw-two'), ('c', '');",
        )
        .unwrap();
        let redactor = redactor(&conn).unwrap();
        assert_eq!(redactor.len(), 2);
        let mut operations = vec![Operation {
            id: "op".into(),
            instance: "demo".into(),
            instance_id: None,
            verb: "up".into(),
            status: crate::model::OpStatus::Failed,
            cancel_requested: false,
            created_at: 1,
            updated_at: 2,
            error_json: Some(
                r#"{"schema_version":2,"code":"x","message":"bad sk_one","token":"t"}"#.into(),
            ),
            progress: None,
            ran: None,
        }];
        let mut attempts = vec![ReapAttempt {
            instance: "demo".into(),
            attempts: 1,
            last_error: "exit 1: password pw-two refused".into(),
            next_retry_at: 3,
        }];
        redact_rows(&redactor, &mut operations, &mut attempts);
        assert_eq!(
            operations[0].error_json.as_deref(),
            Some(
                r#"{"schema_version":2,"code":"x","message":"bad [redacted]","token":"[redacted]"}"#
            )
        );
        assert_eq!(
            attempts[0].last_error,
            "exit 1: password [redacted] refused"
        );
        assert!(has_history(&conn).unwrap());
        assert!(!has_history(&Connection::open_in_memory().unwrap()).unwrap());
    }

    /// A stored `error_json` or `last_error` (written by stackless, an
    /// older console, by hand) is read through the child-answer rules
    /// whatever `secret_history` holds: no credential-named field, no
    /// `token=x`, no bearer, no URL password comes out of the read.
    #[test]
    fn stored_texts_are_read_through_the_child_answer_rules() {
        let mut operations = vec![Operation {
            id: "op".into(),
            instance: "demo".into(),
            instance_id: None,
            verb: "down".into(),
            status: crate::model::OpStatus::Failed,
            cancel_requested: false,
            created_at: 1,
            updated_at: 2,
            error_json: Some(
                r#"{"code":"engine.failed","message":"token=T1 via https://u:T2@h.example","details":{"pwd":"T3"}}"#.into(),
            ),
            progress: None,
            ran: None,
        }];
        let mut attempts = vec![ReapAttempt {
            instance: "demo".into(),
            attempts: 2,
            last_error: "down failed: Authorization: Bearer T4 --password T5".into(),
            next_retry_at: 3,
        }];
        redact_rows(&Redactor::default(), &mut operations, &mut attempts);
        assert_eq!(
            operations[0].error_json.as_deref(),
            Some(
                r#"{"code":"engine.failed","message":"token=[redacted] via https://[redacted]@h.example","details":{"pwd":"[redacted]"}}"#
            )
        );
        assert_eq!(
            attempts[0].last_error,
            "down failed: Authorization: Bearer [redacted] --password [redacted]"
        );
        // Nothing to redact: left as written, spacing and all.
        let plain = "{ \"code\": \"engine.failed\" }";
        let mut operations = vec![Operation {
            error_json: Some(plain.into()),
            ..operations[0].clone()
        }];
        redact_rows(&Redactor::default(), &mut operations, &mut []);
        assert_eq!(operations[0].error_json.as_deref(), Some(plain));
    }

    #[test]
    fn the_details_texts_are_redacted() {
        let redactor = Redactor::new(["sk_one".into()]);
        let mut detail = InstanceDetail {
            definition: "[services.web.env]\nAPI = \"sk_one\"".into(),
            source_overrides: r#"{"web":"/src/sk_one"}"#.into(),
            checkpoints: vec![crate::model::detail::Checkpoint {
                step_id: "start:web".into(),
                resource_kind: "process".into(),
                resource_id: "1".into(),
                payload: r#"{"pid":1,"env":{"API_TOKEN":"x"},"note":"sk_one"}"#.into(),
                recorded_at: None,
            }],
            revision: Some(crate::model::detail::Revision {
                desired: r#"{"env":{"API":"sk_one"}}"#.into(),
                applied: None,
            }),
            ..InstanceDetail::default()
        };
        redact_detail(&redactor, &mut detail);
        assert_eq!(
            detail.definition,
            "[services.web.env]\nAPI = \"[redacted]\""
        );
        assert_eq!(detail.source_overrides, r#"{"web":"/src/[redacted]"}"#);
        assert_eq!(
            detail.checkpoints[0].payload,
            r#"{"pid":1,"env":{"API_TOKEN":"[redacted]"},"note":"[redacted]"}"#
        );
        assert_eq!(
            detail.revision.map(|r| r.desired),
            Some(r#"{"env":{"API":"[redacted]"}}"#.into())
        );
    }
}
