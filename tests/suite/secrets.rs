//! The person's secrets reach neither a command nor an MCP server: the `keel` binary, as root
//! and as an unprivileged user, with a scripted model that runs `env` through the `bash` tool
//! (in the real bwrap sandbox, and unconfined) and asks the stdio test server for variables.
//! What the model was sent is what is checked. Only the allow-list passes, and a value on it
//! that looks like a secret is withheld; the person's own `pass_env` lets a name, and a
//! secret-looking value, through; a workspace's config cannot; `keel sandbox` names every
//! variable withheld and why, never a value.

use crate::support::bin::{keel, output_within, text};
use crate::support::files::outside_tmp;
use crate::support::keel_as::{Run, User, keel_p};
use crate::support::llm::{Step, text as says};
use crate::support::mcp_server::{self, http_server, stdio_server};
use serde_json::json;
use std::path::Path;

/// Random characters as vendors' tokens have them.
const BODY: &str = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
/// A signed JWT, as CI systems hand one to a job.
const JWT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2JfMTIzIiwicHJvamVjdCI6ImtlZWwifQ.c2lnbmF0dXJlLW9mLXRoZS1qb2I";
/// Another, unsigned, where no JWT belongs.
const UNSIGNED_JWT: &str = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0aW1lem9uZSJ9.";

/// Secrets under names that are not on the allow-list, each value marked so that any piece of it
/// reaching the model is found.
fn secret_names() -> Vec<(&'static str, String)> {
    vec![
        ("DATABASE_URL", "postgres://u:pass-db-1@db/x".into()),
        ("MYSQL_PWD", "mysql-secret-2".into()),
        ("GITHUB_PAT", format!("github_pat_11AAAAAAA0_{BODY}")),
        ("NPM_CONFIG__AUTH", "bnBtOm5wbS1zZWNyZXQtMw==".into()),
        ("SENTRY_DSN", "https://sentrykey4@o1.ingest.sentry.io/1".into()),
        ("CI_JOB_JWT", JWT.into()),
        ("GITHUB_TOKEN", format!("ghp_{BODY}")),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into()),
        ("PLAIN_SETTING", "kept-out-7".into()),
    ]
}

/// Secrets in values under names on the allow-list, each of a shape the issue lists.
fn secret_values() -> Vec<(&'static str, String)> {
    vec![
        ("HTTPS_PROXY", "http://user:proxy-pw-5@proxy:3128".into()),
        ("http_proxy", "http://user:proxy-pw-6@proxy:3128".into()),
        ("CFLAGS", format!("-O2 -DTOKEN=ghp_{BODY}")),
        ("CXXFLAGS", format!("-DPAT=github_pat_22BBBBBBB0_{BODY}")),
        ("RUSTFLAGS", "--cfg gitlab=glpat-xYz12AbCdEfGhIjKlMnO".into()),
        ("GOFLAGS", "-ldflags=-X=main.slack=xoxb-1234567890-1234567890123-AbCdEfGhIjKl".into()),
        ("NODE_OPTIONS", "--title=AKIAIOSFODNN7EXAMPLE".into()),
        ("MAKEFLAGS", format!("OPENAI=sk-proj-{BODY}")),
        ("TZ", UNSIGNED_JWT.into()),
    ]
}

/// Values on the allow-list that are no secrets: they must arrive as they are.
const ORDINARY: [(&str, &str); 5] = [
    ("LANG", "C.UTF-8"),
    ("https_proxy", "https://proxy:3128"),
    ("NO_PROXY", "localhost,127.0.0.1,.corp.example"),
    ("LDFLAGS", "-L/opt/sk-tools/lib"),
    ("CARGO_HOME", "/home/x/.cargo"),
];

/// A piece of `value` that only it holds, to look for in what the model was sent.
fn marker(value: &str) -> &str {
    let longest = value.split(['@', '=', ' ', ':', '/']).max_by_key(|part| part.len());
    longest.unwrap_or(value)
}

/// A home whose own config is `config`, and a workspace; both outside `/tmp`.
fn place(config: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let (home, work) = (outside_tmp(), outside_tmp());
    let folder = home.path().join(".config/keel");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("config.toml"), config).unwrap();
    (home, work)
}

/// `keel -p` as `user`, with every secret and ordinary variable in its environment, against a
/// model that runs `env` and then asks the MCP server `local` (when configured) for `asked`.
fn run(user: User, home: &Path, work: &Path, args: &[&str], asked: &[&str]) -> Run {
    let mut calls = vec![("bash".to_owned(), json!({"command": "env"}))];
    for name in asked {
        calls.push(("mcp__local__env".to_owned(), json!({ "name": name })));
    }
    let steps = vec![Step { tools: calls, ..Step::default() }, says("Done.")];
    keel_p(user, steps, home, work, args, |command| {
        command.envs(secret_names()).envs(secret_values()).envs(ORDINARY);
        command.env("KEEL_SECRET_SETTING", "keel-setting-8");
    })
}

