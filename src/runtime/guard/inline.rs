//! Shells and interpreters: the code they run is a command of its own. A shell's `-c` string or
//! here-document is checked as a command line; an interpreter's inline code (`python3 -c`,
//! `perl -e`, `node -e`, …) is read for deletions of places that must not be touched and for
//! shell commands keel would refuse. Code they would read from a pipe keel cannot see is refused:
//! keel cannot check what it cannot read. A script given by file name runs, as `./script` would.

use super::Verdict;
use super::call::{Call, harmful_write};
use super::words::Arg;

/// Calls that delete files or folders, in the languages keel reads.
const DELETERS: &[&str] = &[
    "rmtree",
    "rm_rf",
    "rm_r",
    "remove_tree",
    "rmSync",
    "rmdirSync",
    "rimraf",
    "unlink",
    "remove(",
    "removedirs",
    "rmdir",
    "File.delete",
    "FileUtils.rm",
    "deleteSync",
    "fs.rm(",
    "emptyDir",
    "removeSync",
    "delete_tree",
];
/// Calls that run a shell command.
const SHELL_OUTS: &[&str] = &[
    "system",
    "popen",
    "subprocess",
    "exec",
    "spawn",
    "Popen",
    "check_output",
    "check_call",
    "`",
    "qx",
    "Open3",
    "child_process",
    "shell_exec",
    "passthru",
    "proc_open",
    "os.run",
];
/// Ways to name the home folder in code.
const HOME_APIS: &[&str] = &[
    "expanduser",
    "Path.home",
    "homedir",
    "Dir.home",
    "ENV['HOME']",
    "ENV[\"HOME\"]",
    "$ENV{HOME}",
    "process.env.HOME",
    "getenv(\"HOME\")",
    "getenv('HOME')",
    "environ['HOME']",
    "environ[\"HOME\"]",
];

/// Whether `name` is an interpreter whose code keel reads.
pub fn is_interpreter(name: &str) -> bool {
    family(name).is_some()
}

/// The interpreter's family and the flags that take inline code.
fn family(name: &str) -> Option<(&'static str, &'static [&'static str])> {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match stem {
        "python" | "pypy" => ("Python", &["-c"]),
        "perl" => ("Perl", &["-e", "-E"]),
        "ruby" => ("Ruby", &["-e"]),
        "node" | "nodejs" | "deno" | "bun" => ("JavaScript", &["-e", "--eval", "-p", "--print"]),
        "php" => ("PHP", &["-r"]),
        "lua" | "luajit" => ("Lua", &["-e"]),
        _ => return None,
    })
}

/// `bash [options] [-c string | file | -s]`.
pub fn shell(name: &str, args: &[Arg], call: &mut Call) -> Verdict {
    let mut index = 0;
    let (mut command, mut from_stdin) = (false, false);
    while let Some(text) = args.get(index).and_then(Arg::text) {
        if text == "--" {
            index += 1;
            break;
        }
        if !(text.starts_with('-') || text.starts_with('+')) || text.len() < 2 {
            break;
        }
        let cluster = &text[1..];
        if text.starts_with("--") {
            index += if matches!(text.as_str(), "--rcfile" | "--init-file") { 2 } else { 1 };
            continue;
        }
        index += 1;
        if text.starts_with('-') && cluster.contains('n') {
            // `-n` reads and parses the script without running any of it.
            return Ok(());
        }
        command |= text.starts_with('-') && cluster.contains('c');
        from_stdin |= text.starts_with('-') && cluster.contains('s');
        if cluster.contains(['o', 'O']) {
            if args.get(index).is_some_and(|arg| arg.is("noexec")) {
                return Ok(());
            }
            index += 1;
        }
    }
    let operand = args.get(index);
    if command {
        return match operand {
            Some(script) => match script.text() {
                Some(text) => call.nested(&text),
                None => Err(format!(
                    "`{name} -c` is given a script keel cannot see (`{}`)",
                    script.source
                )),
            },
            None => Ok(()),
        };
    }
    match operand {
        Some(file) if !from_stdin => script_file(name, file, call, |call, text| call.nested(text)),
        _ => call.stdin_code(name, |call, text| call.nested(text)),
    }
}

