//! How a setting is declared. `settings!` reads one table — each setting's name, type, default,
//! flag, environment variable, and what a workspace's own file may do with it — and writes from
//! it the config file's struct, the flags' struct, the precedence of the sources, and what a
//! workspace is allowed. The table itself is `settings.rs`; what no table can say (the
//! provider's defaults, the checks across settings) is `merge`'s.

mod value;

pub use value::{FromEnv, Shown, Tighten, read_env};

use crate::llm::WireFormat;

/// What a workspace's own `.keel/config.toml` may do with a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workspace {
    /// Set it, over the person's file.
    May,
    /// Nothing: the setting is the person's alone, and keel says it ignored the workspace's.
    Never,
    /// Only make it stricter than the person's own (and then it wins, even over a flag).
    Tightens,
    /// Set it, and it runs only once the person trusts it (hooks): told apart, not "taken".
    Trusted,
}

/// Where the environment holds a setting.
#[derive(Debug, Clone, Copy)]
pub enum Env {
    /// A variable of its own.
    Var(&'static str),
    /// The chosen provider's own variable (its key, its URL).
    OfProvider(fn(WireFormat) -> &'static str),
}

impl Env {
    /// The variable, given the provider (`None` while it is being chosen: then only the
    /// variables of their own are read).
    pub fn variable(self, provider: Option<WireFormat>) -> Option<&'static str> {
        match self {
            Self::Var(name) => Some(name),
            Self::OfProvider(variable) => provider.map(variable),
        }
    }
}

/// One setting of the table, as data: for what lists or checks them all.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    pub name: &'static str,
    pub workspace: Workspace,
    /// Whether a flag sets it (`--` and the name in kebab case, unless the table says otherwise).
    pub flag: bool,
    pub env: Option<Env>,
}

/// The sources of settings, each as a config file would give them, from the highest.
#[derive(Debug, Clone, Copy)]
pub struct Layers<'a> {
    pub flags: &'a super::FileSettings,
    pub env: &'a super::FileSettings,
    /// The workspace's file, as `restrict` left it.
    pub project: &'a super::FileSettings,
    /// The person's own file.
    pub user: &'a super::FileSettings,
    /// What the front end decides when no one did (the approval: ask in the TUI, auto with -p).
    pub front: &'a super::FileSettings,
}

impl<'a> Layers<'a> {
    /// The layers a setting is taken from, the highest first, by what a workspace may do with
    /// it: the workspace's file comes first where it may only tighten (`restrict` left a value
    /// there only if no looser than the person's).
    pub fn in_order(&self, workspace: Workspace) -> [&'a super::FileSettings; 5] {
        match workspace {
            Workspace::Tightens => [self.project, self.flags, self.env, self.user, self.front],
            Workspace::May | Workspace::Never | Workspace::Trusted => {
                [self.flags, self.env, self.project, self.user, self.front]
            }
        }
    }
}

