//! Words as the shell will pass them: quotes removed, variables and `~` replaced by what keel can
//! know of their values, and what it cannot know kept as a marked gap.
//!
//! A gap ([`Ch::Unknown`]) is a value keel cannot see — a command's output, `read`, a loop
//! variable. The checks assume it may be empty or any ordinary name, but not `/` itself: keel
//! guards against accidents such as `rm -rf "$dir/"*` with `$dir` empty, not against a command
//! that computes `/` on purpose.

use brush_parser::word::{Parameter, ParameterExpr, SpecialParameter, TildeExpr, WordPiece};
use std::collections::HashMap;

/// The most alternatives one word is followed through (brace expansions, several possible values).
pub const MAX_ALTERNATIVES: usize = 16;

/// One character of an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ch {
    /// Quoted or escaped: always itself.
    Lit(char),
    /// Unquoted: `*`, `?` and `[` are patterns.
    Pat(char),
    /// A value keel cannot know; the text is what it came from (`$dir`, `$(…)`).
    Unknown(String),
    /// A value keel cannot know but bash makes sure is not empty (`${dir:?}`).
    Set(String),
    /// Where a variable that is empty or unset expanded to nothing; the text is the variable.
    Empty(String),
}

impl Ch {
    /// Whether this is where an empty or unset variable expanded to nothing.
    pub fn is_empty(&self) -> bool {
        matches!(self, Self::Empty(_))
    }
}

/// One argument: the texts it may have (usually one), and the word it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub alts: Vec<Vec<Ch>>,
    pub source: String,
}

impl Arg {
    pub fn literal(text: &str) -> Self {
        Self { alts: vec![text.chars().map(Ch::Lit).collect()], source: text.to_owned() }
    }

    /// An argument keel knows nothing of.
    pub fn unknown(source: &str) -> Self {
        Self { alts: vec![vec![Ch::Unknown(source.to_owned())]], source: source.to_owned() }
    }

    /// The text, when the argument has one known value.
    pub fn text(&self) -> Option<String> {
        match self.alts.as_slice() {
            [only] => only
                .iter()
                .filter(|ch| !ch.is_empty())
                .map(|ch| match ch {
                    Ch::Lit(c) | Ch::Pat(c) => Some(*c),
                    Ch::Unknown(_) | Ch::Set(_) | Ch::Empty(_) => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// Each alternative with its gaps dropped: good enough to recognise an option or a name.
    pub fn texts(&self) -> Vec<String> {
        self.alts
            .iter()
            .map(|alt| {
                alt.iter()
                    .filter_map(|ch| match ch {
                        Ch::Lit(c) | Ch::Pat(c) => Some(*c),
                        Ch::Unknown(_) | Ch::Set(_) | Ch::Empty(_) => None,
                    })
                    .collect()
            })
            .collect()
    }

    pub fn has_unknown(&self) -> bool {
        self.alts.iter().flatten().any(|ch| matches!(ch, Ch::Unknown(_) | Ch::Set(_)))
    }

    /// Whether some alternative is exactly `text`.
    pub fn is(&self, text: &str) -> bool {
        self.texts().iter().any(|alt| alt == text)
    }
}

/// What keel knows of a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// One of these texts.
    Known(Vec<String>),
    Unknown,
}

/// Variables set by the command itself, over the environment it starts with.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    set: HashMap<String, Value>,
    /// Inside a function body: `$1`… are whatever the caller passes.
    pub in_function: bool,
}

impl Vars {
    /// Records `name=value`. Where the assignment may not happen (`certain` false), the variable
    /// keeps its old values as possible too.
    pub fn assign(&mut self, name: &str, value: Value, certain: bool) {
        let value = if certain {
            value
        } else {
            match (self.get(name), value) {
                (Value::Known(mut old), Value::Known(new)) => {
                    for value in new {
                        if !old.contains(&value) {
                            old.push(value);
                        }
                    }
                    if old.len() > MAX_ALTERNATIVES { Value::Unknown } else { Value::Known(old) }
                }
                _ => Value::Unknown,
            }
        };
        self.set.insert(name.to_owned(), value);
    }

    /// Merges what another path through the script may have set.
    pub fn merge(&mut self, other: &Vars) {
        for (name, value) in &other.set {
            self.assign(name, value.clone(), false);
        }
    }

    pub fn get(&self, name: &str) -> Value {
        match self.set.get(name) {
            Some(value) => value.clone(),
            None => Value::Known(vec![
                crate::runtime::environment::value_for_command(name).unwrap_or_default(),
            ]),
        }
    }
}

/// Expands word pieces into alternatives of characters. `substitution` is called with every
/// command substitution found (they run, so the caller checks them) and says what it prints.
pub struct Expander<'a> {
    pub vars: &'a Vars,
    pub substitution: &'a mut dyn FnMut(&str) -> Option<String>,
    /// Set when a word had more possible values than [`MAX_ALTERNATIVES`]: it was made a gap,
    /// and judging it by that gap would be a guess.
    pub too_many: bool,
}

impl<'a> Expander<'a> {
    pub fn new(vars: &'a Vars, substitution: &'a mut dyn FnMut(&str) -> Option<String>) -> Self {
        Self { vars, substitution, too_many: false }
    }
}

impl Expander<'_> {
    /// The alternatives for a whole word, and whether any unquoted expansion may split it.
    pub fn pieces(&mut self, pieces: &[WordPiece], quoted: bool) -> Vec<Vec<Ch>> {
        let mut alts: Vec<Vec<Ch>> = vec![Vec::new()];
        let mut too_many = false;
        for piece in pieces {
            // Every piece is expanded, so that what its substitutions run is checked.
            let next = self.piece(piece, quoted);
            too_many = too_many || alts.len().saturating_mul(next.len()) > MAX_ALTERNATIVES;
            if too_many {
                continue;
            }
            let mut combined = Vec::new();
            for head in &alts {
                for tail in &next {
                    let mut joined = head.clone();
                    joined.extend(tail.iter().cloned());
                    combined.push(joined);
                }
            }
            alts = combined;
        }
        if too_many {
            self.too_many = true;
            return vec![vec![Ch::Unknown("a word of too many values".to_owned())]];
        }
        alts
    }

