//! `GrpoTrainer::update`: a policy-gradient update on completions the caller sampled and scored (on-line RL's
//! seam), with or without behaviour log-probs and training prompts, resumable exactly.

mod common;

use act_core::{Policy, Query, SamplingParams};
use act_grpo::{GrpoConfig, GrpoTrainer, PreparedSequence, token_log_probs};
use act_model::{ModelPolicy, Qwen3, TokenBatch};
use burn::module::Module;
use common::*;

fn config() -> GrpoConfig {
    GrpoConfig::default()
        .with_group_size(4)
        .with_prompts_per_step(2)
        .with_max_completion_tokens(3)
        .with_lr(3e-3)
        .with_total_steps(20)
        .with_seed(3)
}

fn trainer(config: GrpoConfig) -> GrpoTrainer {
    GrpoTrainer::new(config, tiny_model(7), tokenizer(), template(), LargerNumber, Vec::new()).unwrap()
}

/// Four sampled completions of each of two prompts, at temperature 1, as an on-line collector would get them
/// from its policy, with advantages +1 for the larger number and -1 otherwise.
fn prepared(model: &Qwen3, with_log_probs: bool) -> Vec<PreparedSequence> {
    let policy = ModelPolicy::new("tiny", model.valid(), tokenizer(), template()).with_batch_size(8);
    let prompts = ["3 7", "8 2"];
    let queries: Vec<Query> = prompts.iter().flat_map(|p| std::iter::repeat_n(Query::text(*p), 4)).collect();
    let params = SamplingParams::default().with_max_new_tokens(3).with_seed(11);
    let completions = policy.complete(&queries, &params).unwrap();
    completions
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let larger = if i < 4 { "7" } else { "8" };
            PreparedSequence {
                advantage: if c.text.split_whitespace().next() == Some(larger) { 1.0 } else { -1.0 },
                prompt_ids: c.prompt_ids,
                completion_ids: c.token_ids,
                behaviour_log_probs: with_log_probs.then_some(c.log_probs),
                training_prompt_ids: None,
                token_weights: None,
            }
        })
        .collect()
}

/// The log-prob of `completion` after `prompt` under `model`.
fn log_prob(model: &Qwen3, prompt: &[u32], completion: &[u32]) -> f32 {
    let sequence: Vec<u32> = prompt.iter().chain(completion).copied().collect();
    let batch = TokenBatch::new(sequence.clone(), vec![true; sequence.len()], 1, sequence.len()).unwrap();
    let lp = token_log_probs(&model.valid(), &batch, prompt.len() - 1, 4, 1.0, false).unwrap();
    lp.log_probs.into_data().try_to_vec::<f32>().unwrap().iter().sum()
}

#[test]
fn the_policys_sampled_log_probs_are_the_trainers_recomputed_ones() {
    // Each sampled token's log-prob under the tempered softmax, as generation reports it (with the KV cache and
    // prefix reuse) and as the trainer recomputes it on the whole sequence, at two temperatures.
    let model = tiny_model(7);
    let policy = ModelPolicy::new("tiny", model.valid(), tokenizer(), template()).with_batch_size(4);
    let queries: Vec<Query> = ["3 7", "8 2 5", "1", "9 9"].iter().map(|p| Query::text(*p)).collect();
    for temperature in [1.0f32, 0.4] {
        let params = SamplingParams::default().with_temperature(temperature).with_max_new_tokens(5).with_seed(13);
        for completion in policy.complete(&queries, &params).unwrap() {
            assert_eq!(completion.log_probs.len(), completion.token_ids.len());
            let prompt = &completion.prompt_ids;
            let sequence: Vec<u32> = prompt.iter().chain(&completion.token_ids).copied().collect();
            let batch = TokenBatch::new(sequence.clone(), vec![true; sequence.len()], 1, sequence.len()).unwrap();
            let recomputed =
                token_log_probs(&model.valid(), &batch, prompt.len() - 1, 4, f64::from(temperature), false)
                    .unwrap()
                    .log_probs
                    .into_data()
                    .try_to_vec::<f32>()
                    .unwrap();
            assert_eq!(recomputed.len(), completion.log_probs.len());
            for (sampled, recomputed) in completion.log_probs.iter().zip(&recomputed) {
                assert!(
                    (sampled - recomputed).abs() < 1e-5,
                    "T {temperature}: sampled {sampled}, trainer {recomputed}"
                );
            }
        }
    }
}

