//! Supervised fine-tuning: masked cross-entropy on completion tokens (the expert action, optionally after its
//! reasoning), with the GRPO trainer's optimiser, schedule, guard rails, metrics and checkpoints, and a
//! validation loss on held-out samples.

use std::path::{Path, PathBuf};
use std::time::Instant;

use act_core::{ActRng, RngState, SftSample, rng_from_seed};
use act_model::{ChatTemplate, ChatTokenizer, Qwen3};
use burn::module::Module;
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::batch::{MicroBatch, accumulate_in_shards, build_span_micro_batches};
use crate::checkpoint::{self, checkpoint_name};
use crate::config::SftConfig;
use crate::data::DataCursor;
use crate::error::GrpoError;
use crate::guard::NonFiniteGuard;
use crate::metrics::{MetricsLog, SftStepMetrics};
use crate::optim::Updater;
use crate::packing::{PackedSequence, pack_prefixes, truncate_sequence};
use crate::precision::MasterWeights;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SftState {
    kind: String,
    step: usize,
    updates: usize,
    rng: RngState,
    cursor: DataCursor,
    guard: NonFiniteGuard,
    config: SftConfig,
}

const STATE_KIND: &str = "act-grpo/sft";

/// A supervised fine-tuning trainer over a Qwen3 model.
pub struct SftTrainer {
    config: SftConfig,
    model: Qwen3,
    updater: Updater,
    tokenizer: ChatTokenizer,
    /// The training sequences (one per sample, or packed).
    units: Vec<PackedSequence>,
    validation: Vec<PackedSequence>,
    samples: usize,
    cursor: DataCursor,
    rng: ActRng,
    step: usize,
    output_dir: Option<PathBuf>,
    metrics: Option<MetricsLog>,
}

impl std::fmt::Debug for SftTrainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SftTrainer")
            .field("step", &self.step)
            .field("samples", &self.samples)
            .field("sequences", &self.units.len())
            .field("validation", &self.validation.len())
            .field("config", &self.config)
            .finish()
    }
}

/// Prompt and completion ids of one sample, cut to `max_length` tokens: the prompt loses tokens from its start
/// first (the recent history matters most), keeping at least one; then the completion loses its end.
pub fn encode_sft(
    tokenizer: &ChatTokenizer,
    template: &ChatTemplate,
    sample: &SftSample,
    max_length: usize,
) -> Result<(Vec<u32>, usize), GrpoError> {
    let (ids, prompt_len) = encode_untruncated(tokenizer, template, sample)?;
    truncated(ids, prompt_len, max_length)
}

/// `ids` (a prompt of `prompt_len` tokens, then a completion) cut to `max_length` as [`encode_sft`] cuts them.
fn truncated(mut ids: Vec<u32>, prompt_len: usize, max_length: usize) -> Result<(Vec<u32>, usize), GrpoError> {
    let prompt_len = truncate_sequence(&mut ids, prompt_len, max_length)
        .ok_or_else(|| GrpoError::Input("max_length must allow one prompt and one completion token".into()))?;
    Ok((ids, prompt_len))
}

fn encode_untruncated(
    tokenizer: &ChatTokenizer,
    template: &ChatTemplate,
    sample: &SftSample,
) -> Result<(Vec<u32>, usize), GrpoError> {
    joined(sample, tokenizer.encode_chat(template, &sample.prompt, &sample.completion)?)
}

/// A sample's prompt and completion ids as one sequence, and the prompt's length; an empty side is an error.
fn joined(sample: &SftSample, encoding: act_model::ChatEncoding) -> Result<(Vec<u32>, usize), GrpoError> {
    let mut ids = encoding.prompt_ids;
    if ids.is_empty() || encoding.completion_ids.is_empty() {
        return Err(GrpoError::Input(format!("sample `{}` encodes to an empty prompt or completion", sample.id)));
    }
    let prompt_len = ids.len();
    ids.extend(encoding.completion_ids);
    Ok((ids, prompt_len))
}

/// The training sequences of `samples`: each alone (cut to `max_length`), or prefix-packed when `pack` is set;
/// with `whole`, every token after a sequence's first carries loss (one span over the sequence).
fn training_sequences(
    tokenizer: &ChatTokenizer,
    template: &ChatTemplate,
    samples: &[SftSample],
    max_length: usize,
    pack: bool,
    whole: bool,
) -> Result<Vec<PackedSequence>, GrpoError> {
    let mut units = completion_sequences(tokenizer, template, samples, max_length, pack)?;
    if whole {
        for unit in &mut units {
            unit.spans = std::iter::once(1..unit.ids.len()).collect();
        }
    }
    Ok(units)
}

