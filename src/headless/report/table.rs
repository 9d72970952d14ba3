//! `snapshot`'s plain-text table: one line per instance, then the pending
//! and failed operations, every store string sanitized and cut to a width.

use super::{
    Instance, InstanceReport, OperationReport, Report, Rules, ServiceReport, Services, Snapshot,
    operation_report,
};
use crate::model::time::{lease_text, retry_text};
use crate::reaper::clock::ClockDoubt;

/// The table's first line: `store PATH · schema vN · now TIME (UNIX)`, the
/// time in `zone` ([`crate::model::time::stamp`]: local, `TZ` honoured,
/// or RFC 3339 UTC with `--utc`).
fn table_header(store: &str, user_version: i64, now: i64, zone: &jiff::tz::TimeZone) -> String {
    format!(
        "store {} · schema v{} · now {} ({})\n",
        crate::model::text::sanitize_short(store, 200),
        user_version,
        crate::model::time::stamp(now, zone),
        now
    )
}

/// The column titles the fleet's table shares (`crate::launcher`'s,
/// after its HOST): the local table's ([`COLUMNS`]) but STAGE (the fleet's
/// rows carry no services).
pub(crate) const HEADER: [&str; 7] = [
    "NAME",
    "SUBSTRATE",
    "STATUS",
    "LEASE",
    "LOCK",
    "BACKOFF",
    "REAPER",
];

/// The table's column titles: [`HEADER`]'s with STAGE after STATUS.
const COLUMNS: [&str; 8] = [
    "NAME",
    "SUBSTRATE",
    "STATUS",
    "STAGE",
    "LEASE",
    "LOCK",
    "BACKOFF",
    "REAPER",
];

/// The STAGE cell: each service's stage as `snapshot --json` has it
/// ([`ServiceReport::stage`], stackless 0.4.0's readiness), `web healthy,
/// worker unhealthy`, as 0.4.0's `status` lists them (`web [local]:
/// healthy`); empty when the instance has none. Sanitized, cut to 48
/// columns.
#[must_use]
pub fn stage_text(services: &[ServiceReport]) -> String {
    stage_cell(services.iter().map(|s| (s.name.as_str(), s.stage.as_str())))
}

/// [`stage_text`] of services given as `(name, stage)`, in the report's
/// order: the one text of the STAGE cell, whether the stages come from
/// the report or straight from `crate::model::readiness::service_stage`.
#[must_use]
pub fn stage_cell<'a>(services: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut text = String::new();
    for (index, (name, stage)) in services.enumerate() {
        if index > 0 {
            text.push_str(", ");
        }
        text.push_str(name);
        text.push(' ');
        text.push_str(stage);
    }
    crate::model::text::sanitize_short(&text, 48)
}

/// Each instance's STAGE cell ([`stage_cell`]) by its position in the
/// snapshot, for [`write_table_staged`] and [`TableStream`]'s lines pass:
/// 4 B an instance (its cell's number) and each distinct cell once (a
/// store's cells repeat: a few service names times a few stages; the
/// first [`Stages::INTERNED`] distinct cells are looked up, later ones
/// are kept each time they come). At 1,000,000 instances about 4 MB
/// (measured: peak RSS 3.7 MB over the stream without it), where one
/// text of every cell and a `usize` end each would be about 15 MB. No
/// instance's services are held.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stages {
    /// Each instance's cell: its number in `ends`.
    cells: Vec<u32>,
    /// The cells kept, one after another.
    text: String,
    /// Each kept cell's end in `text`.
    ends: Vec<usize>,
    /// The first [`Stages::INTERNED`] distinct cells' numbers.
    interned: std::collections::HashMap<Box<str>, u32>,
}

impl Stages {
    /// How many distinct cells are looked up before being kept again.
    pub const INTERNED: usize = 4096;

    /// Room for `instances` cells.
    #[must_use]
    pub fn with_capacity(instances: usize) -> Self {
        Self {
            cells: Vec::with_capacity(instances),
            ..Self::default()
        }
    }

