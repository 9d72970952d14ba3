//! The table itself: one [`KeyEntry`] per help line, in help order.

use crossterm::event::KeyCode;

use super::Context::{
    Always, CommandLine, Confirm, Detail, Filter, FullText, Help, HelpSearch, LogSearch, Logs,
    Operation, Panes,
};
use crate::model::history::cursor::Seek;

use super::{Action, Bind, Context, FooterLabel, Key, KeyEntry, Mods};

const PANES_DETAIL: &[Context] = &[Panes, Detail];
/// The panes, the detail view, the full-text view and the logs view
/// (movement keys).
const MOVING: &[Context] = &[Panes, Detail, Operation, FullText, Logs];
/// Everywhere a document or a pane has the keyboard (help, quit).
const VIEWS: &[Context] = &[Panes, Detail, Operation, FullText, Logs];
/// The panes, the detail view and the operation overlay.
const PANES_DETAIL_OPERATION: &[Context] = &[Panes, Detail, Operation];

const fn bind(contexts: &'static [Context], keys: &'static [Key], action: Action) -> Bind {
    Bind {
        contexts,
        keys,
        action,
    }
}

const fn foot(
    context: Context,
    slot: u8,
    key: &'static str,
    label: &'static str,
    drop_rank: u8,
) -> FooterLabel {
    FooterLabel {
        context,
        slot,
        key,
        label,
        drop_rank,
    }
}

/// `code` without Ctrl or Alt.
const fn plain(code: KeyCode) -> Key {
    Key::Code(code, Mods::Plain)
}

/// Character `c` without Ctrl or Alt.
const fn ch(c: char) -> Key {
    plain(KeyCode::Char(c))
}

/// `code` whatever the modifiers.
const fn any(code: KeyCode) -> Key {
    Key::Code(code, Mods::Any)
}

