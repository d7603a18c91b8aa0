//! LoRA adapters on a [`Qwen3`], saved and loaded in PEFT's layout.
//!
//! [`apply_lora`] attaches a rank-`r` adapter to every projection named in [`LoraConfig::target_modules`] (PEFT's
//! names: `q_proj`, `k_proj`, `v_proj`, `o_proj`, `gate_proj`, `up_proj`, `down_proj`) and freezes every other
//! parameter, so an optimizer built over the model trains (and keeps state for) the adapters only. The adapters
//! are Burn's own [`LoraAdapter`] reparameterization: an adapted weight reads as `W + (alpha / r) * A B`, so
//! generation, the trainers and [`save_hf`](crate::save_hf) work unchanged (a saved HF checkpoint is the merged
//! model), while the model's forward pass (`project` in `qwen3.rs`) computes `x W + (alpha / r) (x A) B` from
//! the factors, never the dense sum, so training keeps no weight-sized activation or gradient per adapter. `A` starts as PEFT starts it (uniform in `±1/sqrt(in_features)`, drawn from the seed),
//! `B` at zero, so a freshly adapted model computes exactly what its base computes.
//!
//! [`save_peft_adapter`] writes `adapter_config.json` and `adapter_model.safetensors` as PEFT names them, so
//! `PeftModel.from_pretrained(base, dir)` loads the adapter; [`load_peft_adapter`] reads that layout back onto a
//! base model; [`merge_lora`] folds the adapters into plain weights.
//!
//! ```
//! use act_model::lora::{LoraConfig, apply_lora, merge_lora};
//! use act_model::{Qwen3, Qwen3Config};
//! use burn::prelude::*;
//!
//! let base = Qwen3::init(&Qwen3Config::micro(64), 0, &Device::flex().autodiff())?;
//! let config = LoraConfig::new(4, 8.0);
//! let adapted = apply_lora(base, &config, 1)?;
//! assert_eq!(act_model::lora::adapter_count(&adapted), 7 * 2); // 7 projections x 2 layers
//! let merged = merge_lora(adapted);
//! assert_eq!(act_model::lora::adapter_count(&merged), 0);
//! # Ok::<(), act_model::ModelError>(())
//! ```
//!
//! Not yet supported: dropout on the adapter's input (`lora_dropout` must be 0 to train; loading ignores it, as
//! inference does), rsLoRA, DoRA and adapters on the embedding or LM head.

use std::collections::BTreeMap;
use std::path::Path;

use burn::module::{LoraAdapter, Module, Param, Reparameterizer};
use burn::nn::Linear;
use burn::prelude::*;
use rand::RngExt;
use safetensors::SafeTensors;
use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::qwen3::Qwen3;
use crate::tensor_file::{f32_safetensors, f32_values};

/// PEFT's adapter config file name.
pub const ADAPTER_CONFIG_FILE: &str = "adapter_config.json";
/// PEFT's adapter weights file name.
pub const ADAPTER_WEIGHTS_FILE: &str = "adapter_model.safetensors";

/// The projections a Qwen3 decoder layer has, by PEFT's names.
pub const PROJECTIONS: [&str; 7] = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];

/// LoRA settings, with PEFT's field names (the subset of `adapter_config.json` that decides the weights).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoraConfig {
    /// Rank of each adapter.
    pub r: usize,
    /// Scaling numerator: the update is `(lora_alpha / r) * B A`.
    pub lora_alpha: f64,
    /// Dropout on the adapter's input during training; only 0 is supported for training yet.
    #[serde(default)]
    pub lora_dropout: f64,
    /// The adapted projections ([`PROJECTIONS`] names).
    pub target_modules: Vec<String>,
}

impl Default for LoraConfig {
    /// PEFT's defaults: rank 8, `lora_alpha` 8, no dropout; here on all seven projections (PEFT has no default
    /// target for an architecture it does not list).
    fn default() -> Self {
        LoraConfig::new(8, 8.0)
    }
}

impl LoraConfig {
    /// Rank `r`, scale numerator `lora_alpha`, on all seven projections (PEFT's "all-linear" for Qwen3 minus the
    /// LM head), no dropout.
    pub fn new(r: usize, lora_alpha: f64) -> Self {
        LoraConfig {
            r,
            lora_alpha,
            lora_dropout: 0.0,
            target_modules: PROJECTIONS.iter().map(|p| p.to_string()).collect(),
        }
    }

