//! The operator's lease verbs on stackless 0.4.0: renew a lease (`L`,
//! `:renew NAME [DURATION]`) and verify (`v`, `:verify NAME`). Pure: the
//! argv, the duration rules, what stackless answered and the Activity
//! line it makes.
//!
//! How 0.4.0 renews a lease (stackless-core-0.4.0 `state/lease.rs:35-63`):
//! `renew_lease` sets `leases.duration_secs` and `expires_at = now +
//! duration`; `renew_lease_at_recorded_duration` sets `expires_at = now +
//! duration_secs`. `stackless up --name NAME --lease D` on an active
//! instance resumes it from its recorded definition (no file, no cwd:
//! `client/args.rs:208-236`), keeps its source pins and dirty flag, and
//! renews with `D` (`engine/run.rs:286-289`), else with the substrate's
//! default: so the console always passes `--lease`. `stackless verify NAME`
//! renews at the recorded duration when it starts and again when its
//! check passes (`verify.rs:139,254`): a failing verify has renewed too.
//!
//! Releases 0.2.0/0.3.0 (schema 5): stackless-core 0.3.3 also renews on
//! an `up` resume (`engine/run.rs:81-183`: `renew_lease`, else
//! `renew_lease_at_recorded_duration`), but the 0.3 CLI's sources (its
//! `up`/`verify` flags and `--json` answers) are not in the registry here,
//! so the console runs these verbs only where it was checked: on a store
//! older than schema 14 the keys say so and run nothing.

use serde::Deserialize;

use super::envelope::EnvelopeError;
use super::name::is_dns_safe;
use super::time::span;
use super::{Generation, Instance};

/// The longest lease the console asks for: 30 days, in seconds. stackless
/// takes any `humantime` duration; a bound keeps a typo (`2000h`) from
/// keeping an instance alive for months.
pub const MAX_LEASE_SECS: u64 = 30 * 24 * 3600;

/// The shortest lease the console asks for: 1 second.
pub const MIN_LEASE_SECS: u64 = 1;

/// The lease given when an instance records none: 1 hour, in seconds.
pub const FALLBACK_LEASE_SECS: u64 = 3600;

/// What a lease outside [`MIN_LEASE_SECS`]..=[`MAX_LEASE_SECS`] asked by
/// name is refused with (`serve --stdio`'s `renew`, docs/protocol.md).
pub const LEASE_REFUSAL: &str = "refused: a lease is 1 s to 30 days";

/// Which side of the keys' lease bounds a lease fell off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseOutOfBounds {
    /// Under [`MIN_LEASE_SECS`] (zero, or a negative number asked by name).
    TooShort,
    /// Over [`MAX_LEASE_SECS`].
    TooLong,
}

/// The keys' bound on a lease, in seconds: [`MIN_LEASE_SECS`] to
/// [`MAX_LEASE_SECS`]. Every lease the console runs passes here: `:renew`'s
/// duration ([`parse_lease`]), a renew asked by name (`serve --stdio`'s
/// `renew`, [`json_lease`]) and the renew question itself
/// (`App::command_verbs`).
///
/// # Errors
/// Which bound `secs` is past.
pub const fn lease_bound(secs: u64) -> Result<u64, LeaseOutOfBounds> {
    if secs < MIN_LEASE_SECS {
        Err(LeaseOutOfBounds::TooShort)
    } else if secs > MAX_LEASE_SECS {
        Err(LeaseOutOfBounds::TooLong)
    } else {
        Ok(secs)
    }
}