    /// The next instance's cell. (Past `u32::MAX` kept cells, 32 GB of
    /// their ends alone, a cell reads as the last one kept.)
    pub fn push(&mut self, cell: &str) {
        if let Some(&number) = self.interned.get(cell) {
            self.cells.push(number);
            return;
        }
        let number = u32::try_from(self.ends.len()).unwrap_or(u32::MAX);
        self.text.push_str(cell);
        self.ends.push(self.text.len());
        if self.interned.len() < Self::INTERNED {
            self.interned.insert(cell.into(), number);
        }
        self.cells.push(number);
    }

    /// The cell of the instance at `index` (empty past the last).
    #[must_use]
    pub fn get(&self, index: usize) -> &str {
        let Some(&number) = self.cells.get(index) else {
            return "";
        };
        let number = number as usize;
        let start = match number.checked_sub(1) {
            Some(before) => self.ends.get(before).copied().unwrap_or(usize::MAX),
            None => 0,
        };
        self.ends
            .get(number)
            .and_then(|&end| self.text.get(start..end))
            .unwrap_or_default()
    }

    /// How many cells (instances).
    #[must_use]
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// No cell.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// How many distinct texts are kept (at most one per instance).
    #[must_use]
    pub fn kept(&self) -> usize {
        self.ends.len()
    }
}

/// `cells` with `stage` after STATUS: a line of [`COLUMNS`].
fn with_stage(cells: [String; 7], stage: String) -> [String; 8] {
    let [name, substrate, status, lease, lock, backoff, reaper] = cells;
    [name, substrate, status, stage, lease, lock, backoff, reaper]
}

/// One instance's cells in the table (sanitized, cut to a width).
fn table_cells(i: &InstanceReport) -> [String; 8] {
    with_stage(report_cells(i), stage_text(&i.services))
}

/// [`table_cells`] but STAGE.
fn report_cells(i: &InstanceReport) -> [String; 7] {
    use crate::model::text::sanitize_short;
    [
        sanitize_short(&i.name, 48),
        sanitize_short(&i.substrate, 12),
        sanitize_short(&i.status, 12),
        match (&i.lease, i.status.as_str()) {
            (Some(l), _) => l.text.clone(),
            (None, "tombstoned") => "tombstoned".to_owned(),
            (None, _) if i.failed_up => "failed up: no lease".to_owned(),
            (None, _) => "no lease".to_owned(),
        },
        i.lock.as_ref().map_or_else(String::new, |l| {
            let host = l
                .holder_host
                .as_deref()
                .map_or_else(String::new, |host| format!(" on {host}"));
            sanitize_short(
                &format!(
                    "{} by pid {}{host}, {}",
                    l.operation, l.holder_pid, l.liveness
                ),
                64,
            )
        }),
        i.reap_attempt
            .as_ref()
            .map_or_else(String::new, |a| format!("{} ({})", a.attempts, a.text)),
        i.reaper.clone().unwrap_or_default(),
    ]
}

/// [`table_cells`] of the instance's report, made from the snapshot
/// without building the report (measured: the table
/// built each instance's whole report twice, with its clones and the
/// reap attempt's envelope parse, for two cells' worth of text).
fn instance_cells(
    snapshot: &Snapshot,
    rules: &Rules,
    (instance, stage): (&Instance, &str),
    now: i64,
) -> [String; 8] {
    use crate::model::text::sanitize_short;
    let status = instance.status.as_str();
    let looked = rules.look(snapshot, instance);
    [
        sanitize_short(&instance.name, 48),
        sanitize_short(&instance.substrate, 12),
        sanitize_short(status, 12),
        stage.to_owned(),
        match (&instance.lease, status) {
            (Some(l), _) => lease_text(l.expires_at, now),
            (None, "tombstoned") => "tombstoned".to_owned(),
            (None, _) if looked.failed_up(instance) => "failed up: no lease".to_owned(),
            (None, _) => "no lease".to_owned(),
        },
        instance.lock.as_ref().map_or_else(String::new, |l| {
            let host = l
                .holder_host
                .as_deref()
                .map_or_else(String::new, |host| format!(" on {host}"));
            let liveness = looked
                .liveness
                .map_or_else(|| "unknown".to_owned(), ToString::to_string);
            sanitize_short(
                &format!("{} by pid {}{host}, {liveness}", l.operation, l.holder_pid),
                64,
            )
        }),
        looked.attempt.map_or_else(String::new, |a| {
            format!("{} ({})", a.attempts, retry_text(a.next_retry_at, now))
        }),
        rules
            .reaper(instance, now, &looked)
            .map_or_else(String::new, |(text, _)| text.to_owned()),
    ]
}

