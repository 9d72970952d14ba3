//! The terminal UI: the view model ([`view`]), the UI state and key handling
//! ([`app`]), the one key table the handler, the footer and the help share
//! ([`keys`]), one module per pane ([`panes`]) and the styles ([`theme`]).
//!
//! Layout, top to bottom: the header (title, store, schema, reaper, helper,
//! controller, banners), Instances (the biggest), Operations (only on
//! stores with the controller's `operations` table, stackless 0.4.0; on
//! others the pane is absent and its room goes to the rest), a row with
//! Backoffs (left) and Supervisor (right), Activity, and a one-line footer
//! of keys (or the latest flash message). The detail view ([`detail`])
//! replaces the panes while it is open, the logs view
//! ([`panes::logs`], `l`) replaces both; the operation overlay (Enter on
//! Operations) is drawn over them, and the full-text view ([`fulltext`],
//! Enter on a log line or `e` anywhere) over all of them. Below [`MIN_WIDTH`] x [`MIN_HEIGHT`] only a
//! one-line notice is drawn.
//!
//! With `NO_COLOR` ([`App::no_color`]) every colour is dropped after
//! drawing, in one place ([`strip_colours`]); bold, dim, reversed and the
//! border shapes remain, and every state also has a mark or a word.

pub mod app;
pub mod clipboard;
pub(crate) mod command;
pub mod detail;
pub(crate) mod filter;
pub(crate) mod fulltext;
pub(crate) mod geometry;
pub mod keys;
pub(crate) mod logs_layout;
pub mod opview;
pub mod panes;
pub(crate) mod spark;
pub mod text;
pub(crate) mod theme;
pub mod view;

pub use app::{
    App, AppConfig, Effect, Flash, FlashLevel, Focus, HelperMode, OpEvents, ReaperMode, SortKey,
    TeardownInfo,
};
use app::{Confirm, Layer, Question};

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub use text::{MIN_HEIGHT, MIN_WIDTH};

/// The areas of the full layout for a frame of `area`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Areas {
    /// Header (2 lines plus banners).
    pub header: Rect,
    /// Instances pane.
    pub instances: Rect,
    /// Operations pane (zero-sized when the store has no operations).
    pub operations: Rect,
    /// Backoffs pane (middle left).
    pub backoffs: Rect,
    /// Supervisor pane (middle right).
    pub supervisor: Rect,
    /// Activity pane.
    pub activity: Rect,
    /// Footer (1 line).
    pub footer: Rect,
}

/// Split `area` into the console's regions. The header never takes more
/// than a third of the height, so the panes always get room. A pane with
/// nothing to show (no backoffs and no helper, no activity yet, no
/// operations) keeps one line for its empty-state text and gives the rest
/// of its room to the others. Zoomed (`z`), the focused pane has the whole
/// body and the others none.
#[must_use]
pub fn layout(app: &App, area: Rect) -> Areas {
    let header = panes::header::height(app, area.width).min((area.height / 3).max(2));
    let snapshot = app.snapshot();
    let operations_shown = snapshot.generation.has_operations();
    // Three rows (borders and the empty-state line) for an empty pane.
    let room = |empty: bool, share: u16| {
        if empty {
            Constraint::Length(3)
        } else {
            Constraint::Fill(share)
        }
    };
    let middle_empty = snapshot.reap_attempts.is_empty()
        && app.supervisor().entries().is_empty()
        && app.helper() == view::HelperState::NotConfigured;
    let activity_empty = app.activity().entries().is_empty();
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(header),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let [instances, operations, middle, activity] = Layout::vertical([
        Constraint::Fill(5),
        if operations_shown {
            room(snapshot.operations.is_empty(), 4)
        } else {
            Constraint::Length(0)
        },
        room(middle_empty, if operations_shown { 2 } else { 3 }),
        room(activity_empty, 3),
    ])
    .areas(body);
    let [backoffs, supervisor] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(middle);
    let mut areas = Areas {
        header,
        instances,
        operations,
        backoffs,
        supervisor,
        activity,
        footer,
    };
    if app.zoomed() {
        let zoomed = Areas {
            header,
            footer,
            ..Areas::default()
        };
        areas = match app.focus() {
            Focus::Instances => Areas {
                instances: body,
                ..zoomed
            },
            Focus::Operations => Areas {
                operations: body,
                ..zoomed
            },
            Focus::Backoffs => Areas {
                backoffs: body,
                ..zoomed
            },
            Focus::Supervisor => Areas {
                supervisor: body,
                ..zoomed
            },
            Focus::Activity => Areas {
                activity: body,
                ..zoomed
            },
            // Only over a fleet, whose drawn panes the mouse finds.
            Focus::Hosts => zoomed,
        };
    }
    areas
}

impl Areas {
    /// Where the detail view goes: everything between header and footer.
    #[must_use]
    pub fn body(&self) -> Rect {
        Rect::new(
            self.header.x,
            self.header.bottom(),
            self.header.width,
            self.footer.y.saturating_sub(self.header.bottom()),
        )
    }
}

/// One pane's render function.
type PaneRender = fn(&mut Frame, Rect, &App);

