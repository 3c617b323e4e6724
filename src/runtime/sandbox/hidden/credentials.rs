//! keel's own list of credential stores: the common tools' logins, keys and tokens under the home
//! folder, and the variables of keel's environment that move them elsewhere — each with what it
//! holds, in the words `keel sandbox` and a refusal use.

use super::Kind;

/// A credential store under the home folder.
pub(super) struct Credential {
    /// Its path relative to the home folder.
    pub path: &'static str,
    pub kind: Kind,
    /// What it holds, in a few words.
    pub holds: &'static str,
}

const fn folder(path: &'static str, holds: &'static str) -> Credential {
    Credential { path, kind: Kind::Folder, holds }
}

const fn file(path: &'static str, holds: &'static str) -> Credential {
    Credential { path, kind: Kind::File, holds }
}

/// The credential stores hidden by default, relative to the home folder.
pub(super) const CREDENTIALS: [Credential; 25] = [
    folder(".ssh", "ssh keys"),
    folder(".gnupg", "GnuPG keys"),
    folder(".password-store", "pass's passwords"),
    folder(".aws", "AWS credentials"),
    folder(".azure", "Azure CLI tokens"),
    folder(".config/gcloud", "Google Cloud credentials"),
    folder(".kube", "Kubernetes credentials"),
    file(".docker/config.json", "Docker registry logins"),
    file(".netrc", "logins that curl, git and others send"),
    file(".git-credentials", "git's stored logins"),
    folder(".config/gh", "the GitHub CLI's token"),
    file(".config/hub", "hub's GitHub token"),
    folder(".config/github-copilot", "GitHub Copilot's token"),
    file(".npmrc", "npm registry tokens"),
    file(".pypirc", "PyPI upload tokens"),
    file(".cargo/credentials.toml", "the crates.io token"),
    file(".cargo/credentials", "the crates.io token"),
    file(".gem/credentials", "the RubyGems API key"),
    file(".pgpass", "PostgreSQL passwords"),
    file(".my.cnf", "a MySQL password"),
    file(".vault-token", "a Vault token"),
    file(".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"),
    file(".claude/.credentials.json", "Claude Code's login"),
    file(".codex/auth.json", "Codex's login"),
    file(".gemini/oauth_creds.json", "Gemini CLI's login"),
];

/// A variable of keel's environment that moves a credential store elsewhere.
pub(super) struct Moved {
    pub variable: &'static str,
    /// The store below the folder it names; empty: the path it names is the store.
    pub below: &'static str,
    pub kind: Kind,
    pub holds: &'static str,
}

const fn moved(
    variable: &'static str,
    below: &'static str,
    kind: Kind,
    holds: &'static str,
) -> Moved {
    Moved { variable, below, kind, holds }
}

/// Where the tools' own variables move their stores: hidden there too. `KUBECONFIG` is a list.
pub(super) const MOVED_BY: [Moved; 15] = [
    moved("GNUPGHOME", "", Kind::Folder, "GnuPG keys"),
    moved("PASSWORD_STORE_DIR", "", Kind::Folder, "pass's passwords"),
    moved("AWS_SHARED_CREDENTIALS_FILE", "", Kind::File, "AWS credentials"),
    moved("AZURE_CONFIG_DIR", "", Kind::Folder, "Azure CLI tokens"),
    moved("CLOUDSDK_CONFIG", "", Kind::Folder, "Google Cloud credentials"),
    moved("KUBECONFIG", "", Kind::File, "Kubernetes credentials"),
    moved("DOCKER_CONFIG", "config.json", Kind::File, "Docker registry logins"),
    moved("GH_CONFIG_DIR", "", Kind::Folder, "the GitHub CLI's token"),
    moved("XDG_CONFIG_HOME", "gh", Kind::Folder, "the GitHub CLI's token"),
    moved("XDG_CONFIG_HOME", "hub", Kind::File, "hub's GitHub token"),
    moved("NPM_CONFIG_USERCONFIG", "", Kind::File, "npm registry tokens"),
    moved("CARGO_HOME", "credentials.toml", Kind::File, "the crates.io token"),
    moved("CARGO_HOME", "credentials", Kind::File, "the crates.io token"),
    moved("CODEX_HOME", "auth.json", Kind::File, "Codex's login"),
    moved("CLAUDE_CONFIG_DIR", ".credentials.json", Kind::File, "Claude Code's login"),
];

#[cfg(test)]
mod tests {
    use super::super::testing::{env_of, list, shown_list};
    use super::super::{Hidden, Sources};
    use crate::runtime::testing::{folder, folders};
    use std::path::Path;

    #[test]
    fn keels_folders_and_every_credential_store_are_hidden_whether_they_exist_or_not() {
        let (_home, h) = folder();
        folders(&h, &[".ssh"]);
        let work = tempfile::tempdir().unwrap();
        let hidden = list(&h, work.path(), &[], &[]);
        let shown = shown_list(&hidden);
        for expected in [
            "~/.config/keel",
            "~/.local/state/keel",
            "~/.ssh",
            "~/.aws",
            "~/.azure",
            "~/.config/gcloud",
            "~/.kube",
            "~/.docker/config.json",
            "~/.netrc",
            "~/.git-credentials",
            "~/.config/gh",
            "~/.npmrc",
            "~/.pypirc",
            "~/.gnupg",
            "~/.password-store",
            "~/.claude/.credentials.json",
            "~/.codex/auth.json",
            "~/.config/hub",
            "~/.cargo/credentials.toml",
            "~/.cargo/credentials",
        ] {
            assert!(shown.contains(&expected), "{expected} missing from {shown:?}");
        }
        let ssh = hidden.holding(&h.join(".ssh/id_ed25519")).unwrap();
        assert_eq!(ssh.reason(), "~/.ssh holds ssh keys");
        assert_eq!(hidden.holding(&h.join(".SSH/id_ed25519")), Some(ssh), "case aside");
        assert!(hidden.holding(&h.join(".sshd")).is_none());
        assert!(hidden.holding(&h.join("project/.ssh")).is_none());
        assert!(hidden.files().contains(&h.join(".netrc")));
        assert!(!hidden.files().contains(&h.join(".ssh")));
    }

    #[test]
    fn variables_that_move_a_store_hide_it_where_they_point() {
        let (_home, h) = folder();
        let env = env_of(vec![
            ("HOME", h.display().to_string()),
            ("GNUPGHOME", "/srv/gpg".to_owned()),
            ("KUBECONFIG", "/srv/kube/a:/srv/kube/b:relative".to_owned()),
            ("CARGO_HOME", "/opt/cargo".to_owned()),
            // Names the home folder: not a store of its own.
            ("CLOUDSDK_CONFIG", h.display().to_string()),
        ]);
        let sources = Sources {
            env: &env,
            workspace: Path::new("/nowhere"),
            hidden_paths: &[],
            readable_paths: &[],
        };
        let hidden = Hidden::new(&sources).unwrap();
        for path in ["/srv/gpg/x", "/srv/kube/a", "/srv/kube/b", "/opt/cargo/credentials.toml"] {
            assert!(hidden.holding(Path::new(path)).is_some(), "{path}");
        }
        assert!(hidden.holding(&h.join("src")).is_none());
        assert!(hidden.holding(Path::new("/opt/cargo/registry")).is_none());
    }
}
