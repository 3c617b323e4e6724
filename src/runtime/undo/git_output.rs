//! What git says, as types: object ids, tree entries and changes, the errors of the shadow
//! repository, and the reading of what git prints (`diff-tree -r -z`, `cat-file --batch`).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;
use thiserror::Error;

/// Why a snapshot or a look into one failed.
#[derive(Debug, Error)]
pub enum ShadowError {
    #[error("{0}, so keel cannot snapshot the workspace")]
    NoGit(String),
    #[error("`git {step}` failed: {message}")]
    Failed { step: &'static str, message: String },
    #[error("the shadow repository {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// The repository or the folder it lives in is not keel's as it was: never used.
    #[error("keel does not snapshot into {path}: {why}")]
    Untrusted { path: PathBuf, why: String },
}

/// A git object id (SHA-1 or SHA-256, lowercase hex): checked before it reaches a command line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectId(String);

impl ObjectId {
    /// `text` as an object id, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        const SHA1_HEX: usize = 40;
        const SHA256_HEX: usize = 64;
        let hex = text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
        (hex && (text.len() == SHA1_HEX || text.len() == SHA256_HEX)).then(|| Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a tree holds at one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Executable,
    Symlink,
    /// A nested repository (a gitlink) or anything else keel does not restore.
    Other,
}

/// One side of a changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    pub id: ObjectId,
}

/// A path that differs between two snapshots: what it was before and after (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeChange {
    /// Relative to the workspace, as git stores it (bytes; usually UTF-8).
    pub path: Vec<u8>,
    pub before: Option<Entry>,
    pub after: Option<Entry>,
}

/// git's mode for each kind of tree entry.
const MODE_FILE: &str = "100644";
const MODE_EXECUTABLE: &str = "100755";
const MODE_SYMLINK: &str = "120000";
const MODE_ABSENT: &str = "000000";

fn malformed(what: &str) -> ShadowError {
    ShadowError::Failed { step: "diff-tree", message: format!("unexpected output: {what}") }
}

/// Parses `git diff-tree -r -z` output: `:MODE MODE ID ID STATUS\0PATH\0` per path.
pub(super) fn parse_raw_diff(stdout: &[u8]) -> Result<Vec<TreeChange>, ShadowError> {
    let mut fields = stdout.split(|&byte| byte == 0).filter(|field| !field.is_empty());
    let mut changes = Vec::new();
    while let Some(header) = fields.next() {
        let header = std::str::from_utf8(header).map_err(|_| malformed("a header not in ASCII"))?;
        let parts: Vec<&str> = header.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_id, new_id, _status] = parts[..] else {
            return Err(malformed(header));
        };
        let path = fields.next().ok_or_else(|| malformed("a change without a path"))?;
        let side = |mode: &str, id: &str| -> Result<Option<Entry>, ShadowError> {
            if mode == MODE_ABSENT {
                return Ok(None);
            }
            let id = ObjectId::parse(id).ok_or_else(|| malformed(id))?;
            let kind = match mode {
                MODE_FILE => Kind::File,
                MODE_EXECUTABLE => Kind::Executable,
                MODE_SYMLINK => Kind::Symlink,
                _ => Kind::Other,
            };
            Ok(Some(Entry { kind, id }))
        };
        changes.push(TreeChange {
            path: path.to_vec(),
            before: side(old_mode, old_id)?,
            after: side(new_mode, new_id)?,
        });
    }
    Ok(changes)
}

/// Parses `git cat-file --batch` output: `ID TYPE SIZE\n` then the bytes and `\n`, per object.
pub(super) fn parse_batch(stdout: &[u8]) -> Result<HashMap<ObjectId, Vec<u8>>, ShadowError> {
    let bad = |what: String| ShadowError::Failed { step: "cat-file", message: what };
    let mut reader = BufReader::new(stdout);
    let mut blobs = HashMap::new();
    let mut header = String::new();
    loop {
        header.clear();
        if reader.read_line(&mut header).map_err(|err| bad(err.to_string()))? == 0 {
            return Ok(blobs);
        }
        let parts: Vec<&str> = header.trim_end().split(' ').collect();
        let [id, _kind, size] = parts[..] else {
            return Err(bad(format!("object {}", header.trim_end())));
        };
        let id = ObjectId::parse(id).ok_or_else(|| bad(format!("bad id {id}")))?;
        let size: usize = size.parse().map_err(|_| bad(format!("bad size {size}")))?;
        let mut content = vec![0; size];
        reader.read_exact(&mut content).map_err(|err| bad(err.to_string()))?;
        let mut newline = [0; 1];
        reader.read_exact(&mut newline).map_err(|err| bad(err.to_string()))?;
        blobs.insert(id, content);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_diff_output_is_parsed_with_both_sides() {
        let (a, b) = ("1".repeat(40), "2".repeat(40));
        let zero = "0".repeat(40);
        let raw = format!(
            ":100644 100644 {a} {b} M\0dir/a b.txt\0:000000 100755 {zero} {b} A\0new.sh\0\
             :120000 000000 {a} {zero} D\0link\0"
        );
        let changes = parse_raw_diff(raw.as_bytes()).unwrap();
        assert_eq!(changes.len(), 3);
        assert_eq!(changes[0].path, b"dir/a b.txt");
        assert_eq!(changes[0].before.as_ref().unwrap().kind, Kind::File);
        assert_eq!(changes[1].before, None);
        assert_eq!(changes[1].after.as_ref().unwrap().kind, Kind::Executable);
        assert_eq!(changes[2].before.as_ref().unwrap().kind, Kind::Symlink);
        assert_eq!(changes[2].after, None);
    }

    #[test]
    fn batch_output_keeps_bytes_exactly() {
        let id = "3".repeat(40);
        let mut raw = format!("{id} blob 5\n").into_bytes();
        raw.extend_from_slice(b"a\r\n\0b\n");
        let blobs = parse_batch(&raw).unwrap();
        assert_eq!(blobs[&ObjectId::parse(&id).unwrap()], b"a\r\n\0b");
    }
}
