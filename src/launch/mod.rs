//! Starting keel: [`prepare`] turns the command line into [`Running`] — the agent spawned with
//! its provider, tools and session, and the front end it goes to — or answers a sub-command on
//! its own; [`Running::run`] hands the agent to that front end and waits for it.

mod hooks;
mod prepare;
mod provider;
mod sandbox;
mod sandbox_report;
mod sessions;
mod sub_commands;
mod workspace;

pub use prepare::prepare;

use keel::agent::{AgentHandle, Command, TurnOutcome};
use keel::headless;
use keel::runtime::sandbox::Probing;
use keel::tools::mcp;
use keel::tui::{self, TuiOptions};
use keel::visible::visible;
use std::process::ExitCode;

/// Exit code for a run that failed.
pub const EXIT_FAILED: u8 = 1;

/// A problem with how keel was started, as opposed to a run that failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// What the command line asked for.
pub enum Prepared {
    /// A sub-command, answered: its exit code.
    Done(ExitCode),
    /// The agent, ready for its front end.
    Running(Box<Running>),
}

/// The agent, running, and the front end it goes to.
pub struct Running {
    handle: AgentHandle,
    front: Front,
    /// The MCP servers, stopped when the front end is done.
    mcp: mcp::Hub,
    /// The demo's throwaway folder, removed at the end.
    demo_dir: Option<tempfile::TempDir>,
    /// The session's `/tmp`, removed at the end.
    session_tmp: Option<keel::runtime::sandbox::session_tmp::SessionTmp>,
}

/// Which front end, and what it starts with.
enum Front {
    /// `keel -p`: the first command, how to print, and the sandbox being probed.
    Headless { start: Command, printing: headless::Printing, sandbox: Probing },
    /// The TUI: what to send at once (a prompt given, the demo), if anything.
    Tui { start: Option<Command>, options: TuiOptions },
}

impl Running {
    /// Runs the front end to its end; the exit code says how the run went.
    pub async fn run(self) -> color_eyre::Result<ExitCode> {
        let Self { handle, front, mcp, demo_dir, session_tmp } = self;
        let code = match front {
            Front::Headless { start, printing, sandbox } => {
                // Said once the probe answers, which the run does not wait for.
                let told = tokio::spawn(async move {
                    for notice in sandbox.settled().await.notices() {
                        eprintln!("keel: {}", visible(&notice));
                    }
                });
                // No screen shows the servers: a failed one is told on stderr.
                let hub = mcp.clone();
                tokio::spawn(async move {
                    hub.settled().await;
                    for server in hub.servers() {
                        let failed = mcp::listing::failure_line(&server);
                        for line in failed.into_iter().chain(mcp::listing::capped_line(&server)) {
                            eprintln!("keel: {line}");
                        }
                    }
                });
                let result = headless::run(handle, start, printing).await;
                let _ = told.await;
                let result = result?;
                // A reader that left (`| head`) took what it wanted: not a failure. A session
                // that could not be saved is one, whatever the turn did.
                if (result.outcome == TurnOutcome::Success && !result.not_saved)
                    || result.reader_gone
                {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_FAILED)
                }
            }
            Front::Tui { start, options } => {
                if let Some(command) = start {
                    let _ = handle.commands.send(command);
                }
                match tui::run(handle, options).await? {
                    // As a shell reports a process a signal ended: 128 + its number (SIGTERM: 143).
                    Some(signal) => {
                        ExitCode::from(u8::try_from(128 + signal).unwrap_or(EXIT_FAILED))
                    }
                    None => ExitCode::SUCCESS,
                }
            }
        };
        mcp.shutdown();
        drop(demo_dir);
        drop(session_tmp);
        Ok(code)
    }
}
