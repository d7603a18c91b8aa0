//! ICRL's episodes (arXiv 2605.15224, brick-pid/ICRL): after a failed first round the same model, as a critic,
//! reads the failed episode ([`act_core::Prompter::critique`]) and writes tips in `<critic>`; the solver retries
//! the same task from the same reset with the tips before every action prompt ([`act_core::Prompter::tips`]). The
//! critic's reward is act-grpo's [`critic_reward`]: 1 when the retry succeeds, else how much the reward rose.
//!
//! [`IcrlPlay::second_round`] plays the critiques and the retries of a first round; the on-line stage
//! ([`crate::online`], algorithm `icrl`) turns them into an update with act-grpo's `icrl` module (advantages, the
//! filter, calibration weights).
//!
//! Ours, where the reference is silent: a critique without a parseable `<critic>` block is rewarded −1 (the worst a
//! critic can earn otherwise is −1, a retry that lost everything) and its retry is played without tips, so the
//! solver's second round is still a fair retry.

use act_core::{Completion, EnvironmentFactory, Policy, Prompter, Query, SamplingParams, derive_seed, parse_critique};
use act_grpo::icrl::critic_reward;
use act_rollout::{EpisodeSpec, PlayedEpisode, PolicyActor, Rollout, RolloutConfig};

use crate::config::OnlineReward;
use crate::guided::rewarded;
use crate::stages::BoxError;

/// Seeds the critics' sampling, apart from the solver's streams.
const CRITIC_STREAM: u64 = 0x6372_6974_6963; // "critic"
/// Seeds the retries' sampling.
const RETRY_STREAM: u64 = 0x0072_6574_7279; // "retry"

/// The reward a critique without a parseable `<critic>` block gets.
pub const UNPARSED_CRITIQUE_REWARD: f64 = -1.0;

/// One critic's work: the failed episode it read, what it wrote, and what its tips earned.
#[derive(Debug, Clone)]
pub struct Critique {
    /// The failed episode's position in the first round.
    pub episode: usize,
    /// The critic's completion (with its tokens where the policy gives them).
    pub completion: Completion,
    /// The tips parsed from it (`None`: no parseable `<critic>` block).
    pub tips: Option<String>,
    /// Its reward ([`critic_reward`], or [`UNPARSED_CRITIQUE_REWARD`]).
    pub reward: f64,
    /// Whether the retry after it earned the reward.
    pub success: bool,
}

/// A first round's critiques and retries, in the order of the failed episodes.
#[derive(Debug, Clone)]
pub struct SecondRound {
    /// One per failed episode of the first round.
    pub critiques: Vec<Critique>,
    /// The retries, one per critique (same task, reset seed and group as the episode it retries).
    pub retries: Vec<PlayedEpisode>,
}

impl SecondRound {
    /// Environment steps of the retries.
    pub fn env_steps(&self) -> usize {
        self.retries.iter().map(PlayedEpisode::steps).sum()
    }
}

/// The play settings the critics and the retries share with the first round.
pub struct IcrlPlay<'a, F: EnvironmentFactory> {
    /// The environments.
    pub factory: &'a F,
    /// The policy being trained: solver and critic.
    pub policy: &'a dyn Policy,
    /// Its prompter (action prompts, the critique and the tips).
    pub prompter: &'a Prompter,
    /// The solver's sampling (temperature, length, stop).
    pub sampling: SamplingParams,
    /// The critic's sampling (its length: tips take more tokens than an action).
    pub critic_sampling: SamplingParams,
    /// The most steps per episode.
    pub step_budget: usize,
    /// Ends an episode once the same action was sent this many times in a row (the reference's 3).
    pub stop_after_repeats: Option<usize>,
    /// What counts as a rewarded episode.
    pub reward: OnlineReward,
    /// The iteration's seed.
    pub seed: u64,
}

