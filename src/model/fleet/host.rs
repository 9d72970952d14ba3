//! One host of a fleet: its link, what its agent said, the tables its
//! stream built (docs/protocol.md "The out-stream"), and its rows' order
//! by one sort key, as the console orders one host's rows. Pure.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::rows::{Backoff, Instance, InstanceKey, Operation};
use super::wire::Rows;
use super::{Bounds, Hello, Link, LinkState, MAX_HOST_OPERATIONS, Reaper, SKEW_SHOWN_SECS, notes};
use crate::model::sort_key::SortKey;

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
    pub(super) group: Vec<Rows>,
    pub(super) group_rows: usize,
    pub(super) group_reset: bool,
    pub(super) bounds: Bounds,
    /// [`Host::counts`]' last answer and the span of the host's clock it
    /// holds for: the counts change only at a `synced` (a new
    /// [`Host::version`]) or when a lease runs out.
    counted: Cell<Option<Counted>>,
}

/// [`Host::counts`] as computed for one version of a host's tables: it
/// holds while the host's clock is in `from..until` (`until` the soonest
/// expiry still ahead, unix seconds).
#[derive(Debug, Clone, Copy)]
struct Counted {
    version: u64,
    from: i64,
    until: i64,
    counts: (usize, usize, usize, usize),
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
            counted: Cell::new(None),
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
        if let Some(counted) = self.counted.get()
            && counted.version == self.version
            && (counted.from..counted.until).contains(&now)
        {
            return counted.counts;
        }
        let mut counts = (self.instances.len(), 0, 0, 0);
        let mut until = i64::MAX;
        for instance in &self.instances {
            if instance.tombstoned() {
                counts.3 += 1;
            } else if instance.status == "active" {
                counts.1 += 1;
                if instance.expired(now) {
                    counts.2 += 1;
                } else if let Some(lease) = instance.lease {
                    until = until.min(lease.expires_at);
                }
            }
        }
        self.counted.set(Some(Counted {
            version: self.version,
            from: now,
            until,
            counts,
        }));
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

    pub(super) fn rows(&mut self, rows: Rows) {
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

    pub(super) fn synced(&mut self, at: Option<i64>) {
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

    /// A `reset`: the group being read is dropped and the banners cleared
    /// (the next `synced` makes the tables anew).
    pub(super) fn reset_group(&mut self) {
        self.group.clear();
        self.group_rows = 0;
        self.group_reset = true;
        self.banners.clear();
    }

    /// Its rows that were kept (`kept[i]`: row `i` passed the console's
    /// one filter; a row without a flag is not kept), sorted by `sort`
    /// (ascending; ties by name, then birth): indices into
    /// [`Host::instances`]. A view caches it per host (by
    /// [`Host::version`]), so a change on one host sorts that host's rows
    /// only.
    #[must_use]
    pub fn order(&self, kept: &[bool], sort: SortKey) -> Vec<usize> {
        let rows = self.instances();
        let mut order: Vec<usize> = (0..rows.len())
            .filter(|&i| kept.get(i).copied().unwrap_or(false))
            .collect();
        order.sort_by(|&a, &b| {
            compare((self, &rows[a]), (self, &rows[b]), sort)
                .then_with(|| rows[a].key.cmp(&rows[b].key))
        });
        order
    }
}

fn lease_rank(row: &Instance) -> (u8, i64) {
    if row.tombstoned() {
        return (2, row.tombstoned_at.unwrap_or(0));
    }
    match row.lease {
        Some(lease) => (0, lease.expires_at),
        None => (1, 0),
    }
}

/// `x` against `y` (each with its host) by `sort`, as the console sorts
/// one host's rows: reap attempts most first, locks held first.
pub(super) fn compare(
    (hx, x): (&Host, &Instance),
    (hy, y): (&Host, &Instance),
    sort: SortKey,
) -> Ordering {
    match sort {
        // By host, then active before tombstoned (as the console's
        // default sort keeps tombstones last), then by name.
        SortKey::Host => x.tombstoned().cmp(&y.tombstoned()),
        SortKey::LeaseExpiry => lease_rank(x).cmp(&lease_rank(y)),
        SortKey::Name => x.key.name.cmp(&y.key.name),
        SortKey::Substrate => x.substrate.cmp(&y.substrate),
        SortKey::ReapAttempts => attempts(hy, y).cmp(&attempts(hx, x)),
        SortKey::Status => (x.status != "active", &x.status, lease_rank(x)).cmp(&(
            y.status != "active",
            &y.status,
            lease_rank(y),
        )),
        SortKey::Lock => lock_rank(x).cmp(&lock_rank(y)),
    }
}

/// The failed reaps of `row` on `host` (its backoff's attempts).
fn attempts(host: &Host, row: &Instance) -> i64 {
    host.backoff(&row.key.name).map_or(0, |b| b.attempts)
}

/// Held locks first, then stale, then unprobed, then none (the console's
/// lock order, as the row's host probed it).
fn lock_rank(row: &Instance) -> u8 {
    match &row.lock {
        None => 3,
        Some(lock) if lock.held => 0,
        Some(lock) if lock.liveness.starts_with("stale") => 1,
        Some(_) => 2,
    }
}
