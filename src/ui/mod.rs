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
//! replaces the panes while it is open; the operation overlay (Enter on
//! Operations) is drawn over them, and the full-text view ([`fulltext`],
//! Enter on a log line or `e` anywhere) over all of them. Below [`MIN_WIDTH`] x [`MIN_HEIGHT`] only a
//! one-line notice is drawn.
//!
//! With `NO_COLOR` ([`App::no_color`]) every colour is dropped after
//! drawing, in one place ([`strip_colours`]); bold, dim, reversed and the
//! border shapes remain, and every state also has a mark or a word.

pub mod app;
pub mod clipboard;
pub mod command;
pub mod detail;
pub mod detail_services;
pub mod detail_v14;
pub mod filter;
pub mod fulltext;
pub mod keys;
pub mod opview;
pub mod panes;
pub mod spark;
pub mod theme;
pub mod view;

pub use app::{App, AppConfig, Command, Flash, FlashLevel, Focus, SortKey};

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

/// The narrowest terminal (columns) the full layout is drawn in.
pub const MIN_WIDTH: u16 = 60;
/// The shortest terminal (rows) the full layout is drawn in.
pub const MIN_HEIGHT: u16 = 15;

/// The areas of the full layout for a frame of `area`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
/// than a third of the height, so the panes always get room.
#[must_use]
pub fn layout(app: &App, area: Rect) -> Areas {
    let header = panes::header::height(app, area.width).min((area.height / 3).max(2));
    let (header, instances, operations, middle, activity, footer) =
        if app.snapshot().generation.has_operations() {
            let [header, instances, operations, middle, activity, footer] = Layout::vertical([
                Constraint::Length(header),
                Constraint::Fill(5),
                Constraint::Fill(4),
                Constraint::Fill(2),
                Constraint::Fill(3),
                Constraint::Length(1),
            ])
            .areas(area);
            (header, instances, operations, middle, activity, footer)
        } else {
            let [header, instances, middle, activity, footer] = Layout::vertical([
                Constraint::Length(header),
                Constraint::Fill(5),
                Constraint::Fill(3),
                Constraint::Fill(3),
                Constraint::Length(1),
            ])
            .areas(area);
            (header, instances, Rect::default(), middle, activity, footer)
        };
    let [backoffs, supervisor] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(middle);
    Areas {
        header,
        instances,
        operations,
        backoffs,
        supervisor,
        activity,
        footer,
    }
}

impl Areas {
    /// Where the detail view goes: everything between header and footer.
    #[must_use]
    pub fn body(&self) -> Rect {
        self.instances.union(self.activity)
    }
}

/// Draw the whole console for `app` into `frame` (one ratatui layout,
/// recomputed every frame, so a resize needs nothing else). Never panics,
/// whatever the frame size: below [`MIN_WIDTH`] x [`MIN_HEIGHT`] it draws
/// `terminal too small: WxH, needs 60x15`. The layout is remembered in the
/// app for mouse events.
pub fn draw(frame: &mut Frame, app: &App) {
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
    if app.detail().is_some() {
        panes::detail::render(frame, areas.body(), app);
    } else {
        panes::instances::render(frame, areas.instances, app);
        if !areas.operations.is_empty() {
            panes::operations::render(frame, areas.operations, app);
        }
        panes::backoffs::render(frame, areas.backoffs, app);
        panes::supervisor::render(frame, areas.supervisor, app);
        panes::activity::render(frame, areas.activity, app);
    }
    if app.command_line().text().is_some() {
        panes::command::render(frame, areas.footer, app);
    } else {
        panes::footer::render(frame, areas.footer, app);
    }
    if let Some((id, op)) = app.operation_open() {
        panes::operation::render(frame, area, app, id, op);
    }
    if app.full_text().is_some() {
        panes::fulltext::render(frame, areas.body(), app);
    }
    if let Some(instance) = app.confirming() {
        panes::overlay::render_confirm(frame, area, instance);
    } else if let Some(bulk) = app.confirming_bulk() {
        panes::overlay::render_confirm_bulk(frame, area, bulk);
    } else if let Some(op) = app.confirming_cancel() {
        panes::overlay::render_confirm_cancel(frame, area, op);
    } else if app.help_open() {
        panes::help::render(frame, area, app);
    }
    if app.no_color() {
        strip_colours(frame.buffer_mut());
    }
}

/// Reset every cell's foreground and background colour (`NO_COLOR`),
/// keeping the modifiers (bold, dim, reversed, ...).
pub fn strip_colours(buffer: &mut Buffer) {
    for cell in &mut buffer.content {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
    }
}
