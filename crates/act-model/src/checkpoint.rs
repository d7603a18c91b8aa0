//! Checkpoints: Hugging Face safetensors (single file or sharded with an index) and training checkpoints that
//! also hold optimizer state. Every file is written atomically (temporary file, fsync, rename).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use burn::module::{Module, ParamId};
use burn::optim::ModuleOptimizer;
use burn::prelude::*;
use burn::store::ModuleRecord;
use safetensors::SafeTensors;
use serde_json::{Value, json};

use crate::config::Qwen3Config;
use crate::error::ModelError;
use crate::qwen3::{ParamKind, Qwen3, WeightSource};
use crate::tensor_file::{f32_safetensors, f32_values};

/// File name of a single-file safetensors checkpoint.
pub const SAFETENSORS_FILE: &str = "model.safetensors";
/// File name of a sharded checkpoint's index.
pub const SAFETENSORS_INDEX_FILE: &str = "model.safetensors.index.json";
/// File name of the model config.
pub const CONFIG_FILE: &str = "config.json";

/// Named tensors read from the safetensors files of one checkpoint directory.
pub struct SafetensorsSource {
    dir: PathBuf,
    /// Tensor name -> shard file name.
    index: BTreeMap<String, String>,
    /// Shard file name -> its bytes (read on first use).
    shards: HashMap<String, Vec<u8>>,
    used: Vec<String>,
}

impl std::fmt::Debug for SafetensorsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SafetensorsSource").field("dir", &self.dir).field("tensors", &self.index.len()).finish()
    }
}

impl SafetensorsSource {
    /// Opens `dir`, which holds `model.safetensors` or `model.safetensors.index.json` plus its shards.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, ModelError> {
        let dir = dir.as_ref().to_path_buf();
        let index_path = dir.join(SAFETENSORS_INDEX_FILE);
        let single = dir.join(SAFETENSORS_FILE);
        let mut source =
            SafetensorsSource { dir: dir.clone(), index: BTreeMap::new(), shards: HashMap::new(), used: Vec::new() };
        if index_path.exists() {
            let text = std::fs::read_to_string(&index_path).map_err(|e| ModelError::io(&index_path, e))?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| ModelError::checkpoint(&index_path, format!("not JSON: {e}")))?;
            let map = value
                .get("weight_map")
                .and_then(Value::as_object)
                .ok_or_else(|| ModelError::checkpoint(&index_path, "no `weight_map` object"))?;
            for (name, file) in map {
                let file = file
                    .as_str()
                    .ok_or_else(|| ModelError::checkpoint(&index_path, format!("`{name}` maps to a non-string")))?;
                if file.contains('/') || file.contains("..") {
                    return Err(ModelError::checkpoint(
                        &index_path,
                        format!("shard name `{file}` leaves the directory"),
                    ));
                }
                source.index.insert(name.clone(), file.to_string());
            }
        } else if single.exists() {
            let bytes = std::fs::read(&single).map_err(|e| ModelError::io(&single, e))?;
            let names = SafeTensors::deserialize(&bytes)
                .map_err(|e| ModelError::checkpoint(&single, format!("bad safetensors: {e}")))?
                .names()
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>();
            for name in names {
                source.index.insert(name, SAFETENSORS_FILE.to_string());
            }
            source.shards.insert(SAFETENSORS_FILE.to_string(), bytes);
        } else {
            return Err(ModelError::checkpoint(
                &dir,
                format!("neither {SAFETENSORS_FILE} nor {SAFETENSORS_INDEX_FILE} found"),
            ));
        }
        Ok(source)
    }

    /// Names present in the checkpoint but not consumed by the model so far.
    pub fn unused(&self) -> Vec<String> {
        self.index.keys().filter(|k| !self.used.contains(k)).cloned().collect()
    }

    fn shard(&mut self, file: &str) -> Result<&Vec<u8>, ModelError> {
        if !self.shards.contains_key(file) {
            let path = self.dir.join(file);
            let bytes = std::fs::read(&path).map_err(|e| ModelError::io(&path, e))?;
            self.shards.insert(file.to_string(), bytes);
        }
        Ok(&self.shards[file])
    }
}

