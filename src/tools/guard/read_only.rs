//! Whether a command only reads: what plan mode lets the model run.
//!
//! [`check_read_only`] parses the line with the same bash parser as the guard and accepts it only
//! when every command in it — each part of every list, pipeline, group, loop and `$(…)` — is one
//! of a small set of programs that read (`ls`, `cat`, `grep`, `find`, `git log`, …), called with
//! no option that writes or runs something else (`find -delete`, `-exec`; `sort -o`; `rg
//! --pre`; `git diff --output`, `--ext-diff`), and when nothing is redirected to a file. The rules
//! are an allow-list: anything keel does not recognise is refused, with the reason.
//!
//! Words whose value keel cannot see — a variable, a substitution's output, an unquoted glob or
//! brace — are refused as the program's name, and anywhere in the arguments of a program whose
//! options matter (`find`, `git`, `rg`, `sort`), since they could turn into `-delete`. No
//! assignment is allowed either: `PATH=…` or `GIT_EXTERNAL_DIFF=…` would change what runs.
//!
//! Like the guard, this judges the command line, not the programs: git runs with the
//! repository's own configuration, which someone else's `.git/config` can point at programs.

use brush_parser::ParserOptions;
use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};
use brush_parser::word::{self, ParameterExpr, WordPiece, WordPieceWithSource};

/// Why a command is not read-only, in words for the model.
type Verdict = Result<(), String>;

/// How deep `$(…)` may nest inside a read-only command.
const MAX_DEPTH: usize = 8;
/// The longest command looked at.
const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// Programs that only read whatever their arguments; options cannot make them write.
const READERS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "cut", "tr",
    "diff", "stat", "du", "basename", "dirname", "realpath", "true", "cd", "test", "[",
];
/// `find`'s actions that delete, run programs or write files.
const FIND_REFUSED: &[&str] =
    &["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"];
/// `git`'s subcommands that only read.
const GIT_READERS: &[&str] = &["status", "log", "diff", "show"];
/// `git`'s options that write a file or run a program, before or after the subcommand.
const GIT_REFUSED: &[&str] =
    &["--output", "--ext-diff", "--textconv", "-c", "--config-env", "--exec-path"];
/// Options of `git` itself that may come before the subcommand, and whether each takes a value.
const GIT_GLOBAL: &[(&str, bool)] = &[("-C", true), ("--no-pager", false), ("-P", false)];

/// `Ok` when `cmd` only reads; otherwise why not.
pub fn check_read_only(cmd: &str) -> Verdict {
    if cmd.len() > MAX_COMMAND_BYTES {
        return Err("it is too long to judge".into());
    }
    // The parser recurses once per bracket or block: bound it before parsing, as the guard does.
    if super::nesting_depth(cmd) > super::MAX_NESTING_DEPTH {
        return Err("it nests brackets or blocks too deeply to judge".into());
    }
    script(cmd, 0)
}

fn script(text: &str, depth: usize) -> Verdict {
    if depth > MAX_DEPTH {
        return Err("its substitutions nest too deeply to judge".into());
    }
    let mut parser =
        brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &ParserOptions::default());
    let program = parser
        .parse_program()
        .map_err(|err| format!("keel cannot read it as bash would ({err})"))?;
    program.complete_commands.iter().try_for_each(|list| compound_list(list, depth))
}

fn compound_list(list: &ast::CompoundList, depth: usize) -> Verdict {
    for ast::CompoundListItem(and_or, separator) in &list.0 {
        if matches!(separator, ast::SeparatorOperator::Async) {
            return Err("it starts a background job".into());
        }
        pipeline(&and_or.first, depth)?;
        for next in &and_or.additional {
            let (ast::AndOr::And(part) | ast::AndOr::Or(part)) = next;
            pipeline(part, depth)?;
        }
    }
    Ok(())
}

fn pipeline(pipeline: &ast::Pipeline, depth: usize) -> Verdict {
    pipeline.seq.iter().try_for_each(|command| self::command(command, depth))
}

