//! Everything the agent's worker owns, and the one place it changes.
//!
//! `State` holds what front ends see — a [`Snapshot`], whose large parts are shared, so sending
//! one is a handful of pointer copies — together with the undo stack and the [`Journal`] the
//! session is saved to. Its fields are private and every change goes through a method here. The
//! methods that change what a resumed session needs (the history, the board, the reminder
//! counter, the undo records and workspace snapshots) write the session log in the same step, so
//! nothing that matters on resume can change unsaved. The board's own methods — the person's
//! edits, plan mode, the steps done — are in `board`; compaction's in `compaction`; the tool
//! pane's runs in `tool_runs`; the notes the model is owed in `model_notes`; the reminder's
//! counters in `reminder_counts`; the prompts queued during a turn in `queue`; the saved sessions
//! in `sessions`; what hooks are told in `hooks`.

mod board;
pub(super) use board::Edited;
mod checks;
mod children;
mod compaction;
mod hooks;
mod model_notes;
mod queue;
mod reminder_counts;
mod resumed;
mod sessions;
mod tool_runs;
mod undo_group;

use super::event::AgentEvent;
use super::journal::{Journal, Record, Restored, Shown, complete_cut_off_round};
use super::reminder::{NagThreshold, Reminder, ReminderCounts};
use super::snapshot::{Activity, ApprovalRequest, Entry, Snapshot, TurnClock};
use super::streaming::StreamingText;
use crate::agent::steps_done::StepLog;
use crate::board::Board;
use crate::llm::{RequestShape, SentRequest, WireFormat};
use crate::message::{ContentBlock, History, Message, Usage};
use crate::runtime::Workspace;
use crate::runtime::change::FileChange;
use crate::runtime::undo::UndoStack;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;

/// Where snapshots and events go. A closed receiver is not an error: a front end may listen to
/// only one of the two.
#[derive(Debug, Clone)]
pub(super) struct Outbox {
    pub snapshots: UnboundedSender<Snapshot>,
    pub events: UnboundedSender<AgentEvent>,
    /// A child's: where the approvals it asks for go, to its parent's approval box.
    pub asks: Option<UnboundedSender<Arc<ApprovalRequest>>>,
}

impl Outbox {
    pub fn event(&self, event: AgentEvent) {
        let _ = self.events.send(event);
    }

    /// Tells a child's parent of the approval it waits for (`agent::children::news`).
    pub fn ask(&self, request: &Arc<ApprovalRequest>) {
        if let Some(asks) = &self.asks {
            let _ = asks.send(Arc::clone(request));
        }
    }
}

/// Who the agent talks to, as the status bar names it.
#[derive(Debug, Clone, Copy)]
pub(super) struct ModelLabel<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub wire_format: WireFormat,
}

/// The conversation and everything around it.
#[derive(Debug)]
pub(super) struct State {
    view: Snapshot,
    undo: UndoStack,
    journal: Journal,
    /// Set once the person has been told snapshots failed, so they are told once.
    snapshot_failed: bool,
    /// Whether the model has the board at all (`--no-todo`).
    board_on: bool,
    /// The item in progress changed during the round running now.
    in_progress_changed: bool,
    /// The round running now called `todo`, valid or not.
    board_called: bool,
    /// The calls whose valid board updates the round running now answered, in order.
    board_answers: Vec<String>,
    /// The person's board changes the model has not been told of yet.
    board_edits: Vec<String>,
    /// The person's edits that complete an item with a check, waiting for it to run.
    checked_edits: std::collections::VecDeque<crate::board::BoardEdit>,
    /// keel's notes the model is owed with its next request (`model_notes`).
    model_notes: Vec<String>,
    steps: StepLog,
    /// Events for the front end found while changing state, sent at the next publish.
    outgoing: Vec<AgentEvent>,
    /// Answers streamed so far, to number the next one.
    streamed_answers: u64,
    /// Child agents the session's log held when it was resumed (`next_child_id`).
    children_before: u32,
}

impl State {
    /// `board_on: false` (`--no-todo`) turns the reminder and the person's edits off too.
    pub fn new(
        system_prompt: &str,
        nag: NagThreshold,
        board_on: bool,
        label: ModelLabel<'_>,
    ) -> Self {
        let nag = if board_on { nag } else { NagThreshold::Fixed(0) };
        let view = Snapshot {
            reminder: Reminder { counts: ReminderCounts::default(), nag },
            provider: label.provider.into(),
            model: label.model.into(),
            wire_format: label.wire_format,
            system_prompt: system_prompt.into(),
            ..Snapshot::default()
        };
        Self {
            view,
            undo: UndoStack::default(),
            journal: Journal::default(),
            snapshot_failed: false,
            board_on,
            in_progress_changed: false,
            board_called: false,
            board_answers: Vec::new(),
            board_edits: Vec::new(),
            checked_edits: std::collections::VecDeque::new(),
            model_notes: Vec::new(),
            steps: StepLog::default(),
            outgoing: Vec::new(),
            streamed_answers: 0,
            children_before: 0,
        }
    }

