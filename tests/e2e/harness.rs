//! A pseudo-terminal harness for end-to-end tests of the real binary: spawn
//! `stackless-tui` in a PTY of a given size with a clean environment, feed
//! everything it writes into a `vt100` terminal emulator (and keep the raw
//! bytes), type keys, resize, and wait for text to appear or for the process
//! to exit. The child and every descendant are killed when the harness is
//! dropped, so a failing test leaves no process behind.
//!
//! A screen read while a frame is arriving can be half old, half new:
//! ratatui writes a frame's changes top to bottom, left to right, so what is
//! above or left of the awaited text is current, what is below or right of
//! it may not be yet. Wait for everything to be asserted at once
//! ([`Tui::wait_for_all`], [`Tui::wait_until`]) rather than asserting on
//! other parts of the screen after waiting for one string.
// Not every helper is used by every test file.
#![allow(dead_code)]

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_stackless-tui");

/// How often the screen and the process are polled.
pub const POLL: Duration = Duration::from_millis(50);

/// What a wait for the UI gets: generous, CI is a 2-core machine running
/// several of these consoles at once.
pub const UI: Duration = Duration::from_secs(30);

/// Enter / leave the alternate screen (what crossterm writes).
pub const ENTER_ALT: &[u8] = b"\x1b[?1049h";
/// See [`ENTER_ALT`].
pub const LEAVE_ALT: &[u8] = b"\x1b[?1049l";

/// Everything the child wrote, parsed and raw.
struct Output {
    parser: vt100::Parser,
    raw: Vec<u8>,
    /// The reader saw end of file (every slave fd closed).
    eof: bool,
    /// The emulator panicked on the output (its screen is no longer
    /// trustworthy; the raw bytes are still collected).
    emulator_panic: Option<String>,
}

/// The real binary in a pseudo-terminal.
pub struct Tui {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// `None` once [`Tui::hang_up`] closed the terminal.
    master: Option<Box<dyn MasterPty + Send>>,
    writer: Option<Box<dyn std::io::Write + Send>>,
    /// Tells the reader thread to drop its end of the PTY.
    hang_up: Arc<std::sync::atomic::AtomicBool>,
    output: Arc<Mutex<Output>>,
    reader: Option<JoinHandle<()>>,
    pid: u32,
    status: Option<portable_pty::ExitStatus>,
    size: (u16, u16),
    /// HOME, `XDG_STATE_HOME`, TMPDIR and the working directory of the child;
    /// every descendant's environment mentions it.
    home: tempfile::TempDir,
}

impl Tui {
    /// Spawn the binary with `args` in a `cols` x `rows` PTY.
    pub fn spawn(args: &[&str], cols: u16, rows: u16) -> Self {
        Self::spawn_env(args, &[], cols, rows)
    }

    /// [`Tui::spawn`] with extra environment variables. The environment is
    /// otherwise clean: `TERM=xterm-256color`, a `PATH`, and `HOME`,
    /// `XDG_STATE_HOME`, `TMPDIR` pointing into a fresh temporary directory,
    /// so nothing touches the real user's store (the demo's own temporary
    /// store lands there too).
    pub fn spawn_env(args: &[&str], env: &[(&str, &str)], cols: u16, rows: u16) -> Self {
        Self::spawn_with(&[BIN], args, env, cols, rows)
    }

