//! The terminal: raw mode and the alternate screen in, everything back out
//! on every way out (quit, signals, a closed window, a panic in any
//! thread). The gate keeps a panicking thread's report from being drawn
//! over.

use std::io;
use std::sync::Mutex;
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr as _};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Frames go out in one write each (stdout's own buffer is 1 KiB, which
/// would split a frame into many writes and tear it on a slow terminal).
pub(crate) type Term = Terminal<CrosstermBackend<io::BufWriter<io::Stdout>>>;

/// `true` while the TUI may use the terminal. The panic hook turns it off
/// (under this lock) before restoring the terminal, so no other thread
/// enters the alternate screen or draws a frame over the panic report.
static TERMINAL_GATE: Mutex<bool> = Mutex::new(true);

/// Run `f` with the terminal, unless a panic has taken it back (`None`).
pub(crate) fn with_terminal<R>(f: impl FnOnce() -> R) -> Option<R> {
    let gate = TERMINAL_GATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*gate {
        return None;
    }
    let result = f();
    drop(gate);
    Some(result)
}

/// For the panic hook: close the gate and restore the terminal. Waits a
/// moment for a frame being drawn; when the panicking thread is the one
/// drawing (it holds the gate), restores without it.
pub(crate) fn close_for_panic() {
    let deadline = std::time::Instant::now() + Duration::from_millis(500);
    loop {
        match TERMINAL_GATE.try_lock() {
            Ok(mut gate) => {
                *gate = false;
                restore_terminal();
                return;
            }
            Err(std::sync::TryLockError::Poisoned(poisoned)) => {
                *poisoned.into_inner() = false;
                restore_terminal();
                return;
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                if std::time::Instant::now() >= deadline {
                    restore_terminal();
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Raw mode, the alternate screen, mouse capture, bracketed paste (a
/// paste arrives as one `Event::Paste`, never as keys), a hidden cursor.
///
/// # Errors
/// The terminal refused one of them.
pub(crate) fn enter() -> Result<Term> {
    crossterm::terminal::enable_raw_mode().wrap_err("cannot switch the terminal to raw mode")?;
    crossterm::execute!(
        io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        crossterm::event::EnableMouseCapture,
        crossterm::event::EnableBracketedPaste,
        crossterm::cursor::Hide
    )
    .wrap_err("cannot enter the alternate screen")?;
    Terminal::new(CrosstermBackend::new(io::BufWriter::with_capacity(
        1 << 16,
        io::stdout(),
    )))
    .wrap_err("cannot start the terminal backend")
}

/// Restores the terminal when dropped (an early `?` return included).
pub(crate) struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Put the terminal back as it was. Safe to call more than once, from any
/// thread (the panic hook calls it).
pub(crate) fn restore_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        io::stdout(),
        crossterm::event::DisableMouseCapture,
        crossterm::event::DisableBracketedPaste,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Write the OSC 52 sequence for `text` to the terminal (through its
/// handle, so it is ordered with the frames); `false` when the terminal
/// is gone.
pub(crate) fn copy(terminal: &mut Term, text: &str) -> bool {
    use std::io::Write as _;
    let sequence = crate::ui::clipboard::osc52(text);
    match with_terminal(|| {
        let backend = terminal.backend_mut();
        backend
            .write_all(sequence.as_bytes())
            .and_then(|()| backend.flush())
    }) {
        None => loop {
            std::thread::park();
        },
        Some(Ok(())) => true,
        Some(Err(error)) => {
            tracing::warn!("terminal write failed: {error}; quitting");
            false
        }
    }
}
