//! Comments and test names in `src/`, `tests/`, `benches/` and `examples/`
//! say the rule, never its history: no comment names an issue, a review, a
//! finding, a round, an edge or an item by number (`issue N`, `review of
//! issue N`, `finding N`, a tag `RNN-N` or `(FN)`, a document
//! `issueN-spec`), and no function is named for one (`reviewN_...`,
//! `issue_N_...`). History belongs in `CHANGELOG.md` and the commits. Read
//! from the sources as plain text, as `arrows.rs` and `children.rs` read
//! them.
//!
//! A comment is the text after the first `//` on a line (doc comments
//! among them); consecutive comment lines are read as one text, so a
//! reference split across a line break is found too.

use std::path::{Path, PathBuf};

/// The words that, followed by a number, name a piece of history.
const KEYWORDS: [&str; 6] = ["issue", "review", "finding", "round", "edge", "item"];

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `s` from byte `at` with one optional space skipped.
fn skip_space(s: &str, at: usize) -> usize {
    if s[at..].starts_with(' ') { at + 1 } else { at }
}

/// `s` from byte `at` with `word` (then one optional space) skipped when
/// it is there.
fn skip_word(s: &str, at: usize, word: &str) -> usize {
    if s[at..].starts_with(word) {
        skip_space(s, at + word.len())
    } else {
        at
    }
}

fn digit_at(s: &str, at: usize) -> bool {
    s.as_bytes().get(at).is_some_and(u8::is_ascii_digit)
}

/// Whether byte `at` starts a word (nothing alphanumeric just before it).
fn word_start(s: &str, at: usize) -> bool {
    at == 0 || !s.as_bytes()[at - 1].is_ascii_alphanumeric()
}

/// The history references in `text` (whitespace already collapsed to
/// single spaces), each as the text from its keyword to its number: a
/// keyword of [`KEYWORDS`] (any case, plural too) then a number, after an
/// optional space, `#`, `of`, `issue` or `r` (`issue N #M`, `review of
/// issue N`, `review rN`, `issueN-spec`); a tag `RNN-N` (`R`, two digits,
/// `-`, a number); a tag `(FN)` or `(RN)`.
fn history_refs(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for (at, _) in text.char_indices() {
        if !word_start(text, at) {
            continue;
        }
        for keyword in KEYWORDS {
            if !lower[at..].starts_with(keyword) {
                continue;
            }
            let mut end = skip_word(&lower, at + keyword.len(), "s");
            end = skip_space(&lower, end);
            end = skip_word(&lower, end, "#");
            end = skip_word(&lower, end, "of");
            end = skip_word(&lower, end, "issue");
            end = skip_word(&lower, end, "r");
            if digit_at(&lower, end) {
                while digit_at(&lower, end) {
                    end += 1;
                }
                found.push(text[at..end].to_owned());
            }
        }
        // A tag: an `R`, two digits, `-`, a digit.
        if bytes[at] == b'R'
            && digit_at(text, at + 1)
            && digit_at(text, at + 2)
            && bytes.get(at + 3) == Some(&b'-')
            && digit_at(text, at + 4)
        {
            found.push(text[at..at + 5].to_owned());
        }
        // A tag: a parenthesis holding only `F` or `R` and digits.
        if bytes[at] == b'(' && matches!(bytes.get(at + 1), Some(b'F' | b'R')) {
            let digits = bytes[at + 2..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits > 0 && bytes.get(at + 2 + digits) == Some(&b')') {
                found.push(text[at..at + 3 + digits].to_owned());
            }
        }
    }
    found
}

/// Whether a function's name embeds a history reference: a part (split at
/// `_`) that is a keyword of [`KEYWORDS`] or `r` with a number glued on
/// (`reviewN`, `rN`), or a keyword part followed by a number part
/// (`issue_N`).
fn named_for_history(name: &str) -> bool {
    let parts: Vec<&str> = name.split('_').collect();
    parts.iter().enumerate().any(|(i, part)| {
        let word = part.trim_end_matches(|c: char| c.is_ascii_digit());
        let glued = word.len() < part.len() && (word == "r" || KEYWORDS.contains(&word));
        let apart = KEYWORDS.contains(part)
            && parts
                .get(i + 1)
                .is_some_and(|next| !next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()));
        glued || apart
    })
}

/// The name of the function a line declares (`fn name(` anywhere in its
/// code), if it declares one.
fn fn_name(code: &str) -> Option<&str> {
    let at = code.find("fn ")?;
    if !word_start(code, at) {
        return None;
    }
    let rest = &code[at + 3..];
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    (end > 0).then(|| &rest[..end])
}

