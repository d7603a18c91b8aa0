//! Half-precision training with f32 master weights: it learns, keeps updates that half precision would round away,
//! hands out f32 weights and resumes bit-identically.

mod common;

use act_grpo::{ComputeDtype, GrpoConfig, GrpoTrainer, KlEstimator, ScheduleKind, SftConfig, SftTrainer};
use act_model::Qwen3;
use burn::prelude::*;
use burn::tensor::DType;
use common::*;

fn sft_config() -> SftConfig {
    SftConfig::default().with_batch_size(16).with_lr(3e-3).with_total_steps(40).with_seed(4)
}

fn weights(model: &Qwen3) -> Vec<f32> {
    act_model::hf_tensors(model).into_iter().flat_map(|(_, d)| d.try_to_vec::<f32>().unwrap()).collect()
}

/// The fraction of weights that differ between `a` and `b`.
fn changed_fraction(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).filter(|(x, y)| x != y).count() as f64 / a.len() as f64
}

#[test]
fn bf16_with_master_weights_learns_the_task_and_hands_out_f32_weights() {
    let config = sft_config().with_compute_dtype(ComputeDtype::Bf16);
    let mut t = SftTrainer::new(config, tiny_model(1), tokenizer(), template(), sft_samples(), vec![]).unwrap();
    assert_eq!(t.model().float_dtype(), DType::BF16);
    let metrics = t.train(40).unwrap();
    let (first, last) = (metrics[0].loss, metrics.last().unwrap().loss);
    // The f32 run of the same config (tests/sft.rs) goes from above 2 to below 1.
    assert!(first > 2.0 && last < 1.0, "{first} -> {last}");
    assert!(metrics.iter().all(|m| !m.skipped && m.grad_norm.is_finite()));
    let working = weights(t.model());
    let trained = t.into_model();
    assert_eq!(trained.float_dtype(), DType::F32);
    let master = weights(&trained);
    // The working copy is the master rounded to bf16, and the master holds more than bf16 can.
    for (w, m) in working.iter().zip(&master) {
        assert_eq!(*w, burn::tensor::bf16::from_f32(*m).to_f32());
    }
    assert!(working != master, "the master weights carry f32 precision");
}

#[test]
fn master_weights_keep_updates_that_bf16_weights_round_away() {
    // AdamW moves each weight by about lr per step: 1e-6 is far below half a bf16 step of weights near 0.02
    // (about 6e-5), so bf16 weights updated in place do not move, and f32 master weights do.
    let config = sft_config().with_lr(1e-6).with_total_steps(3);
    let start = tiny_model(5);
    let initial = weights(&start.clone().with_float_dtype(DType::F32).unwrap());
    let bf16_start = start.clone().with_float_dtype(DType::BF16).unwrap();
    let rounded = weights(&bf16_start);

    let mut plain =
        SftTrainer::new(config.clone(), bf16_start, tokenizer(), template(), sft_samples(), vec![]).unwrap();
    plain.train(3).unwrap();
    let plain = weights(&plain.into_model());

    let mixed = config.with_compute_dtype(ComputeDtype::Bf16);
    let mut mixed = SftTrainer::new(mixed, start, tokenizer(), template(), sft_samples(), vec![]).unwrap();
    mixed.train(3).unwrap();
    let master = weights(&mixed.into_model());

    let plain_moved = changed_fraction(&rounded, &plain);
    let master_moved = changed_fraction(&initial, &master);
    assert!(plain_moved < 0.05, "bf16 weights moved: {plain_moved}");
    assert!(master_moved > 0.9, "master weights moved: {master_moved}");
}

#[test]
fn sft_with_master_weights_resumes_bit_identically() {
    let config = sft_config()
        .with_grad_accumulation_steps(2)
        .with_schedule(ScheduleKind::Cosine, 1)
        .with_total_steps(6)
        .with_compute_dtype(ComputeDtype::Bf16);
    let train = sft_samples();
    let mut straight =
        SftTrainer::new(config.clone(), tiny_model(2), tokenizer(), template(), train.clone(), vec![]).unwrap();
    straight.train(6).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut first =
        SftTrainer::new(config.clone(), tiny_model(2), tokenizer(), template(), train.clone(), vec![]).unwrap();
    first.train(3).unwrap();
    first.save_checkpoint(dir.path().join("ckpt")).unwrap();
    drop(first);
    let device = Device::flex().autodiff();
    let mut resumed =
        SftTrainer::resume(dir.path().join("ckpt"), config, tokenizer(), template(), train, vec![], &device).unwrap();
    assert_eq!(resumed.model().float_dtype(), DType::BF16);
    resumed.train(3).unwrap();
    assert!(parameters(straight.model()) == parameters(resumed.model()), "working copies differ");
    assert!(parameters(&straight.into_model()) == parameters(&resumed.into_model()), "master weights differ");
}

#[test]
fn grpo_with_master_weights_and_a_reference_resumes_bit_identically() {
    let config = GrpoConfig::default()
        .with_group_size(4)
        .with_prompts_per_step(4)
        .with_max_completion_tokens(2)
        .with_lr(3e-3)
        .with_seed(11)
        .with_mu(2)
        .with_kl(KlEstimator::K3, 0.05)
        .with_total_steps(4)
        .with_compute_dtype(ComputeDtype::Bf16);
    let trainer = |config: GrpoConfig| {
        GrpoTrainer::new(config, tiny_model(1), tokenizer(), template(), LargerNumber, grpo_samples()).unwrap()
    };
    let mut straight = trainer(config.clone());
    let metrics = straight.train(4).unwrap();
    assert!(metrics.iter().all(|m| m.kl.is_finite()));
    let dir = tempfile::tempdir().unwrap();
    let mut first = trainer(config.clone());
    first.train(2).unwrap();
    first.save_checkpoint(dir.path().join("ckpt")).unwrap();
    drop(first);
    let device = Device::flex().autodiff();
    let mut resumed = GrpoTrainer::resume(
        dir.path().join("ckpt"),
        config,
        tokenizer(),
        template(),
        LargerNumber,
        grpo_samples(),
        &device,
    )
    .unwrap();
    resumed.train(2).unwrap();
    assert!(parameters(&straight.into_model()) == parameters(&resumed.into_model()), "master weights differ");
}

#[test]
fn a_model_with_lora_adapters_is_refused_in_half_precision() {
    let model = act_model::lora::apply_lora(tiny_model(1), &act_model::lora::LoraConfig::new(2, 4.0), 0).unwrap();
    let config = sft_config().with_compute_dtype(ComputeDtype::F16);
    let err = SftTrainer::new(config, model, tokenizer(), template(), sft_samples(), vec![]).unwrap_err();
    assert!(err.to_string().contains("full fine-tuning"), "{err}");
}
