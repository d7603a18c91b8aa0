//! act-core's Policy over a tiny model: chat template, stop strings, seeds.

use act_core::{Policy, Query, SamplingParams};
use act_model::{ChatTemplate, ChatTokenizer, FinishReason, ModelPolicy, Qwen3, Qwen3Config};
use burn::prelude::*;

use crate::common::assert_same_completions;

fn policy() -> ModelPolicy {
    policy_with_batch(2)
}

fn policy_with_batch(batch_size: usize) -> ModelPolicy {
    let corpus: Vec<String> =
        (0..100).map(|i| format!("<action>take mug {i}</action> then go to desk {}", i % 3)).collect();
    let tokenizer = ChatTokenizer::train_bpe(corpus, 320).unwrap();
    let mut config = Qwen3Config::tiny(tokenizer.vocab_size());
    config.initializer_range = 0.2;
    let model = Qwen3::init(&config, 4, &Device::flex()).unwrap();
    ModelPolicy::new("tiny", model, tokenizer, ChatTemplate::default()).with_batch_size(batch_size)
}

#[test]
fn policy_is_seeded_batched_and_respects_limits() {
    let policy = policy();
    let queries: Vec<Query> = ["a", "where is the mug?", "go", "take mug 3"].iter().map(|s| Query::text(*s)).collect();
    let params = SamplingParams::default().with_max_new_tokens(6).with_seed(5);
    let a = policy.completions(&queries, &params).unwrap();
    let b = policy.completions(&queries, &params).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 4);
    assert!(a.iter().all(|c| c.completion_ids.len() <= 6));
    // Batch size does not change what query i samples (its seed is derive_seed(seed, i)).
    let wide = policy_with_batch(8).completions(&queries, &params).unwrap();
    assert_eq!(wide, a);
    let other = policy.completions(&queries, &params.clone().with_seed(6)).unwrap();
    assert_ne!(a, other);
    let texts = policy.generate(&queries, &params).unwrap();
    assert_eq!(texts, a.iter().map(|c| c.text.clone()).collect::<Vec<_>>());
}

#[test]
fn stop_strings_end_generation_and_are_kept() {
    let policy = policy();
    let queries = vec![Query::text("take mug")];
    let params = SamplingParams::greedy().with_max_new_tokens(20);
    let free = policy.completions(&queries, &params).unwrap().remove(0);
    // Use a character the model emits anyway as the stop string: generation must end right after it.
    let text = free.text.clone();
    let Some(stop) = text.chars().find(|c| c.is_ascii_alphanumeric()).map(|c| c.to_string()) else {
        panic!("tiny model produced no ASCII text: {text:?}");
    };
    let stop = stop.as_str();
    let stopped = policy.completions(&queries, &params.clone().with_stop(stop)).unwrap().remove(0);
    assert_eq!(stopped.finish, FinishReason::Stop);
    assert!(stopped.text.ends_with(stop), "{:?} vs stop {stop:?}", stopped.text);
    let n = stopped.completion_ids.len();
    assert!(n <= free.completion_ids.len());
    assert_eq!(stopped.completion_ids, free.completion_ids[..n], "stopping only truncates");
    let bad = SamplingParams::default().with_top_p(0.0);
    assert!(policy.generate(&queries, &bad).is_err());
}

#[test]
fn prefix_reuse_continues_conversations_without_changing_them() {
    let plain = policy_with_batch(4);
    let reusing = policy_with_batch(4).with_prefix_reuse(8);
    assert_eq!(plain.prefix_reuse_counts(), None);
    let params = SamplingParams::greedy().with_max_new_tokens(5);
    let openings = ["where is the mug 3? go to desk 1 then take mug 3", "take mug 7 then go to desk 2 and look"];
    let mut prompts: Vec<String> = openings.iter().map(|s| s.to_string()).collect();
    // Three turns: each prompt continues the last one with its completion and a new observation.
    for turn in 0..3 {
        let queries: Vec<Query> = prompts.iter().map(Query::text).collect();
        let expected = plain.completions(&queries, &params).unwrap();
        let got = reusing.completions(&queries, &params).unwrap();
        assert_same_completions(&got, &expected, &format!("turn {turn}"));
        for (prompt, completion) in prompts.iter_mut().zip(&got) {
            prompt.push_str(&format!("{}\nyou see mug {turn}", completion.text));
        }
    }
    let (reused, encoded) = reusing.prefix_reuse_counts().unwrap();
    assert!(reused > 0 && encoded > 0, "reused {reused}, encoded {encoded}");
}

#[test]
fn workers_split_batches_without_changing_completions_or_reuse() {
    let params = SamplingParams::default().with_max_new_tokens(5).with_seed(9);
    let one = policy_with_batch(16).with_prefix_reuse(32);
    let three = policy_with_batch(16).with_prefix_reuse(32).with_workers(3);
    let plain_three = policy_with_batch(16).with_workers(3);
    let mut prompts: Vec<String> =
        (0..13).map(|i| format!("episode {i}: where is the mug {}? go to desk {}", i % 5, i % 3)).collect();
    for turn in 0..3 {
        let queries: Vec<Query> = prompts.iter().map(Query::text).collect();
        let expected = one.completions(&queries, &params).unwrap();
        assert_same_completions(
            &three.completions(&queries, &params).unwrap(),
            &expected,
            &format!("turn {turn}, reusing"),
        );
        assert_same_completions(
            &plain_three.completions(&queries, &params).unwrap(),
            &expected,
            &format!("turn {turn}, plain"),
        );
        for (prompt, completion) in prompts.iter_mut().zip(&expected) {
            prompt.push_str(&format!("{}\nyou see mug {turn}", completion.text));
        }
    }
    // Every part reads the prefixes its prompts continue and stores what it generated.
    assert_eq!(three.prefix_reuse_counts(), one.prefix_reuse_counts());
    assert!(one.prefix_reuse_counts().unwrap().0 > 0);
    // Called from rayon's workers, as the batched item evaluations call it: the same completions.
    let queries: Vec<Query> = prompts.iter().map(Query::text).collect();
    let expected = plain_three.completions(&queries, &params).unwrap();
    let nested: Vec<_> = {
        use rayon::prelude::*;
        (0..4).into_par_iter().map(|_| plain_three.completions(&queries, &params).unwrap()).collect()
    };
    assert!(nested.iter().all(|c| *c == expected));
}
