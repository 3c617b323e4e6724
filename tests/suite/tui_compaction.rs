//! What a long session shows on screen: the share of the context window the next request takes
//! (`ctx 62%`) in the status bar, only once the agent knows the window; `compacting` while a
//! summary is on its way; and the one-line note in the conversation where the model's view was
//! compacted, with everything before it still there for the person.

use keel::agent::{Activity, ContextUse, Entry, Snapshot};
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::sync::Arc;
use tokio::sync::mpsc::unbounded_channel;

const WIDE: (u16, u16) = (120, 40);
const NARROW: (u16, u16) = (60, 20);
const NOTE: &str = "Compacted the model's view to fit the window: ~19.4k → 6.1k tokens; 14 old tool results elided.";

fn screen(snapshot: Snapshot, (width, height): (u16, u16)) -> Vec<String> {
    let (tx, _rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

fn snapshot(context: ContextUse, activity: Activity) -> Snapshot {
    let transcript = [
        Entry::User { text: "Work through the twenty steps on the board.".into() },
        Entry::Assistant { text: "Step 7: appending to the log and printing the file.".into() },
        Entry::Notice { text: NOTE.into() },
        Entry::Assistant { text: "Step 8: appending to the log and printing the file.".into() },
    ];
    Snapshot {
        seq: 1,
        provider: Arc::from("anthropic"),
        model: Arc::from("claude-sonnet-4-5"),
        transcript: transcript.into_iter().collect(),
        context,
        activity,
        ..Snapshot::default()
    }
}

#[test]
fn the_status_bar_shows_the_share_of_the_window_once_it_is_known() {
    let bar = |context: ContextUse| screen(snapshot(context, Activity::Idle), WIDE).pop().unwrap();
    let line = bar(ContextUse { tokens: 62_000, window: 100_000 });
    assert!(line.contains(" ctx 62%"), "{line}");
    let line = bar(ContextUse::default());
    assert!(!line.contains("ctx"), "no window known, no share shown: {line}");
    let line = bar(ContextUse { tokens: 130_000, window: 100_000 });
    assert!(line.contains(" ctx 130%"), "over the window, said as it is: {line}");
}

#[test]
fn the_conversation_keeps_everything_with_a_note_where_the_view_was_compacted() {
    for size in [WIDE, NARROW] {
        let context = ContextUse { tokens: 6_100, window: 24_000 };
        let rows = screen(snapshot(context, Activity::Compacting), size);
        let text = rows.join("\n");
        assert!(text.contains("Step 7") && text.contains("Step 8"), "{text}");
        assert!(text.contains("Compacted the model's view"), "{text}");
        assert!(text.contains("compacting"), "{text}");
        insta::assert_snapshot!(format!("compaction_note_{}x{}", size.0, size.1), text);
    }
}
