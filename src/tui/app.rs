//! The UI's state: the newest snapshot and the views of the stack (`layers::Views`).
//!
//! State changes only here and in `input` (the event handlers); `prepare` lays out what the next
//! frame needs into caches, and `render::render` then draws from `&App` alone. Time enters only
//! through `on_tick` (spinner frames, countdowns), the key handler's `now` (double Ctrl+C,
//! type-ahead) and the time a snapshot arrived (when an approval box appeared).

use super::TuiOptions;
use super::edits_in_flight::InFlight;
use super::layers::Views;
use super::layout::{Regions, Wants, overlay_area, regions};
use super::main_view::{MainView, source};
use super::theme;
use super::type_ahead::TypeAhead;
use super::view::approval_modal::ApprovalModal;
use super::view::board::BoardPane;
use super::view::completion::Completer;
use super::view::composer::Composer;
use super::view::conversation::Conversation;
use super::view::pager::Pager;
use crate::agent::{Activity, ApprovalRequest, Command, Entry, Snapshot, ToolStatus};
use crate::pricing::Prices;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// A second Ctrl+C within this long quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(1);

/// The whole UI state.
#[derive(Debug)]
pub struct App {
    pub(super) commands: UnboundedSender<Command>,
    pub(super) snapshot: Snapshot,
    /// The views of the stack.
    pub(super) views: Views,
    /// The child agent whose last request the inspector shows; `None`: the conversation's own.
    pub(super) inspected_child: Option<String>,
    /// The inspector was opened over the approval box, so it has the keyboard until closed.
    pub(super) inspector_over_approval: bool,
    /// The approval request already answered, hidden until the agent's next snapshot drops it.
    pub(super) answered: Option<String>,
    /// Keeps type-ahead from answering the approval box (see `type_ahead`).
    pub(super) type_ahead: TypeAhead,
    /// The approval request whose box is (or was last) on screen.
    shown_approval: Option<String>,
    /// The composer's text when that box appeared.
    pub(super) composer_at_box: String,
    pub(super) quit_armed_at: Option<Instant>,
    pub(super) now: Instant,
    pub(super) frame: u64,
    pub(super) quit: bool,
    pub(super) agent_gone: bool,
    pub(super) screen: Rect,
    /// Colours are left out of every frame (`NO_COLOR`).
    pub(super) no_color: bool,
    /// Model prices, for the status bar's cost.
    pub(super) prices: Prices,
    recall_seeded: bool,
    /// The last hand-back of queued prompts taken into the composer.
    handed_back_seen: u64,
    /// The last `/diff` answer shown.
    turn_diff_seen: u64,
    /// Board edits sent and not yet in the snapshot's board.
    pub(super) edits: InFlight,
}

impl App {
    /// A UI that sends its commands to `commands`, showing an empty agent until the first snapshot.
    pub fn new(commands: UnboundedSender<Command>, options: TuiOptions) -> Self {
        Self {
            commands,
            snapshot: Snapshot::default(),
            views: Views {
                approval: ApprovalModal::default(),
                picker: None,
                pager: None,
                inspector: None,
                agents: None,
                help: None,
                board: BoardPane::with_clock(options.clock),
                main: MainView {
                    composer: Composer::new(),
                    conversation: Conversation::new(
                        intro(&options),
                        intro(&TuiOptions { demo: None, ..options.clone() }),
                    ),
                    completer: Completer::new(options.workspace.clone(), options.hidden.clone()),
                    confirming_plan: false,
                },
            },
            inspected_child: None,
            inspector_over_approval: false,
            answered: None,
            type_ahead: TypeAhead::default(),
            shown_approval: None,
            composer_at_box: String::new(),
            quit_armed_at: None,
            now: Instant::now(),
            frame: 0,
            quit: false,
            agent_gone: false,
            screen: Rect::default(),
            no_color: options.no_color,
            prices: options.prices,
            recall_seeded: false,
            handed_back_seen: 0,
            turn_diff_seen: 0,
            edits: InFlight::default(),
        }
    }

    /// Takes in the agent's newest state, now.
    pub fn apply_snapshot(&mut self, snapshot: Snapshot) {
        self.apply_snapshot_at(snapshot, Instant::now());
    }

