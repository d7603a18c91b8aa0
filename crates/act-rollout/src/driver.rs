//! The episode driver: plays [`EpisodeSpec`]s with an [`Actor`] on environments from a factory, one at a time per
//! worker or in lockstep batches, and returns every episode as a [`PlayedEpisode`].
//!
//! - Batch size 1: episodes run in parallel on the current rayon pool, one environment per worker; each step is
//!   one actor call with one view, seeded `derive_seed(spec.sample_seed, step)`.
//! - Batch size `n > 1`: up to `n` episodes are live at once, each on its own environment; every call sends the
//!   views of all live episodes (in slot order) and a finished episode's slot takes the next unplayed one. Call `c`
//!   (from 0) is seeded `derive_seed(derive_seed(config.seed, LOCKSTEP_STREAM), c)`, `LOCKSTEP_STREAM` being
//!   `0x6C6F_636B_7374_6570`. A sampling actor's episodes are reproducible for a given batch size and differ
//!   between batch sizes; a seed-independent actor (greedy, the expert) plays the same episodes at every size.
//!
//! Environments reset and step in parallel on the rayon pool. What each slot plays, and the order of the views,
//! depend only on the episodes' outcomes, so results never depend on the thread count. On failure, the error of
//! the earliest failing episode (in `specs` order) of the first failing step is returned.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use act_core::{
    Action, AgentState, Environment, EnvironmentFactory, HistoryEntry, Observation, Outcome, Step, Trajectory,
    derive_seed,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::actor::{Actor, Decision, View};
use crate::episode::{PlayedEpisode, Turn};
use crate::error::{ActError, RolloutError};
use crate::invalid::{InvalidActionHandling, is_admissible, nearest_admissible};
use crate::spec::EpisodeSpec;

/// The sub-stream of [`RolloutConfig::seed`] that seeds the lockstep calls. Far above any episode index.
const LOCKSTEP_STREAM: u64 = 0x6C6F_636B_7374_6570; // "lockstep"

/// How episodes are played.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RolloutConfig {
    /// Episodes played in lockstep, their views sent to the actor together; 1 plays each episode on its own (see
    /// the module docs). Must not be 0.
    pub batch_size: usize,
    /// The most steps per episode; `None` uses the environment's [`Environment::step_budget`]. Must not be 0.
    pub step_budget: Option<usize>,
    /// What to do with an action the environment does not list.
    pub invalid_actions: InvalidActionHandling,
    /// Seeds the lockstep calls.
    pub seed: u64,
    /// Ends an episode once its last this-many actions (as sent) are the same one; `None` never does. ICRL's
    /// reference stops at 3: a policy that repeats itself three times will not recover, and its remaining budget
    /// is better spent elsewhere. Must not be 0.
    pub stop_after_repeats: Option<usize>,
}

impl Default for RolloutConfig {
    fn default() -> Self {
        RolloutConfig {
            batch_size: 1,
            step_budget: None,
            invalid_actions: InvalidActionHandling::AsIs,
            seed: 0,
            stop_after_repeats: None,
        }
    }
}

impl RolloutConfig {
    /// Checks the settings: a positive batch size, a positive step budget when one is set, and
    /// `stop_after_repeats` positive when set.
    pub fn validate(&self) -> Result<(), RolloutError> {
        if self.batch_size == 0 {
            return Err(RolloutError::Config("the batch size is 0".into()));
        }
        if self.step_budget == Some(0) {
            return Err(RolloutError::Config("the step budget is 0".into()));
        }
        if self.stop_after_repeats == Some(0) {
            return Err(RolloutError::Config("stop_after_repeats is 0: an episode would end before it starts".into()));
        }
        Ok(())
    }

    /// Sets the lockstep batch size.
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Overrides the step budget.
    #[must_use]
    pub fn with_step_budget(mut self, step_budget: usize) -> Self {
        self.step_budget = Some(step_budget);
        self
    }

    /// Sets the invalid-action handling.
    #[must_use]
    pub fn with_invalid_actions(mut self, handling: InvalidActionHandling) -> Self {
        self.invalid_actions = handling;
        self
    }