    /// [`Tui::spawn_env`] of `program` (an argv prefix that ends with the
    /// binary, e.g. `setpriv --reuid=65534 ... BIN`) followed by `args`.
    /// Another program than [`BIN`] alone may drop privileges: the
    /// temporary home is then made readable by everyone (mode 0755).
    pub fn spawn_with(
        program: &[&str],
        args: &[&str],
        env: &[(&str, &str)],
        cols: u16,
        rows: u16,
    ) -> Self {
        let home = tempfile::Builder::new()
            .prefix("stackless-tui-e2e-")
            .tempdir()
            .expect("tempdir");
        if program != [BIN] {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755))
                .expect("chmod home");
        }
        let state = home.path().join("state");
        let tmp = home.path().join("tmp");
        std::fs::create_dir_all(&state).expect("mkdir state");
        std::fs::create_dir_all(&tmp).expect("mkdir tmp");

        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(program[0]);
        cmd.args(&program[1..]);
        cmd.args(args);
        cmd.env_clear();
        cmd.env("TERM", "xterm-256color");
        cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
        cmd.env("HOME", home.path());
        cmd.env("XDG_STATE_HOME", &state);
        cmd.env("TMPDIR", &tmp);
        cmd.env("RUST_BACKTRACE", "1");
        // Times in UTC whatever the machine's zone (a test may set TZ).
        cmd.env("TZ", "UTC0");
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd.cwd(home.path());
        let child = pty.slave.spawn_command(cmd).expect("spawn in the pty");
        // Only the child may hold the slave side: the reader sees EOF when
        // the child (and anything that inherited the terminal) is gone.
        drop(pty.slave);
        let pid = child.process_id().expect("child pid");
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let writer = pty.master.take_writer().expect("pty writer");

        let output = Arc::new(Mutex::new(Output {
            parser: vt100::Parser::new(rows, cols, 0),
            raw: Vec::new(),
            eof: false,
            emulator_panic: None,
        }));
        let sink = Arc::clone(&output);
        let hang_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let hung_up = Arc::clone(&hang_up);
        let reader = std::thread::Builder::new()
            .name(format!("pty-reader-{pid}"))
            .spawn(move || {
                let mut buf = [0u8; 16 * 1024];
                loop {
                    if hung_up.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let mut out = sink
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                            out.raw.extend_from_slice(&buf[..n]);
                            if out.emulator_panic.is_some() {
                                continue;
                            }
                            let parsed =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    out.parser.process(&buf[..n]);
                                }));
                            if let Err(panic) = parsed {
                                out.emulator_panic = Some(
                                    panic
                                        .downcast_ref::<String>()
                                        .cloned()
                                        .or_else(|| {
                                            panic.downcast_ref::<&str>().map(|s| (*s).to_owned())
                                        })
                                        .unwrap_or_default(),
                                );
                            }
                        }
                    }
                }
                sink.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .eof = true;
            })
            .expect("reader thread");
        Self {
            child,
            master: Some(pty.master),
            writer: Some(writer),
            hang_up,
            output,
            reader: Some(reader),
            pid,
            status: None,
            size: (cols, rows),
            home,
        }
    }

    fn out(&self) -> MutexGuard<'_, Output> {
        self.output
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Send `signal` to the child (`kill -9` is `Signal::SIGKILL`).
    pub fn signal(&self, signal: nix::sys::signal::Signal) -> nix::Result<()> {
        signal_pid(self.pid, signal)
    }

    /// The temporary directory standing in for HOME (and TMPDIR).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// A copy of the emulated screen as it is now.
    pub fn screen(&self) -> vt100::Screen {
        let out = self.out();
        if let Some(panic) = &out.emulator_panic {
            panic!("the vt100 emulator panicked on the output: {panic}");
        }
        out.parser.screen().clone()
    }

    /// The screen's text as it is now.
    pub fn contents(&self) -> String {
        self.screen().contents()
    }

    /// Every byte the child wrote so far.
    pub fn raw(&self) -> Vec<u8> {
        self.out().raw.clone()
    }

    /// Type `keys` (bytes as a terminal sends them).
    pub fn send(&mut self, keys: impl AsRef<[u8]>) {
        let writer = self.writer.as_mut().expect("the terminal is hung up");
        writer.write_all(keys.as_ref()).expect("write to the pty");
        writer.flush().expect("flush the pty");
    }

    /// Resize the terminal (the emulator and the PTY, under one lock so no
    /// output is parsed at a size in between; the child gets SIGWINCH).
    ///
    /// The emulator is kept at least 2x2 (the PTY gets the size as asked):
    /// vt100 0.16 panics with `attempt to subtract with overflow` on a 0x0
    /// screen, and in `Grid::col_wrap` when text wraps on a 1-row screen or
    /// a wide character arrives on a 1-column one (output drawn for a larger
    /// size, parsed after a shrink).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        let mut out = self
            .output
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        out.parser.screen_mut().set_size(rows.max(2), cols.max(2));
        self.master
            .as_ref()
            .expect("the terminal is hung up")
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the pty");
        self.size = (cols, rows);
    }

    /// Close the terminal, as closing its window or losing an ssh
    /// connection does: every master file descriptor is closed, the kernel
    /// hangs the terminal up (SIGHUP to the child's session; its reads and
    /// writes fail with EIO from then on). The reader thread's descriptor
    /// goes when its blocked read next returns, i.e. on the child's next
    /// output (the console redraws countdowns every second), so this needs a
    /// child that keeps drawing. The screen is frozen from here on.
    pub fn hang_up(&mut self) {
        self.hang_up
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.writer = None;
        self.master = None;
    }

    /// Whether the terminal is in raw mode now (canonical input or echo
    /// off), read from the PTY's line discipline; `None` once hung up.
    pub fn raw_mode(&self) -> Option<bool> {
        // Linux's values (termbits.h): the test scans /proc and is Linux-only
        // anyway; portable-pty's termios comes from a nix this crate does not
        // name.
        const ICANON: u32 = 0o0000002;
        const ECHO: u32 = 0o0000010;
        let termios = self.master.as_ref()?.get_termios()?;
        let local: u32 = termios.local_flags.bits();
        Some(local & ICANON == 0 || local & ECHO == 0)
    }

    /// Whether the child is still running.
    pub fn alive(&mut self) -> bool {
        if self.status.is_some() {
            return false;
        }
        match self.child.try_wait().expect("try_wait") {
            Some(status) => {
                self.status = Some(status);
                false
            }
            None => true,
        }
    }

    fn describe_exit(&mut self) -> String {
        if self.alive() {
            "still running".into()
        } else {
            format!("exited: {}", self.status.as_ref().expect("status"))
        }
    }

    /// Poll the screen every [`POLL`] until `ready(screen)`; return that
    /// screen. Panics with `what`, the process state and the last screen on
    /// timeout, or as soon as the child is gone and its output drained.
    pub fn wait_until(
        &mut self,
        what: &str,
        timeout: Duration,
        mut ready: impl FnMut(&vt100::Screen) -> bool,
    ) -> vt100::Screen {
        let deadline = Instant::now() + timeout;
        loop {
            let (screen, eof) = {
                let out = self.out();
                if let Some(panic) = &out.emulator_panic {
                    panic!("the vt100 emulator panicked on the output: {panic}");
                }
                (out.parser.screen().clone(), out.eof)
            };
            if ready(&screen) {
                return screen;
            }
            let gone = eof && !self.alive();
            if gone || Instant::now() >= deadline {
                let why = if gone {
                    "the process is gone".to_owned()
                } else {
                    format!("timed out after {timeout:?}")
                };
                let state = self.describe_exit();
                let raw = self.raw();
                let tail =
                    String::from_utf8_lossy(&raw[raw.len().saturating_sub(600)..]).into_owned();
                panic!(
                    "waiting for {what}: {why} (pid {}, {state})\n--- last screen ({}x{}) ---\n{}\n--- end of screen; raw tail: {tail:?}",
                    self.pid,
                    self.size.0,
                    self.size.1,
                    screen.contents()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Poll the screen until `ready(screen)` or `timeout`, without
    /// panicking: the screen, or `None` on timeout.
    pub fn poll_until(
        &mut self,
        timeout: Duration,
        mut ready: impl FnMut(&vt100::Screen) -> bool,
    ) -> Option<vt100::Screen> {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return Some(screen);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Wait until `text` is on screen; return the screen's contents.
    pub fn wait_for(&mut self, text: &str, timeout: Duration) -> String {
        self.wait_until(&format!("{text:?} on screen"), timeout, |s| {
            s.contents().contains(text)
        })
        .contents()
    }

    /// Wait until every one of `texts` is on screen at once (one
    /// assertion-free way past a frame still being drawn); return the
    /// screen's contents.
    pub fn wait_for_all(&mut self, texts: &[&str], timeout: Duration) -> String {
        self.wait_until(&format!("all of {texts:?} on screen"), timeout, |s| {
            let contents = s.contents();
            texts.iter().all(|t| contents.contains(t))
        })
        .contents()
    }

    /// Wait until `text` is no longer on screen; return the screen's
    /// contents.
    pub fn wait_gone(&mut self, text: &str, timeout: Duration) -> String {
        self.wait_until(&format!("{text:?} to leave the screen"), timeout, |s| {
            !s.contents().contains(text)
        })
        .contents()
    }

    /// Wait until a line of the pane titled `title` contains `text`; return
    /// the pane's lines.
    pub fn wait_in_pane(&mut self, title: &str, text: &str, timeout: Duration) -> Vec<String> {
        let screen = self.wait_until(&format!("{text:?} in the {title} pane"), timeout, |s| {
            pane(s, title).is_some_and(|lines| lines.iter().any(|l| l.contains(text)))
        });
        pane(&screen, title).expect("pane")
    }

    /// Wait up to `timeout` for the child to exit, then for its output to
    /// be drained (the reader's end of file); return its exit code. Panics
    /// on timeout, or when a signal killed it.
    pub fn wait_exit(&mut self, timeout: Duration) -> u32 {
        let deadline = Instant::now() + timeout;
        while self.alive() {
            if Instant::now() >= deadline {
                panic!(
                    "pid {} still running {timeout:?} after it was asked to quit; last screen:\n{}",
                    self.pid,
                    self.contents()
                );
            }
            std::thread::sleep(POLL);
        }
        // The child is gone; whatever it wrote is in the PTY's buffer.
        let drained = Instant::now() + Duration::from_secs(10);
        while !self.out().eof && Instant::now() < drained {
            std::thread::sleep(POLL);
        }
        assert!(
            self.out().eof,
            "the PTY never reached end of file after pid {} exited: something else still holds the terminal",
            self.pid
        );
        if let Some(reader) = self.reader.take() {
            reader.join().expect("reader thread");
        }
        let status = self.status.clone().expect("exit status");
        if status.signal().is_some() {
            let raw = self.raw();
            panic!(
                "pid {} was killed by a signal: {status}; last output: {:?}",
                self.pid,
                String::from_utf8_lossy(&raw[raw.len().saturating_sub(1500)..])
            );
        }
        status.exit_code()
    }

    /// The child and its descendants: every live process whose environment
    /// mentions this harness's temporary directory, as `(pid, command line)`.
    pub fn family(&self) -> Vec<(u32, String)> {
        processes_with_env(self.home.path().as_os_str().as_encoded_bytes())
    }

    /// Wait (up to `timeout`) until no process carries this harness's
    /// temporary directory in its environment and `what` in its command
    /// line (`""`: any): the child and its descendants (helper, teardowns)
    /// have exited. Panics listing the survivors.
    pub fn wait_family_gone(&self, what: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let survivors: Vec<_> = self
                .family()
                .into_iter()
                .filter(|(_, cmdline)| cmdline.contains(what))
                .collect();
            if survivors.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "processes started by pid {} survive {timeout:?} after it exited: {survivors:#?}",
                    self.pid
                );
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let kill = |pid: u32| {
            let _ = signal_pid(pid, nix::sys::signal::Signal::SIGKILL);
        };
        if self.alive() {
            kill(self.pid);
            let _ = self.child.wait();
        }
        // Descendants too (a helper, a teardown) when a test failed midway:
        // only they carry this harness's temporary directory.
        for (pid, _) in self.family() {
            kill(pid);
        }
        // The reader thread ends by itself at end of file; not joined here so
        // a failing test never hangs in drop.
    }
}

/// Send `signal` to process `pid` (a pid beyond `i32` is no process: ESRCH).
pub fn signal_pid(pid: u32, signal: nix::sys::signal::Signal) -> nix::Result<()> {
    let pid = i32::try_from(pid).map_err(|_| nix::errno::Errno::ESRCH)?;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal)
}

/// `(pid, command line)` of every live process whose environment contains
/// `marker` (skipping zombies and processes that cannot be read).
pub fn processes_with_env(marker: &[u8]) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let dir = entry.path();
        let Ok(environ) = std::fs::read(dir.join("environ")) else {
            continue;
        };
        if !environ.windows(marker.len()).any(|w| w == marker) {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        if state == Some("Z") {
            continue;
        }
        let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, cmdline.trim_end().to_owned()));
    }
    found
}

