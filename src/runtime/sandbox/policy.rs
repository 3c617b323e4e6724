//! What commands may do, as the person (and, only stricter, the workspace) set it: how much of the
//! file system they may change ([`Mode`]), the network, the folders outside the workspace they may
//! write, and the bound on their processes.

use super::process_limit;
use std::path::{Path, PathBuf};

/// How much of the file system a command may change (`--sandbox`, config `sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The workspace, a private `/tmp` and the person's `writable_roots`; never `.git/hooks`,
    /// `.git/config` or `.keel/`.
    #[default]
    Workspace,
    /// Only a private `/tmp` (plan mode).
    ReadOnly,
    /// No sandbox: the person's choice.
    Off,
}

impl Mode {
    /// The mode as `--sandbox` and config files spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Workspace => "workspace",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }

    /// How much a mode lets a command change: read-only < workspace < off.
    pub fn looseness(self) -> u8 {
        match self {
            Self::ReadOnly => 0,
            Self::Workspace => 1,
            Self::Off => 2,
        }
    }
}

/// What commands may do, as the person (and, only stricter, the workspace) set it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    pub mode: Mode,
    /// Whether commands may reach the network (`--network`, config `network = true`).
    pub network: bool,
    /// Folders outside the workspace that commands may write (the person's own config only).
    pub writable_roots: Vec<PathBuf>,
    /// How many processes a command may have at once; `None`: [`process_limit::default_limit`].
    pub max_processes: Option<u64>,
}

impl Policy {
    /// The folders commands of `workspace` may write under this policy, whatever the mode: no
    /// program keel runs outside the sandbox is taken from them ([`crate::runtime::programs`]).
    pub fn writable_places(&self, workspace: &Path) -> Vec<PathBuf> {
        std::iter::once(workspace.to_path_buf())
            .chain(self.writable_roots.iter().cloned())
            .collect()
    }

    /// How many processes a command may have at once.
    pub fn process_limit(&self) -> u64 {
        self.max_processes.unwrap_or_else(process_limit::default_limit)
    }

    /// The policy with at most `mode`'s freedom (plan mode asks for `ReadOnly`).
    pub fn at_most(&self, mode: Mode) -> Self {
        let mut policy = self.clone();
        if mode.looseness() < policy.mode.looseness() {
            policy.mode = mode;
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_mode_only_tightens() {
        let policy = Policy { mode: Mode::Workspace, ..Policy::default() };
        assert_eq!(policy.at_most(Mode::ReadOnly).mode, Mode::ReadOnly);
        let off = Policy { mode: Mode::Off, ..Policy::default() };
        assert_eq!(off.at_most(Mode::ReadOnly).mode, Mode::ReadOnly);
        let read_only = Policy { mode: Mode::ReadOnly, ..Policy::default() };
        assert_eq!(read_only.at_most(Mode::Workspace).mode, Mode::ReadOnly);
    }
}