    /// Sets the seed of the lockstep calls.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Ends an episode once the same action was sent `repeats` times in a row.
    #[must_use]
    pub fn with_stop_after_repeats(mut self, repeats: usize) -> Self {
        self.stop_after_repeats = Some(repeats);
        self
    }
}

/// A callback told of each finished episode (say, to move a progress bar), from any worker thread.
type EpisodeCallback<'a> = &'a (dyn Fn(&PlayedEpisode) + Sync);

/// Plays episodes: an actor, environments from a factory, and the settings.
///
/// See the [crate docs](crate) for an example.
pub struct Rollout<'a, F: EnvironmentFactory> {
    factory: &'a F,
    actor: &'a dyn Actor,
    config: RolloutConfig,
    env: Option<F::Env>,
    on_episode: Option<EpisodeCallback<'a>>,
}

impl<'a, F: EnvironmentFactory> Rollout<'a, F> {
    /// `actor` on environments from `factory`, with the default settings.
    pub fn new(factory: &'a F, actor: &'a dyn Actor) -> Self {
        Rollout { factory, actor, config: RolloutConfig::default(), env: None, on_episode: None }
    }

    /// Sets the settings.
    #[must_use]
    pub fn with_config(mut self, config: RolloutConfig) -> Self {
        self.config = config;
        self
    }

    /// Uses `env` (say, one made to read a split's size) as the first environment instead of making one.
    #[must_use]
    pub fn with_env(mut self, env: F::Env) -> Self {
        self.env = Some(env);
        self
    }

    /// Calls `callback` with each episode as it finishes.
    #[must_use]
    pub fn on_episode(mut self, callback: EpisodeCallback<'a>) -> Self {
        self.on_episode = Some(callback);
        self
    }

    /// Plays `specs` and returns their episodes in the same order. Any environment or actor error stops the
    /// rollout and names the episode (or, for a failed batched call, the episodes in it).
    pub fn play(self, specs: &[EpisodeSpec]) -> Result<Vec<PlayedEpisode>, RolloutError> {
        self.config.validate()?;
        if specs.is_empty() {
            return Ok(Vec::new());
        }
        let first = match self.env {
            Some(env) => env,
            None => self.factory.make().map_err(RolloutError::MakeEnv)?,
        };
        let budget = self.config.step_budget.unwrap_or_else(|| first.step_budget());
        if budget == 0 {
            return Err(RolloutError::Config("the environment's step budget is 0".into()));
        }
        let player = Player { actor: self.actor, config: &self.config, budget, on_episode: self.on_episode };
        let mut played = if self.config.batch_size > 1 {
            player.lockstep(self.factory, first, specs)?
        } else {
            player.workers(self.factory, first, specs)?
        };
        played.sort_by_key(|(position, _)| *position);
        Ok(played.into_iter().map(|(_, episode)| episode).collect())
    }
}

/// An episode in play.
struct Live<'s> {
    /// The episode's position in `specs`.
    position: usize,
    spec: &'s EpisodeSpec,
    state: AgentState,
    trajectory: Trajectory,
    turns: Vec<Turn>,
    done: bool,
}

impl Live<'_> {
    fn finish(self) -> (usize, PlayedEpisode) {
        (self.position, PlayedEpisode { spec: self.spec.clone(), trajectory: self.trajectory, turns: self.turns })
    }
}

/// The settings of one [`Rollout::play`].
struct Player<'p> {
    actor: &'p dyn Actor,
    config: &'p RolloutConfig,
    budget: usize,
    on_episode: Option<EpisodeCallback<'p>>,
}

