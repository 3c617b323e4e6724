//! Hooks: the person's own programs, run at points of a session in Claude Code's shape, so
//! hooks written for Claude Code run unchanged (`protocol`), with what its peers lack: a
//! workspace's hooks run only once the person trusts them, keyed to a hash of what they are
//! (`trust`), and then in the command sandbox all the same, from private copies of the files
//! they name (`place`); a PreToolUse or TaskCompleted hook that cannot answer blocks rather than
//! waves through (`protocol::judge`), and one whose files changed since it was trusted blocks
//! every call it guards until the person trusts it again or forgets it; and the board has an
//! event of its own, TaskCompleted.
//!
//! [`Hooks`] is a workspace's service (held by the agent's `Services`, so every conversation —
//! a child agent's too — goes through the same hooks): the hooks configured (`config`), how far
//! each is trusted, and what ran. [`Hooks::fire`] runs the hooks an event matches, in parallel
//! (`run`), and returns what they said ([`Fired`]); what that means for the call, the prompt,
//! the turn or the board is the agent's to decide where the event happens.

pub mod config;
pub mod events;
pub mod kept;
pub mod listing;
pub mod names;
pub mod place;
pub mod protocol;
pub mod run;
pub mod trust;

pub use config::{DEFAULT_TIMEOUT, HookSpec, HooksConfig, Origin};
pub use events::Event;
pub use kept::Kept;
pub use listing::{HookLine, HooksView, Outcome, RanLine};
pub use place::Place;
pub use protocol::{Common, Permission, Reply, Verdict};

use crate::tools::sandbox::Sandbox;
use place::Plan;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use trust::{Reading, Trust, TrustStore};

/// How many runs `/hooks` remembers.
const RAN_KEPT: usize = 50;
/// What the name of one run's folder of private copies starts with.
const COPIES_PREFIX: &str = "run-";
/// How the person trusts a workspace's hooks, in both front ends.
pub const HOW_TO_TRUST: &str = "/hooks trust in keel's screen, or `keel hooks trust`";

/// What a hook's matcher is matched against when an event fires.
#[derive(Debug, Clone, Copy)]
pub enum Query<'a> {
    /// A tool's name as keel calls it (Claude Code's name is matched too).
    Tool(&'a str),
    /// The event's word (`startup`, `auto`, …).
    Value(&'a str),
    Nothing,
}

/// What the person can ask of the hooks (`/hooks trust`, `/hooks forget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HooksCommand {
    /// Trust the workspace's hooks as they are now.
    Trust,
    /// Forget every trust in this workspace's hooks.
    Forget,
}

/// A workspace's hooks.
#[derive(Debug, Default)]
pub struct Hooks {
    specs: Vec<HookSpec>,
    /// The workspace (canonical): where hooks run, and what trust is keyed to.
    workspace: PathBuf,
    /// Where trust is kept; `None` when there is no state folder (nothing can be trusted).
    store: Option<TrustStore>,
    /// Someone can answer when a hook asks for the person's approval (not `keel -p`).
    interactive: bool,
    live: Mutex<Live>,
}

#[derive(Debug, Default)]
struct Live {
    /// How far each hook is trusted now, in `specs`' order.
    trust: Vec<Trust>,
    /// The person has been told that this hook changed since they trusted it (at the start, or
    /// as it was found): told once, until they trust or forget it.
    told_changed: Vec<bool>,
    ran: VecDeque<RanLine>,
    /// What commands must not change, fixed as the first command's sandbox was set up.
    kept: Option<Kept>,
    /// The store could not be read (nothing is trusted meanwhile).
    store_problem: Option<String>,
}

/// One hook's run, and what it said.
#[derive(Debug, Clone)]
pub struct Ran {
    pub event: Event,
    pub command: String,
    pub reply: Reply,
    pub took: Duration,
}

impl Ran {
    /// A hook that blocks what it guards without running, for `why`.
    fn blocked(event: Event, command: String, why: String) -> Self {
        let reply = Reply::verdict(Verdict::Blocked(why));
        Self { event, command, reply, took: Duration::ZERO }
    }
}

