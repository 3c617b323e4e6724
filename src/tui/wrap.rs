//! Wrapping styled text to a width, producing the exact lines that will be drawn.
//!
//! ratatui's `Paragraph` wraps while it draws and cannot say how many lines it will take without
//! drawing. keel needs the height of every entry before drawing (to scroll and to draw only what
//! is visible), so it wraps once here, caches the result per width, and draws the lines as they are.
//! Widths are terminal columns; text is expected to be cleaned already (see `text`).

use super::text::char_width;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The prefixes drawn before the first and the following lines of one logical line (list bullets,
/// quote bars, margins).
#[derive(Debug, Clone, Default)]
pub struct Prefix {
    pub first: Vec<Span<'static>>,
    pub rest: Vec<Span<'static>>,
}

impl Prefix {
    /// The same prefix on every line.
    pub fn uniform(spans: Vec<Span<'static>>) -> Self {
        Self { first: spans.clone(), rest: spans }
    }
}

/// Collects spans into lines no wider than `width`, merging neighbours of the same style.
struct LineBuilder<'a> {
    width: usize,
    rest_prefix: &'a [Span<'static>],
    lines: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    used: usize,
    has_content: bool,
}

impl<'a> LineBuilder<'a> {
    fn new(width: usize, prefix: &'a Prefix) -> Self {
        let mut builder = Self {
            width: width.max(1),
            rest_prefix: &prefix.rest,
            lines: Vec::new(),
            spans: Vec::new(),
            used: 0,
            has_content: false,
        };
        for span in &prefix.first {
            builder.push(&span.content, span.style);
        }
        builder.has_content = false;
        builder
    }

    fn room(&self) -> usize {
        self.width.saturating_sub(self.used)
    }

    fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        self.used += text.chars().map(char_width).sum::<usize>();
        self.has_content = true;
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn break_line(&mut self) {
        let spans = std::mem::take(&mut self.spans);
        self.lines.push(Line::from(spans));
        self.used = 0;
        for span in self.rest_prefix {
            self.push(&span.content, span.style);
        }
        self.has_content = false;
    }

    /// Places `text` character by character, breaking lines as they fill; at least one character
    /// goes on every line so a width smaller than the prefix still makes progress.
    fn push_breaking(&mut self, text: &str, style: Style) {
        let mut start = 0;
        let mut used_here = 0;
        for (index, c) in text.char_indices() {
            let w = char_width(c);
            if self.used + used_here + w > self.width && (self.has_content || used_here > 0) {
                self.push(&text[start..index], style);
                self.break_line();
                start = index;
                used_here = 0;
            }
            used_here += w;
        }
        self.push(&text[start..], style);
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        let spans = std::mem::take(&mut self.spans);
        self.lines.push(Line::from(spans));
        self.lines
    }
}

/// A run of spaces or of non-spaces, possibly crossing span boundaries.
struct Token<'s> {
    space: bool,
    parts: Vec<(&'s str, Style)>,
    width: usize,
}

fn tokens<'s>(spans: &'s [Span<'s>]) -> Vec<Token<'s>> {
    let mut tokens: Vec<Token<'s>> = Vec::new();
    for span in spans {
        let text: &str = &span.content;
        let mut start = 0;
        let mut current: Option<bool> = None;
        let mut width = 0;
        let flush = |tokens: &mut Vec<Token<'s>>, space: bool, part: &'s str, width: usize| {
            if part.is_empty() {
                return;
            }
            match tokens.last_mut() {
                Some(last) if last.space == space => {
                    last.parts.push((part, span.style));
                    last.width += width;
                }
                _ => tokens.push(Token { space, parts: vec![(part, span.style)], width }),
            }
        };
        for (index, c) in text.char_indices() {
            let space = c == ' ';
            if current.is_some_and(|kind| kind != space) {
                flush(&mut tokens, !space, &text[start..index], width);
                start = index;
                width = 0;
            }
            current = Some(space);
            width += char_width(c);
        }
        if let Some(space) = current {
            flush(&mut tokens, space, &text[start..], width);
        }
    }
    tokens
}

/// Word-wraps one logical line. Spaces at a break are dropped; leading spaces are kept (they are
/// indentation); a word longer than a whole line is broken between characters.
pub fn wrap(spans: &[Span<'static>], width: usize, prefix: &Prefix) -> Vec<Line<'static>> {
    let mut builder = LineBuilder::new(width, prefix);
    let mut pending_space: Option<Token<'_>> = None;
    for token in tokens(spans) {
        if token.space {
            if builder.has_content || builder.lines.is_empty() {
                pending_space = Some(token);
            }
            continue;
        }
        let space_width = pending_space.as_ref().map_or(0, |space| space.width);
        if space_width + token.width <= builder.room() {
            for (part, style) in pending_space.take().into_iter().flat_map(|t| t.parts) {
                builder.push(part, style);
            }
        } else {
            pending_space = None;
            if builder.has_content {
                builder.break_line();
            }
        }
        for (part, style) in token.parts {
            builder.push_breaking(part, style);
        }
    }
    builder.finish()
}

/// Breaks one logical line between characters at exactly `width`, keeping every space (for code).
pub fn hard_wrap(spans: &[Span<'static>], width: usize, prefix: &Prefix) -> Vec<Line<'static>> {
    let mut builder = LineBuilder::new(width, prefix);
    for span in spans {
        builder.push_breaking(&span.content, span.style);
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    #[test]
    fn words_wrap_at_spaces() {
        let spans = vec![Span::raw("the quick brown fox jumps")];
        let lines = wrap(&spans, 10, &Prefix::default());
        assert_eq!(text(&lines), ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn long_words_break_and_prefixes_repeat() {
        let spans = vec![Span::raw("abcdefghij xy")];
        let prefix = Prefix { first: vec![Span::raw("- ")], rest: vec![Span::raw("  ")] };
        let lines = wrap(&spans, 6, &prefix);
        assert_eq!(text(&lines), ["- abcd", "  efgh", "  ij", "  xy"]);
    }

    #[test]
    fn styles_are_kept_across_a_word() {
        let spans = vec![
            Span::styled("bold", Style::new().add_modifier(ratatui::style::Modifier::BOLD)),
            Span::raw("ness and more"),
        ];
        let lines = wrap(&spans, 9, &Prefix::default());
        assert_eq!(text(&lines), ["boldness", "and more"]);
        assert_eq!(lines[0].spans.len(), 2);
    }

    #[test]
    fn leading_indentation_is_kept() {
        let lines = wrap(&[Span::raw("    indented")], 20, &Prefix::default());
        assert_eq!(text(&lines), ["    indented"]);
    }

    #[test]
    fn tiny_widths_still_progress() {
        let prefix = Prefix::uniform(vec![Span::raw("> ")]);
        let lines = wrap(&[Span::raw("abc")], 1, &prefix);
        assert_eq!(text(&lines), ["> a", "> b", "> c"]);
        assert_eq!(text(&hard_wrap(&[Span::raw("a  b")], 2, &Prefix::default())), ["a ", " b"]);
    }

    #[test]
    fn empty_input_is_one_empty_line() {
        assert_eq!(text(&wrap(&[], 10, &Prefix::default())), [""]);
    }
}
