//! PreToolUse hooks that answer more than yes or no: an `updatedInput` (keel's names or Claude
//! Code's) is what the approval box shows, what runs and what the model reads; an `ask` makes keel
//! ask; and a hook that never exits, crashes, is missing or exits 1.

use super::hooks::{Run, Scripts, config, hook_events, hooks, one};
use crate::support::agent::{Wire, latest};
use crate::support::llm::{text, tool};
use crate::support::processes::{is_dead, read_pids};
use keel::agent::{AgentConfig, AgentEvent, ApprovalMode, Command, Decision, Entry};
use keel::hooks::{Event, Outcome};
use serde_json::json;
use std::time::{Duration, Instant};

/// Runs a turn, answering every approval request `Once`; returns the details the approval box
/// showed, and the turn's events.
async fn answering(run: &mut Run) -> (Vec<String>, Vec<AgentEvent>) {
    run.handle.commands.send(Command::Submit("go".into())).unwrap();
    let mut shown = Vec::new();
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the turn never ended");
        tokio::select! {
            Some(snapshot) = run.handle.snapshots.recv() => {
                if let Some(request) = &snapshot.pending_approval
                    && !shown.contains(&request.detail)
                {
                    shown.push(request.detail.clone());
                    let id = request.id.clone();
                    run.handle.commands.send(Command::Approve { id, decision: Decision::Once }).unwrap();
                }
            }
            Some(event) = run.handle.events.recv() => {
                let done = matches!(event, AgentEvent::Result { .. });
                events.push(event);
                if done {
                    return (shown, events);
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_updated_input_is_what_the_approval_box_shows_what_runs_and_what_the_model_reads() {
    let scripts = Scripts::new();
    let rewrite = scripts.script(
        "rewrite.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo changed > out.txt"}}}'"#,
    );
    let work = tempfile::tempdir().unwrap();
    let steps = vec![tool("bash", json!({"command": "echo original > out.txt"})), text("done")];
    let hooks = hooks(work.path(), &one("PreToolUse", Some("Bash"), &rewrite, None), true);
    let config = AgentConfig { approval: ApprovalMode::Ask, ..config(hooks) };
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config).await;
    let (shown, events) = answering(&mut run).await;

    assert_eq!(shown, ["echo changed > out.txt"], "the person approves what runs");
    assert_eq!(run.file("out.txt").as_deref(), Some("changed\n"));
    assert!(events.iter().any(|event| matches!(event,
        AgentEvent::Notice { text } if text.contains("changed the call; it runs as: bash echo changed > out.txt"))));
    let wire = run.wire().await;
    assert!(
        wire.contains("A hook changed this call's input before it ran; it ran with:"),
        "{wire}"
    );
    assert!(wire.contains(r#"echo changed > out.txt"#));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_code_style_updated_input_comes_back_in_keels_names() {
    let scripts = Scripts::new();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    // A Claude Code hook: it reads the input and answers with its own field names (jq).
    let redirect = scripts.script(
        "redirect.sh",
        &format!(
            r#"jq -c '{{hookSpecificOutput: {{hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input | .file_path = "{}/elsewhere.txt")}}}}'"#,
            root.display()
        ),
    );
    let steps = vec![tool("write_file", json!({"path": "b.txt", "content": "x\n"})), text("done")];
    let hooks = hooks(work.path(), &one("PreToolUse", Some("Write"), &redirect, None), true);
    // Ask mode: the hook's allow spares the person the question.
    let config = AgentConfig { approval: ApprovalMode::Ask, ..config(hooks) };
    let mut run = Run::start_in(work, steps, Wire::OpenAi, config).await;
    let (shown, _) = answering(&mut run).await;
    assert!(shown.is_empty(), "allowed by the hook, not asked: {shown:?}");
    assert_eq!(run.file("b.txt"), None);
    assert_eq!(run.file("elsewhere.txt").as_deref(), Some("x\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ask_makes_keel_ask_even_in_auto_and_with_no_one_to_ask_refuses() {
    let scripts = Scripts::new();
    let ask = scripts.script(
        "ask.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"a deploy"}}'"#,
    );
    for interactive in [true, false] {
        let work = tempfile::tempdir().unwrap();
        let steps = vec![tool("bash", json!({"command": "echo ran > ran.txt"})), text("done")];
        let hooks = hooks(work.path(), &one("PreToolUse", None, &ask, None), interactive);
        let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks)).await;
        let (shown, _) = answering(&mut run).await;
        if interactive {
            assert_eq!(shown, ["echo ran > ran.txt"]);
            assert_eq!(run.file("ran.txt").as_deref(), Some("ran\n"));
        } else {
            assert!(shown.is_empty());
            assert_eq!(run.file("ran.txt"), None);
            let wire = run.wire().await;
            assert!(
                wire.contains("asked for the person's approval (a deploy), and no one is here"),
                "{wire}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hook_that_never_exits_is_killed_at_its_timeout_with_what_it_started_and_blocks() {
    let scripts = Scripts::new();
    let pids = scripts.path("pids");
    let slow = scripts.script(
        "slow.sh",
        &format!("echo $$ >> '{0}'\nsleep 300 &\necho $! >> '{0}'\nwait", pids.display()),
    );
    let work = tempfile::tempdir().unwrap();
    let steps = vec![tool("bash", json!({"command": "echo ran > ran.txt"})), text("done")];
    let hooks = hooks(work.path(), &one("PreToolUse", None, &slow, Some(1.0)), false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks)).await;
    let began = Instant::now();
    let events = run.turn("go").await;
    assert!(began.elapsed() < Duration::from_secs(15), "took {:?}", began.elapsed());
    assert_eq!(run.file("ran.txt"), None);
    let why = format!("the hook `{slow}` timed out after 1 s");
    assert_eq!(hook_events(&events), [(Event::PreToolUse, Outcome::Blocked, why.clone())]);
    assert!(run.wire().await.contains(&format!("Blocked by a PreToolUse hook: {why}")));
    let pids = read_pids(&pids);
    assert_eq!(pids.len(), 2, "the hook and its child wrote their pids");
    for pid in pids {
        assert!(is_dead(pid), "{pid} outlived its hook's timeout");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_or_missing_hook_blocks_and_one_that_exits_1_lets_the_call_go_on() {
    let scripts = Scripts::new();
    let crash = scripts.script("crash.sh", "kill -9 $$");
    let missing = scripts.path("missing.sh").to_string_lossy().into_owned();
    let fails = scripts.script("fails.sh", "echo 'lint server down' >&2\nexit 1");
    for (command, ran, outcome, said) in [
        (&crash, false, Outcome::Blocked, format!("the hook `{crash}` was killed by signal 9")),
        (
            &missing,
            false,
            Outcome::Blocked,
            format!("the hook `{missing}` could not start (exit 127"),
        ),
        (&fails, true, Outcome::Failed, "exit 1: lint server down".to_owned()),
    ] {
        let work = tempfile::tempdir().unwrap();
        let steps = vec![tool("bash", json!({"command": "echo ran > ran.txt"})), text("done")];
        let hooks = hooks(work.path(), &one("PreToolUse", None, command, None), false);
        let mut run = Run::start_in(work, steps, Wire::OpenAi, config(hooks)).await;
        let events = run.turn("go").await;
        assert_eq!(run.file("ran.txt").is_some(), ran, "{command}");
        let told = hook_events(&events);
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].1, outcome, "{command}");
        assert!(told[0].2.starts_with(&said), "{command}: {}", told[0].2);
        if outcome == Outcome::Failed {
            let line = latest(&mut run.handle).transcript.into_iter().any(|entry| {
                matches!(entry, Entry::Error { text } if text == format!("PreToolUse hook `{fails}` failed: exit 1: lint server down"))
            });
            assert!(line, "the person sees a hook that failed");
        }
    }
}
