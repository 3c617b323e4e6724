//! The screen says what happened, drawn into a `TestBackend`: typing through an approval box's
//! arrival never answers it and reaches the prompt whole; a command with a `\r` reads the same on
//! every line that names it; the board never takes the keyboard by itself and its one-letter keys
//! cannot wipe it; the approval box marks what it cannot show and reaches all of it at 40×12;
//! Esc keeps the part of an answer already on screen, and so does the session resumed.

use crate::support::{llm, wire};
use keel::agent::journal::SessionStore;
use keel::agent::{
    self, Activity, AgentConfig, ApprovalRequest, Command, Decision, Entry, Sessions, Snapshot,
    ToolRun, ToolStatus,
};
use keel::board::Board;
use keel::llm::Provider;
use keel::llm::anthropic::AnthropicClient;
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tui::type_ahead::{BURST_GAP, GRACE_PERIOD};
use keel::tui::{App, TuiOptions, UiEvent, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Keys at 8 a second.
const TYPING: Duration = Duration::from_millis(125);
/// The command whose `\r` once hid its start on every line but the approval box.
const HIDDEN: &str = "echo safe\rrm -rf ~/important # hidden";
/// How it must read everywhere.
const SHOWN: &str = "echo safe␍rm -rf ~/important # hidden";

fn app() -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = unbounded_channel();
    (App::new(tx, TuiOptions::default()), rx)
}

fn sent(rx: &mut UnboundedReceiver<Command>) -> Vec<Command> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

fn key(c: char) -> KeyEvent {
    let modifiers = if c.is_ascii_uppercase() { KeyModifiers::SHIFT } else { KeyModifiers::NONE };
    KeyEvent::new(KeyCode::Char(c), modifiers)
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_key(key(c));
    }
}

fn draw(app: &mut App, (width, height): (u16, u16)) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal
}

