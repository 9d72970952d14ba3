//! The agent's one loop (`serve --stdio`, `snapshot --follow`): the
//! events of the engine's threads applied to the [`App`] as the render
//! loop applies them, the commands read from stdin run through
//! [`App::remote`], and after each batch what changed written out as
//! protocol lines (docs/protocol.md): `hello` and the first snapshot
//! once, then deltas, Activity lines, who reaps, banners, heartbeats.
//! Like the render loop it reads no file and no store
//! (`crate::render_thread`); it writes only stdout.

use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr as _};
use serde_json::Value;
use tokio::signal::unix::{SignalKind, signal};

mod first;
mod logs;
mod metrics;
pub(in crate::console) mod words;

use logs::LogsStream;
use words::{fit_lines, generation_word, reaper_line};

use super::out::{Gone, Out};
use super::stdin::Input;
use crate::console::actions::Actions;
use crate::console::io_worker::IoWorker;
use crate::console::run::Engine;
use crate::console::setup::Setup;
use crate::event::{Answer, Event, Request};
use crate::model::Snapshot;
use crate::model::protocol::HEARTBEAT_SECS;
use crate::model::protocol::command::{self, Command};
use crate::model::protocol::lines::{self, Banner, DetailReply, Hello, ReaperLine, Reply};
use crate::model::protocol::rows::BirthRow;
use crate::model::protocol::rows::Tables;
use crate::model::rules::{Action, InFlight};
use crate::model::time::unix_now;
use crate::model::verbs::{self, Verb};
use crate::ui::App;
use first::first_group_ready;

/// What the loop is given besides the App and the channels.
pub(super) struct Wiring<'a> {
    pub(super) engine: &'a Engine,
    pub(super) setup: &'a Setup,
    pub(super) io: IoWorker,
    pub(super) follow_only: bool,
    /// Where the lines go instead of stdout (`record`).
    pub(super) sink: Option<Box<dyn std::io::Write + Send>>,
}

/// Run until stdin ends, a signal, or stdout closes; returns why.
///
/// # Errors
/// A signal handler or the job-starter thread could not be started.
pub(super) async fn run(
    app: App,
    mut rx: crate::event::EventReceiver,
    mut commands: Option<tokio::sync::mpsc::Receiver<Input>>,
    wiring: Wiring<'_>,
) -> Result<&'static str> {
    let _loop = crate::render_thread::enter();
    let Wiring {
        engine,
        setup,
        io,
        follow_only,
        sink,
    } = wiring;
    let mut actions = Actions::new(
        &engine.teardowns,
        &engine.recorder,
        setup.stackless.clone(),
        (engine.control.clone(), engine.runtime.handle().clone(), io),
        engine.verbs_running.clone(),
    )
    .wrap_err("cannot start the job-starter thread")?;
    let out = match sink {
        Some(sink) => Out::spawn(sink),
        None => Out::stdout(),
    }
    .wrap_err("cannot start the stdout thread")?;
    let mut session = Session::new(app, out, setup, (follow_only, engine));
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sigterm = signal(SignalKind::terminate()).wrap_err("cannot watch SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).wrap_err("cannot watch SIGHUP")?;
    let mut sigint = signal(SignalKind::interrupt()).wrap_err("cannot watch SIGINT")?;
    let mut early: Vec<Input> = Vec::new();
    let mut ended: Option<Instant> = None;
    let why = loop {
        tokio::select! {
            Some(event) = rx.recv() => session.event(&mut actions, event),
            // Commands wait for `hello` and the first snapshot (each is
            // checked against the snapshot the client saw): before it, at
            // most `EARLY` lines are read and held. The end of stdin before
            // it stops the agent once they were answered, or after
            // `EARLY_END_WAIT` if the store is never read.
            input = next_command(&mut commands),
                if ended.is_none() && (session.hello_sent || early.len() < EARLY) =>
            {
                match input {
                    Input::End if session.hello_sent => break "stdin closed",
                    Input::End => ended = Some(Instant::now()),
                    input if !session.hello_sent => early.push(input),
                    input => session.input(&mut actions, input),
                }
            },
            _ = ticker.tick() => session.event(&mut actions, Event::Tick),
            _ = sigterm.recv() => break "SIGTERM",
            _ = sighup.recv() => break "SIGHUP",
            _ = sigint.recv() => break "SIGINT",
        }
        while let Ok(event) = rx.try_recv() {
            session.event(&mut actions, event);
        }
        session.publish(&actions);
        if session.hello_sent && !early.is_empty() {
            for input in std::mem::take(&mut early) {
                session.input(&mut actions, input);
            }
            session.publish(&actions);
        }
        let stop_now = ended.is_some_and(|at| session.hello_sent || at.elapsed() >= EARLY_END_WAIT);
        match session.flush() {
            Ok(()) => {}
            Err(Gone::Closed) => break "stdout closed",
            Err(Gone::Stalled) => break "stdout stalled (the reader stopped reading)",
        }
        if stop_now {
            break "stdin closed";
        }
    };
    wind_down(engine, &mut session, &mut actions, &mut rx, why).await;
    Ok(why)
}

