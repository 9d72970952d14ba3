//! What the console and the UI exchange: the configuration given at start
//! ([`AppConfig`]) and the effects the UI asks the console to carry out
//! ([`Effect`]).

use crate::model::Instance;

/// What the console wiring needs to know that the snapshot does not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    /// The store path as shown in the header (sanitized when drawn).
    pub store_label: String,
    /// The reaper's state for the header, e.g. `reaper: every 5s`,
    /// `reaper: off (--no-reaper)`, `reaper: off (read-only)`.
    pub reaper_line: String,
    /// The helper for the header, e.g. `helper: demo-helper`, `helper: none`.
    /// [`App::new`](super::App::new) reads it once into a
    /// [`crate::ui::view::HelperState`] (a line ending in `none`, or an empty
    /// one: no helper configured), which picks the Supervisor pane's empty
    /// state.
    pub helper_line: String,
    /// `Err(reason)` when `r` and `d` are disabled (read-only store, older
    /// schema); the reason is logged as a refusal when either is pressed.
    pub write_keys: Result<(), String>,
    /// The host this console was reached as through `--controller`
    /// (`--reached-as`, validated as stackless validates hosts); the header
    /// shows `on HOST` (sanitized when drawn). `None`: run here.
    pub host: Option<String>,
}

/// The teardown command as the console runs it, for the `d` dialog and
/// the header (set at start with [`App::set_teardown`](super::App::set_teardown)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeardownInfo {
    /// The argv template, `{name}` where the name goes (`--down-cmd`
    /// split, or the demo's own `demo-down`).
    pub argv: Vec<String>,
    /// Why its program cannot be run, when start-up found it missing
    /// ([`crate::reaper::DownCommand::missing_program`]): shown in the
    /// header until the console quits.
    pub missing: Option<String>,
}

impl Default for TeardownInfo {
    /// stackless's own: `stackless down {name} --json`, found.
    fn default() -> Self {
        Self {
            argv: ["stackless", "down", "{name}", "--json"]
                .map(str::to_owned)
                .to_vec(),
            missing: None,
        }
    }
}

impl TeardownInfo {
    /// The command line for `name` as one shell-quoted, sanitized line
    /// (`stackless down alpha --json`): what the dialog says it runs. The
    /// command itself is always run as argv, never through a shell.
    #[must_use]
    pub fn line_for(&self, name: &str) -> String {
        let argv: Vec<String> = self
            .argv
            .iter()
            .map(|a| a.replace(crate::reaper::teardown::NAME_PLACEHOLDER, name))
            .collect();
        crate::model::text::sanitize(&crate::reaper::teardown::shell_line(&argv)).into_owned()
    }
}

/// Something the console must carry out for the UI (an effect of a key
/// or an event; the `:` command line is [`crate::ui::command`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Reap this instance now (operator `r`; the key rules passed at the
    /// time of the key press, on the snapshot then shown).
    Reap {
        /// The instance as the snapshot showed it.
        instance: Instance,
    },
    /// Tear this instance down (operator `d`, confirmed with `y`).
    TearDown {
        /// The instance as the snapshot showed it at confirmation.
        instance: Instance,
    },
    /// Run these teardowns (a bulk `r` or `d` on the marked instances,
    /// confirmed with `y`; each passed the single key's rules on the
    /// snapshot shown at confirmation), at most `--reap-concurrency` at
    /// once, each a job of its own with its own Activity lines.
    Bulk {
        /// Reap or tear down.
        intent: crate::reaper::Intent,
        /// Each instance with its reap attempt, as the snapshot showed them.
        jobs: Vec<(Instance, Option<crate::model::ReapAttempt>)>,
    },
    /// A read for the I/O worker (`crate::console::io_worker`): the detail, the
    /// logs view's open, scroll-back, searches and whole lines, and the
    /// logs' close. Answered by an `Event::Answer`.
    Io(crate::event::Request),
    /// Cancel a controller operation (operator `c`, confirmed with `y`):
    /// `stackless operation cancel ID --json` (stackless 0.4.0), run by
    /// `crate::controller::cancel`. The key rules passed on the snapshot
    /// shown at confirmation (queued, or a running `up`/`verify`).
    CancelOperation {
        /// `operations.id`, checked to be 1-64 characters of `[0-9A-Za-z-]`.
        id: String,
        /// `operations.instance`, for the report.
        instance: String,
        /// `operations.verb`, for the report.
        verb: String,
    },
    /// Pause (`true`) or resume this console's reaper (operator `P`):
    /// the wiring sets `crate::reaper::ReaperControl`.
    PauseReaper(bool),
    /// Run a reaper pass now (operator `R`).
    ReaperPass,
    /// Put `text` on the clipboard (`y`, `Y`): the console writes the OSC
    /// 52 sequence ([`crate::ui::clipboard::osc52`], of the sanitized text)
    /// to its terminal.
    Copy {
        /// What to copy, as the UI decided it (sanitized when written).
        text: String,
    },
    /// Quit (`q`, Ctrl-C, or a termination signal).
    Quit,
}
