//! Parity with Hugging Face transformers on committed fixtures made by `scripts/hf_parity.py make-fixture`.

use crate::common::{device, fixture, logits_of, max_abs_diff, read_expected};
use act_model::{GenerationConfig, NoStop, PadSide, TokenBatch, generate, load_hf};

const ATOL: f32 = 1e-4;

fn check_fixture(name: &str) {
    let dir = fixture(name);
    let (model, report) = load_hf(&dir, &device()).unwrap();
    assert!(report.unused.is_empty(), "unused tensors: {:?}", report.unused);
    let expected = read_expected(&dir);
    assert!(expected.len() >= 3);
    for (i, e) in expected.iter().enumerate() {
        let got = logits_of(&model, &e.input_ids);
        let diff = max_abs_diff(&got, &e.logits);
        assert!(diff < ATOL, "{name} prompt {i}: max |diff| = {diff}");
    }
}

#[test]
fn untied_gqa_model_matches_transformers_logits() {
    check_fixture("tiny-qwen3");
}

#[test]
fn tied_sharded_model_matches_transformers_logits() {
    check_fixture("tiny-qwen3-tied-sharded");
}

/// Every row of a padded batch (either side) gives the logits of its sequence alone.
#[test]
fn padded_batches_match_unpadded_logits() {
    let dir = fixture("tiny-qwen3");
    let (model, _) = load_hf(&dir, &device()).unwrap();
    let expected = read_expected(&dir);
    let vocab = model.config.vocab_size;
    let sequences: Vec<Vec<u32>> = expected.iter().map(|e| e.input_ids.clone()).collect();
    for side in [PadSide::Left, PadSide::Right] {
        let batch = TokenBatch::from_sequences(&sequences, 0, side).unwrap();
        let seq = batch.seq();
        let logits: Vec<f32> = model.forward(&batch).into_data().convert::<f32>().try_into_vec().unwrap();
        for (row, e) in expected.iter().enumerate() {
            let len = e.input_ids.len();
            let start = if side == PadSide::Left { seq - len } else { 0 };
            let got = &logits[(row * seq + start) * vocab..(row * seq + start + len) * vocab];
            let diff = max_abs_diff(got, &e.logits);
            assert!(diff < ATOL, "{side:?} row {row}: max |diff| = {diff}");
        }
    }
}

/// Greedy KV-cache decoding of the whole mixed-length batch picks the tokens HF `generate` picked.
#[test]
fn greedy_generation_matches_transformers() {
    for name in ["tiny-qwen3", "tiny-qwen3-tied-sharded"] {
        let dir = fixture(name);
        let (model, _) = load_hf(&dir, &device()).unwrap();
        let expected = read_expected(&dir);
        let prompts: Vec<Vec<u32>> = expected.iter().map(|e| e.input_ids.clone()).collect();
        let new_tokens = expected[0].greedy.len();
        assert!(new_tokens > 0);
        let out = generate(&model, &prompts, &vec![0; prompts.len()], &GenerationConfig::greedy(new_tokens), &NoStop)
            .unwrap();
        for (row, (g, e)) in out.iter().zip(&expected).enumerate() {
            assert_eq!(g.tokens, e.greedy, "{name} row {row}");
        }
    }
}
