//! How many processes (threads included) a command may have at once, so that a fork bomb stops
//! at a bound instead of taking the machine.
//!
//! The bound leaves builds room: a compiler, a linker and a test runner per core, each with
//! threads of its own, stay far below it. It is kept two ways, as each works:
//! - As an unprivileged user, `RLIMIT_NPROC`, set by the sandbox's last step inside the
//!   sandbox's own user namespace: there the kernel counts only the sandbox's processes, not the
//!   person's others (set before bwrap made the namespace, it would count all of them).
//! - As root, the kernel never applies `RLIMIT_NPROC` to user 0, and a user namespace does not
//!   help: bwrap maps the user inside onto keel's own, root. So the supervisor puts the command in
//!   a `pids` cgroup of its own (`supervisor::pids_cgroup`), where root is bound like anyone.

use nix::sys::resource::{Resource, setrlimit};

/// The bound on any machine, and what each core adds to it.
const BASE: u64 = 1024;
const PER_CORE: u64 = 64;
/// The environment variable of keel's own that sets another bound.
pub const VARIABLE: &str = "KEEL_MAX_PROCESSES";
/// What the user mapping of the first user namespace reads, where every user is itself.
const INITIAL_USER_MAP: [&str; 3] = ["0", "0", "4294967295"];

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
}
