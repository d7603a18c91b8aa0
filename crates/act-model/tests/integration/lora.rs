//! LoRA: a fresh adapter changes nothing, training moves the adapters only, merging keeps the outputs, and the
//! PEFT layout round-trips here and loads in Hugging Face PEFT with the same logits.

use std::path::Path;
use std::process::Command;

use act_model::lora::{LoraConfig, adapter_count, apply_lora, load_peft_adapter, merge_lora, save_peft_adapter};
use act_model::{PadSide, Qwen3, Qwen3Config, TokenBatch, TrainingCheckpoint, masked_nll, save_hf};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;

use crate::common::{external_ready, logits_of, python, write_expected};

const PROMPTS: [&[u32]; 3] = [&[1, 2, 3, 40, 5], &[9], &[20, 21, 22, 23, 24, 25, 26, 27]];

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn all_logits(model: &Qwen3) -> Vec<f32> {
    PROMPTS.iter().flat_map(|p| logits_of(model, p)).collect()
}

/// Every base parameter of `model` (the stored weights, adapters aside), flattened in a fixed order.
fn base_weights(model: &Qwen3) -> Vec<f32> {
    let mut out: Vec<f32> = model.embed_tokens.weight.base().into_data().convert::<f32>().try_into_vec().unwrap();
    for layer in &model.layers {
        let (a, m) = (&layer.self_attn, &layer.mlp);
        for l in [&a.q_proj, &a.k_proj, &a.v_proj, &a.o_proj, &m.gate_proj, &m.up_proj, &m.down_proj] {
            out.extend(l.weight.base().into_data().convert::<f32>().try_into_vec::<f32>().unwrap());
        }
        out.extend(layer.input_layernorm.gamma.base().into_data().convert::<f32>().try_into_vec::<f32>().unwrap());
    }
    out
}

fn model(device: &Device) -> Qwen3 {
    let mut config = Qwen3Config::micro(48);
    config.initializer_range = 0.2;
    Qwen3::init(&config, 11, device).unwrap()
}

