//! Peak memory and time of SFT steps on a model of a real Qwen3 shape with random weights (nothing to download):
//! full fine-tuning against LoRA, with and without gradient checkpointing. One configuration per process, so that
//! the process's peak resident memory is that configuration's; `benches/scale_report.sh` runs the matrix that
//! `docs/reproducing.md` reports.
//!
//! ```sh
//! cargo run --release --example scale_report -- --shape qwen3-0.6b --lora-rank 16 --checkpointing
//! ```
//!
//! Prints one JSON line: the shape, parameters (all and trained), batch, sequence length, seconds per step (the
//! mean over the steps after the first), and the peak resident set (`VmHWM`, Linux) in MiB.

use std::time::Instant;

use act_model::lora::{LoraConfig, apply_lora};
use act_model::{BackendKind, PadSide, Qwen3, Qwen3Config, TokenBatch, masked_nll};
use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams};
use clap::Parser;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "Peak memory and seconds per SFT step for a Qwen3 shape: full fine-tuning or LoRA")]
struct Args {
    /// A preset name of act-model (`qwen3-0.6b`, `qwen3-1.7b`, `small-6m`, ...).
    #[arg(long, default_value = "qwen3-0.6b")]
    shape: String,
    /// LoRA rank on all seven projections (alpha = 2 x rank); 0 trains every weight.
    #[arg(long, default_value_t = 0)]
    lora_rank: usize,
    /// Gradient checkpointing (Burn's balanced strategy).
    #[arg(long)]
    checkpointing: bool,
    /// Sequences per step.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Tokens per sequence.
    #[arg(long, default_value_t = 256)]
    seq: usize,
    /// Steps to run (the first is not timed).
    #[arg(long, default_value_t = 3)]
    steps: usize,
    /// Backend (`flex`, `tch`, `tch-cuda:0`, `cuda:0`; the last three need their cargo feature).
    #[arg(long, default_value = "flex")]
    backend: String,
    /// The frozen weights in bf16 (`Qwen3::with_float_dtype`), the LoRA factors in f32; needs `--lora-rank`.
    #[arg(long)]
    bf16: bool,
    /// Keep a frozen reference model as the GRPO trainer does for its KL term (`model.valid()` at the start) and
    /// run its forward on the batch every step: what the reference costs in memory.
    #[arg(long)]
    reference: bool,
}

/// Resets the process's peak resident set to its current size (`5` to `/proc/self/clear_refs`), so that the next
/// reading measures training alone, not the f32 initialisation a `--bf16` model is cast from; false where Linux
/// does not allow it.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak resident set in MiB (`VmHWM` of `/proc/self/status`), where Linux reports it.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.steps < 2 || args.batch == 0 || args.seq < 2 {
        return Err("--steps must be at least 2, --batch and --seq positive".into());
    }
    if args.bf16 && args.lora_rank == 0 {
        return Err("--bf16 trains LoRA adapters on a bf16 base: give --lora-rank too".into());
    }
    let backend: BackendKind = args.backend.parse()?;
    let device =
        if args.checkpointing { backend.checkpointed_training_device()? } else { backend.training_device()? };
    // The small presets take a vocabulary size (4,096 here); the Qwen3 shapes have their own (151,936).
    let shape = Qwen3Config::preset(&args.shape, 4096)?;
    let parameters = shape.num_parameters();
    let mut model = Qwen3::init(&shape, 0, &device)?;
    if args.bf16 {
        model = model.with_float_dtype(burn::tensor::DType::BF16)?;
    }
    if args.lora_rank > 0 {
        model = apply_lora(model, &LoraConfig::new(args.lora_rank, 2.0 * args.lora_rank as f64), 1)?;
    }
    let trained = if args.lora_rank > 0 {
        act_model::lora::peft_tensors(&model).iter().map(|(_, d)| d.num_elements()).sum()
    } else {
        model.num_params()
    };
    // Token ids spread over the vocabulary; the loss is next-token NLL on every position.
    let rows: Vec<Vec<u32>> = (0..args.batch)
        .map(|r| (0..args.seq).map(|i| ((r * 7919 + i * 104_729) % shape.vocab_size) as u32).collect())
        .collect();
    let batch = TokenBatch::from_sequences(&rows, 0, PadSide::Right)?;
    let mask = vec![true; batch.ids().len()];
    let mut optim = AdamWConfig::new().with_weight_decay(0.0).init();
    let reference = args.reference.then(|| model.valid());
    let setup_peak = peak_rss_mib();
    let reset = reset_peak_rss();
    let mut seconds = Vec::new();
    for _ in 0..args.steps {
        let started = Instant::now();
        if let Some(reference) = &reference {
            // The KL term's reference log-probs: a forward without gradients.
            std::hint::black_box(masked_nll(reference, &batch, &mask, 128)?.into_scalar::<f32>());
        }
        let loss = masked_nll(&model, &batch, &mask, 128)?;
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-5, model, grads);
        seconds.push(started.elapsed().as_secs_f64());
    }
    let timed = &seconds[1..];
    let report = serde_json::json!({
        "shape": args.shape,
        "backend": args.backend,
        "parameters": parameters,
        "trained_parameters": trained,
        "lora_rank": args.lora_rank,
        "checkpointing": args.checkpointing,
        "batch": args.batch,
        "seq": args.seq,
        "bf16": args.bf16,
        "reference": args.reference,
        "seconds_per_step": timed.iter().sum::<f64>() / timed.len() as f64,
        "peak_rss_mib": match (peak_rss_mib(), setup_peak) {
            (Some(training), Some(setup)) => Some(training.max(setup)),
            (training, setup) => training.or(setup),
        },
        "peak_training_rss_mib": if reset { peak_rss_mib() } else { None },
    });
    println!("{report}");
    Ok(())
}
