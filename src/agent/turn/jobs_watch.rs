//! While a background job a command left runs on after its turn, and as each ends, the agent
//! looks at what it may have left in the workspace's repositories — a `.git/commondir`, a
//! `sub/.git` — every few seconds: what each turn's end looks for, in the window between turns.
//! What appears again where keel removed it, while no command runs, only a job can have made:
//! keel then stops every job, and says so at once.

use crate::runtime::supervisor::jobs;
use std::time::Duration;

/// How often the agent looks while a job lives.
const LOOK_EVERY: Duration = Duration::from_secs(3);

/// Whether a look is wanted: a job lives, or one ended since the look that saw `seen` ended.
pub(in crate::agent) fn watching(seen: usize) -> bool {
    jobs::live() > 0 || jobs::ended() != seen
}

/// Waits until the next look is due: a job ended since `seen`, or [`LOOK_EVERY`] passed.
pub(in crate::agent) async fn next_look(seen: usize) {
    if jobs::ended() == seen {
        jobs::one_ended_within(LOOK_EVERY).await;
    }
}
