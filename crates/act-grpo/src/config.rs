//! Trainer configurations: plain serde structs with TRL's defaults and `with_*` builders.

use act_core::SamplingParams;
use serde::{Deserialize, Serialize};

use crate::error::GrpoError;
use crate::precision::ComputeDtype;

/// How rewards become advantages within a group of completions of one prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AdvantageMode {
    /// `(r - mean(group)) / (std(group) + eps)`: the original GRPO (TRL `scale_rewards="group"`, verl `grpo`).
    #[default]
    Group,
    /// `(r - mean(group)) / (std(batch) + eps)`: the group baseline with the whole batch's spread
    /// (TRL `scale_rewards="batch"`).
    Batch,
    /// `r - mean(group)`: no scaling (Dr. GRPO; TRL `scale_rewards="none"`).
    MeanOnly,
}

/// The advantage of a completion that is alone in its group (group size 1, or a group cut short).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SingletonAdvantage {
    /// `A = 0`: a lone sample is its own baseline, so it carries no signal (TRL's outcome).
    #[default]
    Zero,
    /// `A = r`: baseline 0 and scale 1 (verl's convention).
    Reward,
}

/// Advantage settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AdvantageConfig {
    /// How rewards are centred and scaled.
    pub mode: AdvantageMode,
    /// Added to the standard deviation before dividing: TRL uses `1e-4` (our default), verl `1e-6`.
    /// Standard deviations are Bessel-corrected (unbiased) in both, and here.
    pub eps: f64,
    /// What a one-completion group gets.
    pub singleton: SingletonAdvantage,
}

impl Default for AdvantageConfig {
    fn default() -> Self {
        AdvantageConfig { mode: AdvantageMode::Group, eps: 1e-4, singleton: SingletonAdvantage::Zero }
    }
}

/// The estimator of KL(pi || pi_ref) per token, with `d = logp - logp_ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum KlEstimator {
    /// `k1 = d`.
    K1,
    /// `k2 = d^2 / 2`.
    K2,
    /// `k3 = exp(-d) + d - 1` (non-negative, low variance; TRL's and verl's `low_var_kl`). `d` is clamped to the
    /// log-ratio clamp before the exponential, as verl does.
    #[default]
    K3,
}

/// How per-token losses are reduced to one number.
///
/// Every mode divides by totals of the whole update batch (all gradient-accumulation micro-batches together), so
/// accumulating `k` micro-batches gives exactly the gradient of one batch of the same completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LossAggregation {
    /// Sum over all completion tokens / number of completion tokens in the batch (DAPO; TRL `dapo`, its default;
    /// verl `token-mean`).
    #[default]
    TokenMean,
    /// Mean over each completion's tokens, then mean over completions (the original GRPO; TRL `grpo`, verl
    /// `seq-mean-token-mean`). An empty completion counts as a completion with loss 0, as in TRL.
    SequenceMean,
    /// Sum over all completion tokens / (completions x `max_completion_tokens`), a constant for a fixed batch shape
    /// (Dr. GRPO; TRL `dr_grpo`). verl's `seq-mean-token-sum-norm` divides by the padded width without the
    /// completion count instead.
    ConstantNormalizer,
}

/// The clipped-surrogate loss settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LossConfig {
    /// Lower clip: the ratio is clipped at `1 - clip_eps_low`. TRL's `epsilon`, 0.2.
    pub clip_eps_low: f64,
    /// Upper clip: `1 + clip_eps_high`. TRL defaults it to `clip_eps_low`; DAPO's clip-higher uses 0.28.
    pub clip_eps_high: f64,
    /// Dual clip (verl): for negative advantages the loss is capped at `-A * c`; `None` disables it (TRL has none).
    /// Must exceed 1.
    pub dual_clip: Option<f64>,
    /// The log-ratio `logp - logp_old` is clamped to `[-c, c]` before `exp`, as verl does with 20.
    pub log_ratio_clamp: f64,
    /// The KL estimator.
    pub kl_estimator: KlEstimator,
    /// The KL coefficient beta; 0 (TRL's default) skips the reference model entirely.
    pub kl_coef: f64,
    /// How token losses are reduced.
    pub aggregation: LossAggregation,
    /// The entropy bonus (verl's `entropy_coeff`): the policy's predictive entropy on the trained tokens,
    /// aggregated as the loss is, times this, is subtracted from the loss; 0 (the default, TRL's and verl's)
    /// computes no entropy gradient.
    pub entropy_coef: f64,
}

