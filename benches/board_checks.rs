#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What checks on the board's items cost, and that they hold a lazy model to the work: the
//! ten-step task of `board_cost` (each step reads 6 KB, writes 2 KB, runs a command printing
//! 2 KB), its board kept with partial updates, sent by the real agent to a loopback server four
//! ways — no board; the board without checks; a check on every item (`grep` for the step's
//! file) with a model that claims each step once it is written; and the same checks with a
//! "lazy" model that claims each step beside its first read, before writing it, then again
//! beside its command. Every early claim must be refused, every honest one accepted, and the
//! board must end 10/10; the figures are the bytes and dollars each way, priced as in
//! `board_cost` (list prices, the prompt cache as keel's marks set it, `support::cache_cost`).
//!
//! A check adds to the answers only its mark and, when it fails, the refusal with the command's
//! exit and output; the plan carries each item's command once. Counted, not timed: `cargo bench
//! --bench board_checks` prints the figures (`cargo test --bench board_checks` the same ones
//! from a debug build); benches/README.md reports them.

mod support;

use serde_json::Value;
use support::cache_cost::{Cost, LABELS, Priced, cost};
use support::ten_steps::{Board, CLOSING, Checks, Run, STEPS, check, run};

/// Every tool result the model read in the run, in order: the tool's name and the result's text,
/// and whether it was an error.
fn results(bodies: &[Value]) -> Vec<(String, String, bool)> {
    let messages = bodies.last().and_then(|body| body["messages"].as_array()).unwrap();
    let blocks: Vec<&Value> = messages
        .iter()
        .flat_map(|message| message["content"].as_array().into_iter().flatten())
        .collect();
    let name = |id: &Value| {
        blocks
            .iter()
            .find(|block| block["type"] == "tool_use" && block["id"] == *id)
            .map(|block| block["name"].as_str().unwrap().to_owned())
            .unwrap()
    };
    blocks
        .iter()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| {
            let text = block["content"].as_str().unwrap_or_default().to_owned();
            (name(&block["tool_use_id"]), text, block["is_error"] == true)
        })
        .collect()
}

/// The run's board answers: the `todo` results, and whether each was a refusal.
fn board_answers(run: &Run) -> Vec<(String, bool)> {
    results(&run.bodies)
        .into_iter()
        .filter(|(name, ..)| name == "todo")
        .map(|(_, text, refused)| (text, refused))
        .collect()
}

/// Holds the guarantee: the honest model's claims all pass; of the lazy model's, each early
/// one is refused with its check's failure and the board as it was, each honest one accepted.
fn assert_held(honest: &Run, lazy: &Run) {
    let passes: Vec<(String, bool)> = (1..=STEPS).map(|k| (k.to_string(), true)).collect();
    assert_eq!(honest.checks, passes, "one passing check a step");
    assert!(board_answers(honest).iter().all(|(_, refused)| !refused));
    let claims: Vec<(String, bool)> =
        (1..=STEPS).flat_map(|k| [(k.to_string(), false), (k.to_string(), true)]).collect();
    assert_eq!(lazy.checks, claims, "each step's check fails before the work, passes after");
    // The plan, then per step the early claim and the honest one.
    let answers = board_answers(lazy);
    assert_eq!(answers.len(), 1 + 2 * STEPS);
    for k in 1..=STEPS {
        let (early, refused) = &answers[2 * k - 1];
        assert!(refused, "step {k}'s early claim: {early}");
        let failed = format!("Item {k}: its check failed (exit 2): {}", check(k));
        assert!(early.contains(&failed), "{early}");
        let (honest, refused) = &answers[2 * k];
        assert!(!refused, "step {k}'s honest claim: {honest}");
        assert!(honest.contains(&format!("({k}/{STEPS} completed)")), "{honest}");
    }
    for run in [honest, lazy] {
        assert_eq!(run.board, "(10/10 completed)");
    }
}

/// The bytes of the refusals the lazy model read.
fn refusal_bytes(run: &Run) -> usize {
    board_answers(run).iter().filter(|(_, refused)| *refused).map(|(text, _)| text.len()).sum()
}

fn percent(value: f64, base: f64) -> f64 {
    100.0 * (value - base) / base.max(f64::MIN_POSITIVE)
}

/// One run's figures, and what it adds to each run in `against`, part of the board by part.
fn report(name: &str, cost: &Cost, against: &[(&str, &Cost)]) {
    println!("{name}: {}", cost.summary());
    for (label, base) in against {
        println!(
            "  more than {label}: {:+} bytes ({:+.2} %), {:+.4} $ with the cache ({:+.2} %), {:+.2} % without",
            cost.total as i64 - base.total as i64,
            percent(cost.total as f64, base.total as f64),
            cost.dollars() - base.dollars(),
            percent(cost.dollars(), base.dollars()),
            percent(cost.dollars_uncached(), base.dollars_uncached()),
        );
    }
    let Some((label, base)) = against.first() else { return };
    for (part, (now, before)) in LABELS.iter().zip(cost.parts.iter().zip(&base.parts)) {
        let sent = |part: &Priced| (part.read + part.write + part.input) as i64;
        if sent(now) == sent(before) && now.output == before.output {
            continue;
        }
        println!(
            "    {part:<15} {:+} bytes sent, {:+} output: {:+.4} $ ({:+.2} % of {label})",
            sent(now) - sent(before),
            now.output as i64 - before.output as i64,
            now.dollars() - before.dollars(),
            100.0 * (now.dollars() - before.dollars()) / base.dollars(),
        );
    }
}

fn main() {
    // `cargo test --benches` runs this once too; the figures are counted, not timed.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let priced = |run: &Run| cost(&run.bodies, &run.sizes, CLOSING.len());
    let off = runtime.block_on(run(Board::Off, Checks::None));
    let plain = runtime.block_on(run(Board::Partial, Checks::None));
    let honest = runtime.block_on(run(Board::Partial, Checks::Honest));
    let lazy = runtime.block_on(run(Board::Partial, Checks::Lazy));
    assert!(plain.checks.is_empty() && plain.board == "(10/10 completed)");
    assert_held(&honest, &lazy);
    let (off, plain_cost) = (priced(&off), priced(&plain));
    let (honest_cost, lazy_cost) = (priced(&honest), priced(&lazy));
    report("no board (--no-todo)", &off, &[]);
    report("board, no checks", &plain_cost, &[("no board", &off)]);
    let honest_against = [("no checks", &plain_cost), ("no board", &off)];
    report("board, a check on every item, honest model", &honest_cost, &honest_against);
    let lazy_against =
        [("the honest model", &honest_cost), ("no checks", &plain_cost), ("no board", &off)];
    report("board, a check on every item, lazy model", &lazy_cost, &lazy_against);
    println!(
        "  the lazy model's ten refusals: {} bytes of answers; all ten early claims refused, all ten honest ones accepted, the board 10/10",
        refusal_bytes(&lazy)
    );
}
