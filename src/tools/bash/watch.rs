//! Following a running command: both output pipes read as they stream, the deadline, the
//! person's interrupt, and the supervisor's word that the shell ended.

use crate::runtime::supervisor::protocol::Status;
use crate::runtime::supervisor::{Event, Output, Supervised};
use crate::tools::ToolContext;
use crate::tools::output::{self, CappedBuffer, DISPLAY_OUTPUT_LIMIT, Utf8Decoder};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::{Instant, sleep_until};

/// After the shell exits, how long background children may keep its output open before they are
/// stopped.
const PIPE_GRACE: Duration = Duration::from_millis(500);
/// After the command is killed, how long to collect what is still in the pipes.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(250);
/// How often live output is forwarded to the tool pane.
const LIVE_FLUSH_INTERVAL: Duration = Duration::from_millis(50);
/// The most live output held between two forwards; older text is skipped in favour of the newest.
const LIVE_PENDING_LIMIT: usize = 64 * 1024;
/// Bytes read from a pipe at once.
const READ_CHUNK: usize = 64 * 1024;

/// How watching ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// The shell exited and every pipe closed.
    Finished(Status),
    /// The shell exited but background processes held the output open past the grace period.
    Lingering(Status),
    TimedOut,
    Interrupted,
    /// The supervisor went away without a word.
    Lost,
}

/// An output pipe of the command.
type Pipe = Box<dyn AsyncRead + Unpin + Send>;

/// One output pipe and what has been kept of it.
struct Stream {
    pipe: Option<Pipe>,
    kept: CappedBuffer,
    decoder: Utf8Decoder,
}

impl Stream {
    fn new(pipe: Option<impl AsyncRead + Unpin + Send + 'static>) -> Self {
        Self {
            pipe: pipe.map(|pipe| Box::new(pipe) as Pipe),
            kept: CappedBuffer::new(DISPLAY_OUTPUT_LIMIT / 2),
            decoder: Utf8Decoder::default(),
        }
    }

    /// Reads the next chunk; `None` (and the pipe closed) at the end or on a read error.
    async fn read(&mut self, buf: &mut [u8]) -> Option<usize> {
        let pipe = self.pipe.as_mut()?;
        match pipe.read(buf).await {
            Ok(0) | Err(_) => {
                self.pipe = None;
                None
            }
            Ok(n) => Some(n),
        }
    }
}

/// Reads `pipe` when it is open; never resolves when it is closed.
async fn read_open(stream: &mut Stream, buf: &mut [u8]) -> Option<usize> {
    if stream.pipe.is_none() {
        return std::future::pending().await;
    }
    stream.read(buf).await
}

/// Sleeps until `deadline` when there is one; never resolves otherwise.
async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// A running command's output: what is kept, and what goes to the tool pane.
pub struct Session {
    /// stdout, then stderr.
    streams: [Stream; 2],
    live: Live,
    buf: Vec<u8>,
}

impl Session {
    pub fn new(output: Output, live_output: Option<UnboundedSender<String>>) -> Self {
        Self {
            streams: [Stream::new(output.stdout), Stream::new(output.stderr)],
            live: Live::new(live_output),
            buf: vec![0u8; READ_CHUNK],
        }
    }

    /// What was kept of stdout and stderr.
    pub fn kept(&self) -> [&CappedBuffer; 2] {
        let [out, err] = &self.streams;
        [&out.kept, &err.kept]
    }

    pub fn flush(&mut self) {
        self.live.flush();
    }

    /// Reads both pipes until the command is over or must be killed.
    pub async fn watch(
        &mut self,
        supervised: &mut Supervised,
        deadline: Instant,
        ctx: &ToolContext<'_>,
    ) -> Watched {
        let mut err_buf = vec![0u8; READ_CHUNK];
        let mut exit: Option<Status> = None;
        let mut grace_deadline: Option<Instant> = None;
        let mut flush = tokio::time::interval(LIVE_FLUSH_INTERVAL);
        flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if let Some(status) = exit
                && self.streams.iter().all(|stream| stream.pipe.is_none())
            {
                return Watched::Finished(status);
            }
            let [out, err] = &mut self.streams;
            // Not biased: a command that prints without pause must not starve the other pipe,
            // the flush or the deadline.
            tokio::select! {
                () = ctx.cancel.cancelled() => return Watched::Interrupted,
                () = sleep_until(deadline) => return Watched::TimedOut,
                () = sleep_until_some(grace_deadline) => {
                    if let Some(status) = exit {
                        return Watched::Lingering(status);
                    }
                }
                read = read_open(out, &mut self.buf) => {
                    if let Some(n) = read {
                        self.live.push(out, &self.buf[..n]);
                    }
                }
                read = read_open(err, &mut err_buf) => {
                    if let Some(n) = read {
                        self.live.push(err, &err_buf[..n]);
                    }
                }
                event = supervised.next_event(), if exit.is_none() => match event {
                    Event::Exited(status) => {
                        exit = Some(status);
                        grace_deadline = Some(Instant::now() + PIPE_GRACE);
                    }
                    Event::Lost => return Watched::Lost,
                },
                _ = flush.tick() => self.live.flush(),
            }
        }
    }

    /// Collects what is left in the pipes after the command was killed, for a short while.
    pub async fn drain(&mut self) {
        let until = Instant::now() + DRAIN_AFTER_KILL;
        for stream in &mut self.streams {
            while stream.pipe.is_some() {
                match tokio::time::timeout_at(until, stream.read(&mut self.buf)).await {
                    Ok(Some(n)) => self.live.push(stream, &self.buf[..n]),
                    Ok(None) => break,
                    Err(_elapsed) => return,
                }
            }
        }
    }
}

/// Output forwarded to the tool pane while the command runs: collected between flushes, and
/// bounded, keeping the newest text if the command prints faster than it is shown.
struct Live {
    sender: Option<UnboundedSender<String>>,
    pending: String,
    skipped: u64,
}

impl Live {
    fn new(sender: Option<UnboundedSender<String>>) -> Self {
        Self { sender, pending: String::new(), skipped: 0 }
    }

    /// Keeps `chunk` from `stream` (always) and queues it for the pane (when there is one).
    fn push(&mut self, stream: &mut Stream, chunk: &[u8]) {
        stream.kept.push(chunk);
        if self.sender.is_none() {
            return;
        }
        self.pending.push_str(&stream.decoder.decode(chunk));
        if self.pending.len() > LIVE_PENDING_LIMIT {
            let mut cut = self.pending.len() - LIVE_PENDING_LIMIT;
            while !self.pending.is_char_boundary(cut) {
                cut += 1;
            }
            self.skipped += cut as u64;
            self.pending.drain(..cut);
        }
    }

    fn flush(&mut self) {
        let Some(sender) = &self.sender else {
            return;
        };
        if self.pending.is_empty() {
            return;
        }
        let mut text = std::mem::take(&mut self.pending);
        if self.skipped > 0 {
            text.insert_str(0, output::omitted_marker(self.skipped).trim_start());
            self.skipped = 0;
        }
        if sender.send(text).is_err() {
            self.sender = None;
        }
    }
}
