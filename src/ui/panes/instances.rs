//! The Instances pane: one row per instance (NAME, ST, SUBSTRATE, STATUS,
//! LEASE, LOCK, REAP), filtered (`/`) and sorted (`s`) through the app's
//! row index. Only the rows that fit are built, so a 100,000-instance store
//! costs the same per frame as an 8-instance one.

mod over_fleet;

use std::fmt::Write as _;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};
use unicode_width::UnicodeWidthStr;

use super::{HIGHLIGHT_SYMBOL, focused, pane_block, scroll_window};
use crate::model::text::sanitize_short;
use crate::ui::app::{App, Focus};
use crate::ui::text::CUT_SHORT;
use crate::ui::theme;
use crate::ui::view::{self, InstanceRow, LeaseState, LockState};

/// Column headers, in order.
pub const HEADERS: [&str; 7] = ["NAME", "ST", "SUBSTRATE", "STATUS", "LEASE", "LOCK", "REAP"];

const SPACING: u16 = super::TABLE_SPACING;

/// Drawn before a marked instance's name (`space`, Ctrl-A).
pub const MARK: &str = "●";

/// The headers as drawn in columns `widths` wide: [`HEADERS`] with `▲`
/// (or `▼`, high to low) after the sorted column's. [`column_widths`]
/// keeps room for the mark; were a column still too narrow, the mark goes,
/// never a letter of the header (`REAP`, not `REA▼`).
#[must_use]
pub fn headers(app: &App, widths: &[u16; 7]) -> [String; 7] {
    let column = app.sort().column();
    let mark = if app.sort_descending() { '▼' } else { '▲' };
    std::array::from_fn(|i| {
        let width = usize::from(widths[i]);
        let header = HEADERS[i];
        // The defined short header (`SUB`) when the column took it.
        let header = if header.width() > width {
            super::header_in(header, width)
        } else {
            header
        };
        if i != column || width < header.width() + 1 {
            return header.to_owned();
        }
        format!("{header}{mark}")
    })
}

/// The cursor drawn at the end of the filter prompt.
pub const PROMPT_CURSOR: &str = "▏";

/// The title's counts, one meaning with or without a filter: the cursor
/// row / the rows shown (`3/11`), then with a filter ` match "ren"
/// (filtered from 40)`, then the store-wide `· 6 active (1 expired) · 2
/// tombstoned`. No row shown: `0/0`.
#[must_use]
pub fn title_suffix(app: &App) -> String {
    title_items(app).join(" · ")
}

/// [`title_suffix`] as whole items, which a narrow title drops from the
/// end (`· 4 tombstoned` goes whole, never `· 4 tomb`).
fn title_items(app: &App) -> Vec<String> {
    let total = app.snapshot().instances.len();
    let len = app.visible().len();
    let counts = app.counts();
    let row = if len == 0 {
        0
    } else {
        app.selected_index() + 1
    };
    let mut first = format!("{row}/{len}");
    if !app.filter().is_empty() {
        let _ = write!(
            first,
            " match \"{}\" (filtered from {total})",
            sanitize_short(app.filter(), CUT_SHORT)
        );
    }
    let mut items = vec![first];
    if !app.marks().is_empty() {
        items.push(format!("{} marked", app.marks().len()));
    }
    if let Some(partial) = app.snapshot().partial {
        // The first rows only: their counts are not the store's.
        items.push(partial.words());
        return items;
    }
    if total > 0 {
        let mut active = format!("{} active", counts.active);
        if counts.expired > 0 {
            let _ = write!(active, " ({} expired)", counts.expired);
        }
        items.push(active);
        items.push(format!("{} tombstoned", counts.tombstoned));
    }
    items
}

fn title_line(app: &App, is_focused: bool, width: u16) -> Line<'static> {
    let name_style = if is_focused {
        theme::focused_border()
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let mut spans = vec![Span::styled(" Instances ", name_style)];
    let mut room = super::title_room(width, "Instances");
    if app.filter_editing() {
        let prompt = format!(
            "/{}{PROMPT_CURSOR}",
            sanitize_short(app.filter(), CUT_SHORT)
        );
        room = room.saturating_sub(prompt.width() + 1);
        spans.push(Span::styled(prompt, theme::prompt()));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(
        format!("{} ", super::whole_items(&title_items(app), room)),
        theme::muted(),
    ));
    Line::from(spans)
}

/// What the Instances pane says with no row to show: the filter's error,
/// the first read pending, nothing recorded at a replay's cursor, an empty
/// store (`empty`), or a filter that matches nothing.
fn empty_text(app: &App, empty: bool) -> String {
    if let Some(error) = app.filter_error() {
        format!("filter: {}", sanitize_short(error, CUT_SHORT * 2))
    } else if !app.loaded() {
        "reading the store…".to_owned()
    } else if app.replay().is_some_and(|view| !view.recorded) {
        "not recorded at the cursor: no row is shown ([ ] step to a change)".to_owned()
    } else if empty {
        "no instances in this store".to_owned()
    } else {
        format!(
            "no instance matches \"{}\" (Esc clears the filter)",
            sanitize_short(app.filter(), CUT_SHORT)
        )
    }
}

