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
use super::getopt::Options;

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
        "short branch show-stash porcelain=? long verbose untracked-files=? ignore-submodules=? \
         ignored=? column=? no-column ahead-behind no-ahead-behind renames no-renames \
         find-renames=? null",
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

const REVISION_AND_DIFF: &[&str] = &[
    // What is shown of each commit.
    "oneline pretty=? format= abbrev-commit no-abbrev-commit abbrev=? no-abbrev encoding= \
     expand-tabs=? no-expand-tabs notes=? no-notes show-notes=? relative-date date= parents \
     children left-right graph show-linear-break=? decorate=? no-decorate decorate-refs= \
     decorate-refs-exclude= clear-decorations source use-mailmap no-use-mailmap mailmap \
     no-mailmap full-diff log-size",
    // Which commits.
    "max-count= skip= since= after= since-as-filter= until= before= author= committer= \
     grep-reflog= grep= all-match invert-grep regexp-ignore-case basic-regexp extended-regexp \
     fixed-strings perl-regexp remove-empty merges no-merges min-parents= max-parents= \
     no-min-parents no-max-parents first-parent exclude-first-parent-only not all branches=? \
     tags=? remotes=? glob= exclude= reflog alternate-refs single-worktree ignore-missing \
     cherry-mark cherry-pick left-only right-only cherry walk-reflogs merge boundary \
     simplify-by-decoration show-pulls full-history dense sparse simplify-merges ancestry-path=? \
     date-order author-date-order topo-order reverse no-walk=? do-walk follow root",
    // How each change is shown.
    "patch no-patch raw patch-with-raw patch-with-stat name-only name-status stat=? shortstat \
     numstat summary compact-summary dirstat=? cumulative dirstat-by-file=? unified= \
     output-indicator-new= output-indicator-old= output-indicator-context= full-index binary \
     color=? no-color color-moved=? no-color-moved color-moved-ws= no-color-moved-ws \
     color-words=? word-diff=? word-diff-regex= no-renames rename-empty no-rename-empty check \
     ws-error-highlight= find-renames=? find-copies=? find-copies-harder break-rewrites=? \
     irreversible-delete diff-filter= find-object= pickaxe-all pickaxe-regex skip-to= rotate-to= \
     relative=? no-relative text ignore-cr-at-eol ignore-space-at-eol ignore-space-change \
     ignore-all-space ignore-blank-lines ignore-matching-lines= inter-hunk-context= \
     function-context exit-code quiet no-ext-diff no-textconv ignore-submodules=? src-prefix= \
     dst-prefix= no-prefix default-prefix line-prefix= ita-invisible-in-index \
     ita-visible-in-index minimal patience histogram anchored= diff-algorithm= indent-heuristic \
     no-indent-heuristic submodule=? cc combined-all-paths diff-merges= no-diff-merges \
     remerge-diff",
    // What `git diff` compares.
    "cached staged merge-base no-index base ours theirs",
];

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_refused, words};
    use super::*;

    fn check_line(line: &str) -> Verdict {
        check(&words(line))
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
        let cases = [
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
        ];
        assert_refused(check_line, &cases);
        assert!(check(&[Some("-C".into()), None, Some("log".into())]).is_err());
        assert!(check(&[]).unwrap_err().contains("alone"));
    }
}
