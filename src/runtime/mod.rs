//! The workspace runtime: where the tools' work lands and how commands run.
//!
//! The [`Workspace`] and the ways its files are touched ([`beneath`], [`open`], [`atomic`],
//! [`pending`]; [`path_error`]: why a path could not be used); the
//! [`sandbox`] commands run in, the [`supervisor`] each runs under, the [`environment`] each
//! gets ([`withheld`]: what of keel's own it does not), the [`guard`] that judges one that runs
//! unconfined, the [`programs`] keel starts by name; [`undo`]'s snapshots and the [`gate`] a
//! command waits at for one; a file's [`change`]. The model's tools (`tools/`) use all
//! of it; none of it knows the tools.

pub mod atomic;
pub(crate) mod beneath;
pub mod change;
pub mod entry;
pub mod environment;
pub mod gate;
pub mod guard;
pub(crate) mod open;
pub mod path_error;
pub mod pending;
pub mod programs;
pub mod sandbox;
pub mod size_limit;
pub mod supervisor;
#[cfg(test)]
pub(crate) mod testing;
pub mod undo;
pub mod withheld;
pub mod workspace;

pub use sandbox::Sandbox;
pub use workspace::Workspace;
