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
