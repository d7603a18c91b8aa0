//! Sliding-window attention: what a windowed layer sees, and that every path (padded batches, KV-cache decoding,
//! reused prefixes, shared-prompt passes) computes what one pass over each sequence alone computes.

use crate::common::{assert_same_generations, device, logits_of, max_abs_diff};
use act_model::{
    GenerationConfig, NoStop, PadSide, PrefixStore, Qwen3, Qwen3Config, SharedPrefixBatch, TokenBatch, generate,
    generate_reusing,
};

fn windowed(window: usize, full_layers: usize) -> Qwen3 {
    let mut config = Qwen3Config::tiny(64).with_sliding_window(window, full_layers);
    config.initializer_range = 0.3;
    Qwen3::init(&config, 42, &device()).unwrap()
}

/// The same weights without a window.
fn unwindowed(model: &Qwen3) -> Qwen3 {
    let mut plain = model.clone();
    plain.config.sliding_window = None;
    plain.config.max_window_layers = 0;
    plain
}

fn last_logits(model: &Qwen3, ids: &[u32]) -> Vec<f32> {
    let logits = logits_of(model, ids);
    let vocab = model.config.vocab_size;
    logits[logits.len() - vocab..].to_vec()
}

#[test]
fn a_window_bounds_what_the_last_position_depends_on() {
    // Both layers windowed (3 positions each): the last position reads the last 2 * (3 - 1) + 1 = 5 tokens.
    let model = windowed(3, 0);
    let ids: Vec<u32> = (0..12).map(|t| (t * 7 + 3) % 64).collect();
    let base = last_logits(&model, &ids);
    let mut far = ids.clone();
    far[12 - 6] = 63 - far[12 - 6];
    assert_eq!(last_logits(&model, &far), base, "a token 6 positions back is outside the receptive field");
    let mut near = ids.clone();
    near[12 - 5] = 63 - near[12 - 5];
    assert!(max_abs_diff(&last_logits(&model, &near), &base) > 1e-4, "a token 5 positions back is inside it");
    // With its first layer full, the model reads the whole sequence again.
    let mixed = windowed(3, 1);
    assert!(max_abs_diff(&last_logits(&mixed, &far), &last_logits(&mixed, &ids)) > 1e-4);
}

#[test]
fn a_window_longer_than_the_sequence_changes_nothing() {
    let model = windowed(12, 1);
    let ids: Vec<u32> = (0..12).map(|t| (t * 5 + 1) % 64).collect();
    assert_eq!(logits_of(&model, &ids), logits_of(&unwindowed(&model), &ids));
    let short = windowed(4, 1);
    assert!(max_abs_diff(&logits_of(&short, &ids), &logits_of(&unwindowed(&short), &ids)) > 1e-4);
}

fn prompts() -> Vec<Vec<u32>> {
    vec![(1..14).collect(), vec![10], vec![20, 21, 22, 23, 24, 25], vec![30, 31], (40..60).rev().collect()]
}

