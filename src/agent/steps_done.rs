//! The steps the model has done to files, so that doing one again can be answered with when and
//! under which board item it was done (seed 000's "re-creating the same file").
//!
//! Each write or edit that changed a file is one [`Step`]: the file, the round, the item then in
//! progress, and digests of what the call was — the content it left for a write, the
//! `old_text`/`new_text` pair for an edit. Digests, not contents: the log is saved with the
//! session and stays small. The digest is FNV-1a, written out here so that it is the same in
//! every build and a resumed session finds the steps of the one it continues (`tools::files::repeat`).

pub use crate::tools::files::repeat::{Repeated, content_digest};
use serde::{Deserialize, Serialize};

/// The board item a step was done under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepItem {
    pub id: String,
    pub text: String,
}

/// One change the model made to a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The file as the model and the person read it (relative to the workspace).
    pub path: String,
    /// The round it was done in, counting from 1.
    pub round: u32,
    /// The item in progress then, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<StepItem>,
    /// The digest of the file's content after the step.
    pub content: u64,
    /// For an edit, the digest of its `old_text` and `new_text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<u64>,
}

/// The steps of one conversation, oldest first.
#[derive(Debug, Clone, Default)]
pub struct StepLog {
    steps: Vec<Step>,
}

impl StepLog {
    pub fn from_steps(steps: Vec<Step>) -> Self {
        Self { steps }
    }

    pub fn push(&mut self, step: Step) {
        self.steps.push(step);
    }

    /// The newest step on `path` that a repeated call repeats.
    pub fn find(&self, path: &str, repeated: Repeated) -> Option<&Step> {
        self.steps.iter().rev().filter(|step| step.path == path).find(|step| match repeated {
            Repeated::Content(digest) => step.content == digest,
            Repeated::Edit(digest) => step.edit == Some(digest),
        })
    }
}

/// The sentence that tells the model when a repeated step was first done.
pub fn when_done(step: Option<&Step>) -> String {
    let Some(step) = step else {
        return "Nothing in this conversation did it, so it was done before; this step needs \
                nothing more. Go on with the next one."
            .to_owned();
    };
    let under = match &step.item {
        Some(item) => format!("under board item #{} \"{}\"", item.id, item.text),
        None => "while no board item was in progress".to_owned(),
    };
    format!(
        "This step was already done in round {} of this conversation, {under}. Go on with the \
         next step.",
        step.round
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(path: &str, round: u32, content: u64, edit: Option<u64>) -> Step {
        Step { path: path.into(), round, item: None, content, edit }
    }

    #[test]
    fn the_newest_matching_step_on_the_same_file_is_found() {
        let mut log = StepLog::default();
        log.push(step("a.txt", 1, 10, None));
        log.push(step("b.txt", 2, 10, None));
        log.push(step("a.txt", 3, 11, Some(7)));
        log.push(step("a.txt", 4, 10, None));
        assert_eq!(log.find("a.txt", Repeated::Content(10)).map(|s| s.round), Some(4));
        assert_eq!(log.find("a.txt", Repeated::Edit(7)).map(|s| s.round), Some(3));
        assert_eq!(log.find("c.txt", Repeated::Content(10)), None);
    }

    #[test]
    fn the_answer_names_the_round_and_the_item() {
        let mut done = step("a.txt", 4, 1, None);
        assert!(
            when_done(Some(&done)).contains("round 4 of this conversation, while no board item")
        );
        done.item = Some(StepItem { id: "2".into(), text: "Add hints".into() });
        assert!(
            when_done(Some(&done))
                .contains("round 4 of this conversation, under board item #2 \"Add hints\"")
        );
        assert!(when_done(None).contains("done before"));
    }
}
