//! Key bindings as data: each component lists its keys once, and that one list is used both to
//! dispatch key presses and to write the help overlay and the status-bar hints, so the help is
//! always true (the way gitui's components list their own commands).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The modifiers a binding can ask for; others (Super, Hyper, Meta) are ignored when matching.
const RELEVANT: KeyModifiers =
    KeyModifiers::CONTROL.union(KeyModifiers::ALT).union(KeyModifiers::SHIFT);

/// One key chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl KeySpec {
    pub const fn plain(code: KeyCode) -> Self {
        Self { code, modifiers: KeyModifiers::NONE }
    }

    pub const fn char(c: char) -> Self {
        Self::plain(KeyCode::Char(c))
    }

    pub const fn ctrl(c: char) -> Self {
        Self { code: KeyCode::Char(c), modifiers: KeyModifiers::CONTROL }
    }

    pub const fn alt(code: KeyCode) -> Self {
        Self { code, modifiers: KeyModifiers::ALT }
    }

    pub const fn shift(code: KeyCode) -> Self {
        Self { code, modifiers: KeyModifiers::SHIFT }
    }

    /// Whether `key` is this chord. For characters Shift is part of the character itself (`G`,
    /// `?`), so it is not compared.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let mut wanted = self.modifiers & RELEVANT;
        let mut got = key.modifiers & RELEVANT;
        if let KeyCode::Char(_) = self.code {
            wanted.remove(KeyModifiers::SHIFT);
            got.remove(KeyModifiers::SHIFT);
            let same_char = match (self.code, key.code) {
                (KeyCode::Char(a), KeyCode::Char(b)) if !wanted.is_empty() => {
                    a.eq_ignore_ascii_case(&b)
                }
                (a, b) => a == b,
            };
            return same_char && wanted == got;
        }
        self.code == key.code && wanted == got
    }

    /// How the chord is written in help: `Ctrl+T`, `Shift+Enter`, `PgUp`, `?`.
    pub fn label(&self) -> String {
        let mut out = String::new();
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            out.push_str("Ctrl+");
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            out.push_str("Alt+");
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            out.push_str("Shift+");
        }
        let ctrl_like = !self.modifiers.is_empty();
        match self.code {
            KeyCode::Char(' ') => out.push_str("Space"),
            KeyCode::Char(c) if ctrl_like => out.push(c.to_ascii_uppercase()),
            KeyCode::Char(c) => out.push(c),
            KeyCode::Enter => out.push_str("Enter"),
            KeyCode::Esc => out.push_str("Esc"),
            KeyCode::Up => out.push('↑'),
            KeyCode::Down => out.push('↓'),
            KeyCode::Left => out.push('←'),
            KeyCode::Right => out.push('→'),
            KeyCode::PageUp => out.push_str("PgUp"),
            KeyCode::PageDown => out.push_str("PgDn"),
            KeyCode::Home => out.push_str("Home"),
            KeyCode::End => out.push_str("End"),
            KeyCode::Tab => out.push_str("Tab"),
            // Shift+Tab arrives as BackTab, often with Shift held as well.
            KeyCode::BackTab if !out.ends_with("Shift+") => out.push_str("Shift+Tab"),
            KeyCode::BackTab => out.push_str("Tab"),
            KeyCode::Backspace => out.push_str("Backspace"),
            KeyCode::F(n) => out.push_str(&format!("F{n}")),
            other => out.push_str(&format!("{other:?}")),
        }
        out
    }
}

/// Keys that do one thing, with what the help says about it.
#[derive(Debug, Clone, Copy)]
pub struct Binding<A> {
    pub keys: &'static [KeySpec],
    pub action: A,
    /// The line in the help overlay.
    pub help: &'static str,
    /// A short label for the status bar, for the few keys worth showing there.
    pub hint: Option<&'static str>,
}

/// The action bound to `key`, if any.
pub fn lookup<A: Copy>(bindings: &[Binding<A>], key: &KeyEvent) -> Option<A> {
    bindings
        .iter()
        .find(|binding| binding.keys.iter().any(|spec| spec.matches(key)))
        .map(|binding| binding.action)
}

/// All the chords of one binding: `Ctrl+T / F2` (chords written alike once: Shift+Tab comes
/// with and without Shift held).
pub fn keys_label(keys: &[KeySpec]) -> String {
    let mut labels: Vec<String> = keys.iter().map(KeySpec::label).collect();
    labels.dedup();
    labels.join(" / ")
}

/// One titled group of the help overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpSection {
    pub title: &'static str,
    pub rows: Vec<(String, &'static str)>,
}

