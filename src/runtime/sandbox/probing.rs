//! The sandbox while its probe runs: [`Sandbox::probe`] starts `bwrap` once to learn whether
//! commands can be confined, which takes longer than all the rest of keel's start. [`Probing`]
//! runs it on a thread of its own, so `keel -p` sends its first request meanwhile; whatever needs
//! the answer (a command, its approval, plan mode's check, the status bar, the notice that the
//! sandbox is missing) waits for it there.
//!
//! A probe that cannot be waited for (its thread panicked) counts as a sandbox that is not
//! available: commands are then refused, never run unconfined.

use super::{Availability, KeelFolders, Policy, Sandbox};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

/// A sandbox whose probe may still be running. Clones share the one probe.
#[derive(Debug, Clone)]
pub struct Probing(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    sandbox: OnceLock<Sandbox>,
    probe: Mutex<Option<JoinHandle<Sandbox>>>,
    /// What the sandbox is when the probe says it works (its policy also says what the sandbox
    /// is when the probe's answer is lost).
    assumed: Sandbox,
}

impl Probing {
    /// A sandbox already known.
    pub fn known(sandbox: Sandbox) -> Self {
        let shared = Shared {
            sandbox: OnceLock::from(sandbox.clone()),
            probe: Mutex::new(None),
            assumed: sandbox,
        };
        Self(Arc::new(shared))
    }

    /// The sandbox keel's front ends run commands of `workspace` in ([`Sandbox::for_commands`],
    /// keel's own folders `keel` kept out of reach), probed on a thread of its own. With `--sandbox off` nothing
    /// is probed.
    pub fn for_commands(policy: Policy, workspace: &Path, keel: KeelFolders) -> Self {
        let probe = {
            let (policy, workspace, keel) = (policy.clone(), workspace.to_path_buf(), keel.clone());
            move || Sandbox::for_commands(policy, &workspace, keel)
        };
        if policy.mode == super::Mode::Off {
            return Self::known(probe());
        }
        let assumed = Sandbox::assumed_for_commands(policy, workspace, keel);
        match std::thread::Builder::new().name("sandbox-probe".into()).spawn(probe.clone()) {
            Ok(thread) => Self(Arc::new(Shared {
                sandbox: OnceLock::new(),
                probe: Mutex::new(Some(thread)),
                assumed,
            })),
            Err(_) => Self::known(probe()),
        }
    }

    /// The sandbox, waiting for the probe if it is still running.
    pub fn get(&self) -> &Sandbox {
        self.0.sandbox.get_or_init(|| {
            let thread = self.0.probe.lock().ok().and_then(|mut probe| probe.take());
            thread.and_then(|thread| thread.join().ok()).unwrap_or_else(|| Sandbox {
                policy: self.0.assumed.policy.clone(),
                availability: Availability::Missing(
                    "cannot sandbox commands: its probe was lost".into(),
                ),
                ..Sandbox::off()
            })
        })
    }

    /// The sandbox if the probe has answered, without waiting (not even for another caller that
    /// is collecting the answer: an async thread must never block on it).
    pub fn ready(&self) -> Option<&Sandbox> {
        if let Some(sandbox) = self.0.sandbox.get() {
            return Some(sandbox);
        }
        let finished = self
            .0
            .probe
            .lock()
            .ok()
            .is_some_and(|probe| probe.as_ref().is_some_and(JoinHandle::is_finished));
        finished.then(|| self.get())
    }

    /// The sandbox if the probe has answered; else the sandbox it finds where `bwrap` works, and
    /// `false`: a command may start in it meanwhile, and learns at its start whether it came up.
    pub fn ready_or_assumed(&self) -> (&Sandbox, bool) {
        match self.ready() {
            Some(sandbox) => (sandbox, true),
            None => (&self.0.assumed, false),
        }
    }

    /// The sandbox, waited for off the async threads.
    pub async fn settled(&self) -> &Sandbox {
        if self.ready().is_none() {
            let probing = self.clone();
            let _ = tokio::task::spawn_blocking(move || {
                probing.get();
            })
            .await;
        }
        self.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sandbox::{Confinement, Mode};

    #[test]
    fn off_is_known_at_once() {
        let off = Probing::for_commands(
            Policy { mode: Mode::Off, ..Policy::default() },
            Path::new("/nonexistent"),
            KeelFolders::default(),
        );
        assert_eq!(off.ready().map(Sandbox::confinement), Some(Confinement::Off));
        let known = Probing::known(Sandbox::off());
        assert_eq!(known.clone().ready(), Some(&Sandbox::off()));
    }

    #[test]
    fn ready_never_waits_for_a_running_probe() {
        let (release, held) = std::sync::mpsc::channel::<()>();
        let probe = std::thread::spawn(move || {
            let _ = held.recv();
            Sandbox::off()
        });
        let probing = Probing(Arc::new(Shared {
            sandbox: OnceLock::new(),
            probe: Mutex::new(Some(probe)),
            assumed: Sandbox::off(),
        }));
        assert_eq!(probing.ready(), None);
        release.send(()).unwrap();
        assert_eq!(probing.get(), &Sandbox::off());
        assert_eq!(probing.ready(), Some(&Sandbox::off()));
    }

    #[test]
    fn a_lost_probe_leaves_commands_unconfined_never() {
        let policy = Policy { mode: Mode::Workspace, ..Policy::default() };
        let lost = std::thread::spawn(|| -> Sandbox { panic!("the probe broke") });
        let probing = Probing(Arc::new(Shared {
            sandbox: OnceLock::new(),
            probe: Mutex::new(Some(lost)),
            assumed: Sandbox { policy, ..Sandbox::off() },
        }));
        assert_eq!(probing.get().confinement(), Confinement::Unavailable);
        assert!(probing.get().problem().is_some_and(|why| why.contains("probe was lost")));
    }
}
