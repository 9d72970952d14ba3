//! What every mode does before it acts, in one place so the console and the
//! headless modes cannot drift: find and open the store the flags name, and
//! build the reaper's configuration from the flags. Failures are typed
//! ([`StartupError`]); the entry point prints them and exits with
//! [`crate::cli::EXIT_USAGE`] without touching the terminal.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::Cli;
use crate::reaper::teardown::DownCommandError;
use crate::reaper::{DownCommand, ReaperConfig};
use crate::store::{Access, Store, StoreError};

/// Why the console or a headless mode could not start. Each message is one
/// paragraph that names the fix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartupError {
    /// The store could not be opened (missing, not stackless, unknown
    /// schema, remote URL, ...).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Neither `XDG_STATE_HOME` nor `HOME` gives an absolute default path.
    #[error(
        "cannot find the default stackless store: neither XDG_STATE_HOME nor HOME is an absolute path. Pass --state PATH."
    )]
    NoDefaultPath,
    /// `--read-only` at stackless's default path, where no store exists yet
    /// (nothing creates it read-only).
    #[error(
        "no stackless state store at {0} yet (stackless's default path): stackless creates it on first run, and so does stackless-tui without --read-only. Run any stackless command (or stackless-tui without --read-only) first, or pass --state PATH."
    )]
    NoDefaultStore(PathBuf),
    /// `--down-cmd` is unusable.
    #[error(transparent)]
    DownCommand(#[from] DownCommandError),
    /// `--helper` is unusable (the text says why).
    #[error("{0}")]
    Helper(String),
    /// The demo's temporary store could not be made.
    #[error("{0}")]
    Demo(String),
    /// This executable's path is unknown (the demo runs itself as `down`).
    #[error("cannot find this executable: {0}")]
    CurrentExe(std::io::Error),
    /// The console was started without a terminal.
    #[error(
        "the console needs a terminal (stdin and stdout are not both a TTY). For scripts and cron use `stackless-tui snapshot` or `stackless-tui reap --once`; over ssh, use `ssh -t`."
    )]
    NoTerminal,
}

/// stackless's default store path (`$XDG_STATE_HOME/stackless/state.db`,
/// else `~/.local/state/stackless/state.db`), whether or not it exists.
///
/// # Errors
/// [`StartupError::NoDefaultPath`] when neither variable is absolute.
pub(crate) fn default_store_path() -> Result<PathBuf, StartupError> {
    crate::store::default_path(
        std::env::var("XDG_STATE_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )
    .ok_or(StartupError::NoDefaultPath)
}

/// A store opened by [`open_store`].
#[derive(Debug)]
pub(crate) struct Opened {
    /// The path opened.
    pub path: PathBuf,
    /// The store.
    pub store: Store,
    /// Nothing was at stackless's default path, and an empty store was
    /// created there (the console and `reap --once` say so).
    pub created: bool,
}

/// Whether [`open_store`] may create the store at stackless's default path
/// when nothing is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Create {
    /// The console and a real `reap --once` pass (not with `--read-only`):
    /// as stackless does on its first run.
    AsStackless,
    /// A read (`snapshot`, `snapshot --json`, `snapshot --follow`): creates
    /// nothing ([`absent_default_store`] is said first).
    Never,
}

/// Open the store the flags name: `--state PATH` (which must exist), else
/// stackless's default path (`$XDG_STATE_HOME/stackless/state.db`, else
/// `~/.local/state/stackless/state.db`), created with the v4 schema on first
/// run as stackless does when `create` allows it and `--read-only` is not
/// given (the console, a real `reap --once`; never a read); then opened
/// with `access`. Refuses `STACKLESS_STATE_URL` (stackless
/// 0.3.0's libsql remote store; 0.4.0 fleets are reached with
/// `--controller`).
///
/// # Errors
/// [`StartupError::Store`], [`StartupError::NoDefaultPath`] or
/// [`StartupError::NoDefaultStore`].
pub(crate) fn open_store(
    cli: &Cli,
    access: Access,
    create: Create,
) -> Result<Opened, StartupError> {
    if let Ok(url) = std::env::var("STACKLESS_STATE_URL")
        && !url.is_empty()
    {
        return Err(StoreError::RemoteUnsupported(shown_url(&url)).into());
    }
    if let Some(path) = &cli.state {
        let store = Store::open(path, access)?;
        return Ok(Opened {
            path: path.clone(),
            store,
            created: false,
        });
    }
    let path = default_store_path()?;
    // stackless creates its store on first run, and so do the console and
    // a real `reap --once` at the default path (never at a --state path,
    // never with --read-only, never for a read: `snapshot` and `reap --once
    // --dry-run` say there is none, `absent_default_store`).
    let mut created = false;
    if create == Create::AsStackless && !cli.read_only && !path.exists() {
        drop(Store::open_or_create(&path)?);
        created = true;
    }
    match Store::open(&path, access) {
        Err(StoreError::NotFound(_)) => Err(StartupError::NoDefaultStore(path)),
        other => Ok(Opened {
            store: other?,
            path,
            created,
        }),
    }
}

/// stackless's default store path when a read finds nothing to read: no
/// `--state`, no `STACKLESS_STATE_URL`, and nothing at the default path
/// (`snapshot`, `reap --once --dry-run` and `snapshot --follow` then say
/// so with [`no_store_line`] and create nothing).
#[must_use]
pub(crate) fn absent_default_store(cli: &Cli) -> Option<PathBuf> {
    if cli.state.is_none()
        && std::env::var_os("STACKLESS_STATE_URL").is_none_or(|u| u.is_empty())
        && let Ok(path) = default_store_path()
        && !path.exists()
    {
        return Some(path);
    }
    None
}

/// What a read says when there is no store at stackless's default `path`:
/// `no stackless state store at PATH (stackless's default path): {what};
/// {why}` (`nothing to reap; a dry run creates nothing`).
#[must_use]
pub(crate) fn no_store_line(path: &std::path::Path, what: &str, why: &str) -> String {
    format!(
        "no stackless state store at {} (stackless's default path): {what}; {why}",
        crate::model::text::sanitize(&path.display().to_string())
    )
}

/// What the console says (once, in its Activity pane) when it created an
/// empty store at stackless's default `path`.
#[must_use]
pub(crate) fn created_line(path: &std::path::Path) -> String {
    format!(
        "no store at {}: created an empty one, as stackless would",
        crate::model::text::sanitize(&path.display().to_string())
    )
}

/// `STACKLESS_STATE_URL` as the message shows it: only `scheme://host`
/// when the value parses cleanly as such (a scheme of letters, digits,
/// `+.-`; after `://`, an optional `userinfo@`, dropped, a host of letters,
/// digits, `.-_`, an optional numeric port, dropped; then nothing, or a
/// `/`, `?`, `#` or `;` whose rest is dropped), else `value hidden`: a
/// URL may carry a password, a token in its path, query or parameters, and
/// nothing of those is ever echoed.
#[must_use]
pub(crate) fn shown_url(url: &str) -> String {
    const HIDDEN: &str = "value hidden";
    let Some((scheme, rest)) = url.split_once("://") else {
        return HIDDEN.to_owned();
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    let authority = rest.split(['/', '?', '#', ';']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = match host_port.split_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        Some(_) => return HIDDEN.to_owned(),
        None => host_port,
    };
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c));
    if scheme_ok && scheme.len() <= 32 && host_ok {
        format!("{scheme}://{host}")
    } else {
        HIDDEN.to_owned()
    }
}

