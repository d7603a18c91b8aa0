//! Settings and batching shared by the off-line evaluations (next-action and critic accuracy).

use act_core::{Policy, PromptConfig, Query, SamplingParams, derive_seed};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::episodes::progress_bar;
use crate::error::EvalError;
use crate::stats::BootstrapConfig;

/// Settings of an off-line evaluation over fixed items. Everything here is recorded in the report.
///
/// Items are sent in batches of `batch_size`; batch `b` samples with seed `derive_seed(seed, b)` (so query `j` of it
/// with `derive_seed(derive_seed(seed, b), j)`, by the [`Policy`] contract). The results depend on `seed` and
/// `batch_size`, never on the thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemEvalConfig {
    /// The evaluation seed.
    pub seed: u64,
    /// Queries per [`Policy::generate`] call.
    pub batch_size: usize,
    /// Whether an output without a well-formed `<think>` block counts as unparseable.
    pub require_reasoning: bool,
    /// How prompts are built.
    pub prompt: PromptConfig,
    /// How the policy samples (its `seed` is replaced per batch).
    pub sampling: SamplingParams,
    /// How intervals are drawn.
    pub bootstrap: BootstrapConfig,
    /// Whether to draw a progress bar (only ever on a terminal). Not recorded: always `false` in a report.
    #[serde(skip)]
    pub progress: bool,
}

impl Default for ItemEvalConfig {
    fn default() -> Self {
        ItemEvalConfig {
            seed: 0,
            batch_size: 16,
            require_reasoning: false,
            prompt: PromptConfig::default(),
            sampling: SamplingParams::greedy(),
            bootstrap: BootstrapConfig::default(),
            progress: true,
        }
    }
}

impl ItemEvalConfig {
    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the batch size.
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Sets whether reasoning is required for an output to parse.
    #[must_use]
    pub fn with_require_reasoning(mut self, require: bool) -> Self {
        self.require_reasoning = require;
        self
    }

    /// Sets the prompt configuration.
    #[must_use]
    pub fn with_prompt(mut self, prompt: PromptConfig) -> Self {
        self.prompt = prompt;
        self
    }

    /// Sets the sampling parameters.
    #[must_use]
    pub fn with_sampling(mut self, sampling: SamplingParams) -> Self {
        self.sampling = sampling;
        self
    }

    /// Sets the bootstrap configuration.
    #[must_use]
    pub fn with_bootstrap(mut self, bootstrap: BootstrapConfig) -> Self {
        self.bootstrap = bootstrap;
        self
    }

    /// Turns the progress bar on or off.
    #[must_use]
    pub fn with_progress(mut self, progress: bool) -> Self {
        self.progress = progress;
        self
    }

    /// Checks the settings: a positive batch size and valid bootstrap settings. The evaluations call it first.
    pub fn validate(&self) -> Result<(), EvalError> {
        if self.batch_size == 0 {
            return Err(EvalError::Config("the batch size is 0".into()));
        }
        self.bootstrap.validate()
    }
}

/// Sends `queries` to `policy` in batches (in parallel on the current rayon pool) and returns one completion per
/// query, in order.
pub(crate) fn generate_all(
    policy: &dyn Policy,
    queries: &[Query],
    config: &ItemEvalConfig,
    label: &str,
) -> Result<Vec<String>, EvalError> {
    let progress = progress_bar(queries.len() as u64, config.progress, label);
    let batches: Result<Vec<Vec<String>>, EvalError> = queries
        .par_chunks(config.batch_size)
        .enumerate()
        .map(|(b, batch)| {
            let start = b * config.batch_size;
            let what = || format!("items {start}..{}", start + batch.len());
            let params = config.sampling.clone().with_seed(derive_seed(config.seed, b as u64));
            let outputs =
                policy.generate(batch, &params).map_err(|source| EvalError::Policy { what: what(), source })?;
            if outputs.len() != batch.len() {
                return Err(EvalError::CompletionCount {
                    what: what(),
                    policy: policy.name().to_owned(),
                    expected: batch.len(),
                    got: outputs.len(),
                });
            }
            progress.inc(batch.len() as u64);
            Ok(outputs)
        })
        .collect();
    progress.finish_and_clear();
    Ok(batches?.into_iter().flatten().collect())
}