#[test]
fn behaviour_log_probs_of_the_current_policy_give_the_on_policy_update() {
    let base = trainer(config());
    let sequences = prepared(base.model(), true);
    let mut with = trainer(config());
    let m = with.update(&sequences).unwrap();
    assert!((m.ratio_mean - 1.0).abs() < 1e-4, "ratio {}", m.ratio_mean);
    assert_eq!((m.step, m.sequences, m.updates_applied), (1, 8, 1));
    let mut without = trainer(config());
    let stripped: Vec<PreparedSequence> =
        sequences.iter().map(|s| PreparedSequence { behaviour_log_probs: None, ..s.clone() }).collect();
    without.update(&stripped).unwrap();
    // Sampling's log-probs come from the cached decoding kernels, the recomputed ones from another forward pass:
    // they agree to float rounding, which Adam's first step can show at 1e-5 (see `assert_close_weights`).
    assert_close_weights(with.model(), without.model());
    // A training prompt equal to the sampling prompt recomputes the same old log-probs.
    let mut recomputed = trainer(config());
    let same_prompt: Vec<PreparedSequence> = stripped
        .iter()
        .map(|s| PreparedSequence { training_prompt_ids: Some(s.prompt_ids.clone()), ..s.clone() })
        .collect();
    recomputed.update(&same_prompt).unwrap();
    assert_close_weights(with.model(), recomputed.model());
}

#[test]
fn updates_move_the_policy_along_the_advantages() {
    let mut t = trainer(config());
    // The first prompt's completions are reinforced, the second's discouraged.
    let sequences: Vec<PreparedSequence> = prepared(t.model(), true)
        .into_iter()
        .enumerate()
        .map(|(i, s)| PreparedSequence { advantage: if i < 4 { 1.0 } else { -1.0 }, ..s })
        .collect();
    let before: Vec<f32> = sequences.iter().map(|s| log_prob(t.model(), &s.prompt_ids, &s.completion_ids)).collect();
    for _ in 0..3 {
        t.update(&sequences).unwrap();
    }
    // The mean log-prob of the completions with a positive advantage rises, of the others falls.
    let mut change = [0f32; 2];
    for (s, b) in sequences.iter().zip(before) {
        change[usize::from(s.advantage < 0.0)] += log_prob(t.model(), &s.prompt_ids, &s.completion_ids) - b;
    }
    assert!(change[0] > 0.0 && change[1] < 0.0, "log-prob changes (positive, negative advantages): {change:?}");
}

#[test]
fn a_training_prompt_other_than_the_sampling_prompt_weighs_by_the_behaviour_ratio() {
    let mut t = trainer(config());
    let sequences = prepared(t.model(), false);
    // Train as if sampled after another prompt ("9 9"): the ratio is no longer 1.
    let hint = tokenizer().encode_prompt(&template(), "9 9 3 7").unwrap();
    let guided: Vec<PreparedSequence> = sequences
        .iter()
        .map(|s| PreparedSequence {
            training_prompt_ids: Some(s.prompt_ids.clone()),
            prompt_ids: hint.clone(),
            ..s.clone()
        })
        .collect();
    let m = t.update(&guided).unwrap();
    assert!((m.ratio_mean - 1.0).abs() > 1e-3, "ratio {}", m.ratio_mean);
}

