//! Checks before completion (docs/board.md, "Checks"): whenever an update would complete an item
//! that carries a check — the model's `todo`, a child's success, the person's `/todo done` —
//! the check runs first, and the item is completed only on exit 0.
//!
//! A check is a command of the session: decided by the approval rules as a `bash` call running
//! it would be (under `ask` the person is asked, the item named; their "always" covers that
//! check's command), run by the same shell in the same sandbox as `bash`, in the workspace,
//! killed after `check_timeout`, the person's interrupt heard throughout. Under read-only rules
//! (plan mode, `--approval read-only`, an explorer) no check runs, so no item with one can be
//! completed. The first check that does not pass refuses the whole update, the board as it was;
//! after [`STALE_AFTER`] failures in a row the refusal says plainly to fix the cause or re-plan.

use crate::agent::approval::Verdict;
#[cfg(doc)]
use crate::agent::check_record::STALE_AFTER;
use crate::agent::check_record::{self, CheckEnd, CheckRecord};
use crate::agent::command::Decision;
use crate::agent::config::ApprovalMode;
use crate::agent::snapshot::{Activity, ApprovalRequest, Asking};
use crate::agent::turn::approval_prompt::{sandbox_words, wait_for_answer};
use crate::agent::turn::handle::{Parts, tools_for_call};
use crate::agent::turn::hooks::keep_hook_files;
use crate::agent::turn::road::Rules;
use crate::agent::turn::watches::settle_sandbox;
use crate::agent::turn::{INTERRUPTED, Stop, during_turn, nested_repos};
use crate::board::{Board, BoardError, BoardItem, Status};
use crate::tools::{ToolContext, ToolOutcome, bash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The most of a timed-out or failed start's first line a check's exit keeps, in characters.
const EXIT_WORDS_CHARS: usize = 120;

/// Whose update a check stands in the way of: it decides whom a refusal speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::agent) enum Claimant {
    /// The model's `todo`, or a child's success on its item.
    Model,
    /// The person's own edit (`/todo done`, the pane's key).
    Person,
}

/// Why an update a check stands in the way of was refused: what the model (or the person)
/// reads, and why the turn must stop when the person interrupted.
pub(in crate::agent) type Refused = (String, Option<Stop>);

/// The items `after` completes that `before` had not.
pub(in crate::agent) fn newly_completed(before: &Board, after: &Board) -> Vec<BoardItem> {
    after
        .items()
        .iter()
        .filter(|item| item.status == Status::Completed)
        .filter(|item| before.get(&item.id).is_none_or(|old| old.status != Status::Completed))
        .cloned()
        .collect()
}

/// Runs the check of every item `proposed` completes that the board does not yet, in board
/// order, marking each that passes on `proposed`; the first that cannot run or does not pass
/// refuses the update.
pub(in crate::agent) async fn run_checks(
    parts: &mut Parts<'_>,
    proposed: &mut Board,
    claimant: Claimant,
) -> Result<(), Refused> {
    let due = newly_completed(&parts.0.state.view().board, proposed);
    for item in due {
        let Some(command) = &item.check else { continue };
        let record = check_item(parts, &item, command, claimant).await?;
        if !record.passed() {
            return Err((refusal(&item.id, &record), None));
        }
        proposed.mark_check_passed(&item.id);
    }
    Ok(())
}

/// Approves and runs `item`'s check `command`, and records how it ended.
async fn check_item(
    parts: &mut Parts<'_>,
    item: &BoardItem,
    command: &str,
    claimant: Claimant,
) -> Result<CheckRecord, Refused> {
    let not_run = |why: String| BoardError::CheckNotRun {
        id: item.id.clone(),
        command: command.to_owned(),
        why,
    };
    if let Some(why) = cannot_run(parts) {
        return Err((not_run(why).to_string(), None));
    }
    approve(parts, item, command).await.map_err(|refused| match refused {
        Denied::Rules(why) => (not_run(why).to_string(), None),
        Denied::Person(stop) => {
            let why = match claimant {
                Claimant::Model => "was declined by the person: ask them how to go on",
                Claimant::Person => "was declined",
            };
            (not_run(why.to_owned()).to_string(), stop)
        }
    })?;
    let (record, stop) = run(parts, &item.id, command).await;
    if let Some(stop) = stop {
        return Err((
            format!("{INTERRUPTED}: item {}'s check did not finish", item.id),
            Some(stop),
        ));
    }
    Ok(record)
}

/// Why no check can run here, in words after "its check (…)": read-only rules, which no command
/// gets past.
fn cannot_run((conv, shared): &Parts<'_>) -> Option<String> {
    match conv.read_only_rules() {
        Some(Rules::PlanMode) => {
            return Some(
                "does not run in plan mode: the item is completed once the plan is approved \
                 and the step done"
                    .to_owned(),
            );
        }
        Some(Rules::Child(why)) => return Some(format!("does not run here: {why}")),
        None => {}
    }
    (shared.services.approvals().mode() == ApprovalMode::ReadOnly)
        .then(|| "does not run under --approval read-only, where no command runs".to_owned())
}

/// Why a check was not let run.
enum Denied {
    /// The approval rules refuse it, for this reason.
    Rules(String),
    /// The person declined it; and stopped the turn, when they did.
    Person(Option<Stop>),
}

/// Tells one approval request from the next.
static ASKED: AtomicU64 = AtomicU64::new(0);

