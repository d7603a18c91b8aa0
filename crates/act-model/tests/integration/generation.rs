//! KV-cache decoding against full recomputation, batching against single rows, seeded sampling.

use crate::common::{assert_same_generations, device};
use act_model::{
    FinishReason, GenerationConfig, NoStop, PrefixStore, Qwen3, Qwen3Config, Sampler, StopCondition, generate,
    generate_in_parts, generate_reusing,
};

fn model() -> Qwen3 {
    // A wider init than the default makes logits peaked enough that greedy choices are not near-ties.
    let mut config = Qwen3Config::tiny(64);
    config.initializer_range = 0.3;
    Qwen3::init(&config, 42, &device()).unwrap()
}

fn prompts() -> Vec<Vec<u32>> {
    vec![vec![1, 2, 3, 4, 5, 6, 7, 8, 9], vec![10], vec![20, 21, 22, 23], vec![30, 31], vec![63, 0, 62, 1, 61, 2]]
}

#[test]
fn kv_cache_decoding_equals_full_recomputation_for_mixed_lengths() {
    let model = model();
    let prompts = prompts();
    let seeds = vec![0; prompts.len()];
    let cached = generate(&model, &prompts, &seeds, &GenerationConfig::greedy(12), &NoStop).unwrap();
    let full = generate(&model, &prompts, &seeds, &GenerationConfig::greedy(12).with_cache(false), &NoStop).unwrap();
    assert_same_generations(&cached, &full, "cache against recomputation");
    assert!(cached.iter().all(|g| g.tokens.len() == 12 && g.finish == FinishReason::Length));
    // Each row alone (no padding at all) decodes the same tokens as inside the batch.
    for (p, g) in prompts.iter().zip(&cached) {
        let alone = generate(&model, std::slice::from_ref(p), &[0], &GenerationConfig::greedy(12), &NoStop).unwrap();
        assert_eq!(alone[0].tokens, g.tokens);
    }
    // The outputs are not all the same sequence (the test would be vacuous for a constant model).
    assert!(cached.iter().any(|g| g.tokens != cached[0].tokens));
}

#[test]
fn repeated_prompts_are_encoded_once_and_decode_like_distinct_rows() {
    let model = model();
    let base = prompts();
    // A GRPO-like batch: every prompt twice, with its own sampling seed per row.
    let repeated: Vec<Vec<u32>> = base.iter().flat_map(|p| [p.clone(), p.clone()]).collect();
    let seeds: Vec<u64> = (0..repeated.len() as u64).collect();
    let sampler = Sampler::new(1.0, 0, 1.0).unwrap();
    let config = GenerationConfig::greedy(10).with_sampler(sampler);
    let cached = generate(&model, &repeated, &seeds, &config, &NoStop).unwrap();
    let full = generate(&model, &repeated, &seeds, &config.clone().with_cache(false), &NoStop).unwrap();
    assert_same_generations(&cached, &full, "repeated prompts, cache against recomputation");
    // Each row alone gives the same sample: nothing leaks between the copies of a prompt.
    for (i, (p, g)) in repeated.iter().zip(&cached).enumerate() {
        let alone = generate(&model, std::slice::from_ref(p), &seeds[i..=i], &config, &NoStop).unwrap();
        assert_eq!(alone[0].tokens, g.tokens, "row {i}");
    }
    assert!(cached.chunks(2).any(|pair| pair[0].tokens != pair[1].tokens), "copies sample independently");
}

/// Stops after the given token; rows finish at different steps and leave the batch.
struct StopAfter(u32);

impl StopCondition for StopAfter {
    fn is_done(&self, _row: usize, completion: &[u32]) -> bool {
        completion.last() == Some(&self.0)
    }
}

