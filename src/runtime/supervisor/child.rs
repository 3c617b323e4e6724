//! The supervisor process: the keel binary started through its internal entry point, one per
//! command.
//!
//! It leaves keel's session (`setsid`), so the command has no controlling terminal; becomes a
//! child subreaper, so every orphan of the command is re-parented to it; and runs `bash -c` in a
//! process group of its own, with the output pipes keel gave it and stdin from the null device.
//! Then it waits for one of: `bash` ending (reported, and the supervisor stays while background
//! processes run), the last process ending (it exits), keel's `kill`, keel's end of the socket
//! closing (keel exited or was killed), or a termination signal — on the last three it kills
//! every process of the command, reports how that went, and exits.
//!
//! A shell started through the sandbox waits, held, at the sandbox's last step until keel says
//! `go`; the supervisor tells keel when it is ready, so that keel knows the sandbox came up and
//! how long it held it.

use super::protocol::{GO, KILL, Report, Status};
use super::protocol::{HELD_GO, HELD_READY};
use super::{ShellStart, pids_cgroup, placeholders, procfs};
use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal, kill, killpg};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The shell when keel names none: `bash` on the supervisor's `PATH`.
const BASH: &str = "bash";
/// How long the supervisor keeps killing before it reports survivors.
const KILL_DEADLINE: Duration = Duration::from_secs(2);
/// Pause between two sweeps of `/proc` while killing.
const KILL_SWEEP_PAUSE: Duration = Duration::from_millis(10);
/// How much of bwrap's own messages is copied at a time.
const SANDBOX_SAID_CHUNK: usize = 4096;
/// Signals that end the supervisor, and so the command.
const TERMINATING: [Signal; 4] = [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT, Signal::SIGQUIT];

/// What the supervisor's threads tell its main loop.
enum Event {
    /// A held shell is ready to run.
    Ready,
    /// keel lets a held shell run.
    Go,
    Exited(Status),
    NoneLeft,
    Kill,
    KeelGone,
    Signalled,
}

/// Runs the supervisor for `command` (through the sandbox, when `launch` has one); stdin must be
/// the socket keel holds the other end of.
pub fn main(command: &OsStr, launch: &ShellStart) -> ExitCode {
    let in_use = placeholders::hold(&launch.placeholders);
    // keel names a bound only where the command needs a cgroup of its own (as root, sandboxed,
    // without keel's pen). Without one the command runs unbounded, as it would unsandboxed.
    let bound = launch.max_processes.and_then(|limit| pids_cgroup::enter(limit).ok());
    // Before keel learns that the command is over: the workspace is then as it will stay.
    let mut clear_up = Some(move || {
        drop(in_use);
        placeholders::remove(&launch.placeholders);
    });
    let code = supervise(command, launch, &mut || {
        if let Some(clear_up) = clear_up.take() {
            clear_up();
        }
    });
    // When the command could not be started, or the supervisor gave up.
    if let Some(clear_up) = clear_up.take() {
        clear_up();
    }
    // After: moving back out of a cgroup can take the kernel milliseconds.
    if let Some(cgroup) = bound {
        cgroup.leave();
    }
    code
}

