//! The scripted LLM served the way vendors stream: HTTP/1.1 kept alive, each answer sent with
//! `transfer-encoding: chunked`, one chunk per event, and the closing zero-length chunk a moment
//! after the last event — so a client that stops reading at the protocol's end marker leaves the
//! body unfinished and cannot reuse the connection. Counts the connections it accepts.

use super::{Protocol, Step, answer};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How long after the last event the body is closed, as a streaming server's does.
const CLOSING_DELAY: Duration = Duration::from_millis(20);

/// A running chunked server.
pub struct ChunkedLlm {
    pub base: String,
    accepted: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
}

impl ChunkedLlm {
    pub async fn start(steps: Vec<Step>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (accepted, requests) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (count, served) = (Arc::clone(&accepted), Arc::clone(&requests));
        let steps = Arc::new(steps);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve(stream, Arc::clone(&steps), Arc::clone(&served)));
            }
        });
        Self { base, accepted, requests }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Requests answered so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

async fn serve(mut stream: TcpStream, steps: Arc<Vec<Step>>, served: Arc<AtomicUsize>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let head_end = loop {
            if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).to_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0);
        while buffer.len() < head_end + length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let protocol =
            if head.contains("/chat/completions") { Protocol::OpenAi } else { Protocol::Anthropic };
        let body: Value =
            serde_json::from_slice(&buffer[head_end..head_end + length]).unwrap_or(Value::Null);
        buffer.drain(..head_end + length);
        let (_, sse) = answer(&steps, protocol, &body);
        let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
            transfer-encoding: chunked\r\n\r\n"
            .to_vec();
        for event in sse.split_inclusive("\n\n") {
            out.extend_from_slice(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes());
        }
        if stream.write_all(&out).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        served.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(CLOSING_DELAY).await;
        if stream.write_all(b"0\r\n\r\n").await.is_err() {
            return;
        }
    }
}
