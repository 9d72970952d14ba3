//! A real OpenSSH server on 127.0.0.1 for the `--controller` tests: Debian's
//! `openssh-server` (`/usr/sbin/sshd`, installed by `.ci/run`), started by
//! the test with a temporary host key, an authorized key for the current
//! user and its own `sshd_config`, and killed when dropped. The client side
//! is an `ssh_config` (given to the console as `--ssh-config`) naming the
//! alias `testhost`, the identity, and a known-hosts file holding exactly the
//! temporary host key: host key verification stays on.
//!
//! No sshd: where `CI` is set (`.ci/run` sets it) the tests fail, naming
//! the package; elsewhere (a developer's machine without
//! `openssh-server`) they are skipped, and the test output says so once,
//! naming the package. `STACKLESS_TUI_SKIP_SSHD=1` skips them on purpose.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Debian's sshd.
pub const SSHD: &str = "/usr/sbin/sshd";

/// The variable that skips the sshd tests (never skipped by default).
pub const SKIP: &str = "STACKLESS_TUI_SKIP_SSHD";

/// A running sshd and the client files that reach it.
pub struct Sshd {
    child: Child,
    dir: tempfile::TempDir,
    log: Arc<Mutex<String>>,
    port: u16,
}

/// Say `why` once per test process, on the real stderr (not the test
/// harness's captured output, so `cargo test` shows it).
fn say_once(why: &str) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{why}");
    });
}

