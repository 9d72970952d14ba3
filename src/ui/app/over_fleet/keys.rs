//! The keys over a fleet (the App's input path for the fleet's actions): moving, the filter and sort, marks, the actions
//! (`r`, `d`, `c`, `P`, `R`, `:`) with their confirmations, and the text
//! views (Enter, `l`, `e`, `?`). Each action goes to the owning host's
//! agent as the command its key mirrors (docs/protocol.md "Commands").

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};

use super::actions::{Verb, ctrl, plain};
use super::{FleetEffect, FleetState, Focus, Panes, Said};
use crate::model::fleet::rows::{Instance, InstanceKey, Operation};
use crate::model::text::sanitize_short;
use crate::ui::keys::{self, Context, Input};

impl FleetState {
    /// A key at `now_ms`, taken as read after whatever is on screen was
    /// drawn; what to send where.
    pub fn key(&mut self, key: KeyEvent, now_ms: i64, panes: &mut Panes<'_>) -> Vec<FleetEffect> {
        self.now = now_ms.div_euclid(1000);
        self.dirty = true;
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if ctrl(&key, 'c') {
            self.quit = true;
            return Vec::new();
        }
        self.pane_key(key, panes)
    }

    pub(super) fn pane_key(&mut self, key: KeyEvent, panes: &mut Panes<'_>) -> Vec<FleetEffect> {
        let effects = self.pane_key_now(key, panes);
        if self.shown.view.is_some() {
            // A text view opened: its footer shows only what is said in it.
            self.said = Some(Said::Clear);
        }
        effects
    }

    fn pane_key_now(&mut self, key: KeyEvent, panes: &mut Panes<'_>) -> Vec<FleetEffect> {
        if ctrl(&key, 'f') {
            self.shown.asked = Some(super::Asked::Jump);
            return Vec::new();
        }
        if ctrl(&key, 'a') {
            self.mark_all(panes);
            return Vec::new();
        }
        if !plain(&key) {
            self.refuse_key(key, &[Context::Panes]);
            return Vec::new();
        }
        match key.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('?') => self.help(),
            KeyCode::Tab => *panes.focus = panes.focus.next_over_fleet(false),
            KeyCode::BackTab => *panes.focus = panes.focus.next_over_fleet(true),
            KeyCode::Up | KeyCode::Char('k') => self.step(panes, -1),
            KeyCode::Down | KeyCode::Char('j') => self.step(panes, 1),
            KeyCode::PageUp => self.step(panes, -20),
            KeyCode::PageDown => self.step(panes, 20),
            KeyCode::Home | KeyCode::Char('g') => self.step(panes, i64::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.step(panes, i64::MAX / 2),
            KeyCode::Char('/') => self.shown.asked = Some(super::Asked::Filter),
            KeyCode::Char(':') => self.shown.asked = Some(super::Asked::Command),
            KeyCode::Char('s') => {
                self.sort = self.sort.next_over_fleet();
                self.reorder();
            }
            KeyCode::Char('S') => {
                self.reversed = !self.reversed;
                self.reorder();
            }
            KeyCode::Char(' ') => self.toggle_mark(panes),
            KeyCode::Esc => self.escape(panes),
            KeyCode::Char('r') => self.ask_instances(Verb::Reap, panes),
            KeyCode::Char('d') => self.ask_instances(Verb::Down, panes),
            KeyCode::Char('c') => self.ask_cancel(panes),
            KeyCode::Char('L') => self.ask_renew_verify(panes, true),
            KeyCode::Char('v') => self.ask_renew_verify(panes, false),
            KeyCode::Char('P') => return self.reaper_key(panes, true),
            KeyCode::Char('R') => return self.reaper_key(panes, false),
            KeyCode::Enter => return self.enter(panes),
            KeyCode::Char('l') => return self.open_logs(),
            KeyCode::Char('e') => self.whole(panes),
            KeyCode::Char('y') => self.copy(false),
            KeyCode::Char('Y') => self.copy(true),
            _ => {
                self.refuse_key(key, &[Context::Panes]);
            }
        }
        Vec::new()
    }

    /// A key the fleet does not take in `contexts`: when the key
    /// table's action for it is refused over a fleet
    /// ([`crate::ui::keys::Action::on_fleet`]), the refusal is said;
    /// `true` then.
    pub(super) fn refuse_key(&mut self, key: KeyEvent, contexts: &[Context]) -> bool {
        let input = Input::Key(key.code, key.modifiers);
        let Some(action) = contexts
            .iter()
            .find_map(|context| keys::resolve(*context, input))
        else {
            return false;
        };
        match action.on_fleet() {
            Err(why) => {
                self.say(why, true);
                true
            }
            Ok(()) => false,
        }
    }

