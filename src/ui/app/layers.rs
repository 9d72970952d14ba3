//! The views drawn over the panes, as one stack ([`Layers`]): the top layer
//! gets the keys ([`Layer::context`]) and is drawn last (`crate::ui::draw`).
//! Which layer goes over which is written once, as the order of
//! [`LayerKind`]: a layer opened below one already open (an answer
//! arriving under the help, say) goes to its place, not on top. Model:
//! gitui's popup stack.
//!
//! Adding an overlay: a [`Layer`] variant and its [`LayerKind`] here, its
//! drawing (`crate::ui::draw` and a pane), its keys (`crate::ui::keys`).

use std::time::Instant;

use super::bulk::Bulk;
use super::command_line::CommandLine;
use super::full_view::FullView;
use super::help_view::HelpView;
use super::host_view::HostView;
use super::logs_view::LogsView;
use super::operation_view::OperationView;
use crate::model::{Instance, Operation};
use crate::ui::detail::Detail;
use crate::ui::keys::Context;

/// A question awaiting `y` (anything else: no).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// Reap this instance now (`r`, `:reap NAME`), as the snapshot showed
    /// it: its lease expired; a backoff it is inside is skipped.
    Reap(Instance),
    /// Tear this instance down (`d`), as the snapshot showed it.
    TearDown(Instance),
    /// Queue a teardown of this instance behind its pending controller
    /// operation (`d` on a schema-14 store): the instance and the
    /// operation it would really wait behind (the running one, else the
    /// newest queued) as the snapshot showed them, and the others pending
    /// in words (` and 1 queued verify`; [`crate::model::op_rules::queue_spot`]).
    QueueDown(Instance, Box<Operation>, String),
    /// Cancel this controller operation (`c`, stackless 0.4.0).
    Cancel(Operation),
    /// Reap or tear down the marked instances (`r`/`d` on marks, `:reap`,
    /// `:down`).
    Bulk(Bulk),
    /// Renew or verify these instances (`L`, `v`, `:renew`, `:verify`;
    /// stackless 0.4.0).
    Verbs(super::VerbQuestion),
    /// Send these commands to their hosts (a question over a fleet: each
    /// names its host and the argv run there).
    Fleet(super::fleet_question::FleetQuestion),
}

/// The confirmation dialog: its question and when it was first drawn
/// (`None` before its first frame): keys read before then do not answer it
/// ([`crate::model::confirm::answers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// What is asked.
    pub question: Question,
    /// When the dialog began to be drawn first.
    pub shown: Option<Instant>,
}

/// One view over the panes.
#[derive(Debug)]
pub enum Layer {
    /// An instance's detail (Enter on Instances).
    Detail(Detail),
    /// A host's text view over a fleet: an instance's detail or logs read
    /// over its host's agent (Enter, `l`).
    HostText(Box<HostView>),
    /// The filter prompt (`/`): the filter's text lives with the
    /// instances table; this layer is the prompt having the keyboard.
    Filter,
    /// The logs view (`l`).
    Logs(LogsView),
    /// The operation overlay (Enter on Operations): the operation's id and
    /// its events as read.
    Operation(OperationView),
    /// The whole text of a line or document (Enter on a cut line, `e`).
    FullText(FullView),
    /// The command line (`:`, Ctrl-F).
    Command(CommandLine),
    /// The help (`?`).
    Help(HelpView),
    /// A confirmation dialog.
    Confirm(Confirm),
}

/// The kinds of [`Layer`], bottom to top: a layer of a later kind is drawn
/// over, and takes the keys from, one of an earlier kind. The one place
/// this order is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LayerKind {
    /// [`Layer::Detail`].
    Detail,
    /// [`Layer::HostText`] showing a detail.
    HostDetail,
    /// [`Layer::Filter`].
    Filter,
    /// [`Layer::Logs`].
    Logs,
    /// [`Layer::HostText`] showing logs.
    HostLogs,
    /// [`Layer::Operation`].
    Operation,
    /// [`Layer::FullText`].
    FullText,
    /// [`Layer::Command`].
    Command,
    /// [`Layer::Help`].
    Help,
    /// [`Layer::Confirm`].
    Confirm,
}

