//! The search tools, `grep` and `glob`, against a real temporary workspace: each argument, the
//! ignore rules (`.gitignore`, nested ones, `.ignore`, git's excludes, hidden and binary files),
//! newest files first, the caps and paging, and every way out of the workspace refused.

use crate::support::files::{ctx, run, workspace};
use keel::tools::search::{MAX_ANSWER_BYTES, MAX_LINE_CHARS, MAX_RESULTS, tally_of};
use keel::tools::{ToolOutcome, Tools};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Writes `content` to `relative` below `root`, its time of last change `age` seconds ago.
fn put(root: &Path, relative: &str, content: &str, age: u64) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, content).unwrap();
    let when = SystemTime::now() - Duration::from_secs(age);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
}

fn git_init(root: &Path) {
    let status = std::process::Command::new("git").args(["init", "-q"]).current_dir(root).status();
    assert!(status.unwrap().success(), "these tests need git");
}

async fn grep(tools: &Tools, input: Value) -> ToolOutcome {
    run(tools, "grep", input).await
}

async fn glob(tools: &Tools, input: Value) -> ToolOutcome {
    run(tools, "glob", input).await
}

/// An answer's result lines, without its last line (the tally and the paging note).
fn results(outcome: &ToolOutcome) -> Vec<&str> {
    assert!(!outcome.is_error, "{}", outcome.for_model);
    let mut lines: Vec<&str> = outcome.for_model.lines().collect();
    let last = lines.pop().unwrap_or_default();
    assert!(last.starts_with('['), "the last line is the tally: {last}");
    lines
}

fn last_line(outcome: &ToolOutcome) -> &str {
    outcome.for_model.lines().last().unwrap_or_default()
}

/// A small project: three Rust files of different ages, a text file and a Markdown file.
fn project(root: &Path) {
    put(root, "src/old.rs", "fn old() {}\n// needle in old\n", 300);
    put(root, "src/lib.rs", "pub mod old;\nfn needle() -> u8 {\n    1\n}\n", 100);
    put(root, "src/new.rs", "// NEEDLE, shouting\nfn new() {}\n", 10);
    put(root, "notes.txt", "a needle in the notes\n", 200);
    put(root, "README.md", "# no match here\n", 50);
}

mod grep_arguments {
    use super::*;

    #[tokio::test]
    async fn pattern_is_a_regex_and_answers_path_line_text_newest_files_first() {
        let (dir, tools) = workspace();
        project(dir.path());
        let outcome = grep(&tools, json!({"pattern": r"fn \w+\(\)"})).await;
        assert_eq!(
            results(&outcome),
            [
                "src/new.rs:2:fn new() {}",
                "src/lib.rs:2:fn needle() -> u8 {",
                "src/old.rs:1:fn old() {}"
            ]
        );
        assert_eq!(last_line(&outcome), "[3 matches in 3 files]");
        assert_eq!(outcome.tally.as_deref(), Some("3 matches in 3 files"));
        assert_eq!(tally_of(&outcome.for_model), outcome.tally);
        assert_eq!(outcome.for_display, outcome.for_model, "the person sees what the model read");
    }

    #[tokio::test]
    async fn ignore_case_matches_either_case_and_is_off_by_default() {
        let (dir, tools) = workspace();
        project(dir.path());
        let exact = grep(&tools, json!({"pattern": "NEEDLE"})).await;
        assert_eq!(results(&exact), ["src/new.rs:1:// NEEDLE, shouting"]);
        let any = grep(&tools, json!({"pattern": "NEEDLE", "ignore_case": true})).await;
        assert_eq!(any.tally.as_deref(), Some("4 matches in 4 files"), "{}", any.for_model);
        let off = grep(&tools, json!({"pattern": "NEEDLE", "ignore_case": false})).await;
        assert_eq!(results(&off), results(&exact));
    }

    #[tokio::test]
    async fn path_narrows_to_a_folder_or_one_file() {
        let (dir, tools) = workspace();
        project(dir.path());
        let folder = grep(&tools, json!({"pattern": "needle", "path": "src"})).await;
        assert_eq!(
            results(&folder),
            ["src/lib.rs:2:fn needle() -> u8 {", "src/old.rs:2:// needle in old"]
        );
        let file = grep(&tools, json!({"pattern": "needle", "path": "notes.txt"})).await;
        assert_eq!(results(&file), ["notes.txt:1:a needle in the notes"]);
        let absolute = dir.path().canonicalize().unwrap().join("src/old.rs");
        let by_absolute = grep(&tools, json!({"pattern": "needle", "path": absolute})).await;
        assert_eq!(results(&by_absolute), ["src/old.rs:2:// needle in old"]);
        let missing = grep(&tools, json!({"pattern": "needle", "path": "nope"})).await;
        assert!(missing.is_error);
        assert_eq!(missing.for_model, "`nope` does not exist.");
    }