/// Every key, in help order.
pub const ENTRIES: &[KeyEntry] = &[
    KeyEntry {
        keys: "↑ / k, ↓ / j",
        fleet: "",
        help: "select a row, a log line or a detail field; scroll text and events",
        binds: &[
            bind(MOVING, &[plain(KeyCode::Up), ch('k')], Action::Up),
            bind(MOVING, &[plain(KeyCode::Down), ch('j')], Action::Down),
            bind(&[Filter], &[any(KeyCode::Up)], Action::Up),
            bind(&[Filter], &[any(KeyCode::Down)], Action::Down),
        ],
        footer: &[
            foot(Panes, 0, "↑↓/jk", "select", 1),
            foot(Detail, 1, "↑↓/jk", "field", 1),
            foot(FullText, 1, "↑↓/jk", "scroll", 1),
            foot(Logs, 1, "↑↓/jk", "scroll", 1),
            foot(Filter, 4, "↑↓", "select", 2),
        ],
    },
    KeyEntry {
        keys: "PgUp / PgDn",
        fleet: "",
        help: "move by one page",
        binds: &[
            bind(MOVING, &[plain(KeyCode::PageUp)], Action::PageUp),
            bind(MOVING, &[plain(KeyCode::PageDown)], Action::PageDown),
            bind(&[Filter], &[any(KeyCode::PageUp)], Action::PageUp),
            bind(&[Filter], &[any(KeyCode::PageDown)], Action::PageDown),
        ],
        footer: &[
            foot(Detail, 2, "PgUp/PgDn", "page", 3),
            foot(FullText, 2, "PgUp/PgDn", "page", 3),
        ],
    },
    KeyEntry {
        keys: "Home / g, End / G",
        fleet: "",
        help: "first / last row; oldest / newest log line",
        binds: &[
            bind(MOVING, &[plain(KeyCode::Home), ch('g')], Action::First),
            bind(MOVING, &[plain(KeyCode::End), ch('G')], Action::Last),
        ],
        footer: &[foot(Logs, 3, "G", "follow", 0)],
    },
    KeyEntry {
        keys: "Tab / Shift-Tab",
        fleet: "the same; the Hosts pane is one more",
        help: "next / previous pane",
        binds: &[
            bind(&[Panes, Logs], &[plain(KeyCode::Tab)], Action::NextPane),
            bind(
                &[Panes, Logs],
                &[plain(KeyCode::BackTab)],
                Action::PreviousPane,
            ),
        ],
        footer: &[
            foot(Panes, 1, "Tab", "pane", 1),
            foot(Logs, 2, "Tab", "service", 1),
        ],
    },
    KeyEntry {
        keys: "Enter",
        fleet: "the detail of the line's instance, read from its host's agent (Instances, Operations, Backoffs); Activity and Hosts: the line whole",
        help: "detail; operation; a backoff, supervisor or activity line whole",
        binds: &[
            bind(&[Panes], &[plain(KeyCode::Enter)], Action::OpenDetail),
            bind(&[Operation], &[any(KeyCode::Enter)], Action::CloseOperation),
            bind(&[Logs], &[plain(KeyCode::Enter)], Action::OpenFullText),
        ],
        footer: &[
            foot(Panes, 7, "Enter", "detail", 2),
            foot(Logs, 9, "Enter/e", "line", 3),
        ],
    },
    KeyEntry {
        keys: "e",
        fleet: "",
        help: "the selected line whole (envelopes labelled, teardown output)",
        binds: &[
            bind(
                &[Panes, Detail, Operation, Logs],
                &[ch('e')],
                Action::OpenFullText,
            ),
            bind(&[FullText], &[ch('e')], Action::CloseFullText),
        ],
        footer: &[
            foot(Panes, 11, "e", "full text", 5),
            foot(Detail, 10, "e", "full text", 5),
        ],
    },
    KeyEntry {
        keys: "Esc",
        fleet: "",
        help: "back: full text, logs, detail, operation, help; the filter, then marks",
        binds: &[
            bind(&[Help], &[any(KeyCode::Esc)], Action::CloseHelp),
            bind(&[FullText], &[any(KeyCode::Esc)], Action::CloseFullText),
            bind(&[Operation], &[any(KeyCode::Esc)], Action::CloseOperation),
            bind(&[Logs], &[plain(KeyCode::Esc)], Action::CloseLogs),
            bind(&[Detail], &[plain(KeyCode::Esc)], Action::CloseDetail),
            bind(&[Panes], &[plain(KeyCode::Esc)], Action::ClearFilter),
        ],
        footer: &[
            foot(Detail, 0, "Esc", "back", 0),
            foot(FullText, 0, "Esc", "back", 0),
            foot(Logs, 0, "Esc", "back", 0),
        ],
    },
    KeyEntry {
        keys: "p",
        fleet: "",
        help: "detail view: show / hide checkpoint payloads",
        binds: &[bind(&[Detail], &[ch('p')], Action::TogglePayloads)],
        footer: &[foot(Detail, 3, "p", "payloads", 1)],
    },
    KeyEntry {
        keys: "l",
        fleet: "",
        help: "logs: G follow, Tab service, / n N search, w wrap",
        binds: &[
            bind(PANES_DETAIL, &[ch('l')], Action::OpenLogs),
            bind(&[Logs], &[ch('/')], Action::EditSearch),
            bind(&[Logs], &[ch('n')], Action::SearchOlder),
            bind(&[Logs], &[ch('N')], Action::SearchNewer),
            bind(&[Logs], &[ch('w')], Action::ToggleWrap),
            bind(&[LogSearch], &[Key::Text], Action::SearchText),
            bind(
                &[LogSearch],
                &[any(KeyCode::Backspace)],
                Action::SearchBackspace,
            ),
            bind(&[LogSearch], &[any(KeyCode::Enter)], Action::SearchKeep),
            bind(&[LogSearch], &[any(KeyCode::Esc)], Action::SearchClear),
        ],
        footer: &[
            foot(Panes, 10, "l", "logs", 3),
            foot(Detail, 9, "l", "logs", 1),
            foot(Logs, 4, "/", "search", 1),
            foot(Logs, 5, "n/N", "match", 2),
            foot(Logs, 6, "w", "wrap", 2),
            foot(LogSearch, 0, "type", "search", 0),
            foot(LogSearch, 1, "Enter", "find", 0),
            foot(LogSearch, 2, "Esc", "clear", 0),
        ],
    },
    KeyEntry {
        keys: "/",
        fleet: "the same filter; words match the HOST too, and host:PART keeps those hosts' rows",
        help: "filter: words match name, substrate or status; field terms:",
        binds: &[bind(&[Panes], &[ch('/')], Action::EditFilter)],
        footer: &[foot(Panes, 8, "/", "filter", 3)],
    },
    KeyEntry {
        keys: "  status: name:",
        fleet: "",
        help: "status:expired (failed-up, tombstoned), substrate:render, name:PART",
        binds: &[],
        footer: &[],
    },
    KeyEntry {
        keys: "  lock: backoff:",
        fleet: "the same, as each host probed its locks and holds its backoffs",
        help: "lock:alive (foreign, held, stale, none, any), backoff:due (waiting, any)",
        binds: &[],
        footer: &[],
    },
    KeyEntry {
        keys: "  op: ! (spaces)",
        fleet: "the same, from each host's operations",
        help: "op:running (queued, pending; 0.4.0); !term negates; all terms apply",
        binds: &[],
        footer: &[],
    },
    KeyEntry {
        keys: "  typing, Backspace",
        fleet: "",
        help: "edit the filter (rows follow each key)",
        binds: &[
            bind(&[Filter], &[Key::Text], Action::FilterText),
            bind(
                &[Filter],
                &[any(KeyCode::Backspace)],
                Action::FilterBackspace,
            ),
        ],
        footer: &[
            foot(Filter, 0, "type", "filter", 0),
            foot(Filter, 1, "Backspace", "edit", 1),
        ],
    },
    KeyEntry {
        keys: "  Enter / Esc",
        fleet: "",
        help: "keep the filter / clear it",
        binds: &[
            bind(&[Filter], &[any(KeyCode::Enter)], Action::FilterKeep),
            bind(&[Filter], &[any(KeyCode::Esc)], Action::FilterClear),
        ],
        footer: &[
            foot(Filter, 2, "Enter", "keep", 0),
            foot(Filter, 3, "Esc", "clear", 0),
        ],
    },
    KeyEntry {
        keys: "  Ctrl-U / Ctrl-W",
        fleet: "",
        help: "in / and : prompts: clear the line / delete the last word",
        binds: &[
            bind(
                &[Filter, CommandLine, LogSearch],
                &[
                    Key::Code(KeyCode::Char('u'), Mods::Ctrl),
                    Key::Code(KeyCode::Char('U'), Mods::Ctrl),
                ],
                Action::PromptClearLine,
            ),
            bind(
                &[Filter, CommandLine, LogSearch],
                &[
                    Key::Code(KeyCode::Char('w'), Mods::Ctrl),
                    Key::Code(KeyCode::Char('W'), Mods::Ctrl),
                ],
                Action::PromptDeleteWord,
            ),
        ],
        footer: &[],
    },
    KeyEntry {
        keys: "s",
        fleet: "the same keys, host first: host (then name), lease expiry, name, substrate, reap attempts, status, lock",
        help: "sort: lease expiry, name, substrate, reap attempts, status, lock",
        binds: &[bind(&[Panes], &[ch('s')], Action::CycleSort)],
        footer: &[foot(Panes, 9, "s", "sort", 4)],
    },
    KeyEntry {
        keys: ":",
        fleet: ":reap :down [HOST/]NAME...; :pause :resume :pass [HOST|all]; :filter; :sort; :help; :q",
        help: "command line: :reap NAME..., :down NAME..., :filter EXPR",
        binds: &[bind(&[Panes], &[ch(':')], Action::OpenCommand)],
        footer: &[],
    },
    KeyEntry {
        keys: "  :sort :pause",
        fleet: ":sort host|lease|name|status; :pause :resume :pass [HOST|all]",
        help: ":sort KEY [asc|desc]; :pause, :resume (P); :pass (R)",
        binds: &[],
        footer: &[],
    },
    KeyEntry {
        keys: "  :logs :ops :q",
        fleet: ":logs [HOST/]NAME; :ops; :help; :q; :WORD jumps (a command wins)",
        help: ":logs NAME (l); :ops; :help; :q; :WORD jumps (a command wins)",
        binds: &[],
        footer: &[],
    },
    KeyEntry {
        keys: "  :renew :verify",
        fleet: ":renew [HOST/]NAME (the lease as recorded: no DURATION over a fleet); :verify [HOST/]NAME",
        help: ":renew NAME... [DURATION] (L); :verify NAME... (v)",
        binds: &[],
        footer: &[],
    },
    KeyEntry {
        keys: "Ctrl-F",
        fleet: "",
        help: "jump to an instance by name (fuzzy; never runs a command)",
        binds: &[bind(
            &[Panes],
            &[
                Key::Code(KeyCode::Char('f'), Mods::Ctrl),
                Key::Code(KeyCode::Char('F'), Mods::Ctrl),
            ],
            Action::OpenJump,
        )],
        footer: &[],
    },
    KeyEntry {
        keys: "  Tab, ↑ / ↓",
        fleet: "",
        help: "complete the command or instance name; the command history",
        binds: &[
            bind(
                &[CommandLine],
                &[any(KeyCode::Tab)],
                Action::CommandComplete,
            ),
            bind(&[CommandLine], &[any(KeyCode::Up)], Action::CommandPrevious),
            bind(&[CommandLine], &[any(KeyCode::Down)], Action::CommandNext),
            bind(&[CommandLine], &[Key::Text], Action::CommandText),
            bind(
                &[CommandLine],
                &[any(KeyCode::Backspace)],
                Action::CommandBackspace,
            ),
            bind(&[CommandLine], &[any(KeyCode::Enter)], Action::CommandRun),
            bind(&[CommandLine], &[any(KeyCode::Esc)], Action::CommandCancel),
        ],
        footer: &[],
    },
    KeyEntry {
        keys: "S",
        fleet: "",
        help: "reverse the sort (▲ / ▼ on the sorted column)",
        binds: &[bind(&[Panes], &[ch('S')], Action::ReverseSort)],
        footer: &[],
    },
    KeyEntry {
        keys: "Space / Ctrl-A",
        fleet: "",
        help: "mark / unmark the row; mark every row shown (Esc clears marks)",
        binds: &[
            bind(&[Panes], &[ch(' ')], Action::ToggleMark),
            bind(
                &[Panes],
                &[
                    Key::Code(KeyCode::Char('a'), Mods::Ctrl),
                    Key::Code(KeyCode::Char('A'), Mods::Ctrl),
                ],
                Action::MarkAll,
            ),
        ],
        footer: &[],
    },
    KeyEntry {
        keys: "  r/d/L/v on marks",
        fleet: "r and d on the marked rows, on each row's host (one question naming each host's count); L and v act on the selected row",
        help: "act on the marked rows shown (y/N once; says how many are hidden)",
        binds: &[],
        footer: &[],
    },
    KeyEntry {
        keys: "r",
        fleet: "the same, on the row's host: its agent reaps there",
        help: "reap the selected instance now (expired, not locked; asks y/N)",
        binds: &[bind(PANES_DETAIL, &[ch('r')], Action::Reap)],
        footer: &[
            foot(Panes, 2, "r", "reap", 0),
            foot(Detail, 4, "r", "reap", 2),
        ],
    },
    KeyEntry {
        keys: "d",
        fleet: "the same, on the row's host: its agent tears down there",
        help: "tear the selected instance down, queued behind a pending op (asks y/N)",
        binds: &[bind(PANES_DETAIL, &[ch('d')], Action::TearDown)],
        footer: &[
            foot(Panes, 3, "d", "down", 0),
            foot(Detail, 5, "d", "down", 2),
        ],
    },
    KeyEntry {
        keys: "c",
        fleet: "",
        help: "cancel an operation: queued, or a running up (asks y/N)",
        binds: &[bind(
            PANES_DETAIL_OPERATION,
            &[ch('c')],
            Action::CancelOperation,
        )],
        footer: &[
            foot(Panes, 4, "c", "cancel op", 2),
            foot(Detail, 6, "c", "cancel op", 2),
        ],
    },
    KeyEntry {
        keys: "L",
        fleet: "the same, on the row's host: its agent runs the renew there (the lease as recorded)",
        help: "renew: edit :renew NAME D (D: each one's recorded lease); y/N",
        binds: &[bind(PANES_DETAIL, &[ch('L')], Action::RenewLease)],
        footer: &[
            foot(Panes, 15, "L", "renew", 5),
            foot(Detail, 12, "L", "renew", 5),
        ],
    },
    KeyEntry {
        keys: "v",
        fleet: "the same, on the row's host: its agent runs the verify there; its answer in the footer",
        help: "verify: its checks in an overlay; renews when it starts (y/N; 0.4.0)",
        binds: &[bind(PANES_DETAIL, &[ch('v')], Action::Verify)],
        footer: &[
            foot(Panes, 16, "v", "verify", 5),
            foot(Detail, 13, "v", "verify", 5),
        ],
    },
    KeyEntry {
        keys: "z",
        fleet: "",
        help: "zoom the focused pane to the whole screen, and back",
        binds: &[bind(&[Panes], &[ch('z')], Action::ToggleZoom)],
        footer: &[foot(Panes, 14, "z", "zoom", 5)],
    },
    KeyEntry {
        keys: "T",
        fleet: "",
        help: "the instance's timeline: every recorded change, op and teardown",
        binds: &[bind(&[Panes], &[ch('T')], Action::Timeline)],
        footer: &[],
    },
    KeyEntry {
        keys: "[ / ], { / }, >, t",
        fleet: "",
        help: "replay: prev / next change; a minute back / fwd; live end; :at TIME",
        binds: &[
            bind(&[Panes], &[ch('[')], Action::Seek(Seek::PreviousChange)),
            bind(&[Panes], &[ch(']')], Action::Seek(Seek::NextChange)),
            bind(&[Panes], &[ch('{')], Action::Seek(Seek::MinuteBack)),
            bind(&[Panes], &[ch('}')], Action::Seek(Seek::MinuteForward)),
            bind(&[Panes], &[ch('>')], Action::Seek(Seek::Live)),
            bind(&[Panes], &[ch('t')], Action::TypeTime),
        ],
        footer: &[],
    },
    KeyEntry {
        keys: "b",
        fleet: "",
        help: "put the header's banners away into one line, and back",
        binds: &[bind(&[Panes], &[ch('b')], Action::ToggleBanners)],
        footer: &[],
    },
    KeyEntry {
        keys: "P",
        fleet: "pause / resume the reaper of the selected row's (or Hosts pane's) host",
        help: "pause / resume this console's reaper (paused, it gives its role up)",
        binds: &[bind(&[Panes], &[ch('P')], Action::ToggleReaperPause)],
        footer: &[foot(Panes, 12, "P", "pause", 5)],
    },
    KeyEntry {
        keys: "R",
        fleet: "a reaper pass on the selected row's (or Hosts pane's) host",
        help: "run a reaper pass now",
        binds: &[bind(&[Panes], &[ch('R')], Action::ReaperPass)],
        footer: &[foot(Panes, 13, "R", "pass", 5)],
    },
    KeyEntry {
        keys: "y / Y",
        fleet: "",
        help: "copy the name (in the detail view: the field) / the down command (OSC 52)",
        binds: &[
            bind(&[Panes], &[ch('y')], Action::CopyName),
            bind(&[Detail], &[ch('y')], Action::CopyField),
            bind(PANES_DETAIL, &[ch('Y')], Action::CopyDown),
        ],
        footer: &[foot(Detail, 11, "y", "copy", 1)],
    },
    KeyEntry {
        keys: "y / other key",
        fleet: "",
        help: "confirm / refuse a reap, a teardown, a cancel, a renew or a verify",
        binds: &[
            bind(
                &[Confirm],
                &[any(KeyCode::Char('y')), any(KeyCode::Char('Y'))],
                Action::ConfirmTearDown,
            ),
            bind(&[Confirm], &[Key::Other], Action::CancelTearDown),
        ],
        // Under an open question the footer lists its keys, not the
        // panes' (which it does not take).
        footer: &[
            foot(Confirm, 0, "y", "yes: run it", 0),
            foot(Confirm, 1, "any other key", "no: nothing runs", 0),
        ],
    },
    KeyEntry {
        keys: "mouse click",
        fleet: "",
        help: "focus a pane; select a table row or a log line",
        binds: &[bind(&[Panes, Filter], &[Key::Click], Action::Click)],
        footer: &[],
    },
    KeyEntry {
        keys: "mouse wheel",
        fleet: "",
        help: "scroll the pane under the pointer",
        binds: &[
            bind(
                &[Panes, Filter, Detail, FullText, Logs],
                &[Key::WheelUp],
                Action::WheelUp,
            ),
            bind(
                &[Panes, Filter, Detail, FullText, Logs],
                &[Key::WheelDown],
                Action::WheelDown,
            ),
        ],
        footer: &[],
    },
    KeyEntry {
        keys: "?",
        fleet: "",
        help: "open / close this help",
        binds: &[
            bind(&[Help], &[any(KeyCode::Char('?'))], Action::CloseHelp),
            bind(VIEWS, &[ch('?')], Action::OpenHelp),
        ],
        footer: &[
            foot(Panes, 5, "?", "help", 0),
            foot(Detail, 7, "?", "help", 0),
            foot(FullText, 3, "?", "help", 0),
            foot(Logs, 7, "?", "help", 0),
        ],
    },
    KeyEntry {
        keys: "  (help) ↑↓ jk /",
        fleet: "",
        help: "scroll, PgUp/PgDn page; / searches (Enter keeps it, Esc clears)",
        binds: &[
            bind(&[Help], &[plain(KeyCode::Up), ch('k')], Action::HelpUp),
            bind(&[Help], &[plain(KeyCode::Down), ch('j')], Action::HelpDown),
            bind(&[Help], &[plain(KeyCode::PageUp)], Action::HelpPageUp),
            bind(&[Help], &[plain(KeyCode::PageDown)], Action::HelpPageDown),
            bind(&[Help], &[plain(KeyCode::Home), ch('g')], Action::HelpTop),
            bind(&[Help], &[plain(KeyCode::End), ch('G')], Action::HelpBottom),
            bind(&[Help], &[ch('/')], Action::HelpSearch),
            bind(&[HelpSearch], &[Key::Text], Action::HelpText),
            bind(
                &[HelpSearch],
                &[any(KeyCode::Backspace)],
                Action::HelpBackspace,
            ),
            bind(&[HelpSearch], &[any(KeyCode::Enter)], Action::HelpKeep),
            bind(&[HelpSearch], &[any(KeyCode::Esc)], Action::HelpClear),
        ],
        footer: &[],
    },
    KeyEntry {
        keys: "q / Ctrl-C",
        fleet: "quit: each host's agent stops as at the end of its input",
        help: "quit",
        binds: &[
            bind(
                &[Always],
                &[
                    Key::Code(KeyCode::Char('c'), Mods::Ctrl),
                    Key::Code(KeyCode::Char('C'), Mods::Ctrl),
                ],
                Action::Quit,
            ),
            bind(
                &[Help],
                &[Key::Code(KeyCode::Char('q'), Mods::NoCtrl)],
                Action::Quit,
            ),
            bind(VIEWS, &[ch('q')], Action::Quit),
        ],
        footer: &[
            foot(Panes, 6, "q", "quit", 0),
            foot(Detail, 8, "q", "quit", 0),
            foot(FullText, 4, "q", "quit", 0),
            foot(Logs, 8, "q", "quit", 0),
        ],
    },
];
