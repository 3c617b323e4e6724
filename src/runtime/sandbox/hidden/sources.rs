//! How the list is made, once as keel starts: keel's config and state folders, the credential
//! stores ([`super::credentials`]) under the home folder and where keel's environment moves them,
//! then the person's own `readable_paths` and `hidden_paths` from their config file; and what of
//! it is not hidden after all (let through, or holding the workspace).

use super::credentials::{CREDENTIALS, MOVED_BY};
use super::{Entry, Hidden, Kind, NotHidden, Why, within};
use crate::runtime::sandbox::real_path::{normalized, real};
use std::path::{Path, PathBuf};

/// What the list is made from.
pub struct Sources<'a> {
    /// keel's environment: `HOME`, the XDG folders, the variables of [`MOVED_BY`].
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The workspace's root, canonical.
    pub workspace: &'a Path,
    /// The person's own `hidden_paths`.
    pub hidden_paths: &'a [PathBuf],
    /// The person's own `readable_paths`.
    pub readable_paths: &'a [PathBuf],
}

/// A path of `hidden_paths` or `readable_paths` keel cannot take.
#[derive(Debug, thiserror::Error)]
pub enum HiddenError {
    #[error(
        "{key}: `{path}` is neither absolute nor under the home folder (`~/…`); give it as one \
         or the other"
    )]
    Relative { key: &'static str, path: String },
    #[error("{key}: `{path}` starts with ~, but HOME is not set")]
    NoHome { key: &'static str, path: String },
}

impl Hidden {
    /// The list for keel started in `sources.workspace` with `sources.env`, and the person's
    /// additions and exceptions.
    pub fn new(sources: &Sources<'_>) -> Result<Self, HiddenError> {
        let env = sources.env;
        let home = env("HOME").filter(|home| home.starts_with('/')).map(PathBuf::from);
        let home = home.as_deref();
        let mut named: Vec<Entry> = Vec::new();
        let config = crate::state_home::user_config_dir(env);
        named.extend(config.map(|path| entry(&path, home, Kind::Folder, Why::KeelConfig)));
        named.extend(
            crate::state_home::state_dir(env)
                .map(|path| entry(&path, home, Kind::Folder, Why::KeelState)),
        );
        if let Some(home) = home {
            for credential in &CREDENTIALS {
                let path = home.join(credential.path);
                named.push(entry(
                    &path,
                    Some(home),
                    credential.kind,
                    Why::Credentials(credential.holds),
                ));
            }
        }
        for store in &MOVED_BY {
            let Some(value) = env(store.variable) else { continue };
            for place in value.split(':').filter(|place| place.starts_with('/')) {
                let place = Path::new(place);
                // A variable pointing at the home folder, or above it, names no store of its own.
                if home.is_some_and(|home| home.starts_with(place)) {
                    continue;
                }
                let path = if store.below.is_empty() {
                    place.to_path_buf()
                } else {
                    place.join(store.below)
                };
                named.push(entry(&path, home, store.kind, Why::Credentials(store.holds)));
            }
        }
        let mut not_hidden = Vec::new();
        let readable = expanded("readable_paths", sources.readable_paths, home)?;
        let mut let_through = vec![false; readable.len()];
        named.retain(|named| {
            let by = readable.iter().position(|(real, _)| within(&named.path, real));
            if let Some(by) = by {
                let_through[by] = true;
                not_hidden.push(NotHidden::LetThrough(named.clone()));
            }
            by.is_none()
        });
        for (path, _) in expanded("hidden_paths", sources.hidden_paths, home)? {
            let kind = kind_of(&path).unwrap_or(Kind::Folder);
            let shown = shown(&path, home);
            named.push(Entry { path, shown, kind, why: Why::Person });
        }
        named.retain(|named| {
            let holds = within(sources.workspace, &named.path);
            if holds {
                not_hidden.push(NotHidden::HoldsWorkspace(named.clone()));
            }
            !holds
        });
        for (index, (real, shown)) in readable.iter().enumerate() {
            match named.iter().find(|named| within(real, &named.path)) {
                Some(outer) => not_hidden.push(NotHidden::InsideHidden {
                    readable: shown.clone(),
                    hidden: outer.shown.clone(),
                }),
                None if !let_through[index] => {
                    not_hidden.push(NotHidden::NothingToLetThrough(shown.clone()));
                }
                None => {}
            }
        }
        Ok(Self::of(named, not_hidden))
    }
}

/// An entry for `path`, named as keel's list names it: its kind as it is, else `kind`.
fn entry(path: &Path, home: Option<&Path>, kind: Kind, why: Why) -> Entry {
    let path = normalized(path);
    Entry {
        kind: kind_of(&path).unwrap_or(kind),
        shown: shown(&path, home),
        path: real(&path),
        why,
    }
}

/// Whether `path` is a folder or a file, following symlinks; `None` when it does not exist.
fn kind_of(path: &Path) -> Option<Kind> {
    let meta = path.metadata().ok()?;
    Some(if meta.is_dir() { Kind::Folder } else { Kind::File })
}

/// The person's paths under `key`, each as the kernel reaches it and as they wrote it (`~/…`
/// taken from the home folder).
fn expanded(
    key: &'static str,
    paths: &[PathBuf],
    home: Option<&Path>,
) -> Result<Vec<(PathBuf, String)>, HiddenError> {
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        let text = path.to_string_lossy();
        let full = match path.strip_prefix("~") {
            Ok(below) => match home {
                Some(home) => home.join(below),
                None => return Err(HiddenError::NoHome { key, path: text.into_owned() }),
            },
            Err(_) if path.is_absolute() => path.clone(),
            Err(_) => return Err(HiddenError::Relative { key, path: text.into_owned() }),
        };
        let full = normalized(&full);
        out.push((real(&full), shown(&full, home)));
    }
    Ok(out)
}