    #[tokio::test]
    async fn glob_filters_by_name_at_any_depth_or_by_path_from_the_folder() {
        let (dir, tools) = workspace();
        project(dir.path());
        put(dir.path(), "src/deep/more.rs", "needle deep\n", 400);
        let by_name = grep(&tools, json!({"pattern": "needle", "glob": "*.rs"})).await;
        assert_eq!(by_name.tally.as_deref(), Some("3 matches in 3 files"), "{}", by_name.for_model);
        assert!(!by_name.for_model.contains("notes.txt"));
        let by_path = grep(&tools, json!({"pattern": "needle", "glob": "src/*.rs"})).await;
        assert_eq!(by_path.tally.as_deref(), Some("2 matches in 2 files"), "{}", by_path.for_model);
        let below =
            grep(&tools, json!({"pattern": "needle", "path": "src", "glob": "deep/*"})).await;
        assert_eq!(results(&below), ["src/deep/more.rs:1:needle deep"]);
        let braces = grep(&tools, json!({"pattern": "needle", "glob": "*.{txt,md}"})).await;
        assert_eq!(results(&braces), ["notes.txt:1:a needle in the notes"]);
        let none = grep(&tools, json!({"pattern": "needle", "glob": "nowhere/*.rs"})).await;
        assert_eq!(none.tally.as_deref(), Some("no matches"));
    }

    #[tokio::test]
    async fn context_shows_the_lines_around_with_dashes_and_breaks() {
        let (dir, tools) = workspace();
        let lines: String = (1..=20)
            .map(|n| format!("line {n}{}\n", if n % 7 == 0 { " hit" } else { "" }))
            .collect();
        put(dir.path(), "a.txt", &lines, 0);
        let outcome = grep(&tools, json!({"pattern": "hit", "context": 1})).await;
        assert_eq!(
            results(&outcome),
            [
                "a.txt-6-line 6",
                "a.txt:7:line 7 hit",
                "a.txt-8-line 8",
                "--",
                "a.txt-13-line 13",
                "a.txt:14:line 14 hit",
                "a.txt-15-line 15",
            ]
        );
        assert_eq!(outcome.tally.as_deref(), Some("2 matches in 1 file"));
        let wide = grep(&tools, json!({"pattern": "hit", "context": 3})).await;
        assert!(!results(&wide).contains(&"--"), "touching groups join: {}", wide.for_model);
    }

    #[tokio::test]
    async fn output_files_lists_the_matching_files_and_count_counts_their_lines() {
        let (dir, tools) = workspace();
        project(dir.path());
        put(dir.path(), "src/many.rs", "needle\nneedle\nneedle\n", 5);
        let files = grep(&tools, json!({"pattern": "needle", "output": "files"})).await;
        assert_eq!(results(&files), ["src/many.rs", "src/lib.rs", "notes.txt", "src/old.rs"]);
        assert_eq!(files.tally.as_deref(), Some("4 files"));
        let count = grep(&tools, json!({"pattern": "needle", "output": "count"})).await;
        assert_eq!(
            results(&count),
            ["src/many.rs:3", "src/lib.rs:1", "notes.txt:1", "src/old.rs:1"]
        );
        assert_eq!(count.tally.as_deref(), Some("6 matches in 4 files"));
        let content = grep(&tools, json!({"pattern": "needle", "output": "content"})).await;
        assert_eq!(results(&content).len(), 6);
        let wrong = grep(&tools, json!({"pattern": "needle", "output": "lines"})).await;
        assert!(wrong.is_error && wrong.for_model.contains("`content`, `files`, `count`"));
    }

