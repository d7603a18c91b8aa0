//! The training stages of the pipeline, each resumable and writing to its own directory:
//! the tokenizer, the base stage (π₀ for from-scratch models), ACT (GRPO on comparisons), IL (SFT on expert
//! actions) and RL (GRPO on next-action prompts).
//!
//! A finished stage leaves `model/` (a Hugging Face checkpoint: `config.json`, `model.safetensors`) and
//! `done.json`; a rerun skips it. A stage interrupted part-way resumes from its latest trainer checkpoint
//! (`trainer/checkpoint-NNNNNN`, every `checkpoint_every` steps) with the trainers' exact resume, and its
//! `trainer/metrics.jsonl` is cut back to that step first so no step is logged twice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use act_core::{
    Action, ActionPair, AgentState, Choice, Environment, EnvironmentFactory, GrpoSample, Prompter, RewardFn, SftSample,
    Split, TaskRef, Trajectory, action_completion, answer_completion, derive_seed, rng_from_seed,
};
use act_grpo::{ComputeDtype, GrpoConfig, GrpoTrainer, SftConfig, SftTrainer, checkpoint_name};
use act_model::RandomInit;
use act_model::lora::{LoraConfig, apply_lora, save_peft_adapter};
use act_model::{BackendKind, ChatTemplate, ChatTokenizer, ModelPolicy, Qwen3, Qwen3Config, load_hf, save_hf};
use act_rollout::{EpisodeSpec, RandomActor, Rollout, RolloutConfig};
use burn::module::Module;
use burn::prelude::Device;
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::config::{BaseComparisons, ComparisonAnswers, GrpoStageConfig, ModelSource, SftStageConfig, TrainingConfig};

/// The error type of the pipeline: every crate's errors, with context.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What every stage shares: the tokenizer, the chat template and the backend.
#[derive(Debug, Clone)]
pub struct ModelContext {
    /// The tokenizer (trained for presets, the checkpoint's otherwise).
    pub tokenizer: ChatTokenizer,
    /// The chat template.
    pub template: ChatTemplate,
    /// Where models run.
    pub backend: BackendKind,
}

impl ModelContext {
    /// The inference device.
    pub fn device(&self) -> Result<Device, BoxError> {
        Ok(self.backend.device()?)
    }

    /// A policy around `model` with this context's tokenizer and template, generating `batch_size` queries per
    /// batch in as many parts side by side as the backend profits from ([`BackendKind::generation_workers`]).
    pub fn policy(&self, name: &str, model: Qwen3, batch_size: usize) -> ModelPolicy {
        ModelPolicy::new(name, model, self.tokenizer.clone(), self.template.clone())
            .with_batch_size(batch_size)
            .with_workers(self.backend.generation_workers())
    }
}

/// What a finished stage recorded in `done.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage's name.
    pub stage: String,
    /// The model it started from (`None`: initialised from its preset).
    pub started_from: Option<PathBuf>,
    /// Trainer steps.
    pub steps: usize,
    /// Training samples it drew from.
    pub samples: usize,
    /// Wall-clock seconds of the last (possibly resumed) run of the stage.
    pub seconds: f64,
    /// The last step's headline: SFT loss, or GRPO mean reward.
    pub final_value: f64,
}

/// The model directory of a finished stage.
pub fn model_dir(stage_dir: &Path) -> PathBuf {
    stage_dir.join("model")
}

/// The stage's record, when the stage has finished.
pub fn finished(stage_dir: &Path) -> Option<StageRecord> {
    if !model_dir(stage_dir).join("config.json").is_file() {
        return None;
    }
    let text = std::fs::read_to_string(stage_dir.join("done.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Loads a stage's (or any HF checkpoint directory's) model onto `device`.
pub fn load_model(dir: &Path, device: &Device) -> Result<Qwen3, BoxError> {
    let (model, _) = load_hf(dir, device).map_err(|e| format!("loading the model in {}: {e}", dir.display()))?;
    Ok(model)
}

/// [`load_model`], in `precision` (checkpoints are stored in f32 and cast when loaded).
pub fn load_model_as(dir: &Path, device: &Device, precision: ComputeDtype) -> Result<Qwen3, BoxError> {
    let model = load_model(dir, device)?;
    Ok(if precision.is_f32() { model } else { model.with_float_dtype(precision.dtype())? })
}

/// The seed stream of a stage's LoRA initialisation (`derive_seed(stage seed, LORA_STREAM)`).
const LORA_STREAM: u64 = 0x6C6F_7261;

/// Where a stage trained with LoRA keeps its adapters in PEFT's layout (its `model/` is the merged model).
pub fn adapter_dir(stage_dir: &Path) -> PathBuf {
    stage_dir.join("adapter")
}

pub(crate) fn finish(stage_dir: &Path, model: &Qwen3, record: &StageRecord) -> Result<(), BoxError> {
    // A model with adapters reads as base + adapters, so this saves the merged model.
    save_hf(model, model_dir(stage_dir), None)?;
    if let Some(lora) = act_model::lora::config_of(model)? {
        let base = record.started_from.as_ref().map_or_else(|| "fresh".to_owned(), |d| d.display().to_string());
        save_peft_adapter(model, &lora, &base, adapter_dir(stage_dir))?;
    }
    let json = serde_json::to_string_pretty(record)?;
    act_core::atomic_write(stage_dir.join("done.json"), json.as_bytes())?;
    // The trainer checkpoints hold optimizer state for resuming; the finished stage no longer needs them.
    if let Ok(entries) = std::fs::read_dir(stage_dir.join("trainer")) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("checkpoint-") {
                std::fs::remove_dir_all(entry.path())?;
            }
        }
    }
    Ok(())
}

/// The newest `checkpoint-NNNNNN` under `trainer_dir` and its step.
pub(crate) fn latest_checkpoint(trainer_dir: &Path) -> Option<(PathBuf, usize)> {
    let entries = std::fs::read_dir(trainer_dir).ok()?;
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let step = name.strip_prefix("checkpoint-")?.parse::<usize>().ok()?;
            (checkpoint_name(step) == name && e.path().join("policy").is_dir()).then(|| (e.path(), step))
        })
        .max_by_key(|(_, step)| *step)
}

