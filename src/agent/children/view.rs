//! A child agent as front ends see it: who it is, what it does now, what it has spent, and its
//! conversation as it last showed it — the board row of its item, `/agents`, the status bar and
//! the inspector draw from here.

use crate::agent::Snapshot;
use crate::message::Usage;
use crate::tools::task::Kind;
use serde::Serialize;
use std::sync::Arc;

/// How a child stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildStatus {
    Running,
    /// It answered: its item, if it has one, is completed.
    Done,
    /// It ended in an error (the model's server, a request that does not fit).
    Failed,
    /// Its budget ran out.
    Stopped,
    /// The person interrupted it, or keel is quitting.
    Interrupted,
}

impl ChildStatus {
    /// The status in one word, as `-p` and the screen say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
            Self::Interrupted => "interrupted",
        }
    }
}

/// One child agent of a conversation.
#[derive(Debug, Clone)]
pub struct ChildAgent {
    /// `a1`, `a2`, …: unique in the conversation; its events carry it as `agent`.
    pub id: Arc<str>,
    /// The `task` call that started it.
    pub call_id: Arc<str>,
    /// Its name for the person: the call's description, or its prompt's first words.
    pub label: Arc<str>,
    /// The board item it does.
    pub item: Option<Arc<str>>,
    pub kind: Kind,
    pub status: ChildStatus,
    /// The call it runs now, in one line (`bash: cargo test`).
    pub tool: Option<String>,
    /// Model responses so far.
    pub rounds: u32,
    /// The tokens its responses took.
    pub usage: Usage,
    /// Its conversation as it last showed it (its transcript, its last request); `None` until
    /// it shows one, and where no front end draws.
    pub view: Option<Box<Snapshot>>,
}

impl ChildAgent {
    pub fn is_running(&self) -> bool {
        self.status == ChildStatus::Running
    }

    /// The child in words, for the approval box and `-p`: `child a2 · Run the tests · item #3`.
    pub fn describe(&self) -> String {
        let mut words = format!("child {} · {}", self.id, self.label);
        if let Some(item) = &self.item {
            words.push_str(&format!(" · item #{item}"));
        }
        words
    }
}
