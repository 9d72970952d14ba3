//! Credentials written in free text, whatever `secret_history` holds: the
//! rules this console adds to stackless 0.4.0's (which redacts only the
//! values it registered and credential-named JSON fields):
//! - `key=value` and `key: value` whose key is credential-named
//!   ([`sensitive_key`], any case, `-` read as `_`: `X-Api-Key`,
//!   `client-secret`), the key bare, quoted (`"token": x`, `'token'=x`) or
//!   written with escaped quotes inside a JSON string (`{\"client_secret\":
//!   \"x\"}`); the value quoted (to its closing quote), an object or array
//!   (to its closing bracket; a 0.4.0 secret reference is left), or bare
//!   (to whitespace or one of `,;&"'<>)]}`); after an auth scheme
//!   (`Authorization: Bearer x`) the credential after it; after a
//!   cookie-named key, the rest of the line. A key whose value is not on
//!   its line (`password:` at the end of one) takes the first value of the
//!   next line;
//! - `Bearer x` and `Basic x` anywhere (`Bearer`, `bearer`, `BEARER`,
//!   `Basic`, `BASIC`; a lowercase `basic` is a word): the credential
//!   after the scheme when it is token-shaped ([`token_shaped`]: a digit
//!   or a symbol in it, an uppercase letter after its first, or 20 bytes
//!   or more), so `the bearer of bad news` is prose, left (after
//!   `Authorization:`, any word is the credential);
//! - URL userinfo: `scheme://user:password@host` becomes
//!   `scheme://[redacted]@host` (any userinfo: a token alone is one too);
//! - the shapes of `super::shapes`: private key blocks, `--password X`,
//!   netrc `password X`, `curl -u user:X`, `user:X@host`, JWTs, well-known
//!   token prefixes, AWS access key ids.
//!
//! Each rule replaces only what follows the key or scheme with
//! [`REDACTED`], so a key stays readable and a text already redacted is
//! left as it is. Pure; no I/O.

use std::borrow::Cow;

use super::fields::{bracket_end, close_quote, secret_reference};
use super::{REDACTED, mentions_credential, sensitive_by_word, sensitive_key};

/// `text` with the credentials of the rules above replaced by
/// [`REDACTED`], and whether it ends in a credential-named key whose value
/// is still to come (`password:` at its very end: a log line whose value
/// is on the next one). Borrowed when nothing is replaced.
#[must_use]
pub fn credentials_in_text(text: &str) -> (Cow<'_, str>, bool) {
    let (pairs, dangling) = key_values(text);
    let schemes = match auth_schemes(&pairs) {
        Cow::Owned(done) => Cow::Owned(done),
        Cow::Borrowed(_) => pairs,
    };
    let urls = match url_userinfo(&schemes) {
        Cow::Owned(done) => Cow::Owned(done),
        Cow::Borrowed(_) => schemes,
    };
    let shapes = match super::shapes::credential_shapes(&urls) {
        Cow::Owned(done) => Cow::Owned(done),
        Cow::Borrowed(_) => urls,
    };
    (shapes, dangling)
}

/// An argv as it is shown, never as it is run: the `hello`'s `teardown`,
/// the Activity line's `tearing down: …` (and so the audit trail and
/// `console.log`). Each argument goes through
/// [`credentials_in_text`] (`--token=x`, `https://u:x@h`, ...);
/// the argument after a credential-named long flag (`--password`, `x`
/// not beginning with `-`) is [`REDACTED`] whole, and after `-u` or
/// `--user` what follows its first `:`, as in text.
#[must_use]
pub fn shown_argv<S: AsRef<str>>(argv: &[S]) -> Vec<String> {
    let mut shown = Vec::with_capacity(argv.len());
    for (i, arg) in argv.iter().enumerate() {
        let arg = arg.as_ref();
        let before = i
            .checked_sub(1)
            .and_then(|j| argv.get(j))
            .map(AsRef::as_ref);
        if before.is_some_and(|b| super::shapes::takes_next_word(b, false)) && !arg.starts_with('-')
        {
            shown.push(REDACTED.to_owned());
        } else if matches!(before, Some("-u" | "--user"))
            && let Some((user, _)) = arg.split_once(':')
        {
            shown.push(format!("{user}:{REDACTED}"));
        } else {
            shown.push(credentials_in_text(arg).0.into_owned());
        }
    }
    shown
}

