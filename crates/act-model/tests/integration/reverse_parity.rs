//! A model saved by act-model loads in Hugging Face transformers with the same logits.
//!
//! Needs Python with torch, transformers and safetensors (`ACT_PYTHON`, default `python3`). Without them the
//! test prints "skipped" and passes, unless `ACT_REQUIRE_EXTERNAL=1`, where it fails.

use std::path::Path;
use std::process::Command;

use crate::common::{device, logits_of};
use act_model::{Qwen3, Qwen3Config, save_hf};
use safetensors::Dtype;
use safetensors::tensor::TensorView;

fn python() -> String {
    std::env::var("ACT_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn python_ready() -> Result<(), String> {
    let out = Command::new(python())
        .args(["-c", "import torch, transformers, safetensors"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} lacks torch/transformers/safetensors: {}",
            python(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn write_expected(dir: &Path, prompts: &[Vec<u32>], logits: &[Vec<f32>]) {
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

#[test]
fn transformers_reloads_a_saved_model_with_matching_logits() {
    if let Err(why) = python_ready() {
        if std::env::var("ACT_REQUIRE_EXTERNAL").as_deref() == Ok("1") {
            panic!("ACT_REQUIRE_EXTERNAL=1 but {why}");
        }
        eprintln!("skipped: {why}");
        return;
    }
    for tied in [false, true] {
        let mut config = Qwen3Config::tiny(80).with_tie_word_embeddings(tied);
        config.initializer_range = 0.2;
        config.rope_theta = 1_000_000.0;
        let model = Qwen3::init(&config, 21, &device()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        save_hf(&model, dir.path(), if tied { Some(30_000) } else { None }).unwrap();
        let prompts = vec![vec![1, 2, 3, 70, 5], vec![9], vec![40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50]];
        let logits: Vec<Vec<f32>> = prompts.iter().map(|p| logits_of(&model, p)).collect();
        write_expected(dir.path(), &prompts, &logits);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hf_parity.py");
        let out = Command::new(python()).arg(&script).arg("check").arg(dir.path()).output().unwrap();
        assert!(
            out.status.success(),
            "tied={tied}: transformers disagrees:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("tied={tied}: {}", String::from_utf8_lossy(&out.stdout).trim());
    }
}
