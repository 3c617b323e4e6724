//! How `keel -p` prints: the summary line, the last answer on stdout alone, a plan's last words
//! once, and a compaction in the conversation's words.

use super::progress::{summary, tool_time};
use super::*;
use crate::agent::Entry;

#[test]
fn the_summary_reads_as_a_sentence() {
    let usage = Usage { input_tokens: 12_345, output_tokens: 678, ..Usage::default() };
    let spent = |responses| Spent { responses, child_responses: 0, usage, price: None };
    assert_eq!(summary(&spent(0), 0, 0), "no response from the model");
    assert_eq!(summary(&spent(1), 0, 0), "1 model response, no board; 12345 tokens in, 678 out");
    assert_eq!(
        summary(&spent(4), 2, 5),
        "4 model responses, board 2/5 done; 12345 tokens in, 678 out"
    );
    // $3 a million in and $15 out: 3.7 cents and 1.0 cent.
    let price = Price { input: 3.0, output: 15.0, cache_read: None, cache_write: None };
    let priced = Spent { price: Some(price), ..spent(4) };
    assert_eq!(
        summary(&priced, 2, 5),
        "4 model responses, board 2/5 done; 12345 tokens in, 678 out, $0.05"
    );
}

#[test]
fn a_compaction_reads_as_the_conversation_says_it() {
    let compaction = AgentEvent::Compaction {
        trigger: crate::agent::journal::compaction::Trigger::Threshold,
        tokens_before: 35_300,
        tokens_after: 9_000,
        masked: 0,
        summarised: 12,
        summary_error: Some("timed out".into()),
        window: 64_000,
    };
    let mut err = Vec::new();
    print_progress(&mut err, &mut Vec::new(), &compaction, &Spent::default()).unwrap();
    let Some(Entry::Notice { text }) = compaction.entry() else { unreachable!() };
    assert_eq!(String::from_utf8(err).unwrap(), format!("· {text} (no summary: timed out)\n"));
    assert!(text.contains("~35.3k → 9.0k tokens; 12 messages listed"), "{text}");
}

#[test]
fn the_last_answer_goes_to_stdout_only() {
    let mut printer = Printer::default();
    let (mut err, mut out) = (Vec::new(), Vec::new());
    let events = [
        AgentEvent::AssistantText { text: "Planning.".into() },
        AgentEvent::ToolStart {
            id: "1".into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "ls"}),
            summary: "ls".into(),
        },
        AgentEvent::AssistantText { text: "All done.".into() },
        AgentEvent::Result {
            outcome: TurnOutcome::Success,
            text: "All done.".into(),
            rounds: 2,
            done: 0,
            total: 0,
            error: None,
            stop_reason: None,
        },
    ];
    for event in &events {
        printer.print(&mut err, &mut out, event).unwrap();
    }
    let (err, out) = (String::from_utf8(err).unwrap(), String::from_utf8(out).unwrap());
    assert!(err.contains("Planning."), "{err}");
    assert!(!err.contains("All done."), "{err}");
    assert_eq!(out, "All done.\n");
}

#[test]
fn with_plan_the_last_words_print_once_when_the_board_came_after_them() {
    let mut printer = Printer::default();
    let (mut err, mut out) = (Vec::new(), Vec::new());
    let mut board = Vec::new();
    let events = [
        AgentEvent::AssistantText { text: "Here is the plan.".into() },
        AgentEvent::Todo { items: Vec::new(), done: 0, total: 0, rounds_in_progress: 0 },
        AgentEvent::Result {
            outcome: TurnOutcome::Success,
            text: "Here is the plan.".into(),
            rounds: 1,
            done: 0,
            total: 0,
            error: None,
            stop_reason: None,
        },
    ];
    for event in &events {
        print_plan(&mut printer, &mut err, &mut out, event, &mut board).unwrap();
    }
    let err = String::from_utf8(err).unwrap();
    assert_eq!(err.matches("Here is the plan.").count(), 1, "{err}");
    assert!(
        err.contains("(no response from the model)"),
        "the closing line is still printed: {err}"
    );
}

#[test]
fn with_plan_the_board_is_printed_once_on_stdout_and_earlier_boards_as_progress() {
    use crate::board::Status;
    let item = |status: Status| BoardItem {
        id: "1".into(),
        text: "Write greet.sh".into(),
        status,
        active_form: None,
        blocked_by: Vec::new(),
        ..BoardItem::default()
    };
    let todo = |status| AgentEvent::Todo {
        items: vec![item(status)],
        done: 0,
        total: 1,
        rounds_in_progress: 0,
    };
    let events = [
        todo(Status::InProgress),
        AgentEvent::ToolStart {
            id: "c1".into(),
            name: "bash".into(),
            input: serde_json::json!({"command": "ls"}),
            summary: "ls".into(),
        },
        AgentEvent::ToolStart {
            id: "c2".into(),
            name: "todo".into(),
            input: serde_json::json!({}),
            summary: "1 item".into(),
        },
        todo(Status::Pending),
        AgentEvent::ToolEnd {
            id: "c2".into(),
            name: "todo".into(),
            is_error: false,
            exit_code: None,
            duration_ms: 0,
            duration_us: 10,
            output: "[ ] #1: Write greet.sh".into(),
            diff: None,
            tally: None,
        },
        // The plan once more as the turn ends, then the result.
        todo(Status::Pending),
        AgentEvent::Result {
            outcome: TurnOutcome::Success,
            text: "The plan is on the board.".into(),
            rounds: 2,
            done: 0,
            total: 1,
            error: None,
            stop_reason: None,
        },
    ];
    let mut printer = Printer::default();
    let (mut err, mut out) = (Vec::new(), Vec::new());
    let mut board = Vec::new();
    for event in &events {
        if let AgentEvent::Todo { items, .. } = event {
            board.clone_from(items);
        }
        print_plan(&mut printer, &mut err, &mut out, event, &mut board).unwrap();
    }
    let (err, out) = (String::from_utf8(err).unwrap(), String::from_utf8(out).unwrap());
    assert_eq!(
        err.matches("Write greet.sh").count(),
        1,
        "only the board the work moved past: {err}"
    );
    assert!(err.contains("[>] #1"), "{err}");
    assert_eq!(out.matches("Write greet.sh").count(), 1, "{out}");
    assert!(out.starts_with("[ ] #1: Write greet.sh"), "{out}");
}

#[test]
fn tool_times_are_shown_to_a_tenth_of_a_millisecond_below_a_second() {
    assert_eq!(tool_time(0), "0.0 ms");
    assert_eq!(tool_time(340), "0.3 ms");
    assert_eq!(tool_time(1_899), "1.8 ms");
    assert_eq!(tool_time(101_450), "101.4 ms");
    assert_eq!(tool_time(999_999), "999.9 ms");
    assert_eq!(tool_time(1_000_000), "1000 ms");
    assert_eq!(tool_time(12_345_678), "12345 ms");
}

#[test]
fn a_run_stopped_at_max_rounds_says_how_to_go_on_from_the_command_line() {
    let stopped = AgentEvent::Result {
        outcome: TurnOutcome::MaxRounds,
        text: String::new(),
        rounds: 2,
        done: 0,
        total: 0,
        error: Some(format!("Stopped after 2 model responses. {}", crate::agent::GO_ON)),
        stop_reason: None,
    };
    let AgentEvent::Result { error: Some(error), .. } = headless_words(stopped) else {
        panic!("not a result");
    };
    assert!(error.contains("`keel -p --continue` goes on from here"), "{error}");
    assert!(!error.contains("Send a message"), "no one can, in a -p run: {error}");
}
