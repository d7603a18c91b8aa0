//! Early Experience's implicit world modelling (IWM; Zhang et al. 2025, arXiv 2510.08558), the ACT paper's
//! reflection baseline: at each state of an expert episode, π₀ proposes alternative actions, each is taken in the
//! environment from that exact state ([`act_rollout::branch_outcomes`]), and a stage trains the policy to predict
//! the observation that follows, for the alternatives and for the expert's own action, before IL.
//!
//! For an agent that must read which receptacles a room has and what lies on them, the world model is the same
//! skill asked another way: "go to shelf 3" in a room with two shelves is answered "Nothing happens.", and `take
//! mug 1 from sinkbasin 1` only works where the observation showed a mug 1. So π₀'s alternatives are kept whether
//! or not they are admissible (ours: the paper does not say; [`crate::config::WorldModelConfig::keep_inadmissible`]).
//!
//! Self-reflection (SR), the paper's other variant and the row of the ACT paper's table: from the same branches, π₀
//! reads the state, the expert's action and what followed it, an alternative and what followed that, and writes
//! why the expert's action is better ([`reflections`]); a stage from π₀ then learns to write that rationale before
//! the expert's action in the state's reasoning prompt ([`reflection_samples`]), before IL (the method
//! `SR -> IL`, with IL's budget, placed as ACT is in `ACT -> IL`).

use std::collections::HashMap;

use act_core::{
    Action, EnvironmentFactory, Policy, Prompter, Query, SamplingParams, SftSample, Trajectory, derive_seed,
};
use act_pairs::{PairBuilder, PairConfig};
use act_rollout::{Branch, BranchRequest, branch_outcomes};
use serde::{Deserialize, Serialize};

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
    let by_id = games_by_id(games);
    branches
        .iter()
        .map(|branch| {
            let state = state_of(&by_id, "branch", &branch.task_id, branch.step_index, history_len)?;
            Ok(prompter.world_model_sample(&state, &branch.action, branch.observation.as_str()))
        })
        .collect()
}

/// `games` by task id.
fn games_by_id(games: &[Trajectory]) -> HashMap<&str, &Trajectory> {
    games.iter().map(|t| (t.task_id.as_str(), t)).collect()
}

/// The state before step `step` of game `task_id`, with `history_len` earlier steps; an error naming the `what`
/// (a branch, a reflection) that asked for a state the games lack.
fn state_of(
    by_id: &HashMap<&str, &Trajectory>,
    what: &str,
    task_id: &str,
    step: usize,
    history_len: usize,
) -> Result<act_core::AgentState, BoxError> {
    by_id
        .get(task_id)
        .and_then(|t| t.state_at(step, history_len))
        .ok_or_else(|| format!("{what} of `{task_id}` step {step}: no such state").into())
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

/// One self-reflection: a state of an expert episode, the expert's action and an alternative with what followed
/// each, and the rationale π₀ wrote for the expert's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reflection {
    /// The episode's task id.
    pub task_id: String,
    /// The state: the one before step `step_index` of that episode.
    pub step_index: usize,
    /// The expert's action there.
    pub expert: Action,
    /// What followed it.
    pub outcome: String,
    /// The alternative.
    pub alternative: Action,
    /// What followed that.
    pub alternative_outcome: String,
    /// What π₀ wrote, cut at the end of its think block (empty when it wrote nothing).
    pub rationale: String,
}

/// How many reflection prompts are generated per call (each call samples from its own seed).
const REFLECTION_BATCH: usize = 256;