/// Draw the open question `question` over `area` (a fleet's is drawn over
/// the fleet's panes, by [`draw_over_fleet`]).
fn draw_question(frame: &mut Frame, area: Rect, app: &App, question: &Question) {
    let note = app.controller_start_note(question);
    let note = note.as_deref();
    match question {
        Question::TearDown(instance) => {
            panes::confirm::render_confirm(
                frame,
                area,
                instance,
                app.snapshot().liveness.get(&instance.name),
                app.teardown(),
                note,
            );
        }
        Question::Reap(instance) => panes::confirm::render_confirm_reap(
            frame,
            area,
            instance,
            app.snapshot().reap_attempt(&instance.name),
            app.now(),
            app.teardown(),
            note,
        ),
        Question::Bulk(bulk) => panes::confirm::render_confirm_bulk(frame, area, bulk, note),
        Question::Cancel(op) => {
            panes::confirm::render_confirm_cancel(frame, area, (op, app.stackless()), note);
        }
        Question::QueueDown(instance, op, others) => {
            panes::confirm::render_confirm_queue_down(
                frame,
                area,
                instance,
                (&**op, others.as_str()),
                app.teardown(),
                note,
            );
        }
        Question::Verbs(question) => {
            panes::confirm::render_confirm_verbs(frame, area, question, note);
        }
        // Drawn over the fleet's panes, above.
        Question::Fleet(_) => {}
    }
}

