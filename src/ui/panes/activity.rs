//! The Activity pane: what the reaper and the operator did,
//! `HH:MM:SS actor instance kind: detail`, coalesced (`HH:MM:SS x3 ...`), newest last,
//! following the bottom unless the operator scrolled up. While focused, the
//! selected line (j/k, a click; the newest while following) is drawn
//! highlighted: Enter and `e` open it whole.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::{focused, log_window, pane_block, title};
use crate::model::fleet::Activity;
use crate::model::text::sanitize_short;
use crate::model::time;
use crate::ui::app::{AFTER_ALL, App, Focus};
use crate::ui::theme;
use crate::ui::view;

/// Shown before the first entry.
pub const EMPTY: &str = "no activity yet";

/// The last hour's reaps (each teardown once: [`reap_slot`]) and failed
/// teardowns ([`crate::event::Activity::is_failed_teardown`]), each folded
/// line counted as many times as it was folded, as sparklines
/// ([`crate::ui::spark::last_hour_items`]), over [`last_hour`]'s lines. A
/// teardown killed at its deadline and torn down after
/// all (its line begins with [`AFTER_ALL`]) counts once, as torn down: its
/// failure, the one before it on that instance, is taken back.
fn history(app: &App) -> Option<[Vec<String>; 2]> {
    use crate::event::ActivityKind;
    let now = app.now();
    let downs = controller_downs(app);
    // Per instance: amendments seen (newest first) whose failure is not
    // reached yet.
    let mut amended: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let events = last_hour(app).filter_map(move |(entry, count)| match entry.kind {
        // Another process's teardown, once.
        ActivityKind::Tombstoned | ActivityKind::Succeeded => {
            reap_slot(entry, &downs).map(|_| (entry.at, false, count))
        }
        ActivityKind::Reaped | ActivityKind::TornDown => {
            if entry.detail.starts_with(AFTER_ALL) {
                *amended.entry(entry.instance.as_str()).or_default() += count;
            }
            Some((entry.at, false, count))
        }
        // Failed teardowns only (a failed `up` or verify is none).
        ActivityKind::Failed if entry.is_failed_teardown() => {
            let owed = amended.get_mut(entry.instance.as_str());
            let taken = owed.map_or(0, |n| {
                let taken = (*n).min(count);
                *n -= taken;
                taken
            });
            Some((entry.at, true, count - taken))
        }
        _ => None,
    });
    crate::ui::spark::last_hour_items(events, now)
}

/// The lines of the last hour the title counts, newest first, each with
/// how many times it was folded: the Activity log's, then the controller
/// `down`s that finished before the console's first snapshot, which the
/// store holds and the log does not ([`App::downs_before_start`]): the
/// counts are the store's from the first frame.
fn last_hour(app: &App) -> impl Iterator<Item = (&crate::event::Activity, u32)> {
    let now = app.now();
    let within = move |at: i64| (0..3600).contains(&now.saturating_sub(at));
    app.activity()
        .entries()
        .iter()
        .rev()
        .take_while(move |l| now.saturating_sub(l.entry.at) < 3600)
        .map(|l| (&l.entry, l.count))
        .chain(
            app.downs_before_start()
                .iter()
                .filter(move |a| within(a.at))
                .map(|a| (a, 1)),
        )
}

/// The instances the 0.4.0 controller ran a `down` on in the last hour (a
/// `controller` line `reaped` by its lease reaper, or `succeeded: down
/// ...`): their `observed ... tombstoned` line is the same teardown.
fn controller_downs(app: &App) -> std::collections::HashSet<&str> {
    last_hour(app)
        .filter(|(entry, _)| is_controller_down(entry))
        .map(|(entry, _)| entry.instance.as_str())
        .collect()
}

fn is_controller_down(entry: &crate::event::Activity) -> bool {
    use crate::event::{ActivityKind as K, Actor};
    entry.actor == Actor::Controller
        && (entry.kind == K::Reaped
            || (entry.kind == K::Succeeded && entry.detail.starts_with("down")))
}

