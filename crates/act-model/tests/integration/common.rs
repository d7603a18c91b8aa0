//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use act_model::Qwen3;
use burn::prelude::*;
use safetensors::{Dtype, SafeTensors};

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// One prompt of an `expected.safetensors` file.
pub struct Expected {
    pub input_ids: Vec<u32>,
    /// `[len, vocab]` row-major.
    pub logits: Vec<f32>,
    /// Greedy continuation (HF `generate`), when present.
    pub greedy: Vec<u32>,
}

fn ints(view: &safetensors::tensor::TensorView<'_>) -> Vec<u32> {
    assert_eq!(view.dtype(), Dtype::I64);
    view.data().chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap()) as u32).collect()
}

/// Reads every prompt of `dir/expected.safetensors`.
pub fn read_expected(dir: &Path) -> Vec<Expected> {
    let bytes = std::fs::read(dir.join("expected.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut out = Vec::new();
    for i in 0.. {
        let Ok(ids) = st.tensor(&format!("input_ids.{i}")) else { break };
        let logits = st.tensor(&format!("logits.{i}")).unwrap();
        assert_eq!(logits.dtype(), Dtype::F32);
        let logits = logits.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        let greedy = st.tensor(&format!("greedy.{i}")).map(|v| ints(&v)).unwrap_or_default();
        out.push(Expected { input_ids: ints(&ids), logits, greedy });
    }
    out
}

/// Logits `[len, vocab]` of one unpadded sequence.
pub fn logits_of(model: &Qwen3, ids: &[u32]) -> Vec<f32> {
    let batch = act_model::TokenBatch::from_sequences(&[ids.to_vec()], 0, act_model::PadSide::Right).unwrap();
    model.forward(&batch).into_data().convert::<f32>().try_into_vec().unwrap()
}

/// Largest absolute difference.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// The CPU device.
pub fn device() -> Device {
    Device::flex()
}

/// Whether two log-prob lists agree to 1e-4: the same tokens computed through different batch layouts (a KV cache
/// or not, stored prefixes, other batch mates) differ in the last bits of their floating-point sums.
fn log_probs_agree(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4)
}

/// The same tokens, finish reasons and (to 1e-4) log-probs, row by row.
pub fn assert_same_generations(a: &[act_model::Generation], b: &[act_model::Generation], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: row count");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!((&x.tokens, x.finish), (&y.tokens, y.finish), "{what}: row {i}");
        assert!(log_probs_agree(&x.log_probs, &y.log_probs), "{what}: row {i}: {:?} vs {:?}", x.log_probs, y.log_probs);
    }
}

/// [`assert_same_generations`] for a policy's completions (prompt ids and text included).
pub fn assert_same_completions(a: &[act_model::Completion], b: &[act_model::Completion], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: row count");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(
            (&x.prompt_ids, &x.completion_ids, &x.text, x.finish),
            (&y.prompt_ids, &y.completion_ids, &y.text, y.finish),
            "{what}: row {i}"
        );
        assert!(log_probs_agree(&x.log_probs, &y.log_probs), "{what}: row {i}: {:?} vs {:?}", x.log_probs, y.log_probs);
    }
}