/// Whether `b` may be part of a key (`X-Api-Key`, `client_secret`).
const fn key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Whether `b` ends a bare value.
const fn value_end(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b',' | b';' | b'&' | b'"' | b'\'' | b'<' | b'>' | b')' | b']' | b'}' | b'\\'
        )
}

/// Whether `b` may be part of a bearer or basic credential (RFC 6750
/// `b64token`, base64, and `:` of a `user:password` written plain).
const fn credential_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'+' | b'/' | b'=' | b'-' | b':')
}

/// The first index at or after `at` that is not a space or a tab.
fn skip_blanks(b: &[u8], at: usize) -> usize {
    b.get(at..)
        .and_then(|rest| rest.iter().position(|&c| c != b' ' && c != b'\t'))
        .map_or(b.len(), |n| at + n)
}

/// Where the value after a key ending at `end` is: `Found(start, end)`,
/// `Dangling` (a separator, then nothing to the end of the text), or
/// `None` (no separator, an empty value, or a secret reference).
enum After {
    Found(usize, usize),
    Dangling,
    None,
}

/// The value after the credential-named key `key` that ends at `end`.
fn value_after(text: &str, key: &str, end: usize) -> After {
    let b = text.as_bytes();
    let mut j = end;
    if b.get(j) == Some(&b'\\') && b.get(j + 1) == Some(&b'"') {
        j += 2;
    } else if matches!(b.get(j), Some(b'"' | b'\'')) {
        j += 1;
    }
    j = skip_blanks(b, j);
    let (Some(&sep), next) = (b.get(j), b.get(j + 1).copied()) else {
        return After::None;
    };
    let separator = match sep {
        b'=' => next != Some(b'='),
        b':' => next != Some(b':') && !b[j + 1..].starts_with(b"//"),
        _ => false,
    };
    if !separator {
        return After::None;
    }
    j = skip_blanks(b, j + 1);
    // The value on the next line: `password:` then `  hunter2`.
    if b[j..].starts_with(b"\r\n") {
        j = skip_blanks(b, j + 2);
    } else if b.get(j) == Some(&b'\n') {
        j = skip_blanks(b, j + 1);
    }
    let Some(&first) = b.get(j) else {
        return After::Dangling;
    };
    let (start, stop) = match first {
        b'\\' if b.get(j + 1) == Some(&b'"') => {
            let from = j + 2;
            let close = text[from..].find("\\\"").map_or(b.len(), |n| from + n);
            (from, close)
        }
        b'"' => (j + 1, close_quote(b, j + 1).map_or(b.len(), |e| e - 1)),
        b'\'' => (
            j + 1,
            text[j + 1..].find('\'').map_or(b.len(), |n| j + 1 + n),
        ),
        b'{' | b'[' => {
            let close = bracket_end(b, j);
            if close.is_some_and(|e| secret_reference(&text[j..e])) {
                return After::None;
            }
            (j, close.unwrap_or(b.len()))
        }
        _ if normalized(key).contains("cookie") => {
            (j, text[j..].find('\n').map_or(b.len(), |n| j + n))
        }
        _ => bare_value(b, j),
    };
    if start >= stop {
        return After::None;
    }
    After::Found(start, stop)
}

/// A bare value starting at `j`: to its end, or, when it is an auth
/// scheme followed by a credential (`Bearer x`), the credential.
fn bare_value(b: &[u8], j: usize) -> (usize, usize) {
    let stop = b[j..]
        .iter()
        .position(|&c| value_end(c))
        .map_or(b.len(), |n| j + n);
    let word = std::str::from_utf8(&b[j..stop]).unwrap_or_default();
    if AUTH_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(word)) {
        let token = skip_blanks(b, stop);
        if token > stop && b.get(token).is_some_and(|&c| credential_byte(c)) {
            return (token, credential_end(b, token));
        }
    }
    (j, stop)
}