fn screen(app: &mut App, size: (u16, u16)) -> String {
    let terminal = draw(app, size);
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn approval(detail: &str) -> Snapshot {
    Snapshot {
        seq: 2,
        activity: Activity::AwaitingApproval,
        pending_approval: Some(Arc::new(ApprovalRequest {
            id: "call_1".into(),
            tool: "bash".into(),
            asking: keel::agent::Asking::Command,
            detail: detail.into(),
            diff: None,
            always: Some("`touch` commands".into()),
            sandbox: None,
            agent: None,
            check: None,
        })),
        ..Snapshot::default()
    }
}

// ---------------------------------------------------------------- 1. type-ahead

#[test]
fn typing_at_eight_keys_a_second_through_an_appearing_box_answers_nothing() {
    let (mut app, mut rx) = app();
    app.apply_snapshot(Snapshot { seq: 1, activity: Activity::Thinking, ..Snapshot::default() });
    let sentence = "I will ask you about it later, and nothing else";
    let start = Instant::now();
    let mut now = start;
    for (index, c) in sentence.chars().enumerate() {
        // The box appears mid-word, between the `l` and the `a` of "later".
        if index == sentence.find("ater").unwrap() {
            app.apply_snapshot_at(approval("touch planted.txt"), now - TYPING / 2);
            assert!(app.visible_approval().is_some());
        }
        app.handle_key_at(key(c), now);
        now += TYPING;
    }
    assert!(sent(&mut rx).is_empty(), "a typed letter answered the box");
    assert_eq!(app.composer_text(), sentence, "the typing reached the prompt whole");
    assert!(app.visible_approval().is_some(), "the box still waits for an answer");
    let text = screen(&mut app, (80, 24));
    assert!(text.contains("typing goes to the composer"), "{text}");
    assert!(!text.contains("y yes"), "{text}");

    // Once the typing pauses the box shows its keys, and they answer it.
    let last = now - TYPING;
    assert!(app.on_tick(last + BURST_GAP), "the pause redraws the box");
    let text = screen(&mut app, (80, 24));
    assert!(text.contains("y yes") && !text.contains("typing goes to"), "{text}");
    app.handle_key_at(key('n'), last + BURST_GAP);
    assert_eq!(sent(&mut rx), [Command::Approve { id: "call_1".into(), decision: Decision::Deny }]);
    assert_eq!(app.composer_text(), sentence);
}

#[test]
fn a_key_in_the_grace_period_goes_to_the_prompt_even_without_typing_before() {
    let (mut app, mut rx) = app();
    let shown = Instant::now();
    app.apply_snapshot_at(approval("touch planted.txt"), shown);
    app.handle_key_at(key('y'), shown + GRACE_PERIOD / 2);
    assert!(sent(&mut rx).is_empty());
    assert_eq!(app.composer_text(), "y");
    // A pause after that key, and `y` answers.
    app.handle_key_at(key('y'), shown + GRACE_PERIOD / 2 + BURST_GAP);
    assert_eq!(sent(&mut rx), [Command::Approve { id: "call_1".into(), decision: Decision::Once }]);
    // Neither did the first: a lone answer key typed at the box into an empty prompt was meant
    // for the box, and is not left there to be sent as a prompt.
    assert_eq!(app.composer_text(), "", "the answer did not reach the prompt");
}

// ---------------------------------------------------------------- 3. summaries

#[test]
fn a_carriage_return_is_shown_on_every_line_that_names_the_command() {
    let (mut app, _rx) = app();
    let snapshot = Snapshot {
        seq: 1,
        activity: Activity::RunningTool { name: "bash\u{202e}txt".into() },
        transcript: [Entry::ToolCall {
            id: "t1".into(),
            name: "bash".into(),
            summary: HIDDEN.into(),
        }]
        .into_iter()
        .collect(),
        tools: [Arc::new(ToolRun {
            id: "t1".into(),
            name: "bash".into(),
            summary: HIDDEN.into(),
            status: ToolStatus::Running,
            exit_code: None,
            started: Instant::now(),
            duration: None,
            output: Arc::from(""),
        })]
        .into_iter()
        .collect(),
        ..Snapshot::default()
    };
    app.apply_snapshot(snapshot);
    let text = screen(&mut app, (120, 40));
    let conversation = text.lines().find(|line| line.contains(&format!("▸ bash {SHOWN}")));
    assert!(conversation.is_some(), "the conversation:\n{text}");
    // The tool pane is narrow: the line is cut at its end, never before the `␍`.
    let pane = text.lines().find(|line| line.contains("bash echo safe␍rm -rf"));
    assert!(pane.is_some_and(|line| line.contains("running")), "the tool pane:\n{text}");
    assert!(!text.contains("\r"), "a carriage return reached the screen");
    assert!(text.contains("running `bash⟨U+202E⟩txt`"), "the status line:\n{text}");
}

// ---------------------------------------------------------------- 4. the board

fn plan(items: &[&str]) -> Snapshot {
    let items: Vec<serde_json::Value> = items
        .iter()
        .enumerate()
        .map(|(i, text)| serde_json::json!({"id": (i + 1).to_string(), "text": text, "status": "pending"}))
        .collect();
    let mut board = Board::default();
    board.update(&serde_json::json!({ "items": items })).unwrap();
    Snapshot {
        seq: 3,
        plan_mode: true,
        plan_ready: true,
        board: Arc::new(board),
        ..Snapshot::default()
    }
}

#[test]
fn a_finished_plan_leaves_the_keyboard_to_the_prompt_and_says_how_to_approve() {
    let (mut app, mut rx) = app();
    app.apply_snapshot(Snapshot { plan_mode: true, ..Snapshot::default() });
    app.apply_snapshot(plan(&["Write ok.txt", "Check it"]));
    assert!(!app.board_focused());
    type_text(&mut app, "do it");
    assert_eq!(app.composer_text(), "do it", "the letters stay in the prompt");
    assert!(sent(&mut rx).is_empty(), "no board key was pressed");
    let text = screen(&mut app, (80, 24));
    assert!(text.contains("#1 Write ok.txt"), "nothing was removed:\n{text}");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::Submit("do it".into())]);
    let text = screen(&mut app, (80, 24));
    assert!(text.contains("plan ready: /approve runs it · /todos edits it"), "{text}");
}

