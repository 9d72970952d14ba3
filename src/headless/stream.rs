//! `snapshot` and `snapshot --json` streamed: each instance written as
//! `SQLite` reads it ([`stream`]), the same bytes as the whole read.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{report, usage, who_reaps_line};
use crate::cli::Cli;
use crate::model::time::unix_now;
use crate::startup::{Create, open_store};
use crate::store::Access;

/// Up to how many instances `snapshot` (the table) reads the store whole
/// rather than streaming it: the whole read holds every row (43 MB at
/// 100,000 instances, 339 MB at 1,000,000: about 64 MB here) but reads
/// once, where the streamed table reads twice, widths and lines (the
/// whole read measured at 1,000,000: 2.6 s and 339 MB; the stream in
/// BENCHMARKS.md).
pub const TABLE_READ_WHOLE_UP_TO: u64 = 150_000;

/// `snapshot` and `snapshot --json` streamed: each instance written as
/// `SQLite` reads it in name order ([`crate::store::Store::stream_snapshot`];
/// the table in two passes of one read, widths and lines, above
/// [`TABLE_READ_WHOLE_UP_TO`] instances, each instance's services read
/// and its STAGE derived in the first alone, the cells kept by position,
/// [`report::Stages`], the tombstones' GC lines kept for the end), so
/// memory grows with the store by 4 B an instance, each distinct STAGE
/// cell, and about 35 B a tombstone; the same bytes as the whole read's. `None` when the stream
/// declined before writing anything (a table of a smaller store, a
/// store read immutably, a hand-made store whose rows the whole read
/// orders or pairs otherwise, or a store whose newest write could doubt
/// the wall clock): the caller reads whole.
pub(super) fn stream(cli: &Cli, json: bool, now: Option<i64>) -> Option<ExitCode> {
    let crate::startup::Opened {
        path, mut store, ..
    } = match open_store(cli, Access::ReadOnly, Create::Never) {
        Ok(opened) => opened,
        Err(error) => return Some(usage(&error.to_string())),
    };
    if store.immutable() {
        return None;
    }
    // The table streams in two passes (widths, lines): below
    // the size where the whole read's memory matters, one read is faster.
    if !json
        && store
            .instance_count()
            .is_ok_and(|n| n <= TABLE_READ_WHOLE_UP_TO)
    {
        return None;
    }
    // As the whole read: an explicit `--now` is not doubted; the kernel's
    // doubt needs no store; the store's evidence is checked by the stream
    // (which declines where it could doubt).
    let wall = unix_now();
    let clock = now
        .is_none()
        .then(|| crate::reaper::kernel_clock::check(wall))
        .flatten();
    let store_wall = (now.is_none() && clock.is_none()).then_some(wall);
    let now = now.unwrap_or(wall);
    let shown = path.display().to_string();
    let zone = crate::startup::display_zone(cli.utc);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let state_dir = store.state_dir();
    let mut reader = Reader {
        writer: if json {
            Writer::Json(report::JsonStream::new(
                &mut out,
                &shown,
                now,
                clock.as_ref(),
            ))
        } else {
            Writer::Table(Box::new(report::TableStream::new(
                &mut out,
                &shown,
                now,
                &zone,
                clock.as_ref(),
            )))
        },
        clock: clock.as_ref(),
        proxy_port: crate::controller::probe::probe(&state_dir)
            .proxy_port
            .unwrap_or(crate::model::services::DEFAULT_PROXY_PORT),
        state_dir: state_dir.clone(),
        probe: super::probe::services_probe(),
    };
    let streamed = store.stream_snapshot(
        crate::store::probe::checked_sysinfo().as_mut(),
        store_wall,
        &mut reader,
    );
    let written = match streamed {
        Ok(false) => return None,
        Ok(true) => Ok(()),
        Err(crate::store::StreamStop::Reader(error)) => Err(error),
        Err(crate::store::StreamStop::Store(error)) => {
            // The document stops unfinished (what is still buffered is
            // dropped, never completed as if whole).
            drop(reader);
            let _ = out.into_parts();
            let what = if json { "snapshot --json" } else { "snapshot" };
            return Some(usage(&format!("{what} stopped: {error}")));
        }
    };
    drop(reader);
    let written = if json {
        written
    } else {
        written.and_then(|()| who_reaps_line(&mut out, &state_dir))
    };
    Some(match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error of ours.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => usage(&error.to_string()),
    })
}

/// The document or the table [`stream`] writes.
enum Writer<'a, W: std::io::Write> {
    Json(report::JsonStream<'a, W>),
    /// Boxed: it holds the kept STAGE cells and GC lines.
    Table(Box<report::TableStream<'a, W>>),
}

/// What [`stream`] writes with: the document or the table, and each
/// instance's services probed as [`BatchedServices`] probes them (the
/// document's, and the table's STAGE).
struct Reader<'a, W: std::io::Write> {
    writer: Writer<'a, W>,
    /// Said on stderr once the stream is read.
    clock: Option<&'a crate::reaper::clock::ClockDoubt>,
    state_dir: PathBuf,
    proxy_port: u16,
    probe: Box<dyn crate::store::probe::HostProbe>,
}

impl<W: std::io::Write> crate::store::StreamReader for Reader<'_, W> {
    type Error = std::io::Error;

    fn passes(&self) -> usize {
        match self.writer {
            Writer::Json(_) => 1,
            Writer::Table(_) => report::TableStream::<W>::PASSES,
        }
    }

    /// The document's services, and the table's STAGE column.
    fn wants_services(&self) -> bool {
        true
    }

    /// The table's services are read in its STAGE pass alone (the lines
    /// pass writes the cells kept there).
    fn services_in(&self, pass: usize) -> bool {
        match self.writer {
            Writer::Json(_) => true,
            Writer::Table(_) => pass == report::TableStream::<W>::STAGE_PASS,
        }
    }

    fn head(&mut self, head: &crate::model::Snapshot) -> std::io::Result<()> {
        if let Some(doubt) = self.clock {
            eprintln!("stackless-tui: {doubt}");
        }
        match &mut self.writer {
            Writer::Json(json) => json.head(head),
            Writer::Table(table) => table.head(head),
        }
    }

    fn instance(
        &mut self,
        pass: usize,
        head: &crate::model::Snapshot,
        instance: &crate::model::Instance,
        services: Option<crate::store::services::ServiceRows>,
        observations: Vec<crate::model::detail::Observation>,
    ) -> std::io::Result<()> {
        match &mut self.writer {
            Writer::Json(json) => {
                let services = super::streamed_services(
                    instance,
                    services,
                    observations,
                    (&self.state_dir, self.proxy_port),
                    self.probe.as_mut(),
                );
                json.instance(head, instance, services)
            }
            // Only the STAGE pass reads a stage (the lines pass writes the
            // cells kept there): none probed in the other.
            Writer::Table(table) if pass != report::TableStream::<W>::STAGE_PASS => {
                table.instance(pass, head, (instance, ""))
            }
            Writer::Table(table) => {
                let stage = super::streamed_stage(
                    instance,
                    services,
                    observations,
                    &self.state_dir,
                    self.probe.as_mut(),
                );
                table.instance(pass, head, (instance, &stage))
            }
        }
    }

    fn finish(&mut self, head: &crate::model::Snapshot) -> std::io::Result<()> {
        match &mut self.writer {
            Writer::Json(json) => json.finish(head),
            Writer::Table(table) => table.finish(head),
        }
    }
}
