//! The GRPO trainer: sample a group of completions per prompt, score them, compute group advantages, and optimise
//! the clipped surrogate for `mu` passes against the log-probs stored at sampling time.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use act_core::{ActRng, GrpoSample, RewardFn, RngState, derive_seed, rng_from_seed};
use act_model::cut_after_stop;
use act_model::{ChatTemplate, ChatTokenizer, Generation, GenerationConfig, Qwen3, StopCondition, generate_in_parts};
use burn::module::Module;
use burn::prelude::*;
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::advantage::group_advantages;
use crate::batch::{PolicyBatch, accumulate_in_shards, build_group_micro_batches, build_span_micro_batches};
use crate::checkpoint::{self, checkpoint_name};
use crate::config::GrpoConfig;
use crate::data::DataCursor;
use crate::error::GrpoError;
use crate::guard::NonFiniteGuard;
use crate::logprobs::to_host;
use crate::loss::{BatchTotals, LossInputs, LossStats, grpo_loss};
use crate::metrics::{GrpoStepMetrics, LengthStats, MeanStd, MetricsLog, UpdateMetrics};
use crate::optim::{UpdateOutcome, Updater};
use crate::precision::MasterWeights;

/// One sampled completion with its score.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredCompletion {
    /// Index of its prompt in the step's prompts.
    pub prompt_index: usize,
    /// The generated tokens (through the end token, if one was produced).
    pub tokens: Vec<u32>,
    /// The decoded text the reward saw.
    pub text: String,
    /// The reward.
    pub reward: act_core::Reward,
    /// The advantage.
    pub advantage: f64,
}

/// What [`GrpoTrainer::step_on`] returns: the metrics and the completions behind them.
#[derive(Debug, Clone)]
pub struct GrpoStep {
    /// The step's metrics (also written to `metrics.jsonl` when the trainer has an output directory).
    pub metrics: GrpoStepMetrics,
    /// Every completion, grouped by prompt.
    pub completions: Vec<ScoredCompletion>,
}

/// A completion prepared for a policy-gradient update by a caller that owns the rollout (on-line RL over
/// environment episodes, guided rollouts): [`GrpoTrainer::update`] neither samples nor scores it, as TRL's
/// `rollout_func` and verl-agent's trajectory collector hand their trainers prepared batches.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreparedSequence {
    /// The prompt the completion was sampled after (token ids, chat template applied).
    pub prompt_ids: Vec<u32>,
    /// The sampled completion's token ids (with its end token, if one was produced).
    pub completion_ids: Vec<u32>,
    /// Its advantage.
    pub advantage: f64,
    /// The log-probs the completion was sampled with, one per completion token, at the trainer's
    /// `generation.temperature` (act-model's `Completion::log_probs`). `None` recomputes them with the weights
    /// before the update (on-policy: the ratio's denominator is then exactly the current policy). Either every
    /// sequence of an update has them or none does.
    pub behaviour_log_probs: Option<Vec<f32>>,
    /// The prompt the loss is computed under, where it differs from the sampling prompt (a hint or critique
    /// removed, as ActGuide-RL and ICRL train): the policy, reference and KL terms read this prompt, the
    /// behaviour log-probs the sampling one.
    pub training_prompt_ids: Option<Vec<u32>>,
    /// One non-negative factor per completion token multiplying its advantage (so its clipped term), detached:
    /// ICRL's calibration weights ([`crate::icrl::calibration_weights`]) for a turn sampled with tips and trained
    /// without them. `None` weighs every token 1.
    pub token_weights: Option<Vec<f32>>,
}

/// Turns packed into one sequence: its ids and, per turn, the token range of its completion.
type PackedTurns<'a> = (Vec<u32>, Vec<(Range<usize>, &'a PreparedSequence)>);

/// Everything besides the weights that a resumed run needs to continue bit-identically.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct GrpoState {
    kind: String,
    step: usize,
    updates: usize,
    rng: RngState,
    cursor: DataCursor,
    guard: NonFiniteGuard,
    config: GrpoConfig,
}

const STATE_KIND: &str = "act-grpo/grpo";

/// A GRPO trainer over a Qwen3 policy.
///
/// [`GrpoTrainer::step`] is one whole iteration and can be called from any loop; [`GrpoTrainer::step_on`] takes
/// the prompts from the caller instead of the trainer's dataset.
pub struct GrpoTrainer {
    config: GrpoConfig,
    model: Qwen3,
    reference: Option<Qwen3>,
    updater: Updater,
    tokenizer: ChatTokenizer,
    template: ChatTemplate,
    reward: Box<dyn RewardFn>,
    samples: Vec<GrpoSample>,
    cursor: DataCursor,
    rng: ActRng,
    step: usize,
    output_dir: Option<PathBuf>,
    metrics: Option<MetricsLog>,
}

