//! The model's Markdown as styled terminal lines.
//!
//! Two steps, so the expensive one can be cached: [`parse`] turns the text into width-independent
//! logical lines (spans plus the prefixes their containers give them: list bullets, quote bars,
//! code gutters), and [`Document::lines`] wraps those to a width. Headings, emphasis, lists (nested,
//! numbered, task lists), quotes, inline code, fenced code, links, rules and tables (`table`) are
//! drawn; anything else is shown as its text. The text is cleaned of escape sequences first.

mod table;

use super::text::{clean_line, clean_lines, width};
use super::theme;
use super::wrap::{Prefix, hard_wrap, wrap};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use table::Table;

/// Bullets by nesting depth; deeper lists reuse the last.
const BULLETS: [&str; 3] = ["•", "◦", "▪"];
/// Drawn before every line of a block quote.
const QUOTE_BAR: &str = "│ ";
/// Drawn before every line of a fenced code block.
const CODE_GUTTER: &str = "▏ ";
/// The character a horizontal rule is drawn with.
const RULE: &str = "─";

/// How a logical line is fitted to the width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Word wrap (prose).
    Wrap,
    /// Break between characters, keeping every space (code).
    Hard,
    /// A horizontal rule as wide as the room left.
    Rule,
}

#[derive(Debug, Clone)]
struct Logical {
    spans: Vec<Span<'static>>,
    prefix: Prefix,
    fit: Fit,
}

/// Parsed Markdown, ready to be laid out at any width.
#[derive(Debug, Clone, Default)]
pub struct Document {
    logical: Vec<Logical>,
}

impl Document {
    /// The document wrapped to `width` columns, each line starting with `margin`.
    pub fn lines(&self, width: usize, margin: &str) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for logical in &self.logical {
            let prefix = with_margin(&logical.prefix, margin);
            match logical.fit {
                Fit::Wrap => out.extend(wrap(&logical.spans, width, &prefix)),
                Fit::Hard => out.extend(hard_wrap(&logical.spans, width, &prefix)),
                Fit::Rule => {
                    let used: usize = prefix.first.iter().map(Span::width).sum();
                    let rule = RULE.repeat(width.saturating_sub(used).max(1));
                    let mut spans = prefix.first;
                    spans.push(Span::styled(rule, theme::GUTTER));
                    out.push(Line::from(spans));
                }
            }
        }
        out
    }
}

fn with_margin(prefix: &Prefix, margin: &str) -> Prefix {
    if margin.is_empty() {
        return prefix.clone();
    }
    let add = |spans: &[Span<'static>]| {
        let mut out = vec![Span::raw(margin.to_owned())];
        out.extend(spans.iter().cloned());
        out
    };
    Prefix { first: add(&prefix.first), rest: add(&prefix.rest) }
}

/// Parses Markdown into a [`Document`].
pub fn parse(text: &str) -> Document {
    // Escape sequences are removed before parsing: the parser would split them (`[` may open a
    // link) and leave their tails behind as text.
    let cleaned: String;
    let text = if text.chars().any(|c| c.is_control() && c != '\n') {
        cleaned = clean_lines(text).collect::<Vec<_>>().join("\n");
        &cleaned
    } else {
        text
    };
    let options =
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_TABLES;
    let mut builder = Builder::default();
    for event in Parser::new_ext(text, options) {
        builder.event(event);
    }
    builder.flush_line();
    Document { logical: builder.out }
}

/// Parses and lays out in one step.
pub fn render(text: &str, width: usize, margin: &str) -> Vec<Line<'static>> {
    parse(text).lines(width, margin)
}

/// The blank line `render` puts between two top-level blocks, at this width and margin.
pub fn block_gap(width: usize, margin: &str) -> Vec<Line<'static>> {
    let blank = Logical { spans: Vec::new(), prefix: Prefix::default(), fit: Fit::Wrap };
    Document { logical: vec![blank] }.lines(width, margin)
}

#[derive(Debug)]
enum Container {
    Quote,
    Item { marker: String, pending: bool },
}

#[derive(Debug, Default)]
struct Builder {
    out: Vec<Logical>,
    spans: Vec<Span<'static>>,
    prefix: Option<Prefix>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// The next number of each open list (`None` for bullet lists).
    lists: Vec<Option<u64>>,
    needs_blank: bool,
    code: Option<String>,
    links: Vec<(String, String)>,
    /// The table being parsed: text goes to its cells.
    table: Option<Table>,
}

