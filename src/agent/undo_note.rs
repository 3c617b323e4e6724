//! What the model is told after an undo (`/undo`, `keel undo`): which files were put back as
//! they were, removed or made again, so that its next answer does not build on files that are
//! gone. Sent once, with its next request, after the prompt (see `state::model_notes`).

use crate::runtime::undo::UndoReport;
use crate::tags::Tag;

/// The note for `report`; `None` when the undo changed no file.
pub fn note(report: &UndoReport) -> Option<String> {
    if !report.changed_files() {
        return None;
    }
    let mut lines = vec![
        "The person undid the file changes of an earlier prompt; the workspace is back as it was \
         before that prompt:"
            .to_owned(),
    ];
    lines.extend(report.restored.iter().map(|path| format!("- restored {path}")));
    lines.extend(
        report.deleted.iter().map(|path| format!("- deleted {path} (that prompt created it)")),
    );
    lines.extend(
        report.recreated.iter().map(|path| format!("- re-created {path} (that prompt deleted it)")),
    );
    lines.extend(
        report.left_alone.iter().map(|(path, why)| format!("- left {path} as it is: {why}")),
    );
    lines.push(
        "What you remember of these files is out of date: read them again before you rely on \
         them."
            .to_owned(),
    );
    // The paths are the workspace's: a file's name cannot speak as keel (`crate::tags`).
    Some(Tag::Undo.wrap(&lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_every_file_and_how_it_came_back() {
        let report = UndoReport {
            undid: true,
            restored: vec!["app.py".into()],
            deleted: vec!["new.py".into()],
            recreated: vec!["old.py".into()],
            left_alone: vec![("notes.txt".into(), "someone changed it since".into())],
            notes: Vec::new(),
        };
        let note = note(&report).unwrap();
        assert!(note.starts_with("<undo-note>The person undid"), "{note}");
        for line in [
            "- restored app.py",
            "- deleted new.py (that prompt created it)",
            "- re-created old.py (that prompt deleted it)",
            "- left notes.txt as it is: someone changed it since",
        ] {
            assert!(note.contains(line), "{line} in {note}");
        }
        assert!(note.ends_with("</undo-note>"));
        let nothing = UndoReport { undid: true, ..UndoReport::default() };
        assert_eq!(super::note(&nothing), None, "an undo that changed nothing is not told");
    }
}
