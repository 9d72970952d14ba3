//! What the operator is told: the footer's flash message and the operator's
//! own entries in the activity log (refusals, cancels), which are also kept
//! for the audit trail.

use super::App;
use crate::event::{Activity, ActivityKind, Actor};
use crate::model::envelope;

/// How long a flash message stays in the footer, in seconds of the app's
/// clock (`now`).
pub const FLASH_SECS: i64 = 4;

pub use crate::ui::theme::FlashLevel;

/// A one-line message in the footer that clears itself [`FLASH_SECS`] after
/// `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// How to style it.
    pub level: FlashLevel,
    /// The message (unsanitized: it may quote store text; drawing
    /// sanitizes).
    pub text: String,
    /// When it was raised (unix seconds, the app's `now`).
    pub at: i64,
}

impl App {
    pub(super) fn set_flash(&mut self, level: FlashLevel, text: String) {
        self.flash = Some(Flash {
            level,
            text,
            at: self.wall_now(),
        });
    }

    pub(super) fn log_activity(&mut self, activity: Activity) {
        self.note_own(&activity);
        if activity.actor == Actor::Operator {
            let (level, text) = flash_for(&activity);
            self.set_flash(level, text);
        }
        self.activity
            .push_folding(activity, Activity::repeats, Activity::repeats_apart);
    }

    /// Show `activity` in the Activity pane only: no flash, not audited
    /// (a bulk action's refusals, audited as one batch).
    pub(super) fn show_activity(&mut self, activity: Activity) {
        self.activity
            .push_folding(activity, Activity::repeats, Activity::repeats_apart);
    }

    /// Log an operator action decided here (a refusal, a cancel) and keep
    /// it for the console to append to the audit trail.
    pub(super) fn log_local(&mut self, activity: Activity) {
        self.outbox.push(activity.clone());
        self.log_activity(activity);
    }

    pub(super) fn refuse(&mut self, instance: &str, detail: String) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            instance,
            ActivityKind::Refused,
            detail,
        ));
    }
}

/// Whether `flash` is still shown at `now`.
pub(super) fn flash_live(flash: &Flash, now: i64) -> bool {
    now < flash.at.saturating_add(FLASH_SECS)
}

/// The flash for an operator's activity: what the operator's own keys led
/// to, in the operator's words.
fn flash_for(activity: &Activity) -> (FlashLevel, String) {
    let name = activity.instance.as_str();
    let detail = activity.detail.trim();
    let who = if name.is_empty() {
        String::new()
    } else {
        format!("{name} ")
    };
    match activity.kind {
        ActivityKind::Refused => {
            let text = if detail.starts_with("refused") || detail.starts_with("cancel refused") {
                detail.to_owned()
            } else {
                format!("refused: {detail}")
            };
            (FlashLevel::Warning, text)
        }
        ActivityKind::Aborted if detail == "cancelled" => {
            (FlashLevel::Info, format!("teardown of {name} cancelled"))
        }
        ActivityKind::Aborted if detail == super::actions::REAP_CANCELLED => {
            (FlashLevel::Info, format!("reap of {name} cancelled"))
        }
        ActivityKind::Failed => {
            let reason = envelope::read_reason(detail).summary;
            (FlashLevel::Error, format!("{who}failed: {reason}"))
        }
        ActivityKind::Error => (FlashLevel::Error, format!("{who}error: {detail}")),
        // The operator's renew and verify: `alpha lease renewed: 2h,
        // expires in 2h 00m`, `alpha verify failed: verify.failed: ...`.
        ActivityKind::Renewed | ActivityKind::Verified | ActivityKind::WouldRun => {
            (FlashLevel::Info, with_detail(&who, activity.kind, detail))
        }
        ActivityKind::RenewFailed | ActivityKind::VerifyFailed => {
            (FlashLevel::Error, with_detail(&who, activity.kind, detail))
        }
        ActivityKind::Aborted
        | ActivityKind::SkippedLocked
        | ActivityKind::Skipped
        | ActivityKind::Stopped => (
            FlashLevel::Warning,
            with_detail(&who, activity.kind, detail),
        ),
        ActivityKind::Started => (FlashLevel::Info, format!("tearing down {name}")),
        ActivityKind::Role => (FlashLevel::Info, format!("reaper: {detail}")),
        ActivityKind::StoreCreated => (FlashLevel::Info, detail.to_owned()),
        // The operator's cancel: `cancelled down alpha (op 3f2c…)`, or
        // `cancel requested: up alpha stops at its next step (op 3f2c…)`.
        ActivityKind::Cancelled if detail.starts_with("cancel") => {
            (FlashLevel::Info, detail.to_owned())
        }
        // A renew or verify question answered no (`renew cancelled`):
        // `renew of alpha cancelled`, said once.
        ActivityKind::Cancelled if detail.ends_with(" cancelled") => (
            FlashLevel::Info,
            format!(
                "{} of {name} cancelled",
                detail.trim_end_matches(" cancelled")
            ),
        ),
        ActivityKind::Cancelled => (FlashLevel::Info, format!("cancelled {detail}")),
        ActivityKind::CancelRequested => (FlashLevel::Info, format!("cancel requested: {detail}")),
        ActivityKind::Reaped
        | ActivityKind::TornDown
        | ActivityKind::Collected
        | ActivityKind::WaitingBackoff
        | ActivityKind::WouldReap
        | ActivityKind::Succeeded
        | ActivityKind::Queued
        | ActivityKind::Interrupted
        | ActivityKind::Appeared
        | ActivityKind::Tombstoned => (FlashLevel::Info, with_detail(&who, activity.kind, detail)),
    }
}

