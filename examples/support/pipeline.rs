//! ACT's data pipeline on the native ALFWorld, as the quickstart runs it: expert trajectories, critic pairs, the
//! method's three training sets, a reward check on held-out pairs, and on-line evaluation.
//!
//! Every artefact is written to the run directory; [`PipelineSummary`] says what was written and measured.

use std::path::{Path, PathBuf};

use act_alfworld::{AlfworldConfig, AlfworldFactory};
use act_core::{
    ActionPair, EnvError, Environment, EnvironmentFactory, Policy, PromptConfig, Prompter, RandomAdmissiblePolicy,
    ReplayPolicy, RewardFn, Split, TaskRef, Trajectory, derive_seed, write_jsonl,
};
use act_eval::{
    Agent, CriticReport, EpisodeEvalConfig, EvalRecord, Evaluation, ItemEvalConfig, evaluate_critic, evaluate_episodes,
};
use act_pairs::{PairBuilder, PairConfig, PairStats};
use act_rewards::ComparisonConfig;
use act_rollout::{EpisodeSpec, ExpertActor, Rollout, RolloutError};
use rayon::prelude::*;

use crate::Stage;

/// What the data pipeline runs on.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Training games whose expert trajectories become the training data.
    pub train_games: usize,
    /// Alternatives sampled from π₀ at each expert state.
    pub k: usize,
    /// The seed every random choice flows from.
    pub seed: u64,
    /// Evaluation episodes per split; `None` plays the whole split (140 ID, 134 OOD).
    pub eval_episodes: Option<usize>,
    /// Held-out (ID) expert trajectories whose pairs measure critic accuracy; `None` uses the whole split.
    pub held_out_games: Option<usize>,
    /// Whether to print stage lines and tables.
    pub verbose: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig { train_games: 500, k: 4, seed: 0, eval_episodes: None, held_out_games: None, verbose: true }
    }
}

/// What one run wrote and measured.
#[derive(Debug)]
pub struct PipelineSummary {
    /// The run directory.
    pub dir: PathBuf,
    /// The expert's training trajectories.
    pub train: Vec<Trajectory>,
    /// The critic pairs built from them.
    pub pairs: Vec<ActionPair>,
    /// The pair statistics.
    pub pair_stats: PairStats,
    /// Critic accuracy of the expert and of a coin flip on held-out pairs, with the mean comparison reward of
    /// their answers.
    pub critic: Vec<(CriticReport, f64)>,
    /// On-line evaluations (expert and random admissible, ID and OOD).
    pub episodes: Vec<EvalRecord>,
    /// The Markdown results, also written to `results.md`.
    pub results_markdown: String,
}

/// The prompt configuration used for ALFWorld throughout.
pub fn alfworld_prompt() -> PromptConfig {
    PromptConfig::default().with_environment("the ALFRED Embodied Environment")
}

