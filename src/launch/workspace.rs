//! The folder a launch works in: `--workdir`, a fresh temporary folder for the demo, or the
//! current directory — with what a write or an undo killed mid-way left there swept away.

use super::UsageError;
use color_eyre::eyre::WrapErr;
use keel::agent::journal::SessionStore;
use keel::cli::Cli;
use keel::runtime::Workspace;

/// The workspace `cli` names, and the demo's throwaway folder when it is one.
pub fn open(cli: &Cli) -> color_eyre::Result<(Workspace, Option<tempfile::TempDir>)> {
    let (root, temp) = match (&cli.workdir, cli.demo) {
        (Some(dir), _) => (dir.clone(), None),
        (None, true) => {
            let dir = tempfile::Builder::new()
                .prefix("keel-demo-")
                .tempdir()
                .wrap_err("cannot create the demo workspace")?;
            (dir.path().to_path_buf(), Some(dir))
        }
        (None, false) => {
            (std::env::current_dir().wrap_err("cannot read the current directory")?, None)
        }
    };
    let mut workspace = Workspace::new(root.clone())
        .map_err(|err| UsageError(format!("workspace {}: {err}", root.display())))?;
    if temp.is_none()
        && let Ok(store) = SessionStore::from_env(workspace.root())
    {
        // What a write or an undo killed mid-way left in the workspace goes now.
        workspace = workspace.noting_writes_in(store.pending_dir());
        keel::runtime::pending::sweep(&workspace);
    }
    Ok((workspace, temp))
}
