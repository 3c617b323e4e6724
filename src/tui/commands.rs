//! Slash commands typed in the composer: what they are called, what they do, how they are told
//! apart from a prompt that merely starts with a path.

/// A command keel runs itself instead of sending the text to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slash {
    Clear,
    Todos,
    /// `/todo add|done|undo|rm|edit|move …`: the person edits the board.
    Todo,
    Plan,
    Approve,
    Help,
    Quit,
    Undo,
    Compact,
    Demo,
    Mcp,
}

/// Every command with its help line, in the order the help lists them.
pub const SLASH_COMMANDS: &[(&str, Slash, &str)] = &[
    ("/clear", Slash::Clear, "start a new conversation with an empty board"),
    (
        "/todos",
        Slash::Todos,
        "give the board the keyboard: select, edit, approve a plan (Esc returns)",
    ),
    (
        "/todo",
        Slash::Todo,
        "edit the board: add TEXT, done N, undo N, rm N, edit N TEXT, move N POS (N: the item's id)",
    ),
    (
        "/plan",
        Slash::Plan,
        "plan mode on or off (Shift+Tab): the model reads and plans, changes nothing",
    ),
    ("/approve", Slash::Approve, "approve the plan on the board: the model carries it out"),
    ("/undo", Slash::Undo, "restore the files the last turn changed"),
    (
        "/compact",
        Slash::Compact,
        "summarise the work so far for the model (the board and your requests stay)",
    ),
    ("/mcp", Slash::Mcp, "list the MCP servers, their state and their tools"),
    ("/demo", Slash::Demo, "watch keel work through a sample task with a scripted model"),
    ("/help", Slash::Help, "show every key and command"),
    ("/quit", Slash::Quit, "leave keel"),
];

/// What the composer's text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A prompt for the model.
    Prompt,
    Command(Slash),
    /// Looks like a command but is none of ours (the name, with its slash).
    Unknown(String),
}

/// Reads `text` as a command when its first word is `/` followed by letters only; `/usr/bin is
/// broken` is a prompt.
pub fn parse(text: &str) -> Parsed {
    let trimmed = text.trim();
    let word = trimmed.split_whitespace().next().unwrap_or("");
    let Some(name) = word.strip_prefix('/') else {
        return Parsed::Prompt;
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphabetic()) {
        return Parsed::Prompt;
    }
    let lower = format!("/{}", name.to_ascii_lowercase());
    match SLASH_COMMANDS.iter().find(|(known, _, _)| *known == lower) {
        Some((_, command, _)) => Parsed::Command(*command),
        None if lower == "/exit" => Parsed::Command(Slash::Quit),
        None => Parsed::Unknown(word.to_owned()),
    }
}

/// `/clear /todos /todo /plan /approve /undo /compact /demo /help /quit`.
pub fn names() -> String {
    SLASH_COMMANDS.iter().map(|(name, _, _)| *name).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised() {
        assert_eq!(parse("/clear"), Parsed::Command(Slash::Clear));
        assert_eq!(parse("  /TODOS  "), Parsed::Command(Slash::Todos));
        assert_eq!(parse("/exit"), Parsed::Command(Slash::Quit));
        assert_eq!(parse("/compact"), Parsed::Command(Slash::Compact));
        assert_eq!(parse("/todo done 2"), Parsed::Command(Slash::Todo));
        assert_eq!(parse("/Plan"), Parsed::Command(Slash::Plan));
        assert_eq!(parse("/nope"), Parsed::Unknown("/nope".into()));
    }

    #[test]
    fn paths_and_plain_text_are_prompts() {
        assert_eq!(parse("/usr/bin is broken"), Parsed::Prompt);
        assert_eq!(parse("fix /clear handling"), Parsed::Prompt);
        assert_eq!(parse("/"), Parsed::Prompt);
    }
}
