//! Limits on what a server sends, against the real binary and a raw local server: a response
//! larger than keel reads of one is refused with a clear error; a tool input over the cap is
//! refused with a message the model can act on, and the session goes on (`--continue` works); a
//! server that trickles bytes without progress is given up on after the stall timeout.

use crate::support::{bin, llm};
use bin::{keel, output_within};
use llm::{FakeLlm, Step, anthropic_sse, text, tool};
use serde_json::json;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A tool input over keel's cap (1 MiB).
const OVERSIZED_INPUT_BYTES: usize = 1_200_000;
/// Padded keep-alive events in a response that passes keel's cap on one response (32 MiB).
const PINGS: usize = 1_200;
const PING_PAD_BYTES: usize = 30_000;
/// How long the trickling server waits between bytes.
const TRICKLE: Duration = Duration::from_millis(100);

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

fn run(home: &Path, work: &Path, base: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = keel(home);
    command
        .arg("--workdir")
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", base);
    for (name, value) in env {
        command.env(name, value);
    }
    output_within(&mut command, "keel -p")
}

/// A server that answers every request with `body` as an event stream, a byte at a time every
/// `pace` when given; returns its base URL.
async fn raw_server(body: String, pace: Option<Duration>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(answer(socket, body.clone(), pace));
        }
    });
    base
}

async fn answer(mut socket: TcpStream, body: String, pace: Option<Duration>) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 64 * 1024];
    // The request: headers, then as many bytes as its content-length says.
    loop {
        let read = socket.read(&mut buffer).await.unwrap_or(0);
        if read == 0 {
            return;
        }
        request.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&request);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|n| n.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                break;
            }
        }
    }
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    match pace {
        None => {
            let _ = socket.write_all(body.as_bytes()).await;
        }
        Some(pace) => {
            for byte in body.as_bytes() {
                if socket.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(pace).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_tool_input_is_refused_and_the_session_goes_on() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let content = "x".repeat(OVERSIZED_INPUT_BYTES);
    let steps: Vec<Step> = vec![
        tool("write_file", json!({"path": "big.txt", "content": content})),
        text("Done."),
        text("Carried on."),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let first = run(home.path(), work.path(), &server.anthropic_base(), &["-p", "Write it."], &[]);
    assert!(first.status.success(), "{}", said(&first));
    assert!(said(&first).contains("more than the 1024 KiB one call may carry"), "{}", said(&first));
    assert!(!work.path().join("big.txt").exists());

    let args = ["-p", "Go on.", "--continue"];
    let second = run(home.path(), work.path(), &server.anthropic_base(), &args, &[]);
    assert!(second.status.success(), "--continue works after the refusal: {}", said(&second));
    assert!(said(&second).contains("Carried on."), "{}", said(&second));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_past_the_size_cap_is_refused() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Keep-alive events, each padded, then a whole answer: only the size is wrong.
    let ping = format!(
        "event: ping\ndata: {{\"type\":\"ping\",\"pad\":\"{}\"}}\n\n",
        "y".repeat(PING_PAD_BYTES)
    );
    let body = ping.repeat(PINGS) + &anthropic_sse(&text("Hello."), 0);
    assert!(body.len() > 32 << 20);
    let base = raw_server(body, None).await;
    let output = run(home.path(), work.path(), &base, &["-p", "Say a lot."], &[]);
    assert!(!output.status.success(), "{}", said(&output));
    assert!(said(&output).contains("the most keel reads of one response"), "{}", said(&output));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trickling_server_is_given_up_on_after_the_stall_timeout() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let base = raw_server(anthropic_sse(&text("Hello there."), 0), Some(TRICKLE)).await;
    let started = Instant::now();
    let env = [("KEEL_STALL_TIMEOUT", "1")];
    let output = run(home.path(), work.path(), &base, &["-p", "Hi."], &env);
    assert!(!output.status.success(), "{}", said(&output));
    assert!(said(&output).contains("no progress for 1s"), "{}", said(&output));
    // Four retries of a one-second stall and their back-off, not the trickle's minutes.
    assert!(started.elapsed() < Duration::from_secs(25), "{:?}", started.elapsed());
}
