//! The built binary in tmux, driven as a person would: the `.mcp.json` notice at start, mouse
//! reporting for clicks and the wheel only, the slash menu, `/model` switching provider with
//! the status bar following, `!command`, and `@` completing a file that then reaches the model.

use crate::support::llm::{self, FakeLlm};
use crate::support::tmux::{KEY_TIMEOUT, KeelPane, exit_line};
use std::thread::sleep;
use std::time::Duration;

/// How long a keystroke's effect may take to be drawn (the menu, the composer).
const SETTLE: Duration = Duration::from_millis(300);

#[test]
fn the_menu_model_mentions_and_the_shell_escape_for_real() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(vec![llm::text("Looked.")], Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("app.py"), "print('from app.py')\n").unwrap();
    let mcp = r#"{"mcpServers": {"helper": {"command": "helper-server"}}}"#;
    std::fs::write(work.path().join(".mcp.json"), mcp).unwrap();
    let Some(tmux) =
        KeelPane::start("the_menu_model_mentions_and_the_shell_escape_for_real", home.path())
    else {
        return;
    };
    let env = format!(
        "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}' OPENAI_API_KEY=k OPENAI_BASE_URL='{}'",
        server.anthropic_base(),
        server.openai_base()
    );
    tmux.launch(&env, &format!("--workdir '{}'", work.path().display()));
    let screen = tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    assert!(screen.contains("(helper-server)") && screen.contains("started none"), "{screen}");

    // The wheel and clicks are reported (?1000, in SGR's ?1006); motion is not — neither while
    // a button is held (?1002) nor any (?1003) — so a plain drag selects text.
    assert_eq!(mouse_modes_settled(&tmux, "1 1 0 0"), "1 1 0 0", "standard, SGR, no motion");

    tmux.type_text("/");
    // Waited for whole: a capture can land while the menu is still being drawn.
    let screen = tmux.wait_for("the slash menu", KEY_TIMEOUT, |s| {
        s.contains("Commands ·") && s.contains("/model") && s.contains("watch keel work through")
    });
    assert!(screen.contains("/model") && screen.contains("watch keel work through"), "{screen}");
    tmux.type_text("mo");
    sleep(SETTLE);
    tmux.send(&["Tab"]);
    tmux.type_text("openai gpt-4o");
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("the switch", KEY_TIMEOUT, |s| s.contains("openai · gpt-4o"));
    assert!(screen.contains("Model: gpt-4o (openai)"), "{screen}");

    tmux.type_line("!echo from-the-$((20 + 1))-shell");
    let screen = tmux.wait_for("the command", KEY_TIMEOUT, |s| s.contains("You ran"));
    assert!(screen.contains("from-the-21-shell"), "the tool pane shows its output:\n{screen}");

    tmux.type_text("Look at @ap");
    let screen = tmux.wait_for("the file menu", KEY_TIMEOUT, |s| s.contains("Files ·"));
    assert!(screen.contains("@app.py"), "{screen}");
    tmux.send(&["Tab"]);
    tmux.type_text("please");
    sleep(SETTLE);
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("the answer", KEY_TIMEOUT, |s| s.contains("Looked."));
    assert!(screen.contains("Attached for the model: app.py."), "{screen}");

    let requests = runtime.block_on(server.server.received_requests()).unwrap();
    assert_eq!(requests.len(), 1, "the switch and the command sent no request of their own");
    assert_eq!(requests[0].url.path(), "/v1/chat/completions");
    let body: serde_json::Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["model"], "gpt-4o");
    let said = super::last_user_text(&body, crate::support::agent::Wire::OpenAi);
    assert!(said.starts_with("Look at @app.py please"), "{said}");
    assert!(
        said.contains("<attached-file path=\"app.py\">\n     1\tprint('from app.py')\n"),
        "{said}"
    );
    assert!(
        said.contains("$ echo from-the-$((20 + 1))-shell") && said.contains("from-the-21-shell"),
        "{said}"
    );
    tmux.quit();
    assert_eq!(
        mouse_modes_settled(&tmux, "0 0 0 0"),
        "0 0 0 0",
        "the shell gets its terminal back as it was"
    );
}

/// The pane's mouse modes as tmux keeps them: standard (clicks and the wheel), SGR encoding,
/// motion while a button is held, any motion.
/// The pane's mouse modes once they are `expected`, or as they stand when [`KEY_TIMEOUT`] has
/// passed: tmux takes them in as it reads keel's output, which a busy machine may delay.
fn mouse_modes_settled(tmux: &KeelPane, expected: &str) -> String {
    let until = std::time::Instant::now() + KEY_TIMEOUT;
    loop {
        let modes = mouse_modes(tmux);
        if modes == expected || std::time::Instant::now() >= until {
            return modes;
        }
        sleep(Duration::from_millis(50));
    }
}

fn mouse_modes(tmux: &KeelPane) -> String {
    let format = "#{mouse_standard_flag} #{mouse_sgr_flag} #{mouse_button_flag} #{mouse_all_flag}";
    let flags = tmux.run(&["display-message", "-p", "-t", "e2e", format]);
    String::from_utf8_lossy(&flags.stdout).trim().to_owned()
}