/// Keeps the metrics lines of steps up to `step` (what a resumed trainer has not redone).
pub(crate) fn truncate_metrics(path: &Path, step: usize) -> Result<(), BoxError> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(()) };
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| {
            serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v.get("step").and_then(|s| s.as_u64()))
                .is_some_and(|s| s as usize <= step)
        })
        .collect();
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    act_core::atomic_write(path, out.as_bytes())?;
    Ok(())
}

/// Appends one JSON line to `path`, rewriting the file atomically (held-out logs are a few lines).
fn append_line(path: &Path, line: &serde_json::Value) -> Result<(), BoxError> {
    let mut text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("reading {}: {e}", path.display()).into()),
    };
    text.push_str(&serde_json::to_string(line)?);
    text.push('\n');
    act_core::atomic_write(path, text.as_bytes())?;
    Ok(())
}

/// The tokenizer of the run: the checkpoint's, or a BPE tokenizer trained on `corpus` and saved as
/// `tokenizer.json` in `run_dir` (reused when present).
pub fn tokenizer_stage(
    run_dir: &Path,
    source: &ModelSource,
    corpus: impl FnOnce() -> Vec<String>,
) -> Result<ChatTokenizer, BoxError> {
    match source {
        ModelSource::Checkpoint { dir } => Ok(ChatTokenizer::from_file(dir.join("tokenizer.json"))?),
        ModelSource::Preset { vocab_size, pre_tokenization, .. } => {
            let path = run_dir.join("tokenizer.json");
            if path.is_file() {
                return Ok(ChatTokenizer::from_file(&path)?);
            }
            let tokenizer = ChatTokenizer::train_bpe_with(corpus(), *vocab_size, *pre_tokenization)?;
            tokenizer.save(&path)?;
            Ok(tokenizer)
        }
    }
}

/// The texts a run's BPE tokenizer is trained on: every sample's completion, and its prompt unless the next sample's
/// prompt extends it. An episode's conversation prompts each extend the previous one, so their text grows with the
/// square of the episode's length while its last prompt holds all of it once; every word is still seen.
pub fn tokenizer_corpus<'a>(samples: impl IntoIterator<Item = &'a SftSample>) -> Vec<String> {
    let samples: Vec<&SftSample> = samples.into_iter().collect();
    let mut texts = Vec::with_capacity(2 * samples.len());
    for (i, sample) in samples.iter().enumerate() {
        if !samples.get(i + 1).is_some_and(|next| next.prompt.starts_with(&sample.prompt)) {
            texts.push(sample.prompt.clone());
        }
        texts.push(sample.completion.clone());
    }
    texts
}

/// Random-policy trajectories (a uniformly random admissible action at every step: what the environment says,
/// with no expert competence; the base stage's data) on the first `episodes` tasks of `split` (cycling when the
/// split is smaller), `max_steps` each; episode `i` is seeded with `derive_seed(seed, i)`.
pub fn random_trajectories<F: EnvironmentFactory>(
    factory: &F,
    split: Split,
    episodes: usize,
    max_steps: usize,
    seed: u64,
) -> Result<Vec<Trajectory>, BoxError> {
    let env = factory.make()?;
    let available = env.num_tasks(split)?.max(1);
    let budget = max_steps.min(env.step_budget());
    let specs: Vec<EpisodeSpec> = (0..episodes)
        .map(|i| {
            let episode_seed = derive_seed(seed, i as u64);
            let task = TaskRef::index(split, i % available);
            EpisodeSpec { index: i, task, seed: episode_seed, sample_seed: episode_seed, group: i }
        })
        .collect();
    let played = Rollout::new(factory, &RandomActor)
        .with_config(RolloutConfig::default().with_step_budget(budget))
        .with_env(env)
        .play(&specs)?;
    Ok(played.into_iter().map(|episode| episode.trajectory).collect())
}

