//! Helpers shared by the benchmarks: the scripted LLM (from the tests) and a timing loopback server.
#![allow(dead_code)]

#[path = "../../tests/fake_llm/mod.rs"]
pub mod fake_llm;
pub mod loopback;