impl WeightSource for SafetensorsSource {
    fn take(&mut self, name: &str, shape: &[usize], _kind: ParamKind) -> Result<Vec<f32>, ModelError> {
        let file = self
            .index
            .get(name)
            .cloned()
            .ok_or_else(|| ModelError::checkpoint(&self.dir, format!("tensor `{name}` is missing")))?;
        let path = self.dir.join(&file);
        let bytes = self.shard(&file)?;
        let tensors = SafeTensors::deserialize(bytes)
            .map_err(|e| ModelError::checkpoint(&path, format!("bad safetensors: {e}")))?;
        let view = tensors.tensor(name).map_err(|e| ModelError::checkpoint(&path, format!("tensor `{name}`: {e}")))?;
        if view.shape() != shape {
            return Err(ModelError::checkpoint(
                &path,
                format!("tensor `{name}` has shape {:?}, the config implies {shape:?}", view.shape()),
            ));
        }
        let values = f32_values(&view, &path, name)?;
        self.used.push(name.to_string());
        Ok(values)
    }
}

/// What loading a checkpoint found besides the model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadReport {
    /// Tensors in the files the model did not use (e.g. a redundant `lm_head.weight` of a tied model).
    pub unused: Vec<String>,
}

/// Loads a Hugging Face Qwen3 checkpoint directory (`config.json` plus safetensors) onto `device`.
///
/// HF layout: parameter names as in transformers' `Qwen3ForCausalLM`, Linear weights `[out, in]`; f32, f16 and
/// bf16 tensors load (converted to f32). Saving writes f32, which transformers loads as is.
pub fn load_hf(dir: impl AsRef<Path>, device: &Device) -> Result<(Qwen3, LoadReport), ModelError> {
    let dir = dir.as_ref();
    let config = Qwen3Config::from_hf_file(dir.join(CONFIG_FILE))?;
    let mut source = SafetensorsSource::open(dir)?;
    let model = Qwen3::from_source(&config, &mut source, device)?;
    Ok((model, LoadReport { unused: source.unused() }))
}

/// Every parameter of `model` with its HF name, in HF layout, as f32 data.
pub fn hf_tensors(model: &Qwen3) -> Vec<(String, TensorData)> {
    fn linear(out: &mut Vec<(String, TensorData)>, prefix: &str, l: &burn::nn::Linear) {
        out.push((format!("{prefix}.weight"), l.weight.val().transpose().into_data().convert::<f32>()));
        if let Some(b) = &l.bias {
            out.push((format!("{prefix}.bias"), b.val().into_data().convert::<f32>()));
        }
    }
    fn norm(out: &mut Vec<(String, TensorData)>, name: &str, n: &burn::nn::RmsNorm) {
        out.push((name.to_string(), n.gamma.val().into_data().convert::<f32>()));
    }
    let mut out = Vec::new();
    out.push(("model.embed_tokens.weight".to_string(), model.embed_tokens.weight.val().into_data().convert::<f32>()));
    for (i, layer) in model.layers.iter().enumerate() {
        let p = format!("model.layers.{i}");
        let a = &layer.self_attn;
        linear(&mut out, &format!("{p}.self_attn.q_proj"), &a.q_proj);
        linear(&mut out, &format!("{p}.self_attn.k_proj"), &a.k_proj);
        linear(&mut out, &format!("{p}.self_attn.v_proj"), &a.v_proj);
        linear(&mut out, &format!("{p}.self_attn.o_proj"), &a.o_proj);
        norm(&mut out, &format!("{p}.self_attn.q_norm.weight"), &a.q_norm);
        norm(&mut out, &format!("{p}.self_attn.k_norm.weight"), &a.k_norm);
        linear(&mut out, &format!("{p}.mlp.gate_proj"), &layer.mlp.gate_proj);
        linear(&mut out, &format!("{p}.mlp.up_proj"), &layer.mlp.up_proj);
        linear(&mut out, &format!("{p}.mlp.down_proj"), &layer.mlp.down_proj);
        norm(&mut out, &format!("{p}.input_layernorm.weight"), &layer.input_layernorm);
        norm(&mut out, &format!("{p}.post_attention_layernorm.weight"), &layer.post_attention_layernorm);
    }
    norm(&mut out, "model.norm.weight", &model.norm);
    if let Some(head) = &model.lm_head {
        linear(&mut out, "lm_head", head);
    }
    out
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    act_core::atomic_write(path, bytes).map_err(|e| ModelError::io(path, e))
}

