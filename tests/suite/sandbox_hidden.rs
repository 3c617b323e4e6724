//! Hidden, not read-only: keel's config file (with its `api_key`), keel's state and each of the
//! person's credential stores never reach the model — not through a command (`cat`, `grep -r`),
//! `read_file`, `grep`, `glob` nor `@path`, nor a symlink into one — with keel run in the home
//! folder and from a workspace elsewhere, as root and as an unprivileged user. The person's own
//! `hidden_paths` hides more and `readable_paths` lets one through; a workspace's file can do
//! neither.

use crate::support::bin::{keel, output_within, text as printed};
use crate::support::files::outside_tmp;
use crate::support::keel_as::{Run, User, keel_p, keel_prompt};
use crate::support::llm::{Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;

/// Each store of keel's list, as a file to plant in the home folder (a folder's with a file in
/// it); keel's own config file first.
const PLANTED: [&str; 26] = [
    ".config/keel/config.toml",
    ".ssh/id_ed25519",
    ".gnupg/private-keys-v1.d/key.key",
    ".password-store/bank.gpg",
    ".aws/credentials",
    ".azure/msal_token_cache.json",
    ".config/gcloud/credentials.db",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/github-copilot/apps.json",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".gem/credentials",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
];

/// What the planted file at `index` holds: no command or tool input ever spells it.
fn secret(index: usize) -> String {
    format!("hush-{index}-a7c9")
}

/// A visible file, and one in a visible dot-folder: the controls that show a search did look.
const SHOWN: &str = "shown-4f1e";
const SHOWN_DOT: &str = "shown-dot-4f1e";
/// A symlink in the workspace to a private key.
const LINK: &str = "link-to-key";
/// Most `@` mentions one prompt attaches.
const MENTIONS_PER_PROMPT: usize = 8;

/// Plants every store of keel's list in the home folder `h`, keel's config holding the
/// `api_key`, and the visible controls.
fn plant(h: &Path) {
    for (index, path) in PLANTED.iter().enumerate() {
        let path = h.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let line = match index {
            0 => format!("api_key = \"{}\"\n", secret(index)),
            _ => format!("token = {}\n", secret(index)),
        };
        std::fs::write(path, line).unwrap();
    }
    std::fs::write(h.join("notes.txt"), format!("{SHOWN}\n")).unwrap();
    std::fs::create_dir_all(h.join(".visible")).unwrap();
    std::fs::write(h.join(".visible/seen.txt"), format!("{SHOWN_DOT}\n")).unwrap();
    std::os::unix::fs::symlink(h.join(".ssh/id_ed25519"), h.join(LINK)).unwrap();
}

fn bash(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

/// One response of many calls of one tool.
fn calls(name: &str, inputs: Vec<Value>) -> Step {
    Step { tools: inputs.into_iter().map(|input| (name.to_owned(), input)).collect(), ..text("") }
}

/// Fails, naming where, if any planted secret is in any request the model was sent.
fn assert_nothing_reached_the_model(run: &Run, what: &str) {
    let sent: String = run.bodies.iter().map(Value::to_string).collect();
    assert!(!run.bodies.is_empty(), "{what}: no request: {}", run.stderr());
    for (index, path) in PLANTED.iter().enumerate() {
        assert!(!sent.contains(&secret(index)), "{what}: {path} reached the model");
    }
}

#[test]
fn in_the_home_folder_no_credential_reaches_the_model_by_command_or_tool() {
    let all: Vec<&str> = PLANTED.iter().copied().chain([LINK]).collect();
    for user in User::BOTH {
        let home = outside_tmp();
        let h = &home.path().canonicalize().unwrap();
        plant(h);
        let reads: Vec<Value> =
            all.iter().chain(&["notes.txt"]).map(|path| json!({ "path": path })).collect();
        let steps = vec![
            bash(&format!("cat {} notes.txt 2>&1; echo CAT-DONE", all.join(" "))),
            bash(
                "grep -rI hush- . 2>&1; echo FOUND=$(find .local/state/keel .config/keel .ssh .aws -mindepth 1 | wc -l)",
            ),
            calls("read_file", reads),
            calls(
                "grep",
                vec![
                    json!({ "pattern": "hush-" }),
                    json!({ "pattern": "hush-", "glob": ".*/**" }),
                    json!({ "pattern": "hush-", "glob": "**/.*" }),
                    json!({ "pattern": "hush-", "path": ".ssh" }),
                    json!({ "pattern": "shown-", "glob": ".*/**" }),
                ],
            ),
            tool("glob", json!({ "pattern": ".*/**" })),
            text("Done."),
        ];
        let run = keel_p(user, steps, h, h, &[], |_| {});
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
        let results = &run.results;
        assert_eq!(results.len(), 1 + 1 + all.len() + 1 + 5 + 1, "{user:?}: {results:#?}");
        // Through a command: empty, or not there at all.
        assert!(results[0].contains("CAT-DONE") && results[0].contains(SHOWN), "{}", results[0]);
        assert!(results[1].contains("FOUND=0"), "{user:?}: {}", results[1]);
        // read_file: refused, saying why and how to allow it.
        let read = &results[2..2 + all.len()];
        for (path, said) in all.iter().zip(read) {
            assert!(said.contains("is hidden from the model"), "{user:?}: {path}: {said}");
            assert!(said.contains("readable_paths"), "{user:?}: {path}: {said}");
        }
        assert!(read[1].contains("~/.ssh holds ssh keys"), "{}", read[1]);
        assert!(read[0].contains("keel's config folder"), "{}", read[0]);
        assert!(results[2 + all.len()].contains(SHOWN), "the control is read");
        // grep: passed over, or refused by name; the control in a dot-folder is found.
        let searched = &results[3 + all.len()..8 + all.len()];
        assert!(searched[3].contains("is hidden from the model"), "{}", searched[3]);
        assert!(searched[4].contains(SHOWN_DOT), "{user:?}: {}", searched[4]);
        // glob: lists the control, no name inside a hidden folder.
        let listed = &results[8 + all.len()];
        assert!(listed.contains(".visible/seen.txt"), "{user:?}: {listed}");
        for path in ["id_ed25519", ".config/keel", "credentials", ".local/state/keel"] {
            assert!(!listed.contains(path), "{user:?}: {path} listed: {listed}");
        }
        assert_nothing_reached_the_model(&run, &format!("{user:?}"));
    }
}

#[test]
fn in_the_home_folder_an_at_mention_of_a_credential_attaches_nothing() {
    let all: Vec<&str> = PLANTED.iter().copied().chain([LINK]).collect();
    for user in User::BOTH {
        let home = outside_tmp();
        let h = &home.path().canonicalize().unwrap();
        plant(h);
        for (round, chunk) in all.chunks(MENTIONS_PER_PROMPT - 1).enumerate() {
            let mentions: Vec<String> =
                chunk.iter().chain(&["notes.txt"]).map(|path| format!("@{path}")).collect();
            let prompt = format!("look at {}", mentions.join(" "));
            let run = keel_prompt(user, &prompt, vec![text("Done.")], h, h, &[], |_| {});
            assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
            assert_nothing_reached_the_model(&run, &format!("{user:?}, @ round {round}"));
            let first = run.bodies[0].to_string();
            assert!(first.contains(SHOWN), "{user:?}: the control is attached: {first}");
            let stderr = run.stderr();
            for path in chunk {
                let refused = format!("@{path}: `{path}` is hidden from the model");
                assert!(stderr.contains(&refused), "{user:?}: {refused}: {stderr}");
            }
        }
    }
}

#[test]
fn from_a_workspace_elsewhere_credentials_are_empty_to_commands() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        let h = &home.path().canonicalize().unwrap();
        plant(h);
        std::os::unix::fs::symlink(h.join(".ssh/id_ed25519"), work.path().join(LINK)).unwrap();
        let absolute: Vec<String> =
            PLANTED.iter().map(|path| h.join(path).display().to_string()).collect();
        let steps = vec![
            bash(&format!(
                "cat {} {LINK} {}/notes.txt 2>&1; echo CAT-DONE",
                absolute.join(" "),
                h.display()
            )),
            calls("read_file", vec![json!({ "path": LINK }), json!({ "path": absolute[1] })]),
            text("Done."),
        ];
        let run = keel_p(user, steps, h, work.path(), &[], |_| {});
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
        assert!(run.results[0].contains("CAT-DONE"), "{user:?}: {}", run.results[0]);
        assert!(run.results[0].contains(SHOWN), "{user:?}: the control: {}", run.results[0]);
        assert!(run.results[1].contains("outside the workspace"), "{}", run.results[1]);
        assert_nothing_reached_the_model(&run, &format!("{user:?}"));
    }
}

