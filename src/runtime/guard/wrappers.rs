//! Programs that run another program: `env`, `nice`, `timeout`, `xargs`, `busybox`, `chroot`, …
//! [`unwrap`] sees through them to what really runs, and refuses the ones that run it as another
//! user or in another namespace.

use super::words::Arg;

/// Programs that run a command as another user or outside this one's namespaces.
pub const PRIVILEGE_PROGRAMS: &[&str] =
    &["sudo", "doas", "su", "pkexec", "runuser", "nsenter", "sg", "machinectl", "run0"];

/// What a command line runs once its wrappers are seen through.
#[derive(Debug)]
pub enum Target {
    /// A program (by its base name) and its arguments.
    Program(String, Vec<Arg>),
    /// A program whose name keel cannot know, and its arguments.
    UnknownProgram(Arg, Vec<Arg>),
    /// A command line given as one string (`env -S`, `watch`, `script -c`, `flock -c`).
    Script(Arg),
    /// `xargs`: the program and arguments, to which stdin adds more — or in which they replace
    /// the `-I` string.
    Xargs(Vec<Arg>, Option<String>),
    /// Nothing runs (`command -v`, `chroot DIR` with no command).
    Nothing,
    Refused(String),
}

/// A program's base name: `/usr/bin/rm` is `rm`.
pub fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// How many leading words are options, counting the values of those in `with_value` (short, as
/// `-n`, taking the next word unless attached; long, as `--name`, unless given as `--name=v`).
fn options(args: &[Arg], with_value: &[&str]) -> usize {
    let mut count = 0;
    while let Some(arg) = args.get(count).and_then(Arg::text) {
        if arg == "--" {
            return count + 1;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        let takes_value = with_value.contains(&arg.as_str());
        count += if takes_value { 2 } else { 1 };
    }
    count.min(args.len())
}

/// Skips `env`'s `NAME=value` words: `env` takes every word with a `=` in it for one, whatever
/// comes before the `=` (`env ./x=1 rm …` runs `rm`). A word that may have no `=` may be the
/// program, so it ends them.
fn assignments(args: &[Arg]) -> usize {
    args.iter().take_while(|arg| arg.texts().iter().all(|text| text.contains('='))).count()
}

/// Sees through wrappers to what `words` runs.
pub fn unwrap(mut words: Vec<Arg>) -> Target {
    loop {
        let Some(first) = words.first() else {
            return Target::Nothing;
        };
        let Some(text) = first.text() else {
            let rest = words.split_off(1);
            return Target::UnknownProgram(words.remove(0), rest);
        };
        let name = base_name(&text).to_owned();
        if PRIVILEGE_PROGRAMS.contains(&name.as_str()) {
            return Target::Refused(format!(
                "`{name}` runs commands as another user or in another namespace; keel never does that"
            ));
        }
        let rest = &words[1..];
        let skip = match name.as_str() {
            "env" => {
                if let Some(split) = rest.iter().position(|arg| {
                    arg.texts().iter().any(|t| t == "-S" || t.starts_with("--split-string"))
                }) {
                    return match rest.get(split + 1) {
                        Some(script) => Target::Script(script.clone()),
                        None => Target::Nothing,
                    };
                }
                let opts = options(rest, &["-u", "--unset", "-C", "--chdir"]);
                opts + assignments(&rest[opts..])
            }
            "nice" => options(rest, &["-n", "--adjustment"]),
            "ionice" => options(rest, &["-c", "-n", "--class", "--classdata"]),
            "nohup" | "builtin" | "unbuffer" | "fakeroot" | "torsocks" | "catchsegv" => 0,
            "time" => options(rest, &["-f", "--format", "-o", "--output"]),
            "stdbuf" => options(rest, &["-i", "-o", "-e"]),
            "setsid" | "setpriv" | "firejail" | "valgrind" | "cgexec" | "prlimit" | "numactl" => {
                options(rest, &["-g", "--reuid", "--regid", "--groups"])
            }
            "exec" => options(rest, &["-a"]),
            "command" => {
                if rest.iter().any(|arg| arg.is("-v") || arg.is("-V")) {
                    return Target::Nothing;
                }
                options(rest, &[])
            }
            "timeout" => {
                let opts = options(rest, &["-s", "--signal", "-k", "--kill-after"]);
                opts + usize::from(rest.len() > opts)
            }
            "chrt" | "taskset" => {
                let opts = options(rest, &[]);
                opts + usize::from(rest.len() > opts)
            }
            "faketime" => 1,
            "strace" | "ltrace" => options(rest, &["-o", "-e", "-p", "-s", "-u", "-E"]),
            "proxychains" | "proxychains4" => options(rest, &["-f"]),
            "chroot" => {
                let opts = options(rest, &["--userspec", "--groups"]);
                if rest.len() <= opts + 1 {
                    return Target::Nothing;
                }
                opts + 1
            }
            "busybox" => {
                if rest.first().is_some_and(|arg| arg.texts().iter().any(|t| t.starts_with('-'))) {
                    return Target::Nothing;
                }
                0
            }
            "xargs" => {
                let opts = options(
                    rest,
                    &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "--arg-file", "--delimiter"],
                );
                let mut command = rest[opts..].to_vec();
                if command.is_empty() {
                    command.push(Arg::literal("echo"));
                }
                let replace = rest[..opts].iter().enumerate().find_map(|(at, arg)| {
                    let text = arg.text()?;
                    match text.as_str() {
                        "-I" => rest.get(at + 1).and_then(Arg::text),
                        "-i" | "--replace" => Some("{}".to_owned()),
                        _ => ["-I", "-i", "--replace="]
                            .iter()
                            .find_map(|prefix| text.strip_prefix(prefix))
                            .map(str::to_owned),
                    }
                });
                return Target::Xargs(command, replace);
            }
            "flock" => {
                let opts = options(rest, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
                let after = &rest[opts.min(rest.len())..];
                if after.get(1).is_some_and(|arg| arg.is("-c") || arg.is("--command")) {
                    return after.get(2).cloned().map_or(Target::Nothing, Target::Script);
                }
                opts + 1
            }
            "watch" => {
                let opts = options(rest, &["-n", "--interval", "-d", "-q"]);
                let joined: Vec<String> =
                    rest[opts..].iter().map(|arg| arg.source.clone()).collect();
                return script_of(&joined.join(" "), &rest[opts..]);
            }
            "script" => {
                let at = rest.iter().position(|arg| arg.is("-c") || arg.is("--command"));
                return match at.and_then(|at| rest.get(at + 1)) {
                    Some(command) => Target::Script(command.clone()),
                    None => Target::Nothing,
                };
            }
            _ => return Target::Program(name, rest.to_vec()),
        };
        words = words.split_off((1 + skip).min(words.len()));
    }
}

/// `watch cmd args…` runs its arguments joined by spaces through `sh -c`.
fn script_of(joined: &str, args: &[Arg]) -> Target {
    if args.iter().all(|arg| arg.text().is_some()) {
        let texts: Vec<String> = args.iter().filter_map(Arg::text).collect();
        Target::Script(Arg::literal(&texts.join(" ")))
    } else {
        Target::Script(Arg::unknown(joined))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Arg> {
        line.split_whitespace().map(Arg::literal).collect()
    }

    fn program(line: &str) -> Option<(String, usize)> {
        match unwrap(words(line)) {
            Target::Program(name, args) => Some((name, args.len())),
            _ => None,
        }
    }

    #[test]
    fn wrappers_are_seen_through() {
        assert_eq!(program("env -i -u X A=1 /bin/rm -rf x"), Some(("rm".into(), 2)));
        assert_eq!(program("nice -n 5 timeout -s KILL 10 rm x"), Some(("rm".into(), 1)));
        assert_eq!(program("busybox rm -rf /"), Some(("rm".into(), 2)));
        assert_eq!(program("chroot / rm x"), Some(("rm".into(), 1)));
        assert!(matches!(unwrap(words("command -v sudo")), Target::Nothing));
        assert!(matches!(unwrap(words("nice sudo ls")), Target::Refused(_)));
        assert!(matches!(unwrap(words("xargs -n1 rm")), Target::Xargs(_, None)));
        assert!(matches!(unwrap(words("xargs -I % rm %")), Target::Xargs(_, Some(r)) if r == "%"));
    }
}
