//! What the integration tests share: a scripted model server speaking both protocols on
//! loopback (`llm`), a real agent in the test's process (`agent`), the built binary run with a
//! private home (`bin`), as root or as an unprivileged user (`keel_as`), a temporary workspace for the file tools (`files`), and recorded streams,
//! SSE builders and a raw server that can stall or cut a response (`wire`); the TUI driven
//! without a terminal (`tui`) and the states its tests draw (`screens`).

pub mod agent;
pub mod bin;
pub mod files;
pub mod git;
pub mod keel_as;
pub mod llm;
pub mod mcp_server;
pub mod processes;
pub mod screens;
pub mod scripted;
pub mod tmux;
pub mod tui;
pub mod wire;
