//! The logs adapter: an instance's service logs on disk,
//! `<state_dir>/logs/<dir>/<service>.log` (see [`crate::model::logview`]
//! for which `<dir>`), opened without following symlinks, read from the
//! end ([`history`]) and followed across rotation and truncation on a
//! thread of its own ([`follower`]) that sends `Event::Logs`.
//!
//! Every file is opened with `O_NOFOLLOW | O_NONBLOCK` and checked to be an
//! ordinary file (as stackless's own runner does), and the `logs` directory
//! and the instance's directory are refused when they are symlinks; a file
//! with more than one hard link is refused too (a link planted in the logs
//! directory). The file's owner is not checked: a log path planted by the
//! logs directory's owner as a hard link is refused, but one that user can
//! read and copy in is theirs to show.

pub mod follower;
pub mod history;
pub mod search;
mod watches;

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use crate::model::logtext::{self, Assembler, FileKey};
use crate::model::logview::{LogLine, LogsRequest, LogsState, Older, Opened, OpenedService};
use crate::model::text::sanitize;

/// The most services (log files) one view opens.
pub const MAX_SERVICES: usize = 32;

/// Generation `index` of the log `base` (`web.log`): `web.log` itself for
/// 0, `web.log.1` .. for older ones (stackless 0.4.0's rotation renames
/// `.log.1` to `.log.2`, then `.log` to `.log.1`).
#[must_use]
pub fn generation(base: &Path, index: u32) -> PathBuf {
    if index == 0 {
        base.to_owned()
    } else {
        let mut name = base.as_os_str().to_owned();
        name.push(format!(".{index}"));
        PathBuf::from(name)
    }
}

/// A file's identity.
#[must_use]
pub fn key_of(meta: &Metadata) -> FileKey {
    FileKey {
        dev: meta.dev(),
        ino: meta.ino(),
    }
}

/// Open a log for reading without following a symlink (`O_NOFOLLOW`) or
/// blocking on a planted FIFO (`O_NONBLOCK`); anything but an ordinary file
/// with one link is refused (a hard link planted in the logs directory can
/// name any file its planter could link, e.g. `/etc/shadow`).
///
/// # Errors
/// It cannot be opened, is a symlink (`ELOOP`) or is not an ordinary file.
pub fn open_log(path: &Path) -> io::Result<File> {
    // Refused before it is opened: closing a descriptor on a link to the
    // store would drop this process's locks on it (`store::files`).
    crate::nofollow::not_hard_linked(path, refused_links)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not an ordinary file"));
    }
    // `ln /etc/shadow logs/x/web.log` would show another file: a log
    // stackless writes has one link.
    if meta.nlink() > 1 {
        return Err(io::Error::other(refused_links(meta.nlink())));
    }
    Ok(file)
}

/// The refusal of a log with `links` names.
fn refused_links(links: u64) -> String {
    format!("{links} hard links: refused (it may be another file)")
}

