//! Credentials known by their shape or by the word before them, whatever
//! `secret_history` holds (rules this console adds to stackless 0.4.0's):
//! - a private key block: the body between `-----BEGIN … PRIVATE KEY-----`
//!   and its `-----END …-----` (to the end of the text when no end
//!   comes) becomes [`REDACTED`]; the markers stay;
//! - a credential-named long flag and its value as the next word
//!   (`--password X`, `--token X`; not `--password-stdin`, which takes
//!   none; a next word that begins with `-` is a flag, left);
//! - netrc: `password X` (or `passwd X`) on a line that holds the word
//!   `machine`, as every netrc entry does (a `password reset succeeded`,
//!   a `login failed: password incorrect` are prose, left);
//! - `-u user:X`, `--user user:X`, `--user=user:X` (curl's credentials):
//!   what follows the first `:`;
//! - userinfo without a scheme, `user:X@host` as one word: `X`;
//! - well-known token shapes, the whole word: a JWT (`eyJ….eyJ….…`), a
//!   GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`),
//!   a Stripe live key (`sk_live_`, `rk_live_`), a Slack token (`xoxb-`,
//!   `xoxp-`, `xoxa-`, `xoxs-`), each with at least 8 characters after its
//!   prefix, an npm token (`npm_` and exactly 36 of `[0-9A-Za-z]`: an
//!   `npm_config_*` variable is no token), and an AWS access key id
//!   (`AKIA` or `ASIA` and 16 of `[0-9A-Z]`);
//! - an OAuth authorization code in a URL query (`?code=X`, `&code=X`,
//!   RFC 6749 §4.1.2): `X`, to the next `&`, `#` or the end of the word
//!   (a `code` field elsewhere is an error code, left).
//!
//! A short flag's value is never guessed: `-p` is a port to `ssh`, `psql`
//! and `docker`, and `mysql -pX` glues the password to the flag, which no
//! rule can tell from `-pverbose`; both are left. Pure; no I/O.

use std::borrow::Cow;

use super::{REDACTED, sensitive_key};

/// `text` with the credentials of the rules above replaced.
/// Cheap on a line none of them can be in: the block rule reads only a
/// text with `-----`, the word rules only one with `-`, `@` or `pass`.
pub(super) fn credential_shapes(text: &str) -> Cow<'_, str> {
    let mut ranges = if text.contains("-----") {
        pem_bodies(text)
    } else {
        Vec::new()
    };
    let words_may = text.contains('-')
        || text.contains('@')
        || text
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"pass"));
    if words_may {
        ranges.extend(word_rules(text));
    }
    ranges.extend(token_shapes(text));
    if text.contains("code=") {
        ranges.extend(query_codes(text));
    }
    replace_ranges(text, ranges)
}

/// `text` with each byte range of `ranges` replaced by [`REDACTED`]
/// (overlapping ranges merged; a range already `[redacted]` left).
pub(super) fn replace_ranges(text: &str, mut ranges: Vec<(usize, usize)>) -> Cow<'_, str> {
    ranges.retain(|&(start, stop)| start < stop && &text[start..stop] != REDACTED);
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, stop) in ranges {
        if stop <= copied {
            continue;
        }
        out.push_str(&text[copied..start.max(copied)]);
        if start >= copied {
            out.push_str(REDACTED);
        }
        copied = stop;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The marker a private key block begins with, and the one it ends with.
const PEM_BEGIN: &str = "-----BEGIN ";
const PEM_END: &str = "-----END ";

/// Where the marker line of a private key (`-----BEGIN RSA PRIVATE
/// KEY-----`) that starts at `at` ends, when it is one.
fn private_marker_end(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at..];
    let line = rest.find('\n').map_or(rest, |n| &rest[..n]);
    let close = line[5..].find("-----").map(|n| n + 5)?;
    line[..close]
        .ends_with("PRIVATE KEY")
        .then_some(at + close + 5)
}

/// The bodies of the private key blocks in `text`: after each `BEGIN`
/// marker line to the next `-----END ` (or the end of the text).
fn pem_bodies(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(PEM_BEGIN) {
        let at = from + found;
        let Some(marker) = private_marker_end(text, at) else {
            from = at + PEM_BEGIN.len();
            continue;
        };
        let body = marker + usize::from(text[marker..].starts_with('\n'));
        let end = text[body..].find(PEM_END).map_or(text.len(), |n| body + n);
        let stop = body + text[body..end].trim_end().len();
        ranges.push((body, stop));
        from = end.max(at + PEM_BEGIN.len());
    }
    ranges
}

