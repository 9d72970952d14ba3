//! Tests of the detail document (`ui::detail`).

use super::*;

#[test]
fn timestamps() {
    let utc = Zone::UTC;
    let ist = Zone::posix("IST-5:30").unwrap();
    assert_eq!(time::stamp(253_402_300_799, &utc), "9999-12-31T23:59:59Z");
    assert_eq!(relative(100, 292), "3m 12s ago");
    assert_eq!(relative(292, 100), "in 3m 12s");
    assert_eq!(when(0, 60, &utc), "1970-01-01T00:00:00Z (1m 00s ago)");
    assert_eq!(when(0, 60, &ist), "1970-01-01 05:30:00 IST (1m 00s ago)");
}

#[test]
fn multi_line_text_is_split_then_sanitized() {
    assert_eq!(
        text_lines("a\r\n\tb\u{1b}[2J\nc\n\n", 10),
        ["a", "    b␛[2J", "c"]
    );
    assert_eq!(text_lines("1\n2\n3\n4", 2), ["1", "2", "… 2 more lines"]);
    assert_eq!(
        json_lines(r#"{"b":1,"a":[2]}"#, 10),
        ["{", r#"  "b": 1,"#, r#"  "a": ["#, "    2", "  ]", "}"]
    );
    assert_eq!(json_lines("not json\u{7}", 10), ["not json␇"]);
    assert_eq!(json_lines("{}", 10), ["{}"]);
}