fn command(command: &ast::Command, depth: usize) -> Verdict {
    use ast::CompoundCommand as C;
    match command {
        ast::Command::Simple(simple) => simple_command(simple, depth),
        ast::Command::Compound(compound, redirects) => {
            for redirect in redirects.iter().flat_map(|list| &list.0) {
                self::redirect(redirect, depth)?;
            }
            match compound {
                C::BraceGroup(group) => compound_list(&group.list, depth),
                C::Subshell(subshell) => compound_list(&subshell.list, depth),
                C::IfClause(clause) => {
                    compound_list(&clause.condition, depth)?;
                    compound_list(&clause.then, depth)?;
                    for branch in clause.elses.iter().flatten() {
                        if let Some(condition) = &branch.condition {
                            compound_list(condition, depth)?;
                        }
                        compound_list(&branch.body, depth)?;
                    }
                    Ok(())
                }
                C::ForClause(clause) => {
                    for value in clause.values.iter().flatten() {
                        words_of(&value.value, depth)?;
                    }
                    compound_list(&clause.body.list, depth)
                }
                C::WhileClause(clause) | C::UntilClause(clause) => {
                    compound_list(&clause.0, depth)?;
                    compound_list(&clause.1.list, depth)
                }
                C::CaseClause(_) | C::ArithmeticForClause(_) | C::Arithmetic(_) | C::Coprocess(_) => {
                    Err("it uses a shell construct keel does not judge (case, arithmetic or a coprocess)".into())
                }
            }
        }
        ast::Command::Function(_) => {
            Err("it defines a function, which could run anything under a reader's name".into())
        }
        ast::Command::ExtendedTest(test, _) => extended_test(&test.expr, depth),
    }
}

fn extended_test(expr: &ast::ExtendedTestExpr, depth: usize) -> Verdict {
    use ast::ExtendedTestExpr as T;
    match expr {
        T::And(a, b) | T::Or(a, b) => {
            extended_test(a, depth)?;
            extended_test(b, depth)
        }
        T::Not(inner) | T::Parenthesized(inner) => extended_test(inner, depth),
        T::UnaryTest(_, word) => words_of(&word.value, depth).map(drop),
        T::BinaryTest(_, left, right) => {
            words_of(&left.value, depth)?;
            words_of(&right.value, depth).map(drop)
        }
    }
}

fn redirect(redirect: &ast::IoRedirect, depth: usize) -> Verdict {
    use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
    match redirect {
        R::File(_, kind, target) => match target {
            T::Fd(_) => Ok(()),
            T::Filename(word) | T::Duplicate(word) => {
                let reads = matches!(kind, K::Read | K::DuplicateInput);
                let known = words_of(&word.value, depth)?;
                let harmless = reads
                    || matches!(kind, K::DuplicateOutput) && known.as_deref().is_some_and(is_fd)
                    || known.as_deref() == Some("/dev/null");
                if harmless {
                    Ok(())
                } else {
                    Err(format!("it redirects output to `{}`", word.value))
                }
            }
            T::ProcessSubstitution(_, subshell) => compound_list(&subshell.list, depth),
        },
        R::OutputAndError(word, _) => match words_of(&word.value, depth)?.as_deref() {
            Some("/dev/null") => Ok(()),
            _ => Err(format!("it redirects output to `{}`", word.value)),
        },
        R::HereDocument(_, doc) => {
            if doc.requires_expansion {
                let pieces = word::parse_heredoc(&doc.doc.value, &ParserOptions::default())
                    .map_err(|err| format!("keel cannot read its here-document ({err})"))?;
                pieces_of(&pieces, depth)?;
            }
            Ok(())
        }
        R::HereString(_, word) => words_of(&word.value, depth).map(drop),
    }
}

/// Whether a `>&` target names a file descriptor (`2>&1`, `>&-`) rather than a file.
fn is_fd(target: &str) -> bool {
    target == "-" || (!target.is_empty() && target.bytes().all(|byte| byte.is_ascii_digit()))
}

fn simple_command(simple: &ast::SimpleCommand, depth: usize) -> Verdict {
    let prefix = simple.prefix.iter().flat_map(|prefix| &prefix.0);
    let suffix = simple.suffix.iter().flat_map(|suffix| &suffix.0);
    let mut args: Vec<Option<String>> = Vec::new();
    let name = simple.word_or_name.iter().map(|word| Item::Word(word.clone()));
    let items: Vec<Item> = prefix.cloned().chain(name).chain(suffix.cloned()).collect();
    for item in &items {
        match item {
            Item::IoRedirect(redirect) => self::redirect(redirect, depth)?,
            Item::Word(word) => args.push(words_of(&word.value, depth)?),
            Item::AssignmentWord(..) => {
                return Err("it assigns a variable, which could change what runs".into());
            }
            Item::ProcessSubstitution(_, subshell) => {
                compound_list(&subshell.list, depth)?;
                args.push(None);
            }
        }
    }
    let Some((first, rest)) = args.split_first() else {
        return Ok(());
    };
    let Some(program) = first.as_deref() else {
        return Err("its program's name is computed, so keel cannot tell what runs".into());
    };
    if program.contains('/') {
        return Err(format!("`{program}` is run by path, not one of the read-only programs"));
    }
    match program {
        "find" => options(program, rest, |arg| FIND_REFUSED.contains(&arg)),
        "rg" => options(program, rest, |arg| arg == "--pre" || arg.starts_with("--pre=")),
        "sort" => options(program, rest, |arg| {
            arg.starts_with("-o")
                || ["--output", "--compress-program"].iter().any(|long| arg.starts_with(long))
        }),
        "git" => git(rest),
        _ if READERS.contains(&program) => Ok(()),
        _ => Err(format!("`{program}` is not one of the read-only programs keel lets run")),
    }
}

