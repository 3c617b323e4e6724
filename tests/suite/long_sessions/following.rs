//! A model that keeps no plan but the board keel renders back to it (`llm::follower`) finishes
//! twenty steps at three times the window without planning again; and the follower finds a whole
//! board and nothing less.

use super::{PROMPT, Run, STEPS, WINDOW, compactions, parse, rendered_board, run, workspace};
use crate::support::{bin, llm};
use bin::{last_result, text};
use llm::FakeLlm;
use llm::window::{self, Switches, TooLong};

/// The whole lists a run's model sent after its first plan: each one a plan made again because
/// the model could not tell from what keel rendered where the work stood.
fn re_plans(run: &Run) -> usize {
    let plans = run.events.iter().filter(|event| {
        event["type"] == "tool_start"
            && event["name"] == "todo"
            && event["input"]["items"].is_array()
    });
    plans.count().saturating_sub(1)
}

/// How the board-following model's task is run: tool output per step, the model's own words
/// per step, and whether the window is a small one keel must compact within.
struct Following {
    what: &'static str,
    output: usize,
    chatter: usize,
    small_window: bool,
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_reads_only_the_board_keel_renders_finishes_twenty_steps_without_re_planning()
{
    // The model keeps no plan of its own (`llm::follower`): every answer comes from the newest
    // board keel rendered in the request, and it updates with `update` beside each step's
    // command. Once where the task fits the window, and twice with three times the window of
    // tool output in all: masking enough, then with the model's words making keel summarise.
    let overflow = 3 * WINDOW * window::BYTES_PER_TOKEN / STEPS;
    let cases = [
        Following { what: "fits", output: 3_000, chatter: 0, small_window: false },
        Following { what: "3x the window", output: overflow, chatter: 0, small_window: true },
        Following { what: "3x, summarised", output: overflow, chatter: 1500, small_window: true },
    ];
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        for case in &cases {
            let what = format!("{protocol}, {}", case.what);
            let mut switches = Switches::window(WINDOW, words);
            let mut args = vec!["-p", PROMPT];
            if case.small_window {
                args.extend(["--context-window", window_arg.as_str()]);
            } else {
                switches.max_body = None;
            }
            let server = FakeLlm::start_following(STEPS, case.chatter, switches).await;
            let (home, work) = (tempfile::tempdir().unwrap(), workspace(case.output));
            let run = run(&server, protocol, (home.path(), work.path()), &args).await;
            assert_eq!(re_plans(&run), 0, "{what}: the board it read back was always whole");
            assert!(run.output.status.success(), "{what}: {}", text(&run.output.stderr));
            let result = last_result(&run.events);
            let done = (result["done"].as_u64(), result["total"].as_u64());
            assert_eq!(done, (Some(20), Some(20)), "{what}");
            assert_eq!(result["text"], llm::follower::DONE, "{what}");
            let log = std::fs::read_to_string(work.path().join("progress.log")).unwrap();
            let expected: String = (1..=STEPS).map(|k| format!("step {k}\n")).collect();
            assert_eq!(log, expected, "{what}: every step once, in order");
            let summaries =
                run.bodies.iter().filter(|body| window::is_summary_request(&parse(body))).count();
            // The plan, twenty steps, the closing answer: nothing asked twice.
            assert_eq!(run.bodies.len() - summaries, STEPS + 2, "{what}");
            let events = compactions(&run);
            if case.small_window {
                assert!(STEPS * case.output >= 3 * WINDOW * window::BYTES_PER_TOKEN);
                assert!(!events.is_empty(), "{what}: keel had to compact");
                assert_eq!(summaries > 0, case.chatter > 0, "{what}: {events:?}");
                let limit = WINDOW * window::BYTES_PER_TOKEN;
                assert!(run.bodies.iter().all(|body| body.len() <= limit), "{what}");
            } else {
                assert!(events.is_empty(), "{what}");
            }
        }
    }
}

#[test]
fn the_following_model_finds_a_whole_board_and_nothing_less() {
    use llm::follower::parse_board;
    let board = rendered_board(1);
    let items = parse_board(&board).unwrap();
    assert_eq!(items.len(), STEPS);
    assert_eq!(
        (items[0].0.as_str(), items[1].0.as_str(), items[1].1.as_str()),
        ("[x]", "[>]", "2")
    );
    let reminder = format!("<reminder>Update your todos.</reminder>\n\n{board}");
    assert_eq!(parse_board(&reminder), Some(items));
    assert_eq!(parse_board("No todos."), Some(Vec::new()));
    // A line of what changed, or a board cut short, does not say where the work stands.
    assert_eq!(parse_board("Updated: #1 completed, #2 in_progress.\n(1/20 completed)"), None);
    let cut: Vec<&str> = board.lines().skip(1).collect();
    assert_eq!(parse_board(&cut.join("\n")), None);
}