#[test]
fn finished_rows_leave_the_batch_without_changing_the_others() {
    let model = model();
    let prompts = prompts();
    let seeds = vec![0; prompts.len()];
    let reference = generate(&model, &prompts, &seeds, &GenerationConfig::greedy(10), &NoStop).unwrap();
    // Stop on the first token row 0 generates: row 0 (and any row emitting it) ends early.
    let stop_token = reference[0].tokens[0];
    let stopped = generate(&model, &prompts, &seeds, &GenerationConfig::greedy(10), &StopAfter(stop_token)).unwrap();
    assert_eq!(stopped[0].tokens, vec![stop_token]);
    assert_eq!(stopped[0].finish, FinishReason::Stop);
    for (s, r) in stopped.iter().zip(&reference) {
        let n = s.tokens.len();
        assert_eq!(s.tokens, r.tokens[..n], "a stopped row is a prefix of the unstopped one");
    }
    let eos =
        generate(&model, &prompts, &seeds, &GenerationConfig::greedy(10).with_eos(vec![stop_token]), &NoStop).unwrap();
    assert_eq!(eos[0].finish, FinishReason::Eos);
}

#[test]
fn sampling_is_reproducible_per_row_seed() {
    let model = model();
    let prompts = prompts();
    let config = GenerationConfig::greedy(8).with_sampler(Sampler::new(1.0, 20, 0.95).unwrap());
    let a = generate(&model, &prompts, &[1, 2, 3, 4, 5], &config, &NoStop).unwrap();
    let b = generate(&model, &prompts, &[1, 2, 3, 4, 5], &config, &NoStop).unwrap();
    assert_eq!(a, b);
    let c = generate(&model, &prompts, &[9, 8, 7, 6, 5], &config, &NoStop).unwrap();
    assert_ne!(a, c);
    // A row's sample depends on its own seed only, not on its batch mates.
    let alone = generate(&model, &prompts[4..], &[5], &config, &NoStop).unwrap();
    assert_same_generations(&alone, &a[4..], "row 4 alone");
}

/// Stops one row (by its index in the whole batch) after `after` tokens.
struct StopRow {
    row: usize,
    after: usize,
}

impl StopCondition for StopRow {
    fn is_done(&self, row: usize, completion: &[u32]) -> bool {
        row == self.row && completion.len() >= self.after
    }
}

#[test]
fn generating_in_parts_gives_each_row_what_one_batch_gives_it() {
    let model = model();
    // Ten rows, so two parts of five (at least four rows a part).
    let prompts: Vec<Vec<u32>> = prompts().into_iter().cycle().take(10).collect();
    let seeds: Vec<u64> = (0..10).collect();
    let config = GenerationConfig::greedy(8).with_sampler(Sampler::new(1.0, 0, 1.0).unwrap());
    let whole = generate(&model, &prompts, &seeds, &config, &NoStop).unwrap();
    for parts in [2, 3, 16] {
        let split = generate_in_parts(&model, &prompts, &seeds, &config, &NoStop, parts).unwrap();
        assert_same_generations(&split, &whole, &format!("{parts} parts"));
    }
    // The stop condition sees each row's index in the whole batch, not in its part.
    let stop = StopRow { row: 7, after: 2 };
    let split = generate_in_parts(&model, &prompts, &seeds, &config, &stop, 2).unwrap();
    assert_eq!((split[7].tokens.len(), split[7].finish), (2, FinishReason::Stop));
    assert!(split.iter().enumerate().all(|(i, g)| i == 7 || g.tokens.len() == 8));
    // Rows with the same prompt and different seeds differ (the comparison is not vacuous).
    assert_ne!(whole[0].tokens, whole[5].tokens);
}

#[test]
fn bad_inputs_are_errors() {
    let model = model();
    assert!(generate(&model, &[vec![1]], &[], &GenerationConfig::greedy(3), &NoStop).is_err());
    assert!(generate(&model, &[vec![64]], &[0], &GenerationConfig::greedy(3), &NoStop).is_err());
    assert!(generate(&model, &[vec![]], &[0], &GenerationConfig::greedy(3), &NoStop).is_err());
}

