//! Taking over the terminal and giving it back, on every way out.
//!
//! [`setup`] enters raw mode, the alternate screen, mouse reporting (the wheel and clicks, not
//! motion: a drag still selects text) and bracketed paste, and asks
//! for keys in a form that tells Shift+Enter from Enter: kitty's keyboard protocol where the
//! terminal has it, xterm's modifyOtherKeys elsewhere (tmux's `extended-keys on` sends modified
//! keys only to a program that asks so). [`restore`]
//! undoes all of it and is safe to call any number of times from anywhere — the normal exit, an
//! error, the [`Guard`]'s drop, the panic hook — so whichever comes first leaves a usable shell.

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use std::cell::Cell;
use std::io::{self, Stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// The terminal keel draws on.
pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Whether the terminal is in keel's modes and needs restoring.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the keyboard protocol was pushed and must be popped.
static KEYBOARD_ENHANCED: AtomicBool = AtomicBool::new(false);
/// Whether modifyOtherKeys was asked for and must be reset.
static OTHER_KEYS_MODIFIED: AtomicBool = AtomicBool::new(false);
static PANIC_HOOK: Once = Once::new();

thread_local! {
    /// Set while this thread runs the UI's own code (handling an event, drawing).
    static IN_UI: Cell<bool> = const { Cell::new(false) };
}

/// Puts the terminal in keel's modes and returns it ready to draw.
pub fn setup() -> io::Result<Tui> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = io::stdout();
    let entered =
        execute!(stdout, EnterAlternateScreen, MouseReporting(true), EnableBracketedPaste);
    if let Err(error) = entered {
        let _ = restore();
        return Err(error);
    }
    if matches!(supports_keyboard_enhancement(), Ok(true)) {
        let flags = KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES;
        if execute!(stdout, PushKeyboardEnhancementFlags(flags)).is_ok() {
            KEYBOARD_ENHANCED.store(true, Ordering::SeqCst);
        }
    } else if execute!(stdout, ModifyOtherKeys(true)).is_ok() {
        OTHER_KEYS_MODIFIED.store(true, Ordering::SeqCst);
    }
    let terminal = Terminal::new(CrosstermBackend::new(stdout));
    if terminal.is_err() {
        let _ = restore();
    }
    let mut terminal = terminal?;
    terminal.hide_cursor()?;
    terminal.clear()?;
    Ok(terminal)
}

/// Gives the terminal back: every step is tried even if an earlier one fails, and a second call
/// does nothing.
pub fn restore() -> io::Result<()> {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return Ok(());
    }
    let mut stdout = io::stdout();
    let mut first_error = None;
    let mut note = |result: io::Result<()>| {
        if let Err(error) = result {
            first_error.get_or_insert(error);
        }
    };
    if KEYBOARD_ENHANCED.swap(false, Ordering::SeqCst) {
        note(execute!(stdout, PopKeyboardEnhancementFlags));
    }
    if OTHER_KEYS_MODIFIED.swap(false, Ordering::SeqCst) {
        note(execute!(stdout, ModifyOtherKeys(false)));
    }
    note(execute!(
        stdout,
        DisableBracketedPaste,
        MouseReporting(false),
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    ));
    note(disable_raw_mode());
    first_error.map_or(Ok(()), Err)
}

/// xterm's modifyOtherKeys, level 1 (`CSI > 4;1m`): keys that would otherwise arrive as plain
/// ones, Shift+Enter among them, come as `CSI 27;mods;key~`; Ctrl+C and the like stay as they
/// are. Off (`CSI > 4m`) puts back the terminal's own setting.
#[derive(Debug, Clone, Copy)]
struct ModifyOtherKeys(bool);

impl ratatui::crossterm::Command for ModifyOtherKeys {
    fn write_ansi(&self, out: &mut impl std::fmt::Write) -> std::fmt::Result {
        out.write_str(if self.0 { "\x1b[>4;1m" } else { "\x1b[>4m" })
    }
}

/// Mouse reporting for the wheel and clicks only: xterm's button reporting (`?1000`) in SGR's
/// encoding (`?1006`). Not motion (`?1002`, `?1003`, which crossterm's mouse capture turns on):
/// with those the terminal hands every drag to keel, and selecting text needs Shift held; with
/// clicks alone a plain drag selects text in most terminals. Off undoes both, and the motion
/// modes too, in case an earlier program left them on.
#[derive(Debug, Clone, Copy)]
pub struct MouseReporting(pub bool);

/// What [`MouseReporting`] writes, on and off.
pub const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1006h";
pub const MOUSE_OFF: &str = "\x1b[?1006l\x1b[?1003l\x1b[?1002l\x1b[?1000l";

impl ratatui::crossterm::Command for MouseReporting {
    fn write_ansi(&self, out: &mut impl std::fmt::Write) -> std::fmt::Result {
        out.write_str(if self.0 { MOUSE_ON } else { MOUSE_OFF })
    }
}

/// Makes a panic in the UI restore the terminal before the panic is reported, so the report
/// (color-eyre's, when `main` installed it before calling `tui::run`) lands on a normal screen.
/// Installed once. Where panics unwind (the dev profile), a panic elsewhere — in the agent task,
/// which the runtime catches while the UI carries on — leaves the terminal alone; the UI then
/// reports the agent gone. Where they abort (the release profile), any panic ends keel, so every
/// one restores the terminal first.
pub fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_UI.get() || cfg!(panic = "abort") {
                let _ = restore();
            }
            report(info);
        }));
    });
}

/// Marks the current thread as running UI code until the returned value is dropped. The event
/// loop holds one while it handles an event or draws, never across an `await`, so it is set
/// exactly when a panic would come from the UI.
pub fn ui_section() -> UiSection {
    IN_UI.set(true);
    UiSection(())
}

/// See [`ui_section`].
#[derive(Debug)]
pub struct UiSection(());

impl Drop for UiSection {
    fn drop(&mut self) {
        IN_UI.set(false);
    }
}

/// Restores the terminal when dropped, whatever way the scope is left.
#[derive(Debug)]
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = restore();
    }
}

#[cfg(test)]
mod tests {
    use super::{ModifyOtherKeys, MouseReporting};
    use ratatui::crossterm::Command;

    #[test]
    fn modify_other_keys_asks_for_level_one_and_gives_back_the_terminals_own() {
        let written = |command: ModifyOtherKeys| {
            let mut out = String::new();
            command.write_ansi(&mut out).map(|()| out)
        };
        assert_eq!(written(ModifyOtherKeys(true)), Ok("\x1b[>4;1m".to_owned()));
        assert_eq!(written(ModifyOtherKeys(false)), Ok("\x1b[>4m".to_owned()));
    }

    #[test]
    fn mouse_reporting_asks_for_clicks_and_the_wheel_never_for_motion() {
        let written = |command: MouseReporting| {
            let mut out = String::new();
            command.write_ansi(&mut out).map(|()| out)
        };
        let on = written(MouseReporting(true)).unwrap_or_default();
        assert_eq!(on, "\x1b[?1000h\x1b[?1006h");
        for motion in ["?1002h", "?1003h", "?1015h"] {
            assert!(!on.contains(motion), "{motion}");
        }
        let off = written(MouseReporting(false));
        assert_eq!(off, Ok("\x1b[?1006l\x1b[?1003l\x1b[?1002l\x1b[?1000l".to_owned()));
    }
}