    /// What front ends would see now.
    pub fn view(&self) -> &Snapshot {
        &self.view
    }

    /// Saves the conversation from here on as `journal` says.
    pub fn save_to(&mut self, journal: Journal) {
        self.journal = journal;
    }

    /// The current state as an immutable view: pointer copies, whatever the history's length.
    pub fn snapshot(&mut self) -> Snapshot {
        self.view.seq += 1;
        self.view.clone()
    }

    /// Sends the current state to the front end, if one listens, and the events waiting.
    pub fn publish(&mut self, outbox: &Outbox) {
        self.flush(outbox);
        if outbox.snapshots.is_closed() {
            return;
        }
        let snapshot = self.snapshot();
        let _ = outbox.snapshots.send(snapshot);
    }

    /// Tells of something that happened (see `event`): the conversation shows the line it
    /// derives, and the event goes to the front ends with the next publish or [`Self::flush`].
    /// This is the one way a line reaches the conversation while it goes on.
    pub fn emit(&mut self, event: AgentEvent) {
        if let Some(entry) = event.entry() {
            // A line that is not in the history but belongs to it on resume — an answer cut
            // off, how a turn ended — is saved as a note.
            let kept =
                matches!(event, AgentEvent::InterruptedText { .. } | AgentEvent::Result { .. });
            if let Some(record) = kept.then(|| resumed::note_record(&entry)).flatten() {
                self.record(&record);
            }
            self.view.transcript.push_back(entry);
        }
        if let AgentEvent::ToolEnd { id, diff: Some(diff), .. } = &event {
            self.view.call_diffs.insert(id.clone(), Arc::new(diff.clone()));
        }
        self.outgoing.push(event);
    }

    /// Sends the events waiting now, without a snapshot: for what a printing front end should
    /// see before a slow step (a command about to run) rather than after it.
    pub fn flush(&mut self, outbox: &Outbox) {
        for event in self.outgoing.drain(..) {
            outbox.event(event);
        }
    }

    // What front ends see, and nothing else: none of it is needed to resume.

    /// The sandbox commands run in, as the status bar names it.
    pub fn set_sandbox(&mut self, label: Option<Arc<str>>) {
        self.view.sandbox = label;
    }

    pub fn set_activity(&mut self, activity: Activity) {
        self.view.activity = activity;
    }

    /// More of the answer streaming in: a new answer's first delta starts a new text.
    pub fn stream_text(&mut self, delta: &str) {
        let answers = &mut self.streamed_answers;
        self.view
            .streaming
            .get_or_insert_with(|| {
                *answers += 1;
                StreamingText::new(*answers)
            })
            .push(delta);
    }

    /// The answer streaming in is done or void.
    pub fn end_streaming(&mut self) {
        self.view.streaming = None;
    }

    pub fn set_pending_approval(&mut self, request: Option<Arc<ApprovalRequest>>) {
        self.view.pending_approval = request;
    }

    /// What every request carries besides the history, for the inspector to encode the body.
    pub fn set_request(&mut self, request: RequestShape) {
        self.view.request = request;
    }

    /// The request body that just went on the wire.
    pub fn set_last_sent(&mut self, sent: SentRequest) {
        self.view.last_sent = Some(sent);
    }

    /// The MCP servers as they stand now.
    pub fn set_mcp(&mut self, servers: Vec<crate::tools::mcp::ServerView>) {
        self.view.mcp = servers.into();
    }

    /// Names the model in the status bar (the demo replaces the configured one).
    pub fn set_label(&mut self, label: ModelLabel<'_>) {
        self.view.provider = label.provider.into();
        self.view.model = label.model.into();
        self.view.wire_format = label.wire_format;
    }

    // What a resumed session needs: each change is saved as it is made.

    /// The person starts waiting on a turn (`running`), or stops: the status bar's turn time.
    pub fn clock_turn(&mut self, running: bool) {
        self.view.turn_clock = match (running, self.view.turn_clock) {
            (true, _) => TurnClock::Running { since: Instant::now() },
            (false, TurnClock::Running { since }) => TurnClock::Took(since.elapsed()),
            (false, clock) => clock,
        };
    }

    /// A user turn starts: a plan shown for approval is no longer waiting.
    pub fn start_turn(&mut self) {
        self.view.plan_ready = false;
    }

    /// A new prompt starts a turn: the reminder with no board may go out once again.
    pub fn start_prompted_turn(&mut self) {
        self.start_turn();
        self.clear_reminded_without_board();
    }

    /// The tokens an answer used: added to the status line's counts and saved, so a resumed
    /// session counts on from there.
    pub fn add_usage(&mut self, usage: Usage) {
        self.record(&Record::Usage(usage));
        self.view.usage.add(usage);
    }

    /// Appends to the history.
    pub fn push_message(&mut self, message: Message) {
        self.record(&Record::Message { message: message.clone() });
        self.view.history.push_back(message);
    }

