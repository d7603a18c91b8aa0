//! Batched autoregressive generation: left-padded prefill, then one token per step with or without a KV cache.

use act_core::SamplingParams;
use burn::prelude::*;

use crate::batch::{PadSide, TokenBatch, distinct_rows};
use crate::error::ModelError;
use crate::kv_cache::{KvCache, LayerCache};
use crate::prefix_cache::{PrefixStore, StoredPrefix};
use crate::qwen3::Qwen3;
use crate::sampling::Sampler;

/// Why a row stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FinishReason {
    /// It emitted an end-of-sequence token (kept as the last token).
    Eos,
    /// Its [`StopCondition`] fired.
    Stop,
    /// It reached `max_new_tokens`.
    Length,
}

/// One row's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The new tokens (the prompt is not repeated).
    pub tokens: Vec<u32>,
    /// Each new token's log-probability when it was sampled: [`Sampler::log_prob`] (the model's distribution at
    /// the sampling temperature, before top-k/top-p), what a trainer stores as the behaviour policy's.
    pub log_probs: Vec<f32>,
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

    /// The decoding settings of act-core's [`SamplingParams`] (temperature, top-k, top-p, the token limit), cached,
    /// with no end tokens (set them with [`with_eos`](Self::with_eos)). `params.stop` and `params.seed` are the
    /// caller's: stop strings are text, which a [`StopCondition`] checks, and seeds are per row.
    ///
    /// ```
    /// use act_core::SamplingParams;
    /// let config = act_model::GenerationConfig::from_sampling(&SamplingParams::greedy().with_max_new_tokens(8))?;
    /// assert!(config.sampler.is_greedy() && config.max_new_tokens == 8 && config.use_cache);
    /// assert!(act_model::GenerationConfig::from_sampling(&SamplingParams::default().with_top_p(0.0)).is_err());
    /// # Ok::<(), act_model::ModelError>(())
    /// ```
    pub fn from_sampling(params: &SamplingParams) -> Result<Self, ModelError> {
        let sampler = Sampler::new(params.temperature, params.top_k, params.top_p)?;
        Ok(GenerationConfig { sampler, ..Self::greedy(params.max_new_tokens) })
    }

    /// Sets the end-of-sequence tokens.
    #[must_use]
    pub fn with_eos(mut self, eos: Vec<u32>) -> Self {
        self.eos_token_ids = eos;
        self
    }

    /// Sets whether the KV cache is used.
    #[must_use]
    pub fn with_cache(mut self, use_cache: bool) -> Self {
        self.use_cache = use_cache;
        self
    }

    /// Sets the sampler.
    #[must_use]
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.sampler = sampler;
        self
    }
}

/// Generates a completion for each prompt; row `i` samples from its own generator seeded with `seeds[i]`.
///
/// Rows of different prompt lengths share one batch: prompts are left-padded, padding keys are masked out and
/// rotary positions count real tokens only, so each row computes what it would compute alone. Finished rows
/// leave the batch (and the cache) at once.
pub fn generate(
    model: &Qwen3,
    prompts: &[Vec<u32>],
    seeds: &[u64],
    config: &GenerationConfig,
    stop: &dyn StopCondition,
) -> Result<Vec<Generation>, ModelError> {
    generate_with(model, prompts, seeds, config, stop, None)
}

/// [`generate`] in up to `parts` consecutive row ranges (at least [`MIN_ROWS_PER_PART`] rows each) generated side
/// by side on rayon's pool; `stop` sees each row's index in the whole batch.
///
/// Why: on the CPU one decoding batch is small matrix products and element-wise kernels that run on one core, so
/// one generation keeps about one core busy; on a GPU one batch already fills the device, so use 1 part there.
/// Each row samples from its own seed, so the completions are those of one batch up to floating-point summation
/// order (the parts' matrix products have fewer rows).
pub fn generate_in_parts(
    model: &Qwen3,
    prompts: &[Vec<u32>],
    seeds: &[u64],
    config: &GenerationConfig,
    stop: &(dyn StopCondition + Sync),
    parts: usize,
) -> Result<Vec<Generation>, ModelError> {
    use rayon::prelude::*;
    let parts = parts.min(prompts.len() / MIN_ROWS_PER_PART).max(1);
    if parts == 1 || seeds.len() != prompts.len() {
        return generate(model, prompts, seeds, config, stop);
    }
    let size = prompts.len().div_ceil(parts);
    let starts: Vec<usize> = (0..prompts.len()).step_by(size).collect();
    let results: Vec<Result<Vec<Generation>, ModelError>> = starts
        .par_iter()
        .map(|&start| {
            let end = (start + size).min(prompts.len());
            let stop = OffsetStop { inner: stop, offset: start };
            generate(model, &prompts[start..end], &seeds[start..end], config, &stop)
        })
        .collect();
    let mut out = Vec::with_capacity(prompts.len());
    for part in results {
        out.extend(part?);
    }
    Ok(out)
}

