//! Reading the private index git keeps for the shadow repository (gitformat-index(5)): each
//! entry's path, mode and object id, and the file status git cached for it when it last looked
//! at the file. Versions 2 and 3 only (version 4 compresses paths; the shadow repository never
//! asks for it); an index that keeps entries elsewhere (split, sparse) or holds a conflict is not
//! read at all, since what is read here must be the whole of what git would read.

/// The index file's signature, and the versions read here.
const SIGNATURE: &[u8; 4] = b"DIRC";
const VERSIONS: [u32; 2] = [2, 3];
pub(super) const HEADER_BYTES: usize = 12;
/// An entry's cached file status before its mode (times, device, inode), its mode, and after it
/// (owner, group, size).
pub(super) const STAT_BEFORE_MODE: usize = 24;
pub(super) const MODE_BYTES: usize = 4;
pub(super) const STAT_AFTER_MODE: usize = 12;
const FLAGS_BYTES: usize = 2;
/// In the flags: an entry with extended flags (two more bytes, version 3), its merge stage, and
/// the length of its path (this value when it is that long or longer, the path then ending at
/// a NUL).
const EXTENDED_FLAG: u16 = 0x4000;
const STAGE_MASK: u16 = 0x3000;
const NAME_MASK: u16 = 0x0fff;
/// Entries are padded with NULs to a multiple of this.
pub(super) const ENTRY_ALIGN: usize = 8;
/// Extensions that move entries out of this file: a split index's shared part, a sparse index.
const FOREIGN_ENTRIES: [&[u8; 4]; 2] = [b"link", b"sdir"];
/// An extension's signature and size before its data.
const EXTENSION_HEADER_BYTES: usize = 8;
/// A SHA-1 object id, as bytes: the shadow repository's (it is made in format version 0).
pub(super) const SHA1_BYTES: usize = 20;

/// A time stamp as the index keeps it: seconds and nanoseconds, each cut to 32 bits.
pub(super) type Stamp = (u32, u32);

/// The file status git cached for an entry, each field cut to 32 bits as the index keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Status {
    pub ctime: Stamp,
    pub mtime: Stamp,
    pub dev: u32,
    pub ino: u32,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
}

/// One entry of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry<'a> {
    pub status: Status,
    /// Flags a snapshot never sets (intent to add, skip the work tree): the entry then means
    /// more than its path, mode and object.
    pub extended: bool,
    /// The object id, the flags and the path, as stored: what the entry says, without the cached
    /// status that `git add` refreshes.
    pub named: &'a [u8],
    pub id: &'a [u8],
    pub path: &'a [u8],
}

/// An index read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Index<'a> {
    /// The version and the entry count, as stored.
    pub header: &'a [u8],
    pub entries: Vec<Entry<'a>>,
}

/// How many entries the index `bytes` says it holds, from its header alone.
pub(super) fn count(bytes: &[u8]) -> Option<usize> {
    let count = bytes.get(8..HEADER_BYTES)?;
    usize::try_from(u32::from_be_bytes(count.try_into().ok()?)).ok()
}

/// The index `bytes`, whose object ids are `id_bytes` long; `None` for an index not read whole
/// here.
pub(super) fn parse(bytes: &[u8], id_bytes: usize) -> Option<Index<'_>> {
    let header = bytes.get(..HEADER_BYTES)?;
    let word = |at: usize| header.get(at..at + 4).and_then(|b| b.try_into().ok());
    let version = u32::from_be_bytes(word(4)?);
    let count = u32::from_be_bytes(word(8)?);
    if &header[..4] != SIGNATURE || !VERSIONS.contains(&version) {
        return None;
    }
    let mut entries = Vec::new();
    let mut at = HEADER_BYTES;
    for _ in 0..count {
        let entry = bytes.get(at..)?;
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_be_bytes(entry.get(at..at + 4)?.try_into().ok()?))
        };
        let id_at = STAT_BEFORE_MODE + MODE_BYTES + STAT_AFTER_MODE;
        let flags_at = id_at + id_bytes;
        let flags =
            u16::from_be_bytes(entry.get(flags_at..flags_at + FLAGS_BYTES)?.try_into().ok()?);
        if flags & STAGE_MASK != 0 {
            return None;
        }
        let extended = flags & EXTENDED_FLAG != 0;
        let mut path_at = flags_at + FLAGS_BYTES;
        if extended {
            path_at += FLAGS_BYTES;
        }
        let path_len = match usize::from(flags & NAME_MASK) {
            len if len < usize::from(NAME_MASK) => len,
            _ => entry.get(path_at..)?.iter().position(|&byte| byte == 0)?,
        };
        let end = path_at + path_len;
        let status = Status {
            ctime: (word(0)?, word(4)?),
            mtime: (word(8)?, word(12)?),
            dev: word(16)?,
            ino: word(20)?,
            mode: word(24)?,
            uid: word(28)?,
            gid: word(32)?,
            size: word(36)?,
        };
        entries.push(Entry {
            status,
            extended: extended && entry.get(flags_at + FLAGS_BYTES..path_at)? != [0, 0],
            named: entry.get(id_at..end)?,
            id: entry.get(id_at..flags_at)?,
            path: entry.get(path_at..end)?,
        });
        // The path's NUL and the padding: at least one byte, up to the next multiple of 8.
        at += (end + ENTRY_ALIGN) / ENTRY_ALIGN * ENTRY_ALIGN;
    }
    // The extensions, up to the trailing checksum: none may hold entries elsewhere.
    let trailer = bytes.len().checked_sub(id_bytes)?;
    while at < trailer {
        let signature = bytes.get(at..at + 4)?;
        if FOREIGN_ENTRIES.iter().any(|foreign| signature == foreign.as_slice()) {
            return None;
        }
        let size = bytes.get(at + 4..at + EXTENSION_HEADER_BYTES)?;
        let size = usize::try_from(u32::from_be_bytes(size.try_into().ok()?)).ok()?;
        at = at.checked_add(EXTENSION_HEADER_BYTES + size)?;
    }
    (at == trailer).then_some(Index { header: &header[4..], entries })
}
