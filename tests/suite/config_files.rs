//! Config files on disk: where the user's file is found (`XDG_CONFIG_HOME`, else `HOME`), the
//! workspace's file beside it, and errors that name the file, line and key.

use keel::agent::ApprovalMode;
use keel::config::{
    self, Config, DEFAULT_ANTHROPIC_MODEL, FileSettings, FlagSettings, PROJECT_CONFIG,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

struct Dirs {
    _root: tempfile::TempDir,
    home: PathBuf,
    xdg: PathBuf,
    workspace: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let [home, xdg, workspace] = ["home", "xdg", "work"].map(|name| root.path().join(name));
    for dir in [&home, &xdg, &workspace] {
        std::fs::create_dir_all(dir).unwrap();
    }
    write(&home.join(".config/keel/config.toml"), "model = \"from-home\"\n");
    write(&xdg.join("keel/config.toml"), "model = \"from-xdg\"\n");
    Dirs { _root: root, home, xdg, workspace }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn resolved(env: &[(&str, String)], workspace: &Path) -> Config {
    let env: HashMap<String, String> =
        env.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    config::resolve(
        &FlagSettings::default(),
        &|name| env.get(name).cloned(),
        workspace,
        ApprovalMode::Ask,
    )
    .unwrap()
}

#[test]
fn the_users_file_is_under_xdg_config_home_else_home() {
    let dirs = dirs();
    let home = dirs.home.display().to_string();
    let xdg = dirs.xdg.display().to_string();
    for (case, env, model) in [
        (
            "XDG_CONFIG_HOME set",
            vec![("HOME", home.clone()), ("XDG_CONFIG_HOME", xdg.clone())],
            "from-xdg",
        ),
        (
            "XDG_CONFIG_HOME empty",
            vec![("HOME", home.clone()), ("XDG_CONFIG_HOME", String::new())],
            "from-home",
        ),
        (
            "XDG_CONFIG_HOME relative",
            vec![("HOME", home.clone()), ("XDG_CONFIG_HOME", "xdg".into())],
            "from-home",
        ),
        ("HOME only", vec![("HOME", home.clone())], "from-home"),
        ("XDG_CONFIG_HOME only", vec![("XDG_CONFIG_HOME", xdg.clone())], "from-xdg"),
        ("neither", vec![], DEFAULT_ANTHROPIC_MODEL),
    ] {
        assert_eq!(resolved(&env, &dirs.workspace).model, model, "{case}");
    }
}

#[test]
fn the_workspace_file_is_read_from_the_workspace_and_beats_the_users() {
    let dirs = dirs();
    write(
        &dirs.workspace.join(PROJECT_CONFIG),
        "model = \"from-work\"\napproval = \"read-only\"\n",
    );
    let config = resolved(&[("HOME", dirs.home.display().to_string())], &dirs.workspace);
    assert_eq!((config.model.as_str(), config.approval), ("from-work", ApprovalMode::ReadOnly));
}

#[test]
fn missing_files_are_no_settings() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(config::read_file(&dir.path().join("none.toml")).unwrap(), FileSettings::default());
}

#[test]
fn a_file_that_cannot_be_read_is_an_error_naming_it_not_no_settings() {
    let dir = tempfile::tempdir().unwrap();
    let not_text = dir.path().join("binary.toml");
    std::fs::write(&not_text, [0xff, 0xfe, b'\n']).unwrap();
    let folder = dir.path().join("folder.toml");
    std::fs::create_dir(&folder).unwrap();
    for path in [not_text, folder] {
        let err = config::read_file(&path).unwrap_err().to_string();
        assert!(err.starts_with(&path.display().to_string()), "{err}");
    }
}

#[test]
fn a_bad_value_names_the_file_line_and_key() {
    let text = "model = \"m\"\nnag_threshold = \"three\"\n";
    let err = config::parse_file(Path::new("cfg.toml"), text).unwrap_err().to_string();
    // Line and column count from 1, as editors do: the column is the bad value's first character.
    assert!(err.starts_with("cfg.toml:2:17: "), "{err}");
    assert!(err.contains("key `nag_threshold`"), "{err}");
}

#[test]
fn a_line_with_no_key_names_none() {
    let err = config::parse_file(Path::new("cfg.toml"), "= 3\n").unwrap_err().to_string();
    assert!(err.starts_with("cfg.toml:1:"), "{err}");
    assert!(!err.contains("key `"), "{err}");
}

#[test]
fn an_unknown_key_is_an_error() {
    let err =
        config::parse_file(Path::new("cfg.toml"), "nag_treshold = 3\n").unwrap_err().to_string();
    assert!(err.starts_with("cfg.toml:1:"), "{err}");
    assert!(err.contains("nag_treshold"), "{err}");
}

#[test]
fn broken_syntax_is_an_error() {
    let err = config::parse_file(Path::new("cfg.toml"), "model = \n").unwrap_err().to_string();
    assert!(err.starts_with("cfg.toml:1:"), "{err}");
}

#[test]
fn a_broken_file_in_either_place_is_an_error_naming_it() {
    let dirs = dirs();
    write(&dirs.workspace.join(PROJECT_CONFIG), "approval = \"sometimes\"\n");
    let env = |name: &str| (name == "HOME").then(|| dirs.home.display().to_string());
    let err = config::resolve(&FlagSettings::default(), &env, &dirs.workspace, ApprovalMode::Ask)
        .unwrap_err();
    assert!(err.to_string().contains(PROJECT_CONFIG), "{err}");
    write(&dirs.workspace.join(PROJECT_CONFIG), "");
    write(&dirs.home.join(".config/keel/config.toml"), "max_rounds = -1\n");
    let err = config::resolve(&FlagSettings::default(), &env, &dirs.workspace, ApprovalMode::Ask)
        .unwrap_err();
    assert!(err.to_string().contains(".config/keel/config.toml:1:"), "{err}");
}

/// A workspace's file could show its costly model as free: prices come from the person's own
/// file alone, over keel's table, and keel says it ignored the project's.
#[test]
fn prices_come_from_the_persons_file_alone_never_the_workspaces() {
    let dirs = dirs();
    let home = dirs.home.display().to_string();
    write(
        &dirs.home.join(".config/keel/config.toml"),
        "[prices.\"my-model\"]\ninput = 1.0\noutput = 2.0\n\n\
         [prices.\"gpt-4.1\"]\ninput = 9.0\noutput = 9.0\ncache_read = 0.5\n",
    );
    write(
        &dirs.workspace.join(PROJECT_CONFIG),
        "[prices.\"gpt-4.1\"]\ninput = 0.0\noutput = 0.0\n\n\
         [prices.\"claude-sonnet-4-5\"]\ninput = 0.0\noutput = 0.0\n",
    );
    let config = resolved(&[("HOME", home)], &dirs.workspace);
    let mine = config.prices.of("my-model").unwrap();
    assert_eq!((mine.input, mine.output, mine.cache_read), (1.0, 2.0, None));
    let gpt = config.prices.of("gpt-4.1").unwrap();
    assert_eq!((gpt.input, gpt.output), (9.0, 9.0), "the person's price, not the workspace's");
    let claude = config.prices.of("claude-sonnet-4-5").unwrap();
    assert!(claude.input > 0.0 && claude.output > 0.0, "keel's own table, not the workspace's");
    let notice = config.ignored_notice().unwrap();
    assert!(notice.starts_with("ignored `prices` in the workspace's"), "{notice}");
    assert_eq!(config.project_notice(), None, "nothing else was taken from it");
}

/// keel says what it took from the workspace's file, values included, and never the keys it
/// ignored.
#[test]
fn what_the_workspace_file_set_is_named() {
    let dirs = dirs();
    let home = dirs.home.display().to_string();
    write(
        &dirs.workspace.join(PROJECT_CONFIG),
        "model = \"cheap-model\"\nmax_rounds = 5\nsandbox = \"off\"\napproval = \"read-only\"\n\
         api_key = \"x\"\nnetwork = false\n",
    );
    let config = resolved(&[("HOME", home)], &dirs.workspace);
    assert_eq!(
        config.project_notice().as_deref(),
        Some(
            "took model = \"cheap-model\", max_rounds = 5, approval = \"read-only\", \
             network = false from the workspace's .keel/config.toml"
        )
    );
}

#[test]
fn a_bad_price_is_an_error_naming_the_model_or_the_key() {
    let dirs = dirs();
    let home = dirs.home.display().to_string();
    let env: HashMap<String, String> = [("HOME".to_owned(), home)].into();
    let resolve = || {
        config::resolve(
            &FlagSettings::default(),
            &|name| env.get(name).cloned(),
            &dirs.workspace,
            ApprovalMode::Ask,
        )
    };
    let own = dirs.home.join(".config/keel/config.toml");
    write(&own, "[prices.m]\ninput = -1.0\noutput = 1.0\n");
    let error = resolve().unwrap_err().to_string();
    assert!(error.contains("`m`"), "{error}");
    write(&own, "");
    write(&dirs.workspace.join(PROJECT_CONFIG), "[prices.m]\ninput = 1.0\noutput = 1.0\nin = 2\n");
    let error = resolve().unwrap_err().to_string();
    assert!(error.contains("in"), "{error}");
    assert!(error.contains(PROJECT_CONFIG), "{error}");
}
