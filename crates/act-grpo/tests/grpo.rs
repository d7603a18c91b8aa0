//! GRPO trainer: resume, guard rails, accumulation, outputs, and learning a verifiable task from scratch.

mod common;

use act_core::RewardFn;
use act_grpo::{AdvantageMode, GrpoConfig, GrpoError, GrpoTrainer, KlEstimator, LossAggregation, ScheduleKind};
use act_model::{GenerationConfig, NoStop, Qwen3, Qwen3Config, generate};
use act_model::{ParamKind, WeightSource};
use burn::module::Module;
use burn::prelude::*;
use common::*;

fn config() -> GrpoConfig {
    GrpoConfig::default()
        .with_group_size(4)
        .with_prompts_per_step(4)
        .with_max_completion_tokens(2)
        .with_lr(3e-3)
        .with_total_steps(200)
        .with_seed(11)
}

fn trainer(config: GrpoConfig, seed: u64) -> GrpoTrainer {
    GrpoTrainer::new(config, tiny_model(seed), tokenizer(), template(), LargerNumber, grpo_samples()).unwrap()
}

/// Greedy accuracy of `model` on all 90 prompts.
fn greedy_accuracy(model: &Qwen3) -> f64 {
    let tok = tokenizer();
    let model = model.valid();
    let samples = grpo_samples();
    let prompts: Vec<Vec<u32>> = samples.iter().map(|s| tok.encode_prompt(&template(), &s.prompt).unwrap()).collect();
    let config = GenerationConfig::greedy(2).with_eos(vec![tok.im_end_id(), tok.end_of_text_id()]);
    let seeds = vec![0; prompts.len()];
    let out = generate(&model, &prompts, &seeds, &config, &NoStop).unwrap();
    let correct = samples
        .iter()
        .zip(out)
        .filter(|(s, g)| {
            let text = tok.decode(&g.tokens, true).unwrap();
            LargerNumber.score(&s.target, &text).unwrap().total == 1.0
        })
        .count();
    correct as f64 / samples.len() as f64
}

#[test]
fn resume_continues_bit_identically() {
    // Everything that carries state at once: mu = 2, accumulation, KL with a reference, warm-up and cosine.
    let config = config()
        .with_mu(2)
        .with_grad_accumulation_steps(2)
        .with_kl(KlEstimator::K3, 0.05)
        .with_clip(0.2, 0.28)
        .with_schedule(ScheduleKind::Cosine, 2)
        .with_total_steps(4);
    let mut straight = trainer(config.clone(), 1);
    straight.train(4).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let mut first = trainer(config.clone(), 1).with_output_dir(dir.path()).unwrap();
    first.train(2).unwrap();
    let checkpoint = dir.path().join("manual");
    first.save_checkpoint(&checkpoint).unwrap();
    drop(first);
    let device = Device::flex().autodiff();
    let mut resumed = GrpoTrainer::resume(
        &checkpoint,
        config.clone(),
        tokenizer(),
        template(),
        LargerNumber,
        grpo_samples(),
        &device,
    )
    .unwrap();
    assert_eq!(resumed.steps_done(), 2);
    resumed.train(2).unwrap();
    assert_eq!(resumed.updates_done(), straight.updates_done());
    assert!(parameters(straight.model()) == parameters(resumed.model()), "resumed parameters differ");

    // The checkpoint refuses a different run.
    let other = config.clone().with_lr(1e-4);
    let err = GrpoTrainer::resume(&checkpoint, other, tokenizer(), template(), LargerNumber, grpo_samples(), &device)
        .unwrap_err();
    assert!(err.to_string().contains("config differs"), "{err}");
    assert!(
        GrpoTrainer::resume(dir.path().join("missing"), config, tokenizer(), template(), LargerNumber, vec![], &device)
            .is_err()
    );
}

