//! What the console and the UI exchange: the configuration given at start
//! ([`AppConfig`]) and the effects the UI asks the console to carry out
//! ([`Effect`]).

use crate::model::Instance;

/// What the console wiring needs to know that the snapshot does not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    /// The store path as shown in the header (sanitized when drawn).
    pub store_label: String,
    /// The reaper as the flags and the access left it.
    pub reaper: ReaperMode,
    /// The helper as configured (the header's text, the Supervisor pane's
    /// empty state).
    pub helper: HelperMode,
    /// `Err(reason)` when `r` and `d` are off for the whole run (a
    /// read-only store); the reason is shown, never parsed: logged as a
    /// refusal when either is pressed, and said in the footer.
    pub write_keys: Result<(), String>,
    /// The host this console was reached as through `--controller`
    /// (`--reached-as`, validated as stackless validates hosts); the header
    /// shows `on HOST` (sanitized when drawn). `None`: run here.
    pub host: Option<String>,
    /// Draw without colours: `NO_COLOR` set and not empty (read by the
    /// console at start; there is no flag).
    pub no_color: bool,
}

/// The reaper as the flags and the access left it at start (the store's
/// generation and the role may still stop it: `App::reaper_text`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReaperMode {
    /// It runs a pass every `tick` (`--tick`); `dry_run`: it only says
    /// what it would do (`--dry-run`).
    Every {
        /// The time between passes.
        tick: std::time::Duration,
        /// Whether it only says what it would do.
        dry_run: bool,
        /// `--reaper always`: it reaps beside the controller's lease
        /// reaper too (else it stands by while that one runs).
        always: bool,
    },
    /// It never starts, and why: `--no-reaper`, `read-only`.
    Off(String),
}

impl ReaperMode {
    /// The header's text: `reaper: every 1m`, `reaper: every 1s (dry
    /// run)`, `reaper: off (--no-reaper)`.
    #[must_use]
    pub fn line(&self) -> String {
        match self {
            Self::Off(why) => format!("reaper: off ({why})"),
            Self::Every {
                tick,
                dry_run,
                always,
            } => format!(
                "reaper: every {}{}{}",
                humantime::format_duration(*tick),
                if *always { " (always)" } else { "" },
                if *dry_run { " (dry run)" } else { "" }
            ),
        }
    }
}

/// The helper process (`--helper`, the demo's own) as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelperMode {
    /// None configured: `helper: none`.
    None,
    /// This program runs under the supervisor; its label (the program's
    /// file name, `stackless-tui demo-helper` in the demo).
    Program(String),
    /// One was asked for, but the store is open read-only:
    /// `helper: off (read-only)`.
    OffReadOnly,
}

impl HelperMode {
    /// The header's text: `helper: demo-helper`, `helper: none`,
    /// `helper: off (read-only)`.
    #[must_use]
    pub fn line(&self) -> String {
        match self {
            Self::None => "helper: none".into(),
            Self::Program(label) => format!("helper: {label}"),
            Self::OffReadOnly => "helper: off (read-only)".into(),
        }
    }

    /// The Supervisor pane's empty state: a helper asked for (running, or
    /// off) waits for the supervisor; none says how to configure one.
    #[must_use]
    pub const fn state(&self) -> crate::ui::view::HelperState {
        match self {
            Self::None => crate::ui::view::HelperState::NotConfigured,
            Self::Program(_) | Self::OffReadOnly => crate::ui::view::HelperState::Configured,
        }
    }
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
    /// The stackless program `d` runs to queue a teardown behind a pending
    /// operation (`--stackless`, shown lossily): `stackless` by default.
    pub stackless: String,
}

impl Default for TeardownInfo {
    /// stackless's own: `stackless down {name} --json`, found.
    fn default() -> Self {
        Self {
            argv: ["stackless", "down", "{name}", "--json"]
                .map(str::to_owned)
                .to_vec(),
            missing: None,
            stackless: "stackless".to_owned(),
        }
    }
}

