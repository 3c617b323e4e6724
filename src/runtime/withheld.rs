//! Which variables of keel's environment its commands, MCP servers and confined hooks get: only
//! those on an allow-list, and those the person's own config lets through.
//!
//! The model reads whatever a command prints, so a secret in a command's environment is a secret
//! the model can print (`env`) and send wherever a command can reach; an MCP server is someone
//! else's program. Secrets cannot be listed by name (`DATABASE_URL=postgres://u:pass@…`,
//! `MYSQL_PWD`, `SENTRY_DSN`), so keel hands on only the names a build needs ([`allow_list`]):
//!
//! - a variable not on the allow-list is withheld, unless the person's own config names it in
//!   `pass_env` (a workspace's config cannot);
//! - a variable on it whose value looks like a secret ([`shape`]: a URL with a password, a JWT, a
//!   token with a known prefix, a private key) is withheld too, unless `pass_env` names it;
//! - a variable the config names as an MCP server's token (`bearer_token_env_var`) is withheld
//!   unless `pass_env` names it;
//! - the provider keys (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`), keel's own settings (`KEEL_*`)
//!   and any variable whose value holds the provider key keel uses (from the environment or the
//!   person's config file) are withheld always, `pass_env` or not.
//!
//! An MCP server's own `env_vars` still hands it the variables named there. The rule is set once,
//! from the person's config, as keel starts ([`set`]); `keel sandbox` and `/sandbox` list every
//! variable withheld and why ([`report`]), never a value. The person's own hooks that run as the
//! person get their whole environment less only what no program keel starts gets ([`is_keels`]).

pub mod allow_list;
pub mod shape;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::sync::OnceLock;

pub use shape::Shape;

/// The prefix of keel's own variables.
const KEEL_PREFIX: &str = "KEEL_";
/// The provider keys' variables.
const PROVIDER_KEYS: [&str; 2] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];
/// The shortest provider key looked for in other variables' values: a real key is far longer,
/// and a short placeholder (`unused`, `x`) would match half the environment.
const MIN_KEY_CHARS: usize = 16;

/// Why a variable is withheld.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    ProviderKey,
    Keel,
    HoldsProviderKey,
    /// Its name is not on the allow-list.
    NotAllowed,
    /// Its name is on the allow-list, but its value looks like this secret.
    LooksSecret(Shape),
    /// It holds the token of this MCP server.
    McpToken(String),
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ProviderKey => write!(f, "a provider key"),
            Self::Keel => write!(f, "one of keel's own settings"),
            Self::HoldsProviderKey => write!(f, "its value holds the provider key"),
            Self::NotAllowed => write!(f, "not on the allow-list"),
            Self::LooksSecret(shape) => write!(f, "its value looks like a secret: {shape}"),
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
        // A name that is not Unicode is on no list: it is withheld, and pass_env cannot name it.
        let Some(name) = name.to_str() else {
            return Some(Why::NotAllowed);
        };
        if self.pass.contains(name) {
            return None;
        }
        if let Some(server) = self.tokens.get(name) {
            return Some(Why::McpToken(server.clone()));
        }
        if !allow_list::allows(name) {
            return Some(Why::NotAllowed);
        }
        shape::shape(value.as_encoded_bytes()).map(Why::LooksSecret)
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

    /// The variables of `vars` handed on, in their order.
    pub fn handed_on<N, V>(&self, vars: impl IntoIterator<Item = (N, V)>) -> Vec<(N, V)>
    where
        N: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        vars.into_iter()
            .filter(|(name, value)| self.why(name.as_ref(), value.as_ref()).is_none())
            .collect()
    }

    /// The names of `vars` the rule would withhold but `pass_env` lets through; sorted.
    pub fn let_through<N, V>(&self, vars: impl IntoIterator<Item = (N, V)>) -> Vec<String>
    where
        N: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let unpassed = Self { pass: BTreeSet::new(), ..self.clone() };
        let mut out: Vec<String> = vars
            .into_iter()
            .filter(|(name, value)| {
                let (name, value) = (name.as_ref(), value.as_ref());
                self.why(name, value).is_none() && unpassed.why(name, value).is_some()
            })
            .map(|(name, _)| name.as_ref().to_string_lossy().into_owned())
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