fn with_detail(who: &str, kind: ActivityKind, detail: &str) -> String {
    if detail.is_empty() {
        format!("{who}{kind}")
    } else {
        format!("{who}{kind}: {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flashes_live_four_seconds() {
        let flash = Flash {
            level: FlashLevel::Info,
            text: String::new(),
            at: 100,
        };
        assert!(flash_live(&flash, 100));
        assert!(flash_live(&flash, 103));
        assert!(!flash_live(&flash, 104));
        let far = Flash {
            at: i64::MAX,
            ..flash
        };
        assert!(flash_live(&far, i64::MAX - 1));
    }

    #[test]
    fn operator_activity_flashes() {
        let a = |kind, detail: &str| Activity::new(0, Actor::Operator, "golf", kind, detail);
        assert_eq!(
            flash_for(&a(ActivityKind::Refused, "read-only")),
            (FlashLevel::Warning, "refused: read-only".into())
        );
        assert_eq!(
            flash_for(&a(ActivityKind::Aborted, "cancelled")),
            (FlashLevel::Info, "teardown of golf cancelled".into())
        );
        assert_eq!(
            flash_for(&a(ActivityKind::Failed, "}")),
            (FlashLevel::Error, "golf failed: }".into())
        );
        assert_eq!(
            flash_for(&a(ActivityKind::Aborted, "lease renewed")),
            (FlashLevel::Warning, "golf aborted: lease renewed".into())
        );
        assert_eq!(
            flash_for(&a(ActivityKind::Cancelled, "down golf (op 3f2c…)")),
            (FlashLevel::Info, "cancelled down golf (op 3f2c…)".into())
        );
        // A renew question answered no: said once.
        assert_eq!(
            flash_for(&a(ActivityKind::Cancelled, "renew cancelled")),
            (FlashLevel::Info, "renew of golf cancelled".into())
        );
        // A cancel recorded on a running operation is requested, not done.
        assert_eq!(
            flash_for(&a(
                ActivityKind::CancelRequested,
                "up golf stops at its next step (op 3f2c…)"
            )),
            (
                FlashLevel::Info,
                "cancel requested: up golf stops at its next step (op 3f2c…)".into()
            )
        );
        assert_eq!(
            flash_for(&a(
                ActivityKind::Refused,
                "cancel refused: cli.bad_argument: bad argument"
            )),
            (
                FlashLevel::Warning,
                "cancel refused: cli.bad_argument: bad argument".into()
            )
        );
        let pass = Activity::new(0, Actor::Operator, "", ActivityKind::Error, "busy");
        assert_eq!(flash_for(&pass), (FlashLevel::Error, "error: busy".into()));
    }
}
