//! An item's check is no back door: it runs in the sandbox `bash` runs in, through `keel -p`
//! against a scripted model on 127.0.0.1. A check that writes outside the workspace, reaches a
//! server over the network or reads a hidden credential fails, nothing leaves the sandbox, and
//! its item stays open; each control (the sandbox off, the network allowed, a visible file) shows
//! the same check passing where nothing confines it. Homes and workspaces live outside `/tmp`,
//! which a sandboxed command sees as a private folder of its own.

use crate::support::bin::{self, json_lines};
use crate::support::files::outside_tmp;
use crate::support::keel_as::{Run, User, keel_p};
use crate::support::llm::{Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The item the model claims, with `check`, then its claim, then its last words.
fn claims_with(check: &str) -> Vec<Step> {
    vec![
        tool(
            "todo",
            json!({"items": [
                {"id": "1", "text": "Do the step", "status": "in_progress", "check": check},
                {"id": "2", "text": "Report", "status": "pending"}
            ]}),
        ),
        tool("todo", json!({"update": [{"id": "1", "status": "completed"}]})),
        text("Done."),
    ]
}

/// How one run took the claim: whether the check passed, what it printed, and the board's count
/// of completed items at the end.
struct Claim {
    passed: bool,
    output: String,
    done: u64,
}

/// Runs the claim of an item whose check is `check` as `user`, in `work` with home `home`, with
/// `args` added to `keel -p`; checks that keel said the same of it everywhere it says so.
fn claim(user: User, check: &str, home: &Path, work: &Path, args: &[&str]) -> (Claim, Run) {
    let args: Vec<&str> = ["--output-format", "json"].iter().chain(args).copied().collect();
    let run = keel_p(user, claims_with(check), home, work, &args, |_| {});
    assert_eq!(
        run.output.status.code(),
        Some(0),
        "{user:?}: {}{}",
        run.stderr(),
        bin::text(&run.output.stdout)
    );
    let events = json_lines(&run.output);
    let ends: Vec<&Value> = events.iter().filter(|event| event["type"] == "check_end").collect();
    assert_eq!(ends.len(), 1, "{user:?}: one check ran: {events:?}");
    assert_eq!((&ends[0]["item"], &ends[0]["command"]), (&json!("1"), &json!(check)));
    let result = events.last().cloned().unwrap_or_default();
    assert_eq!(result["type"], "result", "{events:?}");
    let claim = Claim {
        passed: ends[0]["passed"] == true,
        output: ends[0]["output"].as_str().unwrap_or_default().to_owned(),
        done: result["done"].as_u64().unwrap_or(u64::MAX),
    };
    // The model read the same: refused with the check's exit, or the item checked off.
    let answer = &run.results[1];
    if claim.passed {
        assert!(answer.contains("[x] #1: Do the step  (check passed)"), "{answer}");
    } else {
        assert!(answer.contains("Item 1: its check failed (exit "), "{answer}");
        assert!(answer.contains(&format!("): {check}")), "{answer}");
    }
    (claim, run)
}

#[test]
fn a_check_cannot_write_outside_the_workspace() {
    let (work, outside) = (outside_tmp(), outside_tmp());
    let kept = outside.path().join("kept.txt");
    std::fs::write(&kept, "kept\n").unwrap();
    let planted = outside.path().join("planted.txt");
    let check =
        format!("echo planted > '{}' && echo more >> '{}'", planted.display(), kept.display());
    for user in User::BOTH {
        let home = outside_tmp();
        let (confined, _) = claim(user, &check, home.path(), work.path(), &[]);
        assert!(!confined.passed, "{user:?}: {}", confined.output);
        assert!(confined.output.contains("Read-only file system"), "{}", confined.output);
        assert_eq!(confined.done, 0, "{user:?}: the item stays open");
        assert!(!planted.exists(), "{user:?}: the check wrote outside");
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "kept\n", "{user:?}");
    }
    // The control: with the sandbox off the same check writes, passes and completes the item.
    let (home, work) = (outside_tmp(), outside_tmp());
    let (free, _) = claim(User::Root, &check, home.path(), work.path(), &["--sandbox", "off"]);
    assert!(free.passed && free.done == 1, "{}", free.output);
    assert_eq!(std::fs::read_to_string(&planted).unwrap(), "planted\n");
}

#[test]
fn a_check_cannot_reach_the_network_unless_it_is_allowed() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reached = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reached);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut stream = stream;
            let _ = std::io::Write::write_all(&mut stream, b"pong\n");
        }
    });
    let (home, work) = (outside_tmp(), outside_tmp());
    // In a script: the guard would refuse `/dev/tcp` on the command line itself.
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && head -n 1 <&3 | grep -q pong\n");
    std::fs::write(work.path().join("fetch.sh"), script).unwrap();
    let check = "bash fetch.sh";
    let (closed, _) = claim(User::Root, check, home.path(), work.path(), &[]);
    assert!(!closed.passed, "{}", closed.output);
    assert_eq!(closed.done, 0, "the item stays open");
    assert_eq!(reached.load(Ordering::SeqCst), 0, "the check reached the server");
    // The control: with the network allowed the same check reaches it and passes.
    let (open, _) = claim(User::Root, check, home.path(), work.path(), &["--network"]);
    assert!(open.passed && open.done == 1, "{}", open.output);
    assert_eq!(reached.load(Ordering::SeqCst), 1);
}

/// What the planted key holds: no command or tool input spells it.
const SECRET: &str = "hush-check-5d21";

#[test]
fn a_check_cannot_read_what_is_hidden() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        let h = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(h.join(".ssh")).unwrap();
        std::fs::write(h.join(".ssh/id_ed25519"), format!("key = {SECRET}\n")).unwrap();
        std::fs::write(h.join("notes.txt"), "key = shown\n").unwrap();
        // grep prints the line it finds: were the key readable, the check would pass with it.
        let hidden = format!("grep -h 'key = ' {}", h.join(".ssh/id_ed25519").display());
        let (confined, run) = claim(user, &hidden, &h, work.path(), &[]);
        assert!(!confined.passed, "{user:?}: {}", confined.output);
        assert_eq!(confined.done, 0, "{user:?}: the item stays open");
        let said = format!("{}{}", String::from_utf8_lossy(&run.output.stdout), run.stderr());
        let sent: String = run.bodies.iter().map(Value::to_string).collect();
        assert!(!said.contains(SECRET) && !sent.contains(SECRET), "{user:?}: the key leaked");
        // The control: the same check of a file nothing hides passes, its line in the output.
        let visible = format!("grep -h 'key = ' {}", h.join("notes.txt").display());
        let (shown, _) = claim(user, &visible, &h, work.path(), &[]);
        assert!(shown.passed && shown.done == 1, "{user:?}: {}", shown.output);
        assert!(shown.output.contains("key = shown"), "{user:?}: {}", shown.output);
    }
}
