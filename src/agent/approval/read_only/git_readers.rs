//! `git` in a command keel proves read-only: `git [GLOBAL…] status|log|diff|show OPTION…`, with
//! only the options listed here.
//!
//! Before the subcommand git takes only `-C DIR`, `--no-pager`, `-P` and a few pathspec switches
//! (never `-c`, `--config-env`, `--exec-path` or `--git-dir`, which change what runs). After it,
//! `log`, `show` and `diff` share one table (revision, formatting and diff options) and `status`
//! has its own. Left out: `--output` (writes a file), `--ext-diff` and `--textconv` (run the
//! programs a configuration names), `--show-signature` (runs gpg), `--stdin`. git reads these
//! long options only as spelled — `--outp` is an error to it — so no abbreviation is taken.

use super::Verdict;
use super::getopt::{Options, Takes};

/// `git`'s subcommands that only read, and the options each may take.
const SUBCOMMANDS: &[(&str, &Options)] =
    &[("status", &STATUS), ("log", &LOG), ("show", &SHOW), ("diff", &DIFF)];
/// Options of `git` itself that may come before the subcommand, and whether each takes the next
/// word as its value.
const GLOBAL: &[(&str, bool)] = &[
    ("-C", true),
    ("--no-pager", false),
    ("-P", false),
    ("--no-optional-locks", false),
    ("--literal-pathspecs", false),
    ("--glob-pathspecs", false),
    ("--noglob-pathspecs", false),
    ("--icase-pathspecs", false),
    ("--no-replace-objects", false),
];

/// `git [GLOBAL…] SUBCOMMAND ARGS…`, checked.
pub fn check(args: &[Option<String>]) -> Verdict {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let Some(arg) = arg.as_deref() else {
            return Err("an argument of `git` is computed, so keel cannot tell its options".into());
        };
        if let Some((_, options)) = SUBCOMMANDS.iter().find(|(name, _)| *name == arg) {
            return options.check(&args[at + 1..]);
        }
        match GLOBAL.iter().find(|(option, _)| *option == arg) {
            Some((_, true)) => {
                if args.get(at + 1).is_some_and(Option::is_none) {
                    return Err(format!("the value of `git {arg}` is computed"));
                }
                at += 2;
            }
            Some((_, false)) => at += 1,
            None => {
                let names: Vec<&str> = SUBCOMMANDS.iter().map(|(name, _)| *name).collect();
                return Err(format!(
                    "`git {arg}` is not one of git's read-only commands ({}), nor an option \
                     keel lets come before one",
                    names.join(", ")
                ));
            }
        }
    }
    Err("`git` alone is not one of git's read-only commands".into())
}

/// Options of `git status`.
const STATUS: Options = Options {
    program: "git status",
    flags: "sbvz",
    with_value: "",
    optional_value: "u",
    long: &[
        ("short", Takes::Nothing),
        ("branch", Takes::Nothing),
        ("show-stash", Takes::Nothing),
        ("porcelain", Takes::OptionalValue),
        ("long", Takes::Nothing),
        ("verbose", Takes::Nothing),
        ("untracked-files", Takes::OptionalValue),
        ("ignore-submodules", Takes::OptionalValue),
        ("ignored", Takes::OptionalValue),
        ("column", Takes::OptionalValue),
        ("no-column", Takes::Nothing),
        ("ahead-behind", Takes::Nothing),
        ("no-ahead-behind", Takes::Nothing),
        ("renames", Takes::Nothing),
        ("no-renames", Takes::Nothing),
        ("find-renames", Takes::OptionalValue),
        ("null", Takes::Nothing),
    ],
    refused_short: "",
    refused_long: &[],
    abbreviations: false,
    numbers: false,
};

/// Options of `git log`, `git show` and `git diff`: revision, formatting and diff options.
const LOG: Options = Options {
    program: "git log",
    flags: "pusRabwWqiEFPgmctrDz",
    with_value: "nULlSGOI",
    optional_value: "MCB",
    long: REVISION_AND_DIFF,
    refused_short: "",
    refused_long: REFUSED,
    abbreviations: false,
    numbers: true,
};
const SHOW: Options = Options { program: "git show", ..LOG };
const DIFF: Options = Options { program: "git diff", ..LOG };

/// The long options that write a file or run a program.
const REFUSED: &[&str] = &["output", "ext-diff", "textconv", "show-signature", "stdin"];