#[test]
fn a_resumed_run_updates_identically() {
    let dir = tempfile::tempdir().unwrap();
    let config = config().with_mu(2).with_kl(act_grpo::KlEstimator::K3, 0.1).with_checkpoint_every(1);
    let sequences = prepared(&tiny_model(7), true);
    let mut straight = trainer(config.clone());
    straight.update(&sequences).unwrap();
    straight.update(&sequences).unwrap();

    let mut first = trainer(config.clone()).with_output_dir(dir.path()).unwrap();
    first.update(&sequences).unwrap();
    drop(first);
    let checkpoint = dir.path().join(act_grpo::checkpoint_name(1));
    let mut resumed = GrpoTrainer::resume(
        &checkpoint,
        config,
        tokenizer(),
        template(),
        LargerNumber,
        Vec::new(),
        &burn::prelude::Device::flex().autodiff(),
    )
    .unwrap();
    assert_eq!(resumed.steps_done(), 1);
    resumed.update(&sequences).unwrap();
    assert_eq!(parameters(resumed.model()), parameters(straight.model()));
}

#[test]
fn malformed_sequences_are_errors() {
    let mut t = trainer(config());
    let sequences = prepared(t.model(), true);
    assert!(t.update(&[]).unwrap_err().to_string().contains("no sequences"));
    let mut mixed = sequences.clone();
    mixed[3].behaviour_log_probs = None;
    let err = t.update(&mixed).unwrap_err().to_string();
    assert!(err.contains("7 of 8 sequences carry behaviour log-probs"), "{err}");
    let mut short = sequences.clone();
    short[2].behaviour_log_probs.as_mut().unwrap().push(0.0);
    let err = t.update(&short).unwrap_err().to_string();
    assert!(err.contains("sequence 2:") && err.contains("behaviour log-probs for"), "{err}");
    let mut outside = sequences;
    outside[5].completion_ids[0] = 5_000;
    let err = t.update(&outside).unwrap_err().to_string();
    assert!(err.contains("sequence 5: token id 5000 is outside"), "{err}");
    assert_eq!(t.steps_done(), 0);
}

/// Two episodes of three turns in the conversation shape: each turn's prompt is the previous prompt, its
/// completion and a new observation. Advantages differ per turn.
fn episodes(with_log_probs: Option<&Qwen3>) -> Vec<Vec<PreparedSequence>> {
    let mut out = Vec::new();
    for (e, first) in ["3 7", "8 2"].into_iter().enumerate() {
        let mut prompt = tokenizer().encode_prompt(&template(), first).unwrap();
        let mut turns = Vec::new();
        for t in 0..3u32 {
            let completion = vec![6 + (t + e as u32) % 10, 6 + (2 * t + 1) % 10, 2];
            let behaviour_log_probs = with_log_probs.map(|model| {
                let sequence: Vec<u32> = prompt.iter().chain(&completion).copied().collect();
                let batch = TokenBatch::new(sequence.clone(), vec![true; sequence.len()], 1, sequence.len()).unwrap();
                let lp = token_log_probs(&model.valid(), &batch, prompt.len() - 1, 4, 1.0, false).unwrap();
                lp.log_probs.into_data().try_to_vec::<f32>().unwrap()
            });
            turns.push(PreparedSequence {
                prompt_ids: prompt.clone(),
                completion_ids: completion.clone(),
                advantage: [0.9, -0.4, 1.3][t as usize] * if e == 0 { 1.0 } else { -1.0 },
                behaviour_log_probs,
                training_prompt_ids: None,
                token_weights: None,
            });
            prompt.extend(&completion);
            prompt.extend([1, 4, 6 + t, 7 + t, 2, 1, 5]);
        }
        out.push(turns);
    }
    out
}

#[test]
fn packed_episodes_update_as_their_turns_do_alone() {
    for with_log_probs in [false, true] {
        let base = trainer(config());
        let episodes = episodes(with_log_probs.then(|| base.model()));
        let mut packed = trainer(config());
        let m = packed.update_episodes(&episodes).unwrap();
        assert_eq!((m.sequences, m.completion_tokens), (6, 18));
        let mut alone = trainer(config());
        let flat: Vec<PreparedSequence> = episodes.iter().flatten().cloned().collect();
        let a = alone.update(&flat).unwrap();
        assert!((m.loss - a.loss).abs() < 1e-5, "loss packed {} alone {}", m.loss, a.loss);
        assert_close_weights(packed.model(), alone.model());
        // A turn that does not extend the one before starts a new sequence: still the same update.
        let mut broken = episodes.clone();
        broken[0][1].prompt_ids[3] = 9;
        broken[0][2].prompt_ids[3] = 9;
        let mut apart = trainer(config());
        apart.update_episodes(&broken).unwrap();
        let mut apart_alone = trainer(config());
        apart_alone.update(&broken.iter().flatten().cloned().collect::<Vec<_>>()).unwrap();
        assert_close_weights(apart.model(), apart_alone.model());
    }
}

