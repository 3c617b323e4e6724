//! Hook files that change under keel: one swapped in a loop while hooks run never runs swapped, a
//! file changed from outside every sandbox is not what runs, and a trusted guard or TaskCompleted
//! hook whose file changed blocks until trusted again or forgotten.

use super::{GUARDED_CALLS, SWAP_RUNS, SYSTEM_PATH, Setting, bash, everything};
use crate::support::bin;
use crate::support::keel_as::User;
use crate::support::llm::{text, tool};
use serde_json::json;

#[test]
fn a_hook_file_swapped_in_a_loop_while_hooks_run_never_runs_swapped() {
    for user in User::BOTH {
        let setting = Setting::new();
        let ran = "\"$CLAUDE_PROJECT_DIR/ran.txt\"";
        setting.file("hooks/check.sh", &format!("#!/bin/bash\necho trusted >> {ran}\n"));
        setting.file(
            "swap/b",
            &format!(
                "#!/bin/bash\necho swapped >> {ran}\necho escaped > '{}'\n",
                setting.outside("escaped").display()
            ),
        );
        setting.workspace_hooks("PostToolUse", Some("Bash"), &["./hooks/check.sh"]);
        setting.hooks(user, "trust");
        // A job the model leaves running swaps the hook's file for another, and back, by rename,
        // as fast as it can, while the hook runs after each of the calls that follow.
        let swapper = "cp -p hooks/check.sh swap/a; (n=0; while :; do cp -p swap/b swap/t && \
                       mv -f swap/t hooks/check.sh; cp -p swap/a swap/u && \
                       mv -f swap/u hooks/check.sh; n=$((n+1)); echo $n > swap/n && \
                       mv -f swap/n swap/tries; done) >/dev/null 2>&1 &";
        let mut steps = vec![bash(swapper)];
        steps.extend((0..SWAP_RUNS).map(|_| bash("true")));
        steps.push(text("Done."));
        let run = setting.run(user, steps, &[], SYSTEM_PATH);
        let lines = std::fs::read_to_string(setting.work().join("ran.txt")).unwrap_or_default();
        let trusted = lines.lines().filter(|line| *line == "trusted").count();
        let swapped = lines.lines().filter(|line| *line == "swapped").count();
        eprintln!(
            "{user:?}: of {} hook runs, {trusted} ran as trusted, {swapped} swapped",
            SWAP_RUNS + 1
        );
        assert_eq!(swapped, 0, "{user:?}: the swapped file ran: {}", everything(&run));
        assert!(!setting.outside("escaped").exists(), "{user:?}");
        assert!(trusted > 0, "{user:?}: the trusted file never ran: {}", everything(&run));
        let tries = std::fs::read_to_string(setting.work().join("swap/tries")).unwrap_or_default();
        let tries: usize = tries.trim().parse().unwrap_or(0);
        assert!(tries > 0, "{user:?}: the job never tried to swap");
    }
}

