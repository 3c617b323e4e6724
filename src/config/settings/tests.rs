//! The table's promises, for every setting it declares: each reads back the same from a file, a
//! flag and the environment; a workspace's file cannot loosen what it may only tighten, nor set
//! what is the person's alone.

use super::{FileSettings, FlagSettings, Given, SETTINGS, environment, restrict, taken};
use crate::agent::ApprovalMode;
use crate::config::declare::{Layers, Workspace};
use crate::config::{merge, parse_file};
use crate::llm::WireFormat;
use clap::{Args, FromArgMatches};
use std::path::Path;

/// One setting's value, as a file (TOML), a flag (its values after `--NAME`; `None`: the table
/// gives it no flag) and the environment (`None`: no variable) write it.
struct Sample {
    name: &'static str,
    toml: &'static str,
    flag: Option<&'static [&'static str]>,
    env: Option<&'static str>,
}

const fn sample(
    name: &'static str,
    toml: &'static str,
    flag: Option<&'static [&'static str]>,
    env: Option<&'static str>,
) -> Sample {
    Sample { name, toml, flag, env }
}

/// A value for every setting, none of them its default.
const SAMPLES: &[Sample] = &[
    sample("provider", "\"openai\"", Some(&["openai"]), Some("openai")),
    sample("model", "\"m\"", Some(&["m"]), Some("m")),
    sample("base_url", "\"http://u\"", Some(&["http://u"]), Some("http://u")),
    sample("api_key", "\"k\"", None, Some("k")),
    sample("max_tokens", "7", Some(&["7"]), None),
    sample("thinking_budget", "2048", Some(&["2048"]), None),
    sample("nag_threshold", "\"auto\"", Some(&["auto"]), None),
    sample("nag_message", "\"hey\"", None, None),
    sample("context_window", "9000", Some(&["9000"]), None),
    sample("max_rounds", "5", Some(&["5"]), None),
    sample("check_timeout", "60", None, None),
    sample("mcp_servers", "{ s = { command = \"x\" } }", None, None),
    sample("pass_env", "[\"A\"]", None, None),
    sample("prices", "{ m = { input = 1.0, output = 2.0 } }", None, None),
    sample("hidden_paths", "[\"/h\"]", None, None),
    sample("readable_paths", "[\"/r\"]", None, None),
    sample("approval", "\"read-only\"", Some(&["read-only"]), None),
    sample("compact_at", "0.5", None, None),
    sample("sandbox", "\"off\"", Some(&["off"]), None),
    sample("network", "true", Some(&[]), None),
    sample("writable_roots", "[\"/w\"]", None, None),
    sample(
        "hooks",
        "{ Stop = [{ hooks = [{ type = \"command\", command = \"true\" }] }] }",
        None,
        None,
    ),
    sample("max_child_rounds", "2", None, None),
    sample("max_child_tokens", "10", None, None),
    sample("max_parallel_agents", "1", None, None),
    sample("max_children_per_response", "1", None, None),
];

/// A setting a workspace may only tighten: (the person's value, the workspace's looser one), and
/// (the person's value, the workspace's stricter one).
struct Order {
    name: &'static str,
    loosen: (&'static str, &'static str),
    tighten: (&'static str, &'static str),
}

const ORDERS: &[Order] = &[
    Order {
        name: "approval",
        loosen: ("\"ask\"", "\"auto\""),
        tighten: ("\"ask\"", "\"read-only\""),
    },
    Order {
        name: "sandbox",
        loosen: ("\"workspace\"", "\"off\""),
        tighten: ("\"workspace\"", "\"read-only\""),
    },
    Order { name: "network", loosen: ("false", "true"), tighten: ("true", "false") },
    Order { name: "max_child_rounds", loosen: ("9", "50"), tighten: ("9", "5") },
    Order { name: "max_child_tokens", loosen: ("1000", "5000"), tighten: ("1000", "10") },
    Order { name: "max_parallel_agents", loosen: ("2", "5"), tighten: ("2", "1") },
    Order { name: "max_children_per_response", loosen: ("4", "20"), tighten: ("4", "2") },
];

/// The settings a workspace may do this with.
fn names(workspace: Workspace) -> impl Iterator<Item = &'static str> {
    SETTINGS.iter().filter(move |declared| declared.workspace == workspace).map(|d| d.name)
}

fn sample_of(name: &str) -> &'static Sample {
    let sample = SAMPLES.iter().find(|sample| sample.name == name);
    sample.unwrap_or_else(|| panic!("no sample for `{name}`: add one to SAMPLES"))
}

fn file(name: &str, value: &str) -> FileSettings {
    parse_file(Path::new("test.toml"), &format!("{name} = {value}\n")).unwrap()
}

/// The settings as given, from the person's file and the flags alone.
fn given(flags: &FileSettings, project: &FileSettings, user: &FileSettings) -> Given {
    let none = &FileSettings::default();
    Layers { flags, env: none, project, user, front: none }.given()
}

fn long_flag(name: &str) -> Option<String> {
    let command = FlagSettings::augment_args(clap::Command::new("keel"));
    let arg = command.get_arguments().find(|arg| arg.get_id() == name)?;
    arg.get_long().map(str::to_owned)
}

