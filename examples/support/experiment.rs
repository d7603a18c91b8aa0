//! One ACT experiment on one benchmark and one seed: the paper's pipeline end to end, and every method of its
//! table evaluated on the same tasks.
//!
//! Stages (directories under the run directory):
//! `expert_train.jsonl` (1) → `tokenizer.json`, `models/base` (0) → `pairs.jsonl` (2) → `models/act` (3) →
//! `models/il`, `models/act_il` (4) → `models/il_rl`, `models/act_il_rl` (5) → `eval/*.json` (6) →
//! `results.md`, `success.svg`. With controls: `models/act_resampled`, `models/act_resampled_il` (ACT on pairs
//! re-sampled each epoch) and `models/il_matched` (IL for as many extra steps as ACT took). With `training.iwm`:
//! `world_model.jsonl` (2c) → `models/iwm` → `models/iwm_il` (Early Experience's world modelling, then IL). With
//! `training.sr`: `reflections.jsonl` (2d) → `models/sr` → `models/sr_il` (its self-reflection, then IL).
//! Each stage is skipped when its output exists, so an interrupted run picks up where it stopped.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use act_core::{
    ActionPair, EnvironmentFactory, Policy, Prompter, RandomAdmissiblePolicy, SamplingParams, SftSample, Split,
    TaskRef, derive_seed, read_jsonl, write_jsonl,
};
use act_eval::{
    Agent, CriticReport, EpisodeEvalConfig, EpisodeReport, EvalRecord, Evaluation, ItemEvalConfig, NextActionItem,
    NextActionReport, evaluate_critic, evaluate_episodes, evaluate_next_action,
};
use act_model::{BackendKind, ChatTemplate, ModelPolicy, Qwen3Config};
use act_pairs::{PairBuilder, PairConfig, PairMode};
use act_rewards::{ComparisonConfig, NextActionConfig};
use act_rollout::PolicyActor;

use crate::Stage;
use crate::config::{BaseData, ExperimentConfig, ModelSource, OnlineAlgorithm, PromptStyle};
use crate::pipeline::expert_trajectories;
use crate::prompts::prompt_config;
use crate::stages::{BoxError, HeldOutProbe, ModelContext, StageRun, StartFrom, act_samples, base_samples, model_dir};

/// A benchmark the pipeline runs on: an environment factory and its splits.
pub struct Benchmark<F> {
    /// Short name for files and tables (`alfworld`).
    pub name: String,
    /// How prompts name the environment.
    pub environment: String,
    /// Makes environments.
    pub factory: F,
    /// Where the expert trajectories come from.
    pub train_split: Split,
    /// The splits evaluated on-line (the first also supplies the held-out critic pairs).
    pub eval_splits: Vec<Split>,
    /// Whether prompts list the admissible actions (off for ScienceWorld, whose several hundred valid actions per
    /// state do not fit a prompt).
    pub show_admissible: bool,
    /// Whether objects are named `<class> <number>` with arbitrary numbers (ALFWorld), so that training episodes
    /// can be augmented by renaming them (`renamed_copies`).
    pub numbered_objects: bool,
    /// Whether observations end with ALFWorld's memory line of unvisited receptacles
    /// ([`act_alfworld::AlfworldConfig::memory_line`]); must match the config's `memory_line`.
    pub memory_line: bool,
    /// ALFWorld's expert search order ([`act_alfworld::AlfworldConfig::expert_search`]); must match the config's
    /// `expert_search` (upstream's order everywhere else).
    pub expert_search: act_alfworld::SearchOrder,
}

impl Benchmark<act_alfworld::AlfworldFactory> {
    /// The native ALFWorld as the quickstart and the `alfworld` example run it: `train_tasks` training tasks
    /// ([`ExperimentConfig::train_tasks`]), then on-line evaluation on the in-distribution and out-of-distribution
    /// splits; upstream's text (see [`Benchmark::with_memory_line`]).
    pub fn native_alfworld(train_tasks: usize) -> Self {
        let config = act_alfworld::AlfworldConfig::default().with_train_size(train_tasks.max(1));
        Benchmark {
            name: "alfworld".into(),
            environment: "the ALFRED Embodied Environment".into(),
            factory: act_alfworld::AlfworldFactory::new(config),
            train_split: Split::Train,
            eval_splits: vec![Split::EvalInDistribution, Split::EvalOutOfDistribution],
            show_admissible: true,
            numbered_objects: true,
            memory_line: false,
            expert_search: act_alfworld::SearchOrder::LastListedFirst,
        }
    }

    /// Sets whether observations end with the memory line of unvisited receptacles (the config's `memory_line`).
    pub fn with_memory_line(mut self, memory_line: bool) -> Self {
        self.factory.config.memory_line = memory_line;
        self.memory_line = memory_line;
        self
    }

    /// Sets the expert's search order (the config's `expert_search`).
    pub fn with_expert_search(mut self, order: act_alfworld::SearchOrder) -> Self {
        self.factory.config.expert_search = order;
        self.expert_search = order;
        self
    }

    /// The native ALFWorld with what `config` sets of it: its training tasks, memory line, expert search order and
    /// game directory.
    pub fn native_alfworld_for(config: &ExperimentConfig) -> Self {
        let mut benchmark = Self::native_alfworld(config.train_tasks())
            .with_memory_line(config.memory_line)
            .with_expert_search(config.expert_search);
        benchmark.factory.config.game_dir = config.alfworld_game_dir.clone();
        benchmark
    }
}

impl Benchmark<act_sciworld::SciWorldFactory> {
    /// ScienceWorld as the `sciworld` example runs it: the split's variations numbered round-robin over the tasks of
    /// `config` (so the first `train_games` cover every task), training on train, evaluation on test, and prompts
    /// without the valid-action list (several hundred entries per state).
    pub fn sciworld(config: act_sciworld::SciWorldConfig) -> Self {
        Benchmark {
            name: "sciworld".into(),
            environment: "ScienceWorld".into(),
            factory: act_sciworld::SciWorldFactory::new(config.with_order(act_sciworld::TaskOrder::RoundRobin)),
            train_split: Split::Train,
            eval_splits: vec![Split::Test],
            show_admissible: false,
            numbered_objects: false,
            memory_line: false,
            expert_search: act_alfworld::SearchOrder::LastListedFirst,
        }
    }
}

