//! Every way out of the workspace refused: paths outside it, symlinks out, patterns that climb.

use super::*;

#[tokio::test]
async fn paths_outside_the_workspace_are_refused_naming_them() {
    let (_dir, tools) = workspace();
    let root = tools.workspace().root().display().to_string();
    for (name, path) in [("grep", "../"), ("glob", ".."), ("grep", "/etc"), ("glob", "src/../../x")]
    {
        let outcome = run(&tools, name, json!({"pattern": "x", "path": path})).await;
        assert!(outcome.is_error, "{name} {path}");
        assert!(outcome.for_model.contains("outside the workspace"), "{}", outcome.for_model);
        assert!(outcome.for_model.contains(&root), "{}", outcome.for_model);
    }
}

#[tokio::test]
async fn a_symlink_out_is_refused_as_a_path_and_never_followed_in_a_walk() {
    let (dir, tools) = workspace();
    let outside = tempfile::tempdir().unwrap();
    put(outside.path(), "secret.rs", "needle: the secret\n", 0);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.rs"), dir.path().join("link.rs"))
        .unwrap();
    put(dir.path(), "kept.rs", "needle\n", 0);
    for (name, path) in
        [("grep", "out"), ("glob", "out"), ("grep", "link.rs"), ("grep", "out/secret.rs")]
    {
        let outcome = run(&tools, name, json!({"pattern": "x", "path": path})).await;
        assert!(outcome.is_error, "{name} {path}");
        assert!(outcome.for_model.contains("symlink"), "{}", outcome.for_model);
    }
    let walked = grep(&tools, json!({"pattern": "needle"})).await;
    assert_eq!(results(&walked), ["kept.rs:1:needle"], "the secret stays out");
    let listed = glob(&tools, json!({"pattern": "**/*.rs"})).await;
    assert_eq!(results(&listed), ["kept.rs"]);
    let through = glob(&tools, json!({"pattern": "out/*.rs"})).await;
    assert_eq!(through.tally.as_deref(), Some("no files match"), "{}", through.for_model);
    let filtered = grep(&tools, json!({"pattern": "needle", "glob": "out/*"})).await;
    assert_eq!(filtered.tally.as_deref(), Some("no matches"), "{}", filtered.for_model);
}

#[tokio::test]
async fn a_pattern_cannot_climb_out_of_the_folder_searched() {
    let (_dir, tools) = workspace();
    for (name, input) in [
        ("glob", json!({"pattern": "../**/*"})),
        ("glob", json!({"pattern": "/etc/*"})),
        ("grep", json!({"pattern": "root", "glob": "../../etc/*"})),
    ] {
        let outcome = run(&tools, name, input.clone()).await;
        assert!(outcome.is_error, "{input}");
        assert!(outcome.for_model.starts_with("Invalid glob"), "{}", outcome.for_model);
    }
}
