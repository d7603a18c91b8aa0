//! The libtorch backend passes the transformers parity test (only with `--features tch`).
#![cfg(feature = "tch")]

use crate::common::{fixture, logits_of, max_abs_diff, read_expected};
use act_model::{BackendKind, load_hf};

#[test]
fn tch_backend_matches_transformers_logits() {
    let device = BackendKind::Tch.device().unwrap();
    for name in ["tiny-qwen3", "tiny-qwen3-tied-sharded"] {
        let dir = fixture(name);
        let (model, _) = load_hf(&dir, &device).unwrap();
        for (i, e) in read_expected(&dir).iter().enumerate() {
            let diff = max_abs_diff(&logits_of(&model, &e.input_ids), &e.logits);
            assert!(diff < 1e-4, "{name} prompt {i}: max |diff| = {diff}");
        }
    }
}