#[test]
fn a_trusted_guard_whose_file_changed_blocks_every_call_until_trusted_again_or_forgotten() {
    for user in User::BOTH {
        let setting = Setting::new();
        setting.file(
            "hooks/guard.sh",
            "#!/bin/bash\ncat >> \"$CLAUDE_PROJECT_DIR/inputs.jsonl\"\necho >> \"$CLAUDE_PROJECT_DIR/inputs.jsonl\"\n",
        );
        let changed = "#!/bin/bash\necho ran > \"$CLAUDE_PROJECT_DIR/ran-changed\"\n";
        setting.workspace_hooks("PreToolUse", Some("Bash"), &["./hooks/guard.sh"]);
        setting.hooks(user, "trust");
        // Commands cannot change it; keel's own file tools can, and then it stays shut.
        let tries = "printf x > hooks/guard.sh; mv hooks/guard.sh g; mv hooks h; echo tried";
        let mut steps = vec![
            bash(tries),
            tool("write_file", json!({"path": "hooks/guard.sh", "content": changed})),
        ];
        steps.extend((1..=GUARDED_CALLS).map(|n| bash(&format!("echo {n} > call-{n}.txt"))));
        steps.push(text("Done."));
        let run = setting.run(user, steps, &[], SYSTEM_PATH);

        let tried = &run.results[0];
        assert!(tried.contains("hooks/guard.sh: Read-only file system"), "{user:?}: {tried}");
        assert_eq!(tried.matches("Device or resource busy").count(), 2, "{user:?}: {tried}");
        // The trusted guard read the first call's input on its stdin, in the sandbox.
        let inputs = std::fs::read_to_string(setting.work().join("inputs.jsonl")).unwrap();
        let first: serde_json::Value =
            serde_json::from_str(inputs.lines().next().unwrap()).unwrap();
        assert_eq!(first["tool_input"]["command"], tries);
        assert_eq!(inputs.lines().filter(|line| !line.is_empty()).count(), 1, "{user:?}");
        assert!(!setting.work().join("ran-changed").exists(), "{user:?}: the changed guard ran");
        assert_eq!(run.results.len(), GUARDED_CALLS + 2, "{user:?}: {}", everything(&run));
        for (n, result) in run.results.iter().enumerate().skip(2) {
            let n = n - 1;
            assert!(
                !setting.work().join(format!("call-{n}.txt")).exists(),
                "{user:?}: call {n} ran"
            );
            assert!(
                result.starts_with(
                    "Blocked by a PreToolUse hook: the hook `./hooks/guard.sh` changed since you \
                     trusted it"
                ),
                "{user:?}: call {n}: {result}"
            );
        }
        let told =
            run.stderr().matches("changed since you trusted it, so it no longer runs").count();
        assert_eq!(told, 1, "{user:?}: the person is told once: {}", run.stderr());

        // A new session: still shut.
        let run = setting.run(
            user,
            vec![bash("echo again > again.txt"), text("Done.")],
            &[],
            SYSTEM_PATH,
        );
        assert!(!setting.work().join("again.txt").exists(), "{user:?}: {}", everything(&run));
        assert!(run.results[0].contains("changed since you trusted it"), "{user:?}");

        // Forgotten on purpose: it blocks nothing, and does not run.
        setting.hooks(user, "forget");
        setting.run(user, vec![bash("echo after > after.txt"), text("Done.")], &[], SYSTEM_PATH);
        assert!(setting.work().join("after.txt").exists(), "{user:?}: forgetting it unblocks");
        assert!(!setting.work().join("ran-changed").exists(), "{user:?}: a forgotten hook ran");

        // Trusted again, as it is now: it runs.
        setting.hooks(user, "trust");
        setting.run(user, vec![bash("true"), text("Done.")], &[], SYSTEM_PATH);
        assert!(setting.work().join("ran-changed").exists(), "{user:?}: trusted again, it runs");
    }
}

#[test]
fn a_trusted_task_completed_hook_whose_file_changed_refuses_every_completion() {
    let setting = Setting::new();
    setting.file("hooks/done.sh", "#!/bin/bash\nexit 0\n");
    setting.workspace_hooks("TaskCompleted", None, &["./hooks/done.sh"]);
    setting.hooks(User::Root, "trust");
    let item = |status: &str| json!({"items": [{"id": "1", "text": "Ship it", "status": status}]});
    let steps = vec![
        tool("todo", item("in_progress")),
        tool(
            "write_file",
            json!({"path": "hooks/done.sh", "content": "#!/bin/bash\nexit 0\n# changed\n"}),
        ),
        tool("todo", item("completed")),
        tool("todo", item("completed")),
        text("Done."),
    ];
    let run = setting.run(User::Root, steps, &[], SYSTEM_PATH);
    assert_eq!(run.results.len(), 4, "{}", everything(&run));
    for refused in &run.results[2..] {
        assert!(
            refused.contains("Item 1: cannot be completed: the hook `./hooks/done.sh` changed since you trusted it"),
            "{refused}"
        );
    }
}

#[test]
fn a_file_changed_from_outside_every_sandbox_while_its_hook_runs_is_not_what_runs() {
    let setting = Setting::new();
    let trusted = "#!/bin/bash\ntouch \"$CLAUDE_PROJECT_DIR/started\"\nsleep 1\n\
                   cat hooks/read.sh > \"$CLAUDE_PROJECT_DIR/seen.txt\"\n";
    setting.file("hooks/read.sh", trusted);
    setting.workspace_hooks("PostToolUse", Some("Bash"), &["./hooks/read.sh"]);
    setting.hooks(User::Root, "trust");
    // As keel's own file tools or the person's editor would: in place, while the hook runs.
    let work = setting.work().to_path_buf();
    let rewriter = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + bin::HANG_GUARD;
        while !work.join("started").exists() {
            assert!(std::time::Instant::now() < deadline, "the hook never started");
            std::thread::sleep(bin::POLL);
        }
        std::fs::write(work.join("hooks/read.sh"), "#!/bin/bash\necho changed > seen.txt\n")
            .unwrap();
    });
    let run = setting.run(User::Root, vec![bash("true"), text("Done.")], &[], SYSTEM_PATH);
    rewriter.join().unwrap();
    let seen = std::fs::read_to_string(setting.work().join("seen.txt")).unwrap();
    assert_eq!(seen, trusted, "the hook read its file as it was hashed: {}", everything(&run));
    assert!(
        run.stderr().contains(
            "the hook `./hooks/read.sh` changed while it ran, so keel discarded its answer"
        ),
        "{}",
        everything(&run)
    );
}