/// `path` as the person knows it: `~/…` under the home folder.
fn shown(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| path.strip_prefix(home).ok()) {
        Some(below) if below.as_os_str().is_empty() => "~".to_owned(),
        Some(below) => format!("~/{}", below.display()),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{env_of, list};
    use super::*;
    use crate::runtime::testing::{folder, folders};

    #[test]
    fn a_symlinked_store_is_hidden_where_it_leads() {
        let (_home, h) = folder();
        folders(&h, &["dotfiles/ssh"]);
        std::os::unix::fs::symlink(h.join("dotfiles/ssh"), h.join(".ssh")).unwrap();
        let hidden = list(&h, Path::new("/nowhere"), &[], &[]);
        let entry = hidden.holding(&h.join("dotfiles/ssh/id_rsa")).unwrap();
        assert_eq!(entry.shown, "~/.ssh");
        assert_eq!(entry.kind, Kind::Folder);
    }

    #[test]
    fn the_person_hides_more_and_lets_one_through() {
        let (_home, h) = folder();
        let hidden = list(&h, Path::new("/nowhere"), &["~/secrets", "/srv/keys"], &["~/.npmrc"]);
        assert_eq!(hidden.holding(&h.join("secrets/a")).unwrap().why, Why::Person);
        assert!(hidden.holding(Path::new("/srv/keys/k")).is_some());
        assert!(hidden.holding(&h.join(".npmrc")).is_none(), "let through");
        assert!(hidden.report().contains("Let through by your readable_paths: ~/.npmrc"));
        let how = hidden.holding(&h.join("secrets")).unwrap().how_to_allow();
        assert!(how.contains("out of hidden_paths"), "{how}");
    }

    #[test]
    fn what_the_person_hides_inside_what_they_let_through_stays_hidden() {
        let (_home, h) = folder();
        let hidden = list(&h, Path::new("/nowhere"), &["~/.ssh/id_ed25519"], &["~/.ssh"]);
        assert!(hidden.holding(&h.join(".ssh/known_hosts")).is_none());
        assert!(hidden.holding(&h.join(".ssh/id_ed25519")).is_some());
        // A readable path inside a hidden folder lets nothing through, and says so.
        let hidden = list(&h, Path::new("/nowhere"), &[], &["~/.aws/config", "~/nothing"]);
        assert!(hidden.holding(&h.join(".aws/config")).is_some());
        let report = hidden.report();
        assert!(
            report.contains("~/.aws/config of your readable_paths lies inside ~/.aws"),
            "{report}"
        );
        assert!(report.contains("Nothing hidden lies in ~/nothing"), "{report}");
    }

    #[test]
    fn a_path_that_holds_the_workspace_is_not_hidden_and_said() {
        let (_home, h) = folder();
        let work = h.join(".local/state/keel/w");
        let hidden = list(&h, &work, &[], &[]);
        assert!(hidden.holding(&work.join("a")).is_none());
        assert!(
            hidden.report().contains("Not hidden: ~/.local/state/keel, which holds the workspace")
        );
        // The home folder itself is the workspace: everything under it stays hidden.
        let hidden = list(&h, &h, &[], &[]);
        assert!(hidden.holding(&h.join(".ssh")).is_some());
        assert!(hidden.holding(&h.join("src/main.rs")).is_none());
    }

    #[test]
    fn a_relative_path_is_refused_by_its_key() {
        let env = env_of(vec![("HOME", "/h".to_owned())]);
        let bad = [PathBuf::from("secrets")];
        let sources = Sources {
            env: &env,
            workspace: Path::new("/w"),
            hidden_paths: &bad,
            readable_paths: &[],
        };
        let err = Hidden::new(&sources).unwrap_err().to_string();
        assert!(err.starts_with("hidden_paths: `secrets`"), "{err}");
    }
}
