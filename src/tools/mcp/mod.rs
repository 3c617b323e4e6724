//! keel as a Model Context Protocol client, on the official Rust SDK (`rmcp`).
//!
//! The person names servers in their own config (`config`); keel starts them in parallel when a
//! session starts (`hub`, `connect`) and offers their tools to the model as `mcp__SERVER__TOOL`
//! (`names`), answering with what the server returned (`result`). `listing` is the text of
//! `/mcp` and `keel mcp list`. Everything a server sends — names, descriptions, results — is
//! untrusted text: shown with its control characters made visible, never acted on by keel; what
//! reaches the model of it is capped, keel's tags in it defused (`offered`, `line_limit`).

pub mod config;
pub mod connect;
pub mod hub;
pub mod line_limit;
pub mod listing;
pub mod names;
pub mod offered;
pub mod result;
pub mod tool;

pub use config::{Server, ServerConfig};
pub use hub::{Hub, RemoteTool, ServerView, Status};
pub use names::is_mcp;
