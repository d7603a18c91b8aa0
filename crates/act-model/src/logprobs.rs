//! Per-token log-probabilities of a batch's own next tokens, computed a chunk of positions at a time.

use burn::prelude::*;
use burn::tensor::activation::log_softmax;

use crate::batch::TokenBatch;
use crate::error::ModelError;
use crate::qwen3::Qwen3;

/// `[batch, seq - 1]`: entry `(b, i)` is `log p(ids[b, i + 1] | ids[b, ..= i])`.
///
/// Entries whose target is padding are computed too; mask them with [`shifted_mask`].
///
/// The LM head and log-softmax run on `chunk` positions at once, so a 151k-token vocabulary never needs the
/// whole `[tokens x vocab]` logits tensor in one piece (the autodiff graph still keeps each chunk's softmax for
/// the backward pass; device-level gradient checkpointing trades that memory for recomputation).
pub fn next_token_log_probs(model: &Qwen3, batch: &TokenBatch, chunk: usize) -> Result<Tensor<2>, ModelError> {
    if batch.seq() < 2 {
        return Err(ModelError::Input("log-probs need sequences of at least two tokens".into()));
    }
    if chunk == 0 {
        return Err(ModelError::Input("chunk must be positive".into()));
    }
    let device = model.device();
    let (b, s) = (batch.batch(), batch.seq());
    let hidden = model.hidden_states(batch);
    let targets: Vec<i64> = batch.ids().chunks(s).flat_map(|row| row[1..].iter().map(|&t| t as i64)).collect();
    let targets = Tensor::<2, Int>::from_data(TensorData::new(targets, [b, s - 1]), &device);
    let mut parts = Vec::with_capacity((s - 1).div_ceil(chunk));
    let mut start = 0;
    while start < s - 1 {
        let len = chunk.min(s - 1 - start);
        let logits = model.logits(hidden.clone().narrow(1, start, len));
        let log_probs = log_softmax(logits, 2);
        let picked = log_probs.gather(2, targets.clone().narrow(1, start, len).unsqueeze_dim(2));
        parts.push(picked.squeeze_dim(2));
        start += len;
    }
    Ok(Tensor::cat(parts, 1))
}

/// The `[batch, seq - 1]` 0/1 mask aligned with [`next_token_log_probs`] for a per-token `[batch, seq]` mask:
/// entry `(b, i)` is `mask[b, i + 1]` (a target is scored when the token it predicts is selected).
pub fn shifted_mask(mask: &[bool], batch: usize, seq: usize, device: &Device) -> Result<Tensor<2>, ModelError> {
    if mask.len() != batch * seq || seq < 2 {
        return Err(ModelError::Input(format!("mask of {} entries does not fit {batch} x {seq}", mask.len())));
    }
    let values: Vec<f32> = mask.chunks(seq).flat_map(|row| row[1..].iter().map(|&m| m as u8 as f32)).collect();
    Ok(Tensor::from_data(TensorData::new(values, [batch, seq - 1]), device))
}

/// Mean negative log-likelihood of the tokens selected by `loss_mask` (`[batch, seq]`, e.g. completion tokens):
/// the supervised fine-tuning loss.
pub fn masked_nll(
    model: &Qwen3,
    batch: &TokenBatch,
    loss_mask: &[bool],
    chunk: usize,
) -> Result<Tensor<1>, ModelError> {
    let log_probs = next_token_log_probs(model, batch, chunk)?;
    let mask = shifted_mask(loss_mask, batch.batch(), batch.seq(), &model.device())?;
    let count = loss_mask.chunks(batch.seq()).map(|row| row[1..].iter().filter(|&&m| m).count()).sum::<usize>();
    if count == 0 {
        return Err(ModelError::Input("the loss mask selects no target token".into()));
    }
    Ok((log_probs * mask).sum().neg().div_scalar(count as f64))
}
