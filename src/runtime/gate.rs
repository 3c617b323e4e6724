//! When a command may start to run: the workspace snapshot undo takes before a turn's first
//! command is written while the command's sandbox starts, and the shell is held until it is.
//!
//! The agent keeps the [`Opener`] and hands the [`Gate`] to the tool in its `ToolContext`. The
//! gate opens when the opener says so; an opener dropped without opening keeps the command from
//! ever running.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Lets the command run, once.
#[derive(Debug)]
pub struct Opener(watch::Sender<bool>);

/// What a command waits on before it runs.
#[derive(Debug, Clone)]
pub struct Gate(watch::Receiver<bool>);

/// A closed gate and what opens it.
pub fn closed() -> (Opener, Gate) {
    let (sender, receiver) = watch::channel(false);
    (Opener(sender), Gate(receiver))
}

impl Opener {
    /// The command may run.
    pub fn open(self) {
        // The tool may be gone already (it ended before the command started): nobody to tell.
        let _ = self.0.send(true);
    }
}

impl Gate {
    /// Waits until the gate opens: `true`, or `false` when the opener was dropped without opening
    /// it or the person interrupted (`cancel`), and the command must not run.
    pub async fn opened(&self, cancel: &CancellationToken) -> bool {
        let mut receiver = self.0.clone();
        tokio::select! {
            opened = receiver.wait_for(|open| *open) => opened.is_ok(),
            () = cancel.cancelled() => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_gate_opens_only_when_its_opener_says_so() {
        let cancel = CancellationToken::new();
        let (opener, gate) = closed();
        let waiting = tokio::spawn({
            let (gate, cancel) = (gate.clone(), cancel.clone());
            async move { gate.opened(&cancel).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a closed gate holds the command");
        opener.open();
        assert!(waiting.await.unwrap());
        assert!(gate.opened(&cancel).await, "an open gate stays open");
    }

    #[tokio::test]
    async fn a_dropped_opener_or_an_interrupt_keeps_the_command_from_running() {
        let cancel = CancellationToken::new();
        let (opener, gate) = closed();
        drop(opener);
        assert!(!gate.opened(&cancel).await);
        let (_opener, gate) = closed();
        cancel.cancel();
        assert!(!gate.opened(&cancel).await);
    }
}
