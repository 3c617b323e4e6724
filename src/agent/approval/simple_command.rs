//! Whether a command line is one simple command — a program and its plain arguments — and which
//! kind: what an "always" answer may cover.
//!
//! A person who allows `cargo test` always has allowed running the tests, not whatever else a
//! line starting with `cargo` might do. So an "always" covers the program and, for the tools
//! that have them, its subcommand (`git status`, `cargo test`; plain `ls`, `echo`), and only lines
//! that are exactly one simple command: the line
//! is parsed as bash parses it, and anything that chains (`;`, `&&`, `||`, `&`), pipes,
//! substitutes (`$(…)`, backticks, `$VAR`, `<(…)`), redirects, assigns variables, quotes its
//! program or spans lines is not one, and is asked about every time.

use brush_parser::ParserOptions;
use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};

/// Programs whose first argument names what they do (`git status`, `cargo test`): for these an
/// "always" covers one subcommand. Any other program is covered as a whole (`ls`, `echo`).
const WITH_SUBCOMMANDS: &[&str] = &[
    "apt",
    "brew",
    "bun",
    "bundle",
    "cargo",
    "cmake",
    "composer",
    "deno",
    "docker",
    "dotnet",
    "gh",
    "git",
    "go",
    "gradle",
    "helm",
    "kubectl",
    "make",
    "mix",
    "mvn",
    "nix",
    "npm",
    "pip",
    "pip3",
    "pnpm",
    "podman",
    "poetry",
    "rustup",
    "swift",
    "systemctl",
    "terraform",
    "uv",
    "yarn",
    "./gradlew",
    "./mvnw",
];

/// What an "always" answer for a command covers: its program, and its subcommand if it has one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommandKind {
    pub program: String,
    pub subcommand: Option<String>,
}

impl CommandKind {
    /// The kind of `command`, if it is exactly one simple command; `None` for anything else.
    pub fn of(command: &str) -> Option<Self> {
        let words = simple_words(command)?;
        let mut words = words.into_iter();
        let program = words.next()?;
        if !program.chars().all(is_plain_program_char) {
            return None;
        }
        // A tool of subcommands called some other way (`git -C x …`) is not one kind of thing.
        let subcommand = if WITH_SUBCOMMANDS.contains(&program.as_str()) {
            Some(words.next().filter(|word| is_subcommand(word))?)
        } else {
            None
        };
        Some(Self { program, subcommand })
    }
}

impl std::fmt::Display for CommandKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.subcommand {
            Some(subcommand) => write!(f, "{} {subcommand}", self.program),
            None => f.write_str(&self.program),
        }
    }
}

/// The words of `command` as written, if the whole line is one simple command with no
/// redirection, assignment, substitution, expansion or line break.
fn simple_words(command: &str) -> Option<Vec<String>> {
    if command.contains(['\n', '\r', '`', '$']) {
        return None;
    }
    let mut parser = brush_parser::Parser::new(
        std::io::Cursor::new(command.as_bytes()),
        &ParserOptions::default(),
    );
    let program = parser.parse_program().ok()?;
    let [list] = program.complete_commands.as_slice() else {
        return None;
    };
    let [ast::CompoundListItem(and_or, separator)] = list.0.as_slice() else {
        return None;
    };
    if matches!(separator, ast::SeparatorOperator::Async) || !and_or.additional.is_empty() {
        return None;
    }
    let pipeline = &and_or.first;
    let ([ast::Command::Simple(simple)], None, false) =
        (pipeline.seq.as_slice(), &pipeline.timed, pipeline.bang)
    else {
        return None;
    };
    if simple.prefix.is_some() {
        return None;
    }
    let mut words = vec![simple.word_or_name.as_ref()?.value.clone()];
    for item in simple.suffix.iter().flat_map(|suffix| &suffix.0) {
        match item {
            Item::Word(word) => words.push(word.value.clone()),
            Item::IoRedirect(_) | Item::AssignmentWord(..) | Item::ProcessSubstitution(..) => {
                return None;
            }
        }
    }
    Some(words)
}

/// A program named the plain way (`cargo`, `./gradlew`, `/usr/bin/git`), not quoted or built.
fn is_plain_program_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+')
}

/// A word that reads as a subcommand (`status`, `test`, `run-script`) rather than an option or
/// a file.
fn is_subcommand(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(command: &str) -> Option<String> {
        CommandKind::of(command).map(|kind| kind.to_string())
    }

    #[test]
    fn simple_commands_are_kinds_of_program_and_subcommand() {
        assert_eq!(kind("cargo test --release"), Some("cargo test".into()));
        assert_eq!(kind("git status"), Some("git status".into()));
        assert_eq!(kind("ls -la src"), Some("ls".into()));
        assert_eq!(kind("  ls  "), Some("ls".into()));
        assert_eq!(kind("python3 script.py"), Some("python3".into()));
        assert_eq!(kind("./gradlew build"), Some("./gradlew build".into()));
        assert_eq!(kind("echo one"), Some("echo".into()));
        assert_eq!(kind("git -C x status"), None);
        assert_eq!(kind("cargo"), None);
        assert_eq!(kind("grep -r 'a b' ."), Some("grep".into()));
    }

    #[test]
    fn a_subcommand_is_one_plain_lowercase_word() {
        assert_eq!(kind("git cherry-pick abc"), Some("git cherry-pick".into()));
        assert_eq!(kind("cargo build2"), Some("cargo build2".into()));
        // Not a subcommand: a file, an option, a word that starts with a digit or a capital.
        for command in ["git x.y", "git --", "git 2fa", "cargo Build", "git status.txt"] {
            assert_eq!(kind(command), None, "{command}");
        }
    }

    #[test]
    fn anything_more_than_one_simple_command_is_none() {
        for command in [
            "ls && touch X",
            "ls; touch X",
            "ls || touch X",
            "ls | sh",
            "ls &",
            "ls\ntouch X",
            "ls\rtouch X",
            "ls $(touch X)",
            "ls `touch X`",
            "ls $HOME",
            "ls ${X}",
            "ls > out.txt",
            "ls 2>&1",
            "ls < in",
            "cat <(touch X)",
            "FOO=1 ls",
            "'ls' -la",
            "\"l\"s",
            "! ls",
            "time ls",
            "{ ls; }",
            "(ls)",
            "if true; then ls; fi",
            "",
            "ls 'unterminated",
        ] {
            assert_eq!(CommandKind::of(command), None, "{command:?}");
        }
    }
}
