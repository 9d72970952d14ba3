//! The fleet view's state, as pure rules: each host's link (as the wiring
//! reports it) and the tables its agent's stream built (docs/protocol.md),
//! merged into one view over every host. No I/O and no clock: times are
//! parameters (unix milliseconds where a round trip is measured, unix
//! seconds elsewhere, as the protocol's).

/// A host's link state, as the wiring's reconnect rules decide it
/// (docs/protocol.md "Fleet stream": `connecting`, `connected`, `stale`,
/// `failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Its ssh runs; no `hello` yet.
    Connecting,
    /// Its `hello` came; lines arrive.
    Connected,
    /// Its ssh ended or it went silent: its rows are kept, dimmed, and it
    /// is connected again at `retry_at`.
    Stale,
    /// It cannot work until someone acts (host key, login, not installed,
    /// older protocol): not retried.
    Failed,
}

impl LinkState {
    /// The word the Hosts pane and the `host` message use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Stale => "stale",
            Self::Failed => "failed",
        }
    }
}

/// One host's link, as the wiring reports it at each change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Its state.
    pub state: LinkState,
    /// When it entered that state (unix seconds).
    pub since: i64,
    /// Why it is stale or failed (the operator's sentence), else `None`.
    pub error: Option<String>,
    /// When a stale host is connected again (unix seconds).
    pub retry_at: Option<i64>,
    /// The host's clock minus this machine's (seconds), as its agent's
    /// `hello.now` and `heartbeat.at` measured it on arrival; `None` until
    /// measured (an older agent sends no `hello.now`).
    pub skew: Option<i64>,
}

/// A host whose clock is off this machine's by more than this (seconds)
/// shows its skew: its countdowns are on its own clock, which reaps
/// there, and differ from this machine's by the skew. Both clocks are read
/// in whole seconds, so up to 2 s is the reading's own error.
pub const SKEW_SHOWN_SECS: i64 = 2;

mod host;
pub mod notes;
pub mod rows;
pub mod wake;
pub mod wire;

use std::collections::VecDeque;

use serde_json::Value;

use crate::model::protocol::lines::{HelloMessage, ReaperLine, Reply};
pub use host::Host;
use wire::Message;

use crate::model::sort_key::SortKey;

/// The most Activity lines kept over the whole fleet (the oldest go).
pub const MAX_ACTIVITY: usize = 1_000;

/// The most instances (and backoffs) kept of one host: past it, new rows
/// are not kept and the Hosts pane says so (a host that adds rows without
/// end never grows this console's memory without end).
pub const MAX_HOST_ROWS: usize = MAX_GROUP_ROWS;

/// The most operations kept of one host (an agent sends the pending ones
/// and the 50 newest finished: docs/protocol.md).
pub const MAX_HOST_OPERATIONS: usize = 2_000;

/// The most banners kept of one host (the protocol names 12).
pub const MAX_BANNERS: usize = 32;

/// The most rows a host may send in one group before its `synced`
/// (upserts and removes): past it the group is dropped and the host
/// noted (a host that never says `synced` never grows this console's
/// memory). A full snapshot of 100,000 instances fits.
pub const MAX_GROUP_ROWS: usize = 250_000;

/// How much of one host this console keeps: past each bound new rows are
/// not kept and the Hosts pane says so. The defaults are
/// [`MAX_HOST_ROWS`] and [`MAX_GROUP_ROWS`]; a test sets small ones to
/// reach them quickly ([`Fleet::with_bounds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The most instances (and backoffs) kept of one host.
    pub host_rows: usize,
    /// The most rows (upserts and removes) one group may carry before its
    /// `synced`: past it the group is dropped.
    pub group_rows: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            host_rows: MAX_HOST_ROWS,
            group_rows: MAX_GROUP_ROWS,
        }
    }
}

/// A host's `hello` (docs/protocol.md), as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The host's own name (`gethostname`), as sent.
    pub host: String,
    /// The store's `user_version`.
    pub schema: i64,
    /// `read_only`: no command that writes is taken.
    pub read_only: bool,
    /// `dry_run`: teardowns only say what they would run.
    pub dry_run: bool,
    /// The `cmd` values the agent takes.
    pub commands: Vec<String>,
    /// The agent's version.
    pub version: String,
    /// The teardown command `reap` and `down` run there, as argv with
    /// `{name}` where the name goes (empty when the agent did not say).
    pub teardown: Vec<String>,
    /// The stackless program `queue_down` and `cancel` run there.
    pub stackless: Option<String>,
}