    /// Replaces the board after a valid update (the model's or the person's). A change of the
    /// item in progress starts its drift count again, at once.
    pub fn set_board(&mut self, board: Board) {
        self.record(&Record::Board { items: board.items().to_vec() });
        let changed = board.in_progress() != self.view.board.in_progress();
        self.view.board = Arc::new(board);
        if changed {
            self.in_progress_changed = true;
            let counts = self.view.reminder.counts;
            self.set_counts(ReminderCounts { rounds_in_progress: 0, ..counts });
        }
    }

    /// One tool call of the running round finished: the files it changed (for undo) and its
    /// result are saved at once, so a crash later in the round loses neither.
    pub fn record_call(&mut self, result: &ContentBlock, changes: &[FileChange]) {
        for change in changes {
            self.record(&Record::change(change));
        }
        self.undo.record(changes.iter().cloned());
        if let ContentBlock::ToolResult { tool_use_id, content, is_error } = result {
            self.record(&Record::ToolResult {
                tool_use_id: tool_use_id.clone(),
                content: content.clone(),
                is_error: *is_error,
            });
        }
    }

    /// A new conversation: history, board, tool log, counters and undo emptied, saved (if the
    /// old one was) to `journal`.
    pub fn clear(&mut self, journal: Journal) {
        self.view = Snapshot {
            seq: self.view.seq,
            reminder: Reminder { counts: ReminderCounts::default(), nag: self.view.reminder.nag },
            plan_mode: self.view.plan_mode,
            sandbox: self.view.sandbox.clone(),
            provider: Arc::clone(&self.view.provider),
            model: Arc::clone(&self.view.model),
            wire_format: self.view.wire_format,
            system_prompt: Arc::clone(&self.view.system_prompt),
            request: self.view.request.clone(),
            handed_back: self.view.handed_back.clone(),
            mcp: Arc::clone(&self.view.mcp),
            hooks: Arc::clone(&self.view.hooks),
            sessions: self.view.sessions.clone(),
            turn_diff: self.view.turn_diff.clone(),
            board_edits_taken: self.view.board_edits_taken,
            ..Snapshot::default()
        };
        self.undo = UndoStack::default();
        self.journal = journal;
        self.snapshot_failed = false;
        self.in_progress_changed = false;
        self.board_edits.clear();
        self.model_notes.clear();
        self.steps = StepLog::default();
        self.children_before = 0;
    }

    /// The journal a new conversation is saved to: a new log if this one is saved.
    pub fn fresh_journal(&self) -> Journal {
        self.journal.restart()
    }

    /// Takes over a saved session: its history, board, counter and undo records, and a
    /// transcript rebuilt from the history. A round a crash cut off is completed: calls whose
    /// results were logged keep them, the others are answered as cut off (`journal::CUT_OFF`),
    /// so every call sent has exactly one result; what a cut-off write left behind is cleared
    /// away, and the cut-off turn's end is snapshotted for undo.
    pub fn restore(&mut self, restored: Restored, workspace: &Workspace) {
        let Restored {
            history,
            transcript,
            board,
            reminder,
            board_edits,
            model_notes,
            steps,
            undo,
            answered,
            usage,
            usage_recorded,
            warnings,
            children_started,
            checks,
            ..
        } = restored;
        self.restore_checks(checks);
        self.children_before = children_started;
        self.view.usage = usage;
        self.view.history = history.iter().cloned().collect::<History>();
        self.view.board = Arc::new(board);
        self.restore_board_keeping(reminder, board_edits, steps);
        self.model_notes = model_notes;
        self.undo = undo;
        self.view.transcript = transcript
            .iter()
            .flat_map(|shown| match shown {
                Shown::Message(message) => resumed::entries_of(message),
                Shown::Compacted(note) => vec![Entry::Notice { text: note.clone() }],
                Shown::Note(kind, text) => vec![resumed::note_entry(*kind, text.clone())],
            })
            .collect();
        for warning in warnings {
            self.emit(AgentEvent::Notice { text: warning });
        }
        if let Some((answers, cut_off)) = complete_cut_off_round(&history, &answered) {
            for call in &cut_off {
                resumed::clear_leftovers(workspace, call);
            }
            let kept = answers.content.len() - cut_off.len();
            self.push_message(answers);
            self.emit(AgentEvent::Notice { text: resumed::cut_off_notice(kept, &cut_off) });
        }
        if self.undo.awaits_end() {
            match self.journal.shadow().map(|shadow| shadow.snapshot()) {
                Some(Ok(after)) => self.end_turn(after),
                Some(Err(err)) => self.snapshot_failed(&err),
                None => {}
            }
        }
        self.show_resumed(usage_recorded);
    }

    /// Appends a record to the session log; a failure is told to the person once.
    fn record(&mut self, record: &Record) {
        if let Err(err) = self.journal.record(record) {
            self.not_saved(&err);
        }
    }

    /// Tells the person, in the transcript and to a front end listening for events, that the
    /// session is no longer being saved, and what that costs.
    fn not_saved(&mut self, err: &dyn std::fmt::Display) {
        let text = format!(
            "The session is no longer being saved ({err}): what happens from here on is not in \
             its log, so `keel undo` and `--continue` will miss it."
        );
        self.emit(AgentEvent::NotSaved { reason: text });
    }
}
