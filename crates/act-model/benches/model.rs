//! Training and generation throughput of the tiny and ~6M-parameter Qwen3 configs on the flex (CPU) backend.
//!
//! `benches/torch_reference.py` times the same configs in PyTorch eager (transformers) for comparison.
//! Shapes (keep in sync with the script): training batch 8 x 128 tokens, forward + backward + AdamW;
//! generation: prompts of 16 tokens, 16 new tokens, greedy, batch 1 and 16, with and without the KV cache.

use act_model::{GenerationConfig, NoStop, PadSide, Qwen3, Qwen3Config, TokenBatch, generate, masked_nll};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const TRAIN_BATCH: usize = 8;
const TRAIN_SEQ: usize = 128;
const PROMPT_LEN: usize = 16;
const NEW_TOKENS: usize = 16;

fn configs() -> Vec<(&'static str, Qwen3Config)> {
    vec![("tiny", Qwen3Config::tiny(512)), ("small-6m", Qwen3Config::small_6m(4096))]
}

fn token_rows(rows: usize, len: usize, vocab: usize, salt: usize) -> Vec<Vec<u32>> {
    (0..rows).map(|r| (0..len).map(|i| ((r * 7919 + i * 104_729 + salt) % vocab) as u32).collect()).collect()
}

fn bench_training(c: &mut Criterion) {
    let mut group = c.benchmark_group("train_step");
    group.sample_size(10);
    for (name, config) in configs() {
        let device = Device::flex().autodiff();
        // In an Option so the timed closure can move the model through `optim.step` without cloning it.
        let mut slot = Some(Qwen3::init(&config, 0, &device).unwrap());
        let mut optim = AdamWConfig::new().with_weight_decay(0.01).init();
        let rows = token_rows(TRAIN_BATCH, TRAIN_SEQ, config.vocab_size, 1);
        let batch = TokenBatch::from_sequences(&rows, 0, PadSide::Right).unwrap();
        let mask = vec![true; TRAIN_BATCH * TRAIN_SEQ];
        group.throughput(Throughput::Elements((TRAIN_BATCH * TRAIN_SEQ) as u64));
        group.bench_function(BenchmarkId::new(name, format!("{TRAIN_BATCH}x{TRAIN_SEQ}")), |b| {
            b.iter(|| {
                let model = slot.take().expect("model");
                let loss = masked_nll(&model, &batch, &mask, TRAIN_SEQ).unwrap();
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                let model = optim.step(1e-4, model, grads);
                // Force the step to finish inside the timed region.
                model.embed_tokens.weight.val().slice([0..1, 0..1]).into_data();
                slot = Some(model);
            })
        });
    }
    group.finish();
}

fn bench_training_parallel(c: &mut Criterion) {
    let mut group = c.benchmark_group("train_step_par");
    group.sample_size(10);
    for (name, config) in configs() {
        let device = Device::flex().autodiff();
        let mut slot = Some(Qwen3::init(&config, 0, &device).unwrap());
        let mut optim = AdamWConfig::new().with_weight_decay(0.01).init();
        let rows = token_rows(TRAIN_BATCH, TRAIN_SEQ, config.vocab_size, 1);
        let halves: Vec<TokenBatch> =
            rows.chunks(TRAIN_BATCH / 2).map(|r| TokenBatch::from_sequences(r, 0, PadSide::Right).unwrap()).collect();
        let mask = vec![true; TRAIN_BATCH / 2 * TRAIN_SEQ];
        group.throughput(Throughput::Elements((TRAIN_BATCH * TRAIN_SEQ) as u64));
        group.bench_function(BenchmarkId::new(name, format!("{TRAIN_BATCH}x{TRAIN_SEQ}")), |b| {
            b.iter(|| {
                let model = slot.take().expect("model");
                let run = |batch: &TokenBatch| {
                    let replica = model.clone().fork(&device);
                    let loss = masked_nll(&replica, batch, &mask, TRAIN_SEQ).unwrap();
                    GradientsParams::from_grads(loss.backward(), &replica)
                };
                let (g1, g2) = rayon::join(|| run(&halves[0]), || run(&halves[1]));
                let mut acc = burn::optim::GradientsAccumulator::new();
                acc.accumulate(&model, g1);
                acc.accumulate(&model, g2);
                let grads = acc.grads();
                let model = optim.step(1e-4, model, grads);
                model.embed_tokens.weight.val().slice([0..1, 0..1]).into_data();
                slot = Some(model);
            })
        });
    }
    group.finish();
}

fn bench_generation(c: &mut Criterion) {
    let mut group = c.benchmark_group("generate");
    group.sample_size(10);
    for (name, config) in configs() {
        let model = Qwen3::init(&config, 0, &Device::flex()).unwrap();
        for batch in [1usize, 16] {
            let prompts = token_rows(batch, PROMPT_LEN, config.vocab_size, 2);
            let seeds = vec![0; batch];
            group.throughput(Throughput::Elements((batch * NEW_TOKENS) as u64));
            for use_cache in [true, false] {
                let gen_config = GenerationConfig::greedy(NEW_TOKENS).with_cache(use_cache);
                let id = format!("{name}/b{batch}/{}", if use_cache { "cache" } else { "no-cache" });
                group.bench_function(id, |b| {
                    b.iter(|| generate(&model, &prompts, &seeds, &gen_config, &NoStop).unwrap())
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench_training, bench_training_parallel, bench_generation);
criterion_main!(benches);
