//! Peak memory and time of training steps on a model of a real Qwen3 shape with random weights (nothing to
//! download): full fine-tuning against LoRA, with and without gradient checkpointing, f32 or bf16. One configuration
//! per process, so that the process's peak resident memory is that configuration's; `benches/scale_report.sh` runs
//! the matrix that `docs/reproducing.md` reports.
//!
//! Three kinds of step: by default a plain loop (next-token loss on every token of `--batch` sequences of `--seq`
//! tokens, AdamW); `--trainer` runs the same work through act-grpo's `SftTrainer` (needed for full fine-tuning in
//! bf16, whose f32 master weights the trainer keeps); `--grpo` runs iterations of act-grpo's `GrpoTrainer` on a
//! synthetic task (`--prompts` prompts of `--seq` words, `--group-size` completions of `--completion-tokens`
//! tokens each at temperature 1, one update).
//!
//! ```sh
//! cargo run --release --example scale_report -- --shape qwen3-0.6b --lora-rank 16 --checkpointing
//! cargo run --release --example scale_report -- --shape qwen3-0.6b --trainer --bf16
//! cargo run --release --example scale_report -- --shape qwen3-0.6b --lora-rank 16 --grpo --reference
//! ```
//!
//! Prints one JSON line: the shape, parameters (all and trained), the work, seconds per step or iteration (the
//! mean over those after the first), and the peak resident set (`VmHWM`, Linux) in MiB.

use std::time::Instant;

