//! The paths no command and no tool of the model's may read: keel's own config and state folders,
//! and the person's credentials — made once, as keel starts, into one list ([`Hidden`]).
//!
//! A command can print whatever it can read, to the model, and the file and search tools read
//! for the model directly; in the home folder (`keel` run in `~`) `cat ~/.config/keel/config.toml`
//! or `read_file .ssh/id_ed25519` would hand over the provider's `api_key` or a private key. So
//! these paths are hidden wherever the workspace is: inside the sandbox each hidden folder is an
//! empty read-only folder and each hidden file an empty read-only file (`bwrap.rs`, through
//! [`super::KeelFolders::hidden`]); `read_file`, `write_file`, `edit_file`, `grep`, `glob` and
//! `@path` refuse them, naming why and how to allow one (`Workspace::resolve`), and searches pass
//! over them.
//!
//! The list ([`CREDENTIALS`], [`MOVED_BY`]) holds the stores of the common tools' logins, keys and
//! tokens under the home folder, and where their own variables move them. The person's own config
//! adds to it (`hidden_paths`) or lets one of keel's list through (`readable_paths`); a
//! workspace's `.keel/config.toml` may do neither (`config::trust`). What the person hides stays
//! hidden even inside a path they let through, so `readable_paths = ["~/.ssh"]` with
//! `hidden_paths = ["~/.ssh/id_ed25519"]` shows the folder but not the key. keel's config and
//! state folders, hidden or let through, stay read-only to commands (`keel_folders`).
//!
//! Every path is taken as the kernel reaches it — its existing part with symlinks followed — so a
//! symlink into a hidden path is hidden too, and compared regardless of ASCII case (a `.SSH` on a
//! case-insensitive file system is `.ssh`). A path that holds the workspace is not hidden: the
//! person chose to work there, and hiding it would hide the workspace; `keel sandbox` says so.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Whether a path is a folder or a file: a missing folder is covered where commands write, so
/// that none makes it; a missing file is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Folder,
    File,
}

/// A credential store under the home folder.
struct Credential {
    /// Its path relative to the home folder.
    path: &'static str,
    kind: Kind,
    /// What it holds, in a few words.
    holds: &'static str,
}

const fn folder(path: &'static str, holds: &'static str) -> Credential {
    Credential { path, kind: Kind::Folder, holds }
}

const fn file(path: &'static str, holds: &'static str) -> Credential {
    Credential { path, kind: Kind::File, holds }
}

