//! Compaction over a real `State`, without a server: what each plan does to the history, what
//! the front ends and the PreCompact hooks are told, and when the turn is told nothing fits.

use super::*;
use crate::agent::command::Command;
use crate::agent::compaction::fixtures::{long_task, result_of};
use crate::agent::config::ApprovalMode;
use crate::agent::reminder::NagThreshold;
use crate::agent::snapshot::{ContextUse, Snapshot};
use crate::agent::state::ModelLabel;
use crate::board::Board;
use crate::llm::WireFormat;
use crate::llm::scripted::ScriptedProvider;
use crate::message::{ContentBlock, Message};
use crate::runtime::Workspace;
use crate::tools::Tools;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// What the scripted model answers the summary request.
const SUMMARY: &str = "Done: three cases fixed. Next: the fourth.";

/// One conversation's parts, owned, and the other ends of its channels.
struct Conversation {
    state: State,
    meter: ContextMeter,
    config: AgentConfig,
    outbox: Outbox,
    events: UnboundedReceiver<AgentEvent>,
    _snapshots: UnboundedReceiver<Snapshot>,
    inbox: UnboundedReceiver<Command>,
    person: UnboundedSender<Command>,
    services: Services,
    provider: Option<Arc<Provider>>,
    _workspace: tempfile::TempDir,
}

impl Conversation {
    /// `history` and `board`, over a configured window of `window` tokens (none kept for the
    /// answer), with no model.
    fn new(history: &History, board: Board, window: u32) -> Self {
        let label = ModelLabel { provider: "test", model: "m", wire_format: WireFormat::default() };
        let mut state = State::new("", NagThreshold::Fixed(3), true, label);
        for message in history {
            state.push_message(message.clone());
        }
        state.set_board(board);
        let (snapshots, snapshots_rx) = unbounded_channel();
        let (events, events_rx) = unbounded_channel();
        let (person, inbox) = unbounded_channel();
        let workspace = tempfile::tempdir().unwrap();
        let tools = Tools::new(Workspace::new(workspace.path()).unwrap());
        Self {
            state,
            meter: ContextMeter::new(window, WindowSource::Configured, 0.8, 0),
            config: AgentConfig::default(),
            outbox: Outbox { snapshots, events, asks: None },
            events: events_rx,
            _snapshots: snapshots_rx,
            inbox,
            person,
            services: Services::new(tools, ApprovalMode::Auto),
            provider: None,
            _workspace: workspace,
        }
    }

    /// With a scripted model that answers every request with [`SUMMARY`].
    fn with_model(mut self) -> Self {
        let script = serde_json::json!({ "prompt": "-", "finished": SUMMARY, "steps": [] });
        let model = ScriptedProvider::from_json(&script.to_string(), Duration::ZERO).unwrap();
        self.provider = Some(Arc::new(Provider::Scripted(model)));
        self
    }

    fn parts(&mut self) -> Parts<'_> {
        Parts {
            state: &mut self.state,
            meter: &mut self.meter,
            config: &self.config,
            outbox: &self.outbox,
            provider: self.provider.as_ref(),
            inbox: &mut self.inbox,
            services: &self.services,
        }
    }

    fn history(&self) -> History {
        self.state.view().history.clone()
    }

    /// The events sent so far.
    fn told(&mut self) -> Vec<AgentEvent> {
        std::iter::from_fn(|| self.events.try_recv().ok()).collect()
    }

    /// Plans and carries out `why`; with what the PreCompact hooks would be told.
    async fn compact(&mut self, why: Why) -> (Option<String>, Result<bool, Failed>) {
        let plan = match plan(&mut self.parts(), why) {
            Ok(Some(plan)) => plan,
            Ok(None) => return (None, Ok(false)),
            Err(failed) => return (None, Err(failed)),
        };
        let hooks = plan.pre_compact().map(|(query, fields)| {
            assert!(matches!(query, Query::Value(word) if fields["trigger"] == word));
            assert_eq!(fields["custom_instructions"], "");
            fields["trigger"].as_str().unwrap_or_default().to_owned()
        });
        (hooks, carry_out(&mut self.parts(), plan).await)
    }
}

/// The estimates of `history` whole and masked keeping three rounds.
fn whole_and_masked(history: &History) -> (u64, u64) {
    let meter = ContextMeter::new(u32::MAX, WindowSource::Configured, 0.8, 0);
    let three = goal::masked(history, mask::KEEP_ROUNDS).1;
    (meter.estimate_of(history), meter.estimate_of(&three))
}

