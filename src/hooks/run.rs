//! Running one hook as its [`Plan`] says (`super::place`: in the command sandbox, or as the
//! person's own program), with `bash -c` in the workspace, under a command supervisor
//! (`runtime::supervisor`): in a session of its own with no terminal, and every process it starts
//! killed when it times out, when keel stops waiting for it, and when keel exits or is killed.
//! In the sandbox its shell starts held, as a command's does, and is let go at once; one whose
//! sandbox could not be set up did not start.
//!
//! Its stdin is the event's JSON, then end of file: the shell reads the plan's private input
//! file as its stdin. Its output is read as it comes, into buffers with a cap, so a hook that
//! prints gigabytes costs what one that prints a line does.

use super::place::Plan;
use crate::runtime::supervisor::protocol::Status;
use crate::runtime::supervisor::{Event, Supervised};
use crate::tools::output::CappedBuffer;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::{Instant, sleep_until};

/// The most of a hook's stdout kept: a JSON answer may carry a whole file in `updatedInput`.
pub const STDOUT_LIMIT: usize = 1024 * 1024;
/// The most of a hook's stderr kept.
pub const STDERR_LIMIT: usize = 64 * 1024;
/// Once the hook's shell ended, how long what it left may hold its output open.
const PIPE_GRACE: Duration = Duration::from_millis(200);
/// Bytes read from a pipe at once.
const READ_CHUNK: usize = 16 * 1024;

/// How a hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// Killed by this signal (not by keel).
    Signalled(i32),
    /// keel killed it at its timeout.
    TimedOut(Duration),
    /// It could not be started.
    NotStarted(String),
    /// Its supervisor went away without a word.
    Lost,
}

/// What one hook run gave.
#[derive(Debug, Clone)]
pub struct Output {
    pub ending: Ending,
    pub stdout: CappedBuffer,
    pub stderr: CappedBuffer,
    pub took: Duration,
}

impl Output {
    /// A hook that did not start, and why.
    pub fn not_started(why: String) -> Self {
        Self {
            ending: Ending::NotStarted(why),
            stdout: CappedBuffer::new(STDOUT_LIMIT),
            stderr: CappedBuffer::new(STDERR_LIMIT),
            took: Duration::ZERO,
        }
    }
}

/// Runs `command` as `plan` says, for at most `timeout`.
pub async fn run(command: &str, plan: &Plan, workspace: &Path, timeout: Duration) -> Output {
    let mut began = Instant::now();
    let mut output = Output { ending: Ending::Lost, ..Output::not_started(String::new()) };
    let Ok(quoted) = shlex::try_quote(&plan.input().to_string_lossy()).map(|q| q.into_owned())
    else {
        return Output::not_started("its input's path cannot be quoted".into());
    };
    // The shell reads the JSON as its stdin; the hook's line follows, as it was written.
    let line = format!("exec 0<{quoted}\n{command}");
    let launch = plan.launch();
    let sandboxed = !launch.prefix.is_empty();
    let (mut supervised, pipes) =
        match Supervised::start(&line, workspace, launch, |cmd| plan.configure(cmd)).await {
            Ok(started) => started,
            Err(err) => return Output::not_started(err.to_string()),
        };
    if sandboxed {
        match supervised.release(std::future::ready(true)).await {
            // Held is keel's time: the hook's clock starts without it.
            Ok(held) => began += held,
            Err(_) => {
                supervised.kill().await;
                return Output::not_started("it was let go without running".into());
            }
        }
    }
    let mut out = pipes.stdout;
    let mut err = pipes.stderr;
    let deadline = began + timeout;
    let mut exit: Option<Status> = None;
    let mut grace: Option<Instant> = None;
    let (mut out_buf, mut err_buf) = (vec![0u8; READ_CHUNK], vec![0u8; READ_CHUNK]);
    let ending = loop {
        if let Some(status) = exit
            && out.is_none()
            && err.is_none()
        {
            break ending_of(status);
        }
        tokio::select! {
            () = sleep_until(deadline) => break Ending::TimedOut(timeout),
            () = sleep_until_some(grace) => {
                if let Some(status) = exit {
                    break ending_of(status);
                }
            }
            read = read_open(&mut out, &mut out_buf) => {
                if let Some(n) = read {
                    output.stdout.push(&out_buf[..n]);
                }
            }
            read = read_open(&mut err, &mut err_buf) => {
                if let Some(n) = read {
                    output.stderr.push(&err_buf[..n]);
                }
            }
            event = supervised.next_event(), if exit.is_none() => match event {
                Event::Exited(status) => {
                    exit = Some(status);
                    grace = Some(Instant::now() + PIPE_GRACE);
                }
                Event::Lost => break Ending::Lost,
            },
        }
    };
    if sandboxed && !supervised.came_up() && matches!(ending, Ending::Exited(_) | Ending::Lost) {
        let said = output.stderr.render(STDERR_LIMIT).trim().to_owned();
        output.ending = Ending::NotStarted(format!("its sandbox could not be set up: {said}"));
        supervised.kill().await;
        output.took = began.elapsed();
        return output;
    }
    match (&ending, exit) {
        // It ended and let go of its output: what it left running elsewhere may go on until it
        // ends or keel does.
        (_, Some(_)) if out.is_none() && err.is_none() => supervised.detach(false),
        _ => {
            supervised.kill().await;
        }
    }
    output.ending = ending;
    output.took = began.elapsed();
    output
}

fn ending_of(status: Status) -> Ending {
    match status {
        Status::Code(code) => Ending::Exited(code),
        Status::Signal(signal) => Ending::Signalled(signal),
    }
}

/// Reads `pipe` while it is open; never resolves once it is closed. A pipe that ends is
/// closed (`None`).
async fn read_open<R: AsyncRead + Unpin>(pipe: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    let Some(reader) = pipe.as_mut() else {
        return std::future::pending().await;
    };
    match reader.read(buf).await {
        Ok(0) | Err(_) => {
            *pipe = None;
            None
        }
        Ok(n) => Some(n),
    }
}

async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// How long something took, as a person reads it: `2 s`, `0.5 s`, `150 ms`.
pub fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis} ms")
    } else if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}
