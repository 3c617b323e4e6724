//! What each program may not be asked to do: the rules that refuse a simple command, once its
//! words are expanded and its wrappers seen through. Builtins that change the shell (`cd`,
//! `export`, `read`, …) update the scope on the way.

use super::Verdict;
use super::call::{Call, Piped, Scope, Scripts, Stdin, harmful_write, operands};
use super::words::{Arg, Ch};
use super::wrappers::{Target, unwrap};
use super::{builtins, inline, printed_output};

/// Programs that power the machine off or restart it.
const POWER_PROGRAMS: &[&str] = &["shutdown", "reboot", "halt", "poweroff"];
/// Programs that format or wipe a disk, whatever their arguments.
const DISK_WIPERS: &[&str] = &["mke2fs", "mkswap", "wipefs", "blkdiscard"];
/// Partition editors: refused unless they only list.
const PARTITIONERS: &[&str] = &["fdisk", "sfdisk", "parted", "sgdisk", "gdisk", "cfdisk"];
/// `systemctl` and `loginctl` verbs that stop the machine or the person's session.
const POWER_VERBS: &[&str] = &[
    "poweroff",
    "reboot",
    "halt",
    "kexec",
    "suspend",
    "hibernate",
    "hybrid-sleep",
    "rescue",
    "emergency",
    "kill-session",
    "terminate-session",
    "kill-user",
    "terminate-user",
];
/// Shells, whose `-c` string, script or stdin is a command line.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish"];

/// Checks one simple command; returns what it prints, for a pipe.
pub fn run(checker: &dyn Scripts, words: Vec<Arg>, stdin: Stdin, scope: &mut Scope) -> Piped {
    let mut call = Call { checker, scope, stdin };
    builtins::apply(&words, &mut call)?;
    let printed = printed_output::output(&words, &call);
    target(unwrap(words), &mut call)?;
    Ok(printed)
}

fn target(what: Target, call: &mut Call) -> Verdict {
    match what {
        Target::Nothing => Ok(()),
        Target::Refused(reason) => Err(reason),
        Target::Script(script) => match script.text() {
            Some(text) => call.nested(&text),
            None => Err(format!("it runs a command line keel cannot see (`{}`)", script.source)),
        },
        Target::Program(name, args) => program(&name, &args, call),
        Target::UnknownProgram(name, args) => {
            match args.iter().find_map(|arg| call.precious(arg)) {
                Some(reason) => Err(format!(
                    "keel cannot tell which program `{}` runs, and it is given a place that must not \
                 be touched: {reason}",
                    name.source
                )),
                None => Ok(()),
            }
        }
        Target::Xargs(mut command, replace) => {
            let items: Vec<Arg> = match &call.stdin {
                Stdin::Visible(text) => text.split_whitespace().map(Arg::literal).collect(),
                Stdin::PathsUnder(dirs) => dirs.iter().map(inside).collect(),
                _ => vec![Arg::unknown("(what xargs reads)")],
            };
            call.stdin = Stdin::Null;
            match replace {
                Some(marker) => {
                    let item = items.first().cloned().unwrap_or_else(|| Arg::literal(""));
                    command = command.iter().map(|arg| replaced(arg, &marker, &item)).collect();
                }
                None => command.extend(items),
            }
            target(unwrap(command), call)
        }
    }
}

/// `arg` with every `marker` in it replaced by `item` (its first alternative).
fn replaced(arg: &Arg, marker: &str, item: &Arg) -> Arg {
    let with: Vec<Ch> = item.alts.first().cloned().unwrap_or_default();
    let marker: Vec<char> = marker.chars().collect();
    let alts = arg
        .alts
        .iter()
        .map(|alt| {
            let mut out = Vec::new();
            let mut i = 0;
            while i < alt.len() {
                let here = alt[i..].iter().take(marker.len()).map(|ch| match ch {
                    Ch::Lit(c) | Ch::Pat(c) => Some(*c),
                    _ => None,
                });
                if !marker.is_empty() && here.eq(marker.iter().map(|c| Some(*c))) {
                    out.extend(with.iter().cloned());
                    i += marker.len();
                } else {
                    out.push(alt[i].clone());
                    i += 1;
                }
            }
            out
        })
        .collect();
    Arg { alts, source: arg.source.replace(&marker.iter().collect::<String>(), &item.source) }
}

