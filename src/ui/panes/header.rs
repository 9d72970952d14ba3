//! The header: title, the host when reached over ssh (`on HOST`), store, schema generation, how commits are noticed
//! (`watch: inotify`, `watch: poll 100ms`), reaper and helper state,
//! the controller (schema 14), the Instances sort, then one banner per
//! condition the operator must know about (a store read immutably, schema
//! generation, stackless's persistence warning, store busy or unreadable).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use crate::event::StoreHealth;
use crate::model::text::sanitize_short;
use crate::ui::app::App;
use crate::ui::theme;
use crate::ui::view;

/// The title shown first in the header.
pub const TITLE: &str = "stackless-tui";

/// The banner of a store read through an immutable snapshot
/// ([`crate::model::Snapshot::immutable`]).
pub const IMMUTABLE_BANNER: &str =
    "read-only (immutable: dir not writable; changes seen by reopening)";

/// The banners to show, in order, each with its style: standby, a wall
/// clock that looks wrong, a store read immutably, a teardown program not found at start, the schema generation's banner, the controller's
/// persistence warning, then the store's health (busy, error).
#[must_use]
pub fn banners(app: &App) -> Vec<(String, Style)> {
    banner_items(app)
        .into_iter()
        .map(|b| {
            let style = if b.error {
                theme::banner_error()
            } else {
                theme::banner_warning()
            };
            (b.text, style)
        })
        .collect()
}

/// One header banner: a stable id (`clock`, `store_busy`, ...: the
/// stream's `banner.id`, docs/protocol.md), whether it is an error (else
/// a warning) and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BannerItem {
    /// `standby`, `controller_reaps`, `role_unavailable`, `unrecorded`,
    /// `audit`, `clock`, `immutable`, `teardown_missing`, `schema`,
    /// `persistence`, `store_busy`, `store_error`; `reading` (the first
    /// rows of a big store, [`crate::model::Partial`]: the screen's only,
    /// never in the stream, which waits for the whole read).
    pub id: &'static str,
    /// An error (else a warning).
    pub error: bool,
    /// The words, as the header shows them.
    pub text: String,
}

const fn item(id: &'static str, error: bool, text: String) -> BannerItem {
    BannerItem { id, error, text }
}

/// [`banners`] with their ids, in the same order.
#[must_use]
pub fn banner_items(app: &App) -> Vec<BannerItem> {
    let mut out = Vec::new();
    if let Some(view) = app.replay() {
        replay_banners(view, &mut out);
        return out;
    }
    role_banners(app, &mut out);
    if let Some(error) = app.unrecorded() {
        out.push(item(
"unrecorded", true,
            format!(
                "! reaper paused: failures cannot be recorded in the store ({}); nothing is torn down until the store accepts writes",
                sanitize_short(error, crate::ui::text::CUT_LONG)
            )));
    }
    if let Some(error) = app.audit_failure() {
        out.push(item(
"audit", true,
            format!(
                "! reaper paused: the audit trail cannot be written ({}); nothing is torn down until it can",
                sanitize_short(error, crate::ui::text::CUT_LONG)
            )));
    }
    if let Some(doubt) = app.clock_doubt() {
        out.push(item("clock", true, format!("! {doubt}")));
    }
    if let Some(partial) = app.snapshot().partial {
        out.push(item(
            "reading",
            false,
            format!(
                "! {}: the soonest leases first; counts are not totals and actions wait until it is read",
                partial.words()
            ),
        ));
    }
    if app.snapshot().immutable {
        out.push(item("immutable", false, format!("! {IMMUTABLE_BANNER}")));
    }
    if let Some(missing) = &app.teardown().missing {
        out.push(item(
"teardown_missing", true,
            format!("! teardown command not found: {missing}: expired instances cannot be torn down (set --down-cmd)")));
    }
    if let Some(banner) = app.snapshot().generation.banner() {
        out.push(item("schema", false, format!("! {banner}")));
    }
    if let Some(warning) = &app.controller().persistence_warning {
        out.push(item(
            "persistence",
            false,
            format!(
                "! stackless: {}",
                sanitize_short(warning, crate::ui::text::CUT_LONG)
            ),
        ));
    }
    match app.health() {
        StoreHealth::Ok => {}
        StoreHealth::Busy(since) => {
            let secs = app.clock().saturating_duration_since(*since).as_secs();
            out.push(item(
                "store_busy",
                false,
                format!("! {}", view::busy_banner(secs)),
            ));
        }
        StoreHealth::Error(message) => {
            out.push(item(
                "store_error",
                true,
                format!("! {}", view::error_banner(message)),
            ));
        }
    }
    out
}

