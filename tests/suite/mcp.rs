//! keel as an MCP client, end to end: the `keel` binary with servers in the person's config —
//! the test server of `mcp_support` over stdio and over Streamable HTTP on 127.0.0.1 — and a
//! fake model that calls their tools. Nothing is mocked between keel and the servers.

use crate::support::mcp_server;
use crate::support::{bin, llm};

use bin::{json_lines, keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use mcp_server::{http_server, start_http, stdio_server};
use serde_json::{Value, json};
use std::process::Output;
use std::time::{Duration, Instant};

/// Not a test: the entry point of the stdio test server (see `support::mcp_server`). It does nothing
/// unless the server's variable is set, which only keel's config for the test server does.
#[test]
fn mcp_server_process() {
    if std::env::var_os(mcp_server::SERVE).is_some() {
        mcp_server::serve_stdio();
    }
}

/// A person's home with `config` as their own config file, and an empty workspace.
struct Place {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Place {
    fn new(config: &str) -> Self {
        let place = Self { home: tempfile::tempdir().unwrap(), work: tempfile::tempdir().unwrap() };
        let folder = place.home.path().join(".config/keel");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("config.toml"), config).unwrap();
        place
    }

    /// `keel -p PROMPT --output-format json` against `llm`, Anthropic's wire format unless
    /// `openai`.
    fn run(&self, llm: &FakeLlm, openai: bool, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = keel(self.home.path());
        command
            .args(["-p", "use the tools", "--output-format", "json", "--workdir"])
            .arg(self.work.path())
            .args(args);
        if openai {
            command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", llm.openai_base());
        } else {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", llm.anthropic_base());
        }
        command.envs(env.iter().copied());
        output_within(&mut command, "keel -p with MCP servers")
    }

    fn log(&self, server: &str) -> String {
        let path = self.home.path().join(format!(".local/state/keel/mcp/{server}.log"));
        std::fs::read_to_string(path).unwrap_or_default()
    }
}

/// The results of the tool calls in the last request, in order (Anthropic's wire format).
fn results(bodies: &[Value]) -> Vec<(String, bool)> {
    let last = bodies.last().unwrap();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| {
            let content = match &block["content"] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            (content, block["is_error"].as_bool().unwrap_or(false))
        })
        .collect()
}

