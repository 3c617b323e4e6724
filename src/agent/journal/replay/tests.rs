//! The replay's own cases: records applied, damage found, compactions checked.

use super::super::compaction::{Mask, Trigger};
use super::*;
use crate::message::Role;
use serde_json::json;

fn line(record: &Record) -> String {
    serde_json::to_string(record).unwrap() + "\n"
}

fn call(id: &str) -> Record {
    calls(&[id])
}

fn calls(ids: &[&str]) -> Record {
    let block = |id: &&str| ContentBlock::ToolUse {
        id: (*id).into(),
        name: "bash".into(),
        input: json!({"command": "ls"}),
    };
    Record::Message { message: Message::assistant(ids.iter().map(block).collect()) }
}

fn results(ids: &[&str]) -> Record {
    Record::Message {
        message: Message {
            role: Role::User,
            content: ids
                .iter()
                .map(|id| ContentBlock::ToolResult {
                    tool_use_id: (*id).into(),
                    content: "ok".into(),
                    is_error: false,
                })
                .collect(),
        },
    }
}

fn user(text: &str) -> Record {
    Record::Message { message: Message::user_text(text) }
}

#[test]
fn a_garbled_record_mid_log_ends_the_valid_prefix() {
    let head = line(&user("go")) + &line(&call("t1"));
    let log = head.clone() + "{\"type\":\"message\",\"mess\n" + &line(&results(&["t1"]));
    let replayed = replay(log.as_bytes());
    assert_eq!(replayed.valid_len, head.len());
    assert_eq!(replayed.restored.history.len(), 2);
    let damage = replayed.damage.unwrap();
    assert_eq!((damage.line, damage.lines, damage.messages), (3, 2, 1));
}

#[test]
fn records_that_would_break_the_call_result_pairing_end_it_too() {
    let cases = [
        (vec![user("go"), call("t1"), user("no results")], "answered 0 times"),
        (vec![user("go"), call("t1"), results(&["t1", "t1"])], "answered 2 times"),
        (vec![user("go"), results(&["t9"])], "never made"),
        (vec![user("go"), call("t1"), call("t2")], "were owed"),
        (vec![user("go"), calls(&["t1", "t1"])], "repeated id \"t1\""),
        (vec![user("go"), call("")], "missing or repeated id \"\""),
    ];
    for (records, reason) in cases {
        let log: String = records.iter().map(line).collect();
        let replayed = replay(log.as_bytes());
        let damage = replayed.damage.expect(reason);
        assert!(damage.reason.contains(reason), "{}", damage.reason);
        assert_eq!(damage.line, records.len());
    }
}

#[test]
fn results_of_a_cut_off_round_are_kept_apart_and_checked() {
    let result =
        Record::ToolResult { tool_use_id: "t1".into(), content: "done".into(), is_error: false };
    let log = line(&user("go")) + &line(&call("t1")) + &line(&result);
    let replayed = replay(log.as_bytes());
    assert!(replayed.damage.is_none());
    assert_eq!(replayed.restored.answered.len(), 1);
    let twice = log.clone() + &line(&result);
    assert!(replay(twice.as_bytes()).damage.unwrap().reason.contains("owes none"));
    let closed = log + &line(&results(&["t1"]));
    assert!(replay(closed.as_bytes()).restored.answered.is_empty());
}

fn compaction(masks: Vec<Mask>, history: Option<Vec<Message>>) -> Record {
    Record::Compaction(Compaction {
        trigger: Trigger::Threshold,
        tokens_before: 100,
        tokens_after: 10,
        masks,
        history,
        summarised: 0,
        summary_error: None,
        learned_window: Some(24_000),
    })
}

fn message(record: Record) -> Message {
    let Record::Message { message } = record else { unreachable!() };
    message
}

#[test]
fn a_compaction_replays_and_the_transcript_keeps_what_it_elided() {
    let stub = Mask::Result { id: "t1".into(), content: "[elided]".into() };
    let log = [user("go"), call("t1"), results(&["t1"]), compaction(vec![stub], None)]
        .iter()
        .map(line)
        .collect::<String>();
    let replayed = replay(log.as_bytes());
    assert!(replayed.damage.is_none());
    let restored = replayed.restored;
    assert!(
        matches!(&restored.history[2].content[0], ContentBlock::ToolResult { content, .. } if content == "[elided]")
    );
    assert!(
        matches!(&restored.transcript[2], Shown::Message(m) if m.content[0] == message(results(&["t1"])).content[0])
    );
    assert!(matches!(&restored.transcript[3], Shown::Compacted(note) if note.contains("100 → 10")));
    assert_eq!(restored.learned_window, Some(24_000));
    let summary = vec![message(user("go")), message(user("summary"))];
    let log = log + &line(&compaction(Vec::new(), Some(summary.clone())));
    assert_eq!(replay(log.as_bytes()).restored.history, summary);
}

#[test]
fn a_forged_compaction_ends_the_valid_prefix() {
    let head = [user("go"), call("t1"), results(&["t1"])];
    let ghost = Mask::Result { id: "t9".into(), content: "x".into() };
    let unanswered = vec![message(user("go")), message(call("t2"))];
    let cases = [
        (compaction(vec![ghost], None), "does not hold"),
        (compaction(Vec::new(), Some(unanswered)), "unanswered"),
        (compaction(Vec::new(), Some(vec![message(results(&["t5"]))])), "never made"),
    ];
    for (forged, reason) in cases {
        let log: String = head.iter().chain([&forged]).map(line).collect();
        let damage = replay(log.as_bytes()).damage.expect(reason);
        assert!(damage.reason.contains(reason), "{}", damage.reason);
        assert_eq!(damage.line, 4);
    }
    let owed: String =
        [user("go"), call("t1"), compaction(Vec::new(), None)].iter().map(line).collect();
    assert!(replay(owed.as_bytes()).damage.unwrap().reason.contains("owed"));
}

