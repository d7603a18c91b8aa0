//! Training forward, chunked log-probs and an AdamW step on the autodiff device.

use act_model::{PadSide, Qwen3, Qwen3Config, TokenBatch, masked_nll, next_token_log_probs};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;

fn batch() -> TokenBatch {
    TokenBatch::from_sequences(&[vec![3, 9, 12, 5, 7, 1], vec![4, 4, 2], vec![8, 1, 60, 33, 2]], 0, PadSide::Right)
        .unwrap()
}

#[test]
fn chunked_log_probs_equal_log_softmax_of_the_logits() {
    let model = Qwen3::init(&Qwen3Config::tiny(64), 3, &Device::flex()).unwrap();
    let batch = batch();
    let (b, s) = (batch.batch(), batch.seq());
    let logits: Vec<f32> = log_softmax(model.forward(&batch), 2).into_data().try_into_vec().unwrap();
    for chunk in [1, 2, 5, 64] {
        let lp: Vec<f32> = next_token_log_probs(&model, &batch, chunk).unwrap().into_data().try_into_vec().unwrap();
        assert_eq!(lp.len(), b * (s - 1));
        for row in 0..b {
            for i in 0..s - 1 {
                let target = batch.ids()[row * s + i + 1] as usize;
                let want = logits[(row * s + i) * 64 + target];
                let got = lp[row * (s - 1) + i];
                assert!((want - got).abs() < 1e-5, "chunk {chunk} ({row},{i}): {got} vs {want}");
            }
        }
    }
    assert!(next_token_log_probs(&model, &batch, 0).is_err());
}

#[test]
fn adamw_steps_reduce_the_completion_loss() {
    let device = Device::flex().autodiff();
    let mut model = Qwen3::init(&Qwen3Config::tiny(64), 5, &device).unwrap();
    let batch = batch();
    // Completion = the last two real tokens of each row.
    let mask: Vec<bool> = batch
        .mask()
        .chunks(batch.seq())
        .flat_map(|row| {
            let n = row.iter().filter(|&&m| m).count();
            (0..row.len()).map(move |i| i + 2 >= n && i < n)
        })
        .collect();
    let mut optim = AdamWConfig::new().with_weight_decay(0.0).init();
    let mut losses = Vec::new();
    for _ in 0..15 {
        let loss = masked_nll(&model, &batch, &mask, 4).unwrap();
        losses.push(loss.clone().into_scalar::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(3e-3, model, grads);
    }
    assert!(losses[14] < losses[0] * 0.5, "{losses:?}");
    // An all-false mask selects nothing to learn from.
    assert!(masked_nll(&model, &batch, &vec![false; mask.len()], 4).is_err());
}

#[test]
fn shared_prompt_passes_equal_full_sequences_in_values_and_gradients() {
    use act_model::SharedPrefixBatch;
    let device = Device::flex().autodiff();
    let mut config = Qwen3Config::tiny(64);
    config.initializer_range = 0.3;
    let model = Qwen3::init(&config, 5, &device).unwrap();
    let (long, short) = (vec![3u32, 9, 12, 5, 7, 1, 40], vec![4u32, 4]);
    // Two groups of different prompt lengths, completions of different lengths, one of a single token.
    let rows: Vec<(&[u32], &[u32])> =
        vec![(&long, &[8, 2, 9]), (&long, &[8]), (&short, &[5, 6, 7, 30]), (&long, &[11, 12]), (&short, &[1, 2])];
    let shared = SharedPrefixBatch::new(&rows, 0).unwrap();
    assert_eq!((shared.rows(), shared.distinct_prompts(), shared.completion_len()), (5, 2, 4));
    let hidden = model.completion_hidden_states(&shared);
    let full: Vec<Vec<u32>> = rows.iter().map(|(p, c)| [*p, *c].concat()).collect();
    let batch = TokenBatch::from_sequences(&full, 0, PadSide::Right).unwrap();
    let reference = model.hidden_states(&batch);
    let width = shared.completion_len();
    let mut picked_shared = Vec::new();
    let mut picked_full = Vec::new();
    for (r, (p, c)) in rows.iter().enumerate() {
        for j in 0..c.len() {
            // Completion token j is predicted at full-sequence position len(prompt) + j - 1.
            picked_shared.push(hidden.clone().narrow(0, r, 1).narrow(1, j, 1).reshape([-1]));
            picked_full.push(reference.clone().narrow(0, r, 1).narrow(1, p.len() + j - 1, 1).reshape([-1]));
        }
        assert!(c.len() <= width);
    }
    let (a, b) = (Tensor::cat(picked_shared, 0), Tensor::cat(picked_full, 0));
    let diff: f32 = (a.clone() - b.clone()).abs().max().into_scalar();
    assert!(diff < 1e-4, "hidden states differ by {diff}");
    // The same scalar of each gives the same gradients: the shared prompt pass sums its completions' gradients.
    let weights = Tensor::<1>::from_data(
        TensorData::new((0..a.dims()[0]).map(|i| ((i % 7) as f32 - 3.0) * 0.1).collect::<Vec<_>>(), [a.dims()[0]]),
        &device,
    );
    let grads_a = GradientsParams::from_grads((a * weights.clone()).sum().backward(), &model);
    let grads_b = GradientsParams::from_grads((b * weights).sum().backward(), &model);
    let embed = model.embed_tokens.weight.id;
    let (ga, gb) = (grads_a.get::<2>(embed).unwrap(), grads_b.get::<2>(embed).unwrap());
    let scale: f32 = gb.clone().abs().max().into_scalar();
    let gdiff: f32 = (ga - gb).abs().max().into_scalar();
    assert!(scale > 1e-3 && gdiff < 1e-4 * scale.max(1.0), "embedding gradients differ by {gdiff} (scale {scale})");
}

/// Gradient checkpointing changes what backward keeps, not what it computes: the same loss and gradients.
#[test]
fn checkpointed_gradients_equal_plain_gradients() {
    let plain_device = act_model::BackendKind::Flex.training_device().unwrap();
    let checkpointed_device = act_model::BackendKind::Flex.checkpointed_training_device().unwrap();
    assert!(checkpointed_device.gradient_checkpointing_strategy().is_some());
    let gradients = |device: &Device| -> (f32, Vec<f32>) {
        let model = Qwen3::init(&Qwen3Config::tiny(64), 8, device).unwrap();
        let batch = batch();
        let mask = batch.mask().to_vec();
        let loss = masked_nll(&model, &batch, &mask, 4).unwrap();
        let value = loss.clone().into_scalar::<f32>();
        let grads = loss.backward();
        let layer = &model.layers[1];
        let mut flat = Vec::new();
        for weight in [&model.embed_tokens.weight, &layer.self_attn.q_proj.weight, &layer.mlp.down_proj.weight] {
            let grad = weight.val().grad(&grads).expect("a gradient");
            flat.extend(grad.into_data().convert::<f32>().try_into_vec::<f32>().unwrap());
        }
        (value, flat)
    };
    let (plain_loss, plain) = gradients(&plain_device);
    let (checkpointed_loss, checkpointed) = gradients(&checkpointed_device);
    assert!((plain_loss - checkpointed_loss).abs() < 1e-6, "{plain_loss} vs {checkpointed_loss}");
    let diff = plain.iter().zip(&checkpointed).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(plain.iter().any(|g| *g != 0.0));
    assert!(diff < 1e-5, "largest gradient difference {diff}");
}
