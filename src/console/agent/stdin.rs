//! The `agent-stdin` thread: reads `serve --stdio`'s commands, a line at
//! a time, never holding more than [`MAX_MESSAGE_BYTES`] of one (a longer
//! line is skipped to its newline and reported as too long), and hands
//! them to the agent's loop over a bounded channel: a flood of commands
//! waits in the pipe, not in memory. Framing (docs/protocol.md): a line
//! is UTF-8 and ends with `\n`; a line that is not UTF-8, or a last line
//! the end of stdin cut before its newline, is handed on as such (to be
//! refused, never run): every line read gets exactly one [`Input`].

use std::io::{BufRead as _, Read};

use crate::model::protocol::MAX_MESSAGE_BYTES;

/// One thing read from stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Input {
    /// A complete line of UTF-8, without its newline.
    Line(String),
    /// A line over [`MAX_MESSAGE_BYTES`], skipped to its newline (or to
    /// the end of stdin).
    TooLong,
    /// A complete line that is not valid UTF-8 (not run).
    NotUtf8,
    /// A last line the end of stdin (or a read error) cut before its
    /// newline: never sent whole, so not run.
    Cut,
    /// The end of stdin, or a read error (after the [`Input::Cut`] or
    /// [`Input::TooLong`] of a line it cut).
    End,
}

/// How many read lines may wait for the loop.
const QUEUE: usize = 64;

/// Start the thread on this process's stdin.
///
/// # Errors
/// The thread could not be started.
pub(super) fn spawn() -> std::io::Result<tokio::sync::mpsc::Receiver<Input>> {
    let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
    std::thread::Builder::new()
        .name("agent-stdin".into())
        .spawn(move || read_all(std::io::stdin().lock(), &tx))?;
    Ok(rx)
}

/// Read `input` to its end, sending each line (or its being too long),
/// then [`Input::End`]; stops early when the loop is gone.
pub(super) fn read_all(input: impl Read, tx: &tokio::sync::mpsc::Sender<Input>) {
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    loop {
        let (done, used, ended) = match reader.fill_buf() {
            Ok([]) => (true, 0, false),
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    if !too_long {
                        line.extend_from_slice(&buf[..at]);
                    }
                    (false, at + 1, true)
                }
                None => {
                    if !too_long {
                        line.extend_from_slice(buf);
                    }
                    (false, buf.len(), false)
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => (true, 0, false),
        };
        if done {
            if too_long {
                let _ = tx.blocking_send(Input::TooLong);
            } else if !line.is_empty() {
                let _ = tx.blocking_send(Input::Cut);
            }
            break;
        }
        reader.consume(used);
        if !too_long && line.len() >= MAX_MESSAGE_BYTES {
            too_long = true;
            line = Vec::new();
        }
        if ended {
            let input = if too_long {
                Input::TooLong
            } else {
                String::from_utf8(std::mem::take(&mut line)).map_or(Input::NotUtf8, Input::Line)
            };
            too_long = false;
            line.clear();
            if tx.blocking_send(input).is_err() {
                return;
            }
        }
    }
    let _ = tx.blocking_send(Input::End);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Vec<Input> {
        let (tx, mut rx) = tokio::sync::mpsc::channel(1_000);
        read_all(bytes, &tx);
        drop(tx);
        let mut out = Vec::new();
        while let Ok(input) = rx.try_recv() {
            out.push(input);
        }
        out
    }

    #[test]
    fn lines_a_long_line_and_an_unfinished_one() {
        let mut bytes = b"{\"a\":1}\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 3 * MAX_MESSAGE_BYTES));
        bytes.extend(b"\nping\nhalf a li");
        assert_eq!(
            read(&bytes),
            [
                Input::Line("{\"a\":1}".into()),
                Input::TooLong,
                Input::Line("ping".into()),
                Input::Cut,
                Input::End,
            ]
        );
    }

    /// A line cut by the end of stdin is one `Cut` (a long one `TooLong`);
    /// nothing after a last newline is nothing; invalid UTF-8 is `NotUtf8`.
    #[test]
    fn cut_lines_and_lines_not_utf8_are_handed_on_once() {
        assert_eq!(read(b"ping\n"), [Input::Line("ping".into()), Input::End]);
        assert_eq!(read(b""), [Input::End]);
        let mut long = vec![b'x'; MAX_MESSAGE_BYTES + 1];
        assert_eq!(read(&long), [Input::TooLong, Input::End]);
        long.truncate(10);
        assert_eq!(read(&long), [Input::Cut, Input::End]);
        assert_eq!(
            read(b"{\"x\":\"\xff\xfe\"}\nok\n"),
            [Input::NotUtf8, Input::Line("ok".into()), Input::End]
        );
    }

    /// docs/protocol.md: a line is at most 65,536 bytes with its newline.
    #[test]
    fn a_line_of_the_limit_with_its_newline_is_taken_one_more_byte_is_too_long() {
        let line = |len: usize| {
            let mut bytes = vec![b'z'; len];
            bytes.push(b'\n');
            bytes
        };
        assert_eq!(
            read(&line(MAX_MESSAGE_BYTES - 1)),
            [Input::Line("z".repeat(MAX_MESSAGE_BYTES - 1)), Input::End]
        );
        assert_eq!(read(&line(MAX_MESSAGE_BYTES)), [Input::TooLong, Input::End]);
        // In small reads too (a pipe gives what was written so far).
        let mut bytes = line(MAX_MESSAGE_BYTES);
        bytes.extend(line(MAX_MESSAGE_BYTES - 1));
        let chunked = Chunked {
            bytes: &bytes,
            at: 0,
            chunk: 4_093,
        };
        let (tx, mut rx) = tokio::sync::mpsc::channel(16);
        read_all(chunked, &tx);
        drop(tx);
        let mut got = Vec::new();
        while let Ok(input) = rx.try_recv() {
            got.push(input);
        }
        assert_eq!(
            got,
            [
                Input::TooLong,
                Input::Line("z".repeat(MAX_MESSAGE_BYTES - 1)),
                Input::End
            ]
        );
    }

    /// A reader giving at most `chunk` bytes a read.
    struct Chunked<'a> {
        bytes: &'a [u8],
        at: usize,
        chunk: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.chunk.min(buf.len()).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_line_just_under_the_limit_is_taken() {
        let mut bytes = vec![b'y'; MAX_MESSAGE_BYTES - 1];
        bytes.push(b'\n');
        assert_eq!(
            read(&bytes),
            [Input::Line("y".repeat(MAX_MESSAGE_BYTES - 1)), Input::End]
        );
    }
}
