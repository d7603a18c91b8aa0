//! Can a model of a given shape learn to read the task's object in what it sees, and how much data does it need?
//!
//! The one decision that IL on ALFWorld did not learn (docs/results.md, twelfth session), isolated:
//! a prompt in the conversation style's words (`task: put a mug in shelf.` then `You arrive at loc 7. On the
//! desk 1, you see a pen 2, and a mug 3.`) whose answer is `<action>take mug 3 from desk 1</action>` when an object
//! of the task's class is in the listing and `<action>go to ...</action>` otherwise (half of each; the task's
//! receptacle and every other name drawn from ALFWorld's classes). With `--history N`, N earlier turns (the same
//! task line, a listing without the object, a `go to` answer) come first, as in a packed episode; with
//! `--single-turn-mix F`, a fraction F of the training prompts have no earlier turns.
//!
//! Trains a fresh model of `--preset` with the SFT stage the pipeline uses and writes its held-out learning curve
//! (greedy verb accuracy and `take` rate on 256 prompts of the held-out form) to `<out>/il/heldout.jsonl` and
//! `heldout.svg`.
//!
//! ```sh
//! cargo run --release --example reading_probe -- --history 0 --steps 3000 --out runs/reading-probe/h0
//! cargo run --release --example reading_probe -- --history 4 --steps 2000 --out runs/reading-probe/h4
//! cargo run --release --example reading_probe -- --history 4 --single-turn-mix 0.5 --out runs/reading-probe/mix
//! ```

use std::path::PathBuf;

use act_alfworld::{ObjectClass, ReceptacleClass};
use act_core::{ActRng, Policy, Query, SamplingParams, SftSample, rng_from_seed};
use act_examples::config::{SftStageConfig, TrainingConfig};
use act_examples::stages::{HeldOutProbe, Measurements, ModelContext, StageRun, StartFrom};
use act_grpo::ScheduleKind;
use act_model::{ChatTemplate, ChatTokenizer, IM_END, IM_START, ModelPolicy, Qwen3Config};
use clap::Parser;
use rand::RngExt;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "Trains a fresh model on the take-or-go reading decision and writes its held-out curve")]
struct Args {
    /// An act-model preset.
    #[arg(long, default_value = "small-400k")]
    preset: String,
    /// Earlier turns before the decision, in training (see --single-turn-mix) and held-out prompts.
    #[arg(long, default_value_t = 0)]
    history: usize,
    /// Fraction of training prompts without earlier turns.
    #[arg(long, default_value_t = 0.0)]
    single_turn_mix: f64,
    /// SFT steps.
    #[arg(long, default_value_t = 2000)]
    steps: usize,
    /// Prompts per step.
    #[arg(long, default_value_t = 16)]
    batch_size: usize,
    /// Peak learning rate (cosine decay, 20 warm-up steps).
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    /// A sliding window (positions) for the layers after `--full-layers` (none by default).
    #[arg(long)]
    window: Option<usize>,
    /// Leading layers with full attention when `--window` is set.
    #[arg(long, default_value_t = 1)]
    full_layers: usize,
    /// Held-out measurements after step 0.
    #[arg(long, default_value_t = 8)]
    points: usize,
    /// Seeds the data and the model.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Where the stage and its curve go.
    #[arg(long)]
    out: PathBuf,
}

/// Lower-case class names, as ALFWorld's observations write them.
fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> Vec<String> {
    all.iter().map(|&c| name(c).to_lowercase()).collect()
}

/// Draws prompts: `(prompt, completion, whether the object is in view)`.
struct Prompts {
    objects: Vec<String>,
    receptacles: Vec<String>,
}

