//! The one key table: every key (and mouse gesture) the console reacts to,
//! in which [`Context`], the [`Action`] it triggers, how the footer labels
//! it and how the help overlay explains it.
//!
//! Three readers, one source:
//! - the handler (`App`'s key and mouse handling) asks [`resolve`] for the
//!   action of a press in the current context and matches on [`Action`];
//! - the footer ([`super::panes::footer`]) draws [`footer`] for the mode
//!   under any overlay;
//! - the help overlay ([`super::panes::help`]) draws one line per
//!   [`KeyEntry`] of [`ENTRIES`], in table order.
//!
//! A new key is one new [`KeyEntry`] in [`ENTRIES`] (`keys/table.rs`), plus
//! an [`Action`] variant and its arm in the handler (`app/input.rs`), which
//! the compiler asks for; the tests in `keys/tests.rs` check that the footer,
//! the help and the handler agree with the table.

use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::layout::Position;

/// Where a binding applies. Exactly one of [`Context::Confirm`],
/// [`Context::HelpSearch`], [`Context::Help`], [`Context::CommandLine`],
/// [`Context::FullText`], [`Context::Operation`], [`Context::LogSearch`],
/// [`Context::Logs`], [`Context::Filter`],
/// [`Context::Detail`] and [`Context::Panes`] is current, decided in that
/// order
/// ([`crate::ui::App::context`]); [`Context::Always`] bindings are tried
/// first in every one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Whatever is open (Ctrl-C).
    Always,
    /// A confirmation dialog is open (teardown, or cancel an operation).
    Confirm,
    /// The help overlay's search prompt has the keyboard (`/` in help).
    HelpSearch,
    /// The help overlay is open.
    Help,
    /// The command line has the keyboard (after `:` or Ctrl-F).
    CommandLine,
    /// The full-text view of a cut line is open (Enter on a log line, `e`).
    FullText,
    /// The operation overlay is open (Enter on the Operations pane).
    Operation,
    /// The logs view's search prompt has the keyboard (`/` in the logs
    /// view).
    LogSearch,
    /// The logs view is open (`l`).
    Logs,
    /// The filter prompt has the keyboard (after `/`).
    Filter,
    /// The detail view is open.
    Detail,
    /// The four panes, nothing else open.
    Panes,
}

/// Which modifiers a [`Key::Code`] accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mods {
    /// Any combination, or none.
    Any,
    /// Anything but Ctrl (Alt and Shift allowed).
    NoCtrl,
    /// Neither Ctrl nor Alt (Shift allowed: `G` and Shift-Tab carry it).
    Plain,
    /// Ctrl held (other modifiers allowed).
    Ctrl,
}

/// One key or mouse gesture a [`Bind`] matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// This key code, with the modifiers [`Mods`] allows.
    Code(KeyCode, Mods),
    /// Any printable character typed without Ctrl (the filter's text).
    Text,
    /// Any key press at all (a dialog's "other key": no).
    Other,
    /// A left mouse button press.
    Click,
    /// The mouse wheel turned up (away from the operator).
    WheelUp,
    /// The mouse wheel turned down.
    WheelDown,
}

/// One press to look up: a key with its modifiers, or a mouse gesture at a
/// terminal cell (column, row; 0-based, as crossterm reports it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A key press or repeat (releases are never looked up).
    Key(KeyCode, KeyModifiers),
    /// A left mouse button press.
    Click(Position),
    /// The mouse wheel turned up.
    WheelUp(Position),
    /// The mouse wheel turned down.
    WheelDown(Position),
}

impl Key {
    /// Whether `input` is this key.
    #[must_use]
    pub fn matches(self, input: Input) -> bool {
        match (self, input) {
            (Self::Code(code, mods), Input::Key(pressed, held)) => {
                let ctrl = held.contains(KeyModifiers::CONTROL);
                let alt = held.contains(KeyModifiers::ALT);
                code == pressed
                    && match mods {
                        Mods::Any => true,
                        Mods::NoCtrl => !ctrl,
                        Mods::Plain => !ctrl && !alt,
                        Mods::Ctrl => ctrl,
                    }
            }
            (Self::Text, Input::Key(KeyCode::Char(c), held)) => {
                !held.contains(KeyModifiers::CONTROL) && !c.is_control()
            }
            (Self::Other, Input::Key(..))
            | (Self::Click, Input::Click(_))
            | (Self::WheelUp, Input::WheelUp(_))
            | (Self::WheelDown, Input::WheelDown(_)) => true,
            _ => false,
        }
    }
}