/// A program whose options matter: every argument must be known, and none refused.
fn options(program: &str, args: &[Option<String>], refused: impl Fn(&str) -> bool) -> Verdict {
    for arg in args {
        let Some(arg) = arg else {
            return Err(format!(
                "an argument of `{program}` is computed, so keel cannot tell its options"
            ));
        };
        if refused(arg) {
            return Err(format!("`{program} {arg}` writes files or runs another program"));
        }
    }
    Ok(())
}

/// `git [-C DIR] [--no-pager] status|log|diff|show …` without options that write or run.
fn git(args: &[Option<String>]) -> Verdict {
    let refused = |arg: &str| {
        GIT_REFUSED.iter().any(|option| arg == *option || arg.starts_with(&format!("{option}=")))
    };
    options("git", args, refused)?;
    let mut rest = args.iter().flatten().map(String::as_str);
    while let Some(arg) = rest.next() {
        if GIT_READERS.contains(&arg) {
            return Ok(());
        }
        match GIT_GLOBAL.iter().find(|(option, _)| *option == arg) {
            Some((_, true)) => {
                rest.next();
            }
            Some((_, false)) => {}
            None => {
                return Err(format!(
                    "`git {arg}` is not one of git's read-only commands ({})",
                    GIT_READERS.join(", ")
                ));
            }
        }
    }
    Err("`git` alone is not one of git's read-only commands".into())
}

/// Whether unquoted text may become other words: a glob (`*`, `?`, `[…]`) or a brace
/// expansion (`{…}`). A lone `[`, as in `[ -f x ]`, is itself.
fn may_expand(text: &str) -> bool {
    let pair = |open: char, close: char| {
        text.find(open).is_some_and(|at| text[at + open.len_utf8()..].contains(close))
    };
    text.contains(['*', '?']) || pair('[', ']') || pair('{', '}')
}

/// Checks a word's substitutions and returns its text, or `None` when keel cannot know it.
fn words_of(text: &str, depth: usize) -> Result<Option<String>, String> {
    let pieces = word::parse(text, &ParserOptions::default())
        .map_err(|err| format!("keel cannot read the word `{text}` ({err})"))?;
    pieces_of(&pieces, depth)
}

