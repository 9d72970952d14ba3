//! `crate::cli`'s tests: flags, the config file, the environment.

use super::*;

/// An empty variable this program reads counts as
/// unset; a set one, or an empty one it does not read, is left alone.
#[test]
fn empty_variables_are_the_read_ones_set_to_nothing() {
    let vars = [
        ("STACKLESS_TUI_STATE", ""),
        ("STACKLESS_TUI_TICK", "5s"),
        ("STACKLESS_TUI_FLEET", ""),
        ("STACKLESS_TUI_REMOTE_BIN", ""),
        ("STACKLESS_BIN", ""),
        ("STACKLESS_CONTROLLER", ""),
        ("STACKLESS_STATE_URL", ""),
        ("XDG_STATE_HOME", ""),
        ("XDG_CONFIG_HOME", "/c"),
        ("HOME", ""),
        ("STACKLESS_TUI_NOT_A_FLAG", ""),
        ("EDITOR", ""),
    ]
    .map(|(name, value)| (OsString::from(name), OsString::from(value)));
    assert_eq!(
        empty_variables(vars),
        [
            "STACKLESS_TUI_STATE",
            "STACKLESS_TUI_FLEET",
            "STACKLESS_TUI_REMOTE_BIN",
            "STACKLESS_BIN",
            "STACKLESS_CONTROLLER",
            "STACKLESS_STATE_URL",
            "XDG_STATE_HOME",
        ]
        .map(OsString::from)
    );
}

#[test]
fn durations() {
    assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
    assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
    assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
    assert!(parse_duration("0s").is_err());
    assert!(parse_duration("soon").is_err());
}

#[test]
fn every_flag_has_a_long_name_and_help() {
    Cli::command().debug_assert();
    for arg in Cli::command().get_arguments() {
        if arg.get_id() == "help" || arg.get_id() == "version" {
            continue;
        }
        assert!(
            arg.get_long().is_some(),
            "{} has no long name",
            arg.get_id()
        );
        assert!(arg.get_help().is_some(), "{} has no help", arg.get_id());
    }
}

#[test]
fn defaults() {
    let cli = Cli::parse_from(["stackless-tui"]);
    assert_eq!(cli.tick, Duration::from_secs(60));
    assert_eq!(cli.down_timeout, Duration::from_secs(600));
    assert_eq!(cli.down_cmd, None);
    assert_eq!(
        cli.down_command().unwrap().template(),
        ["stackless", "down", "{name}", "--json"]
    );
    assert_eq!(cli.reap_concurrency, 2);
    assert_eq!(cli.stackless, PathBuf::from("stackless"));
    assert!(cli.demo.is_none() && !cli.no_reaper && !cli.read_only && !cli.dry_run);
}

/// `--stackless` names the default teardown's program too, as one
/// argument; `--down-cmd` wins over it.
#[test]
fn stackless_is_the_default_teardowns_program_and_down_cmd_wins() {
    let cli = Cli::parse_from(["stackless-tui", "--stackless", "/opt/my tools/stackless"]);
    assert_eq!(
        cli.down_command().unwrap().template(),
        ["/opt/my tools/stackless", "down", "{name}", "--json"]
    );
    let cli = Cli::parse_from([
        "stackless-tui",
        "--stackless",
        "/opt/stackless",
        "--down-cmd",
        "my-down {name}",
    ]);
    assert_eq!(
        cli.down_command().unwrap().template(),
        ["my-down", "{name}"]
    );
}

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

