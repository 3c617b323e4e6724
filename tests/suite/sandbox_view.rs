//! Where a command runs, as the person sees it: the approval box and the status bar name the
//! sandbox (`sandbox: workspace · no network`), and a sandbox that cannot be set up stays in the
//! status bar, even on a narrow screen; `/sandbox` shows where commands run and what of the
//! environment they do not get, as `keel sandbox` does.

use keel::agent::{Activity, ApprovalRequest, Snapshot};
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::sync::Arc;

fn screen(snapshot: Snapshot, width: u16, height: u16) -> Vec<String> {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>().trim_end().into())
        .collect()
}

fn with_sandbox(label: &str) -> Snapshot {
    Snapshot {
        seq: 1,
        provider: Arc::from("anthropic"),
        model: Arc::from("claude-sonnet-4-5"),
        sandbox: Some(Arc::from(label)),
        ..Snapshot::default()
    }
}

#[test]
fn the_approval_box_says_where_the_command_runs() {
    let snapshot = Snapshot {
        activity: Activity::AwaitingApproval,
        pending_approval: Some(Arc::new(ApprovalRequest {
            id: "call_1".into(),
            tool: "bash".into(),
            asking: keel::agent::Asking::Command,
            detail: "cargo test".into(),
            diff: None,
            always: Some("exactly this command line, for the rest of the session".into()),
            sandbox: Some("sandbox: workspace · no network".into()),
            agent: None,
            check: None,
        })),
        ..with_sandbox("sandbox: workspace · no network")
    };
    let rows = screen(snapshot, 80, 24);
    assert!(rows.iter().any(|row| row.contains("│ sandbox: workspace · no network")), "{rows:#?}");
    insta::assert_snapshot!(rows.join("\n"));
}

#[test]
fn the_status_bar_names_the_sandbox_and_keeps_a_missing_one_in_view() {
    let wide = screen(with_sandbox("sandbox: workspace · no network"), 120, 6);
    let bar = wide.last().unwrap();
    assert!(bar.contains("sandbox: workspace · no network"), "{bar}");
    // Short of room, the sandbox's name goes first; a missing sandbox stays.
    let narrow = screen(with_sandbox("sandbox: workspace · no network"), 50, 6);
    assert!(!narrow.last().unwrap().contains("sandbox"), "{}", narrow.last().unwrap());
    let missing = screen(with_sandbox("sandbox: unavailable"), 50, 6);
    assert!(
        missing.last().unwrap().contains("sandbox: unavailable"),
        "{}",
        missing.last().unwrap()
    );
    insta::assert_snapshot!(format!("{bar}\n{}", missing.last().unwrap()));
}

#[test]
fn without_a_sandbox_the_approval_box_says_the_command_would_run_unconfined() {
    let words = "no sandbox — allowed, this command runs unconfined, as you: it can read and \
                 change anything you can and reach the network (cannot sandbox commands: \
                 `bwrap` not found)";
    let snapshot = Snapshot {
        activity: Activity::AwaitingApproval,
        pending_approval: Some(Arc::new(ApprovalRequest {
            id: "call_1".into(),
            tool: "bash".into(),
            asking: keel::agent::Asking::UnconfinedCommand,
            detail: "make install".into(),
            diff: None,
            always: None,
            sandbox: Some(words.into()),
            agent: None,
            check: None,
        })),
        ..with_sandbox("sandbox: unavailable")
    };
    let rows = screen(snapshot, 100, 24).join("\n");
    assert!(rows.contains("bash wants to run:"), "{rows}");
    assert!(rows.contains("no sandbox — allowed, this command runs unconfined, as you"), "{rows}");
    assert!(rows.contains("a: not offered — without a sandbox every command is asked about"));
}

#[test]
fn slash_sandbox_asks_the_agent_for_the_report() {
    let (mut app, mut rx) = crate::support::tui::new_app(TuiOptions::default());
    app.apply_snapshot(with_sandbox("sandbox: workspace · no network"));
    crate::support::tui::type_text(&mut app, "/sandbox");
    app.handle_key(crate::support::tui::key(ratatui::crossterm::event::KeyCode::Enter));
    assert_eq!(crate::support::tui::sent(&mut rx), [keel::agent::Command::ShowSandbox]);
}

#[tokio::test]
async fn slash_sandbox_says_where_commands_run_and_what_they_do_not_get() {
    use keel::agent::{self, AgentConfig, Command, Entry, Sessions};
    use keel::runtime::Workspace;
    use keel::runtime::sandbox::{Availability, Policy, Sandbox};
    use keel::tools::Tools;
    let dir = tempfile::tempdir().unwrap();
    let missing = Sandbox {
        policy: Policy { writable_roots: vec!["/srv/data".into()], ..Policy::default() },
        availability: Availability::Missing("cannot sandbox commands: no bwrap".into()),
        ..Sandbox::off()
    };
    let tools = Tools::new(Workspace::new(dir.path()).unwrap()).with_sandbox(missing);
    let mut handle = agent::spawn_with_session(AgentConfig::default(), None, tools, Sessions::Off);
    handle.commands.send(Command::ShowSandbox).unwrap();
    let said = |snapshot: &Snapshot| {
        snapshot.transcript.iter().find_map(|entry| match entry {
            Entry::Notice { text } if text.starts_with("Commands: ") => Some(text.clone()),
            _ => None,
        })
    };
    let snapshot = crate::support::agent::wait_for(&mut handle, |s| said(s).is_some()).await;
    let report = said(&snapshot).unwrap();
    for line in [
        "Commands: sandbox: unavailable.",
        "cannot sandbox commands: no bwrap",
        "They may also write: /srv/data",
        "Withheld from commands and MCP servers (names only):",
        "\nHanded on: ",
        "only the variables on keel's allow-list",
    ] {
        assert!(report.contains(line), "{line}:\n{report}");
    }
    handle.commands.send(Command::Quit).unwrap();
}