    #[tokio::test]
    async fn limit_and_offset_page_through_the_matches_in_order() {
        let (dir, tools) = workspace();
        for file in 0..5 {
            let lines: String = (1..=50).map(|n| format!("needle {file}.{n}\n")).collect();
            put(dir.path(), &format!("f{file}.txt"), &lines, 100 - file);
        }
        // 250 matches, the newest file (f4) first.
        let first = grep(&tools, json!({"pattern": "needle"})).await;
        let shown = results(&first);
        assert_eq!(shown.len(), MAX_RESULTS as usize);
        assert_eq!((shown[0], shown[99]), ("f4.txt:1:needle 4.1", "f3.txt:50:needle 3.50"));
        assert_eq!(
            last_line(&first),
            "[250 matches in 5 files; shown: 1–100, newest files first. For more, call grep again \
             with offset: 100.]"
        );
        let second = grep(&tools, json!({"pattern": "needle", "offset": 100})).await;
        assert_eq!(results(&second)[0], "f2.txt:1:needle 2.1");
        let last = grep(&tools, json!({"pattern": "needle", "offset": 230, "limit": 50})).await;
        assert_eq!(results(&last).len(), 20);
        assert_eq!(
            last_line(&last),
            "[250 matches in 5 files; shown: 231–250, newest files first.]"
        );
        let small = grep(&tools, json!({"pattern": "needle", "offset": 48, "limit": 3})).await;
        assert_eq!(
            results(&small),
            ["f4.txt:49:needle 4.49", "f4.txt:50:needle 4.50", "f3.txt:1:needle 3.1"]
        );
        let capped = grep(&tools, json!({"pattern": "needle", "limit": 1000})).await;
        assert_eq!(results(&capped).len(), MAX_RESULTS as usize, "the limit is capped");
        let past = grep(&tools, json!({"pattern": "needle", "offset": 250})).await;
        assert!(past.is_error);
        assert_eq!(
            past.for_model,
            "offset 250 is past the end: there are 250 matches; call again with a smaller offset."
        );
        let files =
            grep(&tools, json!({"pattern": "needle", "output": "files", "offset": 3})).await;
        assert_eq!(results(&files), ["f1.txt", "f0.txt"]);
        let zero = grep(&tools, json!({"pattern": "needle", "limit": 0})).await;
        assert!(zero.is_error && zero.for_model.contains("`limit` must be a whole number ≥ 1"));
    }
}

mod caps {
    use super::*;

    #[tokio::test]
    async fn a_long_line_is_cut_at_the_width_saying_how_much_more_there_was() {
        let (dir, tools) = workspace();
        let long = format!("needle {}", "x".repeat(5000));
        put(dir.path(), "min.js", &format!("{long}\n"), 0);
        let outcome = grep(&tools, json!({"pattern": "needle"})).await;
        let line = results(&outcome)[0];
        let text = line.strip_prefix("min.js:1:").unwrap();
        assert!(text.ends_with(&format!("…[+{} chars]", long.len() - MAX_LINE_CHARS)), "{line}");
        assert_eq!(text.chars().take_while(|c| *c != '…').count(), MAX_LINE_CHARS);
    }

    #[tokio::test]
    async fn an_answer_stops_at_its_byte_cap_and_says_where_to_go_on() {
        let (dir, tools) = workspace();
        let group = format!(
            "needle {}\n{}\n{}\n",
            "y".repeat(MAX_LINE_CHARS),
            "z".repeat(400),
            "z".repeat(400)
        );
        put(dir.path(), "wide.txt", &group.repeat(150), 0);
        let outcome = grep(&tools, json!({"pattern": "needle", "context": 2})).await;
        assert!(outcome.for_model.len() <= MAX_ANSWER_BYTES + 200, "{}", outcome.for_model.len());
        let shown = results(&outcome).iter().filter(|line| line.starts_with("wide.txt:")).count();
        assert!(shown < MAX_RESULTS as usize, "{shown}");
        assert!(
            last_line(&outcome).ends_with(&format!("call grep again with offset: {shown}.]")),
            "{}",
            last_line(&outcome)
        );
    }

    #[tokio::test]
    async fn glob_caps_at_a_hundred_files_and_pages_on() {
        let (dir, tools) = workspace();
        for n in 0..130 {
            put(dir.path(), &format!("gen/f{n:03}.rs"), "", 1000 - n);
        }
        let first = glob(&tools, json!({"pattern": "**/*.rs"})).await;
        let shown = results(&first);
        assert_eq!((shown.len(), shown[0]), (MAX_RESULTS as usize, "gen/f129.rs"));
        assert_eq!(
            last_line(&first),
            "[130 files; shown: 1–100, newest files first. For more, call glob again with offset: \
             100.]"
        );
        let rest = glob(&tools, json!({"pattern": "**/*.rs", "offset": 100})).await;
        assert_eq!((results(&rest).len(), results(&rest)[29]), (30, "gen/f000.rs"));
        let few = glob(&tools, json!({"pattern": "*.rs", "limit": 2, "offset": 1})).await;
        assert_eq!(results(&few), ["gen/f128.rs", "gen/f127.rs"]);
    }
}

