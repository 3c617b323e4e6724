//! How far each of the session's hooks is trusted, kept up to date: as the store says at the
//! start, checked again against the files as an event fires (each workspace hook read once, for
//! its hash and the private copies it runs from), and again after the person's `/hooks trust` or
//! `/hooks forget`; and what the person is told of it — the hooks that do not run, at the start,
//! and a trusted one found changed, once, until they trust or forget it.

use super::config::Origin;
use super::reading::{Copied, copies_folder, read};
use super::trust::{self, Trust, TrustStore};
use super::{HOW_TO_TRUST, Hooks, events, name};

/// The hooks an event may run, as [`Hooks::check_trust`] finds them.
#[derive(Debug, Default)]
pub(super) struct Checked {
    /// Hooks that run, in the config's order; each workspace hook with its files as read for
    /// the hash that let it run, and their private copies.
    pub(super) runnable: Vec<(usize, Option<Copied>)>,
    /// Trusted workspace hooks whose files changed since.
    pub(super) changed: Vec<usize>,
    /// Of those, the ones the person has not been told of yet.
    pub(super) untold: Vec<usize>,
}

impl Hooks {
    /// Of `selected`: the hooks that may run now, each workspace hook with its files as read for
    /// its hash and copied; the trusted ones whose files differ now from what was trusted; and
    /// of those, the ones the person is to be told of now (once each, until they trust or forget
    /// it).
    pub(super) fn check_trust(&self, selected: &[usize]) -> Checked {
        let workspace_hooks = selected.iter().any(|&i| self.specs[i].origin == Origin::Workspace);
        let trusted = if workspace_hooks { self.stored() } else { Vec::new() };
        let mut checked = Checked::default();
        let mut statuses = Vec::new();
        for &index in selected {
            let spec = &self.specs[index];
            if spec.origin == Origin::Person {
                checked.runnable.push((index, None));
                statuses.push((index, Trust::Own));
                continue;
            }
            let folder = copies_folder(self.store.as_ref());
            let into = folder.as_ref().ok().map(tempfile::TempDir::path);
            let reading = read(spec, &self.workspace, into);
            let now = trust::status_of(spec, &self.workspace, &reading.hash, &trusted);
            match now {
                Trust::Trusted => {
                    let folder = folder.map_err(|err| err.to_string());
                    checked.runnable.push((index, Some(Copied { reading, folder })));
                }
                Trust::Changed => checked.changed.push(index),
                Trust::Own | Trust::Untrusted => {}
            }
            statuses.push((index, now));
        }
        let mut live = self.lock();
        for (index, now) in statuses {
            if let Some(slot) = live.trust.get_mut(index) {
                *slot = now;
            }
            // Told once, until the person trusts or forgets: a file that changes back and
            // forth is not a notice each time.
            if now == Trust::Changed
                && let Some(told) = live.told_changed.get_mut(index)
                && !*told
            {
                *told = true;
                checked.untold.push(index);
            }
        }
        checked
    }

    pub(super) fn lost_notice(&self, lost: &[usize]) -> String {
        let names: Vec<String> = lost.iter().map(|&index| name(&self.specs[index])).collect();
        let one = lost.len() == 1;
        let guards =
            lost.iter().any(|&index| self.specs[index].event.guard() == events::Guard::FailsClosed);
        let blocking = if guards {
            " What a PreToolUse or TaskCompleted hook guards is blocked, every time, until you \
             trust it again or forget it (/hooks forget, `keel hooks forget`)."
        } else {
            ""
        };
        format!(
            "{} changed since you trusted {}, so {} no longer {}.{blocking} Read what {} now, then \
             trust again with {HOW_TO_TRUST}.",
            names.join(", "),
            if one { "it" } else { "them" },
            if one { "it" } else { "they" },
            if one { "runs" } else { "run" },
            if one { "it runs" } else { "they run" },
        )
    }

