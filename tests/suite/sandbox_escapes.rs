//! Escapes from the sandbox, each tried end to end through the keel binary against a scripted
//! model, as root (containers, CI, root VMs) and as an unprivileged user: a datagram sent to a
//! socket of the person's, the keyrings, a kernel setting written through `/proc/sys`.
//! What must stay untouched lives outside `/tmp`, which the sandbox hides.

use crate::support::files::outside_tmp;
use crate::support::keel_as::{User, give_to, keel_p};
use crate::support::llm::{Step, text, tool};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn bash_step(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

/// Runs the script `name` (written into the workspace with `body`) as the model's one command,
/// as `user`; returns what the command printed.
fn run_script(user: User, name: &str, body: &str, args: &str) -> String {
    let (home, work) = (outside_tmp(), outside_tmp());
    std::fs::write(work.path().join(name), body).unwrap();
    let steps = vec![bash_step(&format!("perl {name} {args}")), text("Done.")];
    let run = keel_p(user, steps, home.path(), work.path(), &[], |_| {});
    assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
    run.results.first().cloned().unwrap_or_else(|| panic!("{user:?}: no result: {}", run.stderr()))
}

/// Makes `path` reachable by anyone, so that only the sandbox stands in the way.
fn open_to_all(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
}

const DATAGRAM: &str = r#"use Socket;
socketpair(my $s, my $t, AF_UNIX, SOCK_STREAM, 0) or die "stream pair: $!\n";
print "STREAM-PAIR\n";
socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) or die "datagram pair: $!\n";
defined(send($a, "escaped", 0, pack_sockaddr_un($ARGV[0]))) or die "send: $!\n";
print "SENT\n";
"#;

#[test]
fn a_datagram_pair_cannot_reach_a_socket_of_the_persons() {
    for user in User::BOTH {
        let outside = outside_tmp();
        open_to_all(outside.path());
        let path = outside.path().join("journal.sock");
        let socket = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        open_to_all(&path);
        socket.set_nonblocking(true).unwrap();
        let said = run_script(user, "dgram.pl", DATAGRAM, &format!("'{}'", path.display()));
        assert!(said.contains("STREAM-PAIR"), "{user:?}: stream pairs work: {said}");
        assert!(said.contains("datagram pair: Operation not permitted"), "{user:?}: {said}");
        let mut buf = [0u8; 64];
        assert!(socket.recv(&mut buf).is_err(), "{user:?}: a datagram got through: {said}");
    }
}

#[test]
fn the_keyrings_are_out_of_reach() {
    let script = format!(
        "my ($kind, $name, $value) = (\"user\", \"keel-escape\", \"x\");\n\
         my $id = syscall({keyctl}, 0, -4, 1);\nprint \"keyctl=$id errno=\", $! + 0, \"\\n\";\n\
         my $added = syscall({add_key}, $kind, $name, $value, 1, -4);\n\
         print \"add_key=$added errno=\", $! + 0, \"\\n\";\n\
         my $asked = syscall({request_key}, $kind, $name, 0, 0);\n\
         print \"request_key=$asked errno=\", $! + 0, \"\\n\";\n",
        keyctl = nix::libc::SYS_keyctl,
        add_key = nix::libc::SYS_add_key,
        request_key = nix::libc::SYS_request_key,
    );
    for user in User::BOTH {
        let said = run_script(user, "keys.pl", &script, "");
        for call in ["keyctl", "add_key", "request_key"] {
            let line = format!("{call}=-1 errno={}", nix::libc::EPERM);
            assert!(said.contains(&line), "{user:?}: {call} was not refused: {said}");
        }
    }
}

const KERNEL_SETTINGS: &str = r#"for path in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches /proc/sysrq-trigger; do
  [ -e "$path" ] || continue
  # Opened for writing, nothing written: enough to tell.
  if (exec 3>>"$path") 2>/dev/null; then echo "WRITABLE $path"; else echo "refused $path"; fi
done
"#;

