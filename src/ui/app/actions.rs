//! What the operator's keys act on and the rules they pass first: the
//! detail view (Enter), reap now (`r`), teardown (`d`), both confirmed
//! with `y`.

use super::{App, Effect, FlashLevel, Focus, Layer, Question};
use crate::event::Request;
use crate::event::{Activity, ActivityKind, Actor};
use crate::model::rules::{self, Action, Asked, may_tear_down};
use crate::model::services::DetailView;
use crate::model::{Instance, Operation};
use crate::ui::detail::{Detail, DetailText, Loaded};

/// The detail of the Activity line (`aborted`) a reap dialog answered no
/// leaves: `operator golf aborted: reap cancelled`.
pub(super) const REAP_CANCELLED: &str = "reap cancelled";

impl App {
    /// The answer to [`Effect::OpenDetail`]: `Ok(Some(detail))` read,
    /// `Ok(None)` no such instance, `Err(message)` the read failed (e.g.
    /// `StoreError::to_string()`). Ignored when the detail view was closed or
    /// moved to another instance meanwhile. The scroll position and the
    /// payload toggle are kept (a refresh does not jump).
    pub(super) fn show_detail(&mut self, name: &str, result: Result<Option<DetailView>, String>) {
        let now = self.now;
        let proxy_port = self.controller().proxy_port;
        let Some(detail) = self.layers.detail_mut().filter(|d| d.name == name) else {
            return;
        };
        let first = detail.loaded == Loaded::Loading;
        let flash = match result {
            Ok(Some(read)) => {
                detail.loaded = Loaded::Ready(Box::new(DetailText::new(&read, now, proxy_port)));
                None
            }
            Ok(None) => {
                let was_gone = detail.loaded == Loaded::Gone;
                detail.loaded = Loaded::Gone;
                (!was_gone).then(|| {
                    (
                        FlashLevel::Warning,
                        format!("{name} is no longer in the store"),
                    )
                })
            }
            // A failed refresh (a busy store) keeps what was read before,
            // quietly: the header's store banner already says why.
            Err(_) if !first => None,
            Err(message) => {
                let text = format!("cannot read {name}: {message}");
                detail.loaded = Loaded::Failed(message);
                Some((FlashLevel::Error, text))
            }
        };
        if let Some((level, text)) = flash {
            self.set_flash(level, text);
        }
    }

    /// Enter: the detail view of the selected instance (Instances), the
    /// operation overlay (Operations), else the full text of the focused
    /// pane's selected line (Backoffs, Supervisor, Activity).
    pub(super) fn open_detail(&mut self) -> Option<Effect> {
        let name = match self.focus {
            Focus::Instances => self.selected_instance().map(|i| i.name.clone()),
            Focus::Operations => return self.open_operation(),
            Focus::Backoffs | Focus::Supervisor | Focus::Activity | Focus::Hosts => {
                self.open_full_text();
                return None;
            }
        };
        let Some(name) = name else {
            self.set_flash(FlashLevel::Warning, "no instance selected".into());
            return None;
        };
        self.layers.open(Layer::Detail(Detail {
            name: name.clone(),
            loaded: Loaded::Loading,
            scroll: 0,
            cursor: 0,
            payloads: false,
        }));
        Some(Effect::Io(Request::OpenDetail { name }))
    }

    /// `y` in the teardown dialog: the operator's rules
    /// ([`crate::model::rules::admit`]) on the snapshot shown now (it may
    /// have changed while the dialog was open), for the birth asked about.
    pub(super) fn confirm_tear_down(&mut self, instance: Instance) -> Option<Effect> {
        self.admit_key(&Action::Down(Asked::of(&instance)))
    }

