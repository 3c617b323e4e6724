//! The background jobs commands left running, process-wide: how many still live, and how many
//! have ended. A job runs on after its command's answer, and after its turn, writing where the
//! command could; the agent looks at what it may have left in the repository while any lives,
//! and once more as each ends (`agent::turn::jobs_watch`), and stops them all ([`stop_all`]) when
//! one keeps making what keel removes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Jobs whose supervisor has not exited yet.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Jobs whose supervisor has exited, since keel started.
static ENDED: AtomicUsize = AtomicUsize::new(0);
/// Woken as a job ends.
static ONE_ENDED: Notify = Notify::const_new();
/// What stops each live job (its supervisor's watch lets go of keel's end of the socket), with
/// the workspace its command ran in.
static STOPS: Mutex<Vec<(PathBuf, CancellationToken)>> = Mutex::new(Vec::new());

/// Counts a job as live until `watch` (its supervisor's watch, [`super::Supervised::detach`])
/// ends; `stop` is what [`stop_all`] cancels to end it, for the workspace `workspace`.
pub(crate) fn left_running(watch: JoinHandle<()>, stop: CancellationToken, workspace: PathBuf) {
    LIVE.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut stops) = STOPS.lock() {
        stops.retain(|(_, stop)| !stop.is_cancelled());
        stops.push((workspace, stop.clone()));
    }
    let counted = async move {
        let _ = watch.await;
        // Ended: nothing left to stop.
        stop.cancel();
        ENDED.fetch_add(1, Ordering::SeqCst);
        LIVE.fetch_sub(1, Ordering::SeqCst);
        ONE_ENDED.notify_waiters();
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn(counted)),
        Err(_) => {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Stops every live job commands of `workspace` left (each supervisor kills all its
/// processes); how many there were.
pub fn stop_all(workspace: &Path) -> usize {
    let Ok(mut stops) = STOPS.lock() else { return 0 };
    let mut stopped = 0;
    stops.retain(|(place, stop)| {
        if place != workspace {
            return !stop.is_cancelled();
        }
        stopped += usize::from(!stop.is_cancelled());
        stop.cancel();
        false
    });
    stopped
}

/// How many jobs live now.
pub fn live() -> usize {
    LIVE.load(Ordering::SeqCst)
}

/// How many jobs have ended since keel started: a count that moved means one ended.
pub fn ended() -> usize {
    ENDED.load(Ordering::SeqCst)
}

/// Waits until a job ends, or `most` passes.
pub async fn one_ended_within(most: std::time::Duration) {
    let _ = tokio::time::timeout(most, ONE_ENDED.notified()).await;
}
