//! ActGuide-RL's guided rollouts inside the on-line stage (arXiv 2605.12004, code AMAP-ML/ActGuide-RL): after an
//! iteration's groups are played, every group without a win (a hard group) is played again with a hint, the first
//! `k` actions of the environment expert's episode on the same task and seed, shown before each action prompt.
//! `k` is the shortest hint with which a probe succeeds, by binary search ([`act_rollout::HintSearcher`]); the
//! probes of all hard groups are played together, round by round. The group's episodes are then replaced by
//! `group_size` guided ones, and the policy learns from them under its unguided prompts (the trainer's training
//! prompts), with the guided prompts' log-probs as behaviour log-probs.
//!
//! Every episode played counts towards the stage's environment steps: the unguided episodes of hard groups, the
//! probes and the guided episodes, so methods compare at equal environment steps.

use act_core::{Action, EnvironmentFactory, Policy, Prompter, SamplingParams, derive_seed};
use act_rollout::{EpisodeSpec, ExpertActor, HintSearcher, PlayedEpisode, PolicyActor, Rollout, RolloutConfig};

use crate::config::{GuidanceConfig, OnlineReward};
use crate::stages::BoxError;

/// Seed streams of an iteration's guided play, apart from its unguided rollout's.
const PROBE_STREAM: u64 = 0x0070_726f_6265; // "probe"
const GUIDED_STREAM: u64 = 0x6775_6964_6564; // "guided"

/// What guidance did in one iteration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuidanceStats {
    /// Groups without a win in the unguided rollout.
    pub hard_groups: usize,
    /// Hard groups whose guided episodes won at least once.
    pub rescued_groups: usize,
    /// The hint lengths chosen, one per hard group.
    pub hint_lengths: Vec<usize>,
    /// The expert plans' lengths, one per hard group.
    pub plan_lengths: Vec<usize>,
    /// Probe episodes played.
    pub probe_episodes: usize,
    /// Environment steps of the probes and the guided episodes (the unguided rollout's are counted by the caller).
    pub env_steps: usize,
}

/// Whether an episode earned a reward: a win, or with [`OnlineReward::Score`] a positive final score.
pub fn rewarded(episode: &PlayedEpisode, reward: OnlineReward) -> bool {
    match reward {
        OnlineReward::Win => episode.won(),
        OnlineReward::Score => episode.score() > 0.0,
    }
}

/// The groups of `played` (in order of first appearance) none of whose episodes earned a reward.
pub fn hard_groups(played: &[PlayedEpisode], reward: OnlineReward) -> Vec<usize> {
    let mut groups: Vec<usize> = Vec::new();
    for episode in played {
        if !groups.contains(&episode.spec.group) {
            groups.push(episode.spec.group);
        }
    }
    groups.retain(|&g| !played.iter().any(|e| e.spec.group == g && rewarded(e, reward)));
    groups
}

/// The play settings guided rollouts share with the iteration's unguided rollout.
pub struct GuidedPlay<'a, F: EnvironmentFactory> {
    /// The environments.
    pub factory: &'a F,
    /// The policy being trained.
    pub policy: &'a dyn Policy,
    /// Its prompter (the unguided prompts).
    pub prompter: &'a Prompter,
    /// The rollout sampling (temperature, length, stop).
    pub sampling: SamplingParams,
    /// The most steps per episode.
    pub step_budget: usize,
    /// What counts as a rewarded episode.
    pub reward: OnlineReward,
    /// The search settings.
    pub guidance: &'a GuidanceConfig,
    /// The iteration's seed.
    pub seed: u64,
}

