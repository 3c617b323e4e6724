//! One `pids` cgroup for all of keel's bounded commands, made once, so that no command pays for
//! a move between cgroups.
//!
//! As root only a cgroup's `pids.max` bounds a command's processes (`sandbox::process_limit`).
//! Moving a process into a cgroup, or out of one, makes the kernel take a lock whose first
//! writer waits for an RCU grace period: 8 to 15 ms on a quiet machine, once in and once out,
//! on every command, when each command's supervisor made a cgroup of its own and moved into it.
//! A process forked by a task already inside is born there at no cost. On cgroup v1 a thread can
//! sit in a cgroup apart from the rest of its process; so keel keeps one thread, the pen, in a
//! cgroup of its own, bounded to the commands' limit, and starts every bounded command's
//! supervisor from it: each is born inside with all it starts, and nothing moves per command.
//! keel's other threads, and every other program it starts, stay where they were.
//!
//! The pen is made the first time it is asked for: by the sandbox's probe, on its own thread at
//! start, where the one move it costs is off every command's path. The commands of one keel
//! share the bound: together they may have `limit` processes at once, besides their supervisors'
//! own threads. On cgroup v2 a thread cannot leave its process's cgroup; there, and wherever no
//! pen can be made, each supervisor makes a cgroup of its own as before ([`super::pids_cgroup`]).
//! [`close_all`] lets the pens' threads go and removes their cgroups as keel ends; one a crash
//! left behind, empty, is removed by the next keel that makes a pen beside it.

use super::pids_cgroup::{self, PIDS_MAX, SUPERVISOR_TASKS};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;
use tokio::process::{Child, Command};

/// The name of a pen's cgroup, before keel's process id and the bound.
const NAME_PREFIX: &str = "keel-pen-";
/// The file of a v1 cgroup that takes a single thread.
const TASKS: &str = "tasks";
/// The pen's own thread, counted in its cgroup.
const PEN_TASKS: u64 = 1;
/// How long [`close_all`] tries to remove a pen's cgroup while its thread's exit completes.
const REMOVE_TRIES: u32 = 20;
const REMOVE_PAUSE: Duration = Duration::from_millis(1);

/// Work the pen's thread runs: starting a supervisor.
type Job = Box<dyn FnOnce() + Send>;

/// A thread inside a `pids` cgroup of its own, which starts supervisors there.
#[derive(Debug)]
pub struct Pen {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    folder: PathBuf,
}

/// A pen once made, or why none could be.
type Made = Arc<OnceLock<Result<Arc<Pen>, String>>>;

/// Every pen keel made, one per bound (a keel has one; tests may ask for several).
static PENS: Mutex<Vec<(u64, Made)>> = Mutex::new(Vec::new());

/// The pen for `limit`, made on first use (which takes the one move: call it off the async
/// runtime, or see [`made`]); `Err` says why none can be made here.
pub fn get(limit: u64) -> Result<Arc<Pen>, String> {
    let cell = {
        let mut pens = PENS.lock().map_err(|_| "the pens' list is poisoned".to_owned())?;
        match pens.iter().find(|(bound, _)| *bound == limit) {
            Some((_, cell)) => Arc::clone(cell),
            None => {
                let cell = Arc::new(OnceLock::new());
                pens.push((limit, Arc::clone(&cell)));
                cell
            }
        }
    };
    cell.get_or_init(|| Pen::open(limit).map(Arc::new)).clone()
}

/// The pen for `limit` if it was made already: `None` when it was not, or could not be.
pub fn made(limit: u64) -> Option<Arc<Pen>> {
    let pens = PENS.lock().ok()?;
    let (_, cell) = pens.iter().find(|(bound, _)| *bound == limit)?;
    cell.get()?.as_ref().ok().cloned()
}

/// The pen for `limit`, waited for on a blocking thread when it is not made yet; `None` where
/// none can be made.
pub async fn for_commands(limit: u64) -> Option<Arc<Pen>> {
    if let Some(pen) = made(limit) {
        return Some(pen);
    }
    tokio::task::spawn_blocking(move || get(limit).ok()).await.ok().flatten()
}

/// Lets every pen's thread end and removes its cgroup, once keel's supervisors are gone.
pub fn close_all() {
    let Ok(mut pens) = PENS.lock() else { return };
    for (_, cell) in pens.drain(..) {
        if let Some(Ok(pen)) = cell.get() {
            pen.close();
        }
    }
}

