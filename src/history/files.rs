//! Every file of the history directory (docs/history.md, "Files"): the one
//! module that opens them. The directory is 0700, each file 0600, and no
//! symbolic link is followed (`O_NOFOLLOW`, a planted link refused, as
//! the audit trail's files: [`crate::nofollow`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use crate::model::history::{Segment, Stamp, segment_seq};

/// The index file's name: one JSON array of [`Segment`]s.
pub const INDEX: &str = "index.json";

/// The lock file's name: held (flock) by the one recorder of the store.
pub const LOCK: &str = "recorder.lock";

/// The history directory.
#[derive(Debug, Clone)]
pub struct Dir {
    path: PathBuf,
    /// Writes fail as on a full disk (ENOSPC): the tests' disk full
    /// ([`Dir::fill`], test builds only).
    full: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// A directory entry or file that is a symbolic link: refused.
fn refused(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is a symbolic link: refused, not followed",
            path.display()
        ),
    )
}

/// `O_NOFOLLOW`'s `ELOOP`, and `O_EXCL`'s `EEXIST` on a symbolic link
/// (one planted at the name of the next segment), said in words naming
/// the path; any other error names the path too.
fn no_link(path: &Path, error: io::Error) -> io::Error {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if error.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) || link {
        refused(path)
    } else {
        io::Error::new(error.kind(), format!("{}: {error}", path.display()))
    }
}

impl Dir {
    /// The history directory at `path`, created (0700) when missing; a
    /// symbolic link there is refused.
    ///
    /// # Errors
    /// The refusal, or the I/O error.
    pub fn create(path: &Path) -> io::Result<Self> {
        crate::nofollow::real_dir(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
        Ok(Self {
            path: path.to_path_buf(),
            full: std::sync::Arc::default(),
        })
    }

    /// The history directory at `path` to read (never created).
    ///
    /// # Errors
    /// `NotFound` when nothing is there; the refusal of a symbolic link.
    pub fn existing(path: &Path) -> io::Result<Self> {
        let meta = std::fs::symlink_metadata(path)?;
        if meta.file_type().is_symlink() {
            return Err(refused(path));
        }
        Ok(Self {
            path: path.to_path_buf(),
            full: std::sync::Arc::default(),
        })
    }

    /// Its path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Make every segment write fail with ENOSPC (`true`) or succeed again:
    /// the tests' full disk (the `fault-injection` feature).
    #[cfg(feature = "fault-injection")]
    pub fn fill(&self, full: bool) {
        self.full.store(full, std::sync::atomic::Ordering::Relaxed);
    }

    fn open(&self, name: &str, options: &mut OpenOptions) -> io::Result<File> {
        let path = self.path.join(name);
        options
            .mode(0o600)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(&path)
            .map_err(|e| no_link(&path, e))
    }

    /// Take the recorder's lock: the one recorder of this directory. The
    /// held lock is the returned file (released when it closes, also by a
    /// `kill -9`); it says `pid N` for the next one.
    ///
    /// # Errors
    /// `Err(Ok(words))`: another process holds it (what it wrote, `pid
    /// N`); `Err(Err(e))`: the file could not be opened.
    pub fn lock(&self) -> Result<nix::fcntl::Flock<File>, Result<String, io::Error>> {
        let file = self
            .open(LOCK, OpenOptions::new().read(true).write(true).create(true))
            .map_err(Err)?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(mut held) => {
                let _ = held.set_len(0);
                let _ = writeln!(held, "pid {}", std::process::id());
                Ok(held)
            }
            Err((mut file, nix::errno::Errno::EWOULDBLOCK)) => {
                let mut who = String::new();
                let _ = file.read_to_string(&mut who);
                Err(Ok(crate::model::text::sanitize(who.trim()).into_owned()))
            }
            Err((_, errno)) => Err(Err(io::Error::from(errno))),
        }
    }

    /// Create a new segment file (0600; it must not exist).
    ///
    /// # Errors
    /// The I/O error (a symbolic link or a file already there).
    pub fn create_segment(&self, name: &str) -> io::Result<File> {
        self.open(name, OpenOptions::new().append(true).create_new(true))
    }

