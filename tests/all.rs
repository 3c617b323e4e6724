//! keel's integration tests, built as one binary: linking the crate once instead of once per
//! file is most of what a test run costs. The subjects are in `suite/`, what they share in
//! `support/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;
