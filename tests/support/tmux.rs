//! The real binary in a real terminal: keel launched in a private tmux server, driven with
//! `send-keys` and read with `capture-pane`.
//!
//! Each pane has its own tmux server (a socket in the test's temporary folder), so a test never
//! touches a tmux the person is using, and a clean environment (no API keys, the temporary folder
//! as HOME), so nothing of the machine's configuration leaks in. Without tmux a test is skipped,
//! saying so — except in CI (`CI` set), where `.ci/run` installs tmux and a missing one must fail
//! rather than pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long a keypress may take to show.
pub const KEY_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the screen is read while waiting.
const POLL: Duration = Duration::from_millis(200);
/// The shell prompt inside the pane (followed by a space), to tell the shell from keel.
pub const PROMPT: &str = "e2e-shell$";
/// Printed by the shell when keel exits, followed by its status.
pub const EXITED: &str = "keel exited with";
/// The pane's size unless a test asks for another.
const SIZE: (u16, u16) = (120, 40);

/// One private tmux server with one session running a plain shell, ready at its prompt.
pub struct KeelPane {
    socket: PathBuf,
}

impl KeelPane {
    /// A 120×40 pane whose shell has `dir` as HOME; `None` (the test skips) without tmux.
    pub fn start(test: &str, dir: &Path) -> Option<Self> {
        Self::start_sized(test, dir, SIZE)
    }

    /// A pane of `(width, height)`; `None` (the test skips) without tmux.
    pub fn start_sized(test: &str, dir: &Path, (width, height): (u16, u16)) -> Option<Self> {
        if !tmux_installed() {
            let in_ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
            assert!(!in_ci, "{test}: tmux is not installed, and CI must run the end-to-end tests");
            eprintln!("SKIPPED {test}: tmux is not installed");
            return None;
        }
        let pane = Self { socket: dir.join("tmux.sock") };
        let shell = format!(
            "env -i PATH=\"$PATH\" TERM=\"$TERM\" HOME='{}' PS1='{PROMPT} ' sh",
            dir.display()
        );
        let (width, height) = (width.to_string(), height.to_string());
        let output =
            pane.run(&["new-session", "-d", "-x", &width, "-y", &height, "-s", "e2e", &shell]);
        assert!(output.status.success(), "tmux new-session failed: {output:?}");
        pane.wait_for("the shell prompt", KEY_TIMEOUT, |screen| screen.contains(PROMPT));
        Some(pane)
    }

    /// Runs the built keel with `env` (shell assignments, or "") before it and `args` after it;
    /// the shell prints [`EXITED`] and keel's status when it ends.
    pub fn launch(&self, env: &str, args: &str) {
        self.type_line(&format!(
            "{env} '{}' {args}; echo \"{EXITED} $?\"",
            crate::support::bin::program().display()
        ));
    }

    /// Runs tmux on this pane's server.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("tmux runs")
    }

    /// Sends keys by tmux's names (`Enter`, `C-c`, `Escape`, …).
    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "e2e"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        assert!(self.run(&["send-keys", "-t", "e2e", "-l", text]).status.success());
    }

    /// Types `text` literally, then Enter.
    pub fn type_line(&self, text: &str) {
        self.type_text(text);
        self.send(&["Enter"]);
    }

    /// What the pane shows now.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "e2e"]).stdout).into_owned()
    }

    /// Whether the pane shows the alternate screen (keel's, while it runs).
    pub fn alternate_screen(&self) -> bool {
        let output = self.run(&["display-message", "-p", "-t", "e2e", "#{alternate_on}"]);
        String::from_utf8_lossy(&output.stdout).trim() == "1"
    }

    /// Polls the screen until `done` holds; panics with the last screen after `timeout`.
    pub fn wait_for(&self, what: &str, timeout: Duration, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for {what}; the pane shows:\n{screen}");
            }
            sleep(POLL);
        }
    }

    /// Ctrl+C twice (interrupt, then quit on an idle prompt), and the screen once keel exited.
    pub fn quit(&self) -> String {
        self.send(&["C-c"]);
        self.send(&["C-c"]);
        self.wait_for("keel to exit", KEY_TIMEOUT, |screen| exit_line(screen).is_some())
    }

    /// Checks that the terminal is back in cooked mode: the shell echoes and runs what is typed.
    pub fn assert_shell_answers(&self) {
        self.type_line("echo still-$((40 + 2))");
        self.wait_for("the shell to answer", KEY_TIMEOUT, |screen| screen.contains("still-42"));
    }
}

impl Drop for KeelPane {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn tmux_installed() -> bool {
    Command::new("tmux").arg("-V").output().is_ok_and(|output| output.status.success())
}

/// The shell's line saying keel exited: the marker and the status the shell printed. The command
/// line echoes the marker too, and where it wraps, a row of it starts with the marker and `$?`.
pub fn exit_line(screen: &str) -> Option<String> {
    let printed = |line: &&str| {
        line.strip_prefix(EXITED).is_some_and(|status| status.trim().parse::<u8>().is_ok())
    };
    screen.lines().find(printed).map(str::to_owned)
}

/// The board's `done/total` from the board pane's title (`Todos 6/6`), if drawn.
pub fn board_count(screen: &str) -> Option<(u32, u32)> {
    let rest = &screen[screen.find("Todos ")? + "Todos ".len()..];
    let (count, _) = rest.split_once(' ')?;
    let (done, total) = count.split_once('/')?;
    Some((done.parse().ok()?, total.parse().ok()?))
}
