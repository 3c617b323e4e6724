//! The sandbox every command runs in: what the kernel lets a command touch, whatever the guard
//! made of its text.
//!
//! A [`Policy`] says what a command may write and whether it may reach the network; [`Sandbox`]
//! is that policy plus whether the machine can enforce it, found out once at start by running a
//! command through the sandbox ([`Sandbox::probe`]), on a thread of its own ([`Probing`]). On Linux the sandbox is `bwrap` (package
//! `bubblewrap`, see [`bwrap`]) started by the command's supervisor, and inside it keel's own
//! binary installs a seccomp filter before it becomes `bash` ([`confine`]). Where bwrap cannot
//! start, that last step confines itself with Landlock instead ([`landlock`]); only where neither
//! works are commands unconfined (and then only as the person chose). docs/sandbox.md says what
//! each layer stops and what it costs.

pub mod bwrap;
pub mod confine;
pub mod git_dirs;
pub mod hidden;
pub mod keel_folders;
pub mod landlock;
pub mod nested;
pub mod probing;
pub mod process_limit;
pub mod report;
pub mod repository;
pub mod session_tmp;

pub use keel_folders::KeelFolders;
pub use probing::Probing;

use crate::tools::supervisor::Launch;
use std::fmt;
use std::path::{Path, PathBuf};

/// The environment variable that names the `bwrap` program (default: `bwrap` on `PATH`, outside
/// every folder commands may write: [`crate::tools::programs`]). Read from keel's own environment
/// only: commands never see `KEEL_*` variables, and no config file can set it.
pub const BWRAP_VARIABLE: &str = "KEEL_BWRAP";
/// The program used when [`BWRAP_VARIABLE`] is not set.
pub const DEFAULT_BWRAP: &str = "bwrap";
/// What to install when the sandbox cannot be set up.
pub const INSTALL_HINT: &str = "install bubblewrap (`apt-get install bubblewrap`, or your \
    system's `bubblewrap` package), or run with `--sandbox off` to run commands unconfined";

/// How much of the file system a command may change (`--sandbox`, config `sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The workspace, a private `/tmp` and the person's `writable_roots`; never `.git/hooks`,
    /// `.git/config` or `.keel/`.
    #[default]
    Workspace,
    /// Only a private `/tmp` (plan mode).
    ReadOnly,
    /// No sandbox: the person's choice.
    Off,
}

impl Mode {
    /// The mode as `--sandbox` and config files spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Workspace => "workspace",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }

    /// How much a mode lets a command change: read-only < workspace < off.
    pub fn looseness(self) -> u8 {
        match self {
            Self::ReadOnly => 0,
            Self::Workspace => 1,
            Self::Off => 2,
        }
    }
}

/// What commands may do, as the person (and, only stricter, the workspace) set it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    pub mode: Mode,
    /// Whether commands may reach the network (`--network`, config `network = true`).
    pub network: bool,
    /// Folders outside the workspace that commands may write (the person's own config only).
    pub writable_roots: Vec<PathBuf>,
    /// How many processes a command may have at once; `None`: [`process_limit::default_limit`].
    pub max_processes: Option<u64>,
}

impl Policy {
    /// The folders commands of `workspace` may write under this policy, whatever the mode: no
    /// program keel runs outside the sandbox is taken from them ([`crate::tools::programs`]).
    pub fn writable_places(&self, workspace: &Path) -> Vec<PathBuf> {
        std::iter::once(workspace.to_path_buf())
            .chain(self.writable_roots.iter().cloned())
            .collect()
    }

    /// How many processes a command may have at once.
    pub fn process_limit(&self) -> u64 {
        self.max_processes.unwrap_or_else(process_limit::default_limit)
    }

    /// The policy with at most `mode`'s freedom (plan mode asks for `ReadOnly`).
    pub fn at_most(&self, mode: Mode) -> Self {
        let mut policy = self.clone();
        if mode.looseness() < policy.mode.looseness() {
            policy.mode = mode;
        }
        policy
    }
}

