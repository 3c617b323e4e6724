//! What a killed `keel undo` leaves is cleaned up: its temporary file (the whole content it was
//! restoring) is removed at keel's next start in that workspace, with the real binary and a real
//! SIGKILL between the temporary file's creation and its rename.

use crate::support::{bin, llm};
use bin::{keel, output_within};
use llm::{FakeLlm, text, tool};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The size of the file the undo restores: large enough that writing it takes a while.
const BIG_FILE_BYTES: usize = 8 * 1024 * 1024;
/// How many times the kill is tried before the test gives up (it may land after the rename).
const ATTEMPTS: usize = 5;
/// How long to watch for the temporary file.
const WATCH: Duration = Duration::from_secs(30);

/// The names in `folder` that are keel's temporary files.
fn temps(folder: &Path) -> Vec<String> {
    std::fs::read_dir(folder)
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.contains(".keel-") && name.ends_with(".tmp"))
        .collect()
}

/// A prompt that replaced a big file, then `keel undo` killed as soon as its temporary file
/// shows; returns whether the kill left the temporary file behind.
async fn killed_undo(home: &Path, work: &Path) -> bool {
    std::fs::write(work.join("big.txt"), "b".repeat(BIG_FILE_BYTES)).unwrap();
    let steps =
        vec![tool("write_file", json!({"path": "big.txt", "content": "small\n"})), text("Done.")];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let output = output_within(
        keel(home)
            .arg("--workdir")
            .arg(work)
            .args(["-p", "Shrink big.txt."])
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base()),
        "keel -p",
    );
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut child = keel(home)
        .arg("undo")
        .arg("--workdir")
        .arg(work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + WATCH;
    while temps(work).is_empty() && Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::hint::spin_loop();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    !temps(work).is_empty()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_temporary_file_of_a_killed_undo_is_removed_at_the_next_start() {
    for _ in 0..ATTEMPTS {
        let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        if !killed_undo(home.path(), work.path()).await {
            continue;
        }
        assert_eq!(std::fs::read_to_string(work.path().join("big.txt")).unwrap(), "small\n");
        let listed = output_within(
            keel(home.path()).arg("sessions").arg("--workdir").arg(work.path()),
            "keel sessions",
        );
        assert!(listed.status.success());
        assert_eq!(temps(work.path()), Vec::<String>::new(), "the leftover goes at the next start");
        // And the undo, run again, still restores the file whole.
        let undone = output_within(
            keel(home.path()).arg("undo").arg("--workdir").arg(work.path()),
            "keel undo",
        );
        assert!(undone.status.success(), "{}", String::from_utf8_lossy(&undone.stderr));
        assert_eq!(
            std::fs::metadata(work.path().join("big.txt")).unwrap().len() as usize,
            BIG_FILE_BYTES
        );
        return;
    }
    panic!("the kill never landed between the temporary file's creation and its rename");
}
