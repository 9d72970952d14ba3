//! The ssh process of one `--controller` run: spawned with the plan's
//! argv (never a shell), stdout passed through, stdin handed on (the
//! console's terminal, a stream's pipe copied by `ssh-stdin`, a headless
//! command's held pipe), stderr copied while its tail is kept, the local
//! terminal restored when the session ends abnormally, signals passed on,
//! and ssh's status turned into the launcher's exit status.

use super::*;

/// Run `plan` through ssh and exit with its status (see the module doc).
/// The console needs a terminal here too: without one, exit 2 before ssh
/// runs.
#[must_use]
pub(crate) fn launch(plan: &Plan) -> ExitCode {
    let host = &plan.target.host;
    if plan.mode == Mode::Console && !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
        return fail(&needs_a_terminal(plan), EXIT_USAGE);
    }
    if !plan.not_applied.is_empty() {
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: {}",
            not_applied_message(host, &plan.not_applied)
        );
    }
    // The terminal as it is now, put back if the console's session ends
    // abnormally (the remote console cannot restore it then).
    let saved = (plan.mode == Mode::Console)
        .then(|| nix::sys::termios::tcgetattr(io::stdin()).ok())
        .flatten();
    // Registered before ssh starts (a signal from then on is held for it).
    let signals = Signals::register();
    let mut child = match spawn_ssh(plan, Stdio::inherit()) {
        Ok(child) => child,
        Err(error) => return fail(&cannot_run_ssh(host, &error), EXIT_USAGE),
    };
    // Headless and streams: ssh's stdin is a pipe this launcher holds;
    // closing it tells the remote side to stop (`reap --once` watches its
    // stdin: `headless::reap_once`; `serve --stdio` stops at its end).
    // Only `serve --stdio` gets the local stdin, copied through.
    let pipe = Arc::new(Mutex::new(child.stdin.take()));
    if plan.mode == Mode::Serve {
        let pipe = Arc::clone(&pipe);
        // Not joined: it may sit in a read of the local stdin at exit.
        let _copier = std::thread::Builder::new()
            .name("ssh-stdin".into())
            .spawn(move || copy_stdin(&pipe));
    }
    let caught: Arc<OnceLock<Signal>> = Arc::new(OnceLock::new());
    let forwarder = signals.map(|signals| {
        signals.watch(
            child.id(),
            plan.mode,
            Arc::clone(&pipe),
            Arc::clone(&caught),
        )
    });
    let copier = child.stderr.take().map(|stderr| {
        std::thread::Builder::new()
            .name("ssh-stderr".into())
            .spawn(move || pass_through(stderr))
    });
    let (status, killed) = wait_bounded(&mut child, &caught);
    if let Some(runtime) = forwarder {
        runtime.shutdown_background();
    }
    drop(pipe);
    let tail = match copier {
        Some(Ok(handle)) => handle.join().unwrap_or_default(),
        _ => Vec::new(),
    };
    let status = match status {
        Ok(status) => status,
        Err(error) => return fail(&format!("waiting for ssh to {host}: {error}"), 1),
    };
    let code = exit_code(status);
    if plan.mode == Mode::Console && (code != 0 || caught.get().is_some()) {
        restore_local_terminal(saved.as_ref());
    }
    if let Some(signal) = caught.get() {
        return fail(
            &interrupted_message(plan, *signal as i32, signal.as_str(), killed),
            u8::try_from(128 + *signal as i32).unwrap_or(1),
        );
    }
    let stderr = String::from_utf8_lossy(&tail);
    let exit = u8::try_from(code).unwrap_or(1);
    match classify(code, &stderr) {
        None => ExitCode::from(exit),
        Some(failure) => fail(
            &failure_message(failure, plan, code, &stderr_tail(&stderr)),
            exit,
        ),
    }
}

/// ssh could not be started.
pub(crate) fn cannot_run_ssh(host: &str, error: &io::Error) -> String {
    format!(
        "cannot run ssh to reach {host}: {error}. The OpenSSH client (`ssh`) must be on PATH \
         (Debian: apt-get install openssh-client)."
    )
}