/// The command line of `pid` (arguments separated by spaces), if it is a
/// live process.
pub fn cmdline(pid: u32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    if bytes.is_empty() {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).replace('\0', " "))
}

/// Where the bordered pane whose top border starts `┌ <title>` or
/// `╔ <title>` (focused) is: `(top, left, bottom, right)`, the border cells
/// included, located by terminal columns (so side-by-side panes come apart).
pub fn pane_rect(screen: &vt100::Screen, title: &str) -> Option<(u16, u16, u16, u16)> {
    let (rows, cols) = screen.size();
    let cell = |r: u16, c: u16| screen.cell(r, c).map_or("", vt100::Cell::contents);
    let heading = |r: u16, c: u16| -> bool {
        let text: String = screen
            .rows(c, cols - c)
            .nth(usize::from(r))
            .unwrap_or_default();
        text.strip_prefix(['┌', '╔'])
            .and_then(|t| t.strip_prefix(' '))
            .is_some_and(|t| t.starts_with(title))
    };
    for top in 0..rows {
        for left in 0..cols {
            if !matches!(cell(top, left), "┌" | "╔") || !heading(top, left) {
                continue;
            }
            let right = (left + 1..cols).find(|&c| matches!(cell(top, c), "┐" | "╗"))?;
            let bottom = (top + 1..rows).find(|&r| matches!(cell(r, left), "└" | "╚"))?;
            return Some((top, left, bottom, right));
        }
    }
    None
}