/// A text cut at its start (a stderr tail) that begins inside a private
/// key block: its end marker comes before any begin marker. The body, from
/// the start to that marker, as a range.
pub(super) fn pem_body_at_start(text: &str) -> Option<(usize, usize)> {
    let end = text.find(PEM_END)?;
    if text[..end].contains(PEM_BEGIN) || !text[end..].lines().next()?.contains("PRIVATE KEY") {
        return None;
    }
    let stop = text[..end].trim_end().len();
    (stop > 0).then_some((0, stop))
}

/// The words of `line` (split at ASCII whitespace), with their offsets in
/// the text the line starts at `base` of.
fn words(line: &str, base: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_ascii_whitespace(), start) {
            (true, Some(s)) => {
                out.push((base + s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((base + s, &line[s..]));
    }
    out
}

/// The flag, netrc, `-u` and bare-userinfo rules, line by line.
fn word_rules(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut base = 0;
    for line in text.split_inclusive('\n') {
        let list = words(line, base);
        let netrc = list.iter().any(|(_, w)| w.eq_ignore_ascii_case("machine"));
        for (k, &(at, word)) in list.iter().enumerate() {
            let next = list.get(k + 1).copied();
            if let Some((next_at, value)) = next
                && takes_next_word(word, netrc)
                && !value.starts_with('-')
            {
                ranges.push((next_at, next_at + value.len()));
            }
            if (word == "-u" || word == "--user")
                && let Some((next_at, value)) = next
                && let Some(colon) = value.find(':')
            {
                ranges.push((next_at + colon + 1, next_at + value.len()));
            }
            if let Some(user) = word.strip_prefix("--user=")
                && let Some(colon) = user.find(':')
            {
                ranges.push((at + 7 + colon + 1, at + word.len()));
            }
            ranges.extend(bare_userinfo(word, at));
        }
        base += line.len();
    }
    ranges
}

/// Whether the word after `word` is a credential: `word` is a
/// credential-named long flag that takes a value, or a netrc `password`.
pub(super) fn takes_next_word(word: &str, netrc: bool) -> bool {
    if let Some(flag) = word.strip_prefix("--") {
        return !flag.contains('=')
            && !flag.is_empty()
            && flag
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            && sensitive_key(flag)
            && !flag.to_ascii_lowercase().ends_with("stdin");
    }
    netrc && (word.eq_ignore_ascii_case("password") || word.eq_ignore_ascii_case("passwd"))
}

/// `user:X@host` as one word (no `//`: a URL's userinfo is
/// `free::url_userinfo`'s): the range of `X`.
fn bare_userinfo(word: &str, at: usize) -> Option<(usize, usize)> {
    let lead = word
        .find(|c: char| !matches!(c, '"' | '\'' | '(' | '<' | '['))
        .unwrap_or(word.len());
    let word = &word[lead..];
    let sign = word.rfind('@')?;
    let (userinfo, host) = (&word[..sign], &word[sign + 1..]);
    if userinfo.contains("//") || !host.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
    }
    let colon = userinfo.find(':')?;
    let user = &userinfo[..colon];
    let user_ok = !user.is_empty()
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    let password = &userinfo[colon + 1..];
    (user_ok && !password.is_empty()).then_some((at + lead + colon + 1, at + lead + sign))
}

/// Whether `b` may be part of a token word (`ghp_…`, a JWT's segment).
const fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The prefixes of well-known tokens (at least 8 token bytes follow).
const TOKEN_PREFIXES: [&str; 12] = [
    "github_pat_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "sk_live_",
    "rk_live_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
];

/// The JWTs, well-known tokens and AWS access key ids of `text`.
fn token_shapes(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !token_byte(b[i]) || (i > 0 && (token_byte(b[i - 1]) || b[i - 1] == b'.')) {
            i += 1;
            continue;
        }
        let word_end = b[i..]
            .iter()
            .position(|&c| !token_byte(c))
            .map_or(b.len(), |n| i + n);
        let rest = &text[i..word_end];
        if let Some(stop) = jwt_end(b, i) {
            ranges.push((i, stop));
            i = stop;
            continue;
        }
        let prefixed = TOKEN_PREFIXES
            .iter()
            .any(|p| rest.starts_with(p) && rest.len() >= p.len() + 8);
        let npm = rest.len() == 40
            && rest.starts_with("npm_")
            && rest[4..].bytes().all(|c| c.is_ascii_alphanumeric());
        let aws = rest.len() == 20
            && (rest.starts_with("AKIA") || rest.starts_with("ASIA"))
            && rest[4..]
                .bytes()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase());
        if prefixed || npm || aws {
            ranges.push((i, word_end));
        }
        i = word_end;
    }
    ranges
}