impl std::fmt::Debug for GrpoTrainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpoTrainer")
            .field("step", &self.step)
            .field("reward", &self.reward.name())
            .field("samples", &self.samples.len())
            .field("config", &self.config)
            .finish()
    }
}

pub(crate) fn require_autodiff(model: &Qwen3) -> Result<(), GrpoError> {
    if model.embed_tokens.weight.val().is_autodiff() {
        Ok(())
    } else {
        Err(GrpoError::Input("the model must live on an autodiff device (e.g. `Device::flex().autodiff()`)".into()))
    }
}

pub(crate) fn check_vocab(model: &Qwen3, tokenizer: &ChatTokenizer) -> Result<(), GrpoError> {
    if tokenizer.vocab_size() > model.config.vocab_size {
        return Err(GrpoError::Input(format!(
            "the tokenizer has {} tokens but the model's vocabulary holds {}",
            tokenizer.vocab_size(),
            model.config.vocab_size
        )));
    }
    Ok(())
}

impl GrpoTrainer {
    /// A trainer starting from `model` (on an autodiff device). With a KL coefficient, the starting model is
    /// kept frozen as the reference.
    pub fn new(
        config: GrpoConfig,
        model: Qwen3,
        tokenizer: ChatTokenizer,
        template: ChatTemplate,
        reward: impl RewardFn + 'static,
        samples: Vec<GrpoSample>,
    ) -> Result<Self, GrpoError> {
        config.validate()?;
        require_autodiff(&model)?;
        check_vocab(&model, &tokenizer)?;
        let (model, master) = MasterWeights::split(model, config.run.compute_dtype)?;
        let reference = (config.loss.kl_coef != 0.0).then(|| model.valid());
        let mut rng = rng_from_seed(config.run.seed);
        let cursor = DataCursor::new(samples.len(), &mut rng);
        let mut updater = Updater::new(&config.optimizer, config.total_updates(), config.run.max_consecutive_nonfinite);
        updater.master = master;
        Ok(GrpoTrainer {
            config,
            model,
            reference,
            updater,
            tokenizer,
            template,
            reward: Box::new(reward),
            samples,
            cursor,
            rng,
            step: 0,
            output_dir: None,
            metrics: None,
        })
    }

    /// Resumes from a checkpoint written by this trainer. `config` must be the run's config (only
    /// `run.checkpoint_every` and `run.progress_bar` may change); `samples` the same dataset. `device` is the
    /// autodiff training device.
    #[allow(clippy::too_many_arguments)]
    pub fn resume(
        checkpoint_dir: impl AsRef<Path>,
        config: GrpoConfig,
        tokenizer: ChatTokenizer,
        template: ChatTemplate,
        reward: impl RewardFn + 'static,
        samples: Vec<GrpoSample>,
        device: &Device,
    ) -> Result<Self, GrpoError> {
        let dir = checkpoint_dir.as_ref();
        let bad = |message: String| GrpoError::Checkpoint { path: dir.to_path_buf(), message };
        config.validate()?;
        let loaded = checkpoint::load(dir, device)?;
        let state: GrpoState = serde_json::from_value(loaded.policy.trainer_state.clone())
            .map_err(|e| bad(format!("trainer state: {e}")))?;
        if state.kind != STATE_KIND {
            return Err(bad(format!("written by `{}`, not the GRPO trainer", state.kind)));
        }
        let comparable = |c: &GrpoConfig| {
            let mut c = c.clone();
            c.run.checkpoint_every = 0;
            c.run.progress_bar = false;
            c
        };
        if comparable(&state.config) != comparable(&config) {
            return Err(bad("the config differs from the checkpointed run's".into()));
        }
        if state.cursor.len() != samples.len() {
            return Err(bad(format!("the run had {} samples, {} given", state.cursor.len(), samples.len())));
        }
        if config.loss.kl_coef != 0.0 && loaded.reference.is_none() {
            return Err(bad("the KL term needs a reference model, and the checkpoint has none".into()));
        }
        let mut updater = Updater::new(&config.optimizer, config.total_updates(), config.run.max_consecutive_nonfinite);
        updater.optimizer = loaded.policy.restore_optimizer(updater.optimizer)?;
        updater.updates = state.updates;
        updater.guard = state.guard;
        let (model, master) = MasterWeights::split(loaded.policy.model, config.run.compute_dtype)?;
        updater.master = master;
        require_autodiff(&model)?;
        check_vocab(&model, &tokenizer)?;
        // The reference was the working copy's snapshot, saved in f32: cast back, it is the same values.
        let reference = match loaded.reference {
            Some(reference) if !config.run.compute_dtype.is_f32() => {
                Some(reference.with_float_dtype(config.run.compute_dtype.dtype())?)
            }
            reference => reference,
        };
        Ok(GrpoTrainer {
            config,
            model,
            reference,
            updater,
            tokenizer,
            template,
            reward: Box::new(reward),
            samples,
            cursor: state.cursor,
            rng: state.rng.restore(),
            step: state.step,
            output_dir: None,
            metrics: None,
        })
    }

