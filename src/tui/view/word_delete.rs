//! Readline's Ctrl+W for the composer's editor: deleting back to whitespace, so a path or a flag
//! goes whole (the editor's own word deletion stops at every `/` and `.`).

use tui_textarea::{CursorMove, TextArea};

/// Readline's Ctrl+W: deletes back over any whitespace before the cursor and then up to the
/// whitespace before that, so `--flag=a/b.c` goes whole; at the start of a line it joins the line
/// to the one above.
pub(super) fn to_whitespace(editor: &mut TextArea<'static>) -> bool {
    let (row, column) = editor.cursor();
    let before: Vec<char> =
        editor.lines().get(row).map(|line| line.chars().take(column).collect()).unwrap_or_default();
    let blanks = before.iter().rev().take_while(|c| c.is_whitespace()).count();
    let word = before.iter().rev().skip(blanks).take_while(|c| !c.is_whitespace()).count();
    let count = blanks + word;
    if count == 0 {
        return editor.delete_char();
    }
    for _ in 0..count {
        editor.move_cursor(CursorMove::Back);
    }
    editor.delete_str(count)
}
