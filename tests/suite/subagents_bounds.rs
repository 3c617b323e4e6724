//! The children of one response are bounded, through the keel binary against a scripted model:
//! of thirty `task` calls in one response the first `max_children_per_response` (8) run and each
//! of the rest is answered with an error naming the bound; a workspace's file may lower the bound,
//! never raise it; a child's responses count against the prompt's `--max-rounds`, so the server
//! sees exactly as many requests as the limit allows; and a child's command taken before the
//! sandbox's probe answers waits for it and obeys the child's read-only rules, as root and as an
//! unprivileged user.

use crate::support::bin::{self, json_lines, last_result, output_within};
use crate::support::files::outside_tmp;
use crate::support::keel_as::{NOBODY, User, give_to, tool_results};
use crate::support::llm::family::{FamilyLlm, child};
use crate::support::llm::{Step, text, tool};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// The `task` calls of the one crowded response.
const CALLS: usize = 30;
/// keel's default bound of children per response.
const BOUND: usize = keel::agent::DEFAULT_MAX_CHILDREN_PER_RESPONSE;
/// How the answer to a `task` call past the bound begins.
const PAST_BOUND: &str = "Not run: one response may start at most";

/// A response of [`CALLS`] explorers, each found by the server as a `SCOUT`, then the last word.
fn crowded_parent() -> Vec<Step> {
    let tools = (0..CALLS)
        .map(|i| ("task".to_owned(), json!({"prompt": format!("SCOUT {i}: look around")})))
        .collect();
    vec![Step { tools, ..Step::default() }, text("Looked.")]
}

