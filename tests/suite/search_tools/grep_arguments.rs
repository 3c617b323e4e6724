//! `grep`'s arguments: the pattern, case, path, glob, context lines, output modes and paging.

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
    let below = grep(&tools, json!({"pattern": "needle", "path": "src", "glob": "deep/*"})).await;
    assert_eq!(results(&below), ["src/deep/more.rs:1:needle deep"]);
    let braces = grep(&tools, json!({"pattern": "needle", "glob": "*.{txt,md}"})).await;
    assert_eq!(results(&braces), ["notes.txt:1:a needle in the notes"]);
    let none = grep(&tools, json!({"pattern": "needle", "glob": "nowhere/*.rs"})).await;
    assert_eq!(none.tally.as_deref(), Some("no matches"));
}

#[tokio::test]
async fn context_shows_the_lines_around_with_dashes_and_breaks() {
    let (dir, tools) = workspace();
    let lines: String =
        (1..=20).map(|n| format!("line {n}{}\n", if n % 7 == 0 { " hit" } else { "" })).collect();
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
    assert_eq!(results(&count), ["src/many.rs:3", "src/lib.rs:1", "notes.txt:1", "src/old.rs:1"]);
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
    assert_eq!(last_line(&last), "[250 matches in 5 files; shown: 231–250, newest files first.]");
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
    let files = grep(&tools, json!({"pattern": "needle", "output": "files", "offset": 3})).await;
    assert_eq!(results(&files), ["f1.txt", "f0.txt"]);
    let zero = grep(&tools, json!({"pattern": "needle", "limit": 0})).await;
    assert!(zero.is_error && zero.for_model.contains("`limit` must be a whole number ≥ 1"));
}
