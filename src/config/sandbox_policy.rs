//! The sandbox settings (`sandbox`, `network`, `writable_roots`) after every source has had its
//! say. As with approvals, the workspace's own file may only tighten: a stricter `sandbox` wins,
//! even over the flag, `network = false` turns the network off, and `writable_roots` or
//! `network = true` there are ignored, with a word.

use super::trust::Ignored;
use super::{FileSettings, FlagSettings};
use crate::runtime::sandbox::Policy;

/// The policy from the flags, the person's file and the project's file, and what of the
/// project's file was left out.
pub fn resolve(
    flags: &FlagSettings,
    project: &FileSettings,
    user: &FileSettings,
) -> (Policy, Vec<Ignored>) {
    let mut ignored = Vec::new();
    let person = flags.sandbox.or(user.sandbox).unwrap_or_default();
    let mode = match project.sandbox {
        Some(asked) if asked.looseness() < person.looseness() => asked,
        Some(asked) => {
            if asked != person {
                ignored.push(Ignored::LooserSandbox { asked, kept: person });
            }
            person
        }
        None => person,
    };
    let person_network = flags.network.or(user.network).unwrap_or(false);
    let network = match project.network {
        Some(false) => false,
        Some(true) => {
            if !person_network {
                ignored.push(Ignored::Key("network"));
            }
            person_network
        }
        None => person_network,
    };
    if project.writable_roots.is_some() {
        ignored.push(Ignored::Key("writable_roots"));
    }
    let writable_roots = user.writable_roots.clone().unwrap_or_default();
    (Policy { mode, network, writable_roots, ..Policy::default() }, ignored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sandbox::Mode;

    fn file(sandbox: Option<Mode>, network: Option<bool>) -> FileSettings {
        FileSettings { sandbox, network, ..FileSettings::default() }
    }

    #[test]
    fn a_project_only_tightens() {
        let flags = FlagSettings::default();
        let none = FileSettings::default();
        let (policy, ignored) = resolve(&flags, &file(Some(Mode::Off), Some(true)), &none);
        assert_eq!((policy.mode, policy.network), (Mode::Workspace, false));
        assert_eq!(ignored.len(), 2);
        let (policy, ignored) = resolve(&flags, &file(Some(Mode::ReadOnly), None), &none);
        assert_eq!(policy.mode, Mode::ReadOnly);
        assert!(ignored.is_empty());
        let flags = FlagSettings { network: Some(true), ..FlagSettings::default() };
        let (policy, _) = resolve(&flags, &file(None, Some(false)), &none);
        assert!(!policy.network);
        let roots = FileSettings { writable_roots: Some(vec!["/x".into()]), ..none.clone() };
        let (policy, ignored) = resolve(&flags, &roots, &roots);
        assert_eq!(policy.writable_roots, vec![std::path::PathBuf::from("/x")]);
        assert_eq!(ignored, vec![Ignored::Key("writable_roots")]);
    }
}
