//! Where keel keeps its own state — session logs, shadow repositories, notes of files in flight —
//! outside every workspace, and where the person's config file is: the one place the session
//! store, the config and the sandbox (which keeps both out of a command's reach) take them from.

use std::path::{Path, PathBuf};

/// keel's folder inside the state home.
const STATE_NAME: &str = "keel";

/// The user's config file: `$XDG_CONFIG_HOME/keel/config.toml`, else `~/.config/keel/config.toml`.
/// An empty or relative `XDG_CONFIG_HOME` is ignored, as the XDG base directory rules say.
pub fn user_config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute()).or_else(
        || env("HOME").filter(|home| !home.is_empty()).map(|home| Path::new(&home).join(".config")),
    )?;
    Some(base.join("keel").join("config.toml"))
}

/// keel's config folder: the one that holds [`user_config_path`].
pub fn user_config_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    user_config_path(env).and_then(|file| file.parent().map(Path::to_path_buf))
}

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

/// A folder's identity: its device and inode. A folder put in another's place has another.
pub type Identity = (u64, u64);

/// Checks that `folder` is fit to hold keel's state: a folder, not a symlink, owned by the user
/// keel runs as, that no other user may write. Returns its identity, or why it is not fit.
pub fn checked(folder: &Path) -> Result<Identity, String> {
    use std::os::unix::fs::MetadataExt;
    const WRITABLE_BY_OTHERS: u32 = 0o022;
    let meta = folder.symlink_metadata().map_err(|err| err.to_string())?;
    if !meta.is_dir() {
        return Err("it is not a folder (a symlink, say)".to_owned());
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!("it belongs to user {}, not to {me}", meta.uid()));
    }
    if meta.mode() & WRITABLE_BY_OTHERS != 0 {
        return Err("other users may write it".to_owned());
    }
    Ok((meta.dev(), meta.ino()))
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

    #[test]
    fn only_a_private_folder_of_ones_own_holds_state() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("keel");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(checked(&folder).is_ok());
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(checked(&folder).unwrap_err().contains("other users"));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&folder, &link).unwrap();
        assert!(checked(&link).unwrap_err().contains("not a folder"));
    }
}
