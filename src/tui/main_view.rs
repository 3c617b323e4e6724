//! The main screen as a view: the keys that work anywhere on it, then the conversation's
//! scrolling keys, then the composer's keys and finally its editor; Enter sends the prompt or
//! runs a slash command. It is the bottom of the view stack, so it always has the keyboard.

use super::commands::{self, Parsed, Slash};
use super::keymap::{Binding, KeySpec, lookup};
use super::plan_words;
use super::stack::{Ctx, Effect, Hints, View};
use super::view::completion::Completer;
use super::view::composer::{self, Composer};
use super::view::conversation::{self, Conversation, Source, WHEEL_LINES};
use crate::agent::{Activity, ApprovalMode, Command, Snapshot};
use crate::board::BoardEdit;
use crate::hooks::HooksCommand;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Position, Rect};

/// What a key does anywhere on the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    ClearOrQuit,
    PlanMode,
    QuitIfEmpty,
    History,
    Output,
    Interrupt,
    Help,
}

/// Keys of the main screen that are not the composer's or the conversation's.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc)],
        action: Action::Interrupt,
        help: "interrupt the running turn; prompts queued meanwhile come back to the composer",
        hint: Some("interrupt"),
    },
    Binding {
        keys: &[KeySpec::ctrl('t'), KeySpec::plain(KeyCode::F(2))],
        action: Action::History,
        help: "inspect the last request exactly as sent (also over an approval)",
        hint: Some("request"),
    },
    Binding {
        keys: &[KeySpec::ctrl('g'), KeySpec::plain(KeyCode::F(3))],
        action: Action::Output,
        help: "the newest tool call's whole output, in a pager with search ([ and ] for other calls)",
        // Named in the tool pane's border instead, where the output is.
        hint: None,
    },
    Binding {
        keys: &[KeySpec::char('?')],
        action: Action::Help,
        help: "show this help (on an empty composer)",
        hint: Some("help"),
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::BackTab), KeySpec::shift(KeyCode::BackTab)],
        action: Action::PlanMode,
        help: "plan mode on or off: the model reads and plans, changes nothing until you approve",
        hint: Some("plan"),
    },
    Binding {
        keys: &[KeySpec::ctrl('c')],
        action: Action::ClearOrQuit,
        help: "interrupt the running turn; on an idle prompt clear it, twice within a second quit",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::ctrl('d')],
        action: Action::QuitIfEmpty,
        help: "quit (on an empty composer)",
        hint: None,
    },
];

/// The snapshot's parts the conversation pane reads.
pub fn source(snapshot: &Snapshot) -> Source<'_> {
    Source {
        transcript: &snapshot.transcript,
        streaming: snapshot.streaming.as_ref(),
        queued: &snapshot.queued,
    }
}

/// The conversation and the composer, with the composer's completion menu.
#[derive(Debug)]
pub struct MainView {
    pub composer: Composer,
    pub conversation: Conversation,
    pub completer: Completer,
    /// A short approval typed with a plan waiting: the next key confirms it (`plan_words`).
    pub confirming_plan: bool,
}

