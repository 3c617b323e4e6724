//! An open session log: an append-only file of JSON records, locked while a process has it.
//!
//! Each record is one line, written straight through to the file. The log is held under an
//! exclusive advisory lock (`flock`) for as long as it is open, and the holder's pid is written
//! beside it (`<id>.pid`), so a second keel on the same session is told which process has it
//! instead of writing into it too; the lock goes with the process, however it ends.
//!
//! Reopening replays the log (`replay`). A last record cut off mid-write is trimmed. A record
//! that breaks the log in the middle ends what is loaded: the log is cut back to its valid
//! prefix and everything from that record on is moved, byte for byte, to `<id>.<time>.damaged`
//! beside it, so the person is told what was dropped and where it is.

use super::SessionError;
use super::record::Record;
use super::replay::{Damage, Restored, replay_from};
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The file extension of a session log.
pub(super) const LOG_EXTENSION: &str = "jsonl";
use std::time::{SystemTime, UNIX_EPOCH};

/// Logs hold the conversation: readable by their owner only.
const LOG_MODE: u32 = 0o600;
const PID_EXTENSION: &str = "pid";
const DAMAGED_EXTENSION: &str = "damaged";

/// An open session log, appended to as the conversation goes.
#[derive(Debug)]
pub struct SessionLog {
    id: String,
    path: PathBuf,
    file: Flock<File>,
}

impl SessionLog {
    /// Starts a new session in the sessions folder `dir`, with the id and start time `planned`
    /// for it (see [`plan`]) or new ones.
    pub(super) fn create(dir: &Path, planned: Option<(String, u64)>) -> Result<Self, SessionError> {
        let (id, started_at) = planned.unwrap_or_else(plan);
        let path = dir.join(format!("{id}.{LOG_EXTENSION}"));
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .mode(LOG_MODE)
            .open(&path)
            .map_err(|source| SessionError::Io { path: path.clone(), source })?;
        let file = lock(file, dir, &id)?;
        let mut log = Self { id: id.clone(), path, file };
        log.append(&Record::Start { id, started_at })?;
        Ok(log)
    }

    /// Reopens session `id` (already checked) in `dir`, locks it and replays it.
    pub(super) fn open(dir: &Path, id: &str) -> Result<(Self, Restored), SessionError> {
        let path = dir.join(format!("{id}.{LOG_EXTENSION}"));
        let io = |source| SessionError::Io { path: path.clone(), source };
        let not_found = || SessionError::NotFound { id: id.to_owned(), dir: dir.to_owned() };
        // One check, on what was opened: a symlink is refused by the open itself, a FIFO does
        // not hold it up, and whatever else is not a plain file is refused once it is open.
        let opened = OpenOptions::new()
            .read(true)
            .append(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(&path);
        let file = match opened {
            Ok(file) => file,
            Err(err)
                if matches!(err.raw_os_error(), Some(nix::libc::ENOENT | nix::libc::ELOOP)) =>
            {
                return Err(not_found());
            }
            Err(err) => return Err(io(err)),
        };
        if !file.metadata().map_err(io)?.is_file() {
            return Err(not_found());
        }
        let file = lock(file, dir, id)?;
        // Read line by line: a log of hundreds of megabytes is never held whole.
        let replayed = replay_from(std::io::BufReader::new(&*file)).map_err(io)?;
        let length = file.metadata().map_err(io)?.len();
        let valid_len = u64::try_from(replayed.valid_len).unwrap_or(u64::MAX);
        let mut restored = replayed.restored;
        if let Some(damage) = &replayed.damage {
            let mut rest = &*file;
            rest.seek(std::io::SeekFrom::Start(valid_len)).map_err(io)?;
            let aside = set_aside(dir, id, rest)?;
            restored.warnings.push(describe(damage, &aside));
        } else if replayed.cut_off {
            restored.warnings.push(
                "the session log ended in the middle of a record (keel was stopped while \
                 writing it); loaded everything before it"
                    .to_owned(),
            );
        }
        if valid_len < length {
            file.set_len(valid_len).map_err(io)?;
        }
        let mut log = Self { id: id.to_owned(), path, file };
        if replayed.missing_newline {
            log.write_line(b"\n")?;
        }
        Ok((log, restored))
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Marks the session as the one used last (its log's modification time, which
    /// `--continue` goes by), though nothing was written to it yet.
    pub fn touch(&self) -> std::io::Result<()> {
        self.file.set_modified(std::time::SystemTime::now())
    }

    /// Writes one record as one line, straight through to the file.
    pub fn append(&mut self, record: &Record) -> Result<(), SessionError> {
        let mut line = serde_json::to_vec(record)
            .map_err(|err| SessionError::Io { path: self.path.clone(), source: err.into() })?;
        line.push(b'\n');
        self.write_line(&line)
    }

    fn write_line(&mut self, line: &[u8]) -> Result<(), SessionError> {
        let io = |source| SessionError::Io { path: self.path.clone(), source };
        self.file.write_all(line).map_err(io)?;
        self.file.flush().map_err(io)
    }
}

impl Drop for SessionLog {
    fn drop(&mut self) {
        // The lock itself goes with the file; the pid beside it would only mislead.
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_file(pid_path(dir, &self.id));
        }
    }
}

/// Takes the session's lock without waiting, and writes this process's pid beside it.
fn lock(file: File, dir: &Path, id: &str) -> Result<Flock<File>, SessionError> {
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => {
            let pid = pid_path(dir, id);
            std::fs::write(&pid, format!("{}\n", std::process::id()))
                .map_err(|source| SessionError::Io { path: pid, source })?;
            Ok(locked)
        }
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
            let holder = std::fs::read_to_string(pid_path(dir, id))
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok());
            Err(SessionError::Locked { id: id.to_owned(), pid: holder })
        }
        Err((_, errno)) => Err(SessionError::Io {
            path: dir.join(format!("{id}.{LOG_EXTENSION}")),
            source: std::io::Error::from(errno),
        }),
    }
}