#[test]
fn checkpoints_and_metrics_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = trainer(config().with_checkpoint_every(2), 2).with_output_dir(dir.path()).unwrap();
    let metrics = t.train(3).unwrap();
    assert!(dir.path().join("checkpoint-000002/policy/model.bpk").exists());
    assert!(!dir.path().join("checkpoint-000003").exists());
    let lines = std::fs::read_to_string(dir.path().join("metrics.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 3);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    for key in [
        "reward",
        "reward_components",
        "zero_std_group_fraction",
        "clip_fraction",
        "kl",
        "entropy",
        "completion_length",
        "generation_seconds",
        "training_seconds",
        "generation_tokens_per_second",
    ] {
        assert!(first.get(key).is_some(), "metrics lack {key}");
    }
    let m = &metrics[0];
    assert!(m.entropy > 0.0 && m.entropy <= (16f64).ln() + 1e-3, "{}", m.entropy);
    assert!(m.completion_length.max <= 2 && m.completion_length.min >= 1);
    assert_eq!(m.updates_applied, 1);
    assert!(m.reward_components.contains_key("correct"));
    let tokenizer = act_grpo::load_tokenizer(dir.path().join("checkpoint-000002")).unwrap();
    assert_eq!(tokenizer.vocab_size(), 16);
}

#[test]
fn gradient_accumulation_matches_one_batch() {
    for aggregation in [LossAggregation::TokenMean, LossAggregation::SequenceMean] {
        let config = config().with_aggregation(aggregation).with_max_grad_norm(None);
        let mut one = trainer(config.clone(), 3);
        let mut four = trainer(config.with_grad_accumulation_steps(4), 3);
        one.train(2).unwrap();
        four.train(2).unwrap();
        for ((name, a), (_, b)) in
            act_model::hf_tensors(one.model()).into_iter().zip(act_model::hf_tensors(four.model()))
        {
            let a: Vec<f32> = a.try_to_vec().unwrap();
            let b: Vec<f32> = b.try_to_vec().unwrap();
            let diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            // Micro-batches encode different sets of shared prompts, so sums run in another order; after two Adam
            // steps that leaves ~3e-5, against updates of up to 2 x lr = 6e-3.
            assert!(diff < 1e-4, "{aggregation:?} {name}: {diff}");
        }
    }
}

#[test]
fn data_parallel_shards_match_one_shard() {
    let config = config().with_max_grad_norm(None).with_grad_accumulation_steps(2);
    let mut one = trainer(config.clone().with_data_parallel_shards(1), 3);
    let mut three = trainer(config.with_data_parallel_shards(3), 3);
    let (a, b) = (one.train(2).unwrap(), three.train(2).unwrap());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.reward.mean, y.reward.mean, "same samples");
        assert!((x.entropy - y.entropy).abs() < 1e-5, "{} vs {}", x.entropy, y.entropy);
        assert!((x.loss - y.loss).abs() < 1e-5, "{} vs {}", x.loss, y.loss);
    }
    assert_same_weights(one.model(), three.model());
}

/// Weights with NaN norms: every loss is NaN.
struct Broken(act_model::RandomInit);

impl WeightSource for Broken {
    fn take(&mut self, name: &str, shape: &[usize], kind: ParamKind) -> Result<Vec<f32>, act_model::ModelError> {
        let values = self.0.take(name, shape, kind)?;
        Ok(if name == "model.norm.weight" { vec![f32::NAN; values.len()] } else { values })
    }
}

#[test]
fn nonfinite_updates_are_skipped_then_stop_the_run() {
    let config = config().with_max_consecutive_nonfinite(2);
    let model_config = Qwen3Config::tiny(16);
    let mut source = Broken(act_model::RandomInit::new(0, 0.02));
    let model = Qwen3::from_source(&model_config, &mut source, &Device::flex().autodiff()).unwrap();
    let before = parameters(&model);
    let mut t = GrpoTrainer::new(config, model, tokenizer(), template(), LargerNumber, grpo_samples()).unwrap();
    let m = t.step().unwrap();
    assert_eq!((m.updates_applied, m.updates_skipped, m.skipped_total), (0, 1, 1));
    assert!(parameters(t.model()) == before, "a skipped update changed the weights");
    let err = t.step().unwrap_err();
    assert!(matches!(err, GrpoError::NonFinite { consecutive: 2, .. }), "{err}");
}

