//! What the sandbox had to do with a command that failed: a command whose output shows a failed
//! network lookup where the sandbox has no network, or a write refused as a "Read-only file
//! system" where the sandbox keeps folders read-only (as "Permission denied" under Landlock,
//! which mounts nothing), gets one line after its output saying so and naming the setting the
//! person can change. The model reads it with the result; the person
//! sees its label on the tool's line, even when the command exited 0 (`curl … || true`).

use crate::runtime::sandbox::{Confinement, Mode, Sandbox};

/// What a line of output says when a name could not be looked up, or no route leads out: the
/// words of libc, curl, wget, git, Python, Node, Go and Rust's resolvers.
const NETWORK_FAILURES: &[&str] = &[
    "Could not resolve host",
    "Couldn't resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "unable to resolve host address",
    "failed to lookup address information",
    "getaddrinfo EAI_AGAIN",
    "getaddrinfo ENOTFOUND",
    "Network is unreachable",
    "network is unreachable",
    "dial tcp: lookup",
];
/// What a line of output says when a write hit a read-only mount (EROFS, in every language).
const READ_ONLY_FAILURES: &[&str] = &["Read-only file system", "read-only file system", "EROFS"];
/// What a line of output says when Landlock refused an access (EACCES, in every language).
const REFUSED_FAILURES: &[&str] = &["Permission denied", "permission denied", "EACCES"];
/// How the hint's line begins: what tells it from the command's own output.
const MARK: &str = "[keel: ";

/// Why a command that failed may have failed: the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxHint {
    /// The sandbox has no network, and the output shows a network failure.
    NoNetwork,
    /// The sandbox keeps folders read-only, and the output shows a write refused for that.
    ReadOnly,
    /// Landlock confines the command, and the output shows an access refused.
    Refused,
}

impl SandboxHint {
    /// The hint for `output` of a command run in `sandbox`, if the sandbox explains it.
    pub fn of(output: &str, sandbox: &Sandbox) -> Option<Self> {
        if sandbox.confinement() != Confinement::Confined {
            return None;
        }
        let shows = |words: &[&str]| words.iter().any(|word| output.contains(word));
        if !sandbox.policy.network && shows(NETWORK_FAILURES) {
            Some(Self::NoNetwork)
        } else if shows(READ_ONLY_FAILURES) {
            Some(Self::ReadOnly)
        } else if sandbox.is_landlock() && shows(REFUSED_FAILURES) {
            Some(Self::Refused)
        } else {
            None
        }
    }

    /// The hint a command's result carries on its last line, if it carries one (for the tool's
    /// line, and for an answer read back from a log).
    pub fn in_result(result: &str) -> Option<Self> {
        let last = result.trim_end().rsplit('\n').next()?;
        if !last.starts_with(MARK) {
            return None;
        }
        [Self::NoNetwork, Self::ReadOnly, Self::Refused]
            .into_iter()
            .find(|hint| last.starts_with(&hint.opening()))
    }

