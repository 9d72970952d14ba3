//! The command line's state ([`CommandLine`], [`super::Layer::Command`]):
//! the text typed, where Up/Down is in the history, the Tab cycle.

/// The command line while it is open ([`super::Layer::Command`]); the
/// history outlives it (in the app).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// The text after `:`.
    pub(super) text: String,
    /// Where Up/Down is in the history (`None`: the line being typed).
    pub(super) at: Option<usize>,
    /// The Tab cycle: where the completed word starts, the candidates and
    /// the one shown.
    pub(super) cycle: Option<(usize, Vec<String>, usize)>,
    /// Opened by Ctrl-F: the line is a name to jump to, never a command.
    pub(super) jump: bool,
}

impl CommandLine {
    /// The text typed.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The completion candidates of the running Tab cycle, with the one
    /// shown.
    #[must_use]
    pub fn candidates(&self) -> Option<(&[String], usize)> {
        self.cycle.as_ref().map(|(_, c, i)| (c.as_slice(), *i))
    }

    /// Whether the line is a jump (Ctrl-F): Enter selects the instance
    /// matching it best and never runs a command, whatever the text.
    #[must_use]
    pub fn jumping(&self) -> bool {
        self.jump
    }
}