/// Draw the Instances pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    if let Some(fleet) = app.fleet() {
        over_fleet::render(
            frame,
            area,
            fleet,
            (
                app.fleet_marks(),
                app.focus() == crate::ui::app::Focus::Instances,
            ),
            app.now(),
        );
        return;
    }
    let is_focused = focused(app, Focus::Instances);
    let snapshot = app.snapshot();
    let instances = &snapshot.instances;
    let visible = app.visible();
    let len = visible.len();
    let block = pane_block(title_line(app, is_focused, area.width), is_focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if len == 0 {
        let text = empty_text(app, instances.is_empty());
        frame.render_widget(Paragraph::new(Line::styled(text, theme::muted())), inner);
        return;
    }
    let rows_fit = usize::from(inner.height.saturating_sub(1));
    let mut viewport = app.viewport.get();
    let selected = app.selected_index().min(len - 1);
    let offset = scroll_window(viewport.instances_offset, selected, len, rows_fit);
    viewport.instances_offset = offset;
    viewport.instances_rows = rows_fit;
    app.viewport.set(viewport);

    let end = (offset + rows_fit).min(len);
    let now = app.now();
    let built: Vec<(InstanceRow, Short)> = visible[offset..end]
        .iter()
        .filter_map(|&p| instances.get(p as usize))
        .map(|i| {
            let (row, short) = instance_row(snapshot, i, now);
            let mark = if app.is_marked(&i.name) {
                Some(true)
            } else {
                (!app.marks().is_empty()).then_some(false)
            };
            (marked(row, mark), short)
        })
        .collect();
    let widths = column_widths(inner.width, &built, Some(app.sort().column()));
    let rows: Vec<Row> = built
        .into_iter()
        .map(|(r, short)| row(r, &short, widths))
        .collect();
    let headers = headers(app, &widths);
    let headers: [&str; 7] = std::array::from_fn(|i| headers[i].as_str());
    super::render_table(
        frame,
        inner,
        &headers,
        rows,
        &widths,
        Some(selected - offset),
        is_focused,
    );
    let (above, below) = super::hidden_rows(0, offset, rows_fit, len);
    super::render_more(frame, area, above, below);
}

/// One instance's row and its short forms, from `snapshot` at `now`: its
/// pending operation, dead service processes, services `unknown` (none
/// recorded) and whether a failed `up` left it.
fn instance_row(
    snapshot: &crate::model::Snapshot,
    i: &crate::model::Instance,
    now: i64,
) -> (InstanceRow, Short) {
    let liveness = snapshot.lock_liveness(&i.name);
    let pending = snapshot.pending_operation(&i.name);
    // The counts may lag a teardown by a few seconds: active only.
    let active = i.status == crate::model::Status::Active;
    let (dead, unhealthy) = if active {
        (
            snapshot.dead_services(&i.name),
            snapshot.unhealthy_services(&i.name),
        )
    } else {
        (0, 0)
    };
    // Only a `local` instance records its service processes (a `start:`
    // checkpoint of kind `process`); one on render or vercel has none to
    // record, so none missing says nothing of its readiness.
    let unknown =
        active && &*i.substrate == "local" && snapshot.services_recorded(&i.name) == Some(false);
    let failed_up = crate::model::readiness::failed_up(
        i,
        pending.is_some(),
        liveness.is_some_and(crate::model::Liveness::held),
    );
    let row = view::instance_row(i, liveness, snapshot.reap_attempt(&i.name), now)
        .with_pending(pending, now)
        .with_unhealthy_services(unhealthy)
        .with_dead_services(dead)
        .with_readiness(unknown, failed_up);
    let short = Short::of(i, liveness, pending, (dead, unhealthy, unknown), now);
    (row, short)
}

/// `row` with [`MARK`] before its name when marked (`Some(true)`), or as
/// many spaces when other rows are (`Some(false)`): names stay aligned.
fn marked(mut row: InstanceRow, mark: Option<bool>) -> InstanceRow {
    match mark {
        Some(true) => row.name = format!("{MARK} {}", row.name),
        Some(false) => row.name = format!("{} {}", " ".repeat(MARK.width()), row.name),
        None => {}
    }
    row
}

