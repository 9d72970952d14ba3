//! An isolated real stackless 0.4.0 per test (docs: /work/notes spec §5.4,
//! §7, §8): the CLI is `examples/real_stackless` (`stackless::cli::run()`
//! built from crates.io), its whole world one temporary directory.
//!
//! Layout of a [`Stack`]'s root `R` (also `HOME` and `XDG_STATE_HOME`):
//! - `R/stackless/`: the state dir (`state.db`, `daemon.sock`, `logs/`, ...)
//!   in both roles, so `daemon stop` under the same env always reaches the
//!   controller (it connects by env layout, never by `--state-dir`);
//! - `R/app/`: the local stack (`stackless.toml`, the `--source` checkout
//!   the service runs in).
//!
//! Roles (stackless 0.4.0, cli-0.4.0/src/client/mod.rs:110-121):
//! - [`Role::Embedded`]: every command gets `--state-dir R/stackless
//!   --proxy-port P`, so the controller it spawns runs `--embedded`, with
//!   no lease reaper (a test's own reaper acts alone);
//! - [`Role::Operator`]: no flags, env layout only; the controller is an
//!   Operator and its lease reaper ticks (immediately at start, then every
//!   60 s).
//!
//! Tests never run at once: each [`Stack`] holds [`SERIAL`] for its
//! lifetime (controllers, services and builds contend for the 2 cores).
//! Dropping a [`Stack`] stops its controller and kills every process left
//! whose cwd, cmdline or environment names its root; [`Stack::shutdown`]
//! does the same and then asserts that none survived.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use stackless_tui::reaper::DownCommand;

/// Held by every [`Stack`]: one real stackless at a time in this binary.
static SERIAL: Mutex<()> = Mutex::new(());

/// How long one CLI call may take (an `up` health-gates a Python server
/// through the proxy; generous for a loaded 2-core machine).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(180);
/// The default for polling waits.
pub const WAIT: Duration = Duration::from_secs(60);
/// The env var naming the root on every process a test starts, so
/// leftovers are found even when they changed directory.
const MARKER: &str = "STACKLESS_TUI_REAL_TEST";

/// The local stack of spec §8.1: one service `web`, a Python HTTP server on
/// `$PORT`, health `GET /` through the proxy.
pub const DEFINITION: &str = r#"[stack]
name = "tui-test"

[services.web]
source = { repo = "https://example.invalid/web", ref = "main" }
health = { path = "/" }
{prepare}
[services.web.local]
run = "python3 -m http.server $PORT --bind 127.0.0.1"
"#;

/// Which controller a [`Stack`]'s commands reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `--state-dir`/`--proxy-port` on every command: an embedded
    /// controller, no lease reaper.
    Embedded,
    /// Env layout only: an Operator controller with its lease reaper.
    Operator,
}

/// What one CLI call did.
#[derive(Debug, Clone)]
pub struct Output {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// All of stdout (`--json` envelopes are pretty-printed, multi-line).
    pub stdout: String,
    /// All of stderr (progress NDJSON under `--json`), shown when an
    /// assertion fails.
    #[allow(dead_code, reason = "shown through Debug in failure messages")]
    pub stderr: String,
}

impl Output {
    /// stdout parsed as one JSON document; panics with the whole output when
    /// it is not one.
    #[must_use]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:#?}"))
    }

    /// Panics with the whole output unless the exit code is `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit: {self:#?}");
        self
    }
}

/// The `real_stackless` example binary beside this test binary:
/// `<target>/<profile>/deps/real-<hash>` -> `<target>/<profile>/examples/`.
/// Plain `cargo test` builds examples before running tests.
///
/// # Panics
/// When it has not been built (e.g. `cargo test --test real` alone builds
/// no examples), with the command that builds it.
#[must_use]
pub fn real_stackless() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binary in <target>/<profile>/deps");
    let bin = profile_dir.join("examples").join("real_stackless");
    assert!(
        bin.is_file(),
        "{} is missing: the real stackless is built as an example. Run plain \
         `cargo test --locked` (which builds examples), or first \
         `cargo build --locked --example real_stackless`.",
        bin.display()
    );
    bin
}

