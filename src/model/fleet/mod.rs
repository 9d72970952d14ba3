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

pub mod notes;
pub mod rows;
pub mod view;
pub mod wake;
pub mod wire;

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde_json::Value;

use crate::model::protocol::lines::{HelloMessage, ReaperLine, Reply};
use rows::{Backoff, Instance, InstanceKey, Operation};
use wire::{Message, Rows};

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

/// One host: its link, what its agent said, its tables.
#[derive(Debug, Clone)]
pub struct Host {
    /// What it is shown as: its label, else its alias.
    pub name: String,
    /// Its alias (the target's host part), when a label is shown instead:
    /// the filter's `host:` and the `:` commands find it by either.
    pub alias: Option<String>,
    /// Its link, as the wiring last reported it.
    pub link: Link,
    /// Its current connection's `hello`.
    pub hello: Option<Hello>,
    /// Who reaps there.
    pub reaper: Option<Reaper>,
    /// Its header banners: id -> (level, text).
    pub banners: BTreeMap<String, (String, String)>,
    /// The last round trip of a `ping` (milliseconds).
    pub rtt_ms: Option<i64>,
    /// When its tables were last made whole (`synced.at`, unix seconds).
    pub synced_at: Option<i64>,
    /// The last error its link reported and when (unix seconds): kept
    /// after the host is back, so a loss that lasted a moment is still
    /// told.
    pub last_error: Option<(i64, String)>,
    /// How many times it was connected again after going stale.
    pub reconnects: u32,
    /// When its last line came (unix seconds): its rows were current
    /// then, so a stale host's rows are this old.
    pub current_at: Option<i64>,
    /// One more at each `synced` (its tables made anew): a view's cached
    /// order of this host's rows is stale when its version is older.
    pub version: u64,
    /// Something its stream did that is not the protocol (shown in the
    /// Hosts pane), or its last refused command.
    pub note: Option<String>,
    /// When its connection was lost (unix seconds), until it is connected
    /// again: the recovered note says how long it was out.
    lost_at: Option<i64>,
    instances: Vec<Instance>,
    index: HashMap<InstanceKey, usize>,
    operations: Vec<Operation>,
    op_index: HashMap<String, usize>,
    backoffs: BTreeMap<String, Backoff>,
    group: Vec<Rows>,
    group_rows: usize,
    group_reset: bool,
    bounds: Bounds,
}

impl Host {
    /// A host named `name`, not connected yet (`connecting` since `now`).
    #[must_use]
    pub fn new(name: String, now: i64) -> Self {
        Self {
            name,
            alias: None,
            link: Link {
                state: LinkState::Connecting,
                since: now,
                error: None,
                retry_at: None,
                skew: None,
            },
            hello: None,
            reaper: None,
            banners: BTreeMap::new(),
            rtt_ms: None,
            synced_at: None,
            version: 0,
            last_error: None,
            reconnects: 0,
            current_at: None,
            note: None,
            lost_at: None,
            instances: Vec::new(),
            index: HashMap::new(),
            operations: Vec::new(),
            op_index: HashMap::new(),
            backoffs: BTreeMap::new(),
            group: Vec::new(),
            group_rows: 0,
            group_reset: false,
            bounds: Bounds::default(),
        }
    }

    /// Its instances (as of its last `synced`), in no order.
    #[must_use]
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    /// Its operations (as of its last `synced`).
    #[must_use]
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// Its backoffs (as of its last `synced`), by instance name.
    pub fn backoffs(&self) -> impl Iterator<Item = &Backoff> {
        self.backoffs.values()
    }

    /// The backoff of instance `name`.
    #[must_use]
    pub fn backoff(&self, name: &str) -> Option<&Backoff> {
        self.backoffs.get(name)
    }

    /// The instance of `key`.
    #[must_use]
    pub fn instance(&self, key: &InstanceKey) -> Option<&Instance> {
        self.index.get(key).and_then(|&i| self.instances.get(i))
    }

    /// The pending operation (queued or running) of instance `name`.
    #[must_use]
    pub fn pending_operation(&self, name: &str) -> Option<&Operation> {
        self.operations
            .iter()
            .find(|op| op.pending() && op.instance == name)
    }

