use super::*;

/// A secret split across two 4 KiB pieces of a
/// long log line, or left in part at the start of a stderr tail or the
/// end of a line still being written, is never shown in part.
#[test]
fn a_value_cut_at_a_piece_end_is_redacted_in_part_too() {
    let redactor = Redactor::new(["sk_canary_AAAA1111".to_owned()]);
    assert_eq!(
        redactor.cut_text("k_canary_AAAA1111 and on", true, false),
        "[redacted] and on"
    );
    assert_eq!(
        redactor.cut_text("PARTIAL=sk_canary_", false, true),
        "PARTIAL=[redacted]"
    );
    assert_eq!(
        redactor.cut_text("…AA1111 rejected", true, false),
        "…AA1111 rejected",
        "a piece that begins elsewhere is left: `…` is no part of a value"
    );
    assert_eq!(
        redactor.cut_text("AA1111 rejected", true, false),
        "[redacted] rejected"
    );
    // Under CUT_MATCH_MIN bytes, an end is left as it is.
    assert_eq!(redactor.cut_text("111 x", true, false), "111 x");
    // Not cut: only whole values.
    assert_eq!(
        redactor.cut_text("AA1111 rejected", false, false),
        "AA1111 rejected"
    );
    assert_eq!(
        redactor.cut_text("a sk_canary_AAAA1111 b", true, true),
        "a [redacted] b"
    );
}

