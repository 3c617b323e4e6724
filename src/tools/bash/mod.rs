//! The `bash` tool: one shell command in the workspace, bounded in time and in memory.
//!
//! The command runs as `bash -c` in the workspace root under a [supervisor](crate::runtime::supervisor):
//! in a session of its own with no controlling terminal, stdin from the null device, without the
//! provider keys in its environment ([`environment`](crate::runtime::environment)), and with every process it starts — also
//! those that leave its process group or session — killed on timeout, on the person's interrupt,
//! when the call is dropped, and when keel exits or is killed. Output is read while it streams
//! ([`watch`]): forwarded to the tool pane, and kept in capped buffers so a command that prints
//! gigabytes costs the same memory as one that prints a line. When the shell exits while
//! background children still hold its output open, keel waits a moment, then stops them rather
//! than hang; background jobs whose output goes elsewhere (a server, say) keep running until they
//! end or keel does.
//!
//! In the sandbox the shell always starts held, at the sandbox's last step: its word that it is
//! ready is how keel knows the sandbox came up (a sandbox that could not be set up ran nothing:
//! `sandbox_down`), and a command with a [gate](crate::runtime::gate) (undo's snapshot of the workspace
//! being taken) is let go only once the gate opens, its sandbox set up meanwhile. Unconfined, a
//! command with a gate starts once the gate is open. The guard ([`guard`]) judges only a command
//! that runs unconfined (`--sandbox off`, or no sandbox and the person said yes): in the
//! sandbox the kernel decides what a command can reach.

pub mod hint;
mod report;
pub mod tool;
mod watch;

use super::{CommandRun, ToolContext, ToolOutcome};
use crate::runtime::environment;
use crate::runtime::sandbox::Sandbox;
use crate::runtime::supervisor::{KillReport, ShellStart, Supervised};
use crate::runtime::{guard, programs};
use report::Ending;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;
use watch::{Session, Watched};

/// How long a command may run when the model does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest the model may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// The shortest timeout keel grants, so a `timeout_ms` of 0 still lets the command start.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(100);
/// How long keel waits, once the shell ended, for its supervisor to say every process of the
/// command is gone, before it counts the command as having left some running. The supervisor
/// says so within a millisecond or two on an idle machine, so this is only ever waited out by a
/// command that did leave a process, or on a machine so busy that the supervisor's word is late:
/// there, too short a wait counted a finished command as one that left a job, and the turn lost
/// its early closing snapshot.
const ALL_GONE_GRACE: Duration = Duration::from_millis(100);

/// The arguments the model sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BashArgs {
    pub command: String,
    pub timeout_ms: Option<u64>,
}

/// The JSON schema the model reads. Every byte of it goes with every request: it says what
/// the model cannot guess, and the errors explain the rest when they happen.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout_ms": {
                "type": "integer",
                "description": format!(
                    "Default {}, max {}.",
                    DEFAULT_TIMEOUT.as_millis(),
                    MAX_TIMEOUT.as_millis()
                )
            }
        },
        "required": ["command"]
    })
}

/// What the model reads of the tool, besides its schema: where a command runs and what it may
/// do there (the sandbox; the result's hint names the setting when a command fails for it). The
/// result's shape, and a long output's cut, the model sees in the result itself.
pub const DESCRIPTION: &str = "Run `bash -c` in the workspace root, non-interactive (no stdin or \
terminal), writing only in the workspace and $TMPDIR, with no network, unless the person allows \
more. Killed with its children at the timeout.";

/// The timeout the model asked for, within keel's bounds.
pub fn timeout_for(args: &BashArgs) -> Duration {
    args.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis).clamp(MIN_TIMEOUT, MAX_TIMEOUT)
}

/// Runs the command in `sandbox` and reports how it ended. An unavailable sandbox runs the
/// command unconfined: the approval rules let that happen only when the person said yes to it.
pub async fn run(
    root: &Path,
    args: &BashArgs,
    sandbox: &Sandbox,
    ctx: &ToolContext<'_>,
) -> ToolOutcome {
    run_within(root, &args.command, timeout_for(args), sandbox, ctx).await
}

