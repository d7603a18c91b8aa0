//! Building pairs: sample K alternatives per expert state, filter, fall back, then balance presented orders.

use std::path::Path;

use act_core::{
    ActionPair, PairProvenance, Policy, PresentedOrder, Prompter, SamplingParams, Trajectory, derive_seed, write_jsonl,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::config::PairConfig;
use crate::error::PairError;
use crate::filter::{FilterOptions, fallback_alternative, select_alternatives};
use crate::order::balanced_orders;
use crate::stats::PairStats;

/// The stream of an epoch seed that orders its pairs (trajectory streams count up from 0).
const ORDER_STREAM: u64 = u64::MAX;
/// The stream of a state seed that draws its fallback (sample streams count up from 0).
const FALLBACK_STREAM: u64 = u64::MAX;

/// The pairs of one build and what the build did.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSet {
    /// The pairs, in trajectory order, then step order, then sampling order.
    pub pairs: Vec<ActionPair>,
    /// The statistics.
    pub stats: PairStats,
}

impl PairSet {
    /// Writes the pairs as JSONL, atomically.
    pub fn write_jsonl(&self, path: impl AsRef<Path>) -> Result<(), PairError> {
        Ok(write_jsonl(path, &self.pairs)?)
    }
}

/// Builds ACT's critic pairs from expert trajectories and an initial policy.
///
/// Deterministic in (seed, effective epoch): the same inputs give the same pairs whatever the thread count, since
/// every random choice draws from a seed derived from (epoch, trajectory index, step).
pub struct PairBuilder<P> {
    config: PairConfig,
    policy: P,
    prompter: Prompter,
}

impl<P: Policy> PairBuilder<P> {
    /// A builder sampling from `policy`; fails on an invalid configuration or prompt template.
    pub fn new(config: PairConfig, policy: P) -> Result<Self, PairError> {
        config.validate()?;
        let prompter = Prompter::new(config.prompt.clone())?;
        Ok(PairBuilder { config, policy, prompter })
    }

    /// The configuration.
    pub fn config(&self) -> &PairConfig {
        &self.config
    }

    /// The policy alternatives are sampled from.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The pairs of `epoch`: the same for every epoch in fixed mode, a fresh set per epoch when re-sampling.
    pub fn build(&self, trajectories: &[Trajectory], epoch: u64) -> Result<PairSet, PairError> {
        let epoch_seed = derive_seed(self.config.seed, self.config.effective_epoch(epoch));
        let progress = self.progress_bar(trajectories.len());
        let per_trajectory = |(index, trajectory): (usize, &Trajectory)| {
            let result = self.trajectory_pairs(trajectory, derive_seed(epoch_seed, index as u64));
            progress.inc(1);
            result
        };
        let parts: Vec<(Vec<ActionPair>, PairStats)> = if self.config.parallel {
            trajectories.par_iter().enumerate().map(per_trajectory).collect::<Result<_, _>>()?
        } else {
            trajectories.iter().enumerate().map(per_trajectory).collect::<Result<_, _>>()?
        };
        progress.finish_and_clear();

        let mut stats = PairStats {
            policy: self.policy.name().to_owned(),
            mode: self.config.mode,
            epoch,
            seed: self.config.seed,
            ..PairStats::default()
        };
        let mut pairs = Vec::new();
        for (trajectory_pairs, trajectory_stats) in parts {
            pairs.extend(trajectory_pairs);
            stats.add_counts(&trajectory_stats);
        }
        // Orders are assigned over the whole set, so the balance holds for the set and not just on average.
        for (pair, order) in pairs.iter_mut().zip(balanced_orders(stats.pairs, derive_seed(epoch_seed, ORDER_STREAM))) {
            pair.order = order;
        }
        stats.expert_first = pairs.iter().filter(|p| p.order == PresentedOrder::ExpertFirst).count();
        stats.expert_first_fraction = (stats.pairs > 0).then(|| stats.expert_first as f64 / stats.pairs as f64);
        Ok(PairSet { pairs, stats })
    }