impl Default for LossConfig {
    fn default() -> Self {
        LossConfig {
            clip_eps_low: 0.2,
            clip_eps_high: 0.2,
            dual_clip: None,
            log_ratio_clamp: 20.0,
            kl_estimator: KlEstimator::K3,
            kl_coef: 0.0,
            aggregation: LossAggregation::TokenMean,
            entropy_coef: 0.0,
        }
    }
}

impl LossConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), GrpoError> {
        let bad = |field: &str, why: String| Err(GrpoError::Config(format!("{field}: {why}")));
        if !(self.clip_eps_low.is_finite() && (0.0..1.0).contains(&self.clip_eps_low)) {
            return bad("clip_eps_low", format!("must be in [0, 1), got {}", self.clip_eps_low));
        }
        if !(self.clip_eps_high.is_finite() && self.clip_eps_high >= 0.0) {
            return bad("clip_eps_high", format!("must be finite and >= 0, got {}", self.clip_eps_high));
        }
        if let Some(c) = self.dual_clip
            && !(c.is_finite() && c > 1.0)
        {
            return bad("dual_clip", format!("must be finite and > 1, got {c}"));
        }
        if !(self.log_ratio_clamp.is_finite() && self.log_ratio_clamp > 0.0) {
            return bad("log_ratio_clamp", format!("must be finite and > 0, got {}", self.log_ratio_clamp));
        }
        if !self.entropy_coef.is_finite() {
            return bad("entropy_coef", format!("must be finite, got {}", self.entropy_coef));
        }
        if !(self.kl_coef.is_finite() && self.kl_coef >= 0.0) {
            return bad("kl_coef", format!("must be finite and >= 0, got {}", self.kl_coef));
        }
        Ok(())
    }
}

/// The shape of the learning-rate schedule after warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScheduleKind {
    /// The peak rate throughout.
    Constant,
    /// Linear decay to `min_lr_ratio x lr` at the last update (TRL's default `linear`).
    #[default]
    Linear,
    /// Half-cosine decay to `min_lr_ratio x lr` at the last update.
    Cosine,
}

/// AdamW, its learning-rate schedule and gradient clipping.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OptimizerConfig {
    /// Peak learning rate.
    pub lr: f64,
    /// Adam beta 1.
    pub beta1: f32,
    /// Adam beta 2.
    pub beta2: f32,
    /// Adam epsilon (PyTorch's 1e-8, not Burn's 1e-5 default).
    pub epsilon: f32,
    /// Decoupled weight decay (TRL's default 0).
    pub weight_decay: f32,
    /// Global L2-norm gradient clipping (PyTorch's `clip_grad_norm_`); `None` disables it.
    pub max_grad_norm: Option<f64>,
    /// The decay shape.
    pub schedule: ScheduleKind,
    /// Linear warm-up from 0 over this many optimizer updates.
    pub warmup_updates: usize,
    /// The rate at the end of the decay, as a fraction of `lr`.
    pub min_lr_ratio: f64,
}

impl OptimizerConfig {
    /// TRL's `GRPOConfig` optimiser defaults: lr 1e-6, betas (0.9, 0.999), eps 1e-8, no weight decay, clip 1.0,
    /// linear decay without warm-up.
    pub fn grpo_default() -> Self {
        OptimizerConfig {
            lr: 1e-6,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            weight_decay: 0.0,
            max_grad_norm: Some(1.0),
            schedule: ScheduleKind::Linear,
            warmup_updates: 0,
            min_lr_ratio: 0.0,
        }
    }

