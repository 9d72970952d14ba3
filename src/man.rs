//! `stackless-tui man`: the man page. `clap_mangen` renders the title, NAME,
//! SYNOPSIS, DESCRIPTION and OPTIONS from the same definitions as `--help`;
//! the rest is written here, so nothing points at a page that does not
//! exist: SUBCOMMANDS (as `stackless-tui snapshot`, not `clap_mangen`'s
//! `stackless-tui-snapshot(1)`), KEYS (from the one key table,
//! [`crate::ui::keys::ENTRIES`]), FILES, ENVIRONMENT and EXIT STATUS.

use std::io::{self, Write};

use clap::CommandFactory as _;

use crate::cli::Cli;

/// The files the console reads and writes, as (path, what): docs/reference.md's
/// "Files" table.
const FILES: &[(&str, &str)] = &[
    (
        "$XDG_STATE_HOME/stackless/state.db (else ~/.local/state/stackless/state.db)",
        "stackless's state store, used when --state is not given; created with the v4 schema on first run by the console and a real reap --once pass, as stackless does, and said so (never with --read-only, never at a --state path, never by a read: snapshot, snapshot --json, snapshot --follow and reap --once --dry-run say there is no store and exit 0)",
    ),
    (
        "$XDG_CONFIG_HOME/stackless-tui/config.toml (else ~/.config/stackless-tui/config.toml)",
        "flag defaults; keys are the long flag names (tick = \"5m\", utc = true, no-reaper = true); a flag or its STACKLESS_TUI_<FLAG> variable wins over the file",
    ),
    (
        "<state_dir>/stackless-tui/audit.jsonl",
        "the audit trail: one JSON line per teardown, skip, failure, GC and key action; rotated to audit.jsonl.1 at 5 MiB",
    ),
    (
        "<state_dir>/stackless-tui/console.log",
        "the log, level from --log-level",
    ),
    (
        "<state_dir>/stackless-tui/roles/",
        "succession roles: console (the one active console per store) and helper",
    ),
];

/// The environment the console reads besides each flag's own
/// `STACKLESS_TUI_<FLAG>` (listed with the options).
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "STACKLESS_TUI_<FLAG>",
        "any flag, e.g. STACKLESS_TUI_TICK=5m (flag > environment > config file > default); set but empty, any variable here counts as unset",
    ),
    ("XDG_STATE_HOME, HOME", "where stackless's default store is"),
    ("XDG_CONFIG_HOME", "where the config file is"),
    (
        "STACKLESS_CONTROLLER",
        "ssh://HOST: run there, as --controller (stackless's own variable)",
    ),
    (
        "STACKLESS_BIN",
        "the stackless CLI c, L, v and a queued d run, as --stackless (it must reach this store)",
    ),
    (
        "STACKLESS_STATE_URL",
        "stackless 0.3.0's libsql remote store: refused, with a pointer to --controller",
    ),
    ("NO_COLOR", "set and not empty: no colours"),
    (
        "TZ",
        "the local zone times are shown in (an IANA name, from the system's tz database, or a POSIX string such as IST-5:30); --utc (or utc = true in the config file) shows UTC",
    ),
    (
        "PATH",
        "where a bare --down-cmd or --helper program is found",
    ),
];

/// Exit statuses, as (status, when): docs/reference.md's "Exit status" table.
const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "quit with q, Ctrl-C, SIGTERM, SIGHUP or SIGINT; reap --once where every decision succeeded",
    ),
    (
        "1",
        "reap --once where a teardown failed (or the store failed mid-pass); an internal error; snapshot over a fleet where some host did not answer (the document is partial: each failed host is listed)",
    ),
    (
        "2",
        "a usage or store error (a missing --state path, not a stackless store, a bad config file, no terminal for the console, a reap --once teardown command that cannot be found)",
    ),
    ("101", "a panic in any thread"),
    (
        "other",
        "through --controller: the remote command's own status; 255 when ssh failed, 127 when the host has no stackless-tui",
    ),
];

/// Text made safe for roff: backslashes and hyphens escaped, a leading
/// `.` or `'` (a request) neutralised.
#[must_use]
pub(crate) fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}

/// One `.TP` paragraph per (term, text).
fn list(out: &mut String, heading: &str, items: &[(&str, &str)]) {
    out.push_str(&format!(".SH {heading}\n"));
    for (term, text) in items {
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            escape(term),
            escape(text)
        ));
    }
}

/// The sections written here (after `clap_mangen`'s OPTIONS).
#[must_use]
pub(crate) fn extra_sections() -> String {
    let mut out = String::new();
    let command = Cli::command();
    let subcommands: Vec<(String, String)> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| {
            (
                format!("stackless-tui {}", s.get_name()),
                s.get_about().map(ToString::to_string).unwrap_or_default(),
            )
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = subcommands
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    list(&mut out, "SUBCOMMANDS", &borrowed);
    let keys: Vec<(&str, &str)> = crate::ui::keys::ENTRIES
        .iter()
        .map(|entry| (entry.keys.trim_start(), entry.help))
        .collect();
    list(&mut out, "KEYS", &keys);
    list(&mut out, "FILES", FILES);
    list(&mut out, "ENVIRONMENT", ENVIRONMENT);
    list(&mut out, "EXIT STATUS", EXIT_STATUS);
    out
}

/// Write the whole page to `w`.
///
/// # Errors
/// Writing failed.
pub(crate) fn render(w: &mut dyn Write) -> io::Result<()> {
    let man = clap_mangen::Man::new(Cli::command());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    man.render_options_section(w)?;
    w.write_all(extra_sections().as_bytes())?;
    man.render_version_section(w)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_names_no_page_that_does_not_exist_and_has_every_section() {
        let mut page = Vec::new();
        super::render(&mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(!page.contains("stackless\\-tui\\-snapshot"), "{page}");
        assert!(!page.contains("stackless\\-tui\\-reap"), "{page}");
        for heading in [
            ".SH OPTIONS",
            ".SH SUBCOMMANDS",
            ".SH KEYS",
            ".SH FILES",
            ".SH ENVIRONMENT",
            ".SH EXIT STATUS",
        ] {
            assert!(page.contains(heading), "{heading}");
        }
        assert!(page.contains(".TP\n\\fBstackless\\-tui snapshot\\fR\n"));
        // The config file's utc key and the zone's variable are documented.
        assert!(page.contains("utc = true"), "{page}");
        assert!(page.contains(".TP\n\\fBTZ\\fR\n"), "{page}");
        // KEYS is the key table, line for line.
        for entry in crate::ui::keys::ENTRIES {
            assert!(
                page.contains(&format!(
                    "\\fB{}\\fR\n{}\n",
                    super::escape(entry.keys.trim_start()),
                    super::escape(entry.help)
                )),
                "{}",
                entry.keys
            );
        }
    }

    #[test]
    fn roff_requests_and_escapes_are_neutralised() {
        assert_eq!(super::escape(".TH x"), "\\&.TH x");
        assert_eq!(super::escape("a\\b-c"), "a\\eb\\-c");
    }
}