    /// Remove a segment (retention).
    ///
    /// # Errors
    /// The I/O error.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        std::fs::remove_file(self.path.join(name))
    }

    /// Write the index (a temporary file renamed over it).
    ///
    /// # Errors
    /// The I/O error.
    pub fn write_index(&self, segments: &[Segment]) -> io::Result<()> {
        let text = serde_json::to_string(segments).map_err(io::Error::other)?;
        let temporary = format!("{INDEX}.{}.tmp", std::process::id());
        let _ = std::fs::remove_file(self.path.join(&temporary));
        let mut file = self.open(&temporary, OpenOptions::new().write(true).create_new(true))?;
        file.write_all(text.as_bytes())?;
        drop(file);
        std::fs::rename(self.path.join(&temporary), self.path.join(INDEX))
    }

    /// The names in the directory that look like segments but are not
    /// ordinary files, with why (`a symbolic link`, `not an ordinary
    /// file`): [`Dir::segments`] skips them; `history` says so.
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn skipped(&self) -> io::Result<Vec<(String, &'static str)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.path)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if segment_seq(&name).is_none() {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(self.path.join(&name)) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                out.push((name, "a symbolic link"));
            } else if !meta.is_file() {
                out.push((name, "not an ordinary file"));
            }
        }
        out.sort();
        Ok(out)
    }

    /// The segment files, oldest first, each with its first and last time
    /// and its size: from the index when it names the file at its size,
    /// else read from the file itself (the segment being written, or an
    /// index a `kill -9` left behind). A segment with no whole line is
    /// left out.
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn segments(&self) -> io::Result<Vec<Segment>> {
        let indexed: Vec<Segment> = self
            .open(INDEX, OpenOptions::new().read(true))
            .ok()
            .and_then(|mut f| {
                let mut text = String::new();
                f.read_to_string(&mut text).ok()?;
                serde_json::from_str(&text).ok()
            })
            .unwrap_or_default();
        let mut names: Vec<(i64, u64, String)> = Vec::new();
        for entry in std::fs::read_dir(&self.path)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some((started, seq)) = segment_seq(&name) {
                names.push((started, seq, name));
            }
        }
        names.sort();
        let mut out = Vec::with_capacity(names.len());
        for (_, _, name) in names {
            let Ok(meta) = std::fs::symlink_metadata(self.path.join(&name)) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            if let Some(known) = indexed
                .iter()
                .find(|s| s.file == name && s.bytes == meta.len())
            {
                out.push(known.clone());
                continue;
            }
            let mut span: Option<(i64, i64)> = None;
            self.read_segment(&name, &mut |line| {
                if let Ok(stamp) = serde_json::from_slice::<Stamp>(line) {
                    span = Some(span.map_or((stamp.t, stamp.t), |(a, _)| (a, stamp.t)));
                }
                true
            })?;
            if let Some((first, last)) = span {
                out.push(Segment {
                    file: name,
                    first,
                    last,
                    bytes: meta.len(),
                });
            }
        }
        Ok(out)
    }

    /// Each whole line of a segment, in order (the header first), until
    /// `each` says stop. A last line cut short (a `kill -9` mid-write, a
    /// torn frame) is skipped; what was whole before it is read.
    ///
    /// # Errors
    /// The file cannot be opened (a symbolic link is refused).
    pub fn read_segment(&self, name: &str, each: &mut dyn FnMut(&[u8]) -> bool) -> io::Result<()> {
        let file = self.open(name, OpenOptions::new().read(true))?;
        let mut decoder = zstd::stream::read::Decoder::new(file)?;
        let mut text = Vec::new();
        // A torn last frame ends the read with an error: what was decoded
        // before it is kept.
        let _ = decoder.read_to_end(&mut text);
        let whole = text
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |at| at + 1);
        for line in text[..whole].split(|b| *b == b'\n') {
            if !line.is_empty() && !each(line) {
                break;
            }
        }
        Ok(())
    }

    /// Segment `name`'s zstd frames as on disk, each its compressed bytes,
    /// opened as [`Dir::read_segment`] opens it (the tests' look at the
    /// frames a recorder wrote).
    ///
    /// # Errors
    /// The file cannot be read, or holds a torn frame.
    #[cfg(test)]
    pub(crate) fn raw_frames(&self, name: &str) -> io::Result<Vec<Vec<u8>>> {
        let mut bytes = Vec::new();
        self.open(name, OpenOptions::new().read(true))?
            .read_to_end(&mut bytes)?;
        let mut frames = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let size = zstd::zstd_safe::find_frame_compressed_size(&bytes[at..])
                .map_err(|code| io::Error::other(format!("a torn frame ({code})")))?;
            frames.push(bytes[at..at + size].to_vec());
            at += size;
        }
        Ok(frames)
    }
}

