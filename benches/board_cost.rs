#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the board costs, priced as the provider prices it: a realistic ten-step task (each step
//! reads a 6 KB file, writes 2 KB, and runs a command printing 2 KB) sent by the real agent to a
//! loopback server three ways — no board (`--no-todo`: no `todo` tool and no board paragraph in
//! the system prompt), the board kept with whole lists, and the board kept with partial updates,
//! both updated in the same answer as each step's command — and the bytes, tokens and dollars
//! every request carried, with what each part of the board took (`support::cache_cost`).
//!
//! Dollars are at list prices with the prompt cache as the `cache_control` marks in each
//! request body set it (keel marks the system prompt, the newest message and the newest of the
//! request before): what an earlier request wrote and a breakpoint reaches is a cache read (×0.1
//! of input), the rest up to the last breakpoint a cache write (×1.25), what follows it input at
//! full price, and the model's answer is output (×5). Tokens are estimated at four bytes each.
//!
//! A scripted benchmark, not a timing one: the figures are counted, so they are the same on any
//! machine. `cargo bench --bench board_cost` prints them; benches/README.md reports them.

mod support;

use serde_json::Value;
use support::cache_cost::{Breakpoints, Cost, LABELS, Priced, cost, with_breakpoints};
use support::ten_steps::{Board, CLOSING, Checks, run};

fn report(name: &str, cost: &Cost, baseline: Option<&Cost>) {
    let versus = baseline.map_or(String::new(), |base| {
        format!(
            "; {:+.1} % bytes, {:+.2} % dollars with the cache, {:+.1} % without",
            percent(cost.total as f64, base.total as f64),
            percent(cost.dollars(), base.dollars()),
            percent(cost.dollars_uncached(), base.dollars_uncached()),
        )
    });
    println!("{name}: {}{versus}", cost.summary());
    println!("  system prompt: {} bytes a request", cost.system);
    let Some(base) = baseline.filter(|_| cost.board() > 0) else { return };
    let paragraph = cost.system.saturating_sub(base.system);
    println!("  of which the board: {} bytes sent", cost.board() + paragraph * cost.requests);
    let extra = cost.dollars() - base.dollars();
    // The board's paragraph of the system prompt: written once, then read with every request.
    let system =
        Priced { read: paragraph * (cost.requests - 1), write: paragraph, input: 0, output: 0 };
    let mut named = system.dollars();
    println!(
        "    {:<15} {} B a request: ${:.4} ({:+.2} % of no board)",
        "system prompt",
        paragraph,
        system.dollars(),
        100.0 * system.dollars() / base.dollars()
    );
    for (label, part) in LABELS.iter().zip(&cost.parts) {
        named += part.dollars();
        println!(
            "    {label:<15} read {:>7} B, written {:>6} B, full price {:>4} B, output {:>5} B: ${:.4} ({:+.2} % of no board)",
            part.read,
            part.write,
            part.input,
            part.output,
            part.dollars(),
            100.0 * part.dollars() / base.dollars()
        );
    }
    println!(
        "    {:<15} ${:.4} ({:+.2} %): tool-call framing, the cache's split",
        "the rest",
        extra - named,
        100.0 * (extra - named) / base.dollars()
    );
}

/// keel's breakpoints, and other places they could sit: the run priced with each.
const PLACEMENTS: [(&str, Breakpoints); 4] = [
    (
        "keel's: the system prompt, the newest message, the newest of the request before",
        Breakpoints { system: true, from_end: &[1, 3] },
    ),
    ("the system prompt and the newest message", Breakpoints { system: true, from_end: &[1] }),
    ("the newest message only", Breakpoints { system: false, from_end: &[1] }),
    ("the system prompt only", Breakpoints { system: true, from_end: &[] }),
];

/// The no-board and partial-update runs priced with each placement of the breakpoints.
fn placements(off: (&[Value], &[usize]), partial: (&[Value], &[usize])) {
    println!("where the cache breakpoints sit (no board / partial updates):");
    for (name, at) in PLACEMENTS {
        let price = |(bodies, sizes): (&[Value], &[usize])| {
            let moved = with_breakpoints(bodies, at);
            // The wire's bytes, give or take the marks moved.
            let sizes: Vec<usize> = (bodies.iter().zip(&moved).zip(sizes))
                .map(|((sent, moved), size)| {
                    size + moved.to_string().len() - sent.to_string().len()
                })
                .collect();
            cost(&moved, &sizes, CLOSING.len())
        };
        let (off, partial) = (price(off), price(partial));
        println!(
            "  {name}: ${:.4} / ${:.4} ({:+.2} %)",
            off.dollars(),
            partial.dollars(),
            percent(partial.dollars(), off.dollars())
        );
    }
}

fn percent(value: f64, base: f64) -> f64 {
    100.0 * (value - base) / base.max(f64::MIN_POSITIVE)
}

fn main() {
    // `cargo test --benches` runs this once too; the figures are counted, not timed.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let off_run = runtime.block_on(run(Board::Off, Checks::None));
    let (off_bodies, off_sizes) = (off_run.bodies, off_run.sizes);
    let off = cost(&off_bodies, &off_sizes, CLOSING.len());
    assert!(off_bodies.iter().all(|body| !body.to_string().contains("\"todo\"")));
    let whole_run = runtime.block_on(run(Board::WholeLists, Checks::None));
    let whole = cost(&whole_run.bodies, &whole_run.sizes, CLOSING.len());
    let partial_run = runtime.block_on(run(Board::Partial, Checks::None));
    let (bodies, sizes) = (partial_run.bodies, partial_run.sizes);
    let partial = cost(&bodies, &sizes, CLOSING.len());
    // The bodies as sent carry keel's own marks: priced with them again, the same figure.
    let keel = cost(&with_breakpoints(&bodies, PLACEMENTS[0].1), &sizes, CLOSING.len());
    assert!((keel.dollars() - partial.dollars()).abs() < 1e-9, "the bench moves keel's marks");
    assert_eq!(whole_run.board, "(10/10 completed)", "the whole-list form still ends 10/10");
    assert_eq!(partial_run.board, "(10/10 completed)");
    report("board off (--no-todo)", &off, None);
    report("board on, whole lists alongside each step", &whole, Some(&off));
    report("board on, partial updates alongside each step", &partial, Some(&off));
    placements((&off_bodies, &off_sizes), (&bodies, &sizes));
}
