//! `y` and `Y`: copy the target instance's name, or the `down` command
//! line that would tear it down (the real argv: `--down-cmd`, or
//! `stackless down NAME --json`, shell-quoted for display), to the
//! clipboard. The console writes the OSC 52 sequence
//! ([`crate::ui::clipboard::osc52`]); this only decides the text, and the
//! flash says it was sent (the terminal may drop it), the first time with
//! how to allow it.

use super::{App, Effect, FlashLevel};
use crate::reaper::DownCommand;

/// The teardown template when the console did not say (`--down-cmd`'s
/// default).
const DEFAULT_DOWN: &str = "stackless down {name} --json";

/// What a copy's flash says was done: the console cannot know the
/// terminal kept it (a terminal or tmux may drop OSC 52), so never
/// "copied".
pub(super) const SENT: &str = "sent to the terminal's clipboard (OSC 52)";

/// The first copy's flash of a session under tmux: how to let OSC 52
/// through, first (so an 80-column footer shows it whole), then what was
/// sent.
pub(super) const ALLOW: &str = "OSC 52 sent; not pasted? tmux: set -g set-clipboard on";

/// The first copy's flash of a session outside tmux: the terminal's own
/// setting decides.
pub(super) const ALLOW_TERMINAL: &str =
    "OSC 52 sent; not pasted? allow clipboard access (OSC 52) in the terminal";

impl App {
    /// Whether the console runs inside tmux (the console, once, before the
    /// first frame, from `TMUX`).
    pub const fn set_under_tmux(&mut self, under_tmux: bool) {
        self.settings.under_tmux = under_tmux;
    }

    /// The flash of a copy of `what` (sanitized, as shown): [`SENT`]; the
    /// first time in this session [`ALLOW`] (under tmux) or
    /// [`ALLOW_TERMINAL`] before it.
    pub(super) fn sent_to_clipboard(&mut self, what: &str) {
        let text = if self.settings.clipboard_told {
            format!("{SENT}: {what}")
        } else {
            self.settings.clipboard_told = true;
            let allow = if self.settings.under_tmux {
                ALLOW
            } else {
                ALLOW_TERMINAL
            };
            format!("{allow} · {what}")
        };
        self.set_flash(FlashLevel::Info, text);
    }

    /// The teardown command `Y` shows (the console sets the one it runs).
    pub fn set_down_command(&mut self, down: DownCommand) {
        self.settings.down = Some(down);
    }

    /// `y`: copy the target's name (the detail view's instance, else the
    /// selected one).
    pub(super) fn copy_name(&mut self) -> Option<Effect> {
        let name = match self.target() {
            Ok(instance) => instance.name,
            Err(_) => {
                self.set_flash(FlashLevel::Warning, "nothing to copy".into());
                return None;
            }
        };
        let shown = crate::model::text::sanitize_short(&name, crate::ui::text::CUT_SHORT);
        self.sent_to_clipboard(&shown);
        Some(Effect::Copy { text: name })
    }

    /// `Y`: copy the `down` command line for the target, shell-quoted.
    pub(super) fn copy_down(&mut self) -> Option<Effect> {
        let Ok(instance) = self.target() else {
            self.set_flash(FlashLevel::Warning, "nothing to copy".into());
            return None;
        };
        let default;
        let down = match &self.settings.down {
            Some(down) => down,
            None => {
                default = DownCommand::parse(DEFAULT_DOWN).ok()?;
                &default
            }
        };
        let Some(argv) = down.argv_for(&instance.name) else {
            self.refuse(
                &instance.name,
                crate::model::name::REFUSED_NOT_DNS_SAFE.to_owned(),
            );
            return None;
        };
        // Copied as shown: a credential in `--down-cmd` is redacted in what
        // leaves through the terminal too.
        let line = crate::reaper::teardown::shell_line(&crate::model::redact::shown_argv(&argv));
        let shown = crate::model::text::sanitize_short(&line, crate::ui::text::CUT_SHORT * 2);
        self.sent_to_clipboard(&shown);
        Some(Effect::Copy { text: line })
    }
}
