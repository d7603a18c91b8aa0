//! Trainer checkpoints: policy with optimizer state and trainer state (act-model's `TrainingCheckpoint`), the
//! frozen reference model when a KL term needs one, and the tokenizer, in one directory replaced atomically.

use std::path::{Path, PathBuf};

use act_model::{ChatTokenizer, Qwen3, TrainingCheckpoint, load_hf, save_hf};
use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::prelude::*;
use serde_json::Value;

use crate::error::GrpoError;

const POLICY_DIR: &str = "policy";
const REFERENCE_DIR: &str = "reference";
const TOKENIZER_FILE: &str = "tokenizer.json";

/// The directory name of the checkpoint after `step` steps: `checkpoint-000120`.
///
/// Layout: `policy/` (model, optimizer, `trainer_state.json`), `reference/` (HF safetensors; only with KL),
/// `tokenizer.json`.
pub fn checkpoint_name(step: usize) -> String {
    format!("checkpoint-{step:06}")
}

fn io(path: &Path, context: &str) -> impl FnOnce(std::io::Error) -> GrpoError {
    let context = format!("{context} {}", path.display());
    move |source| GrpoError::Io { context, source }
}

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "checkpoint".into());
    dir.with_file_name(format!("{name}.{suffix}"))
}

/// Writes a checkpoint to `dir`; readers see the previous checkpoint or the whole new one.
pub(crate) fn save(
    dir: &Path,
    model: &Qwen3,
    optimizer: &ModuleOptimizer,
    state: &Value,
    reference: Option<&Qwen3>,
    tokenizer: &ChatTokenizer,
) -> Result<(), GrpoError> {
    let staging = sibling(dir, "partial");
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging, "removing"))?;
    }
    std::fs::create_dir_all(&staging).map_err(io(&staging, "creating"))?;
    TrainingCheckpoint::save(staging.join(POLICY_DIR), model, optimizer, state)?;
    if let Some(reference) = reference {
        save_hf(reference, staging.join(REFERENCE_DIR), None)?;
    }
    tokenizer.save(staging.join(TOKENIZER_FILE))?;
    let old = sibling(dir, "old");
    if dir.exists() {
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(io(&old, "removing"))?;
        }
        std::fs::rename(dir, &old).map_err(io(dir, "moving aside"))?;
    }
    std::fs::rename(&staging, dir).map_err(io(dir, "renaming into"))?;
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(io(&old, "removing"))?;
    }
    Ok(())
}

/// A loaded checkpoint.
pub(crate) struct Loaded {
    pub policy: TrainingCheckpoint,
    pub reference: Option<Qwen3>,
}

/// Reads a checkpoint written by [`save`]; the policy goes to `device` (an autodiff device to train), the reference
/// is a non-autodiff snapshot.
pub(crate) fn load(dir: &Path, device: &Device) -> Result<Loaded, GrpoError> {
    if !dir.is_dir() {
        return Err(GrpoError::Checkpoint { path: dir.to_path_buf(), message: "no such checkpoint directory".into() });
    }
    let policy = TrainingCheckpoint::load(dir.join(POLICY_DIR), device)?;
    let reference_dir = dir.join(REFERENCE_DIR);
    let reference = if reference_dir.is_dir() { Some(load_hf(&reference_dir, device)?.0.valid()) } else { None };
    Ok(Loaded { policy, reference })
}

/// The tokenizer saved with a checkpoint.
pub fn load_tokenizer(dir: impl AsRef<Path>) -> Result<ChatTokenizer, GrpoError> {
    Ok(ChatTokenizer::from_file(dir.as_ref().join(TOKENIZER_FILE))?)
}