/// The agent stops: its teardowns are stopped (TERM, then KILL after
/// `KILL_GRACE`), as `reap --once`'s on a signal; their `interrupted`
/// lines still go out (a closed stdout takes none of it); what is queued
/// gets a moment to be read (a stalled reader none).
async fn wind_down(
    engine: &Engine,
    session: &mut Session,
    actions: &mut Actions<'_>,
    rx: &mut crate::event::EventReceiver,
    why: &str,
) {
    engine.stop.cancel();
    let deadline = Instant::now() + crate::reaper::teardown::KILL_GRACE + Duration::from_secs(2);
    while (!engine.teardowns.inflight().names().is_empty() || !session.tearing_down.is_empty())
        && Instant::now() < deadline
    {
        if let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(50), rx.recv()).await {
            session.event(actions, event);
        }
    }
    while let Ok(event) = rx.try_recv() {
        session.event(actions, event);
    }
    session.publish(actions);
    session
        .out
        .drain(Duration::from_secs(if why.starts_with("stdout") {
            0
        } else {
            2
        }));
}

/// The command lines read before `hello` and held until it is sent.
const EARLY: usize = 64;

/// After the end of stdin before `hello`, how long the agent still waits
/// for its store to be read (to answer the lines it held) before it stops.
const EARLY_END_WAIT: Duration = Duration::from_secs(10);

/// The next command line; never, for `snapshot --follow`.
async fn next_command(commands: &mut Option<tokio::sync::mpsc::Receiver<Input>>) -> Input {
    match commands {
        Some(rx) => rx.recv().await.unwrap_or(Input::End),
        None => std::future::pending().await,
    }
}

/// How long a teardown that changed the store waits at most for a
/// snapshot showing it (one that cannot be recorded never shows).
const SETTLE_WAIT: Duration = Duration::from_secs(10);

/// How an instance stands in a snapshot: its status and reap attempt.
type Standing = (crate::model::Status, Option<crate::model::ReapAttempt>);

/// How `name` stands in `snapshot` (`None`: not in it).
fn standing_in(snapshot: &Snapshot, name: &str) -> Option<Standing> {
    snapshot
        .instance(name)
        .map(|i| (i.status.clone(), snapshot.reap_attempt(name).cloned()))
}

