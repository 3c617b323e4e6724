//! A trusted workspace hook that imports, sources, `cd`s into, `make`s, `python3 -m`s or `npx`es a
//! file a sandboxed command rewrote runs that file only in the sandbox: the payloads in each
//! language, the ways a hook reaches them, and the test over every way.

use super::{SECRET, SYSTEM_PATH, Setting, bash, everything, shell_payload};
use crate::support::bin;
use crate::support::keel_as::User;
use crate::support::llm::text;
use std::path::Path;
use std::process::Command;

/// The same, in Python.
fn python_payload(name: &str, outside: &Path) -> String {
    format!(
        "import os, sys\n\
         def check():\n\
         \x20   open(os.path.join(os.environ['CLAUDE_PROJECT_DIR'], 'ran-{name}'), 'w').write('ran')\n\
         \x20   try:\n\
         \x20       open('{}', 'w').write('escaped')\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         \x20   sys.stderr.write('{name} TOKEN=[' + os.environ.get('GITHUB_TOKEN', '') + ']')\n\
         \x20   sys.exit(2)\n\
         check()\n",
        outside.join(format!("escaped-{name}")).display()
    )
}

/// The same, in JavaScript.
fn node_payload(name: &str, outside: &Path) -> String {
    format!(
        "#!/usr/bin/env node\nconst fs = require('fs');\n\
         fs.writeFileSync(process.env.CLAUDE_PROJECT_DIR + '/ran-{name}', 'ran');\n\
         try {{ fs.writeFileSync('{}', 'escaped'); }} catch (e) {{}}\n\
         process.stderr.write('{name} TOKEN=[' + (process.env.GITHUB_TOKEN || '') + ']');\n\
         process.exit(2);\n",
        outside.join(format!("escaped-{name}")).display()
    )
}

/// Whether `program` can be run here; says why not when it cannot.
fn have(program: &str) -> bool {
    let found = std::env::split_paths(SYSTEM_PATH).any(|dir| dir.join(program).is_file());
    if !found {
        eprintln!("skipped the `{program}` case: `{program}` is not installed on {SYSTEM_PATH}");
    }
    found
}

/// One way a hook runs a file its command does not name: what it runs when trusted, the files
/// as they were trusted, and the file a command then rewrites with what.
struct Variant {
    name: &'static str,
    command: &'static str,
    files: Vec<(&'static str, String)>,
    rewritten: (&'static str, String),
}

fn variants(setting: &Setting) -> Vec<Variant> {
    let out = setting.outside.path();
    let mut all = vec![
        Variant {
            name: "source",
            command: "bash hooks/check.sh",
            files: vec![
                ("hooks/check.sh", "cd \"$(dirname \"$0\")\" && source ./lib.sh && check\n".into()),
                ("hooks/lib.sh", "check() { :; }\n".into()),
            ],
            rewritten: ("hooks/lib.sh", shell_payload("source", out)),
        },
        Variant {
            name: "cd",
            command: "cd hooks && ./x",
            files: vec![("hooks/x", "#!/bin/bash\ntrue\n".into())],
            rewritten: ("hooks/x", format!("#!/bin/bash\n{}", shell_payload("cd", out))),
        },
        Variant {
            name: "toplevel",
            command: "$(git rev-parse --show-toplevel)/hooks/top.sh",
            files: vec![("hooks/top.sh", "#!/bin/bash\ntrue\n".into())],
            rewritten: ("hooks/top.sh", format!("#!/bin/bash\n{}", shell_payload("toplevel", out))),
        },
    ];
    if have("python3") {
        all.push(Variant {
            name: "import",
            command: "python3 hooks/lint.py",
            files: vec![
                ("hooks/lint.py", "import helper\n".into()),
                ("hooks/helper.py", "pass\n".into()),
            ],
            rewritten: ("hooks/helper.py", python_payload("import", out)),
        });
        all.push(Variant {
            name: "module",
            command: "python3 -m tools.lint",
            files: vec![("tools/lint.py", "pass\n".into())],
            rewritten: ("tools/lint.py", python_payload("module", out)),
        });
    }
    if have("make") {
        let recipe =
            |body: &str| format!("check:\n\t@{}\n", body.replace('\n', "; ").replace("$", "$$"));
        all.push(Variant {
            name: "make",
            command: "make -s check",
            files: vec![("Makefile", recipe("true"))],
            rewritten: ("Makefile", recipe(&shell_payload("make", out))),
        });
    }
    if have("node") && have("npx") {
        all.push(Variant {
            name: "npx",
            command: "npx --no lintme",
            files: vec![
                ("package.json", "{\"name\": \"w\", \"version\": \"1.0.0\"}\n".into()),
                ("node_modules/.bin/lintme", "#!/usr/bin/env node\n".into()),
            ],
            rewritten: ("node_modules/.bin/lintme", node_payload("npx", out)),
        });
    }
    all
}

#[test]
fn a_trusted_workspace_hook_runs_what_a_command_rewrote_only_in_the_sandbox() {
    for user in User::BOTH {
        let setting = Setting::new();
        let variants = variants(&setting);
        for variant in &variants {
            for (path, body) in &variant.files {
                setting.file(path, body);
            }
            let (path, body) = &variant.rewritten;
            setting.file(&format!("rewrites/{path}"), body);
        }
        let git = Command::new("git").args(["init", "-q"]).current_dir(setting.work()).status();
        assert!(git.unwrap().success());
        let commands: Vec<&str> = variants.iter().map(|variant| variant.command).collect();
        setting.workspace_hooks("PostToolUse", Some("Bash"), &commands);
        setting.hooks(user, "trust");
        let listed = bin::text(&setting.hooks(user, "list").stdout);
        assert!(
            listed.contains(
                "cd hooks && ./x (timeout 60 s) — the workspace's .keel/config.toml, trusted, \
                 runs in the sandbox, as commands do\n"
            ),
            "{user:?}: {listed}"
        );

        // One sandboxed command rewrites every file the hooks run without naming it.
        let rewrite = variants
            .iter()
            .map(|variant| format!("cp rewrites/{0} {0}", variant.rewritten.0))
            .collect::<Vec<_>>()
            .join(" && ");
        let run = setting.run(user, vec![bash(&rewrite), text("Done.")], &[], SYSTEM_PATH);
        let said = everything(&run);
        for variant in &variants {
            let name = variant.name;
            assert!(
                setting.work().join(format!("ran-{name}")).exists(),
                "{user:?} {name}: the rewritten file did not run at all: {said}"
            );
            assert!(
                !setting.outside(&format!("escaped-{name}")).exists(),
                "{user:?} {name}: a workspace hook wrote outside the workspace"
            );
            assert!(said.contains(&format!("{name} TOKEN=[]")), "{user:?} {name}: {said}");
        }
        assert!(!said.contains(SECRET), "{user:?}: the token reached the model: {said}");
    }
}