    /// Actions can be sent: connected, with a `hello` and its first
    /// tables. `Err` says why not (the refusal's words).
    ///
    /// # Errors
    /// The host is connecting, stale or failed, or has sent no snapshot.
    pub fn ready(&self, now: i64) -> Result<&Hello, String> {
        let name = crate::model::text::sanitize_short(&self.name, 64);
        match self.link.state {
            LinkState::Connected => {}
            LinkState::Connecting => return Err(format!("{name} is still connecting")),
            LinkState::Stale => {
                return Err(format!(
                    "{name} is stale ({}): its rows are {} old; nothing is sent until it is back",
                    self.link.error.as_deref().unwrap_or("no line"),
                    crate::model::time::span(now.saturating_sub(self.rows_since()))
                ));
            }
            LinkState::Failed => {
                return Err(format!(
                    "{name} failed: {}",
                    self.link.error.as_deref().unwrap_or("unknown")
                ));
            }
        }
        match (&self.hello, self.synced_at) {
            (Some(hello), Some(_)) => Ok(hello),
            _ => Err(format!("{name} has not sent its first snapshot yet")),
        }
    }

    /// Whether `word` names it: its name, or its alias.
    #[must_use]
    pub fn named(&self, word: &str) -> bool {
        self.name == word || self.alias.as_deref() == Some(word)
    }

