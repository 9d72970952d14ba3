//! Command mode (`:`): the line parsed into a [`UiCommand`], its Tab
//! completion (command names, then instance names) and the fuzzy jump to
//! an instance by name, as pure functions of the text and the names.
//!
//! `:reap NAME...`, `:down NAME...`, `:renew NAME... [DURATION]`,
//! `:verify NAME...`, `:filter EXPR`, `:sort KEY
//! [asc|desc]`, `:pause`, `:resume`, `:pass`, `:logs NAME`, `:ops`,
//! `:help`, `:q`, `:at TIME` (a replay); any other single word is a jump (`:NAME`): a word that
//! is a command runs the command, even when an instance has that name
//! (Ctrl-F jumps to it: its line is never parsed as a command). Names are
//! checked DNS-safe ([`crate::model::name::is_dns_safe`]) before anything
//! acts on them.

use crate::model::name::is_dns_safe;
use crate::ui::app::SortKey;

/// The command names, in completion order.
pub(crate) const COMMANDS: [&str; 15] = [
    "down", "filter", "help", "logs", "ops", "pass", "pause", "q", "quit", "reap", "renew",
    "resume", "sort", "verify", "at",
];

/// Completion offers at most this many instance names.
pub(crate) const MAX_CANDIDATES: usize = 50;

/// What a command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UiCommand {
    /// `:reap NAME...`: what `r` does, for these instances.
    Reap(Vec<String>),
    /// `:down NAME...`: what `d` does, for these instances.
    Down(Vec<String>),
    /// `:renew NAME... [DURATION]`: what `L` does, for these instances,
    /// with this lease in seconds (`None`: each one's recorded lease).
    Renew(Vec<String>, Option<u64>),
    /// `:verify NAME...`: what `v` does, for these instances.
    Verify(Vec<String>),
    /// `:filter EXPR`: the Instances filter (empty: none).
    Filter(String),
    /// `:sort KEY [asc|desc]` (`None`: the key's natural direction).
    Sort(SortKey, Option<bool>),
    /// `:pause [HOST]`: pause the reaper (over a fleet, of the host named,
    /// or `all`; `None`: the selected row's host, or this store's).
    Pause(Option<String>),
    /// `:resume [HOST]`: resume the reaper (the host as for `:pause`).
    Resume(Option<String>),
    /// `:pass [HOST]`: run a reaper pass now (the host as for `:pause`).
    Pass(Option<String>),
    /// `:logs NAME`: the logs view of an instance.
    Logs(String),
    /// `:ops`: focus the Operations pane.
    Ops,
    /// `:help`: the help overlay.
    Help,
    /// `:q`, `:quit`.
    Quit,
    /// `:NAME` (or Ctrl-F): select the instance whose name matches best.
    Jump(String),
    /// `:at TIME` (`t`): move a replay's cursor to TIME (`03:12`, `10m
    /// ago`, RFC 3339: [`crate::model::history::cursor::parse_cursor`]).
    At(String),
}

/// Parse a command line (without its `:`).
///
/// # Errors
/// A message for the footer: `no command`, `unknown sort key "x" (lease,
/// name, substrate, reap, status, lock)`, `:reap needs instance names`,
/// `"Bad_Name" is not a DNS-safe name`, ...
pub(crate) fn parse(line: &str) -> Result<UiCommand, String> {
    parse_in(line, false)
}

/// Parse a command line (without its `:`) over a fleet: [`parse`]'s
/// commands, an instance named `[HOST/]NAME` (its name checked DNS-safe),
/// `:pause`, `:resume` and `:pass` with an optional HOST (or `all`), and
/// `:sort host`.
///
/// # Errors
/// As [`parse`].
pub(crate) fn parse_over_fleet(line: &str) -> Result<UiCommand, String> {
    parse_in(line, true)
}