/// What a directory on the way to the logs is.
fn check_dir(path: &Path) -> Result<(), LogsState> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(LogsState::Failed(format!(
            "{} is a symlink: refused (logs are read only from ordinary directories)",
            sanitize(&path.display().to_string())
        ))),
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(LogsState::Failed(format!(
            "{} is not a directory",
            sanitize(&path.display().to_string())
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(LogsState::DirGone {
            path: sanitize(&path.display().to_string()).into_owned(),
        }),
        Err(e) => Err(LogsState::Failed(format!(
            "cannot read {}: {e}",
            sanitize(&path.display().to_string())
        ))),
    }
}

/// The services of a logs directory: each ordinary `<service>.log` file
/// (not `.log.1`, not the runner's `.log.lock`), sorted, at most
/// [`MAX_SERVICES`]; symlinks are listed too, to be refused when opened.
fn services(dir: &Path) -> io::Result<Vec<String>> {
    Ok(listing(dir)?.names)
}

/// What [`listing`] found.
struct Listing {
    /// The first [`MAX_SERVICES`] names, sorted.
    names: Vec<String>,
    /// How many `<service>.log` there are.
    total: usize,
    /// `.log` names that are not UTF-8, sanitized (never opened).
    skipped: Vec<String>,
}

impl Listing {
    /// What is left out, as said above the tabs.
    fn notice(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.total > self.names.len() {
            parts.push(format!(
                "{} of {} services shown (the first {MAX_SERVICES} by name; the rest are not opened)",
                self.names.len(),
                self.total
            ));
        }
        if !self.skipped.is_empty() {
            parts.push(format!(
                "not UTF-8, not opened: {}",
                self.skipped.join(", ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

fn listing(dir: &Path) -> io::Result<Listing> {
    let mut names = Vec::new();
    let mut skipped = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            let lossy = name.to_string_lossy();
            if lossy.ends_with(".log") {
                skipped.push(sanitize(&lossy).into_owned());
            }
            continue;
        };
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        let kind = entry.file_type()?;
        if stem.is_empty() || !(kind.is_file() || kind.is_symlink()) {
            continue;
        }
        names.push(stem.to_owned());
    }
    names.sort();
    skipped.sort();
    let total = names.len();
    names.truncate(MAX_SERVICES);
    Ok(Listing {
        names,
        total,
        skipped,
    })
}

/// One opened service log, handed to the follower: the file as read at
/// open and where its tail ended, so nothing is lost or read twice.
#[derive(Debug)]
pub struct Follow {
    /// The service index.
    pub service: u16,
    /// `<dir>/<service>.log`.
    pub base: PathBuf,
    /// The file read (its current generation at open).
    pub file: File,
    /// Its identity.
    pub key: FileKey,
    /// The next byte to read.
    pub offset: u64,
    /// The line being written when the tail was read.
    pub assembler: Assembler,
}

/// Open `request`'s logs under `state_dir`: what was found, the tail of
/// each service, and the files for the follower.
#[must_use]
pub fn open(state_dir: &Path, request: &LogsRequest) -> (Opened, Vec<Follow>) {
    let opening = open_all(state_dir, request);
    (opening.opened, opening.follows)
}

/// What [`open_all`] found.
#[derive(Debug)]
pub struct Opening {
    /// For the view.
    pub opened: Opened,
    /// For the follower.
    pub follows: Vec<Follow>,
    /// Every service's name as found on disk, in index order (including
    /// the ones that could not be opened), so the follower can tell a new
    /// one.
    pub names: Vec<String>,
}

/// [`open`], with the services' names as found on disk.
#[must_use]
pub fn open_all(state_dir: &Path, request: &LogsRequest) -> Opening {
    crate::render_thread::assert_off("open the logs");
    let root = state_dir.join("logs");
    let dir = root.join(&request.dir);
    let path = sanitize(&dir.display().to_string()).into_owned();
    let done = |state| Opening {
        opened: Opened {
            state,
            path: path.clone(),
            services: Vec::new(),
            notice: None,
        },
        follows: Vec::new(),
        names: Vec::new(),
    };
    if !crate::model::logview::logs_on_disk(&request.substrate) {
        return done(LogsState::Elsewhere);
    }
    if let Err(state) = check_dir(&root).and_then(|()| check_dir(&dir)) {
        // No `logs` directory at all: the instance's is gone too.
        let state = match state {
            LogsState::DirGone { .. } => LogsState::DirGone { path: path.clone() },
            other => other,
        };
        return done(state);
    }
    let (names, notice) = match listing(&dir) {
        Ok(list) if list.names.is_empty() && list.skipped.is_empty() => {
            return done(LogsState::NoFiles { path: path.clone() });
        }
        Ok(list) => {
            let notice = list.notice();
            (list.names, notice)
        }
        Err(e) => return done(LogsState::Failed(format!("cannot list {path}: {e}"))),
    };
    let mut opened = Vec::new();
    let mut follows = Vec::new();
    for (index, name) in names.iter().enumerate() {
        let service = u16::try_from(index).unwrap_or(u16::MAX);
        let base = dir.join(format!("{name}.log"));
        let (service_open, follow) = open_service(service, name, base);
        opened.push(service_open);
        follows.extend(follow);
    }
    Opening {
        opened: Opened {
            state: LogsState::Ready,
            path,
            services: opened,
            notice,
        },
        follows,
        names,
    }
}

/// Why a log cannot be opened, as said on its tab.
fn open_error(e: &io::Error) -> String {
    if e.raw_os_error() == Some(nix::libc::ELOOP) {
        "a symlink: not followed".to_owned()
    } else {
        e.to_string()
    }
}

fn open_service(service: u16, name: &str, base: PathBuf) -> (OpenedService, Option<Follow>) {
    let read = open_log(&base).and_then(|file| {
        let tail = history::tail(&base, &file)?;
        let key = key_of(&file.metadata()?);
        Ok((file, key, tail))
    });
    let name = sanitize(name).into_owned();
    match read {
        Ok((file, key, tail)) => (
            OpenedService {
                name,
                lines: tail
                    .lines
                    .iter()
                    .map(|raw| LogLine::from_raw(raw, service))
                    .collect(),
                older: tail.older,
                error: None,
                partial: (!tail.carry.0.is_empty()).then(|| {
                    LogLine::from_raw(
                        &logtext::RawLine {
                            bytes: tail.carry.0.clone(),
                            at: tail.carry.1,
                            cont: false,
                            cut: false,
                        },
                        service,
                    )
                }),
            },
            Some(Follow {
                service,
                base,
                file,
                key,
                offset: tail.end,
                assembler: Assembler::with_carry(tail.carry.0, tail.carry.1),
            }),
        ),
        Err(e) => {
            let why = open_error(&e);
            (
                OpenedService {
                    error: Some(format!("cannot open {name}.log: {why}")),
                    name,
                    lines: Vec::new(),
                    older: Older::Start,
                    partial: None,
                },
                None,
            )
        }
    }
}
