//! Synthetic workloads for the speed and memory examples (`side_by_side`, `scale_report`): a word-level tokenizer
//! of any vocabulary size, random messages over its words, and a continuous reward, so a trainer's work can be
//! timed on a model with random weights and nothing downloaded.

use act_core::{Reward, RewardError, RewardFn, RewardTarget, rng_from_seed};
use rand::RngExt;
use serde_json::json;

/// The reward both sides compute: the fraction of the completion budget filled with words `wN`, N even.
pub struct EvenWords {
    /// The completion budget in tokens (words): the share's denominator.
    pub budget: usize,
}

impl RewardFn for EvenWords {
    fn name(&self) -> &str {
        "even-words"
    }

    fn range(&self) -> (f64, f64) {
        (0.0, 1.0)
    }

    fn score(&self, _target: &RewardTarget, completion: &str) -> Result<Reward, RewardError> {
        let even = completion
            .split_whitespace()
            .filter(|w| w.strip_prefix('w').and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n % 2 == 0))
            .count();
        let share = even as f64 / self.budget as f64;
        Ok(Reward::from_components([("even".to_owned(), share)].into(), true))
    }
}

/// Special tokens first (as the chat tokenizer needs them), then `[UNK]`, the chat roles, and words `w0`, `w1`,
/// ... up to `vocab` entries. Whitespace pre-tokenizer, no decoder: decoding joins tokens with spaces, the same
/// in Rust's and Python's `tokenizers`.
pub fn word_tokenizer_json(vocab: usize) -> serde_json::Value {
    let specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];
    let mut entries = serde_json::Map::new();
    let fixed = specials.iter().copied().chain(["[UNK]", "user", "assistant"]).map(str::to_owned);
    let words = (0..).map(|n| format!("w{n}"));
    for (id, word) in fixed.chain(words).take(vocab).enumerate() {
        entries.insert(word, json!(id));
    }
    let added: Vec<_> = specials
        .iter()
        .enumerate()
        .map(|(id, w)| {
            json!({"id": id, "content": w, "single_word": false, "lstrip": false, "rstrip": false,
                   "normalized": false, "special": true})
        })
        .collect();
    json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added, "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": entries, "unk_token": "[UNK]"}
    })
}

/// `count` user messages of `words` random words each, drawn from the first `word_count` words (seeded).
pub fn messages(count: usize, words: usize, word_count: usize, seed: u64) -> Vec<String> {
    let mut rng = rng_from_seed(seed);
    (0..count)
        .map(|_| (0..words).map(|_| format!("w{}", rng.random_range(0..word_count))).collect::<Vec<_>>().join(" "))
        .collect()
}
