//! Undo covers bash's work whatever the ignore rules say: a prompt that rewrites `.gitignore`
//! (with `write_file` or with bash) and then deletes what the new rules ignore gets it all back
//! from `keel undo`, with the real binary, real git and real files.

use crate::support::{bin, llm};
use bin::{keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::json;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

async fn prompt(steps: Vec<Step>, home: &Path, work: &Path) {
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let mut command = keel(home);
    command
        .arg("--workdir")
        .arg(work)
        .args(["-p", "Tidy up."])
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p");
    assert!(output.status.success(), "{}", said(&output));
}

fn undo(home: &Path, work: &Path) -> String {
    let output = output_within(keel(home).args(["undo", "--workdir"]).arg(work), "keel undo");
    assert!(output.status.success(), "{}", said(&output));
    said(&output)
}

/// A workspace with a `src/` folder two levels deep.
fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir_all(work.path().join("src/deep")).unwrap();
    std::fs::write(work.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(work.path().join("src/deep/x.rs"), "// x\n").unwrap();
    (home, work)
}

fn assert_src_back(work: &Path, said: &str) {
    assert_eq!(
        std::fs::read_to_string(work.join("src/main.rs")).unwrap(),
        "fn main() {}\n",
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(work.join("src/deep/x.rs")).unwrap(), "// x\n", "{said}");
    assert!(said.contains("re-created src/main.rs"), "bash deleted it: {said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gitignore_written_by_the_prompt_does_not_hide_what_bash_deleted() {
    let (home, work) = workspace();
    let w = work.path();
    let steps = vec![
        tool("write_file", json!({"path": ".gitignore", "content": "src/\n"})),
        tool("bash", json!({"command": "rm -r src"})),
        text("Done."),
    ];
    prompt(steps, home.path(), w).await;
    assert!(!w.join("src").exists());
    let said = undo(home.path(), w);
    assert_src_back(w, &said);
    assert!(!w.join(".gitignore").exists(), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gitignore_rewritten_by_bash_does_not_hide_what_bash_deleted() {
    let (home, work) = workspace();
    let w = work.path();
    std::fs::write(w.join(".gitignore"), "*.log\n").unwrap();
    let command = "echo 'src/' > .gitignore && rm -r src && echo made > src.log";
    let steps = vec![tool("bash", json!({"command": command})), text("Done.")];
    prompt(steps, home.path(), w).await;
    let said = undo(home.path(), w);
    assert_src_back(w, &said);
    assert_eq!(std::fs::read_to_string(w.join(".gitignore")).unwrap(), "*.log\n");
    assert!(said.contains("changed a .gitignore"), "undo says what it could not cover: {said}");
}
