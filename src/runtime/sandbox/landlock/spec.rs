//! What keel hands the sandbox's last step about one command confined by Landlock: where it may
//! write, what stays read-only there, what it may not read, whether it may reach the network, and
//! its temporary folder. A handful of paths, passed as arguments before the ones every last step
//! takes; the step walks the folders and builds the rules itself ([`super::rules`]), just before it
//! confines itself, so they are as fresh as the command's start.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// A folder the command may write (with all beneath it).
const WRITE: &str = "--write";
/// A path inside one that stays read-only all the same.
const KEEP: &str = "--keep";
/// A path the command may not read (nor write).
const HIDE: &str = "--hide";
/// A file the command may read where nothing else is readable (a hook's input in the host's
/// `/tmp`).
const READ: &str = "--read";
/// The command's temporary folder, handed as `TMPDIR`.
const TMP: &str = "--tmp";
/// The command may reach the network.
const NETWORK: &str = "--network";
/// The end of the spec: the last step's own arguments follow.
const END: &str = "--";

/// One command's Landlock sandbox, as the last step receives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spec {
    /// Folders the command may write: the workspace (outside plan mode), the person's
    /// `writable_roots`, the session's `/tmp`.
    pub writable: Vec<PathBuf>,
    /// Paths inside those that stay read-only: the workspace's `.git/hooks`, `.git/config`,
    /// `.keel` …, repositories below its top, keel's own folders.
    pub kept: Vec<PathBuf>,
    /// Paths the command may neither read nor write, folders and files alike.
    pub hidden: Vec<PathBuf>,
    /// Files the command may read wherever they lie (the host's `/tmp` included), never write.
    pub readable: Vec<PathBuf>,
    /// Whether the command may open network sockets.
    pub network: bool,
    /// The command's temporary folder (`TMPDIR`); `None`: it has none it may write.
    pub tmp: Option<PathBuf>,
}

impl Spec {
    /// The arguments that say it, ending with the mark after which the last step's own follow.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        let mut push = |flag: &str, paths: &[PathBuf]| {
            for path in paths {
                args.push(OsString::from(flag));
                args.push(path.clone().into_os_string());
            }
        };
        push(WRITE, &self.writable);
        push(KEEP, &self.kept);
        push(HIDE, &self.hidden);
        push(READ, &self.readable);
        push(TMP, self.tmp.as_slice());
        if self.network {
            args.push(NETWORK.into());
        }
        args.push(END.into());
        args
    }

    /// The spec at the start of `args`, and the arguments after it.
    pub fn parse(args: &[OsString]) -> Result<(Self, &[OsString]), String> {
        let mut spec = Self::default();
        let mut rest = args;
        loop {
            let Some((flag, after)) = rest.split_first() else {
                return Err("the Landlock spec has no end".into());
            };
            rest = after;
            let mut path = || -> Result<PathBuf, String> {
                let (path, after) = rest
                    .split_first()
                    .ok_or_else(|| format!("{} names no path", flag.to_string_lossy()))?;
                rest = after;
                let path = PathBuf::from(path);
                if !path.is_absolute() {
                    return Err(format!("{} is not an absolute path", path.display()));
                }
                Ok(path)
            };
            match flag.to_str() {
                Some(WRITE) => spec.writable.push(path()?),
                Some(KEEP) => spec.kept.push(path()?),
                Some(HIDE) => spec.hidden.push(path()?),
                Some(READ) => spec.readable.push(path()?),
                Some(TMP) => spec.tmp = Some(path()?),
                Some(NETWORK) => spec.network = true,
                Some(END) => return Ok((spec, rest)),
                _ => return Err(format!("{} is no part of a Landlock spec", shown(flag))),
            }
        }
    }
}

fn shown(arg: &OsStr) -> String {
    arg.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_reads_back_as_it_was_written_and_leaves_what_follows() {
        let spec = Spec {
            writable: vec!["/work".into(), "/state/tmp/1-x".into()],
            kept: vec!["/work/.git/hooks".into()],
            hidden: vec!["/home/me/.ssh".into(), "/home/me/a b".into()],
            readable: vec!["/tmp/keel-hook-input".into()],
            network: true,
            tmp: Some("/state/tmp/1-x".into()),
        };
        let mut args = spec.to_args();
        args.extend(["1088".into(), "bash".into()]);
        let (read, rest) = Spec::parse(&args).unwrap();
        assert_eq!(read, spec);
        assert_eq!(rest, [OsString::from("1088"), OsString::from("bash")]);
        let closed = Spec::default();
        assert_eq!(Spec::parse(&closed.to_args()).unwrap().0, closed);
    }

    #[test]
    fn a_spec_that_is_cut_short_or_relative_is_refused() {
        let args = |items: &[&str]| items.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(Spec::parse(&args(&["--write", "/w"])).is_err(), "no end");
        assert!(Spec::parse(&args(&["--write"])).is_err(), "no path");
        assert!(Spec::parse(&args(&["--hide", "rel", "--"])).is_err(), "relative");
        assert!(Spec::parse(&args(&["--else", "--"])).is_err(), "unknown");
    }
}
