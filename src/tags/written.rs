//! The table is whole: every tag keel writes into what the model reads is one of [`Tag`]'s.
//!
//! Every string literal of `src/` (outside comments and test code) and every text of `assets/`
//! is read for what looks like a tag — `<name>`, `</name>`, `<name attr=…>`, `<{placeholder}>`
//! — and each one found must be a tag of the table, or one of the few [`NOT_KEELS`] that never
//! reach the model. A tag written any other way (`format!("<{name}>")`, a new `"<scratchpad>"`)
//! fails here until it is in the table, where [`defuse`](super::defuse) learns it too.

use super::Tag;
use std::path::{Path, PathBuf};

/// Tag-like literals that are not keel's words to the model: (file, name, why).
const NOT_KEELS: &[(&str, &str, &str)] = &[
    ("src/llm/settings.rs", "hidden", "the API key's stand-in in Debug output, for logs"),
    ("src/llm/error.rs", "title", "looked for in an HTML error page, not written"),
];

/// Where keel's own sources and the texts it embeds are.
const SOURCES: &str = "src";
const ASSETS: &str = "assets";
/// What holds the table and this test: the tags are written there by construction.
const TABLE: &[&str] = &["src/tags.rs", "src/tags/"];
/// The attribute that marks what follows as test code.
const CFG_TEST: &str = "#[cfg(test)]";

/// A tag-like literal found: where, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    file: String,
    name: String,
}

#[test]
fn every_tag_keel_writes_is_in_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for path in files(&root.join(SOURCES)) {
        let relative = relative(root, &path);
        if TABLE.iter().any(|table| relative.starts_with(table)) || is_test_file(&path) {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        for literal in literals(&source) {
            found.extend(
                tags_in(&literal, true)
                    .into_iter()
                    .map(|name| Found { file: relative.clone(), name }),
            );
        }
    }
    for path in files(&root.join(ASSETS)) {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let file = relative(root, &path);
        found.extend(
            tags_in(&text, false).into_iter().map(|name| Found { file: file.clone(), name }),
        );
    }
    let unknown: Vec<&Found> = found
        .iter()
        .filter(|found| Tag::named(&found.name).is_none())
        .filter(|found| {
            !NOT_KEELS.iter().any(|(file, name, _)| found.file == *file && found.name == *name)
        })
        .collect();
    assert!(
        unknown.is_empty(),
        "tags keel writes that are not in `tags::Tag` (add them to the table and write them \
         with `Tag::wrap`, or list them in NOT_KEELS with why they never reach the model): \
         {unknown:#?}"
    );
    // The scan sees what it must: the reminder's literal, and each exception (one no longer
    // there is taken off the list).
    let expected = NOT_KEELS.iter().map(|(file, name, _)| (*file, *name));
    for (file, name) in expected.chain([("src/agent/config.rs", "reminder")]) {
        assert!(
            found.iter().any(|found| found.file == file && found.name == name),
            "the scan found no <{name}> in {file}: {found:#?}"
        );
    }
}

#[test]
fn the_scan_finds_tags_in_literals_and_skips_comments_and_tests() {
    let source = r####"
        // "<comment>" is not written
        /* "<block>" /* "<nested>" */ */
        const A: &str = "<one>x</one>";
        const B: &str = r#"<two attr="1">"#;
        let c = '"'; let d = '\''; fn f<'a>(x: &'a str) {}
        let e = format!("<{name}>", name = "three");
        let g = "a < b, <- here, exec 0<{file}\n";
        let h = "line\
                 <four>";
        #[cfg(test)]
        fn only_in_tests() { let x = "<five>"; }
        let i = "<six/>";
        #[cfg(test)]
        mod tests { fn t() { let y = "<seven>"; let z = "}"; } }
        let j = b"<eight>";
    "####;
    let names: Vec<String> =
        literals(source).iter().flat_map(|literal| tags_in(literal, true)).collect();
    assert_eq!(names, ["one", "one", "two", "{name}", "four", "six", "eight"]);
}

/// Every file below `folder`, in a stable order.
fn files(folder: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(folder).unwrap().map(|entry| entry.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned()
}

/// A module of tests alone, by the crate's naming (`tests.rs`, `board_tests.rs`), or not Rust.
fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name.ends_with("tests.rs") || !name.ends_with(".rs")
}

