//! The last line of defence: shell commands keel refuses to run, whatever the approval mode.
//!
//! [`check_command`] refuses the few commands that wreck a machine rather than a project: running
//! as another user, deleting `/` or the home folder, formatting or overwriting disks, powering the
//! machine off, fork bombs, killing every process. It reads the command the way a shell would — words,
//! quotes, `;` `&&` `||` `|` `&`, `$(…)` and backticks, `bash -c '…'` and `eval` — and looks at the
//! program each simple command runs, so `echo sudo` or `grep 'rm -rf /' notes.txt` pass while
//! `cd /tmp && sudo make install` does not. It is a guard against accidents, not a sandbox.

/// How deep `$(…)`, backticks and `bash -c` may nest before the command is refused as unreadable.
const MAX_NESTING: usize = 16;

/// Top-level folders whose recursive removal (or change of owner or mode) ruins the system.
const SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "opt", "proc", "root", "run",
    "sbin", "srv", "sys", "usr", "var",
];

/// Device files that are safe to write to.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

/// Name prefixes of disk devices under `/dev/`.
const DISK_DEVICE_PREFIXES: &[&str] =
    &["sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "dm-", "mapper/", "md", "loop", "sr"];

/// Programs that power the machine off or restart it.
const POWER_PROGRAMS: &[&str] = &["shutdown", "reboot", "halt", "poweroff"];

/// Programs that run a command as another user.
const PRIVILEGE_PROGRAMS: &[&str] = &["sudo", "doas", "su", "pkexec"];

/// Programs that write straight to whatever file they are given.
const DEVICE_WRITERS: &[&str] = &["tee", "cp", "mv", "shred", "badblocks"];

/// Checks `cmd` before it runs. `Err` carries the reason it is refused, for the model to read.
pub fn check_command(cmd: &str) -> Result<(), String> {
    check_nested(cmd, 0)
}

/// Checks `cmd` as run in `cwd`.
pub fn check_command_in(cmd: &str, _cwd: &std::path::Path) -> Result<(), String> {
    check_command(cmd)
}

fn check_nested(cmd: &str, depth: usize) -> Result<(), String> {
    if depth > MAX_NESTING {
        return Err("the command nests substitutions too deeply to check".to_owned());
    }
    if has_fork_bomb(cmd) {
        return Err("this is a fork bomb; it would exhaust the machine's processes".to_owned());
    }
    let lexed = lex(cmd);
    for inner in &lexed.nested {
        check_nested(inner, depth + 1)?;
    }
    for command in &lexed.commands {
        check_simple(command, depth)?;
    }
    Ok(())
}

/// One simple command: its words (quotes removed) and where its output is redirected.
#[derive(Debug, Default, Clone, PartialEq)]
struct SimpleCommand {
    words: Vec<String>,
    redirects: Vec<String>,
}

fn check_simple(command: &SimpleCommand, depth: usize) -> Result<(), String> {
    for target in &command.redirects {
        if is_disk_device(target) {
            return Err(format!("redirecting output to `{target}` would overwrite a disk"));
        }
    }
    let words = program_and_args(&command.words)?;
    let Some((program, args)) = words.split_first() else {
        return Ok(());
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    if PRIVILEGE_PROGRAMS.contains(&name) {
        return Err(format!("`{name}` runs commands as another user; keel never does that"));
    }
    if POWER_PROGRAMS.contains(&name) {
        return Err(format!("`{name}` would power off or restart the machine"));
    }
    if name.starts_with("mkfs") || name == "mke2fs" || name == "mkswap" || name == "wipefs" {
        return Err(format!("`{name}` formats or wipes a disk"));
    }
    match name {
        "rm" => check_rm(args),
        "chmod" | "chown" | "chgrp" => check_recursive_change(name, args),
        "dd" => check_dd(args),
        "systemctl" | "loginctl" => check_systemctl(name, args),
        "init" | "telinit" if args.iter().any(|arg| arg == "0" || arg == "6") => {
            Err(format!("`{name}` would power off or restart the machine"))
        }
        "kill" => check_kill(args),
        "bash" | "sh" | "zsh" | "dash" | "ksh" => check_shell(args, depth),
        "eval" => check_nested(&args.join(" "), depth + 1),
        _ if DEVICE_WRITERS.contains(&name) => match args.iter().find(|arg| is_disk_device(arg)) {
            Some(device) => Err(format!("`{name}` would write to the disk `{device}`")),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Skips variable assignments and wrappers (`env`, `nohup`, `time`, `nice`, `timeout`, `xargs`, …)
/// to find the program a simple command really runs, followed by its arguments.
fn program_and_args(words: &[String]) -> Result<&[String], String> {
    let mut index = 0;
    while let Some(word) = words.get(index) {
        let name = word.rsplit('/').next().unwrap_or(word);
        if PRIVILEGE_PROGRAMS.contains(&name) {
            return Err(format!("`{name}` runs commands as another user; keel never does that"));
        }
        index += match name {
            _ if is_assignment(word) => 1,
            // `command -v NAME` only looks a program up.
            "command" if words.get(index + 1).is_some_and(|arg| arg == "-v" || arg == "-V") => {
                return Ok(&[]);
            }
            "env" | "nohup" | "time" | "exec" | "command" | "builtin" | "stdbuf" | "setsid" => {
                1 + count_options(&words[index + 1..], &["-u", "-C", "-S"])
            }
            "nice" | "ionice" => 1 + count_options(&words[index + 1..], &["-n", "-c"]),
            "xargs" => {
                1 + count_options(
                    &words[index + 1..],
                    &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"],
                )
            }
            "timeout" => {
                // `timeout [options] DURATION command…`
                let options = count_options(&words[index + 1..], &["-s", "-k"]);
                1 + options + usize::from(words.len() > index + 1 + options)
            }
            _ => return Ok(&words[index..]),
        };
    }
    Ok(&[])
}

/// How many leading words are options (and the values of those in `with_value`).
fn count_options(words: &[String], with_value: &[&str]) -> usize {
    let mut count = 0;
    while let Some(word) = words.get(count) {
        if word == "--" {
            return count + 1;
        }
        if is_assignment(word) {
            count += 1;
        } else if word.starts_with('-') && word.len() > 1 {
            count += if with_value.contains(&word.as_str()) { 2 } else { 1 };
        } else {
            break;
        }
    }
    count.min(words.len())
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn check_rm(args: &[String]) -> Result<(), String> {
    let (flags, targets) = split_flags(args);
    if flags.contains(&"--no-preserve-root") {
        return Err("`rm --no-preserve-root` exists only to delete `/`".to_owned());
    }
    let recursive = flags.iter().any(|flag| {
        *flag == "--recursive"
            || (!flag.starts_with("--") && flag.chars().any(|c| c == 'r' || c == 'R'))
    });
    if !recursive {
        return Ok(());
    }
    match targets.iter().find(|target| is_precious(target)) {
        Some(target) => Err(format!("`rm -r {target}` would delete the system or the home folder")),
        None => Ok(()),
    }
}

fn check_recursive_change(name: &str, args: &[String]) -> Result<(), String> {
    let (flags, targets) = split_flags(args);
    let recursive = flags
        .iter()
        .any(|flag| *flag == "--recursive" || (!flag.starts_with("--") && flag.contains('R')));
    match targets.iter().find(|target| is_precious(target)) {
        Some(target) if recursive => {
            Err(format!("`{name} -R {target}` would change the whole system or home folder"))
        }
        _ => Ok(()),
    }
}

/// Options (words starting with `-`, until `--`) and operands.
fn split_flags(args: &[String]) -> (Vec<&str>, Vec<&str>) {
    let mut flags = Vec::new();
    let mut operands = Vec::new();
    let mut options_done = false;
    for arg in args.iter().map(String::as_str) {
        if options_done || !arg.starts_with('-') || arg == "-" {
            operands.push(arg);
        } else if arg == "--" {
            options_done = true;
        } else {
            flags.push(arg);
        }
    }
    (flags, operands)
}

/// `/`, `/*`, a top-level system folder, or the home folder (`~`, `$HOME`, `~/*`, …).
fn is_precious(target: &str) -> bool {
    let home_rest = ["~", "${HOME}", "$HOME"].iter().find_map(|prefix| target.strip_prefix(prefix));
    if let Some(rest) = home_rest {
        return rest.is_empty() || (rest.starts_with('/') && is_root_like(rest));
    }
    if !target.starts_with('/') {
        return false;
    }
    let parts = normal_parts(target);
    if is_home(&parts) {
        return true;
    }
    match parts.as_slice() {
        [] => true,
        ["*"] => true,
        [top] | [top, "*"] => SYSTEM_DIRS.contains(top),
        _ => false,
    }
}

/// Whether normalised absolute path parts name the home folder of the user running keel.
fn is_home(parts: &[&str]) -> bool {
    std::env::var("HOME").is_ok_and(|home| {
        let home_parts = normal_parts(&home);
        !home_parts.is_empty() && home_parts == parts
    })
}

/// Whether a path relative to some folder still names the folder itself or all of its contents.
fn is_root_like(path: &str) -> bool {
    matches!(normal_parts(path).as_slice(), [] | ["*"] | [".*"])
}

/// A slash-separated path's components with `.` dropped and `..` applied.
fn normal_parts(path: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts
}

fn check_dd(args: &[String]) -> Result<(), String> {
    for arg in args {
        if let Some(target) = arg.strip_prefix("of=")
            && target.starts_with("/dev/")
            && !is_harmless_device(target)
        {
            return Err(format!("`dd of={target}` would overwrite a device"));
        }
    }
    Ok(())
}

fn check_systemctl(name: &str, args: &[String]) -> Result<(), String> {
    const POWER_VERBS: &[&str] = &[
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "suspend",
        "hibernate",
        "kill-session",
        "terminate-session",
    ];
    match args.iter().find(|arg| POWER_VERBS.contains(&arg.as_str())) {
        Some(verb) => Err(format!("`{name} {verb}` would stop the machine or the session")),
        None => Ok(()),
    }
}

/// `kill -9 -1` (and friends) signals every process the user may signal.
fn check_kill(args: &[String]) -> Result<(), String> {
    let targets: &[String] = match args.iter().position(|arg| arg == "--") {
        Some(split) => &args[split + 1..],
        None => match args.first().map(String::as_str) {
            // The first option names the signal (`-9`, `-KILL`, `-s KILL`); later words are targets.
            Some("-s" | "-n") => args.get(2..).unwrap_or_default(),
            Some(first) if first.starts_with('-') => &args[1..],
            _ => args,
        },
    };
    if targets.iter().any(|target| target == "-1") {
        return Err("`kill -1` would signal every process of the user, keel included".to_owned());
    }
    Ok(())
}

/// `bash -c 'script'`: the script is checked like any command.
fn check_shell(args: &[String], depth: usize) -> Result<(), String> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if !arg.starts_with('-') {
            return Ok(());
        }
        if !arg.starts_with("--") && arg.contains('c') {
            return match iter.next() {
                Some(script) => check_nested(script, depth + 1),
                None => Ok(()),
            };
        }
    }
    Ok(())
}

fn is_harmless_device(path: &str) -> bool {
    HARMLESS_DEVICES.contains(&path)
        || path.starts_with("/dev/fd/")
        || path.starts_with("/dev/pts/")
}

fn is_disk_device(path: &str) -> bool {
    path.strip_prefix("/dev/")
        .is_some_and(|device| DISK_DEVICE_PREFIXES.iter().any(|prefix| device.starts_with(prefix)))
}

/// `name(){ name|name& };name` in any spacing, with any function name.
fn has_fork_bomb(cmd: &str) -> bool {
    let squeezed: String = cmd.chars().filter(|c| !c.is_whitespace() || *c == '\n').collect();
    let mut search_from = 0;
    while let Some(found) = squeezed[search_from..].find("(){") {
        let at = search_from + found;
        let name_start = squeezed[..at]
            .rfind([';', '&', '|', '(', ')', '{', '}', '\n'])
            .map_or(0, |index| index + 1);
        let name = squeezed[name_start..at].trim_start_matches("function");
        let body = &squeezed[at + 3..];
        if !name.is_empty() {
            let piped = format!("{name}|{name}&");
            if body.starts_with(&piped) || body.starts_with(&format!("{name}&{name}")) {
                return true;
            }
        }
        search_from = at + 3;
    }
    false
}

/// What [`lex`] found: the simple commands, and the inner scripts (`$(…)`, backticks) to check too.
#[derive(Debug, Default)]
struct Lexed {
    commands: Vec<SimpleCommand>,
    nested: Vec<String>,
}

/// Splits a command line into simple commands the way a shell would, well enough for the guard.
fn lex(cmd: &str) -> Lexed {
    Lexer {
        chars: cmd.chars().collect(),
        pos: 0,
        out: Lexed::default(),
        current: SimpleCommand::default(),
        word: None,
    }
    .run()
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    out: Lexed,
    current: SimpleCommand,
    /// The word being built; `None` between words (so that `''` still makes an empty word).
    word: Option<String>,
}

impl Lexer {
    fn run(mut self) -> Lexed {
        while let Some(c) = self.next() {
            match c {
                c if c.is_whitespace() && c != '\n' => self.end_word(),
                ';' | '&' | '|' | '\n' | '(' | ')' => self.end_command(),
                '{' | '}' if self.word.is_none() && self.at_word_end() => self.end_command(),
                '#' if self.word.is_none() => self.skip_comment(),
                '>' => self.redirect(),
                '<' => self.end_word(),
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '\\' => self.escaped(),
                '`' => self.backticks(),
                '$' => self.dollar(),
                other => self.push(other),
            }
        }
        self.end_command();
        self.out
    }

    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        self.pos += 1;
        c
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// Whether the next character ends a word (for telling `{ cmd; }` from `{a,b}`).
    fn at_word_end(&self) -> bool {
        self.peek().is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '&' | '|'))
    }

    fn push(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }

    fn push_str(&mut self, text: &str) {
        self.word.get_or_insert_with(String::new).push_str(text);
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            self.current.words.push(word);
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        let command = std::mem::take(&mut self.current);
        if !command.words.is_empty() || !command.redirects.is_empty() {
            self.out.commands.push(command);
        }
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.pos += 1;
        }
    }

    /// `>`, `>>`, `>|`, `>&`, with an optional file-descriptor number before it: the next word is
    /// the target.
    fn redirect(&mut self) {
        if self.word.as_deref().is_some_and(|word| word.chars().all(|c| c.is_ascii_digit())) {
            self.word = None;
        }
        self.end_word();
        while matches!(self.peek(), Some('>' | '|' | '&')) {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c.is_whitespace() && c != '\n') {
            self.pos += 1;
        }
        let before = self.current.words.len();
        // Read one word with the usual rules, then move it from the words to the redirects.
        while let Some(c) = self.peek() {
            if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>') {
                break;
            }
            self.pos += 1;
            match c {
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '\\' => self.escaped(),
                '`' => self.backticks(),
                '$' => self.dollar(),
                other => self.push(other),
            }
        }
        self.end_word();
        if self.current.words.len() > before {
            let target = self.current.words.split_off(before);
            self.current.redirects.extend(target);
        }
    }

    fn single_quoted(&mut self) {
        self.word.get_or_insert_with(String::new);
        while let Some(c) = self.next() {
            if c == '\'' {
                return;
            }
            self.push(c);
        }
    }

    fn double_quoted(&mut self) {
        self.word.get_or_insert_with(String::new);
        while let Some(c) = self.next() {
            match c {
                '"' => return,
                '\\' => match self.next() {
                    Some(escaped @ ('"' | '\\' | '$' | '`')) => self.push(escaped),
                    Some('\n') => {}
                    Some(other) => {
                        self.push('\\');
                        self.push(other);
                    }
                    None => {}
                },
                '`' => self.backticks(),
                '$' => self.dollar(),
                other => self.push(other),
            }
        }
    }

    fn escaped(&mut self) {
        match self.next() {
            Some('\n') | None => {}
            Some(c) => self.push(c),
        }
    }

    /// `$(…)` and `$((…))` are scripts of their own; `${…}` and `$NAME` stay part of the word.
    fn dollar(&mut self) {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let inner = self.until_close_paren();
                self.out.nested.push(inner);
                self.push_str("$(…)");
            }
            Some('{') => {
                let start = self.pos - 1;
                while let Some(c) = self.next() {
                    if c == '}' {
                        break;
                    }
                }
                let text: String =
                    self.chars[start..self.pos.min(self.chars.len())].iter().collect();
                self.push_str(&text);
            }
            _ => self.push('$'),
        }
    }

    /// The text up to the `)` matching an already consumed `(`, skipping quoted parentheses.
    fn until_close_paren(&mut self) -> String {
        let start = self.pos;
        let mut depth = 1usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.next() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') => self.pos += 1,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '\\') => self.pos += 1,
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        return self.chars[start..self.pos - 1].iter().collect();
                    }
                }
                (None, _) => {}
            }
        }
        self.chars[start..self.chars.len()].iter().collect()
    }

    fn backticks(&mut self) {
        let mut inner = String::new();
        while let Some(c) = self.next() {
            match c {
                '`' => break,
                '\\' => {
                    if let Some(escaped) = self.next() {
                        inner.push(escaped);
                    }
                }
                other => inner.push(other),
            }
        }
        self.out.nested.push(inner);
        self.push_str("`…`");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<Vec<String>> {
        lex(cmd).commands.into_iter().map(|c| c.words).collect()
    }

    #[test]
    fn lexer_splits_commands_and_removes_quotes() {
        assert_eq!(
            words("echo 'a b' \"c d\" && ls -l | wc; true"),
            vec![vec!["echo", "a b", "c d"], vec!["ls", "-l"], vec!["wc"], vec!["true"]]
        );
    }

    #[test]
    fn lexer_collects_redirect_targets_and_substitutions() {
        let lexed = lex("echo $(whoami) `id` 2>/dev/null > out.txt");
        assert_eq!(lexed.nested, vec!["whoami", "id"]);
        assert_eq!(lexed.commands[0].redirects, vec!["/dev/null", "out.txt"]);
        assert_eq!(lexed.commands[0].words, vec!["echo", "$(…)", "`…`"]);
    }

    #[test]
    fn precious_targets() {
        for target in
            ["/", "/*", "//", "/.", "/usr", "/etc/", "~", "~/", "~/*", "$HOME", "${HOME}/"]
        {
            assert!(is_precious(target), "{target}");
        }
        for target in ["./build", "/tmp/x", "~/.cache", "$HOME/project/target", "build", "*"] {
            assert!(!is_precious(target), "{target}");
        }
    }
}
