//! The stackless controller (0.4.0; the daemon of 0.2/0.3) serving a
//! store, as probed beside it under `<state_dir>` (docs/stackless-releases.md,
//! "Files under `<state_dir>`"), and the pure rule of who reaps the store:
//! this console's reaper, or the controller's own lease reaper
//! ([`stance`]). Pure data.

/// What the console knows of the controller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ControllerState {
    /// The controller's pid: on 0.4.0 the process holding `controller.lock`
    /// (an flock, found in `/proc/locks`); on 0.2/0.3 the daemon answering
    /// on `daemon.sock` (its peer credentials). `None` when no controller
    /// runs (or it cannot be seen).
    pub pid: Option<u32>,
    /// Whether it runs stackless's 60 s lease reaper: `Some(false)` for an
    /// embedded controller (0.4.0 `ControllerInfo::lease_reaper`:
    /// "embedded controller has no boot persistence or lease reaper",
    /// stackless-0.4.0/src/client/mod.rs:426-442; the 0.2/0.3 daemon runs
    /// its reaper in the Operator role only, stackless-daemon-0.3.0/src/
    /// server.rs:107-116); `None` while it cannot be told.
    pub lease_reaper: Option<bool>,
    /// stackless's own persistence warning when leases are enforced only
    /// while the controller happens to run: `leases enforced only while the
    /// daemon happens to be running: <daemon.persistence>`.
    pub persistence_warning: Option<String>,
    /// The port stackless's proxy serves origins on
    /// ([`crate::model::services::proxy_port`]: the controller's
    /// `--proxy-port`, else `STACKLESS_PROXY_PORT`, else 4444); `None`
    /// before the first probe.
    pub proxy_port: Option<u16>,
}

impl ControllerState {
    /// The pid of a controller that runs a lease reaper, when one is known
    /// to run.
    #[must_use]
    pub fn reaping_pid(&self) -> Option<u32> {
        self.pid.filter(|_| self.lease_reaper == Some(true))
    }
}

/// Which reaper the operator wants this console to run (`--reaper`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReaperChoice {
    /// Reap unless the controller runs its own lease reaper; take over
    /// when it stops or has none (an embedded controller).
    #[default]
    Auto,
    /// Reap whatever the controller does.
    Always,
    /// Never reap here (`--no-reaper`).
    Off,
}

impl ReaperChoice {
    /// The flag's value: `auto`, `always`, `off`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Off => "off",
        }
    }

    /// Parse the flag's value (`auto`, `always`, `off`).
    ///
    /// # Errors
    /// Any other text: the message names the three values.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Self::Auto),
            "always" => Ok(Self::Always),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "`{other}` is not a reaper choice: auto (stand by while the controller runs a lease reaper), always, or off"
            )),
        }
    }
}

/// What this console's reaper does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stance {
    /// Hold the `console` role (if free) and reap.
    Reap,
    /// Stand by: the controller with this pid runs its lease reaper
    /// (`--reaper auto`). The role is not held, so `reap --once --reaper
    /// always` and a console with `--reaper always` are not blocked.
    Controller(u32),
    /// The operator paused this console's reaper (`P`): the role is given
    /// up so that another console, or `reap --once`, may reap meanwhile.
    Paused,
}

/// The stance of a console whose reaper may run (`choice` is not
/// [`ReaperChoice::Off`]), `paused` by the operator or not, beside
/// `controller` as last probed. A controller whose lease reaper cannot be
/// told (`lease_reaper: None`) is not stood by for: two reapers racing
/// is safe (each `down` is refused on a pending operation, stackless
/// §6), nobody reaping is not.
#[must_use]
pub fn stance(choice: ReaperChoice, paused: bool, controller: &ControllerState) -> Stance {
    if paused {
        return Stance::Paused;
    }
    match (choice, controller.reaping_pid()) {
        (ReaperChoice::Auto, Some(pid)) => Stance::Controller(pid),
        _ => Stance::Reap,
    }
}

/// What a reaper started with `choice` does before each teardown it
/// starts (asked before each one, not once a pass; [`hand_over`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOver {
    /// The controller with this pid runs its lease reaper and `choice`
    /// stands by for it: start no more teardowns.
    Controller(u32),
    /// No controller runs and `choice` would stand by for one: stackless
    /// 0.4.0's `down` starts the controller when none runs, and its lease
    /// reaper's first pass downs every expired instance without a pending
    /// operation, so teardowns started side by side now would each get a
    /// second `down`. Start one at a time until one finished with still no
    /// controller running.
    OneAtATime,
    /// Reap (`--reaper always`, or a controller that runs no lease reaper
    /// or cannot be told).
    Reap,
}

