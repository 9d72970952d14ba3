//! The fleet view (`--fleet FILE`, docs/fleet.md) on `TestBackend`: three
//! hosts fed protocol lines as their agents send them (docs/protocol.md),
//! one of them stale and one failed; the HOST column, the Hosts pane (a
//! header line at 80x24), the merged panes, and every action sent to the
//! owning host only, after a question naming the host and what runs there.

use crossterm::event::{Event as Term, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use stackless_tui::event::Event;
use stackless_tui::model::fleet::{Link, LinkState};
use stackless_tui::ui::app::HostView;
use stackless_tui::ui::app::Question;
use stackless_tui::ui::app::over_fleet::{FleetEffect, FleetState};
use stackless_tui::ui::{App, AppConfig, Effect, HelperMode, ReaperMode};

pub(crate) const NOW: i64 = 1_764_655_200;
pub(crate) const NOW_MS: i64 = NOW * 1000;

/// The console's one `App` over a fleet (`App::over_fleet`), as the
/// console runs it: keys go through the App (its key table, its layers,
/// its confirm layer with `[y/N]`); it derefs to its fleet, which the
/// tests feed each host's lines and links as the wiring does.
pub(crate) struct Over(pub(crate) App);

impl std::ops::Deref for Over {
    type Target = FleetState;
    fn deref(&self) -> &FleetState {
        self.0.fleet().unwrap()
    }
}

impl std::ops::DerefMut for Over {
    fn deref_mut(&mut self) -> &mut FleetState {
        self.0.fleet_mut().unwrap()
    }
}

impl Over {
    /// A key through the App at `now_ms`, taken as read after the screen
    /// was drawn: the commands it sends.
    pub(crate) fn key(&mut self, key: KeyEvent, now_ms: i64) -> Vec<FleetEffect> {
        fleet_effects(self.0.handle_ms(Event::Input(Term::Key(key)), now_ms))
    }

    /// One line of host `host`'s agent, applied as the wiring applies it
    /// (then what the fleet said is the App's).
    pub(crate) fn line(&mut self, host: usize, line: &Value, now_ms: i64) {
        self.0.fleet_mut().unwrap().line(host, line, now_ms);
        self.0.settle_fleet();
    }

    /// A link change of host `host`, applied as the wiring applies it.
    pub(crate) fn link(&mut self, host: usize, link: Link, now_ms: i64) {
        self.0.fleet_mut().unwrap().link(host, link, now_ms);
        self.0.settle_fleet();
    }

    /// The App's host text view (detail, logs) drawn, if one is open.
    pub(crate) fn layer(&self) -> Option<&HostView> {
        self.0.layers().host_view()
    }

    /// How many instances the App has marked over the fleet.
    pub(crate) fn mark_count(&self) -> usize {
        self.0.fleet_marks().len()
    }

    /// The App's one flash line, while it is shown.
    pub(crate) fn flash(&self) -> Option<&stackless_tui::ui::Flash> {
        self.0.flash()
    }

    /// A mouse event through the App.
    pub(crate) fn mouse(&mut self, mouse: crossterm::event::MouseEvent) -> Vec<FleetEffect> {
        fleet_effects(self.0.handle_ms(Event::Input(Term::Mouse(mouse)), NOW_MS))
    }
}

/// The commands of the App's effect (none for any other effect).
pub(crate) fn fleet_effects(effect: Option<Effect>) -> Vec<FleetEffect> {
    match effect {
        Some(Effect::Fleet(effects)) => effects,
        _ => Vec::new(),
    }
}

/// A flash level read as the fleet's rows say it: a refusal or a failure.
pub(crate) trait Failure {
    /// Not mere information (a warning or an error).
    fn is_failure(&self) -> bool;
}

impl Failure for stackless_tui::ui::FlashLevel {
    fn is_failure(&self) -> bool {
        *self != stackless_tui::ui::FlashLevel::Info
    }
}

/// The App the console runs over `fleet`.
pub(crate) fn over(fleet: FleetState) -> Over {
    let config = AppConfig {
        store_label: "a fleet".to_owned(),
        reaper: ReaperMode::Off("each host's agent reaps there".to_owned()),
        helper: HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    Over(App::over_fleet(fleet, config, NOW))
}

fn instance(name: &str, birth: &str, expires_at: i64) -> Value {
    json!({"name": name, "birth": {"instance_id": birth, "resource_namespace": "sl-x"},
        "dns_safe": true, "substrate": "local", "status": "active", "created_at": NOW - 600,
        "tombstoned_at": null, "lease": {"duration_secs": 3600, "expires_at": expires_at},
        "lock": null, "dirty": false, "failed_up": false, "services_dead": 0, "gc": null})
}

fn hello(host: &str, dry_run: bool) -> Value {
    json!({"type":"hello","protocol":1,"program":"stackless-tui","version":"0.1.0","host":host,
        "store":"/s/state.db","schema":14,"generation":"controller","read_only":false,
        "dry_run":dry_run,"follow_only":false,
        "commands":["reap","down","queue_down","cancel","pause","resume","pass","renew","verify",
            "detail","logs","logs_stop","ping"],
        "reaper":{"by":"agent","pid":42,"paused":false,"text":"reaper: every 60s"},
        "max_message_bytes":65536,"heartbeat_secs":5,
        "teardown":["stackless","down","{name}","--json"],"stackless":"stackless"})
}

fn link(state: LinkState, error: Option<&str>) -> Link {
    Link {
        state,
        since: NOW - 40,
        error: error.map(str::to_owned),
        retry_at: None,
        skew: None,
    }
}

fn connect_at(
    app: &mut FleetState,
    host: usize,
    name: &str,
    tables: &[(&str, Vec<Value>)],
    at_ms: i64,
) {
    app.link(host, link(LinkState::Connected, None), at_ms);
    app.line(host, &hello(name, false), at_ms);
    app.line(host, &json!({"type":"reset","seq":1}), at_ms);
    for (table, rows) in tables {
        app.line(
            host,
            &json!({"type":"rows","seq":1,"table":table,"upsert":rows,"remove":[]}),
            at_ms,
        );
    }
    app.line(host, &json!({"type":"synced","seq":1,"at":NOW}), at_ms);
}

fn connect(app: &mut FleetState, host: usize, name: &str, tables: &[(&str, Vec<Value>)]) {
    connect_at(app, host, name, tables, NOW_MS);
}

/// Three hosts: fleet-1 and fleet-2 connected (fleet-2 with an operation,
/// a backoff and an Activity line), fleet-3 stale (its rows kept).
pub(crate) fn fleet() -> Over {
    let mut app = over(FleetState::new(
        vec!["fleet-1".into(), "fleet-2".into(), "fleet-3".into()],
        NOW_MS,
    ));
    connect(
        &mut app,
        0,
        "db1",
        &[(
            "instances",
            vec![
                instance("alpha", "a1", NOW + 3_600),
                instance("bravo", "b1", NOW - 120),
            ],
        )],
    );
    connect(
        &mut app,
        1,
        "db2",
        &[
            (
                "instances",
                vec![
                    instance("alpha", "a2", NOW - 30),
                    instance("charlie", "c1", NOW + 60),
                ],
            ),
            (
                "operations",
                vec![
                    json!({"id":"op-7","instance":"charlie","verb":"up","status":"running",
                    "created_at":NOW - 5,"updated_at":NOW - 5,"error":null}),
                ],
            ),
            (
                "backoffs",
                vec![json!({"instance":"alpha","attempts":2,"last_error":"x",
                    "code":"engine.teardown","summary":"engine.teardown: survivors",
                    "remediation":null,"next_retry_at":NOW + 64})],
            ),
        ],
    );
    app.line(
        1,
        &json!({"type":"activity","at":NOW - 3,"actor":"reaper","instance":"golf",
            "kind":"reaped","detail":"down in 1.2s"}),
        NOW_MS,
    );
    // fleet-3's last line came 40 s ago: its rows are that old.
    connect_at(
        &mut app,
        2,
        "db3",
        &[("instances", vec![instance("delta", "d1", NOW - 600)])],
        NOW_MS - 40_000,
    );
    app.link(
        2,
        link(
            LinkState::Stale,
            Some("no line for 15 s (3 x heartbeat_secs 5)"),
        ),
        NOW_MS,
    );
    app
}

pub(crate) fn screen(app: &Over, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| stackless_tui::ui::draw(frame, &app.0))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn press(app: &mut Over, code: KeyCode) -> Vec<FleetEffect> {
    app.key(KeyEvent::new(code, KeyModifiers::NONE), NOW_MS)
}

fn typed(app: &mut Over, text: &str) -> Vec<FleetEffect> {
    text.chars()
        .flat_map(|c| press(app, KeyCode::Char(c)))
        .collect()
}

/// The one command sent: (host, command without its id).
pub(crate) fn sent(effects: &[FleetEffect]) -> Vec<(usize, Value)> {
    effects
        .iter()
        .map(|FleetEffect::Send { host, line }| {
            let mut command: Value = serde_json::from_str(line).unwrap();
            command.as_object_mut().unwrap().remove("id");
            (*host, command)
        })
        .collect()
}

pub(crate) fn confirm_lines(app: &Over) -> Vec<String> {
    question_lines(&app.0)
}

/// The lines of the question open in the App's confirm layer.
pub(crate) fn question_lines(app: &App) -> Vec<String> {
    match app.layers().confirm().map(|c| &c.question) {
        Some(Question::Fleet(question)) => question.lines.clone(),
        other => panic!("no question over the fleet: {other:?}"),
    }
}

/// Select the row whose HOST and NAME are these (moving down from the top).
pub(crate) fn select(app: &mut Over, host: &str, name: &str) {
    press(app, KeyCode::Home);
    for _ in 0..20 {
        let row = app.selected_row().unwrap();
        let one = &app.fleet().hosts[row.host];
        if one.name == host && one.instances()[row.index].key.name == name {
            return;
        }
        press(app, KeyCode::Down);
    }
    panic!("{host}/{name} not found");
}

#[test]
fn three_hosts_in_one_view_at_120x40() {
    let app = fleet();
    assert_snapshot!("three_hosts_120x40", screen(&app, 120, 40));
}

#[test]
fn at_80x24_the_hosts_pane_is_a_header_line() {
    let app = fleet();
    let text = screen(&app, 80, 24);
    assert_snapshot!("three_hosts_80x24", text);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("fleet-1 connected · fleet-2 connected · fleet-3 stale 40s")
    );
}

/// `r` on fleet-2's `alpha` asks first, naming the host, the backoff the
/// reap skips there (2 failed reaps, 64 s left) and what runs there; `y`
/// sends the reap to fleet-2 alone.
#[test]
fn a_reap_goes_to_the_owning_host_only_after_its_question() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    assert_eq!(
        confirm_lines(&app),
        [
            "Reap alpha on fleet-2 now? This skips its backoff after 2 failed reaps: 1m 04s left. This runs there: stackless down alpha --json",
            "[y/N]"
        ]
    );
    let effects = press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        sent(&effects),
        [(
            1,
            json!({"cmd":"reap","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
        )]
    );
    let FleetEffect::Send { line, .. } = &effects[0];
    let id = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
    app.line(
        1,
        &json!({"type":"reply","id":id,"ok":true,"message":"reap requested for alpha"}),
        NOW_MS,
    );
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("fleet-2: reap requested for alpha")
    );
    // A refusal comes back as that host's words.
    select(&mut app, "fleet-1", "bravo");
    let effects = typed(&mut app, "ry");
    let FleetEffect::Send { line, host } = &effects[0];
    assert_eq!(*host, 0);
    let id = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
    app.line(
        0,
        &json!({"type":"reply","id":id,"ok":false,
            "error":{"kind":"refused","message":"refused: lock held by pid 4242 (up)"}}),
        NOW_MS,
    );
    let flash = app.flash().unwrap();
    assert_eq!(
        (flash.text.as_str(), flash.level.is_failure()),
        (
            "fleet-1: reap bravo refused: refused: lock held by pid 4242 (up)",
            true
        )
    );
}