#[test]
fn reused_prefixes_decode_what_full_encoding_decodes() {
    let model = model();
    // Turn 1: prompts long enough to be worth storing (the store reuses 16 tokens or more).
    let first: Vec<Vec<u32>> = (0..4u32).map(|r| (0..18 + 3 * r).map(|t| (t * 7 + r) % 64).collect()).collect();
    let seeds = vec![0; first.len()];
    let config = GenerationConfig::greedy(6);
    let mut store = PrefixStore::new(16);
    let turn1 = generate_reusing(&model, &first, &seeds, &config, &StopAfter(5), &mut store).unwrap();
    assert_same_generations(&turn1, &generate(&model, &first, &seeds, &config, &StopAfter(5)).unwrap(), "turn 1");
    assert_eq!(store.reused_tokens(), 0);
    assert_eq!(store.len(), first.len());
    // Turn 2: each earlier prompt + its completion + a new observation of a different length, and one new
    // episode that matches nothing.
    let mut second: Vec<Vec<u32>> = first
        .iter()
        .zip(&turn1)
        .enumerate()
        .map(|(r, (p, g))| [p.as_slice(), &g.tokens, &(0..1 + r as u32).map(|t| 40 + t).collect::<Vec<_>>()].concat())
        .collect();
    second.push((0..20).map(|t| 63 - t).collect());
    let seeds = vec![0; second.len()];
    let reused = generate_reusing(&model, &second, &seeds, &config, &NoStop, &mut store).unwrap();
    let full = generate(&model, &second, &seeds, &config, &NoStop).unwrap();
    assert_same_generations(&reused, &full, "reused against full");
    // Every continued row reused its whole earlier prompt and all but the last generated token.
    let expected: usize = first.iter().zip(&turn1).map(|(p, g)| p.len() + g.tokens.len() - 1).sum();
    assert_eq!(store.reused_tokens() as usize, expected);
    // The later turns replaced the earlier ones they extend.
    assert_eq!(store.len(), second.len());
}

#[test]
fn rows_that_encode_whole_prompts_prefill_apart_and_decode_the_same() {
    let model = model();
    let first: Vec<Vec<u32>> = (0..3u32).map(|r| (0..20 + r).map(|t| (t * 5 + r) % 64).collect()).collect();
    let config = GenerationConfig::greedy(4);
    let mut store = PrefixStore::new(16);
    let turn1 = generate_reusing(&model, &first, &[0; 3], &config, &NoStop, &mut store).unwrap();
    // Two rows continue their episode by a few tokens; one new episode encodes 150 tokens and one row 40: the
    // long row prefills in its own batch.
    let mut second: Vec<Vec<u32>> =
        first.iter().zip(&turn1).take(2).map(|(p, g)| [p.as_slice(), &g.tokens, &[41, 42]].concat()).collect();
    second.push((0..150).map(|t| (t * 11 + 3) % 64).collect());
    second.push((0..40).map(|t| (t * 13 + 1) % 64).collect());
    let seeds = [3, 1, 4, 1];
    let config = GenerationConfig { sampler: Sampler::new(0.8, 0, 1.0).unwrap(), ..GenerationConfig::greedy(5) };
    // A stop condition that knows its rows: the grouping must not mix them up.
    let reused = generate_reusing(&model, &second, &seeds, &config, &StopRowAt(2, 2), &mut store).unwrap();
    let full = generate(&model, &second, &seeds, &config, &StopRowAt(2, 2)).unwrap();
    assert_same_generations(&reused, &full, "reused against full");
    assert_eq!((full[2].tokens.len(), full[2].finish), (2, FinishReason::Stop));
}

/// Stops row `.0` after `.1` tokens.
struct StopRowAt(usize, usize);

impl StopCondition for StopRowAt {
    fn is_done(&self, row: usize, completion: &[u32]) -> bool {
        row == self.0 && completion.len() >= self.1
    }
}