impl From<HelloMessage> for Hello {
    fn from(hello: HelloMessage) -> Self {
        Self {
            host: hello.host,
            schema: hello.schema,
            read_only: hello.read_only,
            dry_run: hello.dry_run,
            commands: hello.commands,
            version: hello.version,
            teardown: hello.teardown,
            stackless: hello.stackless,
        }
    }
}

/// Who reaps on a host (the `reaper` message, or `hello.reaper`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaper {
    /// `agent`, `console`, `controller`, `nobody`, `unknown`.
    pub by: String,
    /// The reaping process's pid, when known.
    pub pid: Option<i64>,
    /// The operator paused the agent's reaper.
    pub paused: bool,
    /// The header's words (`reaper: every 60s`).
    pub text: String,
    /// When the agent's next pass is due (unix seconds, the host's clock).
    pub next_pass_at: Option<i64>,
    /// The agent has finished a pass (`last_pass` was sent): `false`
    /// while its first pass waits (`serve --stdio --first-pass-after`).
    pub passed: bool,
}

impl From<ReaperLine> for Reaper {
    fn from(line: ReaperLine) -> Self {
        Self {
            by: line.by,
            pid: line.pid,
            paused: line.paused,
            text: line.text,
            next_pass_at: line.next_pass_at,
            passed: line.last_pass.is_some(),
        }
    }
}

/// One Activity line of a host (the `activity` message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// The host's index.
    pub host: usize,
    /// When (unix seconds).
    pub at: i64,
    /// `reaper`, `operator`, `controller`, `observed`.
    pub actor: String,
    /// The instance, as sent.
    pub instance: String,
    /// The pane's word (`reaped`, `refused`, ...).
    pub kind: String,
    /// The rest.
    pub detail: String,
}

/// What a line changed, for the view.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// Nothing the view redraws beyond the host's own state.
    Host,
    /// A `synced` group made the host's tables anew: the merged table's
    /// order is stale.
    Tables,
    /// An Activity line was added.
    Activity,
    /// A `reply` to command `reply.id` (its words: [`Reply::words`]).
    Reply(Box<Reply>),
    /// A `log` line of logs stream `logs`.
    Log {
        /// The `logs` command's id.
        logs: Value,
        /// The service.
        service: String,
        /// The line (sanitized by the agent as the logs view draws it).
        text: String,
        /// The continuation of the last line.
        cont: bool,
    },
    /// Logs stream `logs` ended (`stopped`, `replaced`, `gone`).
    LogsEnd {
        /// The `logs` command's id.
        logs: Value,
        /// Why.
        reason: String,
    },
    /// Nothing to show (a `heartbeat`).
    Quiet,
    /// Not a message this view knows, or not the protocol: ignored.
    Ignored,
}

/// One row of the merged table: host index and the row's index in that
/// host's [`super::Host::instances`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRef {
    /// The host's index.
    pub host: usize,
    /// The instance's index on that host.
    pub index: usize,
}

/// Every host of a fleet and the Activity they sent.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// The hosts, in the fleet's order.
    pub hosts: Vec<Host>,
    /// The merged Activity, oldest first (at most [`MAX_ACTIVITY`]).
    pub activity: VecDeque<Activity>,
}

impl Fleet {
    /// A fleet of hosts named `names`, all connecting since `now`.
    #[must_use]
    pub fn new(names: Vec<String>, now: i64) -> Self {
        Self::with_bounds(names, now, Bounds::default())
    }

    /// A fleet of hosts named `names`, all connecting since `now`, each
    /// kept within `bounds`.
    #[must_use]
    pub fn with_bounds(names: Vec<String>, now: i64, bounds: Bounds) -> Self {
        Self {
            hosts: names
                .into_iter()
                .map(|name| {
                    let mut host = Host::new(name, now);
                    host.bounds = bounds;
                    host
                })
                .collect(),
            activity: VecDeque::new(),
        }
    }

    /// Host `host`'s link changed ([`Host::set_link`]): a lost or
    /// recovered host's note added to the Activity as a `console` line
    /// (kind `lost` or `recovered`). `true` when a line was added.
    pub fn set_link(&mut self, host: usize, link: Link) -> bool {
        let Some(note) = self.hosts.get_mut(host).and_then(|one| one.set_link(link)) else {
            return false;
        };
        self.note(host, note.at, note.kind, "", note.detail);
        true
    }