/// The names of what looks like a tag in `text`: `<` or `</`, a name (letters, digits, `-`,
/// `_`, and `{…}` placeholders in a format string), then the end of the text, `>`, `/`,
/// whitespace or (in a Rust literal, `escapes`) the `\` of an escape. A name that is only a
/// placeholder counts where `>` or a space follows it (`<{TAG} source=…>`), not elsewhere
/// (`exec 0<{file}\n`, a shell redirection).
fn tags_in(text: &str, escapes: bool) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in text.match_indices('<') {
        let rest = &text[at + 1..];
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '{' | '}')))
            .unwrap_or(rest.len());
        let (name, after) = rest.split_at(end);
        let Some(first) = name.chars().next() else { continue };
        let next = after.chars().next();
        let ends = match next {
            None => true,
            Some(c) => c == '>' || c == '/' || c.is_whitespace() || (escapes && c == '\\'),
        };
        let placeholder_ends = matches!(next, Some('>' | ' '));
        if (first.is_ascii_alphabetic() && ends) || (first == '{' && placeholder_ends) {
            names.push(name.to_owned());
        }
    }
    names
}

/// The string literals of Rust `source` as written (escapes left as they are), leaving out
/// comments and each item under `#[cfg(test)]`.
fn literals(source: &str) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut code = String::new();
    // Inside a test item: the depth of braces in it, once its body opened.
    let mut skipping: Option<usize> = None;
    let mut opened = false;
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            at = block_comment_end(&chars, at);
            continue;
        }
        if let Some((literal, end)) = string_at(&chars, at) {
            if skipping.is_none() {
                out.push(literal);
            }
            at = end;
            continue;
        }
        if c == '\'' {
            at = char_literal_end(&chars, at);
            continue;
        }
        code.push(c);
        match (skipping, c) {
            (None, _) if code.ends_with(CFG_TEST) => {
                skipping = Some(0);
                opened = false;
            }
            (Some(depth), '{') => {
                skipping = Some(depth + 1);
                opened = true;
            }
            (Some(depth), '}') => {
                let depth = depth.saturating_sub(1);
                skipping = if opened && depth == 0 { None } else { Some(depth) };
            }
            (Some(0), ';') if !opened => skipping = None,
            _ => {}
        }
        at += 1;
    }
    out
}

/// Where the block comment that starts at `at` ends (they nest).
fn block_comment_end(chars: &[char], mut at: usize) -> usize {
    let mut depth = 0;
    while at < chars.len() {
        match (chars[at], chars.get(at + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                at += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    at
}

/// The string literal starting at `at` (`"…"`, `r#"…"#`; a `b` or `c` before either is code),
/// and where it ends; `None` when none starts there.
fn string_at(chars: &[char], at: usize) -> Option<(String, usize)> {
    let after_ident = at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_');
    if chars[at] == '"' {
        let mut end = at + 1;
        while end < chars.len() && chars[end] != '"' {
            end += if chars[end] == '\\' { 2 } else { 1 };
        }
        let end = end.min(chars.len());
        return Some((chars[at + 1..end].iter().collect(), end + 1));
    }
    let raw_start = chars[at] == 'r'
        && (!after_ident
            || (at > 1 && matches!(chars[at - 1], 'b' | 'c') && !is_ident(chars[at - 2])));
    if !raw_start {
        return None;
    }
    let hashes = chars[at + 1..].iter().take_while(|c| **c == '#').count();
    if chars.get(at + 1 + hashes) != Some(&'"') {
        return None;
    }
    let start = at + 2 + hashes;
    let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
    let mut end = start;
    while end < chars.len() && !chars[end..].starts_with(&closing) {
        end += 1;
    }
    Some((chars[start..end.min(chars.len())].iter().collect(), end + closing.len()))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Past the character literal that starts at `at` (`'x'`, `'\''`, `'\u{1b}'`), or past the `'`
/// of a lifetime or a label.
fn char_literal_end(chars: &[char], at: usize) -> usize {
    match (chars.get(at + 1), chars.get(at + 2)) {
        (Some('\\'), _) => {
            let mut end = at + 3;
            while end < chars.len() && chars[end] != '\'' {
                end += 1;
            }
            end + 1
        }
        (Some(_), Some('\'')) => at + 3,
        _ => at + 1,
    }
}
