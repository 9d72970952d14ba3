//! Files this console creates, appends to or removes under `<state_dir>`
//! (the audit trail, `console.log`, the roles directory and its lock files,
//! GC's removal of `<state_dir>/logs/<name>/`), opened or removed without
//! following a symbolic link planted there: a link an attacker (or an
//! accident) placed would otherwise make the console append to, lock or
//! delete its target, as root when it runs as root. Each refusal is an
//! [`std::io::Error`] whose message names the path and says what to do.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// The refusal for `path`, a symbolic link.
fn refused(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} is a symbolic link: refusing to follow it (remove the link; the console creates a plain file or directory there)",
        path.display()
    ))
}

/// `Ok` when nothing is at `path` or it is not a symbolic link (the path's
/// last component only: `lstat`).
///
/// # Errors
/// The refusal when it is a symbolic link; another `lstat` error.
pub fn not_a_symlink(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(refused(path)),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Create `dir` (and missing parents) unless it exists, and make sure it
/// is a real directory, not a symbolic link to one. The console's own
/// directories live in `<state_dir>/stackless-tui/`; `<state_dir>` itself
/// (the store's directory) is never created: a console that takes over
/// after the demo quit and deleted its temporary directory must not bring
/// it back.
///
/// # Errors
/// The refusal when `dir` is a symbolic link; `NotFound` when the store's
/// directory is gone; the I/O error.
pub fn real_dir(dir: &Path) -> io::Result<()> {
    not_a_symlink(dir)?;
    if let Some(state_dir) = dir
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "stackless-tui"))
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "the store's directory {} is gone: not creating it again",
                state_dir.display()
            ),
        ));
    }
    std::fs::create_dir_all(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Err(refused(dir));
    }
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    Ok(())
}

/// Open `path` for appending, creating it (mode 0600 | umask rules as
/// usual), with `O_NOFOLLOW`: a symbolic link at `path` is refused, never
/// followed. Its directory must be a real one ([`real_dir`]).
///
/// # Errors
/// The refusal when `path` (or its directory) is a symbolic link; the I/O
/// error.
pub fn append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        not_a_symlink(dir)?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
        .map_err(|e| {
            // ELOOP: the last component is a symbolic link.
            if e.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
                refused(path)
            } else {
                e
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_refused_and_their_targets_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = append(&link).unwrap_err();
        assert!(error.to_string().contains("is a symbolic link"), "{error}");
        assert!(not_a_symlink(&link).is_err());
        assert!(real_dir(&link).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        let plain = dir.path().join("plain");
        append(&plain).unwrap();
        real_dir(&dir.path().join("sub")).unwrap();
        assert!(dir.path().join("sub").is_dir());
    }

    #[test]
    fn the_store_directory_is_never_created_again() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("stackless-tui-demo-x");
        let error = real_dir(&gone.join("stackless-tui/roles")).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            error.to_string(),
            format!(
                "the store's directory {} is gone: not creating it again",
                gone.display()
            )
        );
        assert!(!gone.exists());
        std::fs::create_dir(&gone).unwrap();
        real_dir(&gone.join("stackless-tui/roles")).unwrap();
        assert!(gone.join("stackless-tui/roles").is_dir());
    }
}
