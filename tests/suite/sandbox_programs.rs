//! Programs keel starts by name, outside the sandbox — `bwrap`, `git` for undo's snapshots, an
//! MCP server's bare command — are never taken from a folder a command can write, however
//! `PATH` reads: a command plants `.venv/bin/bwrap` and `.venv/bin/git` with the workspace's
//! `.venv/bin` first on `PATH` (an activated virtualenv), and keel must not run them. Tried
//! through the keel binary as root, as an unprivileged user and with `--sandbox off`.

use crate::support::bin;
use crate::support::files::outside_tmp;
use crate::support::keel_as::{User, give_to, keel_p};
use crate::support::llm::{Step, text, tool};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn bash_step(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

/// A program that leaves `marker` behind, then does what the real `name` does.
fn impostor(name: &str, marker: &Path) -> String {
    let real = ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|folder| Path::new(folder).join(name))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("{name} is installed"));
    format!("#!/bin/sh\necho ran >> '{}'\nexec '{}' \"$@\"\n", marker.display(), real.display())
}

/// `PATH` with `first` before keel's own.
fn path_with(first: &Path) -> std::ffi::OsString {
    let own = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&own)))
        .unwrap()
}

#[test]
fn programs_a_command_plants_on_path_are_never_what_keel_runs() {
    let runs: [(User, &[&str]); 3] =
        [(User::Root, &[]), (User::Nobody, &[]), (User::Root, &["--sandbox", "off"])];
    for (user, args) in runs {
        let (home, work) = (outside_tmp(), outside_tmp());
        let bin = work.path().join(".venv/bin");
        // The impostors leave their marks in the workspace, which even a sandboxed command may
        // write: the marks say keel ran them, not that they got out.
        let (bwrap_ran, git_ran) = (work.path().join("bwrap-ran"), work.path().join("git-ran"));
        let plant = "mkdir -p .venv/bin && printf '%s' \"$BWRAP\" > .venv/bin/bwrap && \
                     printf '%s' \"$GIT\" > .venv/bin/git && chmod +x .venv/bin/* && echo PLANTED";
        let steps = vec![
            bash_step(&format!(
                "BWRAP={} GIT={} bash -c {}",
                shlex_quote(&impostor("bwrap", &bwrap_ran)),
                shlex_quote(&impostor("git", &git_ran)),
                shlex_quote(plant)
            )),
            bash_step("echo SECOND"),
            text("Done."),
        ];
        let run = keel_p(user, steps, home.path(), work.path(), args, |command| {
            command.env("PATH", path_with(&bin));
        });
        let said = run.all_results();
        assert_eq!(run.output.status.code(), Some(0), "{user:?} {args:?}: {}", run.stderr());
        assert!(said.contains("PLANTED") && said.contains("SECOND"), "{user:?} {args:?}: {said}");
        assert!(!bwrap_ran.exists(), "{user:?} {args:?}: keel ran the planted bwrap");
        assert!(!git_ran.exists(), "{user:?} {args:?}: keel ran the planted git");
        // Undo's snapshots ran, with the real git.
        let store = bin::sessions(home.path(), work.path());
        assert!(store.dir().join("shadow.git/HEAD").is_file(), "{user:?} {args:?}: no snapshot");
    }
}

#[test]
fn a_bwrap_found_only_where_commands_write_is_refused_with_the_reason() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        let bin = work.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let marker = work.path().join("bwrap-ran");
        std::fs::write(bin.join("bwrap"), impostor("bwrap", &marker)).unwrap();
        std::fs::set_permissions(bin.join("bwrap"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        give_to(user, work.path());
        let steps = vec![bash_step("touch ran.txt"), text("Done.")];
        // Only the workspace's bin and a folder without bwrap: nowhere else to find one.
        let path = std::env::join_paths([bin.as_path(), Path::new("/nonexistent")]).unwrap();
        let run = keel_p(user, steps, home.path(), work.path(), &[], |command| {
            command.env("PATH", &path);
        });
        let stderr = run.stderr();
        assert!(
            stderr.contains("`bwrap` was not found on PATH outside the folders commands can write"),
            "{user:?}: {stderr}"
        );
        assert!(stderr.contains("which commands can write"), "{user:?}: {stderr}");
        assert!(!marker.exists(), "{user:?}: keel ran the workspace's bwrap");
        assert!(!work.path().join("ran.txt").exists(), "{user:?}: the command ran unconfined");
    }
}

#[test]
fn an_mcp_server_named_by_a_bare_command_is_not_taken_from_the_workspace() {
    let (home, work) = (outside_tmp(), outside_tmp());
    let bin = work.path().join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = work.path().join("server-ran");
    let server = format!("#!/bin/sh\necho ran >> '{}'\n", marker.display());
    std::fs::write(bin.join("docs-server"), server).unwrap();
    std::fs::set_permissions(bin.join("docs-server"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    let config = home.path().join(".config/keel");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[mcp_servers.docs]\ncommand = \"docs-server\"\n")
        .unwrap();
    let mut command = bin::keel(home.path());
    command.args(["mcp", "list", "--workdir"]).arg(work.path()).env("PATH", path_with(&bin));
    let output = bin::output_within(&mut command, "keel mcp list");
    let printed = bin::text(&output.stdout);
    assert!(printed.contains("docs (failed: could not start `docs-server`"), "{printed}");
    assert!(printed.contains("node_modules/.bin (inside"), "{printed}");
    assert!(!marker.exists(), "keel started the workspace's server");
}

fn shlex_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[test]
fn undo_never_takes_git_from_a_writable_root_on_path() {
    let runs: [(User, &[&str]); 3] =
        [(User::Root, &[]), (User::Nobody, &[]), (User::Root, &["--sandbox", "off"])];
    for (user, args) in runs {
        let (home, work, root) = (outside_tmp(), outside_tmp(), outside_tmp());
        // What an earlier command left in a folder the person lets commands write.
        let bin = root.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let marker = root.path().join("git-ran");
        std::fs::write(bin.join("git"), impostor("git", &marker)).unwrap();
        std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
        give_to(user, root.path());
        let config = home.path().join(".config/keel");
        std::fs::create_dir_all(&config).unwrap();
        let roots = format!("writable_roots = [{:?}]\n", root.path().display().to_string());
        std::fs::write(config.join("config.toml"), roots).unwrap();
        let steps = vec![bash_step("echo changed > file.txt"), text("Done.")];
        let run = keel_p(user, steps, home.path(), work.path(), args, |command| {
            command.env("PATH", path_with(&bin));
        });
        assert_eq!(run.output.status.code(), Some(0), "{user:?} {args:?}: {}", run.stderr());
        assert!(work.path().join("file.txt").is_file(), "{user:?} {args:?}: the command ran");
        assert!(!marker.exists(), "{user:?} {args:?}: keel ran the git in a writable root");
        let store = bin::sessions(home.path(), work.path());
        assert!(store.dir().join("shadow.git/HEAD").is_file(), "{user:?} {args:?}: no snapshot");
    }
}
