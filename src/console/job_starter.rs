//! The `job-starter` thread: it starts the operator's teardowns (`r`, `d`,
//! and the bulk ones) for the render loop, so the loop never writes the
//! audit line of a job refused at start (a teardown of that instance
//! already running, a name not DNS-safe: `JobRunner::spawn` records it).
//! A single job starts at once; a bulk `r`/`d` ([`super::render_loop`]'s
//! `Effect::Bulk`) starts at most `--reap-concurrency` jobs at once, the
//! next ones as running ones end. Jobs not started when the render loop
//! ends are never started.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::model::activity::ActivityKind;
use crate::reaper::{Job, JobRunner};

/// How often the starter looks whether a running bulk job ended, while
/// bulk jobs wait (it sleeps until the next request otherwise).
const BULK_CHECK: Duration = Duration::from_millis(50);

/// What the render loop asks for.
enum Start {
    /// One job, now.
    One(Box<Job>),
    /// A bulk action's jobs, at most `--reap-concurrency` at once.
    Bulk(Vec<Job>),
}

/// The render loop's handle on the starter: sends, never waits.
pub(super) struct JobStarter {
    starts: mpsc::Sender<Start>,
}

impl JobStarter {
    /// Start the thread, starting jobs with `runner`.
    ///
    /// # Errors
    /// The thread could not be started.
    pub(super) fn spawn(runner: JobRunner) -> std::io::Result<Self> {
        let (starts, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("job-starter".into())
            .spawn(move || run(&runner, &rx))?;
        Ok(Self { starts })
    }

    /// Start `job` now.
    pub(super) fn start(&self, job: Job) {
        let _ = self.starts.send(Start::One(Box::new(job)));
    }

    /// Start `jobs` at most `--reap-concurrency` at once.
    pub(super) fn start_bulk(&self, jobs: Vec<Job>) {
        let _ = self.starts.send(Start::Bulk(jobs));
    }
}

/// Take requests until the render loop's handle drops.
fn run(runner: &JobRunner, rx: &mpsc::Receiver<Start>) {
    let mut waiting: VecDeque<Job> = VecDeque::new();
    let mut running: Vec<JoinHandle<Option<ActivityKind>>> = Vec::new();
    loop {
        running.retain(|job| !job.is_finished());
        while running.len() < runner.config().concurrency.max(1) {
            let Some(job) = waiting.pop_front() else {
                break;
            };
            // A refusal (in flight, not DNS-safe) is reported by `spawn`.
            if let Ok(handle) = runner.spawn(job) {
                running.push(handle);
            }
        }
        let next = if waiting.is_empty() {
            rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(BULK_CHECK)
        };
        match next {
            // A single key's job is not held back by a bulk action's.
            Ok(Start::One(job)) => {
                let _ = runner.spawn(*job);
            }
            Ok(Start::Bulk(jobs)) => waiting.extend(jobs),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}