    /// Takes in the agent's newest state, arrived at `now` (when an approval box appears matters:
    /// see `type_ahead`).
    pub fn apply_snapshot_at(&mut self, snapshot: Snapshot, now: Instant) {
        self.edits.taken(snapshot.board_edits_taken);
        self.views.main.conversation.sync(&snapshot.transcript);
        let source = super::main_view::source(&snapshot);
        let (marks, tallies) = (&snapshot.call_marks, &snapshot.call_tallies);
        self.views.main.conversation.sync_marks(marks, tallies, &source);
        self.views.main.conversation.sync_diffs(&snapshot.call_diffs, &source);
        if !self.recall_seeded {
            self.recall_seeded = true;
            for entry in &snapshot.transcript {
                if let Entry::User { text } = entry {
                    self.views.main.composer.remember(text);
                }
            }
        }
        if snapshot.handed_back.count > self.handed_back_seen {
            self.handed_back_seen = snapshot.handed_back.count;
            self.views.main.composer.take_back(&snapshot.handed_back.prompts);
        }
        if let Some(inspector) = &mut self.views.inspector {
            match child_view(&snapshot, self.inspected_child.as_deref()) {
                Some(child) => inspector.update(child),
                None => inspector.update(&snapshot),
            }
        }
        if let Some(agents) = &mut self.views.agents {
            agents.update(&snapshot);
        }
        if let Some(pager) = &mut self.views.pager {
            pager.update(&snapshot);
        }
        // `/diff` answered: its changes in the pager.
        if let Some(changes) = snapshot.turn_diff.as_ref().filter(|d| d.asked > self.turn_diff_seen)
        {
            self.turn_diff_seen = changes.asked;
            self.views.close_readers();
            self.views.pager = Some(Box::new(Pager::turn_diff(changes)));
        }
        // The list filling in is the picker appearing: its keys mean something from now on.
        if self.views.picker.as_mut().is_some_and(|picker| picker.update(&snapshot)) {
            self.type_ahead.shown(now);
        }
        let pending = snapshot.pending_approval.as_ref().map(|request| &request.id);
        if self.answered.as_ref() != pending {
            self.answered = None;
        }
        // A finished plan never takes the keyboard by itself: the composer's hint says how to
        // approve or edit it (see `view::plan_hint`).
        self.snapshot = snapshot;
        let shown = self.visible_approval().map(|request| request.id.clone());
        if shown.is_some() && shown != self.shown_approval {
            self.type_ahead.shown(now);
            self.shown_approval = shown;
            self.composer_at_box = self.views.main.composer.text();
        }
    }

    /// The agent task has ended; nothing it does will show any more.
    pub fn agent_stopped(&mut self) {
        if !self.agent_gone && !self.quit {
            self.agent_gone = true;
            self.views
                .main
                .conversation
                .push_note("The agent stopped. Press Ctrl+C twice or Ctrl+D to leave.");
        }
    }

    /// Advances animation to `now`; returns whether the screen should be drawn again.
    pub fn on_tick(&mut self, now: Instant) -> bool {
        let holding = self.type_ahead.holding(self.now);
        self.now = now;
        // The box's answer line changes when the typing pauses.
        let guarded = self.visible_approval().is_some() || self.views.picker.is_some();
        let mut changed = guarded && holding != self.type_ahead.holding(now);
        if self.is_busy() || self.has_running_tool() {
            self.frame = self.frame.wrapping_add(1);
            changed = true;
        }
        if self
            .quit_armed_at
            .is_some_and(|armed| now.saturating_duration_since(armed) > QUIT_WINDOW)
        {
            self.quit_armed_at = None;
            changed = true;
        }
        changed
    }

    /// Lays out what the next frame at `screen` shows into the caches.
    pub fn prepare(&mut self, screen: Rect) {
        self.screen = screen;
        let regions = self.regions(screen);
        let inner = Conversation::inner_area(regions.conversation);
        self.views.main.conversation.prepare(
            &source(&self.snapshot),
            usize::from(inner.width),
            usize::from(inner.height),
        );
        self.views.board.set_viewport(regions.todos);
        self.views.main.composer.fit(regions.composer.width);
        let covered = overlay_area(screen);
        if let Some(inspector) = &mut self.views.inspector {
            inspector.prepare(covered);
        }
        if let Some(pager) = &mut self.views.pager {
            pager.prepare(covered);
        }
        if let Some(help) = &mut self.views.help {
            help.prepare(covered);
        }
        if let Some(picker) = &mut self.views.picker {
            picker.prepare(covered);
        }
        if let Some(agents) = &mut self.views.agents {
            agents.prepare(&self.snapshot, covered);
        }
        if let Some(request) = self.visible_approval().cloned() {
            self.views.approval.prepare(&request, covered);
        }
    }

