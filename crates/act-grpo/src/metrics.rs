//! Per-step metrics, written one JSON object per line.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::GrpoError;

/// Mean and (population) standard deviation of some values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanStd {
    /// The mean.
    pub mean: f64,
    /// The population standard deviation.
    pub std: f64,
}

impl MeanStd {
    /// Summarises `values` (zeros when empty).
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return MeanStd::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        MeanStd { mean, std: var.sqrt() }
    }
}

/// Completion lengths in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LengthStats {
    /// Mean length.
    pub mean: f64,
    /// Shortest.
    pub min: usize,
    /// Longest.
    pub max: usize,
    /// Fraction that hit the token limit without ending.
    pub truncated_fraction: f64,
}

impl LengthStats {
    /// Summarises `lengths`, of which `truncated` hit the limit.
    pub fn of(lengths: &[usize], truncated: usize) -> Self {
        if lengths.is_empty() {
            return LengthStats::default();
        }
        LengthStats {
            mean: lengths.iter().sum::<usize>() as f64 / lengths.len() as f64,
            min: *lengths.iter().min().expect("non-empty"),
            max: *lengths.iter().max().expect("non-empty"),
            truncated_fraction: truncated as f64 / lengths.len() as f64,
        }
    }
}

/// What one GRPO step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrpoStepMetrics {
    /// The step just completed (1-based).
    pub step: usize,
    /// Total reward.
    pub reward: MeanStd,
    /// Each named reward component.
    pub reward_components: BTreeMap<String, MeanStd>,
    /// Fraction of completions in the required format.
    pub format_ok_fraction: f64,
    /// Fraction of groups whose rewards were all equal (no signal).
    pub zero_std_group_fraction: f64,
    /// Mean of the loss over the mu passes.
    pub loss: f64,
    /// Fraction of completion tokens where a clip was active (low or high), over all passes.
    pub clip_fraction: f64,
    /// Fraction where the lower clip was active.
    pub low_clip_fraction: f64,
    /// Fraction where the upper clip was active.
    pub high_clip_fraction: f64,
    /// Fraction where the dual clip was active.
    pub dual_clip_fraction: f64,
    /// Mean per-token KL estimate to the reference (0 without a KL term).
    pub kl: f64,
    /// Mean importance ratio.
    pub ratio_mean: f64,
    /// Mean predictive entropy over completion tokens (first pass).
    pub entropy: f64,
    /// Global gradient norm before clipping, of the last update.
    pub grad_norm: f64,
    /// Learning rate of the last update.
    pub lr: f64,
    /// Completion lengths.
    pub completion_length: LengthStats,
    /// Completion tokens generated per second of generation.
    pub generation_tokens_per_second: f64,
    /// Tokens (prompt and completion) processed per second of training.
    pub training_tokens_per_second: f64,
    /// Seconds spent generating.
    pub generation_seconds: f64,
    /// Seconds spent scoring completions.
    pub reward_seconds: f64,
    /// Seconds spent in forward/backward passes and optimizer updates.
    pub training_seconds: f64,
    /// Optimizer updates applied in this step.
    pub updates_applied: usize,
    /// Updates skipped for a non-finite loss or gradient, in this step.
    pub updates_skipped: usize,
    /// Updates skipped since the start of the run.
    pub skipped_total: usize,
}

/// What one [`GrpoTrainer::update`](crate::GrpoTrainer::update) on prepared sequences did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateMetrics {
    /// The step just completed (1-based; updates and sampling steps count alike).
    pub step: usize,
    /// Sequences trained on.
    pub sequences: usize,
    /// Their completion tokens.
    pub completion_tokens: usize,
    /// Mean of the loss over the mu passes.
    pub loss: f64,
    /// Fraction of completion tokens where a clip was active (low or high), over all passes.
    pub clip_fraction: f64,
    /// Fraction where the lower clip was active.
    pub low_clip_fraction: f64,
    /// Fraction where the upper clip was active.
    pub high_clip_fraction: f64,
    /// Fraction where the dual clip was active.
    pub dual_clip_fraction: f64,
    /// Mean per-token KL estimate to the reference (0 without a KL term).
    pub kl: f64,
    /// Mean importance ratio (against the behaviour log-probs where given).
    pub ratio_mean: f64,
    /// Mean predictive entropy over completion tokens (first pass).
    pub entropy: f64,
    /// Global gradient norm before clipping, of the last update.
    pub grad_norm: f64,
    /// Learning rate of the last update.
    pub lr: f64,
    /// Seconds spent in forward/backward passes and optimizer updates.
    pub training_seconds: f64,
    /// Tokens (prompt and completion) processed per second of training.
    pub training_tokens_per_second: f64,
    /// Optimizer updates applied.
    pub updates_applied: usize,
    /// Updates skipped for a non-finite loss or gradient.
    pub updates_skipped: usize,
    /// Updates skipped since the start of the run.
    pub skipped_total: usize,
}

/// What one SFT step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SftStepMetrics {
    /// The step just completed (1-based).
    pub step: usize,
    /// Mean negative log-likelihood per completion token.
    pub loss: f64,
    /// Completion tokens in the batch.
    pub completion_tokens: usize,
    /// Samples trained in the step (more than the batch's sequences when samples are packed).
    #[serde(default)]
    pub samples: usize,
    /// Global gradient norm before clipping.
    pub grad_norm: f64,
    /// Learning rate.
    pub lr: f64,
    /// Tokens (prompt and completion) per second.
    pub tokens_per_second: f64,
    /// Seconds for the step.
    pub seconds: f64,
    /// Validation loss, when evaluated at this step.
    pub validation_loss: Option<f64>,
    /// Whether the update was skipped for a non-finite loss or gradient.
    pub skipped: bool,
    /// Updates skipped since the start of the run.
    pub skipped_total: usize,
}

/// Appends JSON lines to a metrics file, flushing after each, so a crash loses at most the current line.
#[derive(Debug)]
pub struct MetricsLog {
    path: PathBuf,
    out: BufWriter<File>,
}

impl MetricsLog {
    /// Opens `path` for appending (a resumed run continues the same file), creating its directory.
    pub fn append(path: impl AsRef<Path>) -> Result<Self, GrpoError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| GrpoError::Io { context: format!("opening metrics file {}", path.display()), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
        Ok(MetricsLog { out: BufWriter::new(file), path })
    }

    /// Writes one record.
    pub fn write<T: Serialize>(&mut self, record: &T) -> Result<(), GrpoError> {
        let line = serde_json::to_string(record)
            .map_err(|e| GrpoError::Input(format!("metrics are not serialisable: {e}")))?;
        let io = |source| GrpoError::Io { context: format!("writing {}", self.path.display()), source };
        self.out.write_all(line.as_bytes()).map_err(io)?;
        self.out.write_all(b"\n").map_err(io)?;
        self.out.flush().map_err(io)
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries() {
        let s = MeanStd::of(&[1.0, 3.0]);
        assert_eq!((s.mean, s.std), (2.0, 1.0));
        assert_eq!(MeanStd::of(&[]), MeanStd::default());
        let l = LengthStats::of(&[2, 4, 9], 1);
        assert_eq!((l.mean, l.min, l.max), (5.0, 2, 9));
        assert!((l.truncated_fraction - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn appends_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/metrics.jsonl");
        for step in 1..=2 {
            let mut log = MetricsLog::append(&path).unwrap();
            log.write(&serde_json::json!({"step": step})).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"step\":1}\n{\"step\":2}\n");
    }
}