/// The person's own config, hiding two more paths and letting `~/.npmrc` through.
const PERSONS_CONFIG: &str = "hidden_paths = [\"~/private\", \"~/notes/plan.txt\"]\n\
                              readable_paths = [\"~/.npmrc\"]\n";

#[test]
fn the_persons_hidden_paths_hide_more_and_readable_paths_let_one_through() {
    for user in User::BOTH {
        let home = outside_tmp();
        let h = &home.path().canonicalize().unwrap();
        plant(h);
        std::fs::write(h.join(".config/keel/config.toml"), PERSONS_CONFIG).unwrap();
        std::fs::create_dir_all(h.join("private")).unwrap();
        std::fs::create_dir_all(h.join("notes")).unwrap();
        std::fs::write(h.join("private/diary.txt"), format!("{}\n", secret(100))).unwrap();
        std::fs::write(h.join("notes/plan.txt"), format!("{}\n", secret(101))).unwrap();
        std::fs::write(h.join("notes/open.txt"), "shown-open\n").unwrap();
        let paths = ["private/diary.txt", "notes/plan.txt", "notes/open.txt", ".npmrc"];
        let steps = vec![
            bash(&format!("cat {} 2>&1; echo CAT-DONE", paths.join(" "))),
            calls("read_file", paths.iter().map(|path| json!({ "path": path })).collect()),
            tool("grep", json!({ "pattern": "hush-1\\d\\d|shown-open" })),
            text("Done."),
        ];
        let run = keel_p(user, steps, h, h, &[], |_| {});
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
        let npmrc = secret(PLANTED.iter().position(|path| *path == ".npmrc").unwrap());
        let (cat, read, grep) = (&run.results[0], &run.results[1..5], &run.results[5]);
        assert!(cat.contains("shown-open") && cat.contains(&npmrc), "{user:?}: {cat}");
        assert!(read[0].contains("~/private is in the person's hidden_paths"), "{}", read[0]);
        assert!(read[0].contains("out of hidden_paths"), "{}", read[0]);
        assert!(read[1].contains("is hidden from the model"), "{}", read[1]);
        assert!(read[2].contains("shown-open") && read[3].contains(&npmrc), "{user:?}: {read:?}");
        assert!(grep.contains("notes/open.txt"), "{user:?}: {grep}");
        let sent: String = run.bodies.iter().map(Value::to_string).collect();
        for hidden in [secret(100), secret(101), secret(1)] {
            assert!(!sent.contains(&hidden), "{user:?}: {hidden} reached the model");
        }
    }
}

