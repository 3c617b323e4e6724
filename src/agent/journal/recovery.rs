//! Honest recovery after a crash: what the model is told about the round keel was in.
//!
//! A round's results go into the history together when the round ends, but each call's result
//! is logged the moment the call finishes (`Record::ToolResult`). When keel stopped mid-round,
//! the calls whose results were logged keep them, and every other call is answered with
//! [`CUT_OFF`]: keel cannot know how far it got, and says so rather than claiming the person
//! interrupted it, so the model checks before it repeats anything.

use crate::message::{ContentBlock, Message, Role};
use crate::tools::ToolCall;

/// The result of a call that was running (or about to) when keel's process stopped.
pub const CUT_OFF: &str = "cut off: the keel process stopped while this ran, so it may be \
partly done; check its effects before repeating it";

/// The message that completes a round cut off by a crash, and the calls that got [`CUT_OFF`];
/// `None` when the history owes no results.
pub(crate) fn complete_cut_off_round(
    history: &[Message],
    answered: &[ContentBlock],
) -> Option<(Message, Vec<ToolCall>)> {
    let last = history.last().filter(|message| message.role == Role::Assistant)?;
    let calls: Vec<ToolCall> = last.content.iter().filter_map(ToolCall::from_block).collect();
    if calls.is_empty() {
        return None;
    }
    let mut cut_off = Vec::new();
    let results = calls
        .into_iter()
        .map(|call| {
            let logged = answered.iter().find(|block| {
                matches!(block, ContentBlock::ToolResult { tool_use_id, .. } if *tool_use_id == call.id)
            });
            match logged {
                Some(block) => block.clone(),
                None => {
                    let block = ContentBlock::ToolResult {
                        tool_use_id: call.id.clone(),
                        content: CUT_OFF.to_owned(),
                        is_error: true,
                    };
                    cut_off.push(call);
                    block
                }
            }
        })
        .collect();
    Some((Message { role: Role::User, content: results }, cut_off))
}