#[test]
fn any_other_key_sends_nothing() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        confirm_lines(&app)[0],
        "Tear down alpha on fleet-2? This runs there: stackless down alpha --json"
    );
    assert!(press(&mut app, KeyCode::Char('n')).is_empty());
    assert_eq!(app.flash().map(|f| f.text.as_str()), Some("not done"));
    // Behind a pending operation, d queues the down.
    select(&mut app, "fleet-2", "charlie");
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        confirm_lines(&app)[0],
        "Queue a down of charlie on fleet-2 behind its pending operation? This runs there: \
         stackless down charlie --no-wait --json"
    );
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('y'))),
        [(
            1,
            json!({"cmd":"queue_down","name":"charlie","birth":{"instance_id":"c1","resource_namespace":"sl-x"}})
        )]
    );
}

#[test]
fn an_action_on_a_stale_or_failed_host_is_refused_and_says_why() {
    let mut app = fleet();
    select(&mut app, "fleet-3", "delta");
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    assert_eq!(app.layer(), None);
    let flash = app.flash().unwrap();
    assert_eq!(
        (flash.text.as_str(), flash.level.is_failure()),
        (
            "fleet-3 is stale (no line for 15 s (3 x heartbeat_secs 5)): its rows are 40s old; \
             nothing is sent until it is back",
            true
        )
    );
    app.link(
        2,
        link(
            LinkState::Failed,
            Some("host key: the host key of 127.0.0.1 is not the known one"),
        ),
        NOW_MS,
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("fleet-3 failed: host key: the host key of 127.0.0.1 is not the known one")
    );
    // Its rows stay, dimmed, with the host's state in the Hosts pane.
    let text = screen(&app, 120, 40);
    assert!(text.contains("│fleet-3 failed"), "{text}");
    assert!(text.contains("fleet-3 (failed) delta"), "{text}");
}

#[test]
fn a_bulk_reap_over_several_hosts_says_how_many_on_each() {
    let mut app = fleet();
    for (host, name) in [
        ("fleet-1", "bravo"),
        ("fleet-2", "alpha"),
        ("fleet-3", "delta"),
        ("fleet-1", "alpha"),
    ] {
        select(&mut app, host, name);
        press(&mut app, KeyCode::Char(' '));
    }
    assert_eq!(app.mark_count(), 4);
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(
        confirm_lines(&app),
        [
            "Reap 2 instances on 2 hosts?",
            "fleet-1: 1 · fleet-2: 1",
            "Each runs on its host: stackless down NAME --json",
            "Not sent (2): alpha on fleet-1: its lease has not expired: use d to tear it down; \
             fleet-3 is stale (no line for 15 s (3 x heartbeat_secs 5)): its rows are 40s old; \
             nothing is sent until it is back",
            "[y/N]",
        ]
    );
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('y'))),
        [
            (
                0,
                json!({"cmd":"reap","name":"bravo","birth":{"instance_id":"b1","resource_namespace":"sl-x"}})
            ),
            (
                1,
                json!({"cmd":"reap","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
            ),
        ]
    );
}

#[test]
fn the_filter_and_sort_work_across_hosts() {
    let mut app = fleet();
    typed(&mut app, "/host:fleet-2");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.rows().len(), 2);
    press(&mut app, KeyCode::Esc);
    typed(&mut app, "/status:expired");
    press(&mut app, KeyCode::Enter);
    let names: Vec<String> = app
        .rows()
        .iter()
        .map(|r| {
            let host = &app.fleet().hosts[r.host];
            format!("{}/{}", host.name, host.instances()[r.index].key.name)
        })
        .collect();
    assert_eq!(names, ["fleet-1/bravo", "fleet-2/alpha", "fleet-3/delta"]);
    // Ctrl-U clears the prompt's text.
    press(&mut app, KeyCode::Char('/'));
    app.key(
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
        NOW_MS,
    );
    assert_eq!(app.filter_text(), "");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(
        screen(&app, 120, 40).lines().next().unwrap(),
        "stackless-tui fleet: 3 hosts · 2 connected · 1 stale · 5 instances (3 expired) · sort: lease expiry ▲"
    );
}

#[test]
fn detail_and_logs_are_read_over_the_owning_hosts_agent() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "charlie");
    let effects = press(&mut app, KeyCode::Enter);
    assert_eq!(
        sent(&effects),
        [(1, json!({"cmd":"detail","name":"charlie"}))]
    );
    let FleetEffect::Send { line, .. } = &effects[0];
    let id = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
    app.line(
        1,
        &json!({"type":"reply","id":id,"ok":true,"detail":{"name":"charlie","birth":null,
            "lines":["Instance charlie","  lease: 1m 00s left","  \u{1b}[31mred\u{1b}[0m"]}}),
        NOW_MS,
    );
    let text = screen(&app, 80, 24);
    assert!(text.contains("detail: charlie on fleet-2"), "{text}");
    assert!(text.contains("║  lease: 1m 00s left"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    press(&mut app, KeyCode::Esc);
    let effects = press(&mut app, KeyCode::Char('l'));
    assert_eq!(
        sent(&effects),
        [(1, json!({"cmd":"logs","name":"charlie"}))]
    );
    let FleetEffect::Send { line, .. } = &effects[0];
    let id = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
    app.line(
        1,
        &json!({"type":"reply","id":id,"ok":true,"services":["web"]}),
        NOW_MS,
    );
    for (text, cont) in [
        ("GET / 200", false),
        ("GET /x 500", false),
        (" (cut)", true),
    ] {
        app.line(
            1,
            &json!({"type":"log","logs":id,"service":"web","text":text,"at":null,"cont":cont}),
            NOW_MS,
        );
    }
    // A line of another stream is not this view's.
    app.line(
        1,
        &json!({"type":"log","logs":"other","service":"web","text":"nope","at":null,"cont":false}),
        NOW_MS,
    );
    let Some(view) = app.layer() else {
        panic!("no logs view")
    };
    assert_eq!(
        view.lines,
        [
            "-- following web over its agent",
            "web │ GET / 200",
            "web │ GET /x 500 (cut)"
        ]
    );
    assert_eq!(
        sent(&press(&mut app, KeyCode::Esc)),
        [(1, json!({"cmd":"logs_stop","logs":id}))]
    );
}

#[test]
fn the_reaper_keys_go_to_one_host_and_all_hosts_after_a_question() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('P'))),
        [(1, json!({"cmd":"pause"}))]
    );
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('R'))),
        [(1, json!({"cmd":"pass"}))]
    );
    assert!(typed(&mut app, ":pause all").is_empty());
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        confirm_lines(&app),
        [
            "Pause the reaper on 2 hosts (fleet-1, fleet-2)?",
            "Not sent (1): fleet-3 is stale (no line for 15 s (3 x heartbeat_secs 5)): its rows \
             are 40s old; nothing is sent until it is back",
            "[y/N]",
        ]
    );
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('y'))),
        [(0, json!({"cmd":"pause"})), (1, json!({"cmd":"pause"}))]
    );
}