#[test]
fn kernel_settings_stay_read_only_even_as_root() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        std::fs::write(work.path().join("settings.sh"), KERNEL_SETTINGS).unwrap();
        let steps = vec![bash_step("bash settings.sh"), text("Done.")];
        let run = keel_p(user, steps, home.path(), work.path(), &[], |_| {});
        let said = run.all_results();
        assert!(said.contains("refused /proc/sys/kernel/core_pattern"), "{user:?}: {said}");
        assert!(!said.contains("WRITABLE"), "{user:?}: {said}");
    }
    // Plan mode's read-only sandbox too.
    let (home, work) = (outside_tmp(), outside_tmp());
    std::fs::write(work.path().join("settings.sh"), KERNEL_SETTINGS).unwrap();
    give_to(User::Root, work.path());
    let steps = vec![bash_step("bash settings.sh"), text("Done.")];
    let run = keel_p(User::Root, steps, home.path(), work.path(), &["--plan"], |_| {});
    let said = run.all_results();
    assert!(said.contains("refused /proc/sys/kernel/core_pattern"), "{said}");
    assert!(!said.contains("WRITABLE"), "{said}");
}

/// Writes to every descriptor above stderr the command holds, naming each.
const WRITE_INHERITED: &str = r#"for p in /proc/self/fd/*; do
  n=${p##*/}
  [ "$n" -gt 2 ] 2>/dev/null || continue
  echo "holds $n: $(readlink "$p")"
  { echo LEAKED >&"$n"; } 2>/dev/null
done
true
"#;

#[test]
fn a_descriptor_keel_inherited_reaches_no_command() {
    let runs: [(User, &[&str]); 3] =
        [(User::Root, &[]), (User::Nobody, &[]), (User::Root, &["--sandbox", "off"])];
    for (user, args) in runs {
        let (home, work, outside) = (outside_tmp(), outside_tmp(), outside_tmp());
        let log = outside.path().join("job-runner.log");
        let file = std::fs::File::options().create(true).append(true).open(&log).unwrap();
        // Without close-on-exec, as a job runner or a terminal leaves one.
        let leaked = nix::unistd::dup(&file).unwrap();
        std::fs::write(work.path().join("write.sh"), WRITE_INHERITED).unwrap();
        let steps = vec![bash_step("bash write.sh"), text("Done.")];
        let run = keel_p(user, steps, home.path(), work.path(), args, |_| {});
        drop(leaked);
        let said = run.all_results();
        assert_eq!(run.output.status.code(), Some(0), "{user:?} {args:?}: {}", run.stderr());
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "{user:?} {args:?}: {said}");
        assert!(!said.contains("job-runner.log"), "{user:?} {args:?}: {said}");
    }
}

/// A program keel starts itself, outside any sandbox: it writes to every descriptor above
/// stderr it holds, then does what the real `name` does (nothing, for `name` empty).
fn leaking(name: &str) -> String {
    let then = match name {
        "" => "exit 1".to_owned(),
        name => {
            let real = ["/usr/local/bin", "/usr/bin", "/bin"]
                .iter()
                .map(|folder| Path::new(folder).join(name))
                .find(|path| path.exists())
                .unwrap_or_else(|| panic!("{name} is installed"));
            format!("exec '{}' \"$@\"", real.display())
        }
    };
    format!("#!/bin/bash\n{{\n{WRITE_INHERITED}}} >/dev/null 2>&1\n{then}\n")
}

#[test]
fn a_descriptor_keel_inherited_reaches_no_program_keel_starts_itself() {
    for args in [&[][..], &["--sandbox", "off"][..]] {
        let (home, work, outside, tools) =
            (outside_tmp(), outside_tmp(), outside_tmp(), outside_tmp());
        let log = outside.path().join("job-runner.log");
        let file = std::fs::File::options().create(true).append(true).open(&log).unwrap();
        let leaked = nix::unistd::dup(&file).unwrap();
        // undo's snapshots run this `git`; the MCP server is this script.
        let bin = tools.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (file, body) in [("git", leaking("git")), ("leaky-server", leaking(""))] {
            std::fs::write(bin.join(file), body).unwrap();
            std::fs::set_permissions(bin.join(file), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        let config = home.path().join(".config/keel");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            "[mcp_servers.leaky]\ncommand = \"leaky-server\"\n",
        )
        .unwrap();
        let own = std::env::var_os("PATH").unwrap_or_default();
        let path =
            std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(&own)))
                .unwrap();
        let steps = vec![bash_step("echo changed > file.txt"), text("Done.")];
        let run = keel_p(User::Root, steps, home.path(), work.path(), args, |command| {
            command.env("PATH", &path);
        });
        drop(leaked);
        assert_eq!(run.output.status.code(), Some(0), "{args:?}: {}", run.stderr());
        assert!(
            run.stderr().contains("leaky"),
            "{args:?}: the server was started: {}",
            run.stderr()
        );
        let store = crate::support::bin::sessions(home.path(), work.path());
        assert!(store.dir().join("shadow.git/HEAD").is_file(), "{args:?}: no snapshot");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "{args:?}: {}", run.stderr());
    }
}

