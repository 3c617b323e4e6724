//! An event fired: the hooks it matches ([`Query`]), checked for trust as they are now
//! (`super::session_trust`), run at once, each where it belongs (`super::place`, `super::run`),
//! and what they said (`super::fired`). A trusted workspace hook whose files changed since it
//! was trusted does not run, and where its event fails closed, what it guards is blocked.

use super::config::HookSpec;
use super::events::{self, Event};
use super::fired::{Fired, Ran};
use super::place::{Place, Plan};
use super::protocol::{self, Common, Reply, Verdict};
use super::reading::{self, Copied};
use super::{HOW_TO_TRUST, Hooks, run};
use crate::runtime::sandbox::Sandbox;
use crate::tools::names;
use serde_json::{Map, Value};

/// What a hook's matcher is matched against when an event fires.
#[derive(Debug, Clone, Copy)]
pub enum Query<'a> {
    /// A tool's name as keel calls it (Claude Code's name is matched too).
    Tool(&'a str),
    /// The event's word (`startup`, `auto`, …).
    Value(&'a str),
    Nothing,
}

impl Hooks {
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
            reading.is_some_and(|read| reading::hash(spec, &self.workspace) != read.hash);
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
}

/// Whether `spec`'s matcher takes what the event fired for.
fn matches(spec: &HookSpec, query: Query<'_>) -> bool {
    match query {
        Query::Tool(tool) => spec.matcher.matches(&[tool, names::claude_name(tool)]),
        Query::Value(value) => spec.matcher.matches(&[value]),
        Query::Nothing => true,
    }
}
