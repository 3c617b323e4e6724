//! `glob`'s arguments: the pattern, the folder it is relative to, and a bad pattern named.

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
