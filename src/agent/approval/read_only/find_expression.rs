//! `find` in a command keel proves read-only: its expression read as GNU findutils reads it, each
//! primary checked against an allow-list.
//!
//! `find [-H|-L|-P] [-D OPTS] [-OLEVEL] [START…] [EXPRESSION]`: the starting points run up to
//! the first word that begins with `-`, or is `(` or `!`; from there every word is an operator, or
//! a test, option or action that takes a fixed number of words after it (`-name PATTERN`). Only
//! the primaries listed here pass; `-delete`, `-exec`, `-execdir`, `-ok`, `-okdir`, `-fprint`,
//! `-fprint0`, `-fprintf` and `-fls` write files or run programs, and anything else keel does
//! not know is refused too. find takes its primaries only as spelled.

use super::Verdict;

/// Primaries that write files or run programs: named as such when refused.
const REFUSED: &[&str] =
    &["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"];
/// Operators of the expression.
const OPERATORS: &[&str] = &["(", ")", "!", ",", "-not", "-a", "-and", "-o", "-or"];
/// Tests, options and actions that only read, with the number of words each takes.
const PRIMARIES: &[(&str, usize)] = &[
    // Options.
    ("-depth", 0),
    ("-d", 0),
    ("-maxdepth", 1),
    ("-mindepth", 1),
    ("-mount", 0),
    ("-xdev", 0),
    ("-follow", 0),
    ("-noleaf", 0),
    ("-ignore_readdir_race", 0),
    ("-noignore_readdir_race", 0),
    ("-regextype", 1),
    ("-daystart", 0),
    ("-warn", 0),
    ("-nowarn", 0),
    ("-files0-from", 1),
    ("-help", 0),
    ("--help", 0),
    ("-version", 0),
    ("--version", 0),
    // Tests.
    ("-name", 1),
    ("-iname", 1),
    ("-path", 1),
    ("-ipath", 1),
    ("-wholename", 1),
    ("-iwholename", 1),
    ("-regex", 1),
    ("-iregex", 1),
    ("-lname", 1),
    ("-ilname", 1),
    ("-type", 1),
    ("-xtype", 1),
    ("-size", 1),
    ("-empty", 0),
    ("-mtime", 1),
    ("-mmin", 1),
    ("-atime", 1),
    ("-amin", 1),
    ("-ctime", 1),
    ("-cmin", 1),
    ("-used", 1),
    ("-newer", 1),
    ("-anewer", 1),
    ("-cnewer", 1),
    ("-perm", 1),
    ("-user", 1),
    ("-group", 1),
    ("-uid", 1),
    ("-gid", 1),
    ("-nouser", 0),
    ("-nogroup", 0),
    ("-readable", 0),
    ("-writable", 0),
    ("-executable", 0),
    ("-links", 1),
    ("-inum", 1),
    ("-samefile", 1),
    ("-fstype", 1),
    ("-context", 1),
    ("-true", 0),
    ("-false", 0),
    // Actions that print.
    ("-print", 0),
    ("-print0", 0),
    ("-printf", 1),
    ("-ls", 0),
    ("-prune", 0),
    ("-quit", 0),
];

/// `find`'s arguments, checked.
pub fn check(args: &[Option<String>]) -> Verdict {
    let mut words = args.iter();
    let mut expression = false;
    while let Some(word) = words.next() {
        let Some(word) = word.as_deref() else {
            return Err(
                "an argument of `find` is computed, so keel cannot tell its expression".into()
            );
        };
        if !expression {
            match word {
                "-H" | "-L" | "-P" => continue,
                "-D" => {
                    if let Some(None) = words.next() {
                        return Err("the value of `find -D` is computed".into());
                    }
                    continue;
                }
                _ if word.starts_with("-O") => continue,
                _ if !word.starts_with('-') && word != "(" && word != "!" => continue,
                _ => expression = true,
            }
        }
        if OPERATORS.contains(&word) {
            continue;
        }
        if REFUSED.contains(&word) {
            return Err(format!("`find {word}` writes files or runs another program"));
        }
        let takes = PRIMARIES
            .iter()
            .find(|(primary, _)| *primary == word)
            .map(|(_, takes)| *takes)
            .or_else(|| is_newer_xy(word).then_some(1));
        let Some(takes) = takes else {
            return Err(format!(
                "`find {word}` is not a test or action keel knows to only read, and it lets only \
                 those through"
            ));
        };
        for _ in 0..takes {
            if let Some(None) = words.next() {
                return Err(format!("the value of `find {word}` is computed"));
            }
        }
    }
    Ok(())
}

/// `-newerXY`: X and Y each one of `a`, `B`, `c`, `m` (Y also `t`, a time given as text).
fn is_newer_xy(word: &str) -> bool {
    let Some(which) = word.strip_prefix("-newer") else {
        return false;
    };
    let mut letters = which.chars();
    matches!(
        (letters.next(), letters.next(), letters.next()),
        (Some('a' | 'B' | 'c' | 'm'), Some('a' | 'B' | 'c' | 'm' | 't'), None)
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_refused, words};
    use super::*;

    fn check_line(line: &str) -> Verdict {
        check(&words(line))
    }

    #[test]
    fn reading_expressions_pass() {
        for line in [
            ". -name *.rs -type f",
            "-L src tests -maxdepth 2 ( -name a -o -iname b ) -print0",
            ". -newermt 2024-01-01 ! -path ./target/* -printf %p\\n",
            ". -name -delete",
            "",
        ] {
            assert_eq!(check_line(line), Ok(()), "find {line}");
        }
    }

    #[test]
    fn actions_that_write_or_run_and_unknown_primaries_are_refused() {
        let cases = [
            (". -delete", "`find -delete` writes"),
            (". -name x -exec rm {} ;", "`find -exec` writes"),
            (". -fprint out", "`find -fprint`"),
            (". -fls out", "`find -fls`"),
            (". -frobnicate", "`find -frobnicate` is not a test"),
            (". -newerXY x", "`find -newerXY`"),
        ];
        assert_refused(check_line, &cases);
        assert!(check(&[Some(".".into()), None]).unwrap_err().contains("computed"));
        let debug = [Some("-D".into()), None, Some(".".into())];
        assert!(check(&debug).unwrap_err().contains("value of `find -D` is computed"));
        let value = [Some(".".into()), Some("-name".into()), None];
        assert!(check(&value).unwrap_err().contains("value of `find -name` is computed"));
    }
}
