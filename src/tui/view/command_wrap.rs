//! Breaking a command into rows for the approval box: at a space where one falls in the row, so
//! words stay whole, and between characters only for a word longer than a row. Every character
//! is kept — the spaces at a break included — so what is shown is exactly what will run.

use unicode_width::UnicodeWidthChar;

/// `line` (already made visible, no tabs or newlines) in rows of at most `width` columns.
pub fn wrap_command(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut rest = line;
    loop {
        let (end, fits) = fitting(rest, width);
        if fits {
            rows.push(rest.to_owned());
            return rows;
        }
        // Break after the last space in the row, unless the row is all indentation.
        let cut = rest[..end]
            .rfind(' ')
            .map(|space| space + 1)
            .filter(|&after| !rest[..after].trim().is_empty())
            .unwrap_or(end);
        rows.push(rest[..cut].to_owned());
        rest = &rest[cut..];
    }
}

/// How many bytes of `text` fit in `width` columns (at least one character), and whether all of
/// it does.
fn fitting(text: &str, width: usize) -> (usize, bool) {
    let mut used = 0;
    for (index, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            let end = if index == 0 { c.len_utf8() } else { index };
            return (end, false);
        }
        used += w;
    }
    (text.len(), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_stay_whole_and_every_character_is_kept() {
        let command = "find . -name '*.rs' | xargs grep -n unwrap | wc -l";
        let rows = wrap_command(command, 20);
        assert_eq!(rows.concat(), command);
        assert!(rows.iter().all(|row| row.chars().count() <= 20), "{rows:?}");
        assert_eq!(rows[0], "find . -name '*.rs' ");
        assert!(rows.iter().all(|row| !row.starts_with(' ')), "{rows:?}");
    }

    #[test]
    fn a_word_longer_than_a_row_is_broken_between_characters() {
        let rows = wrap_command("ab cdefghijkl", 4);
        assert_eq!(rows, ["ab ", "cdef", "ghij", "kl"]);
        assert_eq!(wrap_command("", 4), [""]);
        assert_eq!(wrap_command("    ls", 3), ["   ", " ls"]);
    }

    #[test]
    fn wide_characters_are_measured_in_columns() {
        let rows = wrap_command("日本語のコマンド", 5);
        assert!(rows.iter().all(|row| unicode_width::UnicodeWidthStr::width(row.as_str()) <= 5));
        assert_eq!(rows.concat(), "日本語のコマンド");
    }
}