/// Draw the whole console for `app` into `frame` (one ratatui layout,
/// recomputed every frame, so a resize needs nothing else). Never panics,
/// whatever the frame size: below [`MIN_WIDTH`] x [`MIN_HEIGHT`] it draws
/// `terminal too small: WxH, needs 60x15`. The layout is remembered in the
/// app for mouse events.
pub fn draw(frame: &mut Frame, app: &App) {
    if let Some(fleet) = app.fleet() {
        draw_over_fleet(frame, app, fleet);
        return;
    }
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        app.areas.set(None);
        // Wrapped, so a very narrow terminal still shows the whole message
        // when it has the rows for it.
        frame.render_widget(
            Paragraph::new(Line::raw(view::too_small(area.width, area.height)))
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let areas = layout(app, area);
    app.areas.set(Some(areas));
    panes::header::render(frame, areas.header, app);
    let layers = app.layers();
    // The body: the highest layer that fills it, else the panes.
    match layers.iter().rev().find(|layer| layer.fills_body()) {
        Some(Layer::Logs(_)) => panes::logs::render(frame, areas.body(), app),
        Some(Layer::Detail(_)) => panes::detail::render(frame, areas.body(), app),
        _ => draw_panes(frame, &areas, app),
    }
    match app.command_line() {
        Some(line) => panes::command::render(frame, areas.footer, line),
        None => panes::footer::render(frame, areas.footer, app),
    }
    // The overlays, bottom first: the top layer is drawn last.
    for layer in layers.iter() {
        match layer {
            Layer::Operation(_) => {
                if let Some((id, op)) = app.operation_open() {
                    panes::operation_overlay::render(frame, area, app, id, op);
                }
            }
            Layer::FullText(_) => panes::fulltext::render(frame, areas.body(), app),
            Layer::Help(_) => panes::help::render(frame, area, app),
            Layer::Confirm(confirm) => draw_question(frame, area, app, &confirm.question),
            Layer::Detail(_)
            | Layer::Logs(_)
            | Layer::HostText(_)
            | Layer::Filter
            | Layer::Command(_) => {}
        }
    }
    if app.no_color() {
        strip_colours(frame.buffer_mut());
    }
}

/// The App over a fleet: the fleet's panes, then the App's own layers
/// over them (a question in its confirm layer, the one help).
fn draw_over_fleet(frame: &mut Frame, app: &App, fleet: &app::over_fleet::FleetState) {
    draw_fleet_frame(frame, app, fleet);
    // The App's own layers over the fleet's panes: a row whole, a
    // question, the one help.
    let [_, body, footer] = panes::hosts::frame_areas(frame.area());
    // The flash, else the keys of the App's layer open over the panes.
    // (A host's text view on top keeps the fleet's footer: its search.)
    let own_layer = app
        .layers()
        .top()
        .is_some_and(|layer| !matches!(layer, Layer::HostText(_)));
    if app.flash().is_some() || own_layer {
        frame.render_widget(ratatui::widgets::Clear, footer);
        panes::footer::render(frame, footer, app);
    }
    if app.filter_editing() {
        app::over_fleet::draw_filter_prompt(frame, footer, app.filter());
    }
    if let Some(line) = app.command_line() {
        frame.render_widget(ratatui::widgets::Clear, footer);
        panes::command::render(frame, footer, line);
    }
    if app.full_text().is_some() {
        panes::fulltext::render(frame, body, app);
    }
    if let Some(Confirm {
        question: Question::Fleet(question),
        ..
    }) = app.layers().confirm()
    {
        panes::confirm::render_confirm_lines(frame, body, &question.lines);
    }
    if app.layers().help().is_some() {
        panes::help::render(frame, frame.area(), app);
    }
}

/// The fleet's header, footer and body: a text view of the fleet's
/// (detail, logs) fills the body, else the console's panes over the
/// fleet's rows. Below 60x16 a line says the size needed.
fn draw_fleet_frame(frame: &mut Frame, app: &App, fleet: &app::over_fleet::FleetState) {
    let now = app.now();
    let area = frame.area();
    if area.width < 60 || area.height < 16 {
        let text = format!(
            "the fleet view needs 60x16; this terminal is {}x{}",
            area.width, area.height
        );
        frame.render_widget(Paragraph::new(text), area);
        return;
    }
    let small = area.height < panes::hosts::HOSTS_PANE_MIN_HEIGHT;
    let [header, body, footer] = panes::hosts::frame_areas(area);
    panes::hosts::render_header(frame, header, (fleet, app.fleet_marks().len()), now, small);
    let view = app.layers().host_view();
    app::over_fleet::draw_footer(frame, footer, fleet, view);
    fleet.set_drawn_panes(Vec::new());
    if let Some(view) = view {
        app::over_fleet::draw_text(frame, body, view);
        return;
    }
    draw_fleet_panes(frame, body, app, fleet, small);
}

/// The console's panes over a fleet in `body`: the Hosts pane (none
/// when `small`: the header's second line says the hosts), Instances,
/// Operations beside Backoffs, Activity; `z` draws the focused pane
/// alone. Where each was drawn is kept for the mouse.
fn draw_fleet_panes(
    frame: &mut Frame,
    body: Rect,
    app: &App,
    fleet: &app::over_fleet::FleetState,
    small: bool,
) {
    use app::Focus as Pane;
    let draw = |frame: &mut Frame, pane: Pane, area: Rect| match pane {
        Pane::Instances => panes::instances::render(frame, area, app),
        Pane::Operations => panes::operations::render(frame, area, app),
        Pane::Backoffs => panes::backoffs::render(frame, area, app),
        Pane::Activity | Pane::Supervisor => panes::activity::render(frame, area, app),
        Pane::Hosts => panes::hosts::render(frame, area, fleet, app),
    };
    if app.zoomed() {
        fleet.set_drawn_panes(vec![(app.focus(), body)]);
        draw(frame, app.focus(), body);
        return;
    }
    let hosts_height = if small {
        0
    } else {
        u16::try_from(fleet.fleet().hosts.len())
            .unwrap_or(u16::MAX)
            .saturating_add(3)
            .min(10)
    };
    let lower = if small { 6 } else { 8 };
    let activity = if small { 5 } else { 8 };
    let [hosts, instances, row, activity_area] = Layout::vertical([
        Constraint::Length(hosts_height),
        Constraint::Min(4),
        Constraint::Length(lower),
        Constraint::Length(activity),
    ])
    .areas(body);
    let [operations, backoffs] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(row);
    let drawn = vec![
        (Pane::Hosts, hosts),
        (Pane::Instances, instances),
        (Pane::Operations, operations),
        (Pane::Backoffs, backoffs),
        (Pane::Activity, activity_area),
    ];
    for (pane, area) in &drawn {
        if !(small && *pane == Pane::Hosts) {
            draw(frame, *pane, *area);
        }
    }
    fleet.set_drawn_panes(drawn);
}

/// The five panes (those the layout gives room), and the zoom mark.
fn draw_panes(frame: &mut Frame, areas: &Areas, app: &App) {
    let panes: [(Rect, PaneRender); 5] = [
        (areas.instances, panes::instances::render),
        (areas.operations, panes::operations::render),
        (areas.backoffs, panes::backoffs::render),
        (areas.supervisor, panes::supervisor::render),
        (areas.activity, panes::activity::render),
    ];
    for (rect, render) in panes {
        if !rect.is_empty() {
            render(frame, rect, app);
        }
    }
    if app.zoomed() {
        zoom_mark(frame, areas.body());
    }
}

/// The zoomed pane says so at the right of its top border: ` zoomed (z) `,
/// only over border (never over its title: nothing when they would meet).
fn zoom_mark(frame: &mut Frame, pane: Rect) {
    const MARK: &str = " zoomed (z) ";
    let width = u16::try_from(MARK.len()).unwrap_or(u16::MAX);
    if pane.width < width + 3 || pane.height == 0 {
        return;
    }
    let at = Rect::new(pane.right() - width - 1, pane.y, width, 1);
    let buffer = frame.buffer_mut();
    // One border cell kept between the title and the mark.
    let free = (at.x - 1..at.right()).all(|x| {
        buffer
            .cell((x, at.y))
            .is_some_and(|c| matches!(c.symbol(), "═" | "─"))
    });
    if !free {
        return;
    }
    frame.render_widget(Paragraph::new(Line::styled(MARK, theme::muted())), at);
}

/// Reset every cell's foreground and background colour (`NO_COLOR`),
/// keeping the modifiers (bold, dim, reversed, ...).
pub fn strip_colours(buffer: &mut Buffer) {
    for cell in &mut buffer.content {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}
