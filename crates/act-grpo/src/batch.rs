//! Training batches: prompt + completion sequences, right-padded, split into gradient-accumulation micro-batches,
//! with the mask of the tokens that carry loss.

use std::ops::Range;

use act_model::shard_gradients;
use act_model::{PadSide, Qwen3, SharedPrefixBatch, TokenBatch};
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::prelude::*;

use crate::error::GrpoError;
use crate::logprobs::{TokenLogProbs, completion_log_probs, gathered_log_probs};

/// A right-padded slice of the batch and the tokens that carry loss, gathered: column `j` of row `r` is the
/// row's `j`-th target token (in position order), so the LM head and the softmax run on targets only, not on the
/// prompt tokens between them (most of a packed episode).
pub(crate) struct MicroBatch {
    pub batch: TokenBatch,
    pub rows: usize,
    /// The most targets of a row: log-probs are `[rows, width]`.
    pub width: usize,
    /// Per row, the positions of its target tokens, ascending (each predicted by the hidden state before it).
    pub targets: Vec<Vec<usize>>,
    /// `[rows, width]`: the loss weight of each target (1, more where packed spans overlap; 0 on padding columns).
    pub mask: Vec<f32>,
    pub tokens: usize,
}

impl MicroBatch {
    /// The column of the target at `position` in `row`, if it is one.
    pub fn column(&self, row: usize, position: usize) -> Option<usize> {
        self.targets[row].binary_search(&position).ok()
    }

    /// For each `[rows, width]` entry, the flat index (`row * seq + position`) of the hidden state that predicts
    /// it and the token it predicts; padding columns read position 0 of their row and predict the pad token.
    pub fn gather_indices(&self) -> (Vec<i64>, Vec<i64>) {
        let (seq, ids) = (self.batch.seq(), self.batch.ids());
        let mut hidden = vec![0i64; self.rows * self.width];
        let mut tokens = vec![0i64; self.rows * self.width];
        for (row, targets) in self.targets.iter().enumerate() {
            for column in 0..self.width {
                let at = row * self.width + column;
                match targets.get(column) {
                    Some(&p) => {
                        hidden[at] = (row * seq + p - 1) as i64;
                        tokens[at] = i64::from(ids[row * seq + p]);
                    }
                    None => {
                        hidden[at] = (row * seq) as i64;
                        tokens[at] = i64::from(ids[row * seq]);
                    }
                }
            }
        }
        (hidden, tokens)
    }

    /// The log-probs of the targets under `model`, `[rows, width]`.
    pub fn log_probs(
        &self,
        model: &Qwen3,
        chunk: usize,
        temperature: f64,
        entropy: bool,
    ) -> Result<TokenLogProbs, GrpoError> {
        let (hidden, tokens) = self.gather_indices();
        gathered_log_probs(model, &self.batch, &hidden, &tokens, [self.rows, self.width], chunk, temperature, entropy)
    }
}

/// A slice of a GRPO batch: completions with their prompts gathered ([`SharedPrefixBatch`]: a group's prompt is
/// encoded once), the completion mask and each completion's advantage.
pub(crate) struct GroupMicroBatch {
    pub batch: SharedPrefixBatch,
    pub rows: usize,
    /// The longest completion; log-probs are `[rows, width]`.
    pub width: usize,
    /// `[rows, width]`: 1 on a completion's tokens, 0 on padding.
    pub mask: Vec<f32>,
    pub advantages: Vec<f32>,
    /// `[rows, width]` factors on each completion token's advantage (ICRL's calibration weights), where any
    /// sequence of the update has them.
    pub token_weights: Option<Vec<f32>>,
    pub tokens: usize,
}

/// A micro-batch of a policy-gradient update: completions after shared prompts, or packed multi-turn sequences.
pub(crate) enum PolicyBatch {
    /// Completions gathered with their prompts, one advantage each.
    Group(GroupMicroBatch),
    /// Several turns of an episode packed into one sequence; `advantages` is `[rows, width]`, each target token
    /// with its turn's advantage.
    Packed { micro: MicroBatch, advantages: Vec<f32> },
}

impl PolicyBatch {
    pub fn rows(&self) -> usize {
        match self {
            PolicyBatch::Group(m) => m.rows,
            PolicyBatch::Packed { micro, .. } => micro.rows,
        }
    }

