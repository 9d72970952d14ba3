//! Files this console creates, appends to or removes under `<state_dir>`
//! (the audit trail, `console.log`, the roles directory and its lock files,
//! GC's removal of `<state_dir>/logs/<name>/`), opened or removed without
//! following a symbolic link planted there: a link an attacker (or an
//! accident) placed would otherwise make the console append to, lock or
//! delete its target, as root when it runs as root. Each refusal is an
//! [`std::io::Error`] whose message names the path and says what to do.
//! Also the metrics textfile, replaced atomically ([`replace`]), and the
//! one `(device, inode)` look-up ([`file_identity`]) that tells a
//! file replaced under the console from the same file.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::AtFlags;
use nix::sys::stat::{Mode, SFlag, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// `(device, inode)` of the file at `path` now (following a link), `None`
/// when it cannot be looked at: how a file deleted, replaced or renamed
/// over since it was last looked at is told apart from the same file (a
/// store, its `-wal`, a role's lock file).
#[must_use]
pub fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

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
    match dir
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "stackless-tui"))
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
    {
        // One level at a time below the store's directory (`create_dir`,
        // never `create_dir_all`): a directory removed meanwhile, even
        // between two steps, is never made again.
        Some(state_dir) => {
            let mut at = state_dir.to_path_buf();
            for part in dir.strip_prefix(state_dir).unwrap_or(dir).components() {
                at.push(part);
                match std::fs::create_dir(&at) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        return Err(io::Error::new(
                            io::ErrorKind::NotFound,
                            format!(
                                "the store's directory {} is gone: not creating it again",
                                state_dir.display()
                            ),
                        ));
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        None => std::fs::create_dir_all(dir)?,
    }
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
    not_hard_linked(path, |links| linked_refusal(path, links))?;
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
        .and_then(|file| one_link(path, file))
}

/// Refuse `path` *before* opening it when it has more than one hard link
/// (`lstat`, no descriptor). Opening such a file and closing it again is
/// not harmless: a planted link may name the state store itself, and
/// closing any descriptor on the store drops every `SQLite` lock this
/// process holds on it (`store::files`). The check after the
/// open (`fstat`) stays for a link made in between.
///
/// # Errors
/// `refusal(links)` when `path` has more than one link.
pub fn not_hard_linked(path: &Path, refusal: impl FnOnce(u64) -> String) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() && meta.nlink() > 1 => {
            Err(io::Error::other(refusal(meta.nlink())))
        }
        _ => Ok(()),
    }
}

/// The refusal of a file with `links` names that [`append`] would write.
fn linked_refusal(path: &Path, links: u64) -> String {
    format!(
        "{} has {links} hard links: refusing to append to it (remove the link; the console creates a plain file there)",
        path.display()
    )
}

/// `file` (opened at `path`) unless it has more than one hard link: a hard
/// link planted at `path` is another file's name, and appending would write
/// to that file (`fstat` of the opened file, so no race).
fn one_link(path: &Path, file: File) -> io::Result<File> {
    use std::os::unix::fs::MetadataExt as _;
    let links = file.metadata()?.nlink();
    if links > 1 {
        return Err(io::Error::other(linked_refusal(path, links)));
    }
    Ok(file)
}

/// Why [`remove_logs`] did not remove a directory.
#[derive(Debug)]
pub enum RemoveError {
    /// `<state_dir>/logs` or `logs/<name>` is a symbolic link: never
    /// followed, nothing removed ([`not_a_symlink`]'s message).
    Refused(io::Error),
    /// Another I/O error (the path named is the one asked to remove).
    Io(io::Error),
}

/// Nesting past which [`remove_at`] gives up (each level holds one open
/// directory).
const MAX_DEPTH: usize = 64;

