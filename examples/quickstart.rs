//! The main job: the ACT pipeline end to end on the native ALFWorld with a tiny model on a laptop CPU, every
//! method of the paper's table evaluated in- and out-of-distribution.
//!
//! ```sh
//! cargo run --release --example quickstart                     # writes runs/quickstart/
//! cargo run --release --example quickstart -- --seeds 0,1,2 --controls   # the 3-seed result of docs/results.md
//! cargo run --release --example quickstart -- --help           # sizes, seeds, config file
//! ```
//!
//! Stages, each resumable and writing to the run directory (see `act_examples::experiment`): expert trajectories
//! → tokenizer and the base stage that gives π₀ the environment's language (SFT on random-policy episodes) →
//! critic pairs from π₀ → ACT (GRPO on comparisons) → IL (SFT) → RL (GRPO on next actions) → on-line
//! evaluation of prompt, prompt + reasoning, ACT only, IL, ACT → IL, IL → RL, ACT → IL → RL and the controls,
//! with next-action accuracy on held-out expert states and critic accuracy on held-out pairs.

use act_examples::cli::{PipelineArgs, run_seeds};
use act_examples::experiment::Benchmark;
use clap::Parser;

/// The ACT pipeline on the native ALFWorld with a tiny model.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    #[command(flatten)]
    pipeline: PipelineArgs,
}

fn main() {
    let args = Args::parse();
    let result = args
        .pipeline
        .experiment_config()
        .and_then(|config| run_seeds(&Benchmark::native_alfworld(config.train_tasks()), &args.pipeline, "quickstart"));
    if let Err(err) = result {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}