#[test]
fn a_command_names_one_instance_or_asks_which_host() {
    let mut app = fleet();
    typed(&mut app, ":reap alpha");
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("alpha is on 2 hosts (fleet-1, fleet-2): name one as HOST/NAME")
    );
    typed(&mut app, ":reap fleet-2/alpha");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('y'))),
        [(
            1,
            json!({"cmd":"reap","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
        )]
    );
}

#[test]
fn pings_measure_each_connected_hosts_round_trip() {
    let mut app = fleet();
    let effects = app.tick(NOW_MS + 10_000);
    let hosts: Vec<usize> = sent(&effects).iter().map(|(h, _)| *h).collect();
    assert_eq!(hosts, [0, 1]);
    assert!(app.tick(NOW_MS + 11_000).is_empty());
    let FleetEffect::Send { line, .. } = &effects[1];
    let id = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
    assert!(app.needs_draw());
    app.line(
        1,
        &json!({"type":"reply","id":id,"ok":true}),
        NOW_MS + 10_012,
    );
    assert_eq!(app.fleet().hosts[1].rtt_ms, Some(12));
    // Neither a ping's reply nor a heartbeat costs a frame (the round trip
    // shows at the next tick's); a group of rows does.
    assert!(!app.needs_draw());
    app.line(1, &json!({"type":"heartbeat","at":NOW,"seq":1}), NOW_MS);
    assert!(!app.needs_draw());
    app.line(1, &json!({"type":"synced","seq":2,"at":NOW}), NOW_MS);
    assert!(app.needs_draw());
    assert!(screen(&app, 120, 40).contains("│fleet-2 connected 12ms"));
}

#[test]
fn hostile_texts_from_a_host_are_sanitized_and_never_acted_upon() {
    let mut app = over(FleetState::new(vec!["fleet-1".into()], NOW_MS));
    let mut row = instance("evil\u{1b}]52;c;cm0gLXJm\u{7}x", "e1", NOW - 10);
    row["dns_safe"] = json!(true);
    connect(&mut app, 0, "db1", &[("instances", vec![row])]);
    app.line(
        0,
        &json!({"type":"activity","at":NOW,"actor":"observed","instance":"a\u{1b}[2Jb",
            "kind":"appeared","detail":"x\ny"}),
        NOW_MS,
    );
    let text = screen(&app, 120, 40);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    assert!(
        app.flash()
            .unwrap()
            .text
            .ends_with("on fleet-1 is not a DNS-safe name: never acted upon"),
        "{:?}",
        app.flash()
    );
}

fn shown(app: &FleetState) -> Vec<String> {
    app.rows()
        .iter()
        .map(|r| {
            let host = &app.fleet().hosts[r.host];
            format!("{}/{}", host.name, host.instances()[r.index].key.name)
        })
        .collect()
}

#[test]
fn a_delta_on_one_host_keeps_the_selection_and_the_other_hosts_order() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "charlie");
    // fleet-1 gains "aaa" (sorted before the selection) and loses bravo.
    app.line(
        0,
        &json!({"type":"rows","seq":2,"table":"instances",
            "upsert":[instance("aaa","z1",NOW + 5)],"remove":[{"name":"bravo","birth":"b1"}]}),
        NOW_MS,
    );
    // Rows wait for their synced.
    assert_eq!(shown(&app).len(), 5);
    app.line(0, &json!({"type":"synced","seq":2,"at":NOW}), NOW_MS);
    assert_eq!(
        shown(&app),
        [
            "fleet-1/aaa",
            "fleet-1/alpha",
            "fleet-2/alpha",
            "fleet-2/charlie",
            "fleet-3/delta"
        ]
    );
    let row = app.selected_row().unwrap();
    assert_eq!(
        app.fleet().hosts[row.host].instances()[row.index].key.name,
        "charlie"
    );
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(
        shown(&app),
        [
            "fleet-3/delta",
            "fleet-2/alpha",
            "fleet-1/aaa",
            "fleet-2/charlie",
            "fleet-1/alpha"
        ]
    );
    press(&mut app, KeyCode::Char('S'));
    assert_eq!(
        shown(&app),
        [
            "fleet-1/alpha",
            "fleet-2/charlie",
            "fleet-1/aaa",
            "fleet-2/alpha",
            "fleet-3/delta"
        ]
    );
}

#[test]
fn the_question_says_the_teardown_each_hosts_agent_runs() {
    let mut app = fleet();
    // fleet-1's agent runs a teardown of its own (--down-cmd there).
    let mut custom = hello("db1", false);
    custom["teardown"] = json!(["/opt/ops/down it.sh", "--name={name}"]);
    custom["stackless"] = json!("/usr/local/bin/stackless");
    app.line(0, &custom, NOW_MS);
    select(&mut app, "fleet-1", "bravo");
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(
        confirm_lines(&app)[0],
        "Reap bravo on fleet-1 now? This runs there: '/opt/ops/down it.sh' '--name=bravo'"
    );
    press(&mut app, KeyCode::Char('n'));
    for (host, name) in [("fleet-1", "bravo"), ("fleet-2", "alpha")] {
        select(&mut app, host, name);
        press(&mut app, KeyCode::Char(' '));
    }
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(
        confirm_lines(&app)[2],
        "Each runs its host's teardown: fleet-1: '/opt/ops/down it.sh' '--name=NAME'; \
         fleet-2: stackless down NAME --json"
    );
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(
        confirm_lines(&app)[0],
        "Cancel operation op-7 (up charlie) on fleet-2? This runs there: stackless operation \
         cancel op-7 --json"
    );
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('y'))),
        [(1, json!({"cmd":"cancel","operation":"op-7"}))]
    );
}

#[test]
fn a_loss_that_lasted_a_moment_is_still_told() {
    let mut app = fleet();
    // fleet-3 comes back: connecting again, then its hello and snapshot.
    app.link(2, link(LinkState::Connecting, None), NOW_MS);
    let hosts = |app: &Over| {
        screen(app, 120, 40)
            .lines()
            .find(|l| l.starts_with("│fleet-3"))
            .unwrap()
            .to_owned()
    };
    assert!(
        hosts(&app).starts_with("│fleet-3 connecting (retry 1)"),
        "{}",
        hosts(&app)
    );
    connect(
        &mut app,
        2,
        "db3",
        &[("instances", vec![instance("delta", "d1", NOW - 600)])],
    );
    let row = hosts(&app);
    assert!(row.starts_with("│fleet-3 connected "), "{row}");
    // Its last error stays, with the time it came (UTC here).
    assert!(row.contains(" 05:59:20 no line for 15 s (3 x… │"), "{row}");
}