    /// TRL's `SFTConfig` defaults: as GRPO but lr 2e-5.
    pub fn sft_default() -> Self {
        OptimizerConfig { lr: 2e-5, ..Self::grpo_default() }
    }

    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), GrpoError> {
        let bad = |field: &str, why: String| Err(GrpoError::Config(format!("optimizer.{field}: {why}")));
        if !(self.lr.is_finite() && self.lr >= 0.0) {
            return bad("lr", format!("must be finite and >= 0, got {}", self.lr));
        }
        for (name, b) in [("beta1", self.beta1), ("beta2", self.beta2)] {
            if !(0.0..1.0).contains(&b) {
                return bad(name, format!("must be in [0, 1), got {b}"));
            }
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return bad("epsilon", format!("must be finite and > 0, got {}", self.epsilon));
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return bad("weight_decay", format!("must be finite and >= 0, got {}", self.weight_decay));
        }
        if let Some(n) = self.max_grad_norm
            && !(n.is_finite() && n > 0.0)
        {
            return bad("max_grad_norm", format!("must be finite and > 0, got {n}"));
        }
        if !(0.0..=1.0).contains(&self.min_lr_ratio) {
            return bad("min_lr_ratio", format!("must be in [0, 1], got {}", self.min_lr_ratio));
        }
        Ok(())
    }
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        Self::grpo_default()
    }
}

/// Checkpointing, logging and guard rails, shared by both trainers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunConfig {
    /// The seed every random choice of the run flows from (data order, sampling).
    pub seed: u64,
    /// Total trainer steps (the schedule decays over them).
    pub total_steps: usize,
    /// Write a checkpoint every this many steps (0: never).
    pub checkpoint_every: usize,
    /// Stop with an error after this many updates in a row were skipped for a NaN/inf loss or gradient.
    pub max_consecutive_nonfinite: usize,
    /// Positions per log-prob chunk (bounds the `[batch, chunk, vocab]` logits held at once).
    pub logprob_chunk: usize,
    /// Show a progress bar in [`train`](crate::GrpoTrainer::train).
    pub progress_bar: bool,
    /// Shards of each micro-batch whose forward and backward passes run at the same time, on replicas of the
    /// model (see [`act_model::shard_gradients`]); 0 picks [`act_model::default_shards`]: the rayon thread
    /// count on flex (CPU), 1 on libtorch and CUDA. Results depend on the number, so set it to reproduce a
    /// run on a machine with another core count.
    pub data_parallel_shards: usize,
    /// SFT: the padding a micro-batch may hold, as a fraction of its real tokens, before the next (shorter)
    /// sequence of the step starts a new micro-batch. `None` picks the device's default
    /// ([`pad_tolerance_on`](Self::pad_tolerance_on)). Results depend on it only through float rounding.
    pub micro_batch_pad_tolerance: Option<f64>,
    /// The dtype of the forward and backward passes: f32 (the default), or bf16/f16 on a working copy with f32
    /// master weights ([`ComputeDtype`]; full fine-tuning only).
    pub compute_dtype: ComputeDtype,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: 42,
            total_steps: 1000,
            checkpoint_every: 0,
            max_consecutive_nonfinite: 5,
            logprob_chunk: 128,
            progress_bar: false,
            data_parallel_shards: 0,
            micro_batch_pad_tolerance: None,
            compute_dtype: ComputeDtype::F32,
        }
    }
}

impl RunConfig {
    /// The shards per micro-batch on `device`: [`data_parallel_shards`](Self::data_parallel_shards), or the
    /// device's default when it is 0.
    pub fn shards_on(&self, device: &burn::prelude::Device) -> usize {
        match self.data_parallel_shards {
            0 => act_model::default_shards(device),
            n => n,
        }
    }

    /// The padding tolerance of SFT micro-batches on `device`:
    /// [`micro_batch_pad_tolerance`](Self::micro_batch_pad_tolerance), or the device's default: 0 on flex (a CPU
    /// pays for every padded position, and an extra pass costs little: one sequence per micro-batch unless
    /// lengths are equal; 1.7x faster language modelling on packed ALFWorld episodes than padding each core's
    /// two to the longer, docs/results.md), unbounded on libtorch and CUDA (accelerators want wide micro-batches).
    pub fn pad_tolerance_on(&self, device: &burn::prelude::Device) -> f64 {
        let flex = matches!(device.as_dispatch().clone().inner(), burn::backend::DispatchDevice::Flex(_));
        match self.micro_batch_pad_tolerance {
            Some(tolerance) => tolerance,
            None if flex => 0.0,
            None => f64::INFINITY,
        }
    }