/// One segment being written: whole frames appended, a failed write cut
/// back off.
#[derive(Debug)]
pub struct Writing {
    file: File,
    full: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Its name.
    pub name: String,
    /// Bytes on disk.
    pub bytes: u64,
}

impl Writing {
    /// Start `name` in `dir`.
    ///
    /// # Errors
    /// The I/O error.
    pub fn start(dir: &Dir, name: String) -> io::Result<Self> {
        let file = dir.create_segment(&name)?;
        Ok(Self {
            file,
            full: std::sync::Arc::clone(&dir.full),
            name,
            bytes: 0,
        })
    }

    /// Append one zstd frame whose lines `fill` hands to the [`Frame`]:
    /// each is compressed as it comes (the frame's text is never held
    /// whole), and on disk the frame decodes whole. A write that fails
    /// (ENOSPC) is cut off again, so the file stays whole frames.
    ///
    /// # Errors
    /// The first I/O error of the frame's writes.
    pub fn frame(&mut self, fill: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        let tail = Tail {
            file: &mut self.file,
            full: self.full.load(std::sync::atomic::Ordering::Relaxed),
            written: 0,
        };
        let encoder = zstd::stream::write::Encoder::new(tail, LEVEL).and_then(|mut encoder| {
            encoder.window_log(WINDOW_LOG)?;
            Ok(encoder)
        });
        let mut frame = match encoder {
            Ok(encoder) => Frame {
                encoder: Some(encoder),
                error: None,
            },
            Err(error) => Frame::failed(error),
        };
        fill(&mut frame);
        match frame.finish() {
            Ok(written) => {
                self.bytes += written;
                Ok(())
            }
            Err(error) => {
                let _ = self.file.set_len(self.bytes);
                Err(error)
            }
        }
    }
}

/// The zstd level of every frame.
const LEVEL: i32 = 3;

/// The zstd window of every frame: 256 kB (level 3 alone takes 2 MB for a
/// stream of unknown size, and its encoder about 3.6 MB; with this one
/// about 1 MB). NDJSON rows repeat within a row and between neighbours:
/// the first group of 100,000 instances is 1.45 MB on disk with it, 1.40
/// MB with 2 MB.
const WINDOW_LOG: u32 = 18;

/// The segment file under a frame's encoder: the bytes that reach it
/// counted; the tests' full disk ([`Dir::fill`]) lets half of a write
/// land, then fails it with ENOSPC.
struct Tail<'a> {
    file: &'a mut File,
    full: bool,
    written: u64,
}

impl io::Write for Tail<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.full {
            let _ = self.file.write_all(&buf[..buf.len() / 2]);
            return Err(io::Error::from_raw_os_error(nix::libc::ENOSPC));
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// One frame being written ([`Writing::frame`]): each line compressed as
/// it is taken; the first failed write kept, the lines after it dropped.
pub struct Frame<'a> {
    encoder: Option<zstd::stream::write::Encoder<'static, Tail<'a>>>,
    error: Option<io::Error>,
}

impl std::fmt::Debug for Frame<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl Frame<'_> {
    /// A frame that writes nowhere and fails with `error` (no segment is
    /// open): its lines are taken and dropped.
    #[must_use]
    pub fn failed(error: io::Error) -> Frame<'static> {
        Frame {
            encoder: None,
            error: Some(error),
        }
    }

    /// Take one line (`text` without its newline).
    pub fn line(&mut self, text: &str) {
        self.bytes(text.as_bytes());
        self.bytes(b"\n");
    }

    /// Take `bytes` as they are (a line's part, or several lines).
    pub fn bytes(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if let Some(encoder) = self.encoder.as_mut()
            && let Err(error) = encoder.write_all(bytes)
        {
            self.error = Some(error);
        }
    }

    /// The frame ended: the bytes it put on disk, or its first error.
    ///
    /// # Errors
    /// The first write that failed.
    pub fn finish(self) -> io::Result<u64> {
        if let Some(error) = self.error {
            return Err(error);
        }
        match self.encoder {
            Some(encoder) => Ok(encoder.finish()?.written),
            None => Err(io::Error::other("no segment open")),
        }
    }
}