fn flags(args: &[String]) -> FileSettings {
    let command = FlagSettings::augment_args(clap::Command::new("keel"));
    let given = std::iter::once("keel".to_owned()).chain(args.iter().cloned());
    let matches = command.try_get_matches_from(given).unwrap();
    FileSettings::from(&FlagSettings::from_arg_matches(&matches).unwrap())
}

#[test]
fn every_setting_reads_back_the_same_from_a_file_a_flag_and_the_environment() {
    let none = FileSettings::default();
    assert_eq!(SAMPLES.len(), SETTINGS.len(), "one sample per setting");
    for declared in SETTINGS {
        let name = declared.name;
        let sample = sample_of(name);
        let from_file = file(name, sample.toml);
        assert_eq!(from_file.keys(), [name], "{name}: the file sets it, and it alone");
        assert_ne!(given(&none, &none, &from_file), given(&none, &none, &none), "{name}");
        match (declared.flag, sample.flag, long_flag(name)) {
            (true, Some(values), Some(long)) => {
                let args: Vec<String> = std::iter::once(format!("--{long}"))
                    .chain(values.iter().map(|value| (*value).to_owned()))
                    .collect();
                assert_eq!(flags(&args), from_file, "{name}: {args:?} as the file's");
            }
            (false, None, None) => {}
            other => panic!("{name}: the table, the sample and clap disagree: {other:?}"),
        }
        match (declared.env, sample.env) {
            (Some(env), Some(value)) => {
                let provider = Some(WireFormat::Anthropic);
                let variable = env.variable(provider).unwrap();
                let lookup = |asked: &str| (asked == variable).then(|| value.to_owned());
                let from_env = environment(&lookup, provider).unwrap();
                assert_eq!(from_env, from_file, "{name}: {variable} as the file's");
            }
            (None, None) => {}
            _ => panic!("{name}: the table and the sample disagree on its variable"),
        }
    }
}

#[test]
fn a_workspace_cannot_loosen_what_it_may_only_tighten_and_its_stricter_value_wins() {
    let none = FileSettings::default();
    for name in names(Workspace::Tightens) {
        let order = ORDERS.iter().find(|order| order.name == name);
        let order = order.unwrap_or_else(|| panic!("no order for `{name}`: add one to ORDERS"));
        // Looser than the person's file, or the person's flag: not taken, and said where it
        // asked for more than a budget (a budget's lower simply holds).
        both_ways(name, order.loosen, |flag, user, project| {
            let persons = given(flag, &none, user);
            let (kept, ignored) = restrict(project, &persons);
            assert!(kept.keys().is_empty() && taken(&kept).is_empty(), "{name}: taken");
            assert!(ignored.iter().all(|why| why.to_string().contains(name)), "{ignored:?}");
            assert_eq!(given(flag, &kept, user), persons, "{name}: the person's value holds");
        });
        // Stricter: taken, named, and it wins over the person's file and flag alike.
        let asked = order.tighten.1;
        both_ways(name, order.tighten, |flag, user, project| {
            let (kept, ignored) = restrict(project, &given(flag, &none, user));
            assert!(ignored.is_empty(), "{name}: {ignored:?}");
            assert_eq!(taken(&kept), [format!("{name} = {asked}")], "{name}");
            let workspaces = given(&none, &none, project);
            assert_eq!(given(flag, &kept, user), workspaces, "{name}: {asked} wins");
        });
    }
}

/// `check(flags, user, project)` with the person's value in their file, then as a flag, and the
/// workspace's `asked` in its file.
fn both_ways(
    name: &str,
    (person, asked): (&str, &str),
    check: impl Fn(&FileSettings, &FileSettings, &FileSettings),
) {
    let none = FileSettings::default();
    let (person, project) = (file(name, person), file(name, asked));
    for (flags, user) in [(&none, &person), (&person, &none)] {
        check(flags, user, &project);
    }
}

#[test]
fn a_workspace_sets_nothing_that_is_the_persons_alone() {
    let none = FileSettings::default();
    for name in names(Workspace::Never) {
        let sample = sample_of(name);
        let (kept, ignored) = restrict(&file(name, sample.toml), &given(&none, &none, &none));
        assert_eq!(kept, none, "{name}");
        assert_eq!(ignored, [crate::config::Ignored::Key(name)], "{name}");
    }
}

#[test]
fn a_child_budget_of_zero_is_refused_with_its_name_from_either_file() {
    let none = FileSettings::default();
    let children = ["max_child_rounds", "max_child_tokens", "max_parallel_agents"];
    for name in children.into_iter().chain(["max_children_per_response"]) {
        let zero = file(name, "0");
        for (project, user) in [(&zero, &none), (&none, &zero)] {
            let merged =
                merge(&FlagSettings::default(), &|_| None, project, user, ApprovalMode::Ask);
            let err = merged.unwrap_err().to_string();
            assert!(err.starts_with(&format!("{name} must be at least 1")), "{err}");
        }
    }
}
