//! What can go wrong while building pairs; every error names where it happened.

use act_core::{DatasetError, PolicyError, TemplateError};

/// An error from [`PairBuilder`](crate::PairBuilder).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PairError {
    /// The configuration cannot work (say, zero samples per state).
    #[error("invalid pair configuration: {0}")]
    Config(String),
    /// The prompt templates are invalid.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The policy failed to sample alternatives at a state.
    #[error("sampling alternatives for task `{task_id}` step {step_index}: {source}")]
    Policy {
        /// The task of the trajectory.
        task_id: String,
        /// The step of the trajectory.
        step_index: usize,
        /// The policy's error.
        source: PolicyError,
    },
    /// The policy broke its contract of one completion per query.
    #[error("policy `{policy}` returned {got} completions for {expected} queries (task `{task_id}` step {step_index})")]
    CompletionCount {
        /// The policy's name.
        policy: String,
        /// The task of the trajectory.
        task_id: String,
        /// The step of the trajectory.
        step_index: usize,
        /// How many queries were sent.
        expected: usize,
        /// How many completions came back.
        got: usize,
    },
    /// Writing the pair file failed.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}