fn parse_in(line: &str, fleet: bool) -> Result<UiCommand, String> {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        return Err("no command".into());
    };
    let rest: Vec<&str> = words.collect();
    let names = |verb: &str| -> Result<Vec<String>, String> {
        if rest.is_empty() {
            return Err(format!(":{verb} needs instance names"));
        }
        rest.iter().map(|n| checked(n, fleet)).collect()
    };
    let bare = |command: UiCommand| {
        if rest.is_empty() {
            Ok(command)
        } else {
            Err(format!(":{first} takes no arguments"))
        }
    };
    // Over a fleet, the reaper's commands name a host (or `all`).
    let host = || match rest.as_slice() {
        [] => Ok(None),
        [host] if fleet => Ok(Some((*host).to_owned())),
        _ if fleet => Err(format!(":{first} takes one HOST (or all) over a fleet")),
        _ => Err(format!(":{first} takes no arguments")),
    };
    match first {
        "reap" => names("reap").map(UiCommand::Reap),
        "down" => names("down").map(UiCommand::Down),
        "renew" => parse_renew(&rest, fleet),
        "verify" => names("verify").map(UiCommand::Verify),
        "filter" => Ok(UiCommand::Filter(rest.join(" "))),
        "sort" => parse_sort(&rest, fleet),
        "pause" => host().map(UiCommand::Pause),
        "resume" => host().map(UiCommand::Resume),
        "pass" => host().map(UiCommand::Pass),
        "logs" => match rest.as_slice() {
            [name] => checked(name, fleet).map(UiCommand::Logs),
            _ => Err(":logs needs one instance name".into()),
        },
        "at" if rest.is_empty() => Err(":at needs a time: 03:12, 10m ago, RFC 3339".into()),
        "at" => Ok(UiCommand::At(rest.join(" "))),
        "ops" => bare(UiCommand::Ops),
        "help" => bare(UiCommand::Help),
        "q" | "quit" => bare(UiCommand::Quit),
        word if rest.is_empty() => Ok(UiCommand::Jump(word.to_owned())),
        word => Err(format!("unknown command \"{word}\"")),
    }
}

/// `:renew NAME... [DURATION]`: with two words or more, the trailing
/// words that read as durations (`2h`, `1h30m`, `1h 30m`; at least one
/// name kept) are the lease, then checked by
/// [`crate::model::verbs::parse_lease`]: positive, at most 30 days.
fn parse_renew(rest: &[&str], fleet: bool) -> Result<UiCommand, String> {
    if rest.is_empty() {
        return Err(":renew needs instance names".into());
    }
    let mut split = rest.len();
    while split > 1 && humantime::parse_duration(rest[split - 1]).is_ok() {
        split -= 1;
    }
    let (names, words) = rest.split_at(split);
    let lease = match words {
        [] => None,
        words => Some(crate::model::verbs::parse_lease(&words.join(" "))?),
    };
    let names = names
        .iter()
        .map(|n| checked(n, fleet))
        .collect::<Result<_, _>>()?;
    Ok(UiCommand::Renew(names, lease))
}

/// `name` when it is DNS-safe; over a fleet `HOST/NAME` too, its NAME
/// checked (the host is the fleet's to find).
fn checked(name: &str, fleet: bool) -> Result<String, String> {
    let bare = match name.split_once('/') {
        Some((_, bare)) if fleet => bare,
        _ => name,
    };
    if is_dns_safe(bare) {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "\"{}\" is not a DNS-safe name",
            crate::model::text::sanitize_short(name, 40)
        ))
    }
}

fn parse_sort(rest: &[&str], fleet: bool) -> Result<UiCommand, String> {
    let keys = if fleet {
        "host, lease, name, substrate, reap, status, lock"
    } else {
        "lease, name, substrate, reap, status, lock"
    };
    let (key, direction) = match rest {
        [key] => (key, None),
        [key, dir] => (key, Some(dir)),
        _ => return Err(format!(":sort KEY [asc|desc] ({keys})")),
    };
    let parsed = if fleet {
        SortKey::parse_over_fleet(key)
    } else {
        SortKey::parse(key)
    };
    let Some(sort) = parsed else {
        return Err(format!("unknown sort key \"{key}\" ({keys})"));
    };
    let descending = match direction.map(|d| d.to_lowercase()) {
        None => None,
        Some(d) if d == "asc" => Some(false),
        Some(d) if d == "desc" => Some(true),
        Some(d) => return Err(format!("unknown direction \"{d}\" (asc, desc)")),
    };
    Ok(UiCommand::Sort(sort, descending))
}

