//! `@path` in a prompt: each file it mentions is read as `read_file` reads it — confined to the
//! workspace (no `..` out of it, no symlink leading out, no FIFO or device), its lines numbered,
//! capped at `read_file`'s size — and goes to the model with the prompt, as keel's note after
//! the person's words. A mention that cannot be read is left as the text it is, and the person
//! is told why.

use crate::message::ContentBlock;
use crate::runtime::Workspace;
use crate::tags::{Tag, defuse};
use crate::tools::files::{self, ReadArgs};

/// At most this many files are attached to one prompt; more mentions are left as text.
pub const MAX_MENTIONS: usize = 8;
/// What may follow a mention without being part of its path: a sentence's punctuation.
const TRAILING: &[char] = &[',', '.', ';', ':', '!', '?', ')', ']', '}', '"', '\'', '`'];

/// The files attached to a prompt, and what the person is told about them.
#[derive(Debug, Default, PartialEq)]
pub struct Attached {
    /// keel's notes holding the files, in the order they were mentioned.
    pub blocks: Vec<ContentBlock>,
    /// The paths attached, as mentioned.
    pub paths: Vec<String>,
    /// The mentions not attached, each with why.
    pub refused: Vec<String>,
}

impl Attached {
    /// The lines the person reads: what was attached, then what was not.
    pub fn notices(&self) -> (Option<String>, Option<String>) {
        let attached = (!self.paths.is_empty())
            .then(|| format!("Attached for the model: {}.", self.paths.join(", ")));
        let refused = (!self.refused.is_empty())
            .then(|| format!("Not attached: {}", self.refused.join("\n")));
        (attached, refused)
    }
}

/// The paths `prompt` mentions: words that start with `@` (after the start or a space), their
/// closing punctuation left off, each once.
pub fn mentioned(prompt: &str) -> Vec<&str> {
    let mut paths: Vec<&str> = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else { continue };
        let path = path.trim_end_matches(TRAILING);
        if !path.is_empty() && !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// Reads the files `prompt` mentions in `workspace`, off the async threads (a read may be
/// large).
pub async fn attach_in(workspace: Workspace, prompt: String) -> Attached {
    if mentioned(&prompt).is_empty() {
        return Attached::default();
    }
    tokio::task::spawn_blocking(move || attach(&workspace, &prompt)).await.unwrap_or_else(|err| {
        Attached {
            refused: vec![format!("the files could not be read: {err}")],
            ..Attached::default()
        }
    })
}

/// Reads the files `prompt` mentions in `workspace`.
pub fn attach(workspace: &Workspace, prompt: &str) -> Attached {
    let mut attached = Attached::default();
    for (index, path) in mentioned(prompt).into_iter().enumerate() {
        if index >= MAX_MENTIONS {
            attached.refused.push(format!(
                "@{path}: a prompt attaches at most {MAX_MENTIONS} files; ask the model to read it"
            ));
            continue;
        }
        let args = ReadArgs { path: path.to_owned(), offset: None, limit: None };
        match files::read(workspace, &args) {
            Ok(numbered) => {
                // The file's text is not keel's: its tags are defused (`crate::tags`).
                let file = Tag::File.wrap_with(&[("path", path)], &format!("\n{numbered}"));
                let text = format!(
                    "The person mentioned @{}; keel read it for you, as read_file would:\n{file}",
                    defuse(path)
                );
                attached.blocks.push(ContentBlock::Note { text });
                attached.paths.push(path.to_owned());
            }
            Err(err) => attached.refused.push(format!("@{path}: {err}")),
        }
    }
    attached
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_words_that_start_with_an_at_sign() {
        assert_eq!(
            mentioned("look at @src/app.py, and @notes.txt. mail me@example.com @ @src/app.py"),
            vec!["src/app.py", "notes.txt"]
        );
    }

    #[test]
    fn a_mentioned_file_is_read_numbered_and_one_outside_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.py"), "print(1)\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let attached = attach(&workspace, "fix @app.py and @../outside.txt");
        assert_eq!(attached.paths, vec!["app.py"]);
        let ContentBlock::Note { text } = &attached.blocks[0] else { panic!() };
        assert!(text.contains("<attached-file path=\"app.py\">\n     1\tprint(1)\n"), "{text}");
        assert_eq!(attached.refused.len(), 1);
        assert!(attached.refused[0].starts_with("@../outside.txt: "), "{:?}", attached.refused);
        assert!(attached.refused[0].contains("outside the workspace"), "{:?}", attached.refused);
    }

    #[test]
    fn keels_tags_in_a_mentioned_file_are_defused() {
        use crate::tags::hostile;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), hostile::text()).unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let attached = attach(&workspace, "see @notes.md");
        let ContentBlock::Note { text } = &attached.blocks[0] else { panic!() };
        let body = text.split_once("<attached-file path=\"notes.md\">").unwrap().1;
        let body = body.strip_suffix("</attached-file>").unwrap();
        assert_eq!(hostile::live(body), Vec::<&str>::new(), "{text}");
        assert!(body.contains("‹reminder x=\"1\">forged‹/reminder>"), "{text}");
    }
}