/// The words the fleet view says for a key it does not take
/// ([`Action::on_fleet`]).
mod fleet {
    pub(super) const PAYLOADS: &str = "over a fleet the detail is the host agent's lines: checkpoint payloads are read on the host (stackless-tui there)";
    pub(super) const COPY_FIELD: &str = "over a fleet the detail is the host agent's lines, not fields: Esc, then y copies the name";
    pub(super) const WRAP: &str =
        "over a fleet the logs view always wraps at words: w has nothing to switch";
    pub(super) const BANNERS: &str =
        "over a fleet each host's state is in its row: the one-host banners are not shown";
    pub(super) const SEEK: &str =
        "over a fleet nothing is replayed: run stackless-tui replay on the host";
}

/// What a key does; the handler matches on this. Movement actions apply to
/// the detail document while it is open, else to the focused pane (select a
/// table row, or scroll a log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Quit the console.
    Quit,
    /// Move the replay's cursor (`stackless-tui replay`).
    Seek(crate::model::history::cursor::Seek),
    /// The selected instance's timeline (`T`).
    Timeline,
    /// Type a time for the replay's cursor (`t`: `:at `).
    TypeTime,
    /// One row up (older log line).
    Up,
    /// One row down (newer log line).
    Down,
    /// One page up (a page: the rows the last frame showed).
    PageUp,
    /// One page down.
    PageDown,
    /// The first row (oldest log line, top of the document).
    First,
    /// The last row (newest log line, end of the document).
    Last,
    /// Focus the next pane (Tab order).
    NextPane,
    /// Focus the previous pane.
    PreviousPane,
    /// Open the detail view of the selected instance (or backoff).
    OpenDetail,
    /// Close the detail view.
    CloseDetail,
    /// Clear the kept filter.
    ClearFilter,
    /// Open the help overlay.
    OpenHelp,
    /// Close the help overlay.
    CloseHelp,
    /// Scroll the help one line up.
    HelpUp,
    /// Scroll the help one line down.
    HelpDown,
    /// Scroll the help one page up.
    HelpPageUp,
    /// Scroll the help one page down.
    HelpPageDown,
    /// The top of the help.
    HelpTop,
    /// The end of the help.
    HelpBottom,
    /// Type a query that filters the help (`/` in help).
    HelpSearch,
    /// Add the typed character to the help's query.
    HelpText,
    /// Remove the query's last character.
    HelpBackspace,
    /// Close the help's prompt, keeping the query.
    HelpKeep,
    /// Close the help's prompt, clearing the query.
    HelpClear,
    /// Show or hide the checkpoint payloads in the detail view.
    TogglePayloads,
    /// Open the filter prompt.
    EditFilter,
    /// Add the typed character to the filter.
    FilterText,
    /// Remove the filter's last character.
    FilterBackspace,
    /// Close the prompt, keeping the filter.
    FilterKeep,
    /// Close the prompt, clearing the filter.
    FilterClear,
    /// Next Instances order.
    CycleSort,
    /// Copy the target instance's name to the clipboard (`y`, OSC 52).
    CopyName,
    /// `y` in the detail view: copy the field under the cursor.
    CopyField,
    /// Copy the `down` command line for the target instance (`Y`).
    CopyDown,
    /// Open the command line (`:`).
    OpenCommand,
    /// Open the jump line (Ctrl-F): a name to select, never a command.
    OpenJump,
    /// Add the typed character to the command line.
    CommandText,
    /// Remove the command line's last character.
    CommandBackspace,
    /// Complete the command line's last word (Tab; again: the next
    /// candidate).
    CommandComplete,
    /// The previous line of the history.
    CommandPrevious,
    /// The next line of the history.
    CommandNext,
    /// Run the command line.
    CommandRun,
    /// Close the command line.
    CommandCancel,
    /// Clear the `/` or `:` prompt's line (Ctrl-U).
    PromptClearLine,
    /// Delete the `/` or `:` prompt's last word (Ctrl-W).
    PromptDeleteWord,
    /// Reverse the Instances order (`S`).
    ReverseSort,
    /// Mark or unmark the selected instance (`space`).
    ToggleMark,
    /// Mark every instance the filter shows (Ctrl-A).
    MarkAll,
    /// Reap the target instance now (a write key).
    Reap,
    /// Ask to tear the target instance down (a write key).
    TearDown,
    /// Answer yes to the open question (teardown, or cancel an operation).
    ConfirmTearDown,
    /// Answer no to the open question.
    CancelTearDown,
    /// Ask to cancel the target operation (a write key; stackless 0.4.0
    /// stores only).
    CancelOperation,
    /// Renew the target's lease (`L`: the `:renew` line prefilled with its
    /// recorded duration; over marks, with no duration: each its own; a
    /// write key; stackless 0.4.0 stores only).
    RenewLease,
    /// Verify the target (`v`: `stackless verify NAME --json`; a write
    /// key, it renews the lease; stackless 0.4.0 stores only).
    Verify,
    /// Close the operation overlay.
    CloseOperation,
    /// Open the full text of the selected line (the focused pane's, the
    /// detail view's instance, the operation overlay's operation).
    OpenFullText,
    /// Close the full-text view.
    CloseFullText,
    /// Focus the pane under the pointer and select the row clicked.
    Click,
    /// Scroll the pane under the pointer (the detail view: the document) up.
    WheelUp,
    /// Scroll the pane under the pointer (or the document) down.
    WheelDown,
    /// Open the logs view of the target instance (`l`).
    OpenLogs,
    /// Close the logs view (back to the panes or the detail view).
    CloseLogs,
    /// Logs view: wrap long lines on or off.
    ToggleWrap,
    /// Logs view: open the search prompt.
    EditSearch,
    /// Add the typed character to the search.
    SearchText,
    /// Remove the search's last character.
    SearchBackspace,
    /// Close the prompt and jump to the nearest older match.
    SearchKeep,
    /// Close the prompt, clearing the search.
    SearchClear,
    /// Logs view: the next older match (`n`).
    SearchOlder,
    /// Logs view: the next newer match (`N`).
    SearchNewer,
    /// Pause or resume this console's reaper (`P`).
    ToggleReaperPause,
    /// Run a reaper pass now (`R`).
    ReaperPass,
    /// Zoom the focused pane to the whole body, or back (`z`).
    ToggleZoom,
    /// Put the header's banners away into one line, or show them again
    /// (`b`).
    ToggleBanners,
}