/// The credential stores hidden by default, relative to the home folder.
const CREDENTIALS: [Credential; 25] = [
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
struct Moved {
    variable: &'static str,
    /// The store below the folder it names; empty: the path it names is the store.
    below: &'static str,
    kind: Kind,
    holds: &'static str,
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
const MOVED_BY: [Moved; 15] = [
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

/// Why a path is hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// keel's config folder: its config file may hold the provider's `api_key`.
    KeelConfig,
    /// keel's state folder: sessions (every prompt and answer), undo's snapshots.
    KeelState,
    /// A credential store, holding this.
    Credentials(&'static str),
    /// The person's own `hidden_paths` names it.
    Person,
}

/// One hidden path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The path as the kernel reaches it (its existing part's symlinks followed).
    pub path: PathBuf,
    /// The path as the person knows it: `~/.ssh`.
    pub shown: String,
    pub kind: Kind,
    pub why: Why,
}

impl Entry {
    /// Why it is hidden, in a sentence's words: `~/.ssh holds ssh keys`.
    pub fn reason(&self) -> String {
        let shown = &self.shown;
        match &self.why {
            Why::KeelConfig => {
                format!(
                    "{shown} is keel's config folder, whose file may hold the provider's api_key"
                )
            }
            Why::KeelState => {
                format!("{shown} is keel's state folder (sessions, undo's snapshots)")
            }
            Why::Credentials(holds) => format!("{shown} holds {holds}"),
            Why::Person => format!("{shown} is in the person's hidden_paths"),
        }
    }

    /// How the person lets it through, in the words of a sentence that starts "Only the person
    /// can let it through, by".
    pub fn how_to_allow(&self) -> String {
        match self.why {
            Why::Person => {
                format!("taking {} out of hidden_paths in their own keel config file", self.shown)
            }
            _ => {
                format!("adding it to readable_paths in their own keel config file ({CONFIG_FILE})")
            }
        }
    }
}

/// The person's config file, as docs and messages name it.
const CONFIG_FILE: &str = "~/.config/keel/config.toml";

/// A path of keel's list or the person's that is not hidden, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotHidden {
    /// It holds the workspace.
    HoldsWorkspace(Entry),
    /// The person's `readable_paths` let it through.
    LetThrough(Entry),
    /// A path of `readable_paths` that lies inside a hidden folder, which stays hidden whole.
    InsideHidden { readable: String, hidden: String },
    /// A path of `readable_paths` that nothing hidden lies in or under.
    NothingToLetThrough(String),
}

/// What the list is made from.
pub struct Sources<'a> {
    /// keel's environment: `HOME`, the XDG folders, the variables of [`MOVED_BY`].
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The workspace's root, canonical.
    pub workspace: &'a Path,
    /// The person's own `hidden_paths`.
    pub hidden_paths: &'a [PathBuf],
    /// The person's own `readable_paths`.
    pub readable_paths: &'a [PathBuf],
}