/// The hooks an event may run, as [`Hooks::check_trust`] finds them.
#[derive(Debug, Default)]
struct Checked {
    /// Hooks that run, in the config's order; each workspace hook with its files as read for
    /// the hash that let it run, and their private copies.
    runnable: Vec<(usize, Option<Copied>)>,
    /// Trusted workspace hooks whose files changed since.
    changed: Vec<usize>,
    /// Of those, the ones the person has not been told of yet.
    untold: Vec<usize>,
}

/// A trusted workspace hook's files as read for its hash, with the folder their copies are in
/// (removed when the run is over), or why there is none.
#[derive(Debug)]
struct Copied {
    reading: Reading,
    folder: Result<tempfile::TempDir, String>,
}

/// What an event's hooks said, in the config's order.
#[derive(Debug, Clone, Default)]
pub struct Fired {
    pub runs: Vec<Ran>,
    /// Workspace hooks that no longer run because what they are changed since they were
    /// trusted: what the person is told, once for each.
    pub lost_trust: Option<String>,
}

impl Fired {
    /// The reasons of the hooks that block, joined; `None` when none does. A reason is the
    /// hook's text (its stderr on exit 2), for the model: keel's tags in it are defused
    /// (`crate::tags`).
    pub fn blocked(&self) -> Option<String> {
        let reasons: Vec<&str> = self
            .runs
            .iter()
            .filter_map(|ran| match &ran.reply.verdict {
                Verdict::Blocked(reason) => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        (!reasons.is_empty()).then(|| crate::tags::defuse(&reasons.join("\n")).into_owned())
    }

    /// What the hooks decided about a call: asking the person beats running unasked.
    pub fn permission(&self) -> Option<Permission> {
        let decisions = self.runs.iter().filter_map(|ran| ran.reply.permission.clone());
        decisions.reduce(|kept, next| match (&kept, &next) {
            (Permission::Ask(_), _) => kept,
            _ => next,
        })
    }

    /// The first `updatedInput` given, with the hook that gave it.
    pub fn updated_input(&self) -> Option<(&str, &Value)> {
        self.runs
            .iter()
            .find_map(|ran| Some((ran.command.as_str(), ran.reply.updated_input.as_ref()?)))
    }

    /// What the hooks added for the model, in order, keel's tags in it defused.
    pub fn context(&self) -> Vec<String> {
        let context = self.runs.iter().filter_map(|ran| ran.reply.context.as_deref());
        context.map(|text| crate::tags::defuse(text).into_owned()).collect()
    }
}

impl Hooks {
    /// The hooks `specs` (the person's, then the workspace's) of `workspace`, trusted as `store`
    /// says; `interactive` when a person can answer an approval.
    pub fn new(
        specs: Vec<HookSpec>,
        workspace: &Path,
        store: Option<TrustStore>,
        interactive: bool,
    ) -> Self {
        let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_owned());
        let hooks = Self { specs, workspace, store, interactive, live: Mutex::default() };
        let (trust, problem) = hooks.statuses();
        let mut live = hooks.lock();
        // Those changed already are named in the notice at the start.
        live.told_changed = trust.iter().map(|trust| *trust == Trust::Changed).collect();
        live.trust = trust;
        live.store_problem = problem;
        drop(live);
        hooks
    }

    /// No hooks at all.
    pub fn none() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Whether any hook is configured for `event` (trusted or not).
    pub fn has(&self, event: Event) -> bool {
        self.specs.iter().any(|spec| spec.event == event)
    }

    /// Whether a person can answer when a hook asks for approval.
    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// The workspace the hooks run in.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The hooks as configured, with how far each is trusted now.
    pub fn specs(&self) -> Vec<(HookSpec, Trust)> {
        let live = self.lock();
        self.specs.iter().cloned().zip(live.trust.iter().copied()).collect()
    }

    /// What commands must not change under the trusted workspace hooks ([`kept`]), for the
    /// sandbox of a command or a confined hook about to start: what the hooks trusted when the
    /// first one started name, for the whole session. A path is kept from the session's first
    /// command on or not at all: a job a command left running while it was not could make it a
    /// symlink, and bwrap binds what a symlink leads to.
    pub fn kept(&self) -> Kept {
        let mut live = self.lock();
        if live.kept.is_none() {
            let trusted: Vec<&HookSpec> = (self.specs.iter().zip(&live.trust))
                .filter(|(_, trust)| **trust == Trust::Trusted)
                .map(|(spec, _)| spec)
                .collect();
            live.kept = Some(Kept::of(&trusted, &self.workspace));
        }
        live.kept.clone().unwrap_or_default()
    }

    /// Runs the hooks of `event` that `query` matches, in parallel, each with the event's input
    /// (`common` and the event's `fields`), those that run confined in `sandbox` (the one the
    /// conversation's commands run in); returns what they said, in the config's order.
    pub async fn fire(
        &self,
        event: Event,
        query: Query<'_>,
        common: &Common,
        fields: Map<String, Value>,
        sandbox: &Sandbox,
    ) -> Fired {
        let selected: Vec<usize> = (0..self.specs.len())
            .filter(|&index| self.specs[index].event == event)
            .filter(|&index| matches(&self.specs[index], query))
            .collect();
        if selected.is_empty() {
            return Fired::default();
        }
        let checked = self.check_trust(&selected);
        let input = protocol::input(event, common, fields);
        let runs = checked.runnable.into_iter().map(|(index, copied)| {
            let input = &input;
            async move { self.run_one(&self.specs[index], copied, sandbox, input).await }
        });
        let mut runs = futures_util::future::join_all(runs).await;
        // A trusted hook whose files changed since does not run; where its event fails closed,
        // what it guards is blocked, every time, rather than let through unguarded.
        if event.guard() == events::Guard::FailsClosed {
            for &index in &checked.changed {
                let command = self.specs[index].command.clone();
                let why = format!(
                    "the hook `{command}` changed since you trusted it, so keel did not run it, \
                     and every call it guards is blocked until the person trusts it again \
                     ({HOW_TO_TRUST}) or forgets it"
                );
                runs.push(Ran::blocked(event, command, why));
            }
        }
        self.remember(&runs);
        let lost_trust = (!checked.untold.is_empty()).then(|| self.lost_notice(&checked.untold));
        Fired { runs, lost_trust }
    }

    /// Runs `spec` where it belongs ([`Place`]), from `copied` (a trusted workspace hook's files
    /// as hashed, and their copies) where the sandbox can bind them. A trusted hook's files are
    /// hashed again after the run: an answer given while they changed is discarded.
    async fn run_one(
        &self,
        spec: &HookSpec,
        copied: Option<Copied>,
        sandbox: &Sandbox,
        input: &[u8],
    ) -> Ran {
        let event = spec.event;
        let place = Place::of(spec, &self.workspace);
        let reading = copied.as_ref().map(|copied| &copied.reading);
        let plan = match copied.as_ref().map(|copied| copied.folder.as_ref()) {
            Some(Err(why)) => Err(format!("its files could not be copied to run from: {why}")),
            _ if place == Place::Sandbox => {
                // A confined hook is a command too: what it leaves running must not swap what
                // the trusted hooks run.
                let mut sandbox = sandbox.clone();
                self.kept().keep_in(&mut sandbox);
                Plan::new(place, &sandbox, &self.workspace, reading, input)
            }
            _ => Plan::new(place, sandbox, &self.workspace, reading, input),
        };
        let output = match &plan {
            Ok(plan) => run::run(&spec.command, plan, &self.workspace, spec.timeout).await,
            Err(why) => run::Output::not_started(why.clone()),
        };
        drop(plan);
        // Where the files could not be bound from their copies, this is what says whether what
        // ran was what was trusted; where they were, it catches a file swapped from outside
        // every sandbox (which takes the copy's mount away) for good.
        let changed_meanwhile =
            reading.is_some_and(|reading| trust::hash(spec, &self.workspace) != reading.hash);
        let reply = if changed_meanwhile {
            let why = format!(
                "the hook `{}` changed while it ran, so keel discarded its answer; trust it again \
                 with {HOW_TO_TRUST} once you have read what it runs",
                spec.command
            );
            Reply::verdict(match event.guard() {
                events::Guard::FailsClosed => Verdict::Blocked(why),
                events::Guard::Blocks | events::Guard::Watches => Verdict::Failed(why),
            })
        } else {
            protocol::judge(event, &spec.command, &output)
        };
        Ran { event, command: spec.command.clone(), reply, took: output.took }
    }

    /// Of `selected`: the hooks that may run now, each workspace hook with its files as read for
    /// its hash and copied; the trusted ones whose files differ now from what was trusted; and
    /// of those, the ones the person is to be told of now (once each, until they trust or forget
    /// it).
    fn check_trust(&self, selected: &[usize]) -> Checked {
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
            let folder = self.copies_folder();
            let into = folder.as_ref().ok().map(tempfile::TempDir::path);
            let reading = trust::read(spec, &self.workspace, into);
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

    /// A private folder for one run's copies of a hook's files: in keel's state folder, beside
    /// the trust store; without one, in the temporary folder commands never see.
    fn copies_folder(&self) -> std::io::Result<tempfile::TempDir> {
        let Some(store) = &self.store else {
            return tempfile::Builder::new().prefix(COPIES_PREFIX).tempdir();
        };
        let folder = store.copies();
        crate::tools::undo::shadow::create_private_dir(&folder)?;
        tempfile::Builder::new().prefix(COPIES_PREFIX).tempdir_in(folder)
    }

    fn lost_notice(&self, lost: &[usize]) -> String {
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

    /// Keeps the newest runs for `/hooks`.
    fn remember(&self, runs: &[Ran]) {
        let mut live = self.lock();
        for ran in runs {
            live.ran.push_back(RanLine::of(ran));
            if live.ran.len() > RAN_KEPT {
                live.ran.pop_front();
            }
        }
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
        let (trust, problem) = self.statuses();
        let mut live = self.lock();
        live.told_changed = trust.iter().map(|trust| *trust == Trust::Changed).collect();
        live.trust = trust;
        live.store_problem = problem;
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
        let (trust, _) = self.statuses();
        let mut live = self.lock();
        // Forgotten on purpose: they stop as hooks never trusted do, blocking nothing.
        live.told_changed = trust.iter().map(|trust| *trust == Trust::Changed).collect();
        live.trust = trust;
        drop(live);
        Ok(format!(
            "Forgot the trust in {forgotten} hook{} of this workspace: {} until you trust {} again.",
            if forgotten == 1 { "" } else { "s" },
            if forgotten == 1 { "it does not run" } else { "they do not run" },
            if forgotten == 1 { "it" } else { "them" },
        ))
    }

    /// The hooks and the newest runs, for `/hooks`.
    pub fn view(&self) -> HooksView {
        let live = self.lock();
        HooksView {
            hooks: self
                .specs
                .iter()
                .zip(&live.trust)
                .map(|(spec, trust)| HookLine::of(spec, *trust, Place::of(spec, &self.workspace)))
                .collect(),
            ran: live.ran.iter().cloned().collect(),
        }
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

    fn lock(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A hook named for the person: its event and command.
pub fn name(spec: &HookSpec) -> String {
    format!("{} `{}`", spec.event, crate::visible::one_line(&spec.command))
}

/// Whether `spec`'s matcher takes what the event fired for.
fn matches(spec: &HookSpec, query: Query<'_>) -> bool {
    match query {
        Query::Tool(tool) => spec.matcher.matches(&[tool, names::claude_name(tool)]),
        Query::Value(value) => spec.matcher.matches(&[value]),
        Query::Nothing => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::hostile;

    #[test]
    fn keels_tags_in_what_hooks_tell_the_model_are_defused() {
        let said = hostile::text();
        let ran = |verdict| Ran {
            event: Event::PreToolUse,
            command: "./guard.sh".into(),
            reply: Reply {
                verdict,
                permission: None,
                updated_input: None,
                context: Some(said.clone()),
                message: None,
            },
            took: Duration::ZERO,
        };
        let fired = Fired {
            runs: vec![ran(Verdict::Blocked(said.clone())), ran(Verdict::Fine)],
            lost_trust: None,
        };
        let blocked = fired.blocked().unwrap();
        assert_eq!(hostile::live(&blocked), Vec::<&str>::new(), "{blocked}");
        assert!(blocked.starts_with("‹reminder x=\"1\">forged‹/reminder>"), "{blocked}");
        for context in fired.context() {
            assert_eq!(hostile::live(&context), Vec::<&str>::new(), "{context}");
        }
        assert_eq!(fired.context().len(), 2);
    }
}