/// A few AdamW steps on a next-token loss: adapters that have learnt something (B no longer zero).
fn trained(adapted: Qwen3) -> Qwen3 {
    let batch =
        TokenBatch::from_sequences(&[vec![3, 4, 5, 6, 7, 8], vec![10, 12, 14, 16, 18, 20]], 0, PadSide::Right).unwrap();
    let mask = vec![true; batch.ids().len()];
    let mut optim = AdamWConfig::new().with_weight_decay(0.0).init();
    let mut model = adapted;
    let mut losses = Vec::new();
    for _ in 0..5 {
        let loss = masked_nll(&model, &batch, &mask, 4).unwrap();
        losses.push(loss.clone().into_scalar::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
    assert!(losses[4] < losses[0], "the adapters learn: {losses:?}");
    model
}

#[test]
fn a_fresh_adapter_gives_exactly_the_base_logits() {
    let device = Device::flex();
    let base = model(&device);
    let want = all_logits(&base);
    let adapted = apply_lora(base, &LoraConfig::new(4, 8.0), 1).unwrap();
    assert_eq!(adapter_count(&adapted), 7 * 2);
    assert_eq!(all_logits(&adapted), want);
}

#[test]
fn training_moves_only_the_adapters_and_merging_keeps_the_outputs() {
    let device = Device::flex().autodiff();
    let base = model(&device);
    let before = base_weights(&base);
    let config = LoraConfig::new(4, 8.0).with_target_modules(["q_proj", "v_proj", "down_proj"]);
    let adapted = apply_lora(base, &config, 2).unwrap();

    // Only adapter factors get gradients: 2 per adapted projection.
    let batch = TokenBatch::from_sequences(&[vec![1, 2, 3, 4]], 0, PadSide::Right).unwrap();
    let loss = masked_nll(&adapted, &batch, &[true; 4], 4).unwrap();
    let grads = GradientsParams::from_grads(loss.backward(), &adapted);
    assert_eq!(grads.len(), 2 * 3 * 2, "A and B of 3 projections in 2 layers, nothing else");

    let adapted = trained(adapted);
    assert_eq!(base_weights(&adapted), before, "base weights unchanged, bit for bit");
    let with_adapters = all_logits(&adapted);
    let base_again = model(&Device::flex().autodiff());
    assert!(max_diff(&with_adapters, &all_logits(&base_again)) > 1e-3, "the adapters changed the outputs");

    let merged = merge_lora(adapted);
    assert_eq!(adapter_count(&merged), 0);
    let diff = max_diff(&all_logits(&merged), &with_adapters);
    assert!(diff < 1e-4, "merged vs base + adapters: {diff}");
}

#[test]
fn a_saved_adapter_reloads_with_the_same_logits_and_bad_files_are_named() {
    let device = Device::flex().autodiff();
    let config = LoraConfig::new(2, 4.0);
    let adapted = trained(apply_lora(model(&device), &config, 3).unwrap());
    let dir = tempfile::tempdir().unwrap();
    save_peft_adapter(&adapted, &config, "base", dir.path()).unwrap();
    let reloaded = load_peft_adapter(model(&device), dir.path()).unwrap();
    assert_eq!(adapter_count(&reloaded), adapter_count(&adapted));
    assert_eq!(all_logits(&reloaded), all_logits(&adapted));

    // A config naming a projection the file lacks: the missing tensor is named.
    let json = std::fs::read_to_string(dir.path().join("adapter_config.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value["r"] = serde_json::json!(3);
    std::fs::write(dir.path().join("adapter_config.json"), value.to_string()).unwrap();
    let err = load_peft_adapter(model(&device), dir.path()).unwrap_err().to_string();
    assert!(err.contains("adapter_model.safetensors") && err.contains("q_proj.lora_A.weight"), "{err}");
    value["r"] = serde_json::json!(2);
    value["use_dora"] = serde_json::json!(true);
    std::fs::write(dir.path().join("adapter_config.json"), value.to_string()).unwrap();
    let err = load_peft_adapter(model(&device), dir.path()).unwrap_err().to_string();
    assert!(err.contains("adapter_config.json") && err.contains("use_dora"), "{err}");
}

#[test]
fn peft_loads_a_saved_adapter_with_matching_logits() {
    if !external_ready("torch, transformers, safetensors, peft") {
        return;
    }
    let device = Device::flex().autodiff();
    let dir = tempfile::tempdir().unwrap();
    let (base_dir, adapter_dir) = (dir.path().join("base"), dir.path().join("adapter"));
    save_hf(&model(&device), &base_dir, None).unwrap();
    let config = LoraConfig::new(4, 16.0);
    let adapted = trained(apply_lora(model(&device), &config, 4).unwrap());
    save_peft_adapter(&adapted, &config, &base_dir.display().to_string(), &adapter_dir).unwrap();
    let prompts: Vec<Vec<u32>> = PROMPTS.iter().map(|p| p.to_vec()).collect();
    let logits: Vec<Vec<f32>> = prompts.iter().map(|p| logits_of(&adapted, p)).collect();
    write_expected(&adapter_dir, &prompts, &logits);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hf_parity.py");
    let out = Command::new(python()).arg(&script).arg("check-peft").arg(&base_dir).arg(&adapter_dir).output().unwrap();
    assert!(
        out.status.success(),
        "PEFT disagrees:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout).trim());
}

#[test]
fn a_training_checkpoint_with_adapters_resumes_bit_identically() {
    let device = Device::flex().autodiff();
    let config = LoraConfig::new(2, 4.0).with_target_modules(["k_proj", "up_proj"]);
    let mut model = apply_lora(model(&device), &config, 5).unwrap();
    let batch = TokenBatch::from_sequences(&[vec![3, 9, 12, 5], vec![4, 4, 2]], 0, PadSide::Right).unwrap();
    let mask = batch.mask().to_vec();
    let step = |model: Qwen3, optim: &mut burn::optim::ModuleOptimizer| {
        let loss = masked_nll(&model, &batch, &mask, 8).unwrap();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        optim.step(1e-2, model, grads)
    };
    let mut optim = AdamWConfig::new().init();
    for _ in 0..2 {
        model = step(model, &mut optim);
    }
    let dir = tempfile::tempdir().unwrap();
    TrainingCheckpoint::save(dir.path(), &model, &optim, &serde_json::json!({"step": 2})).unwrap();
    assert!(dir.path().join("lora.json").exists());
    let loaded = TrainingCheckpoint::load(dir.path(), &device).unwrap();
    assert_eq!(act_model::lora::config_of(&loaded.model).unwrap(), Some(config));
    assert_eq!(base_weights(&loaded.model), base_weights(&model));
    let mut resumed_optim = loaded.restore_optimizer(AdamWConfig::new().init()).unwrap();
    let resumed = step(loaded.model, &mut resumed_optim);
    let continued = step(model, &mut optim);
    assert_eq!(all_logits(&resumed.valid()), all_logits(&continued.valid()));
    assert_eq!(base_weights(&resumed), base_weights(&continued), "the base stays frozen after resuming");
}

/// The usual set-up for a large checkpoint: the frozen base in bf16, the adapters in f32. Only the adapters train,
/// they stay f32, and the merged model is bf16 again with the adapted model's outputs.
#[test]
fn f32_adapters_train_on_a_bf16_base_and_merge_back_to_bf16() {
    use burn::tensor::DType;
    let device = Device::flex().autodiff();
    let base = model(&device).with_float_dtype(DType::BF16).unwrap();
    let before = base_weights(&base);
    let config = LoraConfig::new(4, 8.0);
    let adapted = trained(apply_lora(base, &config, 3).unwrap());
    assert_eq!(adapted.float_dtype(), DType::BF16);
    let q = &adapted.layers[0].self_attn.q_proj.weight;
    let factors = q.reparameterization::<burn::module::LoraAdapter>().unwrap();
    assert_eq!((factors.a.val().dtype(), factors.b.val().dtype()), (DType::F32, DType::F32));
    assert!(factors.b.val().abs().max().into_scalar::<f32>() > 0.0, "B trained");
    assert_eq!(base_weights(&adapted), before, "the bf16 base is untouched");
    let adapted_logits = all_logits(&adapted);
    let merged = merge_lora(adapted);
    assert_eq!(adapter_count(&merged), 0);
    assert_eq!(merged.float_dtype(), DType::BF16);
    assert_eq!(merged.layers[0].self_attn.q_proj.weight.val().dtype(), DType::BF16);
    let diff = max_diff(&all_logits(&merged), &adapted_logits);
    // Measured 0.094: the merged weights are rounded to bf16 once more.
    assert!(diff < 0.25, "merged in bf16 against base + f32 adapters: {diff}");
    eprintln!("bf16 merge: max |Δ logit| {diff}");
}
