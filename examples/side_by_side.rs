//! act-rs's half of the side-by-side speed comparison with the Python stack (`benches/side_by_side.sh` runs both
//! halves in one go and prints the ratios).
//!
//! Writes a workload directory that `benches/side_by_side.py` reads — an HF checkpoint of a preset with random
//! weights (seed 0), a word-level tokenizer both sides share, and the exact prompts (text and token ids) and
//! settings — then times the same work here:
//!
//! - one GRPO iteration (`act_grpo::GrpoTrainer::step`: P prompts x G completions sampled at temperature 1,
//!   rewards, group-normalised advantages, one token-mean clipped update, AdamW, constant lr, no KL);
//! - one SFT step (`act_grpo::SftTrainer::step`, completion-only loss, batch B);
//! - greedy generation with the KV cache at batch 1 / 16 / 64 (`act_model::generate_in_parts`, one part per core).
//!
//! The reward is synthetic and continuous so every group has variance (a trainer that skips zero-variance groups
//! would otherwise do less work than TRL): the fraction of completion words `wN` with N even.
//!
//! ```sh
//! cargo run --release --example side_by_side -- --preset tiny --out runs/side-by-side/tiny
//! ```
//!
//! Prints one JSON line per measurement (`"impl": "act-rs"`), as the Python side does for `trl`, `torch` and
//! `hf_generate`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use act_core::{GrpoSample, RewardTarget, SftSample};
use act_examples::synthetic::{EvenWords, messages, word_tokenizer_json};
use act_grpo::{GrpoConfig, GrpoTrainer, OptimizerConfig, ScheduleKind, SftConfig, SftTrainer};
use act_model::{
    BackendKind, ChatTemplate, ChatTokenizer, GenerationConfig, NoStop, Qwen3, Qwen3Config, generate_in_parts,
};
use clap::Parser;
use serde_json::json;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "Times a GRPO iteration, an SFT step and cached generation; writes the workload for the Python side")]
struct Args {
    /// An act-model preset (`tiny`, `small-400k`, `small-1m`, `small-6m`).
    #[arg(long, default_value = "tiny")]
    preset: String,
    /// Vocabulary size (default: 512 for tiny and micro, 1024 for small-400k and small-1m, 4096 otherwise).
    #[arg(long)]
    vocab: Option<usize>,
    /// Where the workload (model/, workload.json) goes.
    #[arg(long)]
    out: PathBuf,
    /// Words in each GRPO and generation prompt's user message.
    #[arg(long, default_value_t = 32)]
    prompt_words: usize,
    /// GRPO prompts per iteration (P).
    #[arg(long, default_value_t = 8)]
    prompts_per_step: usize,
    /// GRPO completions per prompt (G).
    #[arg(long, default_value_t = 8)]
    group_size: usize,
    /// GRPO completion budget in tokens (T).
    #[arg(long, default_value_t = 16)]
    completion_tokens: usize,
    /// Timed GRPO iterations and SFT steps (after one untimed warm-up).
    #[arg(long, default_value_t = 5)]
    iterations: usize,
    /// SFT sequences per step (B).
    #[arg(long, default_value_t = 8)]
    sft_batch: usize,
    /// Words in each SFT prompt's user message and in its completion.
    #[arg(long, default_value_t = 96)]
    sft_prompt_words: usize,
    #[arg(long, default_value_t = 24)]
    sft_completion_words: usize,
    /// Batch sizes of the generation measurement.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    generate_batches: Vec<usize>,
    /// New tokens per generated row.
    #[arg(long, default_value_t = 16)]
    new_tokens: usize,
    /// Timed repetitions of each generation batch (after one warm-up).
    #[arg(long, default_value_t = 3)]
    generate_reps: usize,
    /// Torch threads the Python side uses (match the cores Burn's pool uses here).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Which measurements to run (`grpo`, `sft`, `generate`); the workload is always written whole.
    #[arg(long, value_delimiter = ',', default_value = "grpo,sft,generate")]
    only: Vec<String>,
    /// Backend (`flex`, `tch`, ...; the last need their cargo feature).
    #[arg(long, default_value = "flex")]
    backend: String,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 }
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
    act_core::atomic_write(path, serde_json::to_string_pretty(value)?.as_bytes())?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.iterations == 0 || args.prompts_per_step == 0 || args.group_size < 2 || args.sft_batch == 0 {
        return Err("--iterations, --prompts-per-step and --sft-batch must be positive, --group-size >= 2".into());
    }
    let vocab = args.vocab.unwrap_or(match args.preset.as_str() {
        "tiny" | "micro" => 512,
        "small-400k" | "small-1m" => 1024,
        _ => 4096,
    });
    let config = Qwen3Config::preset(&args.preset, vocab)?;
    let backend: BackendKind = args.backend.parse()?;
    let model_dir = args.out.join("model");
    std::fs::create_dir_all(&model_dir)?;
    let tokenizer_path = model_dir.join("tokenizer.json");
    write_json(&tokenizer_path, &word_tokenizer_json(vocab))?;
    let tokenizer = ChatTokenizer::from_file(&tokenizer_path)?;
    let template = ChatTemplate::default();
    let words = vocab - 6;
    let inference = backend.device()?;
    let model = Qwen3::init(&config, 0, &inference)?;
    act_model::save_hf(&model, &model_dir, None)?;

    // The workload, as text and ids, so the Python side can check it tokenizes the same.
    let iterations = args.iterations + 1;
    let grpo_messages = messages(args.prompts_per_step * iterations, args.prompt_words, words, 1);
    let sft_messages = messages(args.sft_batch * iterations, args.sft_prompt_words, words, 2);
    let sft_completions = messages(args.sft_batch * iterations, args.sft_completion_words, words, 3);
    let max_batch = args.generate_batches.iter().copied().max().unwrap_or(1);
    let generate_messages = messages(max_batch, args.prompt_words, words, 4);
    let prompt_entry = |m: &String| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        Ok(json!({"text": template.prompt_text(m), "ids": tokenizer.encode_prompt(&template, m)?}))
    };
    let mut sft_entries = Vec::new();
    for (m, c) in sft_messages.iter().zip(&sft_completions) {
        let encoding = tokenizer.encode_chat(&template, m, c)?;
        sft_entries.push(json!({
            "prompt": template.prompt_text(m), "completion": template.completion_text(c),
            "prompt_ids": encoding.prompt_ids, "completion_ids": encoding.completion_ids,
        }));
    }
    let (grpo_lr, sft_lr, max_grad_norm) = (1e-5, 1e-4, 1.0);
    let workload = json!({
        "preset": args.preset,
        "threads": args.threads,
        "grpo": {
            "prompts": grpo_messages.iter().map(prompt_entry).collect::<Result<Vec<_>, _>>()?,
            "prompts_per_step": args.prompts_per_step, "group_size": args.group_size,
            "max_completion_tokens": args.completion_tokens, "temperature": 1.0,
            "lr": grpo_lr, "clip_eps": 0.2, "max_grad_norm": max_grad_norm, "weight_decay": 0.0, "adam_eps": 1e-8,
            "beta": 0.0, "warmup_iterations": 1, "iterations": args.iterations,
        },
        "sft": {
            "samples": sft_entries, "batch_size": args.sft_batch, "lr": sft_lr, "weight_decay": 0.0,
            "adam_eps": 1e-8, "max_grad_norm": max_grad_norm, "warmup_steps": 1, "steps": args.iterations,
        },
        "generate": {
            "prompts": generate_messages.iter().map(prompt_entry).collect::<Result<Vec<_>, _>>()?,
            "batch_sizes": args.generate_batches, "new_tokens": args.new_tokens, "reps": args.generate_reps,
        },
    });
    write_json(&args.out.join("workload.json"), &workload)?;
    eprintln!("workload written to {}", args.out.display());

    let bench = Bench {
        label: json!({"impl": "act-rs", "preset": args.preset, "params": config.num_parameters(), "backend": args.backend}),
        config,
        training: backend.training_device()?,
        tokenizer,
        template,
        rounds: iterations,
        max_grad_norm,
    };
    let wanted = |what: &str| args.only.iter().any(|w| w == what);
    if wanted("grpo") {
        bench.grpo(&args, &grpo_messages, grpo_lr)?;
    }
    if wanted("sft") {
        bench.sft(&args, &sft_messages, &sft_completions, sft_lr)?;
    }
    if wanted("generate") {
        bench.generation(&args, &model, &generate_messages)?;
    }
    Ok(())
}