/// Runs the pipeline into `dir`.
pub fn run_alfworld_pipeline(
    dir: &Path,
    config: &PipelineConfig,
) -> Result<PipelineSummary, Box<dyn std::error::Error>> {
    let say = |text: &str| {
        if config.verbose {
            println!("{text}");
        }
    };
    let stage = |name: &str| Stage::start_quiet(name, !config.verbose);
    let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(config.train_games.max(1)));
    let prompt = alfworld_prompt();

    // 1. Expert trajectories.
    let s = stage("expert trajectories (train)");
    let train = expert_trajectories(&factory, Split::Train, config.train_games, config.seed)?;
    write_jsonl(dir.join("expert_train.jsonl"), &train)?;
    let won = train.iter().filter(|t| t.outcome.won).count();
    let states: usize = train.iter().map(|t| t.steps.len()).sum();
    s.done(&format!("{won}/{} won, {states} expert states -> expert_train.jsonl", train.len()));

    // 2. Critic pairs from the initial policy.
    let s = stage("critic pairs from π₀ = random admissible");
    let pair_config = PairConfig::default()
        .with_k(config.k)
        .with_seed(config.seed)
        .with_prompt(prompt.clone())
        .with_progress(config.verbose);
    let pair_set = PairBuilder::new(pair_config.clone(), RandomAdmissiblePolicy::new())?.build(&train, 0)?;
    pair_set.write_jsonl(dir.join("pairs.jsonl"))?;
    act_core::atomic_write(dir.join("pair_stats.md"), pair_set.stats.to_string().as_bytes())?;
    s.done(&format!("{} pairs -> pairs.jsonl, pair_stats.md", pair_set.pairs.len()));
    say(&pair_set.stats.to_string());

    // 3. The method's training sets.
    let s = stage("training sets (ACT, IL, RL)");
    let prompter = Prompter::new(prompt.clone())?;
    let plain = Prompter::new(prompt.clone().with_reasoning(false))?;
    let act: Vec<_> = pair_set.pairs.iter().map(|p| prompter.comparison_sample(p)).collect();
    let expert_states: Vec<_> = train.iter().flat_map(|t| t.states(prompt.history_len)).collect();
    let il: Vec<_> = expert_states.iter().map(|(s, a)| plain.sft_sample(s, a, None)).collect();
    let rl: Vec<_> = expert_states.iter().map(|(s, a)| prompter.next_action_sample(s, a)).collect();
    write_jsonl(dir.join("act_comparison.jsonl"), &act)?;
    write_jsonl(dir.join("il_sft.jsonl"), &il)?;
    write_jsonl(dir.join("rl_next_action.jsonl"), &rl)?;
    s.done(&format!("{} ACT, {} IL, {} RL samples", act.len(), il.len(), rl.len()));

    // 4. The comparison reward and critic accuracy on held-out pairs.
    let s = stage("reward check on held-out (ID) pairs");
    let held_out_games = config.held_out_games.unwrap_or(usize::MAX);
    let held_out = expert_trajectories(&factory, Split::EvalInDistribution, held_out_games, config.seed)?;
    let held_out_pairs =
        PairBuilder::new(pair_config.with_seed(derive_seed(config.seed, 1)), RandomAdmissiblePolicy::new())?
            .build(&held_out, 0)?
            .pairs;
    let reward = ComparisonConfig::default().build()?;
    let expert_critic = ReplayPolicy::new(&held_out).with_name("expert (replay)");
    let random_critic = RandomAdmissiblePolicy::new();
    let item_config =
        ItemEvalConfig::default().with_seed(config.seed).with_prompt(prompt.clone()).with_progress(config.verbose);
    let mut critic = Vec::new();
    for policy in [&expert_critic as &dyn Policy, &random_critic] {
        let report = evaluate_critic(policy, &held_out_pairs, &item_config)?;
        let mean_reward = mean_comparison_reward(&reward, &held_out_pairs, &report)?;
        say(&format!(
            "  {:<18} critic accuracy {:5.1}% (parsed {:5.1}%), mean comparison reward {mean_reward:.3}",
            policy.name(),
            100.0 * report.summary.accuracy.value,
            100.0 * report.summary.parse_rate.value
        ));
        critic.push((report, mean_reward));
    }
    s.done(&format!("{} held-out pairs", held_out_pairs.len()));

    // 5. On-line evaluation.
    let s = stage("on-line evaluation (ID, OOD)");
    let random = RandomAdmissiblePolicy::new();
    let mut episodes = Vec::new();
    for split in [Split::EvalInDistribution, Split::EvalOutOfDistribution] {
        let mut eval = EpisodeEvalConfig::new(split)
            .with_seed(config.seed)
            .with_prompt(prompt.clone())
            .with_progress(config.verbose);
        if let Some(n) = config.eval_episodes {
            eval = eval.with_episodes(n);
        }
        for agent in [Agent::Expert, Agent::Policy(&random)] {
            let record = EvalRecord::episodes(evaluate_episodes(&factory, agent, &eval)?);
            record.save(dir.join(format!("eval_{}_{}.json", record.method().replace(' ', "-"), split)))?;
            episodes.push(record);
        }
    }
    let critic_records: Vec<_> = critic
        .iter()
        .map(|(report, _)| EvalRecord::new("alfworld critic (ID pairs)", Evaluation::Critic(report.clone())))
        .collect();
    let table = act_eval::render_table(&episodes)?;
    let critic_table = act_eval::render_table(&critic_records)?;
    act_eval::plot_success_by_method(&episodes, "native ALFWorld: success rate", dir.join("success.svg"))?;
    s.done("eval_*.json, success.svg");

    let results_markdown = format!(
        "# Quickstart results (seed {})\n\nSuccess rate in %, 95% bootstrap interval.\n\n{table}\n\nCritic accuracy on \
         held-out pairs in %.\n\n{critic_table}\n\n{}\n",
        config.seed, pair_set.stats
    );
    act_core::atomic_write(dir.join("results.md"), results_markdown.as_bytes())?;
    Ok(PipelineSummary {
        dir: dir.to_owned(),
        train,
        pairs: pair_set.pairs,
        pair_stats: pair_set.stats,
        critic,
        episodes,
        results_markdown,
    })
}

