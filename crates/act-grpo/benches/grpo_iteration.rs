//! One GRPO iteration (generation + scoring + update) on the tiny config: 8 prompts x G = 8, up to 16 new tokens.
//!
//! Besides criterion's timing, prints the generation / reward / training split of one step.

#[path = "../tests/common/mod.rs"]
mod common;

use act_grpo::{GrpoConfig, GrpoTrainer};
use criterion::{Criterion, criterion_group, criterion_main};

fn trainer(mu: usize) -> GrpoTrainer {
    let config = GrpoConfig::default()
        .with_group_size(8)
        .with_prompts_per_step(8)
        .with_max_completion_tokens(16)
        .with_mu(mu)
        .with_lr(1e-3)
        .with_total_steps(1_000_000);
    GrpoTrainer::new(
        config,
        common::tiny_model(0),
        common::tokenizer(),
        common::template(),
        common::LargerNumber,
        common::grpo_samples(),
    )
    .unwrap()
}

fn iteration(c: &mut Criterion) {
    for mu in [1, 2] {
        let mut t = trainer(mu);
        let m = t.step().unwrap();
        eprintln!(
            "mu={mu}: generation {:.1} ms ({:.0} tok/s, {} completions, mean length {:.1}), reward {:.2} ms, \
             training {:.1} ms ({:.0} tok/s)",
            m.generation_seconds * 1e3,
            m.generation_tokens_per_second,
            64,
            m.completion_length.mean,
            m.reward_seconds * 1e3,
            m.training_seconds * 1e3,
            m.training_tokens_per_second
        );
        c.bench_function(&format!("grpo_iteration_tiny_64x16_mu{mu}"), |b| b.iter(|| t.step().unwrap()));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = iteration
}
criterion_main!(benches);
