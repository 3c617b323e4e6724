//! The keel binary's internal entry points: started with one of them as its first argument, it
//! is not keel but a command's supervisor (`supervisor`), a sandboxed shell's last step
//! (`sandbox::confine`, inside bwrap or under Landlock) or the Landlock probe
//! (`sandbox::landlock`). It sits above them, so that none has to know the others to be found.

use super::{sandbox, supervisor};
use std::ffi::OsStr;
use std::process::ExitCode;

/// Runs the supervisor, or the sandbox's last step, when this process was started as one;
/// `main` calls it first.
pub fn run_if_requested() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let entry = args.next()?;
    if entry == OsStr::new(sandbox::confine::ENTRY_ARG) {
        return Some(sandbox::confine::main(&args.collect::<Vec<_>>()));
    }
    if entry == OsStr::new(sandbox::landlock::ENTRY_ARG) {
        return Some(sandbox::confine::main_landlock(&args.collect::<Vec<_>>()));
    }
    if entry == OsStr::new(sandbox::landlock::PROBE_ARG) {
        return Some(sandbox::landlock::probe_main(&args.collect::<Vec<_>>()));
    }
    (entry == OsStr::new(supervisor::ENTRY_ARG)).then(|| supervisor::main(args))
}
