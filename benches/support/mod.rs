//! Helpers shared by the benchmarks: the scripted LLM (from the tests), a timing loopback server,
//! a long session as the TUI holds it, and requests priced with the prompt cache.
#![allow(dead_code)]

pub mod cache_cost;
#[path = "../../tests/support/llm/mod.rs"]
pub mod fake_llm;
pub mod loopback;
pub mod peak_rss;
pub mod screen;