/// A script given by name: a file runs as it is; a pipe's end (`-`, `/dev/stdin`, `<(…)`) is code
/// from elsewhere.
fn script_file(
    name: &str,
    file: &Arg,
    call: &mut Call,
    check: impl FnOnce(&mut Call, &str) -> Verdict,
) -> Verdict {
    if file.source.starts_with("<(") {
        return Err(format!(
            "`{name}` would run what another command prints (`{}`), which keel cannot see",
            file.source
        ));
    }
    if file.is("-") || file.is("/dev/stdin") {
        return call.stdin_code(name, check);
    }
    Ok(())
}

/// `python3 -c CODE`, `perl -e CODE`, a script file, or code on stdin.
pub fn interpreter(name: &str, args: &[Arg], call: &mut Call) -> Verdict {
    let Some((language, code_flags)) = family(name) else {
        return Ok(());
    };
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        let text = arg.text().unwrap_or_default();
        if text == "-m" && language == "Python" {
            return Ok(());
        }
        if matches!(text.as_str(), "-W" | "-X") && language == "Python" {
            index += 2;
            continue;
        }
        // `-e CODE`, and clusters that end in a code flag (`perl -ne CODE`).
        let takes_code = code_flags.contains(&text.as_str())
            || (text.starts_with('-')
                && !text.starts_with("--")
                && code_flags.iter().any(|flag| text.ends_with(&flag[1..]))
                && language != "JavaScript");
        if takes_code {
            return match args.get(index + 1) {
                Some(code) => match code.text() {
                    Some(code) => check_code(language, &code, call),
                    None => {
                        Err(format!("`{name}` is given code keel cannot see (`{}`)", code.source))
                    }
                },
                None => Ok(()),
            };
        }
        if !text.starts_with('-') || text == "-" {
            return script_file(name, arg, call, |call, code| check_code(language, code, call));
        }
        index += 1;
    }
    call.stdin_code(name, |call, code| check_code(language, code, call))
}

/// Reads `code` for deletions of places that must not be touched and for shell commands keel
/// would refuse.
pub fn check_code(language: &str, code: &str, call: &mut Call) -> Verdict {
    let mut literals = string_literals(code);
    let deletes = DELETERS.iter().any(|call| code.contains(call));
    if deletes && HOME_APIS.iter().any(|api| code.contains(api)) {
        literals.push("~".to_owned());
    }
    for literal in &literals {
        let path = expand_home(literal, call);
        let arg = Arg::literal(&path);
        if deletes && let Some(reason) = call.precious(&arg) {
            return Err(format!("this {language} code deletes files, and {reason}"));
        }
        let special = ["/dev/", "/proc/", "/sys/"].iter().any(|dir| path.starts_with(dir));
        if special && let Some(reason) = harmful_write(&arg, call.scope, call.checker.places()) {
            return Err(format!("this {language} code may write to a special file: {reason}"));
        }
    }
    if SHELL_OUTS.iter().any(|shell| code.contains(shell)) {
        for command in literals.iter().cloned().chain(std::iter::once(literals.join(" "))) {
            call.nested(&command).map_err(|reason| {
                format!("this {language} code runs a shell command keel refuses: {reason}")
            })?;
        }
    }
    Ok(())
}

fn expand_home(literal: &str, call: &Call) -> String {
    let home = call.checker.places().home.clone().unwrap_or_default();
    match literal.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        _ => literal.to_owned(),
    }
}

/// The contents of the quoted strings in `code` (`'…'`, `"…"`, `` `…` ``), escapes undone.
fn string_literals(code: &str) -> Vec<String> {
    let mut literals = Vec::new();
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut literal = String::new();
        while let Some(next) = chars.next() {
            match next {
                '\\' => literal.extend(chars.next()),
                quote if quote == c => break,
                other => literal.push(other),
            }
        }
        literals.push(literal);
    }
    literals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_found_with_escapes_undone() {
        assert_eq!(string_literals(r#"rmtree("/") ; x = 'a\'b'"#), vec!["/", "a'b"]);
    }

    #[test]
    fn interpreter_families() {
        assert!(is_interpreter("python3.12") && is_interpreter("perl") && is_interpreter("node"));
        assert!(!is_interpreter("pythonic") && !is_interpreter("cargo"));
    }
}
