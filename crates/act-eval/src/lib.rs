//! # act-eval
//!
//! Evaluation for act-rs: every number the project reports comes from here, with its interval, its seed and the
//! per-episode results behind it. It works with any act-core [`Environment`](act_core::Environment) and any
//! [`Policy`](act_core::Policy):
//!
//! - [`evaluate_episodes`]: on-line episodes of a policy or of the environment's expert on a split — success rate,
//!   mean score, steps to success, invalid-action rate, per task type; in parallel (rayon), identical for any
//!   thread count; optionally in lockstep batches ([`EpisodeEvalConfig::batch_size`]), one policy call per step of
//!   many episodes;
//! - [`evaluate_next_action`]: how often the policy's action in an expert state matches the expert's;
//! - [`evaluate_critic`]: how often the model picks the expert action of an [`ActionPair`](act_core::ActionPair);
//! - [`paired_comparison`], [`compare_episodes`], [`wilson_interval`]: seeded bootstrap and Wilson intervals, paired
//!   comparisons with an exact sign (McNemar) test;
//! - [`EvalRecord`]: one JSON file per evaluation, written atomically and validated on load; Markdown, alone or
//!   as the paper's method × benchmark table ([`render_table`]);
//! - [`plot_training_curves`], [`plot_success_by_method`], [`plot_lines`]: SVG or PNG training curves from metrics JSONL, success by method with interval whiskers, and named
//!   lines on one chart (success against environment steps).
//!
//! ```
//! use act_core::*;
//! use act_eval::*;
//!
//! /// Guess which of two doors hides the prize; the seed hides it, a guess ends the episode.
//! struct Doors { prize: usize, task: Option<TaskInfo> }
//! impl Environment for Doors {
//!     fn name(&self) -> &str { "doors" }
//!     fn num_tasks(&self, _: Split) -> Result<usize, EnvError> { Ok(200) }
//!     fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<Reset, EnvError> {
//!         let TaskRef::Index { split, index } = task else { return Err(EnvError::UnknownTask(format!("{task:?}"))) };
//!         self.prize = (derive_seed(seed, 0) % 2) as usize;
//!         let info = TaskInfo { id: format!("doors-{index}"), task_type: "two-doors".into(), split: *split,
//!                               description: "open the door with the prize".into() };
//!         self.task = Some(info.clone());
//!         Ok(Reset { observation: "Two doors.".into(), task: info, admissible_actions: self.admissible_actions() })
//!     }
//!     fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
//!         let won = action == format!("open door {}", self.prize);
//!         Ok(Transition { observation: "Done.".into(), reward: won as u8 as f64, done: true, won,
//!                         score: won as u8 as f64, admissible_actions: None, info: Default::default() })
//!     }
//!     fn admissible_actions(&self) -> Option<Vec<Action>> { Some(vec!["open door 0".into(), "open door 1".into()]) }
//!     fn task(&self) -> Option<&TaskInfo> { self.task.as_ref() }
//!     fn step_budget(&self) -> usize { 1 }
//!     fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
//!         Ok(Some(format!("open door {}", self.prize).into()))
//!     }
//! }
//!
//! let factory = || Ok::<_, EnvError>(Doors { prize: 0, task: None });
//! let config = EpisodeEvalConfig::new(Split::Test).with_seed(7).with_progress(false);
//! let expert = evaluate_episodes(&factory, Agent::Expert, &config).unwrap();
//! assert_eq!(expert.summary.success.value, 1.0);
//!
//! let random = RandomAdmissiblePolicy::new();
//! let guesses = evaluate_episodes(&factory, Agent::Policy(&random), &config).unwrap();
//! assert!(guesses.summary.success.ci.contains(0.5)); // a fair guess
//!
//! let records = [EvalRecord::episodes(expert), EvalRecord::episodes(guesses)];
//! let table = render_table(&records).unwrap();
//! assert!(table.starts_with("| method | doors test |"));
//! assert!(table.contains("| expert | 100.0 ± 0.0 |"));
//! ```
#![warn(missing_docs)]

mod batch;
mod critic;
mod episodes;
mod error;
mod next_action;
mod paired;
mod play;
mod plot;
mod report;
mod stats;

pub use batch::ItemEvalConfig;
pub use critic::{ComparisonAccuracy, CriticReport, CriticResult, CriticSummary, comparison_kind, evaluate_critic};
pub use episodes::{
    Agent, EpisodeEvalConfig, EpisodeReport, EpisodeResult, EpisodeSummary, InvalidActionHandling, RejectedRetry,
    TaskTypeSummary, TranscriptStep, evaluate_episodes,
};
pub use error::EvalError;
pub use next_action::{
    NextActionItem, NextActionReport, NextActionResult, NextActionSummary, VerbAccuracy, action_verb,
    evaluate_next_action,
};
pub use paired::{EpisodeMetric, compare_critic, compare_episodes, compare_next_action};
pub use plot::{MetricsRow, Series, plot_lines, plot_success_by_method, plot_training_curves, read_metrics};
pub use report::{
    EvalRecord, Evaluation, RECORD_FORMAT, render_comparison_table, render_paired, render_score_table, render_table,
    render_table_with, render_verb_table,
};
pub use stats::{
    BootstrapConfig, Estimate, Interval, PairedComparison, paired_comparison, sign_test_p, wilson_interval,
};
