//! The settings of child agents (`task`): each child's budget — `max_child_rounds` model
//! responses, `max_child_tokens` input tokens — and `max_parallel_agents`, the explorers of one
//! response that run at the same time. The person's own file sets them; the workspace's file (a
//! cloned repository's) may only lower them, never raise what a child may spend.

use super::{ConfigError, FileSettings};
use crate::agent::{
    Budget, DEFAULT_MAX_CHILD_ROUNDS, DEFAULT_MAX_CHILD_TOKENS, DEFAULT_MAX_PARALLEL_AGENTS,
};

/// The children's budget and how many explore at once: the person's (`user`) or keel's, lowered
/// where the workspace's file (`project`) says less.
pub(super) fn resolve(
    project: &FileSettings,
    user: &FileSettings,
) -> Result<(Budget, usize), ConfigError> {
    let at_most = |person: Option<u64>, default: u64, project: Option<u64>| {
        let person = person.unwrap_or(default);
        project.map_or(person, |project| project.min(person))
    };
    let rounds = at_most(
        user.max_child_rounds.map(u64::from),
        u64::from(DEFAULT_MAX_CHILD_ROUNDS),
        project.max_child_rounds.map(u64::from),
    );
    let input_tokens =
        at_most(user.max_child_tokens, DEFAULT_MAX_CHILD_TOKENS, project.max_child_tokens);
    let to_u64 = |count: usize| u64::try_from(count).unwrap_or(u64::MAX);
    let parallel = at_most(
        user.max_parallel_agents.map(to_u64),
        to_u64(DEFAULT_MAX_PARALLEL_AGENTS),
        project.max_parallel_agents.map(to_u64),
    );
    for (name, value) in [
        ("max_child_rounds", rounds),
        ("max_child_tokens", input_tokens),
        ("max_parallel_agents", parallel),
    ] {
        if value == 0 {
            return Err(ConfigError::ZeroChildBudget(name));
        }
    }
    let rounds = u32::try_from(rounds).unwrap_or(u32::MAX);
    let parallel = usize::try_from(parallel).unwrap_or(usize::MAX);
    Ok((Budget { rounds, input_tokens }, parallel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_may_lower_a_budget_never_raise_it() {
        let project = FileSettings {
            max_child_rounds: Some(5),
            max_child_tokens: Some(u64::MAX),
            ..FileSettings::default()
        };
        let user = FileSettings {
            max_child_rounds: Some(9),
            max_child_tokens: Some(1_000),
            max_parallel_agents: Some(2),
            ..FileSettings::default()
        };
        let (budget, parallel) = resolve(&project, &user).unwrap();
        assert_eq!((budget, parallel), (Budget { rounds: 5, input_tokens: 1_000 }, 2));
        let greedy = FileSettings { max_parallel_agents: Some(50), ..FileSettings::default() };
        let none = FileSettings::default();
        let (budget, parallel) = resolve(&greedy, &none).unwrap();
        assert_eq!((budget, parallel), (Budget::default(), DEFAULT_MAX_PARALLEL_AGENTS));
    }

    #[test]
    fn zero_is_refused_with_the_settings_name() {
        let zero = FileSettings { max_parallel_agents: Some(0), ..FileSettings::default() };
        let err = resolve(&FileSettings::default(), &zero).unwrap_err().to_string();
        assert!(err.starts_with("max_parallel_agents must be at least 1"), "{err}");
    }
}