#[test]
fn keel_sandbox_lists_what_is_hidden_and_why() {
    let home = outside_tmp();
    let h = &home.path().canonicalize().unwrap();
    plant(h);
    std::fs::write(h.join(".config/keel/config.toml"), PERSONS_CONFIG).unwrap();
    std::fs::create_dir_all(h.join("private")).unwrap();
    let mut command = keel(h);
    command.args(["sandbox", "--workdir"]).arg(h);
    let output = output_within(&mut command, "keel sandbox");
    let said = printed(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", printed(&output.stderr));
    for line in [
        "Hidden (empty to commands; refused to read_file, write_file, edit_file, grep, glob and @):",
        "  ~/.config/keel is keel's config folder, whose file may hold the provider's api_key",
        "  ~/.local/state/keel is keel's state folder",
        "  ~/.ssh holds ssh keys",
        "  ~/.netrc holds logins that curl, git and others send",
        "  ~/private is in the person's hidden_paths",
        "  and, should they appear: ",
        "Let through by your readable_paths: ~/.npmrc",
    ] {
        assert!(said.contains(line), "{line:?} missing: {said}");
    }
    assert!(!said.contains("~/.npmrc holds"), "let through, not hidden: {said}");
}

#[test]
fn a_workspaces_own_file_neither_hides_nor_lets_through() {
    for user in User::BOTH {
        let home = outside_tmp();
        let h = &home.path().canonicalize().unwrap();
        plant(h);
        std::fs::create_dir_all(h.join(".keel")).unwrap();
        std::fs::write(
            h.join(".keel/config.toml"),
            "readable_paths = [\"~/.ssh\"]\nhidden_paths = [\"~/public\"]\n",
        )
        .unwrap();
        std::fs::create_dir_all(h.join("public")).unwrap();
        std::fs::write(h.join("public/readme.txt"), "shown-public\n").unwrap();
        let paths = [".ssh/id_ed25519", "public/readme.txt"];
        let steps = vec![
            bash(&format!("cat {} 2>&1; echo CAT-DONE", paths.join(" "))),
            calls("read_file", paths.iter().map(|path| json!({ "path": path })).collect()),
            text("Done."),
        ];
        let run = keel_p(user, steps, h, h, &[], |_| {});
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
        let stderr = run.stderr();
        let ignored =
            "ignored `hidden_paths`, `readable_paths` in the workspace's .keel/config.toml";
        assert!(stderr.contains(ignored), "{user:?}: {stderr}");
        assert!(run.results[0].contains("shown-public"), "{user:?}: {}", run.results[0]);
        assert!(run.results[1].contains("is hidden from the model"), "{}", run.results[1]);
        assert!(run.results[2].contains("shown-public"), "{user:?}: {}", run.results[2]);
        assert_nothing_reached_the_model(&run, &format!("{user:?}"));
    }
}

#[test]
fn in_the_home_folder_no_command_or_tool_plants_a_missing_credential_folder() {
    for user in User::BOTH {
        let home = outside_tmp();
        let h = &home.path().canonicalize().unwrap();
        std::fs::write(h.join(".netrc"), format!("{}\n", secret(9))).unwrap();
        let plant = "mkdir -p .ssh .aws; echo planted >> .ssh/authorized_keys; \
                     echo planted > .aws/credentials; echo PLANT-DONE";
        let steps = vec![
            bash(plant),
            tool("write_file", json!({ "path": ".ssh/authorized_keys", "content": "planted\n" })),
            tool(
                "edit_file",
                json!({ "path": ".netrc", "old_text": "hush", "new_text": "planted" }),
            ),
            text("Done."),
        ];
        let run = keel_p(user, steps, h, h, &[], |_| {});
        assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
        assert!(run.results[0].contains("PLANT-DONE"), "{user:?}: {}", run.results[0]);
        for refused in &run.results[1..3] {
            assert!(refused.contains("is hidden from the model"), "{user:?}: {refused}");
        }
        assert_eq!(std::fs::read_to_string(h.join(".netrc")).unwrap(), format!("{}\n", secret(9)));
        // The covers go with the sandbox: nothing was made, and nothing of keel's stays.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        for folder in [".ssh", ".aws"] {
            while h.join(folder).exists() && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            assert!(!h.join(folder).exists(), "{user:?}: {folder} made: {}", run.results[0]);
        }
    }
}
