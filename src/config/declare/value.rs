//! What a setting's type must be able to do, as the table uses it: be read from an environment
//! variable (`FromEnv`), be ordered from strict to loose where a workspace may only tighten it
//! (`Tighten`), and show in "took …" (`Shown`).

use super::Env;
use crate::agent::{ApprovalMode, NagThreshold};
use crate::config::ConfigError;
use crate::config::trust::Ignored;
use crate::llm::WireFormat;
use crate::runtime::sandbox::Mode as SandboxMode;

/// A setting the environment may hold, read from its variable's text.
pub trait FromEnv: Sized {
    fn from_env(variable: &'static str, value: String) -> Result<Self, ConfigError>;
}

impl FromEnv for String {
    fn from_env(_: &'static str, value: String) -> Result<Self, ConfigError> {
        Ok(value)
    }
}

impl FromEnv for WireFormat {
    fn from_env(variable: &'static str, value: String) -> Result<Self, ConfigError> {
        Self::parse(&value).ok_or(ConfigError::BadProvider { variable, value })
    }
}

/// A setting's value from the environment, if its variable is set (`lookup` leaves out blanks).
pub fn read_env<T: FromEnv>(
    env: Env,
    lookup: &dyn Fn(&str) -> Option<String>,
    provider: Option<WireFormat>,
) -> Result<Option<T>, ConfigError> {
    let Some(variable) = env.variable(provider) else {
        return Ok(None);
    };
    lookup(variable).map(|value| T::from_env(variable, value)).transpose()
}

/// A setting a workspace may only tighten: an order from what lets least happen.
pub trait Tighten: Copy + PartialEq {
    /// Whether `self` lets less happen than `than`.
    fn tighter(self, than: Self) -> bool;
    /// What keel says of a workspace's `asked`, looser than the person's `kept` (`None`: nothing,
    /// as for a budget, where the lower simply holds).
    fn looser(key: &'static str, asked: Self, kept: Self) -> Option<Ignored>;
}

impl Tighten for ApprovalMode {
    fn tighter(self, than: Self) -> bool {
        self.looseness() < than.looseness()
    }
    fn looser(_: &'static str, asked: Self, kept: Self) -> Option<Ignored> {
        Some(Ignored::LooserApproval { asked, kept })
    }
}

impl Tighten for SandboxMode {
    fn tighter(self, than: Self) -> bool {
        self.looseness() < than.looseness()
    }
    fn looser(_: &'static str, asked: Self, kept: Self) -> Option<Ignored> {
        Some(Ignored::LooserSandbox { asked, kept })
    }
}

/// A permission (`network`): off is the tighter.
impl Tighten for bool {
    fn tighter(self, than: Self) -> bool {
        !self && than
    }
    fn looser(key: &'static str, _: Self, _: Self) -> Option<Ignored> {
        Some(Ignored::Key(key))
    }
}

/// A budget or a count: less is the tighter, and a workspace's larger one is simply not taken.
macro_rules! tighten_by_less {
    ($($number:ty),*) => {$(
        impl Tighten for $number {
            fn tighter(self, than: Self) -> bool {
                self < than
            }
            fn looser(_: &'static str, _: Self, _: Self) -> Option<Ignored> {
                None
            }
        }
    )*};
}
tighten_by_less!(u32, u64, usize);

/// The longest text value "took …" quotes, in characters.
const VALUE_MAX_CHARS: usize = 40;

/// How a value the workspace's file set shows in "took …" (`key = value`).
pub trait Shown {
    fn shown(&self) -> String;
}

macro_rules! shown_as_displayed {
    ($($type:ty),*) => {$(
        impl Shown for $type {
            fn shown(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
shown_as_displayed!(u32, u64, usize, f64, bool, NagThreshold);

impl Shown for String {
    fn shown(&self) -> String {
        let mut shown: String = self.chars().take(VALUE_MAX_CHARS).collect();
        if shown.len() < self.len() {
            shown.push('…');
        }
        format!("{:?}", crate::visible::visible(&shown))
    }
}

impl Shown for ApprovalMode {
    fn shown(&self) -> String {
        format!("{:?}", self.name())
    }
}

impl Shown for SandboxMode {
    fn shown(&self) -> String {
        format!("{:?}", self.name())
    }
}