/// The reaper's configuration from the flags (`--tick`, `--down-timeout`,
/// `--dry-run`, `--reap-concurrency`), with `down` the teardown command to
/// run and `tick` the time between passes (the console's demo shortens it).
/// The console's reaper, its keys and `reap --once` all use this.
#[must_use]
pub(crate) fn reaper_config(cli: &Cli, down: DownCommand, tick: Duration) -> ReaperConfig {
    ReaperConfig {
        down,
        tick,
        down_timeout: cli.down_timeout,
        dry_run: cli.dry_run,
        concurrency: usize::from(cli.reap_concurrency),
    }
}

/// The zone times are shown in (the console and `snapshot`'s table): UTC
/// with `--utc`, else the local zone (`TZ` honoured: an IANA name, read
/// from the system's tz database, or a POSIX string such as `IST-5:30`,
/// which needs none), UTC when it cannot be found.
#[must_use]
pub(crate) fn display_zone(utc: bool) -> jiff::tz::TimeZone {
    if utc {
        jiff::tz::TimeZone::UTC
    } else {
        jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_url_is_shown_without_its_secrets() {
        for (url, shown) in [
            ("libsql://x", "libsql://x"),
            (
                "libsql://db-org.turso.io?authToken=SECRET",
                "libsql://db-org.turso.io",
            ),
            ("https://user:SECRET@db.example/v1#x", "https://db.example"),
            ("https://db.example:8080/SECRETTOKEN", "https://db.example"),
            (
                "libsql://db.example;authToken=SECRET",
                "libsql://db.example",
            ),
            ("u:secretpw@db.example.com", "value hidden"),
            ("libsql:/u:pw@h", "value hidden"),
            ("libsql:u:pw@h", "value hidden"),
            ("libsql://u:pw;authToken=SECRET", "value hidden"),
            ("libsql://:SECRET", "value hidden"),
            ("\x1b[2J", "value hidden"),
            ("libsql://h\x1b[2J/x", "value hidden"),
        ] {
            assert_eq!(shown_url(url), shown, "{url:?}");
        }
    }

    #[test]
    fn the_state_url_message() {
        assert_eq!(
            StartupError::from(StoreError::RemoteUnsupported(shown_url("libsql://x"))).to_string(),
            "STACKLESS_STATE_URL is set (libsql://x): stackless 0.4.0 moved fleets from a shared \
             libsql database to a controller reached over SSH (STACKLESS_CONTROLLER=ssh://HOST), \
             and a 0.3.0 libsql remote store cannot be read by this console. Run the console \
             where the controller is: `stackless-tui --controller ssh://HOST` (or set \
             STACKLESS_CONTROLLER), or unset STACKLESS_STATE_URL to open this machine's local \
             store."
        );
    }
}
