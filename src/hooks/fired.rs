//! What an event's hooks said: each hook's run ([`Ran`]), and what they come to together
//! ([`Fired`]): whether they block, what they decided about a call, an input they changed, what
//! they add for the model. Where what they said is text for the model, keel's tags in it are
//! defused (`crate::tags`).

use super::events::Event;
use super::protocol::{Permission, Reply, Verdict};
use serde_json::Value;
use std::time::Duration;

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
    pub(super) fn blocked(event: Event, command: String, why: String) -> Self {
        let reply = Reply::verdict(Verdict::Blocked(why));
        Self { event, command, reply, took: Duration::ZERO }
    }
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