/// The inside of the pane titled `title` ([`pane_rect`]): one string per
/// row, borders stripped.
pub fn pane(screen: &vt100::Screen, title: &str) -> Option<Vec<String>> {
    let (top, left, bottom, right) = pane_rect(screen, title)?;
    Some(
        screen
            .rows(left + 1, right - left - 1)
            .skip(usize::from(top) + 1)
            .take(usize::from(bottom - top - 1))
            .collect(),
    )
}

/// The Instances pane's rows: `(selected, name)` in screen order (the
/// column header skipped).
pub fn instance_rows(screen: &vt100::Screen) -> Vec<(bool, String)> {
    pane(screen, "Instances")
        .unwrap_or_default()
        .iter()
        .filter_map(|line| {
            let selected = line.starts_with('▶');
            let name = line.trim_start_matches('▶').split_whitespace().next()?;
            (name != "NAME").then(|| (selected, name.to_owned()))
        })
        .collect()
}

/// The name on the Instances row carrying the selection marker `▶`.
pub fn selected_instance(screen: &vt100::Screen) -> Option<String> {
    instance_rows(screen)
        .into_iter()
        .find_map(|(selected, name)| selected.then_some(name))
}

impl Tui {
    /// Move the Instances selection to `name` with `j`/`k`, one key at a
    /// time, reading the marker back after each (rows may come and go while
    /// the reaper works).
    pub fn select(&mut self, name: &str) {
        for _ in 0..40 {
            let screen = self.screen();
            let rows = instance_rows(&screen);
            let at = rows.iter().position(|(selected, _)| *selected);
            let target = rows.iter().position(|(_, n)| n == name);
            let (Some(at), Some(target)) = (at, target) else {
                panic!(
                    "cannot find the selection or {name:?} in the Instances pane:\n{}",
                    screen.contents()
                );
            };
            if at == target {
                return;
            }
            let before = rows[at].1.clone();
            self.send(if target > at { "j" } else { "k" });
            self.wait_until(&format!("the selection to move off {before:?}"), UI, |s| {
                selected_instance(s).as_deref() != Some(before.as_str())
            });
        }
        panic!("could not select {name:?}:\n{}", self.contents());
    }
}