/// A host whose retries keep failing is made stale again at each one; its
/// rows are still the ones its last `synced` sent, so the age the HOST cell
/// (and the refusal) gives is theirs, not the last retry's: a stale host's
/// rows are kept, dimmed, with their age.
#[test]
fn a_stale_hosts_age_is_its_rows_age_across_failed_retries() {
    let mut app = over(FleetState::new(
        vec!["fleet-1".into(), "fleet-2".into()],
        NOW_MS,
    ));
    // fleet-1's rows: synced 100 s ago; its ssh ended 90 s ago.
    let synced_ms = NOW_MS - 100_000;
    app.link(0, link(LinkState::Connected, None), synced_ms);
    app.line(0, &hello("db1", false), synced_ms);
    app.line(0, &json!({"type":"reset","seq":1}), synced_ms);
    app.line(
        0,
        &json!({"type":"rows","seq":1,"table":"instances",
            "upsert":[instance("alpha", "a1", NOW + 3_600)],"remove":[]}),
        synced_ms,
    );
    app.line(
        0,
        &json!({"type":"synced","seq":1,"at":NOW - 100}),
        synced_ms,
    );
    connect(&mut app, 1, "db2", &[("instances", vec![])]);
    let stale = |since: i64| Link {
        state: LinkState::Stale,
        since,
        error: Some("the connection to fleet-1 was closed".into()),
        retry_at: Some(since + 1),
        skew: None,
    };
    app.link(0, stale(NOW - 90), NOW_MS - 90_000);
    // Its retry 10 s ago got no hello; stale again 5 s ago.
    app.link(
        0,
        Link {
            state: LinkState::Connecting,
            since: NOW - 10,
            error: None,
            retry_at: None,
            skew: None,
        },
        NOW_MS - 10_000,
    );
    app.link(0, stale(NOW - 5), NOW_MS - 5_000);
    let text = screen(&app, 120, 40);
    let row = text
        .lines()
        .find(|l| l.contains(" alpha "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("fleet-1 (stale 1m 40s)"), "{row}");
}

/// "HOST and NAME are never cut: SUBSTRATE gives way first"
/// (docs/fleet.md). At 80x24 with a stale host (its HOST cell carries its
/// state), a wide STATUS (`active 1 svc dead`) and a wide LEASE
/// (`tombstoned 1d 03h ago`), the columns asked for exceed the room by
/// one; the table then cuts HOST.
#[test]
fn at_80x24_a_stale_hosts_cell_is_whole_beside_wide_status_and_lease() {
    let mut app = over(FleetState::new(
        vec!["fleet-1".into(), "fleet-3".into()],
        NOW_MS,
    ));
    let mut dead = instance("india", "i1", NOW - 86_400);
    dead["services_dead"] = json!(1);
    let mut gone = instance("charlie", "c1", NOW - 100_000);
    gone["status"] = json!("tombstoned");
    gone["tombstoned_at"] = json!(NOW - 99_000);
    gone["lease"] = Value::Null;
    connect(&mut app, 0, "db1", &[("instances", vec![])]);
    connect_at(
        &mut app,
        1,
        "db3",
        &[("instances", vec![dead, gone])],
        NOW_MS - 40_000,
    );
    app.link(
        1,
        link(
            LinkState::Stale,
            Some("no line for 15 s (3 x heartbeat_secs 5)"),
        ),
        NOW_MS,
    );
    let text = screen(&app, 80, 24);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" india ") || l.contains(" charlie "))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for row in rows {
        assert!(row.contains("fleet-3 (stale 40s) "), "{row}\n{text}");
    }
}

/// "Everything from a host is sanitized here, as it is drawn"
/// (`src/ui/app/over_fleet/draw.rs`): a `logs_end` message's `reason` is the host's
/// text, and the logs view draws it as sent.
#[test]
fn a_logs_end_reason_from_a_host_is_sanitized() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "charlie");
    let effects = press(&mut app, KeyCode::Char('l'));
    let FleetEffect::Send { line, .. } = &effects[0];
    let id = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
    app.line(
        1,
        &json!({"type":"reply","id":id,"ok":true,"services":["web"]}),
        NOW_MS,
    );
    app.line(
        1,
        &json!({"type":"logs_end","logs":id,"reason":"gone \u{1b}[2J\u{202e}x"}),
        NOW_MS,
    );
    let Some(view) = app.layer() else {
        panic!("no logs view")
    };
    assert_eq!(
        view.lines.last().map(String::as_str),
        Some("-- the logs stream ended: gone ␛[2J\u{fffd}x")
    );
}

/// The console's memory is bounded: an instance a flooding or hostile host
/// keeps adding (a `synced` group of new names at a time, each group under
/// the group bound) must not grow its tables without end.
/// A host may hold at most its host bound of instances (by default
/// `MAX_HOST_ROWS`, the most one snapshot may carry); the rest are noted.
#[test]
fn a_host_adding_instances_without_end_is_bounded() {
    use stackless_tui::model::fleet::Bounds;
    // The bounds are the defaults' shape, small (each group under the
    // group bound, more groups than the host bound holds).
    let bounds = Bounds {
        host_rows: 300,
        group_rows: 150,
    };
    let mut app = over(FleetState::with_bounds(
        vec!["fleet-1".into(), "fleet-2".into()],
        NOW_MS,
        bounds,
    ));
    connect(&mut app, 0, "db1", &[("instances", vec![])]);
    let per_group = 100;
    for group in 0..bounds.host_rows / per_group + 2 {
        let rows: Vec<Value> = (0..per_group)
            .map(|i| {
                json!({"name": format!("g{group}-{i}"), "birth": null, "dns_safe": true,
                    "substrate": "local", "status": "active", "lease": null})
            })
            .collect();
        let seq = group + 2;
        app.line(
            0,
            &json!({"type":"rows","seq":seq,"table":"instances","upsert":rows,"remove":[]}),
            NOW_MS,
        );
        app.line(0, &json!({"type":"synced","seq":seq,"at":NOW}), NOW_MS);
    }
    let host = &app.fleet().hosts[0];
    assert_eq!(host.instances().len(), 300);
    assert_eq!(
        host.note.as_deref(),
        Some("it holds over 300 instances: the rest are not shown")
    );
}

#[test]
fn a_bulk_down_says_which_are_queued_and_a_host_is_found_by_its_alias() {
    let mut app = fleet();
    app.set_alias(1, "db-2.example");
    for (host, name) in [("fleet-2", "alpha"), ("fleet-2", "charlie")] {
        select(&mut app, host, name);
        press(&mut app, KeyCode::Char(' '));
    }
    // At 80x24 the Instances title counts the marks.
    assert!(
        screen(&app, 80, 24).contains("╔ Instances 5/5 · 2 marked ═"),
        "{}",
        screen(&app, 80, 24)
    );
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        confirm_lines(&app)[2..4],
        [
            "Each runs on its host: stackless down NAME --json",
            "1 with a pending operation is queued behind it instead: stackless down charlie \
             --no-wait --json"
        ]
    );
    assert_eq!(
        sent(&press(&mut app, KeyCode::Char('y'))),
        [
            (
                1,
                json!({"cmd":"down","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
            ),
            (
                1,
                json!({"cmd":"queue_down","name":"charlie","birth":{"instance_id":"c1","resource_namespace":"sl-x"}})
            ),
        ]
    );
    press(&mut app, KeyCode::Esc);
    typed(&mut app, "/host:db-2");
    press(&mut app, KeyCode::Enter);
    assert_eq!(shown(&app), ["fleet-2/alpha", "fleet-2/charlie"]);
    typed(&mut app, ":pause db-2.example");
    assert_eq!(
        sent(&press(&mut app, KeyCode::Enter)),
        [(1, json!({"cmd":"pause"}))]
    );
}

#[test]
fn e_on_a_host_shows_its_error_whole() {
    let mut app = fleet();
    let long = format!(
        "host key: the host key of 127.0.0.1 is not the known one {}; connect once with `ssh fleet-3` to see why",
        "x".repeat(80)
    );
    app.link(2, link(LinkState::Failed, Some(&long)), NOW_MS);
    for _ in 0..4 {
        press(&mut app, KeyCode::Tab);
    }
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('e'));
    let text: String = screen(&app, 80, 24)
        .lines()
        .map(|l| l.trim_matches('║'))
        .collect();
    assert!(
        text.contains("connect once with `ssh fleet-3` to see why"),
        "{text}"
    );
}

/// `dy` read in one burst: `d` opens the question, and `y`, read before
/// the question was first drawn, answers nothing (nothing is sent, the
/// question stays); a `y` read once it was drawn sends the teardown.
#[test]
fn a_y_typed_before_the_question_was_drawn_answers_nothing() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    let burst = std::time::Instant::now();
    let key = |c, read| {
        Event::InputAt(
            Term::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
            read,
        )
    };
    assert!(fleet_effects(app.0.handle_ms(key('d', burst), NOW_MS)).is_empty());
    assert!(fleet_effects(app.0.handle_ms(key('y', burst), NOW_MS)).is_empty());
    assert_eq!(
        confirm_lines(&app),
        [
            "Tear down alpha on fleet-2? This runs there: stackless down alpha --json",
            "[y/N]"
        ]
    );
    let drawn = burst + std::time::Duration::from_millis(16);
    app.0.drawn(drawn);
    // Read after the burst, yet before the frame began: still not an answer.
    let early = burst + std::time::Duration::from_millis(8);
    assert!(fleet_effects(app.0.handle_ms(key('y', early), NOW_MS)).is_empty());
    assert_eq!(confirm_lines(&app).len(), 2);
    let effects = fleet_effects(app.0.handle_ms(key('y', drawn), NOW_MS));
    assert_eq!(
        sent(&effects),
        [(
            1,
            json!({"cmd":"down","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
        )]
    );
    assert_eq!(app.0.layers().confirm(), None);
    assert_eq!(app.layer(), None);
}

/// `L` on a fleet row asks to renew the lease as recorded on its host,
/// naming the argv run there; `y` sends `renew` (no lease: as recorded)
/// to that host alone.
#[test]
fn l_renews_the_lease_on_the_rows_host() {
    let mut app = fleet();
    select(&mut app, "fleet-1", "alpha");
    assert!(press(&mut app, KeyCode::Char('L')).is_empty());
    assert_eq!(
        confirm_lines(&app),
        [
            "Renew the lease of alpha on fleet-1 to 1h (as recorded)? This runs there: stackless up --name alpha --lease 1h --json",
            "[y/N]"
        ]
    );
    let effects = press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        sent(&effects),
        [(
            0,
            json!({"cmd":"renew","name":"alpha","birth":{"instance_id":"a1","resource_namespace":"sl-x"},"lease_secs":null})
        )]
    );
}