    fn validate(&self) -> Result<(), GrpoError> {
        if self.micro_batch_pad_tolerance.is_some_and(|t| t.is_nan() || t < 0.0) {
            return Err(GrpoError::Config(format!(
                "micro_batch_pad_tolerance must be a non-negative number, got {:?}",
                self.micro_batch_pad_tolerance
            )));
        }
        if self.total_steps == 0 {
            return Err(GrpoError::Config("total_steps must be positive".into()));
        }
        if self.max_consecutive_nonfinite == 0 {
            return Err(GrpoError::Config("max_consecutive_nonfinite must be positive".into()));
        }
        if self.logprob_chunk == 0 {
            return Err(GrpoError::Config("logprob_chunk must be positive".into()));
        }
        Ok(())
    }
}

/// GRPO settings. Defaults follow TRL's `GRPOConfig` (G = 8, beta = 0, eps = 0.2, `dapo` token-mean loss,
/// group-scaled advantages with eps 1e-4, one optimisation pass, lr 1e-6).
///
/// ```
/// use act_grpo::{AdvantageMode, GrpoConfig, LossAggregation};
/// let config = GrpoConfig::default()
///     .with_group_size(4)
///     .with_clip(0.2, 0.28)
///     .with_advantage_mode(AdvantageMode::MeanOnly)
///     .with_aggregation(LossAggregation::ConstantNormalizer)
///     .with_lr(1e-5);
/// config.validate().unwrap();
/// assert!(config.clone().with_group_size(0).validate().is_err());
/// ```
///
/// Where TRL and verl differ, the default follows TRL and the alternative is one option away; each choice is
/// named in the field's documentation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GrpoConfig {
    /// Completions sampled per prompt (G).
    pub group_size: usize,
    /// Prompts per trainer step; the generation batch holds `prompts_per_step x group_size` completions.
    pub prompts_per_step: usize,
    /// Optimisation passes (mu) over each generation batch, against the log-probs stored at generation time.
    pub mu: usize,
    /// Micro-batches per optimizer update (gradient accumulation); the batch is split into this many parts.
    pub grad_accumulation_steps: usize,
    /// Advantage settings.
    pub advantage: AdvantageConfig,
    /// Loss settings.
    pub loss: LossConfig,
    /// How completions are sampled: act-core's [`SamplingParams`], as every policy in act-rs samples.
    /// `temperature` must be > 0 (GRPO needs sampling) and is also applied to the log-probs of the loss, as TRL
    /// does; `max_new_tokens` is TRL's `max_completion_length` (256 by default, also Dr. GRPO's normaliser;
    /// `max_completion_tokens` is accepted as its name in JSON); `stop` strings end a completion. `seed` must stay
    /// 0: the trainer draws every sampling seed from [`RunConfig::seed`] and the step, so a resumed run samples what
    /// an uninterrupted one would.
    pub generation: SamplingParams,
    /// Optimiser settings.
    pub optimizer: OptimizerConfig,
    /// Run settings.
    pub run: RunConfig,
}

impl Default for GrpoConfig {
    fn default() -> Self {
        GrpoConfig {
            group_size: 8,
            prompts_per_step: 1,
            mu: 1,
            grad_accumulation_steps: 1,
            advantage: AdvantageConfig::default(),
            loss: LossConfig::default(),
            generation: SamplingParams::default(),
            optimizer: OptimizerConfig::grpo_default(),
            run: RunConfig::default(),
        }
    }
}