impl Builder {
    fn style(&self) -> Style {
        self.styles.iter().fold(Style::new(), |acc, style| acc.patch(*style))
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => match &mut self.code {
                Some(code) => code.push_str(&text),
                None => self.text(&text, self.style()),
            },
            Event::Code(code) => self.text(&code, self.style().patch(theme::INLINE_CODE)),
            Event::InlineMath(math) | Event::DisplayMath(math) => self.text(&math, self.style()),
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html, self.style()),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]"), self.style()),
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => self.flush_line(),
            Event::Rule => {
                self.start_block();
                let prefix = self.line_prefix();
                self.out.push(Logical { spans: Vec::new(), prefix, fit: Fit::Rule });
                self.needs_blank = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " }, theme::GUTTER);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                self.styles.push(heading_style(level));
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(_) => {
                self.start_block();
                self.code = Some(String::new());
            }
            Tag::List(start) => {
                if self.in_item() {
                    self.flush_line();
                } else {
                    self.start_block();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_line();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    _ => format!("{} ", BULLETS[depth.min(BULLETS.len() - 1)]),
                };
                self.containers.push(Container::Item { marker, pending: true });
            }
            Tag::Table(alignments) => {
                self.start_block();
                self.table = Some(Table::new(alignments));
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.start_row(matches!(tag, Tag::TableHead));
                }
            }
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.start_cell();
                }
            }
            Tag::Emphasis => self.styles.push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.styles.push(Style::new().add_modifier(Modifier::CROSSED_OUT))
            }
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.styles.push(theme::LINK);
                self.links.push((dest_url.to_string(), String::new()));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.end_block(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_line();
                self.containers.pop();
                self.needs_blank = true;
            }
            TagEnd::CodeBlock => {
                let code = self.code.take().unwrap_or_default();
                let mut prefix = self.line_prefix();
                prefix.first.push(Span::styled(CODE_GUTTER, theme::GUTTER));
                prefix.rest.push(Span::styled(CODE_GUTTER, theme::GUTTER));
                for line in code.trim_end_matches('\n').split('\n') {
                    self.out.push(Logical {
                        spans: vec![Span::styled(clean_line(line).into_owned(), theme::CODE_BLOCK)],
                        prefix: prefix.clone(),
                        fit: Fit::Hard,
                    });
                }
                self.needs_blank = true;
            }
            TagEnd::List(_) => {
                self.flush_line();
                self.lists.pop();
                self.needs_blank = true;
            }
            TagEnd::Item => {
                self.flush_line();
                self.containers.pop();
            }
            TagEnd::Table => {
                let lines = self.table.take().map(Table::lines).unwrap_or_default();
                let prefix = self.line_prefix();
                let rest = Prefix::uniform(prefix.rest.clone());
                for (index, spans) in lines.into_iter().enumerate() {
                    let prefix = if index == 0 { prefix.clone() } else { rest.clone() };
                    self.out.push(Logical { spans, prefix, fit: Fit::Hard });
                }
                self.needs_blank = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some((dest, text)) = self.links.pop()
                    && !dest.is_empty()
                    && dest != text
                {
                    self.text(&format!(" ({dest})"), theme::DIM);
                }
            }
            _ => {}
        }
    }

    fn in_item(&self) -> bool {
        self.containers.iter().any(|container| matches!(container, Container::Item { .. }))
    }

    fn start_block(&mut self) {
        self.flush_line();
        if self.needs_blank && !self.out.is_empty() {
            let bars: Vec<Span<'static>> = self
                .containers
                .iter()
                .filter(|container| matches!(container, Container::Quote))
                .map(|_| Span::styled(QUOTE_BAR.trim_end(), theme::GUTTER))
                .collect();
            self.out.push(Logical {
                spans: Vec::new(),
                prefix: Prefix::uniform(bars),
                fit: Fit::Wrap,
            });
        }
        self.needs_blank = false;
    }

    fn end_block(&mut self) {
        self.flush_line();
        self.needs_blank = true;
    }

    /// The prefixes the open containers give the next logical line; consumes pending list markers.
    fn line_prefix(&mut self) -> Prefix {
        let mut prefix = Prefix::default();
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    prefix.first.push(Span::styled(QUOTE_BAR, theme::GUTTER));
                    prefix.rest.push(Span::styled(QUOTE_BAR, theme::GUTTER));
                }
                Container::Item { marker, pending } => {
                    let pad = " ".repeat(width(marker));
                    if *pending {
                        prefix.first.push(Span::styled(marker.clone(), theme::GUTTER));
                        *pending = false;
                    } else {
                        prefix.first.push(Span::raw(pad.clone()));
                    }
                    prefix.rest.push(Span::raw(pad));
                }
            }
        }
        prefix
    }

    fn text(&mut self, text: &str, style: Style) {
        if let Some(table) = &mut self.table {
            if let Some((_, link_text)) = self.links.last_mut() {
                link_text.push_str(text);
            }
            table.push(Span::styled(clean_line(text).into_owned(), style));
            return;
        }
        for (index, piece) in text.split('\n').enumerate() {
            if index > 0 {
                self.flush_line();
            }
            if piece.is_empty() {
                continue;
            }
            if self.prefix.is_none() {
                self.prefix = Some(self.line_prefix());
            }
            if let Some((_, link_text)) = self.links.last_mut() {
                link_text.push_str(piece);
            }
            self.spans.push(Span::styled(clean_line(piece).into_owned(), style));
        }
    }

    fn flush_line(&mut self) {
        if let Some(prefix) = self.prefix.take() {
            self.out.push(Logical {
                spans: std::mem::take(&mut self.spans),
                prefix,
                fit: Fit::Wrap,
            });
        }
    }
}

fn heading_style(level: HeadingLevel) -> Style {
    match level {
        HeadingLevel::H1 => theme::HEADING.add_modifier(Modifier::UNDERLINED),
        HeadingLevel::H2 => theme::HEADING,
        _ => theme::HEADING.add_modifier(Modifier::ITALIC),
    }
}

#[cfg(test)]
mod tests;