/// What the three measurements share.
struct Bench {
    /// The fields every JSON line starts with.
    label: serde_json::Value,
    config: Qwen3Config,
    training: burn::prelude::Device,
    tokenizer: ChatTokenizer,
    template: ChatTemplate,
    /// Iterations or steps to run, the first of which is not timed.
    rounds: usize,
    max_grad_norm: f64,
}

impl Bench {
    /// AdamW at a constant `lr` with the shared clipping (TRL's defaults otherwise).
    fn optimizer(&self, lr: f64) -> OptimizerConfig {
        OptimizerConfig {
            lr,
            max_grad_norm: Some(self.max_grad_norm),
            schedule: ScheduleKind::Constant,
            ..OptimizerConfig::grpo_default()
        }
    }

    fn report(&self, fields: serde_json::Value) {
        let mut line = self.label.clone();
        if let (Some(line), serde_json::Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        println!("{line}");
    }

    /// GRPO iterations of `GrpoTrainer::step`, each timed whole, with its generation / training split.
    fn grpo(&self, args: &Args, messages: &[String], lr: f64) -> Result<(), Box<dyn std::error::Error>> {
        let samples: Vec<GrpoSample> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| GrpoSample {
                id: i.to_string(),
                prompt: m.clone(),
                target: RewardTarget::NextAction { expert: "w0".into(), admissible: vec![] },
            })
            .collect();
        let grpo_config = GrpoConfig::default()
            .with_group_size(args.group_size)
            .with_prompts_per_step(args.prompts_per_step)
            .with_max_completion_tokens(args.completion_tokens)
            .with_temperature(1.0)
            .with_optimizer(self.optimizer(lr))
            .with_total_steps(self.rounds)
            .with_seed(0);
        let mut trainer = GrpoTrainer::new(
            grpo_config,
            Qwen3::init(&self.config, 0, &self.training)?,
            self.tokenizer.clone(),
            self.template.clone(),
            EvenWords { budget: args.completion_tokens },
            samples,
        )?;
        let (mut total, mut generation, mut train, mut lengths) = (vec![], vec![], vec![], vec![]);
        for i in 0..self.rounds {
            let start = Instant::now();
            let m = trainer.step()?;
            if i > 0 {
                total.push(start.elapsed().as_secs_f64());
                generation.push(m.generation_seconds);
                train.push(m.training_seconds);
                lengths.push(m.completion_length.mean);
            }
        }
        self.report(json!({
            "work": "grpo_iteration", "seconds_median": median(total.clone()), "seconds_all": total,
            "generation_seconds": median(generation), "training_seconds": median(train),
            "completion_tokens_mean": lengths.iter().sum::<f64>() / lengths.len() as f64,
            "sequences": args.prompts_per_step * args.group_size,
        }));
        Ok(())
    }

