//! # act-pairs
//!
//! Critic data for Agentic Critical Training: at every state of an expert trajectory, sample K alternative
//! actions from an initial policy π₀ (any act-core [`Policy`](act_core::Policy)), filter them, and pair the
//! survivors with the expert's action in a random, balanced presentation order. The result is a JSONL file of
//! act-core [`ActionPair`](act_core::ActionPair)s with provenance, plain text so that pairs built with one model
//! train another, and a [`PairStats`] report.
//!
//! Filters (each counted in [`FilterCounts`]): unparseable samples, samples equal to the expert action after
//! [`normalize_action`](act_core::normalize_action), inadmissible ones (where the state lists admissible actions;
//! on by default) and duplicates. When nothing survives, a uniform-random admissible alternative can stand in
//! ([`PairConfig::fallback`]). Builds are deterministic in (seed, epoch) and independent of the thread count;
//! [`PairMode::Fixed`] gives every epoch the same pairs, [`PairMode::Resampled`] a fresh set per epoch.
//!
//! ```
//! use act_core::*;
//! use act_pairs::{PairBuilder, PairConfig};
//!
//! let step = |obs: &str, admissible: &[&str], action: &str| Step {
//!     observation: obs.into(),
//!     admissible_actions: admissible.iter().map(|a| Action::from(*a)).collect(),
//!     action: action.into(),
//!     reward: 0.0,
//! };
//! let expert = Trajectory {
//!     env: "toy".into(), task_id: "door-1".into(), task_type: "open".into(), split: Split::Train,
//!     task: "open the door.".into(), seed: 0,
//!     steps: vec![
//!         step("You are in a hall.", &["go north", "go south", "look"], "go north"),
//!         step("A locked door.", &["unlock door with key", "go south", "look"], "unlock door with key"),
//!     ],
//!     outcome: Outcome { won: true, score: 1.0, steps_used: 2 },
//! };
//!
//! let config = PairConfig::default().with_k(4).with_fallback(true).with_seed(7).with_progress(false);
//! let builder = PairBuilder::new(config, RandomAdmissiblePolicy::new()).unwrap();
//! let set = builder.build(&[expert.clone()], 0).unwrap();
//!
//! assert_eq!(set.pairs.len(), 2);
//! for pair in &set.pairs {
//!     assert!(!actions_match(pair.alternative.as_str(), pair.expert_action.as_str()));
//!     assert_eq!(pair.provenance.policy, "random-admissible");
//! }
//! assert_eq!(set.stats.expert_first, 1); // exactly balanced for an even count
//! assert_eq!(set.stats.samples_drawn, 8);
//! assert_eq!(builder.build(&[expert], 0).unwrap(), set); // same seed, same pairs
//! println!("{}", set.stats); // a Markdown table
//! ```
#![warn(missing_docs)]

mod builder;
mod config;
mod error;
mod filter;
mod order;
mod stats;

pub use builder::{PairBuilder, PairSet};
pub use config::{PairConfig, PairMode};
pub use error::PairError;
pub use filter::{FilterCounts, FilterOptions, Selection, fallback_alternative, select_alternatives};
pub use order::balanced_orders;
pub use stats::PairStats;