/// The banners of who reaps when this console does not: standby for
/// another console, for the controller's lease reaper, or a role that
/// could not be taken.
fn role_banners(app: &App, out: &mut Vec<BannerItem>) {
    if let crate::event::RoleState::Standby { pid } = app.role() {
        let who = pid.map_or_else(|| "another console".to_owned(), |p| format!("pid {p}"));
        out.push(item(
"standby", false,
            format!("! standby: active console is {who}; this one watches and takes keys, and takes over when it exits")));
    }
    if let crate::event::RoleState::ControllerReaps { pid } = app.role() {
        // `P` in standby: do not take over when the controller stops
        // (`model::rules`, the pause rule in standby).
        let text = if app.reaper().paused {
            format!(
                "! standby: the stackless controller (pid {pid}) runs its lease reaper; this console won't take over if it stops (paused: P takes over)"
            )
        } else {
            format!(
                "! standby: the stackless controller (pid {pid}) runs its lease reaper; this console's reaper takes over if it stops (--reaper always reaps here too)"
            )
        };
        out.push(item("controller_reaps", false, text));
    }
    if let crate::event::RoleState::Unavailable { reason } = app.role() {
        out.push(item(
            "role_unavailable",
            true,
            format!(
                "! the reaper does not run in this console: {}; tried again every 0.5s",
                sanitize_short(reason, crate::ui::text::CUT_LONG)
            ),
        ));
    }
}

/// The controller in the header: `controller: pid 4242`, `controller: pid
/// 4242, no lease reaper (embedded)` (nobody reaps but a console) or
/// `controller: not running` (the demo's stand-in: `controller: running
/// (pid 4242, demo)`), on stores of generation 14 only (stackless 0.4.0 holds
/// `controller.lock`; the 0.2/0.3 daemon cannot be seen by a lock, so
/// nothing is said on 4/5).
#[must_use]
pub fn controller_text(app: &App) -> Option<String> {
    if app.snapshot().generation.era() != crate::model::generation::Era::Controller {
        return None;
    }
    let controller = app.controller();
    Some(match (controller.pid, controller.lease_reaper) {
        (Some(pid), _) if app.controller_stand_in() == Some(pid) => {
            format!("controller: running (pid {pid}, demo)")
        }
        (Some(pid), Some(false)) => format!("controller: pid {pid}, no lease reaper (embedded)"),
        (Some(pid), _) => format!("controller: pid {pid}"),
        (None, _) => "controller: not running".to_owned(),
    })
}

/// Where the console runs when it was reached through `--controller`:
/// `on HOST` (sanitized), after the title; `None` when it runs here.
#[must_use]
pub fn host_text(app: &App) -> Option<String> {
    app.config()
        .host
        .as_deref()
        .map(|host| format!("on {}", sanitize_short(host, crate::ui::text::CUT_SHORT)))
}

/// The width of the header's `  │  ` separator.
const SEP_WIDTH: usize = 5;

/// The host (`on HOST`) is never cut below this many columns.
const HOST_MIN: usize = 8;

/// What a banner says of the key that puts the banners away.
pub const BANNER_KEY: &str = " · b hides";

/// The banner lines as drawn at `width` columns, one row each: each
/// banner cut to the row with [`BANNER_KEY`] after it (when it fits), or,
/// put away (`b`), one line for all: `! 2 banners put away (b shows
/// them)`, styled as the most severe of them.
#[must_use]
pub fn banner_lines(app: &App, width: u16) -> Vec<(String, Style)> {
    let all = banners(app);
    if all.is_empty() {
        return all;
    }
    let width = usize::from(width);
    if app.banners_away() {
        let error = banner_items(app).iter().any(|b| b.error);
        let style = if error {
            theme::banner_error()
        } else {
            theme::banner_warning()
        };
        let noun = if all.len() == 1 { "banner" } else { "banners" };
        let text = format!("! {} {noun} put away (b shows them)", all.len());
        return vec![(crate::ui::text::fit(&text, width).into_owned(), style)];
    }
    all.into_iter()
        .map(|(text, style)| {
            let room = width.saturating_sub(BANNER_KEY.width());
            let shown = if room >= 20 {
                format!("{}{BANNER_KEY}", crate::ui::text::fit(&text, room))
            } else {
                crate::ui::text::fit(&text, width).into_owned()
            };
            (shown, style)
        })
        .collect()
}

/// The header's height at `width` columns: 2 lines plus one per banner
/// line ([`banner_lines`]).
#[must_use]
pub fn height(app: &App, width: u16) -> u16 {
    2 + u16::try_from(banner_lines(app, width).len()).unwrap_or(u16::MAX)
}

/// A replay's banners: why nothing is shown at the cursor, then the
/// banners recorded as up then (a replay has no live state of its own).
fn replay_banners(view: &crate::ui::app::ReplayView, out: &mut Vec<BannerItem>) {
    if let Some(why) = &view.why {
        out.push(item(
            "replay",
            true,
            format!(
                "! not recorded: {}",
                sanitize_short(why, crate::ui::text::CUT_LONG)
            ),
        ));
    }
    // A recorded banner's text is the header's own, its `!` included.
    for text in &view.banners {
        let text = sanitize_short(text, crate::ui::text::CUT_LONG);
        let text = if text.starts_with('!') {
            text
        } else {
            format!("! {text}")
        };
        out.push(item("recorded", false, text));
    }
}