use act_core::{GrpoSample, RewardTarget, SftSample};
use act_examples::synthetic::{EvenWords, messages, word_tokenizer_json};
use act_grpo::{ComputeDtype, GrpoConfig, GrpoTrainer, KlEstimator, OptimizerConfig, SftConfig, SftTrainer};
use act_model::lora::{LoraConfig, apply_lora};
use act_model::{BackendKind, ChatTemplate, ChatTokenizer, PadSide, Qwen3, Qwen3Config, TokenBatch, masked_nll};
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
    /// bf16: with `--lora-rank`, the frozen weights in bf16 (`Qwen3::with_float_dtype`) under f32 LoRA factors;
    /// without, full fine-tuning on a bf16 working copy with f32 master weights (needs `--trainer` or `--grpo`).
    #[arg(long)]
    bf16: bool,
    /// Keep a frozen reference model as the GRPO trainer does for its KL term (`model.valid()` at the start) and
    /// run its forward on the batch every step: what the reference costs in memory. With `--grpo`, a KL term of
    /// 0.01 in the trainer.
    #[arg(long)]
    reference: bool,
    /// SFT steps through act-grpo's `SftTrainer` (one sample of `--seq` words per sequence, loss on every token).
    #[arg(long)]
    trainer: bool,
    /// GRPO iterations through act-grpo's `GrpoTrainer` instead of SFT steps.
    #[arg(long)]
    grpo: bool,
    /// GRPO: prompts per iteration.
    #[arg(long, default_value_t = 1)]
    prompts: usize,
    /// GRPO: completions per prompt (G).
    #[arg(long, default_value_t = 4)]
    group_size: usize,
    /// GRPO: the completion budget in tokens.
    #[arg(long, default_value_t = 64)]
    completion_tokens: usize,
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
    if args.grpo && (args.prompts == 0 || args.group_size < 2 || args.completion_tokens == 0) {
        return Err("--grpo needs --prompts and --completion-tokens positive, --group-size at least 2".into());
    }
    let through_trainer = args.trainer || args.grpo;
    if args.bf16 && args.lora_rank == 0 && !through_trainer {
        return Err(
            "--bf16 without --lora-rank is full fine-tuning with f32 master weights: add --trainer or --grpo".into()
        );
    }
    let backend: BackendKind = args.backend.parse()?;
    let device =
        if args.checkpointing { backend.checkpointed_training_device()? } else { backend.training_device()? };
    // The small presets take a vocabulary size (4,096 here); the Qwen3 shapes have their own (151,936).
    let shape = Qwen3Config::preset(&args.shape, 4096)?;
    let parameters = shape.num_parameters();
    let mut model = Qwen3::init(&shape, 0, &device)?;
    // Full fine-tuning in bf16 goes to the trainer in f32: it keeps the f32 master weights and casts a working copy.
    let compute = if args.bf16 && args.lora_rank == 0 { ComputeDtype::Bf16 } else { ComputeDtype::F32 };
    if args.bf16 && args.lora_rank > 0 {
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
    let (seconds, reset, setup_peak, work) =
        if through_trainer { run_trainer(&args, &shape, model, compute)? } else { run_loop(&args, &shape, model)? };
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
        "work": work,
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

/// Seconds per step, whether the peak was reset after set-up, the set-up peak, and what was measured.
type Measured = (Vec<f64>, bool, Option<f64>, serde_json::Value);

/// The plain loop: next-token loss on every token, AdamW.
fn run_loop(args: &Args, shape: &Qwen3Config, mut model: Qwen3) -> Result<Measured, Box<dyn std::error::Error>> {
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
    Ok((seconds, reset, setup_peak, serde_json::json!("loop")))
}

/// SFT steps or GRPO iterations of act-grpo's trainers, on a word-level tokenizer as large as the shape's vocabulary.
fn run_trainer(
    args: &Args,
    shape: &Qwen3Config,
    model: Qwen3,
    compute: ComputeDtype,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("tokenizer.json");
    std::fs::write(&path, serde_json::to_vec(&word_tokenizer_json(shape.vocab_size))?)?;
    let tokenizer = ChatTokenizer::from_file(&path)?;
    let template = ChatTemplate::default();
    let words = shape.vocab_size - 6;
    let optimizer = OptimizerConfig { lr: 1e-5, weight_decay: 0.0, ..OptimizerConfig::default() };
    let mut step: Box<dyn FnMut() -> Result<(), act_grpo::GrpoError>>;
    let work;
    if args.grpo {
        let samples: Vec<GrpoSample> = messages(args.prompts, args.seq, words, 1)
            .into_iter()
            .enumerate()
            .map(|(i, prompt)| GrpoSample {
                id: i.to_string(),
                prompt,
                target: RewardTarget::NextAction { expert: "w0".into(), admissible: vec![] },
            })
            .collect();
        let config = GrpoConfig::default()
            .with_group_size(args.group_size)
            .with_prompts_per_step(args.prompts)
            .with_max_completion_tokens(args.completion_tokens)
            .with_temperature(1.0)
            .with_optimizer(optimizer)
            .with_kl(KlEstimator::K3, if args.reference { 0.01 } else { 0.0 })
            .with_total_steps(args.steps)
            .with_seed(0)
            .with_compute_dtype(compute);
        let reward = EvenWords { budget: args.completion_tokens };
        let mut trainer = GrpoTrainer::new(config, model, tokenizer, template, reward, samples)?;
        step = Box::new(move || trainer.step().map(|_| ()));
        work = serde_json::json!({
            "grpo_iteration": {"prompts": args.prompts, "group_size": args.group_size,
                               "completion_tokens": args.completion_tokens, "kl": args.reference}
        });
    } else {
        let samples: Vec<SftSample> = messages(args.batch, args.seq, words, 1)
            .into_iter()
            .enumerate()
            .map(|(i, text)| SftSample { id: i.to_string(), prompt: text, completion: String::new() })
            .collect();
        let config = SftConfig::default()
            .with_batch_size(args.batch)
            .with_loss_on_prompts(true)
            .with_max_length(0)
            .with_optimizer(optimizer)
            .with_total_steps(args.steps)
            .with_seed(0)
            .with_compute_dtype(compute);
        let mut trainer = SftTrainer::new(config, model, tokenizer, template, samples, vec![])?;
        step = Box::new(move || trainer.step().map(|_| ()));
        work = serde_json::json!("sft_trainer");
    }
    let setup_peak = peak_rss_mib();
    let reset = reset_peak_rss();
    let mut seconds = Vec::new();
    for _ in 0..args.steps {
        let started = Instant::now();
        step()?;
        seconds.push(started.elapsed().as_secs_f64());
    }
    Ok((seconds, reset, setup_peak, work))
}