#[test]
fn on_the_focused_board_stray_keys_remove_nothing_and_an_empty_plan_is_not_approved() {
    let (mut app, mut rx) = app();
    app.apply_snapshot(plan(&["Write ok.txt", "Check it"]));
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    assert!(app.board_focused());
    // `do it` typed at the board: `d` only asks, `o` cancels it, Space marks the item done
    // (Space again undoes it), `i` and `t` do nothing.
    type_text(&mut app, "do it");
    let edits = sent(&mut rx);
    assert!(
        !edits
            .iter()
            .any(|c| matches!(c, Command::EditBoard(keel::board::BoardEdit::Remove { .. }))),
        "a stray d removed an item: {edits:?}"
    );
    type_text(&mut app, "d");
    assert!(screen(&mut app, (80, 24)).contains("d again removes #1"));
    type_text(&mut app, "d");
    assert_eq!(
        sent(&mut rx),
        [Command::EditBoard(keel::board::BoardEdit::Remove { id: "1".into() })]
    );

    let (mut app, mut rx) = self::app();
    app.apply_snapshot(plan(&[]));
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    // Enter asks the agent, which refuses an empty plan and says why (`plan_mode::
    // approving_with_no_plan_is_refused`): never silence.
    assert_eq!(sent(&mut rx), [Command::ApprovePlan]);
}

