//! The `bash` tool: one shell command in the workspace, bounded in time and in memory.
//!
//! The command runs as `bash -c` in the workspace root with stdin from `/dev/null`, in a process
//! group of its own, so that a timeout, the person's interrupt, or the call being dropped kills
//! everything it started — also children that outlive the shell. Output is read while it streams:
//! forwarded to the tool pane, and kept in [`CappedBuffer`]s so a command that prints gigabytes
//! costs the same memory as one that prints a line. When the shell exits while background children
//! still hold its output open, keel waits a moment, then stops them rather than hang.

use super::output::{self, CappedBuffer, DISPLAY_OUTPUT_LIMIT, MODEL_OUTPUT_LIMIT, Utf8Decoder};
use super::{ToolContext, ToolOutcome, guard};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::{Instant, sleep_until};

/// How long a command may run when the model does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest the model may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// The shortest timeout keel grants, so a `timeout_ms` of 0 still lets the command start.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(100);
/// After the shell exits, how long background children may keep its output open before they are
/// stopped.
const PIPE_GRACE: Duration = Duration::from_millis(500);
/// After the group is killed, how long to collect what is still in the pipes.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(250);
/// How often live output is forwarded to the tool pane.
const LIVE_FLUSH_INTERVAL: Duration = Duration::from_millis(50);
/// The most live output held between two forwards; older text is skipped in favour of the newest.
const LIVE_PENDING_LIMIT: usize = 64 * 1024;
/// The most a section title (`--- stdout ---` and its newlines) adds to the output.
const SECTION_TITLE_BYTES: usize = 20;
/// Bytes read from a pipe at once.
const READ_CHUNK: usize = 64 * 1024;
/// Variables that keep programs from waiting for a person who cannot answer.
const NONINTERACTIVE_ENV: &[(&str, &str)] =
    &[("GIT_TERMINAL_PROMPT", "0"), ("GIT_PAGER", "cat"), ("PAGER", "cat")];

/// The arguments the model sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BashArgs {
    pub command: String,
    pub timeout_ms: Option<u64>,
}

/// The JSON schema the model reads.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "The command line, run with `bash -c` in the workspace root."
            },
            "timeout_ms": {
                "type": "integer",
                "minimum": 0,
                "description": format!(
                    "Milliseconds before the command is killed. Default {}, at most {}.",
                    DEFAULT_TIMEOUT.as_millis(),
                    MAX_TIMEOUT.as_millis()
                )
            }
        },
        "required": ["command"]
    })
}

pub const DESCRIPTION: &str = "Run a shell command with bash in the workspace root and return its \
exit code, stdout and stderr. stdin is empty, so never run anything that waits for input (use \
non-interactive flags). The command is killed, with every process it started, when the timeout \
expires. Long output is shortened to its start and its end. Prefer read_file, write_file and \
edit_file for reading and changing files.";

/// The timeout the model asked for, within keel's bounds.
pub fn timeout_for(args: &BashArgs) -> Duration {
    args.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis).clamp(MIN_TIMEOUT, MAX_TIMEOUT)
}

/// Runs the command and reports how it ended.
pub async fn run(root: &Path, args: &BashArgs, ctx: &ToolContext) -> ToolOutcome {
    if let Err(reason) = guard::check_command(&args.command) {
        return ToolOutcome::error(format!(
            "Refused to run this command: {reason}. keel does not run it in any approval mode."
        ));
    }
    if ctx.cancel.is_cancelled() {
        return ToolOutcome::error("Command not started: interrupted by user.");
    }
    let timeout = timeout_for(args);
    let mut child = match spawn(root, &args.command) {
        Ok(child) => child,
        Err(err) => return ToolOutcome::error(format!("Could not start bash: {err}")),
    };
    let group = GroupKiller::new(child.id());
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let started = Instant::now();
    let mut session = Session {
        streams: [Stream::new(stdout), Stream::new(stderr)],
        live: Live::new(ctx.live_output.clone()),
    };
    let ending = session.watch(&mut child, &group, started + timeout, timeout, ctx).await;
    session.live.flush();
    if matches!(ending, Ending::Exited { stopped_stragglers: false, .. }) {
        // A clean exit: whatever the command left running in the background with its output
        // redirected elsewhere (a server, say) was meant to keep running.
        group.disarm();
    }
    ending.into_outcome(&session.streams, started.elapsed())
}

