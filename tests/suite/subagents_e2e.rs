//! A child agent's approval in the real binary in a real terminal (`support::tmux`): in `ask`
//! mode the box names the child and its item above the call, the board row shows the child at
//! work meanwhile, and the person's answer reaches the child, which finishes its item. A child is
//! never wider than its parent at any moment: Shift+Tab while a child writes refuses its later
//! writes, and `/approval ask` while it runs has its next call asked — as root and as an
//! unprivileged user.

use crate::support::files::outside_tmp;
use crate::support::keel_as::{NOBODY, User, give_to};
use crate::support::llm::family::{FamilyLlm, child};
use crate::support::llm::{text, tool};
use crate::support::tmux::{KEY_TIMEOUT, KeelPane, board_count, exit_line};
use serde_json::json;
use std::thread::sleep;
use std::time::Duration;

/// A child's round trip through the scripted server, with keel's own work, on a loaded machine.
const CHILD_TIMEOUT: Duration = Duration::from_secs(30);

#[test]
fn a_childs_approval_names_it_and_the_answer_reaches_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let parent = vec![
        tool("todo", json!({"items": [{"id": "1", "text": "Make the file", "status": "pending"}]})),
        tool(
            "task",
            json!({"prompt": "MAKER: make made.txt", "item": "1", "description": "Make it"}),
        ),
        text("The file is made."),
    ];
    let maker = child(
        "MAKER",
        vec![tool("bash", json!({"command": "touch made.txt"})), text("Report: made made.txt.")],
    );
    let server = runtime.block_on(FamilyLlm::start(parent, vec![maker]));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) =
        KeelPane::start("a_childs_approval_names_it_and_the_answer_reaches_it", home.path())
    else {
        return;
    };
    let env = format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base());
    tmux.launch(&env, &format!("--approval ask --workdir '{}'", workdir.path().display()));
    tmux.wait_for("keel to start", CHILD_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    tmux.type_line("Make the file.");
    let screen = tmux.wait_for("the child's approval request", CHILD_TIMEOUT, |screen| {
        screen.contains("Approval needed") || exit_line(screen).is_some()
    });
    assert!(screen.contains("child a1 · Make it · item #1 asks:"), "{screen}");
    assert!(screen.contains("bash wants to run:") && screen.contains("touch made.txt"), "{screen}");
    assert!(screen.contains("1 agent"), "the status bar counts it:\n{screen}");
    assert!(!workdir.path().join("made.txt").exists(), "nothing ran before the answer");
    sleep(keel::tui::type_ahead::GRACE_PERIOD);
    tmux.send(&["y"]);
    let screen = tmux.wait_for("the parent's last words", CHILD_TIMEOUT, |screen| {
        screen.contains("The file is made.")
    });
    assert!(workdir.path().join("made.txt").exists(), "the answer reached the child");
    assert_eq!(board_count(&screen), Some((1, 1)), "the child's success completed its item");
    tmux.type_line("/agents");
    let screen = tmux.wait_for("the child's conversation", CHILD_TIMEOUT, |screen| {
        screen.contains("child a1 · Make it · item #1 — done")
    });
    assert!(screen.contains("▸ bash touch made.txt"), "drawn like the conversation:\n{screen}");
    assert!(screen.contains("Report: made made.txt."), "{screen}");
    tmux.send(&["Escape"]);
    tmux.wait_for("the view to close", CHILD_TIMEOUT, |screen| !screen.contains("Esc close ╯"));
    tmux.quit();
}