/// The references in one comment (its lines joined), reported at `first`
/// (its first line); the comment is emptied.
fn flush(comment: &mut String, first: usize, out: &mut Vec<(usize, String)>) {
    let text = comment.split_whitespace().collect::<Vec<_>>().join(" ");
    for found in history_refs(&text) {
        out.push((first, format!("the comment from this line names `{found}`")));
    }
    comment.clear();
}

/// Each offence in one file's `source`: `LINE: what`, `LINE` the first
/// line of the comment that holds it.
fn offences(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut comment = String::new();
    let mut first = 0;
    for (index, line) in source.lines().enumerate() {
        let number = index + 1;
        let (code, text) = match line.split_once("//") {
            Some((code, text)) => (code, Some(text)),
            None => (line, None),
        };
        if let Some(name) = fn_name(code).filter(|name| named_for_history(name)) {
            out.push((number, format!("function named `{name}`")));
        }
        match text {
            Some(text) => {
                if comment.is_empty() {
                    first = number;
                }
                comment.push(' ');
                comment.push_str(text.trim_start_matches(['/', '!']));
                // A comment after code ends where its line does.
                if !code.trim().is_empty() {
                    flush(&mut comment, first, &mut out);
                }
            }
            None => flush(&mut comment, first, &mut out),
        }
    }
    flush(&mut comment, first, &mut out);
    out.sort_by_key(|(line, _)| *line);
    out.into_iter()
        .map(|(line, what)| format!("{line}: {what}"))
        .collect()
}

/// Every offence in the `.rs` files under `dirs` (relative to the crate
/// root), each as `PATH:LINE: what`; `at_least` is the fewest files the
/// walk must find, so that a moved folder cannot pass by reading nothing.
fn offences_under(dirs: &[&str], at_least: usize) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in dirs {
        rs_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(
        files.len() >= at_least,
        "{} files under {dirs:?}",
        files.len()
    );
    let mut found = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path).unwrap();
        let name = path.strip_prefix(root).unwrap().display().to_string();
        found.extend(offences(&source).into_iter().map(|o| format!("{name}:{o}")));
    }
    found
}

#[test]
fn no_comment_or_function_name_in_src_names_an_issue_or_a_review() {
    let found = offences_under(&["src"], 101);
    assert!(
        found.is_empty(),
        "say the rule, not its history (that goes in CHANGELOG.md and the commits):\n{}",
        found.join("\n")
    );
}

/// The same rule for the tests, the benches and the examples: a test's
/// comment says what it proves and why, its name says the behaviour.
#[test]
fn no_comment_or_function_name_in_tests_benches_or_examples_names_an_issue_or_a_review() {
    let found = offences_under(&["tests", "benches", "examples"], 90);
    assert!(
        found.is_empty(),
        "say the rule, not its history (that goes in CHANGELOG.md and the commits):\n{}",
        found.join("\n")
    );
}

/// `text` with every `~` taken out: the references below are written
/// `iss~ue`, so that this file, searched as text, names none itself.
fn un(text: &str) -> String {
    text.replace('~', "")
}

/// The reading finds each form of reference and leaves ordinary prose and
/// names alone.
#[test]
fn the_reading_finds_every_form_of_history_reference() {
    let refs = |text: &str| history_refs(&un(text));
    let all = |found: &[&str]| found.iter().map(|f| un(f)).collect::<Vec<_>>();
    let cases: [(&str, &[&str]); 7] = [
        ("a rule (iss~ue 26, ed~ge 7)", &["iss~ue 26", "ed~ge 7"]),
        ("(Iss~ue #10)", &["Iss~ue #10"]),
        ("iss~ue10-spec §5.1", &["iss~ue10"]),
        (
            "The rev~iew of iss~ue 22",
            &["rev~iew of iss~ue 22", "iss~ue 22"],
        ),
        ("Rev~iew r23 find~ing 9", &["Rev~iew r23", "find~ing 9"]),
        ("rou~nd 3 and it~em 4", &["rou~nd 3", "it~em 4"]),
        ("(R~25-1) and (F~7)", &["R~25-1", "(F~7)"]),
    ];
    for (text, found) in cases {
        assert_eq!(refs(text), all(found), "{text}");
    }
    assert!(refs("an edge case, item counts, a round trip, 4 KiB, (F) and F7").is_empty());
    assert!(refs("the reviewer's issues, tiss~ue 3, bridge 2").is_empty());

    let source = un(
        "/// A rule\n/// (see iss~ue\n/// 13).\nfn rev~iew26_thing() {}\n\
         fn iss~ue_22_x() {}\nfn round_trip() {}\nlet a = 1; // it~em 4\n",
    );
    assert_eq!(
        offences(&source),
        all(&[
            "1: the comment from this line names `iss~ue 13`",
            "4: function named `rev~iew26_thing`",
            "5: function named `iss~ue_22_x`",
            "7: the comment from this line names `it~em 4`",
        ])
    );
}
