//! The main job: ACT's data pipeline and evaluation on the native ALFWorld, end to end, on a laptop CPU.
//!
//! ```sh
//! cargo run --release --example quickstart                 # writes runs/quickstart/
//! cargo run --release --example quickstart -- --help       # sizes, seeds, output directory
//! ```
//!
//! Stages, each writing to the run directory:
//! 1. expert trajectories on the training split (the native handcoded expert);
//! 2. critic pairs: K alternatives per expert state from the initial policy π₀ (here the uniform random admissible
//!    policy), filtered and order-balanced, with a statistics report;
//! 3. the three training sets of the method: ACT comparison prompts (GRPO), IL samples (SFT) and RL next-action
//!    prompts (GRPO);
//! 4. reward check: the comparison reward scores the expert's choices 1 and a coin flip's about one half on
//!    held-out pairs from the in-distribution split;
//! 5. on-line evaluation of the expert and the random policy on the in-distribution and out-of-distribution
//!    splits, with 95% bootstrap intervals, as a Markdown table and an SVG chart.
//!
//! Training a model on these sets (ACT → IL → RL with the Burn trainer) is not part of this example yet.

use act_examples::pipeline::{PipelineConfig, run_alfworld_pipeline};
use act_examples::run_dir;
use clap::Parser;

/// ACT's data pipeline and evaluation on the native ALFWorld.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Where the run directory is created.
    #[arg(long, default_value = "runs")]
    out: std::path::PathBuf,
    /// The run's name (its directory under --out).
    #[arg(long, default_value = "quickstart")]
    name: String,
    /// Training games whose expert trajectories become the training data.
    #[arg(long, default_value_t = 500)]
    train_games: usize,
    /// Alternatives sampled from π₀ at each expert state.
    #[arg(long, default_value_t = 4)]
    k: usize,
    /// The seed every random choice flows from.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Evaluation episodes per split (default: the whole split, 140 ID and 134 OOD).
    #[arg(long)]
    eval_episodes: Option<usize>,
}

fn main() {
    let args = Args::parse();
    let started = std::time::Instant::now();
    let result = run_dir(&args.out, &args.name).map_err(Into::into).and_then(|dir| {
        println!("act-rs quickstart: native ALFWorld, seed {}, run directory {}", args.seed, dir.display());
        let config = PipelineConfig {
            train_games: args.train_games,
            k: args.k,
            seed: args.seed,
            eval_episodes: args.eval_episodes,
            ..PipelineConfig::default()
        };
        run_alfworld_pipeline(&dir, &config)
    });
    match result {
        Ok(summary) => {
            println!("\n{}", summary.results_markdown);
            println!(
                "done in {:.1} s; results in {}",
                started.elapsed().as_secs_f64(),
                summary.dir.join("results.md").display()
            );
        }
        Err(err) => {
            eprintln!("error: {err}");
            std::process::exit(1);
        }
    }
}
