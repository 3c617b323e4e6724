//! The other places a hidden path shows: where a folder above it is mounted a second time (the
//! root file system bound at `/host`, a home folder bound into a container twice), the same
//! files are reached by another path, and Landlock judges a path by the folders above it on the
//! way it was reached. So each hidden path is hidden at every place `/proc/self/mountinfo` shows
//! its file system's folder mounted, too.

use std::path::{Path, PathBuf};

/// Where mounts are listed.
const MOUNTINFO: &str = "/proc/self/mountinfo";

/// One mount: which file system (`major:minor`), the folder of it mounted, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    device: String,
    root: PathBuf,
    point: PathBuf,
}

/// `paths`, each with every other place it shows through a mount of this process's.
pub fn with_aliases(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string(MOUNTINFO).map(|text| parse(&text)).unwrap_or_default();
    let mut all = paths.to_vec();
    for path in paths {
        for alias in aliases(path, &mounts) {
            if !all.contains(&alias) {
                all.push(alias);
            }
        }
    }
    all
}

/// The mounts `text` (a `mountinfo`) lists; lines it cannot read are passed over.
fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().skip(2);
            let device = fields.next()?.to_owned();
            let root = PathBuf::from(unescape(fields.next()?));
            let point = PathBuf::from(unescape(fields.next()?));
            Some(Mount { device, root, point })
        })
        .collect()
}

/// A `mountinfo` field with its octal escapes (`\040` for a space) undone.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = bytes.get(at + 1..at + 4).filter(|digits| {
            bytes[at] == b'\\' && digits.iter().all(|digit| (b'0'..=b'7').contains(digit))
        });
        let byte = escaped
            .and_then(|digits| u8::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok());
        match byte {
            Some(byte) => {
                out.push(byte);
                at += 4;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The other places `path` shows among `mounts`: where another mount of its file system holds
/// the folder it lies in there.
fn aliases(path: &Path, mounts: &[Mount]) -> Vec<PathBuf> {
    // The mount `path` is reached through: the deepest holding it, the last of those stacked.
    let Some(home) = mounts
        .iter()
        .filter(|mount| path.starts_with(&mount.point))
        .max_by_key(|mount| mount.point.components().count())
    else {
        return Vec::new();
    };
    let Ok(below) = path.strip_prefix(&home.point) else { return Vec::new() };
    let in_file_system = home.root.join(below);
    mounts
        .iter()
        .filter(|mount| mount.device == home.device && *mount != home)
        .filter_map(|mount| Some(mount.point.join(in_file_system.strip_prefix(&mount.root).ok()?)))
        .filter(|alias| alias != path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
27 1 0:30 / / rw - overlay overlay rw
40 27 8:1 /home/me /home/me rw - ext4 /dev/sda1 rw
41 27 8:1 / /host rw - ext4 /dev/sda1 rw
42 27 8:1 /home/me/proj /work rw - ext4 /dev/sda1 rw
43 27 8:1 /srv /mnt/with\\040space rw - ext4 /dev/sda1 rw
";

    #[test]
    fn a_hidden_path_is_hidden_where_its_folder_is_mounted_again() {
        let mounts = parse(MOUNTS);
        assert_eq!(mounts[4].point, PathBuf::from("/mnt/with space"));
        let found = aliases(Path::new("/home/me/.ssh"), &mounts);
        assert_eq!(found, [PathBuf::from("/host/home/me/.ssh")]);
        // A mount of a folder beside it holds no alias.
        assert!(!found.iter().any(|alias| alias.starts_with("/work")));
        // Another file system, or one mounted once: nothing more.
        assert!(aliases(Path::new("/etc/passwd"), &mounts).is_empty());
        assert_eq!(
            aliases(Path::new("/host/srv/x"), &mounts),
            [PathBuf::from("/mnt/with space/x")]
        );
    }

    #[test]
    fn every_path_keeps_its_own_place_too() {
        let given = vec![PathBuf::from("/nowhere/.ssh")];
        assert_eq!(with_aliases(&given)[0], given[0]);
    }
}