    /// Writes `metrics.jsonl` and checkpoints (every `run.checkpoint_every` steps) under `dir`.
    pub fn with_output_dir(mut self, dir: impl AsRef<Path>) -> Result<Self, GrpoError> {
        let dir = dir.as_ref().to_path_buf();
        self.metrics = Some(MetricsLog::append(dir.join("metrics.jsonl"))?);
        self.output_dir = Some(dir);
        Ok(self)
    }

    /// The policy being trained: the half-precision working copy with `run.compute_dtype` bf16 or f16.
    pub fn model(&self) -> &Qwen3 {
        &self.model
    }

    /// The trained policy's weights without consuming the trainer: the f32 master weights with a half-precision
    /// `run.compute_dtype`, else [`model`](Self::model).
    pub fn trained_model(&self) -> &Qwen3 {
        self.updater.trained(&self.model)
    }

    /// The trained policy, consuming the trainer: the f32 master weights with a half-precision
    /// `run.compute_dtype`.
    pub fn into_model(self) -> Qwen3 {
        match self.updater.master {
            Some(master) => master.model,
            None => self.model,
        }
    }

    /// Steps completed.
    pub fn steps_done(&self) -> usize {
        self.step
    }

    /// Optimizer update slots used (applied or skipped).
    pub fn updates_done(&self) -> usize {
        self.updater.updates
    }