/// The base stage's samples: at every state of the trajectories, the action taken there after the plain action
/// prompt; with `formats_per_state` also after the reasoning prompt and a random answer to a comparison of two random
/// admissible actions at every state, otherwise those two at one random state per trajectory. On random-policy
/// trajectories π₀ learns the output formats and the environment's words, not which action is good; on expert
/// trajectories of other tasks it also learns what competent play looks like, but never which of two actions to
/// prefer. A fraction `hint_fraction` of the trajectories shows a hint of its own first `k` actions (`k` uniform
/// in 1..=length, the prompter's [`hint`](Prompter::hint)) before each plain prompt, so π₀ learns to follow one.
///
/// With [`BaseComparisons::ExpertCandidate`] each comparison shows the expert's action against a random other
/// admissible action (in random order), still answered by a coin flip; [`BaseComparisons::ThoughtFirst`] also
/// writes the expert's action as the completion's thought before that answer.
pub fn base_samples(
    trajectories: &[Trajectory],
    plain: &Prompter,
    reasoning: &Prompter,
    options: &BaseSampleOptions,
) -> Vec<SftSample> {
    let BaseSampleOptions { history_len, formats_per_state, hint_fraction, comparisons, answers, seed } = *options;
    let mut rng = rng_from_seed(seed);
    // Its own stream, so that the samples without hints are those of a run without any.
    let mut hint_rng = rng_from_seed(derive_seed(seed, 0x6869_6e74)); // "hint"
    let mut out = Vec::new();
    for trajectory in trajectories {
        let hint = if hint_fraction > 0.0 && !trajectory.steps.is_empty() && hint_rng.random_bool(hint_fraction) {
            let k = hint_rng.random_range(1..=trajectory.steps.len());
            let actions: Vec<Action> = trajectory.steps[..k].iter().map(|s| s.action.clone()).collect();
            plain.hint(&actions)
        } else {
            String::new()
        };
        let formats_at = if formats_per_state || trajectory.steps.is_empty() {
            None
        } else {
            Some(rng.random_range(0..trajectory.steps.len()))
        };
        for (state, action) in trajectory.states(history_len) {
            let id = format!("{}#{}", state.task_id, state.step_index);
            let completion = action_completion(action.as_str());
            out.push(SftSample {
                id: format!("{id}/plain"),
                prompt: format!("{hint}{}", plain.act(&state)),
                completion: completion.clone(),
            });
            if formats_at.is_some_and(|at| at != state.step_index) {
                continue;
            }
            out.push(SftSample { id: format!("{id}/reasoning"), prompt: reasoning.act(&state), completion });
            let expert = (comparisons != BaseComparisons::Random).then_some(action);
            if let Some(sample) = random_comparison(&state, expert, reasoning, answers, &mut rng) {
                let completion = match comparisons {
                    BaseComparisons::ThoughtFirst => format!("<think>{action}</think>{}", sample.completion),
                    _ => sample.completion,
                };
                out.push(SftSample { id: format!("{id}/compare"), completion, ..sample });
            }
        }
    }
    out
}

/// A fraction `fraction` of the trajectories' states (each drawn from `seed`) as samples of their turn alone: the
/// plain action prompt of the state without earlier steps, and the action taken there. In the conversation style
/// that is the task line and the current observation, where the same state's turn inside its packed episode
/// has the whole episode before it.
pub fn single_turn_samples(trajectories: &[Trajectory], plain: &Prompter, fraction: f64, seed: u64) -> Vec<SftSample> {
    let mut rng = rng_from_seed(seed);
    let mut out = Vec::new();
    for trajectory in trajectories {
        for (state, action) in trajectory.states(0) {
            if fraction > 0.0 && rng.random_bool(fraction) {
                let id = format!("{}#{}/turn", state.task_id, state.step_index);
                out.push(SftSample { id, prompt: plain.act(&state), completion: action_completion(action.as_str()) });
            }
        }
    }
    out
}

/// Options of [`base_samples`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseSampleOptions {
    /// Earlier steps a prompt shows.
    pub history_len: usize,
    /// The reasoning prompt and a comparison at every state, not at one random state per trajectory.
    pub formats_per_state: bool,
    /// The fraction of trajectories shown with a hint of their own first actions.
    pub hint_fraction: f64,
    /// Which two actions a comparison shows.
    pub comparisons: BaseComparisons,
    /// How a comparison writes its coin-flip answer.
    pub answers: ComparisonAnswers,
    /// Seeds every random choice.
    pub seed: u64,
}

/// A coin-flip comparison of two admissible actions of `state`: two random ones, or with `expert` that action
/// against a random other one, in random order; the answer names the chosen action as `answers` says.
fn random_comparison(
    state: &AgentState,
    expert: Option<&Action>,
    prompter: &Prompter,
    answers: ComparisonAnswers,
    rng: &mut act_core::ActRng,
) -> Option<SftSample> {
    let n = state.admissible_actions.len();
    if n < 2 {
        return None;
    }
    let actions = match expert {
        None => {
            let first = rng.random_range(0..n);
            let second = (first + rng.random_range(1..n)) % n;
            [&state.admissible_actions[first], &state.admissible_actions[second]]
        }
        Some(expert) => {
            let others: Vec<&Action> = state.admissible_actions.iter().filter(|a| *a != expert).collect();
            if others.is_empty() {
                return None;
            }
            let other = others[rng.random_range(0..others.len())];
            if rng.random_bool(0.5) { [expert, other] } else { [other, expert] }
        }
    };
    let choice = if rng.random_bool(0.5) { Choice::First } else { Choice::Second };
    let completion = match answers {
        ComparisonAnswers::Number => answer_completion(choice),
        ComparisonAnswers::Action => format!("<answer>{}</answer>", actions[usize::from(choice.number() - 1)]),
    };
    Some(SftSample { id: String::new(), prompt: prompter.compare(state, actions), completion })
}

