//! Per-token log-probs (at a sampling temperature) and entropies of the completion part of a padded batch.

use act_model::{Qwen3, SharedPrefixBatch, TokenBatch};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;

use crate::error::GrpoError;

/// Log-probs of a batch's own tokens from position `start + 1` on, with optional entropies.
#[derive(Debug, Clone)]
pub struct TokenLogProbs {
    /// `[batch, seq - 1 - start]`: entry `(b, i)` is `log p(ids[b, start + i + 1] | ids[b, ..= start + i])`
    /// under logits divided by the temperature.
    pub log_probs: Tensor<2>,
    /// The same positions' predictive entropies (with their gradient, for an entropy bonus), when asked for.
    pub entropy: Option<Tensor<2>>,
}

/// Log-probs of `batch`'s tokens at positions `start + 1 ..`, `chunk` positions of logits at a time.
///
/// Unlike a whole-sequence log-prob pass, the LM head runs only where there are targets: from the first completion
/// position of a batch onwards ([`token_log_probs`]), on each completion of a shared-prompt group
/// ([`completion_log_probs`]), or on the gathered target positions of packed sequences, where most tokens between the
/// turns' completions are prompt (`gathered_log_probs`). Prompts never pay for `[tokens x vocab]` logits.
pub fn token_log_probs(
    model: &Qwen3,
    batch: &TokenBatch,
    start: usize,
    chunk: usize,
    temperature: f64,
    with_entropy: bool,
) -> Result<TokenLogProbs, GrpoError> {
    let (b, s) = (batch.batch(), batch.seq());
    if s < 2 || start >= s - 1 {
        return Err(GrpoError::Input(format!("no target positions after {start} in sequences of {s} tokens")));
    }
    check_settings(chunk, temperature)?;
    let device = model.device();
    let width = s - 1 - start;
    let targets: Vec<i64> = batch.ids().chunks(s).flat_map(|row| row[start + 1..].iter().map(|&t| t as i64)).collect();
    let targets = Tensor::<2, Int>::from_data(TensorData::new(targets, [b, width]), &device);
    let hidden = model.hidden_states(batch).narrow(1, start, width);
    picked_log_probs(model, hidden, targets, chunk, temperature, with_entropy)
}

/// Log-probs of `tokens` (`[rows, width]`, flat), each predicted by the hidden state at flat index `hidden_at`
/// (`row * seq + position`) of `batch`: only these positions pay for the LM head and the softmax.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gathered_log_probs(
    model: &Qwen3,
    batch: &TokenBatch,
    hidden_at: &[i64],
    tokens: &[i64],
    [rows, width]: [usize; 2],
    chunk: usize,
    temperature: f64,
    with_entropy: bool,
) -> Result<TokenLogProbs, GrpoError> {
    check_settings(chunk, temperature)?;
    if hidden_at.len() != rows * width || tokens.len() != rows * width {
        return Err(GrpoError::Input(format!("{} positions for a [{rows}, {width}] gather", hidden_at.len())));
    }
    let device = model.device();
    let hidden = model.hidden_states(batch);
    let [b, s, d] = hidden.dims();
    let index = Tensor::<1, Int>::from_data(TensorData::new(hidden_at.to_vec(), [rows * width]), &device);
    let hidden = hidden.reshape([b * s, d]).select(0, index).reshape([rows, width, d]);
    let targets = Tensor::<2, Int>::from_data(TensorData::new(tokens.to_vec(), [rows, width]), &device);
    picked_log_probs(model, hidden, targets, chunk, temperature, with_entropy)
}

/// Log-probs of every completion token of `batch` given its prompt and the completion before it: `[rows,
/// completion_len]` (entries past a completion's end are padding). Each distinct prompt is encoded once
/// ([`Qwen3::completion_hidden_states`]), so a group of G completions of one prompt pays for the prompt once.
pub fn completion_log_probs(
    model: &Qwen3,
    batch: &SharedPrefixBatch,
    chunk: usize,
    temperature: f64,
    with_entropy: bool,
) -> Result<TokenLogProbs, GrpoError> {
    check_settings(chunk, temperature)?;
    let device = model.device();
    let (rows, width) = (batch.rows(), batch.completion_len());
    let targets: Vec<i64> = batch.completions().ids().iter().map(|&t| t as i64).collect();
    let targets = Tensor::<2, Int>::from_data(TensorData::new(targets, [rows, width]), &device);
    let hidden = model.completion_hidden_states(batch);
    picked_log_probs(model, hidden, targets, chunk, temperature, with_entropy)
}

