//! The command line the pipeline examples share (`quickstart`, `alfworld`, `webshop`): a config file, seeds and
//! overrides; one experiment per seed in `<out>/<name>/seed-N/`, then the summary over seeds.

use std::path::PathBuf;

use act_core::{EnvironmentFactory, Split};

use crate::config::ExperimentConfig;
use crate::experiment::{Benchmark, run_experiment};
use crate::stages::BoxError;

/// Options of the pipeline examples.
#[derive(Debug, Clone, clap::Args)]
pub struct PipelineArgs {
    /// Where the run directory is created.
    #[arg(long, default_value = "runs")]
    pub out: PathBuf,
    /// The run's name (its directory under --out); defaults to the example's name.
    #[arg(long)]
    pub name: Option<String>,
    /// A JSON experiment config (any subset of fields; see docs/pipeline.md). Flags below override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Seeds, comma-separated: one whole experiment each, then a summary over them.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub seeds: Vec<u64>,
    /// Training tasks whose expert trajectories are the training data.
    #[arg(long)]
    pub train_games: Option<usize>,
    /// Evaluation episodes per split (default: the whole split).
    #[arg(long)]
    pub eval_episodes: Option<usize>,
    /// Also run the paper's controls (re-sampled pairs; IL for as many extra steps as ACT took).
    #[arg(long, conflicts_with = "no_controls")]
    pub controls: bool,
    /// Skip the paper's controls even where the config file asks for them.
    #[arg(long)]
    pub no_controls: bool,
    /// Train ACT on this pairs.jsonl (from another run) instead of sampling pairs from this run's π₀.
    #[arg(long)]
    pub pairs_from: Option<PathBuf>,
    /// The model preset (`micro`, `tiny`, `small-400k`, `small-1m`, `small-6m`, ...), trained from scratch.
    #[arg(long)]
    pub preset: Option<String>,
    /// The backend: flex, tch, tch-cuda:N, cuda:N.
    #[arg(long)]
    pub backend: Option<String>,
    /// Keep each evaluated episode's steps (observation, the model's output, the action, whether it was valid) in
    /// the trained methods' evaluation records under `eval/`; records saved without them are evaluated again.
    #[arg(long)]
    pub transcripts: bool,
}

impl PipelineArgs {
    /// The experiment config: the file's (or [`ExperimentConfig::default`]), with the flags applied.
    pub fn experiment_config(&self) -> Result<ExperimentConfig, BoxError> {
        self.experiment_config_or(ExperimentConfig::default())
    }

    /// The experiment config: the file's (or `defaults` when no file is given), with the flags applied.
    pub fn experiment_config_or(&self, defaults: ExperimentConfig) -> Result<ExperimentConfig, BoxError> {
        let mut config = match &self.config {
            Some(path) => ExperimentConfig::from_json_file(path)?,
            None => defaults,
        };
        if let Some(n) = self.train_games {
            config.train_games = n;
        }
        if self.eval_episodes.is_some() {
            config.eval_episodes = self.eval_episodes;
        }
        if self.controls {
            config.controls = true;
        }
        if self.no_controls {
            config.controls = false;
        }
        if self.pairs_from.is_some() {
            config.pairs_from = self.pairs_from.clone();
        }
        if let Some(preset) = &self.preset {
            // A preset keeps the configuration's other model settings; a checkpoint gives way to the defaults.
            if matches!(config.training.model, crate::config::ModelSource::Checkpoint { .. }) {
                config.training.model = crate::config::ModelSource::default();
            }
            if let crate::config::ModelSource::Preset { name, .. } = &mut config.training.model {
                name.clone_from(preset);
            }
        }
        if let Some(backend) = &self.backend {
            config.training.backend = backend.clone();
        }
        config.transcripts |= self.transcripts;
        config.validate()?;
        Ok(config)
    }
}

/// Runs the experiment of `config` (from [`PipelineArgs::experiment_config`]) once per seed of `args`, then writes
/// and prints the summary comparing ACT → IL with IL.
pub fn run_seeds<F: EnvironmentFactory>(
    bench: &Benchmark<F>,
    args: &PipelineArgs,
    config: &ExperimentConfig,
    default_name: &str,
) -> Result<(), BoxError> {
    let started = std::time::Instant::now();
    let dir = crate::run_dir(&args.out, args.name.as_deref().unwrap_or(default_name))?;
    let mut results = Vec::new();
    for &seed in &args.seeds {
        let seed_dir = dir.join(format!("seed-{seed}"));
        println!("\n== {} seed {seed} -> {}", bench.name, seed_dir.display());
        let result = run_experiment(bench, &ExperimentConfig { seed, ..config.clone() }, &seed_dir)?;
        println!("\n{}", result.markdown);
        results.push(result);
    }
    let splits: Vec<Split> = bench.eval_splits.clone();
    let summary = crate::seeds::summarize(&results, &args.seeds, &splits, &crate::seeds::COMPARISONS)?;
    let markdown = format!("# ACT on {}: summary\n\n{summary}", bench.name);
    act_core::atomic_write(dir.join("summary.md"), markdown.as_bytes())?;
    let online = crate::seeds::online_success_over_seeds(&results)?;
    if !online.is_empty() {
        act_eval::plot_lines(
            &online,
            "environment steps",
            "rollout success (%)",
            &format!("{}: on-line RL, success of each iteration's episodes (seeds {:?})", bench.name, args.seeds),
            dir.join("online_success.svg"),
        )?;
    }
    println!("\n{markdown}");
    println!("done in {:.1} s; results in {}", started.elapsed().as_secs_f64(), dir.join("summary.md").display());
    Ok(())
}