/// The model a stage starts from: a finished stage's model, or a fresh one of the preset's shape.
#[derive(Debug, Clone)]
pub enum StartFrom {
    /// A checkpoint directory.
    Dir(PathBuf),
    /// A new model of this shape, initialised from the seed, its query and key norm gains starting at
    /// `qk_norm_gain` ([`RandomInit::with_qk_norm_gain`]).
    Fresh {
        /// The shape.
        shape: Qwen3Config,
        /// The starting query and key norm gain (1 as upstream initialises Qwen3).
        qk_norm_gain: f32,
    },
}

impl StartFrom {
    /// A new model of this shape, initialised as upstream does (norm gains 1).
    pub fn fresh(shape: Qwen3Config) -> Self {
        StartFrom::Fresh { shape, qk_norm_gain: 1.0 }
    }

    pub(crate) fn load(&self, device: &Device, seed: u64) -> Result<Qwen3, BoxError> {
        match self {
            StartFrom::Dir(dir) => load_model(dir, device),
            StartFrom::Fresh { shape, qk_norm_gain } => {
                let mut init = RandomInit::new(seed, shape.initializer_range).with_qk_norm_gain(*qk_norm_gain);
                Ok(Qwen3::from_source(shape, &mut init, device)?)
            }
        }
    }

    pub(crate) fn dir(&self) -> Option<PathBuf> {
        match self {
            StartFrom::Dir(dir) => Some(dir.clone()),
            StartFrom::Fresh { .. } => None,
        }
    }
}

/// Everything one stage needs besides its data.
pub struct StageRun<'a> {
    /// The stage's name (reports, progress).
    pub name: &'a str,
    /// Its directory.
    pub dir: PathBuf,
    /// Tokenizer, template, backend.
    pub context: &'a ModelContext,
    /// The whole training configuration (sequence length, checkpoint interval).
    pub training: &'a TrainingConfig,
    /// Where it starts.
    pub start: StartFrom,
    /// Its seed.
    pub seed: u64,
    /// Held-out measurements taken while it trains, if any.
    pub probe: Option<&'a HeldOutProbe<'a>>,
}

/// What a held-out measurement returns: metric name to value.
pub type Measurements = BTreeMap<String, f64>;

/// Held-out measurements taken while a stage trains: before its first step and at `points` evenly spaced steps
/// (the last is the final step). Each is a line of the stage's `heldout.jsonl` (`{"step": .., metric: ..}`),
/// plotted in `heldout.svg`; the trainer's own per-step metrics are plotted in `curves.svg`.
pub struct HeldOutProbe<'a> {
    /// Measurements after step 0.
    pub points: usize,
    /// Measures a snapshot of the model being trained (on the inference device).
    pub measure: Box<dyn Fn(Qwen3) -> Result<Measurements, BoxError> + 'a>,
}

impl HeldOutProbe<'_> {
    /// The steps after which `total` steps are measured: `points` of them, evenly spaced, the last being `total`.
    pub fn steps(&self, total: usize) -> Vec<usize> {
        let points = self.points.min(total);
        let mut steps: Vec<usize> = (1..=points).map(|i| (i * total).div_ceil(points)).collect();
        steps.dedup();
        steps
    }
}

/// The per-step metrics plotted in a stage's `curves.svg`, by trainer.
const SFT_CURVES: [&str; 3] = ["loss", "grad_norm", "lr"];
const GRPO_CURVES: [&str; 5] = ["reward_mean", "format_ok_fraction", "zero_std_group_fraction", "kl", "loss"];

/// What the stage runner needs of a trainer.
pub(crate) trait StageTrainer {
    fn steps_done(&self) -> usize;
    fn train_steps(&mut self, steps: usize) -> Result<(), BoxError>;
    fn model(&self) -> &Qwen3;
}

impl StageTrainer for SftTrainer {
    fn steps_done(&self) -> usize {
        SftTrainer::steps_done(self)
    }
    fn train_steps(&mut self, steps: usize) -> Result<(), BoxError> {
        self.train(steps)?;
        Ok(())
    }
    fn model(&self) -> &Qwen3 {
        SftTrainer::model(self)
    }
}

impl StageTrainer for GrpoTrainer {
    fn steps_done(&self) -> usize {
        GrpoTrainer::steps_done(self)
    }
    fn train_steps(&mut self, steps: usize) -> Result<(), BoxError> {
        self.train(steps)?;
        Ok(())
    }
    fn model(&self) -> &Qwen3 {
        GrpoTrainer::model(self)
    }
}