fn completion_sequences(
    tokenizer: &ChatTokenizer,
    template: &ChatTemplate,
    samples: &[SftSample],
    max_length: usize,
    pack: bool,
) -> Result<Vec<PackedSequence>, GrpoError> {
    // Encoding whole episodes' prompts is the costly part of setting up: `encode_chats` encodes each turn once per
    // block of consecutive samples and spreads the blocks over the threads (the results are in the samples' order).
    let chats: Vec<(&str, &str)> = samples.iter().map(|s| (s.prompt.as_str(), s.completion.as_str())).collect();
    let encodings = tokenizer.encode_chats(template, &chats)?;
    let encoded: Vec<(Vec<u32>, usize)> =
        samples.iter().zip(encodings).map(|(s, e)| joined(s, e)).collect::<Result<_, _>>()?;
    if pack {
        return Ok(pack_prefixes(&encoded, max_length));
    }
    encoded
        .into_iter()
        .enumerate()
        .map(|(i, (ids, prompt_len))| {
            let (ids, prompt_len) = truncated(ids, prompt_len, max_length)?;
            Ok(PackedSequence::single(ids, prompt_len, i))
        })
        .collect()
}

impl SftTrainer {
    /// A trainer starting from `model` (on an autodiff device), training on `samples` and reporting the loss on
    /// `validation` (may be empty).
    pub fn new(
        config: SftConfig,
        model: Qwen3,
        tokenizer: ChatTokenizer,
        template: ChatTemplate,
        samples: Vec<SftSample>,
        validation: Vec<SftSample>,
    ) -> Result<Self, GrpoError> {
        config.validate()?;
        crate::grpo::require_autodiff(&model)?;
        crate::grpo::check_vocab(&model, &tokenizer)?;
        let mut rng = rng_from_seed(config.run.seed);
        let count = samples.len();
        let (max_length, pack, whole) = (config.max_length, config.pack_prefixes, config.loss_on_prompts);
        let units = training_sequences(&tokenizer, &template, &samples, max_length, pack, whole)?;
        let validation = training_sequences(&tokenizer, &template, &validation, max_length, pack, whole)?;
        let cursor = DataCursor::new(units.len(), &mut rng);
        let (model, master) = MasterWeights::split(model, config.run.compute_dtype)?;
        let mut updater = Updater::new(&config.optimizer, config.run.total_steps, config.run.max_consecutive_nonfinite);
        updater.master = master;
        Ok(SftTrainer {
            config,
            model,
            updater,
            tokenizer,
            units,
            validation,
            samples: count,
            cursor,
            rng,
            step: 0,
            output_dir: None,
            metrics: None,
        })
    }

    /// Resumes from a checkpoint of this trainer (same config up to `run.checkpoint_every`/`run.progress_bar`,
    /// same samples).
    pub fn resume(
        checkpoint_dir: impl AsRef<Path>,
        config: SftConfig,
        tokenizer: ChatTokenizer,
        template: ChatTemplate,
        samples: Vec<SftSample>,
        validation: Vec<SftSample>,
        device: &Device,
    ) -> Result<Self, GrpoError> {
        let dir = checkpoint_dir.as_ref();
        let bad = |message: String| GrpoError::Checkpoint { path: dir.to_path_buf(), message };
        config.validate()?;
        let loaded = checkpoint::load(dir, device)?;
        let state: SftState = serde_json::from_value(loaded.policy.trainer_state.clone())
            .map_err(|e| bad(format!("trainer state: {e}")))?;
        if state.kind != STATE_KIND {
            return Err(bad(format!("written by `{}`, not the SFT trainer", state.kind)));
        }
        let comparable = |c: &SftConfig| {
            let mut c = c.clone();
            c.run.checkpoint_every = 0;
            c.run.progress_bar = false;
            c
        };
        if comparable(&state.config) != comparable(&config) {
            return Err(bad("the config differs from the checkpointed run's".into()));
        }
        let count = samples.len();
        let (max_length, pack, whole) = (config.max_length, config.pack_prefixes, config.loss_on_prompts);
        let units = training_sequences(&tokenizer, &template, &samples, max_length, pack, whole)?;
        if state.cursor.len() != units.len() {
            return Err(bad(format!(
                "the run had {} training sequences, {} given ({count} samples)",
                state.cursor.len(),
                units.len()
            )));
        }
        let validation = training_sequences(&tokenizer, &template, &validation, max_length, pack, whole)?;
        let mut updater = Updater::new(&config.optimizer, config.run.total_steps, config.run.max_consecutive_nonfinite);
        updater.optimizer = loaded.policy.restore_optimizer(updater.optimizer)?;
        updater.updates = state.updates;
        updater.guard = state.guard;
        let (model, master) = MasterWeights::split(loaded.policy.model, config.run.compute_dtype)?;
        updater.master = master;
        crate::grpo::require_autodiff(&model)?;
        Ok(SftTrainer {
            config,
            model,
            updater,
            tokenizer,
            units,
            validation,
            samples: count,
            cursor: state.cursor,
            rng: state.rng.restore(),
            step: state.step,
            output_dir: None,
            metrics: None,
        })
    }

