//! The tools that change a file, `write_file` and `edit_file`: one impl, [`Changing`], over what
//! each one plans and how a repeat of it is known. A call is planned first, so that the approval
//! box can show the diff and a repeat is known before anything is written; its run plans it
//! again and applies it.

use super::repeat::{Repeated, content_digest, edit_digest};
use super::{EDIT_DESCRIPTION, EditArgs, PlannedChange, WRITE_DESCRIPTION, Workspace, WriteArgs};
use super::{edit_schema, plan_edit, plan_write, write_schema};
use crate::tools::names::{self, ToolNames};
use crate::tools::tool::{self, Declared, Effect, Schema, Tool, ToolRun};
use crate::tools::{ToolCall, ToolContext, ToolError, Tools};
use futures_util::FutureExt as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `write_file`: a file created or replaced whole. The same content again is a repeat, whatever
/// the file held.
pub const WRITE_FILE: Changing<WriteArgs> = Changing {
    declared: changes(names::WRITE_FILE, WRITE_DESCRIPTION, write_schema),
    plan: plan_write,
    repeat_of: |input| Repeated::Content(content_digest(text(input, "content").as_bytes())),
    changes_nothing: |_| false,
};

/// `edit_file`: one exact piece of a file replaced. The same replacement again is a repeat; one
/// whose `old_text` and `new_text` are the same changes nothing (the tool reports "no change"
/// and writes nothing).
pub const EDIT_FILE: Changing<EditArgs> = Changing {
    declared: changes(names::EDIT_FILE, EDIT_DESCRIPTION, edit_schema),
    plan: plan_edit,
    repeat_of: |input| {
        Repeated::Edit(edit_digest(text(input, "old_text"), text(input, "new_text")))
    },
    changes_nothing: |input| {
        let old_text = tool::text_field(input, "old_text");
        old_text.is_some() && old_text == tool::text_field(input, "new_text")
    },
};

/// A tool that changes one file, its calls taking `A`.
pub struct Changing<A> {
    /// What it states of itself: each call named by its path.
    declared: Declared<'static>,
    /// The change a call asks for, worked out without making it.
    plan: fn(&Workspace, &A) -> Result<PlannedChange, ToolError>,
    /// How a repeat of a call is recognised, from its input alone.
    repeat_of: fn(&Value) -> Repeated,
    /// Whether a call would change nothing at all.
    changes_nothing: fn(&Value) -> bool,
}

/// The declaration of a tool that changes a file.
const fn changes(
    names: ToolNames<'static>,
    description: &'static str,
    schema: fn() -> Value,
) -> Declared<'static> {
    Declared::new(names, description, Schema::Made(schema), Effect::WritesFiles).named_by("path")
}

/// The string argument `field` of `input`, empty when it has none.
fn text<'a>(input: &'a Value, field: &str) -> &'a str {
    tool::text_field(input, field).unwrap_or_default()
}

impl<A: DeserializeOwned + Send + 'static> Tool for Changing<A> {
    fn declared(&self) -> Declared<'_> {
        self.declared
    }

    fn run<'a>(&'a self, call: &'a ToolCall, on: &'a Tools, _: &'a ToolContext) -> ToolRun<'a> {
        let plan = self.plan;
        let args = tool::decode::<A>(self, &call.input);
        on.file_job(args, move |workspace, args| plan(workspace, &args)?.apply()).boxed()
    }

    fn changes_nothing(&self, input: &Value) -> bool {
        (self.changes_nothing)(input)
    }

    fn planned_change(
        &self,
        input: &Value,
        workspace: &Workspace,
    ) -> Option<(PlannedChange, Repeated)> {
        let plan = (self.plan)(workspace, &tool::decode(self, input).ok()?).ok()?;
        Some((plan, (self.repeat_of)(input)))
    }

    fn repeat_of(&self, input: &Value) -> Option<Repeated> {
        Some((self.repeat_of)(input))
    }
}
