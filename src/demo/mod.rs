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
/// `TMPDIR`): removed when dropped ([`DemoDir::remove`]), also while a
/// thread still writes into it at quit (the reaper's first pass, the role
/// thread, the log), which made a plain removal fail half way
/// (`ENOTEMPTY`) and leave the tree behind.
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

    /// Remove it; whether it is gone. It is first moved aside (renamed
    /// to a hidden sibling, one atomic step), so a thread still writing by
    /// its path finds it gone and makes nothing there again
    /// (`crate::nofollow::real_dir`); the moved tree is then removed,
    /// tried again [`REMOVE_TRIES`] times while a write already under way
    /// finishes.
    #[must_use]
    pub fn remove(&self) -> bool {
        let name = self.path.file_name().map_or_else(
            || "stackless-tui-demo".into(),
            |n| n.to_string_lossy().into_owned(),
        );
        let aside = self.path.with_file_name(format!(".{name}.removing"));
        let doomed = match std::fs::rename(&self.path, &aside) {
            Ok(()) => aside,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
            Err(_) => self.path.clone(),
        };
        let (tries, wait) = REMOVE_TRIES;
        for _ in 0..tries {
            match std::fs::remove_dir_all(&doomed) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => std::thread::sleep(wait),
                _ => break,
            }
        }
        !self.path.exists() && !doomed.exists()
    }
}

impl Drop for DemoDir {
    fn drop(&mut self) {
        // Nothing more can be done about one that stays: said by nobody.
        let _ = self.remove();
    }
}
