//! The sandbox a launch's commands run in: the configured policy with keel's environment's
//! process bound, keel's own folders and the person's credentials hidden, the session's `/tmp`,
//! and the probe started in the background.

use super::UsageError;
use keel::config::Config;
use keel::runtime::Workspace;
use keel::runtime::sandbox::hidden::{Hidden, Sources};
use keel::runtime::sandbox::session_tmp::SessionTmp;
use keel::runtime::sandbox::{KeelFolders, Mode, Policy, Probing, keel_folders, process_limit};
use std::path::PathBuf;

/// The sandbox of a launch.
pub struct Sandboxing {
    /// The probe, started: the first screen does not wait for it.
    pub probing: Probing,
    /// Where commands may write, where no program keel runs outside the sandbox is taken from.
    pub writable: Vec<PathBuf>,
    /// The session's `/tmp`, removed when the session ends.
    pub session_tmp: Option<SessionTmp>,
}

/// Starts probing the sandbox `config` asks for over `workspace`; what the person should know
/// goes to `notices`.
pub fn start(
    config: &Config,
    workspace: &Workspace,
    env: &dyn Fn(&str) -> Option<String>,
    notices: &mut Vec<String>,
) -> color_eyre::Result<Sandboxing> {
    let mut policy = config.sandbox.clone();
    policy.max_processes = max_processes()?;
    let writable = policy.writable_places(workspace.root());
    let (mut folders, session_tmp) = folders(&policy, env, notices);
    folders.hidden = workspace.hidden().clone();
    let probing = Probing::for_commands(policy, workspace.root(), folders);
    Ok(Sandboxing { probing, writable, session_tmp })
}

/// keel's own folders as the sandbox keeps them, and the session's `/tmp` (made here, removed
/// when the session ends). Without a state folder, or with the sandbox off, each command gets an
/// empty `/tmp` of its own, or the host's.
fn folders(
    policy: &Policy,
    env: &dyn Fn(&str) -> Option<String>,
    notices: &mut Vec<String>,
) -> (KeelFolders, Option<SessionTmp>) {
    let mut folders = KeelFolders::from_env(env);
    let state = keel::state_home::state_dir(env);
    let Some(state) = state.filter(|_| policy.mode != Mode::Off) else { return (folders, None) };
    folders.cover = keel_folders::prepare_cover(&state).ok();
    folders.empty_file = keel_folders::prepare_empty_file(&state).ok();
    let session_tmp = match SessionTmp::create(&state) {
        Ok(tmp) => Some(tmp),
        Err(err) => {
            notices.push(format!(
                "gives each command an empty /tmp of its own: the session's could not be made in \
                 {} ({err})",
                state.display()
            ));
            None
        }
    };
    folders.tmp = session_tmp.as_ref().map(|tmp| tmp.path().to_path_buf());
    (folders, session_tmp)
}

/// The paths hidden from commands and the model's tools, for keel started in `workspace` with
/// `config` and the environment `env`: made once, here.
pub fn hidden(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: &Workspace,
) -> color_eyre::Result<Hidden> {
    let sources = Sources {
        env,
        workspace: workspace.root(),
        hidden_paths: &config.hidden_paths,
        readable_paths: &config.readable_paths,
    };
    Ok(Hidden::new(&sources).map_err(|err| UsageError(err.to_string()))?)
}

/// The bound on a command's processes that keel's environment sets, if it sets one.
fn max_processes() -> color_eyre::Result<Option<u64>> {
    match std::env::var(process_limit::VARIABLE) {
        Err(_) => Ok(None),
        Ok(text) => Ok(Some(process_limit::parse(&text).map_err(UsageError)?)),
    }
}