#[test]
fn a_whole_last_record_without_its_newline_is_kept() {
    let log = line(&user("go")) + line(&user("more")).trim_end();
    let replayed = replay(log.as_bytes());
    assert_eq!(replayed.restored.history.len(), 2);
    assert!(replayed.missing_newline && !replayed.cut_off);
    let cut = line(&user("go")) + "{\"type\":\"mess";
    let replayed = replay(cut.as_bytes());
    assert!(replayed.cut_off && replayed.damage.is_none());
    assert_eq!(replayed.restored.history.len(), 1);
}

fn usage(input: u64, output: u64, cache_read: u64) -> Record {
    Record::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_tokens: 0,
    })
}

#[test]
fn usage_records_add_up_and_a_log_without_them_says_so() {
    let log: String =
        [user("go"), usage(1_000, 50, 800), usage(2_000, 70, 0)].iter().map(line).collect();
    assert!(
        log.contains(
            r#"{"type":"usage","input_tokens":1000,"output_tokens":50,"cache_read_tokens":800"#
        ),
        "{log}"
    );
    let restored = replay(log.as_bytes()).restored;
    assert!(restored.usage_recorded);
    assert_eq!(
        restored.usage,
        Usage {
            input_tokens: 3_000,
            output_tokens: 120,
            cache_read_tokens: 800,
            cache_write_tokens: 0
        }
    );
    let old = line(&user("go"));
    let restored = replay(old.as_bytes()).restored;
    assert!(!restored.usage_recorded);
    assert_eq!(restored.usage, Usage::default());
}

#[test]
fn a_record_of_an_unknown_kind_is_skipped_with_a_note_and_the_rest_loads() {
    let newer = "{\"type\":\"from_the_future\",\"what\":1}\n";
    let log = line(&user("go")) + newer + newer + &line(&call("t1")) + &line(&results(&["t1"]));
    let replayed = replay(log.as_bytes());
    assert!(replayed.damage.is_none());
    assert_eq!(replayed.valid_len, log.len(), "the skipped records stay in the log");
    assert_eq!(replayed.restored.history.len(), 3);
    let [note] = replayed.restored.warnings.as_slice() else { panic!("one note") };
    assert!(note.contains("2 records") && note.contains("`from_the_future`"), "{note}");
    assert!(note.contains("line 2"), "{note}");
    // A known kind that does not parse is damage, as before; so is a line without a kind.
    for bad in ["{\"type\":\"usage\",\"input_tokens\":\"many\"}\n", "{\"what\":1}\n"] {
        let log = line(&user("go")) + bad + &line(&user("more"));
        let damage = replay(log.as_bytes()).damage.expect(bad);
        assert_eq!(damage.line, 2, "{bad}");
    }
}

#[test]
fn notes_take_their_place_in_the_transcript_and_never_reach_the_history() {
    let cut = Record::Note { kind: NoteKind::CutAnswer, text: "The first half".into() };
    let stopped = Record::Note { kind: NoteKind::Notice, text: "Interrupted.".into() };
    let log: String = [user("go"), cut, stopped, user("again")].iter().map(line).collect();
    assert!(log.contains(r#"{"type":"note","kind":"cut_answer","text":"The first half"}"#));
    let restored = replay(log.as_bytes()).restored;
    assert_eq!(restored.history, [message(user("go")), message(user("again"))]);
    assert_eq!(
        restored.transcript,
        [
            Shown::Message(message(user("go"))),
            Shown::Note(NoteKind::CutAnswer, "The first half".into()),
            Shown::Note(NoteKind::Notice, "Interrupted.".into()),
            Shown::Message(message(user("again"))),
        ]
    );
}

#[test]
fn an_older_logs_two_reminder_records_give_the_counts_one_record_gives() {
    // As an older keel wrote them: the round count, then the rest of the counts without it.
    let old = concat!(
        r#"{"type":"rounds","rounds_since_todo":2}"#,
        "\n",
        r#"{"type":"pace","pace":{"round":5,"rounds_in_progress":3,"silent":2,"#,
        r#""gaps":[1,1],"reminded_without_board":true}}"#,
        "\n",
    );
    let counts = ReminderCounts {
        since_todo: 2,
        round: 5,
        rounds_in_progress: 3,
        silent: Some(2),
        gaps: [Some(1), Some(1)],
        reminded_without_board: true,
    };
    assert_eq!(replay(old.as_bytes()).restored.reminder, counts);
    let new = line(&Record::Reminder { counts });
    assert!(new.starts_with(r#"{"type":"reminder","counts":{"since_todo":2,"#), "{new}");
    assert_eq!(replay(new.as_bytes()).restored.reminder, counts);
    // A `rounds` after a `pace` changes the count alone.
    let later = format!("{old}{}\n", r#"{"type":"rounds","rounds_since_todo":0}"#);
    let restored = replay(later.as_bytes()).restored.reminder;
    assert_eq!(restored, ReminderCounts { since_todo: 0, ..counts });
}
