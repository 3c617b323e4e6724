//! `[hooks]` in keel's config, in Claude Code's nesting: per event, a list of matcher groups,
//! each a `matcher` and its `hooks`:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "Bash|write_file"
//! hooks = [{ type = "command", command = "./check.sh", timeout = 30 }]
//! ```
//!
//! A matcher is matched against the tool's name, keel's or Claude Code's (`names`): none, `""`
//! or `*` matches every tool; names with `|` between them match exactly those; anything else is
//! a regular expression found anywhere in the name (Claude Code's rule). `timeout` is in
//! seconds. Checked here into [`HookSpec`]s: an event keel does not fire, a hook that is not a
//! command, or a matcher that is not a regex is an error naming it, never silently dropped.

use super::events::{Event, MatchOn};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a hook may run when its config does not say (Claude Code's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The only kind of hook keel runs.
const COMMAND: &str = "command";

/// `[hooks]` as written: matcher groups by event name.
pub type HooksConfig = BTreeMap<String, Vec<MatcherGroup>>;

/// One `{matcher, hooks}` group as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatcherGroup {
    pub matcher: Option<String>,
    #[serde(default)]
    pub hooks: Vec<HookEntry>,
}

/// One `{type, command, timeout}` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    /// Seconds.
    pub timeout: Option<f64>,
}

/// Whose file a hook comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The person's own config: it runs.
    Person,
    /// The workspace's `.keel/config.toml`: it runs once the person trusts it.
    Workspace,
}

/// One hook, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSpec {
    pub event: Event,
    pub matcher: Matcher,
    /// The shell line run with `bash -c`.
    pub command: String,
    pub timeout: Duration,
    pub origin: Origin,
}

/// What a matcher matches.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// As written; `None` when there was none.
    pub text: Option<String>,
    rule: Rule,
}

#[derive(Debug, Clone)]
enum Rule {
    Any,
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Matcher {
    /// The matcher `text` stands for, or why it is not one.
    pub fn parse(text: Option<&str>) -> Result<Self, String> {
        let rule = match text.map(str::trim) {
            None | Some("" | "*") => Rule::Any,
            Some(simple)
                if simple.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|') =>
            {
                Rule::Names(
                    simple.split('|').filter(|n| !n.is_empty()).map(str::to_owned).collect(),
                )
            }
            Some(pattern) => Rule::Regex(
                regex::Regex::new(pattern).map_err(|err| format!("is not a regex: {err}"))?,
            ),
        };
        Ok(Self { text: text.map(str::to_owned), rule })
    }

    /// Whether any of `names` (a tool's names, or an event's word) is matched.
    pub fn matches(&self, names: &[&str]) -> bool {
        match &self.rule {
            Rule::Any => true,
            Rule::Names(wanted) => names.iter().any(|name| wanted.iter().any(|w| w == name)),
            Rule::Regex(regex) => names.iter().any(|name| regex.is_match(name)),
        }
    }
}

/// The hooks of one file, checked, in the file's order; or what is wrong, naming where.
pub fn check(config: &HooksConfig, origin: Origin) -> Result<Vec<HookSpec>, String> {
    let mut specs = Vec::new();
    for (name, groups) in config {
        let event = Event::parse(name).ok_or_else(|| {
            let known: Vec<&str> = Event::ALL.iter().map(|event| event.name()).collect();
            format!("hooks.{name}: keel fires no such event (it fires {})", known.join(", "))
        })?;
        for (g, group) in groups.iter().enumerate() {
            let at = format!("hooks.{name}[{g}]");
            // Events with nothing to match run every hook, as in Claude Code.
            let written = match event.match_on() {
                MatchOn::Nothing => None,
                MatchOn::Tool | MatchOn::Value => group.matcher.as_deref(),
            };
            let matcher = Matcher::parse(written)
                .map_err(|why| format!("{at}.matcher {:?} {why}", written.unwrap_or_default()))?;
            if group.hooks.is_empty() {
                return Err(format!(
                    "{at}: no hooks (give hooks = [{{ type = \"command\", command = \"…\" }}])"
                ));
            }
            for (h, entry) in group.hooks.iter().enumerate() {
                let at = format!("{at}.hooks[{h}]");
                specs.push(check_entry(entry, &at, event, &matcher, origin)?);
            }
        }
    }
    Ok(specs)
}

fn check_entry(
    entry: &HookEntry,
    at: &str,
    event: Event,
    matcher: &Matcher,
    origin: Origin,
) -> Result<HookSpec, String> {
    match entry.kind.as_deref() {
        Some(COMMAND) => {}
        Some(other) => {
            return Err(format!("{at}: type {other:?}: keel runs only hooks of type \"command\""));
        }
        None => return Err(format!("{at}: needs type = \"command\"")),
    }
    let command = entry.command.as_deref().map(str::trim).unwrap_or_default();
    if command.is_empty() {
        return Err(format!("{at}: needs a command"));
    }
    let timeout = match entry.timeout {
        None => DEFAULT_TIMEOUT,
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
            Duration::try_from_secs_f64(seconds).map_err(|err| format!("{at}.timeout: {err}"))?
        }
        Some(seconds) => {
            return Err(format!("{at}.timeout {seconds} must be a number of seconds above 0"));
        }
    };
    Ok(HookSpec { event, matcher: matcher.clone(), command: command.to_owned(), timeout, origin })
}

