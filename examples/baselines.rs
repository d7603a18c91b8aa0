//! Scripted baselines on the native benchmarks: the environment's expert and the uniform random admissible policy,
//! on ALFWorld's in-distribution and out-of-distribution splits and WebShop's test split, as the paper's table.
//!
//! ```sh
//! cargo run --release --example baselines                          # writes runs/baselines/
//! cargo run --release --example baselines -- --webshop-products 100000
//! ```
//!
//! These rows bound what a learned policy can reach: the expert is the ceiling the training data comes from, the
//! random policy the floor.

use act_alfworld::{AlfworldConfig, AlfworldFactory};
use act_core::{EnvironmentFactory, PromptConfig, RandomAdmissiblePolicy, Split};
use act_eval::{Agent, EpisodeEvalConfig, EvalRecord, evaluate_episodes, plot_success_by_method, render_table};
use act_examples::{Stage, run_dir};
use act_webshop::{EnvConfig, WebShopFactory, WebShopWorld};
use clap::Parser;

/// Expert and random baselines on native ALFWorld and WebShop.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Where the run directory is created.
    #[arg(long, default_value = "runs")]
    out: std::path::PathBuf,
    /// The run's name (its directory under --out).
    #[arg(long, default_value = "baselines")]
    name: String,
    /// Products in the generated WebShop catalogue.
    #[arg(long, default_value_t = 10_000)]
    webshop_products: usize,
    /// The seed every random choice flows from (catalogue, goals, episodes, intervals).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

fn main() {
    if let Err(err) = run(Args::parse()) {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let dir = run_dir(&args.out, &args.name)?;
    let random = RandomAdmissiblePolicy::new();
    let mut records = Vec::new();

    let stage = Stage::start("ALFWorld (native), ID and OOD");
    let alfworld = AlfworldFactory::new(AlfworldConfig::default());
    let prompt = PromptConfig::default().with_environment("the ALFRED Embodied Environment");
    for split in [Split::EvalInDistribution, Split::EvalOutOfDistribution] {
        records.extend(evaluate_both(&alfworld, split, &prompt, args.seed, &random)?);
    }
    stage.done("280 + 268 episodes");

    let stage = Stage::start(&format!("WebShop (native, {} products), test", args.webshop_products));
    let world = WebShopWorld::generate(args.webshop_products, args.seed)?;
    let webshop = WebShopFactory::new(world, EnvConfig::default());
    let prompt = PromptConfig::default().with_environment("the WebShop online shopping environment");
    records.extend(evaluate_both(&webshop, Split::Test, &prompt, args.seed, &random)?);
    stage.done("1,000 episodes");

    for record in &records {
        let file = format!("{}_{}.json", record.benchmark.replace(' ', "_"), record.method().replace(' ', "-"));
        record.save(dir.join(file))?;
    }
    let table = render_table(&records)?;
    plot_success_by_method(&records, "expert and random baselines: success rate", dir.join("success.svg"))?;
    let mean_scores: Vec<String> = records
        .iter()
        .filter_map(|r| match &r.evaluation {
            act_eval::Evaluation::Episodes(e) => {
                Some(format!("| {} | {} | {:.3} |", r.method(), r.benchmark, e.summary.score.value))
            }
            _ => None,
        })
        .collect();
    let markdown = format!(
        "# Baselines (seed {})\n\nSuccess rate in %, 95% bootstrap interval.\n\n{table}\n\nMean score (ALFWorld: won; \
         WebShop: raw reward).\n\n| method | benchmark | mean score |\n|---|---|---:|\n{}\n",
        args.seed,
        mean_scores.join("\n")
    );
    act_core::atomic_write(dir.join("results.md"), markdown.as_bytes())?;
    println!("\n{markdown}");
    Ok(())
}

fn evaluate_both<F: EnvironmentFactory>(
    factory: &F,
    split: Split,
    prompt: &PromptConfig,
    seed: u64,
    random: &RandomAdmissiblePolicy,
) -> Result<Vec<EvalRecord>, act_eval::EvalError> {
    let config = EpisodeEvalConfig::new(split).with_seed(seed).with_prompt(prompt.clone());
    [Agent::Expert, Agent::Policy(random)]
        .into_iter()
        .map(|agent| evaluate_episodes(factory, agent, &config).map(EvalRecord::episodes))
        .collect()
}
