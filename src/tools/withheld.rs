//! Which variables of keel's environment its commands and MCP servers do not get.
//!
//! The model reads whatever a command prints, so a secret in a command's environment is a secret
//! the model can print (`env`) and send wherever a command can reach; an MCP server is someone
//! else's program. So keel hands on its environment less:
//!
//! - the provider keys (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`) and keel's own settings (`KEEL_*`),
//!   always;
//! - any variable whose value holds the provider key keel uses (from the environment or the
//!   person's config file), always: a key copied under another name is still the key;
//! - any variable whose name holds `KEY`, `SECRET`, `TOKEN`, `PASSWORD`, `PASSWD` or
//!   `CREDENTIAL`, in any case (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`), and any
//!   variable the config names as an MCP server's token (`bearer_token_env_var`), unless the
//!   person's own config lets the name through (`pass_env`). A workspace's config cannot.
//!
//! An MCP server's own `env_vars` still hands it the variables named there. The rule is set once,
//! from the person's config, as keel starts ([`set`]); `keel sandbox` lists what it withholds.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fmt;
use std::sync::OnceLock;

/// The prefix of keel's own variables.
const KEEL_PREFIX: &str = "KEEL_";
/// The provider keys' variables.
const PROVIDER_KEYS: [&str; 2] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];
/// Words that mark a variable's name as a secret's, matched in upper case; the first found is
/// named as the reason, so the most telling come first.
pub const SECRET_WORDS: [&str; 6] = ["SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "TOKEN", "KEY"];
/// The shortest provider key looked for in other variables' values: a real key is far longer,
/// and a short placeholder (`unused`, `x`) would match half the environment.
const MIN_KEY_CHARS: usize = 16;

/// Why a variable is withheld.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    ProviderKey,
    Keel,
    HoldsProviderKey,
    /// Its name holds this word.
    Name(&'static str),
    /// It holds the token of this MCP server.
    McpToken(String),
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ProviderKey => write!(f, "a provider key"),
            Self::Keel => write!(f, "one of keel's own settings"),
            Self::HoldsProviderKey => write!(f, "its value holds the provider key"),
            Self::Name(word) => write!(f, "its name holds {word}"),
            Self::McpToken(server) => {
                write!(f, "the token of MCP server `{server}` (bearer_token_env_var)")
            }
        }
    }
}

/// The rule, as the person's config shapes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Withholding {
    /// Names the person's own config lets through (`pass_env`).
    pass: BTreeSet<String>,
    /// Variables that hold MCP servers' tokens, with the server.
    tokens: BTreeMap<String, String>,
    /// The provider key keel uses, when it is long enough to look for.
    key: Option<String>,
}

impl Withholding {
    /// The rule with `pass` let through, `tokens` (variable, server) withheld, and no variable
    /// holding `key` handed on.
    pub fn new(
        pass: impl IntoIterator<Item = String>,
        tokens: impl IntoIterator<Item = (String, String)>,
        key: Option<&str>,
    ) -> Self {
        Self {
            pass: pass.into_iter().collect(),
            tokens: tokens.into_iter().collect(),
            key: key.filter(|key| key.chars().count() >= MIN_KEY_CHARS).map(str::to_owned),
        }
    }

    /// Why the variable `name`, holding `value`, is withheld; `None` when it is handed on.
    pub fn why(&self, name: &OsStr, value: &OsStr) -> Option<Why> {
        let bytes = name.as_encoded_bytes();
        if PROVIDER_KEYS.iter().any(|key| key.as_bytes() == bytes) {
            return Some(Why::ProviderKey);
        }
        if bytes.starts_with(KEEL_PREFIX.as_bytes()) {
            return Some(Why::Keel);
        }
        if let Some(key) = &self.key
            && contains(value.as_encoded_bytes(), key.as_bytes())
        {
            return Some(Why::HoldsProviderKey);
        }
        let name = name.to_string_lossy();
        if self.pass.contains(name.as_ref()) {
            return None;
        }
        if let Some(server) = self.tokens.get(name.as_ref()) {
            return Some(Why::McpToken(server.clone()));
        }
        let upper = name.to_ascii_uppercase();
        SECRET_WORDS.iter().find(|word| upper.contains(*word)).map(|word| Why::Name(word))
    }