/// A lease asked as a JSON number (`renew`'s `lease_secs`), judged by its
/// text as written (`text`: the number's JSON text), through
/// [`lease_bound`]: any number shape (an integer, `3600.0`, `3.6e3`) whose
/// exact decimal value is a whole number of seconds within the bounds; a
/// negative, a fraction (however close to a whole number:
/// `0.99999999999999999` is no lease of 1 s), a number over the bounds is
/// out of bounds. Not an `f64`: rounding would turn a fraction whole.
///
/// # Errors
/// Which bound it is past (a fraction counts as [`LeaseOutOfBounds::TooShort`]
/// under 1 s and [`LeaseOutOfBounds::TooLong`] otherwise: it is no lease
/// the keys could ask); text that is no JSON number is
/// [`LeaseOutOfBounds::TooShort`].
pub fn json_lease(text: &str) -> Result<u64, LeaseOutOfBounds> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err(LeaseOutOfBounds::TooShort);
    }
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        // An exponent past i64 is past any bound: its sign says which.
        Some((mantissa, exp)) => (
            mantissa,
            exp.parse::<i64>().unwrap_or_else(|_| {
                if exp.starts_with('-') {
                    i64::MIN
                } else {
                    i64::MAX
                }
            }),
        ),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(LeaseOutOfBounds::TooShort);
    }
    let significant = digits.trim_start_matches('0');
    let kept = significant.trim_end_matches('0');
    if kept.is_empty() {
        return Err(LeaseOutOfBounds::TooShort);
    }
    // value = kept * 10^shift, exactly.
    let shift =
        i128::from(exponent) - fraction.len() as i128 + (significant.len() - kept.len()) as i128;
    if shift < 0 {
        // A fraction: under 1 s when it has no digit before the point.
        return Err(if kept.len() as i128 + shift <= 0 {
            LeaseOutOfBounds::TooShort
        } else {
            LeaseOutOfBounds::TooLong
        });
    }
    // Whole: more digits than the longest lease has is past it.
    let max_digits = MAX_LEASE_SECS.to_string().len() as i128;
    if kept.len() as i128 + shift > max_digits {
        return Err(LeaseOutOfBounds::TooLong);
    }
    let secs = u32::try_from(shift)
        .ok()
        .and_then(|shift| 10_u64.checked_pow(shift))
        .zip(kept.parse::<u64>().ok())
        .and_then(|(scale, kept)| kept.checked_mul(scale))
        .ok_or(LeaseOutOfBounds::TooLong)?;
    lease_bound(secs)
}

/// What the operator asked stackless to do to one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `up --name NAME --lease D --json`: renew the lease to `D` seconds
    /// from now (and `duration_secs = D`).
    Renew {
        /// The new lease, in seconds (1..=[`MAX_LEASE_SECS`]).
        lease_secs: u64,
    },
    /// `verify NAME --json`: run the stack's verify check; it renews the
    /// lease at its recorded duration.
    Verify,
}

impl Verb {
    /// The word for the operator: `renew`, `verify`.
    #[must_use]
    pub const fn word(self) -> &'static str {
        match self {
            Self::Renew { .. } => "renew",
            Self::Verify => "verify",
        }
    }

    /// The verb of the operation it submits to the controller's queue
    /// (stackless 0.4.0: `up --name NAME --lease D` is an `up`, `verify
    /// NAME` a `verify`), whose outcome is the operator's own line.
    #[must_use]
    pub const fn operation_verb(self) -> &'static str {
        match self {
            Self::Renew { .. } => "up",
            Self::Verify => "verify",
        }
    }
}

/// The key a running renew or verify of `name` holds in the console's
/// in-flight set (`renew alpha`, `verify alpha`): one of each at a time.
#[must_use]
pub fn running_key(verb: Verb, name: &str) -> String {
    format!("{} {name}", verb.word())
}

/// Why a second renew or verify of an instance is refused while its first
/// still runs (the runner's refusal, and a command's reply).
#[must_use]
pub fn running_refusal(verb: Verb) -> String {
    format!(
        "refused: a {} of it is already running; nothing run",
        verb.word()
    )
}

/// The refusal of a renew or verify of an instance whose teardown this
/// console runs (or just ran, before the snapshot shows it): its `up
/// --name` or `verify` would race the `down` (0.4.0 `up` on the tombstone
/// starts a new birth when a substrate is configured).
#[must_use]
pub fn teardown_refusal(verb: Verb) -> String {
    format!(
        "refused: a teardown of it is running: a {} now would race it; nothing run",
        verb.word()
    )
}

