//! Commands run under a supervisor, so that none of their processes outlives keel.
//!
//! `unsafe` is forbidden in this crate, so keel cannot change a child between `fork` and `exec`.
//! Instead each command gets a supervisor: the keel binary itself, started through an internal
//! entry point (`runtime::entry`), which puts the command in a session of its own (no
//! controlling terminal), adopts its orphans as a child subreaper, and kills all of them when
//! keel asks or when keel is gone (see [`child`]).
//!
//! keel and the supervisor talk over a socket that is the supervisor's stdin ([`protocol`]). Its
//! end of file is how the supervisor learns that keel died: the kernel closes keel's end when
//! keel's process ends, however it ends — unlike `PR_SET_PDEATHSIG`, which fires when the *thread*
//! that started the child exits, and which keel's thread pool would trip by retiring a thread.
//!
//! The supervisor's program is a setting, because the library also runs inside test binaries
//! whose own executable is not keel: `main` passes its own path to [`set_program`], tests pass
//! Cargo's path to the keel binary.

mod child;
pub mod inherited;
pub mod jobs;
mod pen;
mod pids_cgroup;
mod placeholders;
mod procfs;
pub mod protocol;
mod reaped;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use protocol::{GO, KILL, Report, Status};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};

/// The first argument that turns the keel binary into a supervisor.
pub const ENTRY_ARG: &str = "__keel_supervise";
/// How long keel waits for the supervisor to report that it started the command.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long keel waits for the supervisor's report after asking it to kill.
const KILL_REPORT_TIMEOUT: Duration = Duration::from_secs(10);

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Sets the program that supervises commands: the keel binary. The first call wins.
pub fn set_program(program: impl Into<PathBuf>) {
    let _ = PROGRAM.set(program.into());
}

/// Runs the supervisor with the arguments after [`ENTRY_ARG`] (`runtime::entry` dispatches).
pub fn main(mut args: impl Iterator<Item = OsString>) -> ExitCode {
    // Whatever started the supervisor, the command gets only what the supervisor hands it.
    if let Err(err) = inherited::close_all_but(&[]) {
        eprintln!("keel: {err}");
        return ExitCode::FAILURE;
    }
    let command = args.next().unwrap_or_default();
    let mut number = || args.next().and_then(|number| number.to_str()?.parse::<u64>().ok());
    let max_processes = number().filter(|limit| *limit > 0);
    let shell = args.next().filter(|shell| !shell.is_empty()).map(PathBuf::from);
    let mut number = || args.next().and_then(|number| number.to_str()?.parse::<u64>().ok());
    let count = number().and_then(|count| usize::try_from(count).ok()).unwrap_or(0);
    let placeholders: Vec<PathBuf> = args.by_ref().take(count).map(PathBuf::from).collect();
    let launch = ShellStart { prefix: args.collect(), placeholders, max_processes, shell };
    child::main(&command, &launch)
}

/// How the shell is started: directly, or through a sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellStart {
    /// The sandbox's program and arguments ([`sandbox::bwrap::prefix`]); `bash -c command`
    /// follows them, held at the sandbox's last step until [`Supervised::release`]. Empty:
    /// `bash` is started directly.
    pub prefix: Vec<OsString>,
    /// Empty folders the sandbox made to mount on, removed (when still empty) once every process
    /// of the command is gone.
    pub placeholders: Vec<PathBuf>,
    /// How many processes the sandboxed command may have at once, which keel keeps with a
    /// `pids` cgroup when it runs as root (`sandbox::process_limit`): its pen ([`pen`]), else
    /// one the supervisor makes for the command.
    pub max_processes: Option<u64>,
    /// The shell, found where no command can plant one (`runtime::programs`); `None`: `bash`
    /// on the supervisor's `PATH`.
    pub shell: Option<PathBuf>,
}

/// Whether commands, as root, can have their processes bound to `limit` with a `pids` cgroup:
/// keel's pen ([`pen`]) is made here, once, where cgroup v1 allows it; else a cgroup of the
/// command's own is tried. `Err` says why none can be (a read-only `/sys/fs/cgroup`, no `pids`
/// hierarchy).
pub fn can_bound_processes(limit: u64) -> Result<(), String> {
    pen::get(limit).map(drop).or_else(|_| pids_cgroup::check(limit))
}

/// Starts making keel's pen for `limit` on a thread of its own, as root, so that the sandbox's
/// probe and the first command find it made rather than wait for its one move.
pub fn prepare_bound(limit: u64) {
    if nix::unistd::geteuid().is_root() && pen::made(limit).is_none() {
        let _ = std::thread::Builder::new()
            .name("keel-pen-making".into())
            .spawn(move || drop(pen::get(limit)));
    }
}