/// `v` on a fleet row asks to verify on its host, naming the argv run
/// there; `y` sends `verify` to that host alone; on a stale host it is
/// refused with the reason before anything is sent.
#[test]
fn v_verifies_on_the_rows_host_and_a_stale_host_refuses() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "charlie");
    assert!(press(&mut app, KeyCode::Char('v')).is_empty());
    assert_eq!(
        confirm_lines(&app),
        [
            "Verify charlie on fleet-2? This runs there: stackless verify charlie --json (it renews the lease when it starts)",
            "[y/N]"
        ]
    );
    let effects = press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        sent(&effects),
        [(
            1,
            json!({"cmd":"verify","name":"charlie","birth":{"instance_id":"c1","resource_namespace":"sl-x"}})
        )]
    );
    select(&mut app, "fleet-3", "delta");
    assert!(press(&mut app, KeyCode::Char('v')).is_empty());
    assert_eq!(app.layer(), None);
    let flash = app.flash().unwrap();
    assert!(flash.level.is_failure());
    assert!(flash.text.starts_with("fleet-3 "), "{}", flash.text);
}

/// The fleet view in `context` of the console's key table, on fleet-2's
/// `alpha` (expired, active); `None` for a context the fleet's rows never
/// enter: the help and its search (the App's own layer over 1..N hosts,
/// `ui_fleet_app`), the logs' search and the operation overlay (the keys
/// that open them are refused over a fleet).
pub(crate) fn fleet_in(context: stackless_tui::ui::keys::Context) -> Option<Over> {
    use stackless_tui::ui::keys::Context as C;
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    let opener = match context {
        C::Always | C::Panes => None,
        C::Filter => Some(KeyCode::Char('/')),
        C::CommandLine => Some(KeyCode::Char(':')),
        C::Confirm => Some(KeyCode::Char('d')),
        C::Detail => Some(KeyCode::Enter),
        C::Logs => Some(KeyCode::Char('l')),
        C::FullText => Some(KeyCode::Char('e')),
        C::Help | C::HelpSearch | C::LogSearch | C::Operation => return None,
    };
    if let Some(code) = opener {
        press(&mut app, code);
        assert!(
            app.layer().is_some() || app.0.layers().top().is_some(),
            "{context:?} opened"
        );
    }
    Some(app)
}

/// One press of `key` (a sample for the table's wildcards) into `app`.
pub(crate) fn press_key(app: &mut Over, key: stackless_tui::ui::keys::Key) -> Vec<FleetEffect> {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    use stackless_tui::ui::keys::{Key, Mods};
    let mouse = |kind| MouseEvent {
        kind,
        column: 3,
        row: 12,
        modifiers: KeyModifiers::NONE,
    };
    match key {
        Key::Code(code, Mods::Ctrl) => app.key(KeyEvent::new(code, KeyModifiers::CONTROL), NOW_MS),
        Key::Code(code, _) => app.key(KeyEvent::new(code, KeyModifiers::NONE), NOW_MS),
        Key::Text => press(app, KeyCode::Char('x')),
        Key::Other => press(app, KeyCode::Char('n')),
        Key::Click => {
            app.mouse(mouse(MouseEventKind::Down(MouseButton::Left)));
            Vec::new()
        }
        Key::WheelUp => {
            app.mouse(mouse(MouseEventKind::ScrollUp));
            Vec::new()
        }
        Key::WheelDown => {
            app.mouse(mouse(MouseEventKind::ScrollDown));
            Vec::new()
        }
    }
}

/// Every entry of the console's key table, each key in each of its
/// contexts, pressed in the fleet view: a key refused over a fleet says the
/// table's reason ([`Action::on_fleet`]) and sends nothing; any other does
/// what it does on one host, on the selected row's host (fleet-2): the
/// actions ask about fleet-2's `alpha` and `y` sends there alone, the
/// detail and the logs are read from fleet-2's agent, and none of them is
/// met with a refusal.
#[test]
fn every_key_table_entry_acts_on_the_rows_host_or_says_why_not() {
    use stackless_tui::ui::keys::{Action, ENTRIES};
    let refusals: Vec<&str> = ENTRIES
        .iter()
        .flat_map(|e| e.binds)
        .filter_map(|b| b.action.on_fleet().err())
        .collect();
    let mut pressed = 0;
    let mut refused = 0;
    for entry in ENTRIES {
        for bind in entry.binds {
            for context in bind.contexts {
                for key in bind.keys {
                    let Some(mut app) = fleet_in(*context) else {
                        continue;
                    };
                    let what = format!("{:?} {:?} in {context:?}", entry.keys, bind.action);
                    let effects = press_key(&mut app, *key);
                    pressed += 1;
                    if let Err(why) = bind.action.on_fleet() {
                        refused += 1;
                        assert!(effects.is_empty(), "{what}");
                        let flash = app.flash().map(|f| (f.text.as_str(), f.level.is_failure()));
                        assert_eq!(flash, Some((why, true)), "{what}");
                        continue;
                    }
                    if let Some(flash) = app.flash() {
                        assert!(
                            !refusals.contains(&flash.text.as_str()),
                            "{what}: {flash:?}"
                        );
                    }
                    let question = || confirm_lines(&app)[0].clone();
                    match bind.action {
                        Action::Quit => assert!(app.0.quitting(), "{what}"),
                        Action::Reap => assert!(
                            question().starts_with("Reap alpha on fleet-2 now?"),
                            "{what}"
                        ),
                        Action::TearDown => assert!(
                            question().starts_with("Tear down alpha on fleet-2?"),
                            "{what}"
                        ),
                        Action::RenewLease => assert!(
                            question().starts_with("Renew the lease of alpha on fleet-2 to 1h"),
                            "{what}"
                        ),
                        Action::Verify => {
                            assert!(question().starts_with("Verify alpha on fleet-2?"), "{what}");
                        }
                        Action::ConfirmTearDown => assert_eq!(
                            sent(&effects),
                            [(
                                1,
                                json!({"cmd":"down","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
                            )],
                            "{what}"
                        ),
                        Action::CancelTearDown => {
                            assert!(effects.is_empty(), "{what}");
                            assert_eq!(app.0.layers().confirm(), None, "{what}");
                            assert_eq!(
                                app.flash().map(|f| f.text.as_str()),
                                Some("not done"),
                                "{what}"
                            );
                        }
                        Action::OpenDetail
                            if *context == stackless_tui::ui::keys::Context::Panes =>
                        {
                            assert_eq!(
                                sent(&effects),
                                [(1, json!({"cmd":"detail","name":"alpha"}))],
                                "{what}"
                            );
                        }
                        Action::OpenLogs if *context == stackless_tui::ui::keys::Context::Panes => {
                            assert_eq!(sent(&effects).len(), 1, "{what}");
                            assert_eq!(sent(&effects)[0].0, 1, "{what}");
                            assert_eq!(sent(&effects)[0].1["cmd"], "logs", "{what}");
                        }
                        Action::CancelOperation => assert_eq!(
                            app.flash().map(|f| f.text.as_str()),
                            Some("c cancels an operation: Tab to Operations"),
                            "{what}"
                        ),
                        Action::OpenJump => {
                            assert!(
                                app.0
                                    .command_line()
                                    .is_some_and(stackless_tui::ui::app::CommandLine::jumping),
                                "{what}"
                            );
                        }
                        // The help is the App's own layer: the rows ask
                        // for it and open none of their own.
                        Action::OpenHelp => {
                            assert!(app.0.help_open(), "{what}");
                            assert!(!app.take_help(), "{what}");
                            assert_eq!(effects, [], "{what}");
                        }
                        Action::MarkAll => assert_eq!(
                            app.flash().map(|f| f.text.as_str()),
                            Some("5 marked"),
                            "{what}"
                        ),
                        _ => {}
                    }
                }
            }
        }
    }
    // Every bind's keys in every context the fleet's rows have (the help's
    // are the App's: `ui_fleet_app`); refused: `p` and `y` in the detail,
    // `w` in the logs view, `b` (the one-host banners), and a replay's
    // `[` `]` `{` `}` `>` `t` `T` (nothing is replayed over a fleet).
    assert_eq!((pressed, refused), (143, 11));
}

/// Ctrl-F then a name then Enter selects the row whose name matches best
/// (here fleet-1's `bravo`, by prefix): the typed text is never keys, so
/// `dyn` typed after Ctrl-F asks nothing and tears nothing down.
#[test]
fn ctrl_f_jumps_and_its_text_is_never_keys() {
    let mut app = fleet();
    assert!(
        app.key(
            KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL),
            NOW_MS
        )
        .is_empty()
    );
    assert!(typed(&mut app, "dyn").is_empty());
    assert_eq!(
        app.0.command_line().map(|l| (l.text(), l.jumping())),
        Some(("dyn", true))
    );
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.0.command_line(), None);
    app.key(
        KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL),
        NOW_MS,
    );
    typed(&mut app, "brav");
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(app.layer(), None);
    let row = app.selected_row().unwrap();
    assert_eq!(app.fleet().hosts[row.host].name, "fleet-1");
    assert_eq!(
        app.fleet().hosts[row.host].instances()[row.index].key.name,
        "bravo"
    );
}