/// One renew or verify the operator confirmed, with the instance as the
/// snapshot showed it then (its birth is compared right before running).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbRequest {
    /// The instance as shown when the operator confirmed.
    pub instance: Instance,
    /// Renew (with the lease) or verify.
    pub verb: Verb,
}

/// Why a store cannot take these verbs, if it cannot: only schema 14
/// (stackless 0.4.0) was checked (0.3's CLI is not in the registry here).
#[must_use]
pub fn unsupported(generation: Generation, verb: Verb) -> Option<String> {
    (!generation.has_operations()).then(|| {
        format!(
            "{} needs a stackless 0.4.0 store (schema 14); this one is v{}; nothing run",
            verb.word(),
            generation.user_version
        )
    })
}

/// Why `verb` is refused on an active instance `name`, if it is: an
/// operation pending on it (`(verb, status)`: the command would queue
/// behind it, and a renew queued behind a `down` runs as a new `up` on the
/// tombstone), or, for a renew, no lease (a failed up: `up` would run a
/// new one).
#[must_use]
pub fn refusal(
    name: &str,
    pending: Option<(&str, &str)>,
    has_lease: bool,
    verb: Verb,
) -> Option<String> {
    let shown = super::text::sanitize_short(name, 40);
    if let Some((op, status)) = pending {
        return Some(format!(
            "refused: {shown} has a pending operation ({op} {status}): {} after it; nothing run",
            verb.word()
        ));
    }
    (matches!(verb, Verb::Renew { .. }) && !has_lease).then(|| {
        format!(
            "refused: {shown} has no lease (a failed up): a renew would run a new up; nothing run"
        )
    })
}

/// The audit's reason for a renew or verify (`verb`) still running when
/// the console stopped (`reason`: quit, SIGTERM, ...).
#[must_use]
pub fn left_running_text(verb: &str, reason: &str) -> String {
    let command = if verb == "verify" { "verify" } else { "up" };
    format!(
        "the console stopped ({reason}) while this {verb} ran: its `stackless {command}` is left to finish in its own process group, and the controller's {command} operation may still take effect"
    )
}

/// What a renew or verify killed by the console means (`deadline`: run
/// too long; else it wrote too much output, `bytes`): the command was
/// killed, the controller's operation may still run.
#[must_use]
pub fn killed_text(verb: Verb, timed_out_secs: Option<u64>, bytes: u64) -> String {
    let command = match verb {
        Verb::Renew { .. } => "up",
        Verb::Verify => "verify",
    };
    let why = timed_out_secs.map_or_else(
        || format!("wrote more than {} MiB", bytes / (1024 * 1024)),
        |secs| format!("ran past its deadline ({})", lease_text(secs)),
    );
    format!(
        "stackless {command} {why} and was killed, but the controller may still run its {command}: watch the Operations pane and the lease"
    )
}

/// A lease as the prompt shows it: the whole seconds as `humantime` writes
/// them (`2h`, `1h 30m`, `45s`).
#[must_use]
pub fn lease_text(secs: u64) -> String {
    humantime::format_duration(std::time::Duration::from_secs(secs)).to_string()
}

/// Whether a renew at `lease_secs` shortens a lease with `left_secs`
/// seconds left: `stackless up --lease D` sets the expiry to now + D
/// (stackless §6, the lease), so a D under what is left ends it sooner.
/// A lease already run out (`left_secs <= 0`) is never shortened.
#[must_use]
pub fn shortens(lease_secs: u64, left_secs: i64) -> bool {
    i64::try_from(lease_secs).unwrap_or(i64::MAX) < left_secs
}

