//! On-line evaluation: whole episodes of a policy (or the environment's expert) on an environment split.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use act_core::{Environment, EnvironmentFactory, Prompter};
use act_rollout::{EpisodeSpec, Rollout, RolloutConfig};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::error::EvalError;
pub use crate::play::{Agent, EpisodeEvalConfig, EpisodeResult, InvalidActionHandling, RejectedRetry, TranscriptStep};
use crate::stats::{self, BootstrapConfig, Estimate};

/// The success and score of one task type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskTypeSummary {
    /// Episodes of this type.
    pub episodes: usize,
    /// Their success rate.
    pub success: Estimate,
    /// Their mean score.
    pub score: Estimate,
}

/// The headline numbers of an on-line evaluation, each with its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeSummary {
    /// The fraction of episodes won.
    pub success: Estimate,
    /// The mean final score.
    pub score: Estimate,
    /// The mean steps of the episodes won; `None` when none was.
    pub steps_to_success: Option<Estimate>,
    /// Invalid actions per step (all steps pooled; intervals resample episodes); `None` when no step was taken.
    pub invalid_action_rate: Option<Estimate>,
    /// Unparseable outputs per step; `None` when no step was taken.
    pub unparseable_rate: Option<Estimate>,
    /// Success and score per task type.
    pub by_task_type: BTreeMap<String, TaskTypeSummary>,
}

impl EpisodeSummary {
    /// Summarises `results`; fails when there are none.
    pub fn compute(results: &[EpisodeResult], bootstrap: &BootstrapConfig) -> Result<Self, EvalError> {
        let empty = || EvalError::Config("no episodes to summarise".into());
        let won: Vec<bool> = results.iter().map(|r| r.won).collect();
        let scores: Vec<f64> = results.iter().map(|r| r.score).collect();
        let winning_steps: Vec<f64> = results.iter().filter(|r| r.won).map(|r| r.steps as f64).collect();
        let steps: Vec<f64> = results.iter().map(|r| r.steps as f64).collect();
        let invalid: Vec<f64> = results.iter().map(|r| r.invalid_actions as f64).collect();
        let unparseable: Vec<f64> = results.iter().map(|r| r.unparseable_outputs as f64).collect();
        let mut by_type: BTreeMap<&str, Vec<&EpisodeResult>> = BTreeMap::new();
        for result in results {
            by_type.entry(result.task_type.as_str()).or_default().push(result);
        }
        let by_task_type = by_type
            .into_iter()
            .map(|(task_type, members)| {
                let won: Vec<bool> = members.iter().map(|r| r.won).collect();
                let scores: Vec<f64> = members.iter().map(|r| r.score).collect();
                let summary = TaskTypeSummary {
                    episodes: members.len(),
                    success: stats::rate(&won, bootstrap).ok_or_else(empty)?,
                    score: stats::mean(&scores, bootstrap).ok_or_else(empty)?,
                };
                Ok((task_type.to_owned(), summary))
            })
            .collect::<Result<_, EvalError>>()?;
        Ok(EpisodeSummary {
            success: stats::rate(&won, bootstrap).ok_or_else(empty)?,
            score: stats::mean(&scores, bootstrap).ok_or_else(empty)?,
            steps_to_success: stats::mean(&winning_steps, bootstrap),
            invalid_action_rate: stats::ratio(&invalid, &steps, bootstrap),
            unparseable_rate: stats::ratio(&unparseable, &steps, bootstrap),
            by_task_type,
        })
    }
}

/// A whole on-line evaluation: what was run, every episode, and the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeReport {
    /// The environment's name.
    pub env: String,
    /// The agent's name ("expert" or the policy's).
    pub method: String,
    /// The settings.
    pub config: EpisodeEvalConfig,
    /// The step budget in force.
    pub step_budget: usize,
    /// How many episodes were played; always `results.len()`.
    pub episodes: usize,
    /// Every episode, in index order.
    pub results: Vec<EpisodeResult>,
    /// The summary of `results`.
    pub summary: EpisodeSummary,
}

impl EpisodeReport {
    /// Checks the report is whole and consistent: the recorded count matches the episodes, the episodes are
    /// numbered `0..n` in order, and the summary is the one `results` give.
    pub fn validate(&self) -> Result<(), String> {
        if self.results.len() != self.episodes {
            return Err(format!(
                "records {} episodes but holds {} (truncated or edited?)",
                self.episodes,
                self.results.len()
            ));
        }
        check_indices(self.results.iter().map(|r| r.index), "episode")?;
        if let Some(bad) = self.results.iter().find(|r| r.invalid_actions > r.steps || r.unparseable_outputs > r.steps)
        {
            return Err(format!("episode {} counts more invalid actions than steps", bad.index));
        }
        self.config.bootstrap.validate().map_err(|e| e.to_string())?;
        let summary = EpisodeSummary::compute(&self.results, &self.config.bootstrap).map_err(|e| e.to_string())?;
        if summary != self.summary {
            return Err("the summary does not match the per-episode results (edited or corrupted?)".into());
        }
        Ok(())
    }

    /// The outcomes as 0/1 values in episode order, for [`paired_comparison`](crate::stats::paired_comparison).
    pub fn success_values(&self) -> Vec<f64> {
        self.results.iter().map(|r| if r.won { 1.0 } else { 0.0 }).collect()
    }
}