/// Runs `command` as [`run`] does, killed after `timeout`: a board item's check, whose time is
/// the person's setting (`check_timeout`), not the model's.
pub async fn run_within(
    root: &Path,
    command: &str,
    timeout: Duration,
    sandbox: &Sandbox,
    ctx: &ToolContext<'_>,
) -> ToolOutcome {
    let launch = sandbox.shell_start(root);
    let sandboxed = !launch.prefix.is_empty();
    // The kernel confines a sandboxed command; the guard is the only line where none does.
    if !sandboxed && let Err(reason) = guard::check_command_in(command, root) {
        return ToolOutcome::error(format!(
            "Refused to run this command: {reason}. keel does not run it in any approval mode; \
             if it is really wanted, the person can run it themselves."
        ));
    }
    if ctx.cancel.is_cancelled() {
        return ToolOutcome::error(NOT_STARTED);
    }
    let shell = match programs::find(BASH.as_ref(), &sandbox.policy.writable_places(root)) {
        Ok(shell) => shell,
        Err(why) => return ToolOutcome::error(format!("Could not start the command: {why}.")),
    };
    let launch = ShellStart { shell: Some(shell), ..launch };
    if let Some(gate) = &ctx.gate
        && !sandboxed
        && !gate.opened(&ctx.cancel).await
    {
        return ToolOutcome::error(NOT_STARTED);
    }
    let mut started = Instant::now();
    let (mut supervised, output) =
        match Supervised::start(command, root, &launch, environment::apply).await {
            Ok(started) => started,
            Err(err) => {
                // A sandbox whose program cannot even start ran nothing, as one that did not
                // come up.
                let mut failed = ToolOutcome::error(format!("Could not start the command: {err}."));
                failed.command.sandbox_down = sandboxed;
                return failed;
            }
        };
    let mut held = Duration::ZERO;
    if sandboxed {
        let open = async {
            match &ctx.gate {
                Some(gate) => gate.opened(&ctx.cancel).await,
                None => true,
            }
        };
        match supervised.release(open).await {
            Ok(waited) => held = waited,
            Err(_) => {
                supervised.kill().await;
                return ToolOutcome::error(NOT_STARTED);
            }
        }
        // Held is keel's time: the command's clock and its timeout start without it.
        started += held;
    }
    let mut session = Session::new(output, ctx.live_output.clone());
    let watched = session.watch(&mut supervised, started + timeout, ctx).await;
    let sandbox_down = sandboxed
        && !supervised.came_up()
        && matches!(watched, Watched::Finished(_) | Watched::Lost);
    let (ending, left_running) = match watched {
        Watched::Finished(status) => {
            // A clean exit: whatever the command left running in the background with its output
            // redirected elsewhere was meant to keep running, until it ends or keel does.
            let all_gone = supervised.all_gone_within(ALL_GONE_GRACE).await;
            supervised.detach(!all_gone);
            (Ending::Exited { status, stopped: None }, !all_gone)
        }
        other => {
            let report = supervised.kill().await;
            let left_running = report != KillReport::AllDead;
            session.drain().await;
            let ending = match other {
                Watched::Lingering(status) => Ending::Exited { status, stopped: Some(report) },
                Watched::TimedOut => Ending::TimedOut(timeout, report),
                Watched::Interrupted => Ending::Interrupted(report),
                Watched::Finished(_) | Watched::Lost => Ending::Lost(report),
            };
            (ending, left_running)
        }
    };
    session.flush();
    let command = CommandRun { held, sandbox_down, left_running };
    let mut outcome =
        ToolOutcome { command, ..ending.into_outcome(session.kept(), started.elapsed()) };
    if let Some(hint) = hint::SandboxHint::of(&outcome.for_model, sandbox) {
        let line = hint.line(sandbox.policy.mode);
        for text in [&mut outcome.for_model, &mut outcome.for_display] {
            text.push('\n');
            text.push_str(&line);
            text.push('\n');
        }
    }
    outcome
}

/// The shell every command runs in.
const BASH: &str = "bash";

/// A command stopped before it ran.
const NOT_STARTED: &str = "Command not started: interrupted by user.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_is_clamped() {
        let args = |timeout_ms| BashArgs { command: String::new(), timeout_ms };
        assert_eq!(timeout_for(&args(None)), DEFAULT_TIMEOUT);
        assert_eq!(timeout_for(&args(Some(0))), MIN_TIMEOUT);
        assert_eq!(timeout_for(&args(Some(u64::MAX))), MAX_TIMEOUT);
        assert_eq!(timeout_for(&args(Some(5_000))), Duration::from_millis(5_000));
    }
}
