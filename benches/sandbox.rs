#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the sandbox adds to a command's start: the `bash` tool running `true`, through the same
//! supervisor, unconfined and in the `workspace` sandbox (bwrap, then keel's own binary
//! installing its seccomp filter), in the same run. The difference is the sandbox's cost. The
//! same under Landlock, where bwrap cannot run, with keel's own folders and the usual credential
//! files of the home folder hidden (each walked around, rule by rule). And
//! what the look for repositories commands made below the workspace's top costs as a turn ends,
//! in a workspace of 20,000 files in 2,000 folders.

use criterion::{Criterion, criterion_group, criterion_main};
use keel::runtime::Workspace;
use keel::runtime::sandbox::hidden::Hidden;
use keel::runtime::sandbox::{Availability, KeelFolders, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, Tools};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn run_true(runtime: &tokio::runtime::Runtime, tools: &Tools) {
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        live_output: None,
        gate: None,
        conversation: None,
    };
    let outcome = runtime.block_on(tools.run("bash", &json!({"command": "true"}), &ctx));
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
}

fn sandbox_start(c: &mut Criterion) {
    keel::runtime::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let sandbox = Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None);
    assert!(matches!(sandbox.availability, Availability::Ready { .. }), "bwrap is needed");
    let unconfined = Tools::new(workspace.clone());
    let confined = Tools::new(workspace).with_sandbox(sandbox);
    let mut group = c.benchmark_group("sandbox");
    group.sample_size(50);
    group.bench_function("bash true, sandbox off", |b| b.iter(|| run_true(&runtime, &unconfined)));
    group.bench_function("bash true, sandbox workspace", |b| {
        b.iter(|| run_true(&runtime, &confined))
    });
    let landlock = Sandbox {
        availability: Availability::Landlock { abi: 0, why_not_bwrap: "measured".into() },
        keel: home_folders(),
        ..Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None)
    };
    let landlocked = Tools::new(Workspace::new(dir.path()).unwrap()).with_sandbox(landlock);
    group.bench_function("bash true, sandbox workspace (landlock)", |b| {
        b.iter(|| run_true(&runtime, &landlocked))
    });
    group.finish();
}

/// Paths of the home folder hidden from commands, as the person's credentials would be.
const CREDENTIALS: [&str; 8] = [
    ".ssh",
    ".aws",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".docker/config.json",
    ".kube",
    ".gnupg",
];

/// keel's folders as keel run by the person finds them, with the credential files hidden.
fn home_folders() -> KeelFolders {
    let env = |name: &str| std::env::var(name).ok();
    let mut folders = KeelFolders::from_env(&env);
    let home = std::path::PathBuf::from(env("HOME").unwrap_or_default());
    let hidden: Vec<_> = CREDENTIALS.iter().map(|path| home.join(path)).collect();
    folders.hidden = Hidden::of_paths(&hidden, &[]);
    folders
}

/// Folders, and files in each, of the workspace the look goes through.
const FOLDERS: usize = 2_000;
const FILES_PER_FOLDER: usize = 10;

fn nested_repositories(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    for folder in 0..FOLDERS {
        let path = dir.path().join(format!("d{}/e{folder}", folder % 50));
        std::fs::create_dir_all(&path).unwrap();
        for file in 0..FILES_PER_FOLDER {
            std::fs::write(path.join(format!("f{file}.rs")), "").unwrap();
        }
    }
    let scan = keel::runtime::sandbox::nested::scan(dir.path(), &[]);
    assert!(scan.complete);
    c.bench_function("nested repositories, 20,000 files in 2,000 folders", |b| {
        b.iter(|| keel::runtime::sandbox::nested::settle(dir.path(), &scan))
    });
}

criterion_group!(benches, sandbox_start, nested_repositories);
criterion_main!(benches);
