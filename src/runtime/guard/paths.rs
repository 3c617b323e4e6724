//! Whether an argument can name a place that must not be deleted or overwritten.
//!
//! An argument is resolved the way the shell and the kernel will: against the folder the
//! command is in at that point (after any `cd`), `.` and `..` applied, runs of `/` merged,
//! `/proc/self/root` read as `/`. Then it is matched — globs included — against sample paths:
//! `/` and the system folders, their essential contents, home folders and their contents, and the
//! folders that hold the home folder or the workspace. A sample name that no real file has
//! (`zq9`) stands for "anything": a pattern that matches it would match whatever is there.

use super::words::{Arg, Ch};

/// Top-level folders whose deletion (or recursive change) ruins the system.
const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "mnt",
    "media",
    "snap",
    "nix",
    "Users",
    "System",
    "Library",
    "Applications",
    "private",
];
/// Names inside system folders that the system cannot do without.
const SYSTEM_CONTENTS: &[&str] = &[
    "bin", "sbin", "lib", "lib64", "share", "include", "local", "libexec", "passwd", "shadow",
    "sudoers", "fstab", "ssh", "log", "systemd", "grub",
];
/// Names in a home folder whose loss is the loss of the person's setup and work.
const HOME_CONTENTS: &[&str] =
    &[".ssh", ".gnupg", ".config", ".local", ".bashrc", ".profile", "Documents", "Desktop"];
/// Names no real file has: a pattern matching one of them matches anything.
const ANY_NAMES: &[&str] = &["zq9", ".zq9", "a", "A", "0", "_"];
/// Device files that are safe to write to.
const HARMLESS_DEVICES: &[&str] =
    &["null", "zero", "full", "stdout", "stderr", "stdin", "tty", "random", "urandom"];
/// Folders under `/dev` that hold ordinary files or descriptors.
const HARMLESS_DEVICE_DIRS: &[&str] = &["fd", "shm", "mqueue"];
/// Device names a pattern under `/dev` is tried against.
const DEVICE_SAMPLES: &[&str] =
    &["sda", "vda", "xvda", "hda", "nvme0n1", "mmcblk0", "dm-0", "md0", "loop0", "mem", "port"];
/// The most gaps of one argument that are tried both empty and filled.
const MAX_GAPS_TRIED: usize = 4;
/// What a gap is filled with when it is not empty: an ordinary name no sample matches.
const FILLED_GAP: char = '\u{1}';

/// The folder a command runs in, as far as keel can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cwd {
    Known(String),
    Unknown,
}

/// The places the judgement depends on.
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub home: Option<String>,
    pub workspace: Option<String>,
}

/// One component of a sample path.
#[derive(Debug, Clone)]
enum Seg {
    Name(String),
    /// Any single name.
    Any,
}

struct Sample {
    segs: Vec<Seg>,
    what: String,
}

/// A resolved candidate: its components, and whether a gap was taken as empty to reach it.
struct Candidate {
    parts: Vec<Vec<Ch>>,
    emptied: Vec<String>,
}

/// Why `arg`, run from any of `cwds`, names a place that must not be deleted or changed.
pub fn precious(arg: &Arg, cwds: &[Cwd], places: &Places) -> Option<String> {
    let samples = samples(places);
    for candidate in candidates(arg, cwds, places) {
        for sample in &samples {
            if matches_sample(&candidate.parts, &sample.segs) {
                return Some(describe(arg, &sample.what, &candidate.emptied));
            }
        }
    }
    None
}

