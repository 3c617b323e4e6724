//! `keel sandbox`: the report `/sandbox` shows too (`keel::tools::sandbox::report`).

use keel::config::Config;
use keel::tools::sandbox::hidden::Hidden;
use keel::tools::sandbox::{Sandbox, report};

/// The report, for the sandbox `sandbox` (probed), the paths `hidden` and the environment `vars`.
pub fn render(
    config: &Config,
    sandbox: &Sandbox,
    hidden: &Hidden,
    vars: &[(std::ffi::OsString, std::ffi::OsString)],
) -> String {
    report::render(sandbox, hidden, &config.withholding(), vars)
}
