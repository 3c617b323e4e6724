//! The docs stay true: the shell examples of README.md and docs/*.md run against the built
//! binary, every relative link leads to a file (and a section named beside it, `[sandbox.md](…),
//! "Hidden"`, to a heading there), and the test line CI runs is the README's.
//!
//! The rule for examples: every line of a ```sh, ```bash or ```console fence that runs `keel`
//! (or `cargo run … -- ARGS`, which runs keel with ARGS) is one, up to a pipe, a redirection, a
//! `;`, a `&` or a comment; in a console fence the command follows `$ `, and the lines after it,
//! up to the next `$ `, are output the doc shows. An example that needs no model — one that asks
//! for `--help` or `--version`, runs a sub-command (`sandbox`, `sessions`, `undo`, `hooks …`,
//! `mcp …`) or plays the demo headless (`--demo` with `-p`) — runs for real, in a fresh workspace
//! with a private home, and must exit 0 and print every line the doc shows (`…` stands for
//! anything). Every other example (it needs a model, or opens the screen) runs with `--help`
//! added at its end: the command line is read whole before help is printed, so a flag, a value
//! or a sub-command that does not exist fails it all the same.

use crate::support::bin::{keel, output_within, text};
use std::path::{Path, PathBuf};

/// The sub-commands that need no model.
const OFFLINE_SUBCOMMANDS: [&str; 5] = ["sandbox", "sessions", "undo", "hooks", "mcp"];
/// Fences whose lines are shell commands.
const SHELL_FENCES: [&str; 3] = ["sh", "bash", "console"];
/// What stops a command line: what follows is another command, a file or a comment.
const COMMAND_ENDS: [char; 6] = ['|', ';', '&', '>', '<', '#'];
/// In shown output, what stands for anything.
const ELLIPSIS: &str = "…";
/// The shapes the docs must show running (the first-use path and the commands that need no model).
const SHAPES_SHOWN: [&[&str]; 4] =
    [&["--demo", "-p"], &["sandbox"], &["hooks", "list"], &["--help"]];

/// Variables a command line sets for keel (`OPENAI_API_KEY=x keel …`).
type Env = Vec<(String, String)>;

/// One `keel` command of a doc, with what the doc shows it print.
#[derive(Debug, Clone, PartialEq)]
struct Example {
    /// `docs/hooks.md:12`.
    at: String,
    env: Env,
    args: Vec<String>,
    shown: Vec<String>,
}

impl Example {
    fn needs_no_model(&self) -> bool {
        let has = |flag: &str| self.args.iter().any(|arg| arg == flag);
        let subcommand =
            self.args.first().is_some_and(|first| OFFLINE_SUBCOMMANDS.contains(&first.as_str()));
        subcommand
            || ["--help", "-h", "--version", "-V"].iter().any(|flag| has(flag))
            || (has("--demo") && (has("-p") || has("--print")))
    }

