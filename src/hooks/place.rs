//! Where one hook runs, and with what: in the command sandbox, as commands do, or as the
//! person's own program.
//!
//! A workspace's hook is code the person did not write, whatever its hash: the file it names can
//! import, source or `cd` into files a command rewrites. So it runs as a command does — in the
//! session's sandbox ([`Sandbox::launch`]), with the commands' environment
//! (`runtime::environment::apply`) — and only the hash decides whether it runs at all. So
//! does a hook of the person's own whose command names a path inside the workspace
//! (`command_paths::names_workspace`): what it runs there, a command can rewrite. Where commands
//! cannot be confined and the person did not choose `--sandbox off`, such a hook does not run.
//!
//! The person's other hooks run as their own programs, with their environment less what no
//! program keel starts gets, and a `PATH` without the entries commands could plant a program in
//! (empty, relative, or inside the workspace or a `writable_roots` folder: the rule
//! `runtime::programs` applies to what keel itself starts), so that an activated `.venv/bin` cannot
//! hand them a program of the workspace's.
//!
//! A hook's stdin is the event's JSON, in a private file outside every folder commands may write
//! (the host's temporary folder, which the sandbox replaces with the session's own `/tmp`): under
//! bwrap it is bound read-only at its own path for that hook alone; a sandbox without mounts
//! reads it where it is. Under bwrap, too, each file a trusted workspace hook names is seen
//! through its private copy (`reading::read`), bound over it.

use super::command_paths::names_workspace;
use super::config::{HookSpec, Origin};
use super::reading::Reading;
use crate::runtime::environment;
use crate::runtime::sandbox::{Confinement, Overlay, Sandbox};
use crate::runtime::supervisor::ShellStart;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use tokio::process::Command;

/// The shell every hook runs in.
const BASH: &str = "bash";
/// What a new input file's name starts with.
const INPUT_PREFIX: &str = "keel-hook-";
/// Where the sandbox shows the session's `/tmp`.
const SANDBOX_TMP: &str = "/tmp";
/// The variables naming the workspace, keel's and Claude Code's.
pub const PROJECT_DIR_VARS: [&str; 2] = ["KEEL_PROJECT_DIR", "CLAUDE_PROJECT_DIR"];

/// Where a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In the command sandbox, with the commands' environment, as a command would.
    Sandbox,
    /// As the person's own program.
    Person,
}

impl Place {
    /// Where `spec` of `workspace` runs: the workspace's hooks, and the person's that name a
    /// path inside it, in the sandbox.
    pub fn of(spec: &HookSpec, workspace: &Path) -> Self {
        match spec.origin {
            Origin::Workspace => Self::Sandbox,
            Origin::Person if names_workspace(&spec.command, workspace) => Self::Sandbox,
            Origin::Person => Self::Person,
        }
    }
}

/// The environment a hook starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Environment {
    /// The commands' own.
    Commands,
    /// The person's, with this `PATH` (when keel has one).
    Persons { path: Option<OsString> },
}

/// How one hook run starts: its launch, its environment, its input.
#[derive(Debug)]
pub struct Plan {
    launch: ShellStart,
    /// The files it names are seen through their private copies.
    from_copies: bool,
    environment: Environment,
    workspace: PathBuf,
    input: tempfile::NamedTempFile,
    /// What bwrap makes in the session's `/tmp` to bind the input on, removed after the run.
    mount_point: Option<PathBuf>,
}

impl Plan {
    /// How a hook runs in `workspace` at `place` under `sandbox`, reading `input` on its stdin;
    /// `reading`: a trusted workspace hook's files as hashed, with their private copies. `Err`
    /// says why it cannot run.
    pub fn new(
        place: Place,
        sandbox: &Sandbox,
        workspace: &Path,
        reading: Option<&Reading>,
        input: &[u8],
    ) -> Result<Self, String> {
        let input =
            input_file(input).map_err(|err| format!("its input could not be written: {err}"))?;
        let shell = crate::runtime::programs::find(
            BASH.as_ref(),
            &sandbox.policy.writable_places(workspace),
        )?;
        let unconfined = ShellStart { shell: Some(shell.clone()), ..ShellStart::default() };
        let mut plan = Self {
            launch: unconfined,
            from_copies: false,
            environment: Environment::Commands,
            workspace: workspace.to_path_buf(),
            input,
            mount_point: None,
        };
        if place == Place::Person {
            let path = std::env::var_os("PATH").map(|path| {
                crate::runtime::programs::path_outside(
                    Some(&path),
                    &sandbox.policy.writable_places(workspace),
                )
            });
            plan.environment = Environment::Persons { path };
            return Ok(plan);
        }
        match sandbox.confinement() {
            Confinement::Off => return Ok(plan),
            Confinement::Unavailable => {
                let why = sandbox.problem().unwrap_or("commands cannot be confined here");
                return Err(format!("it runs in the sandbox, as commands do, and {why}"));
            }
            Confinement::Confined => {}
        }
        let input_path = plan.input.path().to_path_buf();
        let mut overlays: Vec<Overlay> = reading.map(|r| r.copies.clone()).unwrap_or_default();
        overlays.push(Overlay { source: input_path.clone(), target: input_path.clone() });
        let (launch, bound) = sandbox.shell_start_with(workspace, &overlays);
        if bound && let Some(uncopied) = reading.and_then(|r| r.uncopied.first()) {
            return Err(format!("`{uncopied}` could not be copied for it to run from"));
        }
        plan.launch = ShellStart { shell: Some(shell), ..launch };
        plan.from_copies = bound;
        if bound {
            plan.mount_point = mount_point(&input_path, sandbox);
        }
        Ok(plan)
    }

