//! The search tools, `grep` and `glob`: one impl, [`Search`], over what each one searches for.
//! A search of the workspace runs in-process and read-only, off the async threads.

use super::{
    Found, GLOB_DESCRIPTION, GREP_DESCRIPTION, GlobArgs, GrepArgs, SearchError, glob_schema,
    grep_schema,
};
use crate::tools::names::{self, ToolNames};
use crate::tools::tool::{self, Declared, Effect, Masking, Schema, Tool, ToolRun};
use crate::tools::{ToolCall, ToolContext, ToolError, Tools, Workspace};
use futures_util::FutureExt as _;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// `grep`: file contents searched for a regex ([`super::grep()`]).
pub const GREP: Search<GrepArgs> =
    Search::new(names::GREP, GREP_DESCRIPTION, grep_schema, super::grep);

/// `glob`: files found by their names ([`super::glob()`]).
pub const GLOB: Search<GlobArgs> =
    Search::new(names::GLOB, GLOB_DESCRIPTION, glob_schema, super::glob);

/// A search tool, its calls taking `A`.
pub struct Search<A> {
    /// What it states of itself.
    declared: Declared<'static>,
    /// The search a call asks for; stops early when its token fires.
    search: fn(&Workspace, &A, &CancellationToken) -> Result<Found, SearchError>,
}

impl<A> Search<A> {
    /// A tool called `names` that reads, masked as a search.
    const fn new(
        names: ToolNames<'static>,
        description: &'static str,
        schema: fn() -> Value,
        search: fn(&Workspace, &A, &CancellationToken) -> Result<Found, SearchError>,
    ) -> Self {
        let declared = Declared::new(names, description, Schema::Made(schema), Effect::Reads);
        Self { declared: declared.masked(Masking::Search), search }
    }
}

impl<A: DeserializeOwned + Send + 'static> Tool for Search<A> {
    fn declared(&self) -> Declared<'_> {
        self.declared
    }

    fn run<'a>(&'a self, call: &'a ToolCall, on: &'a Tools, ctx: &'a ToolContext) -> ToolRun<'a> {
        let (search, stop) = (self.search, ctx.cancel.clone());
        let args = tool::decode::<A>(self, &call.input);
        on.file_job(args, move |workspace, args| Ok(search(workspace, &args, &stop).into())).boxed()
    }

    /// Decoded whole: an argument the tool does not take, or an `output` it does not know, is
    /// refused by name.
    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        tool::decode::<A>(self, input).map(drop)
    }

    /// The pattern, then the path and the glob filter when given (`NEEDLE src/ *.rs`).
    fn summary(&self, input: &Value) -> String {
        super::summary(input).map_or_else(|| self.name().to_owned(), |line| tool::first_line(&line))
    }
}
