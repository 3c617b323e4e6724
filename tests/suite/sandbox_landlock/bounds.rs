//! Under Landlock, what a command cannot reach and how far it can go: keel's own process, the
//! kernel's settings, keyrings, sockets and devices out of reach; a fork bomb stopped at the process
//! bound with room left for builds; and, as root, a read-only cgroupfs said to leave commands without
//! a process bound.

use super::{NO_BWRAP, bash_step, in_mount_namespace, landlocked, without_bwrap};
use crate::support::bin;
use crate::support::files::outside_tmp;
use crate::support::keel_as::{User, keel_p};
use crate::support::llm::text;
use std::process::Command;

/// What keel's own process, the kernel's settings, the person's sockets, shared memory and
/// devices, and root's capabilities look like to a command: reached, each says so.
const REACH_OUT: &str = r#"for path in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches /proc/sysrq-trigger; do
  [ -e "$path" ] || continue
  if (exec 3>>"$path") 2>/dev/null; then echo "WRITABLE $path"; else echo "refused $path"; fi
done
for p in /proc/[0-9]*; do
  tr '\0' '\n' < $p/environ 2>/dev/null | grep -q sk-test-keel && echo "READ-KEY $p"
  { echo INJECTED > $p/fd/1; } 2>/dev/null
done
for p in /proc/[0-9]*; do
  tr '\0' ' ' < $p/cmdline 2>/dev/null | grep -q -- '-p go' && kill -0 ${p#/proc/} 2>/dev/null && echo "SIGNALLED KEEL"
done
perl -e 'use Socket; socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) or print "datagram refused: $!\n"'
perl -e 'my $id = shmget(0, 1024, 0600); print defined $id ? "SHARED MEMORY $id\n" : "shm refused: $!\n"'
for device in /dev/kmsg /dev/loop0 /dev/console; do
  [ -e "$device" ] && (exec 3<"$device") 2>/dev/null && echo "OPENED $device"
done
(: > /dev/shm/keel-reach) 2>/dev/null && echo "OPENED /dev/shm"
grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status
perl -e 'my $r = syscall(KEYCTL, 0, -4, 1); print "keyctl=$r errno=", $! + 0, "\n"'
echo finished
"#;

#[test]
fn keels_process_kernel_settings_keyrings_sockets_and_devices_stay_out_of_reach() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        let script = REACH_OUT.replace("KEYCTL", &nix::libc::SYS_keyctl.to_string());
        std::fs::write(work.path().join("reach.sh"), script).unwrap();
        let steps = vec![bash_step("bash reach.sh"), text("All done.")];
        let run = keel_p(user, steps, home.path(), work.path(), &[], |command| {
            without_bwrap(command);
            command.env("ANTHROPIC_API_KEY", "sk-test-keel");
        });
        let said = run.all_results();
        assert!(said.contains("finished"), "{user:?}: {said}");
        assert!(said.contains("refused /proc/sys/kernel/core_pattern"), "{user:?}: {said}");
        assert!(!said.contains("WRITABLE"), "{user:?}: {said}");
        assert!(!said.contains("READ-KEY"), "{user:?}: {said}");
        assert!(said.contains("datagram refused: Operation not permitted"), "{user:?}: {said}");
        assert!(said.contains("shm refused: Operation not permitted"), "{user:?}: {said}");
        assert!(!said.contains("OPENED"), "{user:?}: {said}");
        assert!(!said.contains("SIGNALLED KEEL"), "{user:?}: {said}");
        let capabilities: Vec<&str> = said.lines().filter(|line| line.starts_with("Cap")).collect();
        assert_eq!(capabilities.len(), 4, "{user:?}: {said}");
        for line in capabilities {
            // The bounding set matters to root alone: no one else gains from it on `exec`.
            let held = user == User::Root || !line.starts_with("CapBnd");
            let none = line.ends_with("0000000000000000");
            assert!(none || !held, "{user:?}: no capability left: {line}");
        }
        assert!(said.contains(&format!("keyctl=-1 errno={}", nix::libc::EPERM)), "{said}");
        assert_eq!(bin::text(&run.output.stdout), "All done.\n", "{user:?}");
    }
}

/// What `FORK_MANY` says, started for `wanted` processes under the bound `limit`.
const FORK_MANY: &str = r#"my ($wanted, $started) = ($ARGV[0], 0);
for (1 .. $wanted) {
  my $pid = fork();
  if (!defined $pid) { print "refused after $started: $!\n"; last }
  if ($pid == 0) { open STDOUT, '>', '/dev/null'; open STDERR, '>', '/dev/null'; sleep 3; exit 0 }
  $started++;
}
print "started $started of $wanted\n";
"#;