/// The value of `name` in `env`'s output, if it was there.
fn seen<'a>(env: &'a str, name: &str) -> Option<&'a str> {
    env.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
}

#[test]
fn no_secret_of_the_list_reaches_the_model_by_name_or_by_value() {
    for user in User::BOTH {
        for args in [&[][..], &["--sandbox", "off"][..]] {
            let (home, work) = place("");
            let run = run(user, home.path(), work.path(), args, &[]);
            assert_eq!(run.output.status.code(), Some(0), "{user:?} {args:?}: {}", run.stderr());
            let env = run.results.first().map(String::as_str).unwrap_or_default();
            assert!(seen(env, "PATH").is_some(), "{user:?} {args:?}: `env` ran: {env}");
            for (name, value) in ORDINARY {
                assert_eq!(seen(env, name), Some(value), "{user:?} {args:?}: {name}:\n{env}");
            }
            assert_eq!(seen(env, "GIT_TERMINAL_PROMPT"), Some("0"), "{user:?} {args:?}");
            let sent = run.all_results();
            for (name, value) in secret_names().into_iter().chain(secret_values()) {
                assert_eq!(seen(env, name), None, "{user:?} {args:?}: {name} reached the model");
                let marker = marker(&value);
                assert!(!sent.contains(marker), "{user:?} {args:?}: {marker} ({name}) was sent");
            }
            assert!(!sent.contains("keel-setting-8"), "{user:?} {args:?}: a KEEL_* setting");
            assert!(!sent.contains("sk-test"), "{user:?} {args:?}: the provider key");
        }
    }
}

#[test]
fn the_persons_pass_env_lets_a_name_and_a_secret_value_through_and_a_workspaces_cannot() {
    for user in User::BOTH {
        let (home, work) = place(
            "pass_env = [\"GITHUB_PAT\", \"CFLAGS\", \"ANTHROPIC_API_KEY\", \"KEEL_SECRET_SETTING\"]\n",
        );
        std::fs::create_dir_all(work.path().join(".keel")).unwrap();
        let project = "pass_env = [\"DATABASE_URL\", \"HTTPS_PROXY\", \"MYSQL_PWD\"]\n";
        std::fs::write(work.path().join(".keel/config.toml"), project).unwrap();
        let run = run(user, home.path(), work.path(), &[], &[]);
        let stderr = run.stderr();
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {stderr}");
        assert!(
            stderr.contains("ignored `pass_env` in the workspace's .keel/config.toml"),
            "{user:?}: {stderr}"
        );
        let env = run.results.first().map(String::as_str).unwrap_or_default();
        let given = |name: &str| {
            secret_names().into_iter().chain(secret_values()).find(|(n, _)| *n == name).unwrap().1
        };
        assert_eq!(seen(env, "GITHUB_PAT"), Some(given("GITHUB_PAT").as_str()), "{user:?}: {env}");
        assert_eq!(seen(env, "CFLAGS"), Some(given("CFLAGS").as_str()), "{user:?}: {env}");
        for name in ["DATABASE_URL", "HTTPS_PROXY", "MYSQL_PWD", "CXXFLAGS"] {
            assert_eq!(seen(env, name), None, "{user:?}: {name} got through:\n{env}");
        }
        for name in ["ANTHROPIC_API_KEY", "KEEL_SECRET_SETTING"] {
            assert_eq!(seen(env, name), None, "{user:?}: pass_env let {name} through");
        }
    }
}

#[test]
fn an_mcp_server_gets_the_allow_list_and_its_own_env_vars() {
    for user in User::BOTH {
        let server = stdio_server("local", "env_vars = [\"GITHUB_PAT\"]");
        let (home, work) = place(&server);
        let asked = [
            "LANG",
            "https_proxy",
            "GITHUB_PAT",
            mcp_server::SERVE,
            "DATABASE_URL",
            "HTTPS_PROXY",
            "CFLAGS",
            "PLAIN_SETTING",
            "KEEL_SECRET_SETTING",
            "ANTHROPIC_API_KEY",
        ];
        let run = run(user, home.path(), work.path(), &[], &asked);
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
        let answers: Vec<&str> =
            run.results[1..].iter().map(|answer| answer.lines().next().unwrap_or("")).collect();
        let pat = format!("github_pat_11AAAAAAA0_{BODY}");
        let expected = [
            "C.UTF-8",
            "https://proxy:3128",
            pat.as_str(),
            "1",
            "(unset)",
            "(unset)",
            "(unset)",
            "(unset)",
            "(unset)",
            "(unset)",
        ];
        assert_eq!(answers, expected, "{user:?}: {asked:?}");
        // The command beside it did not get what the server's env_vars named.
        assert_eq!(seen(&run.results[0], "GITHUB_PAT"), None, "{user:?}");
    }
}

