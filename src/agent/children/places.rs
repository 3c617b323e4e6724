//! How many children run at once (`max_parallel_agents`, at least 1): a child takes a place
//! before it starts and gives it back when it ends; the ones waiting start in the order they
//! asked, and none starts once the parent's turn is stopping.

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

/// The places children run in.
#[derive(Debug)]
pub(super) struct Places {
    places: Semaphore,
}

impl Places {
    /// `count` places (at least one).
    pub fn new(count: usize) -> Self {
        Self { places: Semaphore::new(count.max(1)) }
    }

    /// Waits for a place, first come first served; `None` once `cancel` fires.
    pub async fn take(&self, cancel: &CancellationToken) -> Option<SemaphorePermit<'_>> {
        let place = tokio::select! {
            biased;
            () = cancel.cancelled() => return None,
            place = self.places.acquire() => place.ok()?,
        };
        (!cancel.is_cancelled()).then_some(place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::future::join_all;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Runs `children` children in `count` places; each holds its place for a few yields, and
    /// with `stop`, the first to end stops the parent's turn. Which started in which order, and
    /// the most that ran at once.
    async fn run(count: usize, children: usize, stop: bool) -> (Vec<usize>, usize) {
        let cancel = &CancellationToken::new();
        let places = Places::new(count);
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let started = Mutex::new(Vec::new());
        join_all((0..children).map(|child| {
            let (places, now, most, started) = (&places, &now, &most, &started);
            async move {
                let Some(_place) = places.take(cancel).await else { return };
                started.lock().unwrap().push(child);
                let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(running, Ordering::SeqCst);
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                if stop && child == 0 {
                    cancel.cancel();
                }
                now.fetch_sub(1, Ordering::SeqCst);
            }
        }))
        .await;
        (started.into_inner().unwrap(), most.into_inner())
    }

    #[tokio::test]
    async fn at_most_so_many_run_at_once_and_they_start_in_order() {
        let (started, most) = run(3, 7, false).await;
        assert_eq!(started, vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(most, 3);
        let (started, most) = run(1, 4, false).await;
        assert_eq!((started, most), (vec![0, 1, 2, 3], 1));
        let (started, most) = run(0, 2, false).await;
        assert_eq!((started, most), (vec![0, 1], 1), "no setting leaves no place");
    }

    #[tokio::test]
    async fn none_starts_once_the_turn_is_stopping() {
        let (started, _) = run(2, 5, true).await;
        assert_eq!(started, vec![0, 1], "the ones waiting when it stopped never started");
    }
}