impl HelpSection {
    /// A section listing `bindings`.
    pub fn of<A>(title: &'static str, bindings: &[Binding<A>]) -> Self {
        Self {
            title,
            rows: bindings.iter().map(|binding| (keys_label(binding.keys), binding.help)).collect(),
        }
    }

    /// Adds rows for input that is not a key chord (the mouse wheel, typing).
    pub fn with(mut self, extra: &[(&'static str, &'static str)]) -> Self {
        self.rows.extend(extra.iter().map(|(keys, help)| ((*keys).to_owned(), *help)));
        self
    }
}

/// Longest key label a status-bar hint shows before it keeps only the first chord.
const HINT_KEYS_MAX: usize = 7;

/// The status-bar hints of `bindings`: (keys, short label). A binding's further chords are shown
/// when they are short letters (`Esc/q`), else only its first (`Ctrl+T`, `j` of `j`/`↓`);
/// neighbouring bindings with the same hint share it (`j/k scroll`).
pub fn hints<A>(bindings: &[Binding<A>]) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = Vec::new();
    let mut previous_hint = None;
    for binding in bindings {
        let (Some(hint), Some(first)) = (binding.hint, binding.keys.first()) else {
            previous_hint = None;
            continue;
        };
        if previous_hint == Some(hint) {
            if let Some((keys, _)) = out.last_mut() {
                keys.push('/');
                keys.push_str(&first.label());
            }
            continue;
        }
        let mut label = first.label();
        for spec in &binding.keys[1..] {
            let more = format!("{label}/{}", spec.label());
            if !matches!(spec.code, KeyCode::Char(_)) || more.chars().count() > HINT_KEYS_MAX {
                break;
            }
            label = more;
        }
        out.push((label, hint));
        previous_hint = Some(hint);
    }
    out
}

/// Where a scroll key moves a view, or the board's selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
}

impl Motion {
    /// The line (or item) `from` moves to, `page` lines a page; the bottom is `usize::MAX`, for
    /// the caller to clamp.
    pub fn from(self, from: usize, page: usize) -> usize {
        match self {
            Self::Up => from.saturating_sub(1),
            Self::Down => from.saturating_add(1),
            Self::PageUp => from.saturating_sub(page),
            Self::PageDown => from.saturating_add(page),
            Self::Top => 0,
            Self::Bottom => usize::MAX,
        }
    }
}

/// What a scrolling view says of the six scroll rows it shares (see [`scrolling_keys`]).
#[derive(Debug, Clone, Copy)]
pub struct ScrollRows {
    /// The chords of a page up (the pager adds `b`, as `less` has it).
    pub page_up: &'static [KeySpec],
    /// Where the top key goes, and the bottom key, in the view's words.
    pub top: &'static str,
    pub bottom: &'static str,
}

impl ScrollRows {
    /// The rows with the shared chords, the view naming the top and the bottom.
    pub const fn ends(top: &'static str, bottom: &'static str) -> Self {
        Self { page_up: scroll_keys::PAGE_UP, top, bottom }
    }
}

/// A scrolling view's key table: the six scroll rows every one shares (`j`/`k`, the pages, the
/// top and the bottom, `$scroll` making the view's action of a [`Motion`], `$rows` naming the
/// ends), then, for a view that searches, the search rows (`/`, `n`, `N`), then the view's own.
macro_rules! scrolling_keys {
    (
        $scroll:path, $rows:expr;
        search: $open:expr, $next:expr, $previous:expr;
        $($own:expr),* $(,)?
    ) => {
        $crate::tui::keymap::scrolling_keys![
            $scroll,
            $rows;
            $crate::tui::keymap::Binding {
                keys: &[$crate::tui::keymap::KeySpec::char('/')],
                action: $open,
                help: "search (Enter to find, Esc to cancel)",
                hint: Some("search"),
            },
            $crate::tui::keymap::Binding {
                keys: &[$crate::tui::keymap::KeySpec::char('n')],
                action: $next,
                help: "next match",
                hint: Some("next"),
            },
            $crate::tui::keymap::Binding {
                keys: &[$crate::tui::keymap::KeySpec::char('N')],
                action: $previous,
                help: "previous match",
                hint: None,
            },
            $($own),*
        ]
    };
    ($scroll:path, $rows:expr; $($own:expr),* $(,)?) => {
        &[
            $crate::tui::keymap::Binding {
                keys: $crate::tui::keymap::scroll_keys::DOWN,
                action: $scroll($crate::tui::keymap::Motion::Down),
                help: "scroll down",
                hint: Some("scroll"),
            },
            $crate::tui::keymap::Binding {
                keys: $crate::tui::keymap::scroll_keys::UP,
                action: $scroll($crate::tui::keymap::Motion::Up),
                help: "scroll up",
                hint: Some("scroll"),
            },
            $crate::tui::keymap::Binding {
                keys: $rows.page_up,
                action: $scroll($crate::tui::keymap::Motion::PageUp),
                help: "up a page",
                hint: None,
            },
            $crate::tui::keymap::Binding {
                keys: $crate::tui::keymap::scroll_keys::PAGE_DOWN,
                action: $scroll($crate::tui::keymap::Motion::PageDown),
                help: "down a page",
                hint: None,
            },
            $crate::tui::keymap::Binding {
                keys: $crate::tui::keymap::scroll_keys::TOP,
                action: $scroll($crate::tui::keymap::Motion::Top),
                help: $rows.top,
                hint: None,
            },
            $crate::tui::keymap::Binding {
                keys: $crate::tui::keymap::scroll_keys::BOTTOM,
                action: $scroll($crate::tui::keymap::Motion::Bottom),
                help: $rows.bottom,
                hint: None,
            },
            $($own),*
        ]
    };
}
pub(crate) use scrolling_keys;

