//! Padded token batches and the attention masks derived from them.

use burn::prelude::*;

use crate::error::ModelError;

/// Additive attention bias for masked positions: large and finite, so fully masked rows (padding queries)
/// give a uniform softmax instead of NaN, and the masked probabilities underflow to exactly zero elsewhere.
pub const MASKED: f32 = -1.0e30;

/// Which side of a short sequence receives padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PadSide {
    /// Pad at the start (generation: every row's last token is at the same index).
    Left,
    /// Pad at the end (training).
    Right,
}

/// A `[batch, seq]` block of token ids with a padding mask (`true` = real token), kept on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBatch {
    ids: Vec<u32>,
    mask: Vec<bool>,
    batch: usize,
    seq: usize,
}

impl TokenBatch {
    /// A batch from row-major ids and mask.
    pub fn new(ids: Vec<u32>, mask: Vec<bool>, batch: usize, seq: usize) -> Result<Self, ModelError> {
        if batch == 0 || seq == 0 {
            return Err(ModelError::Input(format!("empty batch ({batch} x {seq})")));
        }
        if ids.len() != batch * seq || mask.len() != batch * seq {
            return Err(ModelError::Input(format!(
                "batch {batch} x {seq} needs {} ids and mask entries, got {} and {}",
                batch * seq,
                ids.len(),
                mask.len()
            )));
        }
        Ok(TokenBatch { ids, mask, batch, seq })
    }

    /// Pads `sequences` to the longest one with `pad_id` on `side`.
    pub fn from_sequences(sequences: &[Vec<u32>], pad_id: u32, side: PadSide) -> Result<Self, ModelError> {
        let seq = sequences.iter().map(Vec::len).max().unwrap_or(0);
        if let Some(i) = sequences.iter().position(Vec::is_empty) {
            return Err(ModelError::Input(format!("sequence {i} is empty")));
        }
        let mut ids = Vec::with_capacity(sequences.len() * seq);
        let mut mask = Vec::with_capacity(sequences.len() * seq);
        for s in sequences {
            let pad = seq - s.len();
            if side == PadSide::Left {
                ids.extend(std::iter::repeat_n(pad_id, pad));
                mask.extend(std::iter::repeat_n(false, pad));
            }
            ids.extend_from_slice(s);
            mask.extend(std::iter::repeat_n(true, s.len()));
            if side == PadSide::Right {
                ids.extend(std::iter::repeat_n(pad_id, pad));
                mask.extend(std::iter::repeat_n(false, pad));
            }
        }
        Self::new(ids, mask, sequences.len(), seq)
    }

    /// Rows.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Columns.
    pub fn seq(&self) -> usize {
        self.seq
    }

    /// Row-major token ids.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Row-major padding mask (`true` = real token).
    pub fn mask(&self) -> &[bool] {
        &self.mask
    }

    /// Token ids as an Int tensor `[batch, seq]`.
    pub fn ids_tensor(&self, device: &Device) -> Tensor<2, Int> {
        let ids: Vec<i64> = self.ids.iter().map(|&t| t as i64).collect();
        Tensor::from_data(TensorData::new(ids, [self.batch, self.seq]), device)
    }

    /// Rotary positions: each real token's index among the real tokens of its row (padding gets 0), as
    /// transformers' `generate` derives them from the attention mask.
    pub fn positions(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.ids.len());
        for row in self.mask.chunks(self.seq) {
            let mut count = 0usize;
            for &real in row {
                out.push(if real { count } else { 0 });
                count += real as usize;
            }
        }
        out
    }

    /// Causal attention bias `[batch, 1, seq, seq]` that also hides padding keys.
    pub fn attention_bias(&self, device: &Device) -> Tensor<4> {
        causal_bias(&self.mask, self.batch, self.seq, self.seq, device)
    }
}

/// The distinct sequences of `rows` in order of first appearance, and for each row the index of its sequence among
/// them (a GRPO group repeats one prompt G times; it is encoded once).
pub(crate) fn distinct_rows<'a>(rows: impl IntoIterator<Item = &'a [u32]>) -> (Vec<Vec<u32>>, Vec<usize>) {
    let mut first: std::collections::HashMap<&[u32], usize> = std::collections::HashMap::new();
    let mut distinct: Vec<Vec<u32>> = Vec::new();
    let source = rows
        .into_iter()
        .map(|row| {
            *first.entry(row).or_insert_with(|| {
                distinct.push(row.to_vec());
                distinct.len() - 1
            })
        })
        .collect();
    (distinct, source)
}

