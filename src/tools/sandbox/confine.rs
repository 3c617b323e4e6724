//! The last step into the sandbox: keel's own binary, started by `bwrap` through an internal
//! entry point, puts the command's output pipes in place of its stdout and stderr, installs a
//! seccomp filter on itself and becomes `bash` (`exec`), so the filter holds for every process
//! the command starts.
//!
//! The pipes come as two inherited descriptors named by the first two arguments, not as bwrap's
//! own stdout and stderr: bwrap's init process keeps those open while anything in the sandbox
//! runs, so a background job with its output sent elsewhere would hold the command's output open.
//! Each is reopened through `/proc/self/fd`, moved onto 1 or 2, and the inherited one closed, so
//! only the shell and what it starts hold the pipes.
//!
//! The filter closes what namespaces and read-only mounts leave open:
//! - `socket(AF_UNIX, …)`: a Unix socket on a read-only mount can still be connected to, so a
//!   command could drive the person's tmux server (`tmux -S /path/sock send-keys`), their session
//!   bus or an agent. Stream and packet socket pairs (`socketpair`) still work: programs use them
//!   between their own processes.
//! - `socketpair(AF_UNIX, SOCK_DGRAM)` (and `SOCK_RAW`, which Unix sockets take for datagrams):
//!   a datagram socket sends to any address `sendto` names, so a pair would reach the person's
//!   datagram sockets (journald's, an agent's) just as `socket` would.
//! - `ptrace`, `process_vm_readv`/`writev` and `pidfd_getfd`: reaching into another process.
//! - `io_uring_*`: it can open sockets without the `socket` call the filter sees.
//! - `keyctl`, `add_key` and `request_key`: the kernel's keyrings belong to the user, not the
//!   sandbox, so a command could read or plant the person's keys (a login's, a mount's).
//!
//! Each is refused with `EPERM`, so programs see an ordinary permission error.
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

use super::{landlock, process_limit};
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

/// The first argument that turns the keel binary into the sandbox's last step.
pub const ENTRY_ARG: &str = "__keel_confine";

/// The byte that says the step is ready, and the one that lets it go on.
use crate::tools::supervisor::protocol::{HELD_GO as GO, HELD_READY as READY};

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
    if let Err(err) = super::super::supervisor::inherited::close_all_but(&keep) {
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

/// Installs the seccomp filter on this process, closing `closes` besides what it always does.
pub fn install_filter(closes: Closes) -> Result<(), String> {
    filter(closes).and_then(|filter| {
        seccompiler::apply_filter(&filter).map_err(|err| format!("cannot install it: {err}"))
    })
}

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

/// The socket kinds a Unix socket pair may not be: each sends datagrams to any address.
const DATAGRAM_KINDS: [libc::c_int; 2] = [libc::SOCK_DGRAM, libc::SOCK_RAW];
/// The bits of a socket's type argument that hold its kind (the kernel's `SOCK_TYPE_MASK`).
const SOCKET_KIND_MASK: u64 = 0xf;

/// What the filter closes besides what it always does, where no namespace of bwrap's does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Closes {
    /// Every socket but the Unix pairs: no network, not even a loopback of the command's own.
    pub sockets: bool,
    /// System V IPC and POSIX message queues, which are the machine's, not the command's.
    pub ipc: bool,
    /// A set-user-id or set-group-id mode given by `chmod`: with no read-only mounts, a root
    /// command could otherwise make a root program outside the workspace run as root for
    /// anyone (Landlock does not cover a file's mode).
    pub set_id_modes: bool,
}

impl Closes {
    /// What the sandbox in use leaves to the filter: bwrap's namespaces close both; under
    /// Landlock the filter takes the network away (unless the spec allows it) and the IPC.
    pub fn for_sandbox(landlock: Option<&landlock::Spec>) -> Self {
        landlock.map_or_else(Self::default, |spec| Self {
            sockets: !spec.network,
            ipc: true,
            set_id_modes: true,
        })
    }
}

/// The calls of System V IPC and POSIX message queues, each refused under Landlock.
const IPC_CALLS: [i64; 17] = [
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_semget,
    libc::SYS_semctl,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
];

/// `fchmodat2`, the same number on every architecture (calls added since Linux 5.1 share one
/// table), which the `libc` crate does not name on all of them.
const SYS_FCHMODAT2: i64 = 452;
/// The mode bits that make a program run as its file's owner or group.
const SET_ID_BITS: [libc::mode_t; 2] = [libc::S_ISUID, libc::S_ISGID];

/// The calls that set a file's mode, each with the index of the argument that holds it.
fn mode_setters() -> Vec<(i64, u8)> {
    let mut calls = vec![(libc::SYS_fchmod, 1), (libc::SYS_fchmodat, 2), (SYS_FCHMODAT2, 2)];
    #[cfg(target_arch = "x86_64")]
    calls.push((libc::SYS_chmod, 1));
    calls
}

/// The filter: everything is allowed but the calls listed in the module's doc, and what
/// `closes` adds.
pub fn filter(closes: Closes) -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|err| format!("unsupported architecture: {err}"))?;
    let unix_domain = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        u64::from(libc::AF_UNIX.unsigned_abs()),
    )
    .map_err(|err| err.to_string())?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let sockets = if closes.sockets {
        // No rule at all: every `socket` is refused.
        Vec::new()
    } else {
        vec![SeccompRule::new(vec![unix_domain.clone()]).map_err(|err| err.to_string())?]
    };
    rules.insert(libc::SYS_socket, sockets);
    let mut pairs = Vec::new();
    for kind in DATAGRAM_KINDS {
        // The type argument carries flags (`SOCK_CLOEXEC`, `SOCK_NONBLOCK`) above the kind.
        let datagram = SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(SOCKET_KIND_MASK),
            u64::from(kind.unsigned_abs()),
        )
        .map_err(|err| err.to_string())?;
        pairs.push(
            SeccompRule::new(vec![unix_domain.clone(), datagram]).map_err(|err| err.to_string())?,
        );
    }
    rules.insert(libc::SYS_socketpair, pairs);
    for call in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_getfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        // No rule at all: the call is refused whatever its arguments.
        rules.insert(call, Vec::new());
    }
    if closes.ipc {
        for call in IPC_CALLS {
            rules.insert(call, Vec::new());
        }
    }
    if closes.set_id_modes {
        for (call, mode) in mode_setters() {
            let mut set_id = Vec::new();
            for bit in SET_ID_BITS {
                let bit = u64::from(bit);
                let condition = SeccompCondition::new(
                    mode,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(bit),
                    bit,
                )
                .map_err(|err| err.to_string())?;
                set_id.push(SeccompRule::new(vec![condition]).map_err(|err| err.to_string())?);
            }
            rules.insert(call, set_id);
        }
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM.unsigned_abs()),
        arch,
    )
    .map_err(|err| err.to_string())?;
    BpfProgram::try_from(filter).map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_for_this_machine() {
        let all = Closes { sockets: true, ipc: true, set_id_modes: true };
        for closes in [Closes::default(), all] {
            assert!(!filter(closes).unwrap().is_empty(), "{closes:?}");
        }
    }
}
