#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What a search costs: keel's `grep` tool, in-process, through a git repository of 20,000
//! source files with a `.gitignore`d `build/` folder of 20,000 more, for a literal and for a
//! regex; beside it, in the same run, ripgrep's binary (`rg`, which must be on `PATH`) doing the
//! same search, and the same `rg` run through the `bash` tool in the `workspace` sandbox (bwrap
//! needed), as a model without the search tools would run it; and the literal again in one
//! folder of 500 files, where the sandbox's start weighs more than the search. `glob` for
//! `**/*.rs` is timed beside `rg --files -g '*.rs'` too.
//!
//! Criterion times each alone; then the three are run in turn, round after round, and the
//! medians printed with their ratios, so that a machine that slows down slows all of them.

use criterion::{Criterion, criterion_group, criterion_main};
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, Tools};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The tree: folders of source files, and as many again in the ignored build folder.
const FOLDERS: usize = 1_000;
const FILES_PER_FOLDER: usize = 20;
/// Lines of code in each file (about 2 KB).
const LINES_PER_FILE: usize = 60;
/// One file in this many holds the literal; one in this many holds a function the regex finds.
const LITERAL_EVERY: usize = 400;
const REGEX_EVERY: usize = 90;
const LITERAL: &str = "needle_literal";
const REGEX: &str = r"fn\s+handle_[a-z]+_\d+\(";
/// The folder a narrow search looks in: one of the 40 top folders of `src`, 1/40 of the files.
const NARROW: &str = "src/m00";
const NARROW_SHARE: usize = 40;
/// Rounds of the side-by-side comparison.
const ROUNDS: usize = 15;

/// Writes the tree into `root` and makes it a git repository that ignores `build/`.
fn tree(root: &Path) {
    let git = Command::new("git").args(["init", "-q"]).current_dir(root).status().unwrap();
    assert!(git.success(), "the bench needs git");
    std::fs::write(root.join(".gitignore"), "/build/\n").unwrap();
    for (top, offset) in [("src", 0), ("build", FOLDERS * FILES_PER_FOLDER)] {
        for folder in 0..FOLDERS {
            let path = root.join(format!("{top}/m{:02}/p{folder:04}", folder % 40));
            std::fs::create_dir_all(&path).unwrap();
            for file in 0..FILES_PER_FOLDER {
                let index = offset + folder * FILES_PER_FOLDER + file;
                std::fs::write(path.join(format!("f{file:02}.rs")), source(index)).unwrap();
            }
        }
    }
}

/// A file of plausible code; some hold the literal, some a function the regex finds.
fn source(index: usize) -> String {
    const WORDS: [&str; 8] = ["parse", "render", "load", "store", "query", "send", "close", "open"];
    let mut text = format!("//! Module {index}.\n\nuse crate::prelude::*;\n\n");
    for line in 0..LINES_PER_FILE {
        let word = WORDS[(index + line) % WORDS.len()];
        let code = match line % 6 {
            0 => format!("pub fn {word}_{line}(input: &Input) -> Result<Output, Error> {{"),
            1 => format!("    let value = {word}_helper(input, {index}, {line})?;"),
            2 => format!("    // {word} the value and check it against the limit of {line}"),
            3 => format!("    if value.len() > {} {{ return Err(Error::TooLong); }}", line * 7),
            4 => format!("    Ok(Output::new(value, \"{word}-{index}\"))"),
            _ => "}".to_owned(),
        };
        text.push_str(&code);
        text.push('\n');
    }
    if index.is_multiple_of(LITERAL_EVERY) {
        text.push_str("// TODO: needle_literal is still used here\n");
    }
    if index.is_multiple_of(REGEX_EVERY) {
        let word = WORDS[index % WORDS.len()];
        text.push_str(&format!("fn handle_{word}_{index}(request: Request) -> Response {{ }}\n"));
    }
    text
}

fn ctx() -> ToolContext<'static> {
    ToolContext {
        cancel: CancellationToken::new(),
        live_output: None,
        gate: None,
        conversation: None,
    }
}

/// The three ways to search, for one search.
struct Searches<'a> {
    runtime: &'a tokio::runtime::Runtime,
    root: &'a Path,
    tools: &'a Tools,
    sandboxed: &'a Tools,
}

impl Searches<'_> {
    fn keel(&self, name: &str, input: &Value) -> String {
        let outcome = self.runtime.block_on(self.tools.run(name, input, &ctx()));
        assert!(!outcome.is_error, "{}", outcome.for_model);
        outcome.tally.unwrap()
    }

    fn rg(&self, args: &[&str]) -> usize {
        let output = Command::new("rg").args(args).current_dir(self.root).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        output.stdout.iter().filter(|byte| **byte == b'\n').count()
    }

    fn bash(&self, command: &str) -> usize {
        let input = json!({ "command": command });
        let outcome = self.runtime.block_on(self.sandboxed.run("bash", &input, &ctx()));
        assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
        outcome.for_display.lines().filter(|line| line.contains(".rs")).count()
    }
}