    /// The columns of the log-prob matrix.
    pub fn width(&self) -> usize {
        match self {
            PolicyBatch::Group(m) => m.width,
            PolicyBatch::Packed { micro, .. } => micro.width,
        }
    }

    /// `[rows, width]`: 1 on the tokens that carry loss.
    pub fn mask(&self) -> &[f32] {
        match self {
            PolicyBatch::Group(m) => &m.mask,
            PolicyBatch::Packed { micro, .. } => &micro.mask,
        }
    }

    /// The tokens that carry loss.
    pub fn tokens(&self) -> usize {
        match self {
            PolicyBatch::Group(m) => m.tokens,
            PolicyBatch::Packed { micro, .. } => micro.tokens,
        }
    }

    /// The log-probs of the target tokens under `model`, `[rows, width]`.
    pub fn log_probs(
        &self,
        model: &Qwen3,
        chunk: usize,
        temperature: f64,
        entropy: bool,
    ) -> Result<TokenLogProbs, GrpoError> {
        match self {
            PolicyBatch::Group(m) => completion_log_probs(model, &m.batch, chunk, temperature, entropy),
            PolicyBatch::Packed { micro, .. } => micro.log_probs(model, chunk, temperature, entropy),
        }
    }

    /// The advantages as the loss takes them: `[rows, 1]` or `[rows, width]`.
    pub fn advantages(&self, device: &Device) -> Tensor<2> {
        match self {
            PolicyBatch::Group(m) => match &m.token_weights {
                None => Tensor::from_data(TensorData::new(m.advantages.clone(), [m.rows, 1]), device),
                Some(weights) => {
                    let per_token: Vec<f32> =
                        weights.iter().enumerate().map(|(i, w)| m.advantages[i / m.width] * w).collect();
                    Tensor::from_data(TensorData::new(per_token, [m.rows, m.width]), device)
                }
            },
            PolicyBatch::Packed { micro, advantages } => {
                Tensor::from_data(TensorData::new(advantages.clone(), [micro.rows, micro.width]), device)
            }
        }
    }
}

/// Splits `sequences` (ids, prompt length) with their `advantages` into `parts` micro-batches of near-equal size,
/// in order (a group's completions, consecutive, share their prompt's pass unless a split falls inside the group).
pub(crate) fn build_group_micro_batches(
    sequences: &[(Vec<u32>, usize)],
    advantages: &[f64],
    parts: usize,
    pad: u32,
) -> Result<Vec<GroupMicroBatch>, GrpoError> {
    let per = sequences.len().div_ceil(parts.max(1)).max(1);
    let mut out = Vec::new();
    for (chunk, adv) in sequences.chunks(per).zip(advantages.chunks(per)) {
        let mut rows = Vec::with_capacity(chunk.len());
        for (ids, prompt_len) in chunk {
            if *prompt_len == 0 || *prompt_len >= ids.len() {
                return Err(GrpoError::Input(format!(
                    "a sequence of {} tokens has a prompt of {prompt_len}: both the prompt and the completion must \
                     be non-empty",
                    ids.len()
                )));
            }
            rows.push((&ids[..*prompt_len], &ids[*prompt_len..]));
        }
        let batch = SharedPrefixBatch::new(&rows, pad)?;
        let width = batch.completion_len();
        let mut mask = vec![0f32; rows.len() * width];
        for (row, (_, completion)) in rows.iter().enumerate() {
            mask[row * width..row * width + completion.len()].fill(1.0);
        }
        out.push(GroupMicroBatch {
            rows: rows.len(),
            width,
            tokens: rows.iter().map(|(_, c)| c.len()).sum(),
            mask,
            advantages: adv.iter().map(|&a| a as f32).collect(),
            token_weights: None,
            batch,
        });
    }
    Ok(out)
}

