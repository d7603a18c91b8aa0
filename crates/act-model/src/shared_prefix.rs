//! Completions that share their prompts: each distinct prompt is encoded once and its keys and values serve every
//! completion of it.

use burn::prelude::*;

use crate::batch::{PadSide, TokenBatch, distinct_rows};
use crate::error::ModelError;
use crate::qwen3::Qwen3;

/// Rows of (prompt, completion) with the distinct prompts gathered once.
///
/// ```
/// use act_model::SharedPrefixBatch;
/// let (p, q) = (vec![1, 2, 3], vec![4, 5]);
/// let rows: Vec<(&[u32], &[u32])> = vec![(&p, &[7]), (&p, &[8, 9]), (&q, &[7])];
/// let batch = SharedPrefixBatch::new(&rows, 0).unwrap();
/// assert_eq!((batch.rows(), batch.distinct_prompts(), batch.completion_len()), (3, 2, 2));
/// ```
///
/// A GRPO group holds G completions of one prompt, and an agent's prompt (the whole episode so far, or a comparison
/// after it) is far longer than its completion: encoding the prompt once per group instead of once per completion
/// makes a training pass over a group about G times cheaper. The result is exact: every completion attends to its
/// prompt's keys and values at the same positions as in `prompt + completion` run alone, so hidden states agree up to
/// floating-point summation order, and gradients flow back through the shared prompt pass (summed over its
/// completions, as they would be over G copies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedPrefixBatch {
    /// The distinct prompts, left-padded (every prompt ends at the same index).
    prompts: TokenBatch,
    /// The completions, right-padded.
    completions: TokenBatch,
    /// For each row, the index of its prompt in `prompts`.
    prompt_of_row: Vec<usize>,
    /// Real tokens per distinct prompt.
    prompt_lens: Vec<usize>,
}

impl SharedPrefixBatch {
    /// Groups `rows` by prompt (equal token ids); prompts and completions must not be empty.
    pub fn new(rows: &[(&[u32], &[u32])], pad_id: u32) -> Result<Self, ModelError> {
        if rows.is_empty() {
            return Err(ModelError::Input("no rows".into()));
        }
        if let Some(i) = rows.iter().position(|(prompt, completion)| prompt.is_empty() || completion.is_empty()) {
            return Err(ModelError::Input(format!("row {i} has an empty prompt or completion")));
        }
        let (distinct, prompt_of_row) = distinct_rows(rows.iter().map(|(prompt, _)| *prompt));
        let completions: Vec<Vec<u32>> = rows.iter().map(|(_, c)| c.to_vec()).collect();
        Ok(SharedPrefixBatch {
            prompt_lens: distinct.iter().map(Vec::len).collect(),
            prompts: TokenBatch::from_sequences(&distinct, pad_id, PadSide::Left)?,
            completions: TokenBatch::from_sequences(&completions, pad_id, PadSide::Right)?,
            prompt_of_row,
        })
    }

    /// Rows (completions).
    pub fn rows(&self) -> usize {
        self.prompt_of_row.len()
    }

    /// Distinct prompts, each encoded once.
    pub fn distinct_prompts(&self) -> usize {
        self.prompts.batch()
    }

    /// The longest completion: the width of [`Qwen3::completion_hidden_states`].
    pub fn completion_len(&self) -> usize {
        self.completions.seq()
    }

    /// The completions, right-padded `[rows, completion_len]` (their mask marks the real tokens).
    pub fn completions(&self) -> &TokenBatch {
        &self.completions
    }
}

impl Qwen3 {
    /// `[rows, completion_len, hidden]`: entry `(r, j)` is the final hidden state that predicts token `j` of row
    /// `r`'s completion (its prompt's last position for `j = 0`), as in a pass over `prompt + completion` alone.
    /// Entries past a completion's end are padding.
    pub fn completion_hidden_states(&self, batch: &SharedPrefixBatch) -> Tensor<3> {
        let device = self.device();
        let prompts = &batch.prompts;
        let (prompt_seq, width, rows) = (prompts.seq(), batch.completions.seq(), batch.rows());
        let mut cache = self.new_cache();
        let prompt_hidden = self.run(
            prompts.ids_tensor(&device),
            &prompts.positions(),
            self.causal_bias(prompts.mask(), prompts.batch(), prompts.seq(), prompts.seq(), &device),
            Some(&mut cache),
        );
        let index: Vec<i64> = batch.prompt_of_row.iter().map(|&p| p as i64).collect();
        let index = Tensor::<1, Int>::from_data(TensorData::new(index, [rows]), &device);
        let last = prompt_hidden.narrow(1, prompt_seq - 1, 1).select(0, index);
        cache.retain_rows(&batch.prompt_of_row, &device);
        let mut positions = Vec::with_capacity(rows * width);
        let mut key_mask = Vec::with_capacity(rows * (prompt_seq + width));
        let completion_mask = batch.completions.mask();
        for (row, &p) in batch.prompt_of_row.iter().enumerate() {
            positions.extend((0..width).map(|j| batch.prompt_lens[p] + j));
            key_mask.extend_from_slice(&prompts.mask()[p * prompt_seq..(p + 1) * prompt_seq]);
            key_mask.extend_from_slice(&completion_mask[row * width..(row + 1) * width]);
        }
        if width == 1 {
            return last;
        }
        let bias = self.causal_bias(&key_mask, rows, prompt_seq + width, width, &device);
        let hidden = self.run(batch.completions.ids_tensor(&device), &positions, bias, Some(&mut cache));
        Tensor::cat(vec![last, hidden.narrow(1, 0, width - 1)], 1)
    }
}