#[test]
fn bad_setups_are_errors() {
    let not_autodiff = Qwen3::init(&Qwen3Config::tiny(16), 0, &Device::flex()).unwrap();
    let err =
        GrpoTrainer::new(config(), not_autodiff, tokenizer(), template(), LargerNumber, grpo_samples()).unwrap_err();
    assert!(err.to_string().contains("autodiff"), "{err}");
    let small = Qwen3::init(&Qwen3Config::tiny(8), 0, &Device::flex().autodiff()).unwrap();
    assert!(GrpoTrainer::new(config(), small, tokenizer(), template(), LargerNumber, grpo_samples()).is_err());
    let mut empty = GrpoTrainer::new(config(), tiny_model(0), tokenizer(), template(), LargerNumber, vec![]).unwrap();
    assert!(empty.step().is_err());
    assert!(
        GrpoTrainer::new(config().with_group_size(0), tiny_model(0), tokenizer(), template(), LargerNumber, vec![])
            .is_err()
    );
}

/// The end-to-end check: a tiny model trained from scratch with GRPO goes from chance to >= 95% reward.
/// About 20 s on a 2-core machine (dev profile, dependencies optimised); it stops as soon as the last five steps
/// average >= 0.97 reward. At lr 3e-3 the policy turns greedy before it has explored every pair and plateaus near
/// 87% reward (all-wrong groups carry no gradient); at 1e-3 five model seeds converged in 183-340 steps.
#[test]
fn learns_the_larger_number_from_scratch() {
    const MAX_STEPS: usize = 800;
    let config = config()
        .with_group_size(8)
        .with_prompts_per_step(16)
        .with_advantage_mode(AdvantageMode::Group)
        .with_lr(1e-3)
        .with_schedule(ScheduleKind::Constant, 0)
        .with_total_steps(MAX_STEPS);
    let mut t = trainer(config, 5);
    let before = greedy_accuracy(t.model());
    let started = std::time::Instant::now();
    let mut history = Vec::new();
    for step in 0..MAX_STEPS {
        let m = t.step().unwrap();
        history.push(m.reward.mean);
        if step >= 10 && history[history.len() - 5..].iter().sum::<f64>() / 5.0 >= 0.97 {
            break;
        }
    }
    let after = greedy_accuracy(t.model());
    let recent = history[history.len().saturating_sub(5)..].iter().sum::<f64>() / history.len().min(5) as f64;
    eprintln!(
        "larger-number GRPO: {} steps in {:.1} s; sampled reward {:.3} -> {:.3} (last 5 steps); greedy accuracy {:.3} -> {:.3}",
        history.len(),
        started.elapsed().as_secs_f64(),
        history[0],
        recent,
        before,
        after
    );
    assert!(history[0] < 0.3, "a fresh model should be near chance, got {}", history[0]);
    // The criterion is the sampled reward; greedy decoding must agree on at least 90% of the pairs.
    assert!(after >= 0.9, "greedy accuracy {after}");
    assert!(recent >= 0.95, "sampled reward {recent}");
}

/// The bench's iteration as a report: 8 prompts x G = 8, up to 16 new tokens, time split printed.
/// `cargo test -p act-grpo --test grpo -- --ignored --nocapture iteration_time_split`.
#[test]
#[ignore = "a timing report, not a check"]
fn iteration_time_split() {
    for mu in [1, 2] {
        let config = config().with_group_size(8).with_prompts_per_step(8).with_max_completion_tokens(16).with_mu(mu);
        let mut t = trainer(config, 0);
        t.step().unwrap();
        let m = t.step().unwrap();
        eprintln!(
            "mu={mu}: generation {:.1} ms ({:.0} tok/s, mean length {:.1}), reward {:.2} ms, training {:.1} ms ({:.0} tok/s)",
            m.generation_seconds * 1e3,
            m.generation_tokens_per_second,
            m.completion_length.mean,
            m.reward_seconds * 1e3,
            m.training_seconds * 1e3,
            m.training_tokens_per_second
        );
    }
}
