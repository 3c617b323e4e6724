//! Descriptors a process was handed beyond the standard three, closed before anything of its own
//! is opened.
//!
//! Job runners, terminals and editors often leave descriptors open when they start a program
//! (a log file, a socket, a lock); every descriptor keel holds open without close-on-exec goes on
//! to each program keel starts. A command that inherits one open for writing on a file outside
//! the workspace writes there, sandbox or not. So keel closes what it inherited as it starts,
//! the command's supervisor does the same (it may be started by a program that is not keel), and
//! the sandbox's last step closes all but the descriptors it was named. Everything keel opens
//! itself is close-on-exec, as Rust opens it.

use std::os::fd::RawFd;

/// The folders that list this process's descriptors: Linux's, then the one other systems have.
const OWN_DESCRIPTORS: [&str; 2] = ["/proc/self/fd", "/dev/fd"];
/// The highest standard descriptor (stderr): those are kept.
const STDERR_FD: RawFd = 2;

/// Closes every descriptor above stderr but those in `keep`. Call it first thing, before this
/// process opens anything of its own: whatever is open then was inherited.
pub fn close_all_but(keep: &[RawFd]) -> Result<(), String> {
    let listing = OWN_DESCRIPTORS
        .iter()
        .find_map(|folder| std::fs::read_dir(folder).ok())
        .ok_or_else(|| format!("cannot list its open descriptors in {}", OWN_DESCRIPTORS[0]))?;
    let open: Vec<RawFd> =
        listing.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok()).collect();
    // The listing's own descriptor is among them; it is closed by now, and closing it again
    // fails harmlessly.
    for fd in open.into_iter().filter(|fd| *fd > STDERR_FD && !keep.contains(fd)) {
        match nix::unistd::close(fd) {
            Ok(()) | Err(nix::errno::Errno::EBADF) => {}
            Err(err) => return Err(format!("cannot close inherited descriptor {fd}: {err}")),
        }
    }
    Ok(())
}
