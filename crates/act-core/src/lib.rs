//! # act-core
//!
//! The shared vocabulary of act-rs, an implementation of Agentic Critical Training (ACT) for LLM agents: the data
//! an episode is made of, the traits every environment, policy and reward implements, the prompts and output
//! parsing of the method, and JSONL datasets. It has no model and no environment of its own, so any Rust project
//! can depend on it to speak the same types as the act-rs crates.
//!
//! The data flows in a straight line, each arrow a type from this crate:
//! [`Environment`] → [`Trajectory`] → [`ActionPair`] → [`GrpoSample`] / [`SftSample`] → trainer → [`Policy`] →
//! evaluation.
//!
//! ```
//! use act_core::*;
//!
//! // An expert state, an alternative from the initial policy, and the comparison prompt ACT trains on.
//! let state = AgentState {
//!     task_id: "kitchen-3".into(), task: "put a clean mug in coffeemachine.".into(), step_index: 4,
//!     history: vec![], observation: "You pick up the mug 1 from the countertop 1.".into(),
//!     admissible_actions: vec!["go to sinkbasin 1".into(), "go to fridge 1".into()],
//! };
//! let pair = ActionPair {
//!     state: state.clone(),
//!     expert_action: "go to sinkbasin 1".into(),
//!     alternative: "go to fridge 1".into(),
//!     order: PresentedOrder::AlternativeFirst,
//!     provenance: PairProvenance {
//!         env: "alfworld".into(), task_id: "kitchen-3".into(), step_index: 4,
//!         policy: "random-admissible".into(), seed: 7, temperature: None, fallback: false,
//!     },
//! };
//! let prompter = Prompter::new(PromptConfig::default()).unwrap();
//! let sample = prompter.comparison_sample(&pair);
//! assert!(sample.prompt.contains("Action 2: go to sinkbasin 1"));
//!
//! // The model reasons, then answers; the answer is parsed, never trusted.
//! let completion = "<think>The mug must be cleaned first.</think><answer>2</answer>";
//! assert_eq!(parse_choice(completion), Ok(pair.expert_choice()));
//! ```
#![warn(missing_docs)]

// The README's example (a toy environment and the random policy on it) runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod choice;
mod env;
mod error;
mod jsonl;
mod pair;
mod parse;
mod policy;
mod prompt;
mod reward;
mod rng;
mod sample;
mod scripted;
mod template;
mod trajectory;

pub use choice::Choice;
pub use env::{
    EnvSnapshot, Environment, EnvironmentFactory, Reset, TaskInfo, TaskRef, Transition, collect_expert_trajectory,
};
pub use error::{DatasetError, EnvError, Error, ParseError, PolicyError, RewardError, TemplateError};
pub use jsonl::{JsonlReader, JsonlWriter, atomic_write, read_jsonl, write_jsonl};
pub use pair::{ActionPair, PairProvenance, PresentedOrder};
pub use parse::{
    ACTION_TAG, ANALYSIS_MARKER, ANSWER_TAG, CRITIC_TAG, IMPROVED_PROMPT_MARKER, ParsedAction, Reflection, THINK_TAG,
    actions_match, admits, extract_tag, normalize_action, parse_action, parse_choice, parse_choice_among,
    parse_critique, parse_reflection,
};
pub use policy::{Completion, Policy, Query, QueryKind, SamplingParams};
pub use prompt::{PromptConfig, PromptTemplates, Prompter};
pub use reward::{Reward, RewardFn, RewardTarget};
pub use rng::{ActRng, RngState, derive_seed, rng_from_seed};
pub use sample::{GrpoSample, SftSample};
pub use scripted::{RandomAdmissiblePolicy, ReplayPolicy, action_completion, answer_completion};
pub use trajectory::{Action, AgentState, HistoryEntry, Observation, Outcome, Split, Step, Trajectory, UnknownSplit};
