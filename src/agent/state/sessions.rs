//! The saved sessions as the session picker (`/resume`) sees them, and switching to one.
//!
//! Listing reads the same store `keel sessions` and `--resume` do; switching opens the chosen log
//! first (its lock taken, a damaged one repaired) and only then lets the open one go, so a
//! session that cannot be opened leaves the conversation as it was.

use super::State;
use crate::agent::event::AgentEvent;
use crate::agent::journal::{Journal, Restored, SessionLog, SessionStore};
use crate::agent::snapshot::SessionList;
use crate::runtime::Workspace;
use std::sync::Arc;

/// Why there is nothing to switch to when the conversation is not saved.
const NOT_SAVED: &str = "This conversation is not saved (sessions are off), so there are no \
                         saved sessions to switch to here.";
/// The demo's model, as the status bar names it.
const DEMO: &str = "demo";
/// The same, in the demo: what it works in is thrown away, and how to get back to the work.
const DEMO_NOT_SAVED: &str = "The demo is not saved: its folder is thrown away when keel exits, \
                              so there is no session to switch to from here. To go back to your \
                              own work, quit and run `keel --continue` in its folder.";

impl State {
    /// Lists this workspace's saved sessions into the snapshot, the one written last first.
    pub fn list_sessions(&mut self) {
        let listed = self.view.sessions.as_ref().map_or(0, |list| list.listed) + 1;
        let current = self.journal.id().map(str::to_owned);
        let list = match self.journal.store().map(SessionStore::list) {
            None => {
                let why = if &*self.view.provider == DEMO { DEMO_NOT_SAVED } else { NOT_SAVED };
                SessionList { listed, error: Some(why.to_owned()), ..SessionList::default() }
            }
            Some(Err(err)) => SessionList {
                listed,
                error: Some(format!("The saved sessions could not be read: {err}.")),
                ..SessionList::default()
            },
            Some(Ok(mut sessions)) => {
                sessions.reverse();
                SessionList { listed, sessions, current, error: None }
            }
        };
        self.view.sessions = Some(Arc::new(list));
    }

    /// Opens saved session `id` to switch to it; the conversation open now is untouched until
    /// the switch is made ([`State::switch_to`]). Tells the person when it cannot be.
    pub fn open_session(&mut self, id: &str) -> Option<(SessionStore, SessionLog, Restored)> {
        let Some(store) = self.journal.store().cloned() else {
            let why = if &*self.view.provider == DEMO { DEMO_NOT_SAVED } else { NOT_SAVED };
            self.emit(AgentEvent::Error { text: why.to_owned() });
            return None;
        };
        if self.journal.id() == Some(id) {
            self.emit(AgentEvent::Notice { text: format!("Session {id} is the one open.") });
            return None;
        }
        match store.open(id) {
            Ok((log, restored)) => Some((store, log, restored)),
            Err(err) => {
                self.emit(AgentEvent::Error { text: format!("Could not switch sessions: {err}.") });
                None
            }
        }
    }

    /// Leaves the conversation open now (its log is closed, saved as it is) for the session
    /// reopened as `log`: everything is rebuilt from it, as `--resume` would.
    pub fn switch_to(
        &mut self,
        (store, log, restored): (SessionStore, SessionLog, Restored),
        workspace: &Workspace,
    ) {
        let id = log.id().to_owned();
        // The session switched to is the one `--continue` reopens, written to or not.
        let _ = log.touch();
        self.clear(Journal::resume(log, store));
        self.restore(restored, workspace);
        self.emit(AgentEvent::Notice { text: format!("Switched to session {id}.") });
    }
}
