//! JSON text laid out for reading without being parsed: the inspector shows a request body as it
//! went on the wire, so its keys keep the wire's order and its strings keep their escapes byte for
//! byte. Only the whitespace between tokens changes — [`pretty`] adds it, [`compact`] takes it
//! away — so `compact(&pretty(body)) == body` for any compact body.

/// Spaces per level of nesting, as `serde_json::to_string_pretty` indents.
const INDENT: usize = 2;

/// `raw` with one member or element a line, indented by nesting; empty `{}` and `[]` stay whole.
/// Text that is not JSON comes out with the same tokens, laid out as well as its brackets allow.
pub fn pretty(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + raw.len() / 2);
    let mut depth = 0usize;
    let mut strings = Strings::default();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if strings.step(c) {
            out.push(c);
            continue;
        }
        match c {
            '{' | '[' => {
                while chars.next_if(|next| is_blank(*next)).is_some() {}
                let close = if c == '{' { '}' } else { ']' };
                out.push(c);
                if chars.next_if_eq(&close).is_some() {
                    out.push(close);
                } else {
                    depth += 1;
                    new_line(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                new_line(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                new_line(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if is_blank(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` without the whitespace between tokens (strings are kept as they are).
pub fn compact(text: &str) -> String {
    let mut strings = Strings::default();
    text.chars().filter(|c| strings.step(*c) || !is_blank(*c)).collect()
}

/// Where a scan of JSON text stands: inside a string or not, and just after a backslash in one.
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
}

impl Strings {
    /// Steps over `c`; returns whether it belongs to a string (its quotes included), which is
    /// kept as it is.
    fn step(&mut self, c: char) -> bool {
        if !self.inside {
            self.inside = c == '"';
            return self.inside;
        }
        if self.escaped {
            self.escaped = false;
        } else if c == '\\' {
            self.escaped = true;
        } else if c == '"' {
            self.inside = false;
        }
        true
    }
}

/// JSON's whitespace between tokens.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn new_line(out: &mut String, depth: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', depth * INDENT));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_layout_is_serde_jsons_but_the_order_is_the_texts() {
        let value = json!({"a": [1, {"b": null}], "c": {}, "d": [], "e": "x\"y\\"});
        let raw = serde_json::to_string(&value).unwrap();
        assert_eq!(pretty(&raw), serde_json::to_string_pretty(&value).unwrap());
        let wire = r#"{"z":1,"a":{"cache_control":{"type":"ephemeral"},"text":"hi"}}"#;
        let shown = pretty(wire);
        assert!(shown.find("\"z\"") < shown.find("\"a\""), "{shown}");
        assert_eq!(compact(&shown), wire);
    }

    #[test]
    fn strings_keep_their_bytes_and_brackets_inside_them_do_nothing() {
        let wire = r#"["{[,:]} \"quoted\" \\", "\u0007 tab\t ünï"]"#;
        let shown = pretty(wire);
        assert!(shown.contains(r#""{[,:]} \"quoted\" \\""#), "{shown}");
        assert_eq!(compact(&shown), compact(wire));
        assert_eq!(shown.lines().count(), 4, "{shown}");
    }

    #[test]
    fn text_that_is_not_json_is_shown_anyway() {
        assert_eq!(pretty("]]} oops"), "\n]\n]\n}oops");
        assert_eq!(pretty("\"unterminated"), "\"unterminated");
    }
}
