//! The context window's settings: the model family's figure unless `--context-window` or
//! `context_window` sets one, a window too small for `max_tokens` refused, and `compact_at`
//! kept within (0, 1], the workspace's over the user's. `context_window`'s precedence over the
//! other sources is in `config.rs`'s table.

use keel::agent::ApprovalMode;
use keel::config::{self, FileSettings, FlagSettings};
use std::path::Path;

fn env_of(_name: &str) -> Option<String> {
    None
}

fn parse(name: &str, text: &str) -> FileSettings {
    config::parse_file(Path::new(name), text).unwrap()
}

#[test]
fn the_window_follows_the_model_unless_set_and_must_leave_room() {
    let merged = |flags: FlagSettings, user: &str| {
        config::merge(
            &flags,
            &env_of,
            &FileSettings::default(),
            &parse("user.toml", user),
            ApprovalMode::Ask,
        )
    };
    let model = |name: &str| FlagSettings { model: Some(name.into()), ..FlagSettings::default() };
    let gpt4o = merged(model("gpt-4o-mini"), "").unwrap();
    assert_eq!((gpt4o.context_window, gpt4o.context_window_set), (128_000, false));
    let unknown = merged(model("my-local-model"), "").unwrap();
    assert_eq!(unknown.context_window, config::DEFAULT_CONTEXT_WINDOW);
    let set = merged(model("gpt-4o"), "context_window = 32000\n").unwrap();
    assert_eq!((set.context_window, set.context_window_set), (32_000, true));
    let small = FlagSettings { context_window: Some(8192), ..FlagSettings::default() };
    let err = merged(small, "").unwrap_err().to_string();
    assert!(err.contains("context_window 8192") && err.contains("max_tokens 8192"), "{err}");
    assert!(err.contains("--context-window") && err.contains("--max-tokens"), "{err}");
    for bad in
        ["compact_at = 0.0\n", "compact_at = 1.5\n", "compact_at = -0.2\n", "compact_at = nan\n"]
    {
        let err = merged(FlagSettings::default(), bad).unwrap_err().to_string();
        assert!(err.contains("must be above 0 and at most 1"), "{bad}: {err}");
    }
    assert_eq!(merged(FlagSettings::default(), "compact_at = 1.0\n").unwrap().compact_at, 1.0);
}

#[test]
fn compact_at_is_the_workspaces_over_the_users_else_four_fifths() {
    let merged = |project: &str, user: &str| {
        config::merge(
            &FlagSettings::default(),
            &env_of,
            &parse("project.toml", project),
            &parse("user.toml", user),
            ApprovalMode::Ask,
        )
        .unwrap()
        .compact_at
    };
    assert_eq!(merged("", ""), 0.8);
    assert_eq!(merged("", "compact_at = 0.6\n"), 0.6);
    assert_eq!(merged("compact_at = 0.5\n", "compact_at = 0.6\n"), 0.5);
}
