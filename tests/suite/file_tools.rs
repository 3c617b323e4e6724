//! The file tools (`read_file`, `write_file`, `edit_file`), their paths and their approval
//! previews, against a real temporary workspace.

use crate::support::files::{PROMPT, run, workspace};
use keel::runtime::path_error::PathError;
use keel::tools::files::MAX_READ_SCAN_BYTES;
use keel::tools::preview::preview_named;
use keel::tools::{ToolOutcome, Tools};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Runs `read_file`, failing the test if it does not answer within [`PROMPT`] (a hang guard).
async fn read(tools: &Tools, input: Value) -> ToolOutcome {
    tokio::time::timeout(PROMPT, run(tools, "read_file", input))
        .await
        .unwrap_or_else(|_| panic!("read_file did not answer within {PROMPT:?}"))
}

/// Makes `path` two gigabytes long without writing them: the rest of the file is a hole of NULs.
fn make_sparse_giant(path: &Path) {
    const GIANT: u64 = 2 << 30;
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(GIANT).unwrap();
}

mod paths {
    use super::*;

    fn root(tools: &Tools) -> PathBuf {
        tools.workspace().root().to_path_buf()
    }

    #[test]
    fn relative_and_nested_new_paths_resolve_inside() {
        let (_dir, tools) = workspace();
        let ws = tools.workspace();
        assert_eq!(ws.resolve("a/b/c.txt").unwrap(), root(&tools).join("a/b/c.txt"));
        assert_eq!(ws.resolve("./x/../y.txt").unwrap(), root(&tools).join("y.txt"));
        assert_eq!(ws.resolve(".").unwrap(), root(&tools));
    }

    #[test]
    fn absolute_path_inside_is_accepted() {
        let (_dir, tools) = workspace();
        let inside = root(&tools).join("src/main.rs");
        assert_eq!(tools.workspace().resolve(inside.to_str().unwrap()).unwrap(), inside);
    }