/// Runs the command to its end; `clear_up` is called once every process of it is gone, before
/// keel is told so.
fn supervise(command: &OsStr, launch: &ShellStart, clear_up: &mut dyn FnMut()) -> ExitCode {
    // keel blocks SIGXFSZ for itself; the person's command meets a size limit as usual.
    crate::runtime::size_limit::restore_default();
    let Some(control) = control_socket() else {
        eprintln!("keel: this entry point is internal; keel starts it for each command");
        return ExitCode::FAILURE;
    };
    let mut reports = match control.try_clone() {
        Ok(writer) => writer,
        Err(_) => return ExitCode::FAILURE,
    };
    let (shell, mut sandbox_said, gate) = match start(command, launch) {
        Ok(started) => started,
        Err(message) => {
            send(&mut reports, &Report::Failed(message));
            return ExitCode::FAILURE;
        }
    };
    // Blocked, the signals wait for the signal thread. Only now: a child inherits the mask.
    let signals = terminating_signals();
    if signals.thread_block().is_err() {
        kill_everything(shell);
        send(&mut reports, &Report::Failed("cannot block termination signals".into()));
        return ExitCode::FAILURE;
    }
    send(&mut reports, &Report::Started(shell.as_raw()));
    let (events, inbox) = mpsc::channel();
    spawn_reaper(shell, events.clone());
    // The word to go is passed on only once the shell said it is ready, so that keel always
    // hears `ready` before the shell can end.
    let mut go = gate.map(|HeldGate { ready, go }| {
        spawn_ready_watch(ready, events.clone());
        Go { writer: go, ready: false, asked: false }
    });
    spawn_listener(control, events.clone());
    std::thread::spawn(move || {
        if signals.wait().is_ok() {
            let _ = events.send(Event::Signalled);
        }
    });
    let mut exited = false;
    while let Ok(event) = inbox.recv() {
        match event {
            Event::Ready => {
                send(&mut reports, &Report::Ready);
                if let Some(go) = &mut go {
                    go.ready = true;
                    go.pass_on();
                }
            }
            Event::Go => {
                if let Some(go) = &mut go {
                    go.asked = true;
                    go.pass_on();
                }
            }
            Event::Exited(status) => {
                exited = true;
                // What the sandbox said before the shell ended is passed on, and with it the
                // supervisor's last hold on the output: only the command's processes keep it.
                if let Some(said) = sandbox_said.take() {
                    said.pass_on();
                }
                send(&mut reports, &Report::Exited(status));
            }
            Event::NoneLeft if exited => {
                clear_up();
                // keel learns that every process is gone from the socket's end: told now, so
                // that what the supervisor still does (leaving the cgroup) is not taken for a
                // process left running.
                let _ = reports.shutdown(std::net::Shutdown::Both);
                return ExitCode::SUCCESS;
            }
            Event::NoneLeft => {}
            Event::Kill | Event::KeelGone | Event::Signalled => {
                let report = kill_everything(shell);
                clear_up();
                send(&mut reports, &report);
                // Reaped before the supervisor exits: nothing of the command outlives it, not
                // even as a zombie for init to collect.
                let until = Instant::now() + KILL_DEADLINE;
                while let Ok(event) =
                    inbox.recv_timeout(until.saturating_duration_since(Instant::now()))
                {
                    if matches!(event, Event::NoneLeft) {
                        break;
                    }
                }
                return ExitCode::SUCCESS;
            }
        }
    }
    // Every thread is gone, which cannot happen while the listener runs; kill to be sure.
    kill_everything(shell);
    ExitCode::SUCCESS
}

/// fd 0 as a socket, or `None` when the process was not started by keel.
fn control_socket() -> Option<UnixStream> {
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let socket = UnixStream::from(fd);
    socket.local_addr().ok()?;
    Some(socket)
}

fn terminating_signals() -> SigSet {
    let mut set = SigSet::empty();
    for signal in TERMINATING {
        set.add(signal);
    }
    set
}

/// The word to go, passed on once keel asked and the shell is ready.
struct Go {
    writer: std::io::PipeWriter,
    ready: bool,
    asked: bool,
}

impl Go {
    fn pass_on(&mut self) {
        if self.ready && self.asked {
            // A shell that is gone already has nobody to hear it; said once either way.
            let _ = self.writer.write_all(&[HELD_GO]);
            self.asked = false;
        }
    }
}

/// Where a held shell waits: the pipe it says it is ready on, and the one the word to go goes to.
struct HeldGate {
    ready: std::io::PipeReader,
    go: std::io::PipeWriter,
}

/// The sandbox's last step's ends of the gate's pipes, inheritable, and the supervisor's ends.
fn gate_pipes() -> Result<([std::os::fd::OwnedFd; 2], HeldGate), String> {
    let (ready, ready_end) =
        std::io::pipe().map_err(|err| format!("cannot make a pipe to hold the shell: {err}"))?;
    let (go_end, go) =
        std::io::pipe().map_err(|err| format!("cannot make a pipe to hold the shell: {err}"))?;
    let theirs =
        [inheritable(ready_end.as_fd(), "the gate")?, inheritable(go_end.as_fd(), "the gate")?];
    Ok((theirs, HeldGate { ready, go }))
}

