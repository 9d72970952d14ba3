//! What the agent says in words and shapes: the detail's lines fitted to
//! a reply, the store's era, and who reaps as the App last heard it.

use crate::event::RoleState;
use crate::model::controller::Reaping;
use crate::model::protocol::lines::{LastPass, ReaperLine};
use crate::ui::App;

/// At most this many bytes of detail lines go in one reply (the rest of
/// the message fits in what is left of [`crate::model::protocol::MAX_MESSAGE_BYTES`]).
const DETAIL_BYTES: usize = 60 * 1024;

/// The detail's lines that fit a reply, each cut to
/// [`crate::model::protocol::MAX_TEXT_CHARS`] (a long error or
/// definition line does not push the sections after it out); the rest,
/// if any, said in one last line.
pub(super) fn fit_lines(text: Vec<String>) -> Vec<String> {
    let max = crate::model::protocol::MAX_TEXT_CHARS;
    let total = text.len();
    let mut used = 0;
    let mut out = Vec::with_capacity(total);
    for mut line in text {
        if let Some((at, _)) = line.char_indices().nth(max) {
            let keep = line[..at]
                .char_indices()
                .nth(max - 1)
                .map_or(at, |(i, _)| i);
            line.truncate(keep);
            line.push('…');
        }
        // A character may take 6 bytes escaped (`\u0001`): counted at most.
        used += line.len() * 2 + 4;
        if used > DETAIL_BYTES {
            break;
        }
        out.push(line);
    }
    if out.len() < total {
        let more = total - out.len();
        out.push(format!(
            "… {more} more lines (the console's detail view shows them)"
        ));
    }
    out
}

/// `hello.generation`: the store's era in words.
pub(in crate::console) const fn generation_word(
    generation: crate::model::generation::Generation,
) -> &'static str {
    use crate::model::generation::Era;
    match generation.era() {
        Era::Older => "older",
        Era::Contract => "contract",
        Era::Controller => "controller",
        Era::Unreleased => "unreleased",
        Era::Newer => "newer",
    }
}

/// Who reaps, as the App last heard from the role thread (`None`: not
/// yet known).
pub(in crate::console) fn reaper_line(app: Option<&App>) -> ReaperLine {
    let Some(app) = app else {
        return ReaperLine {
            by: "unknown".to_owned(),
            ..ReaperLine::default()
        };
    };
    let (by, pid) = match app.role() {
        RoleState::Active => ("agent", Some(std::process::id())),
        RoleState::Standby { pid } => ("console", *pid),
        RoleState::ControllerReaps { pid } => ("controller", Some(*pid)),
        RoleState::Released { now } | RoleState::Watching { now } => match now {
            Reaping::Nobody => ("nobody", None),
            Reaping::Console(pid) => ("console", *pid),
            Reaping::Controller(pid) => ("controller", Some(*pid)),
            Reaping::Unknown => ("unknown", None),
        },
        RoleState::Unavailable { .. } => ("unknown", None),
    };
    let view = app.reaper();
    let status = view.status.filter(|_| by == "agent");
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    ReaperLine {
        by: by.to_owned(),
        pid: pid.map(i64::from),
        paused: view.paused,
        next_pass_at: status.and_then(|s| s.next_pass_at),
        text: app.reaper_text().into_owned(),
        last_pass: status.and_then(|s| s.last).map(|last| LastPass {
            at: last.at,
            reaped: count(last.summary.reaped),
            failed: count(last.summary.failed),
            collected: count(last.summary.collected),
            skipped: count(last.summary.skipped),
        }),
    }
}
