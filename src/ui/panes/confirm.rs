//! The confirmation dialogs drawn over the panes
//! ([`crate::ui::app::Question`]): a reap, a teardown, a bulk reap or
//! teardown, a cancel of a controller operation.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::centered;
use crate::model::text::sanitize_short;
use crate::model::time::span;
use crate::model::{Instance, Operation, ReapAttempt};
use crate::ui::TeardownInfo;
use crate::ui::theme;

/// The confirmation question for `instance`, naming the command as it
/// will run: `Tear down <name>? This runs: stackless down <name> --json
/// [y/N]` (the real `--down-cmd` argv, shell-quoted for reading). When its
/// operation lock is stale (`liveness`, probed as stackless §2 decides
/// it), the question says so: `Tear down alpha? Its up lock is stale (pid
/// 4242 gone): stackless takes it over. This runs: …`.
#[must_use]
pub(crate) fn confirm_text(
    instance: &Instance,
    liveness: Option<&crate::model::liveness::Liveness>,
    teardown: &TeardownInfo,
) -> String {
    use crate::model::liveness::Liveness;
    let stale = match (liveness, instance.lock.as_deref()) {
        (Some(Liveness::StalePidGone), Some(lock)) => {
            format!(
                " Its {} lock is stale (pid {} gone): stackless takes it over.",
                sanitize_short(&lock.operation, crate::ui::text::CUT_SHORT),
                lock.holder_pid
            )
        }
        (Some(Liveness::StalePidReused), Some(lock)) => {
            format!(
                " Its {} lock is stale (pid {} reused by another process): stackless takes it over.",
                sanitize_short(&lock.operation, crate::ui::text::CUT_SHORT),
                lock.holder_pid
            )
        }
        _ => String::new(),
    };
    format!(
        "Tear down {}?{stale} This runs: {} [y/N]",
        sanitize_short(&instance.name, crate::ui::text::CUT_SHORT),
        sanitize_short(
            &teardown.line_for(&instance.name),
            crate::ui::text::CUT_LONG
        )
    )
}

/// The reap question (`r`, `:reap NAME`) for `instance` at `now` (unix
/// seconds), naming the command as it will run: `Reap golf (lease expired
/// 5m 32s ago)? This runs: stackless down golf --json [y/N]`. When
/// `attempt` (its `reap_attempts` row) still backs off at `now`, the reap
/// skips the backoff the reaper waits out (stackless §6 step 4), and says
/// how long was left: `… ago)? This skips its backoff after 3 failed
/// reaps: 2m 53s left. This runs: …`.
#[must_use]
pub(crate) fn reap_text(
    instance: &Instance,
    attempt: Option<&ReapAttempt>,
    now: i64,
    teardown: &TeardownInfo,
) -> String {
    let mut text = format!(
        "Reap {}",
        sanitize_short(&instance.name, crate::ui::text::CUT_SHORT)
    );
    if let Some(lease) = instance.lease.filter(|l| l.expired(now)) {
        text.push_str(&format!(
            " (lease expired {} ago)",
            span(now.saturating_sub(lease.expires_at))
        ));
    }
    text.push('?');
    if let Some(attempt) = attempt.filter(|a| a.next_retry_at > now) {
        let reaps = if attempt.attempts == 1 {
            "1 failed reap".to_owned()
        } else {
            format!("{} failed reaps", attempt.attempts)
        };
        text.push_str(&format!(
            " This skips its backoff after {reaps}: {} left.",
            span(attempt.next_retry_at.saturating_sub(now))
        ));
    }
    text.push_str(&format!(
        " This runs: {} [y/N]",
        sanitize_short(
            &teardown.line_for(&instance.name),
            crate::ui::text::CUT_LONG
        )
    ));
    text
}

/// Draw the reap confirmation dialog for `instance` ([`reap_text`], its
/// backoff as the snapshot shown at `now` has it), centred in `area`.
pub(crate) fn render_confirm_reap(
    frame: &mut Frame,
    area: Rect,
    instance: &Instance,
    attempt: Option<&ReapAttempt>,
    now: i64,
    teardown: &TeardownInfo,
    note: Option<&str>,
) {
    render_question(
        frame,
        area,
        " Confirm reap ",
        with_note(reap_text(instance, attempt, now, teardown), note),
    );
}

