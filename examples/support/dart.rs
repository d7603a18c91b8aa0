//! Expert-relabelled episodes with injected mistakes (DART, Laskey et al. 2017): the expert plays, but at each
//! step with probability `noise` the agent does something else, and every state reached is labelled with the
//! expert's action there.
//!
//! Imitation of clean expert episodes never shows a state after a mistake, yet a greedy policy makes mistakes and
//! then sees such states (ALFWorld answers an invalid action with "Nothing happens."), where an imitator that has
//! only seen the expert's states repeats itself. The injected mistakes are the two a policy makes: a random
//! admissible action (a wrong turn) and repeating the previous action (at a receptacle, `go to` it again or `take`
//! again is invalid). [`mixture_episodes`] makes the mistakes a learner's own instead (DAgger's mixture of the
//! expert and the learner, Ross et al. 2011): an invalid `go to`, taking an object that is not there. The labels
//! come from the environment's expert, which can take over from any state, so both are IL variants that need an
//! expert at training time, reported as such.

use act_core::{
    Action, EnvError, Environment, EnvironmentFactory, Outcome, Prompter, SftSample, Split, Step, TaskRef, Trajectory,
    derive_seed, rng_from_seed,
};
use act_rollout::{Actor, EpisodeSpec, ExpertMixture, Rollout, RolloutConfig};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::stages::BoxError;

/// An episode as played (with its mistakes) and the expert's action at each of its states.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Relabelled {
    /// The episode as played: `steps[i].action` is what was done.
    pub trajectory: Trajectory,
    /// The expert's action at the state before step `i`.
    pub labels: Vec<Action>,
}

/// Plays `task` with the expert, doing something else with probability `noise` at each step, until the expert has
/// nothing left to do, the environment says `done`, or the step budget runs out.
pub fn relabelled_episode<E: Environment + ?Sized>(
    env: &mut E,
    task: &TaskRef,
    seed: u64,
    noise: f64,
) -> Result<Relabelled, EnvError> {
    let mut rng = rng_from_seed(seed);
    let reset = env.reset(task, seed)?;
    let mut observation = reset.observation;
    let mut admissible = reset.admissible_actions.unwrap_or_default();
    let (mut steps, mut labels): (Vec<Step>, Vec<Action>) = (Vec::new(), Vec::new());
    let mut outcome = Outcome { won: false, score: 0.0, steps_used: 0 };
    while steps.len() < env.step_budget() {
        let Some(expert) = env.expert_action()? else { break };
        let action = if rng.random_bool(noise.clamp(0.0, 1.0)) {
            match steps.last() {
                Some(previous) if rng.random_bool(0.5) => previous.action.clone(),
                _ if !admissible.is_empty() => admissible[rng.random_range(0..admissible.len())].clone(),
                _ => expert.clone(),
            }
        } else {
            expert.clone()
        };
        let transition = env.step(action.as_str())?;
        steps.push(Step { observation, admissible_actions: admissible, action, reward: transition.reward });
        labels.push(expert);
        outcome = Outcome { won: transition.won, score: transition.score, steps_used: steps.len() };
        observation = transition.observation;
        admissible = transition.admissible_actions.unwrap_or_default();
        if transition.done {
            break;
        }
    }
    let trajectory = Trajectory {
        env: env.name().to_owned(),
        task_id: reset.task.id,
        task_type: reset.task.task_type,
        split: reset.task.split,
        task: reset.task.description,
        seed,
        steps,
        outcome,
    };
    Ok(Relabelled { trajectory, labels })
}

/// [`relabelled_episode`] on the first `games` tasks of `split`, in parallel; episode `i` is seeded with
/// `derive_seed(seed, i)`.
pub fn relabelled_episodes<F: EnvironmentFactory>(
    factory: &F,
    split: Split,
    games: usize,
    noise: f64,
    seed: u64,
) -> Result<Vec<Relabelled>, EnvError> {
    let available = factory.make()?.num_tasks(split)?;
    crate::pipeline::per_episode(factory, games.min(available), |env, i| {
        relabelled_episode(env, &TaskRef::index(split, i), derive_seed(seed, i as u64), noise)
    })
}