/// Widen `widths` to fit `cells`.
pub(crate) fn widen<S: AsRef<str>, const N: usize>(widths: &mut [usize; N], cells: &[S; N]) {
    for (w, cell) in widths.iter_mut().zip(cells) {
        *w = (*w).max(unicode_width::UnicodeWidthStr::width(cell.as_ref()));
    }
}

/// One table line: cells padded to `widths` two spaces apart, trailing
/// blanks cut.
pub(crate) fn write_line<S: AsRef<str>, const N: usize>(
    out: &mut dyn std::io::Write,
    cells: &[S; N],
    widths: &[usize; N],
) -> std::io::Result<()> {
    let mut text = String::new();
    for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
        let cell = cell.as_ref();
        text.push_str(cell);
        if index + 1 < cells.len() {
            let pad = width - unicode_width::UnicodeWidthStr::width(cell) + 2;
            text.extend(std::iter::repeat_n(' ', pad));
        }
    }
    out.write_all(text.trim_end().as_bytes())?;
    out.write_all(b"\n")
}

/// The report as a plain-text table (every store string sanitized, cut to
/// a width), its header's time in `zone`.
#[must_use]
pub fn table(report: &Report, zone: &jiff::tz::TimeZone) -> String {
    let rows: Vec<[String; 8]> = report.instances.iter().map(table_cells).collect();
    let mut widths = COLUMNS.map(unicode_width::UnicodeWidthStr::width);
    for row in &rows {
        widen(&mut widths, row);
    }
    let mut out =
        table_header(&report.store, report.store_user_version, report.now, zone).into_bytes();
    // Writing to a vector cannot fail.
    let _ = write_line(&mut out, &COLUMNS, &widths);
    for row in &rows {
        let _ = write_line(&mut out, row, &widths);
    }
    let tombstones = report
        .instances
        .iter()
        .filter_map(|i| Some((i.name.as_str(), i.gc.as_ref()?.preview)));
    let _ = gc_table(&mut out, tombstones, report.now, zone);
    let _ = operations_table(&mut out, &report.operations, report.now);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`table`] of [`build_with`], written to `out` without holding the
/// report or its rows: one pass over the snapshot for the column widths,
/// another to write the lines; each STAGE from `services` by name.
///
/// # Errors
/// Writing to `out` failed.
pub fn write_table(
    out: &mut dyn std::io::Write,
    snapshot: &Snapshot,
    now: i64,
    store: &str,
    services: &Services,
    zone: &jiff::tz::TimeZone,
    clock: Option<&ClockDoubt>,
) -> std::io::Result<()> {
    let stage = |_: usize, instance: &Instance| {
        services
            .get(&instance.name)
            .map_or_else(String::new, |s| stage_text(s))
            .into()
    };
    write_whole(out, snapshot, (now, store, zone, clock), &stage)
}

