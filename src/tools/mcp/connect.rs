//! Starting one server and opening its MCP session, over stdio or Streamable HTTP.
//!
//! A stdio server's bare command is found on keel's `PATH` outside every folder commands may
//! write (`runtime::programs`): keel runs it unconfined, so a `.venv/bin/npx` a command planted must
//! not be what starts. A stdio server runs in a process group of its own (killed whole when keel
//! stops it or exits), in the workspace, with what `runtime::withheld` hands commands of keel's
//! environment (the allow-list and the person's `pass_env`, less values that look like secrets),
//! plus the variables its config names in `env_vars`, plus its `env`.
//! Its stderr goes to a log file under keel's state folder, never onto the screen; its stdout is
//! read with a cap on one line (`line_limit`). If keel is killed outright, the server's stdin
//! closes, which MCP servers take as the end of the session.

use super::config::{Server, Transport};
use super::line_limit::LineLimited;
use crate::runtime::{programs, withheld};
use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicI32, Ordering};
use tokio_util::sync::CancellationToken;

/// An open session with a server.
pub type Session = RunningService<RoleClient, ()>;

/// A started server: its session and, for a stdio server, its process group and its process
/// (killed when dropped).
pub struct Started {
    pub session: Session,
    pub process_group: Option<i32>,
    pub child: Option<tokio::process::Child>,
}

/// Where the environment of a stdio server comes from; the process's own in keel.
pub type Env<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// Starts `server` and completes the MCP handshake. The caller bounds the time it may take; a
/// stdio server's process group is put in `group` as soon as it exists, so that a caller who
/// gives up waiting can kill it. `too_long` fires when a stdio server sends a line longer than
/// keel reads (`line_limit`).
pub async fn start(
    server: &Server,
    workspace: &Path,
    writable: &[PathBuf],
    log: Option<&Path>,
    env: Env<'_>,
    group: &AtomicI32,
    too_long: &CancellationToken,
) -> Result<Started, String> {
    match &server.transport {
        Transport::Stdio { command, args, env: set, env_vars } => {
            let program = programs::find(command.as_ref(), writable)
                .map_err(|why| format!("could not start `{command}`: {why}"))?;
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args).current_dir(workspace).process_group(0).kill_on_drop(true);
            withheld::hand_on(&mut cmd);
            for name in env_vars {
                match env(name) {
                    Some(value) => cmd.env(name, value),
                    None => cmd.env_remove(name),
                };
            }
            cmd.envs(set);
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(log_file(log));
            let mut child =
                cmd.spawn().map_err(|err| format!("could not start `{command}`: {err}"))?;
            let process_group = child.id().and_then(|pid| i32::try_from(pid).ok());
            group.store(process_group.unwrap_or(0), Ordering::SeqCst);
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(format!("could not start `{command}`: no pipe to it"));
            };
            let stdout = LineLimited::new(stdout, too_long.clone());
            let session = ().serve((stdout, stdin)).await.map_err(|err| handshake_failed(&err))?;
            Ok(Started { session, process_group, child: Some(child) })
        }
        Transport::Http { url, bearer_token_env_var } => {
            crate::llm::install_tls();
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(variable) = bearer_token_env_var {
                let token = env(variable).filter(|token| !token.is_empty()).ok_or_else(|| {
                    format!("bearer_token_env_var names {variable}, which is not set")
                })?;
                config = config.auth_header(token);
            }
            let transport = StreamableHttpClientTransport::from_config(config);
            let session = ().serve(transport).await.map_err(|err| handshake_failed(&err))?;
            Ok(Started { session, process_group: None, child: None })
        }
    }
}

/// Where a server's stderr goes: appended to its log, else nowhere.
fn log_file(log: Option<&Path>) -> Stdio {
    let Some(path) = log else {
        return Stdio::null();
    };
    if let Some(folder) = path.parent() {
        let _ = std::fs::create_dir_all(folder);
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_or_else(|_| Stdio::null(), Stdio::from)
}

/// The log file of the server `name` in keel's state folder `state`.
pub fn log_path(state: &Path, name: &str) -> PathBuf {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    state.join("mcp").join(format!("{safe}.log"))
}

fn handshake_failed(err: &dyn std::fmt::Display) -> String {
    format!("the MCP handshake failed: {}", without_type_names(&err.to_string()))
}

/// An error of the MCP SDK in words for the person: the transport's Rust type, which the SDK
/// puts in brackets (`Transport [rmcp::transport::…<reqwest::…>] error: …`), left out.
pub fn without_type_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(" [") {
        let (before, after) = rest.split_at(open);
        out.push_str(before);
        let inside = &after[2..];
        // The brackets' own nesting, for the generic arguments inside them.
        let mut depth = 1;
        let close = inside.char_indices().find_map(|(at, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(at)
        });
        match close {
            Some(close) if inside[..close].contains("::") => rest = &inside[close + 1..],
            _ => {
                out.push_str(" [");
                rest = inside;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdks_type_names_are_left_out_of_errors() {
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::\
                   transport::streamable_http_client::StreamableHttpClientWorker<reqwest::\
                   Client>>] error: error sending request, when send initialize request";
        assert_eq!(
            without_type_names(raw),
            "Send message error Transport error: error sending request, when send initialize request"
        );
        assert_eq!(without_type_names("a [b] c"), "a [b] c");
        assert_eq!(without_type_names("x [a::b[c]] y"), "x y");
    }
}