    fn piece(&mut self, piece: &WordPiece, quoted: bool) -> Vec<Vec<Ch>> {
        let text = |text: &str| -> Vec<Vec<Ch>> {
            vec![text.chars().map(if quoted { Ch::Lit } else { Ch::Pat }).collect()]
        };
        match piece {
            WordPiece::Text(t) => text(t),
            WordPiece::SingleQuotedText(t) => vec![t.chars().map(Ch::Lit).collect()],
            WordPiece::AnsiCQuotedText(t) => vec![ansi_c(t).chars().map(Ch::Lit).collect()],
            WordPiece::EscapeSequence(t) => vec![t.chars().skip(1).map(Ch::Lit).collect()],
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                let inner: Vec<WordPiece> = inner.iter().map(|p| p.piece.clone()).collect();
                self.pieces(&inner, true)
            }
            WordPiece::TildeExpansion(tilde) => match tilde {
                TildeExpr::Home => self.value("HOME", quoted, "~"),
                TildeExpr::UserHome(user) if user == "root" => text("/root"),
                TildeExpr::UserHome(user) => text(&format!("/home/{user}")),
                _ => vec![vec![Ch::Unknown("~".into())]],
            },
            WordPiece::ParameterExpansion(expr) => self.parameter(expr, quoted),
            WordPiece::CommandSubstitution(script)
            | WordPiece::BackquotedCommandSubstitution(script) => {
                match (self.substitution)(script) {
                    // Trailing newlines are removed from a substitution's output.
                    Some(out) => known(out.trim_end_matches('\n'), quoted),
                    None => vec![vec![Ch::Unknown(format!("$({script})"))]],
                }
            }
            WordPiece::ArithmeticExpression(expr) => {
                // `$((…))` may hold `$(…)`, which runs; its value is a number.
                if let Ok(pieces) =
                    brush_parser::word::parse(&expr.value, &brush_parser::ParserOptions::default())
                {
                    let pieces: Vec<WordPiece> = pieces.into_iter().map(|p| p.piece).collect();
                    self.pieces(&pieces, true);
                }
                text("1")
            }
        }
    }

    fn value(&mut self, name: &str, quoted: bool, source: &str) -> Vec<Vec<Ch>> {
        match self.vars.get(name) {
            Value::Known(values) => values
                .iter()
                .flat_map(|value| match value.is_empty() {
                    true => vec![vec![Ch::Empty(source.to_owned())]],
                    false => known(value, quoted),
                })
                .collect(),
            Value::Unknown => vec![vec![Ch::Unknown(source.to_owned())]],
        }
    }

    fn parameter(&mut self, expr: &ParameterExpr, quoted: bool) -> Vec<Vec<Ch>> {
        let unknown = |source: String| vec![vec![Ch::Unknown(source)]];
        let (parameter, indirect) = match expr {
            ParameterExpr::Parameter { parameter, indirect } => (parameter, *indirect),
            ParameterExpr::UseDefaultValues { parameter, indirect, default_value, .. }
            | ParameterExpr::AssignDefaultValues { parameter, indirect, default_value, .. } => {
                let mut alts = self.parameter(
                    &ParameterExpr::Parameter { parameter: parameter.clone(), indirect: *indirect },
                    quoted,
                );
                alts.extend(self.word_text(default_value.as_deref().unwrap_or_default(), quoted));
                return alts;
            }
            ParameterExpr::UseAlternativeValue { alternative_value, .. } => {
                let mut alts =
                    self.word_text(alternative_value.as_deref().unwrap_or_default(), quoted);
                alts.push(Vec::new());
                return alts;
            }
            ParameterExpr::IndicateErrorIfNullOrUnset { parameter, indirect, .. } => {
                // The shell stops when the value is empty, so an empty value never reaches the
                // command: what is left is a non-empty value.
                let alts = self.parameter(
                    &ParameterExpr::Parameter { parameter: parameter.clone(), indirect: *indirect },
                    quoted,
                );
                let non_empty: Vec<Vec<Ch>> = alts
                    .into_iter()
                    .filter(|alt| !alt.iter().all(Ch::is_empty))
                    .map(|alt| match alt.as_slice() {
                        [Ch::Unknown(source)] => vec![Ch::Set(format!("{source}:?"))],
                        _ => alt,
                    })
                    .collect();
                return non_empty;
            }
            ParameterExpr::ParameterLength { .. } => return vec![vec![Ch::Lit('1')]],
            _ => return unknown("${…}".to_owned()),
        };
        if indirect {
            return unknown(format!("${{!{parameter}}}"));
        }
        match parameter {
            Parameter::Named(name) => self.value(name, quoted, &format!("${name}")),
            Parameter::Positional(0) => text_alt("bash"),
            Parameter::Positional(n) if self.vars.in_function => unknown(format!("${n}")),
            Parameter::Positional(_) => vec![Vec::new()],
            Parameter::Special(SpecialParameter::AllPositionalParameters { .. })
                if !self.vars.in_function =>
            {
                vec![Vec::new()]
            }
            Parameter::Special(
                SpecialParameter::ProcessId
                | SpecialParameter::LastBackgroundProcessId
                | SpecialParameter::LastExitStatus
                | SpecialParameter::PositionalParameterCount,
            ) => text_alt("1"),
            other => unknown(other.to_string()),
        }
    }

    /// A word inside `${x:-word}`, parsed and expanded in turn.
    fn word_text(&mut self, word: &str, quoted: bool) -> Vec<Vec<Ch>> {
        match brush_parser::word::parse(word, &brush_parser::ParserOptions::default()) {
            Ok(pieces) => {
                let pieces: Vec<WordPiece> = pieces.into_iter().map(|p| p.piece).collect();
                self.pieces(&pieces, quoted)
            }
            Err(_) => vec![vec![Ch::Unknown(word.to_owned())]],
        }
    }
}