/// Why writing to `arg` would harm the machine: a disk, a terminal, a kernel switch, a system
/// file.
pub fn special_write(arg: &Arg, cwds: &[Cwd], places: &Places) -> Option<String> {
    for candidate in candidates(arg, cwds, places) {
        let names: Vec<String> = candidate.parts.iter().map(|part| plain(part)).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let what = match names.as_slice() {
            ["dev", dir, ..] if HARMLESS_DEVICE_DIRS.contains(dir) => None,
            ["dev", name] if HARMLESS_DEVICES.contains(name) => None,
            ["dev", name, ..] if name.starts_with("pts") || name.starts_with("tty") => {
                Some("a terminal, where it could pose as keel or the person's shell".to_owned())
            }
            ["dev", ..] => {
                let device = candidate.parts.get(1).cloned().unwrap_or_default();
                let literal = !device.iter().any(|ch| matches!(ch, Ch::Pat('*' | '?' | '[')));
                (literal || DEVICE_SAMPLES.iter().any(|name| glob(&device, name)))
                    .then(|| "a device, overwriting the disk or memory behind it".to_owned())
            }
            ["proc", "sysrq-trigger"] => Some(
                "the kernel's SysRq trigger, which can reboot or halt the machine at once".into(),
            ),
            ["proc", "sys", ..] | ["sys", ..] => Some("a kernel setting".to_owned()),
            _ => None,
        };
        if let Some(what) = what {
            return Some(format!("`{}` is {what}", arg.source));
        }
    }
    precious(arg, cwds, places)
}

fn describe(arg: &Arg, what: &str, emptied: &[String]) -> String {
    const HINT: &str = "write `${name:?}` instead of `$name` so that bash stops when it is empty";
    let known_empty = arg.alts.iter().flatten().any(Ch::is_empty);
    match emptied.first() {
        Some(gap) if known_empty => {
            format!("`{gap}` is empty or unset here, so `{}` names {what}; {HINT}", arg.source)
        }
        Some(gap) => format!("if `{gap}` is empty, `{}` names {what}; {HINT}", arg.source),
        None => format!("`{}` names {what}", arg.source),
    }
}

/// The text of a component, gaps dropped.
fn plain(part: &[Ch]) -> String {
    part.iter()
        .filter_map(|ch| match ch {
            Ch::Lit(c) | Ch::Pat(c) => Some(*c),
            Ch::Unknown(_) | Ch::Set(_) | Ch::Empty(_) => None,
        })
        .collect()
}

fn samples(places: &Places) -> Vec<Sample> {
    let name = |text: &str| Seg::Name(text.to_owned());
    let path_segs = |path: &str| -> Vec<Seg> {
        path.split('/').filter(|part| !part.is_empty()).map(name).collect()
    };
    let mut samples = vec![Sample { segs: Vec::new(), what: "`/`, the whole system".into() }];
    for inside in ANY_NAMES {
        samples.push(Sample { segs: vec![name(inside)], what: "everything in `/`".into() });
    }
    for dir in SYSTEM_DIRS {
        samples.push(Sample { segs: vec![name(dir)], what: format!("the system folder `/{dir}`") });
        for inside in SYSTEM_CONTENTS.iter().chain(ANY_NAMES) {
            let what = if ANY_NAMES.contains(inside) {
                format!("everything in the system folder `/{dir}`")
            } else {
                format!("the system's `/{dir}/{inside}`")
            };
            samples.push(Sample { segs: vec![name(dir), name(inside)], what });
        }
    }
    for users in ["home", "Users"] {
        samples.push(Sample { segs: vec![name(users), Seg::Any], what: "a home folder".into() });
    }
    if let Some(home) = places.home.as_deref().filter(|home| !path_segs(home).is_empty()) {
        samples.push(Sample { segs: path_segs(home), what: format!("your home folder `{home}`") });
        for inside in HOME_CONTENTS.iter().chain(ANY_NAMES) {
            let mut segs = path_segs(home);
            segs.push(name(inside));
            let what = if ANY_NAMES.contains(inside) {
                "everything in your home folder".to_owned()
            } else {
                format!("`~/{inside}` in your home folder")
            };
            samples.push(Sample { segs, what });
        }
    }
    for (place, role) in [(&places.home, "your home folder"), (&places.workspace, "the workspace")]
    {
        let Some(place) = place else { continue };
        let segs = path_segs(place);
        for depth in 1..segs.len() {
            samples.push(Sample {
                segs: segs[..depth].to_vec(),
                what: format!("`/{}`, which holds {role}", place_prefix(place, depth)),
            });
        }
    }
    samples
}

fn place_prefix(path: &str, depth: usize) -> String {
    path.split('/').filter(|part| !part.is_empty()).take(depth).collect::<Vec<_>>().join("/")
}

