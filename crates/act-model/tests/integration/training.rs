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
