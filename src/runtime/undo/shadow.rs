//! The shadow repository: snapshots of the workspace in a git object store of keel's own.
//!
//! Before a turn's first command and after the turn, keel records the whole workspace as a git
//! tree, the way Codex's ghost commits and Cline's checkpoints do. The repository lives with the session state,
//! outside the workspace; the workspace is only its work tree. keel runs the `git` binary with
//! the repository, the work tree and a private index given explicitly, so the workspace's own
//! `.git` is never read for objects nor written. What git would ignore in the workspace (its
//! `.gitignore` files, and `.git/info/exclude`, copied in) is left out of the snapshots — except
//! where the turn itself rewrote a `.gitignore` before the snapshot: rules a prompt wrote are no
//! reason to leave its own changes out ([`Shadow::including_ignored_near`]). Files once in the
//! private index stay covered whatever the rules say later, as tracked files do in git.
//!
//! Nothing of the person's git setup applies: their global and system config are not read (a
//! clean filter such as git-lfs would store pointers instead of files), and the repository's
//! `info/attributes` turns every conversion off (`text`, `eol`, `filter`, `ident`, encodings),
//! so a blob holds a file's bytes exactly as they were.

mod trust;

pub use super::git_output::{Entry, Kind, ObjectId, ShadowError, TreeChange};
use super::git_output::{parse_batch, parse_raw_diff};
use super::{tree_memo, unchanged};
use crate::state_home::Identity;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The program run for every snapshot, when none was found for it.
const GIT: &str = "git";
/// The shadow repository's settings: no automatic gc (snapshots must stay), no conversions, no
/// hints on stderr.
const CONFIG: &str = "[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\tuntrackedCache = false
[gc]
\tauto = 0
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
";
/// Attributes that override any `.gitattributes` in the workspace: store bytes as they are.
const ATTRIBUTES: &str = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n";
/// The folders of a new repository; its objects and refs are written by git as it needs them.
const REPOSITORY_FOLDERS: [&str; 3] = ["objects", "refs/heads", "refs/tags"];
/// The new repository's HEAD: a branch that never gets a commit (snapshots are trees).
const HEAD: &str = "ref: refs/heads/main\n";
/// Where every snapshot's tree is referenced from, so that nothing ever prunes it.
const REF_PREFIX: &str = "refs/keel/snapshots/";

/// The shadow repository of one workspace, with the index one session snapshots through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadow {
    /// The `git` program, or why none may be run.
    git: Result<OsString, String>,
    git_dir: PathBuf,
    work_tree: PathBuf,
    index: PathBuf,
    /// Paths relative to the work tree that are never snapshotted (keel's state, when it lies
    /// inside the workspace).
    excluded: Vec<String>,
    /// Folders relative to the work tree whose ignored files are snapshotted too: the turn itself
    /// rewrote the ignore rules there, so those rules are no reason to leave a file out.
    forced: Vec<String>,
    /// The folder the repository lives in, with the identity it had when the session opened.
    home: Option<(PathBuf, Identity)>,
}

impl Shadow {
    /// The repository at `git_dir` for the workspace `work_tree`, snapshotting through `index`.
    pub fn new(git_dir: PathBuf, work_tree: PathBuf, index: PathBuf) -> Self {
        Self {
            git: Ok(GIT.into()),
            git_dir,
            work_tree,
            index,
            excluded: Vec::new(),
            forced: Vec::new(),
            home: None,
        }
    }

    /// Uses the repository only while `folder` (the one it lives in) is the folder of identity
    /// `identity`: a command that moved a folder above it and put one of its own in its place
    /// must not have its repository used.
    pub fn kept_in(mut self, folder: &Path, identity: Identity) -> Self {
        self.home = Some((folder.to_path_buf(), identity));
        self
    }

    /// Runs `program` instead of `git` (to test a machine without git).
    pub fn with_git(mut self, program: impl Into<OsString>) -> Self {
        self.git = Ok(program.into());
        self
    }