impl GrpoConfig {
    /// Checks every field; the error names the field and the allowed range.
    pub fn validate(&self) -> Result<(), GrpoError> {
        if self.group_size == 0 {
            return Err(GrpoError::Config("group_size must be positive".into()));
        }
        if self.prompts_per_step == 0 {
            return Err(GrpoError::Config("prompts_per_step must be positive".into()));
        }
        if self.mu == 0 {
            return Err(GrpoError::Config("mu must be positive".into()));
        }
        let completions = self.group_size * self.prompts_per_step;
        if self.grad_accumulation_steps == 0 || self.grad_accumulation_steps > completions {
            return Err(GrpoError::Config(format!(
                "grad_accumulation_steps must be in 1..={completions} (the completions per step), got {}",
                self.grad_accumulation_steps
            )));
        }
        if !(self.advantage.eps.is_finite() && self.advantage.eps >= 0.0) {
            return Err(GrpoError::Config(format!(
                "advantage.eps must be finite and >= 0, got {}",
                self.advantage.eps
            )));
        }
        let g = &self.generation;
        if !(g.temperature.is_finite() && g.temperature > 0.0) {
            return Err(GrpoError::Config(format!(
                "generation.temperature must be finite and > 0 (GRPO needs sampling), got {}",
                g.temperature
            )));
        }
        if !(g.top_p > 0.0 && g.top_p <= 1.0) {
            return Err(GrpoError::Config(format!("generation.top_p must be in (0, 1], got {}", g.top_p)));
        }
        if g.max_new_tokens == 0 {
            return Err(GrpoError::Config("generation.max_new_tokens must be positive".into()));
        }
        if g.seed != 0 {
            return Err(GrpoError::Config(format!(
                "generation.seed must be 0 (GRPO samples from run.seed and the step), got {}",
                g.seed
            )));
        }
        self.loss.validate()?;
        self.optimizer.validate()?;
        self.run.validate()
    }

    /// Sets G.
    #[must_use]
    pub fn with_group_size(mut self, group_size: usize) -> Self {
        self.group_size = group_size;
        self
    }

    /// Sets the prompts per step.
    #[must_use]
    pub fn with_prompts_per_step(mut self, prompts: usize) -> Self {
        self.prompts_per_step = prompts;
        self
    }

    /// Sets mu, the optimisation passes per generation batch.
    #[must_use]
    pub fn with_mu(mut self, mu: usize) -> Self {
        self.mu = mu;
        self
    }

    /// Sets the micro-batches per update.
    #[must_use]
    pub fn with_grad_accumulation_steps(mut self, steps: usize) -> Self {
        self.grad_accumulation_steps = steps;
        self
    }

    /// Sets the advantage mode.
    #[must_use]
    pub fn with_advantage_mode(mut self, mode: AdvantageMode) -> Self {
        self.advantage.mode = mode;
        self
    }

    /// Sets the epsilon added to the reward std.
    #[must_use]
    pub fn with_advantage_eps(mut self, eps: f64) -> Self {
        self.advantage.eps = eps;
        self
    }

    /// Sets the one-completion group convention.
    #[must_use]
    pub fn with_singleton_advantage(mut self, singleton: SingletonAdvantage) -> Self {
        self.advantage.singleton = singleton;
        self
    }

    /// Sets the lower and upper clip (`0.2, 0.28` is DAPO's clip-higher).
    #[must_use]
    pub fn with_clip(mut self, low: f64, high: f64) -> Self {
        self.loss.clip_eps_low = low;
        self.loss.clip_eps_high = high;
        self
    }

    /// Enables verl's dual clip with constant `c` (3 in verl).
    #[must_use]
    pub fn with_dual_clip(mut self, c: Option<f64>) -> Self {
        self.loss.dual_clip = c;
        self
    }

    /// Sets the log-ratio clamp.
    #[must_use]
    pub fn with_log_ratio_clamp(mut self, clamp: f64) -> Self {
        self.loss.log_ratio_clamp = clamp;
        self
    }

    /// Sets the KL estimator and coefficient (0 skips the reference model).
    #[must_use]
    pub fn with_kl(mut self, estimator: KlEstimator, coef: f64) -> Self {
        self.loss.kl_estimator = estimator;
        self.loss.kl_coef = coef;
        self
    }