/// `dir/…`: some path inside `dir`, or `dir` itself.
fn inside(dir: &Arg) -> Arg {
    let mut arg = dir.clone();
    for alt in &mut arg.alts {
        alt.push(Ch::Lit('/'));
        alt.push(Ch::Unknown(format!("{}/…", dir.source)));
    }
    arg
}

fn program(name: &str, args: &[Arg], call: &mut Call) -> Verdict {
    let flags = |arg: &Arg| arg.texts().into_iter().filter(|t| t.starts_with('-') && t.len() > 1);
    let has_flag = |short: char, long: &str| {
        args.iter()
            .flat_map(flags)
            .any(|t| t == long || (!t.starts_with("--") && t.chars().skip(1).any(|c| c == short)))
    };
    let operands: Vec<&Arg> = operands(args);
    if POWER_PROGRAMS.contains(&name)
        || (matches!(name, "init" | "telinit") && args.iter().any(|a| a.is("0") || a.is("6")))
    {
        return Err(format!("`{name}` would power off or restart the machine"));
    }
    if name.starts_with("mkfs") || DISK_WIPERS.contains(&name) {
        return Err(format!("`{name}` formats or wipes a disk"));
    }
    if PARTITIONERS.contains(&name) && !has_flag('l', "--list") {
        return Err(format!("`{name}` changes how a disk is partitioned"));
    }
    if SHELLS.contains(&name) {
        return inline::shell(name, args, call);
    }
    if inline::is_interpreter(name) {
        return inline::interpreter(name, args, call);
    }
    match name {
        "systemctl" | "loginctl" => match args.iter().find(|a| POWER_VERBS.iter().any(|v| a.is(v)))
        {
            Some(verb) => {
                Err(format!("`{name} {}` would stop the machine or the session", verb.source))
            }
            None => Ok(()),
        },
        "rm" => {
            if args.iter().any(|arg| arg.is("--no-preserve-root")) {
                return Err("`rm --no-preserve-root` exists only to delete `/`".into());
            }
            if !(has_flag('r', "--recursive") || has_flag('R', "--recursive")) {
                return Ok(());
            }
            deletes(name, "deletes recursively", &operands, call)
        }
        "chmod" | "chown" | "chgrp" if has_flag('R', "--recursive") => {
            deletes(name, "changes recursively", &operands, call)
        }
        "mv" => {
            let target_dir = args
                .iter()
                .any(|a| a.texts().iter().any(|t| t == "-t" || t.starts_with("--target")));
            let sources = if target_dir {
                &operands[..]
            } else {
                &operands[..operands.len().saturating_sub(1)]
            };
            deletes(name, "moves away", sources, call)?;
            writes(name, operands.last().copied(), call)
        }
        "rsync" if args.iter().any(|a| a.texts().iter().any(|t| t.starts_with("--del"))) => {
            deletes(
                name,
                "with `--delete` empties",
                operands.last().map(std::slice::from_ref).unwrap_or_default(),
                call,
            )
        }
        "find" => find(args, call),
        "sysctl" => sysctl(args),
        "shred" | "truncate" | "tee" | "cp" | "install" | "badblocks" => {
            operands.iter().try_for_each(|arg| writes(name, Some(arg), call))
        }
        "dd" => args.iter().filter_map(dd_output).try_for_each(|of| writes(name, Some(&of), call)),
        "kill" | "pkill" | "killall" => kill(name, args),
        "killall5" => Err("`killall5` signals every process of the machine, keel included".into()),
        "eval" => {
            let texts: Option<Vec<String>> = args.iter().map(Arg::text).collect();
            match texts {
                Some(texts) => call.nested(&texts.join(" ")),
                None => Err("`eval` would run a command line keel cannot see".into()),
            }
        }
        _ => Ok(()),
    }
}