    /// Runs the `git` keel found ([`crate::runtime::programs`]); with none, snapshots fail saying
    /// why.
    pub fn with_git_found(mut self, found: &Result<PathBuf, String>) -> Self {
        self.git = found.clone().map(PathBuf::into_os_string);
        self
    }

    /// Leaves `relative` (a path inside the work tree) out of every snapshot.
    pub fn excluding(mut self, relative: String) -> Self {
        self.excluded.push(relative);
        self
    }

    /// Snapshots the files git would ignore in the folders of `ignore_files` (`.gitignore` files
    /// the turn wrote, as absolute paths) as well; a path outside the work tree is skipped.
    pub fn including_ignored_near(mut self, ignore_files: &[PathBuf]) -> Self {
        for file in ignore_files {
            let folder = file.parent().and_then(|folder| folder.strip_prefix(&self.work_tree).ok());
            if let Some(folder) = folder.and_then(Path::to_str) {
                let folder = if folder.is_empty() { "." } else { folder };
                self.forced.push(folder.to_owned());
            }
        }
        self
    }

    /// Records the workspace as it is now; returns the tree's id. Two git processes, `add` and
    /// `write-tree`; one when `add` leaves the index as the last snapshot left it ([`tree_memo`]);
    /// none when the workspace is just as the last snapshot left it ([`unchanged`]).
    pub fn snapshot(&self) -> Result<ObjectId, ShadowError> {
        self.trusted()?;
        self.ensure_repository()?;
        self.copy_workspace_excludes();
        // Looked at before `add`, so that whatever changes after it is seen by the next look.
        let look = self.look();
        if let unchanged::Look::Unchanged(tree) = look {
            return Ok(tree);
        }
        let quiet = match self.add_all() {
            Ok(quiet) => quiet,
            // A damaged private index is only a cache: start it again once.
            Err(first) if matches!(first, ShadowError::NoGit(_)) => return Err(first),
            Err(_) => {
                let _ = std::fs::remove_file(&self.index);
                tree_memo::forget(&self.index);
                unchanged::forget(&self.index);
                self.add_all()?
            }
        };
        let tree = self.write_tree()?;
        unchanged::note(&self.index, &look, &tree, quiet);
        Ok(tree)
    }

    /// The tree of the index as `add` left it: the last one's when its entries are the same.
    fn write_tree(&self) -> Result<ObjectId, ShadowError> {
        // Entries `add` left as they were give the tree they gave last time.
        let entries = tree_memo::entries(&self.index);
        let is_kept = |tree: &ObjectId| self.reference(tree).is_file();
        if let Some(tree) =
            entries.as_ref().and_then(|now| tree_memo::remembered(&self.index, now, is_kept))
        {
            return Ok(tree);
        }
        let output = self.run("write-tree", &["write-tree"], None)?;
        let tree = parse_id(&output.stdout, "write-tree")?;
        // The reference only keeps the tree from ever being pruned (gc is off anyway), so it is
        // written as a loose ref file rather than by one more git process. Two sessions taking
        // the same snapshot at once write the same file; either one will do.
        let reference = self.reference(&tree);
        let kept = std::fs::create_dir_all(self.git_dir.join(REF_PREFIX))
            .and_then(|()| std::fs::write(&reference, format!("{}\n", tree.as_str())));
        if kept.is_ok() {
            tree_memo::remember(&self.index, entries.as_ref(), &tree);
        }
        Ok(tree)
    }

    /// Whether the workspace is as the last snapshot left it ([`unchanged`]); never while a
    /// turn's own ignore rules force files in (`git add --force` is beyond what a look vouches
    /// for).
    pub(super) fn look(&self) -> unchanged::Look {
        if !self.forced.is_empty() {
            return unchanged::Look::Unknown;
        }
        let mut rules = vec![self.git_dir.join("info/exclude")];
        rules.extend(unchanged::global_ignore_file());
        let place = unchanged::Place {
            index: &self.index,
            work_tree: &self.work_tree,
            excluded: &self.excluded,
            rules: &rules,
        };
        unchanged::look(place, |tree| self.reference(tree).is_file())
    }