/// Who did a teardown line, once per teardown: 0 this console's reaper, 1
/// the controller's lease reaper, 2 the operator's keys, 3 elsewhere (a
/// `down` the controller ran for someone else, or an instance seen
/// tombstoned by another process whose `down` the controller did not run:
/// `downs`, [`controller_downs`]); `None` for any other line.
fn reap_slot(
    entry: &crate::event::Activity,
    downs: &std::collections::HashSet<&str>,
) -> Option<usize> {
    use crate::event::{ActivityKind as K, Actor};
    match (entry.actor, entry.kind) {
        (Actor::Reaper, K::Reaped | K::TornDown) => Some(0),
        (Actor::Controller, K::Reaped) => Some(1),
        (Actor::Operator, K::Reaped | K::TornDown) => Some(2),
        (Actor::Controller, K::Succeeded) if is_controller_down(entry) => Some(3),
        (Actor::Observed, K::Tombstoned) if !downs.contains(entry.instance.as_str()) => Some(3),
        _ => None,
    }
}

/// Who did the last hour's reaps ([`history`]'s, over [`last_hour`]'s
/// lines), each counted:
/// `by this reaper 2, controller 1, operator 1, elsewhere 1` (this
/// console's reaper; the 0.4.0 controller's lease reaper; the operator's
/// keys; another console or process, seen tombstoning); `None` when none.
#[must_use]
pub fn reaps_by_actor(app: &App) -> Option<String> {
    let downs = controller_downs(app);
    // this reaper, the controller's lease reaper, operator, elsewhere
    let mut counts = [0_u32; 4];
    for (entry, count) in last_hour(app) {
        let Some(slot) = reap_slot(entry, &downs) else {
            continue;
        };
        counts[slot] = counts[slot].saturating_add(count);
    }
    let said: Vec<String> = ["this reaper", "controller", "operator", "elsewhere"]
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(who, n)| format!("{who} {n}"))
        .collect();
    (!said.is_empty()).then(|| format!("by {}", said.join(", ")))
}

/// Who the last hour's failed teardowns were (the title's `failed`
/// count, over [`last_hour`]'s lines, a failure taken back by a teardown
/// done after all not counted, as [`history`] does), each counted:
/// `controller 20, this reaper 2` (the 0.4.0 controller's lease
/// reaper or its queue; this console's reaper; the operator's keys;
/// another process); `None` when none failed.
#[must_use]
pub fn failures_by_actor(app: &App) -> Option<String> {
    use crate::event::{ActivityKind, Actor};
    // controller, this reaper, operator, elsewhere
    let mut counts = [0_u32; 4];
    let mut amended: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for (entry, count) in last_hour(app) {
        if matches!(entry.kind, ActivityKind::Reaped | ActivityKind::TornDown)
            && entry.detail.starts_with(AFTER_ALL)
        {
            *amended.entry(entry.instance.as_str()).or_default() += count;
        }
        if !entry.is_failed_teardown() {
            continue;
        }
        let taken = amended.get_mut(entry.instance.as_str()).map_or(0, |n| {
            let taken = (*n).min(count);
            *n -= taken;
            taken
        });
        let slot = match entry.actor {
            Actor::Controller => 0,
            Actor::Reaper => 1,
            Actor::Operator => 2,
            Actor::Observed => 3,
        };
        counts[slot] = counts[slot].saturating_add(count - taken);
    }
    let said: Vec<String> = ["controller", "this reaper", "operator", "elsewhere"]
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(who, n)| format!("{who} {n}"))
        .collect();
    (!said.is_empty()).then(|| said.join(", "))
}

/// The title's items with whose the failed teardowns were after the
/// `failed` count ([`failures_by_actor`]): `failed ▁▁█ 22 (controller
/// 20, this reaper 2)`.
fn with_failures_by(mut items: Vec<String>, app: &App) -> Vec<String> {
    if let Some(by) = failures_by_actor(app)
        && let Some(failed) = items.iter_mut().find(|i| i.starts_with("failed "))
    {
        failed.push_str(&format!(" ({by})"));
    }
    items
}

