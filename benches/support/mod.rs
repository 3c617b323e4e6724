//! Helpers shared by the benchmarks: the scripted LLM (from the tests), a timing loopback server,
//! a long session as the TUI holds it, requests priced with the prompt cache, and the board's
//! ten-step task.
#![allow(dead_code)]

pub mod cache_cost;
#[path = "../../tests/support/llm/mod.rs"]
pub mod fake_llm;
pub mod loopback;
pub mod peak_rss;
pub mod screen;
pub mod ten_steps;