    /// The reference that keeps snapshot `tree`'s objects.
    fn reference(&self, tree: &ObjectId) -> PathBuf {
        self.git_dir.join(REF_PREFIX).join(tree.as_str())
    }

    /// The paths that differ between two snapshots.
    pub fn changes(
        &self,
        before: &ObjectId,
        after: &ObjectId,
    ) -> Result<Vec<TreeChange>, ShadowError> {
        let args = ["diff-tree", "-r", "-z", "--no-renames", before.as_str(), after.as_str()];
        let output = self.run("diff-tree", &args, None)?;
        parse_raw_diff(&output.stdout)
    }

    /// Every folder a snapshot holds, relative to the work tree.
    pub fn folders(&self, tree: &ObjectId) -> Result<HashSet<Vec<u8>>, ShadowError> {
        let args = ["ls-tree", "-r", "-d", "-z", "--name-only", tree.as_str()];
        let output = self.run("ls-tree", &args, None)?;
        Ok(output
            .stdout
            .split(|&byte| byte == 0)
            .filter(|p| !p.is_empty())
            .map(<[u8]>::to_vec)
            .collect())
    }

    /// The contents of the files and symlinks `changes` holds, before and after, by id (a nested
    /// repository's commit has none).
    pub fn blobs(&self, changes: &[TreeChange]) -> Result<HashMap<ObjectId, Vec<u8>>, ShadowError> {
        let ids: Vec<&ObjectId> = changes
            .iter()
            .flat_map(|change| [&change.before, &change.after])
            .flatten()
            .filter(|entry| entry.kind != Kind::Other)
            .map(|entry| &entry.id)
            .collect();
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let mut input = Vec::new();
        for id in ids {
            input.extend_from_slice(id.as_str().as_bytes());
            input.push(b'\n');
        }
        let output = self.run("cat-file", &["cat-file", "--batch"], Some(input))?;
        parse_batch(&output.stdout)
    }

    /// Creates the repository the first time; a half-made one is completed.
    fn ensure_repository(&self) -> Result<(), ShadowError> {
        let io = |source| ShadowError::Io { path: self.git_dir.clone(), source };
        let head = self.git_dir.join("HEAD");
        if !head.is_file() {
            // What git needs to take a folder for a repository (gitrepository-layout(5)), made
            // here: a `git init` process costs more than the snapshot that follows it.
            create_private_dir(&self.git_dir).map_err(io)?;
            for folder in REPOSITORY_FOLDERS {
                std::fs::create_dir_all(self.git_dir.join(folder)).map_err(io)?;
            }
        }
        replace_if_changed(&self.git_dir.join("config"), CONFIG.as_bytes()).map_err(io)?;
        let info = self.git_dir.join("info");
        std::fs::create_dir_all(&info).map_err(io)?;
        replace_if_changed(&info.join("attributes"), ATTRIBUTES.as_bytes()).map_err(io)?;
        // HEAD last: a repository with one is complete.
        if !head.is_file() {
            std::fs::write(&head, HEAD).map_err(io)?;
        }
        Ok(())
    }

    /// What the workspace's own repository excludes locally (`.git/info/exclude`) is excluded
    /// here too. Only read, and only from a regular file.
    fn copy_workspace_excludes(&self) {
        let theirs = self.work_tree.join(".git/info/exclude");
        let content = match std::fs::symlink_metadata(&theirs) {
            Ok(meta) if meta.is_file() => std::fs::read(&theirs).unwrap_or_default(),
            _ => Vec::new(),
        };
        let _ = replace_if_changed(&self.git_dir.join("info/exclude"), &content);
    }

    /// Stages the whole work tree in the private index; whether git said nothing. Files git
    /// cannot read are skipped (git says so and goes on); anything fatal is an error.
    fn add_all(&self) -> Result<bool, ShadowError> {
        let quiet = self.add(&["."], false)?;
        if self.forced.is_empty() {
            return Ok(quiet);
        }
        let forced: Vec<String> =
            self.forced.iter().map(|folder| format!(":(literal){folder}")).collect();
        self.add(&forced.iter().map(String::as_str).collect::<Vec<_>>(), true).map(|_| false)
    }