/// Run the binary without a terminal: `(exit code, stdout, stderr)`.
pub fn run_plain(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(args)
        .env_clear()
        .env("TERM", "xterm-256color")
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("TMPDIR", home.path())
        .current_dir(home.path())
        .stdin(std::process::Stdio::null());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd.output().expect("run the binary");
    (output.status.code(), output.stdout, output.stderr)
}

/// Whether `haystack` contains `needle`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Where `needle` last occurs in `haystack`.
pub fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// A path as `&str` (test paths are UTF-8).
pub fn utf8(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Poll `ready` every [`POLL`] until it gives a value (within `wait`);
/// panics naming `what` and the last `state()` otherwise. Every wait of
/// the end-to-end tests for something outside a PTY goes through it.
#[track_caller]
pub fn poll<T>(
    what: &str,
    wait: Duration,
    mut ready: impl FnMut() -> Option<T>,
    state: impl Fn() -> String,
) -> T {
    let deadline = Instant::now() + wait;
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "no {what} within {wait:?}: {}",
            state()
        );
        std::thread::sleep(POLL);
    }
}

/// Wait (within [`UI`]) until `path` exists.
#[track_caller]
pub fn wait_for_file(path: &Path) {
    poll(
        &format!("{}", path.display()),
        UI,
        || path.exists().then_some(()),
        String::new,
    );
}