/// Splits `sequences` (ids, the token ranges that carry loss), longest first, into micro-batches of at most
/// `ceil(n / parts)` rows each (so `parts` bounds the rows of one, as gradient accumulation asks), starting a new
/// micro-batch whenever the next sequence would make the padding exceed `tolerance` times the real tokens (see
/// [`RunConfig::micro_batch_pad_tolerance`](crate::RunConfig::micro_batch_pad_tolerance)). A token inside several
/// ranges carries their summed weight.
///
/// Why: packed episodes vary several-fold in length, and a micro-batch costs its row count times its longest row
/// (quadratically in attention). Split by row count alone, the longest rows shared one micro-batch and the
/// shortest another, so one core worked while the other waited for it; similar-length micro-batches pad little
/// and run side by side with similar costs.
pub(crate) fn build_span_micro_batches(
    sequences: &[(&[u32], Vec<Range<usize>>)],
    parts: usize,
    pad: u32,
    tolerance: f64,
) -> Result<Vec<MicroBatch>, GrpoError> {
    let per = sequences.len().div_ceil(parts.max(1)).max(1);
    // Each micro-batch as a range of `sequences`.
    let mut chunks: Vec<Range<usize>> = Vec::new();
    let (mut begin, mut real, mut longest) = (0usize, 0usize, 0usize);
    for (i, (ids, _)) in sequences.iter().enumerate() {
        let rows = i - begin;
        let (grown_longest, grown_real) = (longest.max(ids.len()), real + ids.len());
        let padded = (rows + 1) * grown_longest;
        if rows > 0 && (rows == per || padded as f64 > (1.0 + tolerance) * grown_real as f64) {
            chunks.push(begin..i);
            (begin, real, longest) = (i, ids.len(), ids.len());
        } else {
            (real, longest) = (grown_real, grown_longest);
        }
    }
    if begin < sequences.len() {
        chunks.push(begin..sequences.len());
    }
    let mut out = Vec::new();
    for range in chunks {
        let chunk = &sequences[range];
        let ids: Vec<Vec<u32>> = chunk.iter().map(|(s, _)| s.to_vec()).collect();
        let batch = TokenBatch::from_sequences(&ids, pad, PadSide::Right)?;
        if chunk.iter().any(|(_, spans)| spans.iter().any(|s| s.start == 0 && !s.is_empty())) {
            return Err(GrpoError::Input("a prompt encodes to no tokens".into()));
        }
        // Each row's target positions with their weights (overlapping spans add up).
        let weighted: Vec<Vec<(usize, f32)>> = chunk
            .iter()
            .map(|(s, spans)| {
                let mut positions: Vec<usize> =
                    spans.iter().flat_map(|span| span.start.max(1)..span.end.min(s.len())).collect();
                positions.sort_unstable();
                let mut weighted: Vec<(usize, f32)> = Vec::with_capacity(positions.len());
                for p in positions {
                    match weighted.last_mut() {
                        Some((last, weight)) if *last == p => *weight += 1.0,
                        _ => weighted.push((p, 1.0)),
                    }
                }
                weighted
            })
            .collect();
        let width = weighted.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 {
            return Err(GrpoError::Input("no completion tokens in a micro-batch".into()));
        }
        let mut mask = vec![0f32; chunk.len() * width];
        let mut tokens = 0;
        for (row, targets) in weighted.iter().enumerate() {
            for (column, &(_, weight)) in targets.iter().enumerate() {
                mask[row * width + column] = weight;
                tokens += weight as usize;
            }
        }
        let targets = weighted.into_iter().map(|row| row.into_iter().map(|(p, _)| p).collect()).collect();
        out.push(MicroBatch { batch, rows: chunk.len(), width, targets, mask, tokens });
    }
    Ok(out)
}

