//! The `keel` binary: the process-wide set-up (the command supervisor's entry point, signals,
//! the runtime), then [`launch::prepare`] and [`launch::Running::run`].

mod launch;

use clap::Parser;
use keel::cli::Cli;
use keel::config::ConfigError;
use keel::runtime::{entry, supervisor};
use keel::visible::visible;
use launch::{EXIT_FAILED, Prepared, UsageError};
use std::process::ExitCode;
use std::time::Duration;

/// Exit code for a usage or configuration error (clap uses it for bad flags too).
const EXIT_USAGE: u8 = 2;
/// How long keel waits, as it ends, for its commands' supervisors to kill what is left of them
/// and exit (each gives up killing after two seconds).
const SUPERVISORS_EXIT: Duration = Duration::from_secs(3);

fn main() -> ExitCode {
    // keel's own executable supervises the commands it runs (see `runtime::supervisor`).
    if let Some(code) = entry::run_if_requested() {
        return code;
    }
    // Before anything is opened: what keel inherited (a job runner's log, a terminal's socket)
    // reaches none of the programs it starts.
    if let Err(err) = supervisor::inherited::close_all_but(&[]) {
        // Each command's supervisor closes them again, and refuses to start one if it cannot.
        eprintln!("keel: {err}");
    }
    // Before any thread starts: a file-size limit fails a write instead of killing keel.
    keel::runtime::size_limit::keep_writes_alive();
    // Not dumpable: no other process of the person's (a command run unconfined, say) can read
    // keel's `/proc/PID/environ`, with its keys, or write to its `/proc/PID/fd`.
    if let Err(err) = nix::sys::prctl::set_dumpable(false) {
        eprintln!("keel: cannot keep its memory from other processes: {err}");
    }
    match std::env::current_exe() {
        Ok(exe) => supervisor::set_program(exe),
        Err(err) => {
            eprintln!("keel: cannot find its own executable, so it cannot run commands: {err}")
        }
    }
    let cli = Cli::parse();
    if let Err(err) = color_eyre::install() {
        eprintln!("keel: {}", visible(&err.to_string()));
    }
    // One thread runs every task (the front end, the agent, the HTTP client's connection tasks);
    // blocking work has tokio's blocking pool. Besides starting faster, it makes the HTTP
    // client's pool deterministic: once an answer's body has ended, the tasks that put its
    // connection back have run before the next request looks for one.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("keel: cannot start the async runtime: {err}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let result = runtime.block_on(run(cli));
    // Tools may leave blocking readers behind after a kill; do not wait for them.
    runtime.shutdown_timeout(Duration::from_millis(100));
    // The runtime's end closed keel's end of every supervisor's socket: each kills what is left
    // of its command and exits. keel waits for them, so nothing it started outlives it.
    supervisor::end_all(SUPERVISORS_EXIT);
    match result {
        Ok(code) => code,
        Err(err) => {
            let usage = err.downcast_ref::<ConfigError>().is_some()
                || err.downcast_ref::<UsageError>().is_some();
            eprintln!("keel: {}", visible(&format!("{err:#}")));
            ExitCode::from(if usage { EXIT_USAGE } else { EXIT_FAILED })
        }
    }
}

/// Prepares the launch the command line asks for and runs it.
async fn run(cli: Cli) -> color_eyre::Result<ExitCode> {
    match launch::prepare(cli).await? {
        Prepared::Done(code) => Ok(code),
        Prepared::Running(running) => running.run().await,
    }
}
