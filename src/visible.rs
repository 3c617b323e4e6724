//! Untrusted text made visible, character for character, for a person to read on a terminal.
//!
//! The model, a tool's output and a cloned repository can all hold characters a terminal acts on
//! instead of showing: escape sequences that set the window title or the clipboard, a bare `\r`
//! that lets later text overwrite what came before (`rm -rf x;\recho harmless` would read as
//! `echo harmless`), bidirectional overrides that reorder what is shown. Where the person must see
//! exactly what will run — the approval box, `keel -p`'s printout — every such character is
//! replaced by a visible stand-in rather than dropped: `\r` as `␍`, ESC as `^[`, other C0 controls
//! in caret notation (`^A`), DEL as `^?`, and C1 controls and invisible format characters (bidi
//! overrides, zero-width joiners) as `⟨U+202E⟩`. Newlines and tabs are kept.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The stand-in for a carriage return.
const CARRIAGE_RETURN: char = '␍';

/// `text` with every character a terminal would act on replaced by a visible stand-in; newlines
/// and tabs are kept as they are.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && c != '\t' && is_hidden(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if is_hidden(c) => push_stand_in(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` would be acted on or be invisible rather than shown.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || is_invisible_format(c)
}

/// Format characters that change how text around them is shown without being shown themselves:
/// bidirectional embeddings, overrides and isolates, zero-width characters, the word joiner and
/// the byte-order mark.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{061c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
}

fn push_stand_in(out: &mut String, c: char) {
    match c {
        '\r' => out.push(CARRIAGE_RETURN),
        '\u{7f}' => out.push_str("^?"),
        c if (c as u32) < 0x20 => {
            out.push('^');
            out.push(char::from(b'@' + c as u8));
        }
        c => {
            let _ = write!(out, "⟨U+{:04X}⟩", c as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_as_it_is() {
        assert!(matches!(visible("ls -la\n\tdone"), Cow::Borrowed("ls -la\n\tdone")));
    }

    #[test]
    fn what_a_terminal_would_act_on_is_shown() {
        assert_eq!(visible("rm -f x;\recho ok"), "rm -f x;␍echo ok");
        assert_eq!(visible("\u{1b}]0;title\u{7}"), "^[]0;title^G");
        assert_eq!(visible("a\u{0}b\u{7f}"), "a^@b^?");
        assert_eq!(visible("x\u{9b}2J"), "x⟨U+009B⟩2J");
        assert_eq!(visible("safe\u{202e}txt.exe"), "safe⟨U+202E⟩txt.exe");
        assert_eq!(visible("zero\u{200b}width"), "zero⟨U+200B⟩width");
    }

    #[test]
    fn nothing_is_lost() {
        let hostile = "a\rb\u{1b}[2Jc\u{202e}d";
        let shown = visible(hostile);
        for kept in ['a', 'b', 'c', 'd'] {
            assert!(shown.contains(kept));
        }
        assert!(!shown.chars().any(|c| c != '\n' && c != '\t' && is_hidden(c)));
    }
}