fn row(mut r: InstanceRow, short: &Short, widths: [u16; 7]) -> Row<'static> {
    let cell = |text: String, i: usize| -> Cell<'static> {
        Cell::from(crate::ui::text::fit(&text, usize::from(widths[i])).into_owned())
    };
    // A cell too narrow for its whole text shows the short form.
    if r.lease.width() > usize::from(widths[4]) {
        r.lease.clone_from(&short.lease);
    }
    if r.lock.width() > usize::from(widths[5]) {
        r.lock.clone_from(&short.lock);
    }
    if r.lock.width() > usize::from(widths[5]) {
        r.lock =
            whole_parts(&short.lock, usize::from(widths[5])).unwrap_or_else(|| short.tiny.clone());
    }
    let lease_style = match r.lease_state {
        LeaseState::Expired => theme::expired(),
        LeaseState::FailedUp => theme::failure(),
        _ => Style::new(),
    };
    let lock_style = match r.lock_state {
        _ if r.dead_services > 0 || r.unhealthy_services > 0 || r.services_unknown => {
            theme::failure()
        }
        LockState::Held => theme::lock_held(),
        LockState::Free if r.pending => theme::lock_held(),
        LockState::Stale | LockState::Unprobed => theme::lock_stale(),
        LockState::Free => Style::new(),
    };
    let status_style = if r.unknown_status {
        theme::unknown_status()
    } else {
        Style::new()
    };
    let reap_style = if r.reap.is_empty() {
        Style::new()
    } else {
        theme::failure()
    };
    let tombstoned = r.tombstoned();
    let row_style = if tombstoned {
        theme::tombstoned()
    } else {
        Style::new()
    };
    Row::new([
        cell(r.name, 0),
        cell(r.state, 1).style(theme::state_marks()),
        cell(r.substrate, 2),
        cell(r.status, 3).style(status_style),
        cell(r.lease, 4).style(lease_style),
        cell(r.lock, 5).style(lock_style),
        cell(r.reap, 6).style(reap_style),
    ])
    .style(row_style)
}

/// The whole parts of a short LOCK text (`down running 3s; up pid 4242
/// alive`, parts split at `; ` and ` · `) that fit in `width`, from the
/// first (`None`: not even the first).
fn whole_parts(text: &str, width: usize) -> Option<String> {
    let ends = text
        .match_indices("; ")
        .chain(text.match_indices(" · "))
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()));
    ends.filter(|&end| text[..end].width() <= width)
        .max()
        .map(|end| text[..end].to_owned())
}

/// The short forms LEASE and LOCK fall back to before NAME is cut:
/// `4h12m`, `-3m12s` (expired that long ago), `†8d00h` (tombstoned that
/// long ago), `none`, `failed` (a failed `up`'s row); `up pid 4242 alive`
/// (`gone`, `reused`, `foreign`), after `1 dead` or `svc unknown` and a
/// pending operation (`down running 3s`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Short {
    /// LEASE, short.
    pub lease: String,
    /// LOCK, short.
    pub lock: String,
    /// LOCK, shortest: the holder's state only (`alive`, `gone`, `1 dead`),
    /// when even [`Short::lock`] does not fit.
    pub tiny: String,
}

impl Short {
    /// The short forms for `instance` at `now` (unix seconds), with its
    /// `dead` service processes, its live ones observed `unhealthy`, and
    /// whether its services are `unknown` (none recorded).
    #[must_use]
    pub fn of(
        instance: &crate::model::Instance,
        liveness: Option<&crate::model::Liveness>,
        pending: Option<&crate::model::Operation>,
        (dead, unhealthy, unknown): (u32, u32, bool),
        now: i64,
    ) -> Self {
        use crate::model::{Liveness, Status};
        let compact = |secs: i64| crate::model::time::span(secs).replace(' ', "");
        let lease = match (&instance.status, instance.lease) {
            (Status::Tombstoned, _) => instance
                .tombstoned_at
                .map_or_else(|| "†".to_owned(), |at| format!("†{}", compact(now - at))),
            (_, Some(lease)) if lease.expired(now) => {
                format!("-{}", compact(now - lease.expires_at))
            }
            (_, Some(lease)) => compact(lease.expires_at - now),
            (_, None)
                if crate::model::readiness::failed_up(
                    instance,
                    pending.is_some(),
                    liveness.is_some_and(Liveness::held),
                ) =>
            {
                "failed".to_owned()
            }
            (_, None) => "none".to_owned(),
        };
        let mut parts = Vec::new();
        let mut tiny = Vec::new();
        if dead > 0 {
            parts.push(format!("{dead} dead"));
            tiny.push(format!("{dead} dead"));
        }
        if unhealthy > 0 {
            parts.push(format!("{unhealthy} unhealthy"));
            tiny.push(format!("{unhealthy} unhealthy"));
        }
        if unknown {
            parts.push("svc unknown".to_owned());
            tiny.push("unknown".to_owned());
        }
        if let Some(op) = pending {
            parts.push(crate::ui::opview::pending_text(op, now));
        }
        if let Some(lock) = &instance.lock {
            let state = match liveness {
                Some(Liveness::Alive) => "alive",
                Some(Liveness::StalePidGone) => "gone",
                Some(Liveness::StalePidReused) => "reused",
                Some(Liveness::ForeignHost(_)) => "foreign",
                None => "unprobed",
            };
            parts.push(format!(
                "{} pid {} {state}",
                sanitize_short(&lock.operation, CUT_SHORT),
                lock.holder_pid
            ));
            tiny.push(state.to_owned());
        } else if pending.is_some() {
            tiny.push("op".to_owned());
        }
        Self {
            lease,
            lock: parts.join("; "),
            tiny: tiny.join(" "),
        }
    }
}

