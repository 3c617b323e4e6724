//! A `pids` cgroup of the command's own, when keel runs as root and has no pen ([`super::pen`]:
//! cgroup v2 alone, where a thread cannot sit in a cgroup apart from its process): the kernel
//! never applies `RLIMIT_NPROC` to user 0 (`sandbox::process_limit`), but a cgroup's `pids.max`
//! binds every process in it, root's too. Moving in and out costs the command milliseconds each
//! way, which the pen saves where it can be made.
//!
//! The supervisor makes the cgroup beside its own (cgroup v1's `pids` hierarchy), or under the
//! hierarchy's top where its own cannot hold one (cgroup v2 lets a cgroup that has processes pass
//! no controller to its children), moves itself in before it starts the sandbox, so that every
//! process of the command is born inside, and moves back and removes it once they are all gone.
//! Where no cgroup can be made (a container whose `/sys/fs/cgroup` is read-only, a hierarchy
//! without `pids`) the command runs without the bound; the sandbox's probe finds that out first
//! ([`check`]), and keel says so once.

use std::path::{Path, PathBuf};

/// The supervisor's own tasks, counted in the cgroup with the command's: its main thread and the
/// four it starts (`child`'s reaper, listener, signal thread and the gate's watch), all started
/// before the command may run.
pub(super) const SUPERVISOR_TASKS: u64 = 5;
/// The cgroup's name, before the supervisor's process id.
const NAME_PREFIX: &str = "keel-command-";
/// The name of the one the probe makes and removes, before the process id and a random part
/// (threads of one process may probe at once).
const PROBE_PREFIX: &str = "keel-probe-";
/// The random part's length, in characters.
const PROBE_RANDOM: usize = 8;
const PROCS: &str = "cgroup.procs";
pub(super) const PIDS_MAX: &str = "pids.max";
const SUBTREE_CONTROL: &str = "cgroup.subtree_control";
const PIDS: &str = "pids";

/// The cgroup the supervisor moved into, and the one it came from.
#[derive(Debug)]
pub struct PidsCgroup {
    folder: PathBuf,
    home: PathBuf,
}

/// Where a cgroup may be made: the folder to make it in, and the supervisor's own cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    parent: PathBuf,
    home: PathBuf,
    /// In v1's `pids` hierarchy, where a single thread may join a cgroup.
    version_one: bool,
}

/// Moves this process (not yet threaded) into a new `pids` cgroup bound to `limit` processes
/// besides its own; `Err` says why none could be made.
pub fn enter(limit: u64) -> Result<PidsCgroup, String> {
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|err| format!("cannot read {path}: {err}"))
    };
    let (own, mounts) = (read("/proc/self/cgroup")?, read("/proc/self/mountinfo")?);
    let mut why = "no pids cgroup hierarchy is mounted".to_owned();
    for place in places(&own, &mounts) {
        let name = format!("{NAME_PREFIX}{}", std::process::id());
        match make(&place, limit, &name, true) {
            Ok(cgroup) => return Ok(cgroup),
            Err(err) => why = err,
        }
    }
    Err(why)
}

/// Whether a `pids` cgroup bound to `limit` can be made here: one is made and removed at once,
/// and this process stays where it is; `Err` says why none can.
pub fn check(limit: u64) -> Result<(), String> {
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|err| format!("cannot read {path}: {err}"))
    };
    let (own, mounts) = (read("/proc/self/cgroup")?, read("/proc/self/mountinfo")?);
    let mut why = "no pids cgroup hierarchy is mounted".to_owned();
    for place in places(&own, &mounts) {
        let random: String =
            std::iter::repeat_with(fastrand::alphanumeric).take(PROBE_RANDOM).collect();
        let name = format!("{PROBE_PREFIX}{}-{random}", std::process::id());
        match make(&place, limit, &name, false) {
            Ok(cgroup) => {
                let _ = std::fs::remove_dir(&cgroup.folder);
                return Ok(());
            }
            Err(err) => why = err,
        }
    }
    Err(why)
}

/// Where a cgroup of v1's `pids` hierarchy may be made beside this process's own; `Err` says why
/// there is no such place (no v1 `pids` hierarchy: cgroup v2 alone, or none mounted).
pub(super) fn version_one_parent() -> Result<PathBuf, String> {
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|err| format!("cannot read {path}: {err}"))
    };
    let (own, mounts) = (read("/proc/self/cgroup")?, read("/proc/self/mountinfo")?);
    places(&own, &mounts)
        .into_iter()
        .find(|place| place.version_one)
        .map(|place| place.parent)
        .ok_or_else(|| "no cgroup v1 pids hierarchy is mounted".to_owned())
}

impl PidsCgroup {
    /// Moves this process back where it was and removes the cgroup, once the command's
    /// processes are all gone.
    pub fn leave(self) {
        let _ = std::fs::write(self.home.join(PROCS), std::process::id().to_string());
        let _ = std::fs::remove_dir(&self.folder);
    }
}

