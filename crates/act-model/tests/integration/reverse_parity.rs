//! A model saved by act-model loads in Hugging Face transformers with the same logits.
//!
//! Needs Python with torch, transformers and safetensors (`ACT_PYTHON`, default `python3`). Without them the
//! test prints "skipped" and passes, unless `ACT_REQUIRE_EXTERNAL=1`, where it fails.

use std::path::Path;
use std::process::Command;

use crate::common::{device, external_ready, logits_of, python, write_expected};
use act_model::{Qwen3, Qwen3Config, save_hf};

#[test]
fn transformers_reloads_a_saved_model_with_matching_logits() {
    if !external_ready("torch, transformers, safetensors") {
        return;
    }
    // The third model has a sliding window of 4 positions in its second layer (transformers' `layer_types`).
    for (tied, window) in [(false, None), (true, None), (false, Some(4))] {
        let mut config = Qwen3Config::tiny(80).with_tie_word_embeddings(tied);
        if let Some(window) = window {
            config = config.with_sliding_window(window, 1);
        }
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
            "tied={tied}, window={window:?}: transformers disagrees:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("tied={tied}, window={window:?}: {}", String::from_utf8_lossy(&out.stdout).trim());
    }
}
