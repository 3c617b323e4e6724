//! The saved sessions: the one a launch saves to (new, or the one `--continue`/`--resume`
//! names), and the sub-commands that read them and launch nothing, `keel sessions` and
//! `keel undo`.

use super::UsageError;
use keel::agent::Sessions;
use keel::agent::journal::{self, SessionError, SessionStore};
use keel::cli::Cli;
use keel::runtime::Workspace;
use keel::visible::visible;
use std::process::ExitCode;
use std::time::Duration;

/// The workspace's sessions, for `keel sessions` and `keel undo`.
fn store_of(workspace: &Workspace) -> color_eyre::Result<SessionStore> {
    let store =
        SessionStore::from_env(workspace.root()).map_err(|err| UsageError(err.to_string()))?;
    let mut notices = Vec::new();
    adopt_legacy_logs(&store, &mut notices);
    for notice in notices {
        eprintln!("keel: {}", visible(&notice));
    }
    Ok(store)
}

/// Moves logs an older keel kept in the workspace out of it.
pub(super) fn adopt_legacy_logs(store: &SessionStore, notices: &mut Vec<String>) {
    match store.adopt_legacy_logs() {
        Ok(moved) => notices.extend(moved),
        Err(err) => notices.push(format!(
            "could not move the old session logs out of {}: {err}",
            journal::LEGACY_DIR
        )),
    }
}

/// `keel sessions`, the one written last at the end.
pub(super) fn list(workspace: &Workspace) -> color_eyre::Result<ExitCode> {
    let sessions = store_of(workspace)?.list()?;
    if sessions.is_empty() {
        println!("No saved sessions for {}.", visible(&workspace.root().display().to_string()));
    }
    for info in sessions {
        let started = std::time::UNIX_EPOCH + Duration::from_secs(info.started_at);
        let prompt: String =
            info.first_prompt.lines().next().unwrap_or_default().chars().take(60).collect();
        println!(
            "{}  {}  {:>2}/{:<2}  {}",
            visible(&info.id),
            humantime::format_rfc3339_seconds(started),
            info.done,
            info.total,
            visible(&prompt)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `keel undo`: takes back what the last prompt that changed files changed.
pub(super) fn undo(workspace: &Workspace) -> color_eyre::Result<ExitCode> {
    let store = store_of(workspace)?;
    let report = journal::undo_newest(&store, workspace).map_err(|err| match err {
        SessionError::Locked { .. } => {
            UsageError(format!("{err}: undo there (/undo), or once it has ended"))
        }
        err => UsageError(err.to_string()),
    })?;
    println!("{}", visible(&report.summary()));
    Ok(ExitCode::SUCCESS)
}

/// The session to save to: a new one, or the one `--continue`/`--resume` names, replayed. A demo
/// in a throwaway folder saves nothing. What the person should know goes to `notices`;
/// `writable` are the folders commands may write, where undo's `git` is never taken from.
pub(super) fn open(
    cli: &Cli,
    workspace: &Workspace,
    writable: &[std::path::PathBuf],
    throwaway: bool,
    notices: &mut Vec<String>,
) -> color_eyre::Result<Sessions> {
    let resuming = cli.continue_session || cli.resume.is_some();
    if throwaway {
        return Ok(Sessions::Off);
    }
    let store = match SessionStore::from_env(workspace.root()) {
        Ok(store) => store.commands_write(writable),
        Err(err) if !resuming => {
            notices.push(format!("is not saving this session: {err}"));
            return Ok(Sessions::Off);
        }
        Err(err) => return Err(UsageError(err.to_string()).into()),
    };
    adopt_legacy_logs(&store, notices);
    let opened = if let Some(id) = &cli.resume {
        store.open(id)
    } else if cli.continue_session {
        store.open_newest()
    } else {
        return Ok(Sessions::New(store));
    };
    match opened {
        Ok((log, restored)) => {
            for warning in &restored.warnings {
                eprintln!("keel: {}", visible(warning));
            }
            Ok(Sessions::Resume(store, log, restored))
        }
        // The TUI offers what `-p` can only suggest: a session of its own.
        Err(err @ SessionError::Locked { .. }) if cli.print.is_none() => {
            notices.push(format!(
                "started a new session: {err}, and a session is written by one process at a time"
            ));
            Ok(Sessions::New(store))
        }
        Err(err @ SessionError::Locked { .. }) => Err(UsageError(format!(
            "{err}; a session is written by one process at a time. Leave out --continue or \
             --resume to start a new session, or wait for that process to end."
        ))
        .into()),
        Err(err) => Err(UsageError(err.to_string()).into()),
    }
}
