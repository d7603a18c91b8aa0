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
//! 4. reward check: the comparison reward scores the expert's choice 1 and a coin flip about one half on held-out
//!    pairs from the in-distribution split;
//! 5. on-line evaluation of the expert and the random policy on the in-distribution and out-of-distribution
//!    splits, with 95% bootstrap intervals, as a Markdown table and an SVG chart.
//!
//! Training a model on these sets (ACT → IL → RL with the Burn trainer) is not part of this example yet.

use std::time::Instant;

use act_alfworld::{AlfworldConfig, AlfworldFactory};
use act_core::{
    EnvError, Environment, EnvironmentFactory, PromptConfig, Prompter, RandomAdmissiblePolicy, ReplayPolicy, RewardFn, Split,
    TaskRef, Trajectory, collect_expert_trajectory, derive_seed, write_jsonl,
};
use act_eval::{Agent, EpisodeEvalConfig, EvalRecord, Evaluation, ItemEvalConfig, evaluate_critic, evaluate_episodes};
use act_examples::{Stage, run_dir};
use act_pairs::{PairBuilder, PairConfig};
use act_rewards::ComparisonConfig;
use clap::Parser;
use rayon::prelude::*;

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
    if let Err(err) = run(Args::parse()) {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let dir = run_dir(&args.out, &args.name)?;
    println!("act-rs quickstart: native ALFWorld, seed {}, run directory {}", args.seed, dir.display());

    let env_config = AlfworldConfig::default().with_train_size(args.train_games.max(1));
    let factory = AlfworldFactory::new(env_config);
    let prompt = PromptConfig::default().with_environment("the ALFRED Embodied Environment");

    // 1. Expert trajectories.
    let stage = Stage::start("expert trajectories (train)");
    let train = expert_trajectories(&factory, Split::Train, args.train_games, args.seed)?;
    let held_out = expert_trajectories(&factory, Split::EvalInDistribution, usize::MAX, args.seed)?;
    write_jsonl(dir.join("expert_train.jsonl"), &train)?;
    let won = train.iter().filter(|t| t.outcome.won).count();
    let states: usize = train.iter().map(|t| t.steps.len()).sum();
    stage.done(&format!("{won}/{} won, {states} expert states -> expert_train.jsonl", train.len()));

    // 2. Critic pairs from the initial policy.
    let stage = Stage::start("critic pairs from π₀ = random admissible");
    let pair_config = PairConfig::default().with_k(args.k).with_seed(args.seed).with_prompt(prompt.clone());
    let builder = PairBuilder::new(pair_config.clone(), RandomAdmissiblePolicy::new())?;
    let pairs = builder.build(&train, 0)?;
    pairs.write_jsonl(dir.join("pairs.jsonl"))?;
    std::fs::write(dir.join("pair_stats.md"), pairs.stats.to_string())?;
    stage.done(&format!("{} pairs -> pairs.jsonl, pair_stats.md", pairs.pairs.len()));
    println!("{}", pairs.stats);

    // 3. The method's training sets.
    let stage = Stage::start("training sets (ACT, IL, RL)");
    let prompter = Prompter::new(prompt.clone())?;
    let plain = Prompter::new(prompt.clone().with_reasoning(false))?;
    let act: Vec<_> = pairs.pairs.iter().map(|p| prompter.comparison_sample(p)).collect();
    let expert_states: Vec<_> = train.iter().flat_map(|t| t.states(prompt.history_len)).collect();
    let il: Vec<_> = expert_states.iter().map(|(s, a)| plain.sft_sample(s, a, None)).collect();
    let rl: Vec<_> = expert_states.iter().map(|(s, a)| prompter.next_action_sample(s, a)).collect();
    write_jsonl(dir.join("act_comparison.jsonl"), &act)?;
    write_jsonl(dir.join("il_sft.jsonl"), &il)?;
    write_jsonl(dir.join("rl_next_action.jsonl"), &rl)?;
    stage.done(&format!("{} ACT, {} IL, {} RL samples", act.len(), il.len(), rl.len()));

    // 4. The comparison reward and critic accuracy on held-out pairs.
    let stage = Stage::start("reward check on held-out (ID) pairs");
    let held_out_pairs = PairBuilder::new(pair_config.with_seed(derive_seed(args.seed, 1)), RandomAdmissiblePolicy::new())?
        .build(&held_out, 0)?
        .pairs;
    let reward = ComparisonConfig::default().build()?;
    let expert_critic = ReplayPolicy::new(&held_out).with_name("expert (replay)");
    let random_critic = RandomAdmissiblePolicy::new();
    let item_config = ItemEvalConfig::default().with_seed(args.seed).with_prompt(prompt.clone());
    let mut records = Vec::new();
    for critic in [&expert_critic as &dyn act_core::Policy, &random_critic] {
        let report = evaluate_critic(critic, &held_out_pairs, &item_config)?;
        // The reward the ACT trainer would give these answers, from the same completions.
        let mean_reward = mean_comparison_reward(&reward, &held_out_pairs, &report)?;
        println!(
            "  {:<18} critic accuracy {:5.1}% (parsed {:5.1}%), mean comparison reward {mean_reward:.3}",
            critic.name(),
            100.0 * report.summary.accuracy.value,
            100.0 * report.summary.parse_rate.value
        );
        records.push(EvalRecord::new("alfworld critic (ID pairs)", Evaluation::Critic(report)));
    }
    stage.done(&format!("{} held-out pairs", held_out_pairs.len()));

    // 5. On-line evaluation.
    let stage = Stage::start("on-line evaluation (ID, OOD)");
    let random = RandomAdmissiblePolicy::new();
    for split in [Split::EvalInDistribution, Split::EvalOutOfDistribution] {
        let mut config = EpisodeEvalConfig::new(split).with_seed(args.seed).with_prompt(prompt.clone());
        if let Some(n) = args.eval_episodes {
            config = config.with_episodes(n);
        }
        for agent in [Agent::Expert, Agent::Policy(&random)] {
            let report = evaluate_episodes(&factory, agent, &config)?;
            let record = EvalRecord::episodes(report);
            record.save(dir.join(format!("eval_{}_{}.json", record.method().replace(' ', "-"), split)))?;
            records.push(record);
        }
    }
    let (episode_records, critic_records): (Vec<_>, Vec<_>) =
        records.into_iter().partition(|r| matches!(r.evaluation, Evaluation::Episodes(_)));
    let table = act_eval::render_table(&episode_records)?;
    let critic_table = act_eval::render_table(&critic_records)?;
    act_eval::plot_success_by_method(&episode_records, "native ALFWorld: success rate", dir.join("success.svg"))?;
    stage.done("eval_*.json, success.svg");

    let results = format!(
        "# Quickstart results (seed {})\n\nSuccess rate in %, 95% bootstrap interval.\n\n{table}\n\nCritic accuracy on \
         held-out pairs in %.\n\n{critic_table}\n\nPairs:\n\n{}\n",
        args.seed, pairs.stats
    );
    act_core::atomic_write(dir.join("results.md"), results.as_bytes())?;
    println!("\n{table}\n\n{critic_table}\n");
    println!("done in {:.1} s; results in {}", started.elapsed().as_secs_f64(), dir.join("results.md").display());
    Ok(())
}