/// Writes, from the table of settings (see `settings.rs`), `FileSettings` (a config file: every
/// field optional, unknown keys refused), `FlagSettings` (the command line: `#[arg(skip)]` for a
/// setting no flag sets), `Given` (each setting from its highest source, else its default),
/// `SETTINGS`, the functions that read the environment, apply precedence, and hold a
/// workspace's file to what it may set, and the copy of the agent's settings (`#[agent = FIELD]`:
/// the `AgentConfig` field a setting goes to, from `Config`'s of the same name).
macro_rules! settings {
    ($(
        $(#[doc = $doc:literal])*
        $(#[agent = $agent:ident])?
        #[arg($($arg:tt)*)]
        $name:ident: $type:ty $(= $default:expr)?, workspace: $rule:ident $(, env: $env:expr)?;
    )*) => {
        /// The settings a config file may hold. Every field is optional.
        #[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct FileSettings {$(
            $(#[doc = $doc])*
            pub $name: Option<$type>,
        )*}

        /// The settings given as flags, flattened into the command line (`cli::Cli`). A setting
        /// no flag sets is always `None` here.
        #[derive(Debug, Clone, Default, PartialEq, clap::Args)]
        pub struct FlagSettings {$(
            $(#[doc = $doc])*
            #[arg($($arg)*)]
            pub $name: Option<$type>,
        )*}

        /// Each setting from the highest source that sets it, else its default (`None` where
        /// the table has none: the caller decides).
        #[derive(Debug, Clone, PartialEq)]
        pub struct Given {$(
            pub $name: $crate::config::declare::given_type!($type $(, $default)?),
        )*}

        /// Every setting, in the table's order.
        pub const SETTINGS: &[$crate::config::declare::Declared] = &[$(
            $crate::config::declare::Declared {
                name: stringify!($name),
                workspace: $crate::config::declare::Workspace::$rule,
                flag: $crate::config::declare::is_flag!($($arg)*),
                env: $crate::config::declare::optional!($($env)?),
            },
        )*];

        impl $crate::config::Config {
            /// `agent` with the settings it takes as resolved (`#[agent = FIELD]` in the table).
            pub(super) fn settings_into(
                &self,
                agent: $crate::agent::AgentConfig,
            ) -> $crate::agent::AgentConfig {
                $crate::agent::AgentConfig { $($($agent: self.$name.clone(),)?)* ..agent }
            }
        }

        #[cfg(test)]
        impl FileSettings {
            /// The keys this file sets, in the table's order.
            pub fn keys(&self) -> Vec<&'static str> {
                let mut keys = Vec::new();
                $(if self.$name.is_some() {
                    keys.push(stringify!($name));
                })*
                keys
            }
        }

        impl From<&FlagSettings> for FileSettings {
            /// The flags as one more layer of settings.
            fn from(flags: &FlagSettings) -> Self {
                Self { $($name: flags.$name.clone(),)* }
            }
        }

        /// The environment as one more layer of settings: each setting's variable, once the
        /// provider is known (before, with `provider` `None`, only the variables of their own).
        pub fn environment(
            lookup: &dyn Fn(&str) -> Option<String>,
            provider: Option<$crate::llm::WireFormat>,
        ) -> Result<FileSettings, $crate::config::ConfigError> {
            Ok(FileSettings {$(
                $name: $crate::config::declare::from_env!(lookup, provider $(, $env)?),
            )*})
        }

        impl $crate::config::declare::Layers<'_> {
            /// Each setting from the first layer that sets it (`in_order`), else its default.
            pub fn given(&self) -> Given {
                let layers = self;
                Given {$(
                    $name: $crate::config::declare::with_default!(
                        layers
                            .in_order($crate::config::declare::Workspace::$rule)
                            .into_iter()
                            .find_map(|layer| layer.$name.clone())
                        $(, $default)?
                    ),
                )*}
            }
        }

        /// The workspace's settings less what it may not set, given the person's own (`person`):
        /// what it may only tighten stays unless looser. And what was left out, in the table's
        /// order.
        pub fn restrict(
            project: &FileSettings,
            person: &Given,
        ) -> (FileSettings, Vec<$crate::config::trust::Ignored>) {
            let mut allowed = project.clone();
            let mut ignored = Vec::new();
            $($crate::config::declare::restrict!(
                $rule, allowed.$name, person.$name, stringify!($name), ignored
            );)*
            (allowed, ignored)
        }

        /// What the workspace's file (as `restrict` left it) set that keel took, each as
        /// `key = value`, in the table's order; its hooks are told apart (they run only once
        /// trusted).
        pub fn taken(project: &FileSettings) -> Vec<String> {
            let mut taken = Vec::new();
            $($crate::config::declare::taken!($rule, project.$name, stringify!($name), taken);)*
            taken
        }
    };
}

/// A setting's type once resolved: itself where the table gives a default, else optional.
macro_rules! given_type {
    ($type:ty) => { Option<$type> };
    ($type:ty, $default:expr) => { $type };
}

/// A setting's value once resolved: its default where none of the sources set it.
macro_rules! with_default {
    ($value:expr) => {
        $value
    };
    ($value:expr, $default:expr) => {
        $value.unwrap_or_else(|| $default)
    };
}

/// Whether the flag's attributes give it a flag at all.
macro_rules! is_flag {
    (skip) => {
        false
    };
    ($($arg:tt)*) => {
        true
    };
}

macro_rules! optional {
    () => {
        None
    };
    ($value:expr) => {
        Some($value)
    };
}

/// A setting from the environment: `None` for one the table gives no variable.
macro_rules! from_env {
    ($lookup:ident, $provider:ident) => {
        None
    };
    ($lookup:ident, $provider:ident, $env:expr) => {
        $crate::config::declare::read_env($env, $lookup, $provider)?
    };
}

/// What a workspace may do with one setting, applied to its file.
macro_rules! restrict {
    (May, $($rest:tt)*) => {};
    (Trusted, $($rest:tt)*) => {};
    (Never, $field:expr, $person:expr, $key:expr, $ignored:ident) => {
        if $field.take().is_some() {
            $ignored.push($crate::config::trust::Ignored::Key($key));
        }
    };
    (Tightens, $field:expr, $person:expr, $key:expr, $ignored:ident) => {
        if let Some(asked) = $field {
            let kept = $person;
            if $crate::config::declare::Tighten::tighter(kept, asked) {
                $field = None;
                $ignored.extend($crate::config::declare::Tighten::looser($key, asked, kept));
            }
        }
    };
}

/// One setting of the workspace's file, as "took …" shows it.
macro_rules! taken {
    (Never, $($rest:tt)*) => {};
    (Trusted, $($rest:tt)*) => {};
    ($rule:ident, $field:expr, $key:expr, $taken:ident) => {
        if let Some(value) = &$field {
            $taken.push(format!("{} = {}", $key, $crate::config::declare::Shown::shown(value)));
        }
    };
}

pub(crate) use {from_env, given_type, is_flag, optional, restrict, settings, taken, with_default};