/// The values of the `code` parameters of URL queries in `text`
/// (`?code=X`, `&code=X`): each `X`, to the next `&`, `#`, whitespace or
/// quote or bracket.
fn query_codes(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("code=") {
        let at = from + found;
        let start = at + "code=".len();
        from = start;
        if at == 0 || !matches!(b[at - 1], b'?' | b'&') {
            continue;
        }
        let stop = b[start..]
            .iter()
            .position(|&c| {
                c.is_ascii_whitespace()
                    || matches!(
                        c,
                        b'&' | b'#' | b'"' | b'\'' | b'<' | b'>' | b')' | b']' | b'}' | b'\\'
                    )
            })
            .map_or(b.len(), |n| start + n);
        ranges.push((start, stop));
    }
    ranges
}

/// Where a JWT starting at `at` ends: `eyJ…`, `.`, `eyJ…`, `.`, a
/// signature (base64url; possibly empty).
fn jwt_end(b: &[u8], at: usize) -> Option<usize> {
    let segment = |from: usize| {
        b[from..]
            .iter()
            .position(|&c| !token_byte(c))
            .map_or(b.len(), |n| from + n)
    };
    if !b[at..].starts_with(b"eyJ") {
        return None;
    }
    let first = segment(at);
    if b.get(first) != Some(&b'.') || !b[first + 1..].starts_with(b"eyJ") {
        return None;
    }
    let second = segment(first + 1);
    if b.get(second) != Some(&b'.') {
        return None;
    }
    Some(segment(second + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        credential_shapes(text).into_owned()
    }

    #[test]
    fn private_key_blocks_lose_their_bodies() {
        assert_eq!(
            shown(
                "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nAAAA\n-----END RSA PRIVATE KEY-----\nb\n"
            ),
            "a\n-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----\nb\n"
        );
        assert_eq!(
            shown("-----BEGIN PRIVATE KEY-----\nMIIE"),
            "-----BEGIN PRIVATE KEY-----\n[redacted]"
        );
        let public = "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n";
        assert_eq!(shown(public), public);
        assert_eq!(
            pem_body_at_start("Ab3\nCd\n-----END OPENSSH PRIVATE KEY-----\n"),
            Some((0, 6))
        );
        assert_eq!(pem_body_at_start("x\n-----END CERTIFICATE-----\n"), None);
    }

    #[test]
    fn flags_netrc_and_curl_users() {
        assert_eq!(
            shown("mysql --password hunter2 -u root"),
            "mysql --password [redacted] -u root"
        );
        assert_eq!(
            shown("x --api-token T1 --verbose --secret -v"),
            "x --api-token [redacted] --verbose --secret -v"
        );
        assert_eq!(
            shown("docker login --password-stdin me"),
            "docker login --password-stdin me"
        );
        assert_eq!(
            shown("machine h login u password P1\n"),
            "machine h login u password [redacted]\n"
        );
        assert_eq!(
            shown("curl -u admin:P2 https://x --user=a:P3"),
            "curl -u admin:[redacted] https://x --user=a:[redacted]"
        );
        assert_eq!(shown("mysql -pP4 -p 5432"), "mysql -pP4 -p 5432");
    }

    #[test]
    fn userinfo_without_a_scheme_and_token_shapes() {
        assert_eq!(
            shown("push deploy:P5@host.example ok"),
            "push deploy:[redacted]@host.example ok"
        );
        assert_eq!(
            shown("git@github.com:org/repo a@b mail bob@x.org"),
            "git@github.com:org/repo a@b mail bob@x.org"
        );
        assert_eq!(
            shown("t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln x"),
            "t=[redacted] x"
        );
        assert_eq!(
            shown("ghp_abcdefgh1234 github_pat_11AAAAAAAA_x sk_live_12345678 xoxb-1234-5678"),
            "[redacted] [redacted] [redacted] [redacted]"
        );
        assert_eq!(shown("key AKIAIOSFODNN7EXAMPLE."), "key [redacted].");
        assert_eq!(
            shown("npm_0123456789abcdefghijABCDEFGHIJ012345 npm_config_registry=x"),
            "[redacted] npm_config_registry=x"
        );
        assert_eq!(
            shown("GET /cb?code=C1&state=s x?a=1&code=C2#f (/cb?code=C3) ?code=& error code=E1"),
            "GET /cb?code=[redacted]&state=s x?a=1&code=[redacted]#f (/cb?code=[redacted]) ?code=& error code=E1"
        );
        for plain in [
            "ghp_ tokens and sk_live_x and AKIA12 and eyJ.eyJ",
            "a basic check, session started, passenger, compass",
            "password reset succeeded",
            "login failed: password incorrect",
            "-----BEGIN PUBLIC KEY-----",
        ] {
            assert_eq!(shown(plain), plain);
        }
    }
}
