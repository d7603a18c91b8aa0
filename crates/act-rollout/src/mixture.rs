//! DAgger's mixture of the expert and a learner ([`ExpertMixture`]): states a learner reaches by its own mistakes,
//! with the expert taking over often enough to finish the task.

use act_core::{derive_seed, rng_from_seed};
use rand::RngExt;

use crate::actor::{Actor, Decision, View};
use crate::error::ActError;
use crate::spec::EpisodeSpec;

/// The sub-stream of an episode's sampling seed that draws who acts at each of its steps.
const MIXTURE_STREAM: u64 = 0x006D_6978_7475_7265; // "mixture"

/// At each step of each episode, the environment's expert acts with probability `expert_prob`, the learner
/// otherwise: DAgger's mixture policy β·π* + (1 − β)·π̂ (Ross et al. 2011). Played with a language-model
/// learner, its episodes contain the learner's own mistakes (invalid actions, wrong turns, repeats) and the
/// expert's recoveries from them; relabelled by the expert, they teach recovery from the mistakes the learner
/// actually makes.
///
/// Who acts at step `t` of an episode is drawn from `derive_seed(derive_seed(spec.sample_seed, stream), t)`
/// (`stream` the mixture's own), so it depends on the episode and the step, not on the batch it was played in.
/// The learner is called once per driver call with the views it acts on, in order.
///
/// ```
/// use act_alfworld::{AlfworldConfig, AlfworldEnv};
/// use act_core::Split;
/// use act_rollout::{EpisodeSpec, ExpertActor, ExpertMixture, RandomActor, Rollout, RolloutConfig};
///
/// let factory = || AlfworldEnv::new(AlfworldConfig::default());
/// let specs = EpisodeSpec::split(Split::Train, 4, 0);
/// // The expert at 70% of the steps, a random admissible action at the others.
/// let mixture = ExpertMixture::new(RandomActor, 0.7);
/// let played = Rollout::new(&factory, &mixture).with_config(RolloutConfig::default().with_batch_size(4)).play(&specs)?;
/// assert_eq!(played.len(), 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ExpertMixture<A> {
    learner: A,
    expert_prob: f64,
}

impl<A: Actor> ExpertMixture<A> {
    /// The expert with probability `expert_prob` (clamped to `[0, 1]`), `learner` otherwise.
    pub fn new(learner: A, expert_prob: f64) -> Self {
        ExpertMixture { learner, expert_prob: expert_prob.clamp(0.0, 1.0) }
    }

    /// Whether the expert acts at step `step` (from 0) of `spec`'s episode.
    pub fn expert_acts(&self, spec: &EpisodeSpec, step: usize) -> bool {
        let seed = derive_seed(derive_seed(spec.sample_seed, MIXTURE_STREAM), step as u64);
        rng_from_seed(seed).random_bool(self.expert_prob)
    }
}

impl<A: Actor> Actor for ExpertMixture<A> {
    fn name(&self) -> &str {
        "expert mixture"
    }

    fn act(&self, views: &mut [View<'_>], seed: u64) -> Result<Vec<Option<Decision>>, ActError> {
        let expert_turn: Vec<bool> = views.iter().map(|v| self.expert_acts(v.spec, v.state.history.len())).collect();
        let mut decisions: Vec<Option<Decision>> = vec![None; views.len()];
        let mut learner_positions = Vec::new();
        let mut learner_views = Vec::new();
        for (i, v) in views.iter_mut().enumerate() {
            if expert_turn[i] {
                decisions[i] =
                    v.env.expert_action().map_err(|source| ActError::Env { view: i, source })?.map(Decision::action);
            } else {
                learner_positions.push(i);
                learner_views.push(View { spec: v.spec, state: v.state, env: &mut *v.env });
            }
        }
        if !learner_views.is_empty() {
            let learned = self.learner.act(&mut learner_views, seed).map_err(|e| match e {
                // Name the view of this call, not of the learner's.
                ActError::Env { view, source } => ActError::Env { view: learner_positions[view], source },
                other => other,
            })?;
            if learned.len() != learner_positions.len() {
                return Err(ActError::CompletionCount { expected: learner_positions.len(), got: learned.len() });
            }
            for (i, decision) in learner_positions.into_iter().zip(learned) {
                decisions[i] = decision;
            }
        }
        Ok(decisions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::{ExpertActor, RandomActor};
    use crate::driver::{Rollout, RolloutConfig};
    use act_alfworld::{AlfworldConfig, AlfworldEnv};
    use act_core::Split;

    fn play<A: Actor>(actor: &A, batch_size: usize) -> Vec<crate::PlayedEpisode> {
        let factory = || AlfworldEnv::new(AlfworldConfig::default());
        let specs = EpisodeSpec::split(Split::Train, 6, 3);
        Rollout::new(&factory, actor)
            .with_config(RolloutConfig::default().with_batch_size(batch_size).with_step_budget(30))
            .play(&specs)
            .unwrap()
    }

    #[test]
    fn the_extremes_are_the_expert_and_the_learner() {
        let actions = |played: &[crate::PlayedEpisode]| -> Vec<Vec<String>> {
            played.iter().map(|e| e.trajectory.steps.iter().map(|s| s.action.to_string()).collect()).collect()
        };
        assert_eq!(actions(&play(&ExpertMixture::new(RandomActor, 1.0), 3)), actions(&play(&ExpertActor, 3)));
        assert_eq!(actions(&play(&ExpertMixture::new(RandomActor, 0.0), 1)), actions(&play(&RandomActor, 1)));
    }

    #[test]
    fn who_acts_depends_on_the_episode_and_step_only() {
        let mixture = ExpertMixture::new(ExpertActor, 0.5);
        let specs = EpisodeSpec::split(Split::Train, 50, 1);
        let draws: Vec<bool> = specs.iter().flat_map(|s| (0..20).map(|t| mixture.expert_acts(s, t))).collect();
        let experts = draws.iter().filter(|&&e| e).count();
        assert!((400..600).contains(&experts), "{experts} of 1000 expert steps at probability 0.5");
        let again: Vec<bool> = specs.iter().flat_map(|s| (0..20).map(|t| mixture.expert_acts(s, t))).collect();
        assert_eq!(draws, again);
        // An expert learner makes the mixture the expert, whatever the draws: every game is won.
        assert!(play(&mixture, 4).iter().all(|e| e.won()));
        // Deterministic: the same episodes again.
        let random = ExpertMixture::new(RandomActor, 0.8);
        let steps = |played: Vec<crate::PlayedEpisode>| played.iter().map(|e| e.steps()).sum::<usize>();
        assert_eq!(steps(play(&random, 1)), steps(play(&random, 1)));
    }
}
