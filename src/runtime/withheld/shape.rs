//! Which values are secrets whatever their name: a URL that carries credentials, a JWT, a token
//! with a known prefix, a private key.
//!
//! A variable on the allow-list can still hold a secret the person put there (`CFLAGS` with a
//! `-DTOKEN=ghp_…`, a proxy with its password), so [`shape`] looks at the value too. Each shape
//! is anchored on something a secret carries by design — `user:password@` in a URL, `eyJ` at
//! the head of a JWT, a vendor's prefix followed by as many random characters as its tokens
//! have — and must start a word (at the start, or after a character that is not a letter, a
//! digit or `_`), so that paths, locales and flags (`/home/x/.cargo`, `C.UTF-8`, `-O2`,
//! `https://proxy:3128`, `ssh://git@host/repo`) are not taken for secrets. A variable withheld
//! by mistake is named in `keel sandbox`, and the person's `pass_env` lets it through.

use regex::bytes::Regex;
use std::fmt;
use std::sync::LazyLock;

/// What a value looks like, when it looks like a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `scheme://user:password@host`, or `user:password@host` with no scheme (a proxy).
    UrlWithPassword,
    /// `http(s)://name@host`: the name is the token (`https://TOKEN@github.com`, a Sentry DSN).
    UrlWithUser,
    /// A JSON Web Token: three base64url parts, the first a JSON object (`eyJ…`).
    Jwt,
    /// A PEM private key.
    PrivateKey,
    /// A token with this vendor's prefix.
    Token(&'static str),
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UrlWithPassword => write!(f, "a URL with a password"),
            Self::UrlWithUser => write!(f, "an http(s) URL with a user name (a token, often)"),
            Self::Jwt => write!(f, "a JWT"),
            Self::PrivateKey => write!(f, "a private key"),
            Self::Token(prefix) => write!(f, "a token ({prefix}…)"),
        }
    }
}

/// Where a shape may start: the value's start, or after a character that cannot be part of a
/// token (so `task-sk-…` is no `sk-` token, but `--key=sk-…` and `Bearer sk-…` are).
const WORD_START: &str = r"(?:^|[^A-Za-z0-9_])";

