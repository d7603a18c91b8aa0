//! Training batches: prompt + completion sequences, right-padded, split into gradient-accumulation micro-batches,
//! with the mask of the tokens that carry loss.

use std::ops::Range;

use act_model::parallel::shard_gradients;
use act_model::{PadSide, Qwen3, TokenBatch};
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::prelude::*;

use crate::error::GrpoError;

/// A right-padded slice of the batch with its completion mask.
pub(crate) struct MicroBatch {
    pub batch: TokenBatch,
    pub rows: usize,
    /// First log-prob position computed (the earliest completion token minus one).
    pub start: usize,
    pub width: usize,
    /// `[rows, width]`: the loss weight of each predicted token (1 for a completion token, 0 elsewhere; more
    /// where packed spans overlap).
    pub mask: Vec<f32>,
    pub advantages: Vec<f32>,
    pub tokens: usize,
}

/// Splits `sequences` (ids, prompt length) with their `advantages` into `parts` micro-batches of near-equal size.
pub(crate) fn build_micro_batches(
    sequences: &[(Vec<u32>, usize)],
    advantages: &[f64],
    parts: usize,
    pad: u32,
) -> Result<Vec<MicroBatch>, GrpoError> {
    let spans: Vec<(&[u32], Vec<Range<usize>>)> = sequences
        .iter()
        .map(|(ids, prompt_len)| (&ids[..], std::iter::once(*prompt_len..ids.len()).collect()))
        .collect();
    build_span_micro_batches(&spans, advantages, parts, pad)
}

/// Splits `sequences` (ids, the token ranges that carry loss) with their `advantages` into `parts` micro-batches
/// of near-equal size. A token inside several ranges carries their summed weight.
pub(crate) fn build_span_micro_batches(
    sequences: &[(&[u32], Vec<Range<usize>>)],
    advantages: &[f64],
    parts: usize,
    pad: u32,
) -> Result<Vec<MicroBatch>, GrpoError> {
    let per = sequences.len().div_ceil(parts.max(1));
    let mut out = Vec::new();
    for (chunk, adv) in sequences.chunks(per).zip(advantages.chunks(per)) {
        let ids: Vec<Vec<u32>> = chunk.iter().map(|(s, _)| s.to_vec()).collect();
        let batch = TokenBatch::from_sequences(&ids, pad, PadSide::Right)?;
        let first_target = chunk.iter().flat_map(|(_, spans)| spans.iter().map(|s| s.start)).min().unwrap_or(0);
        if first_target == 0 {
            return Err(GrpoError::Input("a prompt encodes to no tokens".into()));
        }
        let start = first_target - 1;
        let seq = batch.seq();
        if start >= seq - 1 {
            return Err(GrpoError::Input("no completion tokens in a micro-batch".into()));
        }
        let width = seq - 1 - start;
        let mut mask = vec![0f32; chunk.len() * width];
        let mut tokens = 0;
        for (row, (s, spans)) in chunk.iter().enumerate() {
            for span in spans {
                for target in span.start.max(start + 1)..span.end.min(s.len()) {
                    mask[row * width + target - start - 1] += 1.0;
                    tokens += 1;
                }
            }
        }
        out.push(MicroBatch {
            batch,
            rows: chunk.len(),
            start,
            width,
            mask,
            advantages: adv.iter().map(|&a| a as f32).collect(),
            tokens,
        });
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
    fn micro_batches_mask_exactly_the_completions() {
        // Prompts of 3 and 2 tokens, completions of 2 and 3 tokens.
        let sequences = vec![(vec![1, 2, 3, 7, 8], 3), (vec![4, 5, 9, 9, 6], 2)];
        let micro = build_micro_batches(&sequences, &[0.5, -0.5], 1, 0).unwrap();
        assert_eq!(micro.len(), 1);
        let m = &micro[0];
        // start = min prompt - 1 = 1; positions 1..4 predict tokens 2..=4.
        assert_eq!((m.start, m.width), (1, 3));
        assert_eq!(m.mask, vec![0.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(m.tokens, 5);
        let split = build_micro_batches(&sequences, &[0.5, -0.5], 2, 0).unwrap();
        assert_eq!(split.len(), 2);
        assert_eq!(split.iter().map(|m| m.tokens).sum::<usize>(), 5);
        assert_eq!(split[1].advantages, vec![-0.5]);
    }

    #[test]
    fn span_micro_batches_weight_every_span() {
        let ids = [1, 2, 3, 4, 5, 6];
        let sequences = vec![(&ids[..], vec![2..3, 4..6, 4..6])];
        let m = &build_span_micro_batches(&sequences, &[0.0], 1, 0).unwrap()[0];
        assert_eq!((m.start, m.width), (1, 4));
        assert_eq!(m.mask, vec![1.0, 0.0, 2.0, 2.0]);
        assert_eq!(m.tokens, 5);
    }
}