#[test]
fn token_weights_scale_each_tokens_advantage() {
    let episodes = episodes(None);
    let flat: Vec<PreparedSequence> = episodes.iter().flatten().cloned().collect();
    let weighted = |weights: [f32; 3]| -> Vec<PreparedSequence> {
        flat.iter().map(|s| PreparedSequence { token_weights: Some(weights.to_vec()), ..s.clone() }).collect()
    };
    // Weights of 1 are no weights; a uniform weight of 2 is twice the advantage.
    let mut plain = trainer(config());
    let p = plain.update(&flat).unwrap();
    let mut ones = trainer(config());
    let o = ones.update(&weighted([1.0; 3])).unwrap();
    assert_eq!(p.loss, o.loss);
    assert_same_weights(plain.model(), ones.model());
    let mut twice = trainer(config());
    let doubled: Vec<PreparedSequence> =
        flat.iter().map(|s| PreparedSequence { advantage: 2.0 * s.advantage, ..s.clone() }).collect();
    let d = twice.update(&doubled).unwrap();
    let mut twos = trainer(config());
    let w = twos.update(&weighted([2.0; 3])).unwrap();
    assert!((d.loss - w.loss).abs() < 1e-6, "{} vs {}", d.loss, w.loss);
    assert_same_weights(twice.model(), twos.model());
    // On-policy (ratio 1) the token-mean loss is minus the mean weighted advantage over the 18 tokens.
    let uneven = [0.5f32, 2.0, 0.0];
    let mut t = trainer(config());
    let m = t.update(&weighted(uneven)).unwrap();
    let expected = -flat.iter().map(|s| s.advantage * 2.5).sum::<f64>() / 18.0;
    assert!((m.loss - expected).abs() < 1e-5, "{} vs {expected}", m.loss);
    // Packed episodes weigh their turns' tokens the same way.
    let mut packed = trainer(config());
    let episodes_weighted: Vec<Vec<PreparedSequence>> = episodes
        .iter()
        .map(|e| e.iter().map(|s| PreparedSequence { token_weights: Some(uneven.to_vec()), ..s.clone() }).collect())
        .collect();
    let k = packed.update_episodes(&episodes_weighted).unwrap();
    assert!((k.loss - m.loss).abs() < 1e-5, "packed {} alone {}", k.loss, m.loss);
    assert_close_weights(packed.model(), t.model());
    // Weights must match the completion and be non-negative.
    for bad in [vec![1.0, 1.0], vec![1.0, -0.5, 1.0], vec![1.0, f32::NAN, 1.0]] {
        let mut sequences = flat.clone();
        sequences[4].token_weights = Some(bad);
        let err = trainer(config()).update(&sequences).unwrap_err().to_string();
        assert!(err.contains("sequence 4: token weights"), "{err}");
    }
}

/// Every weight within 1e-4 of the other's. Adam's first step moves each weight by about the learning rate
/// (3e-3) times the sign of its gradient, so float-order differences in near-zero gradients show at 1e-5; a
/// different update would differ by the learning rate.
fn assert_close_weights(a: &Qwen3, b: &Qwen3) {
    for ((name, a), (_, b)) in act_model::hf_tensors(a).into_iter().zip(act_model::hf_tensors(b)) {
        let a: Vec<f32> = a.try_to_vec().unwrap();
        let b: Vec<f32> = b.try_to_vec().unwrap();
        let diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(diff < 1e-4, "{name}: {diff}");
    }
}