/// One row of the paper's method table: which trained model acts, and with which prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    /// The row's name.
    pub name: &'static str,
    /// The model's stage directory under `models/`.
    pub model: &'static str,
    /// Whether its action prompt asks for reasoning.
    pub reasoning: bool,
    /// Whether it is one of the paper's controls.
    pub control: bool,
    /// The on-line RL algorithm of its last stage, if any (trained when the config's `training.online` lists it).
    pub online: Option<OnlineAlgorithm>,
    /// Whether it starts from Early Experience's world-modelling stage (trained when the config's `training.iwm`
    /// is set).
    pub world_model: bool,
    /// Whether it starts from Early Experience's self-reflection stage (trained when the config's `training.sr` is
    /// set).
    pub reflection: bool,
}

impl Method {
    /// Whether `config` trains and evaluates this method.
    pub fn runs_in(&self, config: &ExperimentConfig) -> bool {
        let online = match self.online {
            None => true,
            Some(algorithm) => config.training.online.as_ref().is_some_and(|o| {
                o.algorithms.contains(&algorithm) && (o.from_act_il || !self.model.starts_with("act_il"))
            }),
        };
        (config.controls || !self.control)
            && online
            && (!self.world_model || config.training.iwm.is_some())
            && (!self.reflection || config.training.sr.is_some())
    }
}

/// A method of the table with everything but its name, model and prompt at the usual values.
const fn method(name: &'static str, model: &'static str, reasoning: bool) -> Method {
    Method { name, model, reasoning, control: false, online: None, world_model: false, reflection: false }
}

/// The methods, in the paper's order (Early Experience's implicit world modelling and self-reflection when the
/// config asks for them),
/// then on-line RL in the environment (verl-agent's GiGPO and episode-level GRPO, ActGuide-RL's guided GRPO and
/// ICRL's solver and critic, when the config asks for them), then the controls.
pub const METHODS: [Method; 19] = [
    method("prompt", "base", false),
    method("prompt + reasoning", "base", true),
    method("ACT only", "act", true),
    method("IL", "il", false),
    method("ACT -> IL", "act_il", false),
    method("IL -> RL", "il_rl", false),
    method("ACT -> IL -> RL", "act_il_rl", false),
    Method { world_model: true, ..method("IWM -> IL", "iwm_il", false) },
    Method { reflection: true, ..method("SR -> IL", "sr_il", false) },
    Method { online: Some(OnlineAlgorithm::Gigpo), ..method("IL -> GiGPO", "il_gigpo", false) },
    Method { online: Some(OnlineAlgorithm::Gigpo), ..method("ACT -> IL -> GiGPO", "act_il_gigpo", false) },
    Method { online: Some(OnlineAlgorithm::EpisodeGrpo), ..method("IL -> GRPO (on-line)", "il_grpo_online", false) },
    Method {
        online: Some(OnlineAlgorithm::EpisodeGrpo),
        ..method("ACT -> IL -> GRPO (on-line)", "act_il_grpo_online", false)
    },
    Method { online: Some(OnlineAlgorithm::ActGuide), ..method("IL -> ActGuide-RL", "il_actguide", false) },
    Method { online: Some(OnlineAlgorithm::ActGuide), ..method("ACT -> IL -> ActGuide-RL", "act_il_actguide", false) },
    Method { online: Some(OnlineAlgorithm::Icrl), ..method("IL -> ICRL", "il_icrl", false) },
    Method { online: Some(OnlineAlgorithm::Icrl), ..method("ACT -> IL -> ICRL", "act_il_icrl", false) },
    Method { control: true, ..method("IL (matched steps)", "il_matched", false) },
    Method { control: true, ..method("ACT (re-sampled pairs) -> IL", "act_resampled_il", false) },
];

/// The on-line stages of [`METHODS`]: each method's name and its stage directory under `models`.
pub fn online_stages(models: &Path) -> Vec<(&'static str, PathBuf)> {
    METHODS.iter().filter(|m| m.online.is_some()).map(|m| (m.name, models.join(m.model))).collect()
}

/// What one experiment produced.
#[derive(Debug)]
pub struct ExperimentResult {
    /// The run directory.
    pub dir: PathBuf,
    /// On-line evaluations: per method (and the expert and random references), per split.
    pub episodes: Vec<EvalRecord>,
    /// Next-action accuracy on held-out expert states, per method, per split.
    pub next_action: Vec<EvalRecord>,
    /// Critic accuracy on held-out pairs, per method.
    pub critic: Vec<EvalRecord>,
    /// The Markdown report, also in `results.md`.
    pub markdown: String,
}

impl ExperimentResult {
    /// The episode report of `method` on `split`.
    pub fn episodes_of(&self, method: &str, split: Split) -> Option<&EpisodeReport> {
        self.episodes.iter().find_map(|r| match &r.evaluation {
            Evaluation::Episodes(e) if e.method == method && e.config.split == split => Some(e),
            _ => None,
        })
    }

    /// The next-action report of `method` on held-out expert states of `split`.
    pub fn next_action_of(&self, method: &str, split: Split) -> Option<&NextActionReport> {
        let benchmark = next_action_benchmark(split);
        self.next_action.iter().find_map(|r| match &r.evaluation {
            Evaluation::NextAction(e) if e.method == method && r.benchmark.ends_with(&benchmark) => Some(e),
            _ => None,
        })
    }
}

/// The benchmark label of next-action records on `split` (after the environment's name).
fn next_action_benchmark(split: Split) -> String {
    format!("next action ({split} expert states)")
}

/// The prompters of a run.
struct Prompts {
    plain: Prompter,
    reasoning: Prompter,
    history_len: usize,
}