impl<F: EnvironmentFactory> GuidedPlay<'_, F> {
    /// Replaces the episodes of every group of `played` without a rewarded episode by guided ones (same specs:
    /// index, task, seed and group; new sampling streams) and says which episodes are guided, with the hints'
    /// statistics.
    pub fn guide(
        &self,
        mut played: Vec<PlayedEpisode>,
    ) -> Result<(Vec<PlayedEpisode>, Vec<bool>, GuidanceStats), BoxError> {
        let hard = hard_groups(&played, self.reward);
        let mut stats = GuidanceStats { hard_groups: hard.len(), ..GuidanceStats::default() };
        let mut guided = vec![false; played.len()];
        if hard.is_empty() {
            return Ok((played, guided, stats));
        }
        // The reference actions: the expert's episode from each hard group's start.
        let first_specs: Vec<EpisodeSpec> = hard
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                let spec = played.iter().find(|e| e.spec.group == g).map(|e| e.spec.clone()).ok_or("no such group")?;
                Ok::<_, BoxError>(EpisodeSpec { index: i, ..spec })
            })
            .collect::<Result<_, _>>()?;
        let expert = Rollout::new(self.factory, &ExpertActor)
            .with_config(self.config(first_specs.len(), 0))
            .play(&first_specs)
            .map_err(|e| format!("ActGuide-RL takes its hints from the environment's expert: {e}"))?;
        let plans: Vec<Vec<Action>> =
            expert.iter().map(|e| e.trajectory.steps.iter().map(|s| s.action.clone()).collect()).collect();
        stats.plan_lengths = plans.iter().map(Vec::len).collect();

        // The binary searches, all hard groups' probes of a round played together.
        let mut searchers: Vec<HintSearcher> =
            plans.iter().map(|p| HintSearcher::new(p.len(), self.guidance.max_probes)).collect();
        for round in 0u64.. {
            let probing: Vec<(usize, usize)> =
                searchers.iter().enumerate().filter_map(|(h, s)| s.next_probe().map(|k| (h, k))).collect();
            if probing.is_empty() {
                break;
            }
            let n = self.guidance.probe_rollouts;
            let round_seed = derive_seed(derive_seed(self.seed, PROBE_STREAM), round);
            let first_specs = &first_specs;
            let specs: Vec<EpisodeSpec> = probing
                .iter()
                .enumerate()
                .flat_map(|(p, &(h, _))| {
                    (0..n).map(move |r| EpisodeSpec {
                        index: p * n + r,
                        sample_seed: derive_seed(round_seed, (p * n + r) as u64),
                        group: h,
                        ..first_specs[h].clone()
                    })
                })
                .collect();
            let hints = specs.iter().map(|s| (s.index, plans[s.group][..probing[s.index / n].1].to_vec()));
            let actor = self.actor().with_hints(hints);
            let probes =
                Rollout::new(self.factory, &actor).with_config(self.config(specs.len(), round_seed)).play(&specs)?;
            stats.probe_episodes += probes.len();
            stats.env_steps += probes.iter().map(PlayedEpisode::steps).sum::<usize>();
            for (p, &(h, _)) in probing.iter().enumerate() {
                searchers[h].record(probes[p * n..(p + 1) * n].iter().any(|e| rewarded(e, self.reward)));
            }
        }
        stats.hint_lengths = searchers.iter().map(|s| s.result().k).collect();

        // The guided episodes replace the hard groups' own, spec for spec.
        let guided_seed = derive_seed(self.seed, GUIDED_STREAM);
        let positions: Vec<usize> = (0..played.len()).filter(|&i| hard.contains(&played[i].spec.group)).collect();
        let specs: Vec<EpisodeSpec> = positions
            .iter()
            .enumerate()
            .map(|(j, &i)| EpisodeSpec {
                index: j,
                sample_seed: derive_seed(guided_seed, j as u64),
                ..played[i].spec.clone()
            })
            .collect();
        let hint_of = |group: usize| {
            let h = hard.iter().position(|&g| g == group).unwrap_or(0);
            plans[h][..stats.hint_lengths[h]].to_vec()
        };
        let actor = self.actor().with_tokens(true).with_hints(specs.iter().map(|s| (s.index, hint_of(s.group))));
        let replays =
            Rollout::new(self.factory, &actor).with_config(self.config(specs.len(), guided_seed)).play(&specs)?;
        stats.env_steps += replays.iter().map(PlayedEpisode::steps).sum::<usize>();
        stats.rescued_groups =
            hard.iter().filter(|&&g| replays.iter().any(|e| e.spec.group == g && rewarded(e, self.reward))).count();
        for (replay, &i) in replays.into_iter().zip(&positions) {
            let spec = played[i].spec.clone();
            played[i] = PlayedEpisode { spec, ..replay };
            guided[i] = true;
        }
        Ok((played, guided, stats))
    }

    fn actor(&self) -> PolicyActor<'_> {
        PolicyActor::new(self.policy, self.prompter.clone()).with_sampling(self.sampling.clone())
    }

    fn config(&self, width: usize, seed: u64) -> RolloutConfig {
        RolloutConfig::default().with_batch_size(width.max(1)).with_step_budget(self.step_budget).with_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_alfworld::{AlfworldConfig, AlfworldFactory};
    use act_core::{PolicyError, PromptConfig, Query, QueryKind, Split, TaskRef};

    /// Plays the hint's action for its step where the prompt shows one and the hint is longer than `needs`
    /// actions, and `look` otherwise: with a hint of at least `needs` actions it finishes what the expert started.
    struct Follower {
        needs: usize,
    }

    impl Policy for Follower {
        fn name(&self) -> &str {
            "follower"
        }

        fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
            Ok(queries
                .iter()
                .map(|q| {
                    let QueryKind::Act(state) = &q.kind else { return String::new() };
                    let hint: Vec<&str> = q
                        .prompt
                        .strip_prefix("Reference action trajectory hint:\n")
                        .map(|h| h.lines().take_while(|l| !l.is_empty()).collect())
                        .unwrap_or_default();
                    let action = if hint.len() >= self.needs {
                        hint.get(state.step_index).map(|l| l.split_once(". ").map_or(*l, |(_, a)| a))
                    } else {
                        None
                    };
                    format!("<action>{}</action>", action.unwrap_or("look"))
                })
                .collect())
        }
    }

    fn play(factory: &AlfworldFactory, follower: &Follower, specs: &[EpisodeSpec]) -> Vec<PlayedEpisode> {
        let prompter = Prompter::new(PromptConfig::default()).unwrap();
        Rollout::new(factory, &PolicyActor::new(follower, prompter))
            .with_config(RolloutConfig::default().with_batch_size(specs.len()).with_step_budget(40))
            .play(specs)
            .unwrap()
    }

    #[test]
    fn hard_groups_are_replayed_with_the_shortest_hint_that_a_probe_wins_with() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(4));
        let tasks = [TaskRef::index(Split::Train, 0), TaskRef::index(Split::Train, 1)];
        let specs = EpisodeSpec::groups(&tasks, 2, 3);
        let prompter = Prompter::new(PromptConfig::default()).unwrap();
        // A follower that never wins on its own: every group is hard.
        let follower = Follower { needs: 1 };
        let played = play(&factory, &follower, &specs);
        assert!(played.iter().all(|e| !e.won()));
        let config = GuidanceConfig { max_probes: 6, probe_rollouts: 2 };
        let guided_play = GuidedPlay {
            factory: &factory,
            policy: &follower,
            prompter: &prompter,
            sampling: SamplingParams::greedy(),
            step_budget: 40,
            reward: OnlineReward::Win,
            guidance: &config,
            seed: 9,
        };
        let (replayed, guided, stats) = guided_play.guide(played.clone()).unwrap();
        assert_eq!(guided, [true; 4]);
        assert_eq!((stats.hard_groups, stats.rescued_groups), (2, 2));
        // The follower acts on a hint of one action or more, and then plays the whole plan it is shown; so a probe
        // wins only when it is shown the whole plan: the search ends there and the probes said so.
        assert_eq!(stats.hint_lengths, stats.plan_lengths);
        assert!(stats.probe_episodes > 0 && stats.env_steps > 0);
        for (before, after) in played.iter().zip(&replayed) {
            assert_eq!(
                (before.spec.index, before.spec.group, &before.spec.task),
                (after.spec.index, after.spec.group, &after.spec.task)
            );
            assert!(after.won(), "a guided episode with the whole plan wins");
            // Guided turns keep the hinted prompt's tokens only where the policy returns them; here text only.
            assert!(after.turns.iter().all(|t| !t.completion.has_tokens()));
        }
        // The same seed gives the same guided play.
        let (again, _, again_stats) = guided_play.guide(played.clone()).unwrap();
        assert_eq!(again, replayed);
        assert_eq!(again_stats, stats);
        // A group with a win is left as it was.
        let mut mixed = played.clone();
        mixed[0] = replayed[0].clone();
        let (kept, guided, stats) = guided_play.guide(mixed.clone()).unwrap();
        assert_eq!(guided, [false, false, true, true]);
        assert_eq!(stats.hard_groups, 1);
        assert_eq!(kept[..2], mixed[..2]);
    }
}