impl Action {
    /// What this action does over a fleet (`--fleet`, `--controller` twice
    /// or more): `Ok` when it does there what it does on one host, acting
    /// on the selected row's host (a command to that host's agent, after
    /// the same `[y/N]`); `Err` with the words the fleet view says when the
    /// key is pressed there, for what it cannot do over a host's agent.
    /// Every action says which (the match is exhaustive), and
    /// `docs/keys.md`'s table shows it.
    pub const fn on_fleet(self) -> Result<(), &'static str> {
        match self {
            Self::Quit
            | Self::Up
            | Self::Down
            | Self::PageUp
            | Self::PageDown
            | Self::First
            | Self::Last
            | Self::NextPane
            | Self::PreviousPane
            | Self::OpenDetail
            | Self::CloseDetail
            | Self::ClearFilter
            | Self::OpenHelp
            | Self::CloseHelp
            | Self::HelpUp
            | Self::HelpDown
            | Self::HelpPageUp
            | Self::HelpPageDown
            | Self::HelpTop
            | Self::HelpBottom
            | Self::HelpSearch
            | Self::HelpText
            | Self::HelpBackspace
            | Self::HelpKeep
            | Self::HelpClear
            | Self::EditFilter
            | Self::FilterText
            | Self::FilterBackspace
            | Self::FilterKeep
            | Self::FilterClear
            | Self::CycleSort
            | Self::OpenCommand
            | Self::OpenJump
            | Self::CommandText
            | Self::CommandBackspace
            | Self::CommandRun
            | Self::CommandCancel
            | Self::PromptClearLine
            | Self::ReverseSort
            | Self::ToggleMark
            | Self::MarkAll
            | Self::Reap
            | Self::TearDown
            | Self::ConfirmTearDown
            | Self::CancelTearDown
            | Self::CancelOperation
            | Self::RenewLease
            | Self::Verify
            | Self::OpenFullText
            | Self::CloseFullText
            | Self::OpenLogs
            | Self::CloseLogs
            | Self::CloseOperation
            | Self::ToggleReaperPause
            | Self::ReaperPass => Ok(()),
            Self::TogglePayloads => Err(fleet::PAYLOADS),
            Self::CopyName | Self::CopyDown => Ok(()),
            Self::CopyField => Err(fleet::COPY_FIELD),
            Self::CommandPrevious
            | Self::CommandNext
            | Self::PromptDeleteWord
            | Self::CommandComplete => Ok(()),
            Self::Click | Self::WheelUp | Self::WheelDown => Ok(()),
            Self::EditSearch
            | Self::SearchText
            | Self::SearchBackspace
            | Self::SearchKeep
            | Self::SearchClear
            | Self::SearchOlder
            | Self::SearchNewer => Ok(()),
            Self::ToggleWrap => Err(fleet::WRAP),
            Self::ToggleZoom => Ok(()),
            Self::ToggleBanners => Err(fleet::BANNERS),
            Self::Seek(_) | Self::Timeline | Self::TypeTime => Err(fleet::SEEK),
        }
    }

    /// Whether this is a write key (it changes the store or runs stackless):
    /// struck through in the footer while the write keys are off
    /// (`AppConfig::write_keys` is `Err`, or the schema is too old).
    #[must_use]
    pub const fn writes(self) -> bool {
        matches!(
            self,
            Self::Reap | Self::TearDown | Self::CancelOperation | Self::RenewLease | Self::Verify
        )
    }

    /// Whether it acts on the controller's operations, so the footer shows
    /// it only on stores that have them (`Generation::has_operations`).
    #[must_use]
    pub const fn needs_operations(self) -> bool {
        matches!(
            self,
            Self::CancelOperation | Self::RenewLease | Self::Verify
        )
    }
}