/// The names of the tools a request offered, in either wire format.
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().or(tool["function"]["name"].as_str()).unwrap().to_owned())
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn calls(names: &[(&str, Value)]) -> Step {
    Step {
        tools: names.iter().map(|(name, input)| ((*name).to_owned(), input.clone())).collect(),
        ..Step::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_offered_with_their_schemas_in_the_first_request_in_both_wire_formats() {
    let http = start_http().await;
    let config = format!(
        "{}{}",
        stdio_server("local", ""),
        http_server("remote", &http.url, "bearer_token_env_var = \"REMOTE_TOKEN\"")
    );
    let place = Place::new(&config);
    for openai in [false, true] {
        let llm = FakeLlm::start(vec![text("Nothing to do.")], Duration::ZERO).await;
        let output = place.run(&llm, openai, &[], &[("REMOTE_TOKEN", "sesame")]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let bodies = llm.bodies().await;
        let first = &bodies[0];
        let names = tool_names(first);
        for name in ["mcp__local__echo", "mcp__local__die", "mcp__remote__echo"] {
            assert!(names.contains(&name.to_owned()), "{name} not offered: {names:?}");
        }
        let echo = first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool_names(&json!({"tools": [tool]}))[0] == "mcp__remote__echo")
            .unwrap();
        let expected = &mcp_server::tools()[0]["inputSchema"];
        if openai {
            assert_eq!(echo["function"]["description"], "Echoes its text back.");
            assert_eq!(&echo["function"]["parameters"], expected);
        } else {
            assert_eq!(echo["description"], "Echoes its text back.");
            assert_eq!(&echo["input_schema"], expected);
        }
    }
    let seen = http.authorizations.lock().unwrap().clone();
    assert!(!seen.is_empty() && seen.iter().all(|header| header == "Bearer sesame"), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_are_answered_with_text_images_and_errors_over_both_transports() {
    let http = start_http().await;
    let config = format!("{}{}", stdio_server("local", ""), http_server("remote", &http.url, ""));
    let place = Place::new(&config);
    let llm = FakeLlm::start(
        vec![
            calls(&[
                ("mcp__local__echo", json!({"text": "hi"})),
                ("mcp__remote__echo", json!({"text": "there"})),
                ("mcp__local__picture", json!({})),
                ("mcp__remote__fail", json!({})),
            ]),
            text("Done."),
        ],
        Duration::ZERO,
    )
    .await;
    let output = place.run(&llm, false, &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = results(&llm.bodies().await);
    assert_eq!(results[0], ("echo: hi".to_owned(), false));
    assert_eq!(results[1], ("echo: there".to_owned(), false));
    assert_eq!(
        results[2],
        ("[image: image/png, about 72 bytes, not shown]\na red pixel".to_owned(), false)
    );
    assert_eq!(results[3], ("it went wrong".to_owned(), true));
    // -p's JSON events carry the calls like any other tool's.
    let events = json_lines(&output);
    let started: Vec<&str> = events
        .iter()
        .filter(|event| event["type"] == "tool_start")
        .map(|event| event["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        started,
        ["mcp__local__echo", "mcp__remote__echo", "mcp__local__picture", "mcp__remote__fail"]
    );
    let ended: Vec<bool> = events
        .iter()
        .filter(|event| event["type"] == "tool_end")
        .map(|event| event["is_error"].as_bool().unwrap())
        .collect();
    assert_eq!(ended, [false, false, false, true]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_fails_hangs_or_dies_gives_a_clear_error_and_the_turn_goes_on() {
    let place = Place::new("");
    // A server that never answers, whose own child must go with it.
    let grandchild = place.home.path().join("grandchild.pid");
    let mute = format!(
        "[mcp_servers.mute]\ncommand = \"sh\"\nargs = [\"-c\", 'sleep 30 & echo $! > \"$0\"; wait', \
         {grandchild:?}]\nstartup_timeout_ms = 500\n"
    );
    let config = format!(
        "{}{mute}{}{}",
        "[mcp_servers.missing]\ncommand = \"/nonexistent/mcp-server\"\n",
        stdio_server("slow", "tool_timeout_ms = 500"),
        stdio_server("dying", ""),
    );
    std::fs::write(place.home.path().join(".config/keel/config.toml"), config).unwrap();
    let llm = FakeLlm::start(
        vec![
            calls(&[
                ("mcp__slow__sleep", json!({})),
                ("mcp__dying__die", json!({})),
                ("mcp__dying__echo", json!({"text": "still there?"})),
                ("mcp__missing__anything", json!({})),
                ("mcp__slow__echo", json!({"text": "after the timeout"})),
            ]),
            text("Carried on."),
        ],
        Duration::ZERO,
    )
    .await;
    let started = Instant::now();
    let output = place.run(&llm, false, &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    let results = results(&llm.bodies().await);
    let (sleep, die, after_death, missing, after_timeout) =
        (&results[0], &results[1], &results[2], &results[3], &results[4]);
    assert!(sleep.1 && sleep.0.contains("did not answer `sleep` within 500 ms"), "{sleep:?}");
    assert!(die.1 && die.0.contains("MCP server `dying` could not run `die`"), "{die:?}");
    assert!(after_death.1 && after_death.0.contains("`dying` is not available"), "{after_death:?}");
    assert!(missing.1 && missing.0.contains("`missing` is not available"), "{missing:?}");
    assert!(missing.0.contains("/nonexistent/mcp-server"), "{missing:?}");
    assert_eq!(after_timeout, &("echo: after the timeout".to_owned(), false));
    let told = stderr(&output);
    assert!(told.contains("MCP server `missing` failed: could not start"), "{told}");
    assert!(told.contains("MCP server `mute` failed: did not start within 500 ms"), "{told}");
    let grandchild = std::fs::read_to_string(grandchild).unwrap();
    assert!(wait_gone(grandchild.trim()), "the silent server's child outlived its timeout");
    let events = json_lines(&output);
    assert_eq!(events.last().unwrap()["outcome"], "success");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workspace_config_may_not_start_servers() {
    let place = Place::new("");
    let marker = place.work.path().join("started");
    let project = place.work.path().join(".keel");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("config.toml"),
        format!("[mcp_servers.evil]\ncommand = \"touch\"\nargs = [{:?}]\n", marker),
    )
    .unwrap();
    let llm = FakeLlm::start(vec![text("Hello.")], Duration::ZERO).await;
    let output = place.run(&llm, false, &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let told = stderr(&output);
    assert!(told.contains("ignored `mcp_servers` in the workspace's .keel/config.toml"), "{told}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "the workspace's server was started");
    let names = tool_names(&llm.bodies().await[0]);
    assert!(names.iter().all(|name| !name.starts_with("mcp__")), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_gets_no_provider_key_unless_its_config_names_it() {
    let config = format!(
        "{}{}",
        stdio_server("plain", ""),
        stdio_server("given", "env_vars = [\"OPENAI_API_KEY\"]")
    );
    let place = Place::new(&config);
    let env = |server: &str, name: &str| (format!("mcp__{server}__env"), json!({ "name": name }));
    let asked = [
        env("plain", "ANTHROPIC_API_KEY"),
        env("plain", "OPENAI_API_KEY"),
        env("plain", "KEEL_SECRET"),
        env("plain", "TZ"),
        env("given", "OPENAI_API_KEY"),
    ];
    let step = Step { tools: asked.to_vec(), ..Step::default() };
    let llm = FakeLlm::start(vec![step, text("Done.")], Duration::ZERO).await;
    let vars = [("OPENAI_API_KEY", "sk-openai"), ("KEEL_SECRET", "s"), ("TZ", "kept")];
    let output = place.run(&llm, false, &[], &vars);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results: Vec<String> =
        results(&llm.bodies().await).into_iter().map(|(text, _)| text).collect();
    assert_eq!(results[0].lines().next(), Some("(unset)"));
    assert_eq!(results[1].lines().next(), Some("(unset)"));
    assert_eq!(results[2].lines().next(), Some("(unset)"));
    assert_eq!(results[3].lines().next(), Some("kept"));
    assert_eq!(results[4].lines().next(), Some("sk-openai"));
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_and_plan_mode_run_only_tools_marked_read_only() {
    let place = Place::new(&stdio_server("local", ""));
    for args in [&["--approval", "read-only"][..], &["--plan"][..]] {
        let llm = FakeLlm::start(
            vec![
                calls(&[
                    ("mcp__local__write", json!({})),
                    ("mcp__local__echo", json!({"text": "x"})),
                ]),
                text("Done."),
            ],
            Duration::ZERO,
        )
        .await;
        let output = place.run(&llm, false, args, &[]);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        let results = results(&llm.bodies().await);
        assert!(results[0].1, "{args:?}: {results:?}");
        assert!(results[0].0.contains("does not mark it read-only"), "{args:?}: {results:?}");
        assert_eq!(results[1], ("echo: x".to_owned(), false), "{args:?}");
    }
}

/// Whether the process `pid` still runs (a zombie does not count).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

fn wait_gone(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_are_gone_when_keel_exits_or_is_killed() {
    let place = Place::new("");
    let pid_file = place.home.path().join("server.pid");
    let config = stdio_server("local", &format!("[mcp_servers.local.env]\n{}", ""))
        .replace(
            &format!("env = {{ {} = \"1\" }}", mcp_server::SERVE),
            &format!(
                "env = {{ {} = \"1\", {} = {:?} }}",
                mcp_server::SERVE,
                mcp_server::PID_FILE,
                pid_file
            ),
        )
        .replace("[mcp_servers.local.env]\n", "");
    std::fs::write(place.home.path().join(".config/keel/config.toml"), &config).unwrap();

    let llm = FakeLlm::start(
        vec![tool("mcp__local__echo", json!({"text": "x"})), text("Done.")],
        Duration::ZERO,
    )
    .await;
    let output = place.run(&llm, false, &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(wait_gone(&pid), "the server {pid} outlived keel");

    // Killed outright mid-call: the server's stdin closes, and it ends.
    std::fs::remove_file(&pid_file).unwrap();
    let llm =
        FakeLlm::start(vec![tool("mcp__local__sleep", json!({})), text("Done.")], Duration::ZERO)
            .await;
    let mut command = keel(place.home.path());
    command
        .args(["-p", "sleep", "--workdir"])
        .arg(place.work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", llm.anthropic_base())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while llm.bodies().await.is_empty() || !pid_file.exists() {
        assert!(Instant::now() < deadline, "keel never started the call");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(alive(&pid));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(wait_gone(&pid), "the server {pid} outlived keel killed");
}

#[tokio::test(flavor = "multi_thread")]
async fn keel_mcp_list_prints_the_servers_and_their_tools() {
    let http = start_http().await;
    let config = format!(
        "{}{}[mcp_servers.off]\ncommand = \"x\"\nenabled = false\n[mcp_servers.broken]\ncommand = \"/nonexistent/x\"\n",
        stdio_server("local", ""),
        http_server("remote", &http.url, "")
    );
    let place = Place::new(&config);
    let mut command = keel(place.home.path());
    command.args(["mcp", "list", "--workdir"]).arg(place.work.path());
    let output = output_within(&mut command, "keel mcp list");
    // A server that failed fails the listing, for a script that checks it.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.contains("local (ready, 7 tools) — sh -c"), "{printed}");
    assert!(printed.contains("remote (ready, 7 tools) — http://127.0.0.1:"), "{printed}");
    assert!(printed.contains("  mcp__local__echo [read-only]  Echoes its text back."), "{printed}");
    assert!(printed.contains("off (disabled) — x"), "{printed}");
    assert!(printed.contains("broken (failed: could not start `/nonexistent/x`"), "{printed}");
    // The stdio server's stderr (here libtest's own lines) went to its log, not to the screen.
    assert!(place.log("local").contains("running 1 test"), "{}", place.log("local"));
    assert!(!stderr(&output).contains("running 1 test"), "{}", stderr(&output));

    // Without the broken one, the listing succeeds.
    let place = Place::new(&stdio_server("local", ""));
    let mut command = keel(place.home.path());
    command.args(["mcp", "list", "--workdir"]).arg(place.work.path());
    let output = output_within(&mut command, "keel mcp list");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_server_entry_with_a_mistake_is_refused_naming_it() {
    let place = Place::new("[mcp_servers.both]\ncommand = \"a\"\nurl = \"http://x\"\n");
    let mut command = keel(place.home.path());
    command.args(["mcp", "list", "--workdir"]).arg(place.work.path());
    let output = output_within(&mut command, "keel mcp list");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("mcp_servers.both has both command and url"),
        "{}",
        stderr(&output)
    );
}
