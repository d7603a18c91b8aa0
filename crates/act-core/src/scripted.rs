//! Scripted policies: baselines and test doubles that answer in the same tagged format a model must use.
//!
//! Expert policies live with each environment (see [`Environment::expert_action`](crate::Environment::expert_action)).

use std::collections::HashMap;

use rand::RngExt;

use crate::error::PolicyError;
use crate::parse::actions_match;
use crate::policy::{Policy, Query, QueryKind, SamplingParams};
use crate::rng::{derive_seed, rng_from_seed};
use crate::trajectory::{Action, Trajectory};

/// Formats an action as a completion: `<action>{action}</action>`.
pub fn action_completion(action: &str) -> String {
    format!("<action>{action}</action>")
}

/// Formats a choice as a completion: `<answer>{1|2}</answer>`.
pub fn answer_completion(choice: crate::Choice) -> String {
    format!("<answer>{}</answer>", choice.number())
}

/// Picks uniformly among the admissible actions; answers comparisons with a fair coin.
///
/// ```
/// use act_core::*;
/// let state = AgentState {
///     task_id: "t".into(), task: "open the door".into(), step_index: 0, history: vec![],
///     observation: "A door.".into(), admissible_actions: vec!["open door".into(), "look".into()],
/// };
/// let policy = RandomAdmissiblePolicy::new();
/// let query = Query { prompt: String::new(), kind: QueryKind::Act(state) };
/// let out = policy.generate(&[query], &SamplingParams::default().with_seed(1)).unwrap();
/// let action = parse_action(&out[0], false).unwrap().action;
/// assert!(action == "open door" || action == "look");
/// ```
#[derive(Debug, Clone, Default)]
pub struct RandomAdmissiblePolicy {
    _private: (),
}

impl RandomAdmissiblePolicy {
    /// The policy.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Policy for RandomAdmissiblePolicy {
    fn name(&self) -> &str {
        "random-admissible"
    }

    fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        queries
            .iter()
            .enumerate()
            .map(|(i, query)| {
                let mut rng = rng_from_seed(derive_seed(params.seed, i as u64));
                match &query.kind {
                    QueryKind::Act(state) => {
                        if state.admissible_actions.is_empty() {
                            return Err(self.unsupported("the state lists no admissible actions"));
                        }
                        let pick = rng.random_range(0..state.admissible_actions.len());
                        Ok(action_completion(state.admissible_actions[pick].as_str()))
                    }
                    QueryKind::Compare { .. } => {
                        let choice = if rng.random_bool(0.5) { crate::Choice::First } else { crate::Choice::Second };
                        Ok(answer_completion(choice))
                    }
                    QueryKind::Text => Err(self.unsupported("free-text queries have no admissible actions")),
                }
            })
            .collect()
    }
}

impl RandomAdmissiblePolicy {
    fn unsupported(&self, reason: &str) -> PolicyError {
        PolicyError::Unsupported { policy: self.name().to_owned(), reason: reason.to_owned() }
    }
}

/// Replays recorded trajectories: at step `i` of task `t` it answers the action the trajectory took, and in a
/// comparison it picks the action that matches the recorded one.
///
/// Useful as the expert in evaluations of recorded data, and as a test double.
#[derive(Debug, Clone)]
pub struct ReplayPolicy {
    name: String,
    actions: HashMap<String, Vec<Action>>,
}

impl ReplayPolicy {
    /// A policy replaying `trajectories`, keyed by task id (a later trajectory for the same task replaces an
    /// earlier one).
    pub fn new(trajectories: &[Trajectory]) -> Self {
        let actions = trajectories
            .iter()
            .map(|t| (t.task_id.clone(), t.steps.iter().map(|s| s.action.clone()).collect()))
            .collect();
        ReplayPolicy { name: "replay".to_owned(), actions }
    }

    /// Renames the policy (for reports).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    fn recorded(&self, task_id: &str, step: usize) -> Result<&Action, PolicyError> {
        self.actions.get(task_id).and_then(|steps| steps.get(step)).ok_or_else(|| PolicyError::Unsupported {
            policy: self.name.clone(),
            reason: format!("no recorded action for task `{task_id}` step {step}"),
        })
    }
}