/// Open `dir` as a directory with `O_NOFOLLOW`: `Ok(None)` when nothing is
/// there; the refusal when it is a symbolic link.
///
/// # Errors
/// The refusal; `ENOTDIR` or another open error.
pub fn open_dir(dir: &Path) -> io::Result<Option<OwnedFd>> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match nix::fcntl::open(dir, flags, Mode::empty()) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::ENOENT) => Ok(None),
        // Linux says ENOTDIR (not ELOOP) for a link under O_DIRECTORY.
        Err(e @ (Errno::ELOOP | Errno::ENOTDIR)) => match not_a_symlink(dir) {
            Ok(()) => Err(e.into()),
            Err(refusal) => Err(refusal),
        },
        Err(e) => Err(e.into()),
    }
}

/// GC's removal of `<root>/<name>` (`root` is `<state_dir>/logs`, `name`
/// one path component): `root` is opened once without following a link,
/// and everything below it is removed relative to that handle
/// ([`remove_at`]), so a link swapped in at `root` or anywhere in the tree
/// after the check is never followed. Nothing there is `Ok`.
///
/// # Errors
/// [`RemoveError::Refused`] when `root` or `<root>/<name>` is a symbolic
/// link at the start; [`RemoveError::Io`] otherwise.
pub fn remove_logs(root: &Path, name: &OsStr) -> Result<(), RemoveError> {
    let io = RemoveError::Io;
    let fd = match open_dir(root) {
        Ok(Some(fd)) => fd,
        Ok(None) => return Ok(()),
        Err(e) if e.raw_os_error().is_none() => return Err(RemoveError::Refused(e)),
        Err(e) => return Err(io(e)),
    };
    match fstatat(&fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) if SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK => {
            return Err(RemoveError::Refused(refused(&root.join(name))));
        }
        Ok(_) => {}
        Err(Errno::ENOENT) => return Ok(()),
        Err(e) => return Err(io(e.into())),
    }
    remove_at(&fd, name).map_err(io)
}

/// Remove the entry `name` of the directory `parent` and, when it is a
/// directory, everything in it: each subdirectory is opened relative to
/// its parent with `O_DIRECTORY | O_NOFOLLOW` and each entry removed with
/// `unlinkat`, so a symbolic link anywhere (even one swapped in during the
/// removal) is unlinked itself, never followed. Nothing there is `Ok`.
///
/// # Errors
/// The first `openat`/`unlinkat`/`readdir` error; nesting past 64 levels.
pub fn remove_at(parent: &OwnedFd, name: &OsStr) -> io::Result<()> {
    remove_nested(parent.as_fd(), name, 0)
}