/// Runs the experiment of `config` on `bench` into `dir`.
pub fn run_experiment<F: EnvironmentFactory>(
    bench: &Benchmark<F>,
    config: &ExperimentConfig,
    dir: &Path,
) -> Result<ExperimentResult, BoxError> {
    config.validate()?;
    if config.renamed_copies > 0 && !bench.numbered_objects {
        return Err(format!("renamed_copies: {} does not number its objects; set it to 0", bench.name).into());
    }
    if config.memory_line != bench.memory_line {
        return Err(format!("memory_line: {} has no memory line to turn on or off here; remove it", bench.name).into());
    }
    if config.expert_search != bench.expert_search {
        return Err(
            format!("expert_search: {} has no such expert search order to set here; remove it", bench.name).into()
        );
    }
    std::fs::create_dir_all(dir)?;
    let config_json = serde_json::to_string_pretty(config)?;
    let config_path = dir.join("config.json");
    match std::fs::read_to_string(&config_path) {
        // Resuming with other settings would mix two experiments in one directory.
        Ok(existing) if existing != config_json => {
            return Err(format!(
                "{} holds a run with another config ({}); choose another run name or delete it",
                dir.display(),
                config_path.display()
            )
            .into());
        }
        Ok(_) => {}
        Err(_) => act_core::atomic_write(&config_path, config_json.as_bytes())?,
    }
    let seed = config.seed;
    let t = &config.training;
    let backend: BackendKind = t.backend.parse()?;
    let prompt_of = |reasoning: bool| {
        prompt_config(config.prompt_style, &bench.environment, reasoning).with_show_admissible(bench.show_admissible)
    };
    let plain_config = prompt_of(false);
    let prompts = Prompts {
        reasoning: Prompter::new(prompt_of(true))?,
        history_len: plain_config.history_len,
        plain: Prompter::new(plain_config.clone())?,
    };
    let action_tokens = config.action_tokens.unwrap_or(match config.prompt_style {
        PromptStyle::Compact | PromptStyle::Conversation => 24,
        PromptStyle::Paper => 512,
    });
    let held_out_split = *bench.eval_splits.first().ok_or("the benchmark has no evaluation split")?;

    // 1. Expert trajectories.
    let s = Stage::start("1. expert trajectories");
    let train = cached_jsonl(&dir.join("expert_train.jsonl"), || {
        expert_trajectories(&bench.factory, bench.train_split, config.train_games, seed)
    })?;
    let held_out = cached_jsonl(&dir.join("expert_held_out.jsonl"), || {
        expert_trajectories(&bench.factory, held_out_split, config.critic_games, derive_seed(seed, 1))
    })?;
    // Next-action accuracy is measured on held-out expert states of every evaluation split: the first split's are
    // the critic trajectories, the others get their own.
    let mut next_action_items = vec![(held_out_split, items_of(&held_out, prompts.history_len))];
    for (i, split) in bench.eval_splits.iter().enumerate().skip(1) {
        let trajectories = cached_jsonl(&dir.join(format!("expert_held_out_{split}.jsonl")), || {
            expert_trajectories(&bench.factory, *split, config.critic_games, derive_seed(seed, 6 + i as u64))
        })?;
        next_action_items.push((*split, items_of(&trajectories, prompts.history_len)));
    }
    let won = train.iter().filter(|t| t.outcome.won).count();
    let states: usize = train.iter().map(|t| t.steps.len()).sum();
    s.done(&format!("{won}/{} won, {states} states; {} held-out trajectories", train.len(), held_out.len()));

    let renamed_train = crate::augment::renamed_trajectories(&train, config.renaming(), derive_seed(seed, 27));
    let mut il: Vec<SftSample> = renamed_train
        .iter()
        .flat_map(|t| t.states(prompts.history_len))
        .map(|(s, a)| prompts.plain.sft_sample(&s, a, None))
        .collect();
    if config.il_noise > 0.0 {
        let relabelled = cached_jsonl(&dir.join("expert_train_relabelled.jsonl"), || {
            crate::dart::relabelled_episodes(
                &bench.factory,
                bench.train_split,
                config.train_games,
                config.il_noise,
                derive_seed(seed, 13),
            )
        })?;
        let relabelled = crate::augment::renamed_relabelled(&relabelled, config.renaming(), derive_seed(seed, 28));
        il.extend(crate::dart::relabelled_samples(
            &relabelled,
            &prompts.plain,
            prompts.history_len,
            config.il_noise_mistake_labels,
        ));
    }
    let rl: Vec<_> = train
        .iter()
        .flat_map(|t| t.states(prompts.history_len))
        .map(|(s, a)| prompts.plain.next_action_sample(&s, a))
        .collect();

    // 0. Tokenizer and π₀.
    let s = Stage::start("0. tokenizer and initial policy π₀");
    let mut single_turns = Vec::new();
    let mut base_data = match &t.model {
        ModelSource::Preset { .. } => {
            let episodes = match t.base_data {
                BaseData::Random => cached_jsonl(&dir.join("random_train.jsonl"), || {
                    crate::stages::random_trajectories(
                        &bench.factory,
                        bench.train_split,
                        t.base_episodes,
                        20,
                        derive_seed(seed, 2),
                    )
                })?,
                // Checked before anything is cached, so a rerun with a larger environment starts afresh.
                BaseData::Expert | BaseData::ExpertEpisodes => {
                    cached_jsonl(&dir.join("expert_base.jsonl"), || -> Result<_, BoxError> {
                        let expert = crate::pipeline::expert_trajectories_from(
                            &bench.factory,
                            bench.train_split,
                            config.train_games,
                            t.base_episodes,
                            derive_seed(seed, 2),
                        )?;
                        if expert.len() < t.base_episodes {
                            return Err(format!(
                                "base_data `expert` needs {} training tasks after the first {}; the environment has {}",
                                t.base_episodes,
                                config.train_games,
                                config.train_games + expert.len()
                            )
                            .into());
                        }
                        Ok(expert)
                    })?
                }
            };
            let formats_per_state = t.base_data != BaseData::ExpertEpisodes;
            let episodes = crate::augment::renamed_trajectories(&episodes, config.renaming(), derive_seed(seed, 29));
            single_turns = crate::stages::single_turn_samples(
                &episodes,
                &prompts.plain,
                t.base_single_turn_fraction,
                derive_seed(seed, 35),
            );
            base_samples(
                &episodes,
                &prompts.plain,
                &prompts.reasoning,
                &crate::stages::BaseSampleOptions {
                    history_len: prompts.history_len,
                    formats_per_state,
                    hint_fraction: t.base_hint_fraction,
                    comparisons: t.base_comparisons,
                    answers: t.base_answers,
                    seed: derive_seed(seed, 3),
                },
            )
        }
        ModelSource::Checkpoint { .. } => Vec::new(),
    };
    let tokenizer =
        crate::stages::tokenizer_stage(dir, &t.model, || crate::stages::tokenizer_corpus(base_data.iter().chain(&il)))?;
    // After the tokenizer: a single turn repeats text its episode already gave the tokenizer.
    base_data.extend(single_turns);
    il.extend(crate::stages::single_turn_samples(
        &renamed_train,
        &prompts.plain,
        t.il_single_turn_fraction,
        derive_seed(seed, 36),
    ));
    let context = ModelContext { tokenizer, template: ChatTemplate::default(), backend };
    let models = dir.join("models");
    // The held-out learning curves: next-action accuracy on the first split's expert states from the start, critic
    // accuracy on held-out pairs once π₀ has made them.
    let probe_items: Vec<NextActionItem> = next_action_items[0].1.iter().take(config.heldout_items).cloned().collect();
    let probe_pairs: OnceCell<Vec<ActionPair>> = OnceCell::new();
    let probe_config = |reasoning: bool, max_new_tokens: usize, stop: &str| {
        ItemEvalConfig::default()
            .with_seed(derive_seed(seed, 23))
            .with_prompt(prompt_of(reasoning))
            .with_sampling(SamplingParams::greedy().with_max_new_tokens(max_new_tokens).with_stop(stop))
            .with_batch_size(64)
            .with_progress(false)
    };
    let probe_next_action = probe_config(false, action_tokens, "</action>");
    let probe_critic = probe_config(true, t.act.max_completion_tokens, "</answer>");
    let probe = (config.heldout_points > 0).then(|| HeldOutProbe {
        points: config.heldout_points,
        measure: Box::new(|model| {
            let policy = context.policy("probe", model, 64);
            let mut values = BTreeMap::new();
            let report = evaluate_next_action(&policy as &dyn Policy, &probe_items, &probe_next_action)?;
            values.insert("next_action_accuracy".to_owned(), report.summary.accuracy.value);
            if let Some(pairs) = probe_pairs.get() {
                let report = evaluate_critic(&policy as &dyn Policy, pairs, &probe_critic)?;
                values.insert("critic_accuracy".to_owned(), report.summary.accuracy.value);
            }
            Ok(values)
        }),
    });
    let stage_run = |name: &'static str, start: StartFrom, seed: u64| StageRun {
        name,
        dir: models.join(name),
        context: &context,
        training: t,
        start,
        seed,
        probe: probe.as_ref(),
    };
    let base_dir = match &t.model {
        ModelSource::Preset { name, qk_norm_gain, sliding_window, max_window_layers, .. } => {
            let mut shape = Qwen3Config::preset(name, context.tokenizer.vocab_size())?;
            if let Some(window) = *sliding_window {
                let full = max_window_layers.unwrap_or(shape.num_hidden_layers / 2);
                shape = shape.with_sliding_window(window, full);
                println!("  sliding window: {window} positions in layers {full}..{}", shape.num_hidden_layers);
            }
            println!("  model: preset `{name}`, {} parameters", shape.num_parameters());
            let start = StartFrom::Fresh { shape, qk_norm_gain: qk_norm_gain.unwrap_or(1.0) };
            stage_run("base", start, derive_seed(seed, 4)).sft(&t.base, base_data)?;
            model_dir(&models.join("base"))
        }
        ModelSource::Checkpoint { dir } => dir.clone(),
    };
    s.done(&format!("π₀ in {}", base_dir.display()));

    // 2. Pairs from π₀.
    let s = Stage::start("2. critic pairs from π₀");
    let pi0 = || -> Result<ModelPolicy, BoxError> {
        let model = crate::stages::load_model_as(&base_dir, &context.device()?, t.float_dtype)?;
        // Consecutive states of an episode share their prompt's start in the conversation style: reuse its keys.
        Ok(context.policy("π₀", model, 64).with_prefix_reuse(256))
    };
    let sampling = SamplingParams::default().with_max_new_tokens(action_tokens).with_stop("</action>");
    let pair_config = |mode: PairMode, seed: u64, prompt: act_core::PromptConfig| {
        PairConfig::default()
            .with_k(config.k)
            .with_seed(seed)
            .with_prompt(prompt)
            .with_sampling(sampling.clone())
            .with_mode(mode)
            .with_fallback(true)
            .with_parallel(false)
            .with_progress(true)
    };
    let pair_trajectories = &train[..config.pair_games.unwrap_or(train.len()).min(train.len())];
    let pairs: Vec<ActionPair> = match &config.pairs_from {
        Some(path) => read_jsonl(path)?,
        None => cached_pairs(&dir.join("pairs.jsonl"), || {
            let set = PairBuilder::new(pair_config(PairMode::Fixed, seed, plain_config.clone()), pi0()?)?
                .build(pair_trajectories, 0)?;
            act_core::atomic_write(dir.join("pair_stats.md"), set.stats.to_string().as_bytes())?;
            Ok(set.pairs)
        })?,
    };
    let critic_pairs = cached_pairs(&dir.join("critic_pairs.jsonl"), || {
        let config = pair_config(PairMode::Fixed, derive_seed(seed, 5), plain_config.clone());
        Ok(PairBuilder::new(config, pi0()?)?.build(&held_out, 0)?.pairs)
    })?;
    s.done(&format!("{} training pairs, {} held-out pairs", pairs.len(), critic_pairs.len()));
    // Set once; the base stage, which made π₀, ran before the pairs existed.
    let _ = probe_pairs.set(critic_pairs.iter().take(config.heldout_items).cloned().collect());

    // DAgger's episodes of `policy` on `games` training games from `first` on, relabelled by the expert, cached at
    // `path`, as IL samples; `who` names the policy in the progress line.
    let dagger_samples = |dagger: &crate::config::DaggerConfig,
                          policy: &ModelPolicy,
                          who: &str,
                          first: usize,
                          path: &Path,
                          seeds: (u64, u64)|
     -> Result<Vec<SftSample>, BoxError> {
        let relabelled = cached_jsonl(path, || -> Result<_, BoxError> {
            let actor = PolicyActor::new(policy, prompts.plain.clone())
                .with_sampling(SamplingParams::greedy().with_max_new_tokens(action_tokens).with_stop("</action>"));
            crate::dart::mixture_episodes(
                &bench.factory,
                actor,
                dagger.expert_prob,
                bench.train_split,
                first..first + dagger.games.min(config.train_games),
                config.eval_batch_size,
                seeds.0,
            )
        })?;
        let steps: usize = relabelled.iter().map(|r| r.labels.len()).sum();
        let off_expert = relabelled
            .iter()
            .flat_map(|r| r.trajectory.steps.iter().zip(&r.labels))
            .filter(|(step, label)| step.action != **label)
            .count();
        let won = relabelled.iter().filter(|r| r.trajectory.outcome.won).count();
        let renamed = crate::augment::renamed_relabelled(&relabelled, config.renaming(), seeds.1);
        let samples =
            crate::dart::relabelled_samples(&renamed, &prompts.plain, prompts.history_len, dagger.mistake_labels);
        println!(
            "    DAgger: {} episodes ({won} won), {steps} states, {off_expert} where {who} played other than the \
             expert; {} IL samples",
            relabelled.len(),
            samples.len()
        );
        Ok(samples)
    };
    if let Some(dagger) = &config.il_dagger {
        let s = Stage::start("2b. DAgger episodes: π₀ and the expert, relabelled by the expert");
        let path = dir.join("dagger_train.jsonl");
        let samples = dagger_samples(dagger, &pi0()?, "π₀", 0, &path, (derive_seed(seed, 30), derive_seed(seed, 31)))?;
        s.done(&format!("{} IL samples", samples.len()));
        il.extend(samples);
    }

    // 2c. Early Experience's world-model data: π₀'s alternatives (and the expert's actions) taken at IL's states.
    let world_model: Vec<SftSample> = match &t.iwm {
        Some(iwm) => {
            let s = Stage::start("2c. world-model branches: π₀'s alternatives taken at expert states");
            let games = &train[..iwm.games.min(train.len())];
            let branches = cached_jsonl(&dir.join("world_model.jsonl"), || -> Result<_, BoxError> {
                let pairs = pair_config(PairMode::Fixed, derive_seed(seed, 32), plain_config.clone())
                    .with_filter_inadmissible(!iwm.keep_inadmissible)
                    .with_fallback(false)
                    .with_max_pairs_per_state(iwm.alternatives_per_state);
                crate::early::world_model_branches(&bench.factory, games, pairs, pi0()?, iwm.include_expert)
            })?;
            let samples = crate::early::world_model_samples(games, &branches, &prompts.plain, prompts.history_len)?;
            s.done(&crate::early::branch_summary(&branches));
            samples
        }
        None => Vec::new(),
    };

    // 2d. Early Experience's self-reflection: π₀'s alternatives taken at expert states, and π₀'s rationales.
    let reflection: Vec<SftSample> = match &t.sr {
        Some(sr) => {
            let s = Stage::start("2d. self-reflection: π₀ explains the expert's action against its alternative");
            let games = &train[..sr.games.min(train.len())];
            let reflections = cached_jsonl(&dir.join("reflections.jsonl"), || -> Result<_, BoxError> {
                let pairs = pair_config(PairMode::Fixed, derive_seed(seed, 33), plain_config.clone())
                    .with_filter_inadmissible(!sr.keep_inadmissible)
                    .with_fallback(sr.fallback)
                    .with_max_pairs_per_state(sr.alternatives_per_state);
                let pi0 = pi0()?;
                let branches = crate::early::world_model_branches(&bench.factory, games, pairs, &pi0, true)?;
                let sampling = SamplingParams::default()
                    .with_temperature(sr.temperature)
                    .with_max_new_tokens(sr.max_rationale_tokens)
                    .with_stop("</think>")
                    .with_seed(derive_seed(seed, 34));
                crate::early::reflections(games, &branches, &prompts.plain, prompts.history_len, &pi0, &sampling)
            })?;
            let samples =
                crate::early::reflection_samples(games, &reflections, &prompts.reasoning, prompts.history_len)?;
            s.done(&crate::early::reflection_summary(&reflections));
            if samples.is_empty() {
                return Err(format!(
                    "training.sr: no self-reflection sample from {} reflections (an alternative of π₀'s per state{}, \
                     and a rationale π₀ wrote for it); try keep_inadmissible, fallback, more games or \
                     a longer max_rationale_tokens",
                    reflections.len(),
                    if sr.keep_inadmissible { "" } else { " that the state admits" },
                )
                .into());
            }
            if let Some(r) = reflections.iter().find(|r| !r.rationale.is_empty()) {
                println!(
                    "    e.g. `{}` over `{}` at {}#{}: {:?}",
                    r.expert, r.alternative, r.task_id, r.step_index, r.rationale
                );
            }
            samples
        }
        None => Vec::new(),
    };

    // 3-5. ACT, IL, RL.
    let s = Stage::start("3-5. ACT, IL, RL");
    let comparison = ComparisonConfig::default().build()?;
    let next_action = NextActionConfig::default().build()?;
    let from = |stage: &str| StartFrom::Dir(model_dir(&models.join(stage)));
    let base = StartFrom::Dir(base_dir.clone());
    let act = act_samples(&pairs, &prompts.reasoning);
    stage_run("act", base.clone(), derive_seed(seed, 10)).grpo(&t.act, act, comparison.clone(), "</answer>")?;
    // An IL stage, in DAgger's rounds when `il_dagger.rounds` > 1: part `r` adds the relabelled episodes of part
    // `r - 1`'s model on the next `games` training games (the same games and coin flips for every IL stage).
    let il_stage = |name: &'static str,
                    start: StartFrom,
                    sft: &crate::config::SftStageConfig|
     -> Result<(), BoxError> {
        let rounds = config.il_dagger.as_ref().map_or(1, |d| d.rounds);
        let mut data = il.clone();
        let (mut start, mut previous) = (start, None::<String>);
        for round in 0..rounds {
            let part = if round + 1 == rounds { name.to_owned() } else { format!("{name}_round{}", round + 1) };
            if let (Some(dagger), Some(previous)) = (&config.il_dagger, &previous) {
                let model_path = model_dir(&models.join(previous));
                let path = dir.join(format!("dagger_{previous}.jsonl"));
                discard_if_older(&path, &model_path)?;
                let model = crate::stages::load_model_as(&model_path, &context.device()?, t.float_dtype)?;
                let policy = context.policy(previous, model, 64).with_prefix_reuse(256);
                let seeds = (derive_seed(seed, 40 + round as u64), derive_seed(seed, 50 + round as u64));
                data.extend(dagger_samples(dagger, &policy, previous, round * dagger.games, &path, seeds)?);
            }
            let steps = sft.steps * (round + 1) / rounds - sft.steps * round / rounds;
            let run = StageRun {
                name: &part,
                dir: models.join(&part),
                context: &context,
                training: t,
                start,
                // The first part keeps the seed a single IL stage has always had, so one round reproduces it.
                seed: if round == 0 { derive_seed(seed, 11) } else { derive_seed(derive_seed(seed, 11), round as u64) },
                probe: probe.as_ref(),
            };
            run.sft(&crate::config::SftStageConfig { steps, ..sft.clone() }, data.clone())?;
            start = StartFrom::Dir(model_dir(&models.join(&part)));
            previous = Some(part);
        }
        Ok(())
    };
    il_stage("il", base.clone(), &t.il)?;
    il_stage("act_il", from("act"), &t.il)?;
    if let Some(iwm) = &t.iwm {
        stage_run("iwm", base.clone(), derive_seed(seed, 15)).sft(&iwm.stage, world_model)?;
        il_stage("iwm_il", from("iwm"), &t.il)?;
    }
    if let Some(sr) = &t.sr {
        stage_run("sr", base.clone(), derive_seed(seed, 16)).sft(&sr.stage, reflection)?;
        il_stage("sr_il", from("sr"), &t.il)?;
    }
    stage_run("il_rl", from("il"), derive_seed(seed, 12)).grpo(&t.rl, rl.clone(), next_action.clone(), "</action>")?;
    stage_run("act_il_rl", from("act_il"), derive_seed(seed, 12)).grpo(&t.rl, rl, next_action, "</action>")?;
    if let Some(online) = &t.online {
        // On-line RL on IL's training games, from IL and from ACT -> IL.
        let tasks: Vec<TaskRef> = (0..config.train_games).map(|i| TaskRef::index(bench.train_split, i)).collect();
        for method in METHODS.iter().filter(|m| m.runs_in(config)) {
            let Some(algorithm) = method.online else { continue };
            let start = if method.model.starts_with("act_il") { from("act_il") } else { from("il") };
            stage_run(method.model, start, derive_seed(seed, 14)).online(
                online,
                algorithm,
                &bench.factory,
                plain_config.clone(),
                &tasks,
            )?;
        }
        let series = crate::online::success_by_env_steps(&online_stages(&models))?;
        if !series.is_empty() {
            act_eval::plot_lines(
                &series,
                "environment steps",
                "rollout success (%)",
                &format!("{}: on-line RL, success of each iteration's episodes (seed {seed})", bench.name),
                dir.join("online_success.svg"),
            )?;
        }
    }
    if config.controls {
        let matched = crate::config::SftStageConfig { steps: t.il.steps + t.act.steps, ..t.il.clone() };
        il_stage("il_matched", base.clone(), &matched)?;
        // Re-sampled pairs: a fresh alternative per state for every pass ACT makes over the states.
        let passes = (t.act.steps * t.act.prompts_per_step).div_ceil(pairs.len().max(1)).max(1);
        let resampled = cached_pairs(&dir.join("pairs_resampled.jsonl"), || {
            let builder = PairBuilder::new(pair_config(PairMode::Resampled, seed, plain_config.clone()), pi0()?)?;
            let mut all = Vec::new();
            for epoch in 0..passes as u64 {
                all.extend(builder.build(pair_trajectories, epoch)?.pairs);
            }
            Ok(all)
        })?;
        let act = act_samples(&resampled, &prompts.reasoning);
        stage_run("act_resampled", base.clone(), derive_seed(seed, 10)).grpo(&t.act, act, comparison, "</answer>")?;
        il_stage("act_resampled_il", from("act_resampled"), &t.il)?;
    }
    s.done("models/");

    // 6. Evaluation.
    let s = Stage::start("6. evaluation");
    let eval_dir = dir.join("eval");
    std::fs::create_dir_all(&eval_dir)?;
    let device = context.device()?;
    let mut episodes = Vec::new();
    let mut critic = Vec::new();
    let episode_config = |split: Split, reasoning: bool| {
        let prompt = prompt_of(reasoning);
        let mut c = EpisodeEvalConfig::new(split)
            .with_seed(derive_seed(seed, 20))
            .with_prompt(prompt)
            .with_sampling(
                SamplingParams::greedy()
                    .with_temperature(config.eval_temperature.unwrap_or(0.0))
                    .with_max_new_tokens(action_tokens)
                    .with_stop("</action>"),
            )
            .with_batch_size(config.eval_batch_size)
            .with_rejected_retry(config.eval_rejected_retry.clone())
            .with_progress(true);
        if let Some(n) = config.eval_episodes {
            c = c.with_episodes(n);
        }
        if let Some(n) = config.eval_step_budget {
            c = c.with_step_budget(n);
        }
        c
    };
    let random = RandomAdmissiblePolicy::new();
    for split in &bench.eval_splits {
        for agent in [Agent::Expert, Agent::Policy(&random)] {
            let path = eval_dir.join(format!("{}_{split}.json", slug(agent.name())));
            episodes.push(cached_record(&path, || {
                Ok(EvalRecord::episodes(evaluate_episodes(&bench.factory, agent, &episode_config(*split, false))?))
            })?);
        }
    }
    let critic_config = ItemEvalConfig::default()
        .with_seed(derive_seed(seed, 21))
        .with_prompt(prompt_of(true))
        .with_sampling(SamplingParams::greedy().with_max_new_tokens(t.act.max_completion_tokens).with_stop("</answer>"))
        .with_batch_size(64)
        .with_progress(true);
    let next_action_config = |reasoning: bool| {
        ItemEvalConfig::default()
            .with_seed(derive_seed(seed, 22))
            .with_prompt(prompt_of(reasoning))
            .with_sampling(SamplingParams::greedy().with_max_new_tokens(action_tokens).with_stop("</action>"))
            .with_batch_size(64)
            .with_progress(true)
    };
    let mut next_action = Vec::new();
    let mut critic_by_model: BTreeMap<&str, CriticReport> = BTreeMap::new();
    for method in METHODS.iter().filter(|m| m.runs_in(config)) {
        let dir_of_model =
            if method.model == "base" { base_dir.clone() } else { model_dir(&models.join(method.model)) };
        let model = crate::stages::load_model_as(&dir_of_model, &device, config.training.float_dtype)?;
        // An episode's next prompt continues its last one: reuse its keys and values instead of re-encoding.
        let policy =
            context.policy(method.name, model, config.eval_batch_size).with_prefix_reuse(4 * config.eval_batch_size);
        for split in &bench.eval_splits {
            let path = eval_dir.join(format!("{}_{split}.json", slug(method.name)));
            discard_if_older(&path, &dir_of_model)?;
            if config.transcripts {
                discard_without_transcripts(&path)?;
            }
            let record = cached_record(&path, || {
                let report = evaluate_episodes(
                    &bench.factory,
                    Agent::Policy(&policy),
                    &episode_config(*split, method.reasoning).with_transcripts(config.transcripts),
                )?;
                Ok(EvalRecord::episodes(report))
            })?;
            println!("  {:<30} {split}: success {:5.1}%", method.name, 100.0 * record.evaluation.headline().1.value);
            episodes.push(record);
        }
        for (split, items) in &next_action_items {
            let path = eval_dir.join(format!("next_action_{}_{split}.json", slug(method.name)));
            discard_if_older(&path, &dir_of_model)?;
            let record = cached_record(&path, || {
                let report =
                    evaluate_next_action(&policy as &dyn Policy, items, &next_action_config(method.reasoning))?;
                let benchmark = format!("{} {}", bench.name, next_action_benchmark(*split));
                Ok(EvalRecord::new(benchmark, Evaluation::NextAction(report)))
            })?;
            println!(
                "  {:<30} {split}: next-action accuracy {:5.1}%",
                method.name,
                100.0 * record.evaluation.headline().1.value
            );
            next_action.push(record);
        }
        let path = eval_dir.join(format!("critic_{}.json", slug(method.name)));
        discard_if_older(&path, &dir_of_model)?;
        let record = cached_record(&path, || {
            let mut report = match critic_by_model.get(method.model) {
                Some(report) => report.clone(),
                None => evaluate_critic(&policy as &dyn Policy, &critic_pairs, &critic_config)?,
            };
            critic_by_model.insert(method.model, report.clone());
            report.method = method.name.to_owned();
            Ok(EvalRecord::new(format!("{} critic ({held_out_split} pairs)", bench.name), Evaluation::Critic(report)))
        })?;
        critic.push(record);
    }
    let table = act_eval::render_table(&episodes)?;
    let score_table = act_eval::render_score_table(&episodes)?;
    let next_action_table = act_eval::render_table(&next_action)?;
    let verb_tables = verb_tables(&next_action, next_action_items.iter().map(|(split, _)| *split), &bench.name);
    let critic_table = act_eval::render_table(&critic)?;
    let comparison_table = comparison_table(&critic);
    act_eval::plot_success_by_method(
        &episodes,
        &format!("{}: success rate (seed {seed})", bench.name),
        dir.join("success.svg"),
    )?;
    s.done("eval/, success.svg");

    let decoded = decoding(config.eval_temperature, config.eval_rejected_retry.as_ref());
    let markdown = format!(
        "# ACT on {} (seed {seed})\n\nOn-line success rate in %, 95% bootstrap interval; {decoded}.\n\n{table}\n\n\
         Mean final score of the same episodes, in the environment's units (ScienceWorld 0-100, WebShop reward \
         0-1, ALFWorld 0/1), 95% bootstrap interval.\n\n{score_table}\n\n\
         Next-action accuracy on held-out expert states (the expert's action, exactly), in %.\n\n\
         {next_action_table}\n\n{verb_tables}\
         Critic accuracy on held-out pairs (expert action against a π₀ sample), in %.\n\n{critic_table}\n\n\
         {comparison_table}{}\n",
        bench.name,
        stage_table(&models)?
    );
    act_core::atomic_write(dir.join("results.md"), markdown.as_bytes())?;
    Ok(ExperimentResult { dir: dir.to_owned(), episodes, next_action, critic, markdown })
}