#[test]
fn esc_stops_a_child_at_work_and_its_item_stays_in_progress() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let parent = vec![
        tool("todo", json!({"items": [{"id": "1", "text": "Wait a while", "status": "pending"}]})),
        tool("task", json!({"prompt": "SLEEPER: wait", "item": "1", "description": "Wait"})),
        text("Never shown."),
    ];
    let sleeper =
        child("SLEEPER", vec![tool("bash", json!({"command": "sleep 60"})), text("Slept.")]);
    let server = runtime.block_on(FamilyLlm::start(parent, vec![sleeper]));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) =
        KeelPane::start("esc_stops_a_child_at_work_and_its_item_stays_in_progress", home.path())
    else {
        return;
    };
    let env = format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base());
    tmux.launch(&env, &format!("--approval auto --workdir '{}'", workdir.path().display()));
    tmux.wait_for("keel to start", CHILD_TIMEOUT, |screen| screen.contains("Welcome to keel"));
    tmux.type_line("Wait.");
    let screen = tmux.wait_for("the child at work on the board", CHILD_TIMEOUT, |screen| {
        screen.contains("a1 · bash sleep") || exit_line(screen).is_some()
    });
    assert!(screen.contains("1 agent"), "{screen}");
    let pressed = std::time::Instant::now();
    tmux.send(&["Escape"]);
    let screen = tmux.wait_for("the turn to stop", CHILD_TIMEOUT, |screen| {
        screen.contains("Interrupted.") && screen.contains("idle")
    });
    assert!(pressed.elapsed() < CHILD_TIMEOUT, "the child's command was stopped before it ended");
    assert!(screen.contains("[>] #1 Wait a while"), "its item stays in progress:\n{screen}");
    assert!(!screen.contains("1 agent"), "no child runs any more:\n{screen}");
    assert!(!screen.contains("Never shown."));
    tmux.quit();
}

/// What the model is told when the person says no.
const DECLINED: &str =
    "The user declined to run this tool call. Ask them what they would like to do instead.";

/// A parent that hands one general step to `WRITER`, then says its last words.
fn writing_parent() -> Vec<crate::support::llm::Step> {
    vec![
        tool(
            "task",
            json!({"prompt": "WRITER: write", "kind": "general", "description": "Write files"}),
        ),
        text("The writer is done."),
    ]
}

/// A child that writes in several calls, waiting between the first and the next for `release`
/// to appear in the workspace: the person acts while it waits.
fn writing_child() -> crate::support::llm::family::ChildScript {
    child(
        "WRITER",
        vec![
            tool("write_file", json!({"path": "one.txt", "content": "1\n"})),
            tool(
                "bash",
                json!({"command": "until [ -e release ]; do sleep 0.05; done; echo released"}),
            ),
            tool("write_file", json!({"path": "two.txt", "content": "2\n"})),
            tool("bash", json!({"command": "touch three.txt"})),
            text("Report: wrote."),
        ],
    )
}

/// What the writer's tools answered, in order.
fn writers_answers(server: &FamilyLlm) -> Vec<String> {
    server
        .child("WRITER")
        .iter()
        .skip(1)
        .flat_map(|body| crate::support::keel_as::tool_results(std::slice::from_ref(body)))
        .collect()
}

