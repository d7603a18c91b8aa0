//! A policy's sampled log-probs are the ones the trainer computes for the same tokens, so on-line RL can store
//! them as behaviour log-probs instead of running the model again.

mod common;

use act_core::{Policy, Query, SamplingParams};
use act_grpo::token_log_probs;
use act_model::{ModelPolicy, TokenBatch};
use burn::module::Module;
use common::*;

#[test]
fn sampled_log_probs_equal_the_trainers_recomputed_ones() {
    let model = tiny_model(3).valid();
    let policy = ModelPolicy::new("tiny", model.clone(), tokenizer(), template()).with_batch_size(3);
    let queries: Vec<Query> = ["which is larger, 3 or 7?", "which is larger, 12 or 4?", "say a number"]
        .into_iter()
        .map(Query::text)
        .collect();
    for temperature in [0.0f32, 0.7, 1.3] {
        let params =
            SamplingParams::default().with_temperature(temperature).with_top_k(20).with_max_new_tokens(6).with_seed(5);
        let completions = policy.complete(&queries, &params).unwrap();
        // The same texts as `generate`.
        let texts: Vec<String> = completions.iter().map(|c| c.text.clone()).collect();
        assert_eq!(texts, policy.generate(&queries, &params).unwrap());
        for (i, c) in completions.iter().enumerate() {
            assert!(c.has_tokens(), "query {i}: no tokens");
            let sequence: Vec<u32> = c.prompt_ids.iter().chain(&c.token_ids).copied().collect();
            let batch = TokenBatch::new(sequence.clone(), vec![true; sequence.len()], 1, sequence.len()).unwrap();
            // Greedy decoding reports the model's own distribution (temperature 1).
            let t = if temperature == 0.0 { 1.0 } else { f64::from(temperature) };
            let recomputed = token_log_probs(&model, &batch, c.prompt_ids.len() - 1, 4, t, false).unwrap();
            let recomputed: Vec<f32> = recomputed.log_probs.into_data().try_to_vec::<f32>().unwrap();
            assert_eq!(recomputed.len(), c.log_probs.len());
            for (step, (a, b)) in c.log_probs.iter().zip(&recomputed).enumerate() {
                assert!((a - b).abs() < 1e-5, "T {temperature}, query {i}, token {step}: sampled {a}, trainer {b}");
            }
        }
    }
}
