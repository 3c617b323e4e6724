//! The sandbox where bwrap cannot start (not installed, or user namespaces off, as in many
//! containers): keel's own binary, as the command's last step, confines itself with Landlock
//! (Linux 5.13 and later) and the seccomp filter, drops every capability, and becomes `bash`.
//!
//! Without a mount namespace nothing can be hidden behind a mount, so everything is granted
//! rule by rule ([`rules`]): reading everywhere but the hidden paths (keel's own folders, the
//! person's credentials), the host's `/tmp` and most devices; writing only in the workspace
//! (outside plan mode), the person's `writable_roots` and the session's temporary folder, which
//! the command gets as `TMPDIR` — a program that writes `/tmp` by name is refused. The
//! workspace's `.git/hooks`, `.git/config`, `.keel` … stay read-only by being left out of the
//! grant, which leaves the workspace's top and `.git` unchangeable: nothing can be made,
//! removed or renamed there, by construction rather than by a look afterwards. Without a
//! network namespace the seccomp filter refuses every socket but a Unix pair when the network
//! is off ([`super::confine::Closes`]), and Landlock's TCP rules do too where the kernel has them.
//!
//! docs/sandbox.md ("Landlock, where bwrap cannot run") says what bwrap holds that this does not.

pub mod enforce;
pub mod mounts;
pub mod rules;
pub mod spec;

pub use spec::Spec;

use super::{KeelFolders, Mode, Policy, bwrap, confine};
use crate::runtime::supervisor::ShellStart;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The first argument that turns the keel binary into the last step of a Landlock sandbox.
pub const ENTRY_ARG: &str = "__keel_landlock";
/// The first argument that turns the keel binary into the Landlock sandbox's probe.
pub const PROBE_ARG: &str = "__keel_landlock_probe";
/// The environment variable of keel's own that keeps keel from using Landlock (`off`), so that
/// where bwrap cannot run no sandbox is found. Read from keel's own environment only.
pub const VARIABLE: &str = "KEEL_LANDLOCK";
/// Its value that turns Landlock off.
pub const OFF: &str = "off";
/// What the probe says before it becomes `bash`, then the Landlock version in force.
const PROBE_SAYS: &str = "landlock-abi ";
/// The shell the probe runs, found on keel's `PATH`.
const PROBE_SHELL: [&str; 3] = ["bash", "-c", ":"];

/// What the Landlock sandbox does not hold at version `abi` that a newer kernel's does, in
/// words; none at 6 and after (0: not probed yet, nothing said).
pub fn gaps(abi: u32) -> Vec<&'static str> {
    const GAPS: [(u32, &str); 3] = [
        (2, "a file cannot be moved or linked into another folder"),
        (3, "truncating a file the person can write, anywhere, is not confined"),
        (6, "a command can send signals to the person's other processes, keel's included"),
    ];
    GAPS.iter().filter(|(since, _)| abi > 0 && abi < *since).map(|(_, gap)| *gap).collect()
}

/// Whether keel's environment turns Landlock off.
pub fn turned_off() -> bool {
    std::env::var_os(VARIABLE).is_some_and(|value| value == OFF)
}

/// The spec of a command of `workspace` under `policy`: `read_only` are repositories below its
/// top, `folders` keel's own (hidden, as the paths it lists to hide are).
pub fn spec(
    policy: &Policy,
    workspace: &Path,
    read_only: &[PathBuf],
    folders: &KeelFolders,
) -> Spec {
    let mut writable = Vec::new();
    let mut kept = Vec::new();
    if policy.mode == Mode::Workspace {
        writable.push(workspace.to_path_buf());
        writable.extend(policy.writable_roots.iter().cloned());
        kept.extend(bwrap::protected_names().map(|name| workspace.join(name)));
        kept.extend(read_only.iter().cloned());
    }
    writable.extend(folders.tmp.iter().cloned());
    // One that holds the workspace is left as it is: hiding it would hide the workspace.
    let hidden = folders
        .hidden
        .entries()
        .iter()
        .map(|entry| &entry.path)
        .chain(&folders.own)
        .filter(|hidden| !workspace.starts_with(hidden))
        .cloned()
        .collect();
    Spec {
        writable,
        kept,
        hidden,
        readable: Vec::new(),
        network: policy.network,
        tmp: folders.tmp.clone(),
    }
}

/// How the supervisor starts a command confined by `spec`: keel's binary `keel` as its last
/// step, told the spec and the bound on the command's processes.
pub fn shell_start(policy: &Policy, keel: &Path, spec: &Spec) -> ShellStart {
    let limit = policy.process_limit();
    let mut prefix: Vec<OsString> = vec![keel.into(), ENTRY_ARG.into()];
    prefix.extend(spec.to_args());
    prefix.push(limit.to_string().into());
    ShellStart { prefix, placeholders: Vec::new(), max_processes: Some(limit), shell: None }
}