    /// The configuration.
    pub fn config(&self) -> &GrpoConfig {
        &self.config
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &ChatTokenizer {
        &self.tokenizer
    }

    /// The chat template.
    pub fn template(&self) -> &ChatTemplate {
        &self.template
    }

    /// Runs `steps` steps from the trainer's dataset, with a progress bar when `run.progress_bar` is set.
    pub fn train(&mut self, steps: usize) -> Result<Vec<GrpoStepMetrics>, GrpoError> {
        let bar = crate::progress_bar(steps as u64, self.config.run.progress_bar);
        let mut out = Vec::with_capacity(steps);
        for _ in 0..steps {
            let metrics = self.step()?;
            bar.set_message(format!("reward {:.3} kl {:.4}", metrics.reward.mean, metrics.kl));
            bar.inc(1);
            out.push(metrics);
        }
        bar.finish_and_clear();
        Ok(out)
    }

    /// One iteration on the next `prompts_per_step` prompts of the dataset (reshuffled each epoch).
    pub fn step(&mut self) -> Result<GrpoStepMetrics, GrpoError> {
        if self.samples.is_empty() {
            return Err(GrpoError::Input("the trainer has no samples; use step_on to pass prompts".into()));
        }
        let indices = self.cursor.take(self.config.prompts_per_step, &mut self.rng);
        let batch: Vec<GrpoSample> = indices.into_iter().map(|i| self.samples[i].clone()).collect();
        Ok(self.step_on(&batch)?.metrics)
    }

    /// One iteration on `prompts`: generate, score, compute advantages, optimise; then log and checkpoint.
    pub fn step_on(&mut self, prompts: &[GrpoSample]) -> Result<GrpoStep, GrpoError> {
        if prompts.is_empty() {
            return Err(GrpoError::Input("no prompts".into()));
        }
        let g = self.config.group_size;
        let generation_seed: u64 = self.rng.random();

        let started = Instant::now();
        let prompt_ids = prompts
            .iter()
            .map(|s| self.tokenizer.encode_prompt(&self.template, &s.prompt))
            .collect::<Result<Vec<_>, _>>()?;
        let rows: Vec<Vec<u32>> = prompt_ids.iter().flat_map(|p| std::iter::repeat_n(p.clone(), g)).collect();
        let generations = self.sample(&rows, generation_seed)?;
        let generation_seconds = started.elapsed().as_secs_f64();

        let started = Instant::now();
        let mut completions = Vec::with_capacity(rows.len());
        for (row, generation) in generations.iter().enumerate() {
            let prompt_index = row / g;
            let text = self.tokenizer.decode(&generation.tokens, true)?;
            let text = cut_after_stop(&text, &self.config.generation.stop).to_string();
            let reward = self.reward.score(&prompts[prompt_index].target, &text)?;
            completions.push(ScoredCompletion {
                prompt_index,
                tokens: generation.tokens.clone(),
                text,
                reward,
                advantage: 0.0,
            });
        }
        let totals: Vec<f64> = completions.iter().map(|c| c.reward.total).collect();
        let advantages = group_advantages(&totals, g, &self.config.advantage)?;
        for (c, a) in completions.iter_mut().zip(&advantages.advantages) {
            c.advantage = *a;
        }
        let reward_seconds = started.elapsed().as_secs_f64();

        let started = Instant::now();
        let sequences: Vec<(Vec<u32>, usize)> = rows
            .iter()
            .zip(&generations)
            .map(|(prompt, generation)| ([prompt.as_slice(), generation.tokens.as_slice()].concat(), prompt.len()))
            .collect();
        let micro = self.group_batches(&sequences, &advantages.advantages)?;
        let old = if self.config.mu > 1 { self.current_log_probs(&micro)? } else { vec![None; micro.len()] };
        let training = self.optimise(&micro, old, sequences.len())?;
        let training_seconds = started.elapsed().as_secs_f64();

        self.step += 1;
        let lengths: Vec<usize> = generations.iter().map(|g| g.tokens.len()).collect();
        let truncated = generations.iter().filter(|g| g.finish == act_model::FinishReason::Length).count();
        let generated: usize = lengths.iter().sum();
        let processed: usize = sequences.iter().map(|(s, _)| s.len()).sum::<usize>() * self.config.mu;
        let mut components: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for c in &completions {
            for (name, value) in &c.reward.components {
                components.entry(name.clone()).or_default().push(*value);
            }
        }
        let stats = training.stats;
        let passes = (training.applied + training.skipped).max(1) as f64;
        let metrics = GrpoStepMetrics {
            step: self.step,
            reward: MeanStd::of(&totals),
            reward_components: components.into_iter().map(|(k, v)| (k, MeanStd::of(&v))).collect(),
            format_ok_fraction: completions.iter().filter(|c| c.reward.format_ok).count() as f64
                / completions.len() as f64,
            zero_std_group_fraction: advantages.zero_std_fraction(),
            loss: stats.loss / passes,
            clip_fraction: stats.clip_fraction(),
            low_clip_fraction: stats.low_clip_fraction(),
            high_clip_fraction: stats.high_clip_fraction(),
            dual_clip_fraction: stats.dual_clip_fraction(),
            kl: stats.kl_mean(),
            ratio_mean: stats.ratio_mean(),
            entropy: training.entropy,
            grad_norm: training.last.grad_norm,
            lr: training.last.lr,
            completion_length: LengthStats::of(&lengths, truncated),
            generation_tokens_per_second: generated as f64 / generation_seconds.max(1e-9),
            training_tokens_per_second: processed as f64 / training_seconds.max(1e-9),
            generation_seconds,
            reward_seconds,
            training_seconds,
            updates_applied: training.applied,
            updates_skipped: training.skipped,
            skipped_total: self.updater.guard.total(),
        };
        if let Some(log) = &mut self.metrics {
            log.write(&metrics)?;
        }
        self.checkpoint_on_schedule()?;
        Ok(GrpoStep { metrics, completions })
    }

    /// One update on completions the caller sampled and scored ([`PreparedSequence`]): `mu` passes of the clipped
    /// surrogate (with the KL term to the reference, where configured) and one optimizer update per pass, as
    /// [`step_on`](GrpoTrainer::step_on) does after its own sampling. Counts as a step: the learning-rate
    /// schedule advances and a checkpoint is written every `run.checkpoint_every` updates under the output
    /// directory. Consecutive sequences with the same prompt share its forward pass, so keep a group together.
    /// The metrics are returned, not logged: the caller knows the rewards and logs its own.
    pub fn update(&mut self, sequences: &[PreparedSequence]) -> Result<UpdateMetrics, GrpoError> {
        let refs: Vec<&PreparedSequence> = sequences.iter().collect();
        self.check_prepared(&refs)?;
        let given = sequences.iter().filter(|s| s.behaviour_log_probs.is_some()).count();
        let started = Instant::now();
        let join =
            |prompt: &[u32], s: &PreparedSequence| ([prompt, s.completion_ids.as_slice()].concat(), prompt.len());
        let training: Vec<(Vec<u32>, usize)> =
            sequences.iter().map(|s| join(s.training_prompt_ids.as_deref().unwrap_or(&s.prompt_ids), s)).collect();
        let advantages: Vec<f64> = sequences.iter().map(|s| s.advantage).collect();
        let mut micro = self.group_batches(&training, &advantages)?;
        if sequences.iter().any(|s| s.token_weights.is_some()) {
            // Each micro-batch holds consecutive sequences, their completions left-aligned in its rows.
            let mut rows = sequences.iter();
            for batch in &mut micro {
                let PolicyBatch::Group(m) = batch else { continue };
                let mut weights = vec![1f32; m.rows * m.width];
                for (row, s) in rows.by_ref().take(m.rows).enumerate() {
                    if let Some(w) = &s.token_weights {
                        weights[row * m.width..row * m.width + w.len()].copy_from_slice(w);
                    }
                }
                m.token_weights = Some(weights);
            }
        }
        let old = if given > 0 {
            // Each micro-batch holds consecutive sequences, their completions left-aligned in its rows.
            let mut rows = sequences.iter().filter_map(|s| s.behaviour_log_probs.as_deref());
            micro
                .iter()
                .map(|m| {
                    let mut old = vec![0f32; m.rows() * m.width()];
                    for (row, given) in rows.by_ref().take(m.rows()).enumerate() {
                        old[row * m.width()..row * m.width() + given.len()].copy_from_slice(given);
                    }
                    Some(old)
                })
                .collect()
        } else if sequences.iter().any(|s| s.training_prompt_ids.is_some()) {
            // The sampling prompts' batches have the same rows and completions, so the same layout.
            let sampling: Vec<(Vec<u32>, usize)> = sequences.iter().map(|s| join(&s.prompt_ids, s)).collect();
            self.current_log_probs(&self.group_batches(&sampling, &advantages)?)?
        } else if self.config.mu > 1 {
            self.current_log_probs(&micro)?
        } else {
            vec![None; micro.len()]
        };
        let training_out = self.optimise(&micro, old, sequences.len())?;
        let processed: usize = training.iter().map(|(s, _)| s.len()).sum::<usize>() * self.config.mu;
        self.finish_update(&refs, training_out, started, processed)
    }

    /// One update on whole episodes of turns ([`PreparedSequence`]s in step order, one `Vec` per episode), each
    /// turn with its own advantage (GiGPO's per-step advantages, say). Where a turn's prompt begins with the
    /// previous turn's prompt and completion, token for token (act-rs's conversation prompts), the turns are packed
    /// into one sequence with a loss span per turn, so an episode of `T` turns costs one pass over its last prompt
    /// instead of `T` passes over growing prompts; the loss of each span is the loss of its turn alone. Otherwise,
    /// as in [`update`](GrpoTrainer::update). Needs a token-level loss aggregation (`token_mean` or
    /// `constant_normalizer`). Turns with a training prompt (a guided episode's, its hint removed) are packed and
    /// trained under it, which needs their behaviour log-probs: the sampling prompt is not encoded here.
    pub fn update_episodes(&mut self, episodes: &[Vec<PreparedSequence>]) -> Result<UpdateMetrics, GrpoError> {
        let turns: Vec<&PreparedSequence> = episodes.iter().flatten().collect();
        self.check_prepared(&turns)?;
        if self.config.loss.aggregation == crate::config::LossAggregation::SequenceMean {
            return Err(GrpoError::Input(
                "packed turns need a token-level loss aggregation (token_mean or constant_normalizer), not \
                 sequence_mean"
                    .into(),
            ));
        }
        if turns.iter().any(|t| t.training_prompt_ids.is_some() && t.behaviour_log_probs.is_none()) {
            return Err(GrpoError::Input(
                "update_episodes trains under a training prompt only with the behaviour log-probs of the sampling \
                 prompt given; give them, or use update"
                    .into(),
            ));
        }
        let started = Instant::now();
        // Each packed sequence: its ids and, per turn, the token range of its completion.
        let mut packed: Vec<PackedTurns<'_>> = Vec::new();
        for episode in episodes {
            let mut current: Option<PackedTurns<'_>> = None;
            for turn in episode {
                // Packed and trained under the training prompt where there is one (a guided turn's, hint removed).
                let prompt = turn.training_prompt_ids.as_deref().unwrap_or(&turn.prompt_ids);
                let extends = current.as_ref().is_some_and(|(ids, _)| prompt.starts_with(ids));
                if !extends {
                    packed.extend(current.take());
                }
                let (ids, spans) = current.get_or_insert_with(|| (Vec::new(), Vec::new()));
                ids.extend_from_slice(&prompt[ids.len()..]);
                let start = ids.len();
                ids.extend_from_slice(&turn.completion_ids);
                spans.push((start..ids.len(), turn));
            }
            packed.extend(current);
        }
        // Longest first, so micro-batches hold similar lengths (see `build_span_micro_batches`).
        packed.sort_by_key(|(ids, _)| std::cmp::Reverse(ids.len()));
        let shards = self.config.run.shards_on(&self.model.device());
        let layout: Vec<(&[u32], Vec<Range<usize>>)> = packed
            .iter()
            .map(|(ids, spans)| (ids.as_slice(), spans.iter().map(|(r, _)| r.clone()).collect()))
            .collect();
        let micro = build_span_micro_batches(
            &layout,
            self.config.grad_accumulation_steps * shards,
            self.tokenizer.end_of_text_id(),
            self.config.run.pad_tolerance_on(&self.model.device()),
        )?;
        let with_behaviour = turns.iter().any(|t| t.behaviour_log_probs.is_some());
        let mut rows = packed.iter();
        let mut batches = Vec::with_capacity(micro.len());
        let mut old = Vec::with_capacity(micro.len());
        for m in micro {
            let mut advantages = vec![0f32; m.rows * m.width];
            let mut behaviour = with_behaviour.then(|| vec![0f32; m.rows * m.width]);
            for (row, (_, spans)) in rows.by_ref().take(m.rows).enumerate() {
                for (span, turn) in spans {
                    for (i, position) in span.clone().enumerate() {
                        let Some(column) = m.column(row, position) else { continue };
                        let weight = turn.token_weights.as_ref().map_or(1.0, |w| w[i]);
                        advantages[row * m.width + column] = turn.advantage as f32 * weight;
                        if let (Some(b), Some(lp)) = (behaviour.as_mut(), &turn.behaviour_log_probs) {
                            b[row * m.width + column] = lp[i];
                        }
                    }
                }
            }
            old.push(behaviour);
            batches.push(PolicyBatch::Packed { micro: m, advantages });
        }
        if !with_behaviour && self.config.mu > 1 {
            old = self.current_log_probs(&batches)?;
        }
        let training_out = self.optimise(&batches, old, turns.len())?;
        let processed: usize = packed.iter().map(|(ids, _)| ids.len()).sum::<usize>() * self.config.mu;
        self.finish_update(&turns, training_out, started, processed)
    }

    /// Checks prepared sequences: behaviour log-probs for all or none, one per completion token, token ids inside
    /// the vocabulary.
    fn check_prepared(&self, sequences: &[&PreparedSequence]) -> Result<(), GrpoError> {
        if sequences.is_empty() {
            return Err(GrpoError::Input("no sequences to update on".into()));
        }
        let given = sequences.iter().filter(|s| s.behaviour_log_probs.is_some()).count();
        if given != 0 && given != sequences.len() {
            return Err(GrpoError::Input(format!(
                "{given} of {} sequences carry behaviour log-probs: give them for every sequence or for none",
                sequences.len()
            )));
        }
        for (i, s) in sequences.iter().enumerate() {
            if s.prompt_ids.is_empty() || s.completion_ids.is_empty() {
                return Err(GrpoError::Input(format!("sequence {i}: an empty prompt or completion")));
            }
            if let Some(w) = &s.token_weights
                && (w.len() != s.completion_ids.len() || w.iter().any(|x| !(x.is_finite() && *x >= 0.0)))
            {
                return Err(GrpoError::Input(format!(
                    "sequence {i}: token weights must be {} finite non-negative numbers, one per completion token",
                    s.completion_ids.len()
                )));
            }
            if let Some(lp) = &s.behaviour_log_probs
                && lp.len() != s.completion_ids.len()
            {
                return Err(GrpoError::Input(format!(
                    "sequence {i}: {} behaviour log-probs for {} completion tokens",
                    lp.len(),
                    s.completion_ids.len()
                )));
            }
            let ids = s.prompt_ids.iter().chain(&s.completion_ids).chain(s.training_prompt_ids.iter().flatten());
            if let Some(id) = ids.into_iter().find(|&&id| id as usize >= self.model.config.vocab_size) {
                return Err(GrpoError::Input(format!(
                    "sequence {i}: token id {id} is outside the model's vocabulary of {}",
                    self.model.config.vocab_size
                )));
            }
        }
        Ok(())
    }

    /// Counts the update as a step, checkpoints on schedule and returns its metrics.
    fn finish_update(
        &mut self,
        sequences: &[&PreparedSequence],
        training: Training,
        started: Instant,
        processed: usize,
    ) -> Result<UpdateMetrics, GrpoError> {
        let seconds = started.elapsed().as_secs_f64();
        self.step += 1;
        let stats = training.stats;
        let passes = (training.applied + training.skipped).max(1) as f64;
        let metrics = UpdateMetrics {
            step: self.step,
            sequences: sequences.len(),
            completion_tokens: sequences.iter().map(|s| s.completion_ids.len()).sum(),
            loss: stats.loss / passes,
            clip_fraction: stats.clip_fraction(),
            low_clip_fraction: stats.low_clip_fraction(),
            high_clip_fraction: stats.high_clip_fraction(),
            dual_clip_fraction: stats.dual_clip_fraction(),
            kl: stats.kl_mean(),
            ratio_mean: stats.ratio_mean(),
            entropy: training.entropy,
            grad_norm: training.last.grad_norm,
            lr: training.last.lr,
            training_seconds: seconds,
            training_tokens_per_second: processed as f64 / seconds.max(1e-9),
            updates_applied: training.applied,
            updates_skipped: training.skipped,
            skipped_total: self.updater.guard.total(),
        };
        self.checkpoint_on_schedule()?;
        Ok(metrics)
    }

    /// Writes a checkpoint under the output directory when the step is a multiple of `run.checkpoint_every`.
    fn checkpoint_on_schedule(&self) -> Result<(), GrpoError> {
        let every = self.config.run.checkpoint_every;
        if every > 0
            && self.step.is_multiple_of(every)
            && let Some(dir) = &self.output_dir
        {
            self.save_checkpoint(dir.join(checkpoint_name(self.step)))?;
        }
        Ok(())
    }

    /// Saves a checkpoint of the current state to `dir` (atomically).
    pub fn save_checkpoint(&self, dir: impl AsRef<Path>) -> Result<(), GrpoError> {
        let state = GrpoState {
            kind: STATE_KIND.into(),
            step: self.step,
            updates: self.updater.updates,
            rng: RngState::capture(&self.rng),
            cursor: self.cursor.clone(),
            guard: self.updater.guard.clone(),
            config: self.config.clone(),
        };
        let state = serde_json::to_value(&state).map_err(|e| GrpoError::Input(format!("trainer state: {e}")))?;
        checkpoint::save(
            dir.as_ref(),
            self.updater.trained(&self.model),
            &self.updater.optimizer,
            &state,
            self.reference.as_ref(),
            &self.tokenizer,
        )
    }

    /// Samples one completion per row with the current weights; row `i` uses seed `derive_seed(seed, i)`.
    fn sample(&self, rows: &[Vec<u32>], seed: u64) -> Result<Vec<Generation>, GrpoError> {
        let g = &self.config.generation;
        let config = GenerationConfig {
            eos_token_ids: vec![self.tokenizer.im_end_id(), self.tokenizer.end_of_text_id()],
            pad_token_id: self.tokenizer.end_of_text_id(),
            ..GenerationConfig::from_sampling(g)?
        };
        let seeds: Vec<u64> = (0..rows.len()).map(|i| derive_seed(seed, i as u64)).collect();
        let stop = StopStrings { tokenizer: &self.tokenizer, stops: &g.stop };
        // Rows side by side in as many parts as the update has shards (the cores, on flex; 1 elsewhere).
        let parts = self.config.run.shards_on(&self.model.device());
        Ok(generate_in_parts(&self.model.valid(), rows, &seeds, &config, &stop, parts)?)
    }

    /// Completions after their prompts (ids, prompt length) as micro-batches, one advantage each.
    fn group_batches(
        &self,
        sequences: &[(Vec<u32>, usize)],
        advantages: &[f64],
    ) -> Result<Vec<PolicyBatch>, GrpoError> {
        let shards = self.config.run.shards_on(&self.model.device());
        Ok(build_group_micro_batches(
            sequences,
            advantages,
            self.config.grad_accumulation_steps * shards,
            self.tokenizer.end_of_text_id(),
        )?
        .into_iter()
        .map(PolicyBatch::Group)
        .collect())
    }

    /// The log-probs of `batches` under the current weights, detached and on the host: the old log-probs of an
    /// update that recomputes them.
    fn current_log_probs(&self, batches: &[PolicyBatch]) -> Result<Vec<Option<Vec<f32>>>, GrpoError> {
        let snapshot = self.model.valid();
        let (chunk, temperature) = (self.config.run.logprob_chunk, self.config.generation.temperature as f64);
        batches
            .iter()
            .map(|b| Ok(Some(to_host(b.log_probs(&snapshot, chunk, temperature, false)?.log_probs)?)))
            .collect()
    }

    /// `mu` optimisation passes over `micro`, whose old log-probs are `old` (`None`: the current ones, detached);
    /// `completions` is the number of completions (turns) in them.
    fn optimise(
        &mut self,
        micro: &[PolicyBatch],
        old: Vec<Option<Vec<f32>>>,
        completions: usize,
    ) -> Result<Training, GrpoError> {
        let shards = self.config.run.shards_on(&self.model.device());
        let totals = BatchTotals {
            sequences: completions,
            tokens: micro.iter().map(PolicyBatch::tokens).sum(),
            max_completion_tokens: self.config.generation.max_new_tokens,
        };
        let chunk = self.config.run.logprob_chunk;
        let temperature = self.config.generation.temperature as f64;
        let mut stored = Vec::with_capacity(micro.len());
        for (m, old) in micro.iter().zip(old) {
            let reference = match &self.reference {
                Some(reference) => Some(to_host(m.log_probs(reference, chunk, temperature, false)?.log_probs)?),
                None => None,
            };
            stored.push((old, reference));
        }

        let mut out = Training {
            stats: LossStats::default(),
            entropy: 0.0,
            last: UpdateOutcome { applied: false, grad_norm: f64::NAN, lr: 0.0 },
            applied: 0,
            skipped: 0,
        };
        let mut entropy_sum = 0.0;
        for pass in 0..self.config.mu {
            let mut pass_stats = LossStats::default();
            let first = pass == 0;
            let loss_config = &self.config.loss;
            let items: Vec<_> = micro.iter().zip(&stored).collect();
            let grads = accumulate_in_shards(
                &self.model,
                &items,
                shards,
                |model, &(m, (old, reference))| {
                    let device = model.device();
                    let bonus = loss_config.entropy_coef != 0.0;
                    let current = m.log_probs(model, chunk, temperature, first || bonus)?;
                    let (rows, width) = (m.rows(), m.width());
                    let host = |v: &[f32]| Tensor::<2>::from_data(TensorData::new(v.to_vec(), [rows, width]), &device);
                    let mask = host(m.mask());
                    let entropy = current
                        .entropy
                        .as_ref()
                        .filter(|_| first)
                        .map(|e| (e.clone().detach() * mask.clone()).sum().into_scalar::<f32>() as f64);
                    let inputs = LossInputs {
                        old_log_probs: match old {
                            Some(old) => host(old),
                            None => current.log_probs.clone().detach(),
                        },
                        log_probs: current.log_probs,
                        ref_log_probs: reference.as_deref().map(host),
                        advantages: m.advantages(&device),
                        mask,
                        entropy: current.entropy.filter(|_| bonus),
                    };
                    let loss = grpo_loss(inputs, loss_config, totals)?;
                    let finite = loss.stats.loss.is_finite();
                    Ok((finite.then_some(loss.loss), (loss.stats, entropy)))
                },
                |(stats, entropy)| {
                    entropy_sum += entropy.unwrap_or(0.0);
                    // A non-finite item's stats land here too, but the pass is then skipped and its stats dropped.
                    pass_stats.merge(&stats);
                },
            )?;
            out.last = if let Some(grads) = grads {
                let (model, outcome) = self.updater.apply(self.model.clone(), grads, self.step + 1)?;
                self.model = model;
                outcome
            } else {
                self.updater.skip_nonfinite_loss(self.step + 1)?
            };
            if out.last.applied {
                out.applied += 1;
                out.stats.merge(&pass_stats);
            } else {
                out.skipped += 1;
            }
        }
        out.entropy = if totals.tokens > 0 { entropy_sum / totals.tokens as f64 } else { 0.0 };
        Ok(out)
    }
}

/// What the optimisation passes of one step did.
struct Training {
    stats: LossStats,
    entropy: f64,
    last: UpdateOutcome,
    applied: usize,
    skipped: usize,
}

/// Ends a row once its decoded tail contains a stop string.
struct StopStrings<'a> {
    tokenizer: &'a ChatTokenizer,
    stops: &'a [String],
}

impl StopCondition for StopStrings<'_> {
    fn is_done(&self, _row: usize, completion: &[u32]) -> bool {
        if self.stops.is_empty() {
            return false;
        }
        // A stop string can only end in the newest token: a tail as long as the longest stop string suffices.
        let longest = self.stops.iter().map(String::len).max().unwrap_or(0);
        let tail = &completion[completion.len().saturating_sub(longest + 2)..];
        self.tokenizer
            .decode(tail, true)
            .map(|text| self.stops.iter().any(|s| !s.is_empty() && text.contains(s.as_str())))
            .unwrap_or(false)
    }
}