    /// SFT steps of `SftTrainer::step` (completion-only loss).
    fn sft(
        &self,
        args: &Args,
        messages: &[String],
        completions: &[String],
        lr: f64,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let samples: Vec<SftSample> = messages
            .iter()
            .zip(completions)
            .enumerate()
            .map(|(i, (m, c))| SftSample { id: i.to_string(), prompt: m.clone(), completion: c.clone() })
            .collect();
        let first = self.tokenizer.encode_chat(&self.template, &messages[0], &completions[0])?;
        let tokens = args.sft_batch * (first.prompt_ids.len() + first.completion_ids.len());
        let sft_config = SftConfig::default()
            .with_batch_size(args.sft_batch)
            .with_optimizer(self.optimizer(lr))
            .with_max_length(4096)
            .with_total_steps(self.rounds)
            .with_seed(0);
        let mut sft = SftTrainer::new(
            sft_config,
            Qwen3::init(&self.config, 0, &self.training)?,
            self.tokenizer.clone(),
            self.template.clone(),
            samples,
            vec![],
        )?;
        let mut times = vec![];
        for i in 0..self.rounds {
            let start = Instant::now();
            sft.step()?;
            if i > 0 {
                times.push(start.elapsed().as_secs_f64());
            }
        }
        let seconds = median(times.clone());
        self.report(json!({
            "work": "sft_step", "seconds_median": seconds, "seconds_all": times, "tokens": tokens,
            "tokens_per_second": tokens as f64 / seconds,
        }));
        Ok(())
    }

    /// Greedy generation with the KV cache, exactly `new_tokens` per row (no stop condition).
    fn generation(&self, args: &Args, model: &Qwen3, messages: &[String]) -> Result<(), Box<dyn std::error::Error>> {
        let ids: Vec<Vec<u32>> =
            messages.iter().map(|m| self.tokenizer.encode_prompt(&self.template, m)).collect::<Result<_, _>>()?;
        let config = GenerationConfig::greedy(args.new_tokens).with_cache(true);
        // Rows in parts side by side, one per core on flex: how act-rs generates a batch on a CPU.
        let parts = act_model::default_shards(&model.device());
        for &batch in &args.generate_batches {
            let (prompts, seeds) = (&ids[..batch], vec![0; batch]);
            let mut times = vec![];
            for rep in 0..=args.generate_reps {
                let start = Instant::now();
                generate_in_parts(model, prompts, &seeds, &config, &NoStop, parts)?;
                if rep > 0 {
                    times.push(start.elapsed().as_secs_f64());
                }
            }
            let seconds = median(times.clone());
            self.report(json!({
                "work": "generate", "batch_size": batch, "parts": parts.min(batch / act_model::MIN_ROWS_PER_PART).max(1), "seconds_median": seconds, "seconds_all": times,
                "new_tokens_per_second": (batch * args.new_tokens) as f64 / seconds,
            }));
        }
        Ok(())
    }
}