/// The expert's trajectories on the first `games` tasks of `split` (all of them when `games` exceeds the split),
/// in parallel over independent environments; episode `i` is seeded with `derive_seed(seed, i)`.
pub fn expert_trajectories<F: EnvironmentFactory>(
    factory: &F,
    split: Split,
    games: usize,
    seed: u64,
) -> Result<Vec<Trajectory>, RolloutError> {
    expert_trajectories_from(factory, split, 0, games, seed)
}

/// The expert's trajectories on tasks `first..first + games` of `split` (fewer when the split ends sooner);
/// episode `i` of the range is seeded with `derive_seed(seed, i)`.
pub fn expert_trajectories_from<F: EnvironmentFactory>(
    factory: &F,
    split: Split,
    first: usize,
    games: usize,
    seed: u64,
) -> Result<Vec<Trajectory>, RolloutError> {
    let env = factory.make().map_err(RolloutError::MakeEnv)?;
    let available = env.num_tasks(split).map_err(|e| RolloutError::Config(format!("split `{split}`: {e}")))?;
    let specs: Vec<EpisodeSpec> = (0..games.min(available.saturating_sub(first)))
        .map(|i| {
            let episode_seed = derive_seed(seed, i as u64);
            let task = TaskRef::index(split, first + i);
            EpisodeSpec { index: i, task, seed: episode_seed, sample_seed: episode_seed, group: i }
        })
        .collect();
    let played = Rollout::new(factory, &ExpertActor).with_env(env).play(&specs)?;
    Ok(played.into_iter().map(|episode| episode.trajectory).collect())
}

/// `play(env, i)` for episodes `0..episodes`, in parallel, each worker thread on its own environment from
/// `factory`; the results are in episode order.
pub fn per_episode<F: EnvironmentFactory, T: Send>(
    factory: &F,
    episodes: usize,
    play: impl Fn(&mut F::Env, usize) -> Result<T, EnvError> + Sync,
) -> Result<Vec<T>, EnvError> {
    (0..episodes)
        .into_par_iter()
        .map_init(
            || factory.make(),
            |env, i| {
                let env = env.as_mut().map_err(|e| EnvError::Backend(e.to_string()))?;
                play(env, i)
            },
        )
        .collect()
}

/// The mean comparison reward of the critic's raw outputs: what the ACT trainer would reward them with.
fn mean_comparison_reward(
    reward: &dyn RewardFn,
    pairs: &[ActionPair],
    report: &CriticReport,
) -> Result<f64, act_core::RewardError> {
    let mut total = 0.0;
    for (pair, result) in pairs.iter().zip(&report.results) {
        total += reward.score(&pair.reward_target(), &result.output)?.total;
    }
    Ok(total / pairs.len().max(1) as f64)
}
