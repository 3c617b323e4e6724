//! A process the model started races the file tools, the search tools and undo: it swaps a
//! workspace folder with a symlink to a folder outside, over and over (`renameat2` with
//! `RENAME_EXCHANGE`, atomic), while `read_file`, `write_file`, `edit_file`, `grep`, `glob` and
//! undo work on paths inside that folder. Whatever the timing, nothing outside is read, written,
//! removed or listed; a call that meets the swap is refused (a search passes over what it met).

use crate::support::files;
use files::run;
use keel::runtime::Workspace;
use keel::runtime::change::FileChange;
use keel::runtime::undo::{UndoContext, UndoStack};
use keel::tools::Tools;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::json;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

/// Calls of each kind made while the swap runs.
const ITERATIONS: usize = 300;
/// Calls made at most, while none has met the swap yet: on a busy machine the swapping thread
/// may get little time, and a test that never meets it proves nothing.
const MAX_ITERATIONS: usize = 30 * ITERATIONS;

/// Whether to make another call: the first `ITERATIONS`, then more until one met the swap.
fn go_on(calls: usize, met: usize) -> bool {
    calls < ITERATIONS || (met == 0 && calls < MAX_ITERATIONS)
}
/// What the outside folder holds; it must never reach the model or change.
const SECRET: &str = "SECRET outside the workspace\n";

/// The workspace with `d/` (a real folder) and `l` (a symlink to `outside`), and a thread that
/// exchanges the two names until dropped.
struct Race {
    work: tempfile::TempDir,
    outside: tempfile::TempDir,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    swapper: Option<JoinHandle<()>>,
}

impl Race {
    fn start() -> Self {
        let work = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(work.path().join("d")).unwrap();
        fs::write(work.path().join("d/f.txt"), "inside\n").unwrap();
        for name in ["f.txt", "g.txt"] {
            fs::write(outside.path().join(name), SECRET).unwrap();
        }
        std::os::unix::fs::symlink(outside.path(), work.path().join("l")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (a, b) = (work.path().join("d"), work.path().join("l"));
        let swapper = {
            let (stop, swaps) = (stop.clone(), swaps.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        Self { work, outside, stop, swaps, swapper: Some(swapper) }
    }

    fn tools(&self) -> Tools {
        Tools::new(Workspace::new(self.work.path()).unwrap())
    }

    /// Stops the swapping, leaving `d` the real folder again, and checks the outside folder holds
    /// exactly what it held at the start.
    fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.swapper.take().unwrap().join().unwrap();
        if fs::symlink_metadata(self.work.path().join("d")).unwrap().is_symlink() {
            renameat_with(
                CWD,
                self.work.path().join("d"),
                CWD,
                self.work.path().join("l"),
                RenameFlags::EXCHANGE,
            )
            .unwrap();
        }
        assert!(self.swaps.load(Ordering::Relaxed) > 0, "the race never ran");
        let mut names: Vec<String> = fs::read_dir(self.outside.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["f.txt", "g.txt"], "something was created or removed outside");
        for name in ["f.txt", "g.txt"] {
            assert_eq!(fs::read_to_string(self.outside.path().join(name)).unwrap(), SECRET);
        }
    }

    fn inside(&self, relative: &str) -> PathBuf {
        self.work.path().canonicalize().unwrap().join(relative)
    }
}

/// Whether a refusal says the path was swapped under it (the race bit, and was caught).
fn was_swapped(text: &str) -> bool {
    text.contains("replaced") || text.contains("outside the workspace") || text.contains("symlink")
}

#[tokio::test(flavor = "multi_thread")]
async fn read_file_never_returns_what_lies_outside() {
    let race = Race::start();
    let tools = race.tools();
    let mut refused = 0;
    let mut calls = 0;
    while go_on(calls, refused) {
        calls += 1;
        let outcome = run(&tools, "read_file", json!({"path": "d/f.txt"})).await;
        assert!(!outcome.for_model.contains("SECRET"), "{}", outcome.for_model);
        if outcome.is_error {
            assert!(was_swapped(&outcome.for_model), "{}", outcome.for_model);
            refused += 1;
        }
    }
    race.finish();
    assert!(refused > 0, "the swap never met a call: the test proves nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn write_file_and_edit_file_never_write_outside() {
    let race = Race::start();
    let tools = race.tools();
    let mut refused = 0;
    let mut at = 0;
    while go_on(at, refused) {
        at += 1;
        let name = format!("d/new-{at}.txt");
        let outcome = run(&tools, "write_file", json!({"path": name, "content": "new\n"})).await;
        refused += usize::from(outcome.is_error);
        let outcome = run(&tools, "write_file", json!({"path": "d/g.txt", "content": "g\n"})).await;
        refused += usize::from(outcome.is_error);
        let (old, new) = if at % 2 == 0 { ("inside", "edited") } else { ("edited", "inside") };
        let edit = json!({"path": "d/f.txt", "old_text": old, "new_text": new});
        let outcome = run(&tools, "edit_file", edit).await;
        refused += usize::from(outcome.is_error);
    }
    race.finish();
    assert!(refused > 0, "the swap never met a call: the test proves nothing");
}

#[test]
fn undo_never_restores_or_removes_outside() {
    let race = Race::start();
    let workspace = Workspace::new(race.work.path()).unwrap();
    let mut left_alone = 0;
    let mut calls = 0;
    while go_on(calls, left_alone) {
        calls += 1;
        let mut stack = UndoStack::default();
        stack.begin_turn(None);
        // What a naive undo would act on outside: `f.txt` "restored", `g.txt` "deleted".
        stack.record([
            FileChange {
                path: race.inside("d/f.txt"),
                before: Some(b"before\n".to_vec()),
                after: SECRET.as_bytes().to_vec(),
                created_folders: 0,
            },
            FileChange {
                path: race.inside("d/g.txt"),
                before: None,
                after: SECRET.as_bytes().to_vec(),
                created_folders: 1,
            },
        ]);
        let report = stack.undo(UndoContext { workspace: &workspace, shadow: None });
        left_alone += report.left_alone.len();
    }
    race.finish();
    assert!(left_alone > 0, "undo never met the records: the test proves nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn grep_and_glob_never_return_what_lies_outside() {
    let race = Race::start();
    let tools = race.tools();
    // Calls that found `d` a symlink at the time: the swap met the search.
    let mut met = 0;
    for _ in 0..ITERATIONS {
        let found = run(&tools, "grep", json!({"pattern": "SECRET|inside"})).await;
        assert!(!found.is_error && !found.for_model.contains("SECRET"), "{}", found.for_model);
        met += usize::from(!found.for_model.contains("d/f.txt:1:inside"));
        // `g.txt` is only outside: listing it would list the outside folder.
        let listed = run(&tools, "glob", json!({"pattern": "**/*.txt"})).await;
        assert!(!listed.is_error && !listed.for_model.contains("g.txt"), "{}", listed.for_model);
    }
    race.finish();
    assert!(met > 0, "the swap never met a search: the test proves nothing");
}
