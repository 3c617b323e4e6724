//! The names MCP tools go by for the model: `mcp__SERVER__TOOL`.
//!
//! Both wire formats take tool names of letters, digits, `_` and `-`, at most 64 characters. A
//! server's and a tool's names may hold anything, so other characters become `_`, a long name is
//! cut, and a name that would collide with one already given gets a number.

use std::collections::HashSet;

/// What every MCP tool's name starts with.
pub const PREFIX: &str = "mcp__";
/// Between the server's name and the tool's.
const SEPARATOR: &str = "__";
/// The longest tool name the providers accept.
pub const MAX_NAME_CHARS: usize = 64;

/// Whether the model's name for a tool is an MCP tool's.
pub fn is_mcp(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// Hands out unique names for the model.
#[derive(Debug, Default)]
pub struct Namer {
    taken: HashSet<String>,
}

impl Namer {
    /// The name for `tool` of `server`: sanitised, cut to the limit, and numbered if taken.
    pub fn name(&mut self, server: &str, tool: &str) -> String {
        let base = format!("{PREFIX}{}{SEPARATOR}{}", sanitize(server), sanitize(tool));
        let mut name = cut(&base, MAX_NAME_CHARS);
        let mut number = 2;
        while self.taken.contains(&name) {
            let suffix = format!("_{number}");
            name = format!("{}{suffix}", cut(&base, MAX_NAME_CHARS - suffix.len()));
            number += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// `text` with every character a tool name may not hold made `_`.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect()
}

/// The first `limit` characters of an ASCII name.
fn cut(name: &str, limit: usize) -> String {
    name.chars().take(limit).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_cut_and_unique() {
        let mut namer = Namer::default();
        assert_eq!(namer.name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(namer.name("my server", "get.thing/é"), "mcp__my_server__get_thing__");
        assert_eq!(namer.name("my.server", "get thing/é"), "mcp__my_server__get_thing___2");
        let long = namer.name("s", &"x".repeat(100));
        assert_eq!(long.len(), MAX_NAME_CHARS);
        let again = namer.name("s", &"x".repeat(90));
        assert_eq!(again.len(), MAX_NAME_CHARS);
        assert!(again.ends_with("_2") && again != long);
        assert!(is_mcp(&long) && !is_mcp("bash"));
    }
}