/// The median time of each of `jobs`, run in turn for [`ROUNDS`] rounds.
fn side_by_side(jobs: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    let mut times = vec![Vec::with_capacity(ROUNDS); jobs.len()];
    for _ in 0..ROUNDS {
        for (job, times) in jobs.iter_mut().zip(&mut times) {
            let started = Instant::now();
            job();
            times.push(started.elapsed());
        }
    }
    times
        .into_iter()
        .map(|mut times| {
            times.sort_unstable();
            times[times.len() / 2]
        })
        .collect()
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

fn search(c: &mut Criterion) {
    keel::runtime::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let root = dir.path().canonicalize().unwrap();
    let workspace = Workspace::new(&root).unwrap();
    let sandbox = Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None);
    assert!(matches!(sandbox.availability, Availability::Ready { .. }), "bwrap is needed");
    let tools = Tools::new(workspace.clone());
    let sandboxed = Tools::new(workspace).with_sandbox(sandbox);
    let searches =
        Searches { runtime: &runtime, root: &root, tools: &tools, sandboxed: &sandboxed };

    let files = FOLDERS * FILES_PER_FOLDER;
    let whole = format!("{files} files + {files} ignored");
    let folder = format!("{NARROW} ({} files)", files / NARROW_SHARE);
    let cases = [
        (format!("literal, {whole}"), LITERAL, None),
        (format!("regex, {whole}"), REGEX, None),
        (format!("literal in {folder}"), LITERAL, Some(NARROW)),
    ];
    for (case, pattern, path) in cases {
        let input = match path {
            Some(path) => json!({ "pattern": pattern, "path": path }),
            None => json!({ "pattern": pattern }),
        };
        let mut rg_args = vec!["-n", "--no-heading", "-e", pattern];
        rg_args.extend(path);
        let command = format!("rg -n --no-heading -e '{pattern}' {}", path.unwrap_or_default());
        // The same matches, all three ways.
        let tally = searches.keel("grep", &input);
        let lines = searches.rg(&rg_args);
        assert_eq!(tally.split(' ').next(), Some(lines.to_string().as_str()), "{tally}");
        assert_eq!(searches.bash(&command), lines, "{command}");

        let mut group = c.benchmark_group(format!("grep {case}"));
        group.sample_size(10).measurement_time(Duration::from_secs(8));
        group.bench_function("keel grep", |b| b.iter(|| searches.keel("grep", &input)));
        group.bench_function("rg", |b| b.iter(|| searches.rg(&rg_args)));
        group.bench_function("rg through bash, sandboxed", |b| b.iter(|| searches.bash(&command)));
        group.finish();

        let times = side_by_side(&mut [
            &mut || {
                searches.keel("grep", &input);
            },
            &mut || {
                searches.rg(&rg_args);
            },
            &mut || {
                searches.bash(&command);
            },
        ]);
        let (keel, rg, bash) = (times[0], times[1], times[2]);
        println!(
            "grep {case} ({tally}), medians of {ROUNDS} rounds in turn: keel {}, rg {}, rg \
             through bash in the sandbox {} — keel/rg {:.2}× (goal ≤ 1.5×), bash/keel {:.1}× \
             (goal ≥ 10×)",
            ms(keel),
            ms(rg),
            ms(bash),
            keel.as_secs_f64() / rg.as_secs_f64(),
            bash.as_secs_f64() / keel.as_secs_f64(),
        );
    }

    let input = json!({ "pattern": "**/*.rs" });
    let rg_args = ["--files", "-g", "*.rs"];
    let tally = searches.keel("glob", &input);
    assert_eq!(tally, format!("{} files", searches.rg(&rg_args)));
    let mut group = c.benchmark_group(format!("glob **/*.rs, {whole}"));
    group.sample_size(10).measurement_time(Duration::from_secs(8));
    group.bench_function("keel glob", |b| b.iter(|| searches.keel("glob", &input)));
    group.bench_function("rg --files", |b| b.iter(|| searches.rg(&rg_args)));
    group.finish();
    let times = side_by_side(&mut [
        &mut || {
            searches.keel("glob", &input);
        },
        &mut || {
            searches.rg(&rg_args);
        },
    ]);
    println!(
        "glob **/*.rs ({tally}), medians of {ROUNDS} rounds in turn: keel {}, rg --files {} — \
         keel/rg {:.2}× (rg lists them unsorted, keel newest first)",
        ms(times[0]),
        ms(times[1]),
        times[0].as_secs_f64() / times[1].as_secs_f64(),
    );
}

criterion_group!(benches, search);
criterion_main!(benches);
