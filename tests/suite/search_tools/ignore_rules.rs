//! The ignore rules: `.gitignore` (nested and the top level's), `.ignore`, git's excludes, hidden and
//! binary files, and what a search that finds nothing says it skipped.

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
    let found = grep(&tools, json!({"pattern": "needle", "path": "sub", "output": "files"})).await;
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