#[test]
fn the_wheel_scrolls_the_board_without_taking_the_keyboard() {
    let (mut app, _rx) = app();
    let many: Vec<String> = (1..=15).map(|i| format!("Step {i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    app.apply_snapshot(Snapshot { plan_ready: false, ..plan(&many) });
    let before = screen(&mut app, (80, 24));
    let regions = app.regions(Rect::new(0, 0, 80, 24));
    let at = regions.todos;
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: at.x + 2,
        row: at.y + 1,
        modifiers: KeyModifiers::NONE,
    };
    app.handle_event(UiEvent::Mouse(wheel));
    assert!(!app.board_focused(), "the wheel took the keyboard");
    let after = screen(&mut app, (80, 24));
    assert_ne!(before, after, "the board scrolled");
    type_text(&mut app, "d");
    assert_eq!(app.composer_text(), "d", "keys still go to the prompt");
}

// ---------------------------------------------------------------- 5. the approval box

/// A command longer than any box: its tail is what must stay reachable.
const LONG: &str = "find . -type f -name '*.rs' -not -path './target/*' -exec grep -n 'unwrap()' {} + | sort | uniq -c | sort -rn | head -50 | awk '{print $2}' | xargs -I{} sh -c 'echo {}; wc -l {}' | tee report.txt | wc -l";

fn settled_box(detail: &str) -> (App, UnboundedReceiver<Command>) {
    let (mut app, rx) = app();
    let settled = Instant::now().checked_sub(GRACE_PERIOD).unwrap();
    app.apply_snapshot_at(approval(detail), settled);
    (app, rx)
}

#[test]
fn snapshot_a_long_command_in_the_box_at_40x12_and_80x24() {
    for size in [(40, 12), (80, 24)] {
        let (mut app, _rx) = settled_box(LONG);
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(
            format!("long_command_box_{}x{}", size.0, size.1),
            terminal.backend()
        );
    }
}

#[test]
fn the_whole_long_command_is_reachable_and_marked_at_40x12() {
    let (mut app, _rx) = settled_box(LONG);
    let first = screen(&mut app, (40, 12));
    assert!(first.contains("more below"), "the cut is marked:\n{first}");
    assert!(!first.contains("more above"), "{first}");
    let mut seen = first.clone();
    for _ in 0..40 {
        press(&mut app, KeyCode::Char('j'));
        seen.push_str(&screen(&mut app, (40, 12)));
    }
    let last = screen(&mut app, (40, 12));
    assert!(last.contains("more above") && !last.contains("more below"), "{last}");
    assert!(last.contains("report.txt | wc -l"), "the tail is reachable:\n{last}");
    // Words are not broken where a space was at hand.
    assert!(!seen.contains("repor\n") && seen.contains("report.txt"), "{seen}");
}

// ---------------------------------------------------------------- 6. Esc mid-stream, counted

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_mid_stream_keeps_what_was_shown_marked_interrupted_and_out_of_the_history() {
    use llm::raw::{Hold, RawLlm};
    const WAIT: Duration = Duration::from_secs(30);
    let answer = "The first half of a long answer arrives, word by word, then the rest never does \
                  because the person presses Esc before the second half of it.";
    let mut server = RawLlm::start(vec![llm::text(answer)], Duration::ZERO).await;
    server.hold(0, Hold::MidStream);
    let dir = tempfile::tempdir().unwrap();
    let provider = Provider::Anthropic(
        AnthropicClient::new(wire::settings(&server.anthropic_base(), 0)).unwrap(),
    );
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let state = tempfile::tempdir().unwrap();
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let sessions = Sessions::New(store.clone());
    let mut handle =
        agent::spawn_with_session(AgentConfig::default(), Some(provider), tools, sessions);
    let mut app = App::new(handle.commands.clone(), TuiOptions::default());
    handle.commands.send(Command::Submit("Tell me a long story.".into())).unwrap();
    server.wait_until_holding(WAIT).await;
    let shown = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.unwrap();
            if snapshot.streaming.as_ref().is_some_and(|text| !text.is_empty()) {
                return snapshot;
            }
        }
    })
    .await
    .expect("nothing streamed");
    let partial = shown.streaming.as_ref().unwrap().to_string();
    app.apply_snapshot(shown);
    let before = screen(&mut app, (120, 40));
    let first_words: String = partial.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    assert!(before.contains(&first_words), "{before}");

    press(&mut app, KeyCode::Esc);
    let idle = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.unwrap();
            if snapshot.activity == Activity::Idle && snapshot.streaming.is_none() {
                return snapshot;
            }
        }
    })
    .await
    .expect("Esc never ended the turn");
    assert!(
        !idle.history.iter().any(|message| message.text().contains(&first_words)),
        "the partial answer entered the history sent to the model"
    );
    // The request went out and half an answer came back: the provider bills both, and the
    // status bar's counts (and the log's) say so.
    assert!(idle.usage.input_tokens > 0, "the request was counted: {:?}", idle.usage);
    assert!(idle.usage.output_tokens > 0, "what streamed was counted: {:?}", idle.usage);
    app.apply_snapshot(idle);
    let after = screen(&mut app, (120, 40));
    assert!(after.contains(&first_words), "the partial answer vanished:\n{after}");
    let kept = after.find(&first_words).unwrap();
    let mark = after.find("Interrupted").expect("no interrupted mark");
    assert!(mark > kept, "the mark follows the partial answer:\n{after}");
    handle.commands.send(Command::Quit).unwrap();
    server.cancel_hold();
    let _ = tokio::time::timeout(WAIT, &mut handle.task).await;

    // Resumed, the session still shows what was on screen and that it was interrupted; the
    // model still never sees the cut answer.
    let (log, restored) = store.open_newest().unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let sessions = Sessions::Resume(store.clone(), log, restored);
    let mut resumed = agent::spawn_with_session(AgentConfig::default(), None, tools, sessions);
    let snapshot = tokio::time::timeout(WAIT, resumed.snapshots.recv()).await.unwrap().unwrap();
    let shown: Vec<&Entry> = snapshot.transcript.iter().collect();
    assert!(
        matches!(shown.as_slice(), [Entry::User { .. }, Entry::Assistant { text }, Entry::Notice { text: stopped }, Entry::Notice { .. }]
            if text.starts_with(&partial) && stopped == "Interrupted."),
        "{shown:?}"
    );
    assert!(!snapshot.history.iter().any(|message| message.text().contains(&first_words)));
    resumed.commands.send(Command::Quit).unwrap();
    let _ = tokio::time::timeout(WAIT, resumed.task).await;
}