/// [`write_table`] with each instance's STAGE cell from `stages`, by its
/// position in `snapshot.instances` (`crate::headless::table_stages`):
/// the same bytes, the services never held.
///
/// # Errors
/// Writing to `out` failed.
pub fn write_table_staged(
    out: &mut dyn std::io::Write,
    snapshot: &Snapshot,
    now: i64,
    store: &str,
    stages: &Stages,
    zone: &jiff::tz::TimeZone,
    clock: Option<&ClockDoubt>,
) -> std::io::Result<()> {
    let stage = |index: usize, _: &Instance| stages.get(index).into();
    write_whole(out, snapshot, (now, store, zone, clock), &stage)
}

/// An instance's STAGE cell, by its position and row.
type StageOf<'a> = dyn Fn(usize, &Instance) -> std::borrow::Cow<'a, str> + 'a;

/// [`write_table`] and [`write_table_staged`]: the table at `now` of
/// `store` (the path shown), its times in `zone`, each STAGE cell from
/// `stage`.
fn write_whole<'a>(
    out: &mut dyn std::io::Write,
    snapshot: &Snapshot,
    (now, store, zone, clock): (i64, &str, &jiff::tz::TimeZone, Option<&ClockDoubt>),
    stage: &StageOf<'a>,
) -> std::io::Result<()> {
    out.write_all(table_header(store, snapshot.generation.user_version, now, zone).as_bytes())?;
    let rules = Rules::new(snapshot, clock);
    let cells = |(index, instance): (usize, &std::sync::Arc<Instance>)| {
        instance_cells(snapshot, &rules, (instance, &stage(index, instance)), now)
    };
    let mut widths = COLUMNS.map(unicode_width::UnicodeWidthStr::width);
    for row in snapshot.instances.iter().enumerate() {
        widen(&mut widths, &cells(row));
    }
    write_line(out, &COLUMNS, &widths)?;
    for row in snapshot.instances.iter().enumerate() {
        write_line(out, &cells(row), &widths)?;
    }
    let tombstones = snapshot.instances.iter().filter_map(|i| {
        let preview = crate::model::gc::GcPreview::of(i, snapshot.generation)?;
        Some((i.name.as_str(), preview))
    });
    gc_table(out, tombstones, now, zone)?;
    let operations: Vec<OperationReport> =
        snapshot.operations.iter().map(operation_report).collect();
    operations_table(out, &operations, now)
}

/// [`write_table`]'s text written as a streamed snapshot comes
/// (`crate::store::Store::stream_snapshot`), in two passes over the
/// instances of one read: the column widths, then the lines; then the
/// tombstones' GC lines, kept from the lines pass ([`GcLines`]), and the
/// operations. Byte for byte [`write_table`]'s; one instance is held at a
/// time, and each one's STAGE cell ([`Stages`]) and each tombstone's
/// name and GC time.
pub struct TableStream<'a, W: std::io::Write> {
    out: &'a mut W,
    store: &'a str,
    now: i64,
    zone: &'a jiff::tz::TimeZone,
    clock: Option<&'a ClockDoubt>,
    /// Built from the head.
    rules: Option<Rules>,
    widths: [usize; 8],
    /// The column titles' line is written.
    titled: bool,
    /// The tombstones' GC lines, kept by the lines pass.
    gc: GcLines,
    /// The STAGE cells of the widths pass, by position: the lines pass
    /// writes them (each instance's services read and derived once).
    stages: Stages,
    /// The instances the lines pass has written.
    lines: usize,
}

impl<'a, W: std::io::Write> TableStream<'a, W> {
    /// The passes over the instances [`TableStream::instance`] takes:
    /// the widths, then the lines (measured at 1,000,000 instances: a
    /// third pass for the GC lines read the tombstones again, 0.6 s of
    /// `SQLite`; kept instead, 300,000 tombstones hold about 10 MB).
    pub const PASSES: usize = 2;

    /// The one pass whose STAGE cells [`TableStream::instance`] reads
    /// (the widths pass): the lines pass writes them as they were given
    /// there, so a reader derives each instance's stage once, reading its
    /// services in this pass alone.
    pub const STAGE_PASS: usize = 0;