    /// Its name and alias as one text, for the filter's `host:` term.
    #[must_use]
    pub fn search_name(&self) -> std::borrow::Cow<'_, str> {
        match &self.alias {
            Some(alias) => std::borrow::Cow::Owned(format!("{} {alias}", self.name)),
            None => std::borrow::Cow::Borrowed(&self.name),
        }
    }

    /// Since when its rows may be out of date (unix seconds): its last
    /// line, else the link's last change.
    #[must_use]
    pub fn rows_since(&self) -> i64 {
        self.current_at.unwrap_or(self.link.since)
    }

    /// This host's clock when this machine's reads `now` (unix seconds):
    /// `now` plus its measured skew (`now` until one was measured). A
    /// lease expires on the host's clock (its reaper reads it: stackless
    /// §6), so every countdown and expiry of this host's rows is taken at
    /// this time.
    #[must_use]
    pub fn host_now(&self, now: i64) -> i64 {
        now.saturating_add(self.link.skew.unwrap_or(0))
    }

    /// The time left (seconds, negative when past) until `expires_at` on
    /// this host's clock, when this machine's reads `now`.
    #[must_use]
    pub fn time_left(&self, expires_at: i64, now: i64) -> i64 {
        expires_at.saturating_sub(self.host_now(now))
    }

    /// Its clock skew (host minus this machine, seconds) when it is over
    /// [`SKEW_SHOWN_SECS`] either way: the Hosts pane shows it.
    #[must_use]
    pub fn skew_shown(&self) -> Option<i64> {
        self.link.skew.filter(|skew| skew.abs() > SKEW_SHOWN_SECS)
    }

    /// The seconds left (on its own clock) before its agent's first reaper
    /// pass, while that pass waits its countdown (`serve --stdio
    /// --first-pass-after`: nothing reaped there yet, not paused); else
    /// `None`. A pause keeps the pass from running.
    #[must_use]
    pub fn first_pass_in(&self, now: i64) -> Option<i64> {
        let reaper = self.reaper.as_ref()?;
        if reaper.by != "agent" || reaper.passed || reaper.paused {
            return None;
        }
        reaper
            .next_pass_at
            .map(|at| at.saturating_sub(self.host_now(now)).max(0))
    }

    /// The words of its clock skew when shown ([`Host::skew_shown`]):
    /// `its clock is 1h 00m ahead of this machine's: its countdowns are
    /// on its own clock`.
    #[must_use]
    pub fn skew_text(&self) -> Option<String> {
        let skew = self.skew_shown()?;
        let way = if skew > 0 { "ahead of" } else { "behind" };
        Some(format!(
            "its clock is {} {way} this machine's: its countdowns are on its own clock",
            crate::model::time::span(skew.saturating_abs())
        ))
    }

    /// Counts for the Hosts pane at `now` (this machine's clock; expiry
    /// taken on the host's, [`Host::host_now`]): (instances, active,
    /// expired, tombstoned).
    #[must_use]
    pub fn counts(&self, now: i64) -> (usize, usize, usize, usize) {
        let now = self.host_now(now);
        let mut counts = (self.instances.len(), 0, 0, 0);
        for instance in &self.instances {
            if instance.tombstoned() {
                counts.3 += 1;
            } else if instance.status == "active" {
                counts.1 += 1;
                if instance.expired(now) {
                    counts.2 += 1;
                }
            }
        }
        counts
    }

    /// A link change: a new connection (connecting) forgets the last
    /// `hello`; its rows stay until the new snapshot replaces them. The
    /// note of a lost or recovered host ([`notes::link_note`]) is
    /// returned for the Activity pane ([`Fleet::set_link`] adds it).
    pub fn set_link(&mut self, link: Link) -> Option<notes::LinkNote> {
        let note = notes::link_note(&self.name, &mut self.lost_at, &self.link, &link);
        if let Some(error) = &link.error {
            self.last_error = Some((link.since, error.clone()));
        }
        if link.state == LinkState::Connecting && self.link.state == LinkState::Stale {
            self.reconnects += 1;
        }
        if link.state == LinkState::Connecting {
            self.hello = None;
            self.rtt_ms = None;
            self.group.clear();
            self.group_rows = 0;
            self.group_reset = false;
        }
        self.link = link;
        note
    }

    fn rows(&mut self, rows: Rows) {
        let count = rows.len();
        let most = self.bounds.group_rows;
        if self.group_rows.saturating_add(count) > most {
            self.group.clear();
            self.group_rows = 0;
            self.note = Some(format!(
                "its stream sent over {most} rows without a synced: dropped"
            ));
            return;
        }
        self.group_rows += count;
        self.group.push(rows);
    }

    fn synced(&mut self, at: Option<i64>) {
        if self.group_reset {
            self.instances.clear();
            self.index.clear();
            self.operations.clear();
            self.op_index.clear();
            self.backoffs.clear();
            self.group_reset = false;
        }
        for rows in std::mem::take(&mut self.group) {
            match rows {
                Rows::Instances(rows) => {
                    for key in rows.remove {
                        self.remove_instance(&InstanceKey::from(key));
                    }
                    for instance in rows.upsert {
                        self.upsert_instance(Instance::from(instance));
                    }
                }
                Rows::Operations(rows) => {
                    for id in rows.remove {
                        self.remove_operation(&Value::from(id));
                    }
                    for op in rows.upsert {
                        self.upsert_operation(Operation::from(op));
                    }
                }
                Rows::Backoffs(rows) => {
                    for key in rows.remove {
                        self.backoffs.remove(&key.instance);
                    }
                    for backoff in rows.upsert.into_iter().map(Backoff::from) {
                        if self.backoffs.len() < self.bounds.host_rows
                            || self.backoffs.contains_key(&backoff.instance)
                        {
                            self.backoffs.insert(backoff.instance.clone(), backoff);
                        } else {
                            self.over_bound("backoffs", self.bounds.host_rows);
                        }
                    }
                }
                Rows::Unknown => {}
            }
        }
        self.group_rows = 0;
        self.synced_at = at.or(self.synced_at).or(Some(0));
        self.version += 1;
    }

    /// A table past its bound: the rows beyond it are not kept, and the
    /// Hosts pane says so.
    fn over_bound(&mut self, table: &str, most: usize) {
        self.note = Some(format!(
            "it holds over {most} {table}: the rest are not shown"
        ));
    }

    fn upsert_operation(&mut self, op: Operation) {
        let key = op.id.to_string();
        match self.op_index.get(&key) {
            Some(&i) => self.operations[i] = op,
            None if self.operations.len() >= MAX_HOST_OPERATIONS => {
                self.over_bound("operations", MAX_HOST_OPERATIONS);
            }
            None => {
                self.op_index.insert(key, self.operations.len());
                self.operations.push(op);
            }
        }
    }

    fn remove_operation(&mut self, id: &Value) {
        let Some(i) = self.op_index.remove(&id.to_string()) else {
            return;
        };
        self.operations.swap_remove(i);
        if let Some(moved) = self.operations.get(i) {
            self.op_index.insert(moved.id.to_string(), i);
        }
    }

    fn upsert_instance(&mut self, instance: Instance) {
        match self.index.get(&instance.key) {
            Some(&i) => self.instances[i] = instance,
            None if self.instances.len() >= self.bounds.host_rows => {
                self.over_bound("instances", self.bounds.host_rows);
            }
            None => {
                self.index
                    .insert(instance.key.clone(), self.instances.len());
                self.instances.push(instance);
            }
        }
    }

    fn remove_instance(&mut self, key: &InstanceKey) {
        let Some(i) = self.index.remove(key) else {
            return;
        };
        self.instances.swap_remove(i);
        if let Some(moved) = self.instances.get(i) {
            self.index.insert(moved.key.clone(), i);
        }
    }
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
                .map(|name| Host {
                    bounds,
                    ..Host::new(name, now)
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
                one.group.clear();
                one.group_rows = 0;
                one.group_reset = true;
                one.banners.clear();
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
            Message::Unknown => Applied::Ignored,
        }
    }
}

#[cfg(test)]
mod tests;
