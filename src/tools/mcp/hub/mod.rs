//! Every configured server, started in parallel, and the tools they offer.
//!
//! [`Hub::start`] returns at once: each server starts in a task of its own, bounded by its
//! `startup_timeout_ms`, so the first screen never waits. A turn waits for the servers still
//! starting ([`Hub::settled`]) before it tells the model which tools there are. A server that
//! fails to start, times out or stops is marked failed with the reason, and its tools answer with
//! it; a call is bounded by `tool_timeout_ms` and by the person's interrupt, so none hangs.

mod calling;

use super::config::Server;
use super::connect::{self, Session};
use super::line_limit;
use super::names::Namer;
use super::offered;
use crate::llm::ToolSpec;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rmcp::Peer;
use rmcp::service::RoleClient;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// `enabled = false` in the config.
    Disabled,
    Starting,
    Ready,
    /// It could not start, timed out, or stopped: why.
    Failed(String),
}

/// One tool a server offers, with the name the model calls it by.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    /// `mcp__SERVER__TOOL`, made to fit the providers' rules.
    pub exposed: String,
    /// The tool's own name on its server.
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// The server marks it `readOnlyHint`.
    pub read_only: bool,
}

/// A server's state as the person sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerView {
    pub name: String,
    /// Its command line or URL.
    pub reached_by: String,
    pub status: Status,
    pub tools: Vec<RemoteTool>,
    pub log: Option<PathBuf>,
    /// What of its tool list keel left out or cut (`offered`), when it did.
    pub capped: Option<String>,
}

/// The set of servers; cheap to clone, shared by the agent and the front end.
#[derive(Clone, Default)]
pub struct Hub {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    servers: Vec<Slot>,
    /// Bumped whenever a server's status changes.
    changes: Option<watch::Sender<u64>>,
}

struct Slot {
    config: Server,
    log: Option<PathBuf>,
    live: Mutex<Live>,
    /// Fires when the server sent a line longer than keel reads (`line_limit`).
    too_long: CancellationToken,
}

/// What changes as a server runs.
struct Live {
    status: Status,
    /// The tools as keel offers them (`offered`): (name, description, schema, read-only).
    tools: Vec<offered::Listed>,
    /// What of the server's list was left out or cut.
    capped: Option<String>,
    peer: Option<Peer<RoleClient>>,
    session: Option<Session>,
    process_group: Option<i32>,
    /// A stdio server's process, killed when dropped.
    child: Option<tokio::process::Child>,
}

impl Slot {
    fn live(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").field("servers", &self.inner.servers.len()).finish()
    }
}

impl Hub {
    /// Starts every enabled server in the background. `state` is keel's state folder, where
    /// servers' stderr is logged; `workspace` is where stdio servers run; `writable` are the
    /// folders commands may write, where a server's bare command is never found.
    pub fn start(
        servers: Vec<Server>,
        workspace: &Path,
        writable: &[PathBuf],
        state: Option<&Path>,
    ) -> Self {
        let (changes, _) = watch::channel(0);
        let slots = servers
            .into_iter()
            .map(|config| {
                let status = if config.enabled { Status::Starting } else { Status::Disabled };
                Slot {
                    log: state.map(|state| connect::log_path(state, &config.name)),
                    config,
                    live: Mutex::new(Live {
                        status,
                        tools: Vec::new(),
                        capped: None,
                        peer: None,
                        session: None,
                        process_group: None,
                        child: None,
                    }),
                    too_long: CancellationToken::new(),
                }
            })
            .collect();
        let hub = Self { inner: Arc::new(Inner { servers: slots, changes: Some(changes) }) };
        for index in 0..hub.inner.servers.len() {
            if hub.inner.servers[index].config.enabled {
                let hub = hub.clone();
                let (workspace, writable) = (workspace.to_path_buf(), writable.to_vec());
                tokio::spawn(async move { hub.launch(index, &workspace, &writable).await });
            }
        }
        hub
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.inner.servers.is_empty()
    }