/// The fewest rows a part of [`generate_in_parts`] gets: below that a thread costs more than it saves.
pub const MIN_ROWS_PER_PART: usize = 4;

/// A stop condition seen from a part of a batch that starts at row `offset`.
struct OffsetStop<'a> {
    inner: &'a (dyn StopCondition + Sync),
    offset: usize,
}

impl StopCondition for OffsetStop<'_> {
    fn is_done(&self, row: usize, completion: &[u32]) -> bool {
        self.inner.is_done(row + self.offset, completion)
    }
}

/// [`generate`], taking each prompt's longest stored prefix from `store` instead of encoding it, and storing
/// every row's prompt and completion for later calls (see [`PrefixStore`](crate::PrefixStore)). The store must hold keys of
/// this model's current weights: clear it when they change. Without `config.use_cache` the store is not used.
pub fn generate_reusing(
    model: &Qwen3,
    prompts: &[Vec<u32>],
    seeds: &[u64],
    config: &GenerationConfig,
    stop: &dyn StopCondition,
    store: &mut PrefixStore,
) -> Result<Vec<Generation>, ModelError> {
    generate_with(model, prompts, seeds, config, stop, config.use_cache.then_some(store))
}

/// A prefill group's rows may need up to this many new tokens each before the group's longest row makes the
/// others pad: below it a row is cheap whatever its batch mates need.
const PREFILL_GROUP_FLOOR: usize = 64;

/// Rows (indices into `rests`, each row's prompt tokens left to encode) grouped for prefill: longest first, a row
/// starts a new group when it needs less than half of what the group's longest needs (and that is more than
/// [`PREFILL_GROUP_FLOOR`]).
///
/// Why: a batch's prefill pads every row's new tokens to the longest, and attends from each over the whole
/// cache. In a multi-turn evaluation most rows add one observation (tens of tokens) to a stored prefix while a
/// few (a new episode, a shifted history window) encode their whole prompt; together, every row paid for the
/// longest, and prefill took four fifths of an ALFWorld evaluation.
fn prefill_groups(rests: &[usize]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..rests.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(rests[i]));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match groups.last_mut() {
            Some(group)
                if {
                    let longest = rests[group[0]];
                    longest <= PREFILL_GROUP_FLOOR || 2 * rests[i] >= longest
                } =>
            {
                group.push(i)
            }
            _ => groups.push(vec![i]),
        }
    }
    groups
}

/// A stop condition seen through a subset of the rows: row `i` of the subset is row `rows[i]` of `inner`.
struct SubsetStop<'a> {
    inner: &'a dyn StopCondition,
    rows: &'a [usize],
}

impl StopCondition for SubsetStop<'_> {
    fn is_done(&self, row: usize, completion: &[u32]) -> bool {
        self.inner.is_done(self.rows[row], completion)
    }
}

fn generate_with(
    model: &Qwen3,
    prompts: &[Vec<u32>],
    seeds: &[u64],
    config: &GenerationConfig,
    stop: &dyn StopCondition,
    store: Option<&mut PrefixStore>,
) -> Result<Vec<Generation>, ModelError> {
    if prompts.len() != seeds.len() {
        return Err(ModelError::Input(format!("{} prompts but {} seeds", prompts.len(), seeds.len())));
    }
    let Some(store) = store else {
        return generate_batch(model, prompts, seeds, config, stop, None);
    };
    let rests: Vec<usize> =
        prompts.iter().map(|p| p.len() - store.longest_match(p).map_or(0, |(_, reused)| reused)).collect();
    let groups = prefill_groups(&rests);
    if groups.len() < 2 {
        return generate_batch(model, prompts, seeds, config, stop, Some(store));
    }
    // Each row samples from its own seed, so generating the groups one after another gives every row what one
    // batch would.
    let mut results: Vec<Option<Generation>> = vec![None; prompts.len()];
    for rows in &groups {
        let group_prompts: Vec<Vec<u32>> = rows.iter().map(|&r| prompts[r].clone()).collect();
        let group_seeds: Vec<u64> = rows.iter().map(|&r| seeds[r]).collect();
        let group_stop = SubsetStop { inner: stop, rows };
        let generated = generate_batch(model, &group_prompts, &group_seeds, config, &group_stop, Some(&mut *store))?;
        for (&row, generation) in rows.iter().zip(generated) {
            results[row] = Some(generation);
        }
    }
    Ok(results.into_iter().map(|g| g.expect("every row is in one group")).collect())
}