/// A path of `hidden_paths` or `readable_paths` keel cannot take.
#[derive(Debug, thiserror::Error)]
pub enum HiddenError {
    #[error(
        "{key}: `{path}` is neither absolute nor under the home folder (`~/…`); give it as one \
         or the other"
    )]
    Relative { key: &'static str, path: String },
    #[error("{key}: `{path}` starts with ~, but HOME is not set")]
    NoHome { key: &'static str, path: String },
}

/// The paths hidden from commands and the model's tools, made once as keel starts; cheap to
/// clone. The default is an empty list (nothing hidden), for tests and tools outside a launch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hidden {
    inner: Arc<Inner>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Inner {
    /// Hidden, sorted, none inside another.
    entries: Vec<Entry>,
    /// What is not hidden though named, and why.
    not_hidden: Vec<NotHidden>,
}

impl Hidden {
    /// The list for keel started in `sources.workspace` with `sources.env`, and the person's
    /// additions and exceptions.
    pub fn new(sources: &Sources<'_>) -> Result<Self, HiddenError> {
        let env = sources.env;
        let home = env("HOME").filter(|home| home.starts_with('/')).map(PathBuf::from);
        let home = home.as_deref();
        let mut named: Vec<Entry> = Vec::new();
        let config = crate::state_home::user_config_path(env)
            .and_then(|file| file.parent().map(Path::to_path_buf));
        named.extend(config.map(|path| entry(&path, home, Kind::Folder, Why::KeelConfig)));
        named.extend(
            crate::state_home::state_dir(env)
                .map(|path| entry(&path, home, Kind::Folder, Why::KeelState)),
        );
        if let Some(home) = home {
            for credential in &CREDENTIALS {
                let path = home.join(credential.path);
                named.push(entry(
                    &path,
                    Some(home),
                    credential.kind,
                    Why::Credentials(credential.holds),
                ));
            }
        }
        for store in &MOVED_BY {
            let Some(value) = env(store.variable) else { continue };
            for place in value.split(':').filter(|place| place.starts_with('/')) {
                let place = Path::new(place);
                // A variable pointing at the home folder, or above it, names no store of its own.
                if home.is_some_and(|home| home.starts_with(place)) {
                    continue;
                }
                let path = if store.below.is_empty() {
                    place.to_path_buf()
                } else {
                    place.join(store.below)
                };
                named.push(entry(&path, home, store.kind, Why::Credentials(store.holds)));
            }
        }
        let mut not_hidden = Vec::new();
        let readable = expanded("readable_paths", sources.readable_paths, home)?;
        let mut let_through = vec![false; readable.len()];
        named.retain(|named| {
            let by = readable.iter().position(|(real, _)| within(&named.path, real));
            if let Some(by) = by {
                let_through[by] = true;
                not_hidden.push(NotHidden::LetThrough(named.clone()));
            }
            by.is_none()
        });
        for (path, _) in expanded("hidden_paths", sources.hidden_paths, home)? {
            let kind = kind_of(&path).unwrap_or(Kind::Folder);
            let shown = shown(&path, home);
            named.push(Entry { path, shown, kind, why: Why::Person });
        }
        named.retain(|named| {
            let holds = within(sources.workspace, &named.path);
            if holds {
                not_hidden.push(NotHidden::HoldsWorkspace(named.clone()));
            }
            !holds
        });
        for (index, (real, shown)) in readable.iter().enumerate() {
            match named.iter().find(|named| within(real, &named.path)) {
                Some(outer) => not_hidden.push(NotHidden::InsideHidden {
                    readable: shown.clone(),
                    hidden: outer.shown.clone(),
                }),
                None if !let_through[index] => {
                    not_hidden.push(NotHidden::NothingToLetThrough(shown.clone()));
                }
                None => {}
            }
        }
        Ok(Self::of(named, not_hidden))
    }

    /// The list of `entries` as given (sorted, duplicates and paths inside another dropped).
    pub fn of(mut entries: Vec<Entry>, not_hidden: Vec<NotHidden>) -> Self {
        // Stable: of two equal paths the first named (keel's, then the defaults) stays.
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let mut kept: Vec<Entry> = Vec::with_capacity(entries.len());
        for entry in entries {
            if !kept.iter().any(|outer| within(&entry.path, &outer.path)) {
                kept.push(entry);
            }
        }
        Self { inner: Arc::new(Inner { entries: kept, not_hidden }) }
    }

    /// The hidden paths.
    pub fn entries(&self) -> &[Entry] {
        &self.inner.entries
    }

    /// The hidden path that holds `path` (a real path: symlinks followed), or is it.
    pub fn holding(&self, path: &Path) -> Option<&Entry> {
        self.inner.entries.iter().find(|entry| within(path, &entry.path))
    }

    /// The hidden paths, folders and files alike, for the sandbox.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.inner.entries.iter().map(|entry| entry.path.clone()).collect()
    }

    /// Those of [`Hidden::paths`] that are files, or would be.
    pub fn files(&self) -> Vec<PathBuf> {
        let files = self.inner.entries.iter().filter(|entry| entry.kind == Kind::File);
        files.map(|entry| entry.path.clone()).collect()
    }

    /// What `keel sandbox` and `/sandbox` say of it: each hidden path that exists, with why;
    /// those of keel's list that do not exist now, in one line; what was named and not hidden.
    pub fn report(&self) -> String {
        let mut out = String::from(
            "Hidden (empty to commands; refused to read_file, write_file, edit_file, grep, glob \
             and @):\n",
        );
        let (present, absent): (Vec<&Entry>, Vec<&Entry>) =
            self.inner.entries.iter().partition(|entry| entry.path.symlink_metadata().is_ok());
        if present.is_empty() {
            out.push_str("  nothing here now\n");
        }
        for entry in present {
            out.push_str(&format!("  {}\n", crate::visible::visible(&entry.reason())));
        }
        if !absent.is_empty() {
            let names: Vec<&str> = absent.iter().map(|entry| entry.shown.as_str()).collect();
            out.push_str(&format!(
                "  and, should they appear: {}\n",
                crate::visible::visible(&names.join(", "))
            ));
        }
        for not in &self.inner.not_hidden {
            let line = match not {
                NotHidden::HoldsWorkspace(entry) => {
                    format!("Not hidden: {}, which holds the workspace", entry.shown)
                }
                NotHidden::LetThrough(entry) => {
                    format!("Let through by your readable_paths: {}", entry.shown)
                }
                NotHidden::InsideHidden { readable, hidden } => format!(
                    "Still hidden: {readable} of your readable_paths lies inside {hidden}, which \
                     stays hidden whole (let {hidden} through, and hide what it must keep with \
                     hidden_paths)"
                ),
                NotHidden::NothingToLetThrough(readable) => {
                    format!("Nothing hidden lies in {readable} of your readable_paths")
                }
            };
            out.push_str(&format!("{}\n", crate::visible::visible(&line)));
        }
        out
    }
}