    /// Add a `console` Activity line of host `host`: what this console saw
    /// of the host's link (kind `lost`, `recovered`) or of a command it
    /// sent (kind `lost`, instance its target), at `at` (unix seconds).
    pub fn note(&mut self, host: usize, at: i64, kind: &str, instance: &str, detail: String) {
        if self.activity.len() >= MAX_ACTIVITY {
            self.activity.pop_front();
        }
        self.activity.push_back(Activity {
            host,
            at,
            actor: "console".to_owned(),
            instance: instance.to_owned(),
            kind: kind.to_owned(),
            detail,
        });
    }

    /// The merged Instances table's rows: every host's rows that were
    /// kept (`kept[h][i]`: host `h`'s row `i` passed the console's one
    /// filter), sorted by `sort` (reversed when `descending`); ties by
    /// host order, then name, then birth, so the order is total and
    /// stable.
    #[must_use]
    pub fn order(&self, kept: &[Vec<bool>], sort: SortKey, descending: bool) -> Vec<RowRef> {
        let per_host: Vec<Vec<usize>> = self
            .hosts
            .iter()
            .zip(kept)
            .map(|(host, kept)| host.order(kept, sort))
            .collect();
        self.merge(&per_host, sort, descending)
    }

    /// The merged order of every host's sorted rows (`per_host[h]`, from
    /// [`Host::order`]): by host, the hosts' lists one after the other; by
    /// any other key, a merge of the sorted lists (ties by host order).
    #[must_use]
    pub fn merge(&self, per_host: &[Vec<usize>], sort: SortKey, reversed: bool) -> Vec<RowRef> {
        let mut rows: Vec<RowRef> = per_host
            .iter()
            .enumerate()
            .flat_map(|(host, list)| list.iter().map(move |&index| RowRef { host, index }))
            .collect();
        if sort != SortKey::Host {
            let get = |r: &RowRef| {
                let host = &self.hosts[r.host];
                (host, &host.instances()[r.index])
            };
            // Each host's run is sorted already: a stable sort merges the
            // runs.
            rows.sort_by(|a, b| {
                host::compare(get(a), get(b), sort).then_with(|| a.host.cmp(&b.host))
            });
        }
        if reversed {
            rows.reverse();
        }
        rows
    }

    /// Apply one message of host `host`'s stream (docs/protocol.md "The
    /// out-stream"). Rows wait for their group's `synced`, so the tables
    /// shown are always one consistent read of that host's store.
    pub fn apply(&mut self, host: usize, message: Message) -> Applied {
        let Some(one) = self.hosts.get_mut(host) else {
            return Applied::Ignored;
        };
        match message {
            Message::Hello(hello) => {
                if let Some(reaper) = &hello.reaper {
                    one.reaper = Some(Reaper::from(reaper.clone()));
                }
                one.hello = Some(Hello::from(*hello));
                one.note = None;
                Applied::Host
            }
            Message::Reaper(reaper) => {
                one.reaper = Some(Reaper::from(reaper));
                Applied::Host
            }
            Message::Reset(_) => {
                one.reset_group();
                Applied::Host
            }
            Message::Rows(rows) => {
                one.rows(rows);
                Applied::Host
            }
            Message::Synced(synced) => {
                one.synced(synced.at);
                Applied::Tables
            }
            Message::Banner(banner) => {
                if one.banners.len() < MAX_BANNERS || one.banners.contains_key(&banner.id) {
                    one.banners.insert(banner.id, (banner.level, banner.text));
                }
                Applied::Host
            }
            Message::BannerCleared(cleared) => {
                one.banners.remove(&cleared.id);
                Applied::Host
            }
            Message::Activity(line) => {
                if self.activity.len() >= MAX_ACTIVITY {
                    self.activity.pop_front();
                }
                self.activity.push_back(Activity {
                    host,
                    at: line.at,
                    actor: line.actor,
                    instance: line.instance,
                    kind: line.kind,
                    detail: line.detail,
                });
                Applied::Activity
            }
            Message::Reply(reply) => Applied::Reply(Box::new(reply)),
            Message::Log(line) => Applied::Log {
                logs: line.logs,
                service: line.service,
                text: line.text,
                cont: line.cont,
            },
            Message::LogsEnd(end) => Applied::LogsEnd {
                logs: end.logs,
                reason: end.reason,
            },
            Message::Heartbeat(_) => Applied::Quiet,
            Message::Services(_) | Message::Unknown => Applied::Ignored,
        }
    }
}

#[cfg(test)]
mod tests;