fn generate_batch(
    model: &Qwen3,
    prompts: &[Vec<u32>],
    seeds: &[u64],
    config: &GenerationConfig,
    stop: &dyn StopCondition,
    mut store: Option<&mut PrefixStore>,
) -> Result<Vec<Generation>, ModelError> {
    let vocab = model.config.vocab_size as u32;
    for (i, p) in prompts.iter().enumerate() {
        if let Some(t) = p.iter().find(|&&t| t >= vocab) {
            return Err(ModelError::Input(format!("prompt {i} has token {t} outside the vocabulary of {vocab}")));
        }
    }
    let mut results: Vec<Generation> = prompts
        .iter()
        .map(|_| Generation { tokens: Vec::new(), log_probs: Vec::new(), finish: FinishReason::Length })
        .collect();
    if prompts.is_empty() || config.max_new_tokens == 0 {
        return Ok(results);
    }
    let mut rngs: Vec<_> = seeds.iter().map(|&s| act_core::rng_from_seed(s)).collect();
    let device = model.device();
    let mut state = match store.as_deref_mut() {
        Some(store) => DecodeState::prefill_reusing(model, prompts, config, store, &device)?,
        None => DecodeState::prefill(model, prompts, config, &device)?,
    };
    loop {
        let logits = state.last_logits.take().expect("logits of the previous step");
        let mut finished = Vec::new();
        // Below this many logits the pool's hand-off costs more than the draws (one vocabulary of 2k per row).
        let parallel = state.rows.len() * vocab as usize >= 32_768;
        let draws = draw_tokens(&config.sampler, &logits, vocab as usize, &state.rows, &mut rngs, parallel);
        for (slot, (&row, (token, log_prob))) in state.rows.iter().zip(draws).enumerate() {
            let out = &mut results[row];
            out.tokens.push(token);
            out.log_probs.push(log_prob);
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
        if let Some(store) = store.as_deref_mut() {
            for &slot in &finished {
                if let Some(prefix) = state.stored_row(slot, prompts, &results, &device) {
                    store.insert(prefix);
                }
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

/// Each active row's next token and its log-probability, from `logits` (one `vocab`-wide row per slot of
/// `rows`), each drawn with its row's own generator; on rayon's pool when `parallel` (a row's draw depends only
/// on its logits and its generator, so the result is the same either way).
fn draw_tokens(
    sampler: &Sampler,
    logits: &[f32],
    vocab: usize,
    rows: &[usize],
    rngs: &mut [act_core::ActRng],
    parallel: bool,
) -> Vec<(u32, f32)> {
    use rayon::prelude::*;
    let mut slot_of = vec![usize::MAX; rngs.len()];
    for (slot, &row) in rows.iter().enumerate() {
        slot_of[row] = slot;
    }
    let mut work: Vec<(usize, &mut act_core::ActRng)> = rngs
        .iter_mut()
        .enumerate()
        .filter(|(row, _)| slot_of[*row] != usize::MAX)
        .map(|(row, rng)| (slot_of[row], rng))
        .collect();
    work.sort_unstable_by_key(|(slot, _)| *slot);
    let draw = |(slot, rng): &mut (usize, &mut act_core::ActRng)| {
        sampler.sample_with_log_prob(&logits[*slot * vocab..(*slot + 1) * vocab], *rng)
    };
    if parallel { work.par_iter_mut().map(draw).collect() } else { work.iter_mut().map(draw).collect() }
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
        // A GRPO group repeats each prompt G times: encode each distinct prompt once and copy its keys, values and
        // logits to every row that asks for it.
        let (distinct, source) = distinct_rows(prompts.iter().map(Vec::as_slice));
        if distinct.len() < prompts.len() && config.use_cache {
            let mut state = Self::prefill_distinct(model, &distinct, config, device)?;
            let vocab = model.config.vocab_size;
            let logits = state.last_logits.take().expect("prefill computes logits");
            state.last_logits =
                Some(source.iter().flat_map(|&d| logits[d * vocab..(d + 1) * vocab].to_vec()).collect());
            state.key_mask = source.iter().map(|&d| state.key_mask[d].clone()).collect();
            if let Some(cache) = &mut state.cache {
                cache.retain_rows(&source, device);
            }
            state.rows = (0..prompts.len()).collect();
            state.next_position = prompts.iter().map(Vec::len).collect();
            return Ok(state);
        }
        Self::prefill_distinct(model, prompts, config, device)
    }

    /// [`DecodeState::prefill`] of prompts taken as they are, one batch row each.
    fn prefill_distinct(
        model: &Qwen3,
        prompts: &[Vec<u32>],
        config: &GenerationConfig,
        device: &Device,
    ) -> Result<Self, ModelError> {
        let batch = TokenBatch::from_sequences(prompts, config.pad_token_id, PadSide::Left)?;
        let mut cache = config.use_cache.then(|| model.new_cache());
        let bias = model.causal_bias(batch.mask(), batch.batch(), batch.seq(), batch.seq(), device);
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

    /// [`DecodeState::prefill`] starting each row from its longest prefix in `store`: the stored keys and values
    /// are left-padded to a common length, then the rest of each prompt (left-padded too) is encoded after them.
    fn prefill_reusing(
        model: &Qwen3,
        prompts: &[Vec<u32>],
        config: &GenerationConfig,
        store: &mut PrefixStore,
        device: &Device,
    ) -> Result<Self, ModelError> {
        let matches: Vec<Option<(usize, usize)>> = prompts.iter().map(|p| store.longest_match(p)).collect();
        let reused: Vec<usize> = matches.iter().map(|m| m.map_or(0, |(_, len)| len)).collect();
        let cached = reused.iter().copied().max().unwrap_or(0);
        let total: usize = prompts.iter().map(Vec::len).sum();
        store.record(reused.iter().sum(), total - reused.iter().sum::<usize>());
        if cached == 0 {
            return Self::prefill(model, prompts, config, device);
        }
        let [_, kv_heads, _, head_dim] =
            match store.entry(matches.iter().flatten().next().expect("a match").0).layers.first() {
                Some((k, _)) => k.dims(),
                None => return Err(ModelError::Input("a stored prefix has no layers".into())),
            };
        // Per layer: every row's reused keys/values, left-padded with zeros (masked) to `cached` positions.
        let mut layers = Vec::with_capacity(model.layers.len());
        for layer in 0..model.layers.len() {
            let (mut keys, mut values) = (Vec::with_capacity(prompts.len()), Vec::with_capacity(prompts.len()));
            for (m, &len) in matches.iter().zip(&reused) {
                let pad = cached - len;
                let zeros = || Tensor::<4>::zeros([1, kv_heads, pad, head_dim], device).cast(model.float_dtype());
                let (k, v) = match m {
                    Some((entry, _)) => {
                        let (k, v) = &store.entry(*entry).layers[layer];
                        let (k, v) = (k.clone().narrow(2, 0, len), v.clone().narrow(2, 0, len));
                        if pad > 0 {
                            (Tensor::cat(vec![zeros(), k], 2), Tensor::cat(vec![zeros(), v], 2))
                        } else {
                            (k, v)
                        }
                    }
                    None => (zeros(), zeros()),
                };
                keys.push(k);
                values.push(v);
            }
            layers.push(LayerCache::from_parts(Tensor::cat(keys, 0), Tensor::cat(values, 0)));
        }
        let mut cache = KvCache::from_layers(layers);
        let rests: Vec<Vec<u32>> = prompts.iter().zip(&reused).map(|(p, &len)| p[len..].to_vec()).collect();
        let batch = TokenBatch::from_sequences(&rests, config.pad_token_id, PadSide::Left)?;
        let seq = batch.seq();
        let mut key_mask = Vec::with_capacity(prompts.len() * (cached + seq));
        let mut positions = Vec::with_capacity(prompts.len() * seq);
        for (row, &len) in reused.iter().enumerate() {
            key_mask.extend((0..cached).map(|j| j >= cached - len));
            let rest_mask = &batch.mask()[row * seq..(row + 1) * seq];
            key_mask.extend_from_slice(rest_mask);
            let mut next = len;
            for &real in rest_mask {
                positions.push(if real { next } else { 0 });
                next += real as usize;
            }
        }
        let bias = model.causal_bias(&key_mask, prompts.len(), cached + seq, seq, device);
        let hidden = model.run(batch.ids_tensor(device), &positions, bias, Some(&mut cache));
        let last_logits = Some(last_token_logits(model, hidden)?);
        Ok(DecodeState {
            rows: (0..prompts.len()).collect(),
            key_mask: key_mask.chunks(cached + seq).map(<[bool]>::to_vec).collect(),
            next_position: prompts.iter().map(Vec::len).collect(),
            cache: Some(cache),
            last_logits,
        })
    }

    /// Slot `slot`'s prompt and the tokens fed after it (all but its newest token), with their keys and values.
    fn stored_row(
        &self,
        slot: usize,
        prompts: &[Vec<u32>],
        results: &[Generation],
        device: &Device,
    ) -> Option<StoredPrefix> {
        let cache = self.cache.as_ref()?;
        let row = self.rows[slot];
        let fed = results[row].tokens.len().saturating_sub(1);
        let ids = [prompts[row].as_slice(), &results[row].tokens[..fed]].concat();
        let real: Vec<i64> =
            self.key_mask[slot].iter().enumerate().filter(|&(_, &m)| m).map(|(j, _)| j as i64).collect();
        if real.len() != ids.len() {
            return None;
        }
        let keep = Tensor::<1, Int>::from_data(TensorData::new(real.clone(), [real.len()]), device);
        let layers = cache.layers().iter().map(|l| l.row(slot, &keep)).collect::<Option<Vec<_>>>()?;
        Some(StoredPrefix { ids, layers })
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
                let bias = model.causal_bias(&flat_mask, batch, keys, 1, device);
                let ids: Vec<i64> = next.iter().map(|&t| t as i64).collect();
                let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [batch, 1]), device);
                let positions = self.next_position.clone();
                model.run(ids, &positions, bias, Some(cache))
            }
            None => {
                let sequences: Vec<Vec<u32>> =
                    self.rows.iter().map(|&r| [prompts[r].as_slice(), results[r].tokens.as_slice()].concat()).collect();
                let batch = TokenBatch::from_sequences(&sequences, config.pad_token_id, PadSide::Left)?;
                let bias = model.causal_bias(batch.mask(), batch.batch(), batch.seq(), batch.seq(), device);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_draw_the_same_on_the_pool_as_in_turn() {
        let vocab = 300;
        let logits: Vec<f32> = (0..8 * vocab).map(|i| ((i * 7919) % 1000) as f32 / 150.0).collect();
        // Five of eight rows still active, listed out of row order.
        let rows = [6, 1, 3, 0, 7];
        let fresh = || (0..8).map(act_core::rng_from_seed).collect::<Vec<_>>();
        for sampler in [Sampler::greedy(), Sampler::new(1.0, 0, 1.0).unwrap(), Sampler::new(0.7, 20, 0.9).unwrap()] {
            let (mut a, mut b) = (fresh(), fresh());
            for round in 0..4 {
                let in_turn = draw_tokens(&sampler, &logits, vocab, &rows, &mut a, false);
                let pooled = draw_tokens(&sampler, &logits, vocab, &rows, &mut b, true);
                assert_eq!(in_turn, pooled);
                if round == 0 {
                    // Slot k's draw reads slot k's logits with row rows[k]'s generator.
                    let mut own = act_core::rng_from_seed(rows[1] as u64);
                    assert_eq!(in_turn[1], sampler.sample_with_log_prob(&logits[vocab..2 * vocab], &mut own));
                }
            }
        }
    }

    #[test]
    fn prefill_groups_split_long_encodings_from_short_ones() {
        // Three rows add an observation to a stored prefix; two encode whole prompts.
        let groups = prefill_groups(&[70, 900, 65, 80, 500]);
        assert_eq!(groups, vec![vec![1, 4], vec![3, 0, 2]]);
        // Short rows stay together however they differ.
        assert_eq!(prefill_groups(&[64, 1, 30]), vec![vec![0, 2, 1]]);
        assert_eq!(prefill_groups(&[]), Vec::<Vec<usize>>::new());
    }
}