    /// Sets the entropy bonus coefficient (0 computes no entropy gradient).
    #[must_use]
    pub fn with_entropy_coef(mut self, coef: f64) -> Self {
        self.loss.entropy_coef = coef;
        self
    }

    /// Sets the loss aggregation.
    #[must_use]
    pub fn with_aggregation(mut self, aggregation: LossAggregation) -> Self {
        self.loss.aggregation = aggregation;
        self
    }

    /// Sets the sampling temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.generation.temperature = temperature;
        self
    }

    /// Sets the completion token limit.
    #[must_use]
    pub fn with_max_completion_tokens(mut self, tokens: usize) -> Self {
        self.generation.max_new_tokens = tokens;
        self
    }

    /// Adds a stop string.
    #[must_use]
    pub fn with_stop(mut self, stop: impl Into<String>) -> Self {
        self.generation.stop.push(stop.into());
        self
    }

    /// Sets the whole optimiser configuration.
    #[must_use]
    pub fn with_optimizer(mut self, optimizer: OptimizerConfig) -> Self {
        self.optimizer = optimizer;
        self
    }

    /// Sets the peak learning rate.
    #[must_use]
    pub fn with_lr(mut self, lr: f64) -> Self {
        self.optimizer.lr = lr;
        self
    }

    /// Sets the schedule shape and warm-up length.
    #[must_use]
    pub fn with_schedule(mut self, kind: ScheduleKind, warmup_updates: usize) -> Self {
        self.optimizer.schedule = kind;
        self.optimizer.warmup_updates = warmup_updates;
        self
    }

    /// Sets (or disables) global-norm gradient clipping.
    #[must_use]
    pub fn with_max_grad_norm(mut self, max: Option<f64>) -> Self {
        self.optimizer.max_grad_norm = max;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.run.seed = seed;
        self
    }

    /// Sets the shards of each micro-batch run at the same time (0: the device's default).
    #[must_use]
    pub fn with_data_parallel_shards(mut self, shards: usize) -> Self {
        self.run.data_parallel_shards = shards;
        self
    }

    /// Sets the total number of trainer steps.
    #[must_use]
    pub fn with_total_steps(mut self, steps: usize) -> Self {
        self.run.total_steps = steps;
        self
    }

    /// Checkpoints every `steps` steps (0: never).
    #[must_use]
    pub fn with_checkpoint_every(mut self, steps: usize) -> Self {
        self.run.checkpoint_every = steps;
        self
    }

    /// Sets the dtype of the forward and backward passes ([`ComputeDtype`]: half precision keeps f32 master
    /// weights).
    #[must_use]
    pub fn with_compute_dtype(mut self, dtype: ComputeDtype) -> Self {
        self.run.compute_dtype = dtype;
        self
    }

    /// Sets how many non-finite updates in a row stop the run.
    #[must_use]
    pub fn with_max_consecutive_nonfinite(mut self, n: usize) -> Self {
        self.run.max_consecutive_nonfinite = n;
        self
    }

    /// Optimizer updates over the whole run (`total_steps x mu`): the schedule's length.
    pub fn total_updates(&self) -> usize {
        self.run.total_steps * self.mu
    }
}

/// Supervised fine-tuning settings (masked cross-entropy on completion tokens). Defaults follow TRL's `SFTConfig`
/// (lr 2e-5, linear decay, clip 1.0, completion-only loss).
///
/// ```
/// let config = act_grpo::SftConfig::default().with_batch_size(4).with_lr(1e-4);
/// config.validate().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SftConfig {
    /// Sequences per optimizer update.
    pub batch_size: usize,
    /// Micro-batches per update (gradient accumulation).
    pub grad_accumulation_steps: usize,
    /// Sequences longer than this (prompt + completion tokens) are cut from the left of the prompt; 0 keeps all.
    pub max_length: usize,
    /// Evaluate the validation loss every this many steps (0: only when asked).
    pub eval_every: usize,
    /// Train a sample whose tokens begin another sample's prompt inside that sequence, as one more loss span
    /// ([`pack_prefixes`](crate::pack_prefixes)): one sequence per multi-turn episode instead of one per step. `batch_size` then
    /// counts packed sequences.
    pub pack_prefixes: bool,
    /// Language modelling: every token of a sequence after its first carries loss, the prompt's too (the
    /// observations of an episode as well as its actions), not only the completions. For a base stage that
    /// teaches a model trained from scratch to read an environment's text; off for imitation.
    pub loss_on_prompts: bool,
    /// Optimiser settings.
    pub optimizer: OptimizerConfig,
    /// Run settings.
    pub run: RunConfig,
}