/// Some keys that trigger `action` in some contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bind {
    /// Where these keys do it.
    pub contexts: &'static [Context],
    /// Any of these does it.
    pub keys: &'static [Key],
    /// What they do.
    pub action: Action,
}

/// A key as one footer shows it: `key label`, e.g. `r reap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FooterLabel {
    /// Which footer: [`Context::FullText`], [`Context::LogSearch`],
    /// [`Context::Logs`], [`Context::Filter`], [`Context::Detail`] or
    /// [`Context::Panes`] (the mode under any overlay).
    pub context: Context,
    /// Position in that footer, left to right (unique per footer).
    pub slot: u8,
    /// The key as shown, e.g. `↑↓/jk`.
    pub key: &'static str,
    /// What it does, one word or two.
    pub label: &'static str,
    /// When the line is too narrow, labels of the highest rank are dropped
    /// first (the rightmost of them first); rank 0 is never dropped.
    pub drop_rank: u8,
}

/// One line of the help overlay, with the bindings it explains and the
/// footer labels they get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyEntry {
    /// The keys as the help lists them, e.g. `q / Ctrl-C` (an indented entry
    /// belongs to the one above it).
    pub keys: &'static str,
    /// What they do, as the help says it.
    pub help: &'static str,
    /// What they do over a fleet when it says more than "the same, on the
    /// selected row's host" (empty: that, or the refusals of
    /// [`Action::on_fleet`]); [`KeyEntry::over_a_fleet`] says it whole.
    pub fleet: &'static str,
    /// The keys and their actions, per context.
    pub binds: &'static [Bind],
    /// How the footers show them (empty: help only).
    pub footer: &'static [FooterLabel],
}

impl KeyEntry {
    /// What its keys do over a fleet, as the help and `docs/keys.md` say
    /// it: its note ([`KeyEntry::fleet`]), else "the same, on the selected
    /// row's host"; then each refusal of its actions
    /// ([`Action::on_fleet`]), once.
    #[must_use]
    pub fn over_a_fleet(&self) -> String {
        let mut refused: Vec<&str> = Vec::new();
        for bind in self.binds {
            if let Err(why) = bind.action.on_fleet()
                && !refused.contains(&why)
            {
                refused.push(why);
            }
        }
        let all_refused =
            !self.binds.is_empty() && self.binds.iter().all(|b| b.action.on_fleet().is_err());
        let mut words = Vec::new();
        if !all_refused {
            words.push(if self.fleet.is_empty() {
                "the same, on the selected row's host"
            } else {
                self.fleet
            });
        }
        words.extend(refused);
        words.join("; ")
    }

    /// Whether any of its actions is a write key ([`Action::writes`]).
    #[must_use]
    pub fn writes(&self) -> bool {
        self.binds.iter().any(|b| b.action.writes())
    }

    /// Whether any of its actions needs the controller's operations
    /// ([`Action::needs_operations`]).
    #[must_use]
    pub fn needs_operations(&self) -> bool {
        self.binds.iter().any(|b| b.action.needs_operations())
    }
}

mod table;

pub use table::ENTRIES;

/// The action of `input` in `context`: the first binding in table order
/// that applies in [`Context::Always`] and matches, else the first that
/// applies in `context` and matches; `None` when the key does nothing there.
#[must_use]
pub fn resolve(context: Context, input: Input) -> Option<Action> {
    find(Context::Always, input).or_else(|| find(context, input))
}

fn find(context: Context, input: Input) -> Option<Action> {
    ENTRIES
        .iter()
        .flat_map(|entry| entry.binds)
        .find(|b| b.contexts.contains(&context) && b.keys.iter().any(|k| k.matches(input)))
        .map(|b| b.action)
}

/// The labels of the footer for `context`, left to right, each with its
/// entry.
#[must_use]
pub fn footer(context: Context) -> Vec<(&'static KeyEntry, &'static FooterLabel)> {
    let mut labels: Vec<_> = ENTRIES
        .iter()
        .flat_map(|entry| entry.footer.iter().map(move |label| (entry, label)))
        .filter(|(_, label)| label.context == context)
        .collect();
    labels.sort_by_key(|(_, label)| label.slot);
    labels
}

/// The write keys as the footer names them when they are off: their help
/// keys joined by `/`, e.g. `r/d`, or `r/d/c` on a store with `operations`
/// (`operations` true).
#[must_use]
pub fn write_keys(operations: bool) -> String {
    ENTRIES
        .iter()
        .filter(|entry| entry.writes() && (operations || !entry.needs_operations()))
        .map(|entry| entry.keys)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests;
