//! The background jobs commands left running, process-wide: how many still live, and how many
//! have ended. A job runs on after its command's answer, and after its turn, writing where the
//! command could; the agent looks at what it may have left in the repository while any lives,
//! and once more as each ends (`agent::turn::jobs_watch`).

use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Jobs whose supervisor has not exited yet.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Jobs whose supervisor has exited, since keel started.
static ENDED: AtomicUsize = AtomicUsize::new(0);
/// Woken as a job ends.
static ONE_ENDED: Notify = Notify::const_new();

/// Counts a job as live until `watch` (its supervisor's watch, [`super::Supervised::detach`])
/// ends.
pub(crate) fn left_running(watch: JoinHandle<()>) {
    LIVE.fetch_add(1, Ordering::SeqCst);
    let counted = async move {
        let _ = watch.await;
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
