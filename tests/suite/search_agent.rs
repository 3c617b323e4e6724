//! The search tools through the agent, against the scripted model on loopback: offered with
//! their schemas and called over both wire protocols, run without asking in every approval mode
//! (`ask`, `read-only`) and in plan mode, and told as the other tools are — the conversation's
//! line and the tool pane with what was found, `keel -p`'s progress lines and JSON events.

use crate::support::{agent, bin, llm};
use agent::{Wire, start, until_result};
use bin::{json_lines, keel, output_within, text};
use keel::agent::{AgentConfig, AgentEvent, ApprovalMode, Command, Entry, Sessions, TurnOutcome};
use llm::{FakeLlm, Step, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// A workspace with needles in two files, and one that is `.ignore`d.
fn workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("src")).unwrap();
    std::fs::write(work.path().join("src/a.rs"), "fn a() {}\n// NEEDLE one\n").unwrap();
    std::fs::write(work.path().join("src/b.rs"), "// NEEDLE two\n").unwrap();
    std::fs::write(work.path().join("src/skip.rs"), "// NEEDLE ignored\n").unwrap();
    std::fs::write(work.path().join(".ignore"), "skip.rs\n").unwrap();
    work
}

/// A model that searches twice, then answers.
fn searches() -> Vec<Step> {
    vec![
        tool("grep", json!({"pattern": "NEEDLE", "path": "src/", "output": "files"})),
        tool("glob", json!({"pattern": "**/*.rs"})),
        llm::text("Found them."),
    ]
}

/// Every tool result the last request carries, on either protocol, in order.
fn results(bodies: &[Value]) -> Vec<String> {
    let last = bodies.last().expect("no request");
    let messages = last["messages"].as_array().cloned().unwrap_or_default();
    let mut results = Vec::new();
    for message in messages {
        if message["role"] == "tool" {
            results.push(message["content"].as_str().unwrap_or_default().to_owned());
        }
        for block in message["content"].as_array().cloned().unwrap_or_default() {
            if block["type"] == "tool_result" {
                results.push(block["content"].as_str().unwrap_or_default().to_owned());
            }
        }
    }
    results
}

/// The tools offered in a request, by name, on either protocol.
fn offered(body: &Value) -> Vec<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let name = |tool: &Value| {
        tool["name"].as_str().or(tool["function"]["name"].as_str()).map(str::to_owned)
    };
    tools.iter().filter_map(name).collect()
}

