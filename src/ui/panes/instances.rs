//! The Instances pane: one row per instance (NAME, ST, SUBSTRATE, STATUS,
//! LEASE, LOCK, REAP), filtered (`/`) and sorted (`s`) through the app's
//! row index. Only the rows that fit are built, so a 100,000-instance store
//! costs the same per frame as an 8-instance one.

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
use crate::ui::theme;
use crate::ui::view::{self, CUT_SHORT, InstanceRow, LeaseState, LockState};

/// Column headers, in order.
pub const HEADERS: [&str; 7] = ["NAME", "ST", "SUBSTRATE", "STATUS", "LEASE", "LOCK", "REAP"];

const SPACING: u16 = super::TABLE_SPACING;

/// Drawn before a marked instance's name (`space`, Ctrl-A).
pub const MARK: &str = "●";

/// The headers as drawn in columns `widths` wide: [`HEADERS`] with `▲`
/// (or `▼`, high to low) after the sorted column's; where the column is too
/// narrow for both, the mark takes the header's last letter (`REA▼`), so it
/// is never cut away.
#[must_use]
pub fn headers(app: &App, widths: &[u16; 7]) -> [String; 7] {
    let column = app.sort().column();
    let mark = if app.sort_descending() { '▼' } else { '▲' };
    std::array::from_fn(|i| {
        let header = HEADERS[i];
        if i != column {
            return header.to_owned();
        }
        let room = usize::from(widths[i]).saturating_sub(1);
        let mut text: String = header.chars().take(room).collect();
        text.push(mark);
        text
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
    let total = app.snapshot().instances.len();
    let len = app.visible().len();
    let counts = app.counts();
    let row = if len == 0 {
        0
    } else {
        app.selected_index() + 1
    };
    let mut suffix = format!("{row}/{len}");
    if !app.filter().is_empty() {
        let _ = write!(
            suffix,
            " match \"{}\" (filtered from {total})",
            sanitize_short(app.filter(), CUT_SHORT)
        );
    }
    if !app.marks().is_empty() {
        let _ = write!(suffix, " · {} marked", app.marks().len());
    }
    if total > 0 {
        let _ = write!(suffix, " · {} active", counts.active);
        if counts.expired > 0 {
            let _ = write!(suffix, " ({} expired)", counts.expired);
        }
        let _ = write!(suffix, " · {} tombstoned", counts.tombstoned);
    }
    suffix
}

fn title_line(app: &App, is_focused: bool) -> Line<'static> {
    let name_style = if is_focused {
        theme::focused_border()
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let mut spans = vec![Span::styled(" Instances ", name_style)];
    if app.filter_editing() {
        spans.push(Span::styled(
            format!(
                "/{}{PROMPT_CURSOR}",
                sanitize_short(app.filter(), CUT_SHORT)
            ),
            theme::prompt(),
        ));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(
        format!("{} ", title_suffix(app)),
        theme::muted(),
    ));
    Line::from(spans)
}

/// Draw the Instances pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let is_focused = focused(app, Focus::Instances);
    let snapshot = app.snapshot();
    let instances = &snapshot.instances;
    let visible = app.visible();
    let len = visible.len();
    let block = pane_block(title_line(app, is_focused), is_focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if len == 0 {
        let text = if let Some(error) = app.filter_error() {
            format!("filter: {}", sanitize_short(error, CUT_SHORT * 2))
        } else if !app.loaded() {
            "reading the store…".to_owned()
        } else if instances.is_empty() {
            "no instances in this store".to_owned()
        } else {
            format!(
                "no instance matches \"{}\" (Esc clears the filter)",
                sanitize_short(app.filter(), CUT_SHORT)
            )
        };
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
            let liveness = snapshot.lock_liveness(&i.name);
            let pending = snapshot.pending_operation(&i.name);
            // The counts may lag a teardown by a few seconds: active only.
            let dead = if i.status == crate::model::Status::Active {
                snapshot.dead_services(&i.name)
            } else {
                0
            };
            let row = view::instance_row(i, liveness, snapshot.reap_attempt(&i.name), now)
                .with_pending(pending, now)
                .with_dead_services(dead);
            let short = Short::of(i, liveness, pending, dead, now);
            (marked(row, app.is_marked(&i.name)), short)
        })
        .collect();
    let widths = column_widths(inner.width, &built);
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
        selected - offset,
        is_focused,
    );
}

/// `row` with [`MARK`] before its name when `marked`.
fn marked(mut row: InstanceRow, marked: bool) -> InstanceRow {
    if marked {
        row.name = format!("{MARK} {}", row.name);
    }
    row
}