/// An entry for `path`, named as keel's list names it: its kind as it is, else `kind`.
fn entry(path: &Path, home: Option<&Path>, kind: Kind, why: Why) -> Entry {
    let path = normalized(path);
    Entry {
        kind: kind_of(&path).unwrap_or(kind),
        shown: shown(&path, home),
        path: real(&path),
        why,
    }
}

/// Whether `path` is a folder or a file, following symlinks; `None` when it does not exist.
fn kind_of(path: &Path) -> Option<Kind> {
    let meta = path.metadata().ok()?;
    Some(if meta.is_dir() { Kind::Folder } else { Kind::File })
}

/// The person's paths under `key`, each as the kernel reaches it and as they wrote it (`~/…`
/// taken from the home folder).
fn expanded(
    key: &'static str,
    paths: &[PathBuf],
    home: Option<&Path>,
) -> Result<Vec<(PathBuf, String)>, HiddenError> {
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        let text = path.to_string_lossy();
        let full = match path.strip_prefix("~") {
            Ok(below) => match home {
                Some(home) => home.join(below),
                None => return Err(HiddenError::NoHome { key, path: text.into_owned() }),
            },
            Err(_) if path.is_absolute() => path.clone(),
            Err(_) => return Err(HiddenError::Relative { key, path: text.into_owned() }),
        };
        let full = normalized(&full);
        out.push((real(&full), shown(&full, home)));
    }
    Ok(out)
}

/// `path` with `.` and `..` resolved by name (`..` above `/` stays at `/`).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` (absolute, normalised) as the kernel reaches it: its longest existing part with every
/// symlink followed, then the rest as named.
pub fn real(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest: Vec<&OsStr> = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |acc, name| acc.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `path` as the person knows it: `~/…` under the home folder.
fn shown(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|home| path.strip_prefix(home).ok()) {
        Some(below) if below.as_os_str().is_empty() => "~".to_owned(),
        Some(below) => format!("~/{}", below.display()),
        None => path.display().to_string(),
    }
}