/// The `:` line's console commands over a fleet: `:verify HOST/NAME` and
/// `:renew HOST/NAME` ask about that instance on its host (as `v` and `L`
/// on its row), `:logs HOST/NAME` follows it over that host's agent,
/// `:ops` focuses Operations, and a single other word jumps to the row
/// whose name matches it.
#[test]
fn the_command_lines_console_commands_act_on_the_named_hosts_instance() {
    let mut app = fleet();
    run_line(&mut app, ":verify fleet-2/charlie");
    assert!(
        confirm_lines(&app)[0].starts_with("Verify charlie on fleet-2? This runs there:"),
        "{:?}",
        confirm_lines(&app)
    );
    press(&mut app, KeyCode::Esc);
    run_line(&mut app, ":renew fleet-1/alpha");
    assert!(
        confirm_lines(&app)[0]
            .starts_with("Renew the lease of alpha on fleet-1 to 1h (as recorded)?"),
        "{:?}",
        confirm_lines(&app)
    );
    press(&mut app, KeyCode::Esc);
    let effects = run_line(&mut app, ":logs fleet-2/alpha");
    assert_eq!(sent(&effects).len(), 1);
    assert_eq!(sent(&effects)[0].0, 1);
    assert_eq!(sent(&effects)[0].1["cmd"], "logs");
    assert_eq!(sent(&effects)[0].1["name"], "alpha");
    press(&mut app, KeyCode::Esc);
    run_line(&mut app, ":renew alpha");
    assert_eq!(
        app.flash().map(|f| (f.text.as_str(), f.level.is_failure())),
        Some((
            "alpha is on 2 hosts (fleet-1, fleet-2): name one as HOST/NAME",
            true
        ))
    );
    run_line(&mut app, ":ops");
    assert_eq!(app.0.focus(), stackless_tui::ui::app::Focus::Operations);
    run_line(&mut app, ":char");
    let row = app.selected_row().unwrap();
    assert_eq!(
        app.fleet().hosts[row.host].instances()[row.index].key.name,
        "charlie"
    );
    assert_eq!(app.0.focus(), stackless_tui::ui::app::Focus::Instances);
}

/// Type `text` and press Enter.
fn run_line(app: &mut Over, text: &str) -> Vec<FleetEffect> {
    let mut effects = typed(app, text);
    effects.extend(press(app, KeyCode::Enter));
    effects
}

/// A `y` that sent commands to several hosts: the footer says every
/// host's answer as it comes, never only the last one's.
#[test]
fn a_bulk_actions_answers_show_every_host() {
    let mut app = fleet();
    select(&mut app, "fleet-1", "bravo");
    press(&mut app, KeyCode::Char(' '));
    select(&mut app, "fleet-2", "alpha");
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('r'));
    let effects = press(&mut app, KeyCode::Char('y'));
    assert_eq!(
        sent(&effects).iter().map(|(h, _)| *h).collect::<Vec<_>>(),
        [0, 1]
    );
    let id = |effect: &FleetEffect| {
        let FleetEffect::Send { line, .. } = effect;
        serde_json::from_str::<Value>(line).unwrap()["id"].clone()
    };
    app.line(
        0,
        &json!({"type":"reply","id":id(&effects[0]),"ok":true,"message":"reap of bravo started"}),
        NOW_MS,
    );
    app.line(
        1,
        &json!({"type":"reply","id":id(&effects[1]),"ok":false,
            "error":{"kind":"refused","message":"refused: alpha is locked"}}),
        NOW_MS,
    );
    let flash = app.flash().unwrap();
    assert_eq!(
        flash.text,
        "2/2 answered: fleet-1: reap of bravo started · fleet-2: reap alpha refused: refused: alpha is locked"
    );
    assert!(flash.level.is_failure());
}

/// The default sort (by host) keeps each host's tombstoned rows after its
/// active ones, then by name, as the console keeps tombstones last.
#[test]
fn the_default_sort_keeps_tombstones_after_each_hosts_active_rows() {
    let mut app = over(FleetState::new(
        vec!["fleet-1".into(), "fleet-2".into()],
        NOW_MS,
    ));
    let mut gone = instance("alpha", "a0", NOW - 900);
    gone["status"] = json!("tombstoned");
    gone["tombstoned_at"] = json!(NOW - 800);
    connect(
        &mut app,
        0,
        "db1",
        &[(
            "instances",
            vec![
                gone,
                instance("bravo", "b1", NOW + 60),
                instance("alpha", "a1", NOW + 60),
            ],
        )],
    );
    connect(
        &mut app,
        1,
        "db2",
        &[("instances", vec![instance("able", "x1", NOW + 60)])],
    );
    let rows: Vec<(usize, String, String)> = app
        .rows()
        .iter()
        .map(|r| {
            let i = &app.fleet().hosts[r.host].instances()[r.index];
            (r.host, i.key.name.clone(), i.status.clone())
        })
        .collect();
    assert_eq!(
        rows,
        [
            (0, "alpha".to_owned(), "active".to_owned()),
            (0, "bravo".to_owned(), "active".to_owned()),
            (0, "alpha".to_owned(), "tombstoned".to_owned()),
            (1, "able".to_owned(), "active".to_owned()),
        ]
    );
}

/// A host back after a failure: `e` on it still shows its last error
/// whole, with how long ago it was (the Hosts pane cuts it to a column).
#[test]
fn e_on_a_host_back_shows_its_last_error_whole() {
    let mut app = fleet();
    let long = format!(
        "ssh: connect to host 127.0.0.1 port 2222: Connection refused {}; the end of it",
        "y".repeat(100)
    );
    app.link(2, link(LinkState::Stale, Some(&long)), NOW_MS);
    app.link(2, link(LinkState::Connecting, None), NOW_MS);
    app.link(2, link(LinkState::Connected, None), NOW_MS);
    for _ in 0..4 {
        press(&mut app, KeyCode::Tab);
    }
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('e'));
    let view = app.0.full_text().expect("the row whole");
    assert_eq!(view.text.title, "host fleet-3");
    assert_eq!(view.text.lines[1], format!("last error:  (40s ago) {long}"));
}

/// `e` shows a row whole in the App's full-text layer, as on one host:
/// its labels in the console's label column, a long labelled line wrapped
/// at spaces, its continuation under its value (never mid-word, never
/// under the label).
#[test]
fn a_text_views_long_line_wraps_at_words_under_its_value() {
    let mut app = fleet();
    let words = "the host key of 127.0.0.1 is not the known one: connect once with ssh fleet-3 to see why, then remove the old key from known_hosts";
    app.link(2, link(LinkState::Failed, Some(words)), NOW_MS);
    for _ in 0..4 {
        press(&mut app, KeyCode::Tab);
    }
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('e'));
    let text = screen(&app, 80, 24);
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("error: "))
        .take(3)
        .map(|l| l.trim_matches(|c| c == '║' || c == '│').trim_end())
        .collect();
    assert_eq!(
        rows,
        [
            "error:       the host key of 127.0.0.1 is not the known one: connect once with",
            "             ssh fleet-3 to see why, then remove the old key from known_hosts",
            "agent:       stackless-tui 0.1.0 on db3 · schema 14"
        ],
        "{text}"
    );
}

/// Dead service processes are told in the LOCK column, as on one host
/// (`1 svc dead`), and STATUS stays the stored status.
#[test]
fn dead_services_lead_the_lock_column_as_on_one_host() {
    let mut app = over(FleetState::new(vec!["fleet-1".into()], NOW_MS));
    let mut row = instance("zulu", "z1", NOW + 3_600);
    row["services_dead"] = json!(1);
    connect(&mut app, 0, "db1", &[("instances", vec![row])]);
    let text = screen(&app, 120, 40);
    let line = text.lines().find(|l| l.contains("zulu")).unwrap();
    let words: Vec<&str> = line
        .trim_matches(|c| c == '║' || c == '▶' || c == ' ')
        .split_whitespace()
        .collect();
    assert_eq!(words[..4], ["fleet-1", "zulu", "local", "active"], "{line}");
    assert_eq!(words[words.len() - 3..], ["1", "svc", "dead"], "{line}");
}

/// `r` on an instance with a pending operation on its host is refused
/// before any question, in the console's words (a reap never runs beside
/// a pending operation); nothing is sent.
#[test]
fn a_reap_beside_a_pending_operation_is_refused_before_the_question() {
    let mut app = over(FleetState::new(vec!["fleet-1".into()], NOW_MS));
    connect(
        &mut app,
        0,
        "db1",
        &[
            ("instances", vec![instance("charlie", "c1", NOW - 60)]),
            (
                "operations",
                vec![
                    json!({"id":"op-7","instance":"charlie","verb":"up","status":"running",
                    "created_at":NOW - 5,"updated_at":NOW - 5,"error":null}),
                ],
            ),
        ],
    );
    select(&mut app, "fleet-1", "charlie");
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    assert_eq!(app.layer(), None);
    assert_eq!(
        app.flash().map(|f| (f.text.as_str(), f.level.is_failure())),
        Some((
            "charlie on fleet-1: refused: operation pending (up running); the controller runs it first (d queues a teardown behind it)",
            true
        ))
    );
}

