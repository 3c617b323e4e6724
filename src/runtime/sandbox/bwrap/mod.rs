//! The `bwrap` command line that confines one command, and the probe that tells whether `bwrap`
//! works here.
//!
//! The whole file system is mounted read-only (`--ro-bind / /`), then what the policy lets the
//! command write is bound back writable: the workspace and the person's `writable_roots`. Inside
//! the workspace `.git/hooks`, `.git/config`, `.git/modules` (the submodules' repositories),
//! `.git/worktrees` (the linked worktrees' folders) and `.keel` are bound read-only over that
//! again: they run code or change settings later, outside any sandbox. All but the config are
//! covered even when missing, so a command cannot create them either: bwrap makes an empty
//! folder to mount on, which the supervisor removes once no sandbox uses it; inside, a covered
//! path holds only a note saying why ([`KeelFolders`]). Last come the hidden paths (keel's own
//! config and state folders, the person's credentials: [`super::hidden`]), wherever the
//! workspace is: an empty read-only tmpfs over each folder, an empty read-only file over each
//! file, a missing folder covered where a command could make it, the folders above pinned.
//! `/tmp` is the session's own folder (else a private, empty tmpfs); `/proc` shows only the
//! sandbox's own processes (`--unshare-pid`), so keel's `/proc/PID/environ` and `fd` are out of
//! reach, and its kernel settings are read-only; the network is loopback only unless the policy
//! allows it (`--unshare-net`); System V IPC and the host name are the sandbox's own; and the
//! command has no capabilities, even when keel runs as root (`--cap-drop ALL`), so it cannot
//! remount what is read-only. The last step is told the bound on the command's processes.
//!
//! Where a trusted hook's files lie, each is bound read-only onto itself and each folder above it
//! pinned (bound onto itself, before the protected paths, which stay read-only over it): a
//! mount point cannot be written, renamed or removed from the command's own mount namespace,
//! so no command can swap what the hook runs (`Sandbox::pinned`, `hooks::Hooks::kept`).
//!
//! `--die-with-parent` is not used: bwrap's launcher exits as soon as the shell does, and with
//! that flag it would take the command's background jobs with it. They live on inside the
//! sandbox instead, under keel's supervisor, which is a child subreaper: it adopts the sandbox's
//! init process and kills it (and with it every process of the sandbox) when keel asks or is gone.
//! The output pipes do not pass through bwrap's stdout and stderr, which its init keeps open
//! while the sandbox lives: the supervisor hands them to the last step ([`confine`]) directly.

mod probe;
mod protected;

pub use probe::probe;
pub use protected::protected_names;

use super::confine;
use super::keel_folders::{KeelFolders, Keep};
use super::{Mode, Policy};
use crate::runtime::supervisor::ShellStart;
use protected::{Protect, protected};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The option that names where the command starts: the last before it, so what is bound for one
/// command alone goes in just before ([`overlay`]).
const CHDIR: &str = "--chdir";
/// What a hidden file shows where keel has no empty file of its own: the sandbox's mounts allow
/// no device, so it cannot even be opened.
const NO_FILE: &str = "/dev/null";

/// The mounts every sandbox starts with: the whole file system read-only, a `/dev` of its own and
/// a `/proc` that shows only its processes. bwrap covers `/proc/sys` only where `access` says it
/// is writable, which procfs never says of that folder, and the kernel checks a write to a
/// setting against the writer's user, not its capabilities: as root, a command could set
/// `kernel.core_pattern` to a program of its own, which the kernel runs as root outside every
/// namespace at the next crash. So the settings are bound read-only over the sandbox's own, and
/// so is `/proc/sysrq-trigger` where the kernel has one.
const BASE: [&str; 13] = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
];

