//! The composer: a multi-line editor (tui-textarea) with prompt recall and whole pastes.
//!
//! A bracketed paste arrives as one event and is inserted in one edit. A paste too big to edit
//! comfortably (over [`INLINE_PASTE_MAX_BYTES`] or [`INLINE_PASTE_MAX_LINES`]) is held aside and
//! shown as one token such as `[paste #1: 98,304 lines, 5.0 MB]`; the token is replaced by the
//! whole text when the prompt is sent. That keeps a 5 MB paste from freezing the UI: the editor
//! would otherwise re-measure megabytes on every frame, and it counts rows and columns in `u16`.
//! A token is edited only whole (`paste_tokens`): Backspace or Delete on it removes it, so a paste
//! on screen is always sent whole. The editing keys are readline's: Ctrl+U kills to the start of
//! the line; undo is Ctrl+Z.

use super::super::keymap::{Binding, KeySpec};
use super::super::text::{clean_paste, group_thousands, human_bytes, width as text_width};
use super::super::theme;
use super::{pane, paste_tokens, word_delete};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use tui_textarea::{CursorMove, TextArea};

/// Pastes up to this size go straight into the editor.
pub const INLINE_PASTE_MAX_BYTES: usize = 64 * 1024;
/// Pastes up to this many lines go straight into the editor.
pub const INLINE_PASTE_MAX_LINES: usize = 1_000;
/// Text rows the composer grows to before it scrolls.
const MAX_TEXT_ROWS: usize = 8;
const PLACEHOLDER: &str = "Ask keel to do something…  (? for help)";
/// The placeholder where the whole one would be cut: a word is never cut in half.
const SHORT_PLACEHOLDER: &str = "Ask keel to do something…";
/// Columns of the composer's box besides the placeholder: the borders, the cursor and a space.
const PLACEHOLDER_FRAME: usize = 4;
/// Said in the title while keel works; left out where it would be cut.
const QUEUED_NOTE: &str = "· queued until keel finishes ";

/// What a key does in the composer (typing and editing keys go to the editor itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Send,
    Newline,
    Older,
    Newer,
}

/// The composer's own keys.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::plain(KeyCode::Enter)],
        action: Action::Send,
        help: "send the prompt (while keel works it is queued)",
        hint: Some("send"),
    },
    Binding {
        keys: &[KeySpec::shift(KeyCode::Enter), KeySpec::alt(KeyCode::Enter), KeySpec::ctrl('j')],
        action: Action::Newline,
        help: "insert a new line",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Up)],
        action: Action::Older,
        help: "recall an earlier prompt (on an empty composer)",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Down)],
        action: Action::Newer,
        help: "recall a later prompt",
        hint: None,
    },
];

/// The editor's built-in keys, for the help overlay.
pub const EDITING_HELP: &[(&str, &str)] = &[
    ("← → ↑ ↓", "move the cursor"),
    ("Ctrl+A / Ctrl+E", "start / end of the line"),
    ("Home / End", "start / end of the line, once the composer holds text"),
    ("Ctrl+← / Ctrl+→", "previous / next word"),
    ("Backspace / Delete", "delete a character"),
    ("/ and @", "a menu of the slash commands (at the start) or the workspace's files (@path)"),
    ("Tab", "complete from the menu (/comp → /compact, @ap → @src/app.py)"),
    ("!command", "run a command yourself; the model reads its output with your next message"),
    ("Ctrl+W", "delete back to the whitespace before the cursor (a path or flag whole)"),
    ("Alt+Backspace", "delete the word before the cursor"),
    ("Ctrl+K / Ctrl+U", "delete to the end / the start of the line"),
    ("Ctrl+Z / Ctrl+R", "undo / redo"),
    ("Ctrl+Y", "paste what was last deleted"),
    ("Paste", "pasted text goes in whole; Enter inside a paste does not send"),
    ("Backspace / Delete on [paste #N…]", "remove a big paste's token, and the paste, whole"),
];

/// Text held aside for a big paste, and the token standing for it in the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Paste {
    token: String,
    text: String,
}

/// A prompt as it was in the composer, for recall.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recalled {
    shown: String,
    pastes: Vec<Paste>,
}

#[derive(Debug)]
pub struct Composer {
    editor: TextArea<'static>,
    pastes: Vec<Paste>,
    pastes_made: usize,
    history: Vec<Recalled>,
    /// The history entry on show, while the person browses with Up/Down.
    recall: Option<usize>,
}

impl Default for Composer {
    fn default() -> Self {
        Self::new()
    }
}

