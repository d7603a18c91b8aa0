//! The ACT pipeline on the native ALFWorld from a config file: a tiny preset on the CPU, or a real Qwen3 checkpoint
//! on a GPU backend.
//!
//! ```sh
//! cargo run --release --example alfworld -- --config examples/configs/alfworld-tiny.json --seeds 0,1,2
//! # a Hugging Face Qwen3 checkpoint on an NVIDIA GPU through libtorch (see docs/reproducing.md):
//! cargo run --release --features tch --example alfworld -- --config examples/configs/alfworld-qwen3.json
//! ```
//!
//! The quickstart is this example with `examples/configs/quickstart.json`; `--help` lists the flags that override
//! the file (without `--config`, the library's defaults: the compact prompts and the `tiny` preset).

use act_examples::cli::{PipelineArgs, run_seeds};
use act_examples::experiment::Benchmark;
use clap::Parser;

/// The ACT pipeline on the native ALFWorld.
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
        .and_then(|config| run_seeds(&Benchmark::native_alfworld_for(&config), &args.pipeline, &config, "alfworld"));
    if let Err(err) = result {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}