#[test]
fn utc_in_the_config_file_and_the_flag_over_it() {
    let file = PathBuf::from("/cfg/config.toml");
    let parse = |argv: &[&str], text: &'static str| {
        parse_with_config(args(argv), Some(file.clone()), move |_: &Path| {
            Ok(Some(text.to_owned()))
        })
    };
    assert!(parse(&["stackless-tui"], "utc = true\n").unwrap().utc);
    assert!(!parse(&["stackless-tui"], "utc = false\n").unwrap().utc);
    // The flag wins over `utc = false`, also after a subcommand.
    assert!(
        parse(&["stackless-tui", "--utc"], "utc = false\n")
            .unwrap()
            .utc
    );
    assert!(
        parse(&["stackless-tui", "snapshot", "--utc"], "utc = false\n")
            .unwrap()
            .utc
    );
    match parse(&["stackless-tui"], "utc = \"yes\"\n") {
        Err(CliError::Config(message)) => assert_eq!(
            message,
            "/cfg/config.toml: `utc` must be true or false, not string `\"yes\"`"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn config_file_fills_defaults_but_flags_win() {
    let file = PathBuf::from("/cfg/config.toml");
    let text = "tick = \"5m\"\nno-reaper = true\nreap-concurrency = 4\ndry-run = false\n";
    let read = |_: &Path| Ok(Some(text.to_owned()));
    let cli = parse_with_config(args(&["stackless-tui"]), Some(file.clone()), read).unwrap();
    assert_eq!(cli.tick, Duration::from_secs(300));
    assert!(cli.no_reaper);
    assert_eq!(cli.reap_concurrency, 4);
    assert!(!cli.dry_run);
    let cli = parse_with_config(
        args(&["stackless-tui", "--tick", "7s", "snapshot"]),
        Some(file.clone()),
        read,
    )
    .unwrap();
    assert_eq!(cli.tick, Duration::from_secs(7));
    assert_eq!(cli.reap_concurrency, 4);
    assert!(matches!(cli.command, Some(Sub::Snapshot { .. })));
}

#[test]
fn a_missing_default_config_is_fine_a_bad_one_is_not() {
    let none = |_: &Path| Ok(None);
    assert!(parse_with_config(args(&["stackless-tui"]), Some("/x.toml".into()), none).is_ok());
    let bad = |_: &Path| Ok(Some("colour = \"red\"".to_owned()));
    let Err(CliError::Config(message)) =
        parse_with_config(args(&["stackless-tui"]), Some("/x.toml".into()), bad)
    else {
        panic!("an unknown key is an error");
    };
    assert!(
        message.starts_with("/x.toml: unknown key `colour`"),
        "{message}"
    );
    let Err(CliError::Config(message)) = parse_with_config(
        args(&["stackless-tui", "--config", "/nope.toml"]),
        None,
        none,
    ) else {
        panic!("an explicit missing config is an error");
    };
    assert_eq!(message, "/nope.toml: the config file does not exist");
}

#[test]
fn config_values_of_the_wrong_type_name_the_file() {
    for (text, expected) in [
        (
            "read-only = \"man\"",
            "/c.toml: `read-only` must be true or false, not string `\"man\"`",
        ),
        (
            "reap-concurrency = \"4\"",
            "/c.toml: `reap-concurrency` must be a whole number, not string `\"4\"`",
        ),
        (
            "tick = 5",
            "/c.toml: `tick` must be a string, not integer `5`",
        ),
    ] {
        let read = |_: &Path| Ok(Some(text.to_owned()));
        let Err(CliError::Config(message)) =
            parse_with_config(args(&["stackless-tui"]), Some("/c.toml".into()), read)
        else {
            panic!("{text} must be refused");
        };
        assert_eq!(message, expected);
    }
    // A negative number is a value, not a flag.
    let read = |_: &Path| Ok(Some("reap-concurrency = -1".to_owned()));
    let Err(CliError::Config(message)) =
        parse_with_config(args(&["stackless-tui"]), Some("/c.toml".into()), read)
    else {
        panic!("-1 is out of range");
    };
    assert!(
        message.starts_with("/c.toml: error: invalid value '-1'"),
        "{message}"
    );
}

#[test]
fn config_paths() {
    assert_eq!(
        default_config_path(Some("/xdg"), Some("/home/o")),
        Some(PathBuf::from("/xdg/stackless-tui/config.toml"))
    );
    assert_eq!(
        default_config_path(None, Some("/home/o")),
        Some(PathBuf::from("/home/o/.config/stackless-tui/config.toml"))
    );
}
