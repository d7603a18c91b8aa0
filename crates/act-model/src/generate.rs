//! Batched autoregressive generation: left-padded prefill, then one token per step with or without a KV cache.
//!
//! Rows of different prompt lengths share one batch: prompts are left-padded, padding keys are masked out and
//! rotary positions count real tokens only, so each row computes what it would compute alone. Finished rows
//! leave the batch (and the cache) at once.

use burn::prelude::*;

use crate::batch::{PadSide, TokenBatch, causal_bias};
use crate::error::ModelError;
use crate::qwen3::Qwen3;
use crate::sampling::Sampler;

/// Why a row stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// It emitted an end-of-sequence token (kept as the last token).
    Eos,
    /// Its [`StopCondition`] fired.
    Stop,
    /// It reached `max_new_tokens`.
    Length,
}

/// One row's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generation {
    /// The new tokens (the prompt is not repeated).
    pub tokens: Vec<u32>,
    /// Why generation ended.
    pub finish: FinishReason,
}

/// Decides, after each new token, whether a row is complete (stop strings live here).
pub trait StopCondition {
    /// Whether `completion` (all new tokens of the row so far) should end generation.
    fn is_done(&self, row: usize, completion: &[u32]) -> bool;
}

/// Never stops early.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoStop;

impl StopCondition for NoStop {
    fn is_done(&self, _row: usize, _completion: &[u32]) -> bool {
        false
    }
}

/// Generation settings.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationConfig {
    /// How tokens are picked.
    pub sampler: Sampler,
    /// The most new tokens per row.
    pub max_new_tokens: usize,
    /// Tokens that end a row.
    pub eos_token_ids: Vec<u32>,
    /// Token fed for padding.
    pub pad_token_id: u32,
    /// Reuse keys/values across steps (false recomputes the whole sequence every step: a reference and a bench).
    pub use_cache: bool,
}

impl GenerationConfig {
    /// Greedy, cached, no end tokens.
    pub fn greedy(max_new_tokens: usize) -> Self {
        GenerationConfig {
            sampler: Sampler::greedy(),
            max_new_tokens,
            eos_token_ids: Vec::new(),
            pad_token_id: 0,
            use_cache: true,
        }
    }

    /// Sets the end-of-sequence tokens.
    pub fn with_eos(mut self, eos: Vec<u32>) -> Self {
        self.eos_token_ids = eos;
        self
    }

    /// Sets whether the KV cache is used.
    pub fn with_cache(mut self, use_cache: bool) -> Self {
        self.use_cache = use_cache;
        self
    }

    /// Sets the sampler.
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.sampler = sampler;
        self
    }
}

/// Generates a completion for each prompt; row `i` samples from its own generator seeded with `seeds[i]`.
pub fn generate(
    model: &Qwen3,
    prompts: &[Vec<u32>],
    seeds: &[u64],
    config: &GenerationConfig,
    stop: &dyn StopCondition,
) -> Result<Vec<Generation>, ModelError> {
    if prompts.len() != seeds.len() {
        return Err(ModelError::Input(format!("{} prompts but {} seeds", prompts.len(), seeds.len())));
    }
    let vocab = model.config.vocab_size as u32;
    for (i, p) in prompts.iter().enumerate() {
        if let Some(t) = p.iter().find(|&&t| t >= vocab) {
            return Err(ModelError::Input(format!("prompt {i} has token {t} outside the vocabulary of {vocab}")));
        }
    }
    let mut results: Vec<Generation> =
        prompts.iter().map(|_| Generation { tokens: Vec::new(), finish: FinishReason::Length }).collect();
    if prompts.is_empty() || config.max_new_tokens == 0 {
        return Ok(results);
    }
    let mut rngs: Vec<_> = seeds.iter().map(|&s| act_core::rng_from_seed(s)).collect();
    let device = model.device();
    let mut state = DecodeState::prefill(model, prompts, config, &device)?;
    loop {
        let logits = state.last_logits.take().expect("logits of the previous step");
        let mut finished = Vec::new();
        for (slot, &row) in state.rows.iter().enumerate() {
            let start = slot * vocab as usize;
            let token = config.sampler.sample(&logits[start..start + vocab as usize], &mut rngs[row]);
            let out = &mut results[row];
            out.tokens.push(token);
            if config.eos_token_ids.contains(&token) {
                out.finish = FinishReason::Eos;
                finished.push(slot);
            } else if stop.is_done(row, &out.tokens) {
                out.finish = FinishReason::Stop;
                finished.push(slot);
            } else if out.tokens.len() >= config.max_new_tokens {
                finished.push(slot);
            }
        }
        let next: Vec<u32> =
            state.rows.iter().map(|&r| *results[r].tokens.last().expect("token just pushed")).collect();
        if finished.len() == state.rows.len() {
            break;
        }
        state.drop_rows(&finished, &device);
        let next: Vec<u32> =
            next.iter().enumerate().filter(|(slot, _)| !finished.contains(slot)).map(|(_, &t)| t).collect();
        state.step(model, &next, &results, prompts, config, &device)?;
    }
    Ok(results)
}

