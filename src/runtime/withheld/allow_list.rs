//! The variables of keel's environment that commands, MCP servers and confined hooks get: what
//! a build, a test runner and git need to find their programs, files, locale and toolchains,
//! and nothing that carries a credential by design.
//!
//! Left out on purpose, for the person's `pass_env` to let through when they need them: agents'
//! sockets (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`, `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`,
//! `DISPLAY`), which hand over a credential without showing it; package indexes and registries
//! (`PIP_INDEX_URL`, `GOPROXY`, `NPM_CONFIG_*`, `CARGO_REGISTRIES_*`, `BUNDLE_*`,
//! `GIT_CONFIG_*`), whose settings are where their credentials go; options strings that take
//! passwords (`MAVEN_OPTS`, `GRADLE_OPTS`, `JAVA_TOOL_OPTIONS`); and everything a CI runner or a
//! cloud sets for itself. docs/sandbox.md lists the table with its reasons; a test keeps the two
//! the same.

/// The allow-list, by what needs it. A name ending in `*` stands for every name it starts.
pub const ALLOW_LIST: [(&str, &[&str]); 14] = [
    ("the system", &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ"]),
    ("the locale", &["LANG", "LANGUAGE", "LC_*"]),
    ("the terminal's kind and colours", &["TERM", "COLORTERM", "NO_COLOR"]),
    (
        "where programs keep their files",
        &["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"],
    ),
    (
        "the network's proxies (a value with a password is withheld)",
        &[
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "NO_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
            "no_proxy",
        ],
    ),
    (
        "certificates to trust",
        &[
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
            "NODE_EXTRA_CA_CERTS",
        ],
    ),
    (
        "C and C++",
        &[
            "CC",
            "CXX",
            "CPP",
            "AR",
            "LD",
            "CFLAGS",
            "CXXFLAGS",
            "CPPFLAGS",
            "LDFLAGS",
            "CPATH",
            "C_INCLUDE_PATH",
            "CPLUS_INCLUDE_PATH",
            "LIBRARY_PATH",
            "LD_LIBRARY_PATH",
            "PKG_CONFIG_PATH",
            "CMAKE_PREFIX_PATH",
            "MAKEFLAGS",
            "CCACHE_DIR",
        ],
    ),
    (
        "Rust",
        &[
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
            "RUSTFLAGS",
            "RUSTDOCFLAGS",
            "RUSTC_WRAPPER",
            "RUST_BACKTRACE",
        ],
    ),
    (
        "Go",
        &[
            "GOPATH",
            "GOROOT",
            "GOBIN",
            "GOCACHE",
            "GOMODCACHE",
            "GOFLAGS",
            "GOTOOLCHAIN",
            "GO111MODULE",
            "CGO_ENABLED",
        ],
    ),
    (
        "Python",
        &[
            "VIRTUAL_ENV",
            "CONDA_PREFIX",
            "CONDA_DEFAULT_ENV",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYENV_ROOT",
        ],
    ),
    (
        "JavaScript",
        &["NODE_PATH", "NODE_OPTIONS", "NVM_DIR", "PNPM_HOME", "VOLTA_HOME", "BUN_INSTALL"],
    ),
    (
        "Java, Ruby and .NET",
        &["JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_HOME", "GEM_HOME", "GEM_PATH", "DOTNET_ROOT"],
    ),
    (
        "git's author and committer",
        &["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"],
    ),
    ("test runners that behave differently in CI", &["CI"]),
];

/// Whether `name` is on the allow-list (exactly, as names are: `path` is not `PATH`).
pub fn allows(name: &str) -> bool {
    ALLOW_LIST.iter().flat_map(|(_, names)| names.iter()).any(|entry| {
        match entry.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix) && name.len() > prefix.len(),
            None => *entry == name,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_a_build_needs_are_allowed_and_others_are_not() {
        for name in ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "CARGO_HOME", "CC"] {
            assert!(allows(name), "{name}");
        }
        for name in [
            "path",
            "LC_",
            "GITHUB_TOKEN",
            "DATABASE_URL",
            "SSH_AUTH_SOCK",
            "NPM_CONFIG__AUTH",
            "CARGO_REGISTRY_TOKEN",
            "PIP_INDEX_URL",
            "LD_PRELOAD",
            "PATHX",
        ] {
            assert!(!allows(name), "{name}");
        }
    }

    #[test]
    fn no_allowed_name_is_a_secrets_by_its_words() {
        for name in ALLOW_LIST.iter().flat_map(|(_, names)| names.iter()) {
            for part in name.to_ascii_uppercase().split('_') {
                for word in ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "JWT"] {
                    assert!(!part.contains(word), "{name} holds {word}");
                }
                assert!(!["AUTH", "PWD", "PASS", "DSN"].contains(&part), "{name} is {part}");
            }
        }
    }

    #[test]
    fn docs_sandbox_lists_every_allowed_name() {
        let docs = include_str!("../../../docs/sandbox.md");
        for name in ALLOW_LIST.iter().flat_map(|(_, names)| names.iter()) {
            assert!(docs.contains(&format!("`{name}`")), "docs/sandbox.md does not name {name}");
        }
    }
}
