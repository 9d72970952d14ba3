//! The operator's renew (`L`, `:renew NAME... [DURATION]`) and verify
//! (`v`, `:verify NAME...`) on stackless 0.4.0 stores, each on the target
//! or on the marks: the write-key gate, the store's generation, the
//! instance active; `L` opens the `:` line prefilled with `renew NAME D`
//! (D the recorded `duration_secs`) to edit; then one y/N naming the
//! command as it will run; `y` re-checks each birth on the snapshot shown
//! and hands [`Effect::Verbs`] on. A verify's result opens its overlay
//! ([`App::show_verify`]).

use super::VerbQuestion;
use super::command_line::CommandLine;
use super::{App, Effect, FlashLevel, Layer, Question};
use crate::event::{Activity, ActivityKind, Actor, Request};
use crate::model::Instance;
use crate::model::rules::{self, Action};
use crate::model::verbs::{self, Verb, VerbRequest};

/// What `:renew`/`:verify` (or `L`/`v`) asked, before each instance's
/// lease is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asked {
    /// Renew at this lease, in seconds (`None`: each instance's recorded
    /// one).
    Renew(Option<u64>),
    /// Verify.
    Verify,
}

impl App {
    /// The stackless program renew and verify run (`--stackless`,
    /// `STACKLESS_BIN`; `stackless` until the console sets it).
    #[must_use]
    pub fn stackless(&self) -> &str {
        &self.settings.stackless
    }

    /// Set the stackless program (the console, once, before the first
    /// frame).
    pub fn set_stackless(&mut self, program: String) {
        self.settings.stackless = program;
    }

    /// `--dry-run`: renew and verify say what they would run (the console,
    /// once, before the first frame).
    pub const fn set_dry_run(&mut self, dry_run: bool) {
        self.settings.dry_run = dry_run;
    }

    /// The renew or verify awaiting `y`/`N`, if its dialog is open.
    #[must_use]
    pub fn confirming_verbs(&self) -> Option<&VerbQuestion> {
        match &self.layers.confirm()?.question {
            Question::Verbs(question) => Some(question),
            _ => None,
        }
    }

    /// `L`: open the `:` line prefilled with `renew NAME D` (the target, D
    /// its recorded lease), or `renew NAME...` for the marked rows shown
    /// (each at its own recorded lease), to edit and run with Enter.
    pub(super) fn renew_key(&mut self) {
        let Some(names) = self.verb_targets(Verb::Renew { lease_secs: 1 }) else {
            return;
        };
        if let [name] = names.as_slice()
            && let Err(reason) = self.verb_check(name, Verb::Renew { lease_secs: 1 })
        {
            self.refuse(name, reason);
            return;
        }
        let text = match names.as_slice() {
            [name] => {
                let lease = self
                    .shown
                    .snapshot
                    .instance(name)
                    .map_or(verbs::FALLBACK_LEASE_SECS, verbs::recorded_lease);
                format!("renew {name} {}", verbs::lease_word(lease))
            }
            // Several: no duration, so each renews at its own recorded
            // lease (one shared duration would shorten the longer ones).
            _ => format!("renew {}", names.join(" ")),
        };
        self.layers.open(Layer::Command(CommandLine {
            text,
            ..CommandLine::default()
        }));
    }

    /// `v`: ask to verify the target (or the marked rows shown).
    pub(super) fn verify_key(&mut self) {
        if let Some(names) = self.verb_targets(Verb::Verify) {
            self.command_verbs(&names, Asked::Verify);
        }
    }

    /// The names `L`/`v` act on, once the gates passed: the marked rows
    /// the filter shows, else the target. `None` once refused.
    fn verb_targets(&mut self, verb: Verb) -> Option<Vec<String>> {
        let names = if self.bulk_applies() {
            let instances = &self.shown.snapshot.instances;
            let mut names: Vec<String> = self
                .instances
                .order
                .iter()
                .filter_map(|&p| instances.get(p as usize))
                .filter(|i| self.instances.marks.contains(&i.name))
                .map(|i| i.name.clone())
                .collect();
            names.sort();
            names
        } else {
            match self.target() {
                Ok(instance) => vec![instance.name],
                Err((name, detail)) => {
                    self.refuse(&name, detail);
                    return None;
                }
            }
        };
        let Some(first) = names.first().cloned() else {
            self.set_flash(
                FlashLevel::Warning,
                "the marked instances are all hidden by the filter: nothing to act on".into(),
            );
            return None;
        };
        if let Some(reason) = self.verb_off(verb) {
            self.refuse(&first, reason);
            return None;
        }
        Some(names)
    }