/// The auth schemes whose credential follows them after a space.
const AUTH_SCHEMES: [&str; 5] = ["bearer", "basic", "token", "digest", "negotiate"];

/// `key` lowercase, `-` read as `_`.
fn normalized(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Where a bearer or basic credential starting at `at` ends.
fn credential_end(b: &[u8], at: usize) -> usize {
    b[at..]
        .iter()
        .position(|&c| !credential_byte(c))
        .map_or(b.len(), |n| at + n)
}

/// `key=value`, `key: value` (credential-named keys): their values
/// replaced, and whether the text ends in such a key with no value yet.
fn key_values(text: &str) -> (Cow<'_, str>, bool) {
    if !mentions_credential(text) {
        return (Cow::Borrowed(text), false);
    }
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    let mut dangling = false;
    while i < b.len() {
        if !key_byte(b[i]) || (i > 0 && key_byte(b[i - 1])) {
            i += 1;
            continue;
        }
        let end = b[i..]
            .iter()
            .position(|&c| !key_byte(c))
            .map_or(b.len(), |n| i + n);
        let key = &text[i..end];
        let dotted = i > 0 && b[i - 1] == b'.';
        i = end;
        if !sensitive_key(key) || (dotted && !sensitive_by_word(key)) {
            continue;
        }
        match value_after(text, key, end) {
            After::Found(start, stop) => {
                i = stop;
                if &text[start..stop] != REDACTED {
                    out.push_str(&text[copied..start]);
                    out.push_str(REDACTED);
                    copied = stop;
                }
            }
            After::Dangling => dangling = true,
            After::None => {}
        }
    }
    if copied == 0 {
        return (Cow::Borrowed(text), dangling);
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), dangling)
}

