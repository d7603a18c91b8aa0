//! Training and generation throughput of the tiny and ~6M-parameter Qwen3 configs on the flex (CPU) backend.
//!
//! `benches/torch_reference.py` times the same configs in PyTorch eager (transformers) for comparison.
//! Shapes (keep in sync with the script): training batch 8 x 128 tokens, forward + backward + AdamW, as one
//! graph (`shards-1`) or as two concurrent shards of 4 rows (`shards-2`, what the act-grpo trainers do on flex);
//! generation: prompts of 16 tokens, 16 new tokens, greedy, batch 1 and 16, with and without the KV cache.
//! `encode/...`: the SFT trainer's setup, encoding every state's prompt of 20 multi-turn episodes of 30 turns (each
//! prompt extends the last), one example at a time in parallel (`each`) against `ChatTokenizer::encode_chats`.

use act_model::shard_gradients;
use act_model::{
    ChatTemplate, ChatTokenizer, GenerationConfig, NoStop, PadSide, Qwen3, Qwen3Config, TokenBatch, generate,
    masked_nll,
};
use burn::optim::{AdamWConfig, GradientsAccumulator};
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
        let rows = token_rows(TRAIN_BATCH, TRAIN_SEQ, config.vocab_size, 1);
        // One shard is a plain forward + backward; two run as concurrent shards (what the trainers do on flex).
        for shards in [1, 2] {
            // In an Option so the timed closure can move the model through `optim.step` without cloning it.
            let mut slot = Some(Qwen3::init(&config, 0, &device).unwrap());
            let mut optim = AdamWConfig::new().with_weight_decay(0.01).init();
            let parts: Vec<TokenBatch> = rows
                .chunks(TRAIN_BATCH / shards)
                .map(|r| TokenBatch::from_sequences(r, 0, PadSide::Right).unwrap())
                .collect();
            let mask = vec![true; TRAIN_BATCH / shards * TRAIN_SEQ];
            group.throughput(Throughput::Elements((TRAIN_BATCH * TRAIN_SEQ) as u64));
            let id = BenchmarkId::new(name, format!("{TRAIN_BATCH}x{TRAIN_SEQ}/shards-{shards}"));
            group.bench_function(id, |b| {
                b.iter(|| {
                    let model = slot.take().expect("model");
                    let results = shard_gradients(&model, &parts, |replica, batch| {
                        let loss = masked_nll(replica, batch, &mask, TRAIN_SEQ)?.div_scalar(shards as f64);
                        Ok::<_, act_model::ModelError>((Some(loss), ()))
                    })
                    .unwrap();
                    let mut sum = GradientsAccumulator::new();
                    for part in results {
                        sum.accumulate(&model, part.grads.expect("gradients"));
                    }
                    let model = optim.step(1e-4, model, sum.grads());
                    // Force the step to finish inside the timed region.
                    model.embed_tokens.weight.val().slice([0..1, 0..1]).into_data();
                    slot = Some(model);
                })
            });
        }
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

fn bench_encoding(c: &mut Criterion) {
    use rayon::prelude::*;
    // Episodes as the conversation prompts write them: observation turns and action turns in chat markup.
    let mut chats: Vec<(String, String)> = Vec::new();
    for episode in 0..20 {
        let mut prompt = format!("task: put a clean mug {episode} in shelf\nYou are in the middle of a room.");
        for turn in 0..30 {
            let action = format!("<action>go to cabinet {}</action>", (episode + turn) % 11 + 1);
            chats.push((prompt.clone(), action.clone()));
            prompt.push_str(&format!(
                "{action}<|im_end|>\n<|im_start|>user\ntask: put a clean mug {episode} in shelf\nYou arrive at loc \
                 {turn}. On the cabinet {}, you see a mug {}, and a plate {}.",
                turn % 11,
                turn % 3,
                episode % 4
            ));
        }
    }
    let tokenizer =
        ChatTokenizer::train_bpe(chats.iter().flat_map(|(p, c)| [p.clone(), c.clone()]), 512).expect("tokenizer");
    let template = ChatTemplate::default();
    let pairs: Vec<(&str, &str)> = chats.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let mut group = c.benchmark_group("encode");
    group.sample_size(10);
    group.throughput(Throughput::Elements(pairs.len() as u64));
    group.bench_function("each", |b| {
        b.iter(|| {
            pairs.par_iter().map(|(p, c)| tokenizer.encode_chat(&template, p, c).expect("encode")).collect::<Vec<_>>()
        })
    });
    group.bench_function("chats", |b| b.iter(|| tokenizer.encode_chats(&template, &pairs).expect("encode")));
    group.finish();
}

criterion_group!(benches, bench_training, bench_generation, bench_encoding);
criterion_main!(benches);