    #[test]
    fn dotdot_escape_is_refused_naming_path_and_workspace() {
        let (_dir, tools) = workspace();
        let err = tools.workspace().resolve("../outside.txt").unwrap_err();
        assert!(matches!(err, PathError::OutsideWorkspace { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("../outside.txt"), "{message}");
        assert!(message.contains(&root(&tools).display().to_string()), "{message}");
        assert!(tools.workspace().resolve("a/../../x").is_err());
    }

    #[test]
    fn absolute_path_outside_is_refused() {
        let (_dir, tools) = workspace();
        let other = tempfile::tempdir().unwrap();
        let outside = other.path().join("f.txt");
        let err = tools.workspace().resolve(outside.to_str().unwrap()).unwrap_err();
        assert!(matches!(err, PathError::OutsideWorkspace { .. }), "{err:?}");
        assert!(tools.workspace().resolve("/etc/passwd").is_err());
    }

    #[test]
    fn symlinks_pointing_out_are_refused_even_for_new_files() {
        let (dir, tools) = workspace();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(other.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(other.path().join("secret.txt"), dir.path().join("secret-link"))
            .unwrap();
        for path in ["out/secret.txt", "out/new/file.txt", "secret-link"] {
            let err = tools.workspace().resolve(path).unwrap_err();
            assert!(matches!(err, PathError::SymlinkEscape { .. }), "{path}: {err:?}");
            assert!(err.to_string().contains(path), "{err}");
        }
    }

    #[test]
    fn dangling_symlink_is_refused() {
        let (dir, tools) = workspace();
        std::os::unix::fs::symlink("/nonexistent/keel/target", dir.path().join("dangling"))
            .unwrap();
        assert!(tools.workspace().resolve("dangling").is_err());
    }

    #[test]
    fn symlink_inside_the_workspace_is_followed() {
        let (dir, tools) = workspace();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("alias")).unwrap();
        assert_eq!(
            tools.workspace().resolve("alias/new.txt").unwrap(),
            root(&tools).join("real/new.txt")
        );
    }

    #[tokio::test]
    async fn file_tools_refuse_paths_outside() {
        let (_dir, tools) = workspace();
        let outcome = run(&tools, "write_file", json!({"path": "../x.txt", "content": "x"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("outside the workspace"), "{}", outcome.for_model);
        assert!(outcome.changes.is_empty());
        let outcome = run(&tools, "read_file", json!({"path": "/etc/hostname"})).await;
        assert!(outcome.is_error);
    }
}

mod files {
    use super::*;

    #[tokio::test]
    async fn read_numbers_lines() {
        let (dir, tools) = workspace();
        std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\r\ngamma").unwrap();
        let outcome = run(&tools, "read_file", json!({"path": "a.txt"})).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert_eq!(outcome.for_model, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    }

    #[tokio::test]
    async fn read_honours_offset_and_limit_and_says_more_remains() {
        let (dir, tools) = workspace();
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("ten.txt"), text).unwrap();
        let outcome =
            run(&tools, "read_file", json!({"path": "ten.txt", "offset": 3, "limit": 2})).await;
        assert!(
            outcome.for_model.starts_with("     3\tline 3\n     4\tline 4\n"),
            "{}",
            outcome.for_model
        );
        assert!(!outcome.for_model.contains("line 5"));
        assert!(outcome.for_model.contains("offset 5"), "{}", outcome.for_model);

        let outcome = run(&tools, "read_file", json!({"path": "ten.txt", "offset": 9})).await;
        assert_eq!(outcome.for_model, "     9\tline 9\n    10\tline 10\n");

        let outcome = run(&tools, "read_file", json!({"path": "ten.txt", "offset": 11})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("10 lines"), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn read_refuses_binary_missing_and_folders() {
        let (dir, tools) = workspace();
        std::fs::write(dir.path().join("blob.bin"), b"PK\x03\x04\x00\x00data").unwrap();
        let outcome = run(&tools, "read_file", json!({"path": "blob.bin"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("binary"), "{}", outcome.for_model);

        let outcome = run(&tools, "read_file", json!({"path": "nope.txt"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("does not exist"), "{}", outcome.for_model);

        std::fs::create_dir(dir.path().join("folder")).unwrap();
        let outcome = run(&tools, "read_file", json!({"path": "folder"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("directory"));
    }

    #[tokio::test]
    async fn read_of_a_huge_file_stops_early_and_cuts_long_lines() {
        let (dir, tools) = workspace();
        let path = dir.path().join("big.log");
        let mut text = String::from("short\n");
        text.push_str(&"x".repeat(1_000_000));
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        make_sparse_giant(&path);
        let outcome = read(&tools, json!({"path": "big.log", "limit": 2})).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert!(outcome.for_model.len() < 10_000, "{}", outcome.for_model.len());
        assert!(outcome.for_model.contains("line cut: 1000000 bytes"));
        assert!(outcome.for_model.contains("continue with offset 3"));
    }

    #[tokio::test]
    async fn one_enormous_line_is_read_only_as_far_as_the_window() {
        let (dir, tools) = workspace();
        let path = dir.path().join("huge.txt");
        std::fs::write(&path, "x".repeat(10_000)).unwrap();
        make_sparse_giant(&path);
        let outcome = read(&tools, json!({"path": "huge.txt"})).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        let text = &outcome.for_model;
        assert!(text.starts_with(&format!("     1\t{}", "x".repeat(2000))), "{text}");
        // The count shows how much was read: the window, not the two gigabytes.
        let cut = format!(" … [line cut: {MAX_READ_SCAN_BYTES} bytes read, and it goes on]\n");
        assert!(text.contains(&cut), "{text}");
        assert!(text.contains("line 1 goes on past them"), "{text}");
        assert!(text.contains("`sed -n '1,2000p' huge.txt`"), "{text}");
        assert!(text.len() < 3000, "{}", text.len());

        // Skipping the giant line to reach the next one is refused the same way.
        let outcome = read(&tools, json!({"path": "huge.txt", "offset": 2})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.starts_with("Line 2 of `huge.txt` lies beyond its first"));
        assert!(outcome.for_model.contains("(they hold 0 whole lines)"), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn offsets_reach_to_the_end_of_the_window_and_no_further() {
        /// Each line is exactly this long, newline included.
        const LINE: u64 = 11;
        let whole_lines = MAX_READ_SCAN_BYTES / LINE;
        assert_ne!(MAX_READ_SCAN_BYTES % LINE, 0, "the window must end inside a line");
        let (dir, tools) = workspace();
        let text: String = (1..=whole_lines + 50_000).map(|n| format!("{n:010}\n")).collect();
        std::fs::write(dir.path().join("lines.txt"), text).unwrap();

        let from = whole_lines - 10;
        let outcome = read(&tools, json!({"path": "lines.txt", "offset": from})).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        let last = format!("{whole_lines:>6}\t{whole_lines:010}\n");
        assert!(outcome.for_model.contains(&last), "{}", outcome.for_model);
        assert_eq!(outcome.for_model.matches('\t').count(), 11, "{}", outcome.for_model);
        let straddling = whole_lines + 1;
        let note = format!("line {straddling} goes on past them; read from there with bash");
        assert!(outcome.for_model.contains(&note), "{}", outcome.for_model);
        let command = format!("`sed -n '{straddling},{}p' lines.txt`", straddling + 1999);
        assert!(outcome.for_model.contains(&command), "{}", outcome.for_model);

        // The line the window cuts shows what was read of it.
        let outcome = read(&tools, json!({"path": "lines.txt", "offset": straddling})).await;
        let start = format!("{straddling:>6}\t{}", &format!("{straddling:010}")[..8]);
        assert!(outcome.for_model.starts_with(&start), "{}", outcome.for_model);
        assert!(outcome.for_model.contains("[line cut: 8 bytes read, and it goes on]"));

        for offset in [straddling + 1, whole_lines + 40_000, u64::MAX] {
            let outcome = read(&tools, json!({"path": "lines.txt", "offset": offset})).await;
            assert!(outcome.is_error, "{offset}");
            let expected = format!(
                "Line {offset} of `lines.txt` lies beyond its first {MAX_READ_SCAN_BYTES} bytes, \
                 which is as far as read_file reads (they hold {whole_lines} whole lines)"
            );
            assert!(outcome.for_model.starts_with(&expected), "{}", outcome.for_model);
        }
    }

    #[tokio::test]
    async fn write_creates_parents_and_records_the_change() {
        let (dir, tools) = workspace();
        let outcome =
            run(&tools, "write_file", json!({"path": "deep/er/new.txt", "content": "hello\n"}))
                .await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert!(outcome.for_model.contains("6 bytes"), "{}", outcome.for_model);
        let path = dir.path().join("deep/er/new.txt");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
        assert_eq!(outcome.changes.len(), 1);
        assert_eq!(outcome.changes[0].before, None);
        assert_eq!(outcome.changes[0].after, b"hello\n");
        assert_eq!(outcome.changes[0].path, path.canonicalize().unwrap());

        let outcome =
            run(&tools, "write_file", json!({"path": "deep/er/new.txt", "content": "bye\n"})).await;
        assert_eq!(outcome.changes[0].before.as_deref(), Some(&b"hello\n"[..]));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "bye\n");

        let outcome =
            run(&tools, "write_file", json!({"path": "deep/er/new.txt", "content": "bye\n"})).await;
        assert!(!outcome.is_error);
        assert!(outcome.changes.is_empty(), "an unchanged file needs no undo");
    }

    #[tokio::test]
    async fn edit_replaces_exactly_one_occurrence() {
        let (dir, tools) = workspace();
        let path = dir.path().join("code.rs");
        std::fs::write(&path, "fn a() {}\nfn b() {}\n").unwrap();
        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "code.rs", "old_text": "fn b() {}", "new_text": "fn c() {}"}),
        )
        .await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert!(outcome.for_model.contains("line 2"), "{}", outcome.for_model);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "fn a() {}\nfn c() {}\n");
        assert_eq!(outcome.changes[0].before.as_deref(), Some(&b"fn a() {}\nfn b() {}\n"[..]));
        assert_eq!(outcome.changes[0].after, b"fn a() {}\nfn c() {}\n");
    }

    #[tokio::test]
    async fn edit_fails_on_zero_or_many_matches_and_leaves_the_file() {
        let (dir, tools) = workspace();
        let path = dir.path().join("code.rs");
        std::fs::write(&path, "x = 1\nx = 1\nx = 1\n").unwrap();
        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "code.rs", "old_text": "y = 2", "new_text": "z"}),
        )
        .await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("not found"), "{}", outcome.for_model);

        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "code.rs", "old_text": "x = 1", "new_text": "z"}),
        )
        .await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("occurs 3 times"), "{}", outcome.for_model);
        assert!(outcome.changes.is_empty());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x = 1\nx = 1\nx = 1\n");

        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "missing.rs", "old_text": "a", "new_text": "b"}),
        )
        .await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("does not exist"));
    }
}