async fn searches_run_unasked_over(wire: Wire) {
    let server = FakeLlm::start(searches(), Duration::ZERO).await;
    let work = workspace();
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = start(&server, wire, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("find the needles".into())).unwrap();
    let events = until_result(&mut handle).await;
    let Some(AgentEvent::Result { outcome, .. }) = events.last() else { panic!("{events:?}") };
    assert_eq!(*outcome, TurnOutcome::Success);

    let bodies = server.bodies().await;
    let names = offered(&bodies[0]);
    assert!(names.contains(&"grep".to_owned()) && names.contains(&"glob".to_owned()), "{names:?}");
    let results = results(&bodies);
    assert_eq!(results.len(), 2, "{results:?}");
    let mut files: Vec<&str> = results[0].lines().take(2).collect();
    files.sort_unstable();
    assert_eq!(files, ["src/a.rs", "src/b.rs"], "{}", results[0]);
    assert!(results[0].ends_with("[2 files]"), "{}", results[0]);
    assert!(results[1].ends_with("[2 files]"), ".ignore'd skip.rs is left out: {}", results[1]);

    // Told as the other tools are: a line with the pattern and where, then what was found.
    let ends: Vec<(&str, Option<&str>)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolEnd { name, tally, is_error: false, .. } => {
                Some((name.as_str(), tally.as_deref()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ends, [("grep", Some("2 files")), ("glob", Some("2 files"))]);
    let mut snapshot = None;
    while let Ok(newer) = handle.snapshots.try_recv() {
        assert!(newer.pending_approval.is_none(), "a search never asks");
        snapshot = Some(newer);
    }
    let snapshot = snapshot.expect("a snapshot");
    let calls: Vec<(String, String)> = snapshot
        .transcript
        .iter()
        .filter_map(|entry| match entry {
            Entry::ToolCall { id, summary, .. } => Some((id.clone(), summary.clone())),
            _ => None,
        })
        .collect();
    let summaries: Vec<&str> = calls.iter().map(|(_, summary)| summary.as_str()).collect();
    assert_eq!(summaries, ["NEEDLE src/", "**/*.rs"]);
    for (id, _) in &calls {
        assert_eq!(snapshot.call_tallies.get(id).map(|tally| &**tally), Some("2 files"));
    }
    // The inspector shows the request as sent: the search tools' specs, their results.
    let sent = snapshot.last_sent.expect("a request was sent");
    let sent = String::from_utf8_lossy(&sent.body);
    assert!(sent.contains(keel::tools::search::GREP_DESCRIPTION), "{sent}");
    assert!(sent.contains(r#"\n[2 files]"#), "{sent}");
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_grep_and_glob_run_unasked_in_ask_mode() {
    searches_run_unasked_over(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_grep_and_glob_run_unasked_in_ask_mode() {
    searches_run_unasked_over(Wire::OpenAi).await;
}

/// `keel -p` in `work` against `server` (Anthropic), with `args`.
fn print(server: &FakeLlm, work: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = keel(home.path());
    command
        .args(["-p", "find the needles", "--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    output_within(&mut command, "keel -p")
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_mode_runs_searches_and_refuses_the_rest() {
    let mut script = searches();
    script.insert(2, tool("write_file", json!({"path": "x.txt", "content": "x"})));
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = workspace();
    let output = print(&server, work.path(), &["--approval", "read-only"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let results = results(&server.bodies().await);
    assert!(results[0].ends_with("[2 files]") && results[1].ends_with("[2 files]"), "{results:?}");
    assert!(results[2].contains("read-only mode: `write_file` is not allowed"), "{}", results[2]);
    assert!(results[2].contains("Only read_file, grep, glob and todo can run"), "{}", results[2]);
    assert!(!work.path().join("x.txt").exists());
    // The progress lines: the call, then what it found.
    assert!(stderr.contains("→ grep: NEEDLE src/\n  ✓ 2 files ("), "{stderr}");
    assert!(stderr.contains("→ glob: **/*.rs\n  ✓ 2 files ("), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_runs_searches_before_the_plan() {
    let mut script = searches();
    let plan = json!({"items": [{"id": "1", "text": "Fix the needles", "status": "pending"}]});
    script.insert(2, tool("todo", plan));
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = workspace();
    let output = print(&server, work.path(), &["--plan", "--output-format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let bodies = server.bodies().await;
    let first = bodies[0]["messages"][0]["content"].to_string();
    assert!(first.contains("read_file, grep, glob"), "the plan note names them: {first}");
    let results = results(&bodies);
    assert!(results[0].ends_with("[2 files]") && results[1].ends_with("[2 files]"), "{results:?}");

    // The JSON events: each call's summary, and what it found at its end (null for others).
    let events = json_lines(&output);
    let of = |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == kind).collect() };
    let starts: Vec<&str> = of("tool_start").iter().filter_map(|e| e["summary"].as_str()).collect();
    assert_eq!(starts, ["NEEDLE src/", "**/*.rs", "1 item, 0 completed"]);
    let tallies: Vec<&Value> = of("tool_end").iter().map(|e| &e["tally"]).collect();
    assert_eq!(tallies, [&json!("2 files"), &json!("2 files"), &Value::Null]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_regex_comes_back_as_an_error_and_the_turn_goes_on() {
    let script = vec![
        tool("grep", json!({"pattern": "fn main("})),
        tool("grep", json!({"pattern": r"fn main\("})),
        llm::text("Done."),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = workspace();
    let output = print(&server, work.path(), &[]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("✗ grep failed: Invalid regex `fn main(`:"), "{stderr}");
    assert!(stderr.contains("✓ no matches ("), "{stderr}");
    let results = results(&server.bodies().await);
    assert!(results[0].contains("unclosed group"), "{}", results[0]);
}

mod screen {
    use crate::support::screens::{base_snapshot, tool_call, transcript, user};
    use crate::support::tui::{app_with, draw, screen_text};
    use keel::agent::{Snapshot, ToolRun, ToolStatus};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn run(id: &str, name: &str, summary: &str, status: ToolStatus, output: &str) -> Arc<ToolRun> {
        Arc::new(ToolRun {
            id: id.into(),
            name: name.into(),
            summary: summary.into(),
            status,
            exit_code: (name == "bash").then_some(0),
            started: Instant::now(),
            duration: Some(Duration::from_millis(4)),
            output: Arc::from(output),
        })
    }

    /// A turn that searched, read and ran: each search's line ends with what it found, in the
    /// conversation and in the tool pane; a search that failed is marked as any call is.
    fn searched() -> Snapshot {
        let found = "src/a.rs:2:// NEEDLE one\nsrc/b.rs:1:// NEEDLE two\n[12 matches in 3 files]";
        Snapshot {
            transcript: transcript(vec![
                user("Where are the needles?"),
                tool_call("g1", "grep", "NEEDLE src/"),
                tool_call("g2", "glob", "**/*.rs"),
                tool_call("g3", "grep", "fn main("),
                tool_call("b1", "bash", "cargo test"),
            ]),
            tools: [
                run("g1", "grep", "NEEDLE src/", ToolStatus::Succeeded, found),
                run("g2", "glob", "**/*.rs", ToolStatus::Succeeded, "src/a.rs\n[14 files]"),
                run("g3", "grep", "fn main(", ToolStatus::Failed, "Invalid regex `fn main(`"),
                run("b1", "bash", "cargo test", ToolStatus::Succeeded, "ok"),
            ]
            .into_iter()
            .collect(),
            call_marks: [(
                "g3".to_owned(),
                keel::agent::CallMark { status: ToolStatus::Failed, hint: None, reason: None },
            )]
            .into_iter()
            .collect(),
            call_tallies: [
                ("g1".to_owned(), Arc::from("12 matches in 3 files")),
                ("g2".to_owned(), Arc::from("14 files")),
            ]
            .into_iter()
            .collect(),
            ..base_snapshot()
        }
    }

    #[test]
    fn a_search_line_says_what_it_found() {
        let (mut app, _rx) = app_with(searched());
        let terminal = draw(&mut app, (160, 20));
        let screen = screen_text(&terminal);
        assert!(screen.contains("▸ grep NEEDLE src/ · 12 matches in 3 files"), "{screen}");
        assert!(screen.contains("▸ glob **/*.rs · 14 files"), "{screen}");
        assert!(screen.contains("▸ grep fn main( ✗ failed"), "{screen}");
        assert!(screen.contains("✓ grep NEEDLE src/  12 matches in 3 files · 4ms"), "{screen}");
        assert!(screen.contains("✓ bash cargo test  exit 0 · 4ms"), "{screen}");
        insta::assert_snapshot!("search_lines_160x20", terminal.backend());
        // In a narrow pane the time gives way first, then the files counted.
        let terminal = draw(&mut app, (140, 20));
        let screen = screen_text(&terminal);
        assert!(screen.contains("✓ grep NEEDLE src/  12 matches in 3 files "), "{screen}");
        let terminal = draw(&mut app, (100, 20));
        let screen = screen_text(&terminal);
        assert!(screen.contains("✓ grep NEEDLE src/  12 matches "), "{screen}");
        insta::assert_snapshot!("search_lines_100x20", terminal.backend());
    }

    #[test]
    fn a_tally_that_arrives_after_the_line_was_drawn_is_added_to_it() {
        let mut before = searched();
        before.call_tallies = imbl::HashMap::new();
        let (mut app, _rx) = app_with(before);
        let screen = screen_text(&draw(&mut app, (100, 24)));
        assert!(screen.contains("▸ grep NEEDLE src/\u{20}"), "{screen}");
        assert!(!screen.contains("12 matches"), "{screen}");
        app.apply_snapshot(searched());
        let screen = screen_text(&draw(&mut app, (100, 24)));
        assert!(screen.contains("▸ grep NEEDLE src/ · 12 matches in 3 files"), "{screen}");
    }
}

mod resumed {
    use keel::agent::journal::{Record, SessionStore};
    use keel::agent::{self, AgentConfig, Command, Sessions};
    use keel::message::{ContentBlock, Message, Role};
    use keel::runtime::Workspace;
    use keel::tools::Tools;
    use serde_json::json;
    use std::time::Duration;

    #[tokio::test]
    async fn a_resumed_session_shows_what_its_searches_found() {
        let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let sessions = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
        let mut log = sessions.create().unwrap();
        let call = |id: &str, name: &str, pattern: &str| ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input: json!({ "pattern": pattern }),
        };
        let result = |id: &str, content: &str, is_error| ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
        };
        let messages = [
            Message::user_text("Where is it?"),
            Message::assistant(vec![
                call("g1", "grep", "NEEDLE"),
                call("g2", "glob", "**/*.py"),
                call("g3", "grep", "fn ("),
            ]),
            Message {
                role: Role::User,
                content: vec![
                    result("g1", "a.rs:1:NEEDLE\n[1 match in 1 file]", false),
                    result("g2", "[No files match: 3 files looked at (skipped: …).]", false),
                    result("g3", "Invalid regex `fn (`: …\n[not a tally]", true),
                ],
            },
            Message::assistant(vec![ContentBlock::Text { text: "In a.rs.".into() }]),
        ];
        for message in messages {
            log.append(&Record::Message { message }).unwrap();
        }
        let id = log.id().to_owned();
        drop(log);
        let (log, restored) = sessions.open(&id).unwrap();
        let tools = Tools::new(Workspace::new(dir.path()).unwrap());
        let resumed = Sessions::Resume(sessions.clone(), log, restored);
        let mut handle = agent::spawn_with_session(AgentConfig::default(), None, tools, resumed);
        let wait = Duration::from_secs(30);
        let snapshot = tokio::time::timeout(wait, handle.snapshots.recv()).await.unwrap().unwrap();
        let mut tallies: Vec<(String, String)> = snapshot
            .call_tallies
            .iter()
            .map(|(id, tally)| (id.clone(), tally.to_string()))
            .collect();
        tallies.sort();
        assert_eq!(
            tallies,
            [
                ("g1".to_owned(), "1 match in 1 file".to_owned()),
                ("g2".to_owned(), "no files match".to_owned())
            ]
        );
        handle.commands.send(Command::Quit).unwrap();
        tokio::time::timeout(wait, handle.task).await.unwrap().unwrap();
    }
}
