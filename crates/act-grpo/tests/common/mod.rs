//! A synthetic verifiable task for the trainer tests: answer with the larger of two digits.
#![allow(dead_code)]

use std::str::FromStr;

use act_core::{GrpoSample, Reward, RewardError, RewardFn, RewardTarget, SftSample};
use act_model::{ChatTemplate, ChatTokenizer, Qwen3, Qwen3Config};
use burn::prelude::*;

/// A word-level tokenizer over digits and the chat words: 16 tokens, so a fresh model guesses among few.
pub fn tokenizer() -> ChatTokenizer {
    let mut vocab = serde_json::Map::new();
    let words = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "[UNK]", "user", "assistant"];
    for (i, w) in words.iter().chain(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"].iter()).enumerate() {
        vocab.insert(w.to_string(), serde_json::json!(i));
    }
    let added: Vec<_> = words[..3]
        .iter()
        .enumerate()
        .map(|(i, w)| {
            serde_json::json!({"id": i, "content": w, "single_word": false, "lstrip": false, "rstrip": false,
                               "normalized": false, "special": true})
        })
        .collect();
    let json = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added, "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    });
    ChatTokenizer::new(tokenizers::Tokenizer::from_str(&json.to_string()).unwrap()).unwrap()
}

/// Every ordered pair of distinct digits: 90 prompts `"a b"`, the answer being the larger.
pub fn pairs() -> Vec<(u32, u32)> {
    (0..10).flat_map(|a| (0..10).filter(move |&b| b != a).map(move |b| (a, b))).collect()
}

/// The GRPO samples of the task: the target carries the answer as the "expert action".
pub fn grpo_samples() -> Vec<GrpoSample> {
    pairs()
        .into_iter()
        .map(|(a, b)| GrpoSample {
            id: format!("{a}-{b}"),
            prompt: format!("{a} {b}"),
            target: RewardTarget::NextAction { expert: a.max(b).to_string().into(), admissible: vec![] },
        })
        .collect()
}

/// The same task as SFT samples.
pub fn sft_samples() -> Vec<SftSample> {
    pairs()
        .into_iter()
        .map(|(a, b)| SftSample {
            id: format!("{a}-{b}"),
            prompt: format!("{a} {b}"),
            completion: a.max(b).to_string(),
        })
        .collect()
}

/// 1 when the completion's first word is the expert answer.
pub struct LargerNumber;

impl RewardFn for LargerNumber {
    fn name(&self) -> &str {
        "larger-number"
    }

    fn range(&self) -> (f64, f64) {
        (0.0, 1.0)
    }

    fn score(&self, target: &RewardTarget, completion: &str) -> Result<Reward, RewardError> {
        let RewardTarget::NextAction { expert, .. } = target else {
            return Err(RewardError::WrongTarget { reward: self.name().into(), target: target.kind() });
        };
        let first = completion.split_whitespace().next();
        let correct = (first == Some(expert.as_str())) as u8 as f64;
        let digit = first.is_some_and(|w| w.len() == 1 && w.chars().all(|c| c.is_ascii_digit()));
        Ok(Reward::from_components([("correct".to_string(), correct)].into(), digit))
    }
}

/// A fresh tiny model on the CPU training device.
pub fn tiny_model(seed: u64) -> Qwen3 {
    let config = Qwen3Config::tiny(tokenizer().vocab_size());
    Qwen3::init(&config, seed, &Device::flex().autodiff()).unwrap()
}

pub fn template() -> ChatTemplate {
    ChatTemplate::default()
}

/// Every parameter's bytes, in HF names, for exact comparisons.
pub fn parameters(model: &Qwen3) -> Vec<(String, Vec<u8>)> {
    act_model::hf_tensors(model).into_iter().map(|(n, d)| (n, d.as_bytes().to_vec())).collect()
}

/// Every weight of `a` within 1e-5 of `b`.
pub fn assert_same_weights(a: &Qwen3, b: &Qwen3) {
    for ((name, a), (_, b)) in act_model::hf_tensors(a).into_iter().zip(act_model::hf_tensors(b)) {
        let a: Vec<f32> = a.try_to_vec().unwrap();
        let b: Vec<f32> = b.try_to_vec().unwrap();
        let diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "{name}: {diff}");
    }
}