#[test]
fn a_fork_bomb_stops_at_the_bound_and_builds_have_room() {
    for user in User::BOTH {
        let (home, work) = (outside_tmp(), outside_tmp());
        std::fs::write(work.path().join("fork.pl"), FORK_MANY).unwrap();
        let steps = vec![bash_step("perl fork.pl 200"), text("Done.")];
        let run = keel_p(user, steps, home.path(), work.path(), &[], |command| {
            without_bwrap(command);
            command.env("KEEL_MAX_PROCESSES", "40");
        });
        let said = run.all_results();
        let started: usize = said
            .split("refused after ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|count| count.parse().ok())
            .unwrap_or_else(|| panic!("{user:?}: nothing was refused: {said}"));
        // As root the pids cgroup counts the command alone; otherwise the person's processes
        // as it started are added, and those of keel's threads that end meanwhile free a few.
        assert!(started <= 45, "{user:?}: {said}");
        assert!(said.contains("Resource temporarily unavailable"), "{user:?}: {said}");

        let (home, work) = (outside_tmp(), outside_tmp());
        std::fs::write(work.path().join("fork.pl"), FORK_MANY).unwrap();
        let run = landlocked(user, home.path(), work.path(), &["perl fork.pl 400"], &[]);
        assert!(run.results[0].contains("started 400 of 400"), "{user:?}: {}", run.results[0]);
    }
}

/// The mount points of every cgroup hierarchy this process sees.
fn cgroup_mounts() -> Vec<String> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    mounts
        .lines()
        .filter_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            let kind = fs.split_whitespace().next()?;
            matches!(kind, "cgroup" | "cgroup2").then(|| mount.split_whitespace().nth(4))?
        })
        .map(str::to_owned)
        .collect()
}

/// keel run as root in a mount namespace of its own where every cgroup hierarchy is read-only,
/// as in a typical container.
fn in_read_only_cgroupfs(keel: &mut Command) -> Command {
    let remounts: String = cgroup_mounts()
        .iter()
        .map(|point| format!("mount -o remount,bind,ro '{point}' && "))
        .collect();
    in_mount_namespace(keel, &remounts)
}

#[test]
fn a_read_only_cgroupfs_is_said_to_leave_commands_without_a_process_bound() {
    if !nix::unistd::geteuid().is_root() || cgroup_mounts().is_empty() {
        eprintln!("SKIPPED: needs root and a cgroup hierarchy");
        return;
    }
    for bwrap in [None, Some(NO_BWRAP)] {
        let (home, work) = (outside_tmp(), outside_tmp());
        let mut keel = bin::keel(home.path());
        keel.args(["sandbox", "--workdir"]).arg(work.path());
        if let Some(bwrap) = bwrap {
            keel.env("KEEL_BWRAP", bwrap);
        }
        let output = bin::output_within(&mut in_read_only_cgroupfs(&mut keel), "keel sandbox");
        let report = bin::text(&output.stdout);
        assert!(output.status.success(), "{bwrap:?}: {report}{}", bin::text(&output.stderr));
        assert!(report.contains("No bound on a command's processes"), "{bwrap:?}: {report}");
        assert!(report.contains("Read-only file system"), "{bwrap:?}: why: {report}");

        // `-p` says so once, and commands still run.
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let steps = vec![bash_step("echo ran"), text("Done.")];
        let server =
            runtime.block_on(crate::support::llm::FakeLlm::start(steps, std::time::Duration::ZERO));
        let mut keel = bin::keel(home.path());
        keel.args(["-p", "go", "--approval", "auto", "--workdir"])
            .arg(work.path())
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base());
        if let Some(bwrap) = bwrap {
            keel.env("KEEL_BWRAP", bwrap);
        }
        let output = bin::output_within(&mut in_read_only_cgroupfs(&mut keel), "keel -p");
        let stderr = bin::text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{bwrap:?}: {stderr}");
        let told = "keel: runs commands without a bound on their processes";
        assert_eq!(stderr.matches(told).count(), 1, "{bwrap:?}: {stderr}");
        let results = crate::support::keel_as::tool_results(&runtime.block_on(server.bodies()));
        assert!(results[0].contains("ran"), "{bwrap:?}: {results:?}");
    }
    // Where the cgroupfs is writable, nothing is said.
    if keel::runtime::supervisor::can_bound_processes(1).is_err() {
        return;
    }
    let (home, work) = (outside_tmp(), outside_tmp());
    let mut keel = bin::keel(home.path());
    keel.args(["sandbox", "--workdir"]).arg(work.path());
    let report = bin::text(&bin::output_within(&mut keel, "keel sandbox").stdout);
    assert!(!report.contains("No bound"), "{report}");
}