/// `Bearer x`, `Basic x` anywhere: the credential replaced.
fn auth_schemes(text: &str) -> Cow<'_, str> {
    const SCHEMES: [&str; 5] = ["Bearer", "bearer", "BEARER", "Basic", "BASIC"];
    if !SCHEMES.iter().any(|s| text.contains(s)) {
        return Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let Some(scheme) = SCHEMES.iter().find(|s| b[i..].starts_with(s.as_bytes())) else {
            i += 1;
            continue;
        };
        let after = i + scheme.len();
        let boundary = i == 0 || !key_byte(b[i - 1]);
        let token = skip_blanks(b, after);
        if !boundary || token == after || !b.get(token).is_some_and(|&c| credential_byte(c)) {
            i = after;
            continue;
        }
        let stop = credential_end(b, token);
        if !token_shaped(&b[token..stop]) {
            i = stop;
            continue;
        }
        out.push_str(&text[copied..token]);
        out.push_str(REDACTED);
        copied = stop;
        i = stop;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Whether `word` (credential bytes) after a `Bearer` or `Basic` written
/// anywhere is a credential rather than an English word: it holds a
/// digit or a symbol (base64, base64url, hex, `user:password`), an
/// uppercase letter after its first (`CANARY`, `dGVzdA`), or it is at
/// least 20 bytes long. `of`, `token`, `Auth` are words.
fn token_shaped(word: &[u8]) -> bool {
    word.len() >= 20
        || word.iter().any(|&c| !c.is_ascii_alphabetic())
        || word.iter().skip(1).any(u8::is_ascii_uppercase)
}

/// `scheme://userinfo@host`: the userinfo replaced.
fn url_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let start = from + found + 3;
        let authority_end = text[start..]
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '\\')
            })
            .map_or(text.len(), |n| start + n);
        from = authority_end;
        let Some(at) = text[start..authority_end].rfind('@') else {
            continue;
        };
        let userinfo = &text[start..start + at];
        if userinfo.is_empty() || userinfo == REDACTED {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = start + at;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        credentials_in_text(text).0.into_owned()
    }

    #[test]
    fn an_argv_is_shown_with_its_credentials_redacted() {
        let argv = [
            "down",
            "--token=T1",
            "https://u:T2@h.example",
            "--password",
            "T3",
            "-u",
            "me:T4",
            "--verbose",
            "{name}",
        ];
        assert_eq!(
            shown_argv(&argv),
            [
                "down",
                "--token=[redacted]",
                "https://[redacted]@h.example",
                "--password",
                "[redacted]",
                "-u",
                "me:[redacted]",
                "--verbose",
                "{name}",
            ]
        );
        assert_eq!(shown_argv(&["--secret", "-v"]), ["--secret", "-v"]);
    }

    #[test]
    fn key_value_pairs_of_credential_named_keys() {
        assert_eq!(
            shown("login token=CANARY3 user=bob"),
            "login token=[redacted] user=bob"
        );
        assert_eq!(shown("PASSWORD: hunter2, ok"), "PASSWORD: [redacted], ok");
        assert_eq!(shown("X-Api-Key: CANARY6"), "X-Api-Key: [redacted]");
        assert_eq!(shown("x-api-key:CANARY6\n"), "x-api-key:[redacted]\n");
        assert_eq!(
            shown("--db-password='a b' -v"),
            "--db-password='[redacted]' -v"
        );
        assert_eq!(
            shown("https://h/cb?access_token=abc&state=1"),
            "https://h/cb?access_token=[redacted]&state=1"
        );
        assert_eq!(
            shown(r#"bad {\"client_secret\":\"CANARY2\"} x"#),
            r#"bad {\"client_secret\":\"[redacted]\"} x"#
        );
        assert_eq!(
            shown(r#"{"password": "a\"b", "n": 1}"#),
            r#"{"password": "[redacted]", "n": 1}"#
        );
        assert_eq!(
            shown("Authorization: Bearer CANARY4 rest"),
            "Authorization: Bearer [redacted] rest"
        );
        assert_eq!(
            shown("Cookie: a=1; sid=CANARY\nnext"),
            "Cookie: [redacted]\nnext"
        );
        assert_eq!(shown("secrets={\"a\":[1,2]} x"), "secrets=[redacted] x");
        let reference = r#"password={"kind":"secret_ref","instance_id":"o","integration":"db","output":"password"}"#;
        assert_eq!(shown(reference), reference);
    }

    #[test]
    fn a_key_whose_value_is_on_the_next_line() {
        assert_eq!(
            shown("password:\n   hunter2\nnext: 1"),
            "password:\n   [redacted]\nnext: 1"
        );
        assert!(credentials_in_text("db_password: ").1);
        assert!(credentials_in_text(r#"{"token":"#).1);
        assert!(!credentials_in_text("token: x").1);
    }

    #[test]
    fn schemes_and_url_userinfo() {
        assert_eq!(
            shown("sent Bearer CANARY4, done"),
            "sent Bearer [redacted], done"
        );
        assert_eq!(shown("Basic CANARY7=="), "Basic [redacted]");
        assert_eq!(shown("a basic check passed"), "a basic check passed");
        assert_eq!(
            shown("the bearer of bad news; Bearer token expired, Basic Auth"),
            "the bearer of bad news; Bearer token expired, Basic Auth"
        );
        assert_eq!(
            shown("bearer dGVzdA x Bearer abc.def Basic dXNlcjpw bearer abcdefghijklmnopqrst"),
            "bearer [redacted] x Bearer [redacted] Basic [redacted] bearer [redacted]"
        );
        assert_eq!(
            shown("Authorization: Bearer secret"),
            "Authorization: Bearer [redacted]"
        );
        assert_eq!(
            shown("at https://u:CANARY5@h.example/x and ftp://tok@h"),
            "at https://[redacted]@h.example/x and ftp://[redacted]@h"
        );
        assert_eq!(
            shown("see https://h.example/a@b"),
            "see https://h.example/a@b"
        );
    }

    #[test]
    fn redacted_text_and_plain_words_are_left() {
        for text in [
            "token=[redacted] Bearer [redacted] https://[redacted]@h",
            r#"{"password":"[redacted]"}"#,
            "the password was rejected",
            "Token::new(x) a == b token == 3",
            "token://not-a-pair",
            "",
        ] {
            assert!(
                matches!(credentials_in_text(text).0, Cow::Borrowed(_)),
                "{text}"
            );
        }
    }
}
