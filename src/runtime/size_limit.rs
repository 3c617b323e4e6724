//! A file-size limit (`ulimit -f`, `RLIMIT_FSIZE`) ends a write with an error, never keel.
//!
//! Past the limit the kernel sends `SIGXFSZ`, which kills a process by default, mid-write and
//! without a word. Ignoring it takes `unsafe` (`sigaction`), which keel forbids; *blocked*, it
//! stays pending and the write fails with `EFBIG` instead, which the file tools report as "the
//! file would exceed the size limit", leaving the file as it was. The mask is set on the main
//! thread before the runtime starts, so every thread keel starts inherits it. A blocked mask
//! survives `exec`, so the command supervisor (keel's own executable) unblocks it again before
//! it starts a command: the person's commands meet the limit the way they would anywhere else.

use nix::sys::signal::{SigSet, Signal};

fn file_size_signal() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGXFSZ);
    set
}

/// Blocks `SIGXFSZ` on this thread and every thread it starts from now on.
pub fn keep_writes_alive() {
    // Failing leaves the default, which is what keel had before: nothing worse to do.
    let _ = file_size_signal().thread_block();
}

/// Unblocks `SIGXFSZ` again (before a command of the person's is started).
pub fn restore_default() {
    let _ = file_size_signal().thread_unblock();
}