/// Waits, at most `within`, for every supervisor keel started to exit (each kills what is left
/// of its command once keel's end of its socket is closed: call this once the runtime that held
/// them is shut down), then removes keel's pen. Nothing of keel's is left running after it.
pub fn end_all(within: Duration) {
    reaped::wait_for_all(within);
    pen::close_all();
}

/// The program that supervises commands, once [`set_program`] was called.
pub fn program() -> Option<&'static Path> {
    PROGRAM.get().map(PathBuf::as_path)
}

/// Why a command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("keel was started without a command supervisor, so it cannot run commands safely")]
    NotConfigured,
    #[error("could not start the command supervisor {}: {source}", .program.display())]
    Spawn { program: PathBuf, source: std::io::Error },
    #[error("the command supervisor did not start the command: {0}")]
    Refused(String),
    #[error("the command supervisor did not answer")]
    Silent,
}

/// A held shell was not let go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the command was let go without running")]
pub struct NotReleased;

/// How a kill went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KillReport {
    /// Every process of the command is gone.
    AllDead,
    /// These processes were still alive when the supervisor gave up.
    Survivors(Vec<i32>),
    /// The supervisor died before it could say; only the shell's process group was killed.
    Unconfirmed,
}

/// What the supervisor said while the command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The shell ended.
    Exited(Status),
    /// The supervisor is gone without a word.
    Lost,
}

/// A command running under its supervisor. Dropping it kills the command.
pub struct Supervised {
    child: Child,
    reports: Lines<BufReader<OwnedReadHalf>>,
    requests: OwnedWriteHalf,
    shell: Pid,
    /// What the supervisor said while keel held the shell, for [`Supervised::next_event`].
    early: Option<Event>,
    /// A held shell said it was ready: its sandbox came up.
    came_up: bool,
    /// Where the command runs: the jobs it leaves are that workspace's ([`jobs::stop_all`]).
    cwd: PathBuf,
}

/// The command's output pipes.
pub struct Output {
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
}

impl Supervised {
    /// Starts `bash -c command` in `cwd` under a supervisor, with `configure` setting its
    /// environment, and waits until the shell runs, as `launch` says: directly, or through a
    /// sandbox.
    pub async fn start(
        command: &str,
        cwd: &Path,
        launch: &ShellStart,
        configure: impl FnOnce(&mut Command),
    ) -> Result<(Self, Output), StartError> {
        let program = PROGRAM.get().ok_or(StartError::NotConfigured)?;
        let spawn_error = |source| StartError::Spawn { program: program.clone(), source };
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(spawn_error)?;
        ours.set_nonblocking(true).map_err(spawn_error)?;
        let ours = UnixStream::from_std(ours).map_err(spawn_error)?;
        // As root, a sandboxed command is bound by a `pids` cgroup: keel's pen, where it can be
        // made, else one the supervisor makes for the command (told the bound only then). Anyone
        // else is bound inside the sandbox.
        let as_root = launch
            .max_processes
            .filter(|_| !launch.prefix.is_empty() && nix::unistd::geteuid().is_root());
        let pen = match as_root {
            Some(limit) => pen::for_commands(limit).await,
            None => None,
        };
        let own_cgroup = as_root.filter(|_| pen.is_none());
        let mut cmd = Command::new(program);
        cmd.arg(ENTRY_ARG)
            .arg(command)
            .arg(own_cgroup.unwrap_or(0).to_string())
            .arg(launch.shell.as_deref().unwrap_or(Path::new("")))
            .arg(launch.placeholders.len().to_string())
            .args(&launch.placeholders)
            .args(&launch.prefix)
            .current_dir(cwd)
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Killing the supervisor would orphan the command: it is asked, never killed.
            .kill_on_drop(false);
        configure(&mut cmd);
        let mut child = match pen {
            Some(pen) => pen.spawn(cmd).await.map_err(spawn_error)?,
            None => {
                let child = cmd.spawn().map_err(spawn_error)?;
                // The command's copy of the socket lives in `cmd`; keel must hold only its end.
                drop(cmd);
                child
            }
        };
        reaped::started(&child);
        let output = Output { stdout: child.stdout.take(), stderr: child.stderr.take() };
        let (reader, requests) = ours.into_split();
        let mut reports = BufReader::new(reader).lines();
        let first = tokio::time::timeout(START_TIMEOUT, reports.next_line()).await;
        let shell = match first {
            Ok(Ok(Some(line))) => match Report::parse(&line) {
                Some(Report::Started(pid)) => Pid::from_raw(pid),
                Some(Report::Failed(message)) => return Err(StartError::Refused(message)),
                _ => return Err(StartError::Silent),
            },
            _ => return Err(StartError::Silent),
        };
        let cwd = cwd.to_path_buf();
        Ok((Self { child, reports, requests, shell, early: None, came_up: false, cwd }, output))
    }