    /// A table of `store` (the path shown) at `now` (unix seconds), its
    /// times in `zone`, the reaper paused by `clock` when it is doubted,
    /// written to `out`.
    pub fn new(
        out: &'a mut W,
        store: &'a str,
        now: i64,
        zone: &'a jiff::tz::TimeZone,
        clock: Option<&'a ClockDoubt>,
    ) -> Self {
        Self {
            out,
            store,
            now,
            zone,
            clock,
            rules: None,
            widths: COLUMNS.map(unicode_width::UnicodeWidthStr::width),
            titled: false,
            gc: GcLines::default(),
            stages: Stages::default(),
            lines: 0,
        }
    }

    /// The header line, from `head` (the snapshot without instances).
    ///
    /// # Errors
    /// Writing failed.
    pub fn head(&mut self, head: &Snapshot) -> std::io::Result<()> {
        self.rules = Some(Rules::new(head, self.clock));
        let line = table_header(
            self.store,
            head.generation.user_version,
            self.now,
            self.zone,
        );
        self.out.write_all(line.as_bytes())
    }

    /// One instance of `head` (its liveness in `head`) in pass `pass`:
    /// widths (0), its line (1; a tombstone's GC line kept); `stage`
    /// its STAGE cell ([`stage_text`] of its services), read in
    /// [`Self::STAGE_PASS`] only and kept by position: the lines pass
    /// writes the cell its instance had there (the passes hand out the
    /// same instances in the same order).
    ///
    /// # Errors
    /// Writing failed.
    pub fn instance(
        &mut self,
        pass: usize,
        head: &Snapshot,
        (instance, stage): (&Instance, &str),
    ) -> std::io::Result<()> {
        let Some(rules) = &self.rules else {
            return Err(std::io::Error::other("an instance before the head"));
        };
        match pass {
            Self::STAGE_PASS => {
                widen(
                    &mut self.widths,
                    &instance_cells(head, rules, (instance, stage), self.now),
                );
                self.stages.push(stage);
            }
            _ => {
                let stage = self.stages.get(self.lines);
                let cells = instance_cells(head, rules, (instance, stage), self.now);
                self.lines += 1;
                if let Some(preview) = crate::model::gc::GcPreview::of(instance, head.generation) {
                    self.gc.push(&cells[0], preview);
                }
                self.title()?;
                write_line(self.out, &cells, &self.widths)?;
            }
        }
        Ok(())
    }

    /// The column titles' line, once.
    fn title(&mut self) -> std::io::Result<()> {
        if std::mem::replace(&mut self.titled, true) {
            return Ok(());
        }
        write_line(self.out, &COLUMNS, &self.widths)
    }

    /// The column titles when no instance wrote them, the tombstones'
    /// GC lines, then the operations of `head`.
    ///
    /// # Errors
    /// Writing failed.
    pub fn finish(&mut self, head: &Snapshot) -> std::io::Result<()> {
        self.title()?;
        gc_table(self.out, self.gc.iter(), self.now, self.zone)?;
        let operations: Vec<OperationReport> =
            head.operations.iter().map(operation_report).collect();
        operations_table(self.out, &operations, self.now)
    }
}

/// The tombstones' GC lines as [`TableStream`]'s lines pass meets them,
/// for [`gc_table`]: each one's NAME cell (already sanitized and cut, as
/// `gc_table` cuts it again: the same text) and its preview, the names in
/// one text.
#[derive(Debug, Default)]
struct GcLines {
    names: String,
    /// Each tombstone's name's end in `names`, and its preview.
    held: Vec<(usize, crate::model::gc::GcPreview)>,
}

impl GcLines {
    fn push(&mut self, name: &str, preview: crate::model::gc::GcPreview) {
        self.names.push_str(name);
        self.held.push((self.names.len(), preview));
    }