impl StageRun<'_> {
    /// Trains the remaining steps of `total`, measuring held-out metrics at the probe's steps (and before step 1
    /// of a fresh run), then plots the stage's curves.
    pub(crate) fn train_with_probe(
        &self,
        trainer: &mut impl StageTrainer,
        total: usize,
        curves: &[&str],
    ) -> Result<(), BoxError> {
        let heldout = self.dir.join("heldout.jsonl");
        let measure_at = self.probe.map(|p| p.steps(total)).unwrap_or_default();
        let measure = |trainer: &dyn StageTrainer| -> Result<(), BoxError> {
            let Some(probe) = self.probe else { return Ok(()) };
            let step = trainer.steps_done();
            let started = Instant::now();
            let values = (probe.measure)(trainer.model().valid())?;
            let mut line = serde_json::Map::new();
            line.insert("step".into(), step.into());
            for (name, value) in &values {
                line.insert(name.clone(), (*value).into());
            }
            line.insert("seconds".into(), started.elapsed().as_secs_f64().into());
            append_line(&heldout, &serde_json::Value::Object(line))?;
            let shown: Vec<String> = values.iter().map(|(k, v)| format!("{k} {v:.3}")).collect();
            println!("    held-out at step {step}: {}", shown.join(", "));
            Ok(())
        };
        if self.probe.is_some() {
            if trainer.steps_done() == 0 {
                // A fresh start: measurements of an interrupted run before its first checkpoint are stale.
                if heldout.is_file() {
                    std::fs::remove_file(&heldout)?;
                }
                measure(trainer)?;
            } else {
                truncate_metrics(&heldout, trainer.steps_done())?;
            }
        }
        while trainer.steps_done() < total {
            let done = trainer.steps_done();
            let next = measure_at.iter().copied().find(|&s| s > done).unwrap_or(total);
            trainer.train_steps(next - done)?;
            if measure_at.contains(&next) {
                measure(trainer)?;
            }
        }
        self.plot(curves)
    }

    /// Draws `curves.svg` from the trainer's metrics and `heldout.svg` from the held-out measurements.
    fn plot(&self, curves: &[&str]) -> Result<(), BoxError> {
        let title = |what: &str| format!("stage {}: {what}", self.name);
        let rows = act_eval::read_metrics(self.dir.join("trainer").join("metrics.jsonl"))?;
        let present: Vec<&str> =
            curves.iter().copied().filter(|f| rows.iter().any(|r| r.values.contains_key(*f))).collect();
        if !present.is_empty() {
            act_eval::plot_training_curves(&rows, &present, &title("training"), self.dir.join("curves.svg"))?;
        }
        let heldout = self.dir.join("heldout.jsonl");
        if heldout.is_file() {
            let rows = act_eval::read_metrics(&heldout)?;
            let mut fields: Vec<String> =
                rows.iter().flat_map(|r| r.values.keys().cloned()).filter(|k| k != "seconds").collect();
            fields.sort();
            fields.dedup();
            let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
            if !fields.is_empty() {
                act_eval::plot_training_curves(&rows, &fields, &title("held-out"), self.dir.join("heldout.svg"))?;
            }
        }
        Ok(())
    }

    pub(crate) fn announce(&self, steps: usize, samples: usize) -> Instant {
        println!("  {}: {steps} steps on {samples} samples -> {}", self.name, self.dir.display());
        Instant::now()
    }

    pub(crate) fn skip(&self) -> Option<StageRecord> {
        let record = finished(&self.dir)?;
        println!("  {}: already done ({} steps), reusing {}", self.name, record.steps, model_dir(&self.dir).display());
        Some(record)
    }

    /// Supervised fine-tuning on `samples` for `stage.steps` steps.
    /// The device the stage trains on: the backend's, with autodiff, and with gradient checkpointing when the
    /// training config asks for it.
    pub(crate) fn training_device(&self) -> Result<Device, BoxError> {
        let backend = self.context.backend;
        Ok(if self.training.gradient_checkpointing {
            backend.checkpointed_training_device()?
        } else {
            backend.training_device()?
        })
    }

    /// The stage's starting model, with LoRA adapters when the stage asks for them (their `A` drawn from the
    /// stage's seed).
    fn start_model(&self, device: &Device, lora: Option<&LoraConfig>) -> Result<Qwen3, BoxError> {
        let model = self.start.load(device, self.seed)?;
        Ok(match lora {
            Some(lora) => {
                // Half precision with LoRA: the frozen base is cast before the (f32) adapters are attached.
                let precision = self.training.float_dtype;
                let model = if precision.is_f32() { model } else { model.with_float_dtype(precision.dtype())? };
                apply_lora(model, lora, derive_seed(self.seed, LORA_STREAM))?
            }
            // Full fine-tuning starts from the f32 weights; the trainer keeps them as master weights when it
            // computes in half precision (`compute_dtype`).
            None => model,
        })
    }

    /// The trainer's compute dtype for a stage with `lora` (or none): half precision with f32 master weights for
    /// full fine-tuning under a half-precision `training.float_dtype`; f32 otherwise (LoRA adapters train in f32
    /// on the cast base of [`Self::start_model`]).
    pub(crate) fn compute_dtype(&self, lora: Option<&LoraConfig>) -> ComputeDtype {
        if lora.is_none() { self.training.float_dtype } else { ComputeDtype::F32 }
    }

    pub fn sft(&self, stage: &SftStageConfig, samples: Vec<SftSample>) -> Result<StageRecord, BoxError> {
        if let Some(record) = self.skip() {
            return Ok(record);
        }
        if samples.is_empty() {
            return Err(format!("stage {}: no training samples", self.name).into());
        }
        let count = samples.len();
        let started = self.announce(stage.steps, count);
        let device = self.training_device()?;
        let mut config = SftConfig::default()
            .with_batch_size(stage.batch_size)
            .with_lr(stage.lr)
            .with_schedule(stage.schedule, stage.warmup_steps.min(stage.steps - 1))
            .with_max_length(self.training.max_length)
            .with_prefix_packing(true)
            .with_loss_on_prompts(stage.loss_on_prompts)
            .with_seed(self.seed)
            .with_total_steps(stage.steps)
            .with_checkpoint_every(self.training.checkpoint_every)
            .with_compute_dtype(self.compute_dtype(stage.lora.as_ref()));
        config.run.progress_bar = true;
        let trainer_dir = self.dir.join("trainer");
        let (tokenizer, template) = (self.context.tokenizer.clone(), self.context.template.clone());
        let trainer = match latest_checkpoint(&trainer_dir) {
            Some((checkpoint, step)) => {
                println!("    resuming from {}", checkpoint.display());
                truncate_metrics(&trainer_dir.join("metrics.jsonl"), step)?;
                SftTrainer::resume(&checkpoint, config, tokenizer, template, samples, vec![], &device)?
            }
            None => {
                let model = self.start_model(&device, stage.lora.as_ref())?;
                SftTrainer::new(config, model, tokenizer, template, samples, vec![])?
            }
        };
        let mut trainer = trainer.with_output_dir(&trainer_dir)?;
        self.train_with_probe(&mut trainer, stage.steps, &SFT_CURVES)?;
        let metrics = act_eval::read_metrics(trainer_dir.join("metrics.jsonl"))?;
        let final_value = metrics.last().and_then(|m| m.values.get("loss").copied()).unwrap_or(f64::NAN);
        let record = StageRecord {
            stage: self.name.to_owned(),
            started_from: self.start.dir(),
            steps: stage.steps,
            samples: count,
            seconds: started.elapsed().as_secs_f64(),
            final_value,
        };
        finish(&self.dir, trainer.trained_model(), &record)?;
        println!("    loss {final_value:.4} ({:.1} s)", record.seconds);
        Ok(record)
    }

    /// GRPO on `samples` scored by `reward`, with completions cut after `stop`.
    pub fn grpo(
        &self,
        stage: &GrpoStageConfig,
        samples: Vec<GrpoSample>,
        reward: impl RewardFn + 'static,
        stop: &str,
    ) -> Result<StageRecord, BoxError> {
        if let Some(record) = self.skip() {
            return Ok(record);
        }
        if samples.is_empty() {
            return Err(format!("stage {}: no training prompts", self.name).into());
        }
        let count = samples.len();
        let started = self.announce(stage.steps, count);
        let device = self.training_device()?;
        let mut config = GrpoConfig::default()
            .with_group_size(stage.group_size)
            .with_prompts_per_step(stage.prompts_per_step)
            .with_max_completion_tokens(stage.max_completion_tokens)
            .with_stop(stop)
            .with_lr(stage.lr)
            .with_kl(act_grpo::KlEstimator::K3, stage.kl_coef)
            .with_schedule(stage.schedule, 5.min(stage.steps - 1))
            .with_seed(self.seed)
            .with_total_steps(stage.steps)
            .with_checkpoint_every(self.training.checkpoint_every)
            .with_compute_dtype(self.compute_dtype(stage.lora.as_ref()));
        config.run.progress_bar = true;
        let trainer_dir = self.dir.join("trainer");
        let (tokenizer, template) = (self.context.tokenizer.clone(), self.context.template.clone());
        let trainer = match latest_checkpoint(&trainer_dir) {
            Some((checkpoint, step)) => {
                println!("    resuming from {}", checkpoint.display());
                truncate_metrics(&trainer_dir.join("metrics.jsonl"), step)?;
                GrpoTrainer::resume(&checkpoint, config, tokenizer, template, reward, samples, &device)?
            }
            None => {
                let model = self.start_model(&device, stage.lora.as_ref())?;
                GrpoTrainer::new(config, model, tokenizer, template, reward, samples)?
            }
        };
        let mut trainer = trainer.with_output_dir(&trainer_dir)?;
        self.train_with_probe(&mut trainer, stage.steps, &GRPO_CURVES)?;
        // The mean reward of the last tenth of the steps: one step's mean is a noisy headline.
        let metrics = act_eval::read_metrics(trainer_dir.join("metrics.jsonl"))?;
        let tail = &metrics[metrics.len() - metrics.len().div_ceil(10).min(metrics.len())..];
        let final_value =
            tail.iter().filter_map(|m| m.values.get("reward_mean")).sum::<f64>() / tail.len().max(1) as f64;
        let record = StageRecord {
            stage: self.name.to_owned(),
            started_from: self.start.dir(),
            steps: stage.steps,
            samples: count,
            seconds: started.elapsed().as_secs_f64(),
            final_value,
        };
        finish(&self.dir, trainer.trained_model(), &record)?;
        println!("    mean reward (last steps) {final_value:.3} ({:.1} s)", record.seconds);
        Ok(record)
    }
}