/// Checks that `indices` run `0, 1, 2, ...`.
pub(crate) fn check_indices(indices: impl Iterator<Item = usize>, what: &str) -> Result<(), String> {
    for (expected, index) in indices.enumerate() {
        if index != expected {
            return Err(format!("{what} {expected} is missing or out of order (found index {index} in its place)"));
        }
    }
    Ok(())
}

/// Plays the episodes of `config` with `agent` on environments from `factory`, in parallel on the current rayon
/// pool (run it inside [`rayon::ThreadPool::install`] to choose the thread count). With a policy and
/// [`EpisodeEvalConfig::batch_size`] above 1, the episodes are played in lockstep batches instead, one
/// [`Policy::generate`](act_core::Policy::generate) call per step of the whole batch (see the module docs).
///
/// Any environment or policy error stops the evaluation and names the episode (or, for a failed batched call, the
/// episodes in it): a report never leaves an episode out.
///
/// Episode `i` plays task `i` of the split with seed [`derive_seed`](act_core::derive_seed)`(config.seed, i)`.
/// Results are kept in episode order, so the report is the same for any thread count.
///
/// How the policy is called depends on [`EpisodeEvalConfig::batch_size`]:
///
/// - `1` (the default): episodes run in parallel on the current rayon pool, one environment instance per worker,
///   and each step of each episode is one [`Policy::generate`](act_core::Policy::generate) call with a single
///   query, whose sampling seed at step `t` is `derive_seed(episode_seed, t)`.
/// - `n > 1`: up to `n` episodes are played in lockstep, each on its own environment instance: every call sends
///   one action query per live episode (in the order of the batch's slots) and a finished episode's slot takes the
///   next unplayed episode, so the batch stays full until the episodes run out. Call `c` (counting from 0) samples
///   with seed `derive_seed(derive_seed(config.seed, LOCKSTEP_STREAM), c)`, where `LOCKSTEP_STREAM` is
///   `0x6C6F_636B_7374_6570`, so query `i` of it samples from `derive_seed(that seed, i)` (the
///   [`Policy`](act_core::Policy) contract). A sampling (temperature > 0) policy's results are therefore
///   reproducible for a given batch size but differ from those of batch size 1 (and of other batch sizes); a
///   greedy or otherwise seed-independent policy gives the same results for every batch size. Environments step
///   in parallel on the rayon pool; the results never depend on the thread count.
///
/// The expert ([`Agent::Expert`]) asks no policy and always plays as with batch size 1. act-rollout's driver plays
/// the episodes ([`act_rollout::Rollout`]).
pub fn evaluate_episodes<F: EnvironmentFactory>(
    factory: &F,
    agent: Agent<'_>,
    config: &EpisodeEvalConfig,
) -> Result<EpisodeReport, EvalError> {
    config.validate()?;
    let prompter =
        Prompter::new(config.prompt.clone()).map_err(|e| EvalError::Config(format!("prompt templates: {e}")))?;
    let probe = factory.make().map_err(EvalError::MakeEnv)?;
    let env_name = probe.name().to_owned();
    let available = probe.num_tasks(config.split).map_err(EvalError::EnvSetup)?;
    let episodes = match config.episodes {
        Some(n) if n > available => {
            return Err(EvalError::Config(format!(
                "asked for {n} episodes but split `{}` of `{env_name}` has {available} tasks",
                config.split
            )));
        }
        Some(n) => n,
        None => available,
    };
    if episodes == 0 {
        return Err(EvalError::Config(format!("no episodes to play on split `{}` of `{env_name}`", config.split)));
    }
    let step_budget = config.step_budget.unwrap_or_else(|| probe.step_budget());
    if step_budget == 0 {
        return Err(EvalError::Config(format!("the step budget of `{env_name}` is 0")));
    }

    let progress = progress_bar(episodes as u64, config.progress, &format!("{} on {env_name}", agent.name()));
    let actor = agent.actor(prompter, config);
    // The expert asks no policy: its episodes run one per worker, whatever the batch size.
    let batch_size = if matches!(agent, Agent::Expert) { 1 } else { config.batch_size };
    let rollout = RolloutConfig::default()
        .with_batch_size(batch_size)
        .with_step_budget(step_budget)
        .with_invalid_actions(config.invalid_actions)
        .with_seed(config.seed);
    let tick = |_: &act_rollout::PlayedEpisode| progress.inc(1);
    let played = Rollout::new(factory, actor.as_ref())
        .with_config(rollout)
        .with_env(probe)
        .on_episode(&tick)
        .play(&EpisodeSpec::split(config.split, episodes, config.seed));
    progress.finish_and_clear();
    let results: Vec<EpisodeResult> =
        played?.into_iter().map(|p| EpisodeResult::from_played(p, config.record_transcripts)).collect();
    let summary = EpisodeSummary::compute(&results, &config.bootstrap)?;
    Ok(EpisodeReport {
        env: env_name,
        method: agent.name().to_owned(),
        config: EpisodeEvalConfig { progress: false, ..config.clone() },
        step_budget,
        episodes,
        results,
        summary,
    })
}

/// A progress bar on stderr when asked for and stderr is a terminal; a hidden one otherwise.
pub(crate) fn progress_bar(len: u64, wanted: bool, message: &str) -> ProgressBar {
    if !wanted || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta} left)") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_owned());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_checks_name_the_gap() {
        assert!(check_indices([0, 1, 2].into_iter(), "episode").is_ok());
        let err = check_indices([0, 2].into_iter(), "episode").unwrap_err();
        assert!(err.contains("episode 1 is missing"), "{err}");
    }
}
