//! # act-rewards
//!
//! Verifiable rewards for Agentic Critical Training: implementations of act-core's [`RewardFn`] that score a
//! model's completion against what is known to be right, each reporting its named components so they can be
//! logged one by one.
//!
//! - [`ComparisonReward`] scores ACT's comparison answers (`<answer>1</answer>`): 1 when the answer names the
//!   expert action, else 0; optional format and admissibility terms.
//! - [`NextActionReward`] scores a generated action on an expert state: 1 on a normalised exact match; optional
//!   partial credit and missing-action penalty.
//! - [`EpisodeReward`] scores a turn of an on-line episode by the episode's outcome (won or score), with
//!   verl-agent's invalid-output penalty as an option.
//!
//! Every reward shares [`FormatRequirements`] (a required `<think>` block, length limits) and declares its
//! [`range`](RewardFn::range), computed from its configuration; scores never leave it. Configurations are plain
//! serde structs with `with_*` builders whose `build()` rejects values that would break that promise.
//!
//! ```
//! use act_core::{ActionPair, AgentState, PairProvenance, PresentedOrder, RewardFn};
//! use act_rewards::{ComparisonConfig, FormatRequirements};
//!
//! let pair = ActionPair {
//!     state: AgentState {
//!         task_id: "kitchen-3".into(), task: "put a clean mug in coffeemachine.".into(), step_index: 4,
//!         history: vec![], observation: "You pick up the mug 1.".into(),
//!         admissible_actions: vec!["go to sinkbasin 1".into(), "go to fridge 1".into()],
//!     },
//!     expert_action: "go to sinkbasin 1".into(),
//!     alternative: "go to fridge 1".into(),
//!     order: PresentedOrder::AlternativeFirst,
//!     provenance: PairProvenance {
//!         env: "alfworld".into(), task_id: "kitchen-3".into(), step_index: 4,
//!         policy: "random-admissible".into(), seed: 7, temperature: None, fallback: false,
//!     },
//! };
//! let reward = ComparisonConfig::default()
//!     .with_format(FormatRequirements::default().with_require_think(true))
//!     .build()
//!     .unwrap();
//! let target = pair.reward_target();
//!
//! let good = reward.score(&target, "<think>The mug must be cleaned first.</think><answer>2</answer>").unwrap();
//! assert_eq!((good.total, good.format_ok), (1.0, true));
//! let no_reasoning = reward.score(&target, "<answer>2</answer>").unwrap();
//! assert_eq!((no_reasoning.total, no_reasoning.format_ok), (0.0, false));
//! assert_eq!(reward.range(), (0.0, 1.0));
//! ```
#![warn(missing_docs)]

mod comparison;
mod episode;
mod error;
mod format;
mod next_action;

pub use act_core::RewardFn;
pub use comparison::{ComparisonConfig, ComparisonReward};
pub use episode::{EpisodeConfig, EpisodeReward, EpisodeScoring};
pub use error::RewardConfigError;
pub use format::{FormatRequirements, FormatViolation, LengthScope, LengthUnit};
pub use next_action::{NextActionConfig, NextActionReward};
