//! `/resume` opens a picker of this workspace's saved sessions, the one written last first, and
//! Enter switches to the chosen one: the agent lists the same sessions `keel sessions` does,
//! and switching reopens the chosen log (its lock taken) before letting the open one go. The
//! picker's keys are guarded like the approval box's: typing through its arrival goes on to the
//! composer. End to end, in tmux: two sessions saved by `keel -p`, the newer one continued, the
//! older one switched to with its token counts.

use crate::support::agent::wait_for;
use crate::support::tmux::KeelPane;
use crate::support::tui::{draw, screen_text, sent};
use crate::support::{bin, llm};
use keel::agent::journal::{Record, SessionInfo, SessionStore};
use keel::agent::{self, Activity, AgentConfig, Command, Entry, SessionList, Sessions, Snapshot};
use keel::message::{ContentBlock, Message, Usage};
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tui::type_ahead::{BURST_GAP, GRACE_PERIOD};
use keel::tui::{App, OverlayKind, TuiOptions};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const WAIT: Duration = Duration::from_secs(30);
/// 2026-12-02 09:00:00 UTC.
const NINE: u64 = 1_796_202_000;
const MINUTE: u64 = 60;

fn info(id: &str, written: u64, prompt: &str, (done, total): (usize, usize)) -> SessionInfo {
    SessionInfo {
        id: id.into(),
        started_at: written - 10 * MINUTE,
        modified: UNIX_EPOCH + Duration::from_secs(written),
        first_prompt: prompt.into(),
        done,
        total,
        held_by: None,
    }
}

/// The agent's answer to `ListSessions`: three sessions, the middle one open.
fn listed() -> Snapshot {
    let sessions = vec![
        info("1764669000-cccc", NINE + 50 * MINUTE, "Write the release notes", (0, 0)),
        info("1764667800-bbbb", NINE + 30 * MINUTE, "Fix the parser\nand its tests", (2, 5)),
        SessionInfo {
            held_by: Some(4242),
            ..info("1764666000-aaaa", NINE, "Add \u{1b}[2Jcolour\rto the logs", (4, 4))
        },
    ];
    let current = Some("1764667800-bbbb".to_owned());
    let list = SessionList { listed: 1, sessions, current, error: None };
    Snapshot { seq: 2, sessions: Some(Arc::new(list)), ..Snapshot::default() }
}

fn key_at(app: &mut App, code: KeyCode, at: Instant) {
    app.handle_key_at(KeyEvent::new(code, KeyModifiers::NONE), at);
}

fn type_at(app: &mut App, text: &str, at: Instant) {
    text.chars().for_each(|c| key_at(app, KeyCode::Char(c), at));
}

fn screen(app: &mut App, size: (u16, u16)) -> String {
    screen_text(&draw(app, size))
}

