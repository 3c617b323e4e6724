//! The events after PreToolUse, in a live agent: PostToolUse feedback, UserPromptSubmit and
//! SessionStart context, Stop and SubagentStop hooks that keep a turn going, TaskCompleted refusals,
//! PreCompact, and hooks of one event run in parallel.

use super::hooks::{
    Run, Scripts, WIRES, config, hook_events, hooks, one, result_outcome, save_stdin,
};
use crate::support::agent::{Wire, latest, start, until_result, wait_for};
use crate::support::llm::{Step, text, tool};
use keel::agent::{AgentConfig, AgentEvent, ApprovalMode, Command, Entry};
use keel::agent::{Sessions, TurnOutcome};
use keel::hooks::{Event, Outcome};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn post_tool_use_feedback_and_context_go_with_the_result_of_a_call_that_ran() {
    let scripts = Scripts::new();
    let lint =
        scripts.script("lint.sh", "cat > /dev/null\necho 'line 3: unused import' >&2\nexit 2");
    let note = scripts.script(
        "note.sh",
        r#"jq -c '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("saw: " + .tool_response.output)}}'"#,
    );
    let config_text = format!(
        "{}{}",
        one("PostToolUse", Some("Write"), &lint, None),
        one("PostToolUse", Some("Bash"), &note, None)
    );
    for wire in WIRES {
        let work = tempfile::tempdir().unwrap();
        let steps = vec![
            tool("write_file", json!({"path": "a.py", "content": "import os\n"})),
            tool("bash", json!({"command": "echo hello"})),
            text("done"),
        ];
        let hooks = hooks(work.path(), &config_text, false);
        let mut run = Run::start_in(work, steps, wire, config(hooks)).await;
        run.turn("go").await;
        assert_eq!(run.file("a.py").as_deref(), Some("import os\n"), "the call ran");
        let wire_text = run.wire().await;
        assert!(
            wire_text.contains(
                r#"<hook-feedback event=\"PostToolUse\">line 3: unused import</hook-feedback>"#
            ),
            "{wire:?}: {wire_text}"
        );
        assert!(
            wire_text.contains(r#"<hook-context event=\"PostToolUse\">saw: Exit code 0"#),
            "{wire:?}: {wire_text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn user_prompt_submit_adds_context_or_keeps_the_prompt_from_the_model() {
    let scripts = Scripts::new();
    let branch = scripts.script("branch.sh", "cat > /dev/null\necho 'on branch feature-x'");
    let work = tempfile::tempdir().unwrap();
    let hooks_ = hooks(work.path(), &one("UserPromptSubmit", None, &branch, None), false);
    let mut run = Run::start_in(work, vec![text("ok")], Wire::Anthropic, config(hooks_)).await;
    run.turn("what branch?").await;
    let first = &run.server.bodies().await[0];
    let sent = first["messages"][0].to_string();
    assert!(sent.contains("what branch?"), "{sent}");
    assert!(
        sent.contains(
            r#"<hook-context event=\"UserPromptSubmit\">on branch feature-x</hook-context>"#
        ),
        "{sent}"
    );

    let secret = scripts.script(
        "secret.sh",
        "grep -q 'password' && { echo 'the prompt holds a password' >&2; exit 2; }\nexit 0",
    );
    let work = tempfile::tempdir().unwrap();
    let hooks_ = hooks(work.path(), &one("UserPromptSubmit", None, &secret, None), false);
    let mut run = Run::start_in(work, vec![text("ok")], Wire::OpenAi, config(hooks_)).await;
    let events = run.turn("my password is hunter2").await;
    assert_eq!(run.requests().await, 0, "the model never saw it");
    let (outcome, error) = result_outcome(&events);
    assert_eq!(outcome, TurnOutcome::Error);
    assert!(error.unwrap().contains("a UserPromptSubmit hook blocked it"));
    assert!(latest(&mut run.handle).history.is_empty(), "the prompt is not in the history");
    assert_eq!(
        hook_events(&events),
        [(Event::UserPromptSubmit, Outcome::Blocked, "the prompt holds a password".to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn session_start_context_goes_with_the_first_prompt() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let start_hook = scripts
        .script("start.sh", &format!("{}\necho 'remember: run make check'", save_stdin(&seen)));
    let work = tempfile::tempdir().unwrap();
    let hooks_ =
        hooks(work.path(), &one("SessionStart", Some("startup"), &start_hook, None), false);
    let mut run = Run::start_in(work, vec![text("ok")], Wire::OpenAi, config(hooks_)).await;
    run.turn("hello").await;
    let sent = run.server.bodies().await[0]["messages"].to_string();
    assert!(sent.contains("remember: run make check"), "{sent}");
    let inputs = scripts.inputs("seen.jsonl");
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0]["source"], "startup");
    assert_eq!(inputs[0]["hook_event_name"], "SessionStart");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_keeps_the_turn_going_with_its_reason_on_both_wires() {
    for wire in WIRES {
        let scripts = Scripts::new();
        let seen = scripts.path("seen.jsonl");
        // Blocks the first stop, lets the second go.
        let verify = scripts.script(
            "verify.sh",
            &format!(
                "{}\nif [ ! -e '{1}' ]; then touch '{1}'; echo '{{\"decision\":\"block\",\"reason\":\"run the tests first\"}}'; fi",
                save_stdin(&seen),
                scripts.path("blocked-once").display()
            ),
        );
        let steps =
            vec![text("all done"), tool("bash", json!({"command": "true"})), text("tests pass")];
        let work = tempfile::tempdir().unwrap();
        let hooks_ = hooks(work.path(), &one("Stop", None, &verify, None), false);
        let mut run = Run::start_in(work, steps, wire, config(hooks_)).await;
        let events = run.turn("go").await;
        assert_eq!(run.requests().await, 3, "{wire:?}");
        let last = run.server.bodies().await[1]["messages"].to_string();
        assert!(
            last.contains(r#"<hook-feedback event=\"Stop\">run the tests first</hook-feedback>"#),
            "{wire:?}: {last}"
        );
        let active: Vec<bool> = scripts
            .inputs("seen.jsonl")
            .iter()
            .map(|i| i["stop_hook_active"].as_bool().unwrap())
            .collect();
        assert_eq!(active, [false, true]);
        assert_eq!(scripts.inputs("seen.jsonl")[0]["last_assistant_message"], "all done");
        assert_eq!(result_outcome(&events).0, TurnOutcome::Success);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_hooks_keep_a_turn_going_at_most_eight_times_in_a_row() {
    let scripts = Scripts::new();
    let never = scripts.script("never.sh", "cat > /dev/null\necho 'not yet' >&2\nexit 2");
    let steps: Vec<Step> = (0..12).map(|n| text(&format!("answer {n}"))).collect();
    let work = tempfile::tempdir().unwrap();
    let hooks_ = hooks(work.path(), &one("Stop", None, &never, None), false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks_)).await;
    let events = run.turn("go").await;
    assert_eq!(run.requests().await, 9, "the first answer and eight more");
    assert!(events.iter().any(|event| matches!(event,
        AgentEvent::Notice { text } if text.contains("kept this turn going 8 times in a row"))));
    assert_eq!(result_outcome(&events).0, TurnOutcome::Success);
}

fn item(id: &str, text: &str, status: &str) -> Value {
    json!({"id": id, "text": text, "status": status})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_completed_hook_refuses_a_completion_and_the_board_stays_as_it_was() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let check_tests = scripts.script(
        "tests.sh",
        &format!(
            "input=$(cat)\necho \"$input\" >> '{}'\necho \"$input\" | grep -q '\"task_id\":\"2\"' && {{ echo 'tests fail: 3 failures' >&2; exit 2; }}\nexit 0",
            seen.display()
        ),
    );
    let steps = vec![
        tool(
            "todo",
            json!({"items": [item("1", "Write it", "in_progress"), item("2", "Test it", "pending")]}),
        ),
        tool(
            "todo",
            json!({"items": [item("1", "Write it", "completed"), item("2", "Test it", "in_progress")]}),
        ),
        tool(
            "todo",
            json!({"items": [item("1", "Write it", "completed"), item("2", "Test it", "completed")]}),
        ),
        text("done"),
    ];
    for wire in WIRES {
        let work = tempfile::tempdir().unwrap();
        let hooks_ = hooks(work.path(), &one("TaskCompleted", None, &check_tests, None), false);
        let mut run = Run::start_in(work, steps.clone(), wire, config(hooks_)).await;
        run.turn("go").await;
        let wire_text = run.wire().await;
        assert!(
            wire_text.contains("Item 2: cannot be completed: tests fail: 3 failures"),
            "{wire:?}"
        );
        let board = latest(&mut run.handle).board;
        let statuses: Vec<&str> = board.items().iter().map(|item| item.status.as_str()).collect();
        assert_eq!(
            statuses,
            ["completed", "in_progress"],
            "{wire:?}: the refused update changed nothing"
        );
    }
    let inputs = scripts.inputs("seen.jsonl");
    assert_eq!(inputs[0]["task_id"], "1");
    assert_eq!(inputs[0]["task_subject"], "Write it");
    assert_eq!(inputs[0]["item"]["text"], "Write it");
    assert_eq!(inputs[0]["board"][1]["status"], "in_progress");
    assert!(inputs[0]["board_text"].as_str().unwrap().contains("[x] #1: Write it"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_completed_hook_that_times_out_refuses_the_completion() {
    let scripts = Scripts::new();
    let slow = scripts.script("slow.sh", "sleep 30");
    let work = tempfile::tempdir().unwrap();
    let steps =
        vec![tool("todo", json!({"items": [item("1", "Ship it", "completed")]})), text("done")];
    let hooks_ = hooks(work.path(), &one("TaskCompleted", None, &slow, Some(0.5)), false);
    let mut run = Run::start_in(work, steps, Wire::OpenAi, config(hooks_)).await;
    run.turn("go").await;
    assert!(run.wire().await.contains(&format!(
        "Item 1: cannot be completed: the hook `{slow}` timed out after 500 ms"
    )));
    assert!(latest(&mut run.handle).board.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn pre_compact_hooks_run_before_a_compaction_and_are_told_what_started_it() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "notes\n".repeat(200)).unwrap();
    let mut steps: Vec<Step> =
        (0..6).map(|_| tool("read_file", json!({"path": "notes.txt"}))).collect();
    steps.push(text("done"));
    let hooks_ =
        hooks(work.path(), &one("PreCompact", Some("manual"), &save_stdin(&seen), None), false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks_)).await;
    run.turn("read it").await;
    run.handle.commands.send(Command::Compact).unwrap();
    wait_for(&mut run.handle, |snapshot| {
        snapshot
            .transcript
            .iter()
            .any(|entry| matches!(entry, Entry::Notice { text } if text.contains("ompact")))
    })
    .await;
    let inputs = scripts.inputs("seen.jsonl");
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0]["trigger"], "manual");
    assert_eq!(inputs[0]["hook_event_name"], "PreCompact");
}

#[tokio::test(flavor = "multi_thread")]
async fn hooks_of_one_event_run_in_parallel() {
    let scripts = Scripts::new();
    let times = scripts.path("times");
    let body = format!(
        "cat > /dev/null\necho \"start $(date +%s%N)\" >> '{0}'\nsleep 1\necho \"end $(date +%s%N)\" >> '{0}'",
        times.display()
    );
    let (a, b) = (scripts.script("a.sh", &body), scripts.script("b.sh", &body));
    let config_text =
        format!("{}{}", one("PreToolUse", None, &a, None), one("PreToolUse", None, &b, None));
    let work = tempfile::tempdir().unwrap();
    let steps = vec![tool("bash", json!({"command": "true"})), text("done")];
    let hooks_ = hooks(work.path(), &config_text, false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks_)).await;
    run.turn("go").await;
    let text = std::fs::read_to_string(&times).unwrap();
    let at = |kind: &str| -> Vec<u128> {
        text.lines().filter_map(|line| line.strip_prefix(kind)?.trim().parse().ok()).collect()
    };
    let (starts, ends) = (at("start"), at("end"));
    assert_eq!((starts.len(), ends.len()), (2, 2), "{text}");
    assert!(starts.iter().max() < ends.iter().min(), "each started before the other ended: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagent_stop_hook_keeps_a_child_going_and_the_parents_stop_hooks_are_its_own() {
    use crate::support::llm::family::{FamilyLlm, child};
    for wire in WIRES {
        let scripts = Scripts::new();
        let seen = scripts.path("subagent.jsonl");
        let parent_seen = scripts.path("stop.jsonl");
        let verify = scripts.script(
            "verify.sh",
            &format!(
                "{}\nif [ ! -e '{1}' ]; then touch '{1}'; echo 'look in src too' >&2; exit 2; fi",
                save_stdin(&seen),
                scripts.path("blocked-once").display()
            ),
        );
        let watch = scripts.script("watch.sh", &save_stdin(&parent_seen));
        let config_text = format!(
            "{}{}",
            one("SubagentStop", None, &verify, None),
            one("Stop", None, &watch, None)
        );
        let parent =
            vec![tool("task", json!({"prompt": "FINDER: find the needle"})), text("Found.")];
        let finder = child("FINDER", vec![text("not found"), text("found it in src")]);
        let server = FamilyLlm::start(parent, vec![finder]).await;
        let work = tempfile::tempdir().unwrap();
        let hooks_ = hooks(work.path(), &config_text, false);
        let config = AgentConfig { approval: ApprovalMode::Auto, ..config(hooks_) };
        let mut handle = start(&server, wire, work.path(), config, Sessions::Off);
        handle.commands.send(Command::Submit("Find it.".into())).unwrap();
        let events = until_result(&mut handle).await;
        assert_eq!(result_outcome(&events).0, TurnOutcome::Success, "{wire:?}");
        // The child's turn would have ended; its SubagentStop hook kept it going with its reason.
        let requests = server.child("FINDER");
        assert_eq!(requests.len(), 2, "{wire:?}");
        let second = requests[1]["messages"].to_string();
        assert!(
            second.contains(
                r#"<hook-feedback event=\"SubagentStop\">look in src too</hook-feedback>"#
            ),
            "{wire:?}: {second}"
        );
        let child_stops: Vec<Value> = scripts.inputs("subagent.jsonl");
        assert_eq!(child_stops.len(), 2, "{wire:?}");
        assert_eq!(child_stops[0]["hook_event_name"], "SubagentStop");
        assert_eq!(child_stops[1]["last_assistant_message"], "found it in src");
        // The parent's own turn end is a Stop, heard once: the child's ends were not.
        let stops = scripts.inputs("stop.jsonl");
        assert_eq!(stops.len(), 1, "{wire:?}: {stops:?}");
        assert_eq!(stops[0]["last_assistant_message"], "Found.");
        // The parent read the child's last word.
        let parent_last = server.parent().last().unwrap().to_string();
        assert!(parent_last.contains("found it in src"), "{wire:?}: {parent_last}");
    }
}