mod glob_arguments {
    use super::*;

    #[tokio::test]
    async fn pattern_matches_paths_newest_first_and_names_at_any_depth() {
        let (dir, tools) = workspace();
        project(dir.path());
        let rust = glob(&tools, json!({"pattern": "**/*.rs"})).await;
        assert_eq!(results(&rust), ["src/new.rs", "src/lib.rs", "src/old.rs"]);
        assert_eq!(rust.tally.as_deref(), Some("3 files"));
        let by_name = glob(&tools, json!({"pattern": "*.rs"})).await;
        assert_eq!(results(&by_name), results(&rust));
        let top = glob(&tools, json!({"pattern": "src/l*.rs"})).await;
        assert_eq!(results(&top), ["src/lib.rs"]);
        let either = glob(&tools, json!({"pattern": "*.{md,txt}"})).await;
        assert_eq!(results(&either), ["README.md", "notes.txt"]);
        let none = glob(&tools, json!({"pattern": "**/*.py"})).await;
        assert_eq!(none.tally.as_deref(), Some("no files match"));
        assert!(
            last_line(&none).starts_with("[No files match: 5 files looked at"),
            "{}",
            none.for_model
        );
    }

    #[tokio::test]
    async fn path_is_the_folder_the_pattern_is_relative_to() {
        let (dir, tools) = workspace();
        project(dir.path());
        let below = glob(&tools, json!({"pattern": "*.rs", "path": "src"})).await;
        assert_eq!(results(&below), ["src/new.rs", "src/lib.rs", "src/old.rs"]);
        let anchored = glob(&tools, json!({"pattern": "lib.rs", "path": "src"})).await;
        assert_eq!(results(&anchored), ["src/lib.rs"]);
        let file = glob(&tools, json!({"pattern": "*", "path": "notes.txt"})).await;
        assert!(file.is_error && file.for_model.contains("must be a folder"), "{}", file.for_model);
    }

    #[tokio::test]
    async fn a_bad_glob_is_an_error_that_names_it() {
        let (_dir, tools) = workspace();
        for (name, input) in [
            ("glob", json!({"pattern": "src/[a"})),
            ("grep", json!({"pattern": "x", "glob": "src/{a"})),
        ] {
            let outcome = run(&tools, name, input).await;
            assert!(outcome.is_error);
            assert!(outcome.for_model.starts_with("Invalid glob `src/"), "{}", outcome.for_model);
        }
    }
}

mod ignore_rules {
    use super::*;

    /// A repository with something to skip of every kind, each holding the needle.
    fn repository(root: &Path) {
        git_init(root);
        put(root, "kept.rs", "needle\n", 0);
        put(root, ".gitignore", "/build/\n*.log\n", 0);
        put(root, "build/out.rs", "needle\n", 0);
        put(root, "debug.log", "needle\n", 0);
        put(root, "sub/.gitignore", "generated.rs\n", 0);
        put(root, "sub/generated.rs", "needle\n", 0);
        put(root, "sub/kept.rs", "needle\n", 0);
        put(root, "vendor/.ignore", "*\n", 0);
        put(root, "vendor/lib.rs", "needle\n", 0);
        put(root, "excluded.rs", "needle\n", 0);
        std::fs::write(root.join(".git/info/exclude"), "excluded.rs\n").unwrap();
        put(root, ".hidden/inside.rs", "needle\n", 0);
        put(root, ".env", "needle\n", 0);
        put(root, ".git/needle.rs", "needle\n", 0);
        std::fs::write(root.join("image.bin"), b"needle\0\x01\x02binary").unwrap();
    }