/// Next-action accuracy by the expert's verb, one Markdown table per split of `splits` (followed by a blank
/// line); nothing for a split whose reports predate the recorded expert actions.
fn verb_tables(records: &[EvalRecord], splits: impl Iterator<Item = Split>, bench: &str) -> String {
    let mut out = String::new();
    for split in splits {
        let benchmark = format!("{bench} {}", next_action_benchmark(split));
        let reports: Vec<&NextActionReport> = records
            .iter()
            .filter(|r| r.benchmark == benchmark)
            .filter_map(|r| match &r.evaluation {
                Evaluation::NextAction(e) => Some(e),
                _ => None,
            })
            .collect();
        if reports.iter().all(|r| r.results.iter().all(|x| x.expert_action.is_empty())) {
            continue;
        }
        out.push_str(&format!(
            "Next-action accuracy by the expert's verb on the {split} states (item counts in brackets), in %.\n\n{}\n",
            act_eval::render_verb_table(&reports)
        ));
    }
    out
}

/// Critic accuracy by kind of comparison (`go vs go`, `take vs other`, ...) as a Markdown paragraph and table
/// (followed by a blank line); nothing when the reports predate the recorded actions.
fn comparison_table(records: &[EvalRecord]) -> String {
    let reports: Vec<&CriticReport> = records
        .iter()
        .filter_map(|r| match &r.evaluation {
            Evaluation::Critic(e) => Some(e),
            _ => None,
        })
        .collect();
    if reports.iter().all(|r| r.results.iter().all(|x| x.expert_action.is_empty())) {
        return String::new();
    }
    format!(
        "Critic accuracy by kind of comparison (the expert's verb against the alternative's: `go vs go` asks which \
         place the expert searches first; pair counts in brackets), in %.\n\n{}\n",
        act_eval::render_comparison_table(&reports)
    )
}