    /// Writes `metrics.jsonl` and checkpoints under `dir`.
    pub fn with_output_dir(mut self, dir: impl AsRef<Path>) -> Result<Self, GrpoError> {
        let dir = dir.as_ref().to_path_buf();
        self.metrics = Some(MetricsLog::append(dir.join("metrics.jsonl"))?);
        self.output_dir = Some(dir);
        Ok(self)
    }

    /// The model being trained: the half-precision working copy with `run.compute_dtype` bf16 or f16.
    pub fn model(&self) -> &Qwen3 {
        &self.model
    }

    /// The trained model's weights without consuming the trainer: the f32 master weights with a half-precision
    /// `run.compute_dtype`, else [`model`](Self::model).
    pub fn trained_model(&self) -> &Qwen3 {
        self.updater.trained(&self.model)
    }

    /// The trained model, consuming the trainer: the f32 master weights with a half-precision
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

    /// Runs `steps` steps, with a progress bar when `run.progress_bar` is set.
    pub fn train(&mut self, steps: usize) -> Result<Vec<SftStepMetrics>, GrpoError> {
        let bar = crate::progress_bar(steps as u64, self.config.run.progress_bar);
        let mut out = Vec::with_capacity(steps);
        for _ in 0..steps {
            let metrics = self.step()?;
            bar.set_message(format!("loss {:.4}", metrics.loss));
            bar.inc(1);
            out.push(metrics);
        }
        bar.finish_and_clear();
        Ok(out)
    }

    /// One update on the next `batch_size` sequences; logs, evaluates and checkpoints as configured.
    pub fn step(&mut self) -> Result<SftStepMetrics, GrpoError> {
        if self.units.is_empty() {
            return Err(GrpoError::Input("the SFT trainer has no samples".into()));
        }
        let started = Instant::now();
        let indices = self.cursor.take(self.config.batch_size, &mut self.rng);
        // Longest first: micro-batches of similar lengths pad little, and consecutive ones, which run side by side
        // on the shards, cost about the same.
        let mut batch: Vec<&PackedSequence> = indices.iter().map(|&i| &self.units[i]).collect();
        batch.sort_by_key(|u| std::cmp::Reverse(u.ids.len()));
        let sequences: Vec<(&[u32], Vec<std::ops::Range<usize>>)> =
            batch.iter().map(|u| (&u.ids[..], u.spans.clone())).collect();
        let device = self.model.device();
        let shards = self.config.run.shards_on(&device);
        let micro = build_span_micro_batches(
            &sequences,
            self.config.grad_accumulation_steps * shards,
            self.tokenizer.end_of_text_id(),
            self.config.run.pad_tolerance_on(&device),
        )?;
        let total_tokens: usize = micro.iter().map(|m| m.tokens).sum();
        let chunk = self.config.run.logprob_chunk;
        let mut loss_sum = 0.0;
        let grads = accumulate_in_shards(
            &self.model,
            &micro,
            shards,
            |model, m| {
                let loss = masked_nll_sum(model, m, chunk)?.div_scalar(total_tokens as f64);
                let value = loss.clone().into_scalar::<f32>() as f64;
                Ok((value.is_finite().then_some(loss), value))
            },
            |value| loss_sum += value,
        )?;
        let finite = grads.is_some();
        let outcome = if let Some(grads) = grads {
            let (model, outcome) = self.updater.apply(self.model.clone(), grads, self.step + 1)?;
            self.model = model;
            outcome
        } else {
            self.updater.skip_nonfinite_loss(self.step + 1)?
        };
        self.step += 1;
        let validation_loss = if self.config.eval_every > 0 && self.step.is_multiple_of(self.config.eval_every) {
            self.validation_loss()?
        } else {
            None
        };
        let seconds = started.elapsed().as_secs_f64();
        let processed: usize = batch.iter().map(|u| u.ids.len()).sum();
        let metrics = SftStepMetrics {
            step: self.step,
            loss: if finite { loss_sum } else { f64::NAN },
            completion_tokens: total_tokens,
            samples: batch.iter().map(|u| u.samples.len()).sum(),
            grad_norm: outcome.grad_norm,
            lr: outcome.lr,
            tokens_per_second: processed as f64 / seconds.max(1e-9),
            seconds,
            validation_loss,
            skipped: !outcome.applied,
            skipped_total: self.updater.guard.total(),
        };
        if let Some(log) = &mut self.metrics {
            log.write(&metrics)?;
        }
        let every = self.config.run.checkpoint_every;
        if every > 0
            && self.step.is_multiple_of(every)
            && let Some(dir) = &self.output_dir
        {
            let path = dir.join(checkpoint_name(self.step));
            self.save_checkpoint(path)?;
        }
        Ok(metrics)
    }

