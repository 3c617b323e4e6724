//! The composer's completion menu, drawn just above it: `/` at the start of the prompt lists
//! the slash commands with their one-line help (the table `/help` is written from), `@` at the
//! start of a word lists the workspace's files (`mention_paths`); both are filtered as the
//! person types. ↑/↓ choose, Tab or Enter completes, Esc closes it until the word changes.
//!
//! A menu is a pure function of the text before the cursor (and the files listed when the
//! mention began), so it is made again after every edit rather than kept in step.

use super::super::commands::SLASH_COMMANDS;
use super::super::mention_paths;
use super::super::text::{truncate, width as text_width};
use super::super::theme;
use super::pane;
use crate::runtime::sandbox::hidden::Hidden;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

/// Rows of items the menu shows at most.
const MAX_ROWS: usize = 16;
/// Columns between an item and its help.
const GAP: usize = 2;

/// What the menu completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Command,
    Mention,
}

/// One choice: what it puts in the composer and the line it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The word that replaces the one typed (`/compact`, `@src/app.py`).
    pub word: String,
    pub help: &'static str,
}

/// An open menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    pub kind: Kind,
    /// The word being completed, as typed (with its `/` or `@`).
    pub typed: String,
    pub items: Vec<Item>,
    pub selected: usize,
}

impl Menu {
    /// The menu for the composer's text: `before_cursor` is its line up to the cursor, `whole`
    /// whether that is all of the text. `files` gives the workspace's files when a mention is
    /// being typed; they come back while a mention is typed, matched or not, to be kept for the
    /// next key — the workspace is listed once a mention, not once a key.
    pub fn for_text(
        before_cursor: &str,
        whole: bool,
        files: impl FnOnce() -> Vec<String>,
    ) -> (Option<Self>, Option<Vec<String>>) {
        if whole && before_cursor.starts_with('/') && !before_cursor.contains(char::is_whitespace) {
            return (Self::commands(before_cursor), None);
        }
        let word = before_cursor.rsplit(char::is_whitespace).next().unwrap_or_default();
        let Some(query) = word.strip_prefix('@') else { return (None, None) };
        let files = files();
        let items: Vec<Item> = mention_paths::rank(query, &files)
            .into_iter()
            .map(|path| Item { word: format!("@{path}"), help: "" })
            .collect();
        let menu = (!items.is_empty()).then(|| Self {
            kind: Kind::Mention,
            typed: word.to_owned(),
            items,
            selected: 0,
        });
        (menu, Some(files))
    }

    /// The commands whose name starts with `typed` (else those that contain it).
    fn commands(typed: &str) -> Option<Self> {
        let lower = typed.to_ascii_lowercase();
        let pick = |fits: &dyn Fn(&str) -> bool| -> Vec<Item> {
            SLASH_COMMANDS
                .iter()
                .filter(|(name, ..)| fits(name))
                .map(|(name, _, help)| Item { word: (*name).to_owned(), help })
                .collect()
        };
        let mut items = pick(&|name| name.starts_with(&lower));
        if items.is_empty() {
            items = pick(&|name| name.contains(&lower[1..]));
        }
        (!items.is_empty()).then(|| Self {
            kind: Kind::Command,
            typed: typed.to_owned(),
            items,
            selected: 0,
        })
    }

    /// Keeps the choice made in `old` when it is still offered.
    pub fn keeping(mut self, old: Option<&Menu>) -> Self {
        if let Some(chosen) = old.and_then(Menu::chosen)
            && let Some(at) = self.items.iter().position(|item| item.word == chosen.word)
        {
            self.selected = at;
        }
        self
    }

    pub fn chosen(&self) -> Option<&Item> {
        self.items.get(self.selected)
    }

    /// Moves the choice up or down, round the ends.
    pub fn step(&mut self, down: bool) {
        let count = self.items.len().max(1);
        self.selected =
            if down { (self.selected + 1) % count } else { (self.selected + count - 1) % count };
    }

    /// What Enter does: run the command typed in full (`None`), or complete the choice.
    pub fn completes_on_enter(&self) -> bool {
        !(self.kind == Kind::Command && self.chosen().is_some_and(|item| item.word == self.typed))
    }

    /// The rows it takes above the composer, borders included.
    pub fn rows(&self) -> u16 {
        u16::try_from(self.items.len().min(MAX_ROWS) + 2).unwrap_or(u16::MAX)
    }

