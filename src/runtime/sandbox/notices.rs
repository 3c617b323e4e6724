//! The sandbox in words for the person: its label on the approval box and the status bar, what
//! they are told once the probe answers, and what Landlock does not hold that bwrap does.

use super::{Availability, Confinement, Sandbox};
use std::fmt;

impl Sandbox {
    /// What commands cannot do under Landlock that they could under bwrap, in words.
    pub fn landlock_limits(&self) -> String {
        let network = if self.policy.network { "" } else { ", nor reach even the loopback" };
        format!(
            "they cannot make, remove or rename anything at the workspace's top or in .git, nor \
             write /tmp by name (their temporary folder is $TMPDIR){network}"
        )
    }

    /// What the person is told once, as the probe answers: that no sandbox can be set up, that
    /// Landlock confines commands where bwrap cannot, that commands run without a process bound.
    pub fn notices(&self) -> Vec<String> {
        let landlock = match (&self.availability, self.confinement()) {
            (Availability::Landlock { why_not_bwrap, .. }, Confinement::Confined) => Some(format!(
                "confines commands with Landlock, since bwrap cannot run here ({why_not_bwrap}): \
                 {}; bubblewrap gives the full sandbox (docs/sandbox.md)",
                self.landlock_limits()
            )),
            _ => None,
        };
        let unbounded = self
            .unbounded
            .as_ref()
            .filter(|_| self.confinement() == Confinement::Confined)
            .map(|why| format!("runs commands without a bound on their processes: {why}"));
        self.problem().map(str::to_owned).into_iter().chain(landlock).chain(unbounded).collect()
    }

    /// The sandbox in a few words, for the approval box and the status bar:
    /// `sandbox: workspace · no network`.
    pub fn label(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.confinement() {
            Confinement::Off => write!(f, "sandbox: off"),
            Confinement::Unavailable => write!(f, "sandbox: unavailable"),
            Confinement::Confined => {
                let network = if self.policy.network { "network" } else { "no network" };
                let kind = match self.availability {
                    Availability::Landlock { .. } => " (landlock)",
                    _ => "",
                };
                write!(f, "sandbox: {}{kind} · {network}", self.policy.mode.name())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Availability, Confinement, Mode, Policy, Sandbox};
    use std::path::PathBuf;

    #[test]
    fn labels_say_mode_and_network() {
        let ready = Availability::Ready { bwrap: PathBuf::from("bwrap") };
        let sandbox =
            Sandbox { policy: Policy::default(), availability: ready.clone(), ..Sandbox::off() };
        assert_eq!(sandbox.label(), "sandbox: workspace · no network");
        let policy = Policy { mode: Mode::ReadOnly, network: true, ..Policy::default() };
        let sandbox = Sandbox { policy, availability: ready, ..Sandbox::off() };
        assert_eq!(sandbox.label(), "sandbox: read-only · network");
        assert_eq!(Sandbox::off().label(), "sandbox: off");
        assert_eq!(Sandbox::off().at_most(Mode::ReadOnly).label(), "sandbox: off");
        let missing = Sandbox {
            policy: Policy::default(),
            availability: Availability::Missing("x".into()),
            ..Sandbox::off()
        };
        assert_eq!(missing.label(), "sandbox: unavailable");
        assert_eq!(missing.problem(), Some("x"));
        assert_eq!(Sandbox::off().problem(), None);
        let landlock = Sandbox {
            availability: Availability::Landlock { abi: 7, why_not_bwrap: "no bwrap".into() },
            ..missing
        };
        assert_eq!(landlock.label(), "sandbox: workspace (landlock) · no network");
        assert_eq!(landlock.confinement(), Confinement::Confined);
        assert_eq!(landlock.problem(), None);
        assert_eq!(
            landlock.at_most(Mode::ReadOnly).label(),
            "sandbox: read-only (landlock) · no network"
        );
    }

    #[test]
    fn the_person_is_told_which_sandbox_runs_and_of_a_missing_bound() {
        let landlock = Sandbox {
            policy: Policy::default(),
            availability: Availability::Landlock { abi: 7, why_not_bwrap: "no bwrap".into() },
            unbounded: Some("no pids cgroup".into()),
            ..Sandbox::off()
        };
        let said = landlock.notices();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said[0].starts_with("confines commands with Landlock") && said[0].contains("no bwrap")
        );
        assert!(said[0].contains("nor reach even the loopback"), "{said:?}");
        assert!(said[1].contains("without a bound on their processes: no pids cgroup"));
        let open = Sandbox { policy: Policy { network: true, ..Policy::default() }, ..landlock };
        assert!(!open.notices()[0].contains("loopback"), "the network is allowed");
        // Off by the person's choice: nothing to say, bound or not.
        let off = Sandbox { unbounded: Some("x".into()), ..Sandbox::off() };
        assert!(off.notices().is_empty());
        let missing = Sandbox {
            policy: Policy::default(),
            availability: Availability::Missing("cannot sandbox commands".into()),
            ..Sandbox::off()
        };
        assert_eq!(missing.notices(), ["cannot sandbox commands"]);
    }
}