impl Default for SftConfig {
    fn default() -> Self {
        SftConfig {
            batch_size: 8,
            grad_accumulation_steps: 1,
            max_length: 1024,
            eval_every: 0,
            pack_prefixes: false,
            loss_on_prompts: false,
            optimizer: OptimizerConfig::sft_default(),
            run: RunConfig::default(),
        }
    }
}

impl SftConfig {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), GrpoError> {
        if self.batch_size == 0 {
            return Err(GrpoError::Config("batch_size must be positive".into()));
        }
        if self.max_length == 1 {
            return Err(GrpoError::Config(
                "max_length must allow one prompt and one completion token (0: no limit)".into(),
            ));
        }
        if self.grad_accumulation_steps == 0 || self.grad_accumulation_steps > self.batch_size {
            return Err(GrpoError::Config(format!(
                "grad_accumulation_steps must be in 1..={} (the batch size), got {}",
                self.batch_size, self.grad_accumulation_steps
            )));
        }
        self.optimizer.validate()?;
        self.run.validate()
    }

    /// Sets the batch size.
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Sets the micro-batches per update.
    #[must_use]
    pub fn with_grad_accumulation_steps(mut self, steps: usize) -> Self {
        self.grad_accumulation_steps = steps;
        self
    }

    /// Sets the sequence length limit.
    #[must_use]
    pub fn with_max_length(mut self, max_length: usize) -> Self {
        self.max_length = max_length;
        self
    }

    /// Sets the validation interval.
    #[must_use]
    pub fn with_eval_every(mut self, steps: usize) -> Self {
        self.eval_every = steps;
        self
    }

    /// Sets whether samples that begin another sample's prompt are packed into it ([`pack_prefixes`](crate::pack_prefixes)).
    #[must_use]
    pub fn with_prefix_packing(mut self, on: bool) -> Self {
        self.pack_prefixes = on;
        self
    }

    /// Sets whether the prompts' tokens carry loss too (language modelling on whole sequences).
    #[must_use]
    pub fn with_loss_on_prompts(mut self, on: bool) -> Self {
        self.loss_on_prompts = on;
        self
    }

    /// Sets the whole optimiser configuration.
    #[must_use]
    pub fn with_optimizer(mut self, optimizer: OptimizerConfig) -> Self {
        self.optimizer = optimizer;
        self
    }

    /// Sets the peak learning rate.
    #[must_use]
    pub fn with_lr(mut self, lr: f64) -> Self {
        self.optimizer.lr = lr;
        self
    }

    /// Sets the schedule shape and warm-up length.
    #[must_use]
    pub fn with_schedule(mut self, kind: ScheduleKind, warmup_updates: usize) -> Self {
        self.optimizer.schedule = kind;
        self.optimizer.warmup_updates = warmup_updates;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.run.seed = seed;
        self
    }

    /// Sets the shards of each micro-batch run at the same time (0: the device's default).
    #[must_use]
    pub fn with_data_parallel_shards(mut self, shards: usize) -> Self {
        self.run.data_parallel_shards = shards;
        self
    }

    /// Sets the total number of steps.
    #[must_use]
    pub fn with_total_steps(mut self, steps: usize) -> Self {
        self.run.total_steps = steps;
        self
    }

    /// Checkpoints every `steps` steps (0: never).
    #[must_use]
    pub fn with_checkpoint_every(mut self, steps: usize) -> Self {
        self.run.checkpoint_every = steps;
        self
    }

    /// Sets the dtype of the forward and backward passes ([`ComputeDtype`]: half precision keeps f32 master
    /// weights).
    #[must_use]
    pub fn with_compute_dtype(mut self, dtype: ComputeDtype) -> Self {
        self.run.compute_dtype = dtype;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_trl() {
        let c = GrpoConfig::default();
        assert_eq!(c.group_size, 8);
        assert_eq!(c.loss.kl_coef, 0.0);
        assert_eq!((c.loss.clip_eps_low, c.loss.clip_eps_high), (0.2, 0.2));
        assert_eq!(c.loss.aggregation, LossAggregation::TokenMean);
        assert_eq!(c.advantage.eps, 1e-4);
        assert_eq!(c.optimizer.lr, 1e-6);
        assert_eq!(c.optimizer.epsilon, 1e-8);
        assert_eq!(c.generation.max_new_tokens, 256);
        c.validate().unwrap();
        assert_eq!(SftConfig::default().optimizer.lr, 2e-5);
        SftConfig::default().validate().unwrap();
    }

    #[test]
    fn generation_is_act_cores_sampling_params_and_refuses_a_seed_of_its_own() {
        let json = r#"{"generation": {"temperature": 0.7, "max_completion_tokens": 24, "stop": ["</answer>"]}}"#;
        let c: GrpoConfig = serde_json::from_str(json).unwrap();
        assert_eq!(
            c.generation,
            SamplingParams::default().with_temperature(0.7).with_max_new_tokens(24).with_stop("</answer>")
        );
        c.validate().unwrap();
        let seeded = GrpoConfig { generation: c.generation.clone().with_seed(3), ..c.clone() };
        assert!(seeded.validate().unwrap_err().to_string().contains("generation.seed must be 0"));
        let greedy = GrpoConfig { generation: SamplingParams::greedy(), ..c };
        assert!(greedy.validate().unwrap_err().to_string().contains("generation.temperature"));
    }

    #[test]
    fn pad_tolerance_defaults_by_device_and_rejects_negatives() {
        let run = RunConfig::default();
        assert_eq!(run.pad_tolerance_on(&burn::prelude::Device::flex()), 0.0);
        let set = RunConfig { micro_batch_pad_tolerance: Some(0.5), ..RunConfig::default() };
        assert_eq!(set.pad_tolerance_on(&burn::prelude::Device::flex()), 0.5);
        let mut bad = SftConfig::default();
        bad.run.micro_batch_pad_tolerance = Some(-0.1);
        assert!(bad.validate().unwrap_err().to_string().contains("micro_batch_pad_tolerance"));
    }

    #[test]
    fn serde_round_trip_and_partial_json() {
        let c = GrpoConfig::default().with_clip(0.2, 0.28).with_dual_clip(Some(3.0)).with_kl(KlEstimator::K2, 0.04);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<GrpoConfig>(&json).unwrap(), c);
        let partial: GrpoConfig =
            serde_json::from_str(r#"{"group_size": 4, "loss": {"aggregation": "sequence_mean"}}"#).unwrap();
        assert_eq!(partial.group_size, 4);
        assert_eq!(partial.loss.aggregation, LossAggregation::SequenceMean);
        assert_eq!(partial.loss.clip_eps_low, 0.2);
    }

    #[test]
    fn bad_values_name_the_field() {
        let cases = [
            (GrpoConfig::default().with_mu(0), "mu"),
            (GrpoConfig::default().with_clip(1.5, 0.2), "clip_eps_low"),
            (GrpoConfig::default().with_dual_clip(Some(0.5)), "dual_clip"),
            (GrpoConfig::default().with_kl(KlEstimator::K3, -1.0), "kl_coef"),
            (GrpoConfig::default().with_temperature(0.0), "temperature"),
            (GrpoConfig::default().with_lr(f64::NAN), "lr"),
            (GrpoConfig::default().with_grad_accumulation_steps(9), "grad_accumulation_steps"),
            (GrpoConfig::default().with_max_grad_norm(Some(0.0)), "max_grad_norm"),
        ];
        for (config, field) in cases {
            let err = config.validate().unwrap_err().to_string();
            assert!(err.contains(field), "{err} should name {field}");
        }
        assert!(SftConfig::default().with_batch_size(0).validate().is_err());
    }
}
