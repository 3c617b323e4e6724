//! The settings of child agents (`task`): each child's budget — `max_child_rounds` model
//! responses, `max_child_tokens` input tokens — `max_parallel_agents`, the explorers of one
//! response that run at the same time, and `max_children_per_response`, the children one
//! response may start at all. The person's own file sets them; the workspace's file (a cloned
//! repository's) may only lower them, never raise what children may spend.

use super::{ConfigError, FileSettings};
use crate::agent::{
    Budget, DEFAULT_MAX_CHILD_ROUNDS, DEFAULT_MAX_CHILD_TOKENS, DEFAULT_MAX_CHILDREN_PER_RESPONSE,
    DEFAULT_MAX_PARALLEL_AGENTS,
};

/// What children may spend and how many run, as resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    pub budget: Budget,
    pub max_parallel_agents: usize,
    pub max_children_per_response: usize,
}

/// The children's budget, how many explore at once and how many one response may start: the
/// person's (`user`) or keel's, lowered where the workspace's file (`project`) says less.
pub(super) fn resolve(project: &FileSettings, user: &FileSettings) -> Result<Limits, ConfigError> {
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
    let per_response = at_most(
        user.max_children_per_response.map(to_u64),
        to_u64(DEFAULT_MAX_CHILDREN_PER_RESPONSE),
        project.max_children_per_response.map(to_u64),
    );
    for (name, value) in [
        ("max_child_rounds", rounds),
        ("max_child_tokens", input_tokens),
        ("max_parallel_agents", parallel),
        ("max_children_per_response", per_response),
    ] {
        if value == 0 {
            return Err(ConfigError::ZeroChildBudget(name));
        }
    }
    let count = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
    Ok(Limits {
        budget: Budget { rounds: u32::try_from(rounds).unwrap_or(u32::MAX), input_tokens },
        max_parallel_agents: count(parallel),
        max_children_per_response: count(per_response),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_may_lower_a_budget_never_raise_it() {
        let project = FileSettings {
            max_child_rounds: Some(5),
            max_child_tokens: Some(u64::MAX),
            max_children_per_response: Some(2),
            ..FileSettings::default()
        };
        let user = FileSettings {
            max_child_rounds: Some(9),
            max_child_tokens: Some(1_000),
            max_parallel_agents: Some(2),
            max_children_per_response: Some(4),
            ..FileSettings::default()
        };
        let limits = resolve(&project, &user).unwrap();
        assert_eq!(limits.budget, Budget { rounds: 5, input_tokens: 1_000 });
        assert_eq!((limits.max_parallel_agents, limits.max_children_per_response), (2, 2));
        let greedy = FileSettings {
            max_parallel_agents: Some(50),
            max_children_per_response: Some(500),
            ..FileSettings::default()
        };
        let none = FileSettings::default();
        let limits = resolve(&greedy, &none).unwrap();
        assert_eq!(limits.budget, Budget::default());
        assert_eq!(limits.max_parallel_agents, DEFAULT_MAX_PARALLEL_AGENTS);
        assert_eq!(limits.max_children_per_response, DEFAULT_MAX_CHILDREN_PER_RESPONSE);
        let person =
            FileSettings { max_children_per_response: Some(20), ..FileSettings::default() };
        let limits = resolve(&none, &person).unwrap();
        assert_eq!(limits.max_children_per_response, 20, "the person may raise it");
    }

    #[test]
    fn zero_is_refused_with_the_settings_name() {
        let zero = FileSettings { max_parallel_agents: Some(0), ..FileSettings::default() };
        let err = resolve(&FileSettings::default(), &zero).unwrap_err().to_string();
        assert!(err.starts_with("max_parallel_agents must be at least 1"), "{err}");
        let zero = FileSettings { max_children_per_response: Some(0), ..FileSettings::default() };
        let err = resolve(&zero, &FileSettings::default()).unwrap_err().to_string();
        assert!(err.starts_with("max_children_per_response must be at least 1"), "{err}");
    }
}