/// Panics with a clear message unless `python3` runs (the local service of
/// [`DEFINITION`]); checked once per test binary.
fn require_python() {
    static FOUND: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| {
        match Command::new("python3")
            .arg("--version")
            .stdin(Stdio::null())
            .output()
        {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!("`python3 --version` exited {}", out.status)),
            Err(e) => Err(format!("cannot run python3: {e}")),
        }
    });
    if let Err(why) = found {
        panic!(
            "tests/real need python3 on PATH (the local service is `python3 -m http.server`): {why}"
        );
    }
}

/// Poll `probe` every 100 ms until it returns `Some`, for at most `timeout`.
///
/// # Panics
/// At the deadline, naming `what`.
#[track_caller]
pub fn wait_until<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A free TCP port on 127.0.0.1 (bound and released; the controller's proxy
/// binds it moments later).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    listener.local_addr().expect("addr").port()
}

/// Unix seconds now (stackless stores unix seconds).
#[must_use]
pub fn unix_now() -> i64 {
    stackless_tui::model::time::unix_now()
}

/// One isolated real stackless: a root directory, a proxy port, a role.
pub struct Stack {
    root: tempfile::TempDir,
    /// The proxy port (`STACKLESS_PROXY_PORT` / `--proxy-port`).
    pub port: u16,
    /// Which controller the commands reach.
    pub role: Role,
    bin: PathBuf,
    stopped: bool,
    // Last: released after the clean-up in `Drop`.
    _serial: MutexGuard<'static, ()>,
}

impl Stack {
    /// A fresh stack in `role`, its app written with no `prepare` hook. Waits
    /// for the other tests' stacks to finish first.
    #[must_use]
    pub fn new(role: Role) -> Self {
        let serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bin = real_stackless();
        require_python();
        let root = tempfile::Builder::new()
            .prefix("sl-real-")
            .tempdir()
            .expect("tempdir");
        let stack = Self {
            root,
            port: free_port(),
            role,
            bin,
            stopped: false,
            _serial: serial,
        };
        std::fs::create_dir_all(stack.state_dir()).expect("state dir");
        stack.write_app("app", None);
        stack
    }

    /// The root: `HOME` and `XDG_STATE_HOME`.
    #[must_use]
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// `<root>/stackless`, the controller's state dir.
    #[must_use]
    pub fn state_dir(&self) -> PathBuf {
        self.root().join("stackless")
    }

    /// `<state_dir>/state.db`.
    #[must_use]
    pub fn db_path(&self) -> PathBuf {
        self.state_dir().join("state.db")
    }

    /// `<root>/<dir>`: an app written by [`Stack::write_app`].
    #[must_use]
    pub fn app(&self, dir: &str) -> PathBuf {
        self.root().join(dir)
    }

    /// Write [`DEFINITION`] to `<root>/<dir>/stackless.toml`, with
    /// `prepare = "<prepare>"` under `[services.web]` when given (the hook
    /// runs before `start`, spec §8.4). Returns the directory.
    pub fn write_app(&self, dir: &str, prepare: Option<&str>) -> PathBuf {
        let app = self.app(dir);
        std::fs::create_dir_all(&app).expect("app dir");
        let hook = prepare.map_or_else(String::new, |p| {
            format!("prepare = {}\n", serde_json::to_string(p).expect("quote"))
        });
        std::fs::write(
            app.join("stackless.toml"),
            DEFINITION.replace("{prepare}", &hook),
        )
        .expect("write definition");
        app
    }

    /// A read-only raw connection to the store (5 s busy timeout), for
    /// asserting on rows the library does not read yet.
    #[must_use]
    pub fn db(&self) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_with_flags(
            self.db_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open state.db");
        conn.busy_timeout(Duration::from_secs(5)).expect("busy");
        conn
    }

    /// The global flags this role puts before every verb.
    fn role_flags(&self) -> Vec<String> {
        match self.role {
            Role::Embedded => vec![
                "--state-dir".into(),
                self.state_dir().display().to_string(),
                "--proxy-port".into(),
                self.port.to_string(),
            ],
            Role::Operator => Vec::new(),
        }
    }

