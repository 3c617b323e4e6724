//! Slash commands typed in the composer: what they are called, what they do, how they are told
//! apart from a prompt that merely starts with a path.

/// A command keel runs itself instead of sending the text to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slash {
    Clear,
    Todos,
    /// `/todo add|done|undo|rm|edit|move|check …`: the person edits the board.
    Todo,
    Plan,
    Approve,
    /// `/approval [ask|auto|read-only]`: the approval mode, or another.
    Approval,
    Help,
    Quit,
    Undo,
    Compact,
    Demo,
    Mcp,
    /// `/hooks`, `/hooks trust`, `/hooks forget`.
    Hooks,
    Resume,
    /// `/model [PROVIDER] NAME`: another model for the next request on.
    Model,
    /// `/diff`: what the last prompt that changed files changed (what `/undo` reverts).
    Diff,
    /// `/agents`: the child agents and their conversations.
    Agents,
    /// `/sandbox`: where commands run, and what of the environment they do not get.
    Sandbox,
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
        "edit the board: add TEXT, done/undo/rm N, edit N TEXT, move N POS, check N [CMD] \
         (N: the item's id)",
    ),
    (
        "/plan",
        Slash::Plan,
        "plan mode on or off (Shift+Tab): the model reads and plans, changes nothing",
    ),
    ("/approve", Slash::Approve, "approve the plan on the board: the model carries it out"),
    (
        "/approval",
        Slash::Approval,
        "the approval mode, children too: /approval ask|auto|read-only (alone: which one)",
    ),
    ("/undo", Slash::Undo, "restore the files the last turn changed"),
    ("/diff", Slash::Diff, "show what the last turn changed in the workspace (what /undo reverts)"),
    (
        "/model",
        Slash::Model,
        "switch model for the next request on: /model NAME, /model PROVIDER NAME (alone: which one)",
    ),
    (
        "/compact",
        Slash::Compact,
        "summarise the work so far for the model (the board and your requests stay)",
    ),
    (
        "/resume",
        Slash::Resume,
        "switch to another saved session of this workspace, from a list (between turns)",
    ),
    (
        "/sandbox",
        Slash::Sandbox,
        "where commands run, and which of your environment's variables they do not get",
    ),
    ("/mcp", Slash::Mcp, "list the MCP servers, their state and their tools"),
    (
        "/hooks",
        Slash::Hooks,
        "list the hooks and what ran; trust: run the workspace's as they are now; forget",
    ),
    (
        "/agents",
        Slash::Agents,
        "the child agents (task): each one's conversation, what it runs, what it spent",
    ),
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

/// `/clear /todos /todo /plan /approve /approval /undo /diff /model /compact /resume /sandbox /mcp
/// /hooks /agents /demo /help /quit`.
pub fn names() -> String {
    SLASH_COMMANDS.iter().map(|(name, _, _)| *name).collect::<Vec<_>>().join(" ")
}

/// What Tab makes of `typed` in the composer: a slash command's name typed in part, completed —
/// whole (with a space to go on) when one command fits, else as far as every fitting one agrees.
/// `None`: nothing to complete (not a command name being typed, or no further to go).
pub fn complete(typed: &str) -> Option<String> {
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return None;
    }
    let fitting: Vec<&str> = SLASH_COMMANDS
        .iter()
        .map(|(name, ..)| *name)
        .filter(|name| name.starts_with(typed))
        .collect();
    match fitting.as_slice() {
        [] => None,
        [only] => Some(format!("{only} ")),
        [first, rest @ ..] => {
            let agreed = rest.iter().fold(first.len(), |length, name| {
                first.bytes().zip(name.bytes()).take(length).take_while(|(a, b)| a == b).count()
            });
            // An exact name that is also the start of a longer one (`/todo`, `/todos`) is done.
            match first.get(..agreed) {
                Some(prefix) if prefix.len() > typed.len() => Some(prefix.to_owned()),
                _ if fitting.contains(&typed) => Some(format!("{typed} ")),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_completes_a_command_name() {
        assert_eq!(complete("/comp").as_deref(), Some("/compact "));
        assert_eq!(complete("/to").as_deref(), Some("/todo"), "/todo and /todos agree so far");
        assert_eq!(complete("/todo").as_deref(), Some("/todo "));
        assert_eq!(complete("/nope"), None);
        assert_eq!(complete("/clear now"), None, "only a name being typed");
        assert_eq!(complete("fix /cl"), None);
    }

    #[test]
    fn commands_are_recognised() {
        assert_eq!(parse("/clear"), Parsed::Command(Slash::Clear));
        assert_eq!(parse("  /TODOS  "), Parsed::Command(Slash::Todos));
        assert_eq!(parse("/exit"), Parsed::Command(Slash::Quit));
        assert_eq!(parse("/compact"), Parsed::Command(Slash::Compact));
        assert_eq!(parse("/todo done 2"), Parsed::Command(Slash::Todo));
        assert_eq!(parse("/Plan"), Parsed::Command(Slash::Plan));
        assert_eq!(parse("/resume"), Parsed::Command(Slash::Resume));
        assert_eq!(parse("/nope"), Parsed::Unknown("/nope".into()));
    }

    #[test]
    fn paths_and_plain_text_are_prompts() {
        assert_eq!(parse("/usr/bin is broken"), Parsed::Prompt);
        assert_eq!(parse("fix /clear handling"), Parsed::Prompt);
        assert_eq!(parse("/"), Parsed::Prompt);
    }
}
