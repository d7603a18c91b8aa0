//! Training samples, as written to and read from JSONL datasets.

use serde::{Deserialize, Serialize};

use crate::reward::RewardTarget;

/// A supervised fine-tuning sample: the loss covers `completion` only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SftSample {
    /// A stable identifier (task, step).
    pub id: String,
    /// The prompt (a user message).
    pub prompt: String,
    /// The target completion (`<action>...</action>`, optionally after reasoning).
    pub completion: String,
}

/// A GRPO sample: a prompt and what its completions are scored against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrpoSample {
    /// A stable identifier (task, step).
    pub id: String,
    /// The prompt (a user message).
    pub prompt: String,
    /// What completions are scored against.
    pub target: RewardTarget,
}