/// The expert's trajectories on the first `games` tasks of `split` (all of them when `games` exceeds the split),
/// in parallel over independent environments; episode `i` is seeded with `derive_seed(seed, i)`.
fn expert_trajectories(
    factory: &AlfworldFactory,
    split: Split,
    games: usize,
    seed: u64,
) -> Result<Vec<Trajectory>, EnvError> {
    let available = factory.make()?.num_tasks(split)?;
    (0..games.min(available))
        .into_par_iter()
        .map_init(
            || factory.make(),
            |env, i| {
                let env = env.as_mut().map_err(|e| EnvError::Backend(e.to_string()))?;
                collect_expert_trajectory(env, &TaskRef::index(split, i), derive_seed(seed, i as u64))
            },
        )
        .collect()
}

/// The mean comparison reward of the critic's raw outputs: what the ACT trainer would reward them with.
fn mean_comparison_reward(
    reward: &dyn RewardFn,
    pairs: &[act_core::ActionPair],
    report: &act_eval::CriticReport,
) -> Result<f64, act_core::RewardError> {
    let mut total = 0.0;
    for (pair, result) in pairs.iter().zip(&report.results) {
        total += reward.score(&pair.reward_target(), &result.output)?.total;
    }
    Ok(total / pairs.len().max(1) as f64)
}