fn remove_nested(parent: BorrowedFd<'_>, name: &OsStr, depth: usize) -> io::Result<()> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let dir = match nix::fcntl::openat(parent, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        // Not a directory (a file, or a symbolic link: ELOOP): unlink it.
        Err(Errno::ENOTDIR | Errno::ELOOP) => {
            return match unlinkat(parent, name, UnlinkatFlags::NoRemoveDir) {
                Ok(()) | Err(Errno::ENOENT) => Ok(()),
                Err(e) => Err(e.into()),
            };
        }
        Err(Errno::ENOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if depth >= MAX_DEPTH {
        return Err(io::Error::other("nested more than 64 directories deep"));
    }
    let mut names = Vec::new();
    {
        let mut list = nix::dir::Dir::from_fd(nix::unistd::dup(&dir)?)?;
        for entry in list.iter() {
            let bytes = entry?.file_name().to_bytes().to_vec();
            if bytes != b"." && bytes != b".." {
                names.push(std::ffi::OsString::from_vec(bytes));
            }
        }
    }
    for child in &names {
        remove_nested(dir.as_fd(), child, depth + 1)?;
    }
    drop(dir);
    match unlinkat(parent, name, UnlinkatFlags::RemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Replace the file at `path` with `bytes` atomically (`node_exporter`'s
/// textfile collector's convention): written to a temporary file in the
/// same directory (`.NAME.PID.tmp`: created anew, `O_EXCL | O_NOFOLLOW`,
/// mode 0644 whatever the umask, synced), then renamed over `path`. A
/// reader opens the old file or the new one, never half of one. A
/// symbolic link at `path` is replaced by the file, never followed; a
/// link planted at the temporary name is refused. The temporary file is
/// removed when a step fails.
///
/// # Errors
/// `path` has no file name, its directory is a symbolic link, or the I/O
/// error of a step.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other(format!(
            "{}: not a file's path",
            path.display()
        )));
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    not_a_symlink(dir)?;
    let mut temporary = std::ffi::OsString::from(".");
    temporary.push(name);
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = dir.join(temporary);
    // One left by a process of this pid that died mid-write: removed (the
    // name itself, never what a link there points to).
    match std::fs::remove_file(&temporary) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&temporary)
        .and_then(|mut file| {
            file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
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

    /// A victim directory holding one file, outside the logs tree.
    fn victim(dir: &Path) -> std::path::PathBuf {
        let victim = dir.join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("precious"), "keep").unwrap();
        victim
    }

    #[test]
    fn a_link_inside_the_logs_is_unlinked_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = victim(dir.path());
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(logs.join("web/sub")).unwrap();
        std::fs::write(logs.join("web/sub/out.log"), "x").unwrap();
        std::os::unix::fs::symlink(&victim, logs.join("web/link")).unwrap();
        std::os::unix::fs::symlink(&victim, logs.join("web/sub/link")).unwrap();
        remove_logs(&logs, OsStr::new("web")).unwrap();
        assert!(!logs.join("web").exists());
        assert!(logs.is_dir());
        assert_eq!(
            std::fs::read_to_string(victim.join("precious")).unwrap(),
            "keep"
        );
        // Nothing there: Ok.
        remove_logs(&logs, OsStr::new("web")).unwrap();
        remove_logs(&dir.path().join("none"), OsStr::new("web")).unwrap();
    }

    #[test]
    fn links_at_the_start_are_refused_with_the_message() {
        let dir = tempfile::tempdir().unwrap();
        let victim = victim(dir.path());
        let logs = dir.path().join("logs");
        std::fs::create_dir(&logs).unwrap();
        std::os::unix::fs::symlink(&victim, logs.join("web")).unwrap();
        let Err(RemoveError::Refused(error)) = remove_logs(&logs, OsStr::new("web")) else {
            panic!("logs/web, a link, was not refused");
        };
        assert_eq!(error.to_string(), refused(&logs.join("web")).to_string());
        let planted = dir.path().join("planted");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let Err(RemoveError::Refused(error)) = remove_logs(&planted, OsStr::new("precious")) else {
            panic!("a logs link was not refused");
        };
        assert_eq!(
            error.to_string(),
            format!(
                "{} is a symbolic link: refusing to follow it (remove the link; the console creates a plain file or directory there)",
                planted.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(victim.join("precious")).unwrap(),
            "keep"
        );
    }

    #[test]
    fn the_removal_goes_through_the_handle_opened_before_a_swap() {
        let dir = tempfile::tempdir().unwrap();
        let victim = victim(dir.path());
        std::fs::create_dir(victim.join("web")).unwrap();
        std::fs::write(victim.join("web/precious"), "keep").unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(logs.join("web")).unwrap();
        std::fs::write(logs.join("web/out.log"), "x").unwrap();
        let handle = open_dir(&logs).unwrap().unwrap();
        // The race: the real directory moved away, a link put in its place.
        let moved = dir.path().join("moved");
        std::fs::rename(&logs, &moved).unwrap();
        std::os::unix::fs::symlink(&victim, &logs).unwrap();
        remove_at(&handle, OsStr::new("web")).unwrap();
        assert!(!moved.join("web").exists());
        assert!(moved.is_dir());
        assert_eq!(
            std::fs::read_to_string(victim.join("web/precious")).unwrap(),
            "keep"
        );
        assert_eq!(
            std::fs::read_to_string(victim.join("precious")).unwrap(),
            "keep"
        );
    }

    #[test]
    fn a_hard_link_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("console.log");
        std::fs::hard_link(&target, &link).unwrap();
        let error = append(&link).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{} has 2 hard links: refusing to append to it (remove the link; the console creates a plain file there)",
                link.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
