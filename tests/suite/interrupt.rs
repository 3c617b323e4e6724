//! Stopping a turn as people coming from Claude Code and Codex expect: Esc (or Ctrl+C) stops it
//! and hands the prompts queued meanwhile back to the composer, to edit or drop, instead of
//! sending them at once; Ctrl+C twice on an idle prompt quits.

use keel::agent::{
    self, Activity, AgentConfig, AgentEvent, Command, HandedBack, Snapshot, TurnOutcome,
};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tui::{App, TuiOptions};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::unbounded_channel;

const WAIT: Duration = Duration::from_secs(30);

/// The first snapshot for which `done` holds.
async fn until(handle: &mut agent::AgentHandle, done: impl Fn(&Snapshot) -> bool) -> Snapshot {
    loop {
        let snapshot = handle.snapshots.recv().await.expect("the agent stopped");
        if done(&snapshot) {
            return snapshot;
        }
    }
}

#[tokio::test]
async fn an_interrupted_turn_hands_the_queue_back_unsent() {
    let dir = tempfile::tempdir().unwrap();
    let steps = json!({"prompt": "go", "finished": "finished", "steps": [{"text": "slow answer", "tools": []}]});
    // An answer that takes far longer than the test: only the interrupt ends the turn.
    let provider =
        ScriptedProvider::from_json(&steps.to_string(), Duration::from_secs(600)).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle =
        agent::spawn(AgentConfig::default(), Some(Provider::Scripted(provider)), tools);
    handle.commands.send(Command::Submit("first".into())).unwrap();
    tokio::time::timeout(WAIT, until(&mut handle, |s: &Snapshot| s.activity == Activity::Thinking))
        .await
        .unwrap();
    handle.commands.send(Command::Submit("second".into())).unwrap();
    handle.commands.send(Command::Submit("third".into())).unwrap();
    tokio::time::timeout(WAIT, until(&mut handle, |s: &Snapshot| s.queued.len() == 2))
        .await
        .unwrap();
    handle.commands.send(Command::Cancel).unwrap();

    let handed =
        tokio::time::timeout(WAIT, until(&mut handle, |s: &Snapshot| s.handed_back.count > 0))
            .await
            .expect("the queue was never handed back");
    let prompts: Vec<_> = handed.handed_back.prompts.iter().cloned().collect();
    assert_eq!(prompts, ["second", "third"]);
    assert!(handed.queued.is_empty());
    let result = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(AgentEvent::Result { outcome, .. }) = handle.events.recv().await {
                return outcome;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(result, TurnOutcome::Interrupted);
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, &mut handle.task).await.unwrap().unwrap();
    let last = std::iter::from_fn(|| handle.snapshots.try_recv().ok()).last().unwrap_or(handed);
    let users = last.history.iter().filter(|m| m.role == keel::message::Role::User).count();
    assert_eq!(users, 1, "only the first prompt reached the model");
}

fn ctrl_c() -> KeyEvent {
    KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
}

#[test]
fn ctrl_c_interrupts_a_running_turn_and_twice_on_an_idle_prompt_quits() {
    let (tx, mut rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(Snapshot { activity: Activity::Thinking, ..Snapshot::default() });
    let now = Instant::now();
    app.handle_key_at(ctrl_c(), now);
    app.handle_key_at(ctrl_c(), now);
    assert!(!app.should_quit(), "Ctrl+C on a running turn never quits");
    assert_eq!(rx.try_recv().unwrap(), Command::Cancel);
    assert_eq!(rx.try_recv().unwrap(), Command::Cancel);

    app.apply_snapshot(Snapshot { activity: Activity::AwaitingApproval, ..Snapshot::default() });
    app.handle_key_at(ctrl_c(), now);
    assert_eq!(rx.try_recv().unwrap(), Command::Cancel, "an approval is a turn too");

    app.apply_snapshot(Snapshot::default());
    app.handle_key_at(ctrl_c(), now);
    assert!(!app.should_quit());
    app.handle_key_at(ctrl_c(), now + Duration::from_millis(300));
    assert!(app.should_quit());
    assert_eq!(rx.try_recv().unwrap(), Command::Quit);
}

#[test]
fn handed_back_prompts_land_in_the_composer_once() {
    let (tx, mut rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    for c in "and then".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let big = "x\n".repeat(5_000);
    let handed =
        HandedBack { count: 1, prompts: ["second".to_owned(), big.clone()].into_iter().collect() };
    let snapshot = Snapshot { handed_back: handed, ..Snapshot::default() };
    app.apply_snapshot(snapshot.clone());
    app.apply_snapshot(snapshot);
    let expected = format!("second\n{big}\nand then");
    assert!(app.composer_text() == expected, "the queued prompts come back whole, first");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(rx.try_recv().unwrap() == Command::Submit(expected), "and are sent whole");
}
