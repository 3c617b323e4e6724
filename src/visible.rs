//! Untrusted text made visible, character for character, for a person to read on a terminal.
//!
//! The model, a tool's output and a cloned repository can all hold characters a terminal acts on
//! instead of showing: escape sequences that set the window title or the clipboard, a bare `\r`
//! that lets later text overwrite what came before (`rm -rf x;\recho harmless` would read as
//! `echo harmless`), bidirectional overrides that reorder what is shown. Where the person must see
//! exactly what will run — the approval box, `keel -p`'s printout — every such character is
//! replaced by a visible stand-in rather than dropped: `\r` as `␍`, ESC as `^[`, other C0 controls
//! in caret notation (`^A`), DEL as `^?`, and C1 controls and invisible characters (bidi
//! overrides, zero-width joiners, tag characters, variation selectors, blank fillers, line and
//! paragraph separators — every default-ignorable code point of Unicode, unassigned ones too) as
//! `⟨U+202E⟩`. Newlines and tabs are kept.
//!
//! [`one_line`] is how every one-line mention of a command reads — the conversation, the tool
//! pane, the status line, `keel -p`'s progress lines and its JSON events — so none of them can
//! show less than the approval box does.

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

/// The first line of `text` made visible (see [`visible`]), tabs as spaces, with ` …` when more
/// lines follow: one line naming a command or a path, hiding nothing of it.
pub fn one_line(text: &str) -> String {
    let text = text.trim_matches([' ', '\t', '\n']);
    let (first, more) = match text.split_once('\n') {
        Some((first, _)) => (first.trim_end_matches([' ', '\t']), true),
        None => (text, false),
    };
    let mut line = visible(first).replace('\t', " ");
    if more {
        line.push_str(" …");
    }
    line
}

/// Whether `c` would be acted on or be invisible rather than shown.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || is_invisible_format(c)
}

/// Characters that change how text around them is shown, or take room while drawing nothing a
/// reader can tell from a space or from nothing: Unicode's default-ignorable code points (which a
/// renderer draws as nothing, assigned or not yet: bidirectional controls, zero-width characters,
/// joiners, variation selectors, tag characters, fillers, and the unassigned ranges kept for
/// more), the other format characters, the line and paragraph separators, and the braille blank.
fn is_invisible_format(c: char) -> bool {
    let within =
        |ranges: &[(char, char)]| ranges.iter().any(|(first, last)| (*first..=*last).contains(&c));
    within(DEFAULT_IGNORABLE) || within(OTHER_INVISIBLE)
}

/// Unicode's `Default_Ignorable_Code_Point` set, whole (DerivedCoreProperties.txt, Unicode 16.0).
const DEFAULT_IGNORABLE: &[(char, char)] = &[
    ('\u{00ad}', '\u{00ad}'),
    ('\u{034f}', '\u{034f}'),
    ('\u{061c}', '\u{061c}'),
    ('\u{115f}', '\u{1160}'),
    ('\u{17b4}', '\u{17b5}'),
    ('\u{180b}', '\u{180f}'),
    ('\u{200b}', '\u{200f}'),
    ('\u{202a}', '\u{202e}'),
    ('\u{2060}', '\u{206f}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{fe00}', '\u{fe0f}'),
    ('\u{feff}', '\u{feff}'),
    ('\u{ffa0}', '\u{ffa0}'),
    ('\u{fff0}', '\u{fff8}'),
    ('\u{1bca0}', '\u{1bca3}'),
    ('\u{1d173}', '\u{1d17a}'),
    ('\u{e0000}', '\u{e0fff}'),
];

