//! Whether `bwrap` works here: one probe command run through it with the mounts and namespaces
//! every command gets, once, as keel starts.

use super::{BASE, NO_PRIVILEGE, UNSHARE, UNSHARE_NET};
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `bash -c :` through `bwrap` with the mounts and namespaces every command gets; `Err` says
/// why it failed.
pub fn probe(bwrap: &Path) -> Result<(), String> {
    let output = Command::new(bwrap)
        .args(BASE)
        .args(["--tmpfs", "/tmp"])
        .args(UNSHARE)
        .arg(UNSHARE_NET)
        .args(NO_PRIVILEGE)
        .args(["--", "bash", "-c", ":"])
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("`{}` cannot be started ({err})", bwrap.display()))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said.trim();
    Err(format!(
        "`{}` failed its probe ({}{}{})",
        bwrap.display(),
        output.status,
        if said.is_empty() { "" } else { ": " },
        said
    ))
}