/// The commands whose words after the first are instance names: Tab
/// completes names there (README: `:reap NAME...`, `:down NAME...`,
/// `:renew NAME... [DURATION]`, `:verify NAME...`, `:logs NAME`).
pub(crate) const NAME_COMMANDS: [&str; 5] = ["reap", "down", "renew", "verify", "logs"];

/// What Tab may put in place of the line's last word: `(start, candidates)`,
/// `start` being the byte offset where that word begins. The first word is
/// completed among [`COMMANDS`], then among `names` (a single word is a
/// jump, `:NAME`: README "Tab completes the command, then instance names":
/// `:api` Tab offers the names starting `api`); after a command of
/// [`NAME_COMMANDS`], a word is completed among `names` (sorted, as the
/// snapshot holds them: the ones starting with the word are found by
/// binary search, at most [`MAX_CANDIDATES`]).
#[must_use]
pub(crate) fn candidates(line: &str, names: &[&str]) -> (usize, Vec<String>) {
    let start = line.rfind(' ').map_or(0, |i| i + 1);
    let word = &line[start..];
    if start == 0 {
        let mut found: Vec<String> = COMMANDS
            .iter()
            .filter(|c| c.starts_with(word))
            .map(|c| (*c).to_owned())
            .collect();
        for name in name_candidates(word, names) {
            if !found.contains(&name) {
                found.push(name);
            }
        }
        return (start, found);
    }
    let command = line.split_whitespace().next().unwrap_or("");
    if !NAME_COMMANDS.contains(&command) {
        return (start, Vec::new());
    }
    (start, name_candidates(word, names))
}

/// The names in `names` (sorted) starting with `word`, found by binary
/// search, at most [`MAX_CANDIDATES`]: what Tab offers after a command of
/// [`NAME_COMMANDS`], for a first word and for a jump (Ctrl-F).
#[must_use]
pub(crate) fn name_candidates(word: &str, names: &[&str]) -> Vec<String> {
    let from = names.partition_point(|n| *n < word);
    names[from..]
        .iter()
        .take_while(|n| n.starts_with(word))
        .take(MAX_CANDIDATES)
        .map(|n| (*n).to_owned())
        .collect()
}

/// The position in `names` of the best fuzzy match for `query`: an exact
/// name first, then the shortest name starting with it, then the shortest
/// containing it, then the shortest holding its characters in order (any
/// case). `None` when nothing matches.
#[must_use]
pub(crate) fn fuzzy<'a>(query: &str, names: impl IntoIterator<Item = &'a str>) -> Option<usize> {
    let query = query.to_lowercase();
    let mut best: Option<((u8, usize), usize)> = None;
    for (i, name) in names.into_iter().enumerate() {
        let lower = name.to_lowercase();
        let rank = if lower == query {
            0
        } else if lower.starts_with(&query) {
            1
        } else if lower.contains(&query) {
            2
        } else if subsequence(&query, &lower) {
            3
        } else {
            continue;
        };
        let score = (rank, name.len());
        if best.is_none_or(|(b, _)| score < b) {
            best = Some((score, i));
        }
    }
    best.map(|(_, i)| i)
}

/// Ctrl-W in a prompt: remove the last word of `text` and the spaces after
/// it (`"status:expired !lock:held "` becomes `"status:expired "`).
pub(crate) fn delete_word(text: &mut String) {
    let end = text.trim_end().len();
    let start = text[..end]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    text.truncate(start);
}

