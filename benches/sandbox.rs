#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the sandbox adds to a command's start: the `bash` tool running `true`, through the same
//! supervisor, unconfined and in the `workspace` sandbox (bwrap, then keel's own binary
//! installing its seccomp filter), in the same run. The difference is the sandbox's cost.

use criterion::{Criterion, criterion_group, criterion_main};
use keel::tools::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, ToolName, Tools, Workspace};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn run_true(runtime: &tokio::runtime::Runtime, tools: &Tools) {
    let ctx = ToolContext { cancel: CancellationToken::new(), live_output: None, gate: None };
    let outcome = runtime.block_on(tools.run(&ToolName::Bash, &json!({"command": "true"}), &ctx));
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
}

fn sandbox_start(c: &mut Criterion) {
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
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
    group.finish();
}

criterion_group!(benches, sandbox_start);
criterion_main!(benches);