const REVISION_AND_DIFF: &[(&str, Takes)] = &[
    // What is shown of each commit.
    ("oneline", Takes::Nothing),
    ("pretty", Takes::OptionalValue),
    ("format", Takes::Value),
    ("abbrev-commit", Takes::Nothing),
    ("no-abbrev-commit", Takes::Nothing),
    ("abbrev", Takes::OptionalValue),
    ("no-abbrev", Takes::Nothing),
    ("encoding", Takes::Value),
    ("expand-tabs", Takes::OptionalValue),
    ("no-expand-tabs", Takes::Nothing),
    ("notes", Takes::OptionalValue),
    ("no-notes", Takes::Nothing),
    ("show-notes", Takes::OptionalValue),
    ("relative-date", Takes::Nothing),
    ("date", Takes::Value),
    ("parents", Takes::Nothing),
    ("children", Takes::Nothing),
    ("left-right", Takes::Nothing),
    ("graph", Takes::Nothing),
    ("show-linear-break", Takes::OptionalValue),
    ("decorate", Takes::OptionalValue),
    ("no-decorate", Takes::Nothing),
    ("decorate-refs", Takes::Value),
    ("decorate-refs-exclude", Takes::Value),
    ("clear-decorations", Takes::Nothing),
    ("source", Takes::Nothing),
    ("use-mailmap", Takes::Nothing),
    ("no-use-mailmap", Takes::Nothing),
    ("mailmap", Takes::Nothing),
    ("no-mailmap", Takes::Nothing),
    ("full-diff", Takes::Nothing),
    ("log-size", Takes::Nothing),
    // Which commits.
    ("max-count", Takes::Value),
    ("skip", Takes::Value),
    ("since", Takes::Value),
    ("after", Takes::Value),
    ("since-as-filter", Takes::Value),
    ("until", Takes::Value),
    ("before", Takes::Value),
    ("author", Takes::Value),
    ("committer", Takes::Value),
    ("grep-reflog", Takes::Value),
    ("grep", Takes::Value),
    ("all-match", Takes::Nothing),
    ("invert-grep", Takes::Nothing),
    ("regexp-ignore-case", Takes::Nothing),
    ("basic-regexp", Takes::Nothing),
    ("extended-regexp", Takes::Nothing),
    ("fixed-strings", Takes::Nothing),
    ("perl-regexp", Takes::Nothing),
    ("remove-empty", Takes::Nothing),
    ("merges", Takes::Nothing),
    ("no-merges", Takes::Nothing),
    ("min-parents", Takes::Value),
    ("max-parents", Takes::Value),
    ("no-min-parents", Takes::Nothing),
    ("no-max-parents", Takes::Nothing),
    ("first-parent", Takes::Nothing),
    ("exclude-first-parent-only", Takes::Nothing),
    ("not", Takes::Nothing),
    ("all", Takes::Nothing),
    ("branches", Takes::OptionalValue),
    ("tags", Takes::OptionalValue),
    ("remotes", Takes::OptionalValue),
    ("glob", Takes::Value),
    ("exclude", Takes::Value),
    ("reflog", Takes::Nothing),
    ("alternate-refs", Takes::Nothing),
    ("single-worktree", Takes::Nothing),
    ("ignore-missing", Takes::Nothing),
    ("cherry-mark", Takes::Nothing),
    ("cherry-pick", Takes::Nothing),
    ("left-only", Takes::Nothing),
    ("right-only", Takes::Nothing),
    ("cherry", Takes::Nothing),
    ("walk-reflogs", Takes::Nothing),
    ("merge", Takes::Nothing),
    ("boundary", Takes::Nothing),
    ("simplify-by-decoration", Takes::Nothing),
    ("show-pulls", Takes::Nothing),
    ("full-history", Takes::Nothing),
    ("dense", Takes::Nothing),
    ("sparse", Takes::Nothing),
    ("simplify-merges", Takes::Nothing),
    ("ancestry-path", Takes::OptionalValue),
    ("date-order", Takes::Nothing),
    ("author-date-order", Takes::Nothing),
    ("topo-order", Takes::Nothing),
    ("reverse", Takes::Nothing),
    ("no-walk", Takes::OptionalValue),
    ("do-walk", Takes::Nothing),
    ("follow", Takes::Nothing),
    ("root", Takes::Nothing),
    // How each change is shown.
    ("patch", Takes::Nothing),
    ("no-patch", Takes::Nothing),
    ("raw", Takes::Nothing),
    ("patch-with-raw", Takes::Nothing),
    ("patch-with-stat", Takes::Nothing),
    ("name-only", Takes::Nothing),
    ("name-status", Takes::Nothing),
    ("stat", Takes::OptionalValue),
    ("shortstat", Takes::Nothing),
    ("numstat", Takes::Nothing),
    ("summary", Takes::Nothing),
    ("compact-summary", Takes::Nothing),
    ("dirstat", Takes::OptionalValue),
    ("cumulative", Takes::Nothing),
    ("dirstat-by-file", Takes::OptionalValue),
    ("unified", Takes::Value),
    ("output-indicator-new", Takes::Value),
    ("output-indicator-old", Takes::Value),
    ("output-indicator-context", Takes::Value),
    ("full-index", Takes::Nothing),
    ("binary", Takes::Nothing),
    ("color", Takes::OptionalValue),
    ("no-color", Takes::Nothing),
    ("color-moved", Takes::OptionalValue),
    ("no-color-moved", Takes::Nothing),
    ("color-moved-ws", Takes::Value),
    ("no-color-moved-ws", Takes::Nothing),
    ("color-words", Takes::OptionalValue),
    ("word-diff", Takes::OptionalValue),
    ("word-diff-regex", Takes::Value),
    ("no-renames", Takes::Nothing),
    ("rename-empty", Takes::Nothing),
    ("no-rename-empty", Takes::Nothing),
    ("check", Takes::Nothing),
    ("ws-error-highlight", Takes::Value),
    ("find-renames", Takes::OptionalValue),
    ("find-copies", Takes::OptionalValue),
    ("find-copies-harder", Takes::Nothing),
    ("break-rewrites", Takes::OptionalValue),
    ("irreversible-delete", Takes::Nothing),
    ("diff-filter", Takes::Value),
    ("find-object", Takes::Value),
    ("pickaxe-all", Takes::Nothing),
    ("pickaxe-regex", Takes::Nothing),
    ("skip-to", Takes::Value),
    ("rotate-to", Takes::Value),
    ("relative", Takes::OptionalValue),
    ("no-relative", Takes::Nothing),
    ("text", Takes::Nothing),
    ("ignore-cr-at-eol", Takes::Nothing),
    ("ignore-space-at-eol", Takes::Nothing),
    ("ignore-space-change", Takes::Nothing),
    ("ignore-all-space", Takes::Nothing),
    ("ignore-blank-lines", Takes::Nothing),
    ("ignore-matching-lines", Takes::Value),
    ("inter-hunk-context", Takes::Value),
    ("function-context", Takes::Nothing),
    ("exit-code", Takes::Nothing),
    ("quiet", Takes::Nothing),
    ("no-ext-diff", Takes::Nothing),
    ("no-textconv", Takes::Nothing),
    ("ignore-submodules", Takes::OptionalValue),
    ("src-prefix", Takes::Value),
    ("dst-prefix", Takes::Value),
    ("no-prefix", Takes::Nothing),
    ("default-prefix", Takes::Nothing),
    ("line-prefix", Takes::Value),
    ("ita-invisible-in-index", Takes::Nothing),
    ("ita-visible-in-index", Takes::Nothing),
    ("minimal", Takes::Nothing),
    ("patience", Takes::Nothing),
    ("histogram", Takes::Nothing),
    ("anchored", Takes::Value),
    ("diff-algorithm", Takes::Value),
    ("indent-heuristic", Takes::Nothing),
    ("no-indent-heuristic", Takes::Nothing),
    ("submodule", Takes::OptionalValue),
    ("cc", Takes::Nothing),
    ("combined-all-paths", Takes::Nothing),
    ("diff-merges", Takes::Value),
    ("no-diff-merges", Takes::Nothing),
    ("remerge-diff", Takes::Nothing),
    // What `git diff` compares.
    ("cached", Takes::Nothing),
    ("staged", Takes::Nothing),
    ("merge-base", Takes::Nothing),
    ("no-index", Takes::Nothing),
    ("base", Takes::Nothing),
    ("ours", Takes::Nothing),
    ("theirs", Takes::Nothing),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn check_line(line: &str) -> Verdict {
        let args: Vec<Option<String>> =
            line.split_whitespace().map(|word| Some(word.to_owned())).collect();
        check(&args)
    }

    #[test]
    fn readers_with_their_usual_options_pass() {
        for line in [
            "status -sb",
            "status --porcelain=v2 -uno",
            "log --oneline -5 --graph --decorate --all",
            "log -n 3 --stat -- src",
            "log -p -S needle --author=me --since=2.weeks",
            "log --format=%H%x00%s -L 1,5:README.md",
            "diff --cached --name-only HEAD~1",
            "diff -U5 --word-diff=color --no-ext-diff",
            "show HEAD:README.md",
            "-C sub --no-pager log -1",
        ] {
            assert_eq!(check_line(line), Ok(()), "git {line}");
        }
    }

    #[test]
    fn options_that_write_or_run_are_refused_however_spelled() {
        for (line, why) in [
            ("diff --output=patch.txt", "`git diff --output=patch.txt` writes"),
            ("log --output x", "`git log --output` writes"),
            ("show --ext-diff", "`git show --ext-diff` writes files or runs"),
            ("log -p --textconv", "`git log --textconv`"),
            ("log --show-signature", "`git log --show-signature`"),
            ("log --outp=x", "`git log --outp=x` is not an option keel knows"),
            ("log --grep -- --output=x", "`git log --output=x` writes"),
            ("-c core.pager=evil log", "`git -c` is not one of git's read-only commands"),
            ("--exec-path=/x log", "`git --exec-path=/x`"),
            ("commit -m x", "`git commit` is not one"),
            ("status --porc", "`git status --porc` is not an option"),
        ] {
            let err = check_line(line).expect_err(line);
            assert!(err.contains(why), "git {line}: {err}");
        }
        assert!(check(&[Some("-C".into()), None, Some("log".into())]).is_err());
        assert!(check(&[]).unwrap_err().contains("alone"));
    }
}