    /// Every variable of `vars` withheld, by name, with why; sorted by name.
    pub fn withheld<N, V>(&self, vars: impl IntoIterator<Item = (N, V)>) -> Vec<(String, Why)>
    where
        N: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let mut out: Vec<(String, Why)> = vars
            .into_iter()
            .filter_map(|(name, value)| {
                let why = self.why(name.as_ref(), value.as_ref())?;
                Some((name.as_ref().to_string_lossy().into_owned(), why))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The names of `vars` the rule would withhold but `pass_env` lets through; sorted.
    pub fn let_through<N: AsRef<OsStr>>(&self, names: impl IntoIterator<Item = N>) -> Vec<String> {
        let unpassed = Self { pass: BTreeSet::new(), ..self.clone() };
        let mut out: Vec<String> = names
            .into_iter()
            .map(|name| name.as_ref().to_string_lossy().into_owned())
            .filter(|name| self.pass.contains(name))
            .filter(|name| unpassed.why(OsStr::new(name), OsStr::new("")).is_some())
            .collect();
        out.sort();
        out
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|window| window == needle)
}

/// The rule in force: set once as keel starts; until then, the default (no name let through).
static RULE: OnceLock<Withholding> = OnceLock::new();

/// Sets the rule for the rest of the process; a second call changes nothing and says so.
pub fn set(rule: Withholding) -> Result<(), Withholding> {
    RULE.set(rule)
}

/// The rule in force.
pub fn rule() -> &'static Withholding {
    static DEFAULT: OnceLock<Withholding> = OnceLock::new();
    RULE.get().unwrap_or_else(|| DEFAULT.get_or_init(Withholding::default))
}

/// Whether `name`, as keel's own environment holds it, is kept from commands and MCP servers.
pub fn is_withheld(name: &OsStr) -> bool {
    let value = std::env::var_os(name).unwrap_or_default();
    rule().why(name, &value).is_some()
}

/// Whether the rule withholds `name` (holding `value`) from every program keel starts, the
/// person's own hooks included: a provider key, keel's own settings, a variable holding the key.
pub fn is_keels(name: &OsStr, value: &OsStr) -> bool {
    matches!(rule().why(name, value), Some(Why::ProviderKey | Why::Keel | Why::HoldsProviderKey))
}

/// Removes from `cmd`'s environment what no program keel starts gets ([`is_keels`]), leaving
/// the person's own secrets: for the person's own programs (hooks), which may need them.
pub fn remove_keels(cmd: &mut tokio::process::Command) {
    for (name, value) in std::env::vars_os() {
        if is_keels(&name, &value) {
            cmd.env_remove(name);
        }
    }
}

/// Removes from `cmd`'s environment every variable of keel's that the rule withholds.
pub fn remove_withheld(cmd: &mut tokio::process::Command) {
    for (name, value) in std::env::vars_os() {
        if rule().why(&name, &value).is_some() {
            cmd.env_remove(name);
        }
    }
}

/// What `keel sandbox` says of the environment: what is withheld and why, what is let through.
pub fn report(rule: &Withholding, vars: &[(std::ffi::OsString, std::ffi::OsString)]) -> String {
    let withheld = rule.withheld(vars.iter().map(|(name, value)| (name, value)));
    let mut out = String::from("Withheld from commands and MCP servers (names only):\n");
    if withheld.is_empty() {
        out.push_str("  nothing\n");
    }
    let width = withheld.iter().map(|(name, _)| name.chars().count()).max().unwrap_or(0);
    for (name, why) in &withheld {
        let name = crate::visible::visible(name);
        out.push_str(&format!("  {name:<width$}  {why}\n"));
    }
    let passed = rule.let_through(vars.iter().map(|(name, _)| name));
    if !passed.is_empty() {
        out.push_str(&format!("Let through by pass_env in your config: {}\n", passed.join(", ")));
    }
    out.push_str(&format!(
        "The rule: a variable is withheld when it is a provider key or a KEEL_* setting, when its \
         value holds the provider key, when its name holds {} (any case), or when your config \
         names it an MCP server's bearer_token_env_var. `pass_env = [\"NAME\"]` in your own \
         config lets such a name through (not a provider key, a KEEL_* setting or the provider \
         key's value); a workspace's .keel/config.toml cannot. An MCP server's env_vars hands it \
         the variables named there.",
        SECRET_WORDS.join(", ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(rule: &Withholding, name: &str) -> Option<Why> {
        rule.why(OsStr::new(name), OsStr::new("value"))
    }

    #[test]
    fn secrets_are_withheld_by_name_in_any_case() {
        let rule = Withholding::default();
        for (name, word) in [
            ("GITHUB_TOKEN", "TOKEN"),
            ("AWS_SECRET_ACCESS_KEY", "SECRET"),
            ("DB_PASSWORD", "PASSWORD"),
            ("STRIPE_API_KEY", "KEY"),
            ("npm_config__authToken", "TOKEN"),
            ("GOOGLE_APPLICATION_CREDENTIALS", "CREDENTIAL"),
            ("MYSQL_PASSWD", "PASSWD"),
            ("Client_Secret", "SECRET"),
        ] {
            assert_eq!(why(&rule, name), Some(Why::Name(word)), "{name}");
        }
        for name in ["HOME", "PATH", "TERM", "SSH_AUTH_SOCK", "LANG", "CARGO_HOME"] {
            assert_eq!(why(&rule, name), None, "{name}");
        }
        assert_eq!(why(&rule, "ANTHROPIC_API_KEY"), Some(Why::ProviderKey));
        assert_eq!(why(&rule, "KEEL_MODEL"), Some(Why::Keel));
    }

    #[test]
    fn the_persons_config_lets_names_through_but_never_keys() {
        let pass = ["GITHUB_TOKEN", "OPENAI_API_KEY", "KEEL_MODEL"].map(str::to_owned);
        let tokens = [("DOCS_TOKEN".to_owned(), "docs".to_owned())];
        let key = "sk-ant-0123456789abcdef";
        let rule = Withholding::new(pass, tokens, Some(key));
        assert_eq!(why(&rule, "GITHUB_TOKEN"), None);
        assert_eq!(why(&rule, "OPENAI_API_KEY"), Some(Why::ProviderKey));
        assert_eq!(why(&rule, "KEEL_MODEL"), Some(Why::Keel));
        assert_eq!(why(&rule, "DOCS_TOKEN"), Some(Why::McpToken("docs".into())));
        let copy = rule.why(OsStr::new("LLM"), OsStr::new(&format!("Bearer {key}")));
        assert_eq!(copy, Some(Why::HoldsProviderKey));
        let passed_copy = rule.why(OsStr::new("GITHUB_TOKEN"), OsStr::new(key));
        assert_eq!(
            passed_copy,
            Some(Why::HoldsProviderKey),
            "the key's value is never let through"
        );
        // A short placeholder key is not looked for in values.
        let placeholder = Withholding::new([], [], Some("k"));
        assert_eq!(placeholder.why(OsStr::new("PATH"), OsStr::new("/work/bin")), None);
    }

    #[test]
    fn the_report_names_what_is_withheld_and_why_never_values() {
        let rule = Withholding::new(["DB_PASSWORD".to_owned()], [], None);
        let vars: Vec<(std::ffi::OsString, std::ffi::OsString)> =
            [("GITHUB_TOKEN", "ghp_x"), ("DB_PASSWORD", "hunter2"), ("HOME", "/h")]
                .iter()
                .map(|(name, value)| ((*name).into(), (*value).into()))
                .collect();
        let report = report(&rule, &vars);
        assert!(report.contains("  GITHUB_TOKEN  its name holds TOKEN\n"), "{report}");
        assert!(report.contains("Let through by pass_env in your config: DB_PASSWORD\n"));
        assert!(
            !report.contains("ghp_x") && !report.contains("hunter2") && !report.contains("HOME")
        );
    }
}
