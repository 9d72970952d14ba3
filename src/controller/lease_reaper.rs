//! Whether the controller serving a store runs stackless's lease reaper,
//! learnt as stackless itself learns it, never by starting anything:
//! - 0.4.0: ask the running controller on `<state_dir>/daemon.sock`, as
//!   `stackless controller` does (`Request::Controller`, answered with
//!   `ControllerInfo { lease_reaper, .. }`: stackless-0.4.0/src/
//!   controller.rs:118-124, 245; client/mod.rs:426-442). The daemon's
//!   wire format is one JSON line each way, `{"protocol":2,"version":..,
//!   "cmd":"control","request":{"method":"controller"}}`
//!   (stackless-daemon-0.4.0/src/rpc.rs; client.rs:236-262).
//! - 0.2/0.3 (no such request), or a 0.4.0 controller that does not
//!   answer in [`ASK_TIMEOUT`]: its command line. Both releases start the
//!   controller as `stackless daemon run ... [--embedded]`, and only an
//!   embedded one runs no lease reaper (stackless-daemon-0.4.0/src/
//!   client.rs:340-350, server.rs:145; stackless-daemon-0.3.0/src/
//!   server.rs:107-116).
//!
//! The socket is connected to only when it is a socket (`lstat`: never a
//! symlink), and the answer is read capped at [`REPLY_CAP`] bytes; only one
//! boolean is taken from it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::FileTypeExt as _;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// How long the controller gets to answer (a stopped one must not hold
/// the console's role thread).
pub const ASK_TIMEOUT: Duration = Duration::from_millis(1000);
/// The most read of the controller's answer (bytes).
pub const REPLY_CAP: u64 = 64 * 1024;
/// The request line: the daemon protocol 2 envelope around the
/// controller's `controller` request (stackless-daemon-0.4.0/src/rpc.rs:9,
/// 17-22, 50-56; stackless-0.4.0/src/controller.rs:59-63).
pub const CONTROLLER_REQUEST: &str =
    r#"{"protocol":2,"version":"0.4.0","cmd":"control","request":{"method":"controller"}}"#;

/// The socket `stackless` serves under `state_dir` (core-0.4.0/src/
/// paths.rs:41-43; the same name in 0.2/0.3).
#[must_use]
pub fn socket_path(state_dir: &Path) -> std::path::PathBuf {
    state_dir.join("daemon.sock")
}

/// Connect to `socket` when it is a socket (not a symlink, not a file).
fn connect(socket: &Path) -> Option<UnixStream> {
    let meta = std::fs::symlink_metadata(socket).ok()?;
    if !meta.file_type().is_socket() {
        return None;
    }
    let stream = UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(ASK_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(ASK_TIMEOUT)).ok()?;
    Some(stream)
}

/// Ask the 0.4.0 controller on `socket` whether it runs a lease reaper.
/// `None` when nothing answers as 0.4.0 does in [`ASK_TIMEOUT`].
#[must_use]
pub fn ask(socket: &Path) -> Option<bool> {
    let mut stream = connect(socket)?;
    stream
        .write_all(format!("{CONTROLLER_REQUEST}\n").as_bytes())
        .ok()?;
    let mut line = String::new();
    BufReader::new(stream.take(REPLY_CAP))
        .read_line(&mut line)
        .ok()?;
    lease_reaper_in_reply(&line)
}

/// `lease_reaper` from the daemon's reply line: `{"protocol":2,"version":
/// "0.4.0","result":"control","response":{"value":{"lease_reaper":
/// true,..}}}`. `None` for an error reply or anything else.
#[must_use]
pub fn lease_reaper_in_reply(line: &str) -> Option<bool> {
    let reply: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    if reply.get("result")?.as_str()? != "control" {
        return None;
    }
    reply
        .get("response")?
        .get("value")?
        .get("lease_reaper")?
        .as_bool()
}