/// ACT's training prompts: each pair's comparison prompt, scored by which action the answer picks.
pub fn act_samples(pairs: &[ActionPair], prompter: &Prompter) -> Vec<GrpoSample> {
    pairs.iter().map(|p| prompter.comparison_sample(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_corpus_keeps_each_episode_text_once() {
        let sample = |prompt: &str, completion: &str| SftSample {
            id: String::new(),
            prompt: prompt.into(),
            completion: completion.into(),
        };
        let samples = [
            sample("task: a\nroom", "go 1"),
            sample("task: a\nroom go 1 then", "go 2"),
            sample("task: b", "take"),
            sample("task: a\nroom", "go 1"),
        ];
        assert_eq!(
            tokenizer_corpus(&samples),
            ["go 1", "task: a\nroom go 1 then", "go 2", "task: b", "take", "task: a\nroom", "go 1"]
        );
    }

    #[test]
    fn single_turn_samples_show_one_turn_and_the_action_taken_there() {
        use crate::config::PromptStyle;
        use crate::prompts::prompt_config;
        use act_model::IM_END;
        let factory = act_alfworld::AlfworldFactory::new(act_alfworld::AlfworldConfig::default().with_train_size(3));
        let episodes = crate::pipeline::expert_trajectories(&factory, act_core::Split::Train, 3, 0).unwrap();
        let plain = Prompter::new(prompt_config(PromptStyle::Conversation, "ALFWorld", false)).unwrap();
        let states: Vec<(AgentState, Action)> =
            episodes.iter().flat_map(|t| t.states(0)).map(|(s, a)| (s, a.clone())).collect();
        assert!(single_turn_samples(&episodes, &plain, 0.0, 1).is_empty());
        let all = single_turn_samples(&episodes, &plain, 1.0, 1);
        assert_eq!(all.len(), states.len());
        for (sample, (state, action)) in all.iter().zip(&states) {
            assert!(sample.prompt.starts_with("task: ") && !sample.prompt.contains(IM_END), "{}", sample.prompt);
            assert!(sample.prompt.ends_with(state.observation.as_str()));
            assert_eq!(sample.completion, action_completion(action.as_str()));
        }
        let some = single_turn_samples(&episodes, &plain, 0.4, 1);
        assert!(!some.is_empty() && some.len() < all.len(), "{} of {}", some.len(), all.len());
        assert_eq!(some, single_turn_samples(&episodes, &plain, 0.4, 1), "seeded");
        assert!(some.iter().all(|s| all.contains(s)));
    }

    #[test]
    fn metrics_are_cut_back_to_the_checkpoint_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        std::fs::write(&path, "{\"step\":1}\n{\"step\":2}\n{\"step\":3}\n").unwrap();
        truncate_metrics(&path, 2).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"step\":1}\n{\"step\":2}\n");
        truncate_metrics(&dir.path().join("absent.jsonl"), 2).unwrap();
    }

    #[test]
    fn episode_base_samples_keep_every_plain_state_and_one_format_state_per_episode() {
        use crate::config::PromptStyle;
        use crate::prompts::prompt_config;
        let factory = act_alfworld::AlfworldFactory::new(act_alfworld::AlfworldConfig::default().with_train_size(3));
        let episodes = crate::pipeline::expert_trajectories(&factory, act_core::Split::Train, 3, 0).unwrap();
        let config = |reasoning| prompt_config(PromptStyle::Conversation, "ALFWorld", reasoning);
        let (plain, reasoning) = (Prompter::new(config(false)).unwrap(), Prompter::new(config(true)).unwrap());
        let states: usize = episodes.iter().map(|t| t.steps.len()).sum();
        let count = |samples: &[SftSample], kind: &str| samples.iter().filter(|s| s.id.ends_with(kind)).count();
        let options = |formats_per_state, hint_fraction| BaseSampleOptions {
            history_len: 32,
            formats_per_state,
            hint_fraction,
            comparisons: BaseComparisons::Random,
            answers: ComparisonAnswers::Number,
            seed: 1,
        };
        let per_state = base_samples(&episodes, &plain, &reasoning, &options(true, 0.0));
        assert_eq!((count(&per_state, "/plain"), count(&per_state, "/reasoning")), (states, states));
        let per_episode = base_samples(&episodes, &plain, &reasoning, &options(false, 0.0));
        assert_eq!(count(&per_episode, "/plain"), states);
        assert_eq!((count(&per_episode, "/reasoning"), count(&per_episode, "/compare")), (3, 3));
        assert_eq!(per_episode, base_samples(&episodes, &plain, &reasoning, &options(false, 0.0)), "seeded");
        assert!(per_episode.iter().all(|s| !s.prompt.contains("hint")));

        // Expert-candidate comparisons: every comparison shows its state's expert action and one other.
        let expert = base_samples(
            &episodes,
            &plain,
            &reasoning,
            &BaseSampleOptions { comparisons: BaseComparisons::ExpertCandidate, ..options(true, 0.0) },
        );
        let mut first = 0;
        for trajectory in &episodes {
            for (state, action) in trajectory.states(32) {
                let id = format!("{}#{}/compare", state.task_id, state.step_index);
                let Some(sample) = expert.iter().find(|s| s.id == id) else { continue };
                let (one, two) = (format!("1: {action}\n"), format!("2: {action}\n"));
                assert!(sample.prompt.contains(&one) != sample.prompt.contains(&two), "{}", sample.prompt);
                first += usize::from(sample.prompt.contains(&one));
            }
        }
        let comparisons = count(&expert, "/compare");
        assert!(comparisons > 10 && first > 0 && first < comparisons, "{first} of {comparisons} first");

        // Thought first: the same comparisons, each completion proposing the state's expert action before its answer.
        let thought = base_samples(
            &episodes,
            &plain,
            &reasoning,
            &BaseSampleOptions { comparisons: BaseComparisons::ThoughtFirst, ..options(true, 0.0) },
        );
        let mut answers = [0; 2];
        for trajectory in &episodes {
            for (state, action) in trajectory.states(32) {
                let id = format!("{}#{}/compare", state.task_id, state.step_index);
                let (Some(with), Some(without)) =
                    (thought.iter().find(|s| s.id == id), expert.iter().find(|s| s.id == id))
                else {
                    continue;
                };
                assert_eq!(with.prompt, without.prompt);
                assert_eq!(with.completion, format!("<think>{action}</think>{}", without.completion));
                answers[usize::from(with.completion.ends_with("<answer>2</answer>"))] += 1;
            }
        }
        assert!(answers[0] > 0 && answers[1] > 0, "the answer stays a coin flip: {answers:?}");

        // Answers by the action's text: the same comparisons and coin flips, each answer naming the action its
        // number names, so a parser reads the same choice from both.
        let named = base_samples(
            &episodes,
            &plain,
            &reasoning,
            &BaseSampleOptions {
                comparisons: BaseComparisons::ExpertCandidate,
                answers: ComparisonAnswers::Action,
                ..options(true, 0.0)
            },
        );
        assert_eq!(named.len(), expert.len());
        for (by_name, by_number) in named.iter().zip(&expert).filter(|(s, _)| s.id.ends_with("/compare")) {
            assert_eq!((&by_name.id, &by_name.prompt), (&by_number.id, &by_number.prompt));
            let listed = |n: &str| {
                let line = by_name.prompt.lines().find(|l| l.starts_with(n)).unwrap();
                line[n.len()..].to_owned()
            };
            let actions = [listed("1: "), listed("2: ")];
            let actions = [actions[0].as_str(), actions[1].as_str()];
            assert!(!by_name.completion.ends_with(">1</answer>") && !by_name.completion.ends_with(">2</answer>"));
            assert_eq!(
                act_core::parse_choice_among(&by_name.completion, actions).unwrap(),
                act_core::parse_choice(&by_number.completion).unwrap(),
                "{}",
                by_name.completion
            );
        }

        // Every episode hinted: each plain prompt of an episode starts with the same hint of its first actions.
        let hinted = base_samples(&episodes, &plain, &reasoning, &options(false, 1.0));
        let unhinted_formats: Vec<&SftSample> = hinted.iter().filter(|s| !s.id.ends_with("/plain")).collect();
        let formats: Vec<&SftSample> = per_episode.iter().filter(|s| !s.id.ends_with("/plain")).collect();
        assert_eq!(unhinted_formats, formats, "the other formats are those of a run without hints");
        for (episode, trajectory) in episodes.iter().enumerate() {
            let first = &trajectory.steps[0].action;
            let prompts: Vec<&str> = hinted
                .iter()
                .filter(|s| s.id.ends_with("/plain") && s.id.starts_with(&format!("{}#", trajectory.task_id)))
                .map(|s| s.prompt.as_str())
                .collect();
            assert_eq!(prompts.len(), trajectory.steps.len(), "episode {episode}");
            let hint = &prompts[0][..prompts[0].find("\n\n").unwrap() + 2];
            assert!(hint.starts_with(&format!("Reference action trajectory hint:\n1. {first}\n")), "{hint}");
            assert!(prompts.iter().all(|p| p.starts_with(hint)));
            // Prefix-consistent, so the episode still packs into one sequence.
            assert!(prompts.windows(2).all(|w| w[1].starts_with(w[0])));
        }
    }

    #[test]
    fn the_latest_well_formed_checkpoint_wins() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["checkpoint-000010", "checkpoint-000030", "checkpoint-30", "other"] {
            std::fs::create_dir_all(dir.path().join(name).join("policy")).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("checkpoint-000040")).unwrap(); // no policy: half-written
        let (path, step) = latest_checkpoint(dir.path()).unwrap();
        assert_eq!((path.file_name().unwrap().to_str().unwrap(), step), ("checkpoint-000030", 30));
    }
}