/// ssh's status as an exit code: its own, or 128 + the signal that killed
/// it.
pub(crate) fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// How long ssh may take to end after the launcher was interrupted (the
/// remote pass stops its teardowns within their 5 s kill grace) before it
/// is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(30);

/// Start ssh: stdin passed through for the console, a pipe for a headless
/// command or a stream (which also gets a process group of its own, so a
/// terminal's Ctrl-C reaches only this launcher, which then stops the
/// remote side in order; and ssh never reads a terminal from a background
/// group: `serve --stdio`'s local stdin is copied by [`copy_stdin`]);
/// stdout as given (passed through: ssh writes the stream as it arrives;
/// a fleet's host: a pipe), stderr piped. ssh gets SIGTERM when this
/// launcher dies, even by SIGKILL (`PR_SET_PDEATHSIG`).
pub(crate) fn spawn_ssh(plan: &Plan, stdout: Stdio) -> io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt as _;
    let mut command = Command::new(SSH);
    command
        .args(plan.ssh_args())
        .stdout(stdout)
        .stderr(Stdio::piped());
    match plan.mode {
        Mode::Console => command.stdin(Stdio::inherit()),
        Mode::Headless | Mode::Serve | Mode::Follow => {
            command.stdin(Stdio::piped()).process_group(0)
        }
    };
    let parent = nix::unistd::getpid();
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (prctl, getppid), no allocation, no lock.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(io::Error::from)?;
            // The launcher died before the line above: nobody would send it.
            if nix::unistd::getppid() != parent {
                return Err(io::Error::other("the launcher is gone"));
            }
            Ok(())
        });
    }
    command.spawn()
}