/// `keel -p go` as `user` in `work` with `home`, against `server`, in JSON; `adjust` changes the
/// command first. `home` and `work` are given to the user.
fn keel_p(
    user: User,
    server: &FamilyLlm,
    (home, work): (&Path, &Path),
    args: &[&str],
    adjust: impl FnOnce(&mut Command),
) -> Output {
    give_to(user, home);
    give_to(user, work);
    let mut command = bin::keel(home);
    command
        .args(["-p", "go", "--approval", "auto", "--output-format", "json", "--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    if user == User::Nobody && nix::unistd::geteuid().is_root() {
        std::os::unix::process::CommandExt::uid(&mut command, NOBODY);
        std::os::unix::process::CommandExt::gid(&mut command, NOBODY);
    }
    adjust(&mut command);
    output_within(&mut command, "keel -p")
}

/// The output of every `tool_end` event of the parent (not a child's), in order.
fn parent_tool_outputs(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|event| event["type"] == "tool_end" && event.get("agent").is_none())
        .map(|event| event["output"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The `agent_end` events, in order.
fn agent_ends(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|event| event["type"] == "agent_end").collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn thirty_task_calls_in_one_response_start_eight_children_and_the_rest_are_told_why() {
    for user in User::BOTH {
        let scout = child("SCOUT", vec![text("Report: looked.")]);
        let server = FamilyLlm::start(crowded_parent(), vec![scout]).await;
        let (home, work) = (outside_tmp(), outside_tmp());
        let output = keel_p(user, &server, (home.path(), work.path()), &[], |_| {});
        assert!(output.status.success(), "{}", bin::text(&output.stderr));

        let requests = server.requests();
        let children = requests.iter().filter(|(whose, _)| whose.is_some()).count();
        assert_eq!(children, BOUND, "one request for each child that ran");
        assert_eq!(requests.len(), BOUND + 2, "the parent's two and the children's");
        let answers = tool_results(&server.parent());
        assert_eq!(answers.len(), CALLS, "every call answered: {answers:?}");
        let (ran, past): (Vec<_>, Vec<_>) =
            answers.iter().partition(|answer| !answer.starts_with(PAST_BOUND));
        assert_eq!(ran.len(), BOUND, "{ran:?}");
        assert!(ran.iter().all(|answer| answer.starts_with("Report: looked.")), "{ran:?}");
        assert!(
            answers[..BOUND].iter().all(|answer| !answer.starts_with(PAST_BOUND)),
            "the first run"
        );
        assert_eq!(past.len(), CALLS - BOUND);
        assert_eq!(
            past[0],
            "Not run: one response may start at most 8 child agents \
             (max_children_per_response), and this one called task 30 times, so only the first \
             8 ran. Call task again in your next response for the rest.",
            "{user:?}"
        );
        let events = json_lines(&output);
        assert_eq!(agent_ends(&events).len(), BOUND, "no other child was started");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workspace_may_lower_the_bound_of_children_never_raise_it() {
    for (set, ran) in [(2, 2), (50, BOUND)] {
        let scout = child("SCOUT", vec![text("Report: looked.")]);
        let server = FamilyLlm::start(crowded_parent(), vec![scout]).await;
        let (home, work) = (outside_tmp(), outside_tmp());
        std::fs::create_dir(work.path().join(".keel")).unwrap();
        let file = format!("max_children_per_response = {set}\n");
        std::fs::write(work.path().join(".keel/config.toml"), file).unwrap();
        let output = keel_p(User::Root, &server, (home.path(), work.path()), &[], |_| {});
        assert!(output.status.success(), "{}", bin::text(&output.stderr));
        let children = server.requests().iter().filter(|(whose, _)| whose.is_some()).count();
        assert_eq!(children, ran, "the workspace's {set}");
        let answers = tool_results(&server.parent());
        let past = answers.iter().filter(|answer| answer.starts_with(PAST_BOUND)).count();
        assert_eq!(past, CALLS - ran, "the workspace's {set}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn childrens_responses_count_against_the_prompts_max_rounds() {
    for user in User::BOTH {
        // One response: the parent's own. No child gets a request, and the parent none more.
        let scout = child("SCOUT", vec![text("Report: looked.")]);
        let server = FamilyLlm::start(crowded_parent(), vec![scout]).await;
        let (home, work) = (outside_tmp(), outside_tmp());
        let output =
            keel_p(user, &server, (home.path(), work.path()), &["--max-rounds", "1"], |_| {});
        assert_eq!(server.requests().len(), 1, "exactly the limit: {}", bin::text(&output.stderr));
        let events = json_lines(&output);
        let ends = agent_ends(&events);
        assert_eq!(ends.len(), BOUND, "the bound still holds");
        for end in &ends {
            assert_eq!(end["status"], "stopped", "{end}");
            assert_eq!(end["rounds"], 0, "{end}");
        }
        let outputs = parent_tool_outputs(&events);
        assert_eq!(outputs.len(), CALLS);
        assert!(
            outputs[0].contains(
                "the turn that started it has used its 1 model responses (--max-rounds or \
                 max_rounds), its child agents' included"
            ),
            "{}",
            outputs[0]
        );
        assert_eq!(outputs.iter().filter(|out| out.starts_with(PAST_BOUND)).count(), CALLS - BOUND);
        let result = last_result(&events);
        assert_eq!(result["outcome"], "max_rounds", "{result}");

        // Four: the parent's first and three children's; the parent's next request is never sent.
        // Three explorers run at once (`max_parallel_agents`), so which three does not matter.
        let scout = child("SCOUT", vec![text("Report: looked.")]);
        let server = FamilyLlm::start(crowded_parent(), vec![scout]).await;
        let (home, work) = (outside_tmp(), outside_tmp());
        let output =
            keel_p(user, &server, (home.path(), work.path()), &["--max-rounds", "4"], |_| {});
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "exactly the limit: {}", bin::text(&output.stderr));
        assert_eq!(requests.iter().filter(|(whose, _)| whose.is_none()).count(), 1);
        let events = json_lines(&output);
        let statuses: Vec<&str> =
            agent_ends(&events).iter().map(|end| end["status"].as_str().unwrap_or("")).collect();
        assert_eq!(statuses.iter().filter(|status| **status == "done").count(), 3, "{statuses:?}");
        assert_eq!(
            statuses.iter().filter(|status| **status == "stopped").count(),
            5,
            "{statuses:?}"
        );
        let result = last_result(&events);
        assert_eq!(result["outcome"], "max_rounds", "{result}");
        let error = result["error"].as_str().unwrap_or_default();
        assert!(
            error.starts_with(
                "Stopped after 4 model responses in this turn, 3 of them its child agents' (the \
                 limit set by --max-rounds or max_rounds)."
            ),
            "{error}"
        );
    }
}

/// A `bwrap` that takes `SLOW_PROBE_SECONDS` before each start, the probe's included, then is
/// the real one: a command the child takes is taken before the probe answers.
fn slow_bwrap(bin: &Path) -> std::path::PathBuf {
    let real = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .into_iter()
        .find(|path| Path::new(path).exists())
        .expect("these tests need bwrap (package bubblewrap)");
    let slow = bin.join("bwrap");
    std::fs::write(&slow, format!("#!/bin/sh\nsleep {SLOW_PROBE_SECONDS}\nexec {real} \"$@\"\n"))
        .unwrap();
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    slow
}

/// How long the slow `bwrap` waits before each start.
const SLOW_PROBE_SECONDS: u32 = 3;

#[tokio::test(flavor = "multi_thread")]
async fn a_childs_command_taken_before_the_probe_answers_obeys_its_read_only_rules() {
    for user in User::BOTH {
        let parent = vec![tool("task", json!({"prompt": "EARLY: look around"})), text("Done.")];
        let early = child(
            "EARLY",
            vec![
                tool("bash", json!({"command": "touch escaped.txt; echo ran"})),
                text("Report: looked."),
            ],
        );
        let server = FamilyLlm::start(parent, vec![early]).await;
        let (home, work, bin) = (outside_tmp(), outside_tmp(), outside_tmp());
        let slow = slow_bwrap(bin.path());
        let output = keel_p(user, &server, (home.path(), work.path()), &[], |command| {
            command.env("KEEL_BWRAP", &slow);
        });
        assert!(output.status.success(), "{user:?}: {}", bin::text(&output.stderr));
        let answers = tool_results(&server.child("EARLY"));
        assert_eq!(answers.len(), 1, "{user:?}: {answers:?}");
        assert!(answers[0].contains("ran"), "{user:?}: it ran, in the sandbox: {}", answers[0]);
        assert!(
            answers[0].contains("Read-only file system"),
            "{user:?}: the read-only sandbox: {}",
            answers[0]
        );
        assert!(!work.path().join("escaped.txt").exists(), "{user:?}: the explorer wrote");
    }
}