/// Episodes of DAgger's mixture on the tasks `tasks` of `split` (indices past the split's end wrap around): at
/// each step the expert acts with
/// probability `expert_prob`, `learner` otherwise ([`ExpertMixture`]), played `batch_size` at a time in lockstep
/// (episode `i` resets with `derive_seed(seed, i)`); then every state is labelled with the expert's action by
/// replaying the episode ([`relabel`]). With a language-model learner the mistakes are the learner's own (an
/// invalid `go to`, the same action again after "Nothing happens."), which [`relabelled_episodes`]' random ones
/// only imitate.
pub fn mixture_episodes<F: EnvironmentFactory, A: Actor>(
    factory: &F,
    learner: A,
    expert_prob: f64,
    split: Split,
    tasks: std::ops::Range<usize>,
    batch_size: usize,
    seed: u64,
) -> Result<Vec<Relabelled>, BoxError> {
    let available = factory.make()?.num_tasks(split)?;
    let mut specs = EpisodeSpec::split(split, tasks.len().min(available), seed);
    for spec in &mut specs {
        spec.task = TaskRef::index(split, (tasks.start + spec.index) % available.max(1));
    }
    let mixture = ExpertMixture::new(learner, expert_prob);
    let config = RolloutConfig::default().with_batch_size(batch_size.max(1)).with_seed(derive_seed(seed, 1));
    let played = Rollout::new(factory, &mixture).with_config(config).play(&specs)?;
    let relabelled = crate::pipeline::per_episode(factory, played.len(), |env, i| {
        relabel(env, &played[i].spec.task, &played[i].trajectory)
    })?;
    Ok(relabelled)
}

/// Labels each state of `trajectory` (an episode of `task`, reset with its seed) with the expert's action there,
/// by replaying it on `env`. The replay must retrace the episode: an environment that answers differently is an
/// error. Where the expert has nothing left to do the episode's steps are cut there (its outcome stays the
/// whole episode's).
pub fn relabel<E: Environment + ?Sized>(
    env: &mut E,
    task: &TaskRef,
    trajectory: &Trajectory,
) -> Result<Relabelled, EnvError> {
    let reset = env.reset(task, trajectory.seed)?;
    let mut observation = reset.observation;
    let mut labels = Vec::with_capacity(trajectory.steps.len());
    for (t, step) in trajectory.steps.iter().enumerate() {
        if observation != step.observation {
            return Err(EnvError::Backend(format!(
                "{}: the replay of step {t} sees another observation than the episode did ({observation:?}, not {:?})",
                trajectory.task_id, step.observation
            )));
        }
        let Some(label) = env.expert_action()? else { break };
        labels.push(label);
        observation = env.step(step.action.as_str())?.observation;
    }
    let mut trajectory = trajectory.clone();
    trajectory.steps.truncate(labels.len());
    Ok(Relabelled { trajectory, labels })
}

