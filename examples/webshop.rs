//! The ACT pipeline on the native WebShop (a generated catalogue in upstream's schema): success and reward on the
//! test goals for every method of the paper's table.
//!
//! ```sh
//! cargo run --release --example webshop -- --config examples/configs/webshop-tiny.json
//! ```

use act_core::Split;
use act_examples::cli::{PipelineArgs, run_seeds};
use act_examples::experiment::Benchmark;
use act_webshop::{EnvConfig, WebShopFactory, WebShopWorld};
use clap::Parser;

/// The ACT pipeline on the native WebShop.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    #[command(flatten)]
    pipeline: PipelineArgs,
    /// Products in the generated catalogue.
    #[arg(long, default_value_t = 1000)]
    products: usize,
}

fn main() {
    let args = Args::parse();
    let result = args.pipeline.experiment_config().and_then(|config| {
        let world = WebShopWorld::generate(args.products, 0)?;
        let bench = Benchmark {
            name: "webshop".into(),
            environment: "the WebShop online shopping environment".into(),
            factory: WebShopFactory::new(world, EnvConfig::default()),
            train_split: Split::Train,
            eval_splits: vec![Split::Test],
            show_admissible: true,
            numbered_objects: false,
            memory_line: false,
            expert_search: act_alfworld::SearchOrder::LastListedFirst,
        };
        run_seeds(&bench, &args.pipeline, &config, "webshop")
    });
    if let Err(err) = result {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}