impl Policy for ReplayPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        queries
            .iter()
            .map(|query| match &query.kind {
                QueryKind::Act(state) => {
                    Ok(action_completion(self.recorded(&state.task_id, state.step_index)?.as_str()))
                }
                QueryKind::Compare { state, actions } => {
                    let recorded = self.recorded(&state.task_id, state.step_index)?;
                    let choice = if actions_match(actions[0].as_str(), recorded.as_str()) {
                        crate::Choice::First
                    } else {
                        crate::Choice::Second
                    };
                    Ok(answer_completion(choice))
                }
                QueryKind::Text => Err(PolicyError::Unsupported {
                    policy: self.name.clone(),
                    reason: "free-text queries cannot be replayed".to_owned(),
                }),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AgentState, Choice, Outcome, Split, Step, parse_action, parse_choice};

    fn state(task_id: &str, step_index: usize, admissible: &[&str]) -> AgentState {
        AgentState {
            task_id: task_id.into(),
            task: "task".into(),
            step_index,
            history: vec![],
            observation: "obs".into(),
            admissible_actions: admissible.iter().map(|a| Action::from(*a)).collect(),
        }
    }

    #[test]
    fn random_policy_is_seeded_and_covers_all_actions() {
        let policy = RandomAdmissiblePolicy::new();
        let queries: Vec<Query> = (0..200)
            .map(|_| Query { prompt: String::new(), kind: QueryKind::Act(state("t", 0, &["a", "b", "c"])) })
            .collect();
        let params = SamplingParams::default().with_seed(9);
        let first = policy.generate(&queries, &params).unwrap();
        assert_eq!(first, policy.generate(&queries, &params).unwrap());
        let picked: std::collections::BTreeSet<String> =
            first.iter().map(|c| parse_action(c, false).unwrap().action).collect();
        assert_eq!(picked.len(), 3);
        assert_ne!(first, policy.generate(&queries, &params.clone().with_seed(10)).unwrap());
        // A policy without tokens completes with its texts alone.
        let completions = policy.complete(&queries[..3], &params).unwrap();
        assert_eq!(completions.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), first[..3]);
        assert!(completions.iter().all(|c| !c.has_tokens() && c.token_ids.is_empty() && c.log_probs.is_empty()));
    }

    #[test]
    fn random_policy_refuses_states_without_actions() {
        let q = Query { prompt: String::new(), kind: QueryKind::Act(state("t", 0, &[])) };
        let err = RandomAdmissiblePolicy::new().generate(&[q], &SamplingParams::default()).unwrap_err();
        assert!(err.to_string().contains("no admissible actions"));
    }

    #[test]
    fn replay_answers_recorded_actions_and_comparisons() {
        let steps = ["go north", "open door"]
            .iter()
            .map(|a| Step { observation: "o".into(), admissible_actions: vec![], action: (*a).into(), reward: 0.0 })
            .collect();
        let t = Trajectory {
            env: "toy".into(),
            task_id: "t1".into(),
            task_type: "x".into(),
            split: Split::Train,
            task: "task".into(),
            seed: 0,
            steps,
            outcome: Outcome { won: true, score: 1.0, steps_used: 2 },
        };
        let policy = ReplayPolicy::new(&[t]);
        let act = Query { prompt: String::new(), kind: QueryKind::Act(state("t1", 1, &[])) };
        let cmp = Query {
            prompt: String::new(),
            kind: QueryKind::Compare { state: state("t1", 0, &[]), actions: ["look".into(), "Go  North".into()] },
        };
        let out = policy.generate(&[act, cmp], &SamplingParams::default()).unwrap();
        assert_eq!(parse_action(&out[0], false).unwrap().action, "open door");
        assert_eq!(parse_choice(&out[1]).unwrap(), Choice::Second);
        let missing = Query { prompt: String::new(), kind: QueryKind::Act(state("t1", 5, &[])) };
        assert!(policy.generate(&[missing], &SamplingParams::default()).is_err());
    }
}