impl Layer {
    /// Its kind (its place in the stack).
    #[must_use]
    pub const fn kind(&self) -> LayerKind {
        match self {
            Self::Detail(_) => LayerKind::Detail,
            Self::HostText(view) => match view.context {
                Context::Logs => LayerKind::HostLogs,
                _ => LayerKind::HostDetail,
            },
            Self::Filter => LayerKind::Filter,
            Self::Logs(_) => LayerKind::Logs,
            Self::Operation(_) => LayerKind::Operation,
            Self::FullText(_) => LayerKind::FullText,
            Self::Command(_) => LayerKind::Command,
            Self::Help(_) => LayerKind::Help,
            Self::Confirm(_) => LayerKind::Confirm,
        }
    }

    /// The key bindings that apply while it is on top.
    #[must_use]
    pub fn context(&self) -> Context {
        match self {
            Self::Detail(_) => Context::Detail,
            Self::HostText(view) => view.context,
            Self::Filter => Context::Filter,
            Self::Logs(view) if view.editing.is_some() => Context::LogSearch,
            Self::Logs(_) => Context::Logs,
            Self::Operation(_) => Context::Operation,
            Self::FullText(_) => Context::FullText,
            Self::Command(_) => Context::CommandLine,
            Self::Help(view) if view.typing() => Context::HelpSearch,
            Self::Help(_) => Context::Help,
            Self::Confirm(_) => Context::Confirm,
        }
    }

    /// Whether it takes the whole body (between header and footer) instead
    /// of the panes: the highest such layer is drawn there, the panes and
    /// those under it are not.
    #[must_use]
    pub const fn fills_body(&self) -> bool {
        matches!(self, Self::Detail(_) | Self::Logs(_) | Self::HostText(_))
    }

    /// Whether the footer shows its keys when something is drawn over it
    /// (a dialog, the help, the command line, the operation overlay show
    /// the keys of the view under them).
    const fn shows_footer(&self) -> bool {
        matches!(
            self,
            Self::Detail(_)
                | Self::HostText(_)
                | Self::Filter
                | Self::Logs(_)
                | Self::FullText(_)
                | Self::Confirm(_)
        )
    }
}

/// Read one kind's layer out of the stack, shared and mutable.
macro_rules! slot {
    ($get:ident, $get_mut:ident, $variant:ident, $ty:ty) => {
        #[doc = concat!("The open [`Layer::", stringify!($variant), "`], if any.")]
        #[must_use]
        pub fn $get(&self) -> Option<&$ty> {
            self.0.iter().find_map(|layer| match layer {
                Layer::$variant(inner) => Some(inner),
                _ => None,
            })
        }

        #[doc = concat!("The open [`Layer::", stringify!($variant), "`], to change.")]
        pub(super) fn $get_mut(&mut self) -> Option<&mut $ty> {
            self.0.iter_mut().find_map(|layer| match layer {
                Layer::$variant(inner) => Some(inner),
                _ => None,
            })
        }
    };
}

/// The open layers, bottom first, at most one of each kind, in
/// [`LayerKind`] order.
#[derive(Debug, Default)]
pub struct Layers(Vec<Layer>);

impl Layers {
    slot!(detail, detail_mut, Detail, Detail);
    slot!(logs, logs_mut, Logs, LogsView);
    slot!(full_text, full_text_mut, FullText, FullView);
    slot!(command, command_mut, Command, CommandLine);
    slot!(help, help_mut, Help, HelpView);
    slot!(confirm, confirm_mut, Confirm, Confirm);
    slot!(operation_view, operation_view_mut, Operation, OperationView);

    /// The highest open host text view (over a fleet), if any: the one
    /// drawn and given the keys when nothing is over it.
    #[must_use]
    pub fn host_view(&self) -> Option<&HostView> {
        self.0.iter().rev().find_map(|layer| match layer {
            Layer::HostText(view) => Some(&**view),
            _ => None,
        })
    }

