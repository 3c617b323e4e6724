//! The hooks as the person reads them: what is configured, from whose file, whether it runs
//! and where (in the sandbox, or as the person's own program), and what ran — for `/hooks` in
//! keel's screen and `keel hooks list`.

use super::config::{HookSpec, Origin, describe_origin};
use super::place::Place;
use super::protocol::Verdict;
use super::run::seconds;
use super::trust::Trust;
use super::{Event, HOW_TO_TRUST, Ran};
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

/// The most of what a hook said that one listed run shows.
const SAID_CHARS: usize = 120;

/// How one run of a hook went, for the person and `keel -p`'s `hook` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and let what it guards go on.
    Ok,
    /// It blocked what it guards.
    Blocked,
    /// It failed; what it guards went on.
    Failed,
}

impl Outcome {
    pub fn of(verdict: &Verdict) -> Self {
        match verdict {
            Verdict::Fine => Self::Ok,
            Verdict::Blocked(_) => Self::Blocked,
            Verdict::Failed(_) => Self::Failed,
        }
    }
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq)]
pub struct HookLine {
    pub event: Event,
    pub matcher: Option<String>,
    pub command: String,
    pub timeout: Duration,
    pub origin: Origin,
    pub trust: Trust,
    /// Where it runs when it does.
    pub place: Place,
}

impl HookLine {
    pub fn of(spec: &HookSpec, trust: Trust, place: Place) -> Self {
        Self {
            event: spec.event,
            matcher: spec.matcher.text.clone(),
            command: spec.command.clone(),
            timeout: spec.timeout,
            origin: spec.origin,
            trust,
            place,
        }
    }
}

/// One run of a hook.
#[derive(Debug, Clone, PartialEq)]
pub struct RanLine {
    pub event: Event,
    pub command: String,
    pub outcome: Outcome,
    /// What it said: the reason it blocked, how it failed.
    pub said: String,
    pub took: Duration,
}

impl RanLine {
    pub fn of(ran: &Ran) -> Self {
        let said = match &ran.reply.verdict {
            Verdict::Blocked(text) | Verdict::Failed(text) => text.clone(),
            Verdict::Fine => String::new(),
        };
        Self {
            event: ran.event,
            command: ran.command.clone(),
            outcome: Outcome::of(&ran.reply.verdict),
            said,
            took: ran.took,
        }
    }
}

/// The hooks and the newest runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HooksView {
    pub hooks: Vec<HookLine>,
    pub ran: Vec<RanLine>,
}

/// The listing: every hook, then (with `runs`) what ran, newest last.
pub fn render(view: &HooksView, runs: bool) -> String {
    if view.hooks.is_empty() {
        return "No hooks are configured. Add [[hooks.EVENT]] groups to your config \
                (~/.config/keel/config.toml); the events are in docs/hooks.md."
            .to_owned();
    }
    let mut out = String::from("Hooks:\n");
    for hook in &view.hooks {
        let matcher =
            hook.matcher.as_deref().map(|m| format!(" matcher {m:?}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}{matcher}: {} (timeout {}) — {}, {}{}",
            hook.event,
            crate::visible::one_line(&hook.command),
            seconds(hook.timeout),
            describe_origin(hook.origin),
            trust_words(hook.trust),
            place_words(hook),
        );
    }
    if view.hooks.iter().any(|hook| !hook.trust.runs()) {
        let _ = writeln!(out, "Trust the workspace's hooks with {HOW_TO_TRUST}.");
    }
    if !runs {
        return out.trim_end().to_owned();
    }
    if view.ran.is_empty() {
        out.push_str("None has run yet.");
        return out;
    }
    out.push_str("Ran (newest last):\n");
    for ran in &view.ran {
        let outcome = match ran.outcome {
            Outcome::Ok => "ok",
            Outcome::Blocked => "blocked",
            Outcome::Failed => "failed",
        };
        let said = if ran.said.is_empty() {
            String::new()
        } else {
            let line = crate::visible::one_line(&ran.said);
            let cut: String = line.chars().take(SAID_CHARS).collect();
            let more = if cut.len() < line.len() { "…" } else { "" };
            format!(": {cut}{more}")
        };
        let _ = writeln!(
            out,
            "  {} {} — {outcome} in {}{said}",
            ran.event,
            crate::visible::one_line(&ran.command),
            seconds(ran.took),
        );
    }
    out.trim_end().to_owned()
}

/// Where a hook that runs does: in the sandbox (saying why for one of the person's), or as
/// their own program.
fn place_words(hook: &HookLine) -> &'static str {
    match (hook.trust.runs(), hook.place, hook.origin) {
        (false, _, _) => "",
        (true, Place::Sandbox, Origin::Workspace) => " in the sandbox, as commands do",
        (true, Place::Sandbox, Origin::Person) => {
            " in the sandbox, as commands do, since it names a path in the workspace"
        }
        (true, Place::Person, _) => " as your own program, outside the sandbox",
    }
}

fn trust_words(trust: Trust) -> &'static str {
    match trust {
        Trust::Own => "runs",
        Trust::Trusted => "trusted, runs",
        Trust::Untrusted => "NOT TRUSTED, does not run",
        Trust::Changed => "CHANGED since you trusted it, does not run",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_each_hook_its_source_and_whether_it_runs() {
        let hook = |command: &str, origin, trust, place| HookLine {
            event: Event::PreToolUse,
            matcher: Some("Bash".into()),
            command: command.into(),
            timeout: Duration::from_secs(60),
            origin,
            trust,
            place,
        };
        let view = HooksView {
            hooks: vec![
                hook("~/mine.sh", Origin::Person, Trust::Own, Place::Person),
                hook("./theirs.sh", Origin::Workspace, Trust::Untrusted, Place::Sandbox),
                hook("./ours.sh", Origin::Workspace, Trust::Trusted, Place::Sandbox),
                hook("./mine-here.sh", Origin::Person, Trust::Own, Place::Sandbox),
            ],
            ran: vec![RanLine {
                event: Event::PreToolUse,
                command: "~/mine.sh".into(),
                outcome: Outcome::Blocked,
                said: "not on main".into(),
                took: Duration::from_millis(12),
            }],
        };
        let text = render(&view, true);
        assert!(
            text.contains(
                "PreToolUse matcher \"Bash\": ~/mine.sh (timeout 60 s) — your config, runs as \
                 your own program, outside the sandbox\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "./theirs.sh (timeout 60 s) — the workspace's .keel/config.toml, NOT TRUSTED, \
                 does not run\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "./ours.sh (timeout 60 s) — the workspace's .keel/config.toml, \
                 trusted, runs in the sandbox, as commands do\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "./mine-here.sh (timeout 60 s) — your config, runs in the sandbox, as \
                 commands do, since it names a path in the workspace\n"
            ),
            "{text}"
        );
        assert!(text.contains("/hooks trust"), "{text}");
        assert!(text.contains("PreToolUse ~/mine.sh — blocked in 12 ms: not on main"), "{text}");
    }
}
