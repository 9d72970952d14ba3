//! The launcher's plans: which invocation runs here, over ssh, or over a
//! fleet, and what each refuses.

use super::*;
use clap::Parser as _;

fn decide(args: &[&str], env: Option<&str>) -> Result<Option<Plan>, String> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let cli = Cli::parse_from(&args);
    plan(&cli, &args, env.map(str::to_owned), &[])
}

#[test]
fn who_goes_remote() {
    let plan = decide(
        &[
            "stackless-tui",
            "--controller",
            "ssh://h",
            "snapshot",
            "--json",
        ],
        None,
    )
    .unwrap()
    .unwrap();
    assert_eq!(plan.mode, Mode::Headless);
    assert_eq!(plan.remote_bin, "stackless-tui");
    assert_eq!(plan.forwarded, ["snapshot", "--json"]);
    let plan = decide(&["stackless-tui"], Some("ssh://u@h"))
        .unwrap()
        .unwrap();
    assert_eq!(plan.mode, Mode::Console);
    assert_eq!(plan.target.destination(), "u@h");
    // stackless ignores the variable beside a local state path; so do we.
    assert_eq!(
        decide(&["stackless-tui", "--state", "/s.db"], Some("h")),
        Ok(None)
    );
    assert_eq!(decide(&["stackless-tui", "--demo"], Some("h")), Ok(None));
    assert_eq!(decide(&["stackless-tui"], Some("")), Ok(None));
    assert_eq!(decide(&["stackless-tui", "man"], Some("h")), Ok(None));
    assert_eq!(
        decide(&["stackless-tui", "--controller", "h", "man"], None),
        Ok(None)
    );
    // The remote side never hops again.
    assert_eq!(
        decide(&["stackless-tui", "--reached-as", "h"], Some("h")),
        Ok(None)
    );
    assert_eq!(
        decide(&["stackless-tui", "--reached-as", "h;rm"], None),
        Err("--reached-as \"h;rm\": not a host name stackless accepts".to_owned())
    );
    assert!(
        decide(
            &["stackless-tui", "--reached-as", "h", "--controller", "h"],
            None
        )
        .is_err()
    );
}

/// The protocol's streams get their own modes (the local stdin copied
/// through for `serve --stdio`; none read for `snapshot --follow`) and
/// exactly this argv: `-T`, batch mode, host key checking, every
/// remote word quoted.
#[test]
fn streams_go_remote_in_their_own_modes() {
    let args = [
        "stackless-tui",
        "--controller",
        "ssh://deploy@fleet-1",
        "--ssh-config",
        "/my ssh/config",
        "--remote-bin",
        "/opt/st/stackless-tui",
        "--state",
        "/srv/it's/state.db",
    ];
    let serve = decide(&[&args[..], &["serve", "--stdio"]].concat(), None)
        .unwrap()
        .unwrap();
    assert_eq!(serve.mode, Mode::Serve);
    let follow = decide(&[&args[..], &["snapshot", "--follow"]].concat(), None)
        .unwrap()
        .unwrap();
    assert_eq!(follow.mode, Mode::Follow);
    let once = decide(&[&args[..], &["snapshot", "--json"]].concat(), None)
        .unwrap()
        .unwrap();
    assert_eq!(once.mode, Mode::Headless);
    let argv = |plan: &Plan| {
        plan.ssh_args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    let head = [
        "-F",
        "/my ssh/config",
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "ConnectTimeout=10",
        "--",
        "deploy@fleet-1",
        "/opt/st/stackless-tui",
        "--reached-as",
        "fleet-1",
        "--state",
        "'/srv/it'\\''s/state.db'",
    ];
    assert_eq!(argv(&serve), [&head[..], &["serve", "--stdio"]].concat());
    assert_eq!(
        argv(&follow),
        [&head[..], &["snapshot", "--follow"]].concat()
    );
}

/// Over a fleet the console runs; `serve --stdio` and `reap --once`
/// are refused, saying what runs.
#[test]
fn what_a_fleet_refuses() {
    assert_eq!(
        fleet_refusal(
            &Sub::Serve {
                stdio: true,
                first_pass_after: 0
            },
            3
        ),
        "`serve --stdio` does not run over a fleet: over 3 hosts the console, `snapshot`, \
         `snapshot --json`, `snapshot --follow` and `record` run; run `serve --stdio` with one \
         --controller ssh://HOST"
    );
    assert_eq!(
        fleet_refusal(&Sub::Reap { once: true }, 2),
        "`reap --once` does not run over a fleet: over 2 hosts the console, `snapshot`, \
         `snapshot --json`, `snapshot --follow` and `record` run; run `reap --once` with one \
         --controller ssh://HOST"
    );
    assert_eq!(
        fleet_needs_a_terminal(2),
        "the fleet view needs a terminal (stdin and stdout are not both a TTY). For \
         scripts and cron over these 2 hosts use `snapshot`, `snapshot --json` or \
         `snapshot --follow`."
    );
}

#[test]
fn refusals_name_the_source() {
    assert_eq!(
        decide(&["stackless-tui", "--controller", "ssh://host;rm"], None),
        Err(format!(
            "--controller \"ssh://host;rm\": {}",
            plan::TARGET_RULE
        ))
    );
    assert_eq!(
        decide(&["stackless-tui"], Some("ssh://user@")),
        Err(format!(
            "STACKLESS_CONTROLLER \"ssh://user@\": {}",
            plan::TARGET_RULE
        ))
    );
    assert_eq!(
        decide(
            &["stackless-tui", "--controller", "h", "--remote-bin=-x"],
            None
        ),
        Err("--remote-bin \"-x\" starts with '-': name the stackless-tui program on h".to_owned())
    );
}