    /// What keel tells the person at the start about the workspace's hooks that do not run.
    pub fn untrusted_notice(&self) -> Option<String> {
        let live = self.lock();
        let waiting: Vec<String> = self
            .specs
            .iter()
            .zip(&live.trust)
            .filter(|(_, trust)| matches!(trust, Trust::Untrusted | Trust::Changed))
            .map(|(spec, trust)| match trust {
                Trust::Changed => format!("{} (changed since you trusted it)", name(spec)),
                _ => name(spec),
            })
            .collect();
        if waiting.is_empty() {
            return live.store_problem.clone();
        }
        let store = live.store_problem.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
        Some(format!(
            "the workspace's .keel/config.toml has hooks you have not trusted, so they do not \
             run: {}{store}. Once trusted, a workspace's hook runs in the sandbox, as commands \
             do: read what it runs, then trust it with {HOW_TO_TRUST}.",
            waiting.join(", ")
        ))
    }

    /// Trusts the workspace's hooks as they are now; says what was done.
    pub fn trust_all(&self) -> Result<String, String> {
        let Some(store) = &self.store else {
            return Err(
                "keel has no state folder (set HOME or XDG_STATE_HOME) to keep trust in".into()
            );
        };
        let (mut to_trust, mut names) = (Vec::new(), Vec::new());
        for (index, spec) in self.specs.iter().enumerate() {
            if spec.origin == Origin::Workspace {
                to_trust.push(trust::identify(spec, &self.workspace));
                if self.lock().trust.get(index).is_some_and(|trust| !trust.runs()) {
                    names.push(name(spec));
                }
            }
        }
        if to_trust.is_empty() {
            return Ok("The workspace's .keel/config.toml has no hooks to trust.".into());
        }
        store.trust(&to_trust)?;
        self.refresh_trust();
        Ok(if names.is_empty() {
            "Every hook of the workspace's .keel/config.toml was trusted already.".into()
        } else {
            format!("Trusted, as they are now: {}.", names.join(", "))
        })
    }

    /// Forgets the trust in this workspace's hooks; says what was done.
    pub fn forget(&self) -> Result<String, String> {
        let Some(store) = &self.store else {
            return Ok("Nothing is trusted: keel has no state folder.".into());
        };
        let forgotten = store.forget(&self.workspace)?;
        // Forgotten on purpose: they stop as hooks never trusted do, blocking nothing.
        self.refresh_trust();
        Ok(format!(
            "Forgot the trust in {forgotten} hook{} of this workspace: {} until you trust {} again.",
            if forgotten == 1 { "" } else { "s" },
            if forgotten == 1 { "it does not run" } else { "they do not run" },
            if forgotten == 1 { "it" } else { "them" },
        ))
    }

    /// Takes how far each hook is trusted, and why the store could not be read, from the store
    /// as it is now. A hook changed already is not told of again as an event fires: at the
    /// start, the notice names it ([`Hooks::untrusted_notice`]).
    pub(super) fn refresh_trust(&self) {
        let (trust, problem) = self.statuses();
        let mut live = self.lock();
        live.told_changed = trust.iter().map(|trust| *trust == Trust::Changed).collect();
        live.trust = trust;
        live.store_problem = problem;
    }

    /// How far each hook is trusted, as the store says now; and why the store could not be read.
    fn statuses(&self) -> (Vec<Trust>, Option<String>) {
        let (trusted, problem) = match self.store.as_ref().map(TrustStore::load) {
            Some(Ok(trusted)) => (trusted, None),
            Some(Err(problem)) => (Vec::new(), Some(problem)),
            None => (Vec::new(), None),
        };
        let trust =
            self.specs.iter().map(|spec| trust::status(spec, &self.workspace, &trusted)).collect();
        (trust, problem)
    }

    fn stored(&self) -> Vec<trust::Trusted> {
        self.store.as_ref().and_then(|store| store.load().ok()).unwrap_or_default()
    }
}