    /// Only these projections.
    #[must_use]
    pub fn with_target_modules<S: Into<String>>(mut self, modules: impl IntoIterator<Item = S>) -> Self {
        self.target_modules = modules.into_iter().map(Into::into).collect();
        self
    }

    /// The update's scale, `lora_alpha / r`.
    pub fn scale(&self) -> f64 {
        self.lora_alpha / self.r as f64
    }

    /// Checks the settings; `training` also rejects what training does not support yet (dropout).
    pub fn validate(&self, training: bool) -> Result<(), ModelError> {
        let bad = |msg: String| Err(ModelError::Config(format!("LoRA: {msg}")));
        if self.r == 0 {
            return bad("r must be positive".into());
        }
        if !(self.lora_alpha.is_finite() && self.lora_alpha > 0.0) {
            return bad(format!("lora_alpha must be positive, got {}", self.lora_alpha));
        }
        if self.target_modules.is_empty() {
            return bad("target_modules is empty".into());
        }
        if let Some(unknown) = self.target_modules.iter().find(|m| !PROJECTIONS.contains(&m.as_str())) {
            return bad(format!("unknown target module `{unknown}` (expected some of {})", PROJECTIONS.join(", ")));
        }
        if !(0.0..1.0).contains(&self.lora_dropout) {
            return bad(format!("lora_dropout must be in [0, 1), got {}", self.lora_dropout));
        }
        if training && self.lora_dropout != 0.0 {
            return bad(format!("lora_dropout {} is not supported for training yet (use 0)", self.lora_dropout));
        }
        Ok(())
    }
}

/// The projection a Burn parameter path names, when it is an adapted projection's weight
/// (`layers.3.self_attn.q_proj.weight` -> `q_proj`).
fn projection_of(path: &str) -> Option<&str> {
    let mut parts = path.rsplit('.');
    let (last, module) = (parts.next()?, parts.next()?);
    (last == "weight" && path.starts_with("layers.") && PROJECTIONS.contains(&module)).then_some(module)
}

/// Freezes every parameter and attaches `make(d_in, d_out, device)`'s adapter to each targeted projection's weight.
struct Attach<'a, F> {
    targets: &'a [String],
    make: F,
}

impl<F: FnMut(usize, usize, &Device) -> Option<LoraAdapter>> Reparameterizer for Attach<'_, F> {
    type Reparam = LoraAdapter;

    fn reparameterize<const D: usize>(
        &mut self,
        path: &str,
        param: Param<Tensor<D>>,
    ) -> (Param<Tensor<D>>, Option<LoraAdapter>) {
        let base = param.set_require_grad(false);
        let targeted = projection_of(path).is_some_and(|m| self.targets.iter().any(|t| t == m));
        if D != 2 || !targeted {
            return (base, None);
        }
        let tensor = base.base();
        let dims = tensor.dims();
        let adapter = (self.make)(dims[0], dims[1], &tensor.device());
        (base, adapter)
    }
}

/// `model` with LoRA adapters on `config`'s projections, every base parameter frozen; `A` is drawn from `seed`.
///
/// Errors when `config` is invalid for training or `model` already has adapters.
pub fn apply_lora(model: Qwen3, config: &LoraConfig, seed: u64) -> Result<Qwen3, ModelError> {
    config.validate(true)?;
    if adapter_count(&model) > 0 {
        return Err(ModelError::Config("LoRA: the model already has adapters (merge them first)".into()));
    }
    let mut rng = act_core::rng_from_seed(seed);
    let (r, scale) = (config.r, config.scale());
    Ok(model.apply_reparameterization(Attach {
        targets: &config.target_modules,
        make: |d_in: usize, d_out: usize, device: &Device| {
            // PEFT's default: kaiming_uniform_(a = sqrt(5)) on A, whose bound is 1 / sqrt(in_features); B = 0.
            let bound = 1.0 / (d_in as f32).sqrt();
            let a: Vec<f32> = (0..d_in * r).map(|_| (rng.random::<f32>() * 2.0 - 1.0) * bound).collect();
            Some(LoraAdapter {
                a: Param::from_tensor(Tensor::from_data(TensorData::new(a, [d_in, r]), device)),
                b: Param::from_tensor(Tensor::zeros([r, d_out], device)),
                scale,
            })
        },
    }))
}