fn text_alt(text: &str) -> Vec<Vec<Ch>> {
    vec![text.chars().map(Ch::Lit).collect()]
}

/// A known value: quoted, it is itself; unquoted, its `*` `?` `[` are patterns again.
fn known(value: &str, quoted: bool) -> Vec<Vec<Ch>> {
    vec![value.chars().map(if quoted { Ch::Lit } else { Ch::Pat }).collect()]
}

/// Splits unquoted values at blanks: `X="a b"; rm $X` removes two files. Quoted characters and
/// gaps never split.
pub fn split_fields(alt: Vec<Ch>) -> Vec<Vec<Ch>> {
    let mut fields = vec![Vec::new()];
    for ch in alt {
        if matches!(ch, Ch::Pat(' ' | '\t' | '\n')) {
            if fields.last().is_some_and(|field: &Vec<Ch>| !field.is_empty()) {
                fields.push(Vec::new());
            }
        } else if let Some(field) = fields.last_mut() {
            field.push(ch);
        }
    }
    if fields.len() > 1 && fields.last().is_some_and(Vec::is_empty) {
        fields.pop();
    }
    fields
}

/// Decodes the escapes of `$'…'`: `\n`, `\x73`, `\163`, `\u0073`, `\e`, `\cX`, …
pub fn ansi_c(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut number = |radix: u32, max: usize, first: Option<char>| {
            let mut digits: String = first.into_iter().collect();
            while digits.len() < max && chars.peek().is_some_and(|d| d.is_digit(radix)) {
                digits.extend(chars.next());
            }
            u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32)
        };
        let decoded = match escape {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            'x' => number(16, 2, None),
            'u' => number(16, 4, None),
            'U' => number(16, 8, None),
            '0'..='7' => number(8, 3, Some(escape)),
            'c' => chars.next().map(|c| char::from(c.to_ascii_uppercase() as u8 ^ 0x40)),
            other => Some(other),
        };
        out.extend(decoded);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(ansi_c(r"\x73udo"), "sudo");
        assert_eq!(ansi_c(r"\163\165do"), "sudo");
        assert_eq!(ansi_c(r"\u0073udo\n"), "sudo\n");
        assert_eq!(ansi_c(r"it\'s"), "it's");
        // Escapes take at most their number of digits; \c takes a control character.
        assert_eq!(ansi_c(r"\x733\1630"), "s3s0");
        assert_eq!(ansi_c(r"\ca\c["), "\u{1}\u{1b}");
    }

    #[test]
    fn unquoted_values_split_at_blanks() {
        let pat = |s: &str| s.chars().map(Ch::Pat).collect::<Vec<_>>();
        assert_eq!(split_fields(pat("/ build")), vec![pat("/"), pat("build")]);
        assert_eq!(split_fields(vec![Ch::Lit(' ')]), vec![vec![Ch::Lit(' ')]]);
        assert_eq!(
            split_fields(pat("a b ")),
            vec![pat("a"), pat("b")],
            "no empty field at the end"
        );
        assert_eq!(split_fields(Vec::new()), vec![Vec::new()], "an empty word is one empty field");
    }
}