/// The compaction events among `events`: (trigger, masked, summarised, summary error).
fn compactions(events: &[AgentEvent]) -> Vec<(Trigger, usize, usize, Option<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Compaction { trigger, masked, summarised, summary_error, .. } => {
                Some((*trigger, *masked, *summarised, summary_error.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn under_the_threshold_nothing_is_planned_and_the_estimate_is_shown() {
    let (history, board) = long_task(4);
    let mut conversation = Conversation::new(&history, board, 1_000_000);
    let (hooks, done) = conversation.compact(Why::BeforeRequest).await;
    assert_eq!((hooks, done), (None, Ok(false)));
    assert_eq!(conversation.history(), history);
    let estimate = conversation.meter.estimate(&history);
    let shown = conversation.state.view().context;
    assert_eq!(shown, ContextUse { tokens: estimate, window: 1_000_000 });
}

#[tokio::test]
async fn past_the_threshold_masking_keeps_the_current_board_and_one_lines_the_superseded() {
    let (history, board) = long_task(4);
    let (whole, masked) = whole_and_masked(&history);
    // A threshold between the two: masking is enough.
    let window = ((whole + masked) / 2) as f64 / 0.8;
    let mut conversation = Conversation::new(&history, board, window as u32);
    let (hooks, done) = conversation.compact(Why::BeforeRequest).await;
    assert_eq!((hooks.as_deref(), done), (Some("auto"), Ok(true)));
    let now = conversation.history();
    assert_eq!(now.len(), history.len(), "masking changes no message's place");
    assert_eq!(result_of(&now, "plan"), Some(mask::SUPERSEDED_BOARD));
    assert_eq!(result_of(&now, "update"), result_of(&history, "update"), "the current board");
    let stub = result_of(&now, "c0").unwrap_or_default();
    assert!(stub.starts_with("[bash `pytest` → exit 1, ") && stub.ends_with(" if needed]"));
    for newest in ["c2", "c3", "c4"] {
        assert_eq!(result_of(&now, newest), result_of(&history, newest), "{newest} is kept");
    }
    let told = compactions(&conversation.told());
    assert!(matches!(told[..], [(Trigger::Threshold, masked, 0, None)] if masked > 0), "{told:?}");
    let shown = conversation.state.view().context.tokens;
    assert!(shown <= conversation.meter.threshold(), "{shown} is shown, below the threshold");
}

#[tokio::test]
async fn a_refusal_is_told_and_a_request_no_smaller_is_not_sent_again() {
    let (history, board) = long_task(0);
    let lone: History = history.take(3);
    let mut conversation = Conversation::new(&lone, board, 1_000_000);
    conversation.meter.sent(&lone);
    let overflow = Overflow { limit: Some(50_000), prompt: None };
    let (hooks, done) = conversation.compact(Why::Refused(overflow)).await;
    assert_eq!(hooks, None, "nothing changes, so no PreCompact hook runs");
    let Err(Failed::DoesNotFit(text)) = done else { panic!("{done:?}") };
    assert!(text.contains("does not fit") && text.contains("(as the server stated it)"), "{text}");
    let told = conversation.told();
    assert!(told.iter().any(|event| matches!(event, AgentEvent::Notice { text }
        if text.contains("too long for the model (it allows 50000 tokens); compacting"))));
    assert_eq!(conversation.history(), lone);
}

#[tokio::test]
async fn a_refused_request_is_compacted_below_what_was_refused() {
    let (history, board) = long_task(4);
    let mut conversation = Conversation::new(&history, board, 1_000_000);
    conversation.meter.sent(&history);
    let refused_bytes = conversation.meter.bytes_of(&history);
    let overflow = Overflow { limit: Some(900_000), prompt: None };
    let (hooks, done) = conversation.compact(Why::Refused(overflow)).await;
    assert_eq!((hooks.as_deref(), done), (Some("auto"), Ok(true)));
    let now = conversation.meter.bytes_of(&conversation.history());
    assert!((now as f64) < refused_bytes as f64 * 0.75, "{now} of {refused_bytes} bytes");
    let told = compactions(&conversation.told());
    assert!(matches!(told[..], [(Trigger::Refused, _, 0, None)]), "{told:?}");
}

#[tokio::test]
async fn a_window_with_no_room_for_the_prompt_fails_before_anything_is_planned() {
    let (history, board) = long_task(1);
    let mut conversation = Conversation::new(&history, board, 1_000_000);
    conversation.meter = ContextMeter::new(1_500, WindowSource::Configured, 0.8, 1_000);
    let (hooks, done) = conversation.compact(Why::BeforeRequest).await;
    assert_eq!(hooks, None);
    assert!(matches!(&done, Err(Failed::DoesNotFit(text)) if text.contains("leaves 500 for it")));
    assert_eq!(conversation.history(), history);
}

#[tokio::test]
async fn asked_with_a_model_its_summary_and_the_board_stand_for_the_work_before_the_newest_round() {
    let (history, board) = long_task(4);
    let rendered = board.render();
    let mut conversation = Conversation::new(&history, board, 1_000_000).with_model();
    let (hooks, done) = conversation.compact(Why::Asked).await;
    assert_eq!((hooks.as_deref(), done), (Some("manual"), Ok(true)));
    let now = conversation.history();
    assert_eq!(now[0], Message::user_text("Make the tests pass."), "the request, verbatim");
    let [ContentBlock::Note { text }] = &now[1].content[..] else { panic!("{:?}", now[1]) };
    assert!(text.contains(SUMMARY) && text.contains(&rendered), "{text}");
    let tail = history.len() - 2;
    assert_eq!(now.clone().skip(2), history.clone().skip(tail), "the newest round as it was");
    let told = compactions(&conversation.told());
    assert!(matches!(&told[..], [(Trigger::Request, 0, summarised, None)] if *summarised == tail));
    assert_eq!(conversation.state.view().activity, Activity::Thinking);
}

#[tokio::test]
async fn without_a_model_a_list_of_what_ran_stands_in_for_the_summary() {
    let (history, board) = long_task(4);
    let mut conversation = Conversation::new(&history, board, 1_000_000);
    let (_, done) = conversation.compact(Why::Asked).await;
    assert_eq!(done, Ok(true));
    let now = conversation.history();
    let [ContentBlock::Note { text }] = &now[1].content[..] else { panic!("{:?}", now[1]) };
    assert!(text.contains("could not get a summary of the earlier work from the model (no model"));
    assert!(text.contains("- [bash `pytest` → exit 1, "), "each call that ran: {text}");
    let told = compactions(&conversation.told());
    let error = told.first().and_then(|told| told.3.clone());
    assert_eq!(error.as_deref(), Some("no model is configured"));
}

#[tokio::test]
async fn the_person_interrupting_the_summary_stops_the_compaction_and_changes_nothing() {
    let (history, board) = long_task(4);
    let mut conversation = Conversation::new(&history, board, 1_000_000).with_model();
    conversation.person.send(Command::Cancel).unwrap();
    let (_, done) = conversation.compact(Why::Asked).await;
    assert_eq!(done, Err(Failed::Stopped(Stop::Interrupted)));
    assert_eq!(conversation.history(), history);
    assert!(compactions(&conversation.told()).is_empty());
}

#[test]
fn how_compact_went_is_told_and_the_agent_goes_idle() {
    let (history, board) = long_task(0);
    let mut conversation = Conversation::new(&history, board, 1_000_000);
    let cases = [
        (Ok(true), None, None),
        (Ok(false), None, Some("Nothing to compact yet: the history is the newest round")),
        (Err(Failed::Stopped(Stop::Quit)), Some(Stop::Quit), Some("Compaction interrupted.")),
    ];
    for (done, stop, notice) in cases {
        conversation.state.set_activity(Activity::Compacting);
        assert_eq!(tell_asked(&mut conversation.state, &conversation.outbox, done), stop);
        let told: Vec<String> = conversation
            .told()
            .into_iter()
            .filter_map(|event| match event {
                AgentEvent::Notice { text } => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(told.len(), usize::from(notice.is_some()), "{told:?}");
        assert!(notice.is_none_or(|notice| told[0].starts_with(notice)), "{told:?}");
        assert_eq!(conversation.state.view().activity, Activity::Idle);
    }
    let error = Err(Failed::DoesNotFit("raise it".into()));
    assert_eq!(tell_asked(&mut conversation.state, &conversation.outbox, error), None);
    let told = conversation.told();
    assert!(matches!(&told[..], [AgentEvent::Error { text }] if text == "raise it"), "{told:?}");
}
