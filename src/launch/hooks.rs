//! `keel hooks list|trust|forget`: the hooks of the person's config and of the workspace's
//! `.keel/config.toml`, and the person's trust in the workspace's (`keel::hooks::trust`).

use keel::cli::HooksSubcommand;
use keel::hooks::{Hooks, listing};
use keel::visible::visible;
use std::process::ExitCode;

/// Answers `keel hooks COMMAND` over `hooks`.
pub fn answer(hooks: &Hooks, command: HooksSubcommand) -> ExitCode {
    let said = match command {
        HooksSubcommand::List => Ok(listing::render(&hooks.view(), false)),
        HooksSubcommand::Trust => hooks.trust_all(),
        HooksSubcommand::Forget => hooks.forget(),
    };
    match said {
        Ok(text) => {
            println!("{}", visible(&text));
            ExitCode::SUCCESS
        }
        Err(text) => {
            eprintln!("keel: {}", visible(&text));
            ExitCode::from(super::EXIT_FAILED)
        }
    }
}
