//! Whether the shadow repository is keel's to use, looked at before any git runs in it: the
//! folder it lives in is the one the session opened (a command that moved a folder above keel's
//! state and put one of its own in its place must not have its repository used), and it holds
//! no `commondir`, which would make git take its settings, hooks and objects from the folder it
//! names.

use super::{Shadow, ShadowError};
use crate::state_home::checked;
use std::path::Path;

/// The file that would make git take the repository's settings from another folder.
const COMMONDIR: &str = "commondir";

impl Shadow {
    /// Whether the repository is keel's to use: its folder is the one the session opened, and it
    /// holds no `commondir` (which makes git take its config, hooks and objects from the folder
    /// it names, where a command may have put them).
    pub(super) fn trusted(&self) -> Result<(), ShadowError> {
        let untrusted =
            |path: &Path, why: String| ShadowError::Untrusted { path: path.into(), why };
        if let Some((folder, identity)) = &self.home {
            match checked(folder) {
                Ok(now) if now == *identity => {}
                Ok(_) => {
                    return Err(untrusted(
                        folder,
                        "it is no longer the folder this session opened (a folder above it was \
                         moved or replaced)"
                            .to_owned(),
                    ));
                }
                Err(why) => return Err(untrusted(folder, why)),
            }
        }
        let commondir = self.git_dir.join(COMMONDIR);
        if commondir.symlink_metadata().is_ok() {
            return Err(untrusted(
                &self.git_dir,
                format!(
                    "it holds a {COMMONDIR}, which would make git take its settings and hooks \
                     from elsewhere; remove it if it is not yours"
                ),
            ));
        }
        Ok(())
    }
}
