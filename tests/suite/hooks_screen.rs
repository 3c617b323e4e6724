//! The hooks on screen: `/hooks` lists each hook, whose file it is in, whether it runs and what
//! ran; `/hooks trust` and `/hooks forget` go to the agent; a hook that blocked or failed is a
//! line in the conversation.

use crate::support::tui::{app_with, draw, press, screen_text, sent, type_text};
use keel::agent::{AgentEvent, Command, Entry, Snapshot};
use keel::hooks::trust::Trust;
use keel::hooks::{Event, HookLine, HooksCommand, HooksView, Origin, Outcome, Place, RanLine};
use ratatui::crossterm::event::KeyCode;
use std::sync::Arc;
use std::time::Duration;

const SIZE: (u16, u16) = (110, 22);

fn snapshot() -> Snapshot {
    let hook = |event, matcher: Option<&str>, command: &str, origin, trust| HookLine {
        event,
        matcher: matcher.map(str::to_owned),
        command: command.into(),
        timeout: Duration::from_secs(60),
        origin,
        trust,
        place: match origin {
            Origin::Workspace => Place::Sandbox,
            Origin::Person => Place::Person,
        },
    };
    let view = HooksView {
        hooks: vec![
            hook(
                Event::PreToolUse,
                Some("Bash"),
                "~/bin/no-force-push",
                Origin::Person,
                Trust::Own,
            ),
            hook(Event::Stop, None, "make check", Origin::Workspace, Trust::Trusted),
            hook(
                Event::PostToolUse,
                Some("Write|Edit"),
                "./fmt.sh",
                Origin::Workspace,
                Trust::Changed,
            ),
        ],
        ran: vec![RanLine {
            event: Event::PreToolUse,
            command: "~/bin/no-force-push".into(),
            outcome: Outcome::Blocked,
            said: "force-pushing main is not allowed".into(),
            took: Duration::from_millis(14),
        }],
    };
    Snapshot { seq: 1, hooks: Arc::new(view), ..Snapshot::default() }
}

#[test]
fn slash_hooks_lists_each_hook_whether_it_runs_and_what_ran() {
    let (mut app, mut rx) = app_with(snapshot());
    type_text(&mut app, "/hooks");
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty(), "listing is the screen's own");
    insta::assert_snapshot!(screen_text(&draw(&mut app, SIZE)));
}

#[test]
fn slash_hooks_trust_and_forget_go_to_the_agent_and_anything_else_is_explained() {
    let (mut app, mut rx) = app_with(snapshot());
    type_text(&mut app, "/hooks trust");
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "/hooks forget");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        sent(&mut rx),
        [Command::Hooks(HooksCommand::Trust), Command::Hooks(HooksCommand::Forget)]
    );
    type_text(&mut app, "/hooks trsut");
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty());
    let screen = screen_text(&draw(&mut app, SIZE));
    assert!(screen.contains("/hooks trsut: not a hooks command"), "{screen}");
}

#[test]
fn a_hook_that_blocked_or_failed_is_a_line_and_one_that_let_things_go_is_not() {
    let hook = |outcome, text: &str| AgentEvent::Hook {
        event: Event::PreToolUse,
        command: "./check.sh".into(),
        outcome,
        text: text.into(),
        tool_use_id: Some("t1".into()),
        duration_ms: 3,
    };
    assert_eq!(
        hook(Outcome::Blocked, "not on main").entry(),
        Some(Entry::Notice { text: "PreToolUse hook `./check.sh` blocked: not on main".into() })
    );
    assert_eq!(
        hook(Outcome::Failed, "exit 1: boom").entry(),
        Some(Entry::Error { text: "PreToolUse hook `./check.sh` failed: exit 1: boom".into() })
    );
    assert_eq!(hook(Outcome::Ok, "").entry(), None);
    let json = serde_json::to_value(hook(Outcome::Blocked, "no")).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "hook", "event": "PreToolUse", "command": "./check.sh",
            "outcome": "blocked", "text": "no", "tool_use_id": "t1", "duration_ms": 3})
    );
}
