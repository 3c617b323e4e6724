//! One path of the list and why it is hidden, in the words a refusal and `keel sandbox` use; and a
//! path that was named but is not hidden, with why not.

use std::path::PathBuf;

/// Whether a path is a folder or a file: a missing folder is covered where commands write, so
/// that none makes it; a missing file is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Folder,
    File,
}

/// Why a path is hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// keel's config folder: its config file may hold the provider's `api_key`.
    KeelConfig,
    /// keel's state folder: sessions (every prompt and answer), undo's snapshots.
    KeelState,
    /// A credential store, holding this.
    Credentials(&'static str),
    /// The person's own `hidden_paths` names it.
    Person,
}

/// One hidden path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The path as the kernel reaches it (its existing part's symlinks followed).
    pub path: PathBuf,
    /// The path as the person knows it: `~/.ssh`.
    pub shown: String,
    pub kind: Kind,
    pub why: Why,
}

impl Entry {
    /// Why it is hidden, in a sentence's words: `~/.ssh holds ssh keys`.
    pub fn reason(&self) -> String {
        let shown = &self.shown;
        match &self.why {
            Why::KeelConfig => {
                format!(
                    "{shown} is keel's config folder, whose file may hold the provider's api_key"
                )
            }
            Why::KeelState => {
                format!("{shown} is keel's state folder (sessions, undo's snapshots)")
            }
            Why::Credentials(holds) => format!("{shown} holds {holds}"),
            Why::Person => format!("{shown} is in the person's hidden_paths"),
        }
    }

    /// How the person lets it through, in the words of a sentence that starts "Only the person
    /// can let it through, by".
    pub fn how_to_allow(&self) -> String {
        match self.why {
            Why::Person => {
                format!("taking {} out of hidden_paths in their own keel config file", self.shown)
            }
            _ => {
                format!("adding it to readable_paths in their own keel config file ({CONFIG_FILE})")
            }
        }
    }
}

/// The person's config file, as docs and messages name it.
const CONFIG_FILE: &str = "~/.config/keel/config.toml";

/// A path of keel's list or the person's that is not hidden, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotHidden {
    /// It holds the workspace.
    HoldsWorkspace(Entry),
    /// The person's `readable_paths` let it through.
    LetThrough(Entry),
    /// A path of `readable_paths` that lies inside a hidden folder, which stays hidden whole.
    InsideHidden { readable: String, hidden: String },
    /// A path of `readable_paths` that nothing hidden lies in or under.
    NothingToLetThrough(String),
}
