//! Early Experience's implicit world modelling (IWM; Zhang et al. 2025, arXiv 2510.08558), the ACT paper's
//! reflection baseline: at each state of an expert episode, π₀ proposes alternative actions, each is taken in the
//! environment from that exact state ([`act_rollout::branch_outcomes`]), and a stage trains the policy to predict
//! the observation that follows, for the alternatives and for the expert's own action, before IL.
//!
//! For an agent that must read which receptacles a room has and what lies on them, the world model is the same
//! skill asked another way: "go to shelf 3" in a room with two shelves is answered "Nothing happens.", and `take
//! mug 1 from sinkbasin 1` only works where the observation showed a mug 1. So π₀'s alternatives are kept whether
//! or not they are admissible (ours: the paper does not say; [`crate::config::WorldModelConfig::keep_inadmissible`]).

use std::collections::HashMap;

use act_core::{EnvironmentFactory, Policy, Prompter, SftSample, Trajectory};
use act_pairs::{PairBuilder, PairConfig};
use act_rollout::{Branch, BranchRequest, branch_outcomes};

use crate::stages::BoxError;

/// The world-model branches of `games`: π₀'s alternatives (`pairs` settings: K samples per state, its filters and
/// `max_pairs_per_state`) and, with `include_expert`, the expert's action at every state, each taken at its state.
pub fn world_model_branches<F: EnvironmentFactory, P: Policy>(
    factory: &F,
    games: &[Trajectory],
    pairs: PairConfig,
    policy: P,
    include_expert: bool,
) -> Result<Vec<Branch>, BoxError> {
    let index: HashMap<&str, usize> = games.iter().enumerate().map(|(i, t)| (t.task_id.as_str(), i)).collect();
    let mut requests = Vec::new();
    if include_expert {
        for (i, game) in games.iter().enumerate() {
            requests.extend(game.steps.iter().enumerate().map(|(s, step)| BranchRequest {
                trajectory: i,
                step_index: s,
                action: step.action.clone(),
            }));
        }
    }
    for pair in PairBuilder::new(pairs, policy)?.build(games, 0)?.pairs {
        let trajectory = *index
            .get(pair.provenance.task_id.as_str())
            .ok_or_else(|| format!("a pair names task `{}`, which is not among the games", pair.provenance.task_id))?;
        requests.push(BranchRequest { trajectory, step_index: pair.provenance.step_index, action: pair.alternative });
    }
    Ok(branch_outcomes(factory, games, &requests)?)
}

/// IWM's training samples: for each branch, the world-modelling prompt of its state (the state as IL's prompts show
/// it, `history_len` earlier steps) and action, completed by the observation that followed.
pub fn world_model_samples(
    games: &[Trajectory],
    branches: &[Branch],
    prompter: &Prompter,
    history_len: usize,
) -> Result<Vec<SftSample>, BoxError> {
    let by_id: HashMap<&str, &Trajectory> = games.iter().map(|t| (t.task_id.as_str(), t)).collect();
    branches
        .iter()
        .map(|branch| {
            let state = by_id
                .get(branch.task_id.as_str())
                .and_then(|t| t.state_at(branch.step_index, history_len))
                .ok_or_else(|| format!("branch of `{}` step {}: no such state", branch.task_id, branch.step_index))?;
            Ok(prompter.world_model_sample(&state, &branch.action, branch.observation.as_str()))
        })
        .collect()
}

/// How many branches' actions were admissible at their state, and how many were answered "Nothing happens."
/// (ALFWorld's answer to an action it does not accept), for the stage's progress line.
pub fn branch_summary(branches: &[Branch]) -> String {
    let inadmissible = branches.iter().filter(|b| b.admissible == Some(false)).count();
    let nothing = branches.iter().filter(|b| b.observation.as_str() == "Nothing happens.").count();
    format!(
        "{} branches, {inadmissible} of them inadmissible actions, {nothing} answered \"Nothing happens.\"",
        branches.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_alfworld::{AlfworldConfig, AlfworldFactory};
    use act_core::{PromptConfig, RandomAdmissiblePolicy, Split};

    #[test]
    fn branches_record_what_followed_and_samples_complete_with_it() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(4));
        let games = crate::pipeline::expert_trajectories(&factory, Split::Train, 3, 5).unwrap();
        let pairs = PairConfig::default().with_k(2).with_seed(1).with_parallel(false).with_progress(false);
        let branches =
            world_model_branches(&factory, &games, pairs.clone(), RandomAdmissiblePolicy::new(), true).unwrap();
        let states: usize = games.iter().map(|t| t.steps.len()).sum();
        assert!(branches.len() > states, "{} branches for {states} expert states", branches.len());
        // The expert's branches come first, in order: each next observation is the episode's next one.
        let mut expert = branches.iter();
        for game in &games {
            for (s, step) in game.steps.iter().enumerate() {
                let branch = expert.next().unwrap();
                assert_eq!((branch.task_id.as_str(), branch.step_index), (game.task_id.as_str(), s));
                assert_eq!(branch.action, step.action);
                if let Some(next) = game.steps.get(s + 1) {
                    assert_eq!(branch.observation, next.observation);
                }
            }
        }
        // An alternative's observation is what a fresh environment replayed to that state answers.
        let alternative = &branches[states];
        let game = games.iter().find(|g| g.task_id == alternative.task_id).unwrap();
        let mut env = act_core::EnvironmentFactory::make(&factory).unwrap();
        let replayed = act_core::Environment::reset(&mut env, &act_core::TaskRef::Id(game.task_id.clone()), game.seed);
        assert!(replayed.is_ok());
        for step in &game.steps[..alternative.step_index] {
            act_core::Environment::step(&mut env, step.action.as_str()).unwrap();
        }
        let answer = act_core::Environment::step(&mut env, alternative.action.as_str()).unwrap();
        assert_eq!(answer.observation, alternative.observation);

        let prompter =
            Prompter::new(crate::prompts::prompt_config(crate::config::PromptStyle::Conversation, "ALFWorld", false))
                .unwrap();
        let samples = world_model_samples(&games, &branches, &prompter, 32).unwrap();
        assert_eq!(samples.len(), branches.len());
        for (sample, branch) in samples.iter().zip(&branches) {
            assert_eq!(
                sample.completion,
                branch.observation.as_str(),
                "the completion is exactly the next observation"
            );
            assert!(sample.prompt.ends_with(&format!("after: {}\nwhat happens?", branch.action)), "{}", sample.prompt);
        }
        assert!(branch_summary(&branches).starts_with(&format!("{} branches", branches.len())));
        let default = Prompter::new(PromptConfig::default()).unwrap();
        let other = world_model_samples(&games[..1], &branches, &default, 2);
        assert!(other.is_err(), "a branch of a game not given is an error");
    }
}