    fn line(&self) -> String {
        std::iter::once("keel")
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md, as (path from the root, text).
fn docs() -> Vec<(PathBuf, String)> {
    let mut paths = vec![PathBuf::from("README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| path.strip_prefix(root()).unwrap().to_path_buf())
        .collect();
    guide.sort();
    paths.extend(guide);
    paths
        .into_iter()
        .map(|path| (path.clone(), std::fs::read_to_string(root().join(path)).unwrap()))
        .collect()
}

/// The words of a shell line, quotes removed, up to the first of [`COMMAND_ENDS`] outside quotes.
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut in_word) = (Vec::new(), String::new(), false);
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some('"'), '\\') => word.extend(chars.next()),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => (quote, in_word) = (Some(c), true),
            (None, '\\') => {
                word.extend(chars.next());
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                }
                in_word = false;
            }
            (None, c) if COMMAND_ENDS.contains(&c) && (!in_word || c != '#') => break,
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The environment and keel's arguments of a command line, if it runs keel.
fn keel_command(line: &str) -> Option<(Env, Vec<String>)> {
    let words = words(line);
    let assignments = words
        .iter()
        .take_while(|word| word.split_once('=').is_some_and(|(name, _)| is_variable(name)))
        .count();
    let env = words[..assignments]
        .iter()
        .filter_map(|word| word.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    let command = &words[assignments..];
    let args = match command {
        [program, args @ ..] if program == "keel" => args.to_vec(),
        [cargo, run, rest @ ..] if cargo == "cargo" && run == "run" => {
            let dashes = rest.iter().position(|word| word == "--")?;
            rest[dashes + 1..].to_vec()
        }
        _ => return None,
    };
    Some((env, args))
}

fn is_variable(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The language of a fence's opening line (```` ```sh ```` → `sh`), or `None` for a closing one.
fn fence(line: &str) -> Option<Option<&str>> {
    let rest = line.trim_start().strip_prefix("```")?;
    let lang = rest.split_whitespace().next();
    Some(lang)
}

/// Every example of one doc.
fn examples(path: &Path, doc: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    let mut open: Option<String> = None;
    // The console example whose output the next lines show.
    let mut showing: Option<usize> = None;
    for (index, line) in doc.lines().enumerate() {
        let at = format!("{}:{}", path.display(), index + 1);
        match (fence(line), open.as_deref()) {
            (Some(lang), None) => open = Some(lang.unwrap_or_default().to_owned()),
            (Some(_), Some(_)) => (open, showing) = (None, None),
            (None, Some("console")) => match line.trim_start().strip_prefix("$ ") {
                Some(command) => {
                    showing = keel_command(command).map(|(env, args)| {
                        found.push(Example { at, env, args, shown: Vec::new() });
                        found.len() - 1
                    });
                }
                None => {
                    if let Some(example) = showing.and_then(|index| found.get_mut(index)) {
                        example.shown.push(line.to_owned());
                    }
                }
            },
            (None, Some(lang)) if SHELL_FENCES.contains(&lang) => {
                if let Some((env, args)) = keel_command(line) {
                    found.push(Example { at, env, args, shown: Vec::new() });
                }
            }
            _ => {}
        }
    }
    found
}

fn all_examples() -> Vec<Example> {
    docs().iter().flat_map(|(path, doc)| examples(path, doc)).collect()
}

/// Whether `output` holds `shown`: each piece between `…` in order, blank lines aside.
fn holds(output: &str, shown: &str) -> bool {
    let mut rest = output;
    for piece in shown.split(ELLIPSIS).map(str::trim).filter(|piece| !piece.is_empty()) {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Runs `args` as keel in a fresh workspace with a private home; what it printed, both streams.
fn run(example: &Example, args: &[String]) -> (bool, String) {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command.args(args).current_dir(work.path()).envs(example.env.iter().cloned());
    let output = output_within(&mut command, &example.at);
    (output.status.success(), format!("{}{}", text(&output.stdout), text(&output.stderr)))
}

#[test]
fn every_example_that_needs_no_model_runs_and_prints_what_the_doc_shows() {
    let examples: Vec<Example> =
        all_examples().into_iter().filter(Example::needs_no_model).collect();
    for shape in SHAPES_SHOWN {
        assert!(
            examples
                .iter()
                .any(|example| shape.iter().all(|word| example.args.iter().any(|arg| arg == word))),
            "no doc shows `keel {}` running",
            shape.join(" ")
        );
    }
    for example in &examples {
        let (success, output) = run(example, &example.args);
        assert!(success, "{}: `{}` failed:\n{output}", example.at, example.line());
        for shown in &example.shown {
            assert!(
                holds(&output, shown),
                "{}: `{}` does not print what the doc shows:\n{shown}\n--- it printed:\n{output}",
                example.at,
                example.line()
            );
        }
    }
}

#[test]
fn every_other_example_is_a_command_line_keel_takes() {
    let examples: Vec<Example> =
        all_examples().into_iter().filter(|example| !example.needs_no_model()).collect();
    assert!(
        examples.iter().any(|example| example.args == ["--demo"]),
        "README's first command, `cargo run --release -- --demo`, is checked"
    );
    for example in &examples {
        let mut args = example.args.clone();
        args.push("--help".to_owned());
        let (success, output) = run(example, &args);
        assert!(success, "{}: keel does not take `{}`:\n{output}", example.at, example.line());
    }
}

#[test]
fn the_rule_finds_keel_in_every_form_the_docs_write_it() {
    let doc = "```sh\nkeel -p \"a | b\" --plan   # a comment\nOPENAI_API_KEY=x keel --model 'q w'\n\
               cargo run --release -- --demo\nexport X=1\n```\n```toml\nkeel = 1\n```\n\
               ```console\n$ keel sandbox | head\nCommands: …\n\n$ echo\nnot keel's\n```\n";
    let found = examples(Path::new("x.md"), doc);
    let args: Vec<Vec<&str>> =
        found.iter().map(|e| e.args.iter().map(String::as_str).collect()).collect();
    assert_eq!(
        args,
        [vec!["-p", "a | b", "--plan"], vec!["--model", "q w"], vec!["--demo"], vec!["sandbox"]]
    );
    assert_eq!(found[1].env, [("OPENAI_API_KEY".to_owned(), "x".to_owned())]);
    assert_eq!(found[3].shown, ["Commands: …", ""]);
    assert_eq!(found[3].at, "x.md:11");
    assert!(found[3].needs_no_model() && !found[0].needs_no_model());
    assert!(holds("a\nCommands: sandbox: workspace · no network.", "Commands: … no network."));
    assert!(!holds("no network. Commands:", "Commands: … no network."));
}

/// The relative links of one doc's text, outside code, with their line numbers.
fn relative_links(doc: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let mut in_fence = false;
    for (index, line) in doc.lines().enumerate() {
        if fence(line).is_some() {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Inline code is not a link: keep what lies between pairs of backticks out.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let target = &rest[at + 2..];
            let end = target.find(')').unwrap_or(target.len());
            let link = target[..end].trim();
            let external =
                ["http://", "https://", "mailto:", "#"].iter().any(|p| link.starts_with(p));
            if !external && !link.is_empty() {
                links.push((index + 1, link.to_owned()));
            }
            rest = &target[end..];
        }
    }
    links
}

/// The sections the docs point at by name after a link (`[sandbox.md](sandbox.md), "Hidden"`):
/// (the link, the section's title).
fn named_sections(doc: &str) -> Vec<(String, String)> {
    let prose = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut named = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find(".md), \"") {
        let link = rest[..at].rsplit('(').next().unwrap_or_default();
        let title = &rest[at + ".md), \"".len()..];
        let end = title.find('"').unwrap_or(title.len());
        named.push((format!("{link}.md"), title[..end].to_owned()));
        rest = &title[end..];
    }
    named
}

#[test]
fn every_relative_link_leads_to_a_file_and_every_section_named_beside_one_is_there() {
    let (mut links, mut sections) = (0, 0);
    for (path, doc) in docs() {
        let folder = root().join(&path).parent().unwrap().to_path_buf();
        for (line, link) in relative_links(&doc) {
            let file = link.split('#').next().unwrap_or_default();
            assert!(
                folder.join(file).exists(),
                "{}:{line}: the link {link} leads nowhere",
                path.display()
            );
            links += 1;
        }
        for (link, title) in named_sections(&doc) {
            let target = std::fs::read_to_string(folder.join(&link)).unwrap_or_default();
            let heading = |line: &str| line.trim_start_matches('#').trim() == title;
            assert!(
                target.lines().any(|line| line.starts_with('#') && heading(line)),
                "{}: {link} has no section \"{title}\"",
                path.display()
            );
            sections += 1;
        }
    }
    assert!(links > 0 && sections > 0, "the docs link to each other, and name sections");
    assert_eq!(
        relative_links("[a](b.md) `[c](d.md)` [e](https://x) [f](#g)"),
        [(1, "b.md".to_owned())]
    );
}

/// The keys a config file may hold in `table` (empty for the top), as keel lists them when it
/// meets one it does not know.
fn config_keys(table: &str) -> Vec<String> {
    let text = format!("{table}\nnot_a_key = 1\n").replace("KEY", "not_a_key = 1");
    let err = keel::config::parse_file(Path::new("config.toml"), text.trim_start())
        .expect_err("an unknown key is refused")
        .to_string();
    let (_, expected) = err.split_once("expected").expect("the error lists the keys");
    let expected = expected.trim_start().trim_start_matches("one of");
    expected
        .split([',', ' '])
        .filter(|word| word.starts_with('`'))
        .map(|word| word.trim_matches('`').to_owned())
        .collect()
}

#[test]
fn the_configuration_reference_names_every_setting_flag_and_sub_command() {
    let reference = std::fs::read_to_string(root().join("docs/configuration.md")).unwrap();
    let names = |name: &str| {
        [format!("`{name}`"), format!("[{name}."), format!("`{name} ")]
            .iter()
            .any(|form| reference.contains(form.as_str()))
    };
    let tables =
        ["", "[mcp_servers.x]", "[prices.x]", "[[hooks.Stop]]", "[[hooks.Stop]]\nhooks = [{KEY}]"];
    let keys: Vec<String> = tables.iter().flat_map(|table| config_keys(table)).collect();
    assert!(keys.iter().any(|key| key == "max_children_per_response"), "{keys:?}");
    for key in &keys {
        assert!(names(key), "docs/configuration.md does not name the setting `{key}`");
    }
    let home = tempfile::tempdir().unwrap();
    let help = text(&keel(home.path()).arg("--help").output().unwrap().stdout);
    let flags: Vec<&str> = help
        .lines()
        .filter(|line| line.trim_start().starts_with('-'))
        .flat_map(|line| line.split([' ', ',']).filter(|word| word.starts_with("--")))
        .collect();
    assert!(flags.contains(&"--output-format") && flags.contains(&"--resume"), "{help}");
    for flag in flags {
        assert!(names(flag), "docs/configuration.md does not name the flag {flag}");
    }
    let commands = help.split("Commands:").nth(1).and_then(|rest| rest.split("\n\n").next());
    let commands: Vec<&str> = commands
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.contains(&"sandbox"), "{help}");
    for command in commands {
        assert!(
            reference.contains(&format!("`keel {command}")),
            "no `keel {command}` in docs/configuration.md"
        );
    }
}

#[test]
fn ci_runs_the_test_line_the_readme_gives() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let mut lines = ci.lines().skip_while(|line| !line.contains("The test command from README.md"));
    let command = lines.nth(1).expect(".ci/run names the README's test command").trim();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("```sh\n{command}\n```")),
        "README.md gives `{command}`, the line .ci/run runs, in a sh fence of its own"
    );
}