/// Whether the sshd tests are skipped: on purpose (`STACKLESS_TUI_SKIP_SSHD=1`),
/// or because sshd is not installed and `CI` is not set (said once,
/// naming the package). With `CI` set, a missing sshd fails the tests
/// ([`Sshd::start`]).
pub fn skipped() -> bool {
    if std::env::var_os(SKIP).is_some_and(|v| v == "1") {
        say_once(&format!("{SKIP}=1: the sshd tests are skipped on purpose"));
        return true;
    }
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    if !ci && !Path::new(SSHD).exists() {
        say_once(&format!(
            "skipping the sshd tests: {SSHD} is not installed (Debian/Ubuntu: apt-get install \
             openssh-server); with CI set they are required"
        ));
        return true;
    }
    false
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn keygen(path: &Path) {
    run(Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "stackless-tui-test",
            "-f",
        ])
        .arg(path));
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8(out.stdout)
        .expect("UTF-8 user")
        .trim()
        .to_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Sshd {
    /// The sshd of one test: started ([`Sshd::start`]), or `None` when the
    /// sshd tests are [`skipped`] (the test then returns at once).
    pub fn for_test() -> Option<Self> {
        (!skipped()).then(Self::start)
    }

    /// Start sshd on a free port of 127.0.0.1 and wait until it listens.
    /// Panics (naming the package) when sshd is not installed.
    pub fn start() -> Self {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is not installed: these tests need a real OpenSSH server \
             (Debian: apt-get install openssh-server; .ci/run installs it). \
             Set {SKIP}=1 to skip them on purpose."
        );
        let dir = tempfile::Builder::new()
            .prefix("stackless-tui-sshd-")
            .tempdir()
            .expect("tempdir");
        let p = |name: &str| dir.path().join(name);
        keygen(&p("host_key"));
        keygen(&p("client_key"));
        keygen(&p("other_key"));
        std::fs::copy(p("client_key.pub"), p("authorized_keys")).expect("authorized_keys");
        // sshd as root needs its privilege separation directory (systemd
        // makes it at boot; a container may not have it).
        if nix::unistd::Uid::effective().is_root() && !Path::new("/run/sshd").exists() {
            std::fs::create_dir_all("/run/sshd").expect("mkdir /run/sshd");
        }
        let port = free_port();
        let config = format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {host}\nPidFile {pid}\n\
             AuthorizedKeysFile {auth}\nAllowUsers {user}\nUsePAM no\nStrictModes no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nPrintMotd no\n\
             PrintLastLog no\nLogLevel INFO\nAcceptEnv STACKLESS_TUI_STATE\n",
            host = p("host_key").display(),
            pid = p("sshd.pid").display(),
            auth = p("authorized_keys").display(),
            user = user(),
        );
        std::fs::write(p("sshd_config"), config).expect("sshd_config");
        let host_key = read(&p("host_key.pub"));
        std::fs::write(p("known_hosts"), format!("[127.0.0.1]:{port} {host_key}"))
            .expect("known_hosts");
        let other = read(&p("other_key.pub"));
        std::fs::write(
            p("wrong_known_hosts"),
            format!("[127.0.0.1]:{port} {other}"),
        )
        .expect("wrong_known_hosts");
        let mut child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(p("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{SSHD}: {e}"));
        let log = Arc::new(Mutex::new(String::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().expect("sshd stderr");
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains("Server listening on 127.0.0.1") {
                    let _ = ready_tx.send(());
                }
                let mut log = sink
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                log.push_str(&line);
                log.push('\n');
            }
        });
        let mut sshd = Self {
            child,
            dir,
            log,
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while ready_rx.recv_timeout(Duration::from_millis(100)).is_err() {
            let gone = sshd.child.try_wait().ok().flatten();
            if gone.is_some() || Instant::now() >= deadline {
                panic!(
                    "sshd did not start listening ({gone:?}); its log:\n{}",
                    sshd.log()
                );
            }
        }
        sshd.write_config("ssh_config", "known_hosts", "client_key", port);
        sshd.write_config(
            "ssh_config_wrong_host_key",
            "wrong_known_hosts",
            "client_key",
            port,
        );
        sshd.write_config("ssh_config_wrong_key", "known_hosts", "other_key", port);
        sshd.write_config(
            "ssh_config_closed_port",
            "known_hosts",
            "client_key",
            free_port(),
        );
        sshd
    }

    fn write_config(&self, name: &str, known_hosts: &str, key: &str, port: u16) {
        let p = |name: &str| self.dir.path().join(name);
        let text = format!(
            "Host testhost\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n\
             \x20 IdentityFile {key}\n  IdentitiesOnly yes\n  IdentityAgent none\n\
             \x20 UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n\
             \x20 StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n",
            user = user(),
            key = p(key).display(),
            known = p(known_hosts).display(),
        );
        std::fs::write(p(name), text).expect("ssh_config");
    }

    /// A client config for a fleet on this one sshd: each `(alias, store,
    /// wrong_host_key)` of `hosts` reaches it as `testhost` does, with
    /// `SetEnv STACKLESS_TUI_STATE=<store>` (this sshd accepts that one
    /// variable: `AcceptEnv`), so each alias's remote stackless-tui opens
    /// its own store when no `--state` is forwarded; an alias with
    /// `wrong_host_key` has a known-hosts file holding another key.
    pub fn fleet_config(&self, hosts: &[(&str, &Path, bool)]) -> PathBuf {
        let p = |name: &str| self.dir.path().join(name);
        let mut text = String::new();
        for (alias, store, wrong_host_key) in hosts {
            let known = if *wrong_host_key {
                "wrong_known_hosts"
            } else {
                "known_hosts"
            };
            text.push_str(&format!(
                "Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n\
                 \x20 IdentityFile {key}\n  IdentitiesOnly yes\n  IdentityAgent none\n\
                 \x20 UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n\
                 \x20 StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n\
                 \x20 SetEnv STACKLESS_TUI_STATE={store}\n",
                port = self.port,
                user = user(),
                key = p("client_key").display(),
                known = p(known).display(),
                store = store.display(),
            ));
        }
        let path = p("ssh_config_fleet");
        std::fs::write(&path, text).expect("ssh_config_fleet");
        path
    }

    /// The client config reaching `testhost` (verification on, the
    /// authorized key).
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// A client config whose known-hosts file holds another key.
    pub fn config_wrong_host_key(&self) -> PathBuf {
        self.dir.path().join("ssh_config_wrong_host_key")
    }

    /// A client config offering a key the server does not authorize.
    pub fn config_wrong_key(&self) -> PathBuf {
        self.dir.path().join("ssh_config_wrong_key")
    }

    /// A client config pointing at a port nobody listens on.
    pub fn config_closed_port(&self) -> PathBuf {
        self.dir.path().join("ssh_config_closed_port")
    }

    /// What sshd logged so far.
    pub fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
