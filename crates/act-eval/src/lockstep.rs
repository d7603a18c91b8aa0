//! Lockstep batched episodes: up to `batch_size` episodes at once, one [`Policy::generate`] call per step of them
//! all, a finished episode's slot refilled with the next unplayed one (see the [`episodes`](crate::episodes) module
//! docs for the seeds).
//!
//! The driver itself is single-threaded; the environments of a batch reset and step in parallel on the current
//! rayon pool. What each slot plays, and in which order its query is sent, depends only on the episodes' outcomes,
//! so the results never depend on the thread count.

use std::fmt::Write as _;

use act_core::{Environment, EnvironmentFactory, Policy, Query, derive_seed};
use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::error::EvalError;
use crate::play::{Episode, EpisodeResult, EpisodeRunner};

/// The sub-stream of the evaluation seed that seeds the batched calls: call `c` samples with
/// `derive_seed(derive_seed(seed, LOCKSTEP_STREAM), c)`. Far above any episode index, whose streams seed episodes.
const LOCKSTEP_STREAM: u64 = 0x6C6F_636B_7374_6570; // "lockstep"

/// One environment instance and the episode it is playing, if any.
struct Slot<E> {
    env: E,
    episode: Option<Episode>,
}

/// Plays episodes `0..episodes` of `runner` with `policy` in lockstep batches of `runner.config.batch_size`,
/// `probe` serving as the first slot's environment. On failure, the error of the lowest failing episode of the
/// first failing step is returned.
pub(crate) fn run_lockstep<F: EnvironmentFactory>(
    factory: &F,
    probe: F::Env,
    episodes: usize,
    policy: &dyn Policy,
    runner: &EpisodeRunner<'_>,
    progress: &ProgressBar,
) -> Result<Vec<EpisodeResult>, EvalError> {
    let width = runner.config.batch_size.clamp(1, episodes);
    let made: Vec<F::Env> = (1..width)
        .into_par_iter()
        .map(|_| factory.make())
        .collect::<Result<_, _>>()
        .map_err(|e| EvalError::MakeEnv(e.to_string()))?;
    let mut slots: Vec<Slot<F::Env>> =
        std::iter::once(probe).chain(made).map(|env| Slot { env, episode: None }).collect();
    let mut next = 0;
    refill(&mut slots, &mut next, episodes, runner)?;

    let base_seed = derive_seed(runner.config.seed, LOCKSTEP_STREAM);
    let mut results = Vec::with_capacity(episodes);
    for call in 0u64.. {
        let live: Vec<(&mut F::Env, &mut Episode)> = slots
            .iter_mut()
            .filter_map(|Slot { env, episode }| episode.as_mut().map(|episode| (env, episode)))
            .collect();
        if live.is_empty() {
            break;
        }
        let queries: Vec<Query> = live.iter().map(|(_, episode)| runner.query(episode)).collect();
        let what = || describe(live.iter().map(|(_, episode)| (episode.index(), episode.step())), call);
        let params = runner.config.sampling.clone().with_seed(derive_seed(base_seed, call));
        let outputs =
            policy.generate(&queries, &params).map_err(|source| EvalError::Policy { what: what(), source })?;
        if outputs.len() != queries.len() {
            return Err(EvalError::CompletionCount {
                what: what(),
                policy: policy.name().to_owned(),
                expected: queries.len(),
                got: outputs.len(),
            });
        }
        let outcomes: Vec<(usize, Result<(), EvalError>)> = live
            .into_par_iter()
            .zip(outputs)
            .map(|((env, episode), output)| {
                let decision = runner.interpret(output, episode);
                (episode.index(), runner.play(env, episode, decision))
            })
            .collect();
        first_failure(outcomes)?;
        for slot in &mut slots {
            if slot.episode.as_ref().is_some_and(|episode| runner.is_over(episode)) {
                results.extend(slot.episode.take().map(Episode::into_result));
                progress.inc(1);
            }
        }
        refill(&mut slots, &mut next, episodes, runner)?;
    }
    Ok(results)
}

/// Starts the next unplayed episodes, in order, in the idle slots, in slot order.
fn refill<E: Environment + Send>(
    slots: &mut [Slot<E>],
    next: &mut usize,
    episodes: usize,
    runner: &EpisodeRunner<'_>,
) -> Result<(), EvalError> {
    let mut starting = Vec::new();
    for slot in slots.iter_mut().filter(|slot| slot.episode.is_none()) {
        if *next >= episodes {
            break;
        }
        starting.push((slot, *next));
        *next += 1;
    }
    let outcomes: Vec<(usize, Result<(), EvalError>)> = starting
        .into_par_iter()
        .map(|(slot, index)| (index, runner.start(&mut slot.env, index).map(|episode| slot.episode = Some(episode))))
        .collect();
    first_failure(outcomes)
}

/// The error of the lowest failing episode, if any failed.
fn first_failure(outcomes: Vec<(usize, Result<(), EvalError>)>) -> Result<(), EvalError> {
    let failure = outcomes
        .into_iter()
        .filter_map(|(index, outcome)| outcome.err().map(|e| (index, e)))
        .min_by_key(|(index, _)| *index);
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