/// What a reaper started with `choice` does before its next teardown,
/// beside `controller` as probed just now ([`HandOver`]). stackless
/// 0.4.0's `down` starts the controller when none runs
/// (docs/stackless-releases.md "Files under `<state_dir>`"), and its lease
/// reaper's first pass submits a `down` for every expired instance without
/// a pending operation ("The controller's reaper (0.4.0), each pass"): a
/// console that went on with its pass would submit a second one.
#[must_use]
pub fn hand_over(choice: ReaperChoice, controller: &ControllerState) -> HandOver {
    match stance(choice, false, controller) {
        Stance::Controller(pid) => HandOver::Controller(pid),
        Stance::Reap if choice == ReaperChoice::Auto && controller.pid.is_none() => {
            HandOver::OneAtATime
        }
        Stance::Reap | Stance::Paused => HandOver::Reap,
    }
}

/// What a reaper says when it leaves its queued teardowns (`names`) to the
/// controller with `pid`: `the controller (pid 77) reaps now: 2 queued
/// teardowns left to its lease reaper (alpha, bravo)`.
#[must_use]
pub fn left_to_controller(pid: u32, names: &[&str]) -> String {
    let mut text = format!("the controller (pid {pid}) reaps now");
    match names.len() {
        0 => {}
        1 => text.push_str(&format!(
            ": 1 queued teardown left to its lease reaper ({})",
            names[0]
        )),
        n => text.push_str(&format!(
            ": {n} queued teardowns left to its lease reaper ({})",
            names.join(", ")
        )),
    }
    text
}

/// What an Activity line says when the controller probed `after` is not
/// the one probed `before` (their pids): `the controller started (pid
/// 77)`, `the controller stopped (pid 77 gone)`, `the controller was
/// replaced (pid 77, then pid 78)`; `None` when the same one runs, or none
/// did and none does.
#[must_use]
pub fn came_or_went(before: Option<u32>, after: Option<u32>) -> Option<String> {
    match (before, after) {
        (None, Some(pid)) => Some(format!("the controller started (pid {pid})")),
        (Some(pid), None) => Some(format!("the controller stopped (pid {pid} gone)")),
        (Some(old), Some(new)) if old != new => Some(format!(
            "the controller was replaced (pid {old}, then pid {new})"
        )),
        _ => None,
    }
}

/// Who reaps the store now, seen without taking a role: the controller's
/// lease reaper when it runs one, else the console holding the `console`
/// role (`console`: the role's holder as its files say, `Some(pid)` when
/// its claim names one; `Err` when they cannot be read), else nobody.
/// The console's header and `snapshot` say it with [`Reaping::text`].
#[must_use]
pub fn reaping<E>(
    controller: &ControllerState,
    console: Result<Option<Option<u32>>, E>,
) -> Reaping {
    controller.reaping_pid().map_or_else(
        || match console {
            Ok(Some(pid)) => Reaping::Console(pid),
            Ok(None) => Reaping::Nobody,
            Err(_) => Reaping::Unknown,
        },
        Reaping::Controller,
    )
}

/// Who reaps the store now, as a console that does not reap says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaping {
    /// Nobody this console can see: no console holds the role and no
    /// controller runs a lease reaper.
    Nobody,
    /// Another console (or `reap --once`) holds the `console` role (its
    /// pid when its claim record says).
    Console(Option<u32>),
    /// The controller's lease reaper (its pid).
    Controller(u32),
    /// It cannot be told (the role files cannot be read here).
    Unknown,
}

