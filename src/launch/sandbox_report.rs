//! `keel sandbox`: where commands run, and which variables of the person's environment neither
//! commands nor MCP servers get (names only, never values), with the rule that decides it.

use keel::config::Config;
use keel::tools::sandbox::Sandbox;
use keel::tools::withheld;
use keel::visible::visible;

/// The report, for the sandbox `sandbox` (probed) and the environment `vars`.
pub fn render(
    config: &Config,
    sandbox: &Sandbox,
    vars: &[(std::ffi::OsString, std::ffi::OsString)],
) -> String {
    let mut out = format!("Commands: {}.\n", sandbox.label());
    if let Some(problem) = sandbox.problem() {
        out.push_str(&format!("{}\n", visible(problem)));
    }
    let roots: Vec<String> =
        sandbox.policy.writable_roots.iter().map(|root| root.display().to_string()).collect();
    if !roots.is_empty() {
        out.push_str(&format!("They may also write: {}\n", visible(&roots.join(", "))));
    }
    out.push('\n');
    out.push_str(&withheld::report(&config.withholding(), vars));
    out
}
