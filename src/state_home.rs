//! Where keel keeps its own state — session logs, shadow repositories, notes of files in flight —
//! outside every workspace: the one place both the session store and the sandbox (which keeps
//! that state read-only for commands) take it from.

use std::path::{Path, PathBuf};

/// keel's folder inside the state home.
const STATE_NAME: &str = "keel";

/// keel's state folder: `$XDG_STATE_HOME/keel`, else `~/.local/state/keel`. An empty or relative
/// `XDG_STATE_HOME` is ignored, as the XDG base directory rules say.
pub fn state_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base =
        env("XDG_STATE_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute()).or_else(|| {
            env("HOME")
                .filter(|home| !home.is_empty())
                .map(|home| Path::new(&home).join(".local/state"))
        })?;
    Some(base.join(STATE_NAME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_folder_follows_xdg_then_home() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        let both = env(&[("XDG_STATE_HOME", "/x/state"), ("HOME", "/h")]);
        assert_eq!(state_dir(&both), Some(PathBuf::from("/x/state/keel")));
        let relative = env(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")]);
        assert_eq!(state_dir(&relative), Some(PathBuf::from("/h/.local/state/keel")));
        assert_eq!(state_dir(&env(&[])), None);
    }
}
