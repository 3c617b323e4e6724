#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What one frame costs with a long session on screen: a full frame at 120×40 (conversation of
//! 10,000 messages of mixed Markdown, a board of 20 items, the tool pane and the status bar),
//! scrolling by a page, the first frame of the raw history inspector, and the output pager
//! opened and searched on a tool call of 50,000 lines.
//!
//! A frame is what the event loop does for it: `App::prepare` (lay out what will show, into the
//! caches) and then `render` into a `TestBackend` of the screen's size.

mod support;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use keel::tui::{App, OverlayKind, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use std::hint::black_box;
use std::time::{Duration, Instant};
use support::screen::long_session;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const MESSAGES: usize = 10_000;

fn app() -> App {
    let (commands, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(commands, TuiOptions::default());
    app.apply_snapshot(long_session(MESSAGES));
    app
}

fn frame(app: &mut App, terminal: &mut Terminal<TestBackend>) {
    app.prepare(Rect::new(0, 0, WIDTH, HEIGHT));
    terminal.draw(|frame| render(app, frame)).unwrap();
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap()
}

fn rendering(c: &mut Criterion) {
    let mut group = c.benchmark_group("render_120x40_10k_messages");

    // The frame drawn again and again while the agent works (the spinner turns, a tool runs).
    let mut steady = app();
    let mut screen = terminal();
    frame(&mut steady, &mut screen);
    group.bench_function("full_frame", |b| b.iter(|| frame(&mut steady, &mut screen)));

    // The first frame of a session just opened or resumed: nothing laid out yet.
    group.bench_function("first_frame", |b| {
        b.iter_batched(
            || (app(), terminal()),
            |(mut app, mut screen)| {
                frame(&mut app, &mut screen);
                (app, screen)
            },
            BatchSize::PerIteration,
        );
    });

    // PgUp into history not laid out before, from the bottom of a fresh session.
    group.bench_function("page_up_cold", |b| {
        b.iter_batched(
            || {
                let (mut app, mut screen) = (app(), terminal());
                frame(&mut app, &mut screen);
                (app, screen)
            },
            |(mut app, mut screen)| {
                app.handle_key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
                frame(&mut app, &mut screen);
                (app, screen)
            },
            BatchSize::PerIteration,
        );
    });

    // Paging up and down over what was seen before.
    let mut pager = app();
    let mut screen = terminal();
    frame(&mut pager, &mut screen);
    let mut up = true;
    group.bench_function("page_scroll_warm", |b| {
        b.iter(|| {
            let code = if up { KeyCode::PageUp } else { KeyCode::PageDown };
            up = !up;
            pager.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
            frame(&mut pager, &mut screen);
        });
    });

    // Ctrl+T: build the wire view of 10,000 messages and draw its first frame; Esc (untimed)
    // closes it again.
    let mut inspector = app();
    let mut screen = terminal();
    frame(&mut inspector, &mut screen);
    group.bench_function("open_history_overlay", |b| {
        b.iter_custom(|runs| {
            let mut total = Duration::ZERO;
            for _ in 0..runs {
                let started = Instant::now();
                inspector.handle_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
                frame(&mut inspector, &mut screen);
                total += started.elapsed();
                assert_eq!(black_box(inspector.overlay()), Some(OverlayKind::History));
                inspector.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
            }
            total
        });
    });
    group.finish();
}

/// Lines of the tool output the pager is measured on (`seq 1 50000`).
const OUTPUT_LINES: usize = 50_000;

fn pager(c: &mut Criterion) {
    let mut group = c.benchmark_group("output_pager_50k_lines");
    let output: String = (1..=OUTPUT_LINES).map(|n| format!("{n}\n")).collect();
    let run = keel::agent::ToolRun {
        id: "call_1".into(),
        name: "bash".into(),
        summary: "seq 1 50000".into(),
        status: keel::agent::ToolStatus::Succeeded,
        exit_code: Some(0),
        started: Instant::now(),
        duration: Some(Duration::from_millis(300)),
        output: output.into(),
    };
    let (commands, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(commands, TuiOptions::default());
    let tools = std::iter::once(std::sync::Arc::new(run)).collect();
    app.apply_snapshot(keel::agent::Snapshot { tools, ..keel::agent::Snapshot::default() });
    let mut screen = terminal();
    frame(&mut app, &mut screen);
    let key = |app: &mut App, code| app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    // Ctrl+G: index the output and draw the first frame; Esc (untimed) closes it.
    group.bench_function("open", |b| {
        b.iter_custom(|runs| {
            let mut total = Duration::ZERO;
            for _ in 0..runs {
                let started = Instant::now();
                app.handle_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL));
                frame(&mut app, &mut screen);
                total += started.elapsed();
                assert_eq!(black_box(app.overlay()), Some(OverlayKind::Output));
                key(&mut app, KeyCode::Esc);
            }
            total
        });
    });
    // `/31415` Enter over every line, the jump and its frame.
    group.bench_function("search", |b| {
        b.iter_custom(|runs| {
            let mut total = Duration::ZERO;
            for _ in 0..runs {
                app.handle_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL));
                key(&mut app, KeyCode::Char('/'));
                "31415".chars().for_each(|c| key(&mut app, KeyCode::Char(c)));
                let started = Instant::now();
                key(&mut app, KeyCode::Enter);
                frame(&mut app, &mut screen);
                total += started.elapsed();
                assert_eq!(black_box(app.pager().map(|pager| pager.hit_count())), Some(1));
                key(&mut app, KeyCode::Esc);
            }
            total
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = rendering, pager
}
criterion_main!(benches);