/// The summed gradients of `items`' losses, `shards` items at a time running concurrently
/// ([`shard_gradients`]); `None` once an item's loss function returns no loss (a non-finite loss), and later
/// items are then not run. `visit` sees each item's output in order, up to and including that one.
pub(crate) fn accumulate_in_shards<T: Sync, S: Send>(
    model: &Qwen3,
    items: &[T],
    shards: usize,
    loss: impl Fn(&Qwen3, &T) -> Result<(Option<Tensor<1>>, S), GrpoError> + Sync,
    mut visit: impl FnMut(S),
) -> Result<Option<GradientsParams>, GrpoError> {
    let mut accumulator = GradientsAccumulator::new();
    for group in items.chunks(shards.max(1)) {
        for part in shard_gradients(model, group, &loss)? {
            visit(part.output);
            match part.grads {
                Some(grads) => accumulator.accumulate(model, grads),
                None => return Ok(None),
            }
        }
    }
    Ok(Some(accumulator.grads()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_micro_batches_mask_exactly_the_completions() {
        // Two completions of one prompt (3 tokens) and one of another (2 tokens).
        let sequences = vec![(vec![1, 2, 3, 7, 8], 3), (vec![1, 2, 3, 9], 3), (vec![4, 5, 9, 9, 6], 2)];
        let micro = build_group_micro_batches(&sequences, &[0.5, 0.0, -0.5], 1, 0).unwrap();
        assert_eq!(micro.len(), 1);
        let m = &micro[0];
        assert_eq!((m.rows, m.width, m.batch.distinct_prompts()), (3, 3, 2));
        assert_eq!(m.mask, vec![1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        assert_eq!(m.tokens, 6);
        let split = build_group_micro_batches(&sequences, &[0.5, 0.0, -0.5], 2, 0).unwrap();
        assert_eq!(split.len(), 2);
        assert_eq!(split.iter().map(|m| m.tokens).sum::<usize>(), 6);
        assert_eq!(split[1].advantages, vec![-0.5]);
        let empty_completion = vec![(vec![1, 2, 3], 3)];
        assert!(build_group_micro_batches(&empty_completion, &[0.0], 1, 0).is_err());
    }

    #[test]
    fn span_micro_batches_weight_every_span() {
        let ids = [1, 2, 3, 4, 5, 6];
        let sequences = vec![(&ids[..], vec![2..3, 4..6, 4..6])];
        let m = &build_span_micro_batches(&sequences, 1, 0, 0.0).unwrap()[0];
        // Targets 2, 4 and 5 (twice), gathered: no column for the prompt token 3 between them.
        assert_eq!((m.width, &m.targets), (3, &vec![vec![2, 4, 5]]));
        assert_eq!(m.mask, vec![1.0, 2.0, 2.0]);
        assert_eq!(m.tokens, 5);
        assert_eq!((m.column(0, 4), m.column(0, 3)), (Some(1), None));
        // Each column reads the hidden state before its target and predicts the target's token.
        assert_eq!(m.gather_indices(), (vec![1, 3, 4], vec![3, 5, 6]));
        // Rows with fewer targets are padded with weight 0.
        let short = [7, 8, 9];
        let two = vec![(&ids[..], vec![2..3, 4..6]), (&short[..], std::iter::once(2..3).collect())];
        let m = &build_span_micro_batches(&two, 1, 0, f64::INFINITY).unwrap()[0];
        assert_eq!((m.rows, m.width), (2, 3));
        assert_eq!(m.mask, vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
        assert_eq!(m.gather_indices(), (vec![1, 3, 4, 7, 6, 6], vec![3, 5, 6, 9, 7, 7]));
    }

    #[test]
    fn span_micro_batches_group_similar_lengths() {
        let seq = |n: usize| -> (Vec<u32>, Vec<Range<usize>>) { (vec![1; n], std::iter::once(1..n).collect()) };
        let owned = [seq(100), seq(90), seq(85), seq(40), seq(38), seq(10)];
        let sequences: Vec<(&[u32], Vec<Range<usize>>)> = owned.iter().map(|(i, s)| (&i[..], s.clone())).collect();
        let rows = |parts, tolerance| -> Vec<usize> {
            build_span_micro_batches(&sequences, parts, 0, tolerance).unwrap().iter().map(|m| m.rows).collect()
        };
        // 100, 90, 85 pad within a quarter of their tokens; 40 would more than double them.
        assert_eq!(rows(1, 0.25), vec![3, 2, 1]);
        // At most ceil(6 / 4) = 2 rows each.
        assert_eq!(rows(4, 0.25), vec![2, 1, 2, 1]);
        // No padding: one row each; unbounded: the row count alone decides.
        assert_eq!(rows(1, 0.0), vec![1; 6]);
        assert_eq!(rows(2, f64::INFINITY), vec![3, 3]);
        // Every completion token is still counted once.
        let tokens: usize = build_span_micro_batches(&sequences, 2, 0, 0.25).unwrap().iter().map(|m| m.tokens).sum();
        assert_eq!(tokens, owned.iter().map(|(i, _)| i.len() - 1).sum::<usize>());
    }
}
