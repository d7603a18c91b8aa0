//! How pairs are built: plain data with `with_*` builders.

use act_core::{PromptConfig, SamplingParams};
use serde::{Deserialize, Serialize};

use crate::error::PairError;

/// Whether each epoch trains on the same pairs or on freshly sampled ones (the paper's control).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PairMode {
    /// Build once: every epoch gets the pairs of epoch 0.
    #[default]
    Fixed,
    /// Re-sample: each epoch draws a fresh pair set from its own seed.
    Resampled,
}

/// How [`PairBuilder`](crate::PairBuilder) samples, filters and orders pairs.
///
/// ```
/// use act_pairs::{PairConfig, PairMode};
/// let config = PairConfig::default().with_k(8).with_temperature(0.7).with_fallback(true).with_mode(PairMode::Resampled);
/// assert_eq!(config.samples_per_state, 8);
/// assert!(config.filter_inadmissible);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PairConfig {
    /// K: alternatives sampled from the policy at each expert state.
    pub samples_per_state: usize,
    /// How the policy samples (its `seed` is replaced by a seed per state).
    pub sampling: SamplingParams,
    /// The action prompt shown to the policy, and the history length of the states stored in pairs.
    pub prompt: PromptConfig,
    /// Require a `<think>` block for a sample to count as parseable.
    pub require_reasoning: bool,
    /// Drop samples that are not among the state's admissible actions (only where the state lists them).
    pub filter_inadmissible: bool,
    /// When every sample of a state is filtered out, pair the expert action with a uniformly random admissible
    /// action instead (recorded in [`PairProvenance::fallback`](act_core::PairProvenance::fallback)); when off,
    /// such a state yields no pair.
    pub fallback: bool,
    /// M: the most pairs kept per state, taking surviving samples in sampling order.
    pub max_pairs_per_state: usize,
    /// Fixed or re-sampled pairs.
    pub mode: PairMode,
    /// The seed every random choice flows from.
    pub seed: u64,
    /// Sample trajectories in parallel (rayon); results do not depend on it, only speed does.
    pub parallel: bool,
    /// Show a progress bar on stderr (it stays hidden when stderr is not a terminal).
    pub progress: bool,
}

impl Default for PairConfig {
    fn default() -> Self {
        PairConfig {
            samples_per_state: 4,
            sampling: SamplingParams::default(),
            prompt: PromptConfig::default(),
            require_reasoning: false,
            filter_inadmissible: true,
            fallback: false,
            max_pairs_per_state: 1,
            mode: PairMode::Fixed,
            seed: 0,
            parallel: true,
            progress: true,
        }
    }
}

impl PairConfig {
    /// Sets K, the samples drawn per state.
    #[must_use]
    pub fn with_k(mut self, k: usize) -> Self {
        self.samples_per_state = k;
        self
    }

    /// Sets the sampling temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.sampling.temperature = temperature;
        self
    }

    /// Replaces the sampling parameters.
    #[must_use]
    pub fn with_sampling(mut self, sampling: SamplingParams) -> Self {
        self.sampling = sampling;
        self
    }

    /// Replaces the prompt configuration.
    #[must_use]
    pub fn with_prompt(mut self, prompt: PromptConfig) -> Self {
        self.prompt = prompt;
        self
    }

    /// Sets whether samples need a `<think>` block.
    #[must_use]
    pub fn with_require_reasoning(mut self, require: bool) -> Self {
        self.require_reasoning = require;
        self
    }

    /// Sets whether inadmissible samples are dropped.
    #[must_use]
    pub fn with_filter_inadmissible(mut self, filter: bool) -> Self {
        self.filter_inadmissible = filter;
        self
    }

    /// Sets whether a state whose samples were all filtered falls back to a random admissible alternative.
    #[must_use]
    pub fn with_fallback(mut self, fallback: bool) -> Self {
        self.fallback = fallback;
        self
    }

    /// Sets M, the most pairs kept per state.
    #[must_use]
    pub fn with_max_pairs_per_state(mut self, max: usize) -> Self {
        self.max_pairs_per_state = max;
        self
    }

    /// Sets fixed or re-sampled mode.
    #[must_use]
    pub fn with_mode(mut self, mode: PairMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets whether trajectories are processed in parallel.
    #[must_use]
    pub fn with_parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// Sets whether a progress bar may be shown.
    #[must_use]
    pub fn with_progress(mut self, progress: bool) -> Self {
        self.progress = progress;
        self
    }

    /// Checks the configuration can build pairs.
    pub fn validate(&self) -> Result<(), PairError> {
        if self.samples_per_state == 0 {
            return Err(PairError::Config("samples_per_state (K) must be at least 1".to_owned()));
        }
        if self.max_pairs_per_state == 0 {
            return Err(PairError::Config("max_pairs_per_state (M) must be at least 1".to_owned()));
        }
        let t = self.sampling.temperature;
        if !(t.is_finite() && t >= 0.0) {
            return Err(PairError::Config(format!("sampling temperature must be finite and >= 0, got {t}")));
        }
        Ok(())
    }

    /// The epoch whose seed builds the pairs of `epoch`: 0 in fixed mode, `epoch` when re-sampling.
    pub fn effective_epoch(&self, epoch: u64) -> u64 {
        match self.mode {
            PairMode::Fixed => 0,
            PairMode::Resampled => epoch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_set_fields() {
        let c = PairConfig::default()
            .with_k(3)
            .with_temperature(0.5)
            .with_require_reasoning(true)
            .with_filter_inadmissible(false)
            .with_fallback(true)
            .with_max_pairs_per_state(2)
            .with_mode(PairMode::Resampled)
            .with_seed(11)
            .with_parallel(false)
            .with_progress(false)
            .with_prompt(PromptConfig::default().with_history_len(5))
            .with_sampling(SamplingParams::greedy().with_max_new_tokens(64).with_temperature(0.25));
        assert_eq!((c.samples_per_state, c.max_pairs_per_state, c.seed), (3, 2, 11));
        assert!(c.require_reasoning && !c.filter_inadmissible && c.fallback && !c.parallel && !c.progress);
        assert_eq!((c.sampling.temperature, c.sampling.max_new_tokens), (0.25, 64));
        assert_eq!(c.prompt.history_len, 5);
        assert_eq!(c.effective_epoch(3), 3);
        assert_eq!(c.with_mode(PairMode::Fixed).effective_epoch(3), 0);
    }

    #[test]
    fn invalid_configs_are_rejected() {
        assert!(PairConfig::default().validate().is_ok());
        let err = PairConfig::default().with_k(0).validate().unwrap_err();
        assert!(err.to_string().contains("samples_per_state"), "{err}");
        assert!(PairConfig::default().with_max_pairs_per_state(0).validate().is_err());
        assert!(PairConfig::default().with_temperature(f32::NAN).validate().is_err());
        assert!(PairConfig::default().with_temperature(-1.0).validate().is_err());
    }

    #[test]
    fn configs_load_from_partial_json() {
        let c: PairConfig = serde_json::from_str(r#"{"samples_per_state": 2, "mode": "resampled"}"#).unwrap();
        assert_eq!((c.samples_per_state, c.mode, c.max_pairs_per_state), (2, PairMode::Resampled, 1));
    }
}
