//! Helpers shared by the benchmarks: the scripted LLM (from the tests), a timing loopback server
//! and a long session as the TUI holds it.
#![allow(dead_code)]

#[path = "../../tests/support/llm/mod.rs"]
pub mod fake_llm;
pub mod loopback;
pub mod peak_rss;
pub mod screen;