/// The loop's state: the App, what was written, what waits for an answer.
struct Session {
    app: App,
    out: Out,
    started: Instant,
    hello: Hello,
    hello_sent: bool,
    role_known: bool,
    tables: Tables,
    seq: u64,
    /// The newest snapshot (the App's), and whether it arrived since the
    /// last group.
    latest: Arc<Snapshot>,
    dirty: bool,
    /// The next group is a `reset` saying this (the store file read anew:
    /// [`Snapshot::reopened`]).
    reset_why: Option<&'static str>,
    reaper: Option<ReaperLine>,
    banners: Vec<(&'static str, String)>,
    /// `detail` commands waiting for the I/O worker: (id, name).
    details: Vec<(Value, String)>,
    logs: Option<LogsStream>,
    /// The last logs session given out (above the App's own, which never
    /// opens one here).
    logs_session: u64,
    /// The teardowns running in this process (the reaper's and the
    /// commands').
    teardowns_running: crate::reaper::InFlight,
    /// The renews and verifies running in this process
    /// ([`verbs::running_key`]).
    verbs_running: crate::reaper::InFlight,
    /// Teardowns this stream asked for whose outcome has not come yet (the
    /// `job-starter` claims them a moment later), with how each instance
    /// stood then.
    asked: std::collections::HashMap<String, Standing>,
    /// Teardowns that changed the store whose outcome came before a
    /// snapshot showed it, with how the instance stood before and when the
    /// outcome came: a second teardown asked now would be checked against
    /// the old rows, and abort (`reap attempt changed`) after its `ok`.
    settling: std::collections::HashMap<String, (Standing, Instant)>,
    /// Teardowns whose `tearing down` line was seen and whose outcome was
    /// not yet: at the stop, their last lines are waited for.
    tearing_down: std::collections::HashSet<String>,
    /// The audit trail's counts and the helper's restarts (`metrics`).
    metrics: crate::console::metrics_file::Sources,
    /// `metrics` commands asked before the audit trail's first count
    /// ended: answered at a tick once it has.
    metrics_waiting: Vec<Value>,
}

impl Session {
    fn new(
        app: App,
        out: Out,
        setup: &Setup,
        (follow_only, engine): (bool, &crate::console::run::Engine),
    ) -> Self {
        let host = sysinfo::System::host_name().unwrap_or_default();
        Self {
            app,
            out,
            started: Instant::now(),
            hello: Hello {
                host: crate::model::text::sanitize_short(&host, 253),
                store: setup.path.display().to_string(),
                schema: 0,
                generation: "contract",
                read_only: setup.access == crate::store::Access::ReadOnly,
                dry_run: setup.action.dry_run,
                follow_only,
                reaper: reaper_line(None),
                teardown: Vec::new(),
                stackless: String::new(),
                now: 0,
            },
            hello_sent: false,
            role_known: false,
            tables: Tables::new(),
            seq: 0,
            latest: Arc::new(Snapshot::default()),
            dirty: false,
            reset_why: None,
            reaper: None,
            banners: Vec::new(),
            details: Vec::new(),
            logs: None,
            logs_session: 1 << 40,
            teardowns_running: engine.teardowns.inflight().clone(),
            verbs_running: engine.verbs_running.clone(),
            asked: std::collections::HashMap::new(),
            settling: std::collections::HashMap::new(),
            tearing_down: std::collections::HashSet::new(),
            metrics: engine.metrics.clone(),
            metrics_waiting: Vec::new(),
        }
    }

    /// Queue one line (written at [`Session::flush`]).
    fn send(&mut self, line: String) {
        self.out.send(&line);
    }

    fn flush(&mut self) -> Result<(), Gone> {
        self.out.flush()
    }

