//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use act_model::Qwen3;
use burn::prelude::*;
use std::process::Command;

use safetensors::tensor::TensorView;
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

/// The Python the parity scripts run with (`ACT_PYTHON`, default `python3`).
pub fn python() -> String {
    std::env::var("ACT_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Whether that Python imports `modules` (comma-separated, as in an `import` line).
pub fn python_ready(modules: &str) -> Result<(), String> {
    let out = Command::new(python())
        .args(["-c", &format!("import {modules}")])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{} lacks {modules}: {}", python(), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Writes `expected.safetensors` in `dir`: each prompt's ids and logits, as the parity script reads them.
pub fn write_expected(dir: &Path, prompts: &[Vec<u32>], logits: &[Vec<f32>]) {
    let mut owned: Vec<(String, Vec<u8>, Vec<usize>, Dtype)> = Vec::new();
    for (i, (p, l)) in prompts.iter().zip(logits).enumerate() {
        let ids: Vec<u8> = p.iter().flat_map(|&t| (t as i64).to_le_bytes()).collect();
        owned.push((format!("input_ids.{i}"), ids, vec![p.len()], Dtype::I64));
        let lb: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
        owned.push((format!("logits.{i}"), lb, vec![p.len(), l.len() / p.len()], Dtype::F32));
    }
    let views: Vec<(String, TensorView<'_>)> =
        owned.iter().map(|(n, b, s, d)| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap())).collect();
    safetensors::tensor::serialize_to_file(views, None, &dir.join("expected.safetensors")).unwrap();
}

/// Whether the tests' Python imports `modules`: `false` (with "skipped" on stderr) when it does not, a panic instead
/// when `ACT_REQUIRE_EXTERNAL=1` (the test command sets it, so a missing package fails the run).
pub fn external_ready(modules: &str) -> bool {
    match python_ready(modules) {
        Ok(()) => true,
        Err(why) if std::env::var("ACT_REQUIRE_EXTERNAL").as_deref() == Ok("1") => {
            panic!("ACT_REQUIRE_EXTERNAL=1 but {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }
}