/// The logs view over a fleet searches as on one host: `/` types the
/// search, Enter moves to the newest match, `n` to the next older, `N`
/// back to the newer one (without case); `w` and Tab say why not.
#[test]
fn the_fleet_logs_view_searches_with_slash_n_and_shift_n() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "charlie");
    let effects = press(&mut app, KeyCode::Char('l'));
    let FleetEffect::Send { line, .. } = &effects[0];
    let id = serde_json::from_str::<Value>(line).unwrap()["id"].clone();
    app.line(
        1,
        &json!({"type":"reply","id":id,"ok":true,"services":["web"]}),
        NOW_MS,
    );
    for text in ["boot", "GET /a 500", "ok", "get /b 500", "ok", "done"] {
        app.line(
            1,
            &json!({"type":"log","logs":id,"service":"web","text":text,"at":null,"cont":false}),
            NOW_MS,
        );
    }
    let scroll = |app: &Over| match app.layer() {
        Some(view) => (view.scroll, view.lines[view.scroll].clone()),
        other => panic!("no text view: {other:?}"),
    };
    typed(&mut app, "/500");
    press(&mut app, KeyCode::Enter);
    // Line 0 is the `-- following web over its agent` header.
    assert_eq!(scroll(&app), (4, "web │ get /b 500".to_owned()));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(scroll(&app), (2, "web │ GET /a 500".to_owned()));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(scroll(&app), (2, "web │ GET /a 500".to_owned()));
    press(&mut app, KeyCode::Char('N'));
    assert_eq!(scroll(&app), (4, "web │ get /b 500".to_owned()));
    press(&mut app, KeyCode::Char('w'));
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("over a fleet the logs view always wraps at words: w has nothing to switch")
    );
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("over a fleet the logs view is one stream for every service: no other to switch to")
    );
    let text = screen(&app, 80, 24);
    assert!(
        text.contains("over a fleet the logs view is one stream for every service"),
        "{text}"
    );
}

/// `y` copies the selected row's name and `Y` the teardown its host's
/// agent runs for it (OSC 52, written by the wiring); the first copy's
/// flash says how to let OSC 52 through, as on one host.
#[test]
fn y_and_shift_y_copy_the_name_and_the_hosts_teardown() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    assert!(press(&mut app, KeyCode::Char('y')).is_empty());
    assert_eq!(app.take_copies(), ["alpha"]);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("OSC 52 sent; not pasted? tmux: set -g set-clipboard on · alpha")
    );
    press(&mut app, KeyCode::Char('Y'));
    assert_eq!(app.take_copies(), ["stackless down alpha --json"]);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("sent to the terminal's clipboard (OSC 52): stackless down alpha --json")
    );
    assert_eq!(app.take_copies(), Vec::<String>::new());
}

/// `z` zooms the focused pane to the whole body and back, as on one host;
/// Tab moves the zoom to the next pane.
#[test]
fn z_zooms_the_focused_pane_and_tab_moves_it() {
    let mut app = fleet();
    press(&mut app, KeyCode::Char('z'));
    assert!(app.0.zoomed());
    let text = screen(&app, 80, 24);
    let titles: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('╔') || l.starts_with('┌'))
        .collect();
    assert_eq!(titles.len(), 1, "{text}");
    assert!(titles[0].starts_with("╔ Instances 1/5"), "{text}");
    press(&mut app, KeyCode::Tab);
    let text = screen(&app, 80, 24);
    let titles: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('╔') || l.starts_with('┌'))
        .collect();
    assert_eq!(titles.len(), 1, "{text}");
    assert!(titles[0].starts_with("╔ Operations"), "{text}");
    press(&mut app, KeyCode::Char('z'));
    assert!(!app.0.zoomed());
}

/// The mouse over a fleet, as on one host: a click selects the Instances
/// row under it (fleet-2's `charlie`, the fourth row), the wheel over the
/// Hosts pane focuses it and moves its selection by 3 (the last of 3).
#[test]
fn a_click_selects_the_row_under_it_and_the_wheel_scrolls_its_pane() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut app = fleet();
    screen(&app, 120, 40);
    let mouse = |kind, row| MouseEvent {
        kind,
        column: 10,
        row,
        modifiers: KeyModifiers::NONE,
    };
    app.mouse(mouse(MouseEventKind::Down(MouseButton::Left), 12));
    let row = app.selected_row().unwrap();
    assert_eq!(
        (
            app.fleet().hosts[row.host].name.as_str(),
            app.fleet().hosts[row.host].instances()[row.index]
                .key
                .name
                .as_str()
        ),
        ("fleet-2", "charlie")
    );
    app.mouse(mouse(MouseEventKind::ScrollDown, 3));
    assert_eq!(app.0.focus(), stackless_tui::ui::app::Focus::Hosts);
    assert_eq!(app.0.fleet_cursor(stackless_tui::ui::app::Focus::Hosts), 2);
}

/// The `:` line over a fleet: ↑ and ↓ walk the lines run (oldest at the
/// top, ↓ past the newest clears it), Ctrl-W deletes the last word, in
/// the `/` filter too.
#[test]
fn the_command_line_keeps_its_history_and_ctrl_w_deletes_a_word() {
    let mut app = fleet();
    let ctrl_w = KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL);
    let line = |app: &Over| {
        app.0
            .command_line()
            .map(|line| line.text().to_owned())
            .expect("the App's : line")
    };
    run_line(&mut app, ":sort name");
    run_line(&mut app, ":filter alpha");
    typed(&mut app, ":");
    press(&mut app, KeyCode::Up);
    assert_eq!(line(&app), "filter alpha");
    press(&mut app, KeyCode::Up);
    assert_eq!(line(&app), "sort name");
    press(&mut app, KeyCode::Up);
    assert_eq!(line(&app), "sort name");
    press(&mut app, KeyCode::Down);
    assert_eq!(line(&app), "filter alpha");
    press(&mut app, KeyCode::Down);
    assert_eq!(line(&app), "");
    typed(&mut app, "reap fleet-2/alpha  ");
    app.key(ctrl_w, NOW_MS);
    assert_eq!(line(&app), "reap ");
    press(&mut app, KeyCode::Esc);
    // Esc on the panes clears the filter `:filter alpha` set.
    press(&mut app, KeyCode::Esc);
    typed(&mut app, "/host:fleet-2 alp");
    app.key(ctrl_w, NOW_MS);
    assert_eq!(app.filter_text(), "host:fleet-2 ");
}

/// A host whose clock is an hour ahead: its lease that ran out 85 s ago
/// on its own clock is shown expired (not `58m 35s left`), the Hosts pane
/// says the skew, and its agent's first pass counts down there.
#[test]
fn a_host_an_hour_ahead_counts_down_on_its_own_clock_and_says_so() {
    let mut app = over(FleetState::new(vec!["fleet-2".into()], NOW_MS));
    connect(
        &mut app,
        0,
        "db2",
        &[("instances", vec![instance("alpha", "a1", NOW + 3_515)])],
    );
    let before = screen(&app, 160, 40);
    assert!(before.contains("58m 35s left"), "{before}");
    app.link(
        0,
        Link {
            skew: Some(3_600),
            ..link(LinkState::Connected, None)
        },
        NOW_MS,
    );
    app.line(
        0,
        &json!({"type":"reaper","by":"agent","pid":42,"paused":false,
            "next_pass_at":NOW + 3_600 + 8,"text":"reaper: every 60s","last_pass":null}),
        NOW_MS,
    );
    let text = screen(&app, 160, 40);
    assert!(!text.contains("58m 35s left"), "{text}");
    assert!(text.contains("expired 1m 25s ago"), "{text}");
    assert!(text.contains("agent first pass in 8s"), "{text}");
    assert!(
        text.contains("its clock is 1h 00m ahead of this machine's"),
        "{text}"
    );
}

/// Tab on the App's `:` line over a fleet completes the command, then an
/// active instance: `NAME` when one host has it, `HOST/NAME` when several
/// do, Tab again showing the next candidate (the App's cycle).
#[test]
fn tab_completes_the_command_and_the_instance_across_hosts() {
    let mut app = fleet();
    let line = |app: &Over| {
        app.0
            .command_line()
            .map(|line| line.text().to_owned())
            .expect("the App's : line")
    };
    typed(&mut app, ":ver");
    press(&mut app, KeyCode::Tab);
    assert_eq!(line(&app), "verify ");
    typed(&mut app, "ch");
    press(&mut app, KeyCode::Tab);
    assert_eq!(line(&app), "verify charlie ");
    press(&mut app, KeyCode::Esc);
    typed(&mut app, ":renew fleet");
    press(&mut app, KeyCode::Tab);
    assert_eq!(line(&app), "renew fleet-1/alpha");
    let candidates = |app: &Over| {
        let line = app.0.command_line().unwrap();
        line.candidates().map(|(c, i)| (c.to_vec(), i))
    };
    let both = vec!["fleet-1/alpha".to_owned(), "fleet-2/alpha".to_owned()];
    assert_eq!(candidates(&app), Some((both.clone(), 0)));
    press(&mut app, KeyCode::Tab);
    assert_eq!(line(&app), "renew fleet-2/alpha");
    assert_eq!(candidates(&app), Some((both, 1)));
}