#[test]
fn keel_sandbox_names_every_variable_withheld_and_why_never_a_value() {
    let config = format!(
        "provider = \"anthropic\"\npass_env = [\"GITHUB_PAT\"]\napi_key = \"sk-ant-file-key-0123456789\"\n{}",
        http_server("docs", "http://127.0.0.1:9/mcp", "bearer_token_env_var = \"DOCS_AUTH\"")
    );
    let (home, work) = place(&config);
    let mut command = keel(home.path());
    command.args(["sandbox", "--workdir"]).arg(work.path());
    command.envs(secret_names()).envs(secret_values()).envs(ORDINARY);
    command
        .env("KEEL_SECRET_SETTING", "keel-setting-8")
        .env("OPENAI_API_KEY", "sk-openai-secret-9")
        .env("DOCS_AUTH", "docs-token-10")
        .env("LLM_COPY", "Bearer sk-ant-file-key-0123456789");
    let output = output_within(&mut command, "keel sandbox");
    let printed = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let why = |name: &str| {
        printed.lines().find_map(|line| {
            let rest = line.strip_prefix("  ")?.strip_prefix(name)?;
            rest.starts_with("  ").then(|| rest.trim())
        })
    };
    for (name, reason) in [
        ("DATABASE_URL", "not on the allow-list"),
        ("MYSQL_PWD", "not on the allow-list"),
        ("NPM_CONFIG__AUTH", "not on the allow-list"),
        ("SENTRY_DSN", "not on the allow-list"),
        ("CI_JOB_JWT", "not on the allow-list"),
        ("PLAIN_SETTING", "not on the allow-list"),
        ("HTTPS_PROXY", "its value looks like a secret: a URL with a password"),
        ("CFLAGS", "its value looks like a secret: a token (ghp_…)"),
        ("CXXFLAGS", "its value looks like a secret: a token (github_pat_…)"),
        ("RUSTFLAGS", "its value looks like a secret: a token (glpat-…)"),
        ("GOFLAGS", "its value looks like a secret: a token (xox?-…)"),
        ("NODE_OPTIONS", "its value looks like a secret: a token (AKIA…)"),
        ("MAKEFLAGS", "its value looks like a secret: a token (sk-…)"),
        ("TZ", "its value looks like a secret: a JWT"),
        ("OPENAI_API_KEY", "a provider key"),
        ("KEEL_SECRET_SETTING", "one of keel's own settings"),
        ("LLM_COPY", "its value holds the provider key"),
        ("DOCS_AUTH", "the token of MCP server `docs` (bearer_token_env_var)"),
    ] {
        assert_eq!(why(name), Some(reason), "{name}:\n{printed}");
    }
    for name in ["GITHUB_PAT", "LANG", "https_proxy", "NO_PROXY"] {
        assert_eq!(why(name), None, "{name} is not withheld:\n{printed}");
    }
    assert!(printed.contains("Let through by pass_env in your config: GITHUB_PAT\n"), "{printed}");
    let handed = printed.lines().find(|line| line.starts_with("Handed on: ")).unwrap_or_default();
    for name in ["GITHUB_PAT", "LANG", "https_proxy", "NO_PROXY", "LDFLAGS", "CARGO_HOME"] {
        assert!(handed.split([' ', ',']).any(|word| word == name), "{name}: {handed}");
    }
    let values = secret_names().into_iter().chain(secret_values()).map(|(_, value)| value);
    for value in
        values.chain(["keel-setting-8", "sk-openai-secret-9", "docs-token-10"].map(String::from))
    {
        let marker = marker(&value);
        assert!(!printed.contains(marker), "{marker} printed:\n{printed}");
    }
    assert!(!printed.contains("sk-ant-file-key"), "{printed}");
    // The hidden paths' lines name places such as `$CARGO_HOME/credentials`: the environment's
    // part of the report is what must name no value.
    let environment = printed.split_once("Withheld from commands").map_or("", |(_, rest)| rest);
    assert!(!environment.is_empty(), "{printed}");
    for (_, value) in ORDINARY {
        assert!(!environment.contains(value), "values are never printed, even ordinary ones");
    }
}
