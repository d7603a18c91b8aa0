//! Data-parallel gradients on one device: shards of a batch run forward and backward at the same time, each on
//! a replica of the model that shares its weights, and the caller sums their gradients.

use burn::module::Module;
use burn::optim::GradientsParams;
use burn::prelude::*;
use rayon::prelude::*;

use crate::qwen3::Qwen3;

/// One shard's result: its gradients (`None` when the loss function asked for no backward pass) and whatever
/// else the loss function returned.
#[derive(Debug)]
pub struct ShardGradients<S> {
    /// Gradients of this shard's loss, keyed by the model's parameter ids.
    pub grads: Option<GradientsParams>,
    /// The loss function's second output (loss value, statistics).
    pub output: S,
}

/// Shards worth running at once on `device`: rayon's thread count on flex, 1 elsewhere (libtorch and CUDA
/// kernels already use the whole device, and a second graph there only adds memory).
pub fn default_shards(device: &Device) -> usize {
    match device.as_dispatch().clone().inner() {
        burn::backend::DispatchDevice::Flex(_) => rayon::current_num_threads().max(1),
        _ => 1,
    }
}

/// Runs `loss` on every shard at the same time, each on its own replica of `model`, and returns each shard's
/// gradients in shard order.
///
/// `loss` returns the loss tensor to differentiate (or `None` to skip the backward pass, for example when the
/// loss is not finite) and an output passed back unchanged. With a single shard the model itself is used, so
/// one shard behaves exactly like a plain `loss.backward()`. The first error in shard order is returned.
///
/// Why: on the flex (CPU) backend only matrix products spread over the cores; element-wise kernels (softmax,
/// SiLU, RMSNorm, the optimizer-free parts of backward) run on one thread, so a single autodiff graph keeps
/// about 1.2 of 2 cores busy. Two graphs at once keep both busy, which made a training step 1.6-2x faster here
/// (`cargo bench -p act-model --bench model`, `train_step/*/shards-1` against `shards-2`).
///
/// Each replica is a [`Module::fork`] of the model: its parameters keep their [`ParamId`](burn::module::ParamId)s
/// and share storage, but start fresh autodiff graphs, so the shards' backward passes do not touch each other's
/// graph. Gradients come back per shard, in shard order; summing them in that order makes the result
/// independent of thread scheduling.
///
/// ```
/// use act_model::{default_shards, shard_gradients};
/// use act_model::{PadSide, Qwen3, Qwen3Config, TokenBatch, masked_nll};
/// use burn::optim::GradientsAccumulator;
/// use burn::prelude::*;
///
/// let device = Device::flex().autodiff();
/// let model = Qwen3::init(&Qwen3Config::micro(64), 0, &device)?;
/// let shards: Vec<TokenBatch> = [[1u32, 2, 3, 4], [5, 6, 7, 8]]
///     .iter()
///     .map(|row| TokenBatch::from_sequences(&[row.to_vec()], 0, PadSide::Right))
///     .collect::<Result<_, _>>()?;
/// assert!(default_shards(&device) >= 1);
/// let parts = shard_gradients(&model, &shards, |replica, batch| {
///     let loss = masked_nll(replica, batch, &[true; 4], 4)?;
///     let value = loss.clone().into_scalar::<f32>();
///     Ok::<_, act_model::ModelError>((Some(loss), value))
/// })?;
/// let mut sum = GradientsAccumulator::new();
/// for part in parts {
///     sum.accumulate(&model, part.grads.expect("finite loss"));
/// }
/// let _grads = sum.grads(); // hand these to the optimizer
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn shard_gradients<T, S, E, F>(model: &Qwen3, shards: &[T], loss: F) -> Result<Vec<ShardGradients<S>>, E>
where
    T: Sync,
    S: Send,
    E: Send,
    F: Fn(&Qwen3, &T) -> Result<(Option<Tensor<1>>, S), E> + Sync,
{
    let run = |replica: &Qwen3, shard: &T| -> Result<ShardGradients<S>, E> {
        let (tensor, output) = loss(replica, shard)?;
        let grads = tensor.map(|t| GradientsParams::from_grads(t.backward(), replica));
        Ok(ShardGradients { grads, output })
    };
    if let [only] = shards {
        return Ok(vec![run(model, only)?]);
    }
    let device = model.device();
    shards.par_iter().map(|shard| run(&model.clone().fork(&device), shard)).collect::<Vec<_>>().into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{PadSide, TokenBatch};
    use crate::config::Qwen3Config;
    use crate::error::ModelError;
    use crate::logprobs::masked_nll;
    use burn::optim::GradientsAccumulator;

    fn rows() -> Vec<Vec<u32>> {
        (0..4).map(|r| (0..6 + r).map(|i| ((r * 13 + i * 7) % 60) as u32 + 1).collect()).collect()
    }

    /// Flattened gradients of the embedding and each layer's q and down projections: enough to compare.
    fn flat(model: &Qwen3, grads: GradientsParams) -> Vec<f32> {
        let mut ids = vec![model.embed_tokens.weight.id];
        for layer in &model.layers {
            ids.extend([layer.self_attn.q_proj.weight.id, layer.mlp.down_proj.weight.id]);
        }
        ids.into_iter()
            .flat_map(|id| grads.get::<2>(id).expect("gradient").into_data().try_into_vec::<f32>().unwrap())
            .collect()
    }

    fn token_sum_loss(model: &Qwen3, batch: &TokenBatch, total: usize) -> Result<Tensor<1>, ModelError> {
        let mask = vec![true; batch.batch() * batch.seq()];
        let count = batch.batch() * (batch.seq() - 1);
        Ok(masked_nll(model, batch, &mask, 3)?.mul_scalar(count as f64 / total as f64))
    }

    #[test]
    fn shard_gradients_sum_to_the_whole_batch_gradient() {
        let device = Device::flex().autodiff();
        let model = Qwen3::init(&Qwen3Config::micro(64), 5, &device).unwrap();
        let rows = rows();
        // Equal-length shards so the whole-batch loss (mean over its tokens) is the tokens-weighted shard sum.
        let rows: Vec<Vec<u32>> = rows
            .into_iter()
            .map(|mut r| {
                r.truncate(6);
                r
            })
            .collect();
        let whole = TokenBatch::from_sequences(&rows, 0, PadSide::Right).unwrap();
        let total = whole.batch() * (whole.seq() - 1);
        let reference = GradientsParams::from_grads(token_sum_loss(&model, &whole, total).unwrap().backward(), &model);
        let reference = flat(&model, reference);

        let shards: Vec<TokenBatch> =
            rows.chunks(2).map(|c| TokenBatch::from_sequences(c, 0, PadSide::Right).unwrap()).collect();
        let parts =
            shard_gradients(&model, &shards, |m, b| Ok::<_, ModelError>((Some(token_sum_loss(m, b, total)?), ())))
                .unwrap();
        let mut sum = GradientsAccumulator::new();
        for part in parts {
            sum.accumulate(&model, part.grads.unwrap());
        }
        let sharded = flat(&model, sum.grads());
        assert_eq!(sharded.len(), reference.len());
        let scale = reference.iter().fold(0f32, |m, v| m.max(v.abs()));
        let diff = sharded.iter().zip(&reference).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(scale > 0.0 && diff <= 1e-5 * scale.max(1.0), "max diff {diff} (scale {scale})");
    }

    #[test]
    fn shard_gradients_are_deterministic_and_in_shard_order() {
        let device = Device::flex().autodiff();
        let model = Qwen3::init(&Qwen3Config::micro(64), 9, &device).unwrap();
        let shards: Vec<TokenBatch> =
            rows().chunks(1).map(|c| TokenBatch::from_sequences(c, 0, PadSide::Right).unwrap()).collect();
        let run = || {
            shard_gradients(&model, &shards, |m, b| {
                let loss = token_sum_loss(m, b, 10)?;
                let value = loss.clone().into_scalar::<f32>();
                Ok::<_, ModelError>((Some(loss), (b.seq(), value)))
            })
            .unwrap()
        };
        let (a, b) = (run(), run());
        // Outputs come back in shard order (row r has 6 + r tokens).
        assert_eq!(a.iter().map(|p| p.output.0).collect::<Vec<_>>(), vec![6, 7, 8, 9]);
        for (x, y) in a.into_iter().zip(b) {
            assert_eq!(x.output.1.to_bits(), y.output.1.to_bits());
            assert_eq!(flat(&model, x.grads.unwrap()), flat(&model, y.grads.unwrap()));
        }
    }

    #[test]
    fn shard_gradients_skip_backward_and_report_the_first_error() {
        let device = Device::flex().autodiff();
        let model = Qwen3::init(&Qwen3Config::micro(64), 1, &device).unwrap();
        let shards = [0usize, 1, 2];
        let skipped = shard_gradients(&model, &shards, |_, &i| Ok::<_, String>((None, i))).unwrap();
        assert!(skipped.iter().all(|p| p.grads.is_none()));
        assert_eq!(skipped.iter().map(|p| p.output).collect::<Vec<_>>(), vec![0, 1, 2]);
        let failed =
            shard_gradients(&model, &shards, |_, &i| if i >= 1 { Err(format!("shard {i}")) } else { Ok((None, i)) });
        assert_eq!(failed.unwrap_err(), "shard 1");
    }

    #[test]
    fn default_shards_follow_the_backend() {
        assert_eq!(default_shards(&Device::flex()), rayon::current_num_threads());
        assert_eq!(default_shards(&Device::flex().autodiff()), rayon::current_num_threads());
    }
}