    /// Stages `pathspecs` (what git ignores too, when `force`), keel's own state never; whether
    /// git said nothing.
    fn add(&self, pathspecs: &[&str], force: bool) -> Result<bool, ShadowError> {
        let mut args: Vec<String> = ["add", "--all", "--ignore-errors"].map(str::to_owned).to_vec();
        if force {
            args.push("--force".to_owned());
        }
        args.push("--".to_owned());
        args.extend(pathspecs.iter().map(|spec| (*spec).to_owned()));
        args.extend(self.excluded.iter().map(|path| format!(":(exclude,literal){path}")));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match self.run("add", &args, None) {
            Ok(output) => Ok(output.stderr.is_empty()),
            Err(ShadowError::Failed { message, .. }) if !message.contains("fatal:") => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// `git` with none of the caller's git settings: no `GIT_*` variables, no global or system
    /// config, never a prompt.
    fn command(&self) -> Result<Command, ShadowError> {
        let git = self.git.as_ref().map_err(|why| ShadowError::NoGit(why.clone()))?;
        let mut command = Command::new(git);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(name);
            }
        }
        command
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .current_dir(&self.work_tree);
        Ok(command)
    }

    /// Runs one git command against the shadow repository, the work tree and the private index.
    fn run(
        &self,
        step: &'static str,
        args: &[&str],
        input: Option<Vec<u8>>,
    ) -> Result<Output, ShadowError> {
        self.trusted()?;
        let mut command = self.command()?;
        command
            .args(args)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index);
        finish(step, command, input)
    }
}

/// Runs `command` to its end, feeding it `input`; a failure carries what git said.
fn finish(
    step: &'static str,
    mut command: Command,
    input: Option<Vec<u8>>,
) -> Result<Output, ShadowError> {
    let program = PathBuf::from(command.get_program());
    command
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => ShadowError::NoGit("git was not found".to_owned()),
        _ => ShadowError::Io { path: program.clone(), source },
    })?;
    // Written from a thread of its own: git may answer before it has read everything.
    let writer = match (input, child.stdin.take()) {
        (Some(input), Some(mut stdin)) => Some(std::thread::spawn(move || stdin.write_all(&input))),
        _ => None,
    };
    let output =
        child.wait_with_output().map_err(|source| ShadowError::Io { path: program, source })?;
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if output.status.success() {
        Ok(output)
    } else {
        let message = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        Err(ShadowError::Failed { step, message })
    }
}

/// Gives `path` the content `content` unless it has it already, by renaming a new file over it,
/// so that a git run by another keel at the same moment never reads it half written.
fn replace_if_changed(path: &Path, content: &[u8]) -> io::Result<()> {
    if std::fs::read(path).ok().as_deref() == Some(content) {
        return Ok(());
    }
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(name);
    std::fs::write(&temp, content)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// Creates `dir` and its parents, readable by the owner only.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    const PRIVATE_DIR_MODE: u32 = 0o700;
    std::fs::DirBuilder::new().recursive(true).mode(PRIVATE_DIR_MODE).create(dir)
}

fn parse_id(stdout: &[u8], step: &'static str) -> Result<ObjectId, ShadowError> {
    let text = String::from_utf8_lossy(stdout);
    ObjectId::parse(text.trim()).ok_or_else(|| ShadowError::Failed {
        step,
        message: format!("printed {:?} instead of an object id", text.trim()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hex_object_ids_are_accepted() {
        assert!(ObjectId::parse(&"a".repeat(40)).is_some());
        assert!(ObjectId::parse(&"0".repeat(64)).is_some());
        for bad in ["--output=/tmp/x", "HEAD", &"A".repeat(40), &"a".repeat(41), ""] {
            assert!(ObjectId::parse(bad).is_none(), "{bad}");
        }
    }
}
