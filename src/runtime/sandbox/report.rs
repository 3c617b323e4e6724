//! What `keel sandbox` and `/sandbox` say: where commands run — which sandbox, and what it does
//! not hold here — which paths are hidden from them and from the model's tools
//! ([`super::hidden`]), and which variables of the person's environment neither commands nor MCP
//! servers get (names only, never values), with the rule that decides it.

use super::hidden::Hidden;
use super::{Availability, Confinement, Sandbox, landlock};
use crate::runtime::withheld::{self, Withholding};
use crate::visible::visible;
use std::ffi::OsString;

/// The report, for commands run in `sandbox` (probed), the paths `hidden`, the environment
/// `vars` and `rule`.
pub fn render(
    sandbox: &Sandbox,
    hidden: &Hidden,
    rule: &Withholding,
    vars: &[(OsString, OsString)],
) -> String {
    let mut out = format!("Commands: {}.\n", sandbox.label());
    if let Some(problem) = sandbox.problem() {
        out.push_str(&format!("{}\n", visible(problem)));
    }
    let confined = sandbox.confinement() == Confinement::Confined;
    if let (Availability::Landlock { abi, why_not_bwrap }, true) = (&sandbox.availability, confined)
    {
        out.push_str(&format!(
            "bwrap cannot run here ({}): Landlock (version {abi}) and a seccomp filter confine \
             them instead, and {}; bubblewrap gives the full sandbox.\n",
            visible(why_not_bwrap),
            sandbox.landlock_limits()
        ));
        for gap in landlock::gaps(*abi) {
            out.push_str(&format!("At this Landlock version, {gap}.\n"));
        }
    }
    if let (Some(why), true) = (&sandbox.unbounded, confined) {
        out.push_str(&format!("No bound on a command's processes: {}.\n", visible(why)));
    }
    let roots: Vec<String> =
        sandbox.policy.writable_roots.iter().map(|root| root.display().to_string()).collect();
    if !roots.is_empty() {
        out.push_str(&format!("They may also write: {}\n", visible(&roots.join(", "))));
    }
    out.push('\n');
    out.push_str(&hidden.report());
    out.push('\n');
    out.push_str(&withheld::report(rule, vars));
    out
}