/// Additive bias `[batch, 1, queries, keys]` for `queries` new tokens at the end of `keys` positions:
/// query `i` sees key `j` iff `key_mask[b * keys + j]` and `j <= keys - queries + i`.
pub fn causal_bias(key_mask: &[bool], batch: usize, keys: usize, queries: usize, device: &Device) -> Tensor<4> {
    debug_assert_eq!(key_mask.len(), batch * keys);
    let offset = keys - queries;
    let mut bias = vec![MASKED; batch * queries * keys];
    for b in 0..batch {
        let row_mask = &key_mask[b * keys..(b + 1) * keys];
        for i in 0..queries {
            let out = &mut bias[(b * queries + i) * keys..(b * queries + i + 1) * keys];
            for (j, slot) in out.iter_mut().enumerate().take(offset + i + 1) {
                if row_mask[j] {
                    *slot = 0.0;
                }
            }
        }
    }
    Tensor::from_data(TensorData::new(bias, [batch, 1, queries, keys]), device)
}

/// [`causal_bias`] for a sliding-window layer: query `i` also stops seeing keys `window` or more positions
/// before its own. A key's position is its index among the real keys of its row, the rotary position every batch
/// of this crate gives it (padding between the keys, as in a right-padded prompt followed by its completion, does
/// not count), so the window matches a pass over the row's real tokens alone, as transformers' sliding-window mask
/// (`kv_idx > q_idx - sliding_window`) computes it on an unpadded sequence.
pub fn windowed_causal_bias(
    key_mask: &[bool],
    batch: usize,
    keys: usize,
    queries: usize,
    window: usize,
    device: &Device,
) -> Tensor<4> {
    debug_assert_eq!(key_mask.len(), batch * keys);
    let offset = keys - queries;
    let mut bias = vec![MASKED; batch * queries * keys];
    let mut positions = vec![0usize; keys];
    for b in 0..batch {
        let row_mask = &key_mask[b * keys..(b + 1) * keys];
        let mut count = 0;
        for (slot, &real) in positions.iter_mut().zip(row_mask) {
            *slot = count;
            count += real as usize;
        }
        for i in 0..queries {
            let query = offset + i;
            let out = &mut bias[(b * queries + i) * keys..(b * queries + i + 1) * keys];
            for (j, slot) in out.iter_mut().enumerate().take(query + 1) {
                if row_mask[j] && positions[j] + window > positions[query] {
                    *slot = 0.0;
                }
            }
        }
    }
    Tensor::from_data(TensorData::new(bias, [batch, 1, queries, keys]), device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_padding_positions_and_mask() {
        let b = TokenBatch::from_sequences(&[vec![5, 6, 7], vec![9]], 0, PadSide::Left).unwrap();
        assert_eq!(b.ids(), &[5, 6, 7, 0, 0, 9]);
        assert_eq!(b.mask(), &[true, true, true, false, false, true]);
        assert_eq!(b.positions(), vec![0, 1, 2, 0, 0, 0]);
        let r = TokenBatch::from_sequences(&[vec![5], vec![9, 8]], 1, PadSide::Right).unwrap();
        assert_eq!(r.ids(), &[5, 1, 9, 8]);
        assert_eq!(r.positions(), vec![0, 0, 0, 1]);
    }

    #[test]
    fn bad_batches_are_errors() {
        assert!(TokenBatch::from_sequences(&[], 0, PadSide::Left).is_err());
        assert!(TokenBatch::from_sequences(&[vec![1], vec![]], 0, PadSide::Left).is_err());
        assert!(TokenBatch::new(vec![1, 2], vec![true], 1, 2).is_err());
    }

    #[test]
    fn windowed_bias_counts_real_keys_only() {
        let device = Device::flex();
        // Keys: a, b, pad, c, d; the two queries are c and d; a window of 2 positions.
        let mask = [true, true, false, true, true];
        let bias: Vec<f32> = windowed_causal_bias(&mask, 1, 5, 2, 2, &device).into_data().try_into_vec().unwrap();
        // c (position 2) sees b (1) and itself; d (3) sees c and itself.
        assert_eq!(bias, vec![MASKED, 0.0, MASKED, 0.0, MASKED, MASKED, MASKED, MASKED, 0.0, 0.0]);
        let wide: Vec<f32> = windowed_causal_bias(&mask, 1, 5, 2, 100, &device).into_data().try_into_vec().unwrap();
        let full: Vec<f32> = causal_bias(&mask, 1, 5, 2, &device).into_data().try_into_vec().unwrap();
        assert_eq!(wide, full);
    }

    #[test]
    fn causal_bias_hides_future_and_padding() {
        let device = Device::flex();
        let bias: Vec<f32> = causal_bias(&[false, true, true], 1, 3, 2, &device).into_data().try_into_vec().unwrap();
        // queries are keys 1 and 2; key 0 is padding.
        assert_eq!(bias, vec![MASKED, 0.0, MASKED, MASKED, 0.0, 0.0]);
    }
}
