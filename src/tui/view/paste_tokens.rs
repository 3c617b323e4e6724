//! Keeping a big paste's token whole in the composer. The token (`[paste #1: 2,000 lines,
//! 79.0 KB]`) stands for text held aside; an edit that would cut into it — Backspace after it,
//! Delete before it, a word or line deleted across it, text typed inside it — would leave a token
//! that no longer names its paste, and the paste would silently never be sent. So an edit is
//! looked at as a change from the text before it, and a change that touches part of a token is
//! widened to the whole token (or, for text typed inside one, moved past it).

/// How to redo an edit so that no token is cut: from char `start` of the text before the edit,
/// remove `remove` chars and insert `insert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    pub start: usize,
    pub remove: usize,
    pub insert: String,
}

/// The repair the edit from `before` to `after` needs, if it cut into one of `tokens`.
pub fn repair(before: &str, after: &str, tokens: &[&str]) -> Option<Repair> {
    let old: Vec<char> = before.chars().collect();
    let new: Vec<char> = after.chars().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix =
        old.iter().rev().zip(new.iter().rev()).take(room).take_while(|(a, b)| a == b).count();
    let (start, end) = (prefix, old.len() - suffix);
    let insert: String = new[prefix..new.len() - suffix].iter().collect();
    let (mut low, mut high, mut broken) = (start, end, false);
    for (token_start, token_end) in spans(&old, tokens) {
        let inside = token_start < start && start < token_end;
        if start == end {
            // Typed inside a token: the text goes right after it instead.
            if inside {
                return Some(Repair { start: token_end, remove: 0, insert });
            }
        } else if start < token_end
            && end > token_start
            && !(start <= token_start && end >= token_end)
        {
            broken = true;
            low = low.min(token_start);
            high = high.max(token_end);
        }
    }
    broken.then(|| Repair { start: low, remove: high - low, insert })
}

/// Where each of `tokens` occurs in `text`, as char ranges.
fn spans(text: &[char], tokens: &[&str]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for token in tokens {
        let token: Vec<char> = token.chars().collect();
        if token.is_empty() || token.len() > text.len() {
            continue;
        }
        let mut at = 0;
        while at + token.len() <= text.len() {
            if text[at..at + token.len()] == token[..] {
                out.push((at, at + token.len()));
                at += token.len();
            } else {
                at += 1;
            }
        }
    }
    out
}

/// The row and column (in chars) of char `offset` of `text`, whose lines end in `\n`.
pub fn position(text: &str, offset: usize) -> (usize, usize) {
    let (mut row, mut column) = (0, 0);
    for c in text.chars().take(offset) {
        if c == '\n' {
            row += 1;
            column = 0;
        } else {
            column += 1;
        }
    }
    (row, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "[paste #1: 2,000 lines, 79.0 KB]";

    fn apply(before: &str, fix: &Repair) -> String {
        let chars: Vec<char> = before.chars().collect();
        let mut out: String = chars[..fix.start].iter().collect();
        out.push_str(&fix.insert);
        out.extend(&chars[fix.start + fix.remove..]);
        out
    }

    #[test]
    fn backspace_after_a_token_removes_it_whole() {
        let before = format!("fix {TOKEN} now");
        let after = before.replacen("KB]", "KB", 1);
        let fix = repair(&before, &after, &[TOKEN]).unwrap();
        assert_eq!(apply(&before, &fix), "fix  now");
    }

    #[test]
    fn delete_before_a_token_and_cuts_across_it_remove_it_whole() {
        let before = format!("a\n{TOKEN}b");
        let delete = before.replacen("[p", "p", 1);
        assert_eq!(apply(&before, &repair(&before, &delete, &[TOKEN]).unwrap()), "a\nb");
        let word = before.replacen("79.0 KB]b", "b", 1);
        assert_eq!(apply(&before, &repair(&before, &word, &[TOKEN]).unwrap()), "a\nb");
    }

    #[test]
    fn text_typed_inside_a_token_goes_after_it() {
        let before = format!("{TOKEN}!");
        let after = before.replacen("lines", "liXnes", 1);
        assert_eq!(
            apply(&before, &repair(&before, &after, &[TOKEN]).unwrap()),
            format!("{TOKEN}X!")
        );
    }

    #[test]
    fn edits_beside_a_token_or_of_it_whole_need_nothing() {
        let before = format!("x{TOKEN}y");
        for after in
            [format!("{TOKEN}y"), format!("x{TOKEN}"), "xy".to_owned(), format!("xz{TOKEN}y")]
        {
            assert_eq!(repair(&before, &after, &[TOKEN]), None, "{after}");
        }
    }

    #[test]
    fn positions_count_rows_and_chars() {
        assert_eq!(position("ab\nçd", 4), (1, 1));
        assert_eq!(position("ab", 0), (0, 0));
    }
}