/// Wait (within [`UI`]) for `child` to exit; its status.
#[track_caller]
pub fn wait_status(child: &mut std::process::Child) -> std::process::ExitStatus {
    poll(
        "exit of the launcher",
        UI,
        || child.try_wait().expect("try_wait"),
        String::new,
    )
}

/// The live processes (no zombies) whose command line holds every one of
/// `words`.
pub fn processes_with(words: &[&str]) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .is_ok_and(|stat| stat.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')));
        if !zombie && cmdline(pid).is_some_and(|line| words.iter().all(|w| line.contains(w))) {
            found.push(pid);
        }
    }
    found
}

/// A process a test started, outside a PTY: killed and reaped when
/// dropped (a failing test leaves nothing running: a launcher's ssh gets
/// SIGTERM from `PR_SET_PDEATHSIG`, and a remote agent then sees its
/// connection end).
pub struct Spawned(pub std::process::Child);

impl std::ops::Deref for Spawned {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Spawned {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// [`BIN`] with `args`, run as the sshd tests run it: a clean environment
/// (`PATH` the system's, `HOME`, `XDG_STATE_HOME` and `TMPDIR` under
/// `home`, as [`run_plain`]), in `home`, stdin as given, stdout and
/// stderr piped.
pub fn spawn_plain<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    home: &Path,
    stdin: std::process::Stdio,
) -> Spawned {
    Spawned(
        std::process::Command::new(BIN)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", home)
            .env("XDG_STATE_HOME", home.join("state"))
            .env("TMPDIR", home)
            .current_dir(home)
            .stdin(stdin)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn the launcher"),
    )
}

/// A child's stdout, line by line, as it comes (a thread reads it).
pub struct Lines(std::sync::mpsc::Receiver<String>);

impl Lines {
    /// Read `stdout` to its end.
    pub fn new(stdout: std::process::ChildStdout) -> Self {
        Self::closing_after(stdout, |_| false)
    }

    /// As [`Lines::new`], but the reader closes its end of the pipe after
    /// the first line `last` accepts (as `| head` does).
    pub fn closing_after(
        stdout: std::process::ChildStdout,
        last: impl Fn(&str) -> bool + Send + 'static,
    ) -> Self {
        use std::io::BufRead as _;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let done = last(&line);
                if tx.send(line).is_err() || done {
                    break;
                }
            }
        });
        Self(rx)
    }

    /// The next line, within `timeout`: `None` at the deadline or at the
    /// end of the stream.
    pub fn next_within(&self, timeout: Duration) -> Option<String> {
        self.0.recv_timeout(timeout).ok()
    }

    /// The next line, within `timeout` (panics naming `what` otherwise).
    #[track_caller]
    pub fn next(&self, what: &str, timeout: Duration) -> String {
        self.0
            .recv_timeout(timeout)
            .unwrap_or_else(|e| panic!("no line ({what}) within {timeout:?}: {e}"))
    }
}

/// `snapshot --json --now NOW` of `store` with the config file `empty`,
/// run here: what a host holding `store` answers.
pub fn local_snapshot(store: &Path, empty: &Path, now: &str) -> String {
    let (code, stdout, stderr) = run_plain(
        &[
            "--config",
            utf8(empty),
            "--state",
            utf8(store),
            "snapshot",
            "--json",
            "--now",
            now,
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&stderr));
    String::from_utf8(stdout).expect("UTF-8")
}