/// `sysctl` that sets a kernel setting: `-w`, `KEY=VALUE`, `-p`/`--load` (a file of settings),
/// `--system`, or an argument keel cannot read (it could be any of these).
fn sysctl(args: &[Arg]) -> Verdict {
    let sets = args.iter().any(|arg| {
        arg.has_unknown()
            || arg.texts().iter().any(|text| {
                let bundle = text.strip_prefix('-').filter(|rest| !rest.starts_with('-'));
                text.contains('=')
                    || bundle.is_some_and(|letters| letters.contains(['w', 'p']))
                    || ["--write", "--load", "--system"].iter().any(|long| text.starts_with(long))
            })
    });
    if sets {
        return Err("`sysctl` would change a kernel setting".into());
    }
    Ok(())
}

fn deletes(name: &str, verb: &str, targets: &[&Arg], call: &Call) -> Verdict {
    match targets.iter().find_map(|arg| call.precious(arg)) {
        Some(reason) => Err(format!("`{name}` {verb} what it is given, and {reason}")),
        None => Ok(()),
    }
}

fn writes(name: &str, target: Option<&Arg>, call: &Call) -> Verdict {
    match target.and_then(|arg| harmful_write(arg, call.scope, call.checker.places())) {
        Some(reason) => Err(format!("`{name}` would write to it: {reason}")),
        None => Ok(()),
    }
}

fn dd_output(arg: &Arg) -> Option<Arg> {
    let text = arg.text()?;
    let path = text.strip_prefix("of=")?;
    Some(Arg { alts: vec![path.chars().map(Ch::Lit).collect()], source: path.to_owned() })
}

/// `find` with `-delete` or `-exec rm …` from a place that must not be touched; its `-exec`
/// command is checked as a command of its own.
fn find(args: &[Arg], call: &mut Call) -> Verdict {
    let expression = args
        .iter()
        .position(|arg| arg.texts().iter().any(|t| t.starts_with('-') || t == "(" || t == "!"));
    let (starts, expression) = args.split_at(expression.unwrap_or(args.len()));
    let starts: Vec<Arg> =
        if starts.is_empty() { vec![Arg::literal(".")] } else { starts.to_vec() };
    let mut destructive = expression.iter().any(|arg| arg.is("-delete"));
    let mut rest = expression;
    while let Some(at) =
        rest.iter().position(|arg| ["-exec", "-execdir", "-ok", "-okdir"].iter().any(|e| arg.is(e)))
    {
        let command: Vec<Arg> = rest[at + 1..]
            .iter()
            .take_while(|arg| !arg.is(";") && !arg.is("+"))
            .map(|arg| if arg.is("{}") { inside(&starts[0]) } else { arg.clone() })
            .collect();
        if let Target::Program(name, _) = unwrap(command.clone()) {
            destructive |= ["rm", "shred", "unlink", "chmod", "chown", "mv", "truncate"]
                .contains(&name.as_str());
        }
        target(unwrap(command), call)?;
        rest = &rest[at + 1..];
    }
    if destructive {
        let refs: Vec<&Arg> = starts.iter().collect();
        return deletes("find", "deletes or changes everything it finds", &refs, call);
    }
    Ok(())
}

/// `kill -1` (and friends) signal every process the user may signal.
fn kill(name: &str, args: &[Arg]) -> Verdict {
    if name == "kill" {
        let mut targets = args.iter().skip_while(|arg| !arg.is("--")).skip(1).collect::<Vec<_>>();
        if targets.is_empty() {
            let skip = match args.first() {
                Some(first) if first.is("-s") || first.is("-n") => 2,
                Some(first) if first.texts().iter().any(|t| t.starts_with('-')) => 1,
                _ => 0,
            };
            targets = args.iter().skip(skip).collect();
        }
        if targets.iter().any(|target| target.is("-1")) {
            return Err("`kill -1` would signal every process of the user, keel included".into());
        }
    }
    Ok(())
}