/// Starts up to `ARGV[0]` processes that sleep a while, and says how many it could.
const FORK_MANY: &str = r#"my ($wanted, $started) = ($ARGV[0], 0);
for (1 .. $wanted) {
  my $pid = fork();
  if (!defined $pid) { print "refused after $started: $!\n"; last }
  if ($pid == 0) { open STDOUT, '>', '/dev/null'; open STDERR, '>', '/dev/null'; sleep 3; exit 0 }
  $started++;
}
print "started $started of $wanted\n";
"#;

/// What `FORK_MANY` said when run for `wanted` processes as `user` under `limit` (else keel's).
fn fork_many(user: User, wanted: usize, limit: Option<&str>) -> String {
    let (home, work) = (outside_tmp(), outside_tmp());
    std::fs::write(work.path().join("fork.pl"), FORK_MANY).unwrap();
    let steps = vec![bash_step(&format!("perl fork.pl {wanted}")), text("Done.")];
    let run = keel_p(user, steps, home.path(), work.path(), &[], |command| {
        if let Some(limit) = limit {
            command.env("KEEL_MAX_PROCESSES", limit);
        }
    });
    assert_eq!(run.output.status.code(), Some(0), "{user:?}: {}", run.stderr());
    run.all_results()
}

#[test]
fn a_fork_bomb_stops_at_the_process_limit_even_as_root() {
    for user in User::BOTH {
        let said = fork_many(user, 200, Some("40"));
        let started: usize = said
            .split("refused after ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|count| count.parse().ok())
            .unwrap_or_else(|| panic!("{user:?}: nothing was refused: {said}"));
        assert!(started <= 40, "{user:?}: {said}");
        assert!(said.contains("Resource temporarily unavailable"), "{user:?}: {said}");
    }
}

#[test]
fn commands_as_root_are_born_in_one_pen_and_none_makes_a_cgroup() {
    let (home, work) = (outside_tmp(), outside_tmp());
    let look = "grep :pids: /proc/self/cgroup";
    let steps = vec![bash_step(look), bash_step(look), text("Done.")];
    let run = keel_p(User::Root, steps, home.path(), work.path(), &[], |_| {});
    assert_eq!(run.output.status.code(), Some(0), "{}", run.stderr());
    let pens: Vec<&str> = run
        .results
        .iter()
        .filter_map(|said| said.lines().find(|line| line.contains(":pids:")))
        .collect();
    assert_eq!(pens.len(), 2, "{:?}", run.results);
    if pens.iter().all(|line| !line.contains("keel-")) {
        eprintln!("SKIPPED: no cgroup v1 pids hierarchy here: {pens:?}");
        return;
    }
    // Both in keel's one pen: no cgroup was made, joined or left for either command.
    assert!(pens[0].contains("/keel-pen-"), "{pens:?}");
    assert_eq!(pens[0], pens[1]);
}

#[test]
fn builds_have_room_under_the_default_limit() {
    for user in User::BOTH {
        let said = fork_many(user, 400, None);
        assert!(said.contains("started 400 of 400"), "{user:?}: {said}");
    }
}

#[test]
fn a_process_limit_that_is_no_number_is_refused() {
    let (home, work) = (outside_tmp(), outside_tmp());
    let run = keel_p(User::Root, vec![text("Hi.")], home.path(), work.path(), &[], |command| {
        command.env("KEEL_MAX_PROCESSES", "lots");
    });
    assert_eq!(run.output.status.code(), Some(2), "{}", run.stderr());
    assert!(run.stderr().contains("KEEL_MAX_PROCESSES must be a whole number"), "{}", run.stderr());
}