/// Saves `model` as a Hugging Face checkpoint: `config.json` and `model.safetensors` (f32) in `dir`.
///
/// With `max_shard_bytes`, the weights are split into `model-0000i-of-0000n.safetensors` files of at most that
/// size (a tensor larger than the limit gets a shard of its own) plus `model.safetensors.index.json`.
pub fn save_hf(model: &Qwen3, dir: impl AsRef<Path>, max_shard_bytes: Option<usize>) -> Result<(), ModelError> {
    let dir = dir.as_ref();
    std::fs::create_dir_all(dir).map_err(|e| ModelError::io(dir, e))?;
    let tensors = hf_tensors(model);
    match max_shard_bytes {
        None => {
            let path = dir.join(SAFETENSORS_FILE);
            write_atomic(&path, &f32_safetensors(&tensors, &path)?)?;
        }
        Some(limit) => {
            let mut shards: Vec<Vec<(String, TensorData)>> = vec![Vec::new()];
            let mut size = 0;
            for (name, data) in tensors {
                let bytes = data.as_bytes().len();
                if size + bytes > limit && !shards.last().expect("one shard").is_empty() {
                    shards.push(Vec::new());
                    size = 0;
                }
                size += bytes;
                shards.last_mut().expect("one shard").push((name, data));
            }
            let n = shards.len();
            let mut weight_map = serde_json::Map::new();
            let mut total = 0usize;
            for (i, shard) in shards.iter().enumerate() {
                let file = format!("model-{:05}-of-{n:05}.safetensors", i + 1);
                let path = dir.join(&file);
                for (name, data) in shard {
                    weight_map.insert(name.clone(), json!(file));
                    total += data.as_bytes().len();
                }
                write_atomic(&path, &f32_safetensors(shard, &path)?)?;
            }
            let index = json!({"metadata": {"total_size": total}, "weight_map": weight_map});
            let path = dir.join(SAFETENSORS_INDEX_FILE);
            write_atomic(&path, serde_json::to_string_pretty(&index).expect("json").as_bytes())?;
        }
    }
    let path = dir.join(CONFIG_FILE);
    write_atomic(&path, serde_json::to_string_pretty(&model.config.to_hf_json()).expect("json").as_bytes())
}

/// File names inside a training checkpoint directory.
const TRAIN_MODEL_FILE: &str = "model.bpk";
const TRAIN_OPTIMIZER_FILE: &str = "optimizer.bpk";
const TRAIN_STATE_FILE: &str = "trainer_state.json";
/// The LoRA settings of a checkpointed model with adapters ([`crate::lora::config_of`]); absent without.
const TRAIN_LORA_FILE: &str = "lora.json";

/// A training checkpoint: the model (with its parameter ids), the optimizer state keyed by those ids, and the
/// trainer's own JSON state (step, RNG state, schedule...), in one directory replaced atomically. A model with LoRA
/// adapters keeps them (and its frozen base) across a save and load, with `lora.json` saying their shape.
#[derive(Debug)]
pub struct TrainingCheckpoint {
    /// The model.
    pub model: Qwen3,
    /// Optimizer state as burnpack bytes; apply with [`TrainingCheckpoint::restore_optimizer`].
    pub optimizer_bytes: Vec<u8>,
    /// The trainer's state.
    pub trainer_state: Value,
}