    /// Draws the menu just above `composer`, over what is there, within `screen`.
    pub fn render(&self, composer: Rect, buf: &mut Buffer) {
        let height = self.rows().min(composer.y);
        if height < 3 {
            return;
        }
        let area = Rect::new(composer.x, composer.y - height, composer.width, height);
        Clear.render(area, buf);
        let title = match self.kind {
            Kind::Command => " Commands · Tab completes · Esc closes ",
            Kind::Mention => " Files · Tab completes · Esc closes ",
        };
        let block = pane(Span::styled(title, theme::TITLE), true);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let rows = usize::from(inner.height);
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        let name_width = self.items.iter().map(|item| text_width(&item.word)).max().unwrap_or(0);
        for (row, (index, item)) in self.items.iter().enumerate().skip(first).take(rows).enumerate()
        {
            let name = truncate(&item.word, width).into_owned();
            let pad = " ".repeat(name_width.saturating_sub(text_width(&name)) + GAP);
            let room = width.saturating_sub(text_width(&name) + pad.len());
            let help = truncate(item.help, room).into_owned();
            let mut line = Line::from(vec![
                Span::styled(name, theme::KEY),
                Span::raw(pad),
                Span::styled(help, theme::DIM),
            ]);
            if index == self.selected {
                line = line.style(theme::MENU_SELECTED);
            }
            let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, &line, inner.width);
        }
    }
}

/// The menu as the main screen keeps it: the one open, the files listed for the mention being
/// typed, and the text on which the person closed it.
#[derive(Debug, Default)]
pub struct Completer {
    pub menu: Option<Menu>,
    /// The workspace's files, listed when the mention being typed began.
    files: Option<Vec<String>>,
    /// The composer's text when Esc closed the menu: it stays closed until the text changes.
    dismissed: Option<String>,
    /// Where `@` looks for files; `None`: mentions are not completed.
    workspace: Option<std::path::PathBuf>,
    /// What `@` never lists: the paths hidden from the model.
    hidden: Hidden,
}

impl Completer {
    pub fn new(workspace: Option<std::path::PathBuf>, hidden: Hidden) -> Self {
        Self { workspace, hidden, ..Self::default() }
    }

    /// Makes the menu again for the composer as it is now.
    pub fn refresh(&mut self, composer: &super::composer::Composer) {
        let shown = composer.shown();
        if self.dismissed.as_ref().is_some_and(|text| *text == shown) {
            self.menu = None;
            return;
        }
        self.dismissed = None;
        let cached = self.files.take();
        let workspace = self.workspace.clone();
        let hidden = &self.hidden;
        let files = move || match (cached, workspace) {
            (Some(files), _) => files,
            (None, Some(root)) => mention_paths::list(&root, hidden),
            (None, None) => Vec::new(),
        };
        let before = composer.before_cursor();
        let old = self.menu.take();
        let (menu, files) = Menu::for_text(&before, composer.one_line_to_cursor(), files);
        self.menu = menu.map(|menu| menu.keeping(old.as_ref()));
        self.files = files;
    }

    /// Closes the menu until the text changes.
    pub fn dismiss(&mut self, composer: &super::composer::Composer) {
        self.menu = None;
        self.files = None;
        self.dismissed = Some(composer.shown());
    }

    /// Puts the chosen word in place of the one typed, with a space to go on.
    pub fn complete(&mut self, composer: &mut super::composer::Composer) {
        let Some(menu) = self.menu.take() else { return };
        if let Some(item) = menu.chosen() {
            composer.replace_before_cursor(menu.typed.chars().count(), &format!("{} ", item.word));
        }
        self.files = None;
        self.refresh(composer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_files() -> Vec<String> {
        Vec::new()
    }

    #[test]
    fn a_slash_lists_every_command_and_typing_filters_them() {
        let all = Menu::for_text("/", true, no_files).0.unwrap();
        assert_eq!(all.items.len(), SLASH_COMMANDS.len());
        let some = Menu::for_text("/co", true, no_files).0.unwrap();
        let words: Vec<&str> = some.items.iter().map(|item| item.word.as_str()).collect();
        assert_eq!(words, vec!["/compact"]);
        assert!(Menu::for_text("/compact now", true, no_files).0.is_none(), "arguments typed");
        assert!(Menu::for_text("/co", false, no_files).0.is_none(), "not the whole prompt");
        assert!(Menu::for_text("/zzz", true, no_files).0.is_none());
    }

    #[test]
    fn an_at_sign_lists_files_ranked() {
        let files = || vec!["src/app.py".to_owned(), "README.md".to_owned()];
        let (menu, listed) = Menu::for_text("look at @ap", false, files);
        let menu = menu.unwrap();
        assert_eq!(menu.kind, Kind::Mention);
        assert_eq!(menu.typed, "@ap");
        assert_eq!(menu.chosen().unwrap().word, "@src/app.py");
        assert_eq!(listed.unwrap().len(), 2);
        assert!(Menu::for_text("mail me@ap", false, files).0.is_none(), "not at a word's start");
        let (none, kept) = Menu::for_text("@zzz", false, files);
        assert!(none.is_none() && kept.is_some(), "no match, but the listing is kept");
    }

    #[test]
    fn enter_runs_a_command_typed_whole_and_completes_one_typed_in_part() {
        let part = Menu::for_text("/cl", true, no_files).0.unwrap();
        assert!(part.completes_on_enter());
        let whole = Menu::for_text("/clear", true, no_files).0.unwrap();
        assert!(!whole.completes_on_enter());
    }
}