    /// One event from the engine's threads: answers to this session's own
    /// reads are taken here, everything goes to the App.
    fn event(&mut self, actions: &mut Actions<'_>, event: Event) {
        match &event {
            // The first rows of a big store (`model::Partial`) are for the
            // screen only: a protocol client takes every group for the
            // whole store, so it waits for the whole read.
            Event::Snapshot(snapshot) if snapshot.partial.is_some() => return,
            Event::Snapshot(snapshot) => {
                self.latest = Arc::clone(snapshot);
                self.dirty = true;
                self.reset_why = snapshot.reopened.or(self.reset_why);
                self.settling.retain(|name, (standing, at)| {
                    at.elapsed() < SETTLE_WAIT
                        && standing_in(snapshot, name).as_ref() == Some(standing)
                });
            }
            Event::Role(_) => self.role_known = true,
            Event::Tick => self.metrics_again(),
            Event::Activity(activity)
                if matches!(
                    activity.actor,
                    crate::event::Actor::Operator | crate::event::Actor::Reaper
                ) =>
            {
                self.teardown_activity(activity);
            }
            Event::Answer(Answer::Detail { name, result }) => {
                self.answer_detail(name, result);
                return;
            }
            Event::Answer(Answer::LogsOpened {
                session, opened, ..
            }) if self.logs.as_ref().is_some_and(|l| l.session == *session) => {
                self.logs_opened(opened.clone());
                return;
            }
            Event::Logs(update)
                if self
                    .logs
                    .as_ref()
                    .is_some_and(|l| l.session == update.session()) =>
            {
                self.logs_update(update.clone());
                return;
            }
            _ => {}
        }
        actions.handle(&mut self.app, event);
    }

    /// A teardown's line (the reaper's or the commands'): who is tearing
    /// down, and whose outcome came; a teardown that changed the store
    /// (torn down, reaped, failed: a reap attempt recorded) settles once a
    /// snapshot shows its instance otherwise than when it was asked.
    fn teardown_activity(&mut self, activity: &crate::event::Activity) {
        use crate::event::ActivityKind as Kind;
        let name = &activity.instance;
        match activity.kind {
            Kind::Started => {
                self.tearing_down.insert(name.clone());
            }
            Kind::Reaped
            | Kind::TornDown
            | Kind::Failed
            | Kind::Aborted
            | Kind::Refused
            | Kind::Stopped
            | Kind::SkippedLocked
            | Kind::Error
            | Kind::WouldReap => {
                self.tearing_down.remove(name);
                let asked = if activity.actor == crate::event::Actor::Operator {
                    self.asked.remove(name)
                } else {
                    None
                };
                if matches!(activity.kind, Kind::Reaped | Kind::TornDown | Kind::Failed)
                    && let Some(standing) = asked.or_else(|| standing_in(&self.latest, name))
                {
                    self.settling
                        .insert(name.clone(), (standing, Instant::now()));
                }
            }
            _ => {}
        }
    }

    /// One input line read after `hello` (or held until it): a command,
    /// or a line refused by the framing (docs/protocol.md): too long, not
    /// UTF-8, or cut by the end of stdin; each answered once, `id` null.
    fn input(&mut self, actions: &mut Actions<'_>, input: Input) {
        match input {
            Input::Line(line) => self.command(actions, &line),
            Input::TooLong => self.send(lines::reply_error(
                &Value::Null,
                "too_long",
                "a command line is at most 65536 bytes: skipped to its newline",
            )),
            Input::NotUtf8 => self.send(lines::reply_error(
                &Value::Null,
                "bad_request",
                "not UTF-8: a command line is UTF-8 (not run)",
            )),
            Input::Cut => self.send(lines::reply_error(
                &Value::Null,
                "bad_request",
                "cut by the end of input: a command line ends with a newline (not run)",
            )),
            Input::End => {}
        }
    }

    /// One command line: parsed, run, answered once.
    fn command(&mut self, actions: &mut Actions<'_>, line: &str) {
        let (id, parsed) = command::parse(line);
        let command = match parsed {
            Ok(command) => command,
            Err(rejected) => {
                if let Some(name) = &rejected.instance {
                    // As a key's refusal of that row: logged and audited.
                    self.app
                        .refuse_remote(name, rejected.message.clone(), unix_now());
                    actions.persist_outbox(&mut self.app);
                }
                self.send(lines::reply_error(&id, rejected.kind, &rejected.message));
                return;
            }
        };
        if self.hello.follow_only {
            return;
        }
        match command {
            Command::Ping => self.send(lines::reply(Reply::ok(&id))),
            Command::Metrics => self.metrics(&id),
            Command::Detail(name) => {
                actions
                    .io()
                    .send(Request::OpenDetail { name: name.clone() });
                self.details.push((id, name));
            }
            Command::Logs(name, service) => self.open_logs(actions, id, &name, service),
            Command::LogsStop(logs) => self.stop_logs(actions, &id, &logs),
            other => self.remote(actions, &id, other),
        }
    }