/// Wait for ssh; once the launcher was interrupted (`caught`), at most
/// [`STOP_GRACE`], then kill it. `true` when it had to be killed.
pub(super) fn wait_bounded(
    child: &mut std::process::Child,
    caught: &OnceLock<Signal>,
) -> (io::Result<std::process::ExitStatus>, bool) {
    let mut since: Option<Instant> = None;
    let mut killed = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Ok(status), killed),
            Ok(None) => {}
            Err(error) => return (Err(error), killed),
        }
        if caught.get().is_some() {
            let since = *since.get_or_insert_with(Instant::now);
            if !killed && since.elapsed() >= STOP_GRACE {
                let _ = child.kill();
                killed = true;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Put the local terminal back after the console's session ended
/// abnormally (the remote console could not): the terminal modes recorded
/// before ssh started (raw mode off), then out of the alternate screen,
/// mouse capture, bracketed paste and focus reporting off, the cursor
/// shown.
pub(super) fn restore_local_terminal(saved: Option<&nix::sys::termios::Termios>) {
    if let Some(saved) = saved {
        let _ =
            nix::sys::termios::tcsetattr(io::stdin(), nix::sys::termios::SetArg::TCSANOW, saved);
    }
    let _ = crossterm::execute!(
        io::stdout(),
        crossterm::event::DisableMouseCapture,
        crossterm::event::DisableBracketedPaste,
        crossterm::event::DisableFocusChange,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// The "needs a terminal" refusal, with the command to use instead built
/// from what was given (target, `--ssh-config`, `--remote-bin`), quoted.
pub(super) fn needs_a_terminal(plan: &Plan) -> String {
    let mut words = vec![
        "stackless-tui".to_owned(),
        "--controller".to_owned(),
        format!("ssh://{}", plan.target.destination()),
    ];
    if let Some(config) = &plan.ssh_config {
        words.push("--ssh-config".to_owned());
        words.push(config.to_string_lossy().into_owned());
    }
    if plan.remote_bin != DEFAULT_REMOTE_BIN {
        words.push("--remote-bin".to_owned());
        words.push(plan.remote_bin.clone());
    }
    let command = sanitize_short(&shell_words::join(&words), 600);
    format!(
        "the console needs a terminal (stdin and stdout are not both a TTY), also when it runs \
         on {host}. For scripts and cron use `{command} snapshot` or `{command} reap --once`.",
        host = plan.target.host
    )
}

/// SIGTERM, SIGHUP and SIGINT caught on a one-worker tokio runtime
/// ([`Signals::register`]), then acted on ([`Signals::watch`]) until the
/// runtime is shut down.
pub(super) struct Signals {
    runtime: tokio::runtime::Runtime,
    streams: Vec<(tokio::signal::unix::Signal, Signal)>,
}

impl Signals {
    /// Catch the signals from now on. `None` (they keep their default
    /// action) when the runtime or a handler cannot be made.
    fn register() -> Option<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ssh-signals")
            .enable_all()
            .build()
            .ok()?;
        let streams = {
            let _context = runtime.enter();
            [
                (SignalKind::terminate(), Signal::SIGTERM),
                (SignalKind::hangup(), Signal::SIGHUP),
                (SignalKind::interrupt(), Signal::SIGINT),
            ]
            .into_iter()
            .map(|(kind, sig)| signal(kind).map(|stream| (stream, sig)))
            .collect::<Result<Vec<_>, _>>()
            .ok()?
        };
        Some(Self { runtime, streams })
    }

    /// On every caught signal (one caught before this is held): keep the
    /// first in `caught`; the console's and `snapshot --follow`'s ssh
    /// (`pid`) gets the signal (it closes the connection: the console gives
    /// the terminal back, the remote stream stops at its next write); a
    /// headless command's or `serve --stdio`'s `pipe` is closed (the remote
    /// pass stops, the agent stops as at the end of its stdin; their last
    /// lines still come back). The runtime returned keeps doing so until
    /// it is shut down.
    fn watch(
        self,
        pid: u32,
        mode: Mode,
        pipe: Arc<Mutex<Option<std::process::ChildStdin>>>,
        caught: Arc<OnceLock<Signal>>,
    ) -> tokio::runtime::Runtime {
        let target = i32::try_from(pid).ok().map(nix::unistd::Pid::from_raw);
        for (mut stream, sig) in self.streams {
            let (pipe, caught) = (Arc::clone(&pipe), Arc::clone(&caught));
            self.runtime.spawn(async move {
                while stream.recv().await.is_some() {
                    let _ = caught.set(sig);
                    match (mode, target) {
                        (Mode::Console | Mode::Follow, Some(target)) => {
                            let _ = nix::sys::signal::kill(target, sig);
                        }
                        (Mode::Console | Mode::Follow, None) => {}
                        (Mode::Headless | Mode::Serve, _) => {
                            pipe.lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .take();
                        }
                    }
                }
            });
        }
        self.runtime
    }
}

/// `serve --stdio`'s commands: copy the local stdin to ssh's (`pipe`) as
/// it comes, each read passed on at once, then close ssh's stdin at the
/// local stdin's end (or error), so the remote agent sees the end of its
/// stdin and stops (docs/protocol.md "Stopping"). Ends at once when the
/// pipe was closed (a signal: [`Signals::watch`]) or ssh is gone.
pub(super) fn copy_stdin(pipe: &Mutex<Option<std::process::ChildStdin>>) {
    let lock = || {
        pipe.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let mut stdin = io::stdin().lock();
    let mut buf = [0u8; 8192];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut guard = lock();
        let Some(to_ssh) = guard.as_mut() else {
            return;
        };
        if to_ssh
            .write_all(&buf[..n])
            .and_then(|()| to_ssh.flush())
            .is_err()
        {
            break;
        }
    }
    lock().take();
}

/// Copy ssh's stderr to ours as it comes; return its last [`TAIL_BYTES`].
pub(super) fn pass_through(mut stderr: std::process::ChildStderr) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let _ = io::stderr().write_all(&buf[..n]);
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > TAIL_BYTES {
                    tail.drain(..tail.len() - TAIL_BYTES);
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    tail
}
