//! The demo: a seeded state store that shows every state the console draws
//! ([`seed()`]) with service logs for `l` ([`logs`], and a writer that
//! keeps one of them growing), a stand-in for `stackless down NAME --json` that works on it
//! ([`down`]), and a helper process built on succession for the supervisor
//! pane ([`helper`]).
//!
//! `--demo` (0.4.0) seeds a schema-14 store instead ([`v14`]) and plays
//! stackless 0.4.0's part on it: a controller stand-in that runs the
//! operation queue ([`controller`]) and a CLI stand-in for the commands
//! the console runs ([`stackless`]); `--demo v4` keeps the schema-4 store.
//!
//! Nothing here is used against a real stackless store: `--demo` creates a
//! fresh file, and the console's commands are pointed at the demo's
//! stand-ins instead of `stackless`.

pub mod controller;
pub mod down;
pub mod helper;
pub(crate) mod logs;
mod ops;
pub mod seed;
pub mod stackless;
pub mod v14;

pub use seed::{LiveHolder, seed};

/// How many times [`DemoDir`] tries to remove its directory, and the wait
/// between tries.
pub const REMOVE_TRIES: (u32, std::time::Duration) = (100, std::time::Duration::from_millis(20));

/// The demo's temporary directory (`stackless-tui-demo-*` under
/// `TMPDIR`): removed when dropped, tried again while a thread still
/// writing at quit (the reaper's first pass, the role thread, the log)
/// makes a removal fail half way (`ENOTEMPTY`); a writer never makes it
/// again (`crate::nofollow::real_dir`).
#[derive(Debug)]
pub struct DemoDir {
    path: std::path::PathBuf,
}

impl DemoDir {
    /// Make a fresh one.
    ///
    /// # Errors
    /// The directory cannot be made.
    pub fn create() -> std::io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("stackless-tui-demo-")
            .tempdir()?;
        Ok(Self { path: dir.keep() })
    }

    /// Where it is.
    #[must_use]
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Remove it, trying again [`REMOVE_TRIES`] times; whether it is gone.
    #[must_use]
    pub fn remove(&self) -> bool {
        let (tries, wait) = REMOVE_TRIES;
        for _ in 0..tries {
            match std::fs::remove_dir_all(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => std::thread::sleep(wait),
                _ => return true,
            }
        }
        !self.path.exists()
    }
}

impl Drop for DemoDir {
    fn drop(&mut self) {
        // Nothing more can be done about one that stays: said by nobody.
        let _ = self.remove();
    }
}
