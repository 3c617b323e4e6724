//! keel: a terminal coding agent that keeps the model anchored on a structured task board.
//!
//! The core — [`agent`], [`board`], [`tools`], [`runtime`], [`llm`] — knows nothing of the
//! terminal; the TUI ([`tui`]) and the headless printer ([`headless`]) are two front ends over the
//! same agent worker.

pub mod agent;
pub mod board;
pub mod cli;
pub mod config;
pub mod count;
pub mod headless;
pub mod hooks;
pub mod instructions;
pub mod llm;
pub mod message;
pub mod pricing;
pub mod prompt;
pub mod runtime;
pub mod state_home;
pub mod tags;
pub mod tools;
pub mod tui;
pub mod visible;