    /// Why `verb` cannot run now ([`rules::verb_off`]): the write keys
    /// off (`--read-only`, ...), or a store older than stackless 0.4.0's.
    fn verb_off(&self, verb: Verb) -> Option<String> {
        self.with_rules(|cx| rules::verb_off(verb, cx))
    }

    /// `:renew NAME... [DURATION]` or `:verify NAME...`: the gates, then
    /// one y/N for the instances that pass (each refused one says why).
    pub(super) fn command_verbs(&mut self, names: &[String], asked: Asked) {
        let probe = match asked {
            Asked::Renew(_) => Verb::Renew { lease_secs: 1 },
            Asked::Verify => Verb::Verify,
        };
        if let Some(reason) = self.verb_off(probe) {
            self.refuse(names.first().map_or("", String::as_str), reason);
            return;
        }
        // The keys' lease bound, whoever typed the lease (`:renew`, or a
        // `renew` asked by name).
        if let Asked::Renew(Some(typed)) = asked
            && verbs::lease_bound(typed).is_err()
        {
            self.refuse(
                names.first().map_or("", String::as_str),
                verbs::LEASE_REFUSAL.to_owned(),
            );
            return;
        }
        let mut requests: Vec<VerbRequest> = Vec::new();
        let mut refused = Vec::new();
        for name in names {
            match self.verb_check(name, probe) {
                Ok(instance) => {
                    let verb = match asked {
                        Asked::Renew(typed) => Verb::Renew {
                            lease_secs: typed.unwrap_or_else(|| verbs::recorded_lease(&instance)),
                        },
                        Asked::Verify => Verb::Verify,
                    };
                    requests.push(VerbRequest { instance, verb });
                }
                Err(reason) => {
                    refused.push((name.clone(), reason.clone()));
                    self.refuse(name, reason);
                }
            }
        }
        requests.sort_by(|a, b| a.instance.name.cmp(&b.instance.name));
        requests.dedup_by(|a, b| a.instance.name == b.instance.name);
        // A bulk renew that would shorten some leases and not others asks
        // for the shorter ones apart, after the rest (their own `y`).
        let now = self.now;
        let (shorter, longer): (Vec<_>, Vec<_>) =
            requests.into_iter().partition(|r| match r.verb {
                Verb::Renew { lease_secs } => verbs::renew_shortens(&r.instance, lease_secs, now),
                Verb::Verify => false,
            });
        let (requests, shorter) = if longer.is_empty() {
            (shorter, Vec::new())
        } else {
            (longer, shorter)
        };
        if let Some(question) = self.verb_question(requests, shorter, refused) {
            self.ask(Question::Verbs(question));
        }
    }

    /// The question for `requests` (its command line the first one's),
    /// `shorter` asked apart after its `y`; `None` without a request.
    fn verb_question(
        &self,
        requests: Vec<VerbRequest>,
        shorter: Vec<VerbRequest>,
        refused: Vec<(String, String)>,
    ) -> Option<VerbQuestion> {
        let first = requests.first()?;
        let argv = verbs::argv(self.stackless(), &first.instance.name, first.verb);
        let runs = argv.map_or_else(String::new, |a| {
            crate::reaper::teardown::shell_line(&crate::model::redact::shown_argv(&a))
        });
        Some(VerbQuestion {
            requests,
            runs,
            refused,
            shorter,
            now: self.now,
            dry_run: self.settings.dry_run,
        })
    }

    /// The single-instance rules on the snapshot shown
    /// ([`rules::verb_check`]).
    fn verb_check(&self, name: &str, verb: Verb) -> Result<Instance, String> {
        rules::verb_check(name, verb, &self.shown.snapshot).cloned()
    }