/// Draw the teardown confirmation dialog for `instance` ([`confirm_text`],
/// its lock's `liveness` as probed), centred in `area`.
pub(crate) fn render_confirm(
    frame: &mut Frame,
    area: Rect,
    instance: &Instance,
    liveness: Option<&crate::model::liveness::Liveness>,
    teardown: &TeardownInfo,
    note: Option<&str>,
) {
    render_question(
        frame,
        area,
        " Confirm teardown ",
        with_note(confirm_text(instance, liveness, teardown), note),
    );
}

/// Draw the bulk `r`/`d` confirmation dialog (how many, the first names),
/// centred in `area`.
pub(crate) fn render_confirm_bulk(
    frame: &mut Frame,
    area: Rect,
    bulk: &crate::ui::app::Bulk,
    note: Option<&str>,
) {
    let title = match bulk.intent {
        crate::reaper::Intent::Reap => " Confirm reap ",
        crate::reaper::Intent::TearDown => " Confirm teardown ",
    };
    render_question(frame, area, title, with_note(bulk.question(), note));
}

/// The question `d` asks on an instance with a pending controller
/// operation (stackless 0.4.0): `Queue a teardown of alpha behind its
/// running up and 1 queued verify? It runs after the pending operations.
/// This runs: stackless down alpha --no-wait --json [y/N]`: `op` is the
/// operation it really waits behind, `others` the rest pending in words.
#[must_use]
pub(crate) fn queue_down_text(
    instance: &Instance,
    (op, others): (&Operation, &str),
    teardown: &TeardownInfo,
) -> String {
    let name = sanitize_short(&instance.name, crate::ui::text::CUT_SHORT);
    let line = teardown
        .queue_line_for(&instance.name)
        .unwrap_or_else(|| crate::model::name::REFUSED_NOT_DNS_SAFE.to_owned());
    format!(
        "Queue a teardown of {name} behind its {} {}{}? It runs after the {}. \
         This runs: {} [y/N]",
        sanitize_short(op.status.as_str(), crate::ui::text::CUT_SHORT),
        sanitize_short(&op.verb, crate::ui::text::CUT_SHORT),
        sanitize_short(others, crate::ui::text::CUT_LONG),
        if others.is_empty() {
            "current operation"
        } else {
            "pending operations"
        },
        sanitize_short(&line, crate::ui::text::CUT_LONG)
    )
}

/// Draw the queue-a-teardown dialog ([`queue_down_text`]), centred in
/// `area`.
pub(crate) fn render_confirm_queue_down(
    frame: &mut Frame,
    area: Rect,
    instance: &Instance,
    behind: (&Operation, &str),
    teardown: &TeardownInfo,
    note: Option<&str>,
) {
    render_question(
        frame,
        area,
        " Confirm queued teardown ",
        with_note(queue_down_text(instance, behind, teardown), note),
    );
}

/// Draw the cancel confirmation dialog for `op`
/// ([`crate::ui::opview::cancel_question`], run with `program`), centred
/// in `area`.
pub(crate) fn render_confirm_cancel(
    frame: &mut Frame,
    area: Rect,
    (op, program): (&Operation, &str),
    note: Option<&str>,
) {
    render_question(
        frame,
        area,
        " Confirm cancel ",
        with_note(crate::ui::opview::cancel_question(op, program), note),
    );
}

/// Draw the renew or verify confirmation, centred in `area`.
pub(crate) fn render_confirm_verbs(
    frame: &mut Frame,
    area: Rect,
    question: &crate::ui::app::VerbQuestion,
    note: Option<&str>,
) {
    let title = match question.requests.first().map(|r| r.verb) {
        Some(crate::model::verbs::Verb::Verify) => " Confirm verify ",
        _ => " Confirm renew ",
    };
    render_question(frame, area, title, with_note(question.question(), note));
}

/// `text` (a question ending ` [y/N]`) with `note` said before its
/// `[y/N]`: the note of a command that starts stackless's controller
/// ([`crate::model::rules::controller_start_note`]).
#[must_use]
pub(crate) fn with_note(text: String, note: Option<&str>) -> String {
    let Some(note) = note else {
        return text;
    };
    let (asked, tail) = text
        .strip_suffix(" [y/N]")
        .map_or((text.as_str(), ""), |asked| (asked, " [y/N]"));
    let stop = if asked.ends_with(['.', '?', '!']) {
        ""
    } else {
        "."
    };
    format!("{asked}{stop} {note}{tail}")
}

