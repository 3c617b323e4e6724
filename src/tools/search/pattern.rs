//! The patterns a search takes: `grep`'s regex, and the globs `glob` finds files by and `grep`
//! filters them with, each checked once, with an error that names what is wrong.
//!
//! Globs read as ripgrep's `--glob` does: `*` and `?` stay within one name, `**` spans folders,
//! `{a,b}` and `[ab]` choose; a pattern without `/` matches a file's name at any depth, one with
//! `/` matches its path relative to the folder searched. A pattern cannot leave that folder: an
//! absolute path outside it, or a `..`, is an error that says to use `path` instead.

use super::SearchError;
use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use std::path::{Component, Path, PathBuf};

/// The characters that make a glob's part more than a plain name.
const GLOB_SPECIAL: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

/// `grep`'s regex, one line at a time (as ripgrep: a match never spans lines).
pub(super) fn regex(pattern: &str, ignore_case: bool) -> Result<RegexMatcher, SearchError> {
    RegexMatcherBuilder::new()
        .case_insensitive(ignore_case)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|err| SearchError::BadRegex {
            pattern: pattern.to_owned(),
            reason: err.to_string().trim().to_owned(),
        })
}

/// A glob over the files below a folder.
#[derive(Debug, Clone)]
pub(super) struct PathGlob {
    matcher: GlobMatcher,
    /// The pattern has no `/`: it matches names.
    by_name: bool,
    /// Its leading folders that are plain names: no file outside them can match.
    prefix: PathBuf,
    /// It names a hidden file or folder (a part that starts with `.`).
    names_hidden: bool,
}

impl PathGlob {
    /// The glob `pattern`, relative to `base` (a real folder path; an absolute pattern must lie
    /// inside it).
    pub fn new(pattern: &str, base: &Path) -> Result<Self, SearchError> {
        let bad = |reason: &str| SearchError::BadGlob {
            pattern: pattern.to_owned(),
            reason: reason.to_owned(),
        };
        if pattern.trim().is_empty() {
            return Err(bad("it is empty"));
        }
        let relative = if Path::new(pattern).is_absolute() {
            let inside = Path::new(pattern).strip_prefix(base).map_err(|_| {
                bad(&format!(
                    "an absolute pattern must lie inside the folder searched, {}; give a \
                     pattern relative to it, and that folder as `path`",
                    base.display()
                ))
            })?;
            inside.to_string_lossy().into_owned()
        } else {
            pattern.to_owned()
        };
        let relative = relative.trim_start_matches("./");
        let parts: Vec<&str> = relative.split('/').filter(|part| !part.is_empty()).collect();
        if parts.is_empty() {
            return Err(bad("it names the folder itself, not files in it"));
        }
        if parts.contains(&"..") {
            return Err(bad(
                "`..` cannot leave the folder searched; give the folder to search as `path`",
            ));
        }
        let normal = parts.join("/");
        let matcher = GlobBuilder::new(&normal)
            .literal_separator(true)
            .build()
            .map_err(|err| bad(&err.kind().to_string()))?
            .compile_matcher();
        let prefix: PathBuf = parts
            .iter()
            .take(parts.len() - 1)
            .take_while(|part| !part.contains(GLOB_SPECIAL) && **part != ".")
            .collect();
        let names_hidden = parts.iter().any(|part| part.starts_with('.') && *part != ".");
        Ok(Self { matcher, by_name: parts.len() == 1, prefix, names_hidden })
    }

    /// Whether the file at `relative` (below the folder searched) matches.
    pub fn matches(&self, relative: &Path) -> bool {
        if self.by_name {
            relative.file_name().is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }

    /// The folder below `base` a walk may start from: only files below it can match.
    pub fn walk_root(&self, base: &Path) -> PathBuf {
        base.join(&self.prefix)
    }

    /// Whether hidden files and folders must be looked at.
    pub fn names_hidden(&self) -> bool {
        self.names_hidden
    }
}

/// `path` relative to `base`, when it is below it.
pub(super) fn below<'a>(path: &'a Path, base: &Path) -> Option<&'a Path> {
    path.strip_prefix(base)
        .ok()
        .filter(|rest| rest.components().all(|component| matches!(component, Component::Normal(_))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(pattern: &str) -> PathGlob {
        PathGlob::new(pattern, Path::new("/w")).unwrap()
    }

    #[test]
    fn a_name_glob_matches_at_any_depth_and_a_path_glob_from_the_folder() {
        assert!(glob("*.rs").matches(Path::new("a/b/c.rs")));
        assert!(!glob("*.rs").matches(Path::new("a/b/c.rsx")));
        assert!(glob("src/*.rs").matches(Path::new("src/main.rs")));
        assert!(!glob("src/*.rs").matches(Path::new("src/tools/mod.rs")));
        assert!(glob("**/*.rs").matches(Path::new("main.rs")));
        assert!(glob("./src/**/*.{rs,toml}").matches(Path::new("src/a/b/Cargo.toml")));
        assert!(glob("/w/src/*.rs").matches(Path::new("src/main.rs")));
    }

    #[test]
    fn the_plain_folders_ahead_of_a_glob_are_where_the_walk_starts() {
        assert_eq!(glob("src/tools/**/*.rs").walk_root(Path::new("/w")), Path::new("/w/src/tools"));
        assert_eq!(glob("*.rs").walk_root(Path::new("/w")), Path::new("/w"));
        assert_eq!(glob("src/*/x.rs").walk_root(Path::new("/w")), Path::new("/w/src"));
        assert!(glob(".github/**").names_hidden() && glob("**/.env*").names_hidden());
        assert!(!glob("./src/*.rs").names_hidden());
    }

    #[test]
    fn globs_that_leave_the_folder_or_do_not_parse_are_errors_that_say_why() {
        let err = |pattern| PathGlob::new(pattern, Path::new("/w")).unwrap_err().to_string();
        assert!(err("../*.rs").contains("`..` cannot leave"), "{}", err("../*.rs"));
        assert!(err("src/../../x").contains("`..`"));
        assert!(err("/etc/*").contains("inside the folder searched, /w"), "{}", err("/etc/*"));
        assert!(err("src/[a").starts_with("Invalid glob `src/[a`: "), "{}", err("src/[a"));
        assert!(err("").contains("empty"));
    }

    #[test]
    fn a_bad_regex_names_the_problem() {
        let message = regex("fn (main", false).unwrap_err().to_string();
        assert!(message.starts_with("Invalid regex `fn (main`:"), "{message}");
        assert!(message.contains("unclosed group"), "{message}");
        let message = regex("a\\nb", false).unwrap_err().to_string();
        assert!(message.contains("not allowed"), "{message}");
        assert!(regex("(?i)x|y+", true).is_ok());
    }
}