#[cfg(test)]
impl HookSpec {
    /// A PreToolUse hook of `origin` running `command` for every tool, for tests.
    pub(crate) fn for_test(command: &str, origin: Origin) -> Self {
        let matcher = Matcher::parse(None).expect("no matcher matches every tool");
        let timeout = Duration::from_secs(5);
        Self { event: Event::PreToolUse, matcher, command: command.into(), timeout, origin }
    }
}

/// Where a file's hooks are reported from, for messages.
pub fn describe_origin(origin: Origin) -> &'static str {
    match origin {
        Origin::Person => "your config",
        Origin::Workspace => "the workspace's .keel/config.toml",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<HookSpec>, String> {
        #[derive(Deserialize)]
        struct File {
            hooks: HooksConfig,
        }
        let file: File = toml::from_str(text).map_err(|err| err.to_string())?;
        check(&file.hooks, Origin::Person)
    }

    #[test]
    fn claude_codes_nesting_reads_and_matchers_follow_its_rules() {
        let specs = parse(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash|Write\"\nhooks = [{ type = \"command\", \
             command = \"./a.sh\", timeout = 2 }]\n[[hooks.PreToolUse]]\nmatcher = \"mcp__.*\"\n\
             hooks = [{ type = \"command\", command = \"b\" }]\n[[hooks.Stop]]\nmatcher = \"(\"\n\
             hooks = [{ type = \"command\", command = \"c\", timeout = 0.5 }]",
        )
        .unwrap();
        assert_eq!(specs.len(), 3);
        assert_eq!(specs[0].timeout, Duration::from_secs(2));
        assert!(specs[0].matcher.matches(&["bash", "Bash"]));
        assert!(!specs[0].matcher.matches(&["bash_x", "Bashful"]), "names match exactly");
        assert!(specs[1].matcher.matches(&["mcp__fs__read"]));
        assert!(!specs[1].matcher.matches(&["read_file", "Read"]));
        assert_eq!(specs[1].timeout, DEFAULT_TIMEOUT);
        // Stop has nothing to match: its matcher is not even read.
        assert!(specs[2].matcher.matches(&[]));
        assert_eq!(specs[2].timeout, Duration::from_millis(500));
    }

    #[test]
    fn mistakes_are_named_where_they_are() {
        let hook =
            |event: &str, rest: &str| parse(&format!("[[hooks.{event}]]\n{rest}")).unwrap_err();
        let command = "hooks = [{ type = \"command\", command = \"x\" }]";
        assert!(hook("Notification", command).contains("keel fires no such event"));
        assert!(hook("PreToolUse", &format!("matcher = \"(\"\n{command}")).contains("not a regex"));
        let prompt = "hooks = [{ type = \"prompt\", command = \"x\" }]";
        assert!(hook("Stop", prompt).contains("only hooks of type \"command\""));
        assert!(hook("Stop", "hooks = [{ type = \"command\" }]").contains("needs a command"));
        let zero = "hooks = [{ type = \"command\", command = \"x\", timeout = 0 }]";
        assert!(hook("Stop", zero).contains("above 0"));
        assert!(parse("[[hooks.Stop]]\nhook = []").is_err(), "unknown keys are refused");
    }
}