    /// `y`: each request through the operator's rules
    /// ([`crate::model::rules::admit`]) on the snapshot shown now (still
    /// there, active, the same birth; each refused one says why); the rest
    /// handed on as [`Effect::Verbs`]. The shorter leases of a bulk renew, if any, are asked next (their
    /// own question, each re-checked at its `y`).
    pub(super) fn confirm_verbs(&mut self, question: VerbQuestion) -> Option<Effect> {
        let shorter = question.shorter;
        if let Some(next) = self.verb_question(shorter, Vec::new(), Vec::new()) {
            self.ask(Question::Verbs(next));
        }
        let mut run = Vec::new();
        for request in question.requests {
            let asked = rules::Asked::of(&request.instance);
            let action = match request.verb {
                Verb::Renew { lease_secs } => Action::Renew(asked, Some(lease_secs)),
                Verb::Verify => Action::Verify(asked),
            };
            match self.admit(&action, &self.own_teardowns()) {
                Ok(rules::Admitted {
                    effect: rules::Effect::Verb { request, .. },
                    ..
                }) => run.push(request),
                Ok(_) => {}
                Err(refusal) => {
                    self.show_refusal(refusal);
                }
            }
        }
        let first = run.first()?;
        let text = match run.len() {
            1 => format!(
                "{} requested for {}",
                first.verb.word(),
                crate::model::text::sanitize_short(
                    &first.instance.name,
                    crate::ui::text::CUT_SHORT
                )
            ),
            n => format!("{} requested for {n} instances", first.verb.word()),
        };
        self.set_flash(FlashLevel::Info, text);
        if self.bulk_applies() {
            self.instances.marks.clear();
        }
        self.own_verbs(&run);
        Some(Effect::Verbs(run))
    }

    /// Any other key: the question closes, each instance's line says so.
    pub(super) fn cancel_verbs(&mut self, question: &VerbQuestion) {
        for request in question.requests.iter().chain(&question.shorter) {
            self.log_local(Activity::new(
                self.now,
                Actor::Operator,
                &request.instance.name,
                ActivityKind::Cancelled,
                format!("{} cancelled", request.verb.word()),
            ));
        }
    }

    /// A verify's outcome arrived (the operator's, passed or failed): its
    /// overlay opens over whatever is open (the check, its result, the
    /// renewed lease or the failing check's remediation and output). A
    /// passed check's output is in a file: the effect asks the I/O worker
    /// to read it ([`Request::VerifyOutput`], shown by
    /// [`App::show_verify_output`]).
    pub(super) fn show_verify(&mut self, activity: &Activity) -> Option<Effect> {
        use crate::model::verbs::{Outcome, Verb, interpret};
        let passed = activity.kind == ActivityKind::Verified;
        if activity.actor != Actor::Operator
            || !(passed || activity.kind == ActivityKind::VerifyFailed)
        {
            return None;
        }
        let text = crate::ui::fulltext::verify(activity, &self.settings.zone);
        self.layers
            .open(Layer::FullText(super::full_view::FullView::new(text)));
        match interpret(Verb::Verify, Some(0), &activity.envelope) {
            Outcome::Verified(check) if passed && !check.log_path.is_empty() => {
                Some(Effect::Io(Request::VerifyOutput {
                    instance: activity.instance.clone(),
                    path: check.log_path.into(),
                }))
            }
            _ => None,
        }
    }

    /// A passed verify's output, read (redacted as it entered the App):
    /// its lines under the overlay of that verify, while it is open
    /// (dropped otherwise); a read that failed says why.
    pub(super) fn show_verify_output(
        &mut self,
        instance: &str,
        result: Result<crate::event::TailText, String>,
    ) {
        let title = crate::ui::fulltext::verify_title(instance);
        let Some(view) = self
            .layers
            .full_view_mut()
            .filter(|view| view.text.title == title)
        else {
            return;
        };
        view.extend(|full| crate::ui::fulltext::verify_output(full, result));
    }
}
