//! # act-grpo
//!
//! The trainers of act-rs, in Burn: GRPO for ACT (comparison prompts) and RL (next-action prompts), and masked SFT
//! for imitation learning. One job: turn a Qwen3 policy from act-model, prompts and an act-core [`RewardFn`](act_core::RewardFn)
//! (or expert completions) into a better policy, resumably and with the conventions of TRL and verl.
//!
//! - [`GrpoTrainer`]: per prompt, G completions from KV-cache generation, scored by any `RewardFn`; group
//!   advantages ([`group_advantages`]: std-normalised, batch-normalised or mean-only); `mu` passes of the clipped
//!   surrogate ([`grpo_loss`]: clip-higher, dual clip, log-ratio clamp, k1/k2/k3 KL, three aggregations) against
//!   the log-probs stored at sampling time; gradient accumulation; global-norm clipping ([`clip_grad_norm`]);
//!   AdamW with warm-up and constant, linear or cosine decay ([`LrSchedule`]).
//! - [`SftTrainer`]: cross-entropy on completion tokens only, same optimiser, schedule and checkpoints, with a
//!   validation loss.
//! - Both: per-step JSONL metrics ([`GrpoStepMetrics`], [`SftStepMetrics`]), a progress bar, NaN/inf guard rails
//!   ([`NonFiniteGuard`]), atomic checkpoints that resume bit-identically.
//!
//! ```
//! use act_core::{Choice, GrpoSample, Reward, RewardError, RewardFn, RewardTarget};
//! use act_grpo::{GrpoConfig, GrpoTrainer};
//! use act_model::{ChatTemplate, ChatTokenizer, Qwen3, Qwen3Config};
//! use burn::prelude::*;
//!
//! /// Reward 1 for answering "1", else 0.
//! struct SaysOne;
//! impl RewardFn for SaysOne {
//!     fn name(&self) -> &str { "says-one" }
//!     fn range(&self) -> (f64, f64) { (0.0, 1.0) }
//!     fn score(&self, _: &RewardTarget, completion: &str) -> Result<Reward, RewardError> {
//!         let ok = completion.trim() == "1";
//!         Ok(Reward::from_components([("correct".to_string(), ok as u8 as f64)].into(), true))
//!     }
//! }
//!
//! let tokenizer = ChatTokenizer::train_bpe(["which one? 1", "which one? 2"], 270)?;
//! let model = Qwen3::init(&Qwen3Config::tiny(tokenizer.vocab_size()), 0, &Device::flex().autodiff())?;
//! let target = RewardTarget::Choice { expert: Choice::First, actions: ["a".into(), "b".into()], admissible: vec![] };
//! let samples = vec![GrpoSample { id: "q".into(), prompt: "which one?".into(), target }];
//! let config = GrpoConfig::default().with_group_size(4).with_max_completion_tokens(3).with_lr(1e-3);
//! let mut trainer = GrpoTrainer::new(config, model, tokenizer, ChatTemplate::default(), SaysOne, samples)?;
//! let metrics = trainer.step()?;
//! assert_eq!(metrics.step, 1);
//! assert!(metrics.completion_length.max <= 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod advantage;
mod batch;
mod checkpoint;
mod clip;
mod config;
mod data;
mod error;
mod gigpo;
mod grpo;
mod guard;
pub mod icrl;
mod logprobs;
mod loss;
mod metrics;
mod optim;
mod packing;
mod precision;
mod schedule;
mod sft;

pub use advantage::{Advantages, group_advantages, mean_std};
pub use checkpoint::{checkpoint_name, load_tokenizer};
pub use clip::{clip_grad_norm, global_grad_norm};
pub use config::{
    AdvantageConfig, AdvantageMode, GrpoConfig, KlEstimator, LossAggregation, LossConfig, OptimizerConfig, RunConfig,
    ScheduleKind, SftConfig, SingletonAdvantage,
};
pub use data::DataCursor;
pub use error::GrpoError;
pub use gigpo::{
    EpisodeRecord, GigpoAdvantages, GigpoConfig, GigpoNormalisation, GigpoStats, StepRecord, discounted_returns,
    gigpo_advantages,
};
pub use grpo::{GrpoStep, GrpoTrainer, PreparedSequence, ScoredCompletion};
pub use guard::NonFiniteGuard;
pub use logprobs::{TokenLogProbs, completion_log_probs, token_log_probs};
pub use loss::{BatchTotals, GrpoLoss, LossInputs, LossStats, grpo_loss, kl_estimate};
pub use metrics::{GrpoStepMetrics, LengthStats, MeanStd, MetricsLog, SftStepMetrics, UpdateMetrics};
pub use optim::{UpdateOutcome, adamw};
pub use packing::{PackedSequence, pack_prefixes};
pub use precision::ComputeDtype;
pub use schedule::LrSchedule;
pub use sft::{SftTrainer, encode_sft};

/// A progress bar, hidden unless `show`.
pub(crate) fn progress_bar(len: u64, show: bool) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed_precise}<{eta_precise}] {msg}")
    {
        bar.set_style(style);
    }
    bar
}