    /// Where each pane goes on `screen` (a pure function of the state).
    pub fn regions(&self, screen: Rect) -> Regions {
        let mut wants = Wants {
            composer_rows: self.views.main.composer.desired_rows(),
            board_rows: 0,
            board_focused: self.views.board.focused,
            has_board: !self.snapshot.board.is_empty(),
        };
        // The board's width does not depend on its height: measure it, then ask for the height.
        let width = regions(screen, Wants { has_board: true, ..wants }).todos.width;
        wants.board_rows = self.views.board.desired_rows(&self.snapshot, width, self.is_busy());
        regions(screen, wants)
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// The prompt the composer would send now.
    pub fn composer_text(&self) -> String {
        self.views.main.composer.text()
    }

    /// How many conversation blocks have been laid out so far (see `Conversation::laid_out`).
    pub fn conversation_laid_out(&self) -> usize {
        self.views.main.conversation.laid_out()
    }

    /// Whether the conversation follows new output.
    pub fn is_following(&self) -> bool {
        self.views.main.conversation.is_following()
    }

    /// The child agent the child agents' view shows, while it is open.
    pub fn shown_child(&self) -> Option<&str> {
        self.views.agents.as_ref().and_then(|agents| agents.shown())
    }

    /// The output pager, while it is open.
    pub fn pager(&self) -> Option<&Pager> {
        self.views.pager.as_deref()
    }

    /// With the inspector open: (the hit jumped to, how many hits).
    pub fn search_hits(&self) -> Option<(Option<usize>, usize)> {
        self.views
            .inspector
            .as_ref()
            .map(|inspector| (inspector.current_hit(), inspector.hit_count()))
    }

    pub fn board_focused(&self) -> bool {
        self.views.board.focused
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The approval request the modal shows, unless already answered.
    pub fn visible_approval(&self) -> Option<&ApprovalRequest> {
        let request = self.snapshot.pending_approval.as_deref()?;
        (self.answered.as_deref() != Some(request.id.as_str())).then_some(request)
    }

    /// The agent is working on a turn (a spinner is shown).
    pub fn is_busy(&self) -> bool {
        !matches!(self.snapshot.activity, Activity::Idle | Activity::AwaitingApproval)
    }

    /// A turn is under way, working or waiting for an approval: there is something to interrupt.
    pub fn turn_running(&self) -> bool {
        self.snapshot.activity != Activity::Idle && !self.agent_gone
    }

    fn has_running_tool(&self) -> bool {
        self.snapshot.tools.last().is_some_and(|run| run.status == ToolStatus::Running)
    }

    /// The snapshot with the board as the edits on their way will leave it: what keys act on.
    pub(super) fn projected(&self) -> Option<Snapshot> {
        let board = self.edits.board(&self.snapshot.board)?;
        Some(Snapshot { board: std::sync::Arc::new(board), ..self.snapshot.clone() })
    }

    /// Sends `command` to the agent; a closed channel means the agent is gone.
    pub(super) fn send(&mut self, command: Command) {
        if let Command::EditBoard(edit) = &command {
            self.edits.sent(edit);
        }
        if self.commands.send(command).is_err() {
            self.agent_stopped();
        }
    }
}

/// Child agent `id`'s conversation as `snapshot` last had it; `None` for no id, or a child that
/// has shown nothing yet.
pub(super) fn child_view<'a>(snapshot: &'a Snapshot, id: Option<&str>) -> Option<&'a Snapshot> {
    let id = id?;
    let child = snapshot.children.iter().find(|child| &*child.id == id)?;
    child.view.as_deref()
}

/// The lines at the top of the conversation: what keel's setup must tell the person (settings it
/// ignored), then first-run help, the demo banner, or a short welcome. A new conversation
/// (`/clear`) starts under the same lines, less the demo banner.
pub(super) fn intro(options: &TuiOptions) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled("Welcome to keel.", theme::TITLE)];
    for notice in options.notice.iter().flat_map(|notice| notice.trim_end().lines()) {
        lines.push(Line::styled(format!("keel {notice}"), theme::ERROR));
    }
    if let Some(note) = &options.instructions_note {
        lines.push(Line::styled(super::text::clean_line(note).into_owned(), theme::NOTICE));
    }
    if let Some(help) = &options.first_run_help {
        lines.push(Line::default());
        lines.extend(
            super::text::clean_lines(help.trim_end())
                .map(|line| Line::from(with_code(&line, theme::INTRO))),
        );
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::raw("No key at hand? Type "),
            Span::styled("/demo", theme::KEY),
            Span::raw(" to watch keel work through a sample task with a scripted model."),
        ]));
    }
    if let Some(place) = &options.demo {
        lines.push(Line::default());
        let banner = format!(
            "The demo is running: a scripted model works through a sample task; {}. Watch the \
             board fill in; Ctrl+T shows the raw request.",
            place.describe()
        );
        lines.push(Line::from(with_code(&banner, theme::INTRO)));
    }
    if options.first_run_help.is_none() && options.demo.is_none() {
        lines.push(Line::styled(
            "Tell keel what to do and press Enter. ? lists every key.",
            theme::DIM,
        ));
    }
    lines
}

/// `text` in `style`, its `code` spans (between backticks) shown as keys, without the backticks.
fn with_code(text: &str, style: ratatui::style::Style) -> Vec<Span<'static>> {
    text.split('`')
        .enumerate()
        .filter(|(_, piece)| !piece.is_empty())
        .map(|(index, piece)| {
            let style = if index % 2 == 1 { theme::KEY } else { style };
            Span::styled(piece.to_owned(), style)
        })
        .collect()
}
