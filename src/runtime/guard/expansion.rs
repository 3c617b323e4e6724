//! Expanding a parsed word into the arguments bash will pass, with every `$(…)` inside it
//! checked as a command on the way.

use super::braces::{MAX_BRACE_WORDS, MAX_COMMAND_BRACE_WORDS};
use super::call::{Scope, Stdin};
use super::walk::Checker;
use super::words::{Arg, Ch, Expander, Value, split_fields};
use super::{Verdict, printed_output};
use brush_parser::ParserOptions;
use brush_parser::ast;
use brush_parser::word::WordPiece;

impl Checker<'_> {
    /// Checks the substitutions inside text such as an arithmetic expression.
    pub fn text(&self, text: &str, scope: &Scope) -> Verdict {
        self.expand(&ast::Word { value: format!("\"{text}\""), loc: None }, scope).map(drop)
    }

    /// The arguments a word becomes, its substitutions checked on the way.
    pub fn expand(&self, word: &ast::Word, scope: &Scope) -> Result<Vec<Arg>, String> {
        let options = ParserOptions::default();
        let braces = brush_parser::word::parse_brace_expansions(&word.value, &options);
        let texts = match braces.ok().flatten().map(|braces| super::braces::expand(&braces)) {
            Some(Some(texts)) => {
                let added = self.brace_words.get() + texts.len().saturating_sub(1);
                if added > MAX_COMMAND_BRACE_WORDS {
                    return Err(format!(
                        "its brace expansions make more than {MAX_COMMAND_BRACE_WORDS} words, \
                         more than keel checks in one command; split it into smaller commands"
                    ));
                }
                self.brace_words.set(added);
                texts
            }
            Some(None) => {
                return Err(format!(
                    "`{}` expands to more than {MAX_BRACE_WORDS} words, more than keel checks; \
                     split it into smaller commands",
                    word.value
                ));
            }
            None => vec![word.value.clone()],
        };
        let mut args = Vec::new();
        for text in texts {
            let pieces = parse(&text, &options);
            let mut words = self.pieces(&pieces, &text, scope)?;
            if pieces.iter().all(|piece| !is_quoted(piece)) {
                // A word of unquoted expansions that come to nothing is no argument at all:
                // `cd $unset` goes to the home folder, where `cd "$unset"` stays.
                words.retain(|arg| !arg.alts.iter().all(|alt| alt.iter().all(Ch::is_empty)));
            }
            args.extend(words);
        }
        Ok(args)
    }

    /// Expands already parsed pieces (a word, a here-document).
    pub fn pieces(
        &self,
        pieces: &[WordPiece],
        source: &str,
        scope: &Scope,
    ) -> Result<Vec<Arg>, String> {
        let mut failure = None;
        let mut substitution = |script: &str| -> Option<String> {
            if failure.is_some() {
                return None;
            }
            let mut inner = scope.clone();
            inner.stdin = Stdin::Null;
            match self.nested(script, &mut inner) {
                Ok(()) => printed_output::printed_by(script, scope),
                Err(reason) => {
                    failure = Some(reason);
                    None
                }
            }
        };
        let mut expander = Expander::new(&scope.vars, &mut substitution);
        let alts = expander.pieces(pieces, false);
        let too_many = expander.too_many;
        if let Some(reason) = failure {
            return Err(reason);
        }
        if too_many {
            return Err(format!(
                "`{source}` has more possible values than keel follows, so it cannot tell what \
                 it names"
            ));
        }
        Ok(match <[_; 1]>::try_from(alts) {
            Ok([only]) => split_fields(only)
                .into_iter()
                .map(|field| Arg { alts: vec![field], source: source.to_owned() })
                .collect(),
            Err(alts) if alts.is_empty() => Vec::new(),
            Err(alts) => vec![Arg { alts, source: source.to_owned() }],
        })
    }

    pub fn assignment_value(
        &self,
        value: &ast::AssignmentValue,
        scope: &Scope,
    ) -> Result<Value, String> {
        match value {
            ast::AssignmentValue::Scalar(word) => {
                let args = self.expand(word, scope)?;
                let texts: Option<Vec<String>> = args.iter().map(Arg::text).collect();
                Ok(texts.map_or(Value::Unknown, |texts| Value::Known(vec![texts.join(" ")])))
            }
            ast::AssignmentValue::Array(items) => {
                for (index, item) in items {
                    if let Some(index) = index {
                        self.expand(index, scope)?;
                    }
                    self.expand(item, scope)?;
                }
                Ok(Value::Unknown)
            }
        }
    }
}

/// Whether a piece of a word is quoted: what it expands to is an argument even when empty.
fn is_quoted(piece: &WordPiece) -> bool {
    matches!(
        piece,
        WordPiece::SingleQuotedText(_)
            | WordPiece::AnsiCQuotedText(_)
            | WordPiece::DoubleQuotedSequence(_)
            | WordPiece::GettextDoubleQuotedSequence(_)
            | WordPiece::EscapeSequence(_)
    )
}

/// A word's pieces; a word the parser cannot take is one piece of text.
fn parse(text: &str, options: &ParserOptions) -> Vec<WordPiece> {
    match brush_parser::word::parse(text, options) {
        Ok(pieces) => pieces.into_iter().map(|piece| piece.piece).collect(),
        Err(_) => vec![WordPiece::Text(text.to_owned())],
    }
}
