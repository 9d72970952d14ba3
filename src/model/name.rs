//! Instance-name safety (stackless "Instance names"): DNS-safe names are the
//! only ones stackless writes, so any other name is foreign or hostile. Such a
//! name is shown (sanitized) but never passed to a command or used as a path.

/// Whether `name` is DNS-safe: 1 to 63 characters of `a-z`, `0-9` and `-`,
/// starting with a lowercase letter and not ending with `-`.
#[must_use]
pub fn is_dns_safe(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_lowercase()
        && bytes[bytes.len() - 1] != b'-'
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// The message the activity log shows when a name is refused.
pub const REFUSED_NOT_DNS_SAFE: &str = "refused: not a DNS-safe name";

#[cfg(test)]
mod tests {
    use super::is_dns_safe;

    #[test]
    fn accepts_stackless_names() {
        assert!(is_dns_safe("alpha"));
        assert!(is_dns_safe("duo-79882653-fd55-4b17-bf19-d4afc89a2b5e"));
        assert!(is_dns_safe("a"));
        assert!(is_dns_safe(&format!("a{}", "b".repeat(62))));
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "--help",
            "-a",
            "a-",
            "UPPER-case",
            "1abc",
            "x; touch /tmp/pwned",
            "evil\u{1b}[2J",
            "wide-測試",
            "bidi-\u{202e}evil",
            "a/b",
            "../etc",
            "a b",
        ] {
            assert!(!is_dns_safe(bad), "{bad:?} must be refused");
        }
        assert!(!is_dns_safe(&format!("a{}", "b".repeat(63))));
    }
}
