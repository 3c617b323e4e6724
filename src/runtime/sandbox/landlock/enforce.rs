//! The sandbox's last step confining itself with Landlock, through the `landlock` crate's safe
//! API, and dropping what root could do besides: every capability, as bwrap's `--cap-drop ALL`.
//!
//! The rights of Landlock's first version (5.13) are required: without them the step fails, and
//! keel learns that the sandbox did not come up. Those of later versions are taken where the
//! kernel has them: renaming across folders (2), truncating (3), TCP (4), device `ioctl`s (5),
//! and the scopes of 6: no signal to a process outside the sandbox, no abstract Unix socket
//! outside it. docs/sandbox.md says what each missing one leaves open.
//!
//! Each rule's path is opened without following any symlink on the way (`openat2` with
//! `RESOLVE_NO_SYMLINKS`), and its kind read from the open descriptor: a job a command left
//! running that swapped a folder for a link between the walk and the rule gets no rule there.

use super::rules::{Rights, Rules};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus,
    PathBeneath, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::thread::{CapabilitySet, CapabilitySets};
use std::os::fd::OwnedFd;
use std::path::Path;

/// The Landlock version keel requires: the file system's rights.
const REQUIRED: ABI = ABI::V1;
/// The newest version whose file system rights keel handles where the kernel has them.
const FILE_SYSTEM: ABI = ABI::V5;
/// The version whose TCP rights keel handles, where the network is off.
const NETWORK: ABI = ABI::V4;
/// The version whose scopes keel asks for.
const SCOPES: ABI = ABI::V6;
/// Capabilities are numbered below this.
const CAPABILITY_BITS: u32 = 64;

/// Confines this process, and all it will start, to `rules`; `network` says whether TCP is
/// left to the seccomp filter alone. Returns the Landlock version in force.
pub fn restrict(rules: &Rules, network: bool) -> Result<u32, String> {
    let failed = |err: landlock::RulesetError| format!("Landlock: {err}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(REQUIRED))
        .map_err(failed)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(FILE_SYSTEM))
        .map_err(failed)?;
    if !network {
        ruleset = ruleset.handle_access(AccessNet::from_all(NETWORK)).map_err(failed)?;
    }
    let mut created =
        ruleset.scope(Scope::from_all(SCOPES)).map_err(failed)?.create().map_err(failed)?;
    for (path, rights) in rules {
        // Gone since the walk, or a link now: less is granted, never more.
        let Some((fd, folder)) = open_exactly(path) else { continue };
        let access = access(*rights, folder);
        if access.is_empty() {
            continue;
        }
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(failed)?;
    }
    let status = created.restrict_self().map_err(failed)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("Landlock: this kernel does not enforce it".into());
    }
    Ok(match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as u32,
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => 0,
    })
}

/// `path` opened as a place (`O_PATH`), no symlink followed on the way nor at its end, and
/// whether it is a folder; `None` for a link, or what cannot be opened.
fn open_exactly(path: &Path) -> Option<(OwnedFd, bool)> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd =
        rustix::fs::openat2(rustix::fs::CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS)
            .ok()?;
    let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd).ok()?.st_mode);
    match kind {
        FileType::Symlink => None,
        FileType::Directory => Some((fd, true)),
        _ => Some((fd, false)),
    }
}

/// The Landlock rights `rights` stand for on a folder, or on anything else.
fn access(rights: Rights, folder: bool) -> BitFlags<AccessFs> {
    let mut access = BitFlags::<AccessFs>::empty();
    if rights.read {
        access |= AccessFs::ReadFile | AccessFs::Execute;
    }
    if rights.list && folder {
        access |= AccessFs::ReadDir;
    }
    if rights.write {
        access |= AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
        if folder {
            // Never a device: one would reach a disk or a terminal past every rule.
            access |= AccessFs::RemoveDir
                | AccessFs::RemoveFile
                | AccessFs::MakeDir
                | AccessFs::MakeReg
                | AccessFs::MakeSock
                | AccessFs::MakeFifo
                | AccessFs::MakeSym
                | AccessFs::Refer;
        }
    }
    if folder { access } else { access & AccessFs::from_file(FILE_SYSTEM) }
}

/// Drops every capability this process has, and with it all any program it starts could get:
/// as root, the bounding set is emptied first, so that no `exec` grants them again.
pub fn drop_capabilities() -> Result<(), String> {
    let failed = |what: &str, err: rustix::io::Errno| format!("cannot drop {what}: {err}");
    let held = rustix::thread::capabilities(None).map_err(|err| failed("capabilities", err))?;
    if held.effective.contains(CapabilitySet::SETPCAP) {
        for bit in 0..CAPABILITY_BITS {
            let capability = CapabilitySet::from_bits_retain(1 << bit);
            match rustix::thread::remove_capability_from_bounding_set(capability) {
                // Past the kernel's last capability.
                Ok(()) | Err(rustix::io::Errno::INVAL) => {}
                Err(err) => return Err(failed("the bounding set", err)),
            }
        }
    }
    match rustix::thread::clear_ambient_capability_set() {
        Ok(()) | Err(rustix::io::Errno::INVAL) => {}
        Err(err) => return Err(failed("the ambient capabilities", err)),
    }
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    rustix::thread::set_capabilities(None, none).map_err(|err| failed("capabilities", err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_get_only_what_a_file_can_have_and_nothing_makes_a_device() {
        let on_file = access(Rights::READ_WRITE, false);
        assert!(on_file.contains(AccessFs::WriteFile | AccessFs::ReadFile));
        assert!(!on_file.contains(AccessFs::ReadDir));
        let on_folder = access(Rights::READ_WRITE, true);
        assert!(on_folder.contains(AccessFs::MakeReg | AccessFs::Refer | AccessFs::ReadDir));
        assert!(!on_folder.intersects(AccessFs::MakeChar | AccessFs::MakeBlock));
        assert_eq!(access(Rights::LIST, true), AccessFs::ReadDir);
        assert!(access(Rights::LIST, false).is_empty());
    }

    #[test]
    fn a_link_is_never_opened_as_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/", &link).unwrap();
        assert!(open_exactly(&link).is_none());
        assert!(open_exactly(&link.join("usr")).is_none(), "nor a path through it");
        let real = dir.path().canonicalize().unwrap();
        assert!(open_exactly(&real).is_some_and(|(_, folder)| folder));
    }
}