impl TeardownInfo {
    /// The command line for `name` as one shell-quoted, sanitized line
    /// (`stackless down alpha --json`): what the dialog says it runs, its
    /// credentials redacted as every shown argv is
    /// ([`crate::model::redact::shown_argv`]). The command itself is always
    /// run as argv, never through a shell.
    #[must_use]
    pub fn line_for(&self, name: &str) -> String {
        let argv: Vec<String> = self
            .argv
            .iter()
            .map(|a| a.replace(crate::reaper::teardown::NAME_PLACEHOLDER, name))
            .collect();
        let shown = crate::model::redact::shown_argv(&argv);
        crate::model::text::sanitize(&crate::reaper::teardown::shell_line(&shown)).into_owned()
    }

    /// The command that queues a teardown of `name` behind its pending
    /// operation ([`crate::model::op_rules::queue_down_args`]) as one
    /// shell-quoted, sanitized line: `stackless down alpha --no-wait
    /// --json`. `None` for a name that is not DNS-safe.
    #[must_use]
    pub fn queue_line_for(&self, name: &str) -> Option<String> {
        let args = crate::model::op_rules::queue_down_args(name)?;
        let mut argv = vec![self.stackless.clone()];
        argv.extend(args);
        let shown = crate::model::redact::shown_argv(&argv);
        Some(
            crate::model::text::sanitize(&crate::reaper::teardown::shell_line(&shown)).into_owned(),
        )
    }
}

/// Something the console must carry out for the UI (an effect of a key
/// or an event; the `:` command line is [`crate::ui::command`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Move the replay's cursor (`[`, `]`, `{`, `}`, `>`): only a replay
    /// asks it, and its reader carries it out (`crate::console::replay`).
    Seek(crate::model::history::cursor::Seek),
    /// Read this instance's timeline from the recording up to the cursor
    /// (`T` in a replay; a live console builds its own from the store).
    Timeline(String),
    /// Reap this instance now (operator `r`; the key rules passed at the
    /// time of the key press, on the snapshot then shown).
    Reap {
        /// The instance as the snapshot showed it.
        instance: Instance,
        /// Its reap backoff as the snapshot showed it (the job records the
        /// next failure on top of it).
        attempt: Option<crate::model::ReapAttempt>,
    },
    /// Tear this instance down (operator `d`, confirmed with `y`).
    TearDown {
        /// The instance as the snapshot showed it at confirmation.
        instance: Instance,
        /// Its reap backoff as the snapshot showed it then.
        attempt: Option<crate::model::ReapAttempt>,
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
        /// A bulk `d` on a store with controller operations: the instances
        /// with a pending operation, each with that operation's verb, whose
        /// teardown is queued behind it instead (as [`Effect::QueueDown`],
        /// one after another).
        queued: Vec<(Instance, String)>,
    },
    /// Queue a teardown of this instance behind its pending controller
    /// operation (operator `d` on a schema-14 store, confirmed with `y`):
    /// `stackless down NAME --no-wait --json`, run by
    /// `crate::console::queue_down` after it re-reads the instance's birth.
    QueueDown {
        /// The instance as the snapshot showed it at confirmation (its
        /// birth is compared right before the command runs).
        instance: Instance,
        /// The verb of the operation it queues behind, for the report.
        behind: String,
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
    /// Renew or verify these instances (operator `L`, `v`, `:renew`,
    /// `:verify`, confirmed with `y`; stackless 0.4.0): each run by
    /// `crate::reaper::verbs` on a thread of its own, its birth re-checked
    /// right before.
    Verbs(Vec<crate::model::verbs::VerbRequest>),
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
    /// Over a fleet: each command to write to its host's agent (the
    /// wiring refuses at once what cannot go: `crate::fleet`).
    Fleet(Vec<crate::ui::app::over_fleet::FleetEffect>),
    /// Quit (`q`, Ctrl-C, or a termination signal).
    Quit,
}
