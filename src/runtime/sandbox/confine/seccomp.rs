//! The seccomp filter the last step installs on itself before it becomes `bash`, so it holds for
//! every process the command starts.
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
//! Where bwrap cannot run, it also closes what bwrap's namespaces would have ([`Closes`]).

use crate::runtime::sandbox::landlock;
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// Installs the seccomp filter on this process, closing `closes` besides what it always does.
pub fn install_filter(closes: Closes) -> Result<(), String> {
    filter(closes).and_then(|filter| {
        seccompiler::apply_filter(&filter).map_err(|err| format!("cannot install it: {err}"))
    })
}

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