    #[tokio::test]
    async fn grep_skips_ignored_hidden_and_binary_files() {
        let (dir, tools) = workspace();
        repository(dir.path());
        let outcome = grep(&tools, json!({"pattern": "needle", "output": "files"})).await;
        let mut found = results(&outcome);
        found.sort_unstable();
        assert_eq!(found, ["kept.rs", "sub/kept.rs"], "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn a_search_of_a_subfolder_obeys_the_top_levels_gitignore() {
        let (dir, tools) = workspace();
        repository(dir.path());
        put(dir.path(), "sub/trace.log", "needle\n", 0);
        put(dir.path(), "sub/deep/debug.log", "needle\n", 0);
        put(dir.path(), "sub/deep/kept.rs", "needle\n", 0);
        let found =
            grep(&tools, json!({"pattern": "needle", "path": "sub", "output": "files"})).await;
        let mut found = results(&found);
        found.sort_unstable();
        assert_eq!(found, ["sub/deep/kept.rs", "sub/kept.rs"], "the top's *.log holds below");
        let listed = glob(&tools, json!({"pattern": "**/*", "path": "sub/deep"})).await;
        assert_eq!(results(&listed), ["sub/deep/kept.rs"]);
        // A folder the top ignores, named on purpose, is searched, as `rg needle build` does.
        let named =
            grep(&tools, json!({"pattern": "needle", "path": "build", "output": "files"})).await;
        assert_eq!(results(&named), ["build/out.rs"]);
    }

    #[tokio::test]
    async fn glob_skips_ignored_and_hidden_files_but_lists_binary_ones() {
        let (dir, tools) = workspace();
        repository(dir.path());
        let outcome = glob(&tools, json!({"pattern": "**/*"})).await;
        let mut found = results(&outcome);
        found.sort_unstable();
        assert_eq!(found, ["image.bin", "kept.rs", "sub/kept.rs"], "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn a_pattern_naming_a_hidden_file_finds_it_but_never_inside_git() {
        let (dir, tools) = workspace();
        repository(dir.path());
        let env = glob(&tools, json!({"pattern": "**/.env*"})).await;
        assert_eq!(results(&env), [".env"]);
        let hidden = glob(&tools, json!({"pattern": ".hidden/*.rs"})).await;
        assert_eq!(results(&hidden), [".hidden/inside.rs"]);
        let git = glob(&tools, json!({"pattern": ".*/*.rs"})).await;
        assert_eq!(results(&git), [".hidden/inside.rs"], "not .git/needle.rs");
        let inside = grep(&tools, json!({"pattern": "needle", "path": ".hidden"})).await;
        assert_eq!(results(&inside), [".hidden/inside.rs:1:needle"], "a hidden folder named");
    }

    #[tokio::test]
    async fn a_search_that_finds_nothing_says_what_it_skipped() {
        let (dir, tools) = workspace();
        repository(dir.path());
        let outcome = grep(&tools, json!({"pattern": "binary"})).await;
        assert_eq!(outcome.tally.as_deref(), Some("no matches"));
        assert_eq!(
            last_line(&outcome),
            "[No matches: 3 files looked at (skipped: .gitignored and hidden files, 1 binary \
             file).]"
        );
        let named = grep(&tools, json!({"pattern": "binary", "path": "image.bin"})).await;
        assert!(named.for_model.contains("1 binary file"), "{}", named.for_model);
    }

    #[tokio::test]
    async fn gitignore_is_read_in_a_repository_only_as_ripgrep_does_and_ignore_always() {
        let (dir, tools) = workspace();
        put(dir.path(), ".gitignore", "skipped.rs\n", 0);
        put(dir.path(), ".ignore", "also.rs\n", 0);
        for name in ["skipped.rs", "also.rs", "kept.rs"] {
            put(dir.path(), name, "needle\n", 0);
        }
        let outside_git = grep(&tools, json!({"pattern": "needle", "output": "count"})).await;
        assert_eq!(outside_git.tally.as_deref(), Some("2 matches in 2 files"));
        git_init(dir.path());
        let in_git = grep(&tools, json!({"pattern": "needle", "output": "files"})).await;
        assert_eq!(results(&in_git), ["kept.rs"]);
    }
}

mod confinement {
    use super::*;

    #[tokio::test]
    async fn paths_outside_the_workspace_are_refused_naming_them() {
        let (_dir, tools) = workspace();
        let root = tools.workspace().root().display().to_string();
        for (name, path) in
            [("grep", "../"), ("glob", ".."), ("grep", "/etc"), ("glob", "src/../../x")]
        {
            let outcome = run(&tools, name, json!({"pattern": "x", "path": path})).await;
            assert!(outcome.is_error, "{name} {path}");
            assert!(outcome.for_model.contains("outside the workspace"), "{}", outcome.for_model);
            assert!(outcome.for_model.contains(&root), "{}", outcome.for_model);
        }
    }

    #[tokio::test]
    async fn a_symlink_out_is_refused_as_a_path_and_never_followed_in_a_walk() {
        let (dir, tools) = workspace();
        let outside = tempfile::tempdir().unwrap();
        put(outside.path(), "secret.rs", "needle: the secret\n", 0);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.rs"), dir.path().join("link.rs"))
            .unwrap();
        put(dir.path(), "kept.rs", "needle\n", 0);
        for (name, path) in
            [("grep", "out"), ("glob", "out"), ("grep", "link.rs"), ("grep", "out/secret.rs")]
        {
            let outcome = run(&tools, name, json!({"pattern": "x", "path": path})).await;
            assert!(outcome.is_error, "{name} {path}");
            assert!(outcome.for_model.contains("symlink"), "{}", outcome.for_model);
        }
        let walked = grep(&tools, json!({"pattern": "needle"})).await;
        assert_eq!(results(&walked), ["kept.rs:1:needle"], "the secret stays out");
        let listed = glob(&tools, json!({"pattern": "**/*.rs"})).await;
        assert_eq!(results(&listed), ["kept.rs"]);
        let through = glob(&tools, json!({"pattern": "out/*.rs"})).await;
        assert_eq!(through.tally.as_deref(), Some("no files match"), "{}", through.for_model);
        let filtered = grep(&tools, json!({"pattern": "needle", "glob": "out/*"})).await;
        assert_eq!(filtered.tally.as_deref(), Some("no matches"), "{}", filtered.for_model);
    }

    #[tokio::test]
    async fn a_pattern_cannot_climb_out_of_the_folder_searched() {
        let (_dir, tools) = workspace();
        for (name, input) in [
            ("glob", json!({"pattern": "../**/*"})),
            ("glob", json!({"pattern": "/etc/*"})),
            ("grep", json!({"pattern": "root", "glob": "../../etc/*"})),
        ] {
            let outcome = run(&tools, name, input.clone()).await;
            assert!(outcome.is_error, "{input}");
            assert!(outcome.for_model.starts_with("Invalid glob"), "{}", outcome.for_model);
        }
    }
}

mod errors {
    use super::*;

    #[tokio::test]
    async fn a_bad_regex_is_an_error_that_names_the_problem() {
        let (dir, tools) = workspace();
        project(dir.path());
        let outcome = grep(&tools, json!({"pattern": "fn main("})).await;
        assert!(outcome.is_error);
        assert!(
            outcome.for_model.starts_with("Invalid regex `fn main(`:"),
            "{}",
            outcome.for_model
        );
        assert!(outcome.for_model.contains("unclosed group"), "{}", outcome.for_model);
        assert!(outcome.for_model.contains("escape"), "says how: {}", outcome.for_model);
        assert_eq!(outcome.tally, None);
    }

    #[tokio::test]
    async fn wrong_and_unknown_arguments_are_errors_that_say_which() {
        let (_dir, tools) = workspace();
        for (name, input, expected) in [
            ("grep", json!({}), "missing required argument `pattern` (a string)"),
            (
                "grep",
                json!({"pattern": "x", "ignore_case": "yes"}),
                "`ignore_case` must be true or false",
            ),
            ("grep", json!({"pattern": "x", "-i": true}), "unknown field `-i`"),
            ("glob", json!({"pattern": 3}), "argument `pattern` must be a string"),
            ("glob", json!({"pattern": "*", "offset": -1}), "`offset` must be a whole number"),
        ] {
            let outcome = run(&tools, name, input.clone()).await;
            assert!(outcome.is_error, "{input}");
            assert!(outcome.for_model.contains(expected), "{input}: {}", outcome.for_model);
        }
    }

    #[tokio::test]
    async fn an_interrupted_search_stops_and_says_so() {
        let (dir, tools) = workspace();
        project(dir.path());
        let context = ctx();
        context.cancel.cancel();
        for name in ["grep", "glob"] {
            let input = json!({"pattern": "needle"});
            let outcome = tools.run(name, &input, &context).await;
            assert!(outcome.is_error, "{name}");
            assert_eq!(outcome.for_model, "The search was interrupted.");
        }
    }
}