/// keel in a pane as `user` (from a root pane, `nobody` through `setpriv`), talking to
/// `server`, with `args`; `home` and `work` are the user's. `None`: no tmux, the test skips.
fn launch_as(
    user: User,
    test: &str,
    server: &FamilyLlm,
    (home, work): (&std::path::Path, &std::path::Path),
    args: &str,
) -> Option<KeelPane> {
    let tmux = KeelPane::start(test, home)?;
    give_to(user, home);
    give_to(user, work);
    let unprivileged = user == User::Nobody && nix::unistd::geteuid().is_root();
    let become_user = if unprivileged {
        format!("setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups")
    } else {
        String::new()
    };
    let env = format!(
        "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}' {become_user}",
        server.anthropic_base()
    );
    tmux.launch(&env, &format!("{args} --workdir '{}'", work.display()));
    tmux.wait_for("keel to start", CHILD_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    Some(tmux)
}

/// Waits until the writer has written its first file (as `user`) and been told to wait for
/// `release`.
fn until_the_writer_waits(tmux: &KeelPane, server: &FamilyLlm, work: &std::path::Path, user: User) {
    tmux.wait_for("the child's first write and its wait", CHILD_TIMEOUT, |screen| {
        (work.join("one.txt").exists() && server.child("WRITER").len() >= 2)
            || exit_line(screen).is_some()
    });
    let written = std::fs::metadata(work.join("one.txt"));
    assert!(written.is_ok(), "the child wrote before the person acted");
    if user == User::Nobody && nix::unistd::geteuid().is_root() {
        let owner = std::os::unix::fs::MetadataExt::uid(&written.unwrap());
        assert_eq!(owner, NOBODY, "keel ran as the unprivileged user");
    }
}

#[test]
fn plan_mode_toggled_while_a_child_writes_refuses_its_later_writes() {
    for user in User::BOTH {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime.block_on(FamilyLlm::start(writing_parent(), vec![writing_child()]));
        let (home, work) = (outside_tmp(), outside_tmp());
        let Some(tmux) = launch_as(
            user,
            "plan_mode_toggled_while_a_child_writes_refuses_its_later_writes",
            &server,
            (home.path(), work.path()),
            "--approval auto",
        ) else {
            return;
        };
        tmux.type_line("Write the files.");
        until_the_writer_waits(&tmux, &server, work.path(), user);
        tmux.send(&["BTab"]);
        tmux.wait_for("plan mode", KEY_TIMEOUT, |screen| screen.contains("PLAN"));
        std::fs::write(work.path().join("release"), "").unwrap();
        let screen = tmux.wait_for("the parent's last words", CHILD_TIMEOUT, |screen| {
            screen.contains("The writer is done.") || exit_line(screen).is_some()
        });
        assert!(screen.contains("The writer is done."), "{user:?}:\n{screen}");
        let answers = writers_answers(&server);
        assert_eq!(answers.len(), 4, "{user:?}: {answers:?}");
        assert!(answers[1].contains("released"), "{user:?}: {}", answers[1]);
        assert!(
            answers[2].starts_with(
                "`write_file` is not allowed: the agent that started this \
                                    child is in plan mode"
            ),
            "{user:?}: {}",
            answers[2]
        );
        assert!(answers[3].contains("Read-only file system"), "{user:?}: {}", answers[3]);
        assert!(!work.path().join("two.txt").exists(), "{user:?}: the child wrote in plan mode");
        assert!(!work.path().join("three.txt").exists(), "{user:?}: its command wrote");
        tmux.quit();
    }
}

#[test]
fn an_approval_mode_change_reaches_a_running_child() {
    for user in User::BOTH {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime.block_on(FamilyLlm::start(writing_parent(), vec![writing_child()]));
        let (home, work) = (outside_tmp(), outside_tmp());
        let Some(tmux) = launch_as(
            user,
            "an_approval_mode_change_reaches_a_running_child",
            &server,
            (home.path(), work.path()),
            "--approval auto",
        ) else {
            return;
        };
        tmux.type_line("Write the files.");
        until_the_writer_waits(&tmux, &server, work.path(), user);
        tmux.type_line("/approval ask");
        tmux.wait_for("the new mode", KEY_TIMEOUT, |screen| {
            screen.contains("Approval mode: ask from the next call on")
        });
        std::fs::write(work.path().join("release"), "").unwrap();
        let asked = [("write_file", "two.txt"), ("bash", "touch three.txt")];
        for (answered, (what, called)) in asked.into_iter().enumerate() {
            let screen = tmux.wait_for("the child's question", CHILD_TIMEOUT, |screen| {
                (screen.contains("Approval needed") && screen.contains(called))
                    || exit_line(screen).is_some()
            });
            assert!(screen.contains("child a1 · Write files asks:"), "{user:?}:\n{screen}");
            assert!(screen.contains(what), "{user:?}:\n{screen}");
            assert!(!work.path().join("two.txt").exists(), "{user:?}: it ran unasked");
            sleep(keel::tui::type_ahead::GRACE_PERIOD);
            tmux.send(&["n"]);
            // The child's next request carries the answer: its first, wait, and this one's.
            tmux.wait_for("the answer to reach the child", CHILD_TIMEOUT, |screen| {
                server.child("WRITER").len() > 3 + answered || exit_line(screen).is_some()
            });
        }
        tmux.wait_for("the parent's last words", CHILD_TIMEOUT, |screen| {
            screen.contains("The writer is done.")
        });
        let answers = writers_answers(&server);
        assert_eq!(answers.get(2..), Some(&[DECLINED.to_owned(), DECLINED.to_owned()][..]));
        assert!(!work.path().join("two.txt").exists(), "{user:?}");
        assert!(!work.path().join("three.txt").exists(), "{user:?}");
        tmux.quit();
    }
}