    fn iter(&self) -> impl Iterator<Item = (&str, crate::model::gc::GcPreview)> {
        let mut start = 0;
        self.held.iter().map(move |&(end, preview)| {
            let name = self.names.get(start..end).unwrap_or_default();
            start = end;
            (name, preview)
        })
    }
}

/// The tombstones, one line each after the instances: `charlie  due for GC
/// at <time> (in 3d 04h), collected by <who>`, the time in `zone`
/// ([`crate::model::gc::GcPreview::text`]); nothing when there are none.
fn gc_table<'a>(
    out: &mut dyn std::io::Write,
    tombstones: impl Iterator<Item = (&'a str, crate::model::gc::GcPreview)>,
    now: i64,
    zone: &jiff::tz::TimeZone,
) -> std::io::Result<()> {
    let mut first = true;
    for (name, preview) in tombstones {
        if first {
            out.write_all(b"\nGC\n")?;
            first = false;
        }
        let name = crate::model::text::sanitize_short(name, 48);
        out.write_all(format!("{name}  {}\n", preview.text(now, zone)).as_bytes())?;
    }
    Ok(())
}

/// The pending operations, then the failed ones (an old
/// failure never above what is pending), each in the store's order, one
/// compact line each with its time as the rest of the table gives it
/// (relative to `now`): `running down alpha (since 50s)`, `failed up
/// bravo (3h 05m ago): code: message` (when it ended); after the
/// instances; nothing when there are none.
fn operations_table(
    out: &mut dyn std::io::Write,
    operations: &[OperationReport],
    now: i64,
) -> std::io::Result<()> {
    use crate::model::text::sanitize_short;
    let pending = |op: &&OperationReport| matches!(op.status.as_str(), "queued" | "running");
    let shown: Vec<&OperationReport> = operations
        .iter()
        .filter(pending)
        .chain(operations.iter().filter(|op| op.status == "failed"))
        .collect();
    if shown.is_empty() {
        return Ok(());
    }
    out.write_all(b"\nOPERATIONS\n")?;
    // Failures repeated (the same verb, instance, status and error: the
    // lease reaper's failing `down` every minute, on several instances in
    // turn) are one line per instance and error, in or out of a row,
    // counted exactly first and timed as the newest (failures come newest
    // first): `x6 failed down foxtrot (1m ago): …`.
    let mut lines: Vec<(String, String, u32)> = Vec::new();
    for op in shown {
        let (key, line) = operation_line(op, now);
        let earlier = (op.status == "failed")
            .then(|| lines.iter_mut().find(|(seen, _, _)| *seen == key))
            .flatten();
        match earlier {
            Some((_, _, count)) => *count += 1,
            None => lines.push((key, line, 1)),
        }
    }
    for (_, line, count) in lines {
        let line = if count > 1 {
            format!("x{count} {line}")
        } else {
            line
        };
        out.write_all(sanitize_short(&line, 160).as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// One operation's line in `snapshot`'s OPERATIONS section, and its text
/// without its time (what makes two lines repeats).
fn operation_line(op: &OperationReport, now: i64) -> (String, String) {
    let what = if op.status == "failed" {
        format!(
            "{} {} {} ({})",
            op.status,
            op.verb,
            op.instance,
            crate::model::time::ago(op.updated_at, now)
        )
    } else {
        format!("{} {} {}", op.status, op.verb, op.instance)
    };
    let tail = match &op.error {
        Some(error) if error.message.is_empty() => format!(": {}", error.code),
        Some(error) => format!(": {}: {}", error.code, error.message),
        None if op.status == "failed" => op
            .error_unparsed
            .as_deref()
            .map_or_else(String::new, |raw| {
                format!(": {}", crate::model::text::sanitize_short(raw, 120))
            }),
        None => format!(
            " (since {})",
            crate::model::time::span(now.saturating_sub(op.created_at).max(0))
        ),
    };
    let key = format!("{} {} {}{tail}", op.status, op.verb, op.instance);
    (key, format!("{what}{tail}"))
}
