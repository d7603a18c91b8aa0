//! Saving and loading: HF safetensors (single, sharded, tied) and training checkpoints with AdamW state.

use crate::common::{device, logits_of, max_abs_diff};
use act_model::{PadSide, Qwen3, Qwen3Config, TokenBatch, TrainingCheckpoint, load_hf, masked_nll, save_hf};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;

#[test]
fn hf_round_trip_single_sharded_tied_and_untied() {
    for (tied, shard) in [(false, None), (true, None), (false, Some(20_000)), (true, Some(1))] {
        let config = Qwen3Config::tiny(50).with_tie_word_embeddings(tied);
        let model = Qwen3::init(&config, 11, &device()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        save_hf(&model, dir.path(), shard).unwrap();
        if shard.is_some() {
            assert!(dir.path().join("model.safetensors.index.json").exists());
            assert!(!dir.path().join("model.safetensors").exists());
        }
        let (back, report) = load_hf(dir.path(), &device()).unwrap();
        assert!(report.unused.is_empty());
        assert_eq!(back.config, config);
        assert_eq!(back.lm_head.is_some(), !tied);
        let ids = [1, 7, 3, 44, 2];
        assert_eq!(max_abs_diff(&logits_of(&model, &ids), &logits_of(&back, &ids)), 0.0);
    }
}

#[test]
fn broken_checkpoints_are_clear_errors() {
    let model = Qwen3::init(&Qwen3Config::tiny(50), 1, &device()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(load_hf(dir.path(), &device()).is_err(), "empty directory");
    save_hf(&model, dir.path(), None).unwrap();
    // A config whose shapes disagree with the weights.
    let mut config = model.config.clone();
    config.intermediate_size = 96;
    std::fs::write(dir.path().join("config.json"), config.to_hf_json().to_string()).unwrap();
    let err = load_hf(dir.path(), &device()).unwrap_err().to_string();
    assert!(err.contains("shape"), "{err}");
    // An untied config over tied weights: the head is missing.
    let mut config = model.config.clone();
    config.tie_word_embeddings = false;
    std::fs::write(dir.path().join("config.json"), config.to_hf_json().to_string()).unwrap();
    let err = load_hf(dir.path(), &device()).unwrap_err().to_string();
    assert!(err.contains("lm_head.weight"), "{err}");
    std::fs::write(dir.path().join("model.safetensors"), b"not safetensors").unwrap();
    assert!(load_hf(dir.path(), &device()).is_err());
}

fn train_step(model: Qwen3, optim: &mut burn::optim::ModuleOptimizer) -> (Qwen3, f32) {
    let batch = TokenBatch::from_sequences(&[vec![3, 9, 12, 5], vec![4, 4, 2]], 0, PadSide::Right).unwrap();
    let mask = batch.mask().to_vec();
    let loss = masked_nll(&model, &batch, &mask, 8).unwrap();
    let value = loss.clone().into_scalar::<f32>();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    (optim.step(1e-2, model, grads), value)
}

#[test]
fn training_checkpoint_resumes_bit_identically() {
    let device = Device::flex().autodiff();
    let mut model = Qwen3::init(&Qwen3Config::tiny(32), 2, &device).unwrap();
    let mut optim = AdamWConfig::new().init();
    for _ in 0..2 {
        model = train_step(model, &mut optim).0;
    }
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("step-2");
    let state = serde_json::json!({"step": 2});
    TrainingCheckpoint::save(&ckpt, &model, &optim, &state).unwrap();
    // Saving again replaces the checkpoint in place.
    TrainingCheckpoint::save(&ckpt, &model, &optim, &state).unwrap();

    let loaded = TrainingCheckpoint::load(&ckpt, &device).unwrap();
    assert_eq!(loaded.trainer_state, state);
    let mut resumed_optim = loaded.restore_optimizer(AdamWConfig::new().init()).unwrap();
    let (resumed, loss_resumed) = train_step(loaded.model, &mut resumed_optim);
    let (continued, loss_continued) = train_step(model, &mut optim);
    assert_eq!(loss_resumed, loss_continued);
    let ids = [1, 2, 3, 4];
    let a = logits_of(&resumed.valid(), &ids);
    let b = logits_of(&continued.valid(), &ids);
    assert_eq!(max_abs_diff(&a, &b), 0.0);
    // A fresh optimizer (no moments) takes a different step: the saved state mattered.
    let fresh = TrainingCheckpoint::load(&ckpt, &device).unwrap();
    let (other, _) = train_step(fresh.model, &mut AdamWConfig::new().init());
    assert!(max_abs_diff(&logits_of(&other.valid(), &ids), &b) > 0.0);
}
