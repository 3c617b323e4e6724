//! The scripted LLM over a bare TCP socket, for tests that kill keel while it waits for an answer.
//!
//! wiremock sends a body whole or not at all; this server can also hold one answer back — before
//! its first byte, or after half of it — until the client goes away, and says when it is
//! holding, so a test can kill keel at exactly that point. Which step it plays is worked out from
//! each request as in [`super::answer`], so a resumed keel picks up where its history says.

use super::{Protocol, Step, answer};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Where the server holds an answer back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Send nothing at all: keel waits for the model to start.
    BeforeAnswer,
    /// Send the status line, the headers and half the stream, then nothing: the model is
    /// mid-answer.
    MidStream,
}

#[derive(Debug, Default)]
struct Shared {
    steps: Vec<Step>,
    /// How long each answer waits before its first byte.
    pace: Duration,
    bodies: Vec<Value>,
    /// The step to hold the answer of, once.
    hold: Option<(usize, Hold)>,
}

/// The running server.
pub struct RawLlm {
    base: String,
    shared: Arc<Mutex<Shared>>,
    held: watch::Receiver<bool>,
}

impl RawLlm {
    /// Serves `steps`, each answer after `pace`.
    pub async fn start(steps: Vec<Step>, pace: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Mutex::new(Shared { steps, pace, ..Shared::default() }));
        let (held_tx, held) = watch::channel(false);
        let held_tx = Arc::new(held_tx);
        let serving = Arc::clone(&shared);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, Arc::clone(&serving), Arc::clone(&held_tx)));
            }
        });
        Self { base, shared, held }
    }

    /// Holds back the answer to the request for step `step`, the next time it is asked for.
    pub fn hold(&self, step: usize, how: Hold) {
        self.shared.lock().unwrap().hold = Some((step, how));
    }

    /// Forgets a hold that was never reached.
    pub fn cancel_hold(&self) {
        self.shared.lock().unwrap().hold = None;
    }

    /// Waits until an answer is being held; fails the test after `limit`.
    pub async fn wait_until_holding(&mut self, limit: Duration) {
        tokio::time::timeout(limit, self.held.wait_for(|held| *held))
            .await
            .expect("keel never asked for the step whose answer is held")
            .unwrap();
    }

    pub fn anthropic_base(&self) -> String {
        self.base.clone()
    }

    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.base)
    }

    /// The JSON bodies of the requests received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.shared.lock().unwrap().bodies.clone()
    }
}

async fn serve(mut socket: TcpStream, shared: Arc<Mutex<Shared>>, held: Arc<watch::Sender<bool>>) {
    let Some((path, body)) = read_request(&mut socket).await else { return };
    let protocol =
        if path.contains("chat/completions") { Protocol::OpenAi } else { Protocol::Anthropic };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (hold, sse, pace) = {
        let mut shared = shared.lock().unwrap();
        shared.bodies.push(body.clone());
        let (index, sse) = answer(&shared.steps, protocol, &body);
        let hold = match (shared.hold, index) {
            (Some((step, how)), Some(index)) if step == index => {
                shared.hold = None;
                Some(how)
            }
            _ => None,
        };
        (hold, sse, shared.pace)
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        sse.len()
    );
    match hold {
        None => {
            tokio::time::sleep(pace).await;
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(sse.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
        Some(how) => {
            if how == Hold::MidStream {
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&sse.as_bytes()[..sse.len() / 2]).await;
                let _ = socket.flush().await;
            }
            held.send_replace(true);
            // Until keel is gone.
            let mut sink = [0; 1024];
            while socket.read(&mut sink).await.is_ok_and(|read| read > 0) {}
        }
    }
}

/// Reads one HTTP request: its path and body (by content-length).
async fn read_request(socket: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut bytes = Vec::new();
    let mut chunk = [0; 8192];
    let head_end = loop {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        bytes.extend_from_slice(&chunk[..read]);
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
    let path = head.split_whitespace().nth(1)?.to_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while bytes.len() < head_end + length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
    Some((path, bytes[head_end..head_end + length].to_vec()))
}
