//! `keel sandbox`: the report `/sandbox` shows too (`keel::tools::sandbox::report`).

use keel::config::Config;
use keel::tools::sandbox::{Sandbox, report};

/// The report, for the sandbox `sandbox` (probed) and the environment `vars`.
pub fn render(
    config: &Config,
    sandbox: &Sandbox,
    vars: &[(std::ffi::OsString, std::ffi::OsString)],
) -> String {
    report::render(sandbox, &config.withholding(), vars)
}