impl Composer {
    pub fn new() -> Self {
        Self {
            editor: editor(),
            pastes: Vec::new(),
            pastes_made: 0,
            history: Vec::new(),
            recall: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.editor.is_empty()
    }

    /// The prompt as it would be sent: big pastes put back in place of their tokens (each token
    /// on screen, a token yanked back twice included).
    pub fn text(&self) -> String {
        let mut text = self.shown();
        for paste in &self.pastes {
            text = text.replace(&paste.token, &paste.text);
        }
        text
    }

    /// What the editor shows, tokens and all.
    pub fn shown(&self) -> String {
        self.editor.lines().join("\n")
    }

    /// Takes the prompt out to send it, remembering it for recall.
    pub fn take(&mut self) -> String {
        let text = self.text();
        self.history
            .push(Recalled { shown: self.shown(), pastes: std::mem::take(&mut self.pastes) });
        self.clear();
        text
    }

    /// Replaces what the composer holds with `text`, the cursor at its end.
    pub fn prefill(&mut self, text: &str) {
        self.clear();
        self.editor.insert_str(text);
    }

    /// Empties the composer (the prompt is not remembered).
    pub fn clear(&mut self) {
        self.editor = editor();
        self.pastes.clear();
        self.recall = None;
    }

    /// Puts prompts handed back from the queue (the turn was interrupted) in front of what is
    /// being typed, one after another, to edit or drop; big ones come back as their tokens.
    pub fn take_back(&mut self, prompts: &imbl::Vector<String>) {
        if prompts.is_empty() {
            return;
        }
        let mut shown = Vec::with_capacity(prompts.len() + 1);
        let mut pastes = Vec::new();
        for prompt in prompts {
            if is_big(prompt) {
                let paste = self.hold(prompt.clone());
                shown.push(paste.token.clone());
                pastes.push(paste);
            } else {
                shown.push(prompt.clone());
            }
        }
        if !self.is_empty() {
            shown.push(self.shown());
        }
        pastes.append(&mut self.pastes);
        self.editor = editor();
        self.editor.insert_str(shown.join("\n"));
        self.pastes = pastes;
        self.recall = None;
    }

    /// Adds an earlier prompt to recall, oldest first (a resumed session's prompts).
    pub fn remember(&mut self, prompt: &str) {
        let (shown, pastes) = if is_big(prompt) {
            let paste = self.hold(prompt.to_owned());
            (paste.token.clone(), vec![paste])
        } else {
            (prompt.to_owned(), Vec::new())
        };
        self.history.push(Recalled { shown, pastes });
    }

    /// The cursor's line up to the cursor: what a completion menu completes.
    pub fn before_cursor(&self) -> String {
        let (row, column) = self.editor.cursor();
        let line = self.editor.lines().get(row).map_or("", String::as_str);
        line.chars().take(column).collect()
    }

    /// Whether the text is one line with the cursor at its end.
    pub fn one_line_to_cursor(&self) -> bool {
        let (row, column) = self.editor.cursor();
        let lines = self.editor.lines();
        lines.len() == 1 && row == 0 && lines[0].chars().count() == column
    }

    /// Replaces the `chars` characters before the cursor with `text` (a completion), as one
    /// edit.
    pub fn replace_before_cursor(&mut self, chars: usize, text: &str) {
        self.edit(|editor| {
            for _ in 0..chars {
                editor.delete_char();
            }
            editor.insert_str(text);
            true
        });
        self.recall = None;
    }

    pub fn insert_newline(&mut self) {
        self.edit(|editor| {
            editor.insert_newline();
            true
        });
    }

    /// Inserts a bracketed paste in one edit.
    pub fn paste(&mut self, raw: &str) {
        let text = clean_paste(raw);
        let lines_now = self.editor.lines().len();
        if is_big(&text) || lines_now + text.matches('\n').count() > INLINE_PASTE_MAX_LINES {
            let paste = self.hold(text);
            let token = paste.token.clone();
            self.edit(|editor| editor.insert_str(&token));
            self.pastes.push(paste);
        } else {
            self.edit(|editor| editor.insert_str(&text));
        }
        self.recall = None;
    }

    /// Hands a key to the editor: readline's Ctrl+U (kill to the start of the line) and Ctrl+Z
    /// (undo) first, then the editor's own keys.
    pub fn input(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let changed = match key.code {
            KeyCode::Char('u' | 'U') if ctrl => self.edit(TextArea::delete_line_by_head),
            KeyCode::Char('w' | 'W') if ctrl => self.edit(word_delete::to_whitespace),
            KeyCode::Char('z' | 'Z') if ctrl => self.editor.undo(),
            KeyCode::Char('r' | 'R') if ctrl => self.editor.redo(),
            _ => self.edit(|editor| editor.input(key)),
        };
        if changed {
            self.recall = None;
        }
    }

    /// Makes one edit, widened to whole tokens if it cut into one (see `paste_tokens`).
    fn edit(&mut self, op: impl FnOnce(&mut TextArea<'static>) -> bool) -> bool {
        if self.pastes.is_empty() {
            return op(&mut self.editor);
        }
        let before = self.shown();
        if !op(&mut self.editor) {
            return false;
        }
        let tokens: Vec<&str> = self.pastes.iter().map(|paste| paste.token.as_str()).collect();
        if let Some(fix) = paste_tokens::repair(&before, &self.shown(), &tokens) {
            self.redo_whole(&before, &fix);
        }
        true
    }

    /// Takes the edit back and makes `fix` instead, as undoable steps where the editor can jump
    /// there (its columns are `u16`), else by setting the text.
    fn redo_whole(&mut self, before: &str, fix: &paste_tokens::Repair) {
        let (row, column) = paste_tokens::position(before, fix.start);
        self.editor.undo();
        self.editor.cancel_selection();
        if self.editor.lines().join("\n") == before
            && let (Ok(row), Ok(column)) = (u16::try_from(row), u16::try_from(column))
        {
            self.editor.move_cursor(CursorMove::Jump(row, column));
            self.editor.delete_str(fix.remove);
            self.editor.insert_str(&fix.insert);
            return;
        }
        let chars: Vec<char> = before.chars().collect();
        let mut text: String = chars[..fix.start].iter().collect();
        text.push_str(&fix.insert);
        let cursor = paste_tokens::position(&text, text.chars().count());
        text.extend(&chars[fix.start + fix.remove..]);
        self.editor = editor();
        self.editor.insert_str(&text);
        if let (Ok(row), Ok(column)) = (u16::try_from(cursor.0), u16::try_from(cursor.1)) {
            self.editor.move_cursor(CursorMove::Jump(row, column));
        }
    }

    /// Up: shows the prompt before the one on show, if the composer is empty or still shows an
    /// unedited recalled prompt with the cursor on its first row. Returns whether it did.
    pub fn older(&mut self) -> bool {
        let target = match self.recall {
            None if self.is_empty() => self.history.len().checked_sub(1),
            Some(index) if self.unedited(index) && self.editor.cursor().0 == 0 => {
                index.checked_sub(1)
            }
            _ => None,
        };
        let Some(target) = target else {
            return self.recall.is_some();
        };
        self.show(target);
        true
    }

    /// Down: the prompt after the one on show, or an empty composer after the newest.
    pub fn newer(&mut self) -> bool {
        let Some(index) = self.recall else {
            return false;
        };
        let last_row = self.editor.lines().len() - 1;
        if !self.unedited(index) || self.editor.cursor().0 != last_row {
            return false;
        }
        if index + 1 < self.history.len() {
            self.show(index + 1);
        } else {
            self.clear();
        }
        true
    }

    fn unedited(&self, index: usize) -> bool {
        self.history.get(index).is_some_and(|entry| entry.shown == self.shown())
    }

    fn show(&mut self, index: usize) {
        let Some(entry) = self.history.get(index).cloned() else {
            return;
        };
        self.editor = editor();
        self.editor.insert_str(&entry.shown);
        self.pastes = entry.pastes;
        self.recall = Some(index);
    }

    fn hold(&mut self, text: String) -> Paste {
        self.pastes_made += 1;
        let lines = text.lines().count().max(1);
        let token = format!(
            "[paste #{}: {} lines, {}]",
            self.pastes_made,
            group_thousands(lines),
            human_bytes(text.len())
        );
        Paste { token, text }
    }

    /// Rows the composer would like, border included.
    pub fn desired_rows(&self) -> u16 {
        let rows = self.editor.lines().len().clamp(1, MAX_TEXT_ROWS) + 2;
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    /// Draws the composer. `busy`: a turn is running, so what is sent now will be queued.
    /// Fits the placeholder to a box `width` columns wide: whole, or its first words only.
    pub fn fit(&mut self, width: u16) {
        let room = usize::from(width).saturating_sub(PLACEHOLDER_FRAME);
        let text = if text_width(PLACEHOLDER) <= room { PLACEHOLDER } else { SHORT_PLACEHOLDER };
        if self.editor.placeholder_text() != text {
            self.editor.set_placeholder_text(text);
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, focused: bool, busy: bool) {
        let title_room = usize::from(area.width).saturating_sub(2);
        let title = if busy && text_width(" Prompt ") + text_width(QUEUED_NOTE) <= title_room {
            Line::from(vec![
                Span::styled(" Prompt ", theme::TITLE),
                Span::styled(QUEUED_NOTE, theme::DIM),
            ])
        } else {
            Line::styled(" Prompt ", theme::TITLE)
        };
        let block = pane(title, focused);
        let inner = block.inner(area);
        block.render(area, buf);
        if !inner.is_empty() {
            self.editor.render(inner, buf);
        }
    }
}

fn editor() -> TextArea<'static> {
    let mut editor = TextArea::default();
    editor.set_cursor_line_style(Style::default());
    editor.set_placeholder_text(PLACEHOLDER);
    editor.set_placeholder_style(theme::DIM);
    editor.set_max_histories(MAX_UNDO);
    editor
}

/// Undo steps the editor keeps.
const MAX_UNDO: usize = 200;

fn is_big(text: &str) -> bool {
    text.len() > INLINE_PASTE_MAX_BYTES || text.matches('\n').count() >= INLINE_PASTE_MAX_LINES
}

#[cfg(test)]
mod tests;