    /// Any other key in the teardown dialog: close it, logging the cancel.
    pub(super) fn cancel_tear_down(&mut self, instance: Instance) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            &instance.name,
            ActivityKind::Aborted,
            "cancelled",
        ));
    }

    /// The instance `r` and `d` act on: the detail view's instance while it
    /// is open, the selected backoff's instance in the Backoffs pane, else
    /// the selected instance. `Err(detail)` when there is none.
    pub(super) fn target(&self) -> Result<Instance, (String, String)> {
        if let Some(detail) = self.layers.detail() {
            return self
                .shown
                .snapshot
                .instance(&detail.name)
                .cloned()
                .ok_or_else(|| {
                    (
                        detail.name.clone(),
                        "refused: no such instance in the store".into(),
                    )
                });
        }
        if self.focus == Focus::Backoffs {
            let Some(attempt) = self.shown.snapshot.reap_attempts.get(self.backoffs.index) else {
                return Err((String::new(), "refused: no backoff selected".into()));
            };
            return self
                .shown
                .snapshot
                .instance(&attempt.instance)
                .cloned()
                .ok_or_else(|| {
                    (
                        attempt.instance.clone(),
                        "refused: no such instance in the store".into(),
                    )
                });
        }
        self.selected_instance()
            .cloned()
            .ok_or_else(|| (String::new(), "refused: no instance selected".into()))
    }

    /// The common gate of `r` and `d`: write keys enabled and a target.
    fn writable_target(&mut self) -> Option<Instance> {
        let instance = match self.target() {
            Ok(instance) => instance,
            Err((name, detail)) => {
                self.refuse(&name, detail);
                return None;
            }
        };
        if let Some(reason) = self.write_keys_off() {
            let reason = reason.into_owned();
            self.refuse(&instance.name, reason);
            return None;
        }
        Some(instance)
    }

    pub(super) fn reap_key(&mut self) {
        if self.bulk_applies() {
            self.bulk_key(crate::reaper::Intent::Reap);
            return;
        }
        let Some(instance) = self.writable_target() else {
            return;
        };
        self.reap_instance(instance);
    }

    /// `r`'s rules for `instance` (the write keys are on): the
    /// confirmation opens when [`Self::may_reap`] passes (as `d`'s does:
    /// a reap runs `down` too, and skips a backoff the reaper would wait
    /// out).
    pub(super) fn reap_instance(&mut self, instance: Instance) {
        match self.may_reap(&instance) {
            Ok(()) => self.ask(Question::Reap(instance)),
            Err(reason) => self.refuse(&instance.name, reason),
        }
    }

    /// `r`'s rules on the snapshot shown ([`rules::reap_rule`]: the
    /// clock, then [`rules::may_reap_now`]). `Err(reason)`: the refusal, in the
    /// operator's words.
    fn may_reap(&self, instance: &Instance) -> Result<(), String> {
        self.with_rules(|cx| rules::reap_rule(instance, cx))
    }

    /// `y` in the reap dialog: the operator's rules
    /// ([`crate::model::rules::admit`]) on the snapshot shown now, for the
    /// birth asked about.
    pub(super) fn confirm_reap(&mut self, instance: Instance) -> Option<Effect> {
        self.admit_key(&Action::Reap(Asked::of(&instance)))
    }

    /// Any other key in the reap dialog: close it, logging the cancel
    /// (`reap cancelled`).
    pub(super) fn cancel_reap(&mut self, instance: Instance) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            &instance.name,
            ActivityKind::Aborted,
            REAP_CANCELLED,
        ));
    }

    /// A teardown of `name` was asked for here: what is observed on it for
    /// a while is this console's own doing.
    pub(super) fn own_until(&mut self, name: &str) {
        let until = self.now.saturating_add(super::operations::OWN_GRACE_SECS);
        let entry = self.ours.names.entry(name.to_owned()).or_insert(until);
        *entry = (*entry).max(until);
    }

    pub(super) fn down_key(&mut self) {
        if self.bulk_applies() {
            self.bulk_key(crate::reaper::Intent::TearDown);
            return;
        }
        let Some(instance) = self.writable_target() else {
            return;
        };
        self.down_instance(instance);
    }

    /// `d`'s rules for `instance` (the write keys are on): the
    /// confirmation opens when [`may_tear_down`] passes. On a store with
    /// controller operations (schema 14, stackless 0.4.0), an instance with
    /// a queued or running operation gets the question whether to queue a
    /// teardown behind it instead ([`queue_down_refusal`]); elsewhere such
    /// an instance does not exist, and nothing changes.
    pub(super) fn down_instance(&mut self, instance: Instance) {
        if let Some(rule) = self.queue_rule(&instance) {
            match rule {
                Ok((op, others)) => {
                    self.ask(Question::QueueDown(instance, Box::new(op), others));
                }
                Err(refusal) => self.refuse(&instance.name, refusal),
            }
            return;
        }
        let pending = self.shown.snapshot.pending_operation(&instance.name);
        match may_tear_down(
            &instance,
            self.shown.snapshot.lock_liveness(&instance.name),
            pending,
        ) {
            Ok(()) => self.ask(Question::TearDown(instance)),
            Err(refusal) => self.refuse(&instance.name, refusal.to_string()),
        }
    }

    /// `d`'s queue rule for `instance` on the snapshot shown
    /// ([`rules::queue_rule`]).
    pub(super) fn queue_rule(
        &self,
        instance: &Instance,
    ) -> Option<Result<(Operation, String), String>> {
        rules::queue_rule(&self.shown.snapshot, instance)
    }

    /// `y` to the queue question: the operator's rules
    /// ([`crate::model::rules::admit`]): the same birth, still a pending
    /// operation to queue behind (one that ended meanwhile leaves nothing
    /// to wait for: `d` again asks anew).
    pub(super) fn confirm_queue_down(
        &mut self,
        asked: Instance,
        behind: Operation,
    ) -> Option<Effect> {
        self.admit_key(&Action::QueueDown {
            target: Asked::of(&asked),
            behind: Some(behind.verb),
        })
    }

    /// Any other key to the queue question: close it, logging it.
    pub(super) fn cancel_queue_down(&mut self, instance: Instance) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            &instance.name,
            ActivityKind::Aborted,
            "queued teardown not confirmed",
        ));
    }
}