impl Prompts {
    fn pick<'a>(items: &'a [String], rng: &mut ActRng) -> &'a str {
        &items[rng.random_range(0..items.len())]
    }

    /// A listing of 1-4 objects other than `target`, with `target` inserted at a random place when `with`.
    fn listing(&self, target: &str, with: bool, rng: &mut ActRng) -> (String, String, usize, usize) {
        let receptacle = Self::pick(&self.receptacles, rng).to_string();
        let number = rng.random_range(1..4);
        let mut items: Vec<String> = Vec::new();
        let count = rng.random_range(1..5);
        while items.len() < count {
            let object = Self::pick(&self.objects, rng);
            if object != target {
                items.push(format!("a {object} {}", rng.random_range(1..4)));
            }
        }
        let instance = rng.random_range(1..4);
        if with {
            let at = rng.random_range(0..=items.len());
            items.insert(at, format!("a {target} {instance}"));
        }
        let text = format!(
            "You arrive at loc {}. On the {receptacle} {number}, you see {}.",
            rng.random_range(1..30),
            items.join(", ")
        );
        (text, receptacle, number, instance)
    }

    fn draw(&self, history: usize, rng: &mut ActRng) -> (String, String, bool) {
        let target = Self::pick(&self.objects, rng).to_string();
        let task = format!("put a {target} in {}.", Self::pick(&self.receptacles, rng));
        let mut prompt = String::new();
        for _ in 0..history {
            let (seen, _, _, _) = self.listing(&target, false, rng);
            let next = Self::pick(&self.receptacles, rng);
            prompt.push_str(&format!(
                "task: {task}\n{seen}{IM_END}\n{IM_START}assistant\n<action>go to {next} 1</action>{IM_END}\n{IM_START}user\n"
            ));
        }
        let with = rng.random_bool(0.5);
        let (seen, receptacle, number, instance) = self.listing(&target, with, rng);
        prompt.push_str(&format!("task: {task}\n{seen}"));
        let action = if with {
            format!("take {target} {instance} from {receptacle} {number}")
        } else {
            format!("go to {} {}", Self::pick(&self.receptacles, rng), rng.random_range(1..3))
        };
        (prompt, format!("<action>{action}</action>"), with)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args = Args::parse();
    if !(0.0..=1.0).contains(&args.single_turn_mix) {
        return Err(format!("--single-turn-mix must be in [0, 1], got {}", args.single_turn_mix).into());
    }
    let prompts = Prompts {
        objects: names(ObjectClass::PROCEDURAL, ObjectClass::name),
        receptacles: names(ReceptacleClass::ALL, ReceptacleClass::name),
    };
    let mut rng = rng_from_seed(args.seed);
    let train: Vec<SftSample> = (0..20_000)
        .map(|i| {
            let history = if rng.random_bool(args.single_turn_mix) { 0 } else { args.history };
            let (prompt, completion, _) = prompts.draw(history, &mut rng);
            SftSample { id: i.to_string(), prompt, completion }
        })
        .collect();
    let held_out: Vec<(String, bool)> = (0..256)
        .map(|_| {
            let (prompt, _, with) = prompts.draw(args.history, &mut rng);
            (prompt, with)
        })
        .collect();
    let corpus: Vec<String> = train.iter().take(3000).flat_map(|s| [s.prompt.clone(), s.completion.clone()]).collect();
    let context = ModelContext {
        tokenizer: ChatTokenizer::train_bpe(corpus, 1024)?,
        template: ChatTemplate::default(),
        backend: "flex".parse()?,
    };
    let mut shape = Qwen3Config::preset(&args.preset, context.tokenizer.vocab_size())?;
    if let Some(window) = args.window {
        shape = shape.with_sliding_window(window, args.full_layers);
    }
    let training = TrainingConfig { max_length: 2048, checkpoint_every: 0, ..TrainingConfig::default() };
    let measure = |model| -> Result<Measurements, act_examples::stages::BoxError> {
        let policy = ModelPolicy::new("probe", model, context.tokenizer.clone(), context.template.clone());
        let queries: Vec<Query> = held_out.iter().map(|(p, _)| Query::text(p.clone())).collect();
        let params = SamplingParams::greedy().with_max_new_tokens(6).with_stop("</action>");
        let outputs = policy.generate(&queries, &params)?;
        let takes: Vec<bool> = outputs.iter().map(|o| o.starts_with("<action>take")).collect();
        let right = takes.iter().zip(&held_out).filter(|(t, (_, with))| *t == with).count();
        let n = held_out.len() as f64;
        let mut m = Measurements::new();
        m.insert("verb_accuracy".into(), right as f64 / n);
        m.insert("take_rate".into(), takes.iter().filter(|&&t| t).count() as f64 / n);
        Ok(m)
    };
    let probe = HeldOutProbe { points: args.points, measure: Box::new(measure) };
    let stage = SftStageConfig {
        steps: args.steps,
        batch_size: args.batch_size,
        lr: args.lr,
        schedule: ScheduleKind::Cosine,
        warmup_steps: 20,
        ..Default::default()
    };
    StageRun {
        name: "il",
        dir: args.out.join("il"),
        context: &context,
        training: &training,
        start: StartFrom::fresh(shape),
        seed: args.seed,
        probe: Some(&probe),
    }
    .sft(&stage, train)?;
    println!("curve: {}", args.out.join("il/heldout.jsonl").display());
    Ok(())
}
