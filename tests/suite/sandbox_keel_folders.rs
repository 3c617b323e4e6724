//! keel's own folders out of a command's reach wherever the workspace is: started in the home
//! folder, a command can neither read `~/.config/keel/config.toml` (hidden: it shows empty), nor
//! rewrite it, make one where there is none, nor move `~/.local` away to put a state folder of
//! its own in its place; with the person's `readable_paths` letting the config folder through,
//! it reads it, and still cannot write it. Where nothing stands
//! in the way (`--sandbox off`), keel checks its state folder before it uses it: undo's
//! repository in a folder put in the place of its own, or with a `commondir`, is never used.

use crate::support::bin;
use crate::support::files::outside_tmp;
use crate::support::keel_as::{User, keel_p};
use crate::support::llm::{Step, text, tool};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn bash_step(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

/// What a command in the home folder tries against keel's folders.
const MEDDLE: &str = r#"cat .config/keel/config.toml; echo STATE-ENTRIES=$(ls -A .local/state/keel | wc -l)
echo 'sandbox = "off"' >> .config/keel/config.toml
mv .config/keel .config/keel-old
mv .config .config-old
mv .local .local-old
mv .local/state .local/state-old
rm -rf .local/state/keel
mkdir -p .local/state/keel/workspaces/x && echo planted > .local/state/keel/workspaces/x/commondir
echo DONE
"#;

const SETTINGS: &str = "# the person's settings\nmodel = \"claude-sonnet-4-5\"\n";
/// The same, letting keel's config folder through to commands (`readable_paths`).
const SETTINGS_READABLE: &str = "# the person's settings\nreadable_paths = [\"~/.config/keel\"]\n";

#[test]
fn started_in_the_home_folder_a_command_cannot_reach_keels_folders() {
    for (user, settings) in [
        (User::Root, SETTINGS),
        (User::Nobody, SETTINGS),
        (User::Root, SETTINGS_READABLE),
        (User::Nobody, SETTINGS_READABLE),
    ] {
        let home = outside_tmp();
        let h = home.path();
        std::fs::create_dir_all(h.join(".config/keel")).unwrap();
        std::fs::write(h.join(".config/keel/config.toml"), settings).unwrap();
        std::fs::write(h.join("meddle.sh"), MEDDLE).unwrap();
        let steps = vec![bash_step("bash meddle.sh"), text("Done.")];
        let run = keel_p(user, steps, h, h, &[], |_| {});
        let said = run.all_results();
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
        assert!(said.contains("DONE"), "{user:?}: {said}");
        // Hidden: read as empty; let through: read, and still not written.
        let readable = settings == SETTINGS_READABLE;
        assert_eq!(said.contains("the person's settings"), readable, "{user:?}: {said}");
        assert!(said.contains("STATE-ENTRIES=0"), "{user:?}: the state folder is hidden: {said}");
        let kept = std::fs::read_to_string(h.join(".config/keel/config.toml")).unwrap();
        assert_eq!(kept, settings, "{user:?}: {said}");
        for moved in [".config-old", ".config/keel-old", ".local-old", ".local/state-old"] {
            assert!(!h.join(moved).exists(), "{user:?}: {moved}: {said}");
        }
        assert!(!h.join(".local/state/keel/workspaces/x").exists(), "{user:?}: {said}");
        let store = bin::sessions(h, h);
        assert_eq!(store.list().unwrap().len(), 1, "{user:?}: the session was saved");
    }
}

#[test]
fn started_in_a_home_without_keels_config_a_command_cannot_make_one() {
    for user in User::BOTH {
        let home = outside_tmp();
        let h = home.path();
        let make = "mkdir -p .config/keel && echo 'sandbox = \"off\"' > .config/keel/config.toml; \
                    ls -A .config; cat .config/README; echo DONE";
        let run = keel_p(user, vec![bash_step(make), text("Done.")], h, h, &[], |_| {});
        let said = run.all_results();
        assert!(said.contains("DONE"), "{user:?}: {said}");
        assert!(said.contains("keel covers this path"), "explained: {user:?}: {said}");
        assert!(!h.join(".config/keel/config.toml").exists(), "{user:?}: {said}");
        // The cover goes with the sandbox: nothing of it stays in the home folder.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while h.join(".config").exists() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!h.join(".config").exists(), "{user:?}: {said}");
    }
}

/// Moves the folder above keel's state away, as a command run with `--sandbox off` can, and
/// puts a state folder of its own in its place, whose undo repository takes its settings from
/// a folder whose `core.fsmonitor` leaves a mark.
fn swap_state(shadow: &Path, evil: &Path, mark: &Path) -> String {
    format!(
        "mv .local .local-old && mkdir -p '{shadow}' '{evil}/objects' '{evil}/refs' && \
         echo 'ref: refs/heads/main' > '{shadow}/HEAD' && echo '{evil}' > '{shadow}/commondir' && \
         printf '[core]\\n\\tfsmonitor = \"echo ran >> {mark}; false\"\\n' > '{evil}/config' && \
         echo SWAPPED",
        shadow = shadow.display(),
        evil = evil.display(),
        mark = mark.display()
    )
}

#[test]
fn with_the_sandbox_off_keel_uses_no_state_folder_put_in_the_place_of_its_own() {
    for user in User::BOTH {
        let (home, outside) = (outside_tmp(), outside_tmp());
        std::fs::set_permissions(outside.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let h = home.path();
        let shadow = bin::sessions(h, h).dir().join("shadow.git");
        let (evil, mark) = (outside.path().join("common"), outside.path().join("fsmonitor-ran"));
        // In a script: the guard refuses `mv .local` on the command line itself.
        std::fs::write(h.join("swap.sh"), swap_state(&shadow, &evil, &mark)).unwrap();
        let steps = vec![bash_step("bash swap.sh"), text("Done.")];
        let run = keel_p(user, steps, h, h, &["--sandbox", "off"], |_| {});
        assert!(run.all_results().contains("SWAPPED"), "{user:?}: {}", run.stderr());
        // The turn's last snapshot, taken after the command, would have run git there.
        assert!(!mark.exists(), "{user:?}: keel's git obeyed the planted commondir");
    }
}

#[test]
fn with_the_sandbox_off_undos_repository_with_a_commondir_is_never_used() {
    let (home, work, outside) = (outside_tmp(), outside_tmp(), outside_tmp());
    let shadow = bin::sessions(home.path(), work.path()).dir().join("shadow.git");
    let (evil, mark) = (outside.path().join("common"), outside.path().join("fsmonitor-ran"));
    let plant = format!(
        "mkdir -p '{evil}/objects' '{evil}/refs' && echo '{evil}' > '{shadow}/commondir' && \
         printf '[core]\\n\\tfsmonitor = \"echo ran >> {mark}; false\"\\n' > '{evil}/config' && \
         echo PLANTED",
        shadow = shadow.display(),
        evil = evil.display(),
        mark = mark.display()
    );
    let steps = vec![bash_step(&plant), text("Done.")];
    let run = keel_p(User::Root, steps, home.path(), work.path(), &["--sandbox", "off"], |_| {});
    assert!(run.all_results().contains("PLANTED"), "{}", run.stderr());
    assert!(!mark.exists(), "keel's git obeyed the planted commondir");
    // The next session's first snapshot, before its command, is refused, and says why.
    let steps = vec![bash_step("echo again"), text("Done.")];
    let run = keel_p(User::Root, steps, home.path(), work.path(), &["--sandbox", "off"], |_| {});
    assert!(run.stderr().contains("it holds a commondir"), "{}", run.stderr());
    assert!(!mark.exists(), "keel's git obeyed the planted commondir");
}

#[test]
fn a_sessions_tmp_lasts_the_session_and_is_its_own() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        let name = format!("keel-tmp-test-{}", std::process::id());
        let host = Path::new("/tmp").join(format!("{name}-host"));
        std::fs::write(&host, "the host's\n").unwrap();
        let steps = vec![
            bash_step(&format!("echo kept > /tmp/{name}; mkdir -p /tmp/unpacked && echo DONE")),
            bash_step(&format!("cat /tmp/{name}; ls /tmp; cat /tmp/{name}-host || echo NO-HOST")),
            text("Done."),
        ];
        let run = keel_p(user, steps, home.path(), work.path(), &[], |_| {});
        let second = run.results.get(1).cloned().unwrap_or_default();
        assert!(second.contains("kept"), "{user:?}: kept across commands: {}", run.all_results());
        assert!(second.contains("NO-HOST"), "{user:?}: not the host's: {second}");
        assert!(!Path::new("/tmp").join(&name).exists(), "{user:?}: written to the host's /tmp");
        // Another session starts with an empty one.
        let steps = vec![bash_step(&format!("cat /tmp/{name} || echo EMPTY")), text("Done.")];
        let again = keel_p(user, steps, home.path(), work.path(), &[], |_| {});
        assert!(again.all_results().contains("EMPTY"), "{user:?}: {}", again.all_results());
        // Removed as each session ended.
        let folders = home.path().join(".local/state/keel/tmp");
        let left: Vec<_> = std::fs::read_dir(&folders).unwrap().collect();
        assert!(left.is_empty(), "{user:?}: {left:?}");
        std::fs::remove_file(&host).unwrap();
    }
}

#[test]
fn what_the_sandbox_covers_says_why() {
    let (home, work) = (outside_tmp(), outside_tmp());
    let look = "ls -A; ls -A .git .keel; cat .git/README; touch .keel/x 2>&1; echo DONE";
    let run = keel_p(
        User::Root,
        vec![bash_step(look), text("Done.")],
        home.path(),
        work.path(),
        &[],
        |_| {},
    );
    let said = run.all_results();
    assert!(said.contains("DONE"), "{said}");
    assert!(said.contains("keel covers this path, read-only, while a command runs"), "{said}");
    assert!(said.contains("Read-only file system"), "{said}");
    // The covers go with the sandbox, as its supervisor ends.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    for covered in [".git", ".keel"] {
        while work.path().join(covered).exists() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!work.path().join(covered).exists(), "{covered} stayed in the workspace");
    }
}
