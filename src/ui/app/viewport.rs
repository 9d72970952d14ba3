//! What the last frame measured, for key handling ([`Viewport`]).

/// Layout facts the last frame measured, so keys can page and the tables can
/// keep a stable scroll window. Written by drawing (through `Cell`), read by
/// key handling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Viewport {
    /// First instance row drawn.
    pub instances_offset: usize,
    /// Instance data rows that fit (0 before the first frame).
    pub instances_rows: usize,
    /// First backoff row drawn.
    pub backoffs_offset: usize,
    /// Backoff data rows that fit.
    pub backoffs_rows: usize,
    /// First operation row drawn.
    pub operations_offset: usize,
    /// Operation data rows that fit.
    pub operations_rows: usize,
    /// Pending operation rows pinned above the scroll window (the first
    /// `operations_head` operations, drawn first; 0 when none are).
    pub operations_head: usize,
    /// Operation rows drawn in the scroll window from `operations_offset`
    /// (after the pinned ones).
    pub operations_window: usize,
    /// Event rows the operation overlay shows (0 before it is drawn).
    pub op_event_rows: usize,
    /// The operation overlay's event rows in all, as last drawn.
    pub op_event_len: usize,
    /// Supervisor lines that fit.
    pub supervisor_rows: usize,
    /// Activity lines that fit.
    pub activity_rows: usize,
    /// Detail document lines that fit.
    pub detail_rows: usize,
    /// Detail document length, as last drawn.
    pub detail_len: usize,
    /// Detail document width in columns, as last drawn (0 before).
    pub detail_width: usize,
    /// Full-text rows that fit.
    pub full_rows: usize,
    /// Full-text length in wrapped rows, as last drawn.
    pub full_len: usize,
    /// Rows of log lines the logs view shows.
    pub logs_rows: usize,
    /// Columns of the logs view's lines (wrapped rows are counted at it).
    pub logs_width: usize,
    /// Help lines that fit.
    pub help_rows: usize,
    /// Help length in lines, as last drawn.
    pub help_len: usize,
}
