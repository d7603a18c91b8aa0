//! act-core's [`Policy`] for a Qwen3 model: chat template, batched KV-cache generation, stop strings.

use std::sync::Mutex;

use act_core::{Policy, PolicyError, Query, SamplingParams, derive_seed};
use rayon::prelude::*;

use crate::error::ModelError;
use crate::generate::{FinishReason, Generation, GenerationConfig, StopCondition, generate, generate_reusing};
use crate::prefix_cache::PrefixStore;
use crate::qwen3::Qwen3;
use crate::tokenizer::{ChatTemplate, ChatTokenizer};

/// One completion with its tokens, for trainers that score exactly what was sampled.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Prompt token ids (chat template applied).
    pub prompt_ids: Vec<u32>,
    /// Generated token ids (through the stop string or end token, if one was produced).
    pub completion_ids: Vec<u32>,
    /// Each generated token's log-probability when it was sampled (see [`Sampler::log_prob`](crate::Sampler::log_prob)).
    pub log_probs: Vec<f32>,
    /// The completion text, cut right after the first stop string; special tokens removed.
    pub text: String,
    /// Why generation ended.
    pub finish: FinishReason,
}

/// A language-model policy: a Qwen3 model, its tokenizer and the chat template around each prompt.
#[derive(Debug)]
pub struct ModelPolicy {
    name: String,
    model: Qwen3,
    tokenizer: ChatTokenizer,
    template: ChatTemplate,
    batch_size: usize,
    workers: usize,
    prefixes: Option<Mutex<PrefixStore>>,
}

impl ModelPolicy {
    /// A policy generating up to 16 queries per batch.
    pub fn new(name: impl Into<String>, model: Qwen3, tokenizer: ChatTokenizer, template: ChatTemplate) -> Self {
        ModelPolicy { name: name.into(), model, tokenizer, template, batch_size: 16, workers: 1, prefixes: None }
    }

    /// Splits each generation batch into up to `workers` parts generated side by side on rayon's pool (at
    /// least 4 rows each); 1 (the default) generates each batch in one piece.
    ///
    /// Why: on a CPU, decoding a batch is mostly small matrix products and element-wise kernels that run on one
    /// core, so one generation keeps a single core busy; on a GPU one batch already fills the device, so keep 1.
    /// Each row samples from its own seed and reads the same stored prefix either way, so the completions are those
    /// of one batch (up to floating-point summation order).
    #[must_use]
    pub fn with_workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// Keeps the keys and values of the last `capacity` prompts + completions, so a prompt that continues one of
    /// them (a multi-turn agent's next step) encodes only its new tokens ([`PrefixStore`](crate::PrefixStore)). Off by default.
    #[must_use]
    pub fn with_prefix_reuse(mut self, capacity: usize) -> Self {
        self.prefixes = Some(Mutex::new(PrefixStore::new(capacity)));
        self
    }

    /// Prompt tokens reused from earlier calls and prompt tokens encoded, when prefix reuse is on.
    pub fn prefix_reuse_counts(&self) -> Option<(u64, u64)> {
        let store = self.prefixes.as_ref()?.lock().ok()?;
        Some((store.reused_tokens(), store.encoded_tokens()))
    }

    /// Sets how many queries share one generation batch.
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// The model.
    pub fn model(&self) -> &Qwen3 {
        &self.model
    }