fn row(mut r: InstanceRow, short: &Short, widths: [u16; 7]) -> Row<'static> {
    let cell = |text: String, i: usize| -> Cell<'static> {
        Cell::from(view::fit(&text, usize::from(widths[i])).into_owned())
    };
    // A cell too narrow for its whole text shows the short form.
    if r.lease.width() > usize::from(widths[4]) {
        r.lease.clone_from(&short.lease);
    }
    if r.lock.width() > usize::from(widths[5]) {
        r.lock.clone_from(&short.lock);
    }
    let lease_style = match r.lease_state {
        LeaseState::Expired => theme::expired(),
        _ => Style::new(),
    };
    let lock_style = match r.lock_state {
        _ if r.dead_services > 0 => theme::failure(),
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

/// The short forms LEASE and LOCK fall back to before NAME is cut:
/// `4h12m`, `-3m12s` (expired that long ago), `†8d00h` (tombstoned that
/// long ago), `none`; `up pid 4242 alive` (`gone`, `reused`, `foreign`),
/// after `1 dead` and a pending operation (`down running 3s`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Short {
    /// LEASE, short.
    pub lease: String,
    /// LOCK, short.
    pub lock: String,
}

impl Short {
    /// The short forms for `instance` at `now` (unix seconds).
    #[must_use]
    pub fn of(
        instance: &crate::model::Instance,
        liveness: Option<&crate::model::Liveness>,
        pending: Option<&crate::model::Operation>,
        dead: u32,
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
            (_, None) => "none".to_owned(),
        };
        let mut parts = Vec::new();
        if dead > 0 {
            parts.push(format!("{dead} dead"));
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
        }
        Self {
            lease,
            lock: parts.join("; "),
        }
    }
}

/// Column widths (in [`HEADERS`] order) for a table `width` columns wide
/// showing `rows`. Every column is at least as wide as its header (no
/// header is ever cut: `SUBSTRATE`, not `SUBST…`). ST, SUBSTRATE, STATUS
/// and REAP take what their texts need; NAME then takes what its longest
/// visible name needs before LEASE and LOCK get anything: they take their
/// whole texts if the rest allows, else their short forms ([`Short`]), and
/// when even those do not fit LOCK goes (the ST column still marks the
/// lock), and only then is NAME cut. Slack goes to LOCK.
#[must_use]
pub fn column_widths(width: u16, rows: &[(InstanceRow, Short)]) -> [u16; 7] {
    let symbol = u16::try_from(HIGHLIGHT_SYMBOL.width()).unwrap_or(2);
    let widest = |f: &dyn Fn(&(InstanceRow, Short)) -> &str, header: &str| {
        rows.iter()
            .map(|r| f(r).width())
            .chain(std::iter::once(header.width()))
            .max()
            .map_or(0, |w| u16::try_from(w).unwrap_or(u16::MAX))
    };
    let state = 3;
    let substrate = widest(&|r| &r.0.substrate, HEADERS[2]).min(NARROW_CAP);
    let status = widest(&|r| &r.0.status, HEADERS[3]).min(NARROW_CAP);
    let reap = widest(&|r| &r.0.reap, HEADERS[6]);
    let share = width
        .saturating_sub(symbol + SPACING * 6 + state)
        .saturating_sub(substrate + status + reap);
    let name_need = widest(&|r| &r.0.name, HEADERS[0]);
    let (lease_full, lease_short) = (
        widest(&|r| &r.0.lease, HEADERS[4]),
        widest(&|r| &r.1.lease, HEADERS[4]),
    );
    let (lock_full, lock_short) = (
        widest(&|r| &r.0.lock, HEADERS[5]),
        widest(&|r| &r.1.lock, HEADERS[5]),
    );
    let lock_min = u16::try_from(HEADERS[5].width()).unwrap_or(4);
    let lease = [
        (lease_full, lock_full),
        (lease_full, lock_short),
        (lease_short, lock_short),
    ]
    .into_iter()
    .find(|(lease, lock)| name_need + lease + lock <= share)
    .map_or(lease_short, |(lease, _)| lease);
    let name = name_need.min(share.saturating_sub(lease));
    let mut lease = lease;
    let mut lock = share.saturating_sub(name + lease);
    if lock < lock_min {
        // Too narrow for even its header: LOCK goes (the ST column still
        // marks a held or stale lock) rather than the name.
        lease += lock;
        lock = 0;
    }
    [name, state, substrate, status, lease, lock, reap]
}

/// The widest SUBSTRATE and STATUS get (a longer text is cut).
const NARROW_CAP: u16 = 24;