/// A question over a fleet is the App's confirm layer, drawn over the
/// fleet's panes: its box names the host and the argv run there, `[y/N]`
/// under it (120x40).
#[test]
fn the_question_over_a_fleet_is_drawn_by_the_apps_confirm_layer() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    press(&mut app, KeyCode::Char('d'));
    let text = screen(&app, 120, 40);
    // The box, 100 columns wide, centred in the 120 columns.
    let boxed: Vec<String> = text
        .lines()
        .skip(18)
        .take(4)
        .map(|l| l.chars().skip(10).take(100).collect())
        .collect();
    let rule = "═".repeat(89);
    assert_eq!(
        boxed,
        [
            format!("╔ Confirm {rule}╗"),
            format!(
                "║Tear down alpha on fleet-2? This runs there: stackless down alpha --json{}║",
                " ".repeat(26)
            ),
            format!("║[y/N]{}║", " ".repeat(93)),
            format!("╚{}╝", "═".repeat(98)),
        ]
    );
}

/// `/` over a fleet opens the App's one filter prompt: its text is the
/// App's filter (drawn as the footer's prompt), each edit filters every
/// host's rows, ↓ moves the selection as on one host, Ctrl-U clears the
/// line, Enter keeps the filter and Esc (with the prompt open) clears it.
#[test]
fn the_filter_prompt_over_a_fleet_is_the_apps() {
    let mut app = fleet();
    press(&mut app, KeyCode::Char('/'));
    assert!(app.0.filter_editing());
    assert_eq!(app.layer(), None);
    typed(&mut app, "alpha");
    assert_eq!((app.0.filter(), app.filter_text()), ("alpha", "alpha"));
    assert_eq!(app.rows().len(), 2);
    let footer = screen(&app, 120, 40).lines().last().unwrap().to_owned();
    assert_eq!(footer, "/alpha▏ (Enter keeps, Esc clears)");
    let first = app.selected_row().unwrap();
    press(&mut app, KeyCode::Down);
    assert_eq!(app.selected_row().unwrap().host, 1);
    assert_ne!(app.selected_row(), Some(first));
    app.key(
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
        NOW_MS,
    );
    assert_eq!(app.filter_text(), "");
    typed(&mut app, "charlie");
    press(&mut app, KeyCode::Enter);
    assert!(!app.0.filter_editing());
    assert_eq!(app.filter_text(), "charlie");
    assert_eq!(app.rows().len(), 1);
    press(&mut app, KeyCode::Char('/'));
    assert_eq!(app.0.filter(), "charlie");
    press(&mut app, KeyCode::Esc);
    assert!(!app.0.filter_editing());
    assert_eq!(app.filter_text(), "");
    assert_eq!(app.rows().len(), 5);
}

/// What the fleet's rows say is the App's one flash line: drawn in the
/// footer with its level's tag, and gone after `FLASH_SECS` (4 s), as on
/// one host.
#[test]
fn the_fleets_words_are_the_apps_flash_and_clear_after_four_seconds() {
    let mut app = fleet();
    select(&mut app, "fleet-2", "alpha");
    press(&mut app, KeyCode::Char('d'));
    press(&mut app, KeyCode::Char('n'));
    let footer = |app: &Over| screen(app, 120, 40).lines().last().unwrap().to_owned();
    assert_eq!(footer(&app), "[info] not done");
    app.0.handle_ms(
        Event::Tick,
        NOW_MS + 1000 * (stackless_tui::ui::app::FLASH_SECS + 1),
    );
    assert_eq!(app.flash(), None);
    assert!(
        footer(&app).starts_with("Enter detail · l logs"),
        "{}",
        footer(&app)
    );
}

/// While the App's own layer is open over a fleet (a question, a row
/// whole), the footer is the App's: its key table's keys for that layer,
/// as on one host, not the fleet's panes' list.
#[test]
fn the_footer_over_a_fleet_shows_the_open_layers_keys() {
    let mut app = fleet();
    let footer = |app: &Over| screen(app, 120, 40).lines().last().unwrap().to_owned();
    select(&mut app, "fleet-2", "alpha");
    press(&mut app, KeyCode::Char('d'));
    // Under a question the footer lists the question's keys, as on one
    // host.
    assert_eq!(
        footer(&app),
        "y yes: run it  any other key no: nothing runs"
    );
    press(&mut app, KeyCode::Char('n'));
    for _ in 0..4 {
        press(&mut app, KeyCode::Tab);
    }
    // 5 s later: `not done` has cleared.
    app.key(
        KeyEvent::new(KeyCode::Char('e'), KeyModifiers::NONE),
        NOW_MS + 5_000,
    );
    assert_eq!(
        footer(&app),
        "Esc back  ↑↓/jk scroll  PgUp/PgDn page  ? help  q quit"
    );
}

/// Ctrl-F's Tab over a fleet offers `HOST/NAME` for a name on several
/// hosts; Enter on it selects that host's row.
#[test]
fn ctrl_f_tab_then_enter_jumps_to_the_named_hosts_row() {
    let mut app = fleet();
    app.key(
        KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL),
        NOW_MS,
    );
    typed(&mut app, "fleet-2/al");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.0.command_line().map(|l| l.text().to_owned()),
        Some("fleet-2/alpha ".to_owned())
    );
    press(&mut app, KeyCode::Enter);
    let row = app.selected_row().unwrap();
    let host = &app.fleet().hosts[row.host];
    assert_eq!(
        (
            host.name.as_str(),
            host.instances()[row.index].key.name.as_str()
        ),
        ("fleet-2", "alpha")
    );
    assert_eq!(app.flash(), None);
}

/// Every pane over a fleet counts the rows it cannot show in its bottom
/// border, as on one host: at 80x16 the Instances pane shows a window of
/// the merged rows and says how many are below it.
#[test]
fn the_instances_pane_over_a_fleet_counts_its_hidden_rows() {
    let app = fleet();
    let text = screen(&app, 80, 16);
    let lines: Vec<&str> = text.lines().collect();
    let title = lines
        .iter()
        .find(|l| l.contains("Instances 1/"))
        .expect("the Instances title");
    let total: usize = title
        .split("Instances 1/")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .expect("a row count");
    let drawn = lines
        .iter()
        .filter(|l| l.starts_with('║') && l.contains("fleet-"))
        .count();
    let border = lines
        .iter()
        .find(|l| l.starts_with('╚'))
        .expect("the Instances bottom border");
    assert_eq!(
        (
            total,
            drawn,
            border.contains(&format!("↓ {} more", total - drawn))
        ),
        (total, drawn, true),
        "{text}"
    );
    assert!(total > drawn, "{text}");
}

/// An agent started again on a reconnect starts unpaused: a host whose
/// reaper the operator paused is paused again before its first pass, once,
/// and Activity says so.
#[test]
fn a_host_paused_by_the_operator_is_paused_again_after_its_agent_restarts() {
    let mut app = fleet();
    select(&mut app, "fleet-1", "alpha");
    let reaper = |paused: bool| {
        json!({"type":"reaper","by":"agent","pid":42,"paused":paused,
            "next_pass_at":if paused { Value::Null } else { json!(NOW + 10) },
            "text":"reaper: every 60s","last_pass":null})
    };
    let pauses = |effects: &[FleetEffect]| {
        sent(effects)
            .into_iter()
            .filter(|(_, c)| c["cmd"] == "pause")
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pauses(&press(&mut app, KeyCode::Char('P'))),
        [(0, json!({"cmd":"pause"}))]
    );
    app.line(0, &reaper(true), NOW_MS);
    assert_eq!(pauses(&app.tick(NOW_MS + 1_000)), []);
    // The connection is lost and made again; the new agent's reaper runs.
    app.link(
        0,
        link(LinkState::Stale, Some("no line for 15s")),
        NOW_MS + 2_000,
    );
    app.link(0, link(LinkState::Connected, None), NOW_MS + 3_000);
    app.line(0, &reaper(false), NOW_MS + 3_000);
    assert_eq!(
        pauses(&app.tick(NOW_MS + 4_000)),
        [(0, json!({"cmd":"pause"}))]
    );
    // Once, until the agent says its reaper is paused.
    assert_eq!(pauses(&app.tick(NOW_MS + 5_000)), []);
    let text = screen(&app, 160, 40);
    assert!(
        text.contains("fleet-1's agent started again unpaused: its reaper paused again"),
        "{text}"
    );
    // A host the operator resumed is left running.
    app.line(0, &reaper(true), NOW_MS + 6_000);
    press(&mut app, KeyCode::Char('P'));
    app.line(0, &reaper(false), NOW_MS + 7_000);
    assert_eq!(pauses(&app.tick(NOW_MS + 8_000)), []);
}
