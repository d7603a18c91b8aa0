//! Half-precision weights and activations (`Qwen3::with_float_dtype`): against the f32 logits of Hugging Face
//! transformers on the parity fixtures, and against transformers running the same fixture in the same dtype.

use std::path::Path;
use std::process::Command;

use burn::tensor::DType;

use crate::common::{device, external_ready, fixture, logits_of, max_abs_diff, python, read_expected, write_expected};
use act_model::load_hf;

/// The largest |Δ logit| of the fixture `name` cast to `dtype` against transformers' f32 logits, and the largest
/// |logit|.
fn against_f32(name: &str, dtype: DType) -> (f32, f32) {
    let dir = fixture(name);
    let (model, _) = load_hf(&dir, &device()).unwrap();
    let model = model.with_float_dtype(dtype).unwrap();
    assert_eq!(model.float_dtype(), dtype);
    let (mut worst, mut scale) = (0f32, 0f32);
    for e in read_expected(&dir) {
        worst = worst.max(max_abs_diff(&logits_of(&model, &e.input_ids), &e.logits));
        scale = scale.max(e.logits.iter().fold(0f32, |m, x| m.max(x.abs())));
    }
    eprintln!("{name} {dtype:?}: max |Δ logit| {worst} against f32 (max |logit| {scale})");
    (worst, scale)
}

/// Measured 0.068 and 0.106 (bf16), 0.012 and 0.011 (f16) on logits up to 4.7: bf16 keeps 8 bits of mantissa, f16
/// 11. The bounds are about 1.5 times the measurement.
#[test]
fn half_precision_logits_stay_within_a_stated_tolerance_of_f32() {
    for name in ["tiny-qwen3", "tiny-qwen3-tied-sharded"] {
        let (bf16, scale) = against_f32(name, DType::BF16);
        assert!(bf16 < 0.15 && bf16 > 1e-4, "{name}: bf16 {bf16} (a cast that did nothing would be ~1e-6)");
        let (f16, _) = against_f32(name, DType::F16);
        assert!(f16 < 0.02 && f16 < bf16, "{name}: f16 {f16}");
        let (f32_back, _) = against_f32(name, DType::F32);
        assert!(f32_back < 1e-4, "{name}: f32 {f32_back}");
        assert!(scale > 1.0);
    }
}

#[test]
fn a_cast_model_keeps_its_outputs_in_f32_and_refuses_other_dtypes() {
    let (model, _) = load_hf(fixture("tiny-qwen3"), &device()).unwrap();
    assert_eq!(model.float_dtype(), DType::F32);
    let half = model.clone().with_float_dtype(DType::BF16).unwrap();
    let batch = act_model::TokenBatch::from_sequences(&[vec![1, 2, 3]], 0, act_model::PadSide::Right).unwrap();
    assert_eq!(half.forward(&batch).dtype(), DType::F32, "logits come back in f32");
    let err = model.with_float_dtype(DType::I32).unwrap_err().to_string();
    assert!(err.contains("f32, bf16 or f16"), "{err}");
}

/// Our bf16 forward against transformers loading the same checkpoint in bf16 (`hf_parity.py check --dtype`).
#[test]
fn bf16_logits_match_transformers_in_bf16() {
    if !external_ready("torch, transformers, safetensors") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = fixture("tiny-qwen3");
    for file in ["config.json", "model.safetensors"] {
        std::fs::copy(source.join(file), dir.path().join(file)).unwrap();
    }
    let (model, _) = load_hf(&source, &device()).unwrap();
    let model = model.with_float_dtype(DType::BF16).unwrap();
    let prompts: Vec<Vec<u32>> = read_expected(&source).into_iter().map(|e| e.input_ids).collect();
    let logits: Vec<Vec<f32>> = prompts.iter().map(|p| logits_of(&model, p)).collect();
    write_expected(dir.path(), &prompts, &logits);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hf_parity.py");
    let out = Command::new(python())
        .arg(&script)
        .args(["check", "--dtype", "bfloat16", "--atol", "0.15"])
        .arg(dir.path())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "transformers in bf16 disagrees:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", report.trim());
}
