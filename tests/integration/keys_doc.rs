//! `docs/keys.md` holds the key table as the code has it: the console's
//! one key table (`ui::keys::ENTRIES`, which the help overlay, the fleet's
//! help, the footers and the man page also read), with what each entry
//! does over a fleet (`KeyEntry::over_a_fleet`). The block between the
//! markers is generated; this test fails when it differs from the code,
//! and with `UPDATE_DOCS=1` writes it again.

use std::path::Path;

/// One markdown table of `(keys, what they do, what they do over a
/// fleet)`.
fn table(rows: impl Iterator<Item = (&'static str, &'static str, String)>) -> String {
    let cell = |text: &str| text.trim().replace('|', "\\|");
    let mut out = String::from("| key | what it does | over a fleet |\n|---|---|---|\n");
    for (keys, help, fleet) in rows {
        // An indented entry belongs to the one above it.
        let keys = if keys.starts_with(' ') {
            format!("↳ {}", cell(keys))
        } else {
            cell(keys)
        };
        out.push_str(&format!("| {keys} | {} | {} |\n", cell(help), cell(&fleet)));
    }
    out
}

/// `text` with the block after `<!-- generated: NAME -->` up to
/// `<!-- end -->` replaced by `block`.
fn with_block(text: &str, name: &str, block: &str) -> String {
    let start = format!("<!-- generated: {name} -->\n");
    let at = text
        .find(&start)
        .unwrap_or_else(|| panic!("docs/keys.md has no {start:?}"))
        + start.len();
    let end = text[at..]
        .find("<!-- end -->")
        .unwrap_or_else(|| panic!("docs/keys.md: {name} has no end marker"))
        + at;
    format!("{}{block}{}", &text[..at], &text[end..])
}

#[test]
fn docs_keys_md_is_the_key_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/keys.md");
    let text = std::fs::read_to_string(&path).expect("docs/keys.md");
    let console = table(
        stackless_tui::ui::keys::ENTRIES
            .iter()
            .map(|entry| (entry.keys, entry.help, entry.over_a_fleet())),
    );
    let made = with_block(&text, "the console's key table", &console);
    if made != text {
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &made).expect("write docs/keys.md");
            return;
        }
        panic!(
            "docs/keys.md differs from the key tables in the code: run \
             `UPDATE_DOCS=1 cargo test --test integration keys_doc` and commit it"
        );
    }
}