    /// Mean negative log-likelihood per completion token over the validation samples (`None` when there are
    /// none), computed without gradients.
    pub fn validation_loss(&self) -> Result<Option<f64>, GrpoError> {
        if self.validation.is_empty() {
            return Ok(None);
        }
        let model = self.model.valid();
        let mut sum = 0.0;
        let mut tokens = 0;
        let tolerance = self.config.run.pad_tolerance_on(&model.device());
        for chunk in self.validation.chunks(self.config.batch_size) {
            let sequences: Vec<(&[u32], Vec<std::ops::Range<usize>>)> =
                chunk.iter().map(|u| (&u.ids[..], u.spans.clone())).collect();
            for m in build_span_micro_batches(&sequences, 1, self.tokenizer.end_of_text_id(), tolerance)? {
                sum += masked_nll_sum(&model, &m, self.config.run.logprob_chunk)?.into_scalar::<f32>() as f64;
                tokens += m.tokens;
            }
        }
        Ok(Some(sum / tokens.max(1) as f64))
    }

    /// Saves a checkpoint of the current state to `dir` (atomically).
    pub fn save_checkpoint(&self, dir: impl AsRef<Path>) -> Result<(), GrpoError> {
        let state = SftState {
            kind: STATE_KIND.into(),
            step: self.step,
            updates: self.updater.updates,
            rng: RngState::capture(&self.rng),
            cursor: self.cursor.clone(),
            guard: self.updater.guard.clone(),
            config: self.config.clone(),
        };
        let state = serde_json::to_value(&state).map_err(|e| GrpoError::Input(format!("trainer state: {e}")))?;
        let model = self.updater.trained(&self.model);
        checkpoint::save(dir.as_ref(), model, &self.updater.optimizer, &state, None, &self.tokenizer)
    }
}

/// Sum of `-log p` over the completion tokens of a micro-batch.
fn masked_nll_sum(model: &Qwen3, m: &MicroBatch, chunk: usize) -> Result<Tensor<1>, GrpoError> {
    let log_probs = m.log_probs(model, chunk, 1.0, false)?.log_probs;
    let mask = Tensor::<2>::from_data(TensorData::new(m.mask.clone(), [m.rows, m.width]), &model.device());
    Ok((log_probs * mask).sum().neg())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_cuts_the_prompt_start_first() {
        let corpus = (0..50).map(|i| format!("the mug {i} is on the desk <action>take mug</action>"));
        let tokenizer = ChatTokenizer::train_bpe(corpus, 300).unwrap();
        let template = ChatTemplate::default();
        let sample = SftSample {
            id: "a".into(),
            prompt: "where is the mug 7?".into(),
            completion: "<action>take mug</action>".into(),
        };
        let (full, prompt_len) = encode_sft(&tokenizer, &template, &sample, 0).unwrap();
        let completion = full.len() - prompt_len;
        let (cut, cut_prompt) = encode_sft(&tokenizer, &template, &sample, full.len() - 2).unwrap();
        assert_eq!(cut.len(), full.len() - 2);
        assert_eq!(cut_prompt, prompt_len - 2);
        assert_eq!(&cut[cut_prompt..], &full[prompt_len..]);
        let (tiny, tiny_prompt) = encode_sft(&tokenizer, &template, &sample, 3).unwrap();
        assert_eq!((tiny.len(), tiny_prompt), (3, 1));
        assert!(completion > 2);
        assert!(encode_sft(&tokenizer, &template, &sample, 1).is_err());
    }

    #[test]
    fn loss_on_prompts_spans_every_token_after_the_first() {
        let corpus = (0..50).map(|i| format!("you see a mug {i} <action>take mug {i}</action>"));
        let tokenizer = ChatTokenizer::train_bpe(corpus, 300).unwrap();
        let template = ChatTemplate::default();
        let first = SftSample {
            id: "0".into(),
            prompt: "you see a mug 1".into(),
            completion: "<action>take mug 1</action>".into(),
        };
        let samples = vec![first];
        let completions = training_sequences(&tokenizer, &template, &samples, 0, true, false).unwrap();
        let whole = training_sequences(&tokenizer, &template, &samples, 0, true, true).unwrap();
        let (ids, prompt_len) = encode_sft(&tokenizer, &template, &samples[0], 0).unwrap();
        assert_eq!(completions[0].spans, std::iter::once(prompt_len..ids.len()).collect::<Vec<_>>());
        assert_eq!(whole[0].ids, ids);
        assert_eq!(whole[0].spans, std::iter::once(1..ids.len()).collect::<Vec<_>>());
    }
}