mod previews {
    use super::*;

    #[test]
    fn edit_preview_is_a_unified_diff_and_changes_nothing() {
        let (dir, tools) = workspace();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let input = json!({"path": "notes.txt", "old_text": "two", "new_text": "TWO"});
        let diff = preview_named(&tools, "edit_file", &input).unwrap();
        assert!(diff.contains("--- a/notes.txt"), "{diff}");
        assert!(diff.contains("+++ b/notes.txt"), "{diff}");
        assert!(diff.contains("\n-two\n+TWO\n"), "{diff}");
        assert!(diff.contains(" one\n"), "{diff}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\nthree\n");
    }

    #[test]
    fn write_preview_of_a_new_file_comes_from_dev_null() {
        let (dir, tools) = workspace();
        let input = json!({"path": "src/new.rs", "content": "fn main() {}\n"});
        let diff = preview_named(&tools, "write_file", &input).unwrap();
        assert!(diff.contains("--- /dev/null"), "{diff}");
        assert!(diff.contains("+++ b/src/new.rs"), "{diff}");
        assert!(diff.contains("+fn main() {}"), "{diff}");
        assert!(!dir.path().join("src").exists());
    }

    #[test]
    fn no_preview_for_other_tools_or_bad_calls() {
        let (dir, tools) = workspace();
        std::fs::write(dir.path().join("a.txt"), "a a").unwrap();
        assert_eq!(preview_named(&tools, "bash", &json!({"command": "ls"})), None);
        assert_eq!(preview_named(&tools, "read_file", &json!({"path": "a.txt"})), None);
        assert_eq!(preview_named(&tools, "write_file", &json!({"path": 3})), None);
        let ambiguous = json!({"path": "a.txt", "old_text": "a", "new_text": "b"});
        assert_eq!(preview_named(&tools, "edit_file", &ambiguous), None);
        let outside = json!({"path": "../x", "content": "x"});
        assert_eq!(preview_named(&tools, "write_file", &outside), None);
    }
}