    /// How the supervisor starts the hook.
    pub fn launch(&self) -> &ShellStart {
        &self.launch
    }

    /// Whether the hook sees each file it names through the private copy made as it was
    /// hashed; where not, what ran must be checked against the hash afterwards.
    pub fn from_copies(&self) -> bool {
        self.from_copies
    }

    /// The file the hook's shell reads as its stdin, at the same path inside as out.
    pub fn input(&self) -> &Path {
        self.input.path()
    }

    /// Gives `cmd` the hook's environment.
    pub fn configure(&self, cmd: &mut Command) {
        match &self.environment {
            Environment::Commands => environment::apply(cmd),
            Environment::Persons { path } => {
                environment::apply_persons(cmd);
                if let Some(path) = path {
                    cmd.env("PATH", path);
                }
            }
        }
        for name in PROJECT_DIR_VARS {
            cmd.env(name, &self.workspace);
        }
    }
}

impl Drop for Plan {
    fn drop(&mut self) {
        // Only the empty file bwrap made: anything else there is a command's.
        if let Some(point) = &self.mount_point
            && point.symlink_metadata().is_ok_and(|meta| meta.is_file() && meta.len() == 0)
        {
            let _ = std::fs::remove_file(point);
        }
    }
}

/// The event's JSON in a private temporary file, for the hook's stdin.
fn input_file(input: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write as _;
    let mut file = tempfile::Builder::new().prefix(INPUT_PREFIX).tempfile()?;
    file.write_all(input)?;
    file.flush()?;
    Ok(file)
}

/// Where bwrap makes the file it binds `input` on: in the session's `/tmp`, when the input lies
/// in the `/tmp` the sandbox replaces with it.
fn mount_point(input: &Path, sandbox: &Sandbox) -> Option<PathBuf> {
    let inside = input.strip_prefix(SANDBOX_TMP).ok()?;
    let tmp = sandbox.keel.tmp.as_deref().filter(|tmp| tmp.is_dir())?;
    Some(tmp.join(inside))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::{files, folder};

    #[test]
    fn the_workspaces_hooks_and_the_persons_that_name_a_path_in_it_run_in_the_sandbox() {
        let (_dir, work) = &folder();
        files(work, &[("hooks/x", "")]);
        let place = |command: &str, origin| Place::of(&HookSpec::for_test(command, origin), work);
        assert_eq!(place("~/bin/check", Origin::Workspace), Place::Sandbox);
        assert_eq!(place("~/bin/check", Origin::Person), Place::Person);
        assert_eq!(place("cargo fmt --check", Origin::Person), Place::Person);
        for names_it in [
            "cd hooks && ./x",
            "bash hooks/x",
            "\"$CLAUDE_PROJECT_DIR\"/hooks/missing.sh",
            "${KEEL_PROJECT_DIR}/y",
            "$PWD/hooks/x",
            "cd $PWD",
        ] {
            assert_eq!(place(names_it, Origin::Person), Place::Sandbox, "{names_it}");
        }
        let absolute = format!("{}/not-yet/made.sh", work.canonicalize().unwrap().display());
        assert_eq!(place(&absolute, Origin::Person), Place::Sandbox);
        assert_eq!(place("cat ../outside /etc/hosts", Origin::Person), Place::Person);
    }

    #[test]
    fn a_workspace_hook_does_not_run_where_commands_cannot_be_confined_unless_the_person_said_off()
    {
        let work = tempfile::tempdir().unwrap();
        let missing = Sandbox {
            policy: crate::runtime::sandbox::Policy::default(),
            availability: crate::runtime::sandbox::Availability::Missing("no bwrap here".into()),
            ..Sandbox::off()
        };
        let why = Plan::new(Place::Sandbox, &missing, work.path(), None, b"{}").unwrap_err();
        assert_eq!(why, "it runs in the sandbox, as commands do, and no bwrap here");
        let off = Plan::new(Place::Sandbox, &Sandbox::off(), work.path(), None, b"{}");
        let off = off.unwrap();
        assert!(off.launch().prefix.is_empty() && !off.from_copies());
        assert_eq!(std::fs::read(off.input()).unwrap(), b"{}");
    }
}