    /// Every open host text view, to apply a host's answers to.
    pub(super) fn host_views_mut(&mut self) -> impl Iterator<Item = &mut HostView> {
        self.0.iter_mut().filter_map(|layer| match layer {
            Layer::HostText(view) => Some(&mut **view),
            _ => None,
        })
    }

    /// The top layer's host text view, when the top layer is one.
    pub(super) fn top_host_view_mut(&mut self) -> Option<&mut HostView> {
        match self.0.last_mut() {
            Some(Layer::HostText(view)) => Some(&mut **view),
            _ => None,
        }
    }

    /// The open full-text view, if any.
    pub(super) fn full_view_mut(&mut self) -> Option<&mut super::full_view::FullView> {
        self.0.iter_mut().find_map(|layer| match layer {
            Layer::FullText(view) => Some(view),
            _ => None,
        })
    }

    /// The open operation overlay's operation id, if any.
    #[must_use]
    pub fn operation(&self) -> Option<&str> {
        self.operation_view().map(|view| view.id.as_str())
    }

    /// The layers, bottom first (the order they are drawn in).
    pub fn iter(&self) -> std::slice::Iter<'_, Layer> {
        self.0.iter()
    }

    /// The top layer: the one that gets the keys.
    #[must_use]
    pub fn top(&self) -> Option<&Layer> {
        self.0.last()
    }

    /// The top layer's kind.
    #[must_use]
    pub fn top_kind(&self) -> Option<LayerKind> {
        self.top().map(Layer::kind)
    }

    /// Whether a layer of `kind` is open.
    #[must_use]
    pub fn has(&self, kind: LayerKind) -> bool {
        self.0.iter().any(|layer| layer.kind() == kind)
    }

    /// The key bindings that apply now: the top layer's, else `panes`.
    #[must_use]
    pub fn context(&self) -> Context {
        self.top().map_or(Context::Panes, Layer::context)
    }

    /// The keys the footer shows: those of the highest layer that shows
    /// its footer, else the panes'.
    #[must_use]
    pub fn footer_context(&self) -> Context {
        self.0
            .iter()
            .rev()
            .find(|layer| layer.shows_footer())
            .map_or(Context::Panes, Layer::context)
    }

    /// Open `layer` in its place, replacing one of its kind.
    pub(super) fn open(&mut self, layer: Layer) {
        let kind = layer.kind();
        self.close(kind);
        let at = self.0.partition_point(|open| open.kind() < kind);
        self.0.insert(at, layer);
    }

    /// Close the layer of `kind`, handing it back.
    pub(super) fn close(&mut self, kind: LayerKind) -> Option<Layer> {
        let at = self.0.iter().position(|layer| layer.kind() == kind)?;
        Some(self.0.remove(at))
    }

    /// Close the confirmation dialog, handing back its question.
    pub(super) fn take_question(&mut self) -> Option<Question> {
        match self.close(LayerKind::Confirm)? {
            Layer::Confirm(confirm) => Some(confirm.question),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_goes_to_its_place_and_the_top_takes_the_keys() {
        let mut layers = Layers::default();
        assert_eq!(layers.context(), Context::Panes);
        layers.open(Layer::Help(HelpView::default()));
        // Opened after the help, the operation overlay still goes under it.
        layers.open(Layer::Operation(OperationView::new("op-1".into())));
        assert_eq!(layers.top_kind(), Some(LayerKind::Help));
        assert_eq!(layers.context(), Context::Help);
        assert_eq!(layers.footer_context(), Context::Panes);
        assert_eq!(layers.operation(), Some("op-1"));
        layers.close(LayerKind::Help);
        assert_eq!(layers.context(), Context::Operation);
        // One of each kind: opening again replaces.
        layers.open(Layer::Operation(OperationView::new("op-2".into())));
        assert_eq!(layers.iter().count(), 1);
        assert_eq!(layers.operation(), Some("op-2"));
        layers.open(Layer::Filter);
        assert_eq!(layers.footer_context(), Context::Filter);
        assert_eq!(layers.context(), Context::Operation);
        assert!(layers.take_question().is_none());
        assert!(layers.has(LayerKind::Filter));
    }
}
