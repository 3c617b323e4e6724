//! How many processes (threads included) a command may have at once, so that a fork bomb stops
//! at a bound instead of taking the machine.
//!
//! The bound leaves builds room: a compiler, a linker and a test runner per core, each with
//! threads of its own, stay far below it. It is kept two ways, as each works:
//! - As an unprivileged user, `RLIMIT_NPROC`, set by the sandbox's last step inside the
//!   sandbox's own user namespace: there the kernel counts only the sandbox's processes, not the
//!   person's others (set before bwrap made the namespace, it would count all of them).
//! - As root, the kernel never applies `RLIMIT_NPROC` to user 0, and a user namespace does not
//!   help: bwrap maps the user inside onto keel's own, root. So the command is born in a `pids`
//!   cgroup, where root is bound like anyone: keel's pen, shared by the session's commands
//!   (`supervisor::pen`), or where cgroup v2 allows no pen, one the supervisor makes for the
//!   command (`supervisor::pids_cgroup`).
//! - Under Landlock, as an unprivileged user, there is no user namespace: the kernel counts every
//!   process of the person's against `RLIMIT_NPROC`. So the last step sets it to as many as the
//!   person has as the command starts, plus the bound ([`apply_beside`]): the command may start
//!   that many more, unless the person's other programs start some meanwhile, which it then
//!   cannot.

use super::Availability;
use nix::sys::resource::{Resource, setrlimit};
use std::os::unix::fs::MetadataExt;

/// The bound on any machine, and what each core adds to it.
const BASE: u64 = 1024;
const PER_CORE: u64 = 64;
/// The environment variable of keel's own that sets another bound.
pub const VARIABLE: &str = "KEEL_MAX_PROCESSES";
/// The set-user-id bit of a program's mode.
const SET_USER_ID: u32 = 0o4000;
/// What the user mapping of the first user namespace reads, where every user is itself.
const INITIAL_USER_MAP: [&str; 3] = ["0", "0", "4294967295"];
/// The fields of `/proc/PID/status` that say whose a process is and how many threads it has.
const UID_FIELD: &str = "Uid:";
const THREADS_FIELD: &str = "Threads:";

/// The bound when the person sets none: `BASE` and `PER_CORE` for each core.
pub fn default_limit() -> u64 {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    BASE + PER_CORE * u64::try_from(cores).unwrap_or(1)
}

/// The bound `text` (the variable's value) sets: a whole number above 0.
pub fn parse(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(limit) if limit > 0 => Ok(limit),
        _ => Err(format!("{VARIABLE} must be a whole number above 0, not {text:?}")),
    }
}

/// Why commands confined as `availability` says run with no bound on their processes, when none
/// can be kept: as root, where no `pids` cgroup can be made (a read-only `/sys/fs/cgroup`, as in
/// many containers); as anyone else, where a setuid `bwrap` makes no user namespace.
pub fn unbounded(availability: &Availability, limit: u64) -> Option<String> {
    match availability {
        Availability::Missing(_) => None,
        _ if nix::unistd::geteuid().is_root() => {
            crate::runtime::supervisor::can_bound_processes(limit).err().map(|why| {
                format!("as root only a pids cgroup binds them, and none can be made here ({why})")
            })
        }
        Availability::Ready { bwrap } if is_set_user_id(bwrap) => Some(format!(
            "{} is setuid, so it makes no user namespace, where alone the kernel would count only \
             the command's processes",
            bwrap.display()
        )),
        Availability::Ready { .. } | Availability::Landlock { .. } => None,
    }
}

/// Whether `program` (found as it runs: on `PATH` when a bare name) is set-user-id.
fn is_set_user_id(program: &std::path::Path) -> bool {
    let found = if program.components().count() > 1 {
        Some(program.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path).map(|dir| dir.join(program)).find(|path| path.is_file())
        })
    };
    found
        .and_then(|path| std::fs::metadata(path).ok())
        .is_some_and(|meta| meta.mode() & SET_USER_ID != 0)
}

/// Sets `RLIMIT_NPROC` to `limit` for this process and all it starts, where the kernel counts
/// only the sandbox's processes against it: in a user namespace of the sandbox's own. Elsewhere
/// (bwrap installed setuid, which makes none) the count would take in all the person's processes,
/// and nothing is set.
pub fn apply_inside(limit: u64) -> Result<(), String> {
    let map = std::fs::read_to_string("/proc/self/uid_map")
        .map_err(|err| format!("cannot read /proc/self/uid_map: {err}"))?;
    let initial = map.split_whitespace().eq(INITIAL_USER_MAP.iter().copied());
    if initial {
        return Ok(());
    }
    setrlimit(Resource::RLIMIT_NPROC, limit, limit)
        .map_err(|err| format!("cannot limit the command's processes: {err}"))
}

/// Sets `RLIMIT_NPROC` for this process and all it starts to the threads its real user has now
/// plus `limit`, where the kernel counts all of them: outside any user namespace of the
/// sandbox's own (under Landlock). Root is bound by its cgroup instead, and nothing is set.
pub fn apply_beside(limit: u64) -> Result<(), String> {
    let user = nix::unistd::getuid();
    if user.is_root() {
        return Ok(());
    }
    let (_, hard) = nix::sys::resource::getrlimit(Resource::RLIMIT_NPROC)
        .map_err(|err| format!("cannot read the process limit: {err}"))?;
    let bound = threads_of(user.as_raw()).saturating_add(limit).min(hard);
    setrlimit(Resource::RLIMIT_NPROC, bound, bound)
        .map_err(|err| format!("cannot limit the command's processes: {err}"))
}

/// How many threads the processes of real user `user` have, as far as `/proc` shows them.
fn threads_of(user: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(|name| name.parse::<u32>().is_ok()))
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("status")).ok())
        .filter_map(|status| threads_if_of(&status, user))
        .sum()
}

/// The threads a process's `/proc/PID/status` counts, when its real user is `user`.
fn threads_if_of(status: &str, user: u32) -> Option<u64> {
    let field = |name: &str| {
        status.lines().find_map(|line| line.strip_prefix(name)).map(str::split_whitespace)
    };
    let real: u32 = field(UID_FIELD)?.next()?.parse().ok()?;
    (real == user).then(|| field(THREADS_FIELD)?.next()?.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_a_positive_whole_number() {
        assert_eq!(parse(" 300 "), Ok(300));
        for bad in ["0", "-1", "many", ""] {
            assert!(parse(bad).unwrap_err().contains(VARIABLE), "{bad}");
        }
        assert!(default_limit() >= BASE + PER_CORE);
    }

    #[test]
    fn a_users_threads_are_counted_from_their_status() {
        let status = "Name:\tcargo\nUid:\t1000\t1000\t1000\t1000\nThreads:\t17\n";
        assert_eq!(threads_if_of(status, 1000), Some(17));
        assert_eq!(threads_if_of(status, 0), None);
        assert_eq!(threads_if_of("Name:\tx\n", 1000), None);
        // This process is its user's, with at least this thread.
        assert!(threads_of(nix::unistd::getuid().as_raw()) >= 1);
    }
}
