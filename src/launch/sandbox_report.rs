//! `keel sandbox`: the report `/sandbox` shows too (`keel::runtime::sandbox::report`).

use keel::config::Config;
use keel::runtime::sandbox::hidden::Hidden;
use keel::runtime::sandbox::{Sandbox, report};

/// The report, for the sandbox `sandbox` (probed), the paths `hidden` and the environment `vars`.
pub fn render(
    config: &Config,
    sandbox: &Sandbox,
    hidden: &Hidden,
    vars: &[(std::ffi::OsString, std::ffi::OsString)],
) -> String {
    report::render(sandbox, hidden, &config.withholding(), vars)
}