    /// Lets a shell started in the sandbox (always held) run once `open` says it may (`true`). Returns how long the
    /// shell, ready, waited for that: keel's time, not the command's. `open` saying no lets the
    /// command go unrun; kill it then. A sandbox that ends before it is ready (it could not be
    /// set up) is not waited for: [`Supervised::next_event`] tells of its end.
    pub async fn release(
        &mut self,
        open: impl std::future::Future<Output = bool>,
    ) -> Result<Duration, NotReleased> {
        tokio::pin!(open);
        let mut ready_at = None;
        loop {
            tokio::select! {
                may_run = &mut open => {
                    if !may_run {
                        return Err(NotReleased);
                    }
                    break;
                }
                line = self.reports.next_line(), if self.early.is_none() => match line {
                    Ok(Some(line)) => match Report::parse(&line) {
                        Some(Report::Ready) => {
                            ready_at = Some(tokio::time::Instant::now());
                            self.came_up = true;
                        }
                        Some(Report::Exited(status)) => self.early = Some(Event::Exited(status)),
                        _ => {}
                    },
                    Ok(None) | Err(_) => self.early = Some(Event::Lost),
                },
            }
        }
        let held = ready_at.map(|ready| ready.elapsed()).unwrap_or_default();
        // A supervisor that is gone reports so through `next_event`.
        let _ = self.requests.write_all(format!("{GO}\n").as_bytes()).await;
        Ok(held)
    }

    /// Whether a shell started held came up: the supervisor said it was ready (always before
    /// it can end). A held shell that ended without it never ran: its sandbox could not be set up.
    pub fn came_up(&self) -> bool {
        self.came_up
    }

    /// The next thing the supervisor reports while the command runs. Cancel-safe.
    pub async fn next_event(&mut self) -> Event {
        if let Some(early) = self.early.take() {
            return early;
        }
        loop {
            match self.reports.next_line().await {
                Ok(Some(line)) => match Report::parse(&line) {
                    Some(Report::Exited(status)) => return Event::Exited(status),
                    Some(Report::Ready) => self.came_up = true,
                    _ => {}
                },
                Ok(None) | Err(_) => return Event::Lost,
            }
        }
    }

    /// Has the supervisor kill every process of the command, and says how that went.
    pub async fn kill(mut self) -> KillReport {
        let asked = self.requests.write_all(format!("{KILL}\n").as_bytes()).await.is_ok();
        let report = if asked {
            tokio::time::timeout(KILL_REPORT_TIMEOUT, self.kill_report()).await.ok().flatten()
        } else {
            None
        };
        let report = report.unwrap_or_else(|| {
            // The supervisor is gone: reach what can still be reached.
            let _ = killpg(self.shell, Signal::SIGKILL);
            KillReport::Unconfirmed
        });
        reaped::wait(&mut self.child).await;
        report
    }

    async fn kill_report(&mut self) -> Option<KillReport> {
        while let Ok(Some(line)) = self.reports.next_line().await {
            if let Some(Report::Killed { survivors, .. }) = Report::parse(&line) {
                return Some(if survivors.is_empty() {
                    KillReport::AllDead
                } else {
                    KillReport::Survivors(survivors)
                });
            }
        }
        None
    }

    /// Whether every process of the command is gone within `grace` of the shell's end: the
    /// supervisor exits, closing its socket, once the last one has.
    pub async fn all_gone_within(&mut self, grace: Duration) -> bool {
        let until = tokio::time::Instant::now() + grace;
        loop {
            match tokio::time::timeout_at(until, self.reports.next_line()).await {
                Ok(Ok(Some(_))) => {}
                Ok(Ok(None) | Err(_)) => return true,
                Err(_elapsed) => return false,
            }
        }
    }

    /// Lets what the command left in the background run on, watched by its supervisor until it
    /// ends or keel does; counted among the live [`jobs`] when `left_running`.
    pub fn detach(self, left_running: bool) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Self { mut child, mut reports, requests, cwd, .. } = self;
        let stop = tokio_util::sync::CancellationToken::new();
        let stopped = stop.clone();
        let watch = runtime.spawn(async move {
            // Owned by the task: letting go of keel's end is the supervisor's signal to kill, so
            // it lives as long as this watch, unless the job is stopped.
            let mut keel_end = Some(requests);
            loop {
                tokio::select! {
                    line = reports.next_line() => if !matches!(line, Ok(Some(_))) { break },
                    () = stopped.cancelled(), if keel_end.is_some() => keel_end = None,
                }
            }
            reaped::wait(&mut child).await;
        });
        if left_running {
            jobs::left_running(watch, stop, cwd);
        }
    }
}
