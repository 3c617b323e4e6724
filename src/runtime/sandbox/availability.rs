//! Which sandbox this machine can set up ([`Availability`]): `bwrap` found outside every folder
//! commands may write and tried with a probe command, else Landlock tried through keel's own
//! binary, else none, in words that name what to install. Found once, at start, or assumed while
//! the probe runs.

use super::{KeelFolders, Mode, Policy, Sandbox, bwrap, landlock, process_limit};
use std::path::{Path, PathBuf};

/// The environment variable that names the `bwrap` program (default: `bwrap` on `PATH`, outside
/// every folder commands may write: [`crate::runtime::programs`]). Read from keel's own environment
/// only: commands never see `KEEL_*` variables, and no config file can set it.
pub const BWRAP_VARIABLE: &str = "KEEL_BWRAP";
/// The program used when [`BWRAP_VARIABLE`] is not set.
pub const DEFAULT_BWRAP: &str = "bwrap";
/// What to install when the sandbox cannot be set up.
pub const INSTALL_HINT: &str = "install bubblewrap (`apt-get install bubblewrap`, or your \
    system's `bubblewrap` package), or run with `--sandbox off` to run commands unconfined";

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

/// The `bwrap` keel's environment names, if it names one.
fn bwrap_from_env() -> Option<std::ffi::OsString> {
    std::env::var_os(BWRAP_VARIABLE).filter(|value| !value.is_empty())
}

/// The `bwrap` program: the one named, else [`DEFAULT_BWRAP`], found on keel's `PATH` outside
/// the folders commands can write (`writable`); why not.
fn bwrap_program(named: Option<&std::ffi::OsStr>, writable: &[PathBuf]) -> Result<PathBuf, String> {
    let named = named.unwrap_or(DEFAULT_BWRAP.as_ref());
    crate::runtime::programs::find(named, writable)
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
    let Some(keel) = crate::runtime::supervisor::program() else {
        return missing(&why_not_bwrap, "keel's own binary is not known");
    };
    match landlock::probe(keel, spec) {
        Ok(abi) => Availability::Landlock { abi, why_not_bwrap },
        Err(why) => missing(&why_not_bwrap, &why),
    }
}

impl Sandbox {
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
        // As root the bound is keel's pen, made beside bwrap's probe: neither waits for the other.
        crate::runtime::supervisor::prepare_bound(policy.process_limit());
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
        Self { policy, availability, keel, ..Self::off() }
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
}
