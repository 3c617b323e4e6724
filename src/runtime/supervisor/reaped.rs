//! The supervisors keel started and has not seen exit, so that keel can wait for them as it
//! ends: a shell gets its prompt back only once nothing keel started is left.

use super::ENTRY_ARG;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::process::Child;

/// How often [`wait_for_all`] looks again.
const LOOK_EVERY: Duration = Duration::from_millis(1);

/// The process ids of supervisors started and not yet waited for.
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Counts `child`, a supervisor just started, until it is waited for.
pub(super) fn started(child: &Child) {
    if let (Some(pid), Ok(mut live)) = (child.id(), LIVE.lock()) {
        live.push(pid);
    }
}

/// Waits for the supervisor `child` to exit, and stops counting it.
pub(super) async fn wait(child: &mut Child) {
    let pid = child.id();
    let _ = child.wait().await;
    if let (Some(pid), Ok(mut live)) = (pid, LIVE.lock()) {
        live.retain(|live| *live != pid);
    }
}

/// Reaps every supervisor still counted, waiting at most `within` for those that have not
/// exited; call it once no async runtime waits for them.
pub(super) fn wait_for_all(within: Duration) {
    let Ok(mut live) = LIVE.lock() else { return };
    // A supervisor dropped unwaited was reaped by the runtime, and its pid may since be another
    // child's (an MCP server's): only a supervisor, or a zombie, is waited for.
    let mut left: Vec<u32> = std::mem::take(&mut *live)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| {
                line.is_empty()
                    || line.split(|byte| *byte == 0).any(|arg| arg == ENTRY_ARG.as_bytes())
            })
        })
        .collect();
    let until = Instant::now() + within;
    loop {
        left.retain(|pid| {
            let Ok(pid) = i32::try_from(*pid) else { return false };
            matches!(
                waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)),
                Ok(WaitStatus::StillAlive)
            )
        });
        if left.is_empty() || Instant::now() >= until {
            return;
        }
        std::thread::sleep(LOOK_EVERY);
    }
}