/// Every absolute path `arg` may resolve to: each alternative, with each gap empty or filled,
/// from each possible working folder (an unknown one may be `/` or the home folder).
fn candidates(arg: &Arg, cwds: &[Cwd], places: &Places) -> Vec<Candidate> {
    let mut out = Vec::new();
    for alt in &arg.alts {
        let gaps: Vec<String> = alt
            .iter()
            .filter_map(|ch| match ch {
                Ch::Unknown(source) => Some(source.clone()),
                _ => None,
            })
            .collect();
        let tried = gaps.len().min(MAX_GAPS_TRIED);
        for mask in 0..(1u32 << tried) {
            let mut text = Vec::new();
            let mut emptied = Vec::new();
            let mut gap = 0;
            for ch in alt {
                if let Ch::Empty(source) = ch {
                    emptied.push(source.clone());
                } else if let Ch::Unknown(source) = ch {
                    let empty = gap < tried && mask & (1 << gap) != 0;
                    gap += 1;
                    if empty {
                        emptied.push(source.clone());
                    } else {
                        text.push(Ch::Lit(FILLED_GAP));
                    }
                } else if let Ch::Set(_) = ch {
                    text.push(Ch::Lit(FILLED_GAP));
                } else {
                    text.push(ch.clone());
                }
            }
            let absolute = matches!(text.first(), Some(Ch::Lit('/') | Ch::Pat('/')));
            let bases: Vec<String> = if absolute {
                vec![String::new()]
            } else {
                cwds.iter()
                    .flat_map(|cwd| match cwd {
                        Cwd::Known(path) => vec![path.clone()],
                        Cwd::Unknown => {
                            let mut guesses = vec!["/".to_owned()];
                            guesses.extend(places.home.clone());
                            guesses
                        }
                    })
                    .collect()
            };
            for base in bases {
                let mut full: Vec<Ch> = base.chars().map(Ch::Lit).collect();
                full.push(Ch::Lit('/'));
                full.extend(text.iter().cloned());
                out.push(Candidate { parts: normalise(&full), emptied: emptied.clone() });
            }
        }
    }
    out
}

/// Splits at `/`, drops `.` and empty parts, applies `..`, and reads `/proc/<pid>/root` as `/`.
fn normalise(path: &[Ch]) -> Vec<Vec<Ch>> {
    let mut parts: Vec<Vec<Ch>> = Vec::new();
    for part in path.split(|ch| matches!(ch, Ch::Lit('/') | Ch::Pat('/'))) {
        match plain(part).as_str() {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part.to_vec()),
        }
        if parts.len() == 3 && plain(&parts[0]) == "proc" && plain(&parts[2]) == "root" {
            parts.clear();
        }
    }
    parts
}

fn matches_sample(parts: &[Vec<Ch>], segs: &[Seg]) -> bool {
    parts.len() == segs.len()
        && parts.iter().zip(segs).all(|(part, seg)| match seg {
            Seg::Name(name) => glob(part, name),
            Seg::Any => !part.is_empty(),
        })
}

/// Whether the shell pattern `pattern` (unquoted `*`, `?`, `[…]`) matches `name`. A leading `.`
/// must be matched by a `.`, as in bash without `dotglob`.
pub fn glob(pattern: &[Ch], name: &str) -> bool {
    let name: Vec<char> = name.chars().collect();
    if name.first() == Some(&'.') && !matches!(pattern.first(), Some(Ch::Lit('.') | Ch::Pat('.'))) {
        return false;
    }
    glob_from(pattern, &name)
}

/// Matches with one backtracking point per `*`, in time linear in pattern times name: a
/// pattern with many stars cannot make it explode.
fn glob_from(pattern: &[Ch], name: &[char]) -> bool {
    let (mut at, mut next) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while next < name.len() {
        match pattern.get(at) {
            Some(Ch::Pat('*')) => {
                star = Some((at, next));
                at += 1;
                continue;
            }
            Some(Ch::Empty(_)) => {
                at += 1;
                continue;
            }
            Some(_) => {
                if let Some(used) = one(&pattern[at..], name[next]) {
                    at += used;
                    next += 1;
                    continue;
                }
            }
            None => {}
        }
        match star {
            Some((star_at, star_next)) => {
                at = star_at + 1;
                next = star_next + 1;
                star = Some((star_at, star_next + 1));
            }
            None => return false,
        }
    }
    pattern[at..].iter().all(|ch| matches!(ch, Ch::Pat('*') | Ch::Empty(_)))
}