impl Pen {
    /// Makes the cgroup beside keel's own in the v1 `pids` hierarchy, bounded to `limit`, and
    /// starts the thread that moves itself in.
    fn open(limit: u64) -> Result<Self, String> {
        let place = pids_cgroup::version_one_parent()?;
        sweep(&place);
        let folder = place.join(format!("{NAME_PREFIX}{}-{limit}", std::process::id()));
        // One a keel of the same process id left behind, empty, goes first.
        let _ = std::fs::remove_dir(&folder);
        std::fs::create_dir(&folder)
            .map_err(|err| format!("cannot make {}: {err}", folder.display()))?;
        let pen = Self::start(folder.clone(), limit);
        if pen.is_err() {
            let _ = std::fs::remove_dir(&folder);
        }
        pen
    }

    fn start(folder: PathBuf, limit: u64) -> Result<Self, String> {
        let bound = limit.saturating_add(PEN_TASKS + SUPERVISOR_TASKS).to_string();
        std::fs::write(folder.join(PIDS_MAX), bound)
            .map_err(|err| format!("cannot use {}: {err}", folder.display()))?;
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (joined, entered) = mpsc::channel();
        let tasks = folder.join(TASKS);
        let thread = std::thread::Builder::new()
            .name("keel-pen".into())
            .spawn(move || {
                let me = nix::unistd::gettid().to_string();
                let moved = std::fs::write(&tasks, me)
                    .map_err(|err| format!("cannot use {}: {err}", tasks.display()));
                let inside = moved.is_ok();
                let _ = joined.send(moved);
                if inside {
                    for job in inbox {
                        job();
                    }
                }
            })
            .map_err(|err| format!("cannot start the thread that starts commands: {err}"))?;
        let moved = entered.recv().unwrap_or_else(|_| Err("the pen's thread ended".to_owned()));
        if let Err(why) = moved {
            let _ = thread.join();
            return Err(why);
        }
        Ok(Self { jobs: Mutex::new(Some(jobs)), thread: Mutex::new(Some(thread)), folder })
    }

    /// Starts `cmd` from inside the pen, so that it and everything it starts are bounded.
    pub async fn spawn(&self, mut cmd: Command) -> std::io::Result<Child> {
        let runtime = tokio::runtime::Handle::current();
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _entered = runtime.enter();
            let _ = answer.send(cmd.spawn());
            // `cmd` holds the child's ends of its pipes and socket: let go of them here.
            drop(cmd);
        });
        let sent = self.jobs.lock().ok().and_then(|jobs| jobs.as_ref()?.send(job).ok());
        match sent {
            Some(()) => answered.await.unwrap_or_else(|_| Err(gone())),
            None => Err(gone()),
        }
    }

    /// The cgroup the pen's thread is in.
    #[cfg(test)]
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    fn close(&self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
        if let Some(thread) = self.thread.lock().ok().and_then(|mut thread| thread.take()) {
            let _ = thread.join();
        }
        // The kernel takes the thread out of its cgroup just after it wakes its joiner.
        for _ in 0..REMOVE_TRIES {
            if std::fs::remove_dir(&self.folder).is_ok() || !self.folder.exists() {
                return;
            }
            std::thread::sleep(REMOVE_PAUSE);
        }
    }
}

fn gone() -> std::io::Error {
    std::io::Error::other("keel's thread that starts commands is gone")
}

/// Removes the pens of keel processes that are gone; a cgroup still in use cannot be removed.
fn sweep(place: &Path) {
    let Ok(entries) = std::fs::read_dir(place) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|name| name.strip_prefix(NAME_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(owner.to_string()).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bound no other test asks for, so that this test's pen is its own.
    const LIMIT: u64 = 77;

    #[tokio::test]
    async fn a_command_started_from_the_pen_is_born_in_its_cgroup_and_keel_stays_out() {
        let pen = match get(LIMIT) {
            Ok(pen) => pen,
            Err(why) => {
                eprintln!("SKIPPED: no pen can be made here: {why}");
                return;
            }
        };
        let bound = std::fs::read_to_string(pen.folder().join(PIDS_MAX)).unwrap();
        assert_eq!(bound.trim(), (LIMIT + PEN_TASKS + SUPERVISOR_TASKS).to_string());
        let mut cmd = Command::new("sleep");
        cmd.arg("5").kill_on_drop(true);
        let mut child = pen.spawn(cmd).await.unwrap();
        let pid = child.id().unwrap();
        let name = pen.folder().file_name().unwrap().to_str().unwrap().to_owned();
        let its = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        assert!(its.lines().any(|line| line.contains(":pids:") && line.ends_with(&name)), "{its}");
        let mine = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        assert!(!mine.contains(NAME_PREFIX), "keel's own threads stay where they were: {mine}");
        let procs = std::fs::read_to_string(pen.folder().join("cgroup.procs")).unwrap();
        assert!(procs.lines().any(|line| line == pid.to_string()), "{procs}");
        assert!(made(LIMIT).is_some());
        child.kill().await.unwrap();
    }
}
