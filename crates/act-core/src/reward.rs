//! The reward seam: verifiable rewards that score a completion against what is known to be right.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::choice::Choice;
use crate::error::RewardError;
use crate::trajectory::Action;

/// What a completion is scored against. Kinds may be added: a reward function scores the ones it knows and returns
/// `RewardError::WrongTarget` for the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
#[non_exhaustive]
pub enum RewardTarget {
    /// A comparison prompt: which of the two presented actions is the expert's.
    Choice {
        /// The presented position of the expert action.
        expert: Choice,
        /// The two actions, in presented order.
        actions: [Action; 2],
        /// The admissible actions of the state, where known (for an optional admissibility term).
        #[serde(default)]
        admissible: Vec<Action>,
    },
    /// A next-action prompt on an expert state.
    NextAction {
        /// The expert's action.
        expert: Action,
        /// The admissible actions of the state, where known.
        #[serde(default)]
        admissible: Vec<Action>,
    },
    /// One turn of an on-line episode, scored by how the episode went.
    Episode {
        /// Whether the episode was won.
        won: bool,
        /// The environment's score.
        score: f64,
    },
}

impl RewardTarget {
    /// The variant's name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            RewardTarget::Choice { .. } => "choice",
            RewardTarget::NextAction { .. } => "next_action",
            RewardTarget::Episode { .. } => "episode",
        }
    }
}

/// A scored completion: the total the trainer optimises and the named parts it is made of, so each can be logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reward {
    /// The scalar reward.
    pub total: f64,
    /// Named components (for example `correct`, `format`), whose weighted sum is `total`.
    pub components: BTreeMap<String, f64>,
    /// Whether the completion parsed in the required format.
    pub format_ok: bool,
}

impl Reward {
    /// A reward made of `components`, summed into `total`.
    pub fn from_components(components: BTreeMap<String, f64>, format_ok: bool) -> Self {
        Reward { total: components.values().sum(), components, format_ok }
    }
}

/// Scores completions against [`RewardTarget`]s.
pub trait RewardFn: Send + Sync {
    /// A name for logs.
    fn name(&self) -> &str;

    /// The closed interval every `total` lies in.
    fn range(&self) -> (f64, f64);

    /// Scores `completion`; fails only when handed a target of a kind this function does not score.
    fn score(&self, target: &RewardTarget, completion: &str) -> Result<Reward, RewardError>;
}