fn subsequence(query: &str, text: &str) -> bool {
    let mut chars = text.chars();
    query.chars().all(|q| chars.any(|c| c == q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_command() {
        assert_eq!(
            parse("reap alpha bravo"),
            Ok(UiCommand::Reap(vec!["alpha".into(), "bravo".into()]))
        );
        assert_eq!(
            parse(" down  alpha "),
            Ok(UiCommand::Down(vec!["alpha".into()]))
        );
        assert_eq!(
            parse("filter status:expired !lock:held"),
            Ok(UiCommand::Filter("status:expired !lock:held".into()))
        );
        assert_eq!(parse("filter"), Ok(UiCommand::Filter(String::new())));
        assert_eq!(
            parse("sort reap"),
            Ok(UiCommand::Sort(SortKey::ReapAttempts, None))
        );
        assert_eq!(
            parse("sort name desc"),
            Ok(UiCommand::Sort(SortKey::Name, Some(true)))
        );
        assert_eq!(parse("pause"), Ok(UiCommand::Pause(None)));
        assert_eq!(parse("resume"), Ok(UiCommand::Resume(None)));
        assert_eq!(parse("pass"), Ok(UiCommand::Pass(None)));
        assert_eq!(parse("logs golf"), Ok(UiCommand::Logs("golf".into())));
        assert_eq!(parse("ops"), Ok(UiCommand::Ops));
        assert_eq!(parse("help"), Ok(UiCommand::Help));
        assert_eq!(parse("q"), Ok(UiCommand::Quit));
        assert_eq!(parse("quit"), Ok(UiCommand::Quit));
        assert_eq!(parse("gol"), Ok(UiCommand::Jump("gol".into())));
    }

    #[test]
    fn over_a_fleet_names_take_a_host_and_the_reapers_commands_one_host() {
        assert_eq!(
            parse_over_fleet("reap fleet-2/alpha bravo"),
            Ok(UiCommand::Reap(vec![
                "fleet-2/alpha".into(),
                "bravo".into()
            ]))
        );
        assert_eq!(
            parse_over_fleet("pause all"),
            Ok(UiCommand::Pause(Some("all".into())))
        );
        assert_eq!(parse_over_fleet("pass"), Ok(UiCommand::Pass(None)));
        assert_eq!(
            parse_over_fleet("sort host desc"),
            Ok(UiCommand::Sort(SortKey::Host, Some(true)))
        );
        assert_eq!(
            parse_over_fleet("down fleet-2/Bad_Name"),
            Err("\"fleet-2/Bad_Name\" is not a DNS-safe name".into())
        );
        assert_eq!(
            parse_over_fleet("resume a b"),
            Err(":resume takes one HOST (or all) over a fleet".into())
        );
        // On one host: no host, no `HOST/`.
        assert_eq!(parse("pause all"), Err(":pause takes no arguments".into()));
        assert_eq!(
            parse("reap fleet-2/alpha"),
            Err("\"fleet-2/alpha\" is not a DNS-safe name".into())
        );
        assert_eq!(
            parse("sort host"),
            Err("unknown sort key \"host\" (lease, name, substrate, reap, status, lock)".into())
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert_eq!(parse(""), Err("no command".into()));
        assert_eq!(parse("reap"), Err(":reap needs instance names".into()));
        assert_eq!(
            parse("down alpha Bad_Name"),
            Err("\"Bad_Name\" is not a DNS-safe name".into())
        );
        assert_eq!(
            parse("sort colour"),
            Err("unknown sort key \"colour\" (lease, name, substrate, reap, status, lock)".into())
        );
        assert_eq!(
            parse("sort name up"),
            Err("unknown direction \"up\" (asc, desc)".into())
        );
        assert_eq!(parse("pause now"), Err(":pause takes no arguments".into()));
        assert_eq!(parse("logs"), Err(":logs needs one instance name".into()));
        assert_eq!(
            parse("frobnicate x"),
            Err("unknown command \"frobnicate\"".into())
        );
    }

    /// `:renew NAME... [DURATION]`: the last word is the lease when it
    /// reads as a duration, checked (positive, at most 30 days);
    /// `:verify NAME...`.
    #[test]
    fn parses_renew_and_verify() {
        assert_eq!(
            parse("renew alpha 2h"),
            Ok(UiCommand::Renew(vec!["alpha".into()], Some(7200)))
        );
        assert_eq!(
            parse("renew alpha bravo 1h 30m"),
            Ok(UiCommand::Renew(
                vec!["alpha".into(), "bravo".into()],
                Some(5400)
            ))
        );
        assert_eq!(
            parse("renew alpha 1h30m"),
            Ok(UiCommand::Renew(vec!["alpha".into()], Some(5400)))
        );
        assert_eq!(
            parse("renew alpha 1day12h"),
            Ok(UiCommand::Renew(vec!["alpha".into()], Some(129_600)))
        );
        assert_eq!(
            parse("renew alpha bravo 90m"),
            Ok(UiCommand::Renew(
                vec!["alpha".into(), "bravo".into()],
                Some(5400)
            ))
        );
        assert_eq!(
            parse("renew alpha"),
            Ok(UiCommand::Renew(vec!["alpha".into()], None))
        );
        assert_eq!(
            parse("renew alpha 0s"),
            Err("a lease must be longer than 0s".into())
        );
        assert_eq!(
            parse("renew alpha 40days"),
            Err("a lease of 40d 00h is longer than the console allows (30days)".into())
        );
        assert_eq!(parse("renew"), Err(":renew needs instance names".into()));
        assert_eq!(
            parse("renew Bad_Name 2h"),
            Err("\"Bad_Name\" is not a DNS-safe name".into())
        );
        assert_eq!(
            parse("verify alpha bravo"),
            Ok(UiCommand::Verify(vec!["alpha".into(), "bravo".into()]))
        );
        assert_eq!(parse("verify"), Err(":verify needs instance names".into()));
    }

    #[test]
    fn completes_commands_then_names() {
        let names = ["alpha", "bravo", "bravo-2", "charlie"];
        assert_eq!(
            candidates("re", &names),
            (0, vec!["reap".into(), "renew".into(), "resume".into()])
        );
        assert_eq!(
            candidates("p", &names),
            (0, vec!["pass".into(), "pause".into()])
        );
        assert_eq!(
            candidates("reap alpha br", &names),
            (11, vec!["bravo".into(), "bravo-2".into()])
        );
        assert_eq!(candidates("down ", &names).1.len(), 4);
        assert_eq!(candidates("sort na", &names), (5, vec![]));
    }

    /// A first word that is no command completes instance
    /// names (the jump `:NAME`), after the commands it starts; `:renew`
    /// and `:verify` complete names as `:reap`, `:down` and `:logs` do.
    #[test]
    fn the_first_word_and_every_name_command_complete_names() {
        let names = ["api-gateway-dev", "api-v2", "pause-test", "reaper"];
        assert_eq!(
            candidates("api", &names),
            (0, vec!["api-gateway-dev".into(), "api-v2".into()])
        );
        assert_eq!(
            candidates("pa", &names),
            (0, vec!["pass".into(), "pause".into(), "pause-test".into()])
        );
        assert_eq!(
            candidates("rea", &names),
            (0, vec!["reap".into(), "reaper".into()])
        );
        assert_eq!(
            candidates("renew api-g", &names),
            (6, vec!["api-gateway-dev".into()])
        );
        assert_eq!(
            candidates("verify 1h api-v", &names),
            (10, vec!["api-v2".into()])
        );
        assert_eq!(candidates("logs p", &names), (5, vec!["pause-test".into()]));
        assert_eq!(candidates("filter a", &names), (7, vec![]));
    }

    #[test]
    fn ctrl_w_deletes_the_last_word() {
        for (before, after) in [
            ("status:expired !lock:held", "status:expired "),
            ("status:expired !lock:held  ", "status:expired "),
            ("render", ""),
            ("", ""),
            ("a  b", "a  "),
        ] {
            let mut text = before.to_owned();
            delete_word(&mut text);
            assert_eq!(text, after, "{before:?}");
        }
    }

    #[test]
    fn fuzzy_prefers_exact_then_prefix_then_substring_then_subsequence() {
        let names = ["bravo-long", "bravo", "checkout-preview", "abravo"];
        assert_eq!(fuzzy("bravo", names), Some(1));
        assert_eq!(fuzzy("brav", names), Some(1));
        assert_eq!(fuzzy("RAVO", names), Some(1));
        assert_eq!(fuzzy("chkprv", names), Some(2));
        assert_eq!(fuzzy("zzz", names), None);
    }
}