impl Player<'_> {
    /// Resets `env` to the episode at `position`.
    fn start<'s>(
        &self,
        env: &mut dyn Environment,
        position: usize,
        spec: &'s EpisodeSpec,
    ) -> Result<Live<'s>, RolloutError> {
        let reset =
            env.reset(&spec.task, spec.seed).map_err(|source| RolloutError::Env { episode: spec.index, source })?;
        let task = reset.task;
        Ok(Live {
            position,
            spec,
            state: AgentState {
                task_id: task.id.clone(),
                task: task.description.clone(),
                step_index: 0,
                history: Vec::new(),
                observation: reset.observation,
                admissible_actions: reset.admissible_actions.unwrap_or_default(),
            },
            trajectory: Trajectory {
                env: env.name().to_owned(),
                task_id: task.id,
                task_type: task.task_type,
                split: task.split,
                task: task.description,
                seed: spec.seed,
                steps: Vec::new(),
                outcome: Outcome { won: false, score: 0.0, steps_used: 0 },
            },
            turns: Vec::new(),
            done: false,
        })
    }

    fn is_over(&self, live: &Live<'_>) -> bool {
        live.done || live.turns.len() >= self.budget
    }

    /// Checks the actor's answer for the episodes `views_of` names, mapping its errors to theirs.
    fn decisions(
        &self,
        answer: Result<Vec<Option<Decision>>, ActError>,
        episodes: &[(usize, usize)],
        what: impl Fn() -> String,
    ) -> Result<Vec<Option<Decision>>, RolloutError> {
        let decisions = answer.map_err(|e| match e {
            ActError::Policy(source) => RolloutError::Policy { what: what(), source },
            ActError::Env { view, source } => {
                RolloutError::Env { episode: episodes.get(view).map_or(usize::MAX, |(index, _)| *index), source }
            }
            ActError::CompletionCount { expected, got } => {
                RolloutError::DecisionCount { what: what(), actor: self.actor.name().to_owned(), expected, got }
            }
        })?;
        if decisions.len() != episodes.len() {
            return Err(RolloutError::DecisionCount {
                what: what(),
                actor: self.actor.name().to_owned(),
                expected: episodes.len(),
                got: decisions.len(),
            });
        }
        Ok(decisions)
    }

    /// Plays `decision` in `live` on `env` (or ends the episode when there is none).
    fn play(
        &self,
        env: &mut dyn Environment,
        live: &mut Live<'_>,
        decision: Option<Decision>,
    ) -> Result<(), RolloutError> {
        let Some(Decision { completion, action: proposed, parsed }) = decision else {
            if live.turns.is_empty() {
                return Err(RolloutError::NoAction {
                    episode: live.spec.index,
                    actor: self.actor.name().to_owned(),
                    env: env.name().to_owned(),
                });
            }
            live.done = true;
            return Ok(());
        };
        let admissible = &live.state.admissible_actions;
        let valid = parsed && is_admissible(proposed.as_str(), admissible);
        let snap = !valid && self.config.invalid_actions == InvalidActionHandling::SnapToNearest;
        let action = match nearest_admissible(proposed.as_str(), admissible).filter(|_| snap) {
            Some(nearest) => nearest.clone(),
            None => proposed,
        };
        let snapped = snap && !admissible.is_empty();
        let transition =
            env.step(action.as_str()).map_err(|source| RolloutError::Env { episode: live.spec.index, source })?;
        let step = live.turns.len();
        live.turns.push(Turn {
            step,
            completion,
            action: action.clone(),
            valid,
            parsed,
            snapped,
            reward: transition.reward,
        });
        let observation: Observation = std::mem::replace(&mut live.state.observation, transition.observation);
        let admissible: Vec<Action> =
            std::mem::replace(&mut live.state.admissible_actions, transition.admissible_actions.unwrap_or_default());
        live.trajectory.steps.push(Step {
            observation: observation.clone(),
            admissible_actions: admissible,
            action: action.clone(),
            reward: transition.reward,
        });
        live.trajectory.outcome = Outcome { won: transition.won, score: transition.score, steps_used: step + 1 };
        live.state.history.push(HistoryEntry { observation, action });
        live.state.step_index = step + 1;
        live.done = transition.done || self.repeated(&live.turns);
        Ok(())
    }

    /// Whether the last [`RolloutConfig::stop_after_repeats`] turns sent one action.
    fn repeated(&self, turns: &[Turn]) -> bool {
        self.config.stop_after_repeats.is_some_and(|n| {
            turns.len() >= n && turns[turns.len() - n..].iter().all(|t| t.action == turns[turns.len() - 1].action)
        })
    }

    /// Reports a finished episode.
    fn finished(&self, live: Live<'_>) -> (usize, PlayedEpisode) {
        let finished = live.finish();
        if let Some(callback) = self.on_episode {
            callback(&finished.1);
        }
        finished
    }

    /// Plays one episode to its end on `env`, one actor call per step.
    fn run_one<E: Environment + Send>(
        &self,
        env: &mut E,
        position: usize,
        spec: &EpisodeSpec,
    ) -> Result<(usize, PlayedEpisode), RolloutError> {
        let mut live = self.start(env, position, spec)?;
        while !self.is_over(&live) {
            let step = live.turns.len();
            let seed = derive_seed(spec.sample_seed, step as u64);
            let answer = {
                let mut views = [View { spec, state: &live.state, env: &mut *env }];
                self.actor.act(&mut views, seed)
            };
            let what = || format!("episode {}, step {step}", spec.index);
            let mut decisions = self.decisions(answer, &[(spec.index, step)], what)?;
            self.play(env, &mut live, decisions.pop().flatten())?;
        }
        Ok(self.finished(live))
    }

    /// Batch size 1: one environment per worker thread (rayon's `map_init` could make one per split of the work,
    /// and environments can be costly to start); each worker pulls the next episode until none is left.
    fn workers<F: EnvironmentFactory>(
        &self,
        factory: &F,
        first: F::Env,
        specs: &[EpisodeSpec],
    ) -> Result<Vec<(usize, PlayedEpisode)>, RolloutError> {
        let workers = rayon::current_num_threads().clamp(1, specs.len());
        let spare = Mutex::new(Some(first));
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let outcomes: Vec<WorkerOutcome> = (0..workers)
            .into_par_iter()
            .with_max_len(1)
            .map(|_| {
                let mut done = Vec::new();
                let taken = spare.lock().ok().and_then(|mut s| s.take());
                let mut env = match taken.map_or_else(|| factory.make(), Ok) {
                    Ok(env) => env,
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        return (done, Some((next.load(Ordering::Relaxed), RolloutError::MakeEnv(e))));
                    }
                };
                while !failed.load(Ordering::Relaxed) {
                    let position = next.fetch_add(1, Ordering::Relaxed);
                    let Some(spec) = specs.get(position) else { break };
                    match self.run_one(&mut env, position, spec) {
                        Ok(episode) => done.push(episode),
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            return (done, Some((position, e)));
                        }
                    }
                }
                (done, None)
            })
            .collect();
        let mut played = Vec::with_capacity(specs.len());
        let mut first_error: Option<(usize, RolloutError)> = None;
        for (done, error) in outcomes {
            played.extend(done);
            if let Some((position, e)) = error
                && first_error.as_ref().is_none_or(|(first, _)| position < *first)
            {
                first_error = Some((position, e));
            }
        }
        match first_error {
            Some((_, e)) => Err(e),
            None => Ok(played),
        }
    }

    /// Batch size above 1: lockstep slots (see the module docs).
    fn lockstep<'s, F: EnvironmentFactory>(
        &self,
        factory: &F,
        first: F::Env,
        specs: &'s [EpisodeSpec],
    ) -> Result<Vec<(usize, PlayedEpisode)>, RolloutError> {
        let width = self.config.batch_size.clamp(1, specs.len());
        let made: Vec<F::Env> = (1..width)
            .into_par_iter()
            .map(|_| factory.make())
            .collect::<Result<_, _>>()
            .map_err(RolloutError::MakeEnv)?;
        let mut slots: Vec<Slot<'s, F::Env>> =
            std::iter::once(first).chain(made).map(|env| Slot { env, live: None }).collect();
        let mut next = 0;
        self.refill(&mut slots, &mut next, specs)?;

        let base_seed = derive_seed(self.config.seed, LOCKSTEP_STREAM);
        let mut played = Vec::with_capacity(specs.len());
        for call in 0u64.. {
            let mut live: Vec<(&mut F::Env, &mut Live<'s>)> =
                slots.iter_mut().filter_map(|Slot { env, live }| live.as_mut().map(|live| (env, live))).collect();
            if live.is_empty() {
                break;
            }
            let episodes: Vec<(usize, usize)> = live.iter().map(|(_, l)| (l.spec.index, l.turns.len())).collect();
            let answer = {
                let mut views: Vec<View<'_>> =
                    live.iter_mut().map(|(env, l)| View { spec: l.spec, state: &l.state, env: &mut **env }).collect();
                self.actor.act(&mut views, derive_seed(base_seed, call))
            };
            let decisions = self.decisions(answer, &episodes, || describe(episodes.iter().copied(), call))?;
            let outcomes: Vec<(usize, Result<(), RolloutError>)> = live
                .into_par_iter()
                .zip(decisions)
                .map(|((env, live), decision)| (live.position, self.play(env, live, decision)))
                .collect();
            first_failure(outcomes)?;
            for slot in &mut slots {
                if slot.live.as_ref().is_some_and(|live| self.is_over(live)) {
                    played.extend(slot.live.take().map(|live| self.finished(live)));
                }
            }
            self.refill(&mut slots, &mut next, specs)?;
        }
        Ok(played)
    }

    /// Starts the next unplayed episodes, in order, in the idle slots, in slot order.
    fn refill<'s, E: Environment + Send>(
        &self,
        slots: &mut [Slot<'s, E>],
        next: &mut usize,
        specs: &'s [EpisodeSpec],
    ) -> Result<(), RolloutError> {
        let mut starting = Vec::new();
        for slot in slots.iter_mut().filter(|slot| slot.live.is_none()) {
            if *next >= specs.len() {
                break;
            }
            starting.push((slot, *next));
            *next += 1;
        }
        let outcomes: Vec<(usize, Result<(), RolloutError>)> = starting
            .into_par_iter()
            .map(|(slot, position)| {
                let started = self.start(&mut slot.env, position, &specs[position]);
                (position, started.map(|live| slot.live = Some(live)))
            })
            .collect();
        first_failure(outcomes)
    }
}

