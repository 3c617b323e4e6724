//! Configuration as tables: the precedence of every key over every source (flags > environment >
//! the workspace's file > the user's file > defaults), what the workspace's file may not set, and
//! every flag's way into the settings. Files on disk are `config_files.rs`; the abuse, tried with
//! the real binary, is `config_trust.rs`.

use clap::Parser;
use keel::agent::{ApprovalMode, NagThreshold};
use keel::cli::Cli;
use keel::config::{
    self, ApprovalSource, Config, DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL, FileSettings, FlagSettings, Ignored,
    PROJECT_CONFIG,
};
use keel::headless::OutputFormat;
use keel::llm::WireFormat;
use std::collections::HashMap;
use std::path::Path;

/// Everything a setting can come from.
#[derive(Debug, Clone, Default)]
struct Setup {
    flags: FlagSettings,
    env: Vec<(&'static str, &'static str)>,
    project: String,
    user: String,
}

fn env_of(pairs: &[(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> =
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |name| map.get(name).cloned()
}

fn parse(name: &str, text: &str) -> FileSettings {
    config::parse_file(Path::new(name), text).unwrap()
}

impl Setup {
    fn merged(&self, default_approval: ApprovalMode) -> Config {
        let (project, user) =
            (parse("project.toml", &self.project), parse("user.toml", &self.user));
        config::merge(&self.flags, &env_of(&self.env), &project, &user, default_approval).unwrap()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Flag,
    Env,
    Project,
    User,
}

/// How one source sets a key.
type SetBy = fn(&mut Setup);
/// How a key's value reads back from the settings.
type Read = fn(&Config) -> String;

/// One key: how each source sets it (in precedence order) to a value of its own, what that value
/// reads back as, and what it is with no source at all.
struct Key {
    name: &'static str,
    layers: Vec<(Layer, SetBy, &'static str)>,
    default: &'static str,
    read: Read,
}

fn keys() -> Vec<Key> {
    use Layer::{Env, Flag, Project, User};
    vec![
        Key {
            name: "model",
            layers: vec![
                (Flag, |s| s.flags.model = Some("flag-model".into()), "flag-model"),
                (Env, |s| s.env.push(("KEEL_MODEL", "env-model")), "env-model"),
                (Project, |s| s.project.push_str("model = \"project-model\"\n"), "project-model"),
                (User, |s| s.user.push_str("model = \"user-model\"\n"), "user-model"),
            ],
            default: DEFAULT_ANTHROPIC_MODEL,
            read: |c| c.model.clone(),
        },
        Key {
            // Two providers only: the layers alternate so that each one shows.
            name: "provider",
            layers: vec![
                (Flag, |s| s.flags.provider = Some(WireFormat::OpenAi), "OpenAi"),
                (Env, |s| s.env.push(("KEEL_PROVIDER", "anthropic")), "Anthropic"),
                (User, |s| s.user.push_str("provider = \"openai\"\n"), "OpenAi"),
            ],
            default: "None",
            read: |c| c.provider.map_or("None".into(), |p| format!("{p:?}")),
        },
        Key {
            name: "base_url",
            layers: vec![
                (Flag, |s| s.flags.base_url = Some("http://flag".into()), "http://flag"),
                (Env, |s| s.env.push(("ANTHROPIC_BASE_URL", "http://env")), "http://env"),
                (User, |s| s.user.push_str("base_url = \"http://user\"\n"), "http://user"),
            ],
            default: DEFAULT_ANTHROPIC_BASE_URL,
            read: |c| c.base_url.clone(),
        },
        Key {
            name: "api_key",
            layers: vec![
                (Env, |s| s.env.push(("ANTHROPIC_API_KEY", "env-key")), "env-key"),
                (User, |s| s.user.push_str("api_key = \"user-key\"\n"), "user-key"),
            ],
            default: "None",
            read: |c| c.api_key.clone().unwrap_or_else(|| "None".into()),
        },
        Key {
            name: "max_tokens",
            layers: vec![
                (Flag, |s| s.flags.max_tokens = Some(1), "1"),
                (Project, |s| s.project.push_str("max_tokens = 2\n"), "2"),
                (User, |s| s.user.push_str("max_tokens = 3\n"), "3"),
            ],
            default: "8192",
            read: |c| c.max_tokens.to_string(),
        },
        Key {
            name: "thinking_budget",
            layers: vec![
                (Flag, |s| s.flags.thinking_budget = Some(2048), "Some(2048)"),
                (Project, |s| s.project.push_str("thinking_budget = 3000\n"), "Some(3000)"),
                (User, |s| s.user.push_str("thinking_budget = 4000\n"), "Some(4000)"),
            ],
            default: "None",
            read: |c| format!("{:?}", c.thinking_budget),
        },
        Key {
            // 0 turns the reminder off: a flag of 0 must win, not read as "unset".
            name: "nag_threshold",
            layers: vec![
                (Flag, |s| s.flags.nag_threshold = Some(NagThreshold::Fixed(0)), "0"),
                (Project, |s| s.project.push_str("nag_threshold = \"auto\"\n"), "auto"),
                (User, |s| s.user.push_str("nag_threshold = 7\n"), "7"),
            ],
            default: "3",
            read: |c| c.nag_threshold.to_string(),
        },
        Key {
            // A workspace may not set it (keel's own voice): see tests/config_voice.rs.
            name: "nag_message",
            layers: vec![(User, |s| s.user.push_str("nag_message = \"user\"\n"), "user")],
            default: keel::agent::DEFAULT_NAG_MESSAGE,
            read: |c| c.nag_message.clone(),
        },
        Key {
            name: "max_rounds",
            layers: vec![
                (Flag, |s| s.flags.max_rounds = Some(11), "11"),
                (Project, |s| s.project.push_str("max_rounds = 12\n"), "12"),
                (User, |s| s.user.push_str("max_rounds = 13\n"), "13"),
            ],
            default: "100",
            read: |c| c.max_rounds.to_string(),
        },
        Key {
            name: "context_window",
            layers: vec![
                (Flag, |s| s.flags.context_window = Some(100_000), "100000"),
                (Project, |s| s.project.push_str("context_window = 90000\n"), "90000"),
                (User, |s| s.user.push_str("context_window = 80000\n"), "80000"),
            ],
            // The default model's family's.
            default: "200000",
            read: |c| c.context_window.to_string(),
        },
        Key {
            // The project's value is stricter than the user's, so precedence alone decides.
            name: "approval",
            layers: vec![
                (Flag, |s| s.flags.approval = Some(ApprovalMode::ReadOnly), "ReadOnly"),
                (Project, |s| s.project.push_str("approval = \"ask\"\n"), "Ask"),
                (User, |s| s.user.push_str("approval = \"auto\"\n"), "Auto"),
            ],
            default: "Ask",
            read: |c| format!("{:?}", c.approval),
        },
    ]
}

#[test]
fn every_key_takes_its_value_from_the_highest_source_that_sets_it() {
    for key in keys() {
        let read = |setup: &Setup| (key.read)(&setup.merged(ApprovalMode::Ask));
        assert_eq!(read(&Setup::default()), key.default, "{}: the default", key.name);
        for (index, (layer, _, expected)) in key.layers.iter().enumerate() {
            // This source and every one below it: this one wins.
            let mut setup = Setup::default();
            for (_, set, _) in &key.layers[index..] {
                set(&mut setup);
            }
            assert_eq!(read(&setup), *expected, "{}: {layer:?} over the sources below", key.name);
            // This source alone.
            let mut alone = Setup::default();
            (key.layers[index].1)(&mut alone);
            assert_eq!(read(&alone), *expected, "{}: {layer:?} alone", key.name);
        }
    }
}

#[test]
fn the_providers_own_variables_and_defaults_follow_the_provider() {
    let openai = |env: Vec<(&'static str, &'static str)>| {
        Setup { env, ..Setup::default() }.merged(ApprovalMode::Ask)
    };
    let config = openai(vec![("OPENAI_API_KEY", "sk")]);
    assert_eq!(config.provider, Some(WireFormat::OpenAi), "the provider whose key is set");
    assert_eq!(config.api_key.as_deref(), Some("sk"));
    assert_eq!(
        (config.base_url.as_str(), config.model.as_str()),
        (DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL)
    );
    let config = openai(vec![
        ("KEEL_PROVIDER", "openai"),
        ("ANTHROPIC_API_KEY", "ant"),
        ("ANTHROPIC_BASE_URL", "http://anthropic"),
        ("OPENAI_BASE_URL", "http://openai/v1"),
    ]);
    assert_eq!(config.base_url, "http://openai/v1", "OpenAI reads OPENAI_BASE_URL only");
    assert_eq!(config.api_key, None, "nor is the Anthropic key sent to it");
    let config = openai(vec![("ANTHROPIC_API_KEY", "ant"), ("OPENAI_API_KEY", "sk")]);
    assert_eq!(config.provider, Some(WireFormat::Anthropic), "both keys: Anthropic first");
    let config = openai(vec![("ANTHROPIC_API_KEY", "  "), ("KEEL_MODEL", "")]);
    assert_eq!(
        (config.api_key, config.model.as_str()),
        (None, DEFAULT_ANTHROPIC_MODEL),
        "blank is unset"
    );
}

#[test]
fn a_bad_provider_variable_is_an_error() {
    let err = config::merge(
        &FlagSettings::default(),
        &env_of(&[("KEEL_PROVIDER", "gemini")]),
        &FileSettings::default(),
        &FileSettings::default(),
        ApprovalMode::Ask,
    )
    .unwrap_err();
    assert!(err.to_string().contains("KEEL_PROVIDER=\"gemini\""), "{err}");
}

// ---- What the workspace's file may not set ----

#[test]
fn the_workspace_file_cannot_choose_the_provider_its_url_or_its_key() {
    let project = "provider = \"openai\"\nbase_url = \"http://evil\"\napi_key = \"evil-key\"\n";
    for (case, env, user) in [
        ("over nothing", vec![], ""),
        (
            "over the environment",
            vec![("ANTHROPIC_API_KEY", "env-key"), ("ANTHROPIC_BASE_URL", "http://env")],
            "",
        ),
        ("over the user's file", vec![], "api_key = \"user-key\"\nbase_url = \"http://user\"\n"),
    ] {
        let config = Setup { env, project: project.into(), user: user.into(), ..Setup::default() }
            .merged(ApprovalMode::Ask);
        assert_ne!(config.provider, Some(WireFormat::OpenAi), "{case}");
        assert_ne!(config.base_url, "http://evil", "{case}");
        assert_ne!(config.api_key.as_deref(), Some("evil-key"), "{case}");
        assert_eq!(
            config.ignored,
            [Ignored::Key("provider"), Ignored::Key("base_url"), Ignored::Key("api_key")],
            "{case}"
        );
        let notice = config.ignored_notice().unwrap();
        for key in ["`provider`", "`base_url`", "`api_key`", PROJECT_CONFIG] {
            assert_eq!(notice.matches(key).count(), 1, "{case}: {key} once in: {notice}");
        }
    }
}

#[test]
fn a_workspace_key_alone_does_not_make_a_provider() {
    let config =
        Setup { project: "api_key = \"k\"\n".into(), ..Setup::default() }.merged(ApprovalMode::Ask);
    assert_eq!((config.provider, config.api_key), (None, None));
}

#[test]
fn the_workspace_file_may_tighten_approvals_but_never_loosen_them() {
    use ApprovalMode::{Ask, Auto, ReadOnly};
    // (front end's default, user's file, flag, workspace's file) -> (mode, where from, ignored?)
    let cases = [
        (Ask, None, None, Some(Auto), Ask, ApprovalSource::Default, true),
        (Ask, None, None, Some(ReadOnly), ReadOnly, ApprovalSource::ProjectFile, false),
        (Ask, None, None, Some(Ask), Ask, ApprovalSource::Default, false),
        (Auto, None, None, Some(Ask), Ask, ApprovalSource::ProjectFile, false),
        (Auto, None, None, Some(ReadOnly), ReadOnly, ApprovalSource::ProjectFile, false),
        (Auto, None, None, Some(Auto), Auto, ApprovalSource::Default, false),
        (Ask, Some(ReadOnly), None, Some(Ask), ReadOnly, ApprovalSource::UserFile, true),
        (Ask, Some(Auto), None, Some(Ask), Ask, ApprovalSource::ProjectFile, false),
        (Ask, Some(Ask), None, Some(Auto), Ask, ApprovalSource::UserFile, true),
        (Auto, Some(ReadOnly), None, Some(Auto), ReadOnly, ApprovalSource::UserFile, true),
        // The flag is the person's own: the workspace may tighten it too, never loosen it.
        (Ask, None, Some(ReadOnly), Some(Auto), ReadOnly, ApprovalSource::Flag, true),
        (Ask, None, Some(Auto), Some(ReadOnly), ReadOnly, ApprovalSource::ProjectFile, false),
        (Ask, Some(ReadOnly), Some(Auto), Some(Ask), Ask, ApprovalSource::ProjectFile, false),
        (Ask, Some(Auto), Some(Ask), Some(Auto), Ask, ApprovalSource::Flag, true),
        (Ask, None, None, None, Ask, ApprovalSource::Default, false),
        (Auto, None, None, None, Auto, ApprovalSource::Default, false),
    ];
    let name = |mode: ApprovalMode| match mode {
        Ask => "ask",
        Auto => "auto",
        ReadOnly => "read-only",
    };
    for (default, user, flag, project, mode, source, ignored) in cases {
        let case =
            format!("default {default:?}, user {user:?}, flag {flag:?}, project {project:?}");
        let setup = Setup {
            flags: FlagSettings { approval: flag, ..FlagSettings::default() },
            user: user.map(|m| format!("approval = \"{}\"\n", name(m))).unwrap_or_default(),
            project: project.map(|m| format!("approval = \"{}\"\n", name(m))).unwrap_or_default(),
            ..Setup::default()
        };
        let config = setup.merged(default);
        assert_eq!((config.approval, config.approval_source), (mode, source), "{case}");
        assert_eq!(config.ignored_notice().is_some(), ignored, "{case}: {:?}", config.ignored);
        if ignored {
            let notice = config.ignored_notice().unwrap();
            let asked = format!("`approval = \"{}\"`", name(project.unwrap()));
            assert!(notice.contains(&asked), "{case}: {notice}");
        }
    }
}

#[test]
fn a_thinking_budget_the_api_would_refuse_is_a_clear_error() {
    let merged = |flags: FlagSettings| {
        config::merge(
            &flags,
            &env_of(&[]),
            &FileSettings::default(),
            &FileSettings::default(),
            ApprovalMode::Ask,
        )
    };
    let flags = |thinking_budget, max_tokens| FlagSettings {
        thinking_budget: Some(thinking_budget),
        max_tokens,
        ..FlagSettings::default()
    };
    let small = merged(flags(512, None)).unwrap_err().to_string();
    assert!(small.contains("1024") && small.contains("0 turns thinking off"), "{small}");
    let over = merged(flags(8192, None)).unwrap_err().to_string();
    assert!(over.contains("less than max_tokens 8192") && over.contains("--max-tokens"), "{over}");
    assert_eq!(merged(flags(8192, Some(16000))).unwrap().thinking_budget, Some(8192));
    assert_eq!(merged(flags(1024, None)).unwrap().thinking_budget, Some(1024));
}

#[test]
fn the_rest_of_the_workspace_file_is_taken() {
    let project = "model = \"m\"\nmax_tokens = 5\nnag_threshold = 0\nmax_rounds = 9\n";
    let config = Setup { project: project.into(), ..Setup::default() }.merged(ApprovalMode::Ask);
    assert_eq!(
        (config.model.as_str(), config.max_tokens, config.nag_threshold, config.max_rounds),
        ("m", 5, NagThreshold::Fixed(0), 9)
    );
    assert!(config.ignored.is_empty());
    assert_eq!(config.ignored_notice(), None);
}

// ---- Every flag of the command line ----

fn cli(args: &[&str]) -> Cli {
    Cli::try_parse_from(std::iter::once("keel").chain(args.iter().copied())).unwrap()
}

#[test]
fn every_setting_flag_reaches_its_setting_over_every_other_source() {
    // Every other source sets each key too: only the flag's wiring can give these values.
    let everything_else = Setup {
        env: vec![("KEEL_PROVIDER", "anthropic"), ("KEEL_MODEL", "env"), ("OPENAI_BASE_URL", "http://env/v1")],
        // (The workspace's approval would win wherever stricter: it is left out here.)
        project: "model = \"p\"\nmax_tokens = 20000\nthinking_budget = 2000\nnag_threshold = 2\nmax_rounds = 2\ncontext_window = 40000\n".into(),
        user: "model = \"u\"\nmax_tokens = 30000\nthinking_budget = 3000\nnag_threshold = 3\nmax_rounds = 3\napproval = \"read-only\"\ncontext_window = 60000\n".into(),
        ..Setup::default()
    };
    let cases: [(&[&str], Read, &str); 12] = [
        (&["--provider", "openai"], |c| format!("{:?}", c.provider), "Some(OpenAi)"),
        (&["--provider", "anthropic"], |c| format!("{:?}", c.provider), "Some(Anthropic)"),
        (&["--model", "flag-model"], |c| c.model.clone(), "flag-model"),
        (&["--base-url", "http://flag"], |c| c.base_url.clone(), "http://flag"),
        (&["--max-tokens", "7777"], |c| c.max_tokens.to_string(), "7777"),
        (&["--thinking", "1500"], |c| format!("{:?}", c.thinking_budget), "Some(1500)"),
        (&["--thinking", "0"], |c| format!("{:?}", c.thinking_budget), "None"),
        (&["--nag-threshold", "0"], |c| c.nag_threshold.to_string(), "0"),
        (&["--max-rounds", "55"], |c| c.max_rounds.to_string(), "55"),
        (&["--context-window", "50000"], |c| c.context_window.to_string(), "50000"),
        (&["--approval", "auto"], |c| format!("{:?}", c.approval), "Auto"),
        (&["--approval", "ask"], |c| format!("{:?}", c.approval), "Ask"),
    ];
    for (args, read, expected) in cases {
        let setup = Setup { flags: cli(args).settings, ..everything_else.clone() };
        assert_eq!(read(&setup.merged(ApprovalMode::Ask)), expected, "{args:?}");
    }
    let setup = Setup { flags: cli(&["--approval", "read-only"]).settings, ..Setup::default() };
    assert_eq!(setup.merged(ApprovalMode::Auto).approval, ApprovalMode::ReadOnly);
    // No flags: no flag settings at all.
    assert_eq!(cli(&[]).settings, FlagSettings::default());
}

#[test]
fn the_other_flags_are_read_as_given() {
    let given = cli(&[
        "-p",
        "do it",
        "--output-format",
        "json",
        "--demo",
        "--demo-pace-ms",
        "5",
        "--workdir",
        "/tmp/w",
        "--continue",
    ]);
    assert_eq!(given.print.as_deref(), Some("do it"));
    assert_eq!(given.output_format, OutputFormat::Json);
    assert!(given.demo && given.continue_session);
    assert_eq!(given.demo_pace_ms, Some(5));
    assert_eq!(given.workdir.as_deref(), Some(Path::new("/tmp/w")));
    assert_eq!(cli(&["-p"]).print.as_deref(), Some(""), "-p alone: the prompt may come later");
    assert_eq!(cli(&["--resume", "123-abcd"]).resume.as_deref(), Some("123-abcd"));
    let defaults = cli(&[]);
    assert_eq!(
        (defaults.print, defaults.output_format, defaults.demo),
        (None, OutputFormat::Text, false)
    );
    assert!(Cli::try_parse_from(["keel", "--continue", "--resume", "x"]).is_err());
    assert!(Cli::try_parse_from(["keel", "--approval", "sometimes"]).is_err());
    assert!(Cli::try_parse_from(["keel", "--provider", "gemini"]).is_err());
}