/// Every expert (state, action) of `trajectories`, as next-action items.
fn items_of(trajectories: &[act_core::Trajectory], history_len: usize) -> Vec<NextActionItem> {
    trajectories.iter().flat_map(|t| NextActionItem::from_trajectory(t, history_len)).collect()
}

/// A file-name-safe form of a method name.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        match c {
            c if c.is_ascii_alphanumeric() => out.push(c.to_ascii_lowercase()),
            _ if !out.ends_with('_') && !out.is_empty() => out.push('_'),
            _ => {}
        }
    }
    out.trim_end_matches('_').to_owned()
}

/// The finished stages' steps, sample counts, headline values and times.
fn stage_table(models: &Path) -> Result<String, BoxError> {
    let mut rows = vec![
        "| stage | started from | steps | samples | final value | seconds |".to_owned(),
        "|---|---|---:|---:|---:|---:|".to_owned(),
    ];
    let mut entries: Vec<_> = std::fs::read_dir(models)?.flatten().map(|e| e.path()).collect();
    entries.sort();
    for dir in entries {
        if let Some(r) = crate::stages::finished(&dir) {
            let from = r.started_from.as_ref().map_or("fresh".to_owned(), |p| p.display().to_string());
            rows.push(format!(
                "| {} | {from} | {} | {} | {:.4} | {:.1} |",
                r.stage, r.steps, r.samples, r.final_value, r.seconds
            ));
        }
    }
    Ok(format!(
        "Training stages (final value: SFT loss of the last step, or GRPO mean reward over the last tenth of the \
         steps).\n\n{}",
        rows.join("\n")
    ))
}

