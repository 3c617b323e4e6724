#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What one frame costs with a long session on screen: a full frame at 120×40 (conversation of
//! 10,000 messages of mixed Markdown, a board of 20 items, the tool pane and the status bar),
//! scrolling by a page, and the first frame of the raw history inspector.
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

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = rendering
}
criterion_main!(benches);