impl MainView {
    /// Enter: a slash command runs here, anything else goes to the agent (queued if it is busy).
    fn submit(&mut self, ctx: &mut Ctx<'_>) {
        let text = self.composer.text();
        if text.trim().is_empty() {
            return;
        }
        let source = source(ctx.snapshot);
        let plan_waits = ctx.snapshot.plan_ready && ctx.snapshot.activity == Activity::Idle;
        if plan_waits && plan_words::is_approval(&text) {
            self.confirming_plan = true;
            return;
        }
        if let Some(command) = text.trim_start().strip_prefix('!') {
            let command = command.trim().to_owned();
            self.composer.take();
            ctx.effect(Effect::Send(Command::Shell(command)));
            self.conversation.act(&source, conversation::Action::Bottom);
            return;
        }
        match commands::parse(&text) {
            Parsed::Prompt => {
                let prompt = self.composer.take();
                ctx.effect(Effect::Send(Command::Submit(prompt.trim_end().to_owned())));
                self.conversation.act(&source, conversation::Action::Bottom);
            }
            Parsed::Command(Slash::Todo) => {
                let args = text.trim().split_once(char::is_whitespace).map_or("", |(_, rest)| rest);
                match BoardEdit::parse(args) {
                    Ok(edit) => {
                        self.composer.take();
                        ctx.effect(Effect::Send(Command::EditBoard(edit)));
                    }
                    // The text stays in the composer to be put right.
                    Err(err) => self.conversation.push_note(format!("/todo: {err}")),
                }
                self.conversation.act(&source, conversation::Action::Bottom);
            }
            Parsed::Command(Slash::Resume) => {
                self.composer.take();
                if ctx.snapshot.activity == Activity::Idle {
                    ctx.effect(Effect::OpenSessions);
                } else {
                    self.conversation.push_note(
                        "/resume switches sessions between turns: wait for this one to end, or \
                         press Esc to interrupt it, then type /resume again.",
                    );
                    self.conversation.act(&source, conversation::Action::Bottom);
                }
            }
            Parsed::Command(Slash::Model) => {
                let args = text.trim().split_once(char::is_whitespace).map_or("", |(_, rest)| rest);
                let args = args.trim().to_owned();
                self.composer.take();
                ctx.effect(Effect::Send(Command::SwitchModel(args)));
            }
            Parsed::Command(Slash::Hooks) => {
                self.composer.take();
                let args = text.trim().split_once(char::is_whitespace).map_or("", |(_, rest)| rest);
                match args.trim() {
                    "" => self
                        .conversation
                        .push_note(crate::hooks::listing::render(&ctx.snapshot.hooks, true)),
                    "trust" => ctx.effect(Effect::Send(Command::Hooks(HooksCommand::Trust))),
                    "forget" => ctx.effect(Effect::Send(Command::Hooks(HooksCommand::Forget))),
                    other => self.conversation.push_note(format!(
                        "/hooks {other}: not a hooks command. /hooks lists them, /hooks trust \
                         runs the workspace's as they are now, /hooks forget stops them."
                    )),
                }
                self.conversation.act(&source, conversation::Action::Bottom);
            }
            Parsed::Command(Slash::Approval) => {
                let args = text.trim().split_once(char::is_whitespace).map_or("", |(_, rest)| rest);
                match approval_mode(args.trim()) {
                    Ok(mode) => {
                        self.composer.take();
                        ctx.effect(Effect::Send(Command::Approval(mode)));
                    }
                    // The text stays in the composer to be put right.
                    Err(note) => self.conversation.push_note(note),
                }
                self.conversation.act(&source, conversation::Action::Bottom);
            }
            Parsed::Command(Slash::Mcp) => {
                self.composer.take();
                let servers = &ctx.snapshot.mcp;
                self.conversation.push_note(crate::tools::mcp::listing::render(servers));
                self.conversation.act(&source, conversation::Action::Bottom);
            }
            Parsed::Command(command) => {
                self.composer.take();
                ctx.effect(match command {
                    Slash::Clear => Effect::Send(Command::Clear),
                    Slash::Undo => Effect::Send(Command::Undo),
                    Slash::Compact => Effect::Send(Command::Compact),
                    Slash::Demo => Effect::Send(Command::StartDemo),
                    Slash::Quit => Effect::Quit,
                    Slash::Help => Effect::OpenHelp,
                    Slash::Todos => Effect::FocusBoard,
                    Slash::Plan => Effect::Send(Command::PlanMode(!ctx.snapshot.plan_mode)),
                    Slash::Approve => Effect::Send(Command::ApprovePlan),
                    Slash::Diff => Effect::OpenTurnDiff,
                    Slash::Agents => Effect::OpenAgents { item: None },
                    Slash::Sandbox => Effect::Send(Command::ShowSandbox),
                    Slash::Todo
                    | Slash::Mcp
                    | Slash::Hooks
                    | Slash::Resume
                    | Slash::Model
                    | Slash::Approval => {
                        return;
                    }
                });
            }
            Parsed::Unknown(name) => {
                self.composer.take();
                self.conversation
                    .push_note(format!("Unknown command {name}. Commands: {}", commands::names()));
                self.conversation.act(&source, conversation::Action::Bottom);
            }
        }
    }
}

impl View for MainView {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) {
        match action {
            Action::Interrupt => ctx.effect(Effect::Send(Command::Cancel)),
            Action::PlanMode => {
                ctx.effect(Effect::Send(Command::PlanMode(!ctx.snapshot.plan_mode)))
            }
            Action::History => ctx.effect(Effect::OpenInspector),
            Action::Output => ctx.effect(Effect::OpenOutput),
            Action::Help => ctx.effect(Effect::OpenHelp),
            Action::QuitIfEmpty => ctx.effect(Effect::Quit),
            // Ctrl+C is the app's before any view sees it: the way out always works.
            Action::ClearOrQuit => {}
        }
    }

    fn key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) {
        if std::mem::take(&mut self.confirming_plan) && self.confirm_plan(key, ctx) {
            return;
        }
        if self.completer.menu.is_some() && self.menu_key(key, ctx) {
            return;
        }
        self.key_unmenued(key, ctx);
        self.completer.refresh(&self.composer);
    }

    /// A bracketed paste goes into the composer whole.
    fn paste(&mut self, text: &str, _ctx: &mut Ctx<'_>) -> bool {
        self.composer.paste(text);
        self.completer.refresh(&self.composer);
        true
    }

    /// The wheel scrolls the conversation when the pointer is over it.
    fn wheel(&mut self, up: bool, at: Position, ctx: &mut Ctx<'_>) -> bool {
        if !ctx.regions.conversation.contains(at) && ctx.regions.conversation != Rect::default() {
            return false;
        }
        let source = source(ctx.snapshot);
        if up {
            self.conversation.scroll_up(&source, WHEEL_LINES);
        } else {
            self.conversation.scroll_down(&source, WHEEL_LINES);
        }
        true
    }

    /// The composer's keys and the global ones; Esc only while there is something to interrupt.
    /// While the menu is open or an approval in words waits, the keys that answer them.
    fn hints(&self, ctx: &Ctx<'_>) -> Hints {
        if self.confirming_plan {
            return owned(&CONFIRM_HINTS);
        }
        if self.completer.menu.is_some() {
            return owned(&MENU_HINTS);
        }
        let global: Vec<_> = KEYS
            .iter()
            .filter(|binding| ctx.busy || binding.action != Action::Interrupt)
            .copied()
            .collect();
        let mut all = super::keymap::hints(composer::KEYS);
        all.extend(super::keymap::hints(&global));
        all
    }
}