    /// Replaces the model (e.g. with the trainer's latest weights, via `Module::valid`).
    pub fn set_model(&mut self, model: Qwen3) {
        self.model = model;
        // Stored keys belong to the old weights.
        if let Some(store) = &mut self.prefixes {
            store.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
        }
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &ChatTokenizer {
        &self.tokenizer
    }

    /// The chat template.
    pub fn template(&self) -> &ChatTemplate {
        &self.template
    }

    /// Completions with their token ids, sampled log-probs and finish reasons; query `i` samples from
    /// `derive_seed(params.seed, i)`. [`Policy::complete`] returns the same without the finish reasons.
    pub fn completions(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<Completion>, PolicyError> {
        let fail = |message: String| PolicyError::Generation { policy: self.name.clone(), message };
        let config = GenerationConfig {
            eos_token_ids: vec![self.tokenizer.im_end_id(), self.tokenizer.end_of_text_id()],
            pad_token_id: self.tokenizer.end_of_text_id(),
            ..GenerationConfig::from_sampling(params).map_err(|e| fail(e.to_string()))?
        };
        let prompts = queries
            .iter()
            .map(|q| self.tokenizer.encode_prompt(&self.template, &q.prompt))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        let mut out = Vec::with_capacity(queries.len());
        for (chunk_index, chunk) in prompts.chunks(self.batch_size).enumerate() {
            let first = chunk_index * self.batch_size;
            let seeds: Vec<u64> = (0..chunk.len()).map(|i| derive_seed(params.seed, (first + i) as u64)).collect();
            let generations =
                self.generate_chunk(chunk, &seeds, &config, &params.stop).map_err(|e| fail(e.to_string()))?;
            for (prompt_ids, generation) in chunk.iter().zip(generations) {
                let text = self.tokenizer.decode(&generation.tokens, true).map_err(|e| fail(e.to_string()))?;
                out.push(Completion {
                    prompt_ids: prompt_ids.clone(),
                    text: cut_after_stop(&text, &params.stop).to_string(),
                    completion_ids: generation.tokens,
                    log_probs: generation.log_probs,
                    finish: generation.finish,
                });
            }
        }
        Ok(out)
    }
}

impl ModelPolicy {
    /// One generation batch, in up to `self.workers` parts side by side.
    fn generate_chunk(
        &self,
        prompts: &[Vec<u32>],
        seeds: &[u64],
        config: &GenerationConfig,
        stops: &[String],
    ) -> Result<Vec<Generation>, ModelError> {
        let stop = StopStrings { tokenizer: &self.tokenizer, stops };
        let parts = self.workers.min(prompts.len() / crate::generate::MIN_ROWS_PER_PART).max(1);
        let run = |prompts: &[Vec<u32>], seeds: &[u64], store: Option<&mut PrefixStore>| match store {
            Some(store) => generate_reusing(&self.model, prompts, seeds, config, &stop, store),
            None => generate(&self.model, prompts, seeds, config, &stop),
        };
        if parts == 1 {
            let mut guard = self.prefixes.as_ref().map(|s| s.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
            return run(prompts, seeds, guard.as_deref_mut());
        }
        let size = prompts.len().div_ceil(parts);
        let ranges: Vec<std::ops::Range<usize>> =
            (0..prompts.len()).step_by(size).map(|start| start..(start + size).min(prompts.len())).collect();
        // Each part reads the stored prefixes of its own prompts; what it stores is merged back afterwards.
        let mut stores: Vec<Option<PrefixStore>> = match &self.prefixes {
            Some(store) => {
                let store = store.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                ranges.iter().map(|r| Some(store.matches_for(&prompts[r.clone()]))).collect()
            }
            None => ranges.iter().map(|_| None).collect(),
        };
        // Rayon, not threads of our own: a caller already on rayon's pool (a batched item evaluation) must not
        // block its worker while the parts' kernels, which use the same pool, wait for a free one.
        let results: Vec<Result<Vec<Generation>, ModelError>> = ranges
            .par_iter()
            .zip(stores.par_iter_mut())
            .map(|(range, store)| run(&prompts[range.clone()], &seeds[range.clone()], store.as_mut()))
            .collect();
        if let Some(store) = &self.prefixes {
            let mut store = store.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            for part in stores.into_iter().flatten() {
                store.absorb(part);
            }
        }
        let mut out = Vec::with_capacity(prompts.len());
        for part in results {
            out.extend(part?);
        }
        Ok(out)
    }
}

impl Policy for ModelPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        Ok(self.completions(queries, params)?.into_iter().map(|c| c.text).collect())
    }

    fn complete(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<act_core::Completion>, PolicyError> {
        Ok(self
            .completions(queries, params)?
            .into_iter()
            .map(|c| act_core::Completion {
                text: c.text,
                prompt_ids: c.prompt_ids,
                token_ids: c.completion_ids,
                log_probs: c.log_probs,
            })
            .collect())
    }
}

/// Stops a row once its decoded text contains any stop string.
struct StopStrings<'a> {
    tokenizer: &'a ChatTokenizer,
    stops: &'a [String],
}

impl StopCondition for StopStrings<'_> {
    fn is_done(&self, _row: usize, completion: &[u32]) -> bool {
        if self.stops.is_empty() {
            return false;
        }
        // A stop string can only end in the newest token: decode a tail long enough to hold the longest one.
        let longest = self.stops.iter().map(String::len).max().unwrap_or(0);
        let tail = &completion[completion.len().saturating_sub(longest + 2)..];
        match self.tokenizer.decode(tail, true) {
            Ok(text) => self.stops.iter().any(|s| !s.is_empty() && text.contains(s.as_str())),
            Err(_) => false,
        }
    }
}

/// `text` up to and including the earliest-ending stop string (all of it when none occurs).
pub fn cut_after_stop<'t>(text: &'t str, stops: &[String]) -> &'t str {
    let end = stops.iter().filter(|s| !s.is_empty()).filter_map(|s| text.find(s.as_str()).map(|i| i + s.len())).min();
    match end {
        Some(end) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_the_first_stop() {
        let stops = vec!["</action>".to_string(), "\n\n".to_string()];
        assert_eq!(cut_after_stop("<action>go</action> more</action>", &stops), "<action>go</action>");
        assert_eq!(cut_after_stop("a\n\nb</action>", &stops), "a\n\n");
        assert_eq!(cut_after_stop("no stop", &stops), "no stop");
        assert_eq!(cut_after_stop("x", &[]), "x");
    }
}
