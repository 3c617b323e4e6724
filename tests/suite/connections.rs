//! One connection serves a whole session: each answer's stream is read to its end, so its
//! connection is back in the pool before the next request starts. Counted by a scripted server
//! that streams as vendors do (chunked, the body closed a moment after the last event), for
//! `keel -p` on a ten-step task (32 requests), on both protocols.

use crate::support::{bin, llm};
use bin::{json_lines, keel, last_result, output_within, text};
use llm::chunked::ChunkedLlm;

async fn connections_for_ten_steps(provider: &str) {
    let server = ChunkedLlm::start(llm::ten_step_task()).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command
        .args(["-p", "Do the ten steps.", "--output-format", "json", "--workdir"])
        .arg(work.path());
    match provider {
        "anthropic" => {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", &server.base)
        }
        _ => {
            command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", format!("{}/v1", server.base))
        }
    };
    let run = tokio::task::spawn_blocking(move || {
        output_within(&mut command, "the ten-step task against the chunked server")
    });
    let output = run.await.unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(last_result(&json_lines(&output))["done"], 10);
    assert_eq!(server.requests(), 32, "32 requests were made");
    assert_eq!(server.connections(), 1, "{provider}: one connection served all 32");
}

#[tokio::test]
async fn one_connection_serves_a_whole_anthropic_session() {
    connections_for_ten_steps("anthropic").await;
}

#[tokio::test]
async fn one_connection_serves_a_whole_openai_session() {
    connections_for_ten_steps("openai").await;
}
