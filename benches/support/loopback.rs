//! A minimal HTTP/1.1 server on 127.0.0.1 that plays a script over SSE and notes when each request
//! arrived and when its answer was fully sent, so a benchmark can tell keel's time from the
//! server's. Keeps connections alive, as reqwest expects. Shared by the benchmarks.
//!
//! [`Play::ByNewestCall`] serves a compacting agent: the step to play is the one after the
//! newest tool call's (a compacted history holds fewer answers than were played), requests
//! without tools are keel's summary requests and get a summary, and each prompt's tokens are
//! reported as a quarter of its bytes, as a real server would count them.
#![allow(dead_code)]

use super::fake_llm::{self, Step, window};
use keel::llm::anthropic::AnthropicClient;
use keel::llm::retry::RetryPolicy;
use keel::llm::{HttpSettings, Provider};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// When one exchange happened, and how big the request was.
#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    pub request_arrived: Instant,
    pub answer_sent: Instant,
    pub request_bytes: usize,
    /// A summary request (one without tools), not a round of the task.
    pub summary: bool,
}

/// How the server picks the step to play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Play {
    /// The step after the answers the history holds; fixed usage figures.
    ByAnswers,
    /// The step after the newest tool call's; summaries answered; usage counted (see above).
    ByNewestCall,
}

/// keel's Anthropic client for a loopback server at `base_url`, with the usual timeouts.
pub fn provider(base_url: &str) -> Provider {
    let settings = HttpSettings {
        base_url: base_url.to_owned(),
        api_key: "bench".into(),
        model: "bench".into(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(30),
        stall_timeout: Duration::from_secs(30),
        retry: RetryPolicy::default(),
    };
    Provider::Anthropic(AnthropicClient::new(settings).unwrap())
}

/// A running loopback server.
pub struct Loopback {
    pub base_url: String,
    pub exchanges: Arc<Mutex<Vec<Exchange>>>,
    pub bodies: Arc<Mutex<Vec<Value>>>,
    /// Connections accepted so far.
    pub connections: Arc<AtomicUsize>,
    /// How long each answer waits before it goes out, as a model's would (none unless set).
    pub pace: Arc<Mutex<Duration>>,
}

/// Whether the server keeps every request body it parsed (for benchmarks that inspect them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    Keep,
    /// Neither parse nor keep them: a long session's requests weigh megabytes each.
    Drop,
}

impl Loopback {
    /// Serves `steps` as an Anthropic Messages endpoint, keeping each request's body.
    pub async fn start(steps: Vec<Step>) -> Self {
        Self::start_with(steps, Bodies::Keep).await
    }

    /// Serves `steps` as an Anthropic Messages endpoint.
    pub async fn start_with(steps: Vec<Step>, keep: Bodies) -> Self {
        Self::start_playing(steps, keep, Play::ByAnswers).await
    }

    /// Serves `steps` as an Anthropic Messages endpoint, playing them as `play` says.
    pub async fn start_playing(steps: Vec<Step>, keep: Bodies, play: Play) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let steps = Arc::new(steps);
        let (log, kept) = (Arc::clone(&exchanges), Arc::clone(&bodies));
        let connections = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::clone(&connections);
        let pace = Arc::new(Mutex::new(Duration::ZERO));
        let paced = Arc::clone(&pace);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::Relaxed);
                // The answer goes out in two writes; Nagle would hold the second back.
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve(
                    stream,
                    Arc::clone(&steps),
                    Arc::clone(&log),
                    Arc::clone(&kept),
                    keep,
                    play,
                    Arc::clone(&paced),
                ));
            }
        });
        Self { base_url, exchanges, bodies, connections, pace }
    }

    /// Connections accepted since the last call.
    pub fn take_connections(&self) -> usize {
        self.connections.swap(0, Ordering::Relaxed)
    }

    pub fn take(&self) -> Vec<Exchange> {
        std::mem::take(&mut *self.exchanges.lock().unwrap())
    }

    /// The exchanges so far, once there are `count` of them: the client may read an answer's
    /// last byte, and exit, before the server's task has logged it. Panics after a second.
    #[allow(dead_code)] // not every bench counts exchanges
    pub fn take_when(&self, count: usize) -> Vec<Exchange> {
        const PATIENCE: Duration = Duration::from_secs(1);
        let deadline = Instant::now() + PATIENCE;
        while self.exchanges.lock().unwrap().len() < count && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let exchanges = self.take();
        assert_eq!(exchanges.len(), count, "the server answered {} requests", exchanges.len());
        exchanges
    }
}

async fn serve(
    mut stream: TcpStream,
    steps: Arc<Vec<Step>>,
    log: Arc<Mutex<Vec<Exchange>>>,
    bodies: Arc<Mutex<Vec<Value>>>,
    keep: Bodies,
    play: Play,
    pace: Arc<Mutex<Duration>>,
) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        // Headers.
        let header_end = loop {
            if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        let headers = String::from_utf8_lossy(&buffer[..header_end]).to_lowercase();
        let length: usize = headers
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0);
        while buffer.len() < header_end + length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let request_arrived = Instant::now();
        let raw = &buffer[header_end..header_end + length];
        let (answered, body) = match keep {
            Bodies::Keep => {
                let body: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
                let answered = body["messages"].as_array().map_or(0, |messages| {
                    messages.iter().filter(|m| m["role"] == "assistant").count()
                });
                (answered, Some(body))
            }
            // keel writes compact JSON: each answer so far is one `"role":"assistant"`.
            Bodies::Drop => {
                (String::from_utf8_lossy(raw).matches(r#""role":"assistant""#).count(), None)
            }
        };
        let (sse, summary) = match play {
            Play::ByAnswers => {
                let step = steps.get(answered).cloned().unwrap_or_else(|| fake_llm::text("Over."));
                (fake_llm::anthropic_sse(&step, answered), false)
            }
            Play::ByNewestCall => {
                // keel writes compact JSON, and a summary request offers no tools.
                let summary = !String::from_utf8_lossy(raw).contains(r#""tools":[{"#);
                let tokens = Some((length / window::BYTES_PER_TOKEN) as u64);
                let index = if summary { 0 } else { window::step_by_id(raw) };
                let step = match summary {
                    true => fake_llm::text(window::SUMMARY),
                    false => steps.get(index).cloned().unwrap_or_else(|| fake_llm::text("Over.")),
                };
                (fake_llm::anthropic_sse_with(&step, index, tokens), summary)
            }
        };
        buffer.drain(..header_end + length);
        let pause = *pace.lock().unwrap();
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
            sse.len()
        );
        if stream.write_all(head.as_bytes()).await.is_err()
            || stream.write_all(sse.as_bytes()).await.is_err()
        {
            return;
        }
        let _ = stream.flush().await;
        log.lock().unwrap().push(Exchange {
            request_arrived,
            answer_sent: Instant::now(),
            request_bytes: length,
            summary,
        });
        if let Some(body) = body {
            bodies.lock().unwrap().push(body);
        }
    }
}
