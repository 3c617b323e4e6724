//! The events keel fires hooks at, one line each: its name as the config spells it (Claude
//! Code's), what a hook's matcher is matched against, and how much a hook may hold up.
//!
//! A new event is one more line in the table below (and a call where it happens):

use serde::Serialize;

/// What a matcher of an event is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchOn {
    /// The tool's name: keel's (`bash`) or Claude Code's (`Bash`), either matching.
    Tool,
    /// A word the event gives: how a session started (`startup`, `resume`, `clear`), what
    /// started a compaction (`manual`, `auto`).
    Value,
    /// Nothing: every hook of the event runs, whatever its matcher says.
    Nothing,
}

/// How much a hook of an event may hold up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// It cannot block: what it says on exit 2 is shown to the person.
    Watches,
    /// Exit 2 or `decision: "block"` blocks; a hook that fails is shown, and what it guards
    /// goes on.
    Blocks,
    /// As `Blocks`, and a hook that cannot start, is killed or times out blocks too.
    FailsClosed,
}

macro_rules! events {
    ($($(#[doc = $doc:literal])* $name:ident: $on:ident, $guard:ident;)*) => {
        /// An event hooks run at.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum Event {
            $($(#[doc = $doc])* $name,)*
        }

        impl Event {
            /// Every event, in the order `/hooks` lists them.
            pub const ALL: &[Event] = &[$(Event::$name,)*];

            /// The name the config and the hook's input (`hook_event_name`) use.
            pub fn name(self) -> &'static str {
                match self {
                    $(Event::$name => stringify!($name),)*
                }
            }

            /// What the event's matchers are matched against.
            pub fn match_on(self) -> MatchOn {
                match self {
                    $(Event::$name => MatchOn::$on,)*
                }
            }

            /// How much its hooks may hold up.
            pub fn guard(self) -> Guard {
                match self {
                    $(Event::$name => Guard::$guard,)*
                }
            }
        }
    };
}

events! {
    /// A session starts, is resumed or cleared; matched against `source`.
    SessionStart: Value, Watches;
    /// The person sent a prompt, before the model sees it.
    UserPromptSubmit: Nothing, Blocks;
    /// A tool call is about to be approved and run.
    PreToolUse: Tool, FailsClosed;
    /// A tool call ran.
    PostToolUse: Tool, Blocks;
    /// The model answered without asking for a tool: the turn would end.
    Stop: Nothing, Blocks;
    /// The history is about to be compacted; matched against `trigger`.
    PreCompact: Value, Watches;
    /// A board item is about to become completed.
    TaskCompleted: Nothing, FailsClosed;
    /// A child agent (`task`) answered without asking for a tool: its turn would end.
    SubagentStop: Nothing, Blocks;
}

impl Event {
    /// The event a config names, if keel fires one by that name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|event| event.name() == name)
    }

    /// Whether plain text a hook prints (not JSON) is added to what the model reads.
    pub fn stdout_is_context(self) -> bool {
        matches!(self, Self::SessionStart | Self::UserPromptSubmit)
    }

    /// Whether what it guards may be stopped by its hooks.
    pub fn can_block(self) -> bool {
        self.guard() != Guard::Watches
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_parses_by_its_own_name_and_the_guarded_ones_fail_closed() {
        for event in Event::ALL {
            assert_eq!(Event::parse(event.name()), Some(*event));
        }
        assert_eq!(Event::parse("pre_tool_use"), None);
        assert_eq!(Event::PreToolUse.guard(), Guard::FailsClosed);
        assert_eq!(Event::TaskCompleted.guard(), Guard::FailsClosed);
        assert!(!Event::SessionStart.can_block() && !Event::PreCompact.can_block());
        assert!(Event::Stop.can_block() && Event::PostToolUse.can_block());
    }
}