    /// A command for `program` with this stack's env: `HOME`,
    /// `XDG_STATE_HOME`, `XDG_CONFIG_HOME` under the root,
    /// `STACKLESS_PROXY_PORT`, `STACKLESS_NO_SELF_UPDATE=1`, `STACKLESS_BIN`,
    /// the marker; cwd the root; stdin null.
    #[must_use]
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(self.root())
            .env("HOME", self.root())
            .env("XDG_STATE_HOME", self.root())
            .env("XDG_CONFIG_HOME", self.root().join("config"))
            .env("STACKLESS_PROXY_PORT", self.port.to_string())
            .env("STACKLESS_NO_SELF_UPDATE", "1")
            .env("STACKLESS_BIN", &self.bin)
            .env(MARKER, self.root())
            .env_remove("STACKLESS_STATE_URL")
            .env_remove("STACKLESS_CONTROLLER")
            .env_remove("STACKLESS_TUI_STATE")
            .stdin(Stdio::null());
        command
    }

    /// Run the real stackless with `args` after the role's flags, waiting at
    /// most [`COMMAND_TIMEOUT`].
    pub fn stackless(&self, args: &[&str]) -> Output {
        let mut command = self.command(&self.bin);
        command.args(self.role_flags()).args(args);
        run(command, COMMAND_TIMEOUT)
    }

    /// Run the `stackless-tui` binary under test with `args` and this stack's
    /// env.
    pub fn tui(&self, args: &[&str]) -> Output {
        let mut command = self.command(Path::new(env!("CARGO_BIN_EXE_stackless-tui")));
        command.args(args);
        run(command, COMMAND_TIMEOUT)
    }

    /// `up --name NAME --on local --file <app>/stackless.toml --source
    /// web=<app> --allow-host-execution --lease LEASE --json` of the app in
    /// `<root>/app`.
    pub fn up(&self, name: &str, lease: &str) -> Output {
        self.up_app(name, lease, "app", &[])
    }

    /// [`Stack::up`] of the app in `<root>/<dir>`, with `extra` flags (e.g.
    /// `--no-wait`).
    pub fn up_app(&self, name: &str, lease: &str, dir: &str, extra: &[&str]) -> Output {
        let app = self.app(dir);
        let file = app.join("stackless.toml").display().to_string();
        let source = format!("web={}", app.display());
        let mut args = vec![
            "up",
            "--name",
            name,
            "--on",
            "local",
            "--file",
            &file,
            "--source",
            &source,
            "--allow-host-execution",
            "--lease",
            lease,
            "--json",
        ];
        args.extend_from_slice(extra);
        self.stackless(&args)
    }

    /// `down NAME --json`.
    pub fn down(&self, name: &str) -> Output {
        self.stackless(&["down", name, "--json"])
    }

    /// The teardown command our reaper runs against this stack:
    /// `[real_stackless, --state-dir, DIR, --proxy-port, P, down, {name},
    /// --json]` (the embedded controller's own flags, so it never spawns an
    /// Operator).
    #[must_use]
    pub fn down_command(&self) -> DownCommand {
        let mut argv = vec![self.bin.display().to_string()];
        argv.extend([
            "--state-dir".to_owned(),
            self.state_dir().display().to_string(),
            "--proxy-port".to_owned(),
            self.port.to_string(),
        ]);
        argv.extend(["down".into(), "{name}".into(), "--json".into()]);
        DownCommand::from_argv(argv).expect("down template")
    }

    /// Whether a controller holds `<state_dir>/controller.lock` (its `flock`
    /// in `/proc/locks`, spec §5.2); the pid when it does.
    #[must_use]
    pub fn controller_pid(&self) -> Option<u32> {
        use std::os::unix::fs::MetadataExt as _;
        let meta = std::fs::metadata(self.state_dir().join("controller.lock")).ok()?;
        let inode = meta.ino();
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        locks.lines().find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `N: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF`
            let at = fields.iter().position(|f| *f == "FLOCK")?;
            let pid = fields.get(at + 3)?.parse().ok()?;
            let file = fields.get(at + 4)?;
            let ino: u64 = file.rsplit(':').next()?.parse().ok()?;
            (ino == inode).then_some(pid)
        })
    }

    /// Ask the controller to drain and exit (`daemon stop` under the same
    /// env) and wait until it has released `controller.lock`.
    pub fn stop_controller(&self) {
        let mut command = self.command(&self.bin);
        command.args(["daemon", "stop"]);
        let out = run(command, COMMAND_TIMEOUT);
        assert_eq!(out.code, Some(0), "daemon stop: {out:#?}");
        wait_until("the controller to exit", WAIT, || {
            self.controller_pid().is_none().then_some(())
        });
    }

    /// Stop everything this stack started, then assert nothing survived
    /// (no `real_stackless`, no `python3 -m http.server`, nothing naming the
    /// root).
    ///
    /// # Panics
    /// Listing the survivors.
    pub fn shutdown(mut self) {
        self.stop_all();
        let left = survivors(self.root());
        assert!(left.is_empty(), "processes survived the test: {left:#?}");
    }

    fn stop_all(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let mut command = self.command(&self.bin);
        command.args(["daemon", "stop"]);
        let _ = run_quiet(command, Duration::from_secs(30));
        // A controller draining a running operation may take a while; give
        // it a few seconds, then kill whatever is left.
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.controller_pid().is_some() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        kill_all(self.root());
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Run `command` to completion, capturing stdout and stderr, killing it at
/// `timeout` (then panicking with what it printed).
fn run(command: Command, timeout: Duration) -> Output {
    match run_quiet(command, timeout) {
        Ok(out) => out,
        Err(out) => panic!("command timed out after {timeout:?}: {out:#?}"),
    }
}

/// [`run`] without the panic: `Err` with what it printed on timeout.
fn run_quiet(mut command: Command, timeout: Duration) -> Result<Output, Output> {
    let shown = format!("{command:?}");
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let reader = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = reader(Box::new(child.stdout.take().expect("stdout")));
    let stderr = reader(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + timeout;
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break (status, false);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            break (child.wait().expect("wait"), true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = Output {
        code: status.code(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    if timed_out { Err(out) } else { Ok(out) }
}

/// A process of this user that belongs to the stack rooted at `root`: its
/// cwd is under it, or its cmdline or environment names it.
#[derive(Debug)]
pub struct Survivor {
    /// Process id.
    pub pid: i32,
    /// Its cmdline, NULs as spaces.
    pub cmdline: String,
}

/// Every process (but this one) whose cwd is under `root` or whose cmdline
/// or environment contains `root`.
#[must_use]
pub fn survivors(root: &Path) -> Vec<Survivor> {
    let me = std::process::id();
    let needle = root.as_os_str().as_encoded_bytes();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid.unsigned_abs() == me {
            continue;
        }
        let proc_dir = entry.path();
        let cmdline = std::fs::read(proc_dir.join("cmdline")).unwrap_or_default();
        if cmdline.is_empty() {
            continue; // a kernel thread or a zombie
        }
        let cwd_matches =
            std::fs::read_link(proc_dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(root));
        let environ = std::fs::read(proc_dir.join("environ")).unwrap_or_default();
        if cwd_matches || contains(&cmdline, needle) || contains(&environ, needle) {
            found.push(Survivor {
                pid,
                cmdline: String::from_utf8_lossy(&cmdline)
                    .replace('\0', " ")
                    .trim_end()
                    .to_owned(),
            });
        }
    }
    found
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// TERM every process of [`survivors`] (and its process group, when it
/// leads one), wait up to 3 s, then KILL what is left.
fn kill_all(root: &Path) {
    use nix::sys::signal::{Signal, kill, killpg};
    use nix::unistd::{Pid, getpgid};
    for signal in [Signal::SIGTERM, Signal::SIGKILL] {
        let left = survivors(root);
        if left.is_empty() {
            return;
        }
        for survivor in &left {
            let pid = Pid::from_raw(survivor.pid);
            if getpgid(Some(pid)).is_ok_and(|group| group == pid) {
                let _ = killpg(pid, signal);
            }
            let _ = kill(pid, signal);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while !survivors(root).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