/// Lets the check run, or says why not: the approval rules' verdict on the command as `bash`
/// would run it, the person asked when they want it (the item named), and the rules looked at
/// again after their answer.
async fn approve(parts: &mut Parts<'_>, item: &BoardItem, command: &str) -> Result<(), Denied> {
    let verdict = |(conv, shared): &Parts<'_>| {
        shared.services.approvals().check_command(command, conv.toolset)
    };
    match verdict(parts) {
        Verdict::Run => return Ok(()),
        Verdict::Refuse(_, why) => return Err(Denied::Rules(format!("cannot run: {why}"))),
        Verdict::Ask => {}
    }
    let (conv, shared) = parts;
    settle_sandbox(shared.services, conv.state).await;
    let sandbox = tools_for_call((conv.reborrow(), *shared)).sandbox().clone();
    let asking =
        if sandbox.problem().is_some() { Asking::UnconfinedCommand } else { Asking::Command };
    let request = ApprovalRequest {
        id: format!("check-{}-{}", item.id, ASKED.fetch_add(1, Ordering::Relaxed)),
        tool: crate::tools::names::BASH.model.to_owned(),
        asking,
        detail: command.to_owned(),
        diff: None,
        always: shared.services.approvals().check_always_covers(),
        sandbox: Some(sandbox_words(&sandbox)),
        agent: None,
        check: Some(format!("#{} {}", item.id, crate::visible::one_line(&item.text))),
    };
    match wait_for_answer((conv.reborrow(), *shared), request).await {
        Decision::Once => {}
        Decision::Always => shared.services.approvals().allow_check_always(command),
        Decision::Deny => return Err(Denied::Person(None)),
        Decision::DenyAndStop => return Err(Denied::Person(Some(Stop::Interrupted))),
    }
    if let Some(why) = cannot_run(parts) {
        return Err(Denied::Rules(why));
    }
    match verdict(parts) {
        Verdict::Refuse(_, why) => Err(Denied::Rules(format!("cannot run: {why}"))),
        Verdict::Run | Verdict::Ask => Ok(()),
    }
}

/// Runs item `id`'s check `command` in the sandbox `bash` runs in, the person's interrupt heard
/// meanwhile; records and tells how it ended. Returns the record, and why the turn must stop
/// when the person interrupted it.
async fn run(parts: &mut Parts<'_>, id: &str, command: &str) -> (CheckRecord, Option<Stop>) {
    let (conv, shared) = parts;
    settle_sandbox(shared.services, conv.state).await;
    let tools = tools_for_call((conv.reborrow(), *shared));
    let tools = nested_repos::protect_nested_repositories((conv.reborrow(), *shared), tools).await;
    let tools = keep_hook_files(shared.services, tools);
    conv.state.check_started(id, command);
    conv.state.set_activity(Activity::RunningTool { name: format!("check #{id}") });
    conv.state.publish(conv.outbox);
    let began = Instant::now();
    let cancel = CancellationToken::new();
    let ctx = ToolContext::bare(cancel.clone());
    let sandbox = tools.probing_sandbox().settled().await;
    let timeout = Duration::from_secs(conv.config.check_timeout);
    let running = bash::run_within(tools.workspace().root(), command, timeout, sandbox, &ctx);
    tokio::pin!(running);
    let mut stop = None;
    let outcome = loop {
        tokio::select! {
            outcome = &mut running => break outcome,
            command = conv.inbox.recv(), if stop.is_none() => {
                if let Some(why) = during_turn(conv.state, conv.outbox, shared.services, command) {
                    cancel.cancel();
                    stop = Some(why);
                }
            }
        }
    };
    let failures = conv.state.check_failures(id, command);
    let mut record = ended(command, &outcome, began, failures);
    if stop.is_some() {
        // The person stopped it: no failure of the item's, so the run in a row stands.
        record.failures_in_row = failures;
    }
    conv.state.check_ended(id, record.clone());
    conv.state.set_activity(Activity::Thinking);
    conv.state.publish(conv.outbox);
    (record, stop)
}

/// The record of a check that ran, from `bash`'s outcome.
fn ended(command: &str, outcome: &ToolOutcome, began: Instant, failures: u32) -> CheckRecord {
    let passed = outcome.exit_code == Some(0) && !outcome.is_error;
    // `bash`'s answer begins with its headline (`Exit code 1`); the output follows it.
    let (headline, output) = outcome.for_model.split_once('\n').unwrap_or((&outcome.for_model, ""));
    let end = match (passed, outcome.exit_code) {
        (true, _) => CheckEnd::Passed,
        (false, Some(code)) => CheckEnd::Failed { why: format!("exit {code}") },
        (false, None) => {
            // `Command timed out after 5 min 0 s; …` reads `command timed out after 5 min 0 s`.
            let words = headline.split(';').next().unwrap_or(headline).trim();
            let mut chars = words.chars().take(EXIT_WORDS_CHARS);
            let first = chars.next().map(|c| c.to_lowercase().to_string()).unwrap_or_default();
            CheckEnd::Failed { why: first + &chars.collect::<String>() }
        }
    };
    let mut record = CheckRecord::running(command, if passed { 0 } else { failures + 1 });
    record.end = end;
    record.exit_code = outcome.exit_code;
    record.output = check_record::tail(output);
    record.duration = began.elapsed();
    record.at = std::time::SystemTime::now() - record.duration;
    record
}

/// What the model reads when item `id`'s check did not pass: the exit, the command and the tail
/// of the output; after [`STALE_AFTER`] failures in a row, plainly what to do instead.
fn refusal(id: &str, record: &CheckRecord) -> String {
    let failed = BoardError::CheckFailed {
        id: id.to_owned(),
        exit: record.exit_words(),
        command: record.command.clone(),
        output: record.output.clone(),
    };
    if !record.stale() {
        return failed.to_string();
    }
    format!(
        "{failed}\nThis check has now failed {} times in a row. Do not claim the item again as \
         it stands: fix the cause, or re-plan (split the item, change it or its check).",
        record.failures_in_row
    )
}