/// Leaves keel's session, becomes a subreaper and starts `bash` (the one `launch` names, through
/// its `prefix`, the sandbox,
/// when there is one, held at its gate until keel says `go`); then lets go of the output pipes
/// so that only the command holds them. Through the sandbox, it also returns what keeps bwrap's
/// own messages (see [`SandboxSaid`]), and the gate the shell waits at.
fn start(
    command: &OsStr,
    launch: &ShellStart,
) -> Result<(Pid, Option<SandboxSaid>, Option<HeldGate>), String> {
    nix::unistd::setsid().map_err(|err| format!("cannot start a new session: {err}"))?;
    nix::sys::prctl::set_child_subreaper(true)
        .map_err(|err| format!("cannot become a child subreaper: {err}"))?;
    let bash = launch.shell.as_deref().unwrap_or(Path::new(BASH));
    let (mut shell, said, gate) = match launch.prefix.split_first() {
        Some((program, args)) => {
            let (outputs, said) = sandbox_outputs()?;
            let (gate_ends, gate) = gate_pipes()?;
            let gate_arg = {
                use std::os::fd::AsRawFd;
                let [ready, go] = &gate_ends;
                format!("{},{}", ready.as_raw_fd(), go.as_raw_fd())
            };
            let mut shell = std::process::Command::new(program);
            shell.args(args).args(outputs.args()).arg(gate_arg).arg(bash);
            shell.stdout(Stdio::null()).stderr(said.writer);
            (shell, Some((outputs, said.kept, gate_ends)), Some(gate))
        }
        None => (std::process::Command::new(bash), None, None),
    };
    let shell = shell
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|err| format!("cannot start bash: {err}"))?;
    let pid = i32::try_from(shell.id()).map_err(|_| "bash has an impossible pid".to_owned())?;
    // The supervisor reaps `bash` itself (with every orphan), so the handle is not waited on.
    drop(shell);
    let null = std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|err| format!("cannot open /dev/null: {err}"))?;
    nix::unistd::dup2_stdout(&null).map_err(|err| format!("cannot release stdout: {err}"))?;
    nix::unistd::dup2_stderr(&null).map_err(|err| format!("cannot release stderr: {err}"))?;
    // The copies handed to the sandbox are closed here with `outputs` and the gate's ends.
    Ok((Pid::from_raw(pid), said.map(|(_outputs, kept, _gate_ends)| kept), gate))
}

/// The output pipes as the sandbox's last step receives them: inherited descriptors it puts in
/// place of its stdout and stderr ([`sandbox::confine`]). They cannot be bwrap's own stdout and
/// stderr: bwrap's init process keeps those open for as long as any process of the sandbox
/// lives, so a background job whose output goes elsewhere (a dev server writing a log) would
/// hold the command's output open — and be stopped as lingering — when it holds nothing.
struct SandboxOutputs {
    stdout: std::os::fd::OwnedFd,
    stderr: std::os::fd::OwnedFd,
}

impl SandboxOutputs {
    /// The arguments that name them to the sandbox's last step.
    fn args(&self) -> [String; 2] {
        use std::os::fd::AsRawFd;
        [self.stdout.as_raw_fd().to_string(), self.stderr.as_raw_fd().to_string()]
    }
}

/// bwrap's own messages (a mount it cannot make, a namespace it may not create): written to a
/// pipe of their own, and passed on to the command's stderr when the shell ends — by then bwrap
/// has said all it will, since a sandbox that could not be set up never started the shell.
struct SandboxSaid {
    reader: std::io::PipeReader,
    stderr: std::fs::File,
}

impl SandboxSaid {
    /// Copies what bwrap wrote to the command's stderr, then lets go of both.
    fn pass_on(self) {
        let Self { reader, mut stderr } = self;
        // Nothing waits here: bwrap's init may hold the pipe open for as long as the sandbox lives.
        if nix::fcntl::fcntl(&reader, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK))
            .is_err()
        {
            return;
        }
        let mut reader = reader;
        let mut chunk = [0u8; SANDBOX_SAID_CHUNK];
        while let Ok(read @ 1..) = std::io::Read::read(&mut reader, &mut chunk) {
            let _ = stderr.write_all(&chunk[..read]);
        }
    }
}

