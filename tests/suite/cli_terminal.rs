//! keel's screen needs a terminal: run where there is none (output to a pipe), it says so, points
//! to `-p`, and exits as a usage error without starting anything.

use crate::support::bin;
use bin::{keel, output_within, text};

#[test]
fn without_a_terminal_keel_says_it_needs_one_and_suggests_p() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let output = output_within(
        keel(home.path()).arg("--workdir").arg(work.path()).env("ANTHROPIC_API_KEY", "sk-test"),
        "keel without a terminal",
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "a usage error: {stderr}");
    assert!(stderr.contains("needs a terminal"), "{stderr}");
    assert!(stderr.contains("keel -p"), "it says how to run without one: {stderr}");
    assert!(output.stdout.is_empty(), "nothing is drawn on the pipe");
}