/// Whether renewing `instance` at `lease_secs` at `now` (Unix seconds)
/// shortens its lease ([`shortens`]); `false` without a lease.
#[must_use]
pub fn renew_shortens(instance: &Instance, lease_secs: u64, now: i64) -> bool {
    instance
        .lease
        .as_ref()
        .is_some_and(|l| shortens(lease_secs, l.expires_at.saturating_sub(now)))
}

/// The duration the renew prompt starts with: the instance's recorded
/// `leases.duration_secs`, else [`FALLBACK_LEASE_SECS`]; bounded.
#[must_use]
pub fn recorded_lease(instance: &Instance) -> u64 {
    instance
        .lease
        .as_ref()
        .and_then(|l| u64::try_from(l.duration_secs).ok())
        .filter(|&s| s > 0)
        .map_or(FALLBACK_LEASE_SECS, |s| s.min(MAX_LEASE_SECS))
}

/// Parse the operator's duration (`2h`, `45m`, `1h 30m`) into seconds.
///
/// # Errors
/// Not a duration, not a whole number of seconds, or outside
/// [`lease_bound`] (zero, over [`MAX_LEASE_SECS`]): the reason, for the
/// footer.
pub fn parse_lease(text: &str) -> Result<u64, String> {
    let shown = super::text::sanitize_short(text, 20);
    let duration = humantime::parse_duration(text.trim())
        .map_err(|e| format!("\"{shown}\" is not a duration (e.g. 2h, 45m): {e}"))?;
    if duration.subsec_nanos() != 0 {
        return Err(format!("\"{shown}\" is not a whole number of seconds"));
    }
    let secs = duration.as_secs();
    lease_bound(secs).map_err(|bound| match bound {
        LeaseOutOfBounds::TooShort => "a lease must be longer than 0s".to_owned(),
        LeaseOutOfBounds::TooLong => format!(
            "a lease of {} is longer than the console allows ({})",
            span(i64::try_from(secs).unwrap_or(i64::MAX)),
            lease_text(MAX_LEASE_SECS)
        ),
    })
}

/// The argv for `verb` on `name`: `program up --name NAME --lease D --json`
/// or `program verify NAME --json`; the name is one element, never put
/// through a shell. `None` when the name is not DNS-safe.
#[must_use]
pub fn argv(program: &str, name: &str, verb: Verb) -> Option<Vec<String>> {
    if !is_dns_safe(name) {
        return None;
    }
    let mut argv = vec![program.to_owned()];
    match verb {
        Verb::Renew { lease_secs } => argv.extend([
            "up".to_owned(),
            "--name".to_owned(),
            name.to_owned(),
            "--lease".to_owned(),
            lease_word(lease_secs),
        ]),
        Verb::Verify => argv.extend(["verify".to_owned(), name.to_owned()]),
    }
    argv.push("--json".to_owned());
    Some(argv)
}

/// A lease as one word: whole seconds in `humantime`'s words without
/// spaces (`2h`, `1h30m`, `1day12h`), which stackless and `:renew` parse
/// back to the same seconds: `--lease`'s value and `L`'s prefill.
#[must_use]
pub fn lease_word(secs: u64) -> String {
    lease_text(secs).replace(' ', "")
}

/// What `verify --json` answered when its check passed (stackless 0.4.0
/// `output.rs:490-526`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct VerifyPassed {
    /// `tier`: the named tier, absent for `[stack.verify]`'s default.
    #[serde(default)]
    pub tier: Option<String>,
    /// How long the check ran, in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
    /// The check's exit status (0).
    #[serde(default)]
    pub exit_status: i32,
    /// Where the check's output is kept.
    #[serde(default)]
    pub log_path: String,
    /// Seconds of lease left after the renewal, when there is a lease.
    #[serde(default)]
    pub lease_remaining_secs: Option<u64>,
}

/// The `context` of a failure envelope that verify fills (stackless 0.4.0
/// `error.rs:253-262`): the check's output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct FailureContext {
    /// The check's output file.
    #[serde(default)]
    pub log_path: Option<String>,
    /// Its last lines.
    #[serde(default)]
    pub log_tail: Option<String>,
    /// The check's exit status, as text.
    #[serde(default)]
    pub exit_status: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    instance_id: Option<String>,
    #[serde(default)]
    error: Option<Failure>,
}

