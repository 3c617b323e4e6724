//! What a command prints, when keel can tell: `echo`, `printf`, `pwd`, a program look-up. It
//! becomes the stdin of the next command in a pipe, or the value of a `$(…)`.

use super::call::{Call, operands};
use super::call::{Scope, Stdin};
use super::paths::Cwd;
use super::words::{Arg, Expander};
use super::wrappers::base_name;
use brush_parser::ParserOptions;

/// What a command prints, as the next command of a pipe will read it.
pub fn output(words: &[Arg], call: &Call) -> Stdin {
    let Some(name) = words.first().and_then(Arg::text) else {
        return Stdin::Unseen("a command".into());
    };
    let name = base_name(&name).to_owned();
    let args = &words[1..];
    let texts: Option<Vec<String>> = args.iter().map(Arg::text).collect();
    match (name.as_str(), texts) {
        ("echo" | "printf", Some(texts)) => match printed(&name, &texts) {
            Some(text) => Stdin::Visible(text),
            None => Stdin::Unseen(format!("`{name}`")),
        },
        ("cat" | "tee", _) if operands(args).is_empty() => call.stdin.clone(),
        ("find", _) => Stdin::PathsUnder(
            args.iter()
                .take_while(|arg| !arg.texts().iter().any(|t| t.starts_with('-')))
                .cloned()
                .collect(),
        ),
        ("ls", _) => Stdin::PathsUnder(operands(args).into_iter().cloned().collect()),
        _ => Stdin::Unseen(format!(
            "`{}`",
            words.iter().map(|w| w.source.as_str()).collect::<Vec<_>>().join(" ")
        )),
    }
}

/// What `echo` or `printf` print, when keel can tell.
fn printed(name: &str, args: &[String]) -> Option<String> {
    if name == "echo" {
        let words: Vec<&str> = args
            .iter()
            .map(String::as_str)
            .skip_while(|a| matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
            .collect();
        return Some(format!("{}\n", words.join(" ")));
    }
    let (format, rest) = args.split_first()?;
    if !format.contains('%') {
        return Some(super::words::ansi_c(format));
    }
    matches!(format.as_str(), "%s" | "%s\\n")
        .then(|| rest.join(if format == "%s" { "" } else { "\n" }))
}

/// What `$(script)` prints, when it is `echo`, `printf`, `pwd` or a program look-up.
pub fn printed_by(script: &str, scope: &Scope) -> Option<String> {
    let tokens = brush_parser::tokenize_str(script).ok()?;
    let program = brush_parser::parse_tokens(&tokens, &ParserOptions::default()).ok()?;
    let [list] = program.complete_commands.as_slice() else { return None };
    let [brush_parser::ast::CompoundListItem(and_or, _)] = list.0.as_slice() else { return None };
    let [brush_parser::ast::Command::Simple(simple)] = and_or.first.seq.as_slice() else {
        return None;
    };
    if !and_or.additional.is_empty() {
        return None;
    }
    let mut words = Vec::new();
    let items = simple.word_or_name.iter().chain(
        simple.suffix.iter().flat_map(|s| &s.0).filter_map(|item| match item {
            brush_parser::ast::CommandPrefixOrSuffixItem::Word(word) => Some(word),
            _ => None,
        }),
    );
    for word in items {
        let pieces: Vec<_> = brush_parser::word::parse(&word.value, &ParserOptions::default())
            .ok()?
            .into_iter()
            .map(|p| p.piece)
            .collect();
        let mut none = |_: &str| None;
        let alts = Expander::new(&scope.vars, &mut none).pieces(&pieces, false);
        let arg = Arg { alts, source: word.value.clone() };
        words.push(arg.text()?);
    }
    let (name, args) = words.split_first()?;
    match (base_name(name), args) {
        ("echo" | "printf", args) => printed(base_name(name), args),
        ("pwd", _) => match scope.cwds.as_slice() {
            [Cwd::Known(cwd)] => Some(cwd.clone()),
            _ => None,
        },
        ("which" | "command" | "type", [.., program]) => Some(program.clone()),
        _ => None,
    }
}