/// The pieces [`start`] needs for a sandboxed shell.
struct SaidPipe {
    writer: std::io::PipeWriter,
    kept: SandboxSaid,
}

/// Inheritable copies of this process's stdout and stderr (the command's pipes), and the pipe
/// bwrap's own messages go to.
fn sandbox_outputs() -> Result<(SandboxOutputs, SaidPipe), String> {
    let outputs = SandboxOutputs {
        stdout: inheritable(std::io::stdout().as_fd(), "stdout")?,
        stderr: inheritable(std::io::stderr().as_fd(), "stderr")?,
    };
    let stderr = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|err| format!("cannot copy stderr: {err}"))?;
    let (reader, writer) =
        std::io::pipe().map_err(|err| format!("cannot make a pipe for bwrap: {err}"))?;
    let kept = SandboxSaid { reader, stderr: std::fs::File::from(stderr) };
    Ok((outputs, SaidPipe { writer, kept }))
}

/// A copy of `fd` that a child process inherits.
fn inheritable(
    fd: std::os::fd::BorrowedFd<'_>,
    name: &str,
) -> Result<std::os::fd::OwnedFd, String> {
    let copy = fd.try_clone_to_owned().map_err(|err| format!("cannot copy {name}: {err}"))?;
    nix::fcntl::fcntl(&copy, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()))
        .map_err(|err| format!("cannot hand {name} to the sandbox: {err}"))?;
    Ok(copy)
}

/// Says when a held shell is ready: the sandbox's last step writes one byte.
fn spawn_ready_watch(mut ready: std::io::PipeReader, events: mpsc::Sender<Event>) {
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        if matches!(std::io::Read::read(&mut ready, &mut byte), Ok(1) if byte[0] == HELD_READY) {
            let _ = events.send(Event::Ready);
        }
    });
}

/// Reaps every child (the subreaper's orphans too) and says when `bash` ends and when none is left.
fn spawn_reaper(shell: Pid, events: mpsc::Sender<Event>) {
    std::thread::spawn(move || {
        loop {
            let status = match waitpid(None, None) {
                Ok(WaitStatus::Exited(pid, code)) if pid == shell => Status::Code(code),
                Ok(WaitStatus::Signaled(pid, signal, _)) if pid == shell => {
                    Status::Signal(signal as i32)
                }
                Ok(_) | Err(Errno::EINTR) => continue,
                Err(_) => {
                    let _ = events.send(Event::NoneLeft);
                    return;
                }
            };
            if events.send(Event::Exited(status)).is_err() {
                return;
            }
        }
    });
}

/// Reads keel's requests; the end of the socket means keel is gone.
fn spawn_listener(control: UnixStream, events: mpsc::Sender<Event>) {
    std::thread::spawn(move || {
        for line in BufReader::new(control).lines() {
            match line {
                Ok(line) if line.trim() == KILL => {
                    let _ = events.send(Event::Kill);
                    return;
                }
                Ok(line) if line.trim() == GO => {
                    let _ = events.send(Event::Go);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let _ = events.send(Event::KeelGone);
    });
}

/// SIGKILLs the shell's group, then every process of the command, sweep after sweep, until none is
/// alive or the deadline passes. Processes forked meanwhile are caught by the next sweep: their
/// killed parents leave them to this subreaper.
fn kill_everything(shell: Pid) -> Report {
    let me = nix::unistd::getpid().as_raw();
    let deadline = Instant::now() + KILL_DEADLINE;
    let _ = killpg(shell, Signal::SIGKILL);
    let mut killed = std::collections::BTreeSet::new();
    loop {
        let alive = procfs::members(me);
        if alive.is_empty() {
            return Report::Killed { killed: killed.len(), survivors: Vec::new() };
        }
        if Instant::now() > deadline {
            return Report::Killed { killed: killed.len(), survivors: alive };
        }
        for pid in alive {
            if kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                killed.insert(pid);
            }
        }
        std::thread::sleep(KILL_SWEEP_PAUSE);
    }
}

fn send(socket: &mut UnixStream, report: &Report) {
    // keel may be gone; then there is no one to tell.
    let _ = writeln!(socket, "{}", report.to_line());
}