/// The namespaces every sandbox has its own of, but the network's: processes (so `/proc` shows
/// only the sandbox's), System V IPC and the host name.
const UNSHARE: [&str; 3] = ["--unshare-pid", "--unshare-ipc", "--unshare-uts"];
/// The network's namespace: loopback only.
const UNSHARE_NET: &str = "--unshare-net";
/// A session of its own, and no capabilities even as root.
const NO_PRIVILEGE: [&str; 3] = ["--new-session", "--cap-drop", "ALL"];

/// What one sandboxed command needs besides the policy.
#[derive(Debug, Clone)]
pub struct Setup<'a> {
    /// The `bwrap` program.
    pub bwrap: &'a Path,
    /// The workspace root, where the command starts.
    pub workspace: &'a Path,
    /// keel's own binary, which confines itself inside the sandbox and becomes the shell.
    pub keel: &'a Path,
    /// Folders that stay read-only even inside a writable place (repositories below the top).
    pub read_only: &'a [PathBuf],
    /// Folders bound onto themselves, writable as they are, so that no command can rename or
    /// remove them; under a protected path they stay read-only (mounted before it).
    pub pinned: &'a [PathBuf],
    /// keel's own folders: kept out of reach, the session's `/tmp`, the note over covered paths.
    pub folders: &'a KeelFolders,
}

/// How the supervisor starts `bash -c COMMAND` confined: the program and arguments before it, and
/// the empty folders bwrap makes to cover missing protected paths, which the supervisor removes
/// once the sandbox is gone (so nothing of keel stays in the workspace).
pub fn shell_start(policy: &Policy, setup: &Setup<'_>) -> ShellStart {
    let mut placeholders = Vec::new();
    let mut args: Vec<OsString> = vec![setup.bwrap.into()];
    args.extend(BASE.iter().map(OsString::from));
    let mut push = |items: &[&OsStr]| args.extend(items.iter().map(|&item| item.into()));
    match &setup.folders.tmp {
        Some(tmp) if tmp.is_dir() => push(&["--bind".as_ref(), tmp.as_os_str(), "/tmp".as_ref()]),
        _ => push(&["--tmpfs".as_ref(), "/tmp".as_ref()]),
    }
    // The temporary folder by the name every sandbox gives it (under Landlock, the session's).
    push(&["--setenv".as_ref(), confine::TMPDIR.as_ref(), "/tmp".as_ref()]);
    let cover = setup.folders.cover.as_deref().filter(|cover| cover.is_dir());
    let mut covered = |path: PathBuf, push: &mut dyn FnMut(&[&OsStr])| {
        match cover {
            Some(cover) => push(&["--ro-bind".as_ref(), cover.as_os_str(), path.as_os_str()]),
            None => push(&[
                "--tmpfs".as_ref(),
                path.as_os_str(),
                "--remount-ro".as_ref(),
                path.as_os_str(),
            ]),
        }
        placeholders.push(path);
    };
    let writable: Vec<PathBuf> = match policy.mode {
        Mode::Workspace => std::iter::once(setup.workspace.to_path_buf())
            .chain(policy.writable_roots.iter().filter(|root| root.is_dir()).cloned())
            .collect(),
        _ => Vec::new(),
    };
    if policy.mode == Mode::Workspace {
        for root in &writable {
            push(&onto("--bind", root));
        }
        // Never through a symlink: a writable bind of one binds what it leads to.
        let folder = |path: &&PathBuf| path.symlink_metadata().is_ok_and(|meta| meta.is_dir());
        for path in setup.pinned.iter().filter(folder) {
            push(&onto("--bind", path));
        }
        for path in protected(setup.workspace) {
            let (kind, path) = path;
            match kind {
                Protect::Pinned => push(&onto("--bind", &path)),
                Protect::Existing => push(&onto("--ro-bind", &path)),
                Protect::Missing => covered(path, &mut push),
            }
        }
        let not_symlink = |path: &&PathBuf| path.symlink_metadata().is_ok_and(|m| !m.is_symlink());
        for path in setup.read_only.iter().filter(not_symlink) {
            push(&onto("--ro-bind", path));
        }
    } else {
        // Still readable where the private /tmp would hide it.
        push(&onto("--ro-bind", setup.workspace));
    }
    // Last, over what is bound above: the session's /tmp and the cover come from keel's state
    // folder, which is hidden here.
    let empty_file = setup.folders.empty_file.as_deref().filter(|file| file.is_file());
    let empty_file = empty_file.unwrap_or(Path::new(NO_FILE));
    let mut read_only_later = Vec::new();
    for keep in setup.folders.keeps(&writable, setup.workspace) {
        match keep {
            Keep::Pin(path) => push(&onto("--bind", &path)),
            Keep::ReadOnly(path) => push(&onto("--ro-bind", &path)),
            Keep::Cover(path) => covered(path, &mut push),
            Keep::Hide(path) if path.is_dir() => {
                push(&["--tmpfs".as_ref(), path.as_os_str()]);
                // One that holds keel's own binary is made read-only once that is bound in.
                match setup.keel.starts_with(&path) {
                    true => read_only_later.push(path),
                    false => push(&["--remount-ro".as_ref(), path.as_os_str()]),
                }
            }
            Keep::Hide(path) if path.exists() => {
                push(&["--ro-bind".as_ref(), empty_file.as_os_str(), path.as_os_str()])
            }
            // Gone since it was looked at: nothing to hide, and nothing made in its place.
            Keep::Hide(_) => {}
        }
    }
    // keel's binary must be reachable inside, wherever it lives (a private /tmp hides /tmp).
    push(&onto("--ro-bind", setup.keel));
    for path in &read_only_later {
        push(&["--remount-ro".as_ref(), path.as_os_str()]);
    }
    push(&UNSHARE.map(OsStr::new));
    if !policy.network {
        push(&[UNSHARE_NET.as_ref()]);
    }
    push(&NO_PRIVILEGE.map(OsStr::new));
    push(&[CHDIR.as_ref(), setup.workspace.as_os_str(), "--".as_ref()]);
    let limit = policy.process_limit();
    push(&[setup.keel.as_os_str(), confine::ENTRY_ARG.as_ref(), limit.to_string().as_ref()]);
    ShellStart { prefix: args, placeholders, max_processes: Some(limit), shell: None }
}

