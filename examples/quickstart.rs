//! The main job: the ACT pipeline end to end on the native ALFWorld with a small model trained from scratch on a
//! laptop CPU, every method of the paper's table evaluated in- and out-of-distribution.
//!
//! ```sh
//! cargo run --release --example quickstart                     # writes runs/quickstart/
//! cargo run --release --example quickstart -- --seeds 0,1,2    # three seeds and the paired comparison
//! cargo run --release --example quickstart -- --help           # sizes, seeds, config file
//! ```
//!
//! The recipe is `examples/configs/quickstart.json` (built in; `--config` replaces it): `small-400k` in the
//! conversation style. Stages, each resumable and writing to the run directory (see `act_examples::experiment`):
//! expert trajectories → tokenizer and π₀, language-modelled on the expert episodes of other training games →
//! critic pairs from π₀ → DAgger's states (π₀ and the expert mixed, relabelled by the expert) → ACT (GRPO on
//! comparisons) → IL (SFT) → RL (GRPO on next actions) → on-line evaluation of prompt, prompt + reasoning, ACT
//! only, IL, ACT → IL, IL → RL, ACT → IL → RL and the controls, with next-action accuracy on held-out expert states
//! and critic accuracy on held-out pairs.

use act_examples::cli::{PipelineArgs, run_seeds};
use act_examples::config::ExperimentConfig;
use act_examples::experiment::Benchmark;
use act_examples::stages::BoxError;
use clap::Parser;

/// The quickstart's recipe, `examples/configs/quickstart.json`, built in so the example runs without arguments;
/// `--config` replaces it.
const QUICKSTART_CONFIG: &str = include_str!("configs/quickstart.json");

fn quickstart_config() -> Result<ExperimentConfig, BoxError> {
    Ok(ExperimentConfig::from_json_str(QUICKSTART_CONFIG, "examples/configs/quickstart.json")?)
}

/// The ACT pipeline on the native ALFWorld with a small model trained from scratch (examples/configs/quickstart.json).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    #[command(flatten)]
    pipeline: PipelineArgs,
}

fn main() {
    let args = Args::parse();
    let result = quickstart_config()
        .and_then(|defaults| args.pipeline.experiment_config_or(defaults))
        .and_then(|config| run_seeds(&Benchmark::native_alfworld_for(&config), &args.pipeline, &config, "quickstart"));
    if let Err(err) = result {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}