#[derive(Deserialize)]
struct Failure {
    #[serde(flatten)]
    error: EnvelopeError,
    #[serde(default)]
    context: Option<FailureContext>,
}

/// How a verb ended, from stackless's exit code and stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `up` exited 0 with `ok: true`; its `instance_id`, when it said one.
    Renewed {
        /// The birth `up` answered for.
        instance_id: Option<String>,
    },
    /// `verify` exited 0 with `ok: true`.
    Verified(VerifyPassed),
    /// stackless answered `ok: false`: its error, and the check's output
    /// for a failed verify.
    Refused(EnvelopeError, FailureContext),
    /// It did not run or did not answer as stackless does (the reason).
    Broken(String),
}

/// Read stackless's answer to `verb`: its exit code (`None`: a signal)
/// and stdout (one JSON document; progress goes to stderr).
#[must_use]
pub fn interpret(verb: Verb, code: Option<i32>, stdout: &str) -> Outcome {
    let text = stdout.trim();
    let answer = serde_json::from_str::<Answer>(text).ok();
    match (code, answer) {
        (Some(0), Some(answer)) if answer.ok == Some(true) => match verb {
            Verb::Renew { .. } => Outcome::Renewed {
                instance_id: answer.instance_id,
            },
            Verb::Verify => serde_json::from_str::<VerifyPassed>(text).map_or_else(
                |e| Outcome::Broken(format!("unreadable verify answer: {e}")),
                Outcome::Verified,
            ),
        },
        (
            Some(_),
            Some(Answer {
                error: Some(failure),
                ..
            }),
        ) => Outcome::Refused(failure.error, failure.context.unwrap_or_default()),
        (Some(code), _) => {
            let last = text
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("no output");
            Outcome::Broken(format!("exited with status {code}: {last}"))
        }
        (None, _) => Outcome::Broken("killed by a signal".into()),
    }
}

/// The Activity detail for a renew that took (the line reads `operator
/// alpha lease renewed: 2h, expires in 2h 00m`), from the lease the store
/// then held (`expires_at`, unix seconds) at `now`; `born` when `up`
/// answered for another birth than the one the console saw.
#[must_use]
pub fn renewed_text(lease_secs: u64, expires_at: Option<i64>, now: i64, born: bool) -> String {
    let mut text = lease_text(lease_secs);
    if let Some(at) = expires_at {
        text.push_str(&format!(", expires in {}", span(at.saturating_sub(now))));
    }
    if born {
        text.push_str(" (stackless answered for a new birth of the name)");
    }
    text
}

/// The Activity detail for a verify that passed (the line reads
/// `operator alpha verified: default check passed (exit 0, 12 ms); lease
/// renewed: 2h 00m left`).
#[must_use]
pub fn verified_text(passed: &VerifyPassed) -> String {
    let tier = passed.tier.as_deref().unwrap_or("default");
    let mut text = format!(
        "{tier} check passed (exit {}, {} ms)",
        passed.exit_status, passed.duration_ms
    );
    if let Some(left) = passed.lease_remaining_secs {
        let left = i64::try_from(left).unwrap_or(i64::MAX);
        text.push_str(&format!("; lease renewed: {} left", span(left)));
    }
    text
}

/// The Activity detail for a refused renew or a failed verify (the line
/// reads `operator alpha verify failed: verify.failed: verify command
/// exited with 1 (remediation: ...)`).
#[must_use]
pub fn refused_text(error: &EnvelopeError) -> String {
    match error.remediation.as_deref().filter(|r| !r.is_empty()) {
        Some(fix) => format!("{} (remediation: {fix})", error.summary()),
        None => error.summary(),
    }
}

#[cfg(test)]
mod tests;
