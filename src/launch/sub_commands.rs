//! The sub-commands that launch nothing, each answered as soon as the launch has settled what
//! it needs: `keel sessions` and `keel undo` the workspace, `keel sandbox` and `keel mcp import`
//! the configuration, `keel mcp list` the servers started (`keel hooks`: `super::hooks`).

use super::{EXIT_FAILED, sandbox_report, sessions};
use keel::cli::{Cli, McpCommand, SubCommand};
use keel::config::Config;
use keel::runtime::Workspace;
use keel::runtime::sandbox::Probing;
use keel::runtime::sandbox::hidden::Hidden;
use keel::tools::mcp;
use std::process::ExitCode;

/// `keel sessions` and `keel undo`, answered over `workspace`.
pub fn on_workspace(cli: &Cli, workspace: &Workspace) -> color_eyre::Result<Option<ExitCode>> {
    match cli.command {
        Some(SubCommand::Sessions) => sessions::list(workspace).map(Some),
        Some(SubCommand::Undo) => sessions::undo(workspace).map(Some),
        Some(SubCommand::Mcp { .. } | SubCommand::Sandbox | SubCommand::Hooks { .. }) | None => {
            Ok(None)
        }
    }
}

/// `keel sandbox` and `keel mcp import`, answered from `config`, the sandbox being probed and
/// the paths `hidden`.
pub fn on_config(
    cli: &Cli,
    config: &Config,
    sandbox: &Probing,
    hidden: &Hidden,
) -> Option<ExitCode> {
    match cli.command {
        Some(SubCommand::Sandbox) => {
            let vars: Vec<_> = std::env::vars_os().collect();
            println!("{}", sandbox_report::render(config, sandbox.get(), hidden, &vars));
            Some(ExitCode::SUCCESS)
        }
        Some(SubCommand::Mcp { command: McpCommand::Import }) => {
            let Some(found) = &config.mcp_json else {
                println!("# The workspace has no .mcp.json.");
                return Some(ExitCode::SUCCESS);
            };
            let import = found.import();
            print!("{}", import.toml);
            for refused in &import.refused {
                eprintln!("keel mcp import: {refused}");
            }
            Some(if import.refused.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_FAILED)
            })
        }
        _ => None,
    }
}

/// `keel mcp list`, once every server in `hub` has started or failed; a server that failed is a
/// failed listing, for scripts that check it.
pub async fn mcp_list(hub: &mcp::Hub) -> ExitCode {
    hub.settled().await;
    let servers = hub.servers();
    println!("{}", mcp::listing::render(&servers));
    hub.shutdown();
    let failed = servers.iter().any(|server| matches!(server.status, mcp::hub::Status::Failed(_)));
    if failed { ExitCode::from(EXIT_FAILED) } else { ExitCode::SUCCESS }
}
