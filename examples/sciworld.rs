//! The ACT pipeline on ScienceWorld (the official simulator jar, no Python at run time): next-action accuracy on
//! held-out gold-path states and on-line score on the test variations, for every method of the paper's table.
//!
//! ```sh
//! pip install scienceworld==1.2.3   # ships the jar; Java 17
//! cargo run --release --example sciworld -- --config examples/configs/sciworld-tiny.json \
//!     --tasks find-living-thing,find-non-living-thing,find-plant,find-animal --simplifications easy
//! ```
//!
//! Training tasks are the first `train_games` variations of the train split taken round-robin over `--tasks`, so a
//! small run still sees every task. Prompts do not list the valid actions: ScienceWorld has several hundred per
//! state (417 at the start of every task we measured, 115 with `easy`).

use act_examples::cli::{PipelineArgs, run_seeds};
use act_examples::experiment::Benchmark;
use act_sciworld::SciWorldConfig;
use clap::Parser;

/// The ACT pipeline on ScienceWorld.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    #[command(flatten)]
    pipeline: PipelineArgs,
    /// Tasks to train and evaluate on, comma-separated (ScienceWorld task names); all 30 when omitted.
    #[arg(long, value_delimiter = ',')]
    tasks: Vec<String>,
    /// Simplifications, comma-separated (`teleportAction`, `openDoors`, ..., or `easy` for all); none by default,
    /// as in the benchmark.
    #[arg(long, default_value = "")]
    simplifications: String,
    /// The most steps an episode may take.
    #[arg(long, default_value_t = 100)]
    step_limit: usize,
}

fn main() {
    let args = Args::parse();
    let mut env = SciWorldConfig::default()
        .with_simplifications(args.simplifications.clone())
        .with_step_limit(args.step_limit)
        // Valid actions feed the random exploration that gives π₀ the environment's language, and the
        // admissibility terms of the rewards. (The expert's gold path is planned at its first step on demand.)
        .with_admissible_actions(true);
    if !args.tasks.is_empty() {
        env = env.with_tasks(args.tasks.iter().map(|t| t.trim().to_owned()));
    }
    let bench = Benchmark::sciworld(env);
    let result =
        args.pipeline.experiment_config().and_then(|config| run_seeds(&bench, &args.pipeline, &config, "sciworld"));
    if let Err(err) = result {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}