    /// A mouse event on the panes, as on one host: a click focuses the
    /// pane under the pointer (on Instances, Operations, Backoffs or Hosts
    /// it selects the row clicked), the wheel moves that pane's selection
    /// by 3. Under a text view or a prompt nothing.
    pub fn mouse(&mut self, event: MouseEvent, panes: &mut Panes<'_>) {
        let at = ratatui::layout::Position::new(event.column, event.row);
        let hit = self
            .drawn_panes
            .borrow()
            .iter()
            .find(|(_, area)| area.contains(at))
            .copied();
        let Some((pane, area)) = hit else {
            return;
        };
        self.dirty = true;
        match event.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                *panes.focus = pane;
                self.click_row(panes, pane, (area, at.y));
            }
            MouseEventKind::ScrollUp => {
                *panes.focus = pane;
                self.step(panes, -3);
            }
            MouseEventKind::ScrollDown => {
                *panes.focus = pane;
                self.step(panes, 3);
            }
            _ => {}
        }
    }

    /// Select the row drawn at line `y` of `pane` (drawn in `area`): its
    /// border, then (Instances, Hosts) a header line, then the rows from
    /// the window the selection keeps on screen.
    fn click_row(
        &mut self,
        panes: &mut Panes<'_>,
        pane: Focus,
        (area, y): (ratatui::layout::Rect, u16),
    ) {
        let header = u16::from(matches!(pane, Focus::Instances | Focus::Hosts));
        let top = area.y + 1 + header;
        let height = usize::from(area.height.saturating_sub(2 + header));
        if y < top || usize::from(y - top) >= height {
            return;
        }
        let len = match pane {
            Focus::Instances => self.rows().len(),
            Focus::Operations => self.operations().len(),
            Focus::Backoffs => self.backoffs().len(),
            Focus::Activity | Focus::Supervisor => self.fleet.activity.len(),
            Focus::Hosts => self.fleet.hosts.len(),
        };
        let cursor = panes.cursor(pane).unwrap_or_else(|| self.selected());
        let first = crate::ui::panes::hosts::window(cursor, len, height);
        let at = first + usize::from(y - top);
        if at < len {
            let by = i64::try_from(at).unwrap_or(0) - i64::try_from(cursor).unwrap_or(0);
            self.step(panes, by);
        }
    }

    /// `y`: copy the selected instance's name; `Y`: the teardown its host's
    /// agent runs for it (`This runs there: ...`), as the console's `Y`
    /// copies its own. The flash says it was sent (the terminal may drop
    /// OSC 52), the first time with how to let it through, as on one host.
    pub(super) fn copy(&mut self, down: bool) {
        let Some((host, instance)) = self.selected_instance() else {
            self.say("nothing to copy", true);
            return;
        };
        let name = instance.key.name.clone();
        if !instance.dns_safe {
            self.say(
                format!(
                    "{} on {} is not a DNS-safe name: never acted upon",
                    sanitize_short(&name, 96),
                    self.host_name(host)
                ),
                true,
            );
            return;
        }
        let text = if down {
            self.runs_there(host, "down", &name)
        } else {
            name
        };
        let shown = sanitize_short(&text, 192);
        let flash = if self.shown.clipboard_told {
            format!("sent to the terminal's clipboard (OSC 52): {shown}")
        } else {
            self.shown.clipboard_told = true;
            format!("OSC 52 sent; not pasted? tmux: set -g set-clipboard on · {shown}")
        };
        self.say(flash, false);
        self.copies.push(text);
    }

    /// Ctrl-A: mark every instance the filter shows (Instances).
    pub(super) fn mark_all(&mut self, panes: &mut Panes<'_>) {
        if *panes.focus != Focus::Instances {
            self.say("Ctrl-A marks Instances (Tab to it)", true);
            return;
        }
        let shown: Vec<(usize, InstanceKey)> = self
            .rows()
            .iter()
            .map(|r| {
                (
                    r.host,
                    self.fleet.hosts[r.host].instances()[r.index].key.clone(),
                )
            })
            .collect();
        let count = shown.len();
        panes.marks.extend(shown);
        self.say(format!("{count} marked"), false);
    }

    /// Select the row whose name (or `HOST/NAME`) matches `name` best:
    /// equal, else its start, else inside it; none says so. The App's
    /// jump line (Ctrl-F) hands its Enter here.
    pub fn jump(&mut self, name: &str, focus: &mut Focus) {
        // Each row as its NAME and as `HOST/NAME` (the `:` line's words,
        // which Ctrl-F's Tab offers for a name on several hosts).
        let name = name.trim();
        let words: Vec<(String, String)> = self
            .rows()
            .iter()
            .map(|r| {
                let host = &self.fleet.hosts[r.host];
                let row = host.instances()[r.index].key.name.clone();
                let named = format!("{}/{row}", host.name);
                (row, named)
            })
            .collect();
        let found = [
            |n: &str, w: &str| n == w,
            |n: &str, w: &str| n.starts_with(w),
            |n: &str, w: &str| n.contains(w),
        ]
        .iter()
        .find_map(|matches| {
            words
                .iter()
                .position(|(n, hn)| matches(n, name) || matches(hn, name))
        });
        match found {
            Some(at) if !name.is_empty() => {
                *focus = Focus::Instances;
                self.selected.set(at);
                self.remember();
            }
            _ => self.say(
                format!("no instance shown matches {}", sanitize_short(name, 64)),
                true,
            ),
        }
    }

    pub(super) fn step(&mut self, panes: &mut Panes<'_>, by: i64) {
        let focus = *panes.focus;
        let len = match focus {
            Focus::Instances => self.rows().len(),
            Focus::Operations => self.operations().len(),
            Focus::Backoffs => self.backoffs().len(),
            Focus::Activity | Focus::Supervisor => self.fleet.activity.len(),
            Focus::Hosts => self.fleet.hosts.len(),
        };
        let cursor = panes.cursor(focus).unwrap_or_else(|| self.selected());
        let at = i64::try_from(cursor).unwrap_or(0);
        let last = i64::try_from(len).unwrap_or(0) - 1;
        let to = usize::try_from(at.saturating_add(by).clamp(0, last.max(0))).unwrap_or(0);
        if focus == Focus::Instances {
            self.selected.set(to);
            self.remember();
        } else {
            panes.set_cursor(focus, to);
        }
    }

    /// The merged Operations: pending first (oldest first), then finished
    /// ones, newest first.
    #[must_use]
    pub fn operations(&self) -> Vec<(usize, &Operation)> {
        let version: u64 = self.fleet.hosts.iter().map(|h| h.version).sum();
        let mut cache = self.ops_order.borrow_mut();
        if cache.as_ref().is_none_or(|(at, _)| *at != version) {
            let mut all: Vec<(usize, usize)> = self
                .fleet
                .hosts
                .iter()
                .enumerate()
                .flat_map(|(h, host)| (0..host.operations().len()).map(move |i| (h, i)))
                .collect();
            let get = |(h, i): &(usize, usize)| &self.fleet.hosts[*h].operations()[*i];
            all.sort_by(|x, y| {
                let (a, b) = (get(x), get(y));
                (
                    !a.pending(),
                    a.pending().then_some(a.created_at),
                    std::cmp::Reverse(a.updated_at),
                    x.0,
                )
                    .cmp(&(
                        !b.pending(),
                        b.pending().then_some(b.created_at),
                        std::cmp::Reverse(b.updated_at),
                        y.0,
                    ))
            });
            *cache = Some((version, all));
        }
        cache
            .as_ref()
            .map(|(_, all)| {
                all.iter()
                    .map(|&(h, i)| (h, &self.fleet.hosts[h].operations()[i]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The merged Backoffs, soonest retry first.
    #[must_use]
    pub fn backoffs(&self) -> Vec<(usize, &crate::model::fleet::rows::Backoff)> {
        let mut all: Vec<_> = self
            .fleet
            .hosts
            .iter()
            .enumerate()
            .flat_map(|(h, host)| host.backoffs().map(move |b| (h, b)))
            .collect();
        all.sort_by(|(ha, a), (hb, b)| {
            (a.next_retry_at, ha, &a.instance).cmp(&(b.next_retry_at, hb, &b.instance))
        });
        all
    }

    pub(super) fn selected_instance(&self) -> Option<(usize, &Instance)> {
        let row = self.selected_row()?;
        Some((row.host, &self.fleet.hosts[row.host].instances()[row.index]))
    }

    /// The host the reaper keys act on: the Hosts pane's selection, else
    /// the selected instance's host.
    pub(super) fn target_host(&self, panes: &Panes<'_>) -> Option<usize> {
        if *panes.focus == Focus::Hosts {
            return Some(*panes.hosts).filter(|h| *h < self.fleet.hosts.len());
        }
        self.selected_instance().map(|(h, _)| h)
    }

    pub(super) fn toggle_mark(&mut self, panes: &mut Panes<'_>) {
        if *panes.focus != Focus::Instances {
            return;
        }
        let Some((host, instance)) = self.selected_instance() else {
            return;
        };
        let key = (host, instance.key.clone());
        if !panes.marks.remove(&key) {
            panes.marks.insert(key);
        }
        self.step(panes, 1);
    }

    pub(super) fn escape(&mut self, panes: &mut Panes<'_>) {
        let marks = &mut *panes.marks;
        if !self.filter_text.is_empty() {
            self.set_filter(String::new());
        } else if !marks.is_empty() {
            let count = marks.len();
            marks.clear();
            self.say(format!("{count} marks cleared"), false);
        }
    }

    /// The filter typed (the console's one filter, `crate::ui::filter`):
    /// text that cannot be read keeps no row, and says why.
    /// Filter every host's rows by `text` (`crate::ui::filter`; the App's
    /// filter prompt hands each edit here); a text that cannot be read
    /// keeps no row and says why.
    pub fn set_filter(&mut self, text: String) {
        self.filter = match crate::ui::filter::parse(&text) {
            Ok(filter) => {
                // What the text typed so far could not read is gone.
                if !matches!(self.said, Some(Said::Say { .. })) {
                    self.said = Some(Said::ClearFilterError);
                }
                filter
            }
            Err(why) => {
                let said = format!("filter \"{text}\": {why}");
                self.say(crate::model::text::sanitize_short(&said, 240), true);
                crate::ui::filter::Filter::nothing()
            }
        };
        self.filter_text = text;
        self.reorder();
    }
}
