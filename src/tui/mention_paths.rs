//! What `@` completes: the workspace's files as git would list them — `.gitignore`, `.ignore`
//! and git's own excludes respected, hidden files and `.git` left out, and never a path hidden
//! from the model (keel's config and state, the person's credentials) — ranked by a fuzzy match
//! of what is typed after the `@`.
//!
//! The list is made when a mention starts and kept while it is typed, so a keypress never walks
//! the tree; a huge workspace is listed only up to [`MAX_FILES`] files.

use crate::runtime::sandbox::hidden::Hidden;
use std::path::Path;

/// The most files listed for completion.
pub const MAX_FILES: usize = 20_000;
/// The most matches the menu offers.
pub const MAX_MATCHES: usize = 8;
/// Score of a matched character, and the bonuses on top.
const MATCHED: i64 = 1;
const RUN_BONUS: i64 = 4;
const BOUNDARY_BONUS: i64 = 6;
const NAME_BONUS: i64 = 3;

/// The workspace's files under `root`, relative and with `/` between folders, sorted; none that
/// `hidden` holds.
pub fn list(root: &Path, hidden: &Hidden) -> Vec<String> {
    let mut files = Vec::new();
    let hidden = hidden.clone();
    let walk = ignore::WalkBuilder::new(root)
        .require_git(false)
        .filter_entry(move |entry| hidden.holding(entry.path()).is_none())
        .build();
    for entry in walk.flatten() {
        if files.len() >= MAX_FILES {
            break;
        }
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else { continue };
        if let Some(text) = relative.to_str() {
            files.push(text.to_owned());
        }
    }
    files.sort();
    files
}

/// The best matches of `query` among `files`, best first: every character of the query in
/// order (case aside), scored higher for runs, for starts of words and for the file's own
/// name, then the shorter path first.
pub fn rank<'a>(query: &str, files: &'a [String]) -> Vec<&'a str> {
    let mut scored: Vec<(i64, &str)> =
        files.iter().filter_map(|file| Some((score(query, file)?, file.as_str()))).collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())).then(a.1.cmp(b.1)));
    scored.into_iter().take(MAX_MATCHES).map(|(_, file)| file).collect()
}

/// How well `query` matches `path`; `None` when it does not.
fn score(query: &str, path: &str) -> Option<i64> {
    let name_start = path.rfind('/').map_or(0, |at| at + 1);
    let mut chars = path.char_indices().peekable();
    let mut total = 0;
    let mut previous: Option<usize> = None;
    let mut before = '/';
    for wanted in query.chars().map(|c| c.to_ascii_lowercase()) {
        loop {
            let (at, c) = chars.next()?;
            let boundary = matches!(before, '/' | '_' | '-' | '.' | ' ');
            before = c;
            if c.to_ascii_lowercase() != wanted {
                continue;
            }
            total += MATCHED;
            if previous.is_some_and(|last| last + 1 == at) {
                total += RUN_BONUS;
            }
            if boundary {
                total += BOUNDARY_BONUS;
            }
            if at >= name_start {
                total += NAME_BONUS;
            }
            previous = Some(at);
            break;
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::{files, folder};

    #[test]
    fn a_fuzzy_query_ranks_the_file_by_its_name_first() {
        let files: Vec<String> = [
            "src/app.py",
            "docs/apple.md",
            "src/tui/app_state.rs",
            "assets/a/p/p.txt",
            "README.md",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(rank("app", &files)[0], "src/app.py");
        assert_eq!(rank("srcapp", &files)[0], "src/app.py");
        assert!(rank("zzz", &files).is_empty());
        assert_eq!(rank("", &files).len(), 5, "nothing typed yet: everything, shortest first");
    }

    #[test]
    fn ignored_and_hidden_files_are_not_listed() {
        let (_dir, root) = &folder();
        files(
            root,
            &[
                (".gitignore", "target/\n*.log\n"),
                ("src/main.rs", ""),
                ("target/out.bin", ""),
                ("debug.log", ""),
                (".env", ""),
            ],
        );
        assert_eq!(list(root, &Hidden::default()), vec!["src/main.rs".to_owned()]);
    }

    #[test]
    fn paths_hidden_from_the_model_are_not_listed() {
        use crate::runtime::sandbox::hidden::{Entry, Kind, Why};
        let (_dir, root) = &folder();
        files(root, &[("secrets/key.pem", ""), ("main.rs", "")]);
        let secrets = Entry {
            path: root.join("secrets"),
            shown: "~/secrets".into(),
            kind: Kind::Folder,
            why: Why::Person,
        };
        let hidden = Hidden::of(vec![secrets], Vec::new());
        assert_eq!(list(root, &hidden), vec!["main.rs".to_owned()]);
    }
}
