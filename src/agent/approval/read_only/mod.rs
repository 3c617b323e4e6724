//! Whether a command only reads: what plan mode lets the model run where no sandbox confines it,
//! and what "always" may cover by its kind.
//!
//! [`check_read_only`] parses the line with the same bash parser as the guard and accepts it only
//! when every command in it — each part of every list, pipeline, group, loop and `$(…)` — is one
//! of a small set of programs that read, and when nothing is redirected to a file. The rules are
//! allow-lists: anything keel does not recognise is refused, with the reason.
//!
//! - [`READERS`] (`ls`, `cat`, `grep`, …) have no option that writes or runs another program,
//!   so they pass with any arguments.
//! - `sort`, `rg` and `git status|log|diff|show` pass only with the options their tables allow
//!   (`option_tables`, `git_readers`), read as their own parsers read them (`getopt`): a prefix
//!   of a long option (`sort --outp=x` is `--output=x`), bundled short options (`sort -uox`),
//!   values, `--`.
//! - `find` passes only with the tests and actions `find_expression` allows.
//!
//! Words whose value keel cannot see — a variable, a substitution's output, an unquoted glob or
//! brace — are refused as the program's name, and wherever they could be an option of a program
//! whose options matter, since they could turn into `--output`. No assignment is allowed either:
//! `PATH=…` or `GIT_EXTERNAL_DIFF=…` would change what runs.
//!
//! Like the guard, this judges the command line, not the programs: git runs with the
//! repository's own configuration, which someone else's `.git/config` can point at programs.

use brush_parser::ParserOptions;
use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};
use brush_parser::word::{self, ParameterExpr, WordPiece, WordPieceWithSource};

mod find_expression;
mod getopt;
mod git_readers;
mod option_tables;

use crate::runtime::guard::{MAX_NESTING_DEPTH, nesting_depth};

/// Why a command is not read-only, in words for the model.
type Verdict = Result<(), String>;

/// How deep `$(…)` may nest inside a read-only command.
const MAX_DEPTH: usize = 8;
/// The longest command looked at.
const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// Programs that only read whatever their arguments: no option of theirs writes a file or runs
/// another program.
const READERS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "cut", "tr",
    "diff", "stat", "du", "basename", "dirname", "realpath", "true", "cd", "test", "[",
];

/// `Ok` when `cmd` only reads; otherwise why not.
pub fn check_read_only(cmd: &str) -> Verdict {
    if cmd.len() > MAX_COMMAND_BYTES {
        return Err("it is too long to judge".into());
    }
    // The parser recurses once per bracket or block: bound it before parsing, as the guard does.
    if nesting_depth(cmd) > MAX_NESTING_DEPTH {
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
        "find" => find_expression::check(rest),
        "rg" => option_tables::RG.check(rest),
        "sort" => option_tables::SORT.check(rest),
        "git" => git_readers::check(rest),
        _ if READERS.contains(&program) => Ok(()),
        _ => Err(format!("`{program}` is not one of the read-only programs keel lets run")),
    }
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

/// What the checkers' tests share.
#[cfg(test)]
mod testing {
    use super::Verdict;

    /// The words of `line`, each as written.
    pub fn words(line: &str) -> Vec<Option<String>> {
        line.split_whitespace().map(|word| Some(word.to_owned())).collect()
    }

    /// Asserts that `check` refuses each line of `cases`, saying its reason.
    pub fn assert_refused(check: impl Fn(&str) -> Verdict, cases: &[(&str, &str)]) {
        for (line, why) in cases {
            let err = check(line).expect_err(line);
            assert!(err.contains(why), "{line}: {err}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::assert_refused;
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
            "sort -k2,2 -t, -u data.csv",
            "sort --key=2 --numeric --rev -- -o",
            "rg -n -A3 -tpy 'fn main' src",
            "rg --files -g '*.rs' | sort -u",
            "git log --oneline -n 5 -- src/",
            "git diff --stat HEAD~3..HEAD && git show --stat HEAD",
            "git log -p -1 --follow -- README.md",
            "git log --pretty=format:'%h %s' --since='2 weeks ago' --all --graph",
            "git diff --word-diff HEAD -- src/main.rs",
            "rg -l --type rust -C 3 -g '!target' -uu 'fn main'",
            "find . -maxdepth 2 -not -path './target/*' -type d -empty",
            "find src -iname '*.rs' -newer Cargo.toml -print -quit",
            "sort -t: -k3 -n data.txt | head",
        ] {
            assert_eq!(check_read_only(cmd), Ok(()), "{cmd}");
        }
    }

    #[test]
    fn writers_redirections_and_unknown_programs_are_refused() {
        let cases = [
            ("rm -rf target", "`rm` is not one of the read-only programs"),
            ("echo hi > notes.txt", "redirects output to `notes.txt`"),
            ("cat a >> b", "redirects output to `b`"),
            ("ls &> out.txt", "redirects output"),
            ("ls && touch x", "`touch` is not one"),
            ("ls | tee copy.txt", "`tee` is not one"),
            ("find . -name '*.tmp' -delete", "`find -delete` writes files"),
            ("find . -exec rm {} ;", "`find -exec`"),
            ("sort -o out.txt in.txt", "`sort -o"),
            ("sort --outp=x in.txt", "`sort --outp=x` is `--output`, which writes"),
            ("sort --comp=sh in.txt", "`sort --comp=sh` is `--compress-program`"),
            ("sort -uox in.txt", "`sort -o` (in `-uox`) writes"),
            ("sort -T /x in.txt", "`sort -T` writes"),
            ("sort --c in.txt", "could be any of --check, --compress-program"),
            ("rg -z secret", "`rg -z` writes files or runs"),
            ("rg --pre=./evil x", "`rg --pre=./evil`"),
            ("ls | sort --outp=x", "`sort --outp=x`"),
            ("rg --pre ./evil x", "`rg --pre`"),
            ("git commit -m x", "`git commit` is not one of git's read-only commands"),
            ("git diff --output=patch.txt", "`git diff --output=patch.txt`"),
            ("git -c core.pager=evil log", "`git -c`"),
            ("git log --grep -- --output=x", "`git log --output=x`"),
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
        ];
        assert_refused(check_read_only, &cases);
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
        let limit = MAX_NESTING_DEPTH;
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