/// The rows still generating, their masks and positions, and the cache.
struct DecodeState {
    /// Original row index of each batch slot.
    rows: Vec<usize>,
    /// Per slot: key mask over everything fed so far.
    key_mask: Vec<Vec<bool>>,
    /// Per slot: position of the next token.
    next_position: Vec<usize>,
    cache: Option<crate::kv_cache::KvCache>,
    last_logits: Option<Vec<f32>>,
}

impl DecodeState {
    fn prefill(
        model: &Qwen3,
        prompts: &[Vec<u32>],
        config: &GenerationConfig,
        device: &Device,
    ) -> Result<Self, ModelError> {
        let batch = TokenBatch::from_sequences(prompts, config.pad_token_id, PadSide::Left)?;
        let mut cache = config.use_cache.then(|| model.new_cache());
        let bias = causal_bias(batch.mask(), batch.batch(), batch.seq(), batch.seq(), device);
        let hidden = model.run(batch.ids_tensor(device), &batch.positions(), bias, cache.as_mut());
        let last_logits = Some(last_token_logits(model, hidden)?);
        Ok(DecodeState {
            rows: (0..prompts.len()).collect(),
            key_mask: batch.mask().chunks(batch.seq()).map(<[bool]>::to_vec).collect(),
            next_position: prompts.iter().map(Vec::len).collect(),
            cache,
            last_logits,
        })
    }

    fn drop_rows(&mut self, finished: &[usize], device: &Device) {
        if finished.is_empty() {
            return;
        }
        let keep: Vec<usize> = (0..self.rows.len()).filter(|s| !finished.contains(s)).collect();
        self.rows = keep.iter().map(|&s| self.rows[s]).collect();
        self.key_mask = keep.iter().map(|&s| std::mem::take(&mut self.key_mask[s])).collect();
        self.next_position = keep.iter().map(|&s| self.next_position[s]).collect();
        if let Some(cache) = &mut self.cache {
            cache.retain_rows(&keep, device);
        }
    }

    fn step(
        &mut self,
        model: &Qwen3,
        next: &[u32],
        results: &[Generation],
        prompts: &[Vec<u32>],
        config: &GenerationConfig,
        device: &Device,
    ) -> Result<(), ModelError> {
        let hidden = match &mut self.cache {
            Some(cache) => {
                let batch = self.rows.len();
                for mask in &mut self.key_mask {
                    mask.push(true);
                }
                let keys = self.key_mask[0].len();
                let flat_mask: Vec<bool> = self.key_mask.concat();
                let bias = causal_bias(&flat_mask, batch, keys, 1, device);
                let ids: Vec<i64> = next.iter().map(|&t| t as i64).collect();
                let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [batch, 1]), device);
                let positions = self.next_position.clone();
                model.run(ids, &positions, bias, Some(cache))
            }
            None => {
                let sequences: Vec<Vec<u32>> =
                    self.rows.iter().map(|&r| [prompts[r].as_slice(), results[r].tokens.as_slice()].concat()).collect();
                let batch = TokenBatch::from_sequences(&sequences, config.pad_token_id, PadSide::Left)?;
                let bias = causal_bias(batch.mask(), batch.batch(), batch.seq(), batch.seq(), device);
                model.run(batch.ids_tensor(device), &batch.positions(), bias, None)
            }
        };
        for p in &mut self.next_position {
            *p += 1;
        }
        self.last_logits = Some(last_token_logits(model, hidden)?);
        Ok(())
    }
}

fn last_token_logits(model: &Qwen3, hidden: Tensor<3>) -> Result<Vec<f32>, ModelError> {
    let [_, seq, _] = hidden.dims();
    let logits = model.logits(hidden.narrow(1, seq - 1, 1));
    logits
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| ModelError::Backend(format!("reading logits: {e:?}")))
}