impl<F: EnvironmentFactory> IcrlPlay<'_, F> {
    /// The episode's reward as ICRL compares it (the critic's reward, the buckets' advantages): the final score,
    /// or 0/1 for a win.
    pub fn outcome(&self, episode: &PlayedEpisode) -> f64 {
        match self.reward {
            OnlineReward::Win => f64::from(u8::from(episode.won())),
            OnlineReward::Score => episode.score(),
        }
    }

    /// The rollout settings of `width` episodes in lockstep.
    pub fn rollout_config(&self, width: usize, seed: u64) -> RolloutConfig {
        let config =
            RolloutConfig::default().with_batch_size(width.max(1)).with_step_budget(self.step_budget).with_seed(seed);
        match self.stop_after_repeats {
            Some(n) => config.with_stop_after_repeats(n),
            None => config,
        }
    }

    /// Critiques every episode of `first` that earned no reward (one batched generation) and retries each with
    /// its tips; the retries keep the failed episode's spec (index, task, reset seed, group) with a new sampling
    /// stream and carry their tokens, the tips-prefixed prompt's ids among them.
    pub fn second_round(&self, first: &[PlayedEpisode]) -> Result<SecondRound, BoxError> {
        let failed: Vec<usize> = (0..first.len()).filter(|&i| !rewarded(&first[i], self.reward)).collect();
        if failed.is_empty() {
            return Ok(SecondRound { critiques: Vec::new(), retries: Vec::new() });
        }
        let queries: Vec<Query> =
            failed.iter().map(|&i| Query::text(self.prompter.critique(&first[i].trajectory))).collect();
        let critic_seed = derive_seed(self.seed, CRITIC_STREAM);
        let completions = self.policy.complete(&queries, &self.critic_sampling.clone().with_seed(critic_seed))?;
        if completions.len() != queries.len() {
            return Err(format!("the critic answered {} of {} critiques", completions.len(), queries.len()).into());
        }
        let tips: Vec<Option<String>> =
            completions.iter().map(|c| parse_critique(&c.text).ok().map(str::to_owned)).collect();

        let retry_seed = derive_seed(self.seed, RETRY_STREAM);
        let specs: Vec<EpisodeSpec> = failed
            .iter()
            .enumerate()
            .map(|(k, &i)| EpisodeSpec {
                index: k,
                sample_seed: derive_seed(retry_seed, k as u64),
                ..first[i].spec.clone()
            })
            .collect();
        let prefixes =
            tips.iter().enumerate().map(|(k, t)| (k, t.as_deref().map_or(String::new(), |t| self.prompter.tips(t))));
        let actor = PolicyActor::new(self.policy, self.prompter.clone())
            .with_tokens(true)
            .with_sampling(self.sampling.clone())
            .with_prefixes(prefixes);
        let retries = Rollout::new(self.factory, &actor)
            .with_config(self.rollout_config(specs.len(), retry_seed))
            .play(&specs)?;
        let critiques = failed
            .iter()
            .zip(completions)
            .zip(tips)
            .zip(&retries)
            .map(|(((&i, completion), tips), retry)| {
                let success = rewarded(retry, self.reward);
                let reward = if tips.is_some() {
                    critic_reward(self.outcome(&first[i]), self.outcome(retry), success)
                } else {
                    UNPARSED_CRITIQUE_REWARD
                };
                Critique { episode: i, completion, tips, reward, success }
            })
            .collect();
        Ok(SecondRound { critiques, retries })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use act_alfworld::{AlfworldConfig, AlfworldFactory};
    use act_core::{PolicyError, PromptConfig, QueryKind, Split, TaskRef, collect_expert_trajectory};

    /// As a solver: with tips in its prompt, plays the plan the tips spell (`Tip 1: a; b; c`), else `look`. As a
    /// critic: writes the expert's plan for the task as a tip, except for tasks it is told to garble.
    struct ScriptedIcrl {
        plans: HashMap<String, Vec<String>>,
        garbled: String,
    }

    impl Policy for ScriptedIcrl {
        fn name(&self) -> &str {
            "scripted-icrl"
        }

        fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
            Ok(self.complete(queries, params)?.into_iter().map(|c| c.text).collect())
        }

        fn complete(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<Completion>, PolicyError> {
            Ok(queries
                .iter()
                .map(|q| {
                    let text = match &q.kind {
                        QueryKind::Act(state) => {
                            let plan = q
                                .prompt
                                .strip_prefix("Tips from a previous attempt at this task:\nTip 1: ")
                                .and_then(|rest| rest.lines().next())
                                .map(|line| line.split("; ").collect::<Vec<_>>());
                            let action = plan.and_then(|p| p.get(state.step_index).map(|a| a.to_string()));
                            format!("<action>{}</action>", action.unwrap_or_else(|| "look".into()))
                        }
                        _ => {
                            let (task, plan) = self
                                .plans
                                .iter()
                                .find(|(task, _)| q.prompt.contains(&format!("failed its task: {task}\n")))
                                .expect("a critique names its task");
                            if *task == self.garbled {
                                "no tags here".to_owned()
                            } else {
                                format!("<critic>Tip 1: {}</critic>", plan.join("; "))
                            }
                        }
                    };
                    Completion { text, prompt_ids: vec![1, 2], token_ids: vec![3], log_probs: vec![-0.5] }
                })
                .collect())
        }
    }

    #[test]
    fn failed_episodes_are_critiqued_and_retried_with_the_tips() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(4));
        let tasks = [TaskRef::index(Split::Train, 0), TaskRef::index(Split::Train, 1)];
        let specs = EpisodeSpec::groups(&tasks, 2, 3);
        let mut env = factory.make().unwrap();
        let mut plans = HashMap::new();
        for spec in &specs {
            let expert = collect_expert_trajectory(&mut env, &spec.task, spec.seed).unwrap();
            plans.insert(expert.task.clone(), expert.steps.iter().map(|s| s.action.to_string()).collect());
        }
        let garbled = plans.keys().min().unwrap().clone();
        let policy = ScriptedIcrl { plans, garbled: garbled.clone() };
        let prompter = Prompter::new(PromptConfig::default()).unwrap();
        let play = IcrlPlay {
            factory: &factory,
            policy: &policy,
            prompter: &prompter,
            sampling: SamplingParams::greedy(),
            critic_sampling: SamplingParams::greedy(),
            step_budget: 40,
            stop_after_repeats: Some(3),
            reward: OnlineReward::Win,
            seed: 9,
        };
        // Without tips the solver looks three times and the repeat rule ends the episode: every episode fails.
        let first = Rollout::new(&factory, &PolicyActor::new(&policy, prompter.clone()))
            .with_config(play.rollout_config(specs.len(), 1))
            .play(&specs)
            .unwrap();
        assert!(first.iter().all(|e| !e.won() && e.steps() == 3));
        let second = play.second_round(&first).unwrap();
        assert_eq!(second.critiques.len(), 4);
        for (critique, retry) in second.critiques.iter().zip(&second.retries) {
            let failed = &first[critique.episode];
            assert_eq!((retry.spec.task.clone(), retry.spec.seed), (failed.spec.task.clone(), failed.spec.seed));
            if failed.trajectory.task == garbled {
                // No tips: −1, and the retry plays as the first round did.
                assert_eq!((critique.tips.as_deref(), critique.reward, critique.success), (None, -1.0, false));
                assert_eq!(retry.steps(), 3);
            } else {
                // The tips spell the expert's plan: the retry wins and the critic earns 1.
                assert!(critique.tips.as_deref().is_some_and(|t| t.starts_with("Tip 1: ")));
                assert!(retry.won());
                assert_eq!((critique.reward, critique.success), (1.0, true));
                // The retry's turns were sampled after the tips.
                assert!(retry.turns.iter().all(|t| t.completion.has_tokens()));
            }
        }
        // Won episodes are not critiqued; the same seed gives the same round.
        assert!(
            play.second_round(&second.retries.iter().filter(|e| e.won()).cloned().collect::<Vec<_>>())
                .unwrap()
                .critiques
                .is_empty()
        );
        let again = play.second_round(&first).unwrap();
        assert_eq!(
            again.retries.iter().map(|e| e.trajectory.clone()).collect::<Vec<_>>(),
            second.retries.iter().map(|e| e.trajectory.clone()).collect::<Vec<_>>()
        );
    }
}