/// The pid of the process serving `socket` (its peer credentials), for a
/// 0.2/0.3 daemon, which holds no `controller.lock`. The connection is
/// closed at once, before any request: the daemon reads nothing from it.
#[must_use]
pub fn socket_peer(socket: &Path) -> Option<u32> {
    let stream = connect(socket)?;
    let credentials =
        nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials).ok()?;
    u32::try_from(credentials.pid()).ok().filter(|pid| *pid > 0)
}

/// Whether a `stackless daemon run` runs a lease reaper, from its
/// command line (its arguments, as `crate::controller::probe` reads them
/// from `/proc/PID/cmdline`): `Some(false)` with `--embedded`, `Some(true)`
/// for any other `daemon run`, `None` when it is not one.
#[must_use]
pub fn lease_reaper_in_args(args: &[String]) -> Option<bool> {
    let runs = args
        .windows(2)
        .any(|pair| pair[0] == "daemon" && pair[1] == "run");
    runs.then(|| !args.iter().any(|arg| arg == "--embedded"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_of_a_0_4_0_controller() {
        let operator = r#"{"protocol":2,"version":"0.4.0","result":"control","response":{"value":{"version":"0.4.0","protocol":2,"lease_reaper":true,"persistent":false,"persistence_warning":"boot persistence has not been verified"}}}"#;
        assert_eq!(lease_reaper_in_reply(operator), Some(true));
        let embedded = operator.replace("\"lease_reaper\":true", "\"lease_reaper\":false");
        assert_eq!(lease_reaper_in_reply(&embedded), Some(false));
        // An error reply, a daemon without a controller, garbage.
        let error = r#"{"protocol":2,"version":"0.4.0","result":"control","response":{"error":{"code":"x"}}}"#;
        assert_eq!(lease_reaper_in_reply(error), None);
        let no_lifecycle =
            r#"{"protocol":2,"version":"0.4.0","error":"this daemon has no lifecycle controller"}"#;
        assert_eq!(lease_reaper_in_reply(no_lifecycle), None);
        assert_eq!(lease_reaper_in_reply("not json"), None);
    }

    #[test]
    fn the_command_line_of_a_daemon() {
        let args = |line: &str| -> Vec<String> { line.split(' ').map(str::to_owned).collect() };
        let embedded =
            args("/usr/bin/stackless daemon run --state-dir /s --proxy-port 4444 --embedded");
        assert_eq!(lease_reaper_in_args(&embedded), Some(false));
        let operator = args("/usr/bin/stackless daemon run --state-dir /s --proxy-port 443");
        assert_eq!(lease_reaper_in_args(&operator), Some(true));
        assert_eq!(
            lease_reaper_in_args(&args("stackless daemon run --systemd-user")),
            Some(true)
        );
        assert_eq!(lease_reaper_in_args(&args("stackless up alpha")), None);
        assert_eq!(lease_reaper_in_args(&[]), None);
    }

    #[test]
    fn a_controller_on_the_socket_is_asked_and_a_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let socket = socket_path(dir.path());
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut line = String::new();
            BufReader::new(stream.try_clone().unwrap())
                .read_line(&mut line)
                .unwrap();
            let mut stream = stream;
            writeln!(
                stream,
                r#"{{"protocol":2,"version":"0.4.0","result":"control","response":{{"value":{{"lease_reaper":false}}}}}}"#
            )
            .unwrap();
            line
        });
        assert_eq!(ask(&socket), Some(false));
        assert_eq!(server.join().unwrap().trim_end(), CONTROLLER_REQUEST);
        // The peer of a socket is this process, here.
        let listener2 = std::os::unix::net::UnixListener::bind(dir.path().join("b.sock")).unwrap();
        assert_eq!(
            socket_peer(&dir.path().join("b.sock")),
            Some(std::process::id())
        );
        // A symlink to a live socket is not connected to; nothing there is None.
        let link = dir.path().join("link.sock");
        std::os::unix::fs::symlink(dir.path().join("b.sock"), &link).unwrap();
        assert_eq!(socket_peer(&link), None);
        drop(listener2);
        assert_eq!(ask(&dir.path().join("missing.sock")), None);
    }
}