/// Draw `text` in a box centred in `area`, with the same margin on both
/// sides: a box one column narrower than `area` (an odd margin) is made as
/// wide as it, so it never covers one pane edge and leaves the other
/// (`║…│`).
fn render_question(frame: &mut Frame, area: Rect, title: &'static str, text: String) {
    let mut width = u16::try_from(text.width() + 4)
        .unwrap_or(u16::MAX)
        .min(area.width);
    if (area.width - width) % 2 == 1 {
        width += 1;
    }
    // Wrapped inside the borders: one more row per line the text needs.
    let inner = usize::from(width.min(area.width).saturating_sub(4)).max(1);
    let rows = u16::try_from(text.width().div_ceil(inner)).unwrap_or(u16::MAX);
    let rect = centered(area, width, rows.saturating_add(4));
    let block = Block::bordered()
        .title(Span::styled(title, theme::focused_border()))
        .border_type(theme::FOCUSED_BORDER)
        .border_style(theme::expired());
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(vec![
            Line::raw(""),
            Line::styled(text, Style::new().add_modifier(Modifier::BOLD)).centered(),
        ])
        .wrap(Wrap { trim: true })
        .block(block),
        rect,
    );
}

/// A question over a fleet (its lines as the fleet asks them: the host,
/// the argv run there, what is skipped, `[y/N]`), centred in `area` (the
/// fleet's body), at most 100 columns wide, wrapped.
pub(crate) fn render_confirm_lines(frame: &mut Frame, area: Rect, lines: &[String]) {
    let width = area.width.saturating_sub(8).min(100);
    let text: Vec<Line> = lines.iter().map(|l| Line::raw(l.clone())).collect();
    let inner_width = usize::from(width.saturating_sub(2)).max(1);
    let rows: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(inner_width).max(1))
        .sum();
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    let block = crate::ui::panes::pane_block(crate::ui::panes::title("Confirm", "", true), true);
    frame.render_widget(
        Paragraph::new(text).block(block).wrap(Wrap { trim: false }),
        popup,
    );
}

#[cfg(test)]
mod tests {
    use super::reap_text;

    #[test]
    fn a_question_one_column_narrower_than_the_area_takes_it_whole() {
        use ratatui::widgets::Block;
        let text = "Tear down alpha? This runs: stackless down alpha --json [y/N]";
        let width = u16::try_from(text.len() + 5).unwrap_or(u16::MAX);
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, 9)).unwrap();
        terminal
            .draw(|frame| {
                let area = frame.area();
                frame.render_widget(Block::bordered(), area);
                super::render_question(frame, area, " Confirm teardown ", text.to_owned());
            })
            .unwrap();
        let buffer = terminal.backend().buffer();
        let row = |y: u16| -> String {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect()
        };
        let line = row(4);
        assert!(line.contains("Tear down alpha?"), "{line}");
        assert!(line.starts_with('║') && line.ends_with('║'), "{line}");
    }
    use crate::model::{Instance, Lease, ReapAttempt, Status};
    use crate::ui::TeardownInfo;

    const NOW: i64 = 1_795_960_686;

    fn instance(name: &str) -> Instance {
        Instance {
            name: name.into(),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(NOW - 1000),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 60,
                expires_at: NOW - 75,
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        }
    }

    fn attempt(attempts: i64, next_retry_at: i64) -> ReapAttempt {
        ReapAttempt {
            instance: "web".into(),
            attempts,
            last_error: "E: failed".into(),
            next_retry_at,
        }
    }

    #[test]
    fn the_reap_question_names_the_instance_and_the_backoff_left() {
        let teardown = TeardownInfo::default();
        let web = instance("web");
        assert_eq!(
            reap_text(&web, None, NOW, &teardown),
            "Reap web (lease expired 1m 15s ago)? This runs: stackless down web --json [y/N]"
        );
        assert_eq!(
            reap_text(&web, Some(&attempt(1, NOW + 42)), NOW, &teardown),
            "Reap web (lease expired 1m 15s ago)? This skips its backoff after 1 failed reap: \
             42s left. This runs: stackless down web --json [y/N]"
        );
        // A backoff already over is not skipped: not named.
        assert_eq!(
            reap_text(&web, Some(&attempt(4, NOW)), NOW, &teardown),
            "Reap web (lease expired 1m 15s ago)? This runs: stackless down web --json [y/N]"
        );
        // A hostile name is drawn inert.
        assert_eq!(
            reap_text(&instance("a\u{1b}[2Jb"), None, NOW, &teardown),
            "Reap a␛[2Jb (lease expired 1m 15s ago)? This runs: stackless down 'a␛[2Jb' --json [y/N]"
        );
    }
}