/// IL samples of relabelled episodes: every state with the expert's label, or with `mistake_labels` off only the
/// states where the expert's label is what was played (the steps after each mistake). The latter keep each
/// episode prefix-consistent under a conversation prompt, so the SFT trainer packs it into one sequence.
pub fn relabelled_samples(
    relabelled: &[Relabelled],
    prompter: &Prompter,
    history_len: usize,
    mistake_labels: bool,
) -> Vec<SftSample> {
    relabelled
        .iter()
        .flat_map(|r| r.trajectory.states(history_len).zip(&r.labels))
        .filter(|((_, played), label)| mistake_labels || played.as_str() == label.as_str())
        .map(|((state, _), label)| prompter.sft_sample(&state, label, None))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_alfworld::{AlfworldConfig, AlfworldFactory};
    use act_model::{IM_END, IM_START};

    #[test]
    fn recovery_only_samples_pack_into_one_sequence_per_episode() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(6));
        let noisy = relabelled_episodes(&factory, Split::Train, 6, 0.3, 5).unwrap();
        // A history window longer than any episode: a sliding window would split long episodes anyway.
        let config = crate::prompts::prompt_config(crate::config::PromptStyle::Conversation, "ALFWorld", false)
            .with_history_len(100);
        let prompter = Prompter::new(config.clone()).unwrap();
        let all = relabelled_samples(&noisy, &prompter, config.history_len, true);
        let recovery = relabelled_samples(&noisy, &prompter, config.history_len, false);
        let steps: usize = noisy.iter().map(|r| r.labels.len()).sum();
        let mistakes: usize = noisy
            .iter()
            .flat_map(|r| r.trajectory.steps.iter().zip(&r.labels))
            .filter(|(step, label)| step.action != **label)
            .count();
        assert!(mistakes > 0);
        assert_eq!((all.len(), recovery.len()), (steps, steps - mistakes));
        // Within an episode, each kept sample (prompt, then its answer as an assistant turn) begins the next kept
        // sample's prompt, so the trainer packs the episode into one sequence; with mistake labels it cannot.
        let continues = |a: &SftSample, b: &SftSample| {
            b.prompt.starts_with(&format!("{}{IM_END}\n{IM_START}assistant\n{}{IM_END}", a.prompt, a.completion))
        };
        let breaks = |samples: &[SftSample]| samples.windows(2).filter(|w| !continues(&w[0], &w[1])).count();
        assert_eq!(breaks(&recovery) + 1, noisy.len(), "one chain per episode");
        assert!(breaks(&all) + 1 > noisy.len());
    }

    #[test]
    fn mixture_episodes_are_labelled_by_the_expert_where_the_learner_played() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(12));
        let mixed = mixture_episodes(&factory, act_rollout::RandomActor, 0.6, Split::Train, 0..12, 4, 2).unwrap();
        assert_eq!(mixed.len(), 12);
        assert_eq!(
            mixed,
            mixture_episodes(&factory, act_rollout::RandomActor, 0.6, Split::Train, 0..12, 4, 2).unwrap()
        );
        // A later round's games start further on and wrap around the split.
        let later = mixture_episodes(&factory, act_rollout::RandomActor, 0.6, Split::Train, 10..13, 4, 2).unwrap();
        let tasks: Vec<&str> = later.iter().map(|r| r.trajectory.task_id.as_str()).collect();
        assert_eq!(tasks, [&mixed[10].trajectory.task_id, &mixed[11].trajectory.task_id, &mixed[0].trajectory.task_id]);
        let mixture = ExpertMixture::new(act_rollout::RandomActor, 0.6);
        let specs = EpisodeSpec::split(Split::Train, 12, 2);
        let (mut expert_steps, mut off_expert) = (0, 0);
        for (r, spec) in mixed.iter().zip(&specs) {
            assert_eq!(r.labels.len(), r.trajectory.steps.len());
            for (t, (step, label)) in r.trajectory.steps.iter().zip(&r.labels).enumerate() {
                assert!(step.admissible_actions.contains(label), "{label} not admissible");
                if mixture.expert_acts(spec, t) {
                    expert_steps += 1;
                    assert_eq!(&step.action, label, "the expert's own step keeps its action as label");
                } else {
                    off_expert += usize::from(step.action != *label);
                }
            }
        }
        assert!(expert_steps > 0 && off_expert > 0, "{expert_steps} expert steps, {off_expert} learner mistakes");
        // A replay that does not retrace the episode is an error, not a wrong label.
        let mut env = factory.make().unwrap();
        let task = TaskRef::index(Split::Train, 0);
        let same_room = relabel(&mut env, &task, &mixed[0].trajectory).unwrap();
        assert_eq!(same_room, mixed[0]);
        let moved = Trajectory { steps: mixed[1].trajectory.steps.clone(), ..mixed[0].trajectory.clone() };
        assert!(relabel(&mut env, &task, &moved).is_err());
    }

    #[test]
    fn mistakes_are_played_and_every_state_gets_the_experts_label() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(20));
        let clean = relabelled_episodes(&factory, Split::Train, 20, 0.0, 3).unwrap();
        for r in &clean {
            let played: Vec<&Action> = r.trajectory.steps.iter().map(|s| &s.action).collect();
            assert_eq!(played, r.labels.iter().collect::<Vec<_>>());
            assert!(r.trajectory.outcome.won, "{}", r.trajectory.task_id);
        }
        let noisy = relabelled_episodes(&factory, Split::Train, 20, 0.3, 3).unwrap();
        assert_eq!(noisy, relabelled_episodes(&factory, Split::Train, 20, 0.3, 3).unwrap());
        let mut mistakes = 0;
        for r in &noisy {
            assert_eq!(r.labels.len(), r.trajectory.steps.len());
            for (step, label) in r.trajectory.steps.iter().zip(&r.labels) {
                // The expert only proposes actions the environment accepts.
                assert!(step.admissible_actions.contains(label), "{label} not admissible");
                mistakes += usize::from(step.action != *label);
            }
        }
        assert!(mistakes > 20, "{mistakes} injected mistakes");
        // The expert recovers from the mistakes: most noisy episodes are still won.
        assert!(noisy.iter().filter(|r| r.trajectory.outcome.won).count() >= 15);
    }
}
