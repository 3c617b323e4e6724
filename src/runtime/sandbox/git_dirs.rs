//! What git takes for a repository: not only a folder with a `.git` in it, but any folder that
//! passes its `is_git_directory` test — a `HEAD`, an `objects` folder and a `refs` folder, the
//! last two perhaps in the folder a `commondir` file names. Looking for a repository, git tries
//! at each folder from where it runs up to the top, first `FOLDER/.git`, then `FOLDER` itself as a
//! bare repository; and it obeys that repository's `config` (`core.fsmonitor`, `core.pager`, an
//! alias) and hooks. So a command that writes `sub/HEAD`, `sub/objects/`, `sub/refs/` and
//! `sub/config` has made a repository just as one that runs `git init sub` has.
//!
//! [`Signs`] is told a folder's entries one by one as a look goes through them, and says whether
//! git would take the folder for a repository. It errs on the side of a repository: any `HEAD`
//! counts (git would check that it names a branch or an object), and so does a `commondir`
//! standing in for `objects` and `refs` (git would look in the folder it names). Nothing is read.

use std::ffi::OsStr;

/// The file a repository's current branch is in: the one entry that marks the folder.
pub const HEAD: &str = "HEAD";
const OBJECTS: &str = "objects";
const REFS: &str = "refs";
const COMMONDIR: &str = "commondir";

/// The names seen in one folder that git's test asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Signs {
    head: bool,
    objects: bool,
    refs: bool,
    commondir: bool,
}

impl Signs {
    /// Notes one entry of the folder, by name; `file_like` says it is a file or a symlink (a
    /// `HEAD` that is a folder is none).
    pub fn note(&mut self, name: &OsStr, file_like: bool) {
        match name.to_str() {
            Some(HEAD) => self.head |= file_like,
            Some(OBJECTS) => self.objects = true,
            Some(REFS) => self.refs = true,
            Some(COMMONDIR) => self.commondir = true,
            _ => {}
        }
    }

    /// Whether git would take the folder for a repository.
    pub fn repository(self) -> bool {
        self.head && ((self.objects && self.refs) || self.commondir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signs(names: &[&str]) -> Signs {
        let mut signs = Signs::default();
        for name in names {
            signs.note(OsStr::new(name), true);
        }
        signs
    }

    #[test]
    fn head_objects_and_refs_make_a_repository() {
        assert!(signs(&["HEAD", "objects", "refs", "src"]).repository());
        assert!(signs(&["HEAD", "commondir"]).repository(), "objects and refs elsewhere");
        assert!(!signs(&["HEAD", "objects"]).repository());
        assert!(!signs(&["objects", "refs", "commondir"]).repository());
        let mut folder_head = signs(&["objects", "refs"]);
        folder_head.note(OsStr::new("HEAD"), false);
        assert!(!folder_head.repository());
    }
}