/// The process that holds session `id`'s log in `dir` open, if one does: its pid when it wrote
/// it, else 0. The lock is only tested (shared, at once let go), never waited for.
pub(super) fn holder(dir: &Path, id: &str) -> Option<u32> {
    let file = File::open(dir.join(format!("{id}.{LOG_EXTENSION}"))).ok()?;
    match Flock::lock(file, FlockArg::LockSharedNonblock) {
        Ok(_free) => None,
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Some(
            std::fs::read_to_string(pid_path(dir, id))
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok())
                .unwrap_or(0),
        ),
        Err(_) => None,
    }
}

fn pid_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.{PID_EXTENSION}"))
}

/// Moves the records beyond the valid prefix into a file of their own; returns its path.
fn set_aside(dir: &Path, id: &str, mut rest: impl Read) -> Result<PathBuf, SessionError> {
    let mut attempt: u32 = 0;
    loop {
        let suffix = if attempt == 0 { String::new() } else { format!("-{attempt}") };
        let path = dir.join(format!("{id}.{}{suffix}.{DAMAGED_EXTENSION}", now()));
        let created = OpenOptions::new().write(true).create_new(true).mode(LOG_MODE).open(&path);
        match created {
            Ok(mut file) => {
                let io = |source| SessionError::Io { path: path.clone(), source };
                std::io::copy(&mut rest, &mut file).map_err(io)?;
                file.sync_all().map_err(io)?;
                return Ok(path);
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
            Err(source) => return Err(SessionError::Io { path, source }),
        }
    }
}

/// What a repair dropped, for the person.
fn describe(damage: &Damage, aside: &Path) -> String {
    let records = plural(damage.lines, "record");
    let messages = plural(damage.messages, "message");
    format!(
        "the session log was damaged at line {} ({}): loaded the {} records before it and set \
         the {records} from there on ({messages} among them) aside in {}",
        damage.line,
        damage.reason,
        damage.line - 1,
        aside.display()
    )
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

/// A new session's id and start time, before its log exists: hooks name the session by it.
pub(super) fn plan() -> (String, u64) {
    let started_at = now();
    (new_id(started_at), started_at)
}

/// A sortable, unique id: the start time, then a few random characters.
fn new_id(started_at: u64) -> String {
    const SUFFIX_LEN: usize = 4;
    let suffix: String = std::iter::repeat_with(fastrand::lowercase).take(SUFFIX_LEN).collect();
    format!("{started_at}-{suffix}")
}