/// What one worker played (with each episode's position), and the episode it failed on, if any.
type WorkerOutcome = (Vec<(usize, PlayedEpisode)>, Option<(usize, RolloutError)>);

/// One environment instance of a lockstep batch and the episode it is playing, if any.
struct Slot<'s, E> {
    env: E,
    live: Option<Live<'s>>,
}

/// The error of the earliest failing episode, if any failed.
fn first_failure(outcomes: Vec<(usize, Result<(), RolloutError>)>) -> Result<(), RolloutError> {
    let failure = outcomes
        .into_iter()
        .filter_map(|(position, outcome)| outcome.err().map(|e| (position, e)))
        .min_by_key(|(position, _)| *position);
    match failure {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Names the (episode, step) pairs of one batched call: "episode 3, step 1" for one, as the unbatched path does;
/// "episodes 0-2, 5 at steps 0-1 (batched call 4)" for several.
fn describe(queries: impl Iterator<Item = (usize, usize)>, call: u64) -> String {
    let (mut indices, steps): (Vec<usize>, Vec<usize>) = queries.unzip();
    if let ([index], [step]) = (indices.as_slice(), steps.as_slice()) {
        return format!("episode {index}, step {step}");
    }
    indices.sort_unstable();
    let mut text = String::from("episodes ");
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        let separator = if i == 0 { "" } else { ", " };
        let _ = if j > i {
            write!(text, "{separator}{}-{}", indices[i], indices[j])
        } else {
            write!(text, "{separator}{}", indices[i])
        };
        i = j + 1;
    }
    let (low, high) = (steps.iter().min().copied().unwrap_or(0), steps.iter().max().copied().unwrap_or(0));
    if low == high {
        format!("{text} at step {low} (batched call {call})")
    } else {
        format!("{text} at steps {low}-{high} (batched call {call})")
    }
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn batched_calls_name_their_episodes() {
        assert_eq!(describe([(3, 1)].into_iter(), 0), "episode 3, step 1");
        assert_eq!(
            describe([(5, 0), (0, 1), (1, 0), (2, 1)].into_iter(), 4),
            "episodes 0-2, 5 at steps 0-1 (batched call 4)"
        );
        assert_eq!(describe([(7, 2), (9, 2)].into_iter(), 1), "episodes 7, 9 at step 2 (batched call 1)");
    }
}