/// Whether `path` is `outer` or lies inside it, comparing names regardless of ASCII case.
fn within(path: &Path, outer: &Path) -> bool {
    let mut names = path.components();
    for want in outer.components() {
        match names.next() {
            Some(name)
                if name
                    .as_os_str()
                    .as_bytes()
                    .eq_ignore_ascii_case(want.as_os_str().as_bytes()) => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |name: &str| vars.iter().find(|(key, _)| *key == name).map(|(_, value)| value.clone())
    }

    fn list(home: &Path, workspace: &Path, hidden: &[&str], readable: &[&str]) -> Hidden {
        let env = env_of(vec![("HOME", home.display().to_string())]);
        let hidden: Vec<PathBuf> = hidden.iter().map(PathBuf::from).collect();
        let readable: Vec<PathBuf> = readable.iter().map(PathBuf::from).collect();
        let sources =
            Sources { env: &env, workspace, hidden_paths: &hidden, readable_paths: &readable };
        Hidden::new(&sources).unwrap()
    }

    fn shown_list(hidden: &Hidden) -> Vec<&str> {
        hidden.entries().iter().map(|entry| entry.shown.as_str()).collect()
    }

    #[test]
    fn keels_folders_and_every_credential_store_are_hidden_whether_they_exist_or_not() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(h.join(".ssh")).unwrap();
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
    fn a_symlinked_store_is_hidden_where_it_leads() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(h.join("dotfiles/ssh")).unwrap();
        std::os::unix::fs::symlink(h.join("dotfiles/ssh"), h.join(".ssh")).unwrap();
        let hidden = list(&h, Path::new("/nowhere"), &[], &[]);
        let entry = hidden.holding(&h.join("dotfiles/ssh/id_rsa")).unwrap();
        assert_eq!(entry.shown, "~/.ssh");
        assert_eq!(entry.kind, Kind::Folder);
    }

    #[test]
    fn the_person_hides_more_and_lets_one_through() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let hidden = list(&h, Path::new("/nowhere"), &["~/secrets", "/srv/keys"], &["~/.npmrc"]);
        assert_eq!(hidden.holding(&h.join("secrets/a")).unwrap().why, Why::Person);
        assert!(hidden.holding(Path::new("/srv/keys/k")).is_some());
        assert!(hidden.holding(&h.join(".npmrc")).is_none(), "let through");
        assert!(hidden.report().contains("Let through by your readable_paths: ~/.npmrc"));
        let how = hidden.holding(&h.join("secrets")).unwrap().how_to_allow();
        assert!(how.contains("out of hidden_paths"), "{how}");
    }

    #[test]
    fn what_the_person_hides_inside_what_they_let_through_stays_hidden() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let hidden = list(&h, Path::new("/nowhere"), &["~/.ssh/id_ed25519"], &["~/.ssh"]);
        assert!(hidden.holding(&h.join(".ssh/known_hosts")).is_none());
        assert!(hidden.holding(&h.join(".ssh/id_ed25519")).is_some());
        // A readable path inside a hidden folder lets nothing through, and says so.
        let hidden = list(&h, Path::new("/nowhere"), &[], &["~/.aws/config", "~/nothing"]);
        assert!(hidden.holding(&h.join(".aws/config")).is_some());
        let report = hidden.report();
        assert!(
            report.contains("~/.aws/config of your readable_paths lies inside ~/.aws"),
            "{report}"
        );
        assert!(report.contains("Nothing hidden lies in ~/nothing"), "{report}");
    }

    #[test]
    fn a_path_that_holds_the_workspace_is_not_hidden_and_said() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let work = h.join(".local/state/keel/w");
        let hidden = list(&h, &work, &[], &[]);
        assert!(hidden.holding(&work.join("a")).is_none());
        assert!(
            hidden.report().contains("Not hidden: ~/.local/state/keel, which holds the workspace")
        );
        // The home folder itself is the workspace: everything under it stays hidden.
        let hidden = list(&h, &h, &[], &[]);
        assert!(hidden.holding(&h.join(".ssh")).is_some());
        assert!(hidden.holding(&h.join("src/main.rs")).is_none());
    }

    #[test]
    fn paths_inside_another_hidden_one_are_folded_into_it() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let hidden = list(&h, Path::new("/nowhere"), &["~/.config"], &[]);
        let shown = shown_list(&hidden);
        assert!(shown.contains(&"~/.config"), "{shown:?}");
        assert!(!shown.iter().any(|path| path.starts_with("~/.config/")), "{shown:?}");
    }

    #[test]
    fn variables_that_move_a_store_hide_it_where_they_point() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
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

    #[test]
    fn a_relative_path_is_refused_by_its_key() {
        let env = env_of(vec![("HOME", "/h".to_owned())]);
        let bad = [PathBuf::from("secrets")];
        let sources = Sources {
            env: &env,
            workspace: Path::new("/w"),
            hidden_paths: &bad,
            readable_paths: &[],
        };
        let err = Hidden::new(&sources).unwrap_err().to_string();
        assert!(err.starts_with("hidden_paths: `secrets`"), "{err}");
    }
}