/// Log-softmax of the logits of `hidden` (`[rows, width, hidden]`) at `targets` (`[rows, width]`), `chunk`
/// positions at a time.
fn picked_log_probs(
    model: &Qwen3,
    hidden: Tensor<3>,
    targets: Tensor<2, Int>,
    chunk: usize,
    temperature: f64,
    with_entropy: bool,
) -> Result<TokenLogProbs, GrpoError> {
    let width = hidden.dims()[1];
    let mut log_probs = Vec::with_capacity(width.div_ceil(chunk));
    let mut entropies = Vec::new();
    let mut offset = 0;
    while offset < width {
        let len = chunk.min(width - offset);
        let mut logits = model.logits(hidden.clone().narrow(1, offset, len));
        if temperature != 1.0 {
            logits = logits.div_scalar(temperature);
        }
        let all = log_softmax(logits, 2);
        if with_entropy {
            // With its gradient, for an entropy bonus; a caller that only reads it pays no backward pass for it.
            entropies.push((all.clone().exp() * all.clone()).sum_dim(2).squeeze_dim::<2>(2).neg());
        }
        let picked = all.gather(2, targets.clone().narrow(1, offset, len).unsqueeze_dim(2));
        log_probs.push(picked.squeeze_dim::<2>(2));
        offset += len;
    }
    Ok(TokenLogProbs { log_probs: Tensor::cat(log_probs, 1), entropy: with_entropy.then(|| Tensor::cat(entropies, 1)) })
}

/// Checks the settings every log-prob pass takes.
fn check_settings(chunk: usize, temperature: f64) -> Result<(), GrpoError> {
    if chunk == 0 {
        return Err(GrpoError::Input("the log-prob chunk must be positive".into()));
    }
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(GrpoError::Input(format!("temperature must be finite and > 0, got {temperature}")));
    }
    Ok(())
}

/// A tensor's values on the host.
pub(crate) fn to_host<const D: usize>(tensor: Tensor<D>) -> Result<Vec<f32>, GrpoError> {
    tensor
        .into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|e| GrpoError::Input(format!("reading a tensor: {e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_model::{PadSide, Qwen3Config, next_token_log_probs};

    #[test]
    fn matches_act_model_and_applies_temperature() {
        let model = Qwen3::init(&Qwen3Config::tiny(40), 1, &Device::flex()).unwrap();
        let batch = TokenBatch::from_sequences(&[vec![1, 5, 9, 3, 7], vec![2, 4, 6]], 0, PadSide::Right).unwrap();
        let reference = to_host(next_token_log_probs(&model, &batch, 3).unwrap()).unwrap();
        let out = token_log_probs(&model, &batch, 1, 2, 1.0, true).unwrap();
        let got = to_host(out.log_probs).unwrap();
        assert_eq!(got.len(), 2 * 3);
        for row in 0..2 {
            for i in 0..3 {
                assert!((got[row * 3 + i] - reference[row * 4 + i + 1]).abs() < 1e-5);
            }
        }
        let entropy = to_host(out.entropy.unwrap()).unwrap();
        assert!(entropy.iter().all(|&h| h > 0.0 && h <= (40f32).ln() + 1e-4), "{entropy:?}");
        // A higher temperature flattens the distribution: the entropy grows.
        let hot = to_host(token_log_probs(&model, &batch, 1, 8, 4.0, true).unwrap().entropy.unwrap()).unwrap();
        assert!(hot.iter().zip(&entropy).all(|(h, c)| *h >= c - 1e-5));
        assert!(token_log_probs(&model, &batch, 4, 2, 1.0, false).is_err());
        assert!(token_log_probs(&model, &batch, 0, 2, 0.0, false).is_err());
    }

    #[test]
    fn completion_log_probs_equal_those_of_whole_sequences() {
        let model = Qwen3::init(&Qwen3Config::tiny(40), 1, &Device::flex()).unwrap();
        let (p, q) = (vec![1u32, 5, 9], vec![2u32, 4, 6, 8, 10]);
        let rows: Vec<(&[u32], &[u32])> = vec![(&p, &[3, 7]), (&q, &[11]), (&p, &[12, 13, 14])];
        let shared = SharedPrefixBatch::new(&rows, 0).unwrap();
        let out = completion_log_probs(&model, &shared, 2, 0.7, true).unwrap();
        let got = to_host(out.log_probs).unwrap();
        let width = shared.completion_len();
        for (r, (prompt, completion)) in rows.iter().enumerate() {
            let whole = TokenBatch::from_sequences(&[[*prompt, *completion].concat()], 0, PadSide::Right).unwrap();
            let start = prompt.len() - 1;
            let want = to_host(token_log_probs(&model, &whole, start, 4, 0.7, false).unwrap().log_probs).unwrap();
            for j in 0..completion.len() {
                assert!((got[r * width + j] - want[j]).abs() < 1e-5, "row {r} token {j}");
            }
        }
        assert!(completion_log_probs(&model, &shared, 0, 1.0, false).is_err());
    }
}
