//! What keys, pastes and the mouse do to the `App`: each walks the view stack (see `stack`)
//! from the top, in the order `layers` writes, and the effects the views asked for are applied
//! once the walk is over. Ctrl+C is handled before any view, so the way out always works: it
//! interrupts a running turn, and twice on an idle prompt quits. A key typed through an approval box's arrival is kept from it and goes on to
//! the composer (see `type_ahead`); so is one typed through the session picker's.

use super::app::{App, QUIT_WINDOW};
use super::commands;
use super::event::UiEvent;
use super::keymap::{HelpSection, lookup};
use super::main_view::{self, KEYS};
use super::stack::{Ctx, Effect, Hints, Layer};
use super::view::agents::AgentsView;
use super::view::help_overlay::{self, HelpOverlay};
use super::view::inspector::{self, Inspector};
use super::view::pager::Pager;
use super::view::session_picker::{self, SessionPicker};
use super::view::{agents, approval_modal, board, composer, conversation, pager};
use crate::agent::{Command, Snapshot};
use ratatui::crossterm::event::{KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;
use std::time::Instant;

/// Every key keel answers to, grouped for the help overlay.
pub fn help_sections() -> Vec<HelpSection> {
    let slash = HelpSection {
        title: "Slash commands (type in the composer, then Enter)",
        rows: commands::SLASH_COMMANDS
            .iter()
            .map(|(name, _, help)| ((*name).to_owned(), *help))
            .collect(),
    };
    vec![
        HelpSection::of("Anywhere", KEYS),
        HelpSection::of("Composer", composer::KEYS).with(composer::EDITING_HELP),
        HelpSection::of("Conversation", conversation::KEYS).with(conversation::MOUSE_HELP),
        slash,
        HelpSection::of("Board (after /todos)", board::KEYS),
        HelpSection::of("Request inspector (Ctrl+T)", inspector::KEYS),
        HelpSection::of("Tool output (Ctrl+G)", pager::KEYS),
        HelpSection::of("Approval", approval_modal::KEYS),
        HelpSection::of("Saved sessions (/resume)", session_picker::KEYS),
        HelpSection::of("Child agents (/agents)", agents::KEYS),
        HelpSection::of("This help", help_overlay::KEYS),
    ]
}

impl App {
    /// Acts on one terminal event.
    pub fn handle_event(&mut self, event: UiEvent) {
        match event {
            UiEvent::Key(key) => self.handle_key(key),
            UiEvent::Paste(text) => self.handle_paste(&text),
            UiEvent::Mouse(mouse) => self.handle_mouse(mouse),
            UiEvent::Resize => {}
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) {
        self.handle_key_at(key, Instant::now());
    }

    /// Acts on a key pressed at `now` (the time matters for the double Ctrl+C and for telling
    /// type-ahead from an answer to the approval box).
    pub fn handle_key_at(&mut self, key: KeyEvent, now: Instant) {
        if key.kind != KeyEventKind::Press {
            return;
        }
        self.now = now;
        if lookup(KEYS, &key) == Some(main_view::Action::ClearOrQuit) {
            self.clear_or_quit(now);
            return;
        }
        self.quit_armed_at = None;
        // The inspector opens over the approval box: what the box is about was sent just before.
        if self.approval_on_top() && lookup(KEYS, &key) == Some(main_view::Action::History) {
            self.apply(Effect::OpenInspector);
            return;
        }
        let boxed = self.guarded_on_top();
        let answers = boxed && self.type_ahead.accepts(now);
        if boxed && !answers {
            self.type_ahead.divert(now);
        } else if !answers {
            self.type_ahead.typed(now);
        }
        self.walk(answers, |layer, ctx| layer.key(&key, ctx));
    }

    /// A bracketed paste goes whole to the first view that takes text: the inspector's search
    /// line while it is open, else the composer, wherever the focus is.
    pub fn handle_paste(&mut self, text: &str) {
        self.walk(false, |layer, ctx| layer.paste(text, ctx));
    }

    /// The wheel scrolls whatever is on top, or the pane under the pointer; a click on the
    /// conversation, with nothing over it, unfolds or folds the diff of the call clicked.
    pub fn handle_mouse(&mut self, mouse: MouseEvent) {
        let at = Position::new(mouse.column, mouse.row);
        let up = match mouse.kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            MouseEventKind::Down(MouseButton::Left) => {
                let covered = self.overlay().is_some() || self.visible_approval().is_some();
                if !covered {
                    let area = self.regions(self.screen).conversation;
                    let source = main_view::source(&self.snapshot);
                    self.views.main.conversation.click(&source, at, area);
                }
                return;
            }
            _ => return,
        };
        let boxed = self.visible_approval().is_some();
        self.walk(boxed, |layer, ctx| layer.wheel(up, at, ctx));
    }

    /// The status-bar hints of the view that has the keyboard.
    pub fn hints(&self) -> Hints {
        let ctx = self.context();
        // While typing goes past the box, the hints are those of where the keys go.
        let answering = self.guarded_on_top() && !self.type_ahead.holding(self.now);
        let open = self.open_layers(answering).into_iter();
        open.filter_map(|slot| self.views.layer(slot)?.hints(&ctx)).next().unwrap_or_default()
    }

    /// The message that takes the hints' place, if any.
    pub fn flash(&self) -> Option<&'static str> {
        self.quit_armed_at.map(|_| "Press Ctrl+C again to quit")
    }

    fn context(&self) -> Ctx<'_> {
        Ctx {
            snapshot: &self.snapshot,
            regions: self.regions(self.screen),
            busy: self.is_busy(),
            effects: Vec::new(),
        }
    }

    /// Offers an event to each view from the top until one takes it, then applies the effects the
    /// views asked for and drops the views that are done. The approval box and the session
    /// picker are offered the event only when `to_guarded` (a key typed through their arrival
    /// passes them by).
    fn walk(
        &mut self,
        to_guarded: bool,
        mut offer: impl FnMut(&mut dyn Layer, &mut Ctx<'_>) -> bool,
    ) {
        let regions = self.regions(self.screen);
        let busy = self.is_busy();
        let open = self.open_layers(to_guarded);
        // Keys act on the board as the edits still on their way will leave it.
        let projected = self.projected();
        let snapshot = projected.as_ref().unwrap_or(&self.snapshot);
        let mut ctx = Ctx { snapshot, regions, busy, effects: Vec::new() };
        for slot in open {
            if self.views.layer_mut(slot).is_some_and(|layer| offer(layer, &mut ctx)) {
                break;
            }
        }
        let effects = ctx.effects;
        if self.views.drop_done() {
            self.inspected_child = None;
        }
        for effect in effects {
            self.apply(effect);
        }
    }

    fn apply(&mut self, effect: Effect) {
        match effect {
            Effect::Send(command) => self.send(command),
            Effect::Answer { id, decision } => {
                self.answered = Some(id.clone());
                self.send(Command::Approve { id, decision });
                self.drop_stray_answer();
            }
            Effect::OpenInspector => {
                self.views.close_readers();
                self.inspected_child = None;
                self.views.inspector = Some(Box::new(Inspector::open(&self.snapshot)));
                self.inspector_over_approval = self.visible_approval().is_some();
            }
            Effect::OpenOutput => {
                self.views.close_readers();
                self.views.pager = Pager::open(&self.snapshot).map(Box::new);
            }
            Effect::OpenTurnDiff => self.send(Command::ShowDiff),
            Effect::OpenHelp => {
                self.views.close_readers();
                self.views.help = Some(HelpOverlay::new(help_sections()));
            }
            Effect::OpenSessions => {
                self.views.close_readers();
                self.views.picker = Some(Box::new(SessionPicker::open(&self.snapshot)));
                self.type_ahead.shown(self.now);
                self.send(Command::ListSessions);
            }
            Effect::FocusBoard => self.views.board.focus(&self.snapshot),
            Effect::OpenAgents { item } => {
                self.views.close_readers();
                self.views.board.focused = false;
                self.views.agents =
                    Some(Box::new(AgentsView::open(&self.snapshot, item.as_deref())));
            }
            Effect::OpenCheck { item } => {
                if let Some(record) = self.snapshot.checks.get(&item) {
                    let pager = Pager::check(&item, record, self.views.board.clock());
                    self.views.close_readers();
                    self.views.pager = Some(Box::new(pager));
                }
            }
            Effect::InspectChild(id) => {
                let child = super::app::child_view(&self.snapshot, Some(&id));
                self.views.inspector =
                    Some(Box::new(Inspector::open(child.unwrap_or(&Snapshot::default()))));
                self.inspected_child = Some(id);
                self.inspector_over_approval = false;
            }
            Effect::Compose(text) => {
                self.views.board.focused = false;
                self.views.main.composer.prefill(&text);
            }
            Effect::Quit => self.quit(),
        }
    }

    /// The box was answered: an answer key pressed too soon after it appeared went to an empty
    /// composer (see `type_ahead`); it was meant for the box, and is not left as a prompt.
    fn drop_stray_answer(&mut self) {
        let typed = self.views.main.composer.text();
        let stray = typed.strip_prefix(self.composer_at_box.as_str()).is_some_and(|added| {
            let mut keys = added.chars();
            matches!((keys.next(), keys.next()), (Some('y' | 'a' | 'n'), None))
        });
        if stray && self.composer_at_box.is_empty() {
            self.views.main.composer.clear();
        }
    }

    /// Ctrl+C: interrupts a running turn; on an idle prompt clears it, and a second press within
    /// [`QUIT_WINDOW`] quits.
    fn clear_or_quit(&mut self, now: Instant) {
        if self.turn_running() {
            self.quit_armed_at = None;
            self.send(Command::Cancel);
            return;
        }
        let armed = self
            .quit_armed_at
            .is_some_and(|armed| now.saturating_duration_since(armed) <= QUIT_WINDOW);
        if armed {
            self.quit();
        } else {
            self.views.main.composer.clear();
            self.quit_armed_at = Some(now);
        }
    }

    /// Tells the agent to stop and leaves.
    pub(super) fn quit(&mut self) {
        if !self.quit {
            self.send(Command::Quit);
            self.quit = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's table of keys (docs/screen.md), from its header to the first line that is not
    /// a row.
    fn guide_keys() -> String {
        let guide = include_str!("../../docs/screen.md");
        let start = guide.find("| key | does |").unwrap_or(guide.len());
        guide[start..]
            .lines()
            .take_while(|line| line.starts_with('|'))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Whether the table's `text` names `key`: a letter or sign in backticks (`` `j` ``), anything
    /// longer as it is.
    fn names(text: &str, key: &str) -> bool {
        let key = key.to_lowercase();
        if key.chars().count() == 1 && key.chars().all(|c| c.is_ascii_graphic()) {
            text.contains(&format!("`{key}`"))
        } else {
            text.contains(&key)
        }
    }

    /// The table's rows about a help section's view: where its keys must be named.
    fn rows_about(table: &str, section: &str) -> String {
        let start: &[&str] = match section {
            "Board (after /todos)" => &["| on the board:"],
            "Request inspector (Ctrl+T)" => &["| ctrl+t or f2 |"],
            "Tool output (Ctrl+G)" => &["| ctrl+g or f3 |"],
            "Approval" => &["| `y` / `a` / `n` / esc in the approval box"],
            "Saved sessions (/resume)" => &["| `/resume`"],
            "Child agents (/agents)" => &["| `/agents`"],
            "This help" => &["| `?`"],
            _ => &["|"],
        };
        table
            .lines()
            .filter(|row| start.iter().any(|start| row.starts_with(start)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_guide_names_every_key_of_every_view_where_it_speaks_of_that_view() {
        let table = guide_keys().to_lowercase();
        assert!(!table.is_empty(), "docs/screen.md has its table of keys");
        for section in help_sections() {
            let rows = rows_about(&table, section.title);
            assert!(!rows.is_empty(), "docs/screen.md's table has no row about {}", section.title);
            for (keys, _) in &section.rows {
                // Slash commands, then keys (`Ctrl+T / F2`); rows that are not key chords
                // (`Mouse wheel`, `Paste`) are prose.
                let keys: Vec<&str> = match keys.split_whitespace().next() {
                    Some(name) if name.starts_with('/') => vec![name],
                    _ => {
                        keys.split(" / ").filter(|key| !key.contains(char::is_whitespace)).collect()
                    }
                };
                for key in keys {
                    assert!(
                        names(&rows, key),
                        "{key} ({}) is missing from docs/screen.md's table of keys",
                        section.title
                    );
                }
            }
        }
    }
}