/// A file bound read-only over a path for one command ([`Sandbox::launch_with`]): a private
/// copy over the file it was made from, say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    /// What is seen: a file outside every folder commands may write.
    pub source: PathBuf,
    /// Where it is seen, inside the sandbox.
    pub target: PathBuf,
}

/// Whether the sandbox can be set up on this machine, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// `bwrap` ran a probe command with the namespaces keel asks for.
    Ready { bwrap: PathBuf },
    /// `bwrap` cannot start here (`why_not_bwrap`), and keel's own binary confines commands with
    /// Landlock and seccomp ([`landlock`]); `abi` is the Landlock version the probe found (0 before
    /// it answers).
    Landlock { abi: u32, why_not_bwrap: String },
    /// Neither can: why, in words that name what to install.
    Missing(String),
}

/// The policy plus whether it can be enforced; what the `bash` tool runs commands with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub policy: Policy,
    pub availability: Availability,
    /// Folders that stay read-only even where the policy lets commands write (repositories
    /// below the workspace's top).
    pub read_only: Vec<PathBuf>,
    /// Folders bound onto themselves where commands may write, so that no command can rename
    /// or remove them (the folders above a file a trusted hook runs: `hooks::Hooks::kept`).
    pub pinned: Vec<PathBuf>,
    /// keel's own folders: its config and state, the session's `/tmp`, the note over what the
    /// sandbox covers.
    pub keel: KeelFolders,
    /// Why commands run with no bound on their processes, when the probe found that none can be
    /// kept here (as root without a `pids` cgroup keel can make).
    pub unbounded: Option<String>,
}

/// How the next command will run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Inside the sandbox.
    Confined,
    /// Unconfined, because the person chose `--sandbox off`.
    Off,
    /// Unconfined would be the only way, and the person did not choose it.
    Unavailable,
}

/// The `bwrap` keel's environment names, if it names one.
fn bwrap_from_env() -> Option<std::ffi::OsString> {
    std::env::var_os(BWRAP_VARIABLE).filter(|value| !value.is_empty())
}

/// The `bwrap` program: the one named, else [`DEFAULT_BWRAP`], found on keel's `PATH` outside
/// the folders commands can write (`writable`); why not.
fn bwrap_program(named: Option<&std::ffi::OsStr>, writable: &[PathBuf]) -> Result<PathBuf, String> {
    let named = named.unwrap_or(DEFAULT_BWRAP.as_ref());
    crate::tools::programs::find(named, writable)
}

/// What keel says where no sandbox can be set up: why bwrap cannot (`bwrap`), why Landlock
/// cannot (`landlock`), and what to install.
fn missing(bwrap: &str, landlock: &str) -> Availability {
    Availability::Missing(format!(
        "cannot sandbox commands: {bwrap}; nor with Landlock: {landlock}; {INSTALL_HINT}"
    ))
}

/// What takes over where bwrap cannot start (`why_not_bwrap`), unless keel's environment turns
/// Landlock off; `probe` tries it for real (else it is assumed, and each command's start proves
/// it).
fn instead_of_bwrap(why_not_bwrap: String, probe: Option<&landlock::Spec>) -> Availability {
    if landlock::turned_off() {
        let off = format!("{}={} turns it off", landlock::VARIABLE, landlock::OFF);
        return missing(&why_not_bwrap, &off);
    }
    let Some(spec) = probe else {
        return Availability::Landlock { abi: 0, why_not_bwrap };
    };
    let Some(keel) = crate::tools::supervisor::program() else {
        return missing(&why_not_bwrap, "keel's own binary is not known");
    };
    match landlock::probe(keel, spec) {
        Ok(abi) => Availability::Landlock { abi, why_not_bwrap },
        Err(why) => missing(&why_not_bwrap, &why),
    }
}

impl Sandbox {
    /// No sandbox, as `--sandbox off` asks.
    pub fn off() -> Self {
        Self {
            policy: Policy { mode: Mode::Off, ..Policy::default() },
            availability: Availability::Missing("the sandbox is off".into()),
            read_only: Vec::new(),
            pinned: Vec::new(),
            keel: KeelFolders::default(),
            unbounded: None,
        }
    }

