//! Compaction's choices without a server: masking or a summary, and the arithmetic of targets,
//! budgets and the message that says what to raise.

use super::*;
use crate::agent::compaction::fixtures::long_task;
use crate::llm::Overflow;
use crate::message::Message;

/// A meter over a window of `window` tokens, none kept for the answer, compacting at 0.8.
fn meter(window: u32) -> ContextMeter {
    ContextMeter::new(window, WindowSource::Assumed, 0.8, 0)
}

/// A goal of `target` tokens before a request.
fn goal(before: u64, target: u64, summarise: bool) -> Goal {
    Goal { trigger: Trigger::Threshold, before, target, summarise, learned_window: None }
}

/// The estimates of `history` whole, masked keeping three rounds, and masked keeping one.
fn estimates(history: &History, meter: &ContextMeter) -> (u64, u64, u64) {
    let whole = meter.estimate_of(history);
    let three = meter.estimate_of(&masked(history, mask::KEEP_ROUNDS).1);
    let one = meter.estimate_of(&masked(history, 1).1);
    assert!(whole > three && three > one, "{whole} {three} {one}");
    (whole, three, one)
}

#[test]
fn masking_the_rounds_before_the_newest_three_is_enough_when_it_reaches_the_goal() {
    let (history, _) = long_task(4);
    let meter = meter(1_000_000);
    let (whole, three, _) = estimates(&history, &meter);
    let work = decide(&history, &meter, &goal(whole, three, false));
    let masks = mask::plan(&history, mask::KEEP_ROUNDS);
    assert_eq!(work, Work::Mask { masks, after: three });
}

#[test]
fn when_three_rounds_are_too_many_only_the_newest_is_kept_whole() {
    let (history, _) = long_task(4);
    let meter = meter(1_000_000);
    let (whole, three, one) = estimates(&history, &meter);
    let work = decide(&history, &meter, &goal(whole, three - 1, false));
    assert_eq!(work, Work::Mask { masks: mask::plan(&history, 1), after: one });
}

#[test]
fn when_masking_is_not_enough_the_work_before_the_newest_round_is_summarised() {
    let (history, _) = long_task(4);
    let meter = meter(1_000_000);
    let (whole, _, one) = estimates(&history, &meter);
    let Work::Summarise { masked: kept, tail } =
        decide(&history, &meter, &goal(whole, one - 1, false))
    else {
        panic!("masking is not enough: a summary is needed");
    };
    assert_eq!(kept, masked(&history, 1).1, "the summary is of the history masked to one round");
    assert_eq!(tail, history.len() - 2, "the newest round stays as it is");
}

#[test]
fn asked_for_it_summarises_even_where_masking_would_be_enough() {
    let (history, _) = long_task(4);
    let meter = meter(1_000_000);
    let (whole, ..) = estimates(&history, &meter);
    let work = decide(&history, &meter, &goal(whole, u64::MAX, true));
    assert!(matches!(work, Work::Summarise { .. }), "{work:?}");
}

#[test]
fn with_nothing_old_or_bulky_and_nothing_to_summarise_there_is_nothing_to_do() {
    let (history, _) = long_task(0);
    let lone: History = history.take(3);
    let meter = meter(1_000_000);
    assert_eq!(decide(&lone, &meter, &goal(1_000, 0, false)), Work::Nothing);
    // Short results below the goal: masking would save nothing worth a compaction.
    let short: History =
        [Message::user_text("hi"), Message::user_text("again")].into_iter().collect();
    assert_eq!(decide(&short, &meter, &goal(10, 100, false)), Work::Nothing);
}

#[test]
fn a_refused_request_is_cut_by_a_quarter_at_least_and_to_the_threshold_at_most() {
    let mut meter = meter(100_000);
    assert_eq!(meter.threshold(), 80_000);
    let small = Goal::refused(&meter, 40_000);
    assert_eq!((small.target, small.trigger, small.summarise), (30_000, Trigger::Refused, false));
    assert_eq!(Goal::refused(&meter, 200_000).target, 80_000);
    assert_eq!(small.learned_window, None, "no server stated a window yet");
    let history: History = [Message::user_text("x".repeat(40_000))].into_iter().collect();
    meter.sent(&history);
    meter.refused(Overflow { limit: Some(20_000), prompt: Some(12_000) });
    let learned = Goal::refused(&meter, 12_000);
    assert_eq!(learned.learned_window, Some(20_000), "the stated window is saved with it");
    assert_eq!(learned.target, 9_000);
}

#[test]
fn the_threshold_and_asked_goals_aim_for_the_threshold() {
    let meter = meter(10_000);
    let threshold = Goal::threshold(&meter, 9_000);
    assert_eq!((threshold.before, threshold.target, threshold.summarise), (9_000, 8_000, false));
    let asked = Goal::asked(&meter, 500);
    assert_eq!((asked.trigger, asked.target, asked.summarise), (Trigger::Request, 8_000, true));
}

#[test]
fn budgets_are_bytes_at_the_rate_the_server_taught() {
    let mut meter = meter(10_000);
    assert_eq!(bytes_for(&meter, 100.0), 400, "a quarter of a token a byte until told");
    // A threshold of 8,000 tokens: the digest may take a quarter of it.
    assert_eq!(digest_budget(&meter), 8_000);
    // The window less the summary's answer, at compact_at.
    assert_eq!(summary_budget(&meter, 2_000, 0.5), 16_000);
    let history: History = [Message::user_text("x".repeat(4_000))].into_iter().collect();
    meter.sent(&history);
    meter.reported(meter.bytes_of(&history) / 2);
    assert_eq!(bytes_for(&meter, 100.0), 200, "half a token a byte, as the server counted");
}

#[test]
fn a_window_without_a_thousand_tokens_for_the_prompt_is_not_worth_trying() {
    let fits = |window, max_tokens| {
        has_room(&ContextMeter::new(window, WindowSource::Configured, 0.8, max_tokens))
    };
    assert!(fits(2_000, 976));
    assert!(!fits(2_000, 977));
}

#[test]
fn what_does_not_fit_says_the_sizes_and_where_the_window_came_from() {
    let text = does_not_fit(&ContextMeter::new(8_192, WindowSource::Configured, 0.8, 1_024), 9_000);
    assert!(text.contains("about 9000 tokens"), "{text}");
    assert!(text.contains("the window of 8192 tokens (as --context-window"), "{text}");
    assert!(text.contains("leaves 7168 for it beside the 1024 that --max-tokens"), "{text}");
    let assumed = does_not_fit(&meter(8_192), 9_000);
    assert!(assumed.contains("(keel's figure for this model)"), "{assumed}");
    let mut meter = meter(8_192);
    meter.learn_window(4_096);
    assert!(does_not_fit(&meter, 9_000).contains("(as the server stated it)"));
}