    async fn launch(&self, index: usize, workspace: &Path, writable: &[PathBuf]) {
        let slot = &self.inner.servers[index];
        let env = |name: &str| std::env::var(name).ok();
        let timeout = slot.config.startup_timeout;
        let group = AtomicI32::new(0);
        let starting = tokio::time::timeout(timeout, async {
            let log = slot.log.as_deref();
            let too_long = &slot.too_long;
            let started =
                connect::start(&slot.config, workspace, writable, log, &env, &group, too_long);
            let started = started.await?;
            let listed = started.session.peer().list_all_tools().await;
            Ok::<_, String>((started, listed))
        });
        let started = tokio::select! {
            started = starting => started,
            () = slot.too_long.cancelled() => Ok(Err(line_limit::too_long())),
        };
        let outcome = match started {
            Err(_) => {
                // What it started so far goes with it.
                kill_group(Some(group.load(Ordering::SeqCst)));
                Err(format!("did not start within {} ms", timeout.as_millis()))
            }
            Ok(Err(why)) => {
                kill_group(Some(group.load(Ordering::SeqCst)));
                Err(why)
            }
            Ok(Ok((started, Err(err)))) => {
                kill_group(started.process_group);
                Err(format!("could not list its tools: {}", plain(&err)))
            }
            Ok(Ok((started, Ok(tools)))) => Ok((started, tools)),
        };
        {
            let mut live = slot.live();
            match outcome {
                Ok((started, tools)) => {
                    let capped = offered::offered(&tools);
                    live.tools = capped.tools;
                    live.capped = capped.note;
                    live.peer = Some(started.session.peer().clone());
                    live.process_group = started.process_group;
                    live.child = started.child;
                    live.session = Some(started.session);
                    live.status = Status::Ready;
                }
                Err(why) => live.status = Status::Failed(why),
            }
        }
        self.changed();
    }

    fn changed(&self) {
        if let Some(changes) = &self.inner.changes {
            changes.send_modify(|version| *version += 1);
        }
    }

    /// A receiver that sees each change of a server's status.
    pub fn subscribe(&self) -> Option<watch::Receiver<u64>> {
        self.inner.changes.as_ref().map(watch::Sender::subscribe)
    }

    /// Waits until no server is still starting (each is bounded by its startup timeout).
    pub async fn settled(&self) {
        let Some(mut changes) = self.subscribe() else {
            return;
        };
        while self.inner.servers.iter().any(|slot| slot.live().status == Status::Starting) {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Every server as the person sees it, in the config's order, with the tools' names as
    /// the model is told them.
    pub fn servers(&self) -> Vec<ServerView> {
        let mut namer = Namer::default();
        self.inner
            .servers
            .iter()
            .map(|slot| {
                let live = slot.live();
                let tools = live
                    .tools
                    .iter()
                    .map(|(name, description, schema, read_only)| RemoteTool {
                        exposed: namer.name(&slot.config.name, name),
                        name: name.clone(),
                        description: description.clone(),
                        input_schema: schema.clone(),
                        read_only: *read_only,
                    })
                    .collect();
                ServerView {
                    name: slot.config.name.clone(),
                    reached_by: slot.config.describe(),
                    status: live.status.clone(),
                    tools,
                    log: slot.log.clone(),
                    capped: live.capped.clone(),
                }
            })
            .collect()
    }

    /// The servers' tools as the model is told about them. A server that stopped keeps its
    /// tools listed, so that the model calling one learns why it cannot run.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.servers()
            .into_iter()
            .flat_map(|server| server.tools)
            .map(|tool| ToolSpec {
                name: tool.exposed,
                description: tool.description,
                input_schema: tool.input_schema,
            })
            .collect()
    }

    /// The server and tool behind a name the model used, if one is.
    pub fn find(&self, exposed: &str) -> Option<(ServerView, RemoteTool)> {
        self.servers().into_iter().find_map(|server| {
            let tool = server.tools.iter().find(|tool| tool.exposed == exposed)?.clone();
            Some((server, tool))
        })
    }

    /// The index of the server a name the model used belongs to.
    fn slot_of(&self, exposed: &str) -> Option<usize> {
        let servers = self.servers();
        servers.iter().position(|server| server.tools.iter().any(|tool| tool.exposed == exposed))
    }

    /// Marks a server failed, and stops what is left of it.
    fn fail(&self, index: usize, why: String) {
        let slot = &self.inner.servers[index];
        {
            let mut live = slot.live();
            live.status = Status::Failed(why);
            live.peer = None;
            live.session = None;
            kill_group(live.process_group.take());
            live.child = None;
        }
        self.changed();
    }

    /// Stops every server: sessions closed, stdio servers' process groups killed.
    pub fn shutdown(&self) {
        for slot in &self.inner.servers {
            let mut live = slot.live();
            live.peer = None;
            if let Some(session) = live.session.take() {
                session.cancellation_token().cancel();
            }
            kill_group(live.process_group.take());
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        for slot in &self.servers {
            kill_group(slot.live().process_group.take());
        }
    }
}

/// An error of the MCP SDK in the person's words (no Rust type names).
fn plain(err: &dyn std::fmt::Display) -> String {
    super::connect::without_type_names(&err.to_string())
}

/// Kills a stdio server's whole process group, if it had one.
fn kill_group(group: Option<i32>) {
    if let Some(group) = group.filter(|group| *group > 0) {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}
