//! SFT trainer: the completion loss falls on the synthetic task, validation is reported, resume is exact.

mod common;

use act_grpo::{ScheduleKind, SftConfig, SftTrainer};
use burn::prelude::*;
use common::*;

fn config() -> SftConfig {
    SftConfig::default().with_batch_size(16).with_lr(3e-3).with_total_steps(40).with_seed(4)
}

fn split() -> (Vec<act_core::SftSample>, Vec<act_core::SftSample>) {
    let mut all = sft_samples();
    let validation = all.split_off(80);
    (all, validation)
}

#[test]
fn loss_falls_and_validation_is_reported() {
    let (train, validation) = split();
    let mut t =
        SftTrainer::new(config().with_eval_every(40), tiny_model(1), tokenizer(), template(), train, validation)
            .unwrap();
    let initial = t.validation_loss().unwrap().unwrap();
    // A fresh model is close to uniform over the 16 tokens.
    assert!((initial - (16f64).ln()).abs() < 0.3, "{initial}");
    let metrics = t.train(40).unwrap();
    let last = metrics.last().unwrap();
    let validation = last.validation_loss.expect("evaluated at step 40");
    assert!(metrics[0].loss > 2.0 && last.loss < 1.0, "{} -> {}", metrics[0].loss, last.loss);
    assert!(validation < initial, "{initial} -> {validation}");
    assert!(metrics.iter().all(|m| !m.skipped && m.grad_norm.is_finite()));
    // Two tokens per completion: the digit and <|im_end|>.
    assert_eq!(metrics[0].completion_tokens, 32);
}

#[test]
fn data_parallel_shards_match_one_shard() {
    let (train, _) = split();
    let run = |shards| {
        let config = config().with_grad_accumulation_steps(2).with_data_parallel_shards(shards);
        let mut t = SftTrainer::new(config, tiny_model(1), tokenizer(), template(), train.clone(), vec![]).unwrap();
        let losses: Vec<f64> = t.train(3).unwrap().iter().map(|m| m.loss).collect();
        (losses, t)
    };
    let (one, one_trainer) = run(1);
    for shards in [2, 3] {
        let (losses, trainer) = run(shards);
        for (a, b) in one.iter().zip(&losses) {
            assert!((a - b).abs() < 1e-5, "{shards} shards: {a} vs {b}");
        }
        assert_same_weights(one_trainer.model(), trainer.model());
    }
}

#[test]
fn resume_continues_bit_identically() {
    let config = config().with_grad_accumulation_steps(2).with_schedule(ScheduleKind::Cosine, 1).with_total_steps(6);
    let (train, validation) = split();
    let mut straight =
        SftTrainer::new(config.clone(), tiny_model(2), tokenizer(), template(), train.clone(), validation.clone())
            .unwrap();
    straight.train(6).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut first =
        SftTrainer::new(config.clone(), tiny_model(2), tokenizer(), template(), train.clone(), validation.clone())
            .unwrap()
            .with_output_dir(dir.path())
            .unwrap();
    first.train(3).unwrap();
    first.save_checkpoint(dir.path().join("ckpt")).unwrap();
    let device = Device::flex().autodiff();
    let mut resumed =
        SftTrainer::resume(dir.path().join("ckpt"), config, tokenizer(), template(), train, validation, &device)
            .unwrap();
    resumed.train(3).unwrap();
    assert!(parameters(straight.model()) == parameters(resumed.model()), "resumed parameters differ");
}

/// Conversation-style samples: step t + 1's prompt repeats step t's prompt and answer as earlier chat turns.
fn conversation_samples() -> Vec<act_core::SftSample> {
    let mut out = Vec::new();
    for episode in 0..6u32 {
        let mut history = String::new();
        for turn in 0..3u32 {
            let (a, b) = ((episode + turn) % 10, (episode * 3 + turn + 1) % 10);
            let prompt = format!("{history}{a} {b}");
            let completion = a.max(b).to_string();
            history = format!("{prompt}<|im_end|>\n<|im_start|>assistant\n{completion}<|im_end|>\n<|im_start|>user\n");
            out.push(act_core::SftSample { id: format!("{episode}#{turn}"), prompt, completion });
        }
    }
    out
}

#[test]
fn packed_episodes_train_exactly_like_their_steps() {
    let samples = conversation_samples();
    let run = |pack: bool, batch_size: usize| {
        let config = SftConfig::default()
            .with_batch_size(batch_size)
            // Adam's first update is about lr x sign(gradient): a small lr keeps float-order noise in the
            // gradients of near-zero entries below the weight tolerance.
            .with_lr(1e-4)
            .with_total_steps(1)
            .with_seed(4)
            .with_prefix_packing(pack);
        let mut t = SftTrainer::new(config, tiny_model(1), tokenizer(), template(), samples.clone(), vec![]).unwrap();
        let metrics = t.train(1).unwrap().remove(0);
        (metrics, t)
    };
    let (alone, alone_trainer) = run(false, 18);
    // Six episodes of three steps: six packed sequences hold all eighteen samples.
    let (packed, packed_trainer) = run(true, 6);
    assert_eq!((alone.samples, packed.samples), (18, 18));
    assert_eq!(alone.completion_tokens, packed.completion_tokens);
    assert!((alone.loss - packed.loss).abs() < 1e-5, "{} vs {}", alone.loss, packed.loss);
    assert_same_weights(alone_trainer.model(), packed_trainer.model());
}