impl Reaping {
    /// `nobody reaps now`, `console pid 4242 reaps now`, `the controller
    /// reaps (pid 77)`.
    #[must_use]
    pub fn text(self) -> String {
        match self {
            Self::Nobody => "nobody reaps now".to_owned(),
            Self::Console(Some(pid)) => format!("console pid {pid} reaps now"),
            Self::Console(None) => "another console reaps now".to_owned(),
            Self::Controller(pid) => format!("the controller reaps (pid {pid})"),
            Self::Unknown => "who reaps now cannot be told here".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_coming_and_going_is_said_by_its_pid() {
        assert_eq!(
            came_or_went(None, Some(77)).as_deref(),
            Some("the controller started (pid 77)")
        );
        assert_eq!(
            came_or_went(Some(77), None).as_deref(),
            Some("the controller stopped (pid 77 gone)")
        );
        assert_eq!(
            came_or_went(Some(77), Some(78)).as_deref(),
            Some("the controller was replaced (pid 77, then pid 78)")
        );
        assert_eq!(came_or_went(Some(77), Some(77)), None);
        assert_eq!(came_or_went(None, None), None);
    }

    fn controller(pid: Option<u32>, lease_reaper: Option<bool>) -> ControllerState {
        ControllerState {
            pid,
            lease_reaper,
            persistence_warning: None,
            proxy_port: None,
        }
    }

    #[test]
    fn auto_stands_by_for_a_controller_that_reaps_and_only_then() {
        let reaps = controller(Some(77), Some(true));
        assert_eq!(
            stance(ReaperChoice::Auto, false, &reaps),
            Stance::Controller(77)
        );
        assert_eq!(stance(ReaperChoice::Always, false, &reaps), Stance::Reap);
        // An embedded controller has no lease reaper: the console takes over.
        let embedded = controller(Some(77), Some(false));
        assert_eq!(stance(ReaperChoice::Auto, false, &embedded), Stance::Reap);
        // A stopped controller: the console takes over.
        assert_eq!(
            stance(ReaperChoice::Auto, false, &controller(None, Some(true))),
            Stance::Reap
        );
        // One that cannot be told is not stood by for.
        assert_eq!(
            stance(ReaperChoice::Auto, false, &controller(Some(77), None)),
            Stance::Reap
        );
    }

    #[test]
    fn a_paused_console_gives_the_role_up_whatever_the_controller() {
        for choice in [ReaperChoice::Auto, ReaperChoice::Always] {
            for state in [controller(None, None), controller(Some(5), Some(true))] {
                assert_eq!(stance(choice, true, &state), Stance::Paused);
            }
        }
    }

    #[test]
    fn a_reaper_hands_over_before_a_teardown_only_to_a_reaping_controller() {
        let reaps = controller(Some(77), Some(true));
        assert_eq!(
            hand_over(ReaperChoice::Auto, &reaps),
            HandOver::Controller(77)
        );
        assert_eq!(hand_over(ReaperChoice::Always, &reaps), HandOver::Reap);
        assert_eq!(
            hand_over(ReaperChoice::Auto, &controller(Some(77), Some(false))),
            HandOver::Reap
        );
        assert_eq!(
            hand_over(ReaperChoice::Auto, &controller(Some(77), None)),
            HandOver::Reap
        );
        // No controller: a `down` may start one, so one at a time.
        assert_eq!(
            hand_over(ReaperChoice::Auto, &controller(None, Some(true))),
            HandOver::OneAtATime
        );
        assert_eq!(
            hand_over(ReaperChoice::Always, &controller(None, None)),
            HandOver::Reap
        );
        assert_eq!(
            left_to_controller(77, &["alpha", "bravo"]),
            "the controller (pid 77) reaps now: 2 queued teardowns left to its lease reaper (alpha, bravo)"
        );
        assert_eq!(
            left_to_controller(77, &["alpha"]),
            "the controller (pid 77) reaps now: 1 queued teardown left to its lease reaper (alpha)"
        );
        assert_eq!(
            left_to_controller(77, &[]),
            "the controller (pid 77) reaps now"
        );
    }

    #[test]
    fn who_reaps_the_controller_first_then_the_console_role() {
        let none: Result<Option<Option<u32>>, ()> = Ok(None);
        assert_eq!(
            reaping(
                &controller(Some(77), Some(true)),
                Ok::<_, ()>(Some(Some(5)))
            ),
            Reaping::Controller(77)
        );
        assert_eq!(
            reaping(
                &controller(Some(77), Some(false)),
                Ok::<_, ()>(Some(Some(5)))
            ),
            Reaping::Console(Some(5))
        );
        assert_eq!(reaping(&controller(None, None), none), Reaping::Nobody);
        assert_eq!(
            reaping(
                &controller(None, None),
                Err::<Option<Option<u32>>, _>("unreadable")
            ),
            Reaping::Unknown
        );
    }

    #[test]
    fn who_reaps_in_words() {
        assert_eq!(Reaping::Nobody.text(), "nobody reaps now");
        assert_eq!(
            Reaping::Console(Some(4242)).text(),
            "console pid 4242 reaps now"
        );
        assert_eq!(Reaping::Console(None).text(), "another console reaps now");
        assert_eq!(
            Reaping::Controller(77).text(),
            "the controller reaps (pid 77)"
        );
    }
}