    /// The sandbox for `policy`, probed with the `bwrap` program named by `bwrap` (the
    /// [`BWRAP_VARIABLE`] setting, else [`DEFAULT_BWRAP`]). With `--sandbox off` nothing is probed.
    /// Where bwrap cannot start, Landlock is probed instead (with nothing writable and nothing
    /// hidden), unless keel's environment turns it off ([`landlock::VARIABLE`]).
    pub fn probe(policy: Policy, bwrap: Option<&std::ffi::OsStr>) -> Self {
        let writable = policy.writable_roots.clone();
        Self::probe_in(policy, bwrap, &writable, &landlock::Spec::default())
    }

    /// [`Sandbox::probe`], finding `bwrap` outside the folders commands may write (`writable`),
    /// and probing Landlock, where bwrap cannot start, with `spec`.
    fn probe_in(
        policy: Policy,
        bwrap: Option<&std::ffi::OsStr>,
        writable: &[PathBuf],
        spec: &landlock::Spec,
    ) -> Self {
        if policy.mode == Mode::Off {
            return Self { policy, ..Self::off() };
        }
        let availability = match bwrap_program(bwrap, writable) {
            Ok(program) => match bwrap::probe(&program) {
                Ok(()) => Availability::Ready { bwrap: program },
                Err(why) => instead_of_bwrap(why, Some(spec)),
            },
            Err(why) => instead_of_bwrap(why, Some(spec)),
        };
        let unbounded = process_limit::unbounded(&availability, policy.process_limit());
        Self { policy, availability, unbounded, ..Self::off() }
    }

    /// What [`Sandbox::for_commands`] finds where `bwrap` works (where no `bwrap` is found:
    /// where Landlock works), without trying it: the sandbox a command may start in while the
    /// probe runs. The command's own start proves it, since a sandbox that does not come up runs
    /// nothing (`bash`'s `sandbox_down`).
    pub fn assumed_for_commands(policy: Policy, workspace: &Path, keel: KeelFolders) -> Self {
        if policy.mode == Mode::Off {
            return Self { policy, keel, ..Self::off() };
        }
        let availability =
            match bwrap_program(bwrap_from_env().as_deref(), &policy.writable_places(workspace)) {
                Ok(bwrap) if bwrap.components().count() == 1 || bwrap.is_file() => {
                    Availability::Ready { bwrap }
                }
                Ok(bwrap) => {
                    instead_of_bwrap(format!("`{}` does not exist", bwrap.display()), None)
                }
                Err(why) => instead_of_bwrap(why, None),
            };
        Self {
            policy,
            availability,
            read_only: Vec::new(),
            pinned: Vec::new(),
            keel,
            unbounded: None,
        }
    }

    /// The sandbox keel's front ends run commands of `workspace` in: `policy`, probed with the
    /// `bwrap` that keel's own environment names (found outside what commands may write),
    /// keeping keel's own folders (`keel`) out of reach wherever they live.
    pub fn for_commands(policy: Policy, workspace: &Path, keel: KeelFolders) -> Self {
        let writable = policy.writable_places(workspace);
        let spec = landlock::spec(&policy, workspace, &[], &keel);
        let probed = Self::probe_in(policy.clone(), bwrap_from_env().as_deref(), &writable, &spec);
        Self {
            availability: probed.availability,
            unbounded: probed.unbounded,
            ..Self::assumed_for_commands(policy, workspace, keel)
        }
    }

    /// This sandbox with at most `mode`'s freedom; with the sandbox off, as it is (plan mode
    /// then falls back to the guard's read-only check).
    pub fn at_most(&self, mode: Mode) -> Self {
        if self.confinement() == Confinement::Off {
            return self.clone();
        }
        Self { policy: self.policy.at_most(mode), ..self.clone() }
    }

    pub fn confinement(&self) -> Confinement {
        match (&self.availability, self.policy.mode) {
            (_, Mode::Off) => Confinement::Off,
            (Availability::Ready { .. } | Availability::Landlock { .. }, _) => {
                Confinement::Confined
            }
            (Availability::Missing(_), _) => Confinement::Unavailable,
        }
    }

