//! Repositories below the workspace's top, or the top made one without a `.git` ([`nested`]):
//! noted as the session opens, on a thread of its own (what is there then is the person's) and
//! kept read-only to commands; looked for again as every turn that follows a command ends, and
//! one that appeared moved aside, the person told.

use crate::agent::event::AgentEvent;
use crate::agent::services::{MAX_PROTECTED, Noted, Services};
use crate::agent::turn::handle::{Handle, Parts};
use crate::runtime::sandbox::nested;
use crate::tools::Tools;

/// Before a command: the look as the session opened is done (what a command makes is new);
/// returns `tools` with the repositories below the top read-only
/// (`NestedWatch::protecting`). The person is told once of any left writable.
pub(in crate::agent) async fn protect_nested_repositories(
    (mut conv, shared): Parts<'_>,
    tools: Tools,
) -> Tools {
    let services = shared.services;
    let mut watch = services.nested.lock().await;
    if !watch.commands_ran {
        let before = watch.before().await;
        watch.state = Noted::Done(before);
        watch.commands_ran = true;
    }
    let (tools, left) = watch.protecting(tools);
    let tell = left.filter(|_| !watch.told_unprotected);
    watch.told_unprotected |= tell.is_some();
    drop(watch);
    if let Some(left) = tell {
        conv.emit(AgentEvent::Error {
            text: format!(
                "keel keeps the {MAX_PROTECTED} repositories nearest the workspace's top \
                 read-only to commands; {left} more below it are not, and a command could \
                 write the hooks and config git runs there."
            ),
        });
    }
    tools
}

/// As a turn ends, once a command has run in the session: a repository that appeared below
/// the top since is moved aside, and the person told as of an error (`-p` prints it too).
/// Whether one was made again where keel had moved one aside before.
pub(in crate::agent) async fn look_for_nested_repositories((mut conv, shared): Parts<'_>) -> bool {
    let services = shared.services;
    let mut watch = services.nested.lock().await;
    if !watch.commands_ran {
        return false;
    }
    let before = watch.before().await;
    let incomplete_before = !before.complete;
    let (root, kept) = (watch.root.clone(), before.clone());
    let settled = tokio::task::spawn_blocking(move || nested::settle(&root, &before)).await;
    let Ok(settled) = settled else {
        // The look was lost: the next one starts from this one's start, never from nothing.
        watch.state = Noted::Done(kept);
        return false;
    };
    let complete = settled.scan.complete;
    watch.state = Noted::Done(settled.scan);
    let mut again = false;
    for mark in settled.moved {
        again |= !watch.moved.insert(mark);
    }
    drop(watch);
    if incomplete_before {
        tell_incomplete(&mut conv, services, false).await;
    }
    for text in settled.told {
        conv.emit(AgentEvent::Error { text });
    }
    if !complete {
        tell_incomplete(&mut conv, services, true).await;
    }
    again
}

/// Tells the person, once, that a look stopped at [`nested::MAX_ENTRIES`] entries: as the
/// session opened (no repository a command makes is looked for), or later (only those
/// within the first entries are).
async fn tell_incomplete(conv: &mut Handle<'_>, services: &Services, later: bool) {
    if std::mem::replace(&mut services.nested.lock().await.told_incomplete, true) {
        return;
    }
    let max = nested::MAX_ENTRIES;
    let text = if later {
        format!(
            "keel looked through the first {max} entries of the workspace for repositories \
             commands made, not all of them."
        )
    } else {
        format!(
            "The workspace holds more than {max} entries, too many for keel to tell a \
             repository a command makes (a sub/.git, whose hooks git would run outside the \
             sandbox) from one that was there: look before you use git in a folder a \
             command made."
        )
    };
    conv.emit(AgentEvent::Error { text });
}
