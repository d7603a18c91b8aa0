//! The crate's error type.

use std::path::PathBuf;

/// Everything that can stop a training run. Variants may be added: match with a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GrpoError {
    /// A configuration value is out of range; the message names the field.
    #[error("invalid trainer config: {0}")]
    Config(String),
    /// Inputs that do not fit together (shapes, empty datasets, rewards that are not finite).
    #[error("invalid input: {0}")]
    Input(String),
    /// Too many updates in a row had a NaN/inf loss or gradient.
    #[error(
        "stopping at step {step}: {consecutive} updates in a row had a non-finite {what} \
         ({total} skipped in this run); lower the learning rate or check the rewards"
    )]
    NonFinite {
        /// The trainer step.
        step: usize,
        /// Skipped updates in a row.
        consecutive: usize,
        /// Skipped updates in the whole run.
        total: usize,
        /// `loss` or `gradient`.
        what: &'static str,
    },
    /// The model failed.
    #[error(transparent)]
    Model(#[from] act_model::ModelError),
    /// Generation failed.
    #[error(transparent)]
    Policy(#[from] act_core::PolicyError),
    /// The reward function failed.
    #[error(transparent)]
    Reward(#[from] act_core::RewardError),
    /// A dataset could not be read.
    #[error(transparent)]
    Dataset(#[from] act_core::DatasetError),
    /// A checkpoint is unreadable or does not belong to this run.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The checkpoint directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}
