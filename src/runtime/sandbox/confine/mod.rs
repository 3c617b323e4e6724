//! The last step into the sandbox: keel's own binary, started by `bwrap` through an internal
//! entry point, puts the command's output pipes in place of its stdout and stderr, installs a
//! seccomp filter on itself ([`seccomp`]: what it refuses, and why) and becomes `bash` (`exec`),
//! so the filter holds for every process the command starts.
//!
//! The pipes come as two inherited descriptors named by the first two arguments, not as bwrap's
//! own stdout and stderr: bwrap's init process keeps those open while anything in the sandbox
//! runs, so a background job with its output sent elsewhere would hold the command's output open.
//! Each is reopened through `/proc/self/fd`, moved onto 1 or 2, and the inherited one closed, so
//! only the shell and what it starts hold the pipes.
//!
//! Where bwrap cannot run, the same step confines itself with Landlock first ([`main_landlock`],
//! `sandbox::landlock`), and the filter closes what bwrap's namespaces would have ([`Closes`]):
//! every socket but a Unix pair when the network is off (there is no loopback of the command's
//! own), System V IPC and POSIX message queues, which are the machine's, and a set-user-id or
//! set-group-id mode by `chmod`, since nothing outside is a read-only mount. The command's
//! temporary folder is handed to it as `TMPDIR`, since nothing is mounted at `/tmp`.
//!
//! Every shell waits here, held, as the very last thing before it becomes `bash`: the step says
//! it is ready on one inherited pipe (so keel knows the sandbox came up) and waits for the
//! supervisor's word on another (keel may be snapshotting the workspace for undo meanwhile).
//! Anything but that word (keel gave up on the command, or is gone) ends it without running
//! anything.

mod seccomp;

pub use seccomp::{Closes, filter, install_filter};

use super::{landlock, process_limit};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

/// The first argument that turns the keel binary into the sandbox's last step.
pub const ENTRY_ARG: &str = "__keel_confine";

/// The byte that says the step is ready, and the one that lets it go on.
use crate::runtime::supervisor::protocol::{HELD_GO as GO, HELD_READY as READY};

/// Takes the output pipes, confines this process, waits at the gate and `exec`s the rest of
/// `args` (`MAX_PROCESSES STDOUT_FD STDERR_FD READY_FD,GO_FD bash -c COMMAND`); returns only on
/// failure. Inside bwrap, which made the namespaces and mounts.
pub fn main(args: &[OsString]) -> ExitCode {
    run(args, None)
}