impl TrainingCheckpoint {
    /// Saves `model`, `optimizer` and `trainer_state` to `dir` (plus `config.json`), replacing any previous
    /// checkpoint there only once everything is written.
    pub fn save(
        dir: impl AsRef<Path>,
        model: &Qwen3,
        optimizer: &ModuleOptimizer,
        trainer_state: &Value,
    ) -> Result<(), ModelError> {
        let dir = dir.as_ref();
        let staging = sibling(dir, "partial");
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|e| ModelError::io(&staging, e))?;
        }
        std::fs::create_dir_all(&staging).map_err(|e| ModelError::io(&staging, e))?;
        let record = model
            .clone()
            .into_record()
            .into_bytes()
            .map_err(|e| ModelError::checkpoint(dir, format!("serialising model: {e:?}")))?;
        write_atomic(&staging.join(TRAIN_MODEL_FILE), &record)?;
        let optim =
            optimizer.into_bytes().map_err(|e| ModelError::checkpoint(dir, format!("serialising optimizer: {e:?}")))?;
        write_atomic(&staging.join(TRAIN_OPTIMIZER_FILE), &optim)?;
        write_atomic(
            &staging.join(TRAIN_STATE_FILE),
            serde_json::to_string_pretty(trainer_state).expect("json").as_bytes(),
        )?;
        write_atomic(
            &staging.join(CONFIG_FILE),
            serde_json::to_string_pretty(&model.config.to_hf_json()).expect("json").as_bytes(),
        )?;
        if let Some(lora) = crate::lora::config_of(model)? {
            write_atomic(
                &staging.join(TRAIN_LORA_FILE),
                serde_json::to_string_pretty(&lora).expect("json").as_bytes(),
            )?;
        }
        let old = sibling(dir, "old");
        if dir.exists() {
            if old.exists() {
                std::fs::remove_dir_all(&old).map_err(|e| ModelError::io(&old, e))?;
            }
            std::fs::rename(dir, &old).map_err(|e| ModelError::io(dir, e))?;
        }
        std::fs::rename(&staging, dir).map_err(|e| ModelError::io(dir, e))?;
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(|e| ModelError::io(&old, e))?;
        }
        Ok(())
    }

    /// Loads a checkpoint written by [`TrainingCheckpoint::save`] onto `device`; parameter ids are restored, so the
    /// optimizer state applies to the loaded model.
    pub fn load(dir: impl AsRef<Path>, device: &Device) -> Result<Self, ModelError> {
        let dir = dir.as_ref();
        let config = Qwen3Config::from_hf_file(dir.join(CONFIG_FILE))?;
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| ModelError::io(&path, e))
        };
        let record = ModuleRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(read(TRAIN_MODEL_FILE)?))
            .map_err(|e| ModelError::checkpoint(dir, format!("model record: {e:?}")))?;
        let mut skeleton = Qwen3::from_source(&config, &mut ShapeOnly, device)?;
        let lora_path = dir.join(TRAIN_LORA_FILE);
        if lora_path.exists() {
            // The record holds the adapters' factors and ids: give the skeleton the same adapters to receive them.
            let lora: crate::lora::LoraConfig = serde_json::from_slice(&read(TRAIN_LORA_FILE)?)
                .map_err(|e| ModelError::checkpoint(&lora_path, format!("not LoRA settings: {e}")))?;
            skeleton = crate::lora::apply_lora(skeleton, &lora, 0)?;
        }
        let model = skeleton
            .try_load_record(record)
            .map_err(|e| ModelError::checkpoint(dir, format!("model record does not fit the config: {e:?}")))?;
        let trainer_state = serde_json::from_slice(&read(TRAIN_STATE_FILE)?)
            .map_err(|e| ModelError::checkpoint(&dir.join(TRAIN_STATE_FILE), format!("not JSON: {e}")))?;
        Ok(TrainingCheckpoint { model, optimizer_bytes: read(TRAIN_OPTIMIZER_FILE)?, trainer_state })
    }

    /// Applies the saved optimizer state to a freshly built optimizer of the same kind.
    pub fn restore_optimizer(&self, optimizer: ModuleOptimizer) -> Result<ModuleOptimizer, ModelError> {
        optimizer.from_bytes(burn::tensor::Bytes::from_bytes_vec(self.optimizer_bytes.clone())).map_err(|e| {
            ModelError::Checkpoint { path: PathBuf::from(TRAIN_OPTIMIZER_FILE), message: format!("{e:?}") }
        })
    }
}

/// Zeros of the right shapes: a skeleton the record then fills.
struct ShapeOnly;

impl WeightSource for ShapeOnly {
    fn take(&mut self, _name: &str, shape: &[usize], _kind: ParamKind) -> Result<Vec<f32>, ModelError> {
        Ok(vec![0.0; shape.iter().product()])
    }

    fn param_id(&mut self, _name: &str) -> ParamId {
        ParamId::new()
    }
}

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "checkpoint".into());
    dir.with_file_name(format!("{name}.{suffix}"))
}