/// The hints while the completion menu is open.
const MENU_HINTS: [(&str, &str); 3] = [("Tab", "complete"), ("↑↓", "choose"), ("Esc", "close")];
/// The hints while an approval in words waits for its key.
const CONFIRM_HINTS: [(&str, &str); 3] =
    [("y", "approve the plan"), ("n", "send as a message"), ("Esc", "keep editing")];

fn owned(hints: &[(&str, &'static str)]) -> Hints {
    hints.iter().map(|(keys, hint)| ((*keys).to_owned(), *hint)).collect()
}

impl MainView {
    /// The key after a short approval typed with a plan waiting: `y` or Enter approves the
    /// plan, `n` sends the words to the model, Esc leaves them in the composer. Any other key
    /// is typed as usual. Returns whether the key was taken.
    fn confirm_plan(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> bool {
        if self.composer.is_empty() {
            return false;
        }
        let plain = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
        match key.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter if plain => {
                self.composer.take();
                ctx.effect(Effect::Send(Command::ApprovePlan));
            }
            KeyCode::Char('n' | 'N') if plain => {
                let prompt = self.composer.take();
                ctx.effect(Effect::Send(Command::Submit(prompt.trim_end().to_owned())));
            }
            KeyCode::Esc => {}
            _ => return false,
        }
        self.completer.refresh(&self.composer);
        true
    }

    /// A key while the completion menu is open: ↑/↓ choose, Tab completes, Enter completes (or
    /// runs a command typed whole), Esc closes it. Returns whether the key was taken.
    fn menu_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> bool {
        if !key.modifiers.is_empty() {
            return false;
        }
        let Some(menu) = &mut self.completer.menu else { return false };
        match key.code {
            KeyCode::Up | KeyCode::Down => menu.step(key.code == KeyCode::Down),
            KeyCode::Tab => self.completer.complete(&mut self.composer),
            KeyCode::Enter if menu.completes_on_enter() => {
                self.completer.complete(&mut self.composer)
            }
            KeyCode::Enter => {
                self.completer.menu = None;
                self.submit(ctx);
                self.completer.refresh(&self.composer);
            }
            KeyCode::Esc => self.completer.dismiss(&self.composer),
            _ => return false,
        }
        true
    }

    /// A key with no menu to answer it: the main screen's keys, the conversation's, the
    /// composer's and its editor.
    fn key_unmenued(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) {
        match lookup(KEYS, key) {
            Some(Action::Help | Action::QuitIfEmpty) if !self.composer.is_empty() => {}
            Some(action) => return self.act(action, ctx),
            None => {}
        }
        if key.code == KeyCode::Tab
            && key.modifiers.is_empty()
            && let Some(completed) = commands::complete(&self.composer.text())
        {
            self.composer.prefill(&completed);
            return;
        }
        // Home and End move within a prompt being written; on an empty one they scroll.
        let in_line = matches!(key.code, KeyCode::Home | KeyCode::End) && !self.composer.is_empty();
        if let Some(action) = lookup(conversation::KEYS, key).filter(|_| !in_line) {
            self.conversation.act(&source(ctx.snapshot), action);
            return;
        }
        match lookup(composer::KEYS, key) {
            Some(composer::Action::Send) => self.submit(ctx),
            Some(composer::Action::Newline) => self.composer.insert_newline(),
            Some(composer::Action::Older) if self.composer.older() => {}
            Some(composer::Action::Newer) if self.composer.newer() => {}
            _ => self.composer.input(*key),
        }
    }
}

/// The mode `/approval`'s argument names (`None` when there is none: which mode is in force), or
/// the note that says what it takes.
fn approval_mode(argument: &str) -> Result<Option<ApprovalMode>, String> {
    if argument.is_empty() {
        return Ok(None);
    }
    <ApprovalMode as clap::ValueEnum>::from_str(argument, true).map(Some).map_err(|_| {
        format!(
            "/approval {argument}: not an approval mode. /approval ask, /approval auto or \
             /approval read-only switches to it; /approval alone says which is in force."
        )
    })
}