/// [`main`], where no bwrap runs: the arguments start with the command's Landlock spec
/// ([`landlock::Spec`]), and this step confines itself with it first.
pub fn main_landlock(args: &[OsString]) -> ExitCode {
    match landlock::Spec::parse(args) {
        Ok((spec, rest)) => run(rest, Some(&spec)),
        Err(err) => {
            eprintln!("keel: cannot confine the command: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The last step, inside bwrap (`landlock` is `None`) or confining itself with Landlock.
fn run(args: &[OsString], landlock: Option<&landlock::Spec>) -> ExitCode {
    let [max_processes, stdout, stderr, gate, program, rest @ ..] = args else {
        eprintln!("keel: this entry point is internal; keel starts it inside its sandbox");
        return ExitCode::FAILURE;
    };
    // Only the descriptors named reach the command: none that bwrap, or whatever started it,
    // left open.
    let named = [stdout, stderr].into_iter().filter_map(|fd| fd.to_str().and_then(inherited_fd));
    let gate_fds = gate
        .to_str()
        .and_then(|text| text.split_once(','))
        .into_iter()
        .flat_map(|(ready, go)| [ready, go].into_iter().filter_map(inherited_fd));
    let keep: Vec<_> = named.chain(gate_fds).collect();
    if let Err(err) = crate::runtime::supervisor::inherited::close_all_but(&keep) {
        eprintln!("keel: cannot confine the command: {err}");
        return ExitCode::FAILURE;
    }
    if let Err(err) = take_output(stdout, stderr) {
        eprintln!("keel: cannot confine the command: {err}");
        return ExitCode::FAILURE;
    }
    let limit = max_processes.to_str().and_then(|limit| limit.parse().ok());
    let bound = match landlock {
        None => process_limit::apply_inside,
        Some(_) => process_limit::apply_beside,
    };
    if let Err(err) = limit
        .ok_or_else(|| format!("{} is no process limit", max_processes.to_string_lossy()))
        .and_then(bound)
    {
        eprintln!("keel: cannot confine the command: {err}");
        return ExitCode::FAILURE;
    }
    if let Some(spec) = landlock
        && let Err(err) = landlock::confine(spec)
    {
        eprintln!("keel: cannot confine the command: {err}");
        return ExitCode::FAILURE;
    }
    if let Err(err) = install_filter(Closes::for_sandbox(landlock)) {
        eprintln!("keel: cannot confine the command: seccomp filter: {err}");
        return ExitCode::FAILURE;
    }
    match wait_at_gate(gate) {
        Ok(true) => {}
        // keel let the command go without running it: nothing to say.
        Ok(false) => return ExitCode::FAILURE,
        Err(err) => {
            eprintln!("keel: cannot hold the command: {err}");
            return ExitCode::FAILURE;
        }
    }
    let mut command = std::process::Command::new(program);
    command.args(rest);
    if let Some(tmp) = landlock.and_then(|spec| spec.tmp.as_ref()) {
        command.env(TMPDIR, tmp);
    }
    let err = command.exec();
    eprintln!("keel: cannot start {}: {err}", program.to_string_lossy());
    ExitCode::FAILURE
}

/// The variable that names a command's temporary folder.
pub const TMPDIR: &str = "TMPDIR";

/// Says it is ready and waits for the word to go on, through the two inherited pipes `gate`
/// names; `Ok(false)` when the word never comes.
fn wait_at_gate(gate: &OsString) -> Result<bool, String> {
    let (ready, go) = gate
        .to_str()
        .and_then(|text| text.split_once(','))
        .and_then(|(ready, go)| Some((inherited_fd(ready)?, inherited_fd(go)?)))
        .ok_or_else(|| format!("{} names no gate", gate.to_string_lossy()))?;
    // Opened without waiting: a pipe opened by name waits for its other end, which a supervisor
    // that is gone never opens. Blocking again afterwards, so reading waits for the word.
    let reopen = |fd: std::os::fd::RawFd, write: bool| {
        use std::os::unix::fs::OpenOptionsExt;
        let pipe = std::fs::File::options()
            .read(!write)
            .write(write)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(format!("/proc/self/fd/{fd}"))
            .map_err(|err| format!("cannot reopen gate descriptor {fd}: {err}"))?;
        nix::fcntl::fcntl(&pipe, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()))
            .map_err(|err| format!("cannot wait on gate descriptor {fd}: {err}"))?;
        Ok::<_, String>(pipe)
    };
    let (mut ready_pipe, mut go_pipe) = (reopen(ready, true)?, reopen(go, false)?);
    for fd in [ready, go] {
        nix::unistd::close(fd).map_err(|err| format!("cannot close descriptor {fd}: {err}"))?;
    }
    std::io::Write::write_all(&mut ready_pipe, &[READY])
        .map_err(|err| format!("cannot say it is ready: {err}"))?;
    drop(ready_pipe);
    let mut word = [0u8; 1];
    // End of file (the supervisor is gone, or dropped the command) is not the word.
    let went = matches!(std::io::Read::read(&mut go_pipe, &mut word), Ok(1) if word[0] == GO);
    Ok(went)
}

/// An inherited descriptor named in an argument: never one of the standard three.
fn inherited_fd(named: &str) -> Option<std::os::fd::RawFd> {
    named.parse().ok().filter(|fd| *fd > STDERR_FD)
}

/// Moves the inherited descriptors named by `stdout` and `stderr` onto 1 and 2.
fn take_output(stdout: &OsString, stderr: &OsString) -> Result<(), String> {
    let take = |named: &OsString, onto: fn(&std::fs::File) -> nix::Result<()>| {
        let fd = named
            .to_str()
            .and_then(inherited_fd)
            .ok_or_else(|| format!("{} names no output descriptor", named.to_string_lossy()))?;
        let pipe = std::fs::File::options()
            .write(true)
            .open(format!("/proc/self/fd/{fd}"))
            .map_err(|err| format!("cannot reopen output descriptor {fd}: {err}"))?;
        onto(&pipe).map_err(|err| format!("cannot take output descriptor {fd}: {err}"))?;
        nix::unistd::close(fd).map_err(|err| format!("cannot close descriptor {fd}: {err}"))
    };
    take(stdout, |pipe| nix::unistd::dup2_stdout(pipe))?;
    take(stderr, |pipe| nix::unistd::dup2_stderr(pipe))
}

/// The standard descriptors, which the inherited ones are never.
const STDERR_FD: std::os::fd::RawFd = 2;
