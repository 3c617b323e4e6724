//! The keel binary's internal entry points: started with one of them as its first argument, it
//! is not keel but a command's supervisor (`supervisor`) or a sandboxed shell's last step
//! (`sandbox::confine`). It sits above both, so that neither has to know the other to be found.

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
    (entry == OsStr::new(supervisor::ENTRY_ARG)).then(|| supervisor::main(args))
}