fn spawn(root: &Path, command: &str) -> std::io::Result<Child> {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (name, value) in NONINTERACTIVE_ENV {
        cmd.env(name, value);
    }
    cmd.spawn()
}

/// Kills the command's process group when told to, or when dropped before it was disarmed (the
/// call was abandoned half way).
struct GroupKiller {
    pgid: Option<Pid>,
}

impl GroupKiller {
    fn new(pid: Option<u32>) -> Self {
        Self { pgid: pid.and_then(|pid| i32::try_from(pid).ok()).map(Pid::from_raw) }
    }

    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (nothing left in the group) is the good outcome; nothing else can be done
            // about other failures.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }

    fn disarm(mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An output pipe of the child.
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

/// How the command ended.
enum Ending {
    Exited {
        status: ExitStatus,
        /// Background children held the output open past the grace period and were stopped.
        stopped_stragglers: bool,
    },
    TimedOut(Duration),
    Interrupted,
    /// The child could not be waited for.
    Lost(std::io::Error),
}

struct Session {
    /// stdout, then stderr.
    streams: [Stream; 2],
    live: Live,
}

impl Session {
    /// Reads both pipes until the command is over, and kills the group when it must.
    async fn watch(
        &mut self,
        child: &mut Child,
        group: &GroupKiller,
        deadline: Instant,
        timeout: Duration,
        ctx: &ToolContext,
    ) -> Ending {
        let mut out_buf = vec![0u8; READ_CHUNK];
        let mut err_buf = vec![0u8; READ_CHUNK];
        let mut exit: Option<ExitStatus> = None;
        let mut grace_deadline: Option<Instant> = None;
        let mut flush = tokio::time::interval(LIVE_FLUSH_INTERVAL);
        flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let ending = loop {
            if let Some(status) = exit
                && self.streams.iter().all(|stream| stream.pipe.is_none())
            {
                break Ending::Exited { status, stopped_stragglers: false };
            }
            let [out, err] = &mut self.streams;
            // Not biased: a command that prints without pause must not starve the other pipe,
            // the flush or the deadline.
            tokio::select! {
                () = ctx.cancel.cancelled() => break Ending::Interrupted,
                () = sleep_until(deadline) => break Ending::TimedOut(timeout),
                () = sleep_until_some(grace_deadline) => {
                    if let Some(status) = exit {
                        break Ending::Exited { status, stopped_stragglers: true };
                    }
                }
                read = read_open(out, &mut out_buf) => {
                    if let Some(n) = read {
                        self.live.push(out, &out_buf[..n]);
                    }
                }
                read = read_open(err, &mut err_buf) => {
                    if let Some(n) = read {
                        self.live.push(err, &err_buf[..n]);
                    }
                }
                status = child.wait(), if exit.is_none() => match status {
                    Ok(status) => {
                        exit = Some(status);
                        grace_deadline = Some(Instant::now() + PIPE_GRACE);
                    }
                    Err(err) => break Ending::Lost(err),
                },
                _ = flush.tick() => self.live.flush(),
            }
        };
        let needs_kill = !matches!(ending, Ending::Exited { stopped_stragglers: false, .. });
        if needs_kill {
            group.kill();
            if exit.is_none() {
                let _ = child.wait().await;
            }
            self.drain(&mut out_buf).await;
        }
        ending
    }

    /// Collects what is left in the pipes after the group was killed, for a short while.
    async fn drain(&mut self, buf: &mut [u8]) {
        let until = Instant::now() + DRAIN_AFTER_KILL;
        for stream in &mut self.streams {
            while stream.pipe.is_some() {
                match tokio::time::timeout_at(until, stream.read(buf)).await {
                    Ok(Some(n)) => self.live.push(stream, &buf[..n]),
                    Ok(None) => break,
                    Err(_elapsed) => return,
                }
            }
        }
    }
}

impl Ending {
    fn into_outcome(self, streams: &[Stream; 2], elapsed: Duration) -> ToolOutcome {
        let (headline, exit_code, is_error) = match self {
            Ending::Exited { status, stopped_stragglers } => {
                let mut headline = match (status.code(), signal_of(&status)) {
                    (Some(code), _) => format!("Exit code {code}"),
                    (None, Some(signal)) => format!("Killed by signal {signal}"),
                    (None, None) => "Exited".to_owned(),
                };
                if stopped_stragglers {
                    headline.push_str(
                        " (background processes still holding the output open were stopped)",
                    );
                }
                let code = status.code();
                (headline, code, code != Some(0))
            }
            Ending::TimedOut(timeout) => (
                format!(
                    "Command timed out after {}; it was killed with every process it started",
                    human_duration(timeout)
                ),
                None,
                true,
            ),
            Ending::Interrupted => (
                format!(
                    "Command interrupted by user after {}; it was killed with every process it \
                     started",
                    human_duration(elapsed)
                ),
                None,
                true,
            ),
            Ending::Lost(err) => {
                (format!("Lost track of the command ({err}); it was killed"), None, true)
            }
        };
        let [out, err] = streams;
        let display = render(&headline, &out.kept, &err.kept, DISPLAY_OUTPUT_LIMIT);
        let model = render(&headline, &out.kept, &err.kept, MODEL_OUTPUT_LIMIT);
        ToolOutcome {
            for_model: model,
            for_display: display,
            is_error,
            exit_code,
            changes: Vec::new(),
        }
    }
}

fn signal_of(status: &ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

/// The headline, then each stream that printed something, within `limit` bytes of output.
fn render(headline: &str, stdout: &CappedBuffer, stderr: &CappedBuffer, limit: usize) -> String {
    let mut text = String::from(headline);
    text.push('\n');
    if stdout.is_empty() && stderr.is_empty() {
        text.push_str("(no output)\n");
        return text;
    }
    // What surrounds the output itself: the headline, two section titles and two omission
    // markers at most, so the whole text stays within `limit`.
    let overhead = text.len() + 2 * (SECTION_TITLE_BYTES + output::omitted_marker(u64::MAX).len());
    let budget = limit.saturating_sub(overhead);
    let shares = output::share_budget(budget, &[stdout.total(), stderr.total()]);
    for ((title, kept), share) in [("stdout", stdout), ("stderr", stderr)].into_iter().zip(shares) {
        if !kept.is_empty() {
            output::push_section(&mut text, title, &kept.render(share));
        }
    }
    // Invalid bytes grow threefold when replaced by U+FFFD; binary output may overshoot.
    output::truncate_at_char(&mut text, limit);
    text
}

/// `850 ms`, `2.5 s`, `2 min 5 s`.
fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis} ms")
    } else if millis < 60_000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        let secs = duration.as_secs();
        format!("{} min {} s", secs / 60, secs % 60)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_is_clamped() {
        let args = |timeout_ms| BashArgs { command: String::new(), timeout_ms };
        assert_eq!(timeout_for(&args(None)), DEFAULT_TIMEOUT);
        assert_eq!(timeout_for(&args(Some(0))), MIN_TIMEOUT);
        assert_eq!(timeout_for(&args(Some(u64::MAX))), MAX_TIMEOUT);
        assert_eq!(timeout_for(&args(Some(5_000))), Duration::from_millis(5_000));
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human_duration(Duration::from_millis(850)), "850 ms");
        assert_eq!(human_duration(Duration::from_millis(2_500)), "2.5 s");
        assert_eq!(human_duration(Duration::from_secs(125)), "2 min 5 s");
    }
}