#[test]
fn packed_episodes_need_a_token_level_loss() {
    let mut t = trainer(config().with_aggregation(act_grpo::LossAggregation::SequenceMean));
    let err = t.update_episodes(&episodes(None)).unwrap_err().to_string();
    assert!(err.contains("token-level loss aggregation"), "{err}");
}

#[test]
fn guided_episodes_pack_and_train_under_their_training_prompts() {
    let base = trainer(config());
    let plain = episodes(None);
    // Sampled after a hint before the conversation (ActGuide-RL's guided rollouts), trained without it.
    let hint = [1, 9, 9, 8, 2];
    let guided: Vec<Vec<PreparedSequence>> = plain
        .iter()
        .map(|episode| {
            episode
                .iter()
                .map(|turn| {
                    let prompt_ids: Vec<u32> = hint.iter().chain(&turn.prompt_ids).copied().collect();
                    let behaviour = log_probs_of(base.model(), &prompt_ids, &turn.completion_ids);
                    PreparedSequence {
                        prompt_ids,
                        behaviour_log_probs: Some(behaviour),
                        training_prompt_ids: Some(turn.prompt_ids.clone()),
                        ..turn.clone()
                    }
                })
                .collect()
        })
        .collect();
    let mut packed = trainer(config());
    let m = packed.update_episodes(&guided).unwrap();
    // A tiny random model barely reads the hint, but the ratio is off 1 all the same.
    assert!((m.ratio_mean - 1.0).abs() > 1e-5, "the behaviour prompt differs, so must the ratio: {}", m.ratio_mean);
    let mut alone = trainer(config());
    alone.update(&guided.iter().flatten().cloned().collect::<Vec<_>>()).unwrap();
    assert_close_weights(packed.model(), alone.model());
    // The same as turns sampled under the training prompt with those behaviour log-probs.
    let relabelled: Vec<Vec<PreparedSequence>> = guided
        .iter()
        .map(|episode| {
            episode
                .iter()
                .map(|turn| PreparedSequence {
                    prompt_ids: turn.training_prompt_ids.clone().unwrap(),
                    training_prompt_ids: None,
                    ..turn.clone()
                })
                .collect()
        })
        .collect();
    let mut direct = trainer(config());
    direct.update_episodes(&relabelled).unwrap();
    assert_close_weights(packed.model(), direct.model());
    // Without behaviour log-probs the sampling prompt would have to be encoded: refused.
    let mut without = guided.clone();
    for turn in without.iter_mut().flatten() {
        turn.behaviour_log_probs = None;
    }
    let err = trainer(config()).update_episodes(&without).unwrap_err().to_string();
    assert!(err.contains("behaviour log-probs"), "{err}");
}

/// The per-token log-probs of `completion` after `prompt` under `model`.
fn log_probs_of(model: &Qwen3, prompt: &[u32], completion: &[u32]) -> Vec<f32> {
    let sequence: Vec<u32> = prompt.iter().chain(completion).copied().collect();
    let batch = TokenBatch::new(sequence.clone(), vec![true; sequence.len()], 1, sequence.len()).unwrap();
    let lp = token_log_probs(&model.valid(), &batch, prompt.len() - 1, 4, 1.0, false).unwrap();
    lp.log_probs.into_data().try_to_vec::<f32>().unwrap()
}

#[test]
fn an_entropy_bonus_alone_raises_the_policys_entropy() {
    let mut t = trainer(config().with_entropy_coef(0.5));
    // No advantage and no KL: the bonus is the only gradient.
    let sequences: Vec<PreparedSequence> =
        prepared(t.model(), true).into_iter().map(|s| PreparedSequence { advantage: 0.0, ..s }).collect();
    let before = t.update(&sequences).unwrap().entropy;
    let after = t.update(&sequences).unwrap().entropy;
    assert!(after > before + 1e-4, "entropy {before} -> {after}");
    // Without the bonus the same update leaves the policy as it was.
    let mut plain = trainer(config());
    let before = plain.update(&sequences).unwrap().entropy;
    let after = plain.update(&sequences).unwrap().entropy;
    assert!((after - before).abs() < 1e-6, "entropy {before} -> {after}");
}
