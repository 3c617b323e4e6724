//! `State`'s child agents (`task`): each shown in the view as it runs and after
//! ([`ChildAgent`]), and its conversation's records kept with the session's.

use super::State;
use crate::agent::journal::{CHILD_ID_PREFIX, Record};
use crate::agent::snapshot::ChildAgent;
use std::sync::Arc;

impl State {
    /// The id the next child takes: `a1`, `a2`, … in the order they start in the session,
    /// those of its log before a resume counted.
    pub fn next_child_id(&self) -> String {
        let before = usize::try_from(self.children_before).unwrap_or(usize::MAX);
        format!("{CHILD_ID_PREFIX}{}", before.saturating_add(self.view.children.len() + 1))
    }

    /// A child agent starts.
    pub fn add_child(&mut self, child: ChildAgent) {
        self.view.children.push_back(Arc::new(child));
    }

    /// Changes child `id` as `change` says.
    pub fn update_child(&mut self, id: &str, change: impl FnOnce(&mut ChildAgent)) {
        let children = &self.view.children;
        let Some(index) = children.iter().rposition(|child| &*child.id == id) else {
            return;
        };
        let mut child = ChildAgent::clone(&children[index]);
        change(&mut child);
        self.view.children.set(index, Arc::new(child));
    }

    /// A record of child `agent`'s conversation, kept with the session.
    pub fn record_child(&mut self, agent: &str, record: Record) {
        self.record(&Record::Agent { agent: agent.to_owned(), record: Box::new(record) });
    }
}
