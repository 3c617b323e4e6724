//! Builtins that change the shell as it runs: `cd` moves the folder later paths are resolved
//! from, `export`, `read` and `unset` change variables, `alias` and `trap` hold command lines that
//! run later (checked now).

use super::Verdict;
use super::call::{Call, operands};
use super::paths::Cwd;
use super::words::{Arg, Value};
use super::wrappers::base_name;

/// Builtins that assign the variables named in their arguments.
const DECLARERS: &[&str] = &["export", "declare", "typeset", "local", "readonly"];
/// Builtins that set variables to values keel cannot know.
const READERS: &[&str] = &["read", "mapfile", "readarray", "getopts"];

/// Builtins that change the shell: they update the scope, and some run text of their own.
pub fn apply(words: &[Arg], call: &mut Call) -> Verdict {
    let Some(name) = words.first().and_then(Arg::text) else {
        return Ok(());
    };
    let args = &words[1..];
    let certain = call.scope.certain;
    match base_name(&name) {
        "cd" | "pushd" => {
            let operand = operands(args).first().map(|arg| (*arg).clone());
            let cwds = resolve_dir(operand.as_ref(), call);
            call.scope.change_dir(cwds);
        }
        "popd" => call.scope.change_dir(vec![Cwd::Unknown]),
        name if DECLARERS.contains(&name) => {
            for arg in args.iter().filter_map(Arg::text) {
                if let Some((var, value)) = arg.split_once('=') {
                    call.scope.vars.assign(var, Value::Known(vec![value.to_owned()]), certain);
                }
            }
        }
        name if READERS.contains(&name) => {
            for var in operands(args).iter().filter_map(|arg| arg.text()) {
                call.scope.vars.assign(&var, Value::Unknown, certain);
            }
        }
        "unset" => {
            for var in operands(args).iter().filter_map(|arg| arg.text()) {
                call.scope.vars.assign(&var, Value::Known(vec![String::new()]), certain);
            }
        }
        "alias" | "trap" => {
            // An alias or a trap is a command line for later: check it now.
            let texts = args.iter().filter(|arg| !arg.texts().iter().any(|t| t.starts_with('-')));
            for text in texts.filter_map(Arg::text).take(1) {
                let script =
                    text.split_once('=').map_or(text.as_str(), |(_, value)| value).to_owned();
                call.nested(&script)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Where `cd operand` leads from each possible folder.
fn resolve_dir(operand: Option<&Arg>, call: &Call) -> Vec<Cwd> {
    let home = call.checker.places().home.clone();
    let Some(operand) = operand else {
        return vec![home.map_or(Cwd::Unknown, Cwd::Known)];
    };
    let Some(text) = operand.text().filter(|text| text != "-" && !text.contains(['*', '?', '[']))
    else {
        return vec![Cwd::Unknown];
    };
    call.scope
        .cwds
        .iter()
        .map(|cwd| match (text.starts_with('/'), cwd) {
            (true, _) => Cwd::Known(normal(&text)),
            (false, Cwd::Known(base)) => Cwd::Known(normal(&format!("{base}/{text}"))),
            (false, Cwd::Unknown) => Cwd::Unknown,
        })
        .collect()
}

/// A path with `.`, `..` and repeated `/` resolved, as text.
fn normal(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}