/// Folds every adapter into its weight (`W + scale * A B`) and makes all parameters trainable again: a plain
/// model with the adapted model's outputs. A half-precision base with f32 factors merges in f32 and is cast back to
/// the base's dtype.
pub fn merge_lora(model: Qwen3) -> Qwen3 {
    let dtype = model.float_dtype();
    let merged = model.materialize().unfreeze();
    if dtype == burn::tensor::DType::F32 { merged } else { merged.cast_float_params(dtype) }
}

/// The named projections of `model`, in HF names (`model.layers.0.self_attn.q_proj`), layer by layer.
fn projections(model: &Qwen3) -> Vec<(String, &Linear)> {
    let mut out = Vec::new();
    for (i, layer) in model.layers.iter().enumerate() {
        out.extend(layer.projections().into_iter().map(|(name, l)| (format!("model.layers.{i}.{name}"), l)));
    }
    out
}

/// The LoRA settings `model`'s adapters were made with (rank and scale from the factors, targets from which
/// projections carry one; dropout 0), or `None` without adapters. Errors when the adapters disagree in rank or
/// scale, or the targeted projections differ between layers (no [`LoraConfig`] describes that).
pub fn config_of(model: &Qwen3) -> Result<Option<LoraConfig>, ModelError> {
    let mut found: Option<(usize, f64)> = None;
    let mut targets: Vec<String> = Vec::new();
    let mut per_layer: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, linear) in projections(model) {
        let Some(adapter) = linear.weight.reparameterization::<LoraAdapter>() else { continue };
        let r = adapter.a.val().dims()[1];
        match found {
            None => found = Some((r, adapter.scale)),
            Some(seen) if seen != (r, adapter.scale) => {
                let scale = adapter.scale;
                return Err(ModelError::Config(format!(
                    "LoRA: `{name}` has rank {r} and scale {scale}, others {seen:?}"
                )));
            }
            Some(_) => {}
        }
        // `model.layers.{i}.{self_attn|mlp}.{projection}`
        let parts: Vec<&str> = name.split('.').collect();
        let (layer, projection) = (parts[2], parts[4]);
        per_layer.entry(layer.to_owned()).or_default().push(projection.to_owned());
        if !targets.iter().any(|t| t == projection) {
            targets.push(projection.to_owned());
        }
    }
    let Some((r, scale)) = found else { return Ok(None) };
    if per_layer.len() != model.layers.len() || per_layer.values().any(|p| p.len() != targets.len()) {
        return Err(ModelError::Config("LoRA: the layers carry adapters on different projections".into()));
    }
    Ok(Some(LoraConfig { r, lora_alpha: scale * r as f64, lora_dropout: 0.0, target_modules: targets }))
}

/// How many projections of `model` carry an adapter.
pub fn adapter_count(model: &Qwen3) -> usize {
    projections(model).iter().filter(|(_, l)| l.weight.reparameterization::<LoraAdapter>().is_some()).count()
}

/// The adapters of `model` as PEFT names and lays them out: `…q_proj.lora_A.weight` `[r, in]` and
/// `…q_proj.lora_B.weight` `[out, r]`, prefixed `base_model.model.`.
pub fn peft_tensors(model: &Qwen3) -> Vec<(String, TensorData)> {
    let mut out = Vec::new();
    for (name, linear) in projections(model) {
        if let Some(adapter) = linear.weight.reparameterization::<LoraAdapter>() {
            // Burn's factors multiply row vectors (x A B, A [in, r], B [r, out]); PEFT's are nn.Linear weights.
            let a = adapter.a.val().transpose().into_data().convert::<f32>();
            let b = adapter.b.val().transpose().into_data().convert::<f32>();
            out.push((format!("base_model.model.{name}.lora_A.weight"), a));
            out.push((format!("base_model.model.{name}.lora_B.weight"), b));
        }
    }
    out
}