/// `flag` with `path` as both what is bound and where: a path bound onto itself.
fn onto<'a>(flag: &'a str, path: &'a Path) -> [&'a OsStr; 3] {
    [flag.as_ref(), path.as_os_str(), path.as_os_str()]
}

/// Binds each of `overlays` read-only over its target in the `bwrap` line `prefix` (as
/// [`launch`] makes it), after every other mount and before the command starts; `false` (and
/// `prefix` as it was) when the line has no place for them.
pub fn overlay(prefix: &mut Vec<OsString>, overlays: &[super::Overlay]) -> bool {
    let Some(at) = prefix.iter().rposition(|arg| arg == CHDIR) else {
        return false;
    };
    let binds = overlays.iter().flat_map(|overlay| {
        ["--ro-bind".into(), overlay.source.clone().into(), overlay.target.clone().into()]
    });
    prefix.splice(at..at, binds.collect::<Vec<OsString>>());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sandbox::Overlay;
    use crate::runtime::sandbox::hidden::Hidden;

    fn arguments(start: &ShellStart) -> Vec<String> {
        start.prefix.iter().map(|arg| arg.to_string_lossy().into_owned()).collect()
    }

    fn position(args: &[String], window: &[&str]) -> usize {
        let found = args.windows(window.len()).position(|pair| pair == window);
        found.unwrap_or_else(|| panic!("{window:?} not in {args:?}"))
    }

    #[test]
    fn hidden_paths_come_last_and_one_holding_keel_still_lets_it_run() {
        let home = tempfile::tempdir().unwrap();
        let h = &home.path().canonicalize().unwrap();
        let (bin, secrets, key) = (h.join("bin"), h.join("secrets"), h.join("key.pem"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(&key, "k").unwrap();
        let (keel, empty) = (bin.join("keel"), h.join("empty"));
        std::fs::write(&keel, "").unwrap();
        std::fs::write(&empty, "").unwrap();
        let folders = KeelFolders {
            hidden: Hidden::of_paths(&[bin.clone(), secrets.clone()], std::slice::from_ref(&key)),
            empty_file: Some(empty.clone()),
            ..KeelFolders::default()
        };
        let setup = Setup {
            bwrap: Path::new("bwrap"),
            workspace: h,
            keel: &keel,
            read_only: &[],
            pinned: &[],
            folders: &folders,
        };
        let args = arguments(&shell_start(&Policy::default(), &setup));
        let text = |path: &Path| path.display().to_string();
        let (bin, secrets, key, keel) = (text(&bin), text(&secrets), text(&key), text(&keel));
        let empty = text(&empty);
        let workspace = position(&args, &["--bind", &text(h), &text(h)]);
        let hidden = position(&args, &["--tmpfs", &secrets, "--remount-ro", &secrets]);
        assert!(workspace < hidden, "{args:?}");
        position(&args, &["--ro-bind", &empty, &key]);
        // keel's binary, bound into a hidden folder before it is made read-only.
        let tmpfs = position(&args, &["--tmpfs", &bin]);
        let bound = position(&args, &["--ro-bind", &keel, &keel]);
        let read_only = position(&args, &["--remount-ro", &bin]);
        assert!(tmpfs < bound && bound < read_only, "{args:?}");
    }

    #[test]
    fn pinned_folders_and_kept_files_are_bound_onto_themselves_never_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("w");
        std::fs::create_dir_all(work.join("hooks")).unwrap();
        std::fs::write(work.join("hooks/check.sh"), "").unwrap();
        std::os::unix::fs::symlink("/etc", work.join("linked")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", work.join("linked.sh")).unwrap();
        let (pinned, read_only) = (
            [work.join("hooks"), work.join("linked")],
            [work.join("hooks/check.sh"), work.join("linked.sh")],
        );
        let folders = KeelFolders::default();
        let setup = Setup {
            bwrap: Path::new("bwrap"),
            workspace: &work,
            keel: Path::new("/keel"),
            read_only: &read_only,
            pinned: &pinned,
            folders: &folders,
        };
        let line = arguments(&shell_start(&Policy::default(), &setup)).join(" ");
        let (hooks, check) = (work.join("hooks"), work.join("hooks/check.sh"));
        let pin = format!("--bind {0} {0}", hooks.display());
        let kept = format!("--ro-bind {0} {0}", check.display());
        assert!(line.contains(&pin) && line.contains(&kept), "{line}");
        assert!(line.find(&pin) < line.find(&kept), "a folder before what lies in it: {line}");
        assert!(!line.contains("linked"), "a symlink is never bound: {line}");
    }

    #[test]
    fn overlays_go_after_every_mount_and_before_the_command_starts() {
        let mut prefix: Vec<OsString> =
            ["bwrap", "--bind", "/w", "/w", "--chdir", "/w", "--", "keel"]
                .map(OsString::from)
                .into();
        let copy = Overlay { source: "/state/copy".into(), target: "/w/check.sh".into() };
        assert!(overlay(&mut prefix, &[copy]));
        let line: Vec<&str> = prefix.iter().filter_map(|arg| arg.to_str()).collect();
        assert_eq!(
            line,
            [
                "bwrap",
                "--bind",
                "/w",
                "/w",
                "--ro-bind",
                "/state/copy",
                "/w/check.sh",
                "--chdir",
                "/w",
                "--",
                "keel"
            ]
        );
        let mut other: Vec<OsString> = vec!["keel".into(), "__keel_confine".into()];
        assert!(!overlay(&mut other, &[]), "a line without mounts has no place for them");
        assert_eq!(other.len(), 2);
    }
}