/// Draw the Activity pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    if let Some(fleet) = app.fleet() {
        render_fleet(frame, area, fleet, app);
        return;
    }
    let is_focused = focused(app, Focus::Activity);
    let log = app.activity();
    let entries = log.entries();
    let rows = usize::from(area.height.saturating_sub(2));
    let mut viewport = app.viewport.get();
    viewport.activity_rows = rows;
    app.viewport.set(viewport);
    let (start, end) = log_window(entries.len(), rows, log.scroll_up(), log.selected_up());
    let name = format!("Activity ({})", app.zone_label());
    // Whole items only: the bars, else the counts alone, else fewer items.
    let mut items: Vec<String> = Vec::new();
    if end < entries.len() {
        items.push(format!("↓ {} newer (End follows)", entries.len() - end));
    }
    let room = super::title_room(area.width, &name);
    let by = reaps_by_actor(app).into_iter().collect::<Vec<_>>();
    let suffix = match history(app) {
        Some([full, compact]) => {
            let with = |spark: &[String]| [items.as_slice(), spark, by.as_slice()].concat();
            let fits = |items: &[String]| {
                let text = items.join(" · ");
                (unicode_width::UnicodeWidthStr::width(text.as_str()) <= room).then_some(text)
            };
            // Whose the failures were, where it fits whole.
            fits(&with(&with_failures_by(full.clone(), app)))
                .or_else(|| fits(&with(&with_failures_by(compact.clone(), app))))
                .or_else(|| fits(&with(&full)))
                .unwrap_or_else(|| super::whole_items(&with(&compact), room))
        }
        None => super::whole_items(&items, room),
    };
    let block = pane_block(title(&name, &suffix, is_focused), is_focused);
    if entries.is_empty() {
        super::render_empty(frame, area, block, EMPTY);
        return;
    }
    let width = usize::from(area.width.saturating_sub(2));
    let lines: Vec<Line> = entries
        .range(start..end)
        .enumerate()
        .map(|(i, logged)| {
            let text = view::activity_line(&logged.entry, logged.count, app.zone());
            let selected = is_focused && start + i + 1 + log.selected_up() == entries.len();
            super::log_line(&text, width, theme::activity(logged.entry.kind), selected)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// One Activity line as drawn: `HH:MM:SS HOST actor instance kind detail`.
#[must_use]
pub(crate) fn fleet_text(
    app: &crate::ui::app::over_fleet::FleetState,
    activity: &Activity,
) -> String {
    let host = app
        .fleet()
        .hosts
        .get(activity.host)
        .map(|h| sanitize_short(&h.name, 64))
        .unwrap_or_default();
    let mut text = format!(
        "{} {host} {} {} {}",
        time::clock_in(activity.at, app.zone()),
        sanitize_short(&activity.actor, 16),
        sanitize_short(&activity.instance, 96),
        sanitize_short(&activity.kind, 32),
    );
    if !activity.detail.is_empty() {
        text.push_str(": ");
        text.push_str(&sanitize_short(&activity.detail, 400));
    }
    text
}

/// The Activity pane over a fleet: every host's lines, newest first.
fn render_fleet(
    frame: &mut Frame,
    area: Rect,
    app: &crate::ui::app::over_fleet::FleetState,
    console: &App,
) {
    let lines = app
        .fleet()
        .activity
        .iter()
        .rev()
        .map(|a| {
            let style = match a.kind.as_str() {
                "failed" | "refused" | "stopped" => theme::failure(),
                "reaped" | "torn down" => Style::new().add_modifier(Modifier::BOLD),
                _ => Style::new(),
            };
            Line::styled(fleet_text(app, a), style)
        })
        .collect();
    let suffix = format!("{} · newest first", app.fleet().activity.len());
    super::fleet_list(
        frame,
        area,
        console,
        ("Activity", &suffix, crate::ui::app::Focus::Activity),
        lines,
    );
}