/// Writes `model`'s adapters in PEFT's layout to `dir`: `adapter_config.json` (naming `base_model` as
/// `base_model_name_or_path`) and `adapter_model.safetensors` (f32), each atomically.
pub fn save_peft_adapter(
    model: &Qwen3,
    config: &LoraConfig,
    base_model: &str,
    dir: impl AsRef<Path>,
) -> Result<(), ModelError> {
    let dir = dir.as_ref();
    let tensors = peft_tensors(model);
    if tensors.is_empty() {
        return Err(ModelError::Config("LoRA: the model has no adapters to save".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| ModelError::io(dir, e))?;
    let path = dir.join(ADAPTER_WEIGHTS_FILE);
    let bytes = f32_safetensors(&tensors, &path)?;
    act_core::atomic_write(&path, &bytes).map_err(|e| ModelError::io(&path, e))?;
    let json = serde_json::json!({
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_model,
        "r": config.r,
        "lora_alpha": config.lora_alpha,
        "lora_dropout": config.lora_dropout,
        "target_modules": config.target_modules,
        "bias": "none",
        "fan_in_fan_out": false,
        "use_rslora": false,
        "use_dora": false,
        "inference_mode": true,
        "init_lora_weights": true,
        "modules_to_save": null,
    });
    let path = dir.join(ADAPTER_CONFIG_FILE);
    let text = serde_json::to_string_pretty(&json).expect("json");
    act_core::atomic_write(&path, text.as_bytes()).map_err(|e| ModelError::io(&path, e))
}

/// Reads the LoRA settings of a PEFT adapter directory, refusing what changes the arithmetic and is not
/// supported (rsLoRA, DoRA, trained biases, `fan_in_fan_out`).
pub fn read_peft_config(dir: impl AsRef<Path>) -> Result<LoraConfig, ModelError> {
    let path = dir.as_ref().join(ADAPTER_CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| ModelError::io(&path, e))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ModelError::checkpoint(&path, format!("not JSON: {e}")))?;
    let flag = |key: &str| value.get(key).and_then(serde_json::Value::as_bool).unwrap_or(false);
    for key in ["use_rslora", "use_dora", "fan_in_fan_out"] {
        if flag(key) {
            return Err(ModelError::checkpoint(&path, format!("`{key}: true` is not supported")));
        }
    }
    if let Some(peft_type) = value.get("peft_type").and_then(serde_json::Value::as_str)
        && peft_type != "LORA"
    {
        return Err(ModelError::checkpoint(&path, format!("peft_type `{peft_type}` is not LORA")));
    }
    if let Some(bias) = value.get("bias").and_then(serde_json::Value::as_str)
        && bias != "none"
    {
        return Err(ModelError::checkpoint(&path, format!("bias `{bias}` is not supported (only \"none\")")));
    }
    let config: LoraConfig =
        serde_json::from_value(value).map_err(|e| ModelError::checkpoint(&path, format!("field: {e}")))?;
    config.validate(false).map_err(|e| ModelError::checkpoint(&path, e.to_string()))?;
    Ok(config)
}

/// Attaches the PEFT adapter saved in `dir` to `base` (a model without adapters): the adapter's config decides
/// the targets, its tensors the factors. Every base parameter ends frozen, as after [`apply_lora`]. Errors name the
/// file and the tensor: a missing or mis-shaped factor, or a factor the config does not explain.
pub fn load_peft_adapter(base: Qwen3, dir: impl AsRef<Path>) -> Result<Qwen3, ModelError> {
    if adapter_count(&base) > 0 {
        return Err(ModelError::Config("LoRA: the base model already has adapters".into()));
    }
    let dir = dir.as_ref();
    let config = read_peft_config(dir)?;
    let path = dir.join(ADAPTER_WEIGHTS_FILE);
    let bytes = std::fs::read(&path).map_err(|e| ModelError::io(&path, e))?;
    let file =
        SafeTensors::deserialize(&bytes).map_err(|e| ModelError::checkpoint(&path, format!("bad safetensors: {e}")))?;
    let mut factors: BTreeMap<String, (Vec<usize>, Vec<f32>)> = BTreeMap::new();
    for (name, view) in file.tensors() {
        let values = f32_values(&view, &path, &name)?;
        // PEFT may save `…lora_A.weight` or, with a named adapter, `…lora_A.default.weight`.
        factors.insert(name.replace(".default.weight", ".weight"), (view.shape().to_vec(), values));
    }
    let expected: Vec<(String, usize, usize)> = projections(&base)
        .into_iter()
        .filter(|(name, _)| config.target_modules.iter().any(|t| name.ends_with(&format!(".{t}"))))
        .map(|(name, l)| {
            let [d_in, d_out] = l.weight.val().dims();
            (name, d_in, d_out)
        })
        .collect();
    let mut adapters = Vec::with_capacity(expected.len());
    for (name, d_in, d_out) in &expected {
        let mut take = |factor: &str, shape: [usize; 2]| -> Result<Vec<f32>, ModelError> {
            let key = format!("base_model.model.{name}.{factor}.weight");
            let (found, values) = factors
                .remove(&key)
                .ok_or_else(|| ModelError::checkpoint(&path, format!("tensor `{key}` is missing")))?;
            if found != shape {
                return Err(ModelError::checkpoint(
                    &path,
                    format!("tensor `{key}` has shape {found:?}, the model and config imply {shape:?}"),
                ));
            }
            Ok(values)
        };
        let a = take("lora_A", [config.r, *d_in])?;
        let b = take("lora_B", [*d_out, config.r])?;
        adapters.push((a, b));
    }
    if let Some(extra) = factors.keys().next() {
        return Err(ModelError::checkpoint(&path, format!("tensor `{extra}` matches no target module of the config")));
    }
    let (r, scale) = (config.r, config.scale());
    let mut loaded = adapters.into_iter();
    let mut short = false;
    let model = base.apply_reparameterization(Attach {
        targets: &config.target_modules,
        make: |d_in: usize, d_out: usize, device: &Device| {
            let Some((a, b)) = loaded.next() else {
                short = true;
                return None;
            };
            // PEFT's A is [r, in] and B [out, r]; Burn's factors are their transposes.
            let a = Tensor::<2>::from_data(TensorData::new(a, [r, d_in]), device).transpose();
            let b = Tensor::<2>::from_data(TensorData::new(b, [d_out, r]), device).transpose();
            Some(LoraAdapter { a: Param::from_tensor(a), b: Param::from_tensor(b), scale })
        },
    });
    if short {
        return Err(ModelError::checkpoint(&path, "fewer factors than adapted projections"));
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Qwen3Config;

    #[test]
    fn projection_paths_are_recognised() {
        assert_eq!(projection_of("layers.3.self_attn.q_proj.weight"), Some("q_proj"));
        assert_eq!(projection_of("layers.0.mlp.down_proj.weight"), Some("down_proj"));
        assert_eq!(projection_of("layers.0.mlp.down_proj.bias"), None);
        assert_eq!(projection_of("embed_tokens.weight"), None);
        assert_eq!(projection_of("lm_head.weight"), None);
    }

    #[test]
    fn settings_are_checked() {
        assert!(LoraConfig::new(4, 8.0).validate(true).is_ok());
        assert!(LoraConfig::new(0, 8.0).validate(true).unwrap_err().to_string().contains("r must be positive"));
        let unknown = LoraConfig::new(4, 8.0).with_target_modules(["qkv"]);
        assert!(unknown.validate(true).unwrap_err().to_string().contains("unknown target module `qkv`"));
        let dropout = LoraConfig { lora_dropout: 0.05, ..LoraConfig::new(4, 8.0) };
        assert!(dropout.validate(false).is_ok(), "loading ignores dropout");
        assert!(dropout.validate(true).unwrap_err().to_string().contains("lora_dropout"));
    }

    #[test]
    fn only_the_targets_get_adapters_and_the_draw_is_seeded() {
        let device = Device::flex();
        let config = LoraConfig::new(2, 4.0).with_target_modules(["q_proj", "down_proj"]);
        let model = || Qwen3::init(&Qwen3Config::micro(40), 3, &device).unwrap();
        let adapted = apply_lora(model(), &config, 9).unwrap();
        assert_eq!(adapter_count(&adapted), 2 * 2);
        let names: Vec<String> = peft_tensors(&adapted).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names[0], "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
        assert!(names.iter().all(|n| n.contains("q_proj") || n.contains("down_proj")));
        let again = apply_lora(model(), &config, 9).unwrap();
        let other = apply_lora(model(), &config, 10).unwrap();
        let values = |m: &Qwen3| -> Vec<Vec<f32>> {
            peft_tensors(m).into_iter().map(|(_, d)| d.try_into_vec::<f32>().unwrap()).collect()
        };
        assert_eq!(values(&adapted), values(&again));
        assert_ne!(values(&adapted), values(&other));
        assert_eq!(config_of(&adapted).unwrap(), Some(config.clone()));
        assert_eq!(config_of(&model()).unwrap(), None);
        assert!(apply_lora(adapted, &config, 9).unwrap_err().to_string().contains("already has adapters"));
    }
}
