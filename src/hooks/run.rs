//! Running one hook: the person's own program, so outside the command sandbox (as MCP servers
//! are), with `bash -c` in the workspace, under a command supervisor (`tools::supervisor`): in a
//! session of its own with no terminal, and every process it starts killed when it times out,
//! when keel stops waiting for it, and when keel exits or is killed.
//!
//! Its environment is the person's less the provider keys and keel's own settings
//! (`tools::bash::environment`: a hook may need the person's own tokens, never the model's key),
//! with `KEEL_PROJECT_DIR` and Claude Code's `CLAUDE_PROJECT_DIR` naming the workspace. Its
//! stdin is the event's JSON, then end of file: the JSON is written to a private temporary file
//! the shell reads as its stdin. Its output is read as it comes, into buffers with a cap, so a
//! hook that prints gigabytes costs what one that prints a line does.

use crate::tools::bash::environment;
use crate::tools::output::CappedBuffer;
use crate::tools::supervisor::protocol::Status;
use crate::tools::supervisor::{Event, Launch, Supervised};
use std::io::Write as _;
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
/// The variables naming the workspace, keel's and Claude Code's.
pub const PROJECT_DIR_VARS: [&str; 2] = ["KEEL_PROJECT_DIR", "CLAUDE_PROJECT_DIR"];

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

/// Runs `command` in `workspace` with `input` on its stdin, for at most `timeout`.
pub async fn run(command: &str, workspace: &Path, input: &[u8], timeout: Duration) -> Output {
    let began = Instant::now();
    let mut output = Output {
        ending: Ending::Lost,
        stdout: CappedBuffer::new(STDOUT_LIMIT),
        stderr: CappedBuffer::new(STDERR_LIMIT),
        took: Duration::ZERO,
    };
    let stdin = match input_file(input) {
        Ok(file) => file,
        Err(err) => {
            output.ending = Ending::NotStarted(format!("its input could not be written: {err}"));
            return output;
        }
    };
    let Ok(quoted) = shlex::try_quote(&stdin.path().to_string_lossy()).map(|q| q.into_owned())
    else {
        output.ending = Ending::NotStarted("its input's path cannot be quoted".into());
        return output;
    };
    // The shell reads the JSON as its stdin; the person's line follows, as they wrote it.
    let line = format!("exec 0<{quoted}\n{command}");
    let configure = |cmd: &mut tokio::process::Command| {
        environment::apply_persons(cmd);
        for name in PROJECT_DIR_VARS {
            cmd.env(name, workspace);
        }
    };
    let (mut supervised, pipes) =
        match Supervised::start(&line, workspace, &Launch::default(), configure).await {
            Ok(started) => started,
            Err(err) => {
                output.ending = Ending::NotStarted(err.to_string());
                return output;
            }
        };
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

/// The event's JSON in a private temporary file, for the hook's stdin.
fn input_file(input: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new().prefix("keel-hook-").tempfile()?;
    file.write_all(input)?;
    file.flush()?;
    Ok(file)
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
