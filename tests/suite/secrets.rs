//! The person's secrets reach neither a command nor an MCP server: the `keel` binary with a fake
//! model that asks a command (in the real bwrap sandbox, and unconfined) and the stdio test
//! server for the environment they got. Names the person's own config lets through arrive; a
//! workspace's config cannot let one through; `keel sandbox` names what was withheld.

use crate::support::mcp_server::{self, http_server, start_http, stdio_server};
use crate::support::{bin, llm};
use bin::{keel, output_within, text};
use llm::{FakeLlm, Step};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// What the person's shell holds: secrets by name, a token the config names for an MCP server,
/// and a setting that is no secret.
const VARS: [(&str, &str); 6] = [
    ("GITHUB_TOKEN", "ghp-secret-1"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret-2"),
    ("DB_PASSWORD", "db-secret-3"),
    ("stripe_api_key", "stripe-secret-4"),
    ("DOCS_AUTH", "docs-secret-5"),
    ("PLAIN_SETTING", "kept"),
];
/// The provider key, set only in the person's config file.
const FILE_KEY: &str = "sk-ant-file-key-0123456789";

struct Place {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Place {
    /// A home whose own config is the test MCP servers, the provider at `llm` with its key in
    /// the file, and `extra`; an empty workspace.
    async fn new(llm: &FakeLlm, extra: &str) -> Self {
        let http = start_http().await;
        let place = Self { home: tempfile::tempdir().unwrap(), work: tempfile::tempdir().unwrap() };
        let folder = place.home.path().join(".config/keel");
        std::fs::create_dir_all(&folder).unwrap();
        let config = format!(
            "provider = \"anthropic\"\napi_key = \"{FILE_KEY}\"\nbase_url = \"{}\"\n{extra}\n{}{}",
            llm.anthropic_base(),
            stdio_server("local", ""),
            http_server("docs", &http.url, "bearer_token_env_var = \"DOCS_AUTH\""),
        );
        std::fs::write(folder.join("config.toml"), config).unwrap();
        // The HTTP server lives as long as the runtime; it only needs to answer the handshake.
        std::mem::forget(http);
        place
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut command = keel(self.home.path());
        command.args(["-p", "show me the environment", "--workdir"]).arg(self.work.path());
        command.args(args).envs(VARS).env("LLM_COPY", format!("Bearer {FILE_KEY}"));
        output_within(&mut command, "keel -p asking for the environment")
    }
}

/// A model that asks a command and the stdio server for the environment, then stops.
fn asks_for_the_environment() -> Vec<Step> {
    let mut calls = vec![("bash".to_owned(), json!({"command": "env"}))];
    for (name, _) in VARS.iter().chain(&[("LLM_COPY", "")]) {
        calls.push(("mcp__local__env".to_owned(), json!({ "name": name })));
    }
    vec![Step { tools: calls, ..Step::default() }, llm::text("Done.")]
}

/// The tool results of the last request, in order (Anthropic's wire format).
fn results(bodies: &[Value]) -> Vec<String> {
    let last = bodies.last().unwrap();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// What the command and the server saw of each variable of [`VARS`] and `LLM_COPY`: the value,
/// or `None`.
fn seen(results: &[String]) -> (Vec<Option<String>>, Vec<Option<String>>) {
    let env = &results[0];
    let names = VARS.iter().map(|(name, _)| *name).chain(["LLM_COPY"]);
    let by_command = names
        .map(|name| {
            env.lines().find_map(|line| line.strip_prefix(&format!("{name}="))).map(str::to_owned)
        })
        .collect();
    let by_server = results[1..]
        .iter()
        .map(|answer| {
            let value = answer.lines().next().unwrap_or_default();
            (value != "(unset)").then(|| value.to_owned())
        })
        .collect();
    (by_command, by_server)
}

fn expect(passed: &[&str]) -> Vec<Option<String>> {
    VARS.iter()
        .map(|(name, value)| {
            (*name == "PLAIN_SETTING" || passed.contains(name)).then(|| (*value).to_owned())
        })
        .chain([None])
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_reach_neither_a_command_nor_an_mcp_server_sandboxed_or_not() {
    for args in [&[][..], &["--sandbox", "off"][..]] {
        let llm = FakeLlm::start(asks_for_the_environment(), Duration::ZERO).await;
        let place = Place::new(&llm, "").await;
        let output = place.run(args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", text(&output.stderr));
        let results = results(&llm.bodies().await);
        assert!(results[0].contains("PLAIN_SETTING=kept"), "{args:?}: the command ran");
        let (by_command, by_server) = seen(&results);
        assert_eq!(by_command, expect(&[]), "{args:?}: the command's environment");
        assert_eq!(by_server, expect(&[]), "{args:?}: the MCP server's environment");
        for (_, secret) in &VARS[..5] {
            assert!(!results.join("\n").contains(secret), "{args:?}: {secret} reached the model");
        }
        assert!(!results.join("\n").contains(FILE_KEY), "{args:?}: the key reached the model");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_config_lets_a_name_through_and_a_workspace_config_cannot() {
    let llm = FakeLlm::start(asks_for_the_environment(), Duration::ZERO).await;
    let place = Place::new(&llm, "pass_env = [\"DB_PASSWORD\", \"DOCS_AUTH\"]").await;
    project_file(place.work.path(), "pass_env = [\"GITHUB_TOKEN\"]\n");
    let output = place.run(&[]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ignored `pass_env` in the workspace's .keel/config.toml"), "{stderr}");
    let (by_command, by_server) = seen(&results(&llm.bodies().await));
    assert_eq!(by_command, expect(&["DB_PASSWORD", "DOCS_AUTH"]));
    assert_eq!(by_server, expect(&["DB_PASSWORD", "DOCS_AUTH"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_named_variable_reaches_that_server_only() {
    let llm = FakeLlm::start(asks_for_the_environment(), Duration::ZERO).await;
    let place = Place::new(&llm, "").await;
    let config = place.home.path().join(".config/keel/config.toml");
    let own = std::fs::read_to_string(&config).unwrap().replace(
        &format!("env = {{ {} = \"1\" }}\n", mcp_server::SERVE),
        &format!("env = {{ {} = \"1\" }}\nenv_vars = [\"GITHUB_TOKEN\"]\n", mcp_server::SERVE),
    );
    std::fs::write(&config, own).unwrap();
    let output = place.run(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let (by_command, by_server) = seen(&results(&llm.bodies().await));
    assert_eq!(by_command, expect(&[]));
    assert_eq!(by_server, expect(&["GITHUB_TOKEN"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn keel_sandbox_names_what_is_withheld_and_why_never_the_values() {
    let llm = FakeLlm::start(Vec::new(), Duration::ZERO).await;
    let place = Place::new(&llm, "pass_env = [\"DB_PASSWORD\"]").await;
    let mut command = keel(place.home.path());
    command.args(["sandbox", "--workdir"]).arg(place.work.path()).envs(VARS);
    let output = output_within(&mut command, "keel sandbox");
    let printed = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(printed.starts_with("Commands: sandbox: workspace · no network."), "{printed}");
    for line in [
        "GITHUB_TOKEN           its name holds TOKEN",
        "AWS_SECRET_ACCESS_KEY  its name holds SECRET",
        "stripe_api_key         its name holds KEY",
        "DOCS_AUTH              the token of MCP server `docs` (bearer_token_env_var)",
        "Let through by pass_env in your config: DB_PASSWORD",
    ] {
        assert!(printed.contains(line), "{line:?} missing:\n{printed}");
    }
    assert!(!printed.contains("PLAIN_SETTING"), "{printed}");
    for (_, secret) in VARS {
        assert!(!printed.contains(secret), "{secret} printed:\n{printed}");
    }
    assert!(llm.bodies().await.is_empty(), "nothing was sent to the model");
}

fn project_file(work: &Path, text: &str) {
    std::fs::create_dir_all(work.join(".keel")).unwrap();
    std::fs::write(work.join(".keel/config.toml"), text).unwrap();
}