/// Column widths (in [`HEADERS`] order) for a table `width` columns wide
/// showing `rows`, the column `sorted` (if any) carrying the sort mark.
/// Every column is at least as wide as its header, the sorted one's with
/// its `▲`/`▼` (no header is ever cut: `SUBSTRATE`, not `SUBST…`; `REAP▼`,
/// not `REA▼`). ST, SUBSTRATE, STATUS and REAP take what their texts need;
/// NAME then takes what its longest visible name needs before LEASE and
/// LOCK get anything: they take their whole texts if the rest allows, else
/// their short forms ([`Short`]), and when even those do not fit LOCK goes
/// (the ST column still marks the lock), and only then is NAME cut. Slack
/// goes to LOCK. Tight, SUBSTRATE first gives up its header's slack
/// (`SUB` over `local`).
#[must_use]
pub fn column_widths(width: u16, rows: &[(InstanceRow, Short)], sorted: Option<usize>) -> [u16; 7] {
    let symbol = u16::try_from(HIGHLIGHT_SYMBOL.width()).unwrap_or(2);
    let header: [u16; 7] = std::array::from_fn(|i| {
        let mark = usize::from(sorted == Some(i));
        u16::try_from(HEADERS[i].width() + mark).unwrap_or(u16::MAX)
    });
    let widest = |f: &dyn Fn(&(InstanceRow, Short)) -> &str, column: usize| {
        rows.iter()
            .map(|r| u16::try_from(f(r).width()).unwrap_or(u16::MAX))
            .chain(std::iter::once(header[column]))
            .max()
            .unwrap_or(0)
    };
    let state = 3;
    let mut substrate = widest(&|r| &r.0.substrate, 2)
        .min(NARROW_CAP)
        .max(header[2]);
    let status = widest(&|r| &r.0.status, 3).min(NARROW_CAP).max(header[3]);
    let reap = widest(&|r| &r.0.reap, 6);
    let name_need = widest(&|r| &r.0.name, 0);
    let (lease_full, lease_short) = (widest(&|r| &r.0.lease, 4), widest(&|r| &r.1.lease, 4));
    let (lock_full, lock_short) = (widest(&|r| &r.0.lock, 5), widest(&|r| &r.1.lock, 5));
    let lock_tiny = widest(&|r| &r.1.tiny, 5);
    let fixed = symbol + SPACING * 6 + state + status + reap;
    if name_need + lease_short + lock_tiny + fixed + substrate > width {
        // Tight: SUBSTRATE gives up its header's slack first (`SUB`).
        let mark = u16::from(sorted == Some(2));
        let values = rows
            .iter()
            .map(|r| u16::try_from(r.0.substrate.width()).unwrap_or(u16::MAX))
            .max()
            .unwrap_or(0)
            .min(NARROW_CAP);
        substrate = substrate.min(values.max(SHORT_SUBSTRATE + mark));
    }
    let share = width.saturating_sub(fixed + substrate);
    let lease = [
        (lease_full, lock_full),
        (lease_full, lock_short),
        (lease_short, lock_short),
        (lease_short, lock_tiny),
    ]
    .into_iter()
    .find(|(lease, lock)| name_need + lease + lock <= share)
    .map_or(lease_short, |(lease, _)| lease);
    let name = name_need.min(share.saturating_sub(lease)).max(header[0]);
    let mut lease = lease;
    let mut lock = share.saturating_sub(name + lease);
    if lock < lock_tiny.max(header[5]) {
        // Too narrow for its shortest texts: LOCK goes (the ST column
        // still marks a held or stale lock) rather than the name, and
        // rather than a cut `up p…`.
        lease += lock;
        lock = 0;
    }
    [name, state, substrate, status, lease, lock, reap]
}

/// The width of SUBSTRATE's short header, `SUB` ([`super::SHORT_HEADERS`]).
const SHORT_SUBSTRATE: u16 = 3;

/// The widest SUBSTRATE and STATUS get (a longer text is cut).
const NARROW_CAP: u16 = 24;