#[test]
fn log_lines_have_values_and_fields_redacted() {
    let empty = Redactor::default();
    assert_eq!(
        empty.log_line(r#"{"password":"FOLLOWPW"}"#, false, false),
        r#"{"password":"[redacted]"}"#
    );
    assert!(matches!(
        empty.log_line("plain line", false, false),
        std::borrow::Cow::Borrowed("plain line")
    ));
    let redactor = Redactor::new(["sk_canary_AAAA1111".to_owned()]);
    assert_eq!(
        redactor.log_line(
            r#"k_canary_AAAA1111 {"api_key":7,"m":"sk_canary_AAAA1111"} sk_can"#,
            true,
            true
        ),
        r#"[redacted] {"api_key":"[redacted]","m":"[redacted]"} [redacted]"#
    );
}

/// Ordinary words that hold a credential word, or prose around one,
/// stay as written in a log line.
#[test]
fn ordinary_words_stay_in_a_log_line() {
    let redactor = Redactor::default();
    for line in [
        "a basic check passed",
        "password reset succeeded",
        "session started for golf",
        "passenger compass=north author=ann design=v2",
        "provider.auth: denied",
        "login failed: password incorrect",
        "sha256 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "ssh -p 2222 deploy@host.example",
    ] {
        assert!(
            matches!(redactor.log_line(line, false, false), std::borrow::Cow::Borrowed(l) if l == line),
            "{line}"
        );
    }
}

/// What the console shows is sanitized (a tab is `␉`): a value with a
/// tab in it is matched as shown too.
#[test]
fn a_value_is_matched_as_it_is_shown() {
    let redactor = Redactor::new(["sk_tab\tcanary_BBBB2222".replace("\\t", "\t")]);
    let shown = crate::model::text::sanitize("TAB=sk_tab\tcanary_BBBB2222").into_owned();
    assert_eq!(shown, "TAB=sk_tab\u{2409}canary_BBBB2222");
    assert_eq!(redactor.text(&shown), "TAB=[redacted]");
}

/// Credential-named fields are redacted whatever `secret_history`
/// holds, as 0.4.0 does: a schema-5 store has no `secret_history`, and
/// an envelope's `api_key` is still never shown or audited in clear.
#[test]
fn credential_fields_without_any_value() {
    let redactor = Redactor::default();
    let envelope =
        r#"{"ok":false,"error":{"code":"x","context":{"api_key":"plain_key_FFFF6666"}}}"#;
    assert!(redactor.may_change(envelope));
    assert_eq!(
        redactor.json_text(envelope),
        r#"{"ok":false,"error":{"code":"x","context":{"api_key":"[redacted]"}}}"#
    );
    assert!(!redactor.may_change(r#"{"ok":false,"error":{"code":"x"}}"#));
    assert!(!redactor.may_change("token rejected"));
}

#[test]
fn redacts_credential_fields_and_values_without_corrupting_handles_or_error_codes() {
    // stackless-core-0.4.0/src/security.rs:322-336, the same values.
    let redactor = Redactor::new([
        "secret-canary".into(),
        "postgres://user:database-password@db/one".into(),
    ]);
    let mut value = serde_json::json!({
        "code": "state.query_failed",
        "message": "secret-canary / database-password",
        "token": "unseen-token",
        "password": {"kind": "secret_ref", "instance_id": "owner",
                     "integration": "database", "output": "password"},
    });
    redactor.value(&mut value);
    assert_eq!(value["message"], "[redacted] / [redacted]");
    assert_eq!(value["token"], "[redacted]");
    assert_eq!(value["password"]["kind"], "secret_ref");
    assert_eq!(value["code"], "state.query_failed");
    assert_eq!(format!("{redactor:?}"), "Redactor { value_count: 3 }");
}

#[test]
fn text_replaces_every_value_longest_first_and_registers_json_leaves() {
    let redactor = Redactor::new([
        "sk_live".into(),
        "sk_live_abc".into(),
        String::new(),
        REDACTED.into(),
        r#"{"key":"leaf-1","n":[" leaf 2 ",""]}"#.into(),
    ]);
    assert_eq!(redactor.len(), 5);
    assert_eq!(
        redactor.text("API_TOKEN=sk_live_abc and sk_live, leaf-1 | leaf 2 |"),
        "API_TOKEN=[redacted] and [redacted], [redacted] |[redacted]|"
    );
    assert_eq!(redactor.text("nothing here"), "nothing here");
    assert!(Redactor::new(Vec::new()).is_empty());
}

#[test]
fn protocol_fields_stay_and_json_text_is_redacted_by_field() {
    let redactor = Redactor::new(["up".into(), "s3cr3t".into()]);
    let error =
        r#"{"schema_version":2,"code":"up","verb":"up","message":"s3cr3t up","api_key":"x"}"#;
    assert_eq!(
        redactor.json_text(error),
        r#"{"schema_version":2,"code":"up","verb":"up","message":"[redacted] [redacted]","api_key":"[redacted]"}"#
    );
    assert_eq!(redactor.json_text("plain s3cr3t"), "plain [redacted]");
    let untouched = "{\n  \"code\": \"x\"\n}";
    assert_eq!(redactor.json_text(untouched), untouched);
}

#[test]
fn credential_named_fields() {
    for key in [
        "API_TOKEN",
        "password",
        "Authorization",
        "SET_COOKIE",
        "db_private_key",
        "STRIPE_API_KEY",
        "pg_connection_string",
        "SENTRY_DSN",
        "DATABASE_URL",
        "client_secret",
        "credentials",
    ] {
        assert!(sensitive_key(key), "{key}");
    }
    for key in ["message", "url", "dsn", "code", "origin", "key"] {
        assert!(!sensitive_key(key), "{key}");
    }
    // Whole segments.
    for key in [
        "PASS",
        "DB_PASS",
        "MYSQL_PWD",
        "auth",
        "session_id",
        "X-Amz-Signature",
        "sig",
        "aws_access_key_id",
    ] {
        assert!(sensitive_key(key), "{key}");
    }
    for key in [
        "compass",
        "passenger",
        "passes",
        "author",
        "oauth_scope",
        "design",
        "sessions",
    ] {
        assert!(!sensitive_key(key), "{key}");
    }
}

#[test]
fn a_url_password_is_a_value_too() {
    let redactor = Redactor::new(["https://u:pw-123@db.example/x".into()]);
    assert_eq!(redactor.text("auth pw-123"), "auth [redacted]");
    assert_eq!(
        redactor.text("at https://u:pw-123@db.example/x"),
        "at [redacted]"
    );
}

#[test]
fn secrets_keep_every_value_once_known_and_hide_them_in_debug() {
    let secrets = Secrets::new();
    assert!(secrets.current().is_empty());
    secrets.update(&Arc::new(Redactor::new(["one-secret".into()])));
    secrets.update(&Arc::new(Redactor::new(["two-secret".into()])));
    assert_eq!(
        secrets.current().text("one-secret two-secret"),
        "[redacted] [redacted]"
    );
    secrets.update(&Arc::new(Redactor::default()));
    assert_eq!(secrets.current().len(), 2);
    assert_eq!(
        format!("{secrets:?}"),
        "Secrets(Redactor { value_count: 2 })"
    );
}