/// Makes the cgroup `name` at `place`, bound to `limit`, and moves this process in when `join`.
fn make(place: &Place, limit: u64, name: &str, join: bool) -> Result<PidsCgroup, String> {
    let folder = place.parent.join(name);
    // One a supervisor of the same process id left behind, empty, goes first.
    let _ = std::fs::remove_dir(&folder);
    std::fs::create_dir(&folder)
        .map_err(|err| format!("cannot make {}: {err}", folder.display()))?;
    let cgroup = PidsCgroup { folder, home: place.home.clone() };
    let bound = limit.saturating_add(SUPERVISOR_TASKS).to_string();
    let joined = std::fs::write(cgroup.folder.join(PIDS_MAX), bound).and_then(|()| {
        if join {
            std::fs::write(cgroup.folder.join(PROCS), std::process::id().to_string())
        } else {
            Ok(())
        }
    });
    match joined {
        Ok(()) => Ok(cgroup),
        Err(err) => {
            let why = format!("cannot use {}: {err}", cgroup.folder.display());
            if join {
                cgroup.leave();
            } else {
                let _ = std::fs::remove_dir(&cgroup.folder);
            }
            Err(why)
        }
    }
}

/// The places to try, best first, from `/proc/self/cgroup` and `/proc/self/mountinfo`.
fn places(own: &str, mounts: &str) -> Vec<Place> {
    let mut places = Vec::new();
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let version_one = controllers.split(',').any(|name| name == PIDS);
        let unified = controllers.is_empty() && line.starts_with("0::");
        if !(version_one || unified) {
            continue;
        }
        for (root, point) in mounts.lines().filter_map(|line| hierarchy(line, version_one)) {
            let Ok(below) = Path::new(path).strip_prefix(&root) else { continue };
            let home = point.join(below);
            if version_one {
                places.push(Place { parent: home.clone(), home, version_one });
            } else {
                // Version 2: beside a cgroup that passes `pids` on, else under the top, which
                // may hold processes and pass controllers on both.
                for parent in [home.clone(), point.clone()] {
                    if passes_pids_on(&parent) && !places.iter().any(|p: &Place| p.parent == parent)
                    {
                        places.push(Place { parent, home: home.clone(), version_one });
                    }
                }
            }
        }
    }
    places
}

/// A `mountinfo` line's root and mount point, when it mounts the `pids` hierarchy (version 1) or
/// the unified one (version 2). Mount points with escaped characters are passed over.
fn hierarchy(line: &str, version_one: bool) -> Option<(PathBuf, PathBuf)> {
    let (mount, fs) = line.split_once(" - ")?;
    let mut fs = fs.split_whitespace();
    let (kind, _source, options) = (fs.next()?, fs.next()?, fs.next().unwrap_or_default());
    let wanted = if version_one {
        kind == "cgroup" && options.split(',').any(|option| option == PIDS)
    } else {
        kind == "cgroup2"
    };
    let mut fields = mount.split_whitespace().skip(3);
    let (root, point) = (fields.next()?, fields.next()?);
    (wanted && !root.contains('\\') && !point.contains('\\'))
        .then(|| (PathBuf::from(root), PathBuf::from(point)))
}

fn passes_pids_on(cgroup: &Path) -> bool {
    std::fs::read_to_string(cgroup.join(SUBTREE_CONTROL))
        .is_ok_and(|control| control.split_whitespace().any(|name| name == PIDS))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn version_one_makes_it_beside_the_own_cgroup() {
        let own = "8:pids:/user.slice\n4:memory:/x\n0::/\n";
        let found = places(own, MOUNTS);
        assert_eq!(
            found.first(),
            Some(&Place {
                parent: PathBuf::from("/sys/fs/cgroup/pids/user.slice"),
                home: PathBuf::from("/sys/fs/cgroup/pids/user.slice"),
                version_one: true,
            })
        );
        let mounted = "39 31 0:36 /sub /cg rw - cgroup cgroup rw,pids\n";
        let inside = places("8:pids:/sub/a\n", mounted);
        assert_eq!(inside[0].home, PathBuf::from("/cg/a"));
        assert!(places("8:pids:/elsewhere\n", mounted).is_empty(), "outside the mount's root");
    }

    #[test]
    fn lines_that_name_no_hierarchy_are_passed_over() {
        assert_eq!(hierarchy("garbage", true), None);
        assert_eq!(hierarchy("1 2 3:4 / /a\\040b rw - cgroup cgroup rw,pids", true), None);
        assert!(hierarchy("1 2 3:4 / /cg rw - cgroup2 cgroup2 rw", false).is_some());
        assert_eq!(hierarchy("1 2 3:4 / /cg rw - cgroup2 cgroup2 rw", true), None);
    }
}