/// Gives `cmd` only the variables of keel's environment the rule hands on: every other one is
/// cleared, so set the command's own variables after this.
pub fn hand_on(cmd: &mut tokio::process::Command) {
    cmd.env_clear();
    cmd.envs(rule().handed_on(std::env::vars_os()));
}

/// What `keel sandbox` says of the environment: every variable withheld and why, what is handed
/// on, what `pass_env` let through — names only, never a value.
pub fn report(rule: &Withholding, vars: &[(OsString, OsString)]) -> String {
    let pairs = || vars.iter().map(|(name, value)| (name, value));
    let withheld = rule.withheld(pairs());
    let mut out = String::from("Withheld from commands and MCP servers (names only):\n");
    if withheld.is_empty() {
        out.push_str("  nothing\n");
    }
    let width = withheld.iter().map(|(name, _)| name.chars().count()).max().unwrap_or(0);
    for (name, why) in &withheld {
        let name = crate::visible::visible(name);
        out.push_str(&format!("  {name:<width$}  {why}\n"));
    }
    let mut handed: Vec<String> = rule
        .handed_on(pairs())
        .into_iter()
        .map(|(name, _)| crate::visible::visible(&name.to_string_lossy()).into_owned())
        .collect();
    handed.sort();
    let handed = if handed.is_empty() { "nothing".to_owned() } else { handed.join(", ") };
    out.push_str(&format!("Handed on: {handed}\n"));
    let passed = rule.let_through(pairs());
    if !passed.is_empty() {
        let passed: Vec<_> = passed.iter().map(|name| crate::visible::visible(name)).collect();
        out.push_str(&format!("Let through by pass_env in your config: {}\n", passed.join(", ")));
    }
    out.push_str(
        "The rule: commands, MCP servers and confined hooks get only the variables on keel's \
         allow-list (what a build needs: PATH, HOME, the locale, TERM, TZ, TMPDIR, proxies, the \
         toolchains' roots and flags; docs/sandbox.md lists them) and those `pass_env` in your \
         own config names. A value on the allow-list that looks like a secret (a URL with a \
         password, a JWT, a token with a known prefix, a private key) is withheld unless \
         `pass_env` names it. A provider key, a KEEL_* setting and the provider key's value are \
         never handed on. A workspace's .keel/config.toml cannot set pass_env. An MCP server's \
         env_vars hands it the variables named there.",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GITHUB: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";

    fn why(rule: &Withholding, name: &str, value: &str) -> Option<Why> {
        rule.why(OsStr::new(name), OsStr::new(value))
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(name, value)| ((*name).into(), (*value).into())).collect()
    }

    #[test]
    fn only_allowed_names_are_handed_on() {
        let rule = Withholding::default();
        for (name, value) in [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/x"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "en_US.UTF-8"),
            ("CARGO_HOME", "/home/x/.cargo"),
            ("https_proxy", "https://proxy:3128"),
        ] {
            assert_eq!(why(&rule, name, value), None, "{name}");
        }
        for name in [
            "GITHUB_TOKEN",
            "DATABASE_URL",
            "MYSQL_PWD",
            "GITHUB_PAT",
            "NPM_CONFIG__AUTH",
            "SENTRY_DSN",
            "CI_JOB_JWT",
            "SSH_AUTH_SOCK",
            "PLAIN_SETTING",
        ] {
            assert_eq!(why(&rule, name, "x"), Some(Why::NotAllowed), "{name}");
        }
        assert_eq!(why(&rule, "ANTHROPIC_API_KEY", "x"), Some(Why::ProviderKey));
        assert_eq!(why(&rule, "KEEL_MODEL", "x"), Some(Why::Keel));
    }

    #[test]
    fn an_allowed_name_holding_a_secret_is_withheld() {
        let rule = Withholding::default();
        let proxy = why(&rule, "HTTPS_PROXY", "http://user:pw@proxy:3128");
        assert_eq!(proxy, Some(Why::LooksSecret(Shape::UrlWithPassword)));
        let flags = why(&rule, "CFLAGS", &format!("-O2 -DTOKEN={GITHUB}"));
        assert_eq!(flags, Some(Why::LooksSecret(Shape::Token("ghp_"))));
        assert_eq!(
            why(&rule, "CFLAGS", "-O2").map(|why| why.to_string()),
            None,
            "an ordinary value passes"
        );
        assert_eq!(
            flags.map(|why| why.to_string()).as_deref(),
            Some("its value looks like a secret: a token (ghp_…)")
        );
    }

    #[test]
    fn the_persons_config_lets_names_and_values_through_but_never_keys() {
        let pass = ["GITHUB_PAT", "CFLAGS", "OPENAI_API_KEY", "KEEL_MODEL", "DOCS_TOKEN"]
            .map(str::to_owned);
        let tokens = [("DOCS_TOKEN".to_owned(), "docs".to_owned()), ("MCP_T".into(), "m".into())];
        let key = "sk-ant-0123456789abcdef";
        let rule = Withholding::new(pass, tokens, Some(key));
        assert_eq!(why(&rule, "GITHUB_PAT", GITHUB), None, "a name, and its secret value");
        assert_eq!(why(&rule, "CFLAGS", &format!("-DTOKEN={GITHUB}")), None);
        assert_eq!(why(&rule, "OPENAI_API_KEY", "x"), Some(Why::ProviderKey));
        assert_eq!(why(&rule, "KEEL_MODEL", "x"), Some(Why::Keel));
        assert_eq!(why(&rule, "DOCS_TOKEN", "x"), None, "pass_env wins over the token");
        assert_eq!(why(&rule, "MCP_T", "x"), Some(Why::McpToken("m".into())));
        assert_eq!(why(&rule, "LLM", &format!("Bearer {key}")), Some(Why::HoldsProviderKey));
        assert_eq!(
            why(&rule, "GITHUB_PAT", key),
            Some(Why::HoldsProviderKey),
            "the key's value is never let through"
        );
        // A short placeholder key is not looked for in values.
        let placeholder = Withholding::new([], [], Some("k"));
        assert_eq!(why(&placeholder, "PATH", "/work/bin"), None);
    }

    #[test]
    fn the_report_names_what_is_withheld_and_why_never_values() {
        let rule = Withholding::new(["DB_PASSWORD".to_owned()], [], None);
        let vars = vars(&[
            ("GITHUB_TOKEN", "ghp-x"),
            ("DB_PASSWORD", "hunter2"),
            ("HOME", "/h"),
            ("TZ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"),
            ("KEEL_MODEL", "m"),
        ]);
        let report = report(&rule, &vars);
        for line in [
            "  GITHUB_TOKEN  not on the allow-list\n",
            "  KEEL_MODEL    one of keel's own settings\n",
            "  TZ            its value looks like a secret: a JWT\n",
            "Handed on: DB_PASSWORD, HOME\n",
            "Let through by pass_env in your config: DB_PASSWORD\n",
        ] {
            assert!(report.contains(line), "{line:?}:\n{report}");
        }
        for value in ["ghp-x", "hunter2", "/h", "eyJ"] {
            assert!(!report.contains(value), "{value}:\n{report}");
        }
    }

    #[test]
    fn a_name_that_is_not_unicode_is_withheld() {
        use std::os::unix::ffi::OsStrExt;
        let name = OsStr::from_bytes(b"PATH\xff");
        assert_eq!(Withholding::default().why(name, OsStr::new("x")), Some(Why::NotAllowed));
    }
}