/// The items of one header line, each with the rank at which it is
/// dropped (lowest first; of equal ranks, the later item first) when the
/// line does not fit: whole items go, never part of a word. Rank
/// `u8::MAX` is never dropped.
fn fitted(items: Vec<(Span<'static>, u8)>, width: usize) -> Line<'static> {
    let sep = "  │  ";
    let mut items = items;
    let used = |items: &[(Span<'static>, u8)]| {
        items.iter().map(|(s, _)| s.width()).sum::<usize>()
            + sep.width() * items.len().saturating_sub(1)
    };
    while used(&items) > width {
        let Some((index, _)) = items
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, (_, rank))| *rank < u8::MAX)
            .min_by_key(|(_, (_, rank))| *rank)
        else {
            break;
        };
        items.remove(index);
    }
    let mut spans = Vec::new();
    for (span, _) in items {
        if !spans.is_empty() {
            spans.push(Span::styled(sep, theme::muted()));
        }
        spans.push(span);
    }
    Line::from(spans)
}

/// The header's second line's items: who reaps (never dropped), the
/// reaper's schedule, the helper, the controller, the sort, who records.
fn second_line(app: &App) -> Vec<(Span<'static>, u8)> {
    let config = app.config();
    // A standby console runs no reaper, whatever its flags say; an active
    // one says what its reaper does with the store as it is now.
    let reaper = app.replay().map_or_else(
        || app.reaper_text().into_owned(),
        |view| {
            format!(
                "who reaps (recorded): {}",
                view.reaper.as_deref().unwrap_or("not recorded")
            )
        },
    );
    let mut second = vec![(
        Span::raw(sanitize_short(&reaper, crate::ui::text::CUT_SHORT)),
        u8::MAX,
    )];
    if let Some(schedule) = app.reaper_schedule() {
        second.push((Span::raw(schedule), 3));
    }
    second.push((
        Span::raw(sanitize_short(
            &config.helper.line(),
            crate::ui::text::CUT_SHORT,
        )),
        1,
    ));
    if let Some(text) = controller_text(app) {
        second.push((Span::raw(text), 2));
    }
    let sort = if app.sort_reversed() {
        format!("sort: {}, reversed", app.sort().label())
    } else {
        format!("sort: {}", app.sort().label())
    };
    second.push((Span::raw(sort), 0));
    // Who records the store (docs/history.md): dropped first when
    // narrow (the later of the two rank-0 items).
    if let Some(words) = app.recording() {
        second.push((
            Span::raw(sanitize_short(words, crate::ui::text::CUT_SHORT)),
            0,
        ));
    }
    second
}

/// Draw the header into `area` (see [`height`]). Each line drops whole
/// items when it is too narrow: the watch mode first, then the store path,
/// then the host; the
/// sort, then the helper, the controller and the reaper's schedule.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let config = app.config();
    let snapshot = app.snapshot();
    let mut first = vec![(Span::styled(TITLE, theme::title()), u8::MAX)];
    // A replay's cursor is never dropped: every pane is as it was then.
    if let Some(cursor) = app.replay_text(app.wall_now()) {
        first.push((Span::styled(cursor, theme::title()), u8::MAX));
    }
    let store = sanitize_short(&config.store_label, crate::ui::text::CUT_LONG);
    let schema = format!("schema v{}", snapshot.generation.user_version);
    if let Some(text) = host_text(app) {
        // A long host alias is cut first: the store and schema stay seen.
        let rest = TITLE.width() + 3 * SEP_WIDTH + store.width() + schema.width();
        let room = usize::from(area.width).saturating_sub(rest).max(HOST_MIN);
        first.push((
            Span::styled(
                crate::ui::text::fit(&text, room).into_owned(),
                theme::title(),
            ),
            2,
        ));
    }
    first.push((Span::raw(store), 1));
    first.push((Span::raw(schema), 3));
    // Dropped first when narrow: how commits are noticed.
    if let Some(mode) = app.watch() {
        first.push((Span::raw(mode.label()), 0));
    }
    let second = second_line(app);
    let width = usize::from(area.width);
    let (first, second) = (fitted(first, width), fitted(second, width));
    let mut y = area.y;
    let bottom = area.y + area.height;
    for line in [first, second] {
        if y >= bottom {
            return;
        }
        frame.render_widget(Paragraph::new(line), Rect::new(area.x, y, area.width, 1));
        y += 1;
    }
    for (text, style) in banner_lines(app, area.width) {
        if y >= bottom {
            return;
        }
        frame.render_widget(
            Paragraph::new(Line::styled(text, style)).style(style),
            Rect::new(area.x, y, area.width, 1),
        );
        y += 1;
    }
}