/// `/resume` typed and sent at `at`: the picker is open and the list asked for.
fn open_picker(at: Instant) -> (App, UnboundedReceiver<Command>) {
    let (tx, mut rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(Snapshot { seq: 1, ..Snapshot::default() });
    type_at(&mut app, "/resume", at);
    key_at(&mut app, KeyCode::Enter, at);
    assert_eq!(sent(&mut rx), [Command::ListSessions]);
    assert_eq!(app.overlay(), Some(OverlayKind::Sessions));
    (app, rx)
}

#[test]
fn resume_lists_the_sessions_newest_first_and_enter_switches_to_the_chosen_one() {
    let start = Instant::now();
    let (mut app, mut rx) = open_picker(start);
    let waiting = screen(&mut app, (80, 24));
    assert!(waiting.contains("Reading the saved sessions"), "{waiting}");

    // The list arrives while the person is still typing: the keys go on to the composer.
    let arrived = start + Duration::from_millis(200);
    app.apply_snapshot_at(listed(), arrived);
    type_at(&mut app, "jj", arrived + Duration::from_millis(100));
    assert_eq!(app.composer_text(), "jj", "typing through the list's arrival chose nothing");
    assert!(sent(&mut rx).is_empty());
    assert!(screen(&mut app, (80, 24)).contains("typing goes to the composer"));

    // After a pause the picker's keys work.
    let settled = arrived + Duration::from_millis(100) + BURST_GAP + GRACE_PERIOD;
    assert!(app.on_tick(settled), "the pause redraws the picker");
    let shown = screen(&mut app, (80, 24));
    insta::assert_snapshot!("session_picker_80x24", shown);
    let rows: Vec<&str> = shown.lines().filter(|row| row.contains("2026-12-02")).collect();
    assert_eq!(rows.len(), 3, "{shown}");
    assert!(rows[0].contains("› 2026-12-02 09:50") && rows[0].contains("Write the release notes"));
    assert!(rows[1].contains("2/5  Fix the parser …") && rows[1].contains("(open)"), "{shown}");
    // A first prompt is shown as the approval box would show it.
    assert!(rows[2].contains("Add ^[[2Jcolour␍to the logs"), "{shown}");
    // A session another keel holds says so, and which process.
    assert!(rows[2].contains("(open in keel 4242)"), "{shown}");

    key_at(&mut app, KeyCode::Down, settled);
    key_at(&mut app, KeyCode::Down, settled);
    key_at(&mut app, KeyCode::Up, settled);
    assert!(screen(&mut app, (80, 24)).contains("› 2026-12-02 09:30"));
    key_at(&mut app, KeyCode::Down, settled);
    key_at(&mut app, KeyCode::Enter, settled);
    assert_eq!(sent(&mut rx), [Command::Resume("1764666000-aaaa".into())]);
    assert_eq!(app.overlay(), None);
    assert_eq!(app.composer_text(), "jj", "the typing is still in the composer, whole");
}

#[test]
fn esc_closes_the_picker_and_a_narrow_screen_still_shows_the_list() {
    let start = Instant::now();
    let (mut app, mut rx) = open_picker(start);
    app.apply_snapshot_at(listed(), start);
    let settled = start + GRACE_PERIOD + BURST_GAP;
    app.on_tick(settled);
    let narrow = screen(&mut app, (40, 12));
    insta::assert_snapshot!("session_picker_40x12", narrow);
    assert!(narrow.contains("› 12-02 09:50  Write the"), "{narrow}");
    assert!(narrow.contains("12-02 09:30  Fix") && narrow.contains("(open)"), "{narrow}");
    key_at(&mut app, KeyCode::Esc, settled);
    assert_eq!(app.overlay(), None);
    assert!(sent(&mut rx).is_empty(), "Esc switched nothing");
}

#[test]
fn resume_during_a_turn_says_to_wait_and_opens_nothing() {
    let (tx, mut rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(Snapshot { seq: 1, activity: Activity::Thinking, ..Snapshot::default() });
    let now = Instant::now();
    type_at(&mut app, "/resume", now);
    key_at(&mut app, KeyCode::Enter, now);
    assert!(sent(&mut rx).is_empty());
    assert_eq!(app.overlay(), None);
    let text = screen(&mut app, (80, 24));
    assert!(text.contains("/resume switches sessions between turns"), "{text}");
}

// ---------------------------------------------------------------- the agent's side

/// A saved session whose log was last written at `written`, with one prompt and one answer.
fn saved(store: &SessionStore, prompt: &str, written: SystemTime) -> String {
    let mut log = store.create().unwrap();
    let answer = Message::assistant(vec![ContentBlock::Text { text: format!("Done: {prompt}") }]);
    let usage = Usage { input_tokens: 1_000, output_tokens: 100, ..Usage::default() };
    for record in [
        Record::Message { message: Message::user_text(prompt) },
        Record::Usage(usage),
        Record::Message { message: answer },
    ] {
        log.append(&record).unwrap();
    }
    let (id, path) = (log.id().to_owned(), log.path().to_owned());
    drop(log);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(written).unwrap();
    id
}

/// The conversation's last line when it is a notice or an error, else nothing.
fn last_notice(snapshot: &Snapshot) -> String {
    match snapshot.transcript.last() {
        Some(Entry::Notice { text } | Entry::Error { text }) => text.clone(),
        _ => String::new(),
    }
}

#[tokio::test]
async fn the_agent_lists_the_saved_sessions_and_switches_to_one_between_turns() {
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let hour_ago = SystemTime::now() - Duration::from_secs(60 * MINUTE);
    let older = saved(&store, "Fix the parser", hour_ago);
    let newer = saved(&store, "Write the docs", hour_ago + Duration::from_secs(MINUTE));

    let (log, restored) = store.open(&newer).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let sessions = Sessions::Resume(store.clone(), log, restored);
    let mut handle = agent::spawn_with_session(AgentConfig::default(), None, tools, sessions);

    handle.commands.send(Command::ListSessions).unwrap();
    let snapshot = wait_for(&mut handle, |snapshot| snapshot.sessions.is_some()).await;
    let list = snapshot.sessions.as_deref().unwrap();
    let ids: Vec<&str> = list.sessions.iter().map(|info| info.id.as_str()).collect();
    assert_eq!(ids, [newer.as_str(), older.as_str()], "the one written last first");
    assert_eq!(list.current.as_deref(), Some(newer.as_str()));
    assert_eq!(list.sessions[1].first_prompt, "Fix the parser");

    // The open one: nothing changes.
    handle.commands.send(Command::Resume(newer.clone())).unwrap();
    let snapshot =
        wait_for(&mut handle, |snapshot| last_notice(snapshot).contains("is the one open")).await;
    assert_eq!(snapshot.history.len(), 2);

    handle.commands.send(Command::Resume(older.clone())).unwrap();
    let switched = format!("Switched to session {older}.");
    let snapshot = wait_for(&mut handle, |snapshot| last_notice(snapshot) == switched).await;
    assert_eq!(snapshot.history[0], Message::user_text("Fix the parser"));
    assert!(
        snapshot.transcript.iter().any(
            |entry| matches!(entry, Entry::Notice { text } if text.starts_with("Resumed: 2 messages"))
        ),
        "{:?}",
        snapshot.transcript
    );
    assert!(
        !snapshot
            .transcript
            .iter()
            .any(|entry| matches!(entry, Entry::User { text } if text == "Write the docs"))
    );
    assert_eq!(snapshot.usage.input_tokens, 1_000, "the switched-to session's own counts");
    // The session left is free for another keel; the one switched to is held.
    assert!(store.open(&newer).is_ok(), "the left session's lock was let go");
    assert!(store.open(&older).is_err(), "the session switched to is held");
    // Another keel's picker marks it as held, by whom.
    let listed = store.list().unwrap();
    let held: Vec<(&str, Option<u32>)> =
        listed.iter().map(|info| (info.id.as_str(), info.held_by)).collect();
    assert!(held.contains(&(older.as_str(), Some(std::process::id()))), "{held:?}");
    assert!(held.contains(&(newer.as_str(), None)), "{held:?}");

    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();
    // Nothing was written to it, yet it is the session `--continue` reopens: the one used last.
    assert_eq!(store.newest_first().unwrap()[0], older);
}

#[tokio::test]
async fn a_session_that_cannot_be_opened_leaves_the_conversation_as_it_was() {
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let open = saved(&store, "Keep me", SystemTime::now());
    let (log, restored) = store.open(&open).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let sessions = Sessions::Resume(store.clone(), log, restored);
    let mut handle = agent::spawn_with_session(AgentConfig::default(), None, tools, sessions);

    handle.commands.send(Command::Resume("1764666000-gone".into())).unwrap();
    let snapshot =
        wait_for(&mut handle, |snapshot| last_notice(snapshot).starts_with("Could not switch"))
            .await;
    assert!(last_notice(&snapshot).contains("no session 1764666000-gone"), "{snapshot:?}");
    assert_eq!(snapshot.history[0], Message::user_text("Keep me"));

    // Without saved sessions (as in the demo) there is nothing to list or switch to.
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut unsaved = agent::spawn(AgentConfig::default(), None, tools);
    unsaved.commands.send(Command::ListSessions).unwrap();
    let snapshot = wait_for(&mut unsaved, |snapshot| snapshot.sessions.is_some()).await;
    let list = snapshot.sessions.as_deref().unwrap();
    assert!(list.sessions.is_empty() && list.error.as_deref().unwrap().contains("not saved"));

    // In the demo, the picker says why, and how to get back to the person's own work.
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let demo = keel::llm::scripted::ScriptedProvider::demo(Duration::ZERO).unwrap();
    let mut demo =
        agent::spawn(AgentConfig::default(), Some(keel::llm::Provider::Scripted(demo)), tools);
    demo.commands.send(Command::ListSessions).unwrap();
    let snapshot = wait_for(&mut demo, |snapshot| snapshot.sessions.is_some()).await;
    let error = snapshot.sessions.as_deref().unwrap().error.clone().unwrap();
    assert!(error.starts_with("The demo is not saved"), "{error}");
    assert!(error.contains("keel --continue"), "{error}");

    for handle in [handle, unsaved, demo] {
        handle.commands.send(Command::Quit).unwrap();
        tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();
    }
}

#[test]
fn in_a_terminal_resume_switches_to_an_older_session_with_its_counts() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (prompt, answer) in [("Count the files", "Three files."), ("Name the files", "a, b, c.")] {
        let server = runtime.block_on(llm::FakeLlm::start(vec![llm::text(answer)], Duration::ZERO));
        let mut command = bin::keel(home.path());
        command
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base())
            .args(["-p", prompt, "--workdir"])
            .arg(work.path());
        let output = bin::output_within(&mut command, "keel -p");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        std::thread::sleep(Duration::from_millis(50));
    }
    let test = "in_a_terminal_resume_switches_to_an_older_session_with_its_counts";
    let Some(tmux) = KeelPane::start_sized(test, home.path(), (80, 24)) else { return };
    tmux.launch(
        "ANTHROPIC_API_KEY=k",
        &format!("--continue --workdir '{}'", work.path().display()),
    );
    tmux.wait_for("the newer session", WAIT, |screen| screen.contains("a, b, c."));
    tmux.type_line("/resume");
    let screen = tmux.wait_for("the picker's keys", WAIT, |screen| screen.contains("j/k choose"));
    let rows: Vec<&str> =
        screen.lines().filter(|row| row.starts_with("││") && row.contains(" files")).collect();
    assert_eq!(rows.len(), 2, "{screen}");
    assert!(rows[0].contains("Name the files") && rows[0].contains("(open)"), "{screen}");
    assert!(rows[1].contains("Count the files"), "{screen}");
    tmux.send(&["j"]);
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("the older session", WAIT, |screen| {
        screen.contains("Switched to session") && screen.contains("Three files.")
    });
    assert!(!screen.contains("a, b, c."), "{screen}");
    assert!(!screen.contains("did not record"), "its log kept its counts:\n{screen}");
    let status = screen.lines().rev().find(|row| row.contains('│')).unwrap_or_default();
    assert!(!status.contains("↑0 ↓0"), "the status line counts its tokens: {status}");
    tmux.quit();
}