/// How much of `pattern` matches the one character `c`, if it does.
fn one(pattern: &[Ch], c: char) -> Option<usize> {
    match pattern.first()? {
        Ch::Pat('?') => Some(1),
        Ch::Pat('[') => match class(&pattern[1..]) {
            Some((accepts, after)) => accepts(c).then(|| pattern.len() - after.len()),
            None => (c == '[').then_some(1),
        },
        Ch::Lit(p) | Ch::Pat(p) => (*p == c).then_some(1),
        // A filled gap is an ordinary name of its own: it matches nothing else.
        Ch::Unknown(_) | Ch::Set(_) => (c == FILLED_GAP).then_some(1),
        Ch::Empty(_) => None,
    }
}

type Accepts = Box<dyn Fn(char) -> bool>;

/// A bracket class after its `[`: what it accepts, and the pattern after its `]`.
fn class(pattern: &[Ch]) -> Option<(Accepts, &[Ch])> {
    let text: Vec<char> = pattern
        .iter()
        .map(|ch| match ch {
            Ch::Lit(c) | Ch::Pat(c) => *c,
            Ch::Unknown(_) | Ch::Set(_) | Ch::Empty(_) => FILLED_GAP,
        })
        .collect();
    let negated = matches!(text.first(), Some('!' | '^'));
    let start = usize::from(negated);
    // A `]` right after the opening bracket is a member.
    let close = text.iter().skip(start + 1).position(|c| *c == ']')? + start + 1;
    let members: Vec<char> = text[start..close].to_vec();
    let accepts = move |c: char| {
        let mut found = false;
        let mut i = 0;
        while i < members.len() {
            if i + 2 < members.len() && members[i + 1] == '-' {
                found |= members[i] <= c && c <= members[i + 2];
                i += 3;
            } else {
                found |= members[i] == c;
                i += 1;
            }
        }
        found != negated
    };
    Some((Box::new(accepts), &pattern[close + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(text: &str) -> Vec<Ch> {
        text.chars().map(Ch::Pat).collect()
    }

    #[test]
    fn globs_match_like_bash() {
        assert!(glob(&pat("*"), "usr"));
        assert!(!glob(&pat("*"), ".ssh"));
        assert!(glob(&pat(".*"), ".ssh"));
        assert!(glob(&pat("???"), "usr"));
        assert!(glob(&pat("[a-z]*"), "bin"));
        assert!(!glob(&pat("[!a-z]*"), "bin") && glob(&pat("[!a-z]*"), "Bin"));
        assert!(glob(&pat("u[s]r"), "usr"));
        assert!(!glob(&[Ch::Lit('*')], "usr"));
        assert!(glob(&pat("*a*b"), "xaab") && !glob(&pat("*a*b"), "xaa"));
        // An unclosed bracket is a character of its own; a `-` at a class's end is a member.
        assert!(glob(&pat("[x"), "[x") && !glob(&pat("[x"), "ax"));
        assert!(glob(&pat("[a-]"), "-") && glob(&pat("[a-cx-z]"), "y"));
        assert!(!glob(&pat("[b-d]"), "a") && !glob(&pat("[b-d]"), "e"));
        // A filled gap matches only itself.
        let gap = [Ch::Unknown("$x".into())];
        assert!(glob(&gap, &FILLED_GAP.to_string()) && !glob(&gap, "a"));
        let stars = pat(&"*a".repeat(200));
        assert!(!glob(&stars, &format!("{}b", "a".repeat(300))));
    }

    #[test]
    fn paths_resolve_before_they_are_judged() {
        let places = Places { home: Some("/home/me".into()), workspace: Some("/work/p".into()) };
        let ws = [Cwd::Known("/work/p".into())];
        let judge = |text: &str| {
            precious(&Arg { alts: vec![pat(text)], source: text.into() }, &ws, &places)
        };
        for dangerous in ["/", "//", "/./", "/usr/../", "/proc/self/root", "..", "../..", "/???"] {
            assert!(judge(dangerous).is_some(), "{dangerous}");
        }
        for fine in ["build", "./target", "/tmp/x", "/home/me/.cache", "/usr/share/doc/x"] {
            assert!(judge(fine).is_none(), "{fine}");
        }
    }
}
