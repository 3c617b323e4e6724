//! Which processes belong to a command, read from `/proc`.
//!
//! A process belongs to the supervisor's command when the supervisor is among its ancestors or
//! when it is in the supervisor's session. The supervisor is a child subreaper, so a process
//! whose parent died is re-parented to it rather than to init: the ancestry stays whole, also for
//! children that started a session of their own (`setsid`).

use std::collections::HashMap;

/// One line of `/proc/PID/stat`, as far as the supervisor needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    pid: i32,
    parent: i32,
    session: i32,
    /// A zombie (or a dead task): it holds no resources and cannot be signalled away.
    dead: bool,
}

/// Parses `/proc/PID/stat`: `pid (comm) state ppid pgrp session …`, where `comm` may hold spaces
/// and parentheses, so the fields are read after the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let (head, rest) = text.rsplit_once(')')?;
    let pid = head.split_once(' ')?.0.trim().parse().ok()?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let _group = fields.next()?;
    let session = fields.next()?.parse().ok()?;
    Some(Stat { pid, parent, session, dead: matches!(state, "Z" | "X" | "x") })
}

/// Every live process on the machine that `/proc` lets us read.
fn all_processes() -> Vec<Stat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_str().is_some_and(|name| name.parse::<i32>().is_ok()))
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter_map(|text| parse_stat(&text))
        .collect()
}

/// The live processes that descend from `root` or share its session, `root` excluded.
pub fn members(root: i32) -> Vec<i32> {
    members_of(root, &all_processes())
}

fn members_of(root: i32, processes: &[Stat]) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for process in processes {
        children.entry(process.parent).or_default().push(process.pid);
    }
    let mut found = std::collections::BTreeSet::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if found.insert(*child) {
                queue.push(*child);
            }
        }
    }
    found.extend(processes.iter().filter(|process| process.session == root).map(|p| p.pid));
    found.remove(&root);
    let dead: std::collections::HashSet<i32> =
        processes.iter().filter(|process| process.dead).map(|process| process.pid).collect();
    found.into_iter().filter(|pid| !dead.contains(pid)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let stat = parse_stat("123 (a (weird) name) S 45 123 67 0 -1 4194560 ...").unwrap();
        assert_eq!(stat, Stat { pid: 123, parent: 45, session: 67, dead: false });
        assert!(parse_stat("9 (z) Z 1 9 9 0").unwrap().dead);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn members_are_descendants_and_session_mates_alive() {
        let stat = |pid, parent, session, dead| Stat { pid, parent, session, dead };
        let processes = [
            stat(10, 1, 10, false), // the supervisor
            stat(11, 10, 10, false),
            stat(12, 11, 12, false), // left the session, still a descendant
            stat(13, 12, 12, true),  // a zombie
            stat(14, 1, 10, false),  // in the session, parent elsewhere
            stat(20, 1, 20, false),  // unrelated
        ];
        assert_eq!(members_of(10, &processes), vec![11, 12, 14]);
    }

    #[test]
    fn this_process_sees_its_own_children() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let me = i32::try_from(std::process::id()).unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        assert!(members(me).contains(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