/// The shapes other than tokens, as patterns that follow [`WORD_START`].
const SHAPES: [(Shape, &str); 5] = [
    // A password, however short: a scheme, an optional user, `:`, the password, `@`.
    (Shape::UrlWithPassword, r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:[^/?#@\s]+@"),
    // The same without a scheme, as proxies are often written; the user name starts the word,
    // so `git@host:org/repo` and a `PATH` entry are not taken for it.
    (Shape::UrlWithPassword, r"[A-Za-z0-9._%+~-]+:[^\s/?#@,;:]+@[A-Za-z0-9.-]"),
    // Only http(s): `postgres://postgres@localhost` and `ssh://git@host` name a user, no secret.
    (Shape::UrlWithUser, r"(?i:https?)://[^/?#@\s:]+@"),
    (Shape::Jwt, r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"),
    (Shape::PrivateKey, r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
];

/// Vendors' tokens: the prefix as the report names it, and the pattern (prefix and body) that
/// follows [`WORD_START`]. Each body asks for fewer characters than the vendor's tokens have,
/// and more than a word or a path's part is likely to: a body shorter than that is no token.
/// More specific prefixes come first, so that the report names them (`sk-ant-` before `sk-`).
const TOKENS: [(&str, &str); 25] = [
    ("ghp_", r"ghp_[A-Za-z0-9]{30,}"),
    ("gho_", r"gho_[A-Za-z0-9]{30,}"),
    ("ghu_", r"ghu_[A-Za-z0-9]{30,}"),
    ("ghs_", r"ghs_[A-Za-z0-9]{30,}"),
    ("ghr_", r"ghr_[A-Za-z0-9]{30,}"),
    ("github_pat_", r"github_pat_[A-Za-z0-9_]{30,}"),
    ("glpat-", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("gldt-", r"gldt-[A-Za-z0-9_-]{20,}"),
    ("glrt-", r"glrt-[A-Za-z0-9_-]{20,}"),
    ("glptt-", r"glptt-[A-Za-z0-9_-]{20,}"),
    ("xox?-", r"xox[abeoprs]-[0-9]+-[A-Za-z0-9-]{8,}"),
    // An AWS access key id is exactly 20 characters.
    ("AKIA", r"AKIA[A-Z0-9]{16}(?:[^A-Za-z0-9]|$)"),
    ("ASIA", r"ASIA[A-Z0-9]{16}(?:[^A-Za-z0-9]|$)"),
    ("sk-ant-", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    // `sk-` alone is a common start of a word (`sk-tools`): the body must hold a digit.
    ("sk-", r"sk-[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*"),
    ("sk_live_", r"sk_live_[A-Za-z0-9]{20,}"),
    ("sk_test_", r"sk_test_[A-Za-z0-9]{20,}"),
    ("rk_live_", r"rk_live_[A-Za-z0-9]{20,}"),
    ("rk_test_", r"rk_test_[A-Za-z0-9]{20,}"),
    ("npm_", r"npm_[A-Za-z0-9]{30,}"),
    ("pypi-", r"pypi-[A-Za-z0-9_-]{50,}"),
    ("AIza", r"AIza[A-Za-z0-9_-]{35}"),
    ("hf_", r"hf_[A-Za-z]{30,}"),
    ("dop_v1_", r"dop_v1_[a-f0-9]{64}"),
    ("shpat_", r"shpat_[a-fA-F0-9]{32}"),
];

/// The shortest body an `sk-` token is taken for (OpenAI's and others' keys are far longer).
const SK_MIN_BODY: usize = 20;

/// Every shape, compiled once; a pattern that did not compile is left out (a test compiles
/// them all).
static COMPILED: LazyLock<Vec<(Shape, Regex)>> = LazyLock::new(|| {
    SHAPES
        .iter()
        .copied()
        .chain(TOKENS.iter().map(|(prefix, pattern)| (Shape::Token(prefix), *pattern)))
        .filter_map(|(shape, pattern)| {
            Some((shape, Regex::new(&format!("{WORD_START}(?:{pattern})")).ok()?))
        })
        .collect()
});

/// What every shape holds somewhere: a URL's credentials their `@`, a JWT its `eyJ`, a key its
/// `-----BEGIN`, a token its prefix (`xox?-` as `xox`). A value with none of them is no secret,
/// and is passed without compiling a pattern: most environments never compile one.
fn might_hold(value: &[u8]) -> bool {
    const MARKS: [&[u8]; 4] = [b"@", b"eyJ", b"-----BEGIN", b"xox"];
    let has = |mark: &[u8]| !mark.is_empty() && value.windows(mark.len()).any(|w| w == mark);
    MARKS.iter().any(|mark| has(mark))
        || TOKENS.iter().any(|(prefix, _)| !prefix.contains('?') && has(prefix.as_bytes()))
}

/// The shape of a secret `value` holds anywhere in it, if any; the first found in the order
/// above.
pub fn shape(value: &[u8]) -> Option<Shape> {
    if !might_hold(value) {
        return None;
    }
    COMPILED.iter().find_map(|(shape, regex)| {
        let found = match shape {
            Shape::Token("sk-") => regex.find_iter(value).any(|hit| sk_body(hit.as_bytes())),
            _ => regex.is_match(value),
        };
        found.then_some(*shape)
    })
}

/// Whether an `sk-` match is long enough to be a key: its body, after `sk-`, of at least
/// [`SK_MIN_BODY`] characters.
fn sk_body(hit: &[u8]) -> bool {
    hit.windows(3)
        .position(|window| window == b"sk-")
        .is_some_and(|at| hit.len() - at - 3 >= SK_MIN_BODY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(value: &str) -> Option<Shape> {
        shape(value.as_bytes())
    }

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(COMPILED.len(), SHAPES.len() + TOKENS.len());
    }

    #[test]
    fn urls_with_credentials_are_secrets() {
        for value in [
            "postgres://u:pass@db/x",
            "mysql://root:hunter2@127.0.0.1:3306/app",
            "http://user:pw@proxy:3128",
            "https://:token@host/x",
            "redis://default:s3cret@cache:6379",
            "user:pw@proxy.corp:8080",
            "-x http://a:b@proxy:1",
            "https://one.example, http://user:pw@two.example",
        ] {
            assert_eq!(of(value), Some(Shape::UrlWithPassword), "{value}");
        }
        for value in [
            "https://key@o1.ingest.sentry.io/1",
            "https://ghx_not_a_known_token@github.com/org/repo.git",
            "HTTP://user@proxy:3128",
        ] {
            assert_eq!(of(value), Some(Shape::UrlWithUser), "{value}");
        }
    }

    #[test]
    fn a_jwt_and_a_private_key_are_secrets() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(of(jwt), Some(Shape::Jwt));
        assert_eq!(of(&format!("Bearer {jwt}")), Some(Shape::Jwt));
        assert_eq!(of("eyJhbGciOiJub25lIn0.eyJzdWIiOiJjaSJ9."), Some(Shape::Jwt), "unsigned");
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n";
        assert_eq!(of(key), Some(Shape::PrivateKey));
        assert_eq!(of("-----BEGIN RSA PRIVATE KEY-----"), Some(Shape::PrivateKey));
    }

    #[test]
    fn each_known_prefix_is_a_token() {
        let alnum = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0";
        for (value, prefix) in [
            (format!("ghp_{alnum}"), "ghp_"),
            (format!("gho_{alnum}"), "gho_"),
            (format!("ghu_{alnum}"), "ghu_"),
            (format!("ghs_{alnum}"), "ghs_"),
            (format!("github_pat_11ABCDEFG0_{alnum}"), "github_pat_"),
            ("glpat-xYz12AbCdEfGhIjKlMnO".to_owned(), "glpat-"),
            ("xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOp".to_owned(), "xox?-"),
            ("xoxp-1234567890-12345678-AbCdEfGh".to_owned(), "xox?-"),
            ("AKIAIOSFODNN7EXAMPLE".to_owned(), "AKIA"),
            ("ASIAIOSFODNN7EXAMPLE".to_owned(), "ASIA"),
            (format!("sk-{alnum}"), "sk-"),
            (format!("sk-proj-{alnum}"), "sk-"),
            (format!("sk-ant-api03-{alnum}"), "sk-ant-"),
            (format!("sk_live_{alnum}"), "sk_live_"),
            (format!("npm_{alnum}"), "npm_"),
            (format!("pypi-AgEIcHlwaS5vcmc{alnum}"), "pypi-"),
            ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q".to_owned(), "AIza"),
            ("hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh".to_owned(), "hf_"),
        ] {
            assert_eq!(of(&value), Some(Shape::Token(prefix)), "{value}");
        }
        // Inside flags, after `=`, a space or a slash.
        for value in [
            format!("-O2 -DTOKEN=ghp_{alnum}"),
            format!("--header Authorization:glpat-{alnum}"),
            "aws AKIAIOSFODNN7EXAMPLE x".to_owned(),
        ] {
            assert!(of(&value).is_some(), "{value}");
        }
    }

    #[test]
    fn every_shape_holds_a_mark_the_quick_look_finds() {
        let alnum = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0";
        for value in [
            "postgres://u:pass@db/x".to_owned(),
            "eyJhbGciOiJub25lIn0.eyJzdWIiOiJjaSJ9.".to_owned(),
            "-----BEGIN RSA PRIVATE KEY-----".to_owned(),
            "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOp".to_owned(),
            format!("dop_v1_{}", "a".repeat(64)),
            format!("sk-{alnum}"),
        ] {
            assert!(might_hold(value.as_bytes()), "{value}");
        }
        assert!(!might_hold(b"/usr/local/bin:/usr/bin"));
    }

    #[test]
    fn ordinary_values_are_not_secrets() {
        for value in [
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "/home/x/.cargo/bin:/home/x/.local/bin:/opt/sk-tools/bin",
            "/home/x/.cargo",
            "C.UTF-8",
            "en_US.UTF-8",
            "de_DE.UTF-8@euro",
            "xterm-256color",
            "truecolor",
            "Europe/Berlin",
            "https://proxy:3128",
            "http://proxy.corp.example:8080/",
            "localhost,127.0.0.1,.corp.example",
            "ssh://git@github.com/org/repo.git",
            "git@github.com:org/repo.git",
            "postgres://postgres@localhost/app",
            "-O2 -g -pipe -fstack-protector-strong",
            "--cfg tokio_unstable -C target-cpu=native",
            "/usr/lib/jvm/java-17-openjdk-amd64",
            "/opt/conda/envs/task-sk-learn",
            "/home/x/sk-learn-environment/bin",
            "AKIAIOSFODNN7EXAMPLEAND-MORE",
            "gcc",
            "ghp_short",
            "npm_config_cache",
            "eyJustAWord",
            "/home/x/.local/share/pnpm",
            "1.75.0-x86_64-unknown-linux-gnu",
            "-j8 --no-print-directory",
        ] {
            assert_eq!(of(value), None, "{value}");
        }
    }
}
