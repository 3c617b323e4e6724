//! Paths as the kernel reaches them: `.` and `..` resolved by name, then the existing part's
//! symlinks followed, so that a path named through a symlink is judged where it leads — by the
//! list of hidden paths ([`super::hidden`]), keel's folders ([`super::keel_folders`]) and the
//! Landlock rules ([`super::landlock::rules`]) alike. (Where a path is only compared by name, as
//! a `.git` file's pointer is ([`super::nested`]), it is [`normalized`] alone.)

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// `path` with `.` and `..` resolved by name (`..` above `/` stays at `/`).
pub fn normalized(path: &Path) -> PathBuf {
    let (out, _) = dots_resolved(path);
    out
}

/// `path` with `.` and `..` resolved by name; `None` where a `..` climbs above where the path
/// starts (`/`, or a relative path's first name).
pub fn normalized_within(path: &Path) -> Option<PathBuf> {
    let (out, climbed_out) = dots_resolved(path);
    (!climbed_out).then_some(out)
}

/// `path` with `.` and `..` resolved by name, and whether a `..` had nothing left to climb.
fn dots_resolved(path: &Path) -> (PathBuf, bool) {
    let mut out = PathBuf::new();
    let mut climbed_out = false;
    for component in path.components() {
        match component {
            Component::ParentDir => climbed_out |= !out.pop(),
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    (out, climbed_out)
}

/// `path` (absolute, normalised) as the kernel reaches it: its longest existing part with every
/// symlink followed, then the rest as named.
pub fn real(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest: Vec<&OsStr> = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |acc, name| acc.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `path` normalised, then as the kernel reaches it ([`real`]).
pub fn resolved(path: &Path) -> PathBuf {
    real(&normalized(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_resolved_by_name_and_a_climb_out_is_told() {
        assert_eq!(normalized_within(Path::new("/a/./b/../c")), Some(PathBuf::from("/a/c")));
        assert_eq!(normalized_within(Path::new("/..")), None);
        assert_eq!(normalized_within(Path::new("a/../..")), None);
        assert_eq!(normalized(Path::new("/../a/./b/..")), PathBuf::from("/a"));
    }
}