    /// The tool line's word for it.
    pub fn label(self) -> &'static str {
        match self {
            Self::NoNetwork => "no network",
            Self::ReadOnly | Self::Refused => "read-only here",
        }
    }

    fn opening(self) -> String {
        match self {
            Self::NoNetwork => format!("{MARK}the sandbox has no network"),
            Self::ReadOnly => format!("{MARK}the sandbox let this command write"),
            Self::Refused => format!("{MARK}the sandbox (Landlock) let this command write"),
        }
    }

    /// The line appended to the result, for the model and the person alike.
    pub fn line(self, mode: Mode) -> String {
        let opening = self.opening();
        match self {
            Self::NoNetwork => format!(
                "{opening}, so this looks like a failed network lookup, not a problem with the \
                 host. The person can allow the network (`--network`, or `network = true` in \
                 their own config) or run the command themselves.]"
            ),
            Self::ReadOnly if mode == Mode::ReadOnly => format!(
                "{opening} nowhere but /tmp: plan mode changes nothing until the person \
                 approves the plan.]"
            ),
            Self::ReadOnly => format!(
                "{opening} only in the workspace and /tmp, and never in .git/hooks, .git/config \
                 or .keel/. The person can let commands write more folders (`writable_roots` in \
                 their own config), turn the sandbox off (`--sandbox off`), or run the command \
                 themselves.]"
            ),
            Self::Refused if mode == Mode::ReadOnly => format!(
                "{opening} nowhere but $TMPDIR, and read nothing hidden from it: plan mode \
                 changes nothing until the person approves the plan.]"
            ),
            Self::Refused => format!(
                "{opening} only in the folders and files of the workspace as they were when it \
                 started and in $TMPDIR (not /tmp): nothing can be made, removed or renamed at \
                 the workspace's top or in .git, and keel's folders and the person's credentials \
                 cannot be read. Make a new file at the top with the file tools. The person can \
                 let commands write more folders (`writable_roots`), install bubblewrap for the \
                 full sandbox, turn it off (`--sandbox off`), or run the command themselves.]"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sandbox::{Availability, Policy};

    fn confined(mode: Mode, network: bool) -> Sandbox {
        Sandbox {
            policy: Policy { mode, network, ..Policy::default() },
            availability: Availability::Ready { bwrap: "bwrap".into() },
            ..Sandbox::off()
        }
    }

    #[test]
    fn a_network_failure_is_explained_only_where_the_sandbox_has_no_network() {
        let curl = "curl: (6) Could not resolve host: example.com";
        let hint = SandboxHint::of(curl, &confined(Mode::Workspace, false));
        assert_eq!(hint, Some(SandboxHint::NoNetwork));
        assert_eq!(SandboxHint::of(curl, &confined(Mode::Workspace, true)), None);
        assert_eq!(SandboxHint::of(curl, &Sandbox::off()), None);
        assert_eq!(SandboxHint::of("all fine", &confined(Mode::Workspace, false)), None);
        let line = SandboxHint::NoNetwork.line(Mode::Workspace);
        assert!(line.contains("--network") && line.contains("network = true"), "{line}");
        assert_eq!(SandboxHint::in_result(&format!("{curl}\n\n{line}")), hint);
        assert_eq!(SandboxHint::in_result(curl), None);
    }

    #[test]
    fn under_landlock_a_refused_access_is_explained() {
        let landlock = Sandbox {
            availability: Availability::Landlock { abi: 7, why_not_bwrap: "no bwrap".into() },
            ..confined(Mode::Workspace, false)
        };
        let sed = "sed: couldn't open temporary file ./sedAb12: Permission denied";
        assert_eq!(SandboxHint::of(sed, &landlock), Some(SandboxHint::Refused));
        // Under bwrap, EACCES is the person's own files' doing.
        assert_eq!(SandboxHint::of(sed, &confined(Mode::Workspace, false)), None);
        let line = SandboxHint::Refused.line(Mode::Workspace);
        assert!(line.contains("$TMPDIR") && line.contains("file tools"), "{line}");
        assert!(SandboxHint::Refused.line(Mode::ReadOnly).contains("plan mode"));
        assert_eq!(SandboxHint::in_result(&format!("{sed}\n{line}")), Some(SandboxHint::Refused));
        assert_eq!(SandboxHint::Refused.label(), "read-only here");
    }

    #[test]
    fn a_read_only_file_system_names_what_may_be_written_and_the_settings() {
        let git = "fatal: cannot mkdir /home/me/.config/git: Read-only file system";
        let hint = SandboxHint::of(git, &confined(Mode::Workspace, true));
        assert_eq!(hint, Some(SandboxHint::ReadOnly));
        let line = SandboxHint::ReadOnly.line(Mode::Workspace);
        assert!(line.contains("writable_roots") && line.contains("--sandbox off"), "{line}");
        assert!(SandboxHint::ReadOnly.line(Mode::ReadOnly).contains("plan mode"));
        assert_eq!(SandboxHint::in_result(&line), hint);
    }
}