    /// Builds the pairs of `epoch` and writes them to `path` as JSONL.
    pub fn build_to_file(
        &self,
        trajectories: &[Trajectory],
        epoch: u64,
        path: impl AsRef<Path>,
    ) -> Result<PairStats, PairError> {
        let set = self.build(trajectories, epoch)?;
        set.write_jsonl(path)?;
        Ok(set.stats)
    }

    /// The pairs of one trajectory (orders not yet assigned) and its counts.
    fn trajectory_pairs(
        &self,
        trajectory: &Trajectory,
        trajectory_seed: u64,
    ) -> Result<(Vec<ActionPair>, PairStats), PairError> {
        let c = &self.config;
        let k = c.samples_per_state;
        let options = FilterOptions {
            require_reasoning: c.require_reasoning,
            filter_inadmissible: c.filter_inadmissible,
            max_kept: c.max_pairs_per_state,
        };
        let mut stats = PairStats { trajectories: 1, ..PairStats::default() };
        let mut pairs = Vec::new();
        for (state, expert) in trajectory.states(c.prompt.history_len) {
            let step_index = state.step_index;
            let state_seed = derive_seed(trajectory_seed, step_index as u64);
            let query = self.prompter.act_query(&state);
            let queries = vec![query; k];
            let params = SamplingParams { seed: state_seed, ..c.sampling.clone() };
            let completions = self.policy.generate(&queries, &params).map_err(|source| PairError::Policy {
                task_id: trajectory.task_id.clone(),
                step_index,
                source,
            })?;
            if completions.len() != k {
                return Err(PairError::CompletionCount {
                    policy: self.policy.name().to_owned(),
                    task_id: trajectory.task_id.clone(),
                    step_index,
                    expected: k,
                    got: completions.len(),
                });
            }
            stats.states_seen += 1;
            stats.samples_drawn += k;
            let selection = select_alternatives(&state, expert, &completions, options);
            stats.filtered.add(&selection.filtered);
            stats.surplus += selection.surplus;

            let provenance = |seed: u64, fallback: bool| PairProvenance {
                env: trajectory.env.clone(),
                task_id: trajectory.task_id.clone(),
                step_index,
                policy: self.policy.name().to_owned(),
                seed,
                temperature: (!fallback).then_some(c.sampling.temperature),
                fallback,
            };
            // Query i samples from derive_seed(params.seed, i) (the Policy contract): that is the sample's seed.
            let mut alternatives: Vec<_> = selection
                .kept
                .into_iter()
                .map(|(index, action)| (action, provenance(derive_seed(state_seed, index as u64), false)))
                .collect();
            stats.pairs_from_samples += alternatives.len();
            if alternatives.is_empty() && c.fallback {
                let seed = derive_seed(state_seed, FALLBACK_STREAM);
                if let Some(action) = fallback_alternative(&state, expert, seed) {
                    alternatives.push((action, provenance(seed, true)));
                    stats.fallbacks += 1;
                }
            }
            if alternatives.is_empty() {
                stats.states_without_pairs += 1;
            } else {
                stats.states_with_pairs += 1;
            }
            stats.pairs += alternatives.len();
            pairs.extend(alternatives.into_iter().map(|(alternative, provenance)| ActionPair {
                state: state.clone(),
                expert_action: expert.clone(),
                alternative,
                order: PresentedOrder::ExpertFirst,
                provenance,
            }));
        }
        Ok((pairs, stats))
    }

    fn progress_bar(&self, len: usize) -> ProgressBar {
        if !self.config.progress {
            return ProgressBar::hidden();
        }
        // The stderr target hides itself when stderr is not a terminal.
        let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("pairs {bar:40} {pos}/{len} trajectories ({eta} left)") {
            bar.set_style(style);
        }
        bar
    }
}