/// Confines this process with `spec`: the rules built and enforced, every capability dropped.
/// Returns the Landlock version in force.
pub fn confine(spec: &Spec) -> Result<u32, String> {
    let rules = rules::build(spec).map_err(|err| err.to_string())?;
    let version = enforce::restrict(&rules, spec.network)?;
    enforce::drop_capabilities()?;
    Ok(version)
}

/// Runs `bash -c :` confined by `spec` through keel's binary `keel`; the Landlock version in
/// force, or why it failed.
pub fn probe(keel: &Path, spec: &Spec) -> Result<u32, String> {
    let output = Command::new(keel)
        .arg(PROBE_ARG)
        .args(spec.to_args())
        .args(PROBE_SHELL)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("keel's own binary cannot be started ({err})"))?;
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said.trim();
    let version = String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix(PROBE_SAYS)?.trim().parse().ok());
    match version {
        Some(version) if output.status.success() => Ok(version),
        _ if said.is_empty() => Err(format!("its probe failed ({})", output.status)),
        _ => Err(said.trim_start_matches("keel: ").to_owned()),
    }
}

/// The probe's own process (arguments after [`PROBE_ARG`]: the spec, then the program to
/// become): confined as a command is, it says the Landlock version and becomes the program.
pub fn probe_main(args: &[OsString]) -> ExitCode {
    let (spec, program) = match Spec::parse(args) {
        Ok(parsed) => parsed,
        Err(err) => {
            eprintln!("keel: {err}");
            return ExitCode::FAILURE;
        }
    };
    let Some((program, rest)) = program.split_first() else {
        eprintln!("keel: this entry point is internal; keel starts it to probe Landlock");
        return ExitCode::FAILURE;
    };
    let version = match confine(&spec) {
        Ok(version) => version,
        Err(err) => {
            eprintln!("keel: {err}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(err) = confine::install_filter(confine::Closes::for_sandbox(Some(&spec))) {
        eprintln!("keel: seccomp filter: {err}");
        return ExitCode::FAILURE;
    }
    println!("{PROBE_SAYS}{version}");
    let err = Command::new(program).args(rest).exec();
    eprintln!("keel: cannot start {}: {err}", program.to_string_lossy());
    ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sandbox::hidden::Hidden;

    #[test]
    fn the_spec_keeps_the_workspaces_settings_and_hides_keels_folders() {
        let folders = KeelFolders {
            own: vec!["/h/.config/keel".into(), "/h/.local/state/keel".into()],
            tmp: Some("/h/.local/state/keel/tmp/1-x".into()),
            hidden: Hidden::of_paths(&["/h/.ssh".into()], &[]),
            ..KeelFolders::default()
        };
        let policy =
            Policy { writable_roots: vec!["/data".into()], network: true, ..Policy::default() };
        let spec = spec(&policy, Path::new("/h/w"), &["/h/w/sub/.git".into()], &folders);
        assert_eq!(
            spec.writable,
            [PathBuf::from("/h/w"), "/data".into(), "/h/.local/state/keel/tmp/1-x".into()]
        );
        for kept in ["/h/w/.git/hooks", "/h/w/.git/config", "/h/w/.keel", "/h/w/sub/.git"] {
            assert!(spec.kept.contains(&PathBuf::from(kept)), "{kept}");
        }
        for hidden in ["/h/.ssh", "/h/.config/keel", "/h/.local/state/keel"] {
            assert!(spec.hidden.contains(&PathBuf::from(hidden)), "{hidden}");
        }
        assert!(spec.network);
        assert_eq!(spec.tmp, folders.tmp);
        // Plan mode: only the temporary folder is written.
        let plan = policy.at_most(Mode::ReadOnly);
        let spec = super::spec(&plan, Path::new("/h/w"), &[], &folders);
        assert_eq!(spec.writable, folders.tmp.iter().cloned().collect::<Vec<_>>());
        assert!(spec.kept.is_empty());
        // A workspace inside keel's state folder is not hidden with it.
        let inside = super::spec(&policy, Path::new("/h/.local/state/keel/w"), &[], &folders);
        assert!(!inside.hidden.contains(&PathBuf::from("/h/.local/state/keel")));
    }

    #[test]
    fn what_an_older_kernel_leaves_open_is_said() {
        assert_eq!(gaps(1).len(), 3);
        assert_eq!(
            gaps(5),
            ["a command can send signals to the person's other processes, keel's included"]
        );
        assert!(gaps(6).is_empty() && gaps(7).is_empty() && gaps(0).is_empty());
    }

    #[test]
    fn the_start_line_ends_with_the_bound() {
        let policy = Policy { max_processes: Some(40), ..Policy::default() };
        let start = shell_start(&policy, Path::new("/bin/keel"), &Spec::default());
        assert_eq!(start.prefix[..2], [OsString::from("/bin/keel"), ENTRY_ARG.into()]);
        assert_eq!(start.prefix.last(), Some(&OsString::from("40")));
        assert_eq!(start.max_processes, Some(40));
        assert!(start.placeholders.is_empty());
    }
}