/// The format characters (`Cf`) that are not default-ignorable, the line and paragraph
/// separators, and the braille blank.
const OTHER_INVISIBLE: &[(char, char)] = &[
    ('\u{0600}', '\u{0605}'),
    ('\u{06dd}', '\u{06dd}'),
    ('\u{070f}', '\u{070f}'),
    ('\u{0890}', '\u{0891}'),
    ('\u{08e2}', '\u{08e2}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{2800}', '\u{2800}'),
    ('\u{fff9}', '\u{fffb}'),
    ('\u{110bd}', '\u{110bd}'),
    ('\u{110cd}', '\u{110cd}'),
    ('\u{13430}', '\u{1343f}'),
];

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

    /// Each character the issue of hidden text named, and the ends of every range.
    const INVISIBLE: &[char] = &[
        '\u{e0000}',
        '\u{e0001}',
        '\u{e0041}',
        '\u{e007f}', // tag characters
        '\u{fe00}',
        '\u{fe0f}',
        '\u{e0100}',
        '\u{e01ef}', // variation selectors
        '\u{180b}',
        '\u{180f}', // Mongolian variation selectors and vowel separator
        '\u{2800}', // braille blank
        '\u{115f}',
        '\u{1160}',
        '\u{3164}',
        '\u{ffa0}', // Hangul fillers
        '\u{034f}', // combining grapheme joiner
        '\u{2028}',
        '\u{2029}', // line and paragraph separators
        '\u{00ad}',
        '\u{061c}',
        '\u{200b}',
        '\u{200f}',
        '\u{202a}',
        '\u{202e}', // bidi, zero width
        '\u{2060}',
        '\u{2064}',
        '\u{2066}',
        '\u{206f}',
        '\u{feff}', // joiners, isolates, BOM
        '\u{17b4}',
        '\u{17b5}',
        '\u{fff9}',
        '\u{fffb}',
        '\u{1d173}',
        '\u{1bca0}', // other formats
    ];

    #[test]
    fn every_invisible_character_is_shown_by_its_code() {
        for &c in INVISIBLE {
            let text = format!("rm{c}-rf");
            let shown = visible(&text);
            assert_eq!(shown, format!("rm⟨U+{:04X}⟩-rf", c as u32), "U+{:04X}", c as u32);
            assert_eq!(one_line(&text), shown, "U+{:04X} on one line", c as u32);
        }
    }

    /// Unicode 16.0's `Default_Ignorable_Code_Point` and `Cf` sets, as `ucd-generate` writes
    /// them (DerivedCoreProperties.txt, UnicodeData.txt): every code point of both is shown.
    const UCD_DEFAULT_IGNORABLE: &[(u32, u32)] = &[
        (0xad, 0xad),
        (0x34f, 0x34f),
        (0x61c, 0x61c),
        (0x115f, 0x1160),
        (0x17b4, 0x17b5),
        (0x180b, 0x180f),
        (0x200b, 0x200f),
        (0x202a, 0x202e),
        (0x2060, 0x206f),
        (0x3164, 0x3164),
        (0xfe00, 0xfe0f),
        (0xfeff, 0xfeff),
        (0xffa0, 0xffa0),
        (0xfff0, 0xfff8),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0000, 0xe0fff),
    ];
    const UCD_FORMAT: &[(u32, u32)] = &[
        (0xad, 0xad),
        (0x600, 0x605),
        (0x61c, 0x61c),
        (0x6dd, 0x6dd),
        (0x70f, 0x70f),
        (0x890, 0x891),
        (0x8e2, 0x8e2),
        (0x180e, 0x180e),
        (0x200b, 0x200f),
        (0x202a, 0x202e),
        (0x2060, 0x2064),
        (0x2066, 0x206f),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0x110bd, 0x110bd),
        (0x110cd, 0x110cd),
        (0x13430, 0x1343f),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0001, 0xe0001),
        (0xe0020, 0xe007f),
    ];

    #[test]
    fn every_default_ignorable_and_format_code_point_is_shown() {
        for &(first, last) in UCD_DEFAULT_IGNORABLE.iter().chain(UCD_FORMAT) {
            for code in first..=last {
                let c = char::from_u32(code).unwrap();
                assert!(is_hidden(c), "U+{code:04X} is shown raw");
                assert_eq!(visible(&c.to_string()), format!("⟨U+{code:04X}⟩"));
            }
        }
        // The unassigned ranges the approval box once showed raw.
        for c in ['\u{fff0}', '\u{fff8}', '\u{e0080}', '\u{e00ff}', '\u{e01f0}', '\u{e0fff}'] {
            assert_eq!(one_line(&format!("rm{c}-rf")), format!("rm⟨U+{:04X}⟩-rf", c as u32));
        }
        // Their neighbours are ordinary (U+FFFC, the object replacement character, is seen).
        assert!(!is_hidden('\u{fffc}') && !is_hidden('\u{ffef}') && !is_hidden('\u{e1000}'));
    }

    #[test]
    fn ordinary_letters_and_spaces_are_left_alone() {
        for text in ["café ünïcode", "日本語", "a\u{a0}b", "e\u{301}", "🙂", "→ ✓"] {
            assert!(matches!(visible(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn one_line_shows_the_whole_first_line_and_marks_the_rest() {
        let hidden = "echo safe\rrm -rf ~/important # hidden";
        assert_eq!(one_line(hidden), "echo safe␍rm -rf ~/important # hidden");
        assert_eq!(one_line("  ls\t-la\n  pwd\n"), "ls -la …");
        assert_eq!(one_line("\rboo\r"), "␍boo␍");
        assert_eq!(one_line("echo \u{1b}[2Jcleared"), "echo ^[[2Jcleared");
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