#[test]
fn padded_rows_and_cached_decoding_equal_each_sequence_alone() {
    let model = windowed(4, 1);
    let prompts = prompts();
    for side in [PadSide::Left, PadSide::Right] {
        let batch = TokenBatch::from_sequences(&prompts, 0, side).unwrap();
        let seq = batch.seq();
        let vocab = model.config.vocab_size;
        let logits: Vec<f32> = model.forward(&batch).into_data().convert::<f32>().try_into_vec().unwrap();
        for (row, p) in prompts.iter().enumerate() {
            let start = if side == PadSide::Left { seq - p.len() } else { 0 };
            let got = &logits[(row * seq + start) * vocab..(row * seq + start + p.len()) * vocab];
            assert!(max_abs_diff(got, &logits_of(&model, p)) < 1e-5, "{side:?} row {row}");
        }
    }
    let seeds = vec![0; prompts.len()];
    let cached = generate(&model, &prompts, &seeds, &GenerationConfig::greedy(10), &NoStop).unwrap();
    let full = generate(&model, &prompts, &seeds, &GenerationConfig::greedy(10).with_cache(false), &NoStop).unwrap();
    assert_same_generations(&cached, &full, "windowed: cache against recomputation");
    let plain = generate(&unwindowed(&model), &prompts, &seeds, &GenerationConfig::greedy(10), &NoStop).unwrap();
    assert!(cached.iter().zip(&plain).any(|(a, b)| a.tokens != b.tokens), "the window changes some generation");
    // Reused prefixes: turn 2 extends turn 1's prompts and completions.
    let mut store = PrefixStore::new(8);
    let first: Vec<Vec<u32>> = (0..3u32).map(|r| (0..16 + 3 * r).map(|t| (t * 7 + r) % 64).collect()).collect();
    let turn1 = generate_reusing(&model, &first, &[0; 3], &GenerationConfig::greedy(5), &NoStop, &mut store).unwrap();
    let second: Vec<Vec<u32>> =
        first.iter().zip(&turn1).map(|(p, g)| [p.as_slice(), &g.tokens, &[41, 42, 43]].concat()).collect();
    let config = GenerationConfig::greedy(6);
    let reused = generate_reusing(&model, &second, &[0; 3], &config, &NoStop, &mut store).unwrap();
    assert!(store.reused_tokens() > 0);
    assert_same_generations(&reused, &generate(&model, &second, &[0; 3], &config, &NoStop).unwrap(), "reused");
}

#[test]
fn shared_prompt_passes_equal_full_sequences() {
    let model = windowed(3, 1);
    let (long, short) = (vec![3u32, 9, 12, 5, 7, 1, 40], vec![4u32, 4]);
    // The short prompt is right-padded before its completion: the window must not count that padding.
    let rows: Vec<(&[u32], &[u32])> = vec![(&long, &[8, 2, 9]), (&short, &[5, 6, 7, 30]), (&long, &[11, 12])];
    let shared = SharedPrefixBatch::new(&rows, 0).unwrap();
    let hidden = model.completion_hidden_states(&shared);
    for (r, (p, c)) in rows.iter().enumerate() {
        let alone = TokenBatch::from_sequences(&[[*p, *c].concat()], 0, PadSide::Right).unwrap();
        let reference = model.hidden_states(&alone);
        for j in 0..c.len() {
            let a: Vec<f32> = hidden.clone().narrow(0, r, 1).narrow(1, j, 1).into_data().try_into_vec().unwrap();
            let b: Vec<f32> = reference.clone().narrow(1, p.len() + j - 1, 1).into_data().try_into_vec().unwrap();
            assert!(max_abs_diff(&a, &b) < 1e-5, "row {r}, completion token {j}");
        }
    }
}

#[test]
fn hugging_face_config_round_trips_the_window() {
    let config = Qwen3Config::tiny(64).with_sliding_window(128, 1);
    let json = config.to_hf_json();
    assert_eq!(json["use_sliding_window"], true);
    assert_eq!(json["layer_types"], serde_json::json!(["full_attention", "sliding_attention"]));
    assert_eq!(Qwen3Config::from_hf_json(&json.to_string()).unwrap(), config);
    let plain = Qwen3Config::tiny(64);
    assert_eq!(Qwen3Config::from_hf_json(&plain.to_hf_json().to_string()).unwrap(), plain);
    let mut odd = json.clone();
    odd["layer_types"] = serde_json::json!(["sliding_attention", "full_attention"]);
    let err = Qwen3Config::from_hf_json(&odd.to_string()).unwrap_err().to_string();
    assert!(err.contains("layer_types"), "{err}");
    let mut zero = json;
    zero["sliding_window"] = serde_json::json!(0);
    assert!(Qwen3Config::from_hf_json(&zero.to_string()).is_err());
}