/// π₀'s rationales for every alternative among `branches` (made by [`world_model_branches`] with the expert's
/// actions included): the prompt ([`Prompter::reflect`] of `prompter`, the state as IL's prompts show it,
/// `history_len` earlier steps) shows the expert's branch and the alternative's; the completion is sampled with
/// `sampling` (stopping at `</think>`, seeded per batch from `sampling.seed`) and cleaned by [`rationale_of`].
pub fn reflections<P: Policy>(
    games: &[Trajectory],
    branches: &[Branch],
    prompter: &Prompter,
    history_len: usize,
    policy: &P,
    sampling: &SamplingParams,
) -> Result<Vec<Reflection>, BoxError> {
    let by_id = games_by_id(games);
    let expert_action = |b: &Branch| -> Option<&Action> {
        by_id.get(b.task_id.as_str()).and_then(|t| t.steps.get(b.step_index)).map(|s| &s.action)
    };
    let expert: HashMap<(&str, usize), &Branch> = branches
        .iter()
        .filter(|b| expert_action(b) == Some(&b.action))
        .map(|b| ((b.task_id.as_str(), b.step_index), b))
        .collect();
    let mut pending = Vec::new();
    for branch in branches.iter().filter(|b| expert_action(b).is_some_and(|a| *a != b.action)) {
        let key = (branch.task_id.as_str(), branch.step_index);
        let Some(expert) = expert.get(&key) else {
            return Err(format!(
                "no branch of the expert's action at state {} of `{}`: build the branches with the expert's actions",
                branch.step_index, branch.task_id
            )
            .into());
        };
        let state = state_of(&by_id, "branch", &branch.task_id, branch.step_index, history_len)?;
        let prompt = prompter.reflect(
            &state,
            &expert.action,
            expert.observation.as_str(),
            &branch.action,
            branch.observation.as_str(),
        );
        pending.push((*expert, branch, prompt));
    }
    let mut out = Vec::with_capacity(pending.len());
    for (n, chunk) in pending.chunks(REFLECTION_BATCH).enumerate() {
        let queries: Vec<Query> = chunk.iter().map(|(_, _, prompt)| Query::text(prompt.clone())).collect();
        let params = sampling.clone().with_seed(derive_seed(sampling.seed, n as u64));
        let texts = policy.generate(&queries, &params)?;
        out.extend(chunk.iter().zip(texts).map(|((expert, branch, _), text)| Reflection {
            task_id: branch.task_id.clone(),
            step_index: branch.step_index,
            expert: expert.action.clone(),
            outcome: expert.observation.to_string(),
            alternative: branch.action.clone(),
            alternative_outcome: branch.observation.to_string(),
            rationale: rationale_of(&text),
        }));
    }
    Ok(out)
}

/// The rationale in a generated reflection: the text without think tags (up to a closing `</think>`), trimmed.
pub fn rationale_of(text: &str) -> String {
    let text = text.split("</think>").next().unwrap_or_default();
    text.replace("<think>", " ").trim().to_owned()
}

/// SR's training samples: for each reflection with a rationale, the reasoning prompt of its state (`prompter` with
/// reasoning on, `history_len` earlier steps) completed by the rationale in a think block and the expert's action.
/// Reflections whose rationale is empty give no sample.
pub fn reflection_samples(
    games: &[Trajectory],
    reflections: &[Reflection],
    prompter: &Prompter,
    history_len: usize,
) -> Result<Vec<SftSample>, BoxError> {
    let by_id = games_by_id(games);
    reflections
        .iter()
        .filter(|r| !r.rationale.is_empty())
        .map(|r| {
            let state = state_of(&by_id, "reflection", &r.task_id, r.step_index, history_len)?;
            Ok(prompter.sft_sample(&state, &r.expert, Some(&r.rationale)))
        })
        .collect()
}

