//! Running a command and reading its peak resident memory.
//!
//! Not from `getrusage(RUSAGE_CHILDREN)`: the standard library starts children with `vfork`, and
//! a vforked child's peak counts its parent's memory too. GNU time forks, so what it reports is
//! the command's own.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};

/// Where GNU time is installed on Debian (`apt-get install time`).
const GNU_TIME: &str = "/usr/bin/time";

/// A command to be run under GNU time, when it is installed.
pub struct Measured {
    pub command: Command,
    report: Option<tempfile::NamedTempFile>,
}

impl Measured {
    /// `program`, wrapped in GNU time when it is there.
    pub fn new(program: impl AsRef<Path>) -> Self {
        let program = program.as_ref();
        match tempfile::NamedTempFile::new() {
            Ok(report) if Path::new(GNU_TIME).exists() => {
                let mut command = Command::new(GNU_TIME);
                command.args(["-f", "%M", "-o"]).arg(report.path()).arg(program);
                Self { command, report: Some(report) }
            }
            _ => Self { command: Command::new(program), report: None },
        }
    }

    /// `program` alone, its memory unmeasured (GNU time's own start would count as its time).
    pub fn unmeasured(program: impl AsRef<Path>) -> Self {
        Self { command: Command::new(program.as_ref()), report: None }
    }

    pub fn spawn(&mut self) -> std::io::Result<Child> {
        self.command.spawn()
    }

    /// The peak RSS in MiB of the run, once it ended, when GNU time measured it.
    pub fn peak_mib(&self) -> Option<f64> {
        let text = std::fs::read_to_string(self.report.as_ref()?.path()).ok()?;
        let kib: f64 = text.lines().last()?.trim().parse().ok()?;
        Some(kib / 1024.0)
    }
}

/// How a figure reads when GNU time was not there to take it.
pub fn describe(mib: Option<f64>) -> String {
    mib.map_or_else(
        || "unmeasured (install GNU time: apt-get install time)".to_owned(),
        |mib| format!("{mib:.1} MiB"),
    )
}

/// How one `keel -p` run went.
pub struct Run {
    pub status: ExitStatus,
    pub peak_mib: Option<f64>,
    /// The run's home, which holds its saved session (under `.local/state/keel`).
    pub home: tempfile::TempDir,
}

/// Runs the built `keel -p PROMPT` with `args` against the Anthropic-compatible server at
/// `base_url`, in `workdir`, with a throwaway home; waits for it off `runtime`'s threads (which
/// may be serving it).
pub fn keel_headless(
    runtime: &tokio::runtime::Runtime,
    base_url: &str,
    workdir: &Path,
    prompt: &str,
    args: &[String],
) -> Run {
    let home = tempfile::tempdir().expect("a temporary home");
    let mut keel = Measured::new(env!("CARGO_BIN_EXE_keel"));
    keel.command
        .args(["-p", prompt, "--workdir"])
        .arg(workdir)
        .args(args)
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", base_url)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = keel.spawn().expect("keel starts");
    let status = runtime
        .block_on(async { tokio::task::spawn_blocking(move || child.wait()).await })
        .expect("the waiting task ends")
        .expect("keel can be waited for");
    Run { status, peak_mib: keel.peak_mib(), home }
}