/// The hints with the way out first ("close"): a narrow status bar keeps the first hints and
/// drops the rest.
pub fn close_first(mut hints: Vec<(String, &'static str)>) -> Vec<(String, &'static str)> {
    if let Some(close) = hints.iter().position(|(_, hint)| *hint == "close") {
        let close = hints.remove(close);
        hints.insert(0, close);
    }
    hints
}

/// The keys every scrolling view shares — the help, the inspector, the pager, the board (whose
/// `j`/`k` move its selection) — written once so that they cannot drift apart.
pub mod scroll_keys {
    use super::KeySpec;
    use ratatui::crossterm::event::KeyCode;

    pub const DOWN: &[KeySpec] = &[KeySpec::char('j'), KeySpec::plain(KeyCode::Down)];
    pub const UP: &[KeySpec] = &[KeySpec::char('k'), KeySpec::plain(KeyCode::Up)];
    pub const PAGE_UP: &[KeySpec] = &[KeySpec::plain(KeyCode::PageUp)];
    pub const PAGE_DOWN: &[KeySpec] = &[KeySpec::plain(KeyCode::PageDown), KeySpec::char(' ')];
    pub const TOP: &[KeySpec] = &[KeySpec::char('g'), KeySpec::plain(KeyCode::Home)];
    pub const BOTTOM: &[KeySpec] = &[KeySpec::char('G'), KeySpec::plain(KeyCode::End)];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn characters_ignore_shift_and_control_ignores_case() {
        assert!(KeySpec::char('G').matches(&key(KeyCode::Char('G'), KeyModifiers::SHIFT)));
        assert!(!KeySpec::char('g').matches(&key(KeyCode::Char('G'), KeyModifiers::SHIFT)));
        assert!(KeySpec::char('?').matches(&key(KeyCode::Char('?'), KeyModifiers::SHIFT)));
        assert!(KeySpec::ctrl('t').matches(&key(KeyCode::Char('t'), KeyModifiers::CONTROL)));
        assert!(!KeySpec::ctrl('t').matches(&key(KeyCode::Char('t'), KeyModifiers::NONE)));
        assert!(!KeySpec::char('t').matches(&key(KeyCode::Char('t'), KeyModifiers::CONTROL)));
    }

    #[test]
    fn other_keys_compare_modifiers() {
        let shift_enter = KeySpec::shift(KeyCode::Enter);
        assert!(shift_enter.matches(&key(KeyCode::Enter, KeyModifiers::SHIFT)));
        assert!(!shift_enter.matches(&key(KeyCode::Enter, KeyModifiers::NONE)));
    }

    #[test]
    fn hints_join_short_keys_and_neighbours() {
        const TABLE: &[Binding<u8>] = &[
            Binding {
                keys: &[KeySpec::char('j'), KeySpec::plain(KeyCode::Down)],
                action: 0,
                help: "down",
                hint: Some("scroll"),
            },
            Binding {
                keys: &[KeySpec::char('k'), KeySpec::plain(KeyCode::Up)],
                action: 1,
                help: "up",
                hint: Some("scroll"),
            },
            Binding {
                keys: &[KeySpec::plain(KeyCode::Esc), KeySpec::char('q'), KeySpec::ctrl('t')],
                action: 2,
                help: "close",
                hint: Some("close"),
            },
        ];
        assert_eq!(hints(TABLE), [("j/k".to_owned(), "scroll"), ("Esc/q".to_owned(), "close")]);
    }

    #[test]
    fn labels_read_like_the_keyboard() {
        assert_eq!(keys_label(&[KeySpec::ctrl('t'), KeySpec::plain(KeyCode::F(2))]), "Ctrl+T / F2");
        assert_eq!(KeySpec::shift(KeyCode::Enter).label(), "Shift+Enter");
    }
}