/// Reads `path` when it exists; otherwise computes the records and writes them there.
fn cached_jsonl<T, E>(path: &Path, make: impl FnOnce() -> Result<Vec<T>, E>) -> Result<Vec<T>, BoxError>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
    E: Into<BoxError>,
{
    if path.is_file() {
        return Ok(read_jsonl(path)?);
    }
    let items = make().map_err(Into::into)?;
    write_jsonl(path, &items)?;
    Ok(items)
}

fn cached_pairs(
    path: &Path,
    make: impl FnOnce() -> Result<Vec<ActionPair>, BoxError>,
) -> Result<Vec<ActionPair>, BoxError> {
    cached_jsonl(path, make)
}

/// Removes the evaluation record at `path` when the model it evaluated was (re)written after it.
fn discard_if_older(path: &Path, model_dir: &Path) -> Result<(), BoxError> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(record), Some(model)) = (modified(path), modified(&model_dir.join("config.json")))
        && record < model
    {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

/// Deletes the episode record at `path` when it was saved without transcripts, so that it is evaluated again with
/// them (greedy evaluation is deterministic: the same episodes, now with their steps).
fn discard_without_transcripts(path: &Path) -> Result<(), BoxError> {
    if path.is_file()
        && let Evaluation::Episodes(report) = &EvalRecord::load(path)?.evaluation
        && !report.config.record_transcripts
    {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

/// How the trained policies chose their on-line actions, for the reports: greedy or sampled, and whether a rejected
/// action was sent again ([`act_eval::RejectedRetry`]).
pub fn decoding(temperature: Option<f32>, retry: Option<&act_eval::RejectedRetry>) -> String {
    let mut decoding = match temperature {
        Some(temperature) => format!("actions sampled at temperature {temperature}"),
        None => "greedy decoding".to_owned(),
    };
    if let Some(retry) = retry {
        decoding.push_str(&format!(
            "; a trained policy's action that the environment rejected (\"{}\") since it last accepted one is \
             not sent again: up to {} other proposals are sampled at temperature {} and the first not rejected \
             is sent",
            retry.rejection, retry.attempts, retry.temperature
        ));
    }
    decoding
}

/// The decoding of `result`'s on-line evaluations ([`decoding`]), read from its first episode record's settings;
/// `None` when it has none.
pub fn decoding_of(result: &ExperimentResult) -> Option<String> {
    result.episodes.iter().find_map(|record| match &record.evaluation {
        Evaluation::Episodes(report) => {
            let temperature = (report.config.sampling.temperature > 0.0).then_some(report.config.sampling.temperature);
            Some(decoding(temperature, report.config.rejected_retry.as_ref()))
        }
        _ => None,
    })
}

fn cached_record(path: &Path, make: impl FnOnce() -> Result<EvalRecord, BoxError>) -> Result<EvalRecord, BoxError> {
    if path.is_file() {
        return Ok(EvalRecord::load(path)?);
    }
    let record = make()?;
    record.save(path)?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoding_names_temperature_and_the_retry_rule() {
        assert_eq!(decoding(None, None), "greedy decoding");
        assert_eq!(decoding(Some(0.5), None), "actions sampled at temperature 0.5");
        let retry = act_eval::RejectedRetry::default();
        let with_rule = decoding(None, Some(&retry));
        assert!(with_rule.starts_with("greedy decoding; "), "{with_rule}");
        assert!(with_rule.contains("(\"Nothing happens.\")") && with_rule.contains("up to 4 other proposals"));
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("ACT -> IL -> RL"), "act_il_rl");
        assert_eq!(slug("prompt + reasoning"), "prompt_reasoning");
        assert_eq!(slug("IL (matched steps)"), "il_matched_steps");
    }

    #[test]
    fn online_methods_run_from_the_starts_the_config_names() {
        let running = |config: &ExperimentConfig| -> Vec<&str> {
            METHODS.iter().filter(|m| m.online.is_some() && m.runs_in(config)).map(|m| m.model).collect()
        };
        let mut config = ExperimentConfig::default();
        assert!(running(&config).is_empty());
        let gigpo = crate::config::OnlineRlConfig { algorithms: vec![OnlineAlgorithm::Gigpo], ..Default::default() };
        config.training.online = Some(gigpo.clone());
        assert_eq!(running(&config), ["il_gigpo", "act_il_gigpo"]);
        config.training.online = Some(crate::config::OnlineRlConfig { from_act_il: false, ..gigpo });
        assert_eq!(running(&config), ["il_gigpo"]);
    }
}