    /// What commands cannot do under Landlock that they could under bwrap, in words.
    pub fn landlock_limits(&self) -> String {
        let network = if self.policy.network { "" } else { ", nor reach even the loopback" };
        format!(
            "they cannot make, remove or rename anything at the workspace's top or in .git, nor \
             write /tmp by name (their temporary folder is $TMPDIR){network}"
        )
    }

    /// Whether Landlock confines commands (bwrap cannot run here).
    pub fn is_landlock(&self) -> bool {
        self.confinement() == Confinement::Confined
            && matches!(self.availability, Availability::Landlock { .. })
    }

    /// Why commands cannot be confined, when they cannot and the person did not turn it off.
    pub fn problem(&self) -> Option<&str> {
        match (&self.availability, self.policy.mode) {
            (Availability::Missing(why), Mode::Workspace | Mode::ReadOnly) => Some(why),
            _ => None,
        }
    }

    /// How a supervisor starts a command of `workspace` under this sandbox: through it when it
    /// confines commands, directly ([`Launch::default`]) when they run unconfined.
    pub fn launch(&self, workspace: &Path) -> Launch {
        let Some(keel) = crate::tools::supervisor::program() else {
            return Launch::default();
        };
        if self.confinement() != Confinement::Confined {
            return Launch::default();
        }
        match &self.availability {
            Availability::Ready { bwrap } => {
                let setup = bwrap::Setup {
                    bwrap,
                    workspace,
                    keel,
                    read_only: &self.read_only,
                    pinned: &self.pinned,
                    folders: &self.keel,
                };
                bwrap::launch(&self.policy, &setup)
            }
            Availability::Landlock { .. } => {
                let spec = landlock::spec(&self.policy, workspace, &self.read_only, &self.keel);
                landlock::launch(&self.policy, keel, &spec)
            }
            Availability::Missing(_) => Launch::default(),
        }
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

    /// As [`Sandbox::launch`], with each of `overlays` bound read-only over its path for this
    /// command alone, where the sandbox can bind (bwrap); `true` when it could. Where it cannot
    /// (commands run unconfined, or under a sandbox without mounts) the launch is
    /// [`Sandbox::launch`]'s, and the caller must not count on the overlays — but for an
    /// overlay seen at its own path (a hook's input in the host's `/tmp`), which Landlock lets
    /// the command read where it lies.
    pub fn launch_with(&self, workspace: &Path, overlays: &[Overlay]) -> (Launch, bool) {
        if let (Availability::Landlock { .. }, Confinement::Confined, Some(keel)) =
            (&self.availability, self.confinement(), crate::tools::supervisor::program())
        {
            let mut spec = landlock::spec(&self.policy, workspace, &self.read_only, &self.keel);
            let in_place = overlays.iter().filter(|overlay| overlay.source == overlay.target);
            spec.readable.extend(in_place.map(|overlay| overlay.source.clone()));
            return (landlock::launch(&self.policy, keel, &spec), false);
        }
        let mut launch = self.launch(workspace);
        let through_bwrap = matches!(&self.availability, Availability::Ready { bwrap }
            if launch.prefix.first().is_some_and(|program| Path::new(program) == bwrap));
        let bound = through_bwrap && bwrap::overlay(&mut launch.prefix, overlays);
        (launch, bound)
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
    use super::*;

    #[test]
    fn plan_mode_only_tightens() {
        let policy = Policy { mode: Mode::Workspace, ..Policy::default() };
        assert_eq!(policy.at_most(Mode::ReadOnly).mode, Mode::ReadOnly);
        let off = Policy { mode: Mode::Off, ..Policy::default() };
        assert_eq!(off.at_most(Mode::ReadOnly).mode, Mode::ReadOnly);
        let read_only = Policy { mode: Mode::ReadOnly, ..Policy::default() };
        assert_eq!(read_only.at_most(Mode::Workspace).mode, Mode::ReadOnly);
    }

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