fn pieces_of(pieces: &[WordPieceWithSource], depth: usize) -> Result<Option<String>, String> {
    let mut known = Some(String::new());
    for piece in pieces {
        let text = match &piece.piece {
            WordPiece::Text(text) if may_expand(text) => None,
            WordPiece::Text(text) | WordPiece::SingleQuotedText(text) => Some(text.clone()),
            WordPiece::EscapeSequence(escaped) => Some(escaped.trim_start_matches('\\').to_owned()),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => pieces_of(inner, depth)?,
            WordPiece::CommandSubstitution(inner)
            | WordPiece::BackquotedCommandSubstitution(inner) => {
                script(inner, depth + 1)?;
                None
            }
            WordPiece::ParameterExpansion(ParameterExpr::Parameter { .. }) => None,
            WordPiece::ParameterExpansion(_) => {
                return Err("it uses a parameter expansion that may assign or run something".into());
            }
            WordPiece::ArithmeticExpression(_) => {
                return Err("it uses arithmetic expansion, which keel does not judge".into());
            }
            WordPiece::AnsiCQuotedText(_) | WordPiece::TildeExpansion(_) => None,
        };
        known = known.zip(text).map(|(mut known, text)| {
            known.push_str(&text);
            known
        });
    }
    Ok(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_and_their_pipelines_pass() {
        for cmd in [
            "ls -la",
            "cat src/main.rs | head -n 20",
            "grep -rn 'fn main' src && wc -l src/*.rs",
            "find . -name '*.rs' -type f",
            "rg --files | sort | head",
            "git status && git log --oneline -5 && git diff HEAD~1 && git show HEAD:README.md",
            "git -C sub --no-pager log",
            "cd src; ls",
            "cat $(find . -name Cargo.toml)",
            "ls 2>/dev/null || echo none",
            "grep x file 2>&1 | tail -n 3",
            "for f in a b; do wc -l \"$f\"; done",
            "if [ -f x ]; then cat x; fi",
            "cat <<EOF\nhello\nEOF",
            "diff <(ls a) <(ls b)",
            "wc -l < src/main.rs",
            "ls 2>&- >/dev/null",
            "ls &>/dev/null",
        ] {
            assert_eq!(check_read_only(cmd), Ok(()), "{cmd}");
        }
    }

    #[test]
    fn writers_redirections_and_unknown_programs_are_refused() {
        for (cmd, why) in [
            ("rm -rf target", "`rm` is not one of the read-only programs"),
            ("echo hi > notes.txt", "redirects output to `notes.txt`"),
            ("cat a >> b", "redirects output to `b`"),
            ("ls &> out.txt", "redirects output"),
            ("ls && touch x", "`touch` is not one"),
            ("ls | tee copy.txt", "`tee` is not one"),
            ("find . -name '*.tmp' -delete", "`find -delete` writes files"),
            ("find . -exec rm {} ;", "`find -exec`"),
            ("sort -o out.txt in.txt", "`sort -o"),
            ("rg --pre ./evil x", "`rg --pre`"),
            ("git commit -m x", "`git commit` is not one of git's read-only commands"),
            ("git diff --output=patch.txt", "`git --output=patch.txt`"),
            ("git -c core.pager=evil log", "`git -c`"),
            ("git", "`git` alone"),
            ("cat $(rm -rf x)", "`rm` is not one"),
            ("cat `touch y`", "`touch` is not one"),
            ("X=1 ls", "assigns a variable"),
            ("PATH=./bin; ls", "assigns a variable"),
            ("$CMD file", "program's name is computed"),
            ("./ls", "run by path"),
            ("find . $OPTS", "computed"),
            ("find . -name *", "computed"),
            ("find . -{delete,name}", "computed"),
            ("ls() { rm -rf x; }; ls", "defines a function"),
            ("sleep 100 &", "background job"),
            ("cat ${X:=$(rm y)}", "parameter expansion"),
            ("echo $((x=1))", "arithmetic"),
            ("cat > x <<EOF\nhi\nEOF", "redirects output to `x`"),
            ("cat <(touch z)", "`touch` is not one"),
            ("ls >& listing.txt", "redirects output to `listing.txt`"),
            ("echo hi > 1", "redirects output to `1`"),
        ] {
            let err = check_read_only(cmd).expect_err(cmd);
            assert!(err.contains(why), "{cmd}: {err}");
        }
    }

    #[test]
    fn the_limits_hold_at_their_edges() {
        const LONGEST: usize = 16 * 1024;
        let longest = format!("echo {}", "x".repeat(LONGEST - "echo ".len()));
        assert_eq!(check_read_only(&longest), Ok(()));
        assert!(check_read_only(&format!("{longest}x")).unwrap_err().contains("too long"));
        let nested = |n: usize| format!("{}ls{}", "cat $(".repeat(n), ")".repeat(n));
        const DEEPEST: usize = 8;
        assert_eq!(check_read_only(&nested(DEEPEST)), Ok(()));
        assert!(check_read_only(&nested(DEEPEST + 1)).unwrap_err().contains("substitutions"));
        let blocks = |n: usize| format!("{}ls{}", "{ ".repeat(n), "; }".repeat(n));
        let limit = super::super::MAX_NESTING_DEPTH;
        assert_eq!(check_read_only(&blocks(limit)), Ok(()));
        assert!(check_read_only(&blocks(limit + 1)).unwrap_err().contains("brackets or blocks"));
    }

    #[test]
    fn an_unparsable_or_huge_command_is_refused() {
        assert!(check_read_only("cat 'unterminated").is_err());
        assert!(check_read_only(&"ls ".repeat(MAX_COMMAND_BYTES)).is_err());
        let nested = format!("{}ls{}", "cat $(".repeat(MAX_DEPTH + 2), ")".repeat(MAX_DEPTH + 2));
        assert!(check_read_only(&nested).unwrap_err().contains("nest"));
    }
}