    /// A key's action: the operator's rules ([`crate::model::rules::admit`],
    /// through [`App::remote`]), with what this process has in flight for
    /// the name asked about (a teardown running or asked for a moment ago,
    /// one just ended that the snapshot does not show yet, a renew or
    /// verify of it still running: refused here, in the words the job
    /// would use, rather than answered ok and refused after), then carried
    /// out as the key's `y` is.
    fn remote(&mut self, actions: &mut Actions<'_>, id: &Value, command: Command) {
        let Some(action) = Action::of_command(command) else {
            // The reads are answered by `command`: never here.
            self.send(lines::reply(Reply::ok(id)));
            return;
        };
        let in_flight = self.in_flight(&action);
        let answer = self.app.remote(&action, &in_flight, unix_now());
        actions.persist_outbox(&mut self.app);
        match answer {
            Ok((words, effect)) => {
                // How the teardown's check saw the instance: the job
                // compares the store with it.
                if let Some(
                    crate::ui::Effect::Reap { instance, attempt }
                    | crate::ui::Effect::TearDown { instance, attempt },
                ) = &effect
                {
                    self.asked.insert(
                        instance.name.clone(),
                        (instance.status.clone(), attempt.clone()),
                    );
                }
                actions.carry_out(effect);
                self.send(lines::reply(Reply {
                    message: Some(words),
                    ..Reply::ok(id)
                }));
            }
            Err(why) => self.send(lines::reply_error(id, "refused", &why)),
        }
    }

    /// What this process has in flight for the instance `action` names.
    fn in_flight(&self, action: &Action) -> InFlight {
        let mut in_flight = InFlight::default();
        let Some(name) = action.instance() else {
            return in_flight;
        };
        if self.asked.contains_key(name) || self.teardowns_running.contains(name) {
            in_flight.teardowns.insert(name.to_owned());
        }
        if self.settling.contains_key(name) {
            in_flight.settling.insert(name.to_owned());
        }
        for verb in [Verb::Renew { lease_secs: 1 }, Verb::Verify] {
            let key = verbs::running_key(verb, name);
            if self.verbs_running.contains(&key) {
                in_flight.verbs.insert(key);
            }
        }
        in_flight
    }

    fn answer_detail(
        &mut self,
        name: &str,
        result: &Result<Option<crate::model::services::DetailView>, String>,
    ) {
        let waiting: Vec<Value> = self
            .details
            .iter()
            .filter(|(_, n)| n == name)
            .map(|(id, _)| id.clone())
            .collect();
        self.details.retain(|(_, n)| n != name);
        for id in waiting {
            let line = match result {
                Ok(Some(view)) => {
                    let text = fit_lines(self.app.detail_lines(name, view));
                    let birth = self
                        .app
                        .snapshot()
                        .instance(name)
                        .and_then(|i| i.birth.as_ref())
                        .map(BirthRow::of);
                    lines::reply(Reply {
                        detail: Some(DetailReply {
                            name: name.to_owned(),
                            birth,
                            lines: text,
                        }),
                        ..Reply::ok(&id)
                    })
                }
                Ok(None) => {
                    lines::reply_error(&id, "refused", "refused: no such instance in the store")
                }
                Err(message) => {
                    lines::reply_error(&id, "refused", &format!("cannot read {name}: {message}"))
                }
            };
            self.send(line);
        }
    }