/// How many reflections there are, how many have a rationale, and their mean length in characters.
pub fn reflection_summary(reflections: &[Reflection]) -> String {
    let written: Vec<&Reflection> = reflections.iter().filter(|r| !r.rationale.is_empty()).collect();
    let chars: usize = written.iter().map(|r| r.rationale.chars().count()).sum();
    format!(
        "{} reflections, {} with a rationale (mean {:.0} characters)",
        reflections.len(),
        written.len(),
        chars as f64 / written.len().max(1) as f64
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

    /// A policy that answers any query with a rationale naming the prompt's length (and a stray think tag).
    struct Explainer;

    impl Policy for Explainer {
        fn name(&self) -> &str {
            "explainer"
        }
        fn generate(
            &self,
            queries: &[act_core::Query],
            _: &SamplingParams,
        ) -> Result<Vec<String>, act_core::PolicyError> {
            Ok(queries
                .iter()
                .map(|q| format!("<think> a prompt of {} characters</think><action>x</action>", q.prompt.len()))
                .collect())
        }
    }

    #[test]
    fn reflections_show_both_outcomes_and_sr_samples_end_with_the_expert_action() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(4));
        let games = crate::pipeline::expert_trajectories(&factory, Split::Train, 3, 7).unwrap();
        let pairs = PairConfig::default().with_k(2).with_seed(3).with_parallel(false).with_progress(false);
        let branches =
            world_model_branches(&factory, &games, pairs.clone(), RandomAdmissiblePolicy::new(), true).unwrap();
        let states: usize = games.iter().map(|t| t.steps.len()).sum();
        let style = crate::config::PromptStyle::Conversation;
        let plain = Prompter::new(crate::prompts::prompt_config(style, "ALFWorld", false)).unwrap();
        let sampling = SamplingParams::default().with_max_new_tokens(32).with_stop("</think>");
        let written = reflections(&games, &branches, &plain, 32, &Explainer, &sampling).unwrap();
        assert_eq!(written.len(), branches.len() - states, "one per alternative");
        for r in &written {
            let game = games.iter().find(|g| g.task_id == r.task_id).unwrap();
            assert_eq!(r.expert, game.steps[r.step_index].action);
            assert_ne!(r.alternative, r.expert);
            let expert_branch = branches
                .iter()
                .find(|b| (&b.task_id, b.step_index, &b.action) == (&r.task_id, r.step_index, &r.expert))
                .unwrap();
            assert_eq!(r.outcome, expert_branch.observation.as_str());
            let alternative = branches
                .iter()
                .find(|b| (&b.task_id, b.step_index, &b.action) == (&r.task_id, r.step_index, &r.alternative))
                .unwrap();
            assert_eq!(r.alternative_outcome, alternative.observation.as_str());
            assert!(r.rationale.starts_with("a prompt of ") && r.rationale.ends_with(" characters"), "{}", r.rationale);
        }
        let reasoning = Prompter::new(crate::prompts::prompt_config(style, "ALFWorld", true)).unwrap();
        let mut with_empty = written.clone();
        with_empty[0].rationale.clear();
        let samples = reflection_samples(&games, &with_empty, &reasoning, 32).unwrap();
        assert_eq!(samples.len(), written.len() - 1, "an empty rationale gives no sample");
        for (sample, r) in samples.iter().zip(&written[1..]) {
            assert!(sample.completion.ends_with(&format!("<action>{}</action>", r.expert)), "{}", sample.completion);
            assert_eq!(sample.completion, format!("<think>{}</think>\n<action>{}</action>", r.rationale, r.expert));
            assert!(sample.prompt.ends_with("think, then act."), "the state's reasoning prompt: {}", sample.prompt);
        }
        assert!(reflection_summary(&written).starts_with(&format!(
            "{} reflections, {} with",
            written.len(),
            written.len()
        )));
        // Without the expert's branches there is nothing to reflect on.
        let alternatives_only = &branches[states..];
        assert!(
            reflections(&games, alternatives_only, &plain, 32, &Explainer, &sampling)
                .unwrap_err()
                .to_string()
                .contains("expert")
        );
    }

    #[test]
    fn rationales_drop_think_tags_and_what_follows_them() {
        assert_eq!(rationale_of("<think> the mug is here </think><action>take mug 1</action>"), "the mug is here");
        assert_eq!(rationale_of("go to shelf 1"), "go to shelf 1");
        assert_eq!(rationale_of("</think>"), "");
    }
}