    /// After each batch: `hello` and the first snapshot once the store was
    /// read and who reaps is known, else the deltas; then the Activity
    /// lines, who reaps, the banners, and a heartbeat when quiet.
    fn publish(&mut self, actions: &Actions<'_>) {
        if !self.hello_sent {
            let counted = self.latest.services_dead.recorded_any();
            if !first_group_ready(
                self.app.loaded(),
                (self.role_known, counted),
                self.started.elapsed(),
            ) {
                return;
            }
            let snapshot = self.app.snapshot();
            self.hello.schema = snapshot.generation.user_version;
            self.hello.generation = generation_word(snapshot.generation);
            self.hello.reaper = reaper_line(Some(&self.app));
            let teardown = self.app.teardown();
            // Shown, not run: its credentials redacted.
            self.hello.teardown = crate::model::redact::shown_argv(&teardown.argv)
                .iter()
                .map(|a| crate::model::text::sanitize(a).into_owned())
                .collect();
            self.hello.stackless = crate::model::text::sanitize(&teardown.stackless).into_owned();
            self.reaper = Some(self.hello.reaper.clone());
            self.hello.now = unix_now();
            self.send(lines::hello(&self.hello));
            self.hello_sent = true;
            self.dirty = false;
            self.reset_why = None;
            self.snapshot_group(true, None);
        } else if std::mem::take(&mut self.dirty) {
            let why = self.reset_why.take();
            self.snapshot_group(false, why);
            self.logs_of_the_gone(actions);
        }
        if let Some((previous, _)) = self.app.settle() {
            drop(previous);
        }
        let redactor = Arc::clone(&self.app.snapshot().redactor);
        for activity in self.app.drain_activity_journal() {
            let detail = redactor.text(&activity.detail);
            self.send(lines::activity(&activity, &detail));
        }
        self.publish_reaper();
        self.publish_banners();
        if self.out.last_write.elapsed() >= Duration::from_secs(HEARTBEAT_SECS) {
            self.send(lines::heartbeat(unix_now(), self.seq));
        }
    }

    /// One snapshot group: all rows after a `reset` (one saying `why`
    /// when the store file was read anew), else what changed (nothing at
    /// all when no row did).
    fn snapshot_group(&mut self, reset: bool, why: Option<&'static str>) {
        let mut snapshot = Arc::clone(&self.latest);
        if snapshot.reopened != why {
            snapshot = Arc::new(Snapshot {
                reopened: why,
                ..(*snapshot).clone()
            });
        }
        let mut tables = std::mem::take(&mut self.tables);
        if why.is_some() {
            tables = Tables::new();
        }
        let seq = self.seq + 1;
        if lines::stream_group(
            seq,
            reset || why.is_some(),
            &mut tables,
            &snapshot,
            unix_now(),
            &mut |line| {
                self.send(line);
            },
        ) {
            self.seq = seq;
        }
        self.tables = tables;
    }

    fn publish_reaper(&mut self) {
        let line = reaper_line(Some(&self.app));
        if self.reaper.as_ref() != Some(&line) {
            self.send(lines::reaper(&line));
            self.reaper = Some(line);
        }
    }

    fn publish_banners(&mut self) {
        let now: Vec<(&'static str, bool, String)> =
            crate::ui::panes::header::banner_items(&self.app)
                .into_iter()
                .map(|b| (b.id, b.error, b.text))
                .collect();
        let gone: Vec<&'static str> = self
            .banners
            .iter()
            .filter(|(id, _)| !now.iter().any(|(n, _, _)| n == id))
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            self.send(lines::banner_cleared(id));
        }
        let mut shown = Vec::with_capacity(now.len());
        for (id, error, text) in now {
            // The busy banner counts seconds: said once, when it appears.
            let same = self
                .banners
                .iter()
                .any(|(i, t)| *i == id && (*t == text || id == "store_busy"));
            let text = if same {
                self.banners
                    .iter()
                    .find(|(i, _)| *i == id)
                    .map_or(text, |(_, t)| t.clone())
            } else {
                self.send(lines::banner(&Banner {
                    id: id.to_owned(),
                    level: if error { "error" } else { "warning" }.to_owned(),
                    text: text.clone(),
                }));
                text
            };
            shown.push((id, text));
        }
        self.banners = shown;
    }
}
