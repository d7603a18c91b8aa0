//! What an on-line evaluation plays: who acts ([`Agent`]), the settings ([`EpisodeEvalConfig`]), and the record
//! of a played episode ([`EpisodeResult`]). act-rollout plays the episodes; what to do with an invalid action
//! ([`InvalidActionHandling`], `act_rollout::nearest_admissible`) is its.

use act_core::{Action, Observation, Policy, PromptConfig, Prompter, SamplingParams, Split};
use act_rollout::{Actor, ExpertActor, PlayedEpisode, PolicyActor, RolloutConfig};
pub use act_rollout::{InvalidActionHandling, RejectedRetry};
use serde::{Deserialize, Serialize};

use crate::error::EvalError;
use crate::stats::BootstrapConfig;

/// Who acts in the episodes.
#[derive(Clone, Copy)]
pub enum Agent<'a> {
    /// The environment's own expert ([`Environment::expert_action`](act_core::Environment::expert_action)).
    Expert,
    /// A policy, prompted with [`Prompter::act_query`] and parsed with [`parse_action`](act_core::parse_action).
    Policy(&'a dyn Policy),
}

impl std::fmt::Debug for Agent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Agent::Expert => f.write_str("Expert"),
            Agent::Policy(policy) => write!(f, "Policy({})", policy.name()),
        }
    }
}

impl Agent<'_> {
    /// The name reports use: "expert" or the policy's name.
    pub fn name(&self) -> &str {
        match self {
            Agent::Expert => "expert",
            Agent::Policy(policy) => policy.name(),
        }
    }
}

/// Settings of an on-line evaluation. Everything here is recorded in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeEvalConfig {
    /// The split whose tasks are played.
    pub split: Split,
    /// How many episodes (tasks `0..episodes` of the split); `None` plays every task.
    pub episodes: Option<usize>,
    /// The evaluation seed; episode `i` uses `derive_seed(seed, i)`.
    pub seed: u64,
    /// The most steps per episode; `None` uses the environment's [`Environment::step_budget`](act_core::Environment::step_budget).
    pub step_budget: Option<usize>,
    /// What to do with invalid actions.
    pub invalid_actions: InvalidActionHandling,
    /// Whether a policy's proposal that the environment already rejected in the current state is sampled again
    /// ([`RejectedRetry`]); `None` (the default, and the value of records made before the field existed) sends
    /// every proposal as the policy made it. Ignored by the expert. Its samples are seeded like sampling's, so with
    /// it even a greedy policy's results are reproducible for a given batch size but differ between batch sizes.
    #[serde(default)]
    pub rejected_retry: Option<RejectedRetry>,
    /// Whether an output without a `<think>` block is unparseable.
    pub require_reasoning: bool,
    /// How action prompts are built.
    pub prompt: PromptConfig,
    /// How the policy samples (its `seed` is replaced per call, see the module docs).
    pub sampling: SamplingParams,
    /// Episodes played in lockstep, their action queries sent together in one [`Policy::generate`] call; `1` (the
    /// default, and the value of records made before the field existed) plays each episode on its own with one
    /// query per call. Larger batches are much faster for neural policies. With a batch size above 1 a sampling
    /// policy's per-query seeds depend on the batch layout (query `i` of a call samples from
    /// `derive_seed(params.seed, i)`, see the module docs), so sampled (temperature > 0) results are reproducible
    /// for a given batch size but differ from those of batch size 1; greedy results do not depend on it. Ignored
    /// by the expert. Must not be 0.
    #[serde(default = "default_batch_size")]
    pub batch_size: usize,
    /// How intervals are drawn.
    pub bootstrap: BootstrapConfig,
    /// Whether each episode's outputs and actions are kept in the report.
    pub record_transcripts: bool,
    /// Whether to draw a progress bar (only ever on a terminal). Not recorded: always `false` in a report.
    #[serde(skip)]
    pub progress: bool,
}

impl EpisodeEvalConfig {
    /// Every task of `split`, seed 0, the environment's step budget, greedy sampling, invalid actions as-is.
    pub fn new(split: Split) -> Self {
        EpisodeEvalConfig {
            split,
            episodes: None,
            seed: 0,
            step_budget: None,
            invalid_actions: InvalidActionHandling::AsIs,
            rejected_retry: None,
            require_reasoning: false,
            prompt: PromptConfig::default(),
            sampling: SamplingParams::greedy(),
            batch_size: 1,
            bootstrap: BootstrapConfig::default(),
            record_transcripts: false,
            progress: true,
        }
    }

    /// Plays only the first `episodes` tasks.
    #[must_use]
    pub fn with_episodes(mut self, episodes: usize) -> Self {
        self.episodes = Some(episodes);
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Overrides the step budget.
    #[must_use]
    pub fn with_step_budget(mut self, step_budget: usize) -> Self {
        self.step_budget = Some(step_budget);
        self
    }

    /// Sets the invalid-action handling.
    #[must_use]
    pub fn with_invalid_actions(mut self, handling: InvalidActionHandling) -> Self {
        self.invalid_actions = handling;
        self
    }

    /// Sets whether a rejected proposal is sampled again ([`RejectedRetry`]).
    #[must_use]
    pub fn with_rejected_retry(mut self, retry: Option<RejectedRetry>) -> Self {
        self.rejected_retry = retry;
        self
    }

    /// Sets whether reasoning is required for an output to parse.
    #[must_use]
    pub fn with_require_reasoning(mut self, require: bool) -> Self {
        self.require_reasoning = require;
        self
    }

    /// Sets the prompt configuration.
    #[must_use]
    pub fn with_prompt(mut self, prompt: PromptConfig) -> Self {
        self.prompt = prompt;
        self
    }

    /// Sets the sampling parameters.
    #[must_use]
    pub fn with_sampling(mut self, sampling: SamplingParams) -> Self {
        self.sampling = sampling;
        self
    }

    /// Plays up to `batch_size` episodes in lockstep, one [`Policy::generate`] call per step of them all (must be
    /// positive). See [`EpisodeEvalConfig::batch_size`] for what it changes.
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Checks the settings: a positive batch size, a positive episode count and step budget when set, valid
    /// retry settings when set, valid bootstrap settings and prompt templates.
    /// [`evaluate_episodes`](crate::evaluate_episodes) calls it first.
    pub fn validate(&self) -> Result<(), EvalError> {
        // The batch size and step budget are the rollout's: its configuration checks them.
        let mut rollout = RolloutConfig::default().with_batch_size(self.batch_size);
        rollout.step_budget = self.step_budget;
        rollout.validate()?;
        if self.episodes == Some(0) {
            return Err(EvalError::Config("the episode count is 0".into()));
        }
        if let Some(retry) = &self.rejected_retry {
            retry.validate().map_err(|e| EvalError::Config(format!("rejected_retry: {e}")))?;
        }
        self.bootstrap.validate()?;
        Prompter::new(self.prompt.clone()).map_err(|e| EvalError::Config(format!("prompt templates: {e}")))?;
        Ok(())
    }

    /// Sets the bootstrap configuration.
    #[must_use]
    pub fn with_bootstrap(mut self, bootstrap: BootstrapConfig) -> Self {
        self.bootstrap = bootstrap;
        self
    }

    /// Keeps transcripts in the report.
    #[must_use]
    pub fn with_transcripts(mut self, record: bool) -> Self {
        self.record_transcripts = record;
        self
    }

    /// Turns the progress bar on or off.
    #[must_use]
    pub fn with_progress(mut self, progress: bool) -> Self {
        self.progress = progress;
        self
    }
}

/// The batch size of records made before [`EpisodeEvalConfig::batch_size`] existed.
fn default_batch_size() -> usize {
    1
}

/// One step of a recorded episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptStep {
    /// What the agent read before acting (empty in records made before the field existed).
    #[serde(default)]
    pub observation: Observation,
    /// The policy's raw output (the expert's action for the expert).
    pub output: String,
    /// The action sent to the environment.
    pub action: Action,
    /// Whether the output parsed to an admissible action.
    pub valid: bool,
    /// The environment's reward for the step.
    pub reward: f64,
}

/// The result of one episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeResult {
    /// The 0-based episode index (and task index within the split).
    pub index: usize,
    /// The task's identifier.
    pub task_id: String,
    /// The task type.
    pub task_type: String,
    /// The episode seed.
    pub seed: u64,
    /// Whether the task was completed.
    pub won: bool,
    /// The environment's final score.
    pub score: f64,
    /// Steps taken.
    pub steps: usize,
    /// Steps whose output was not an admissible action (unparseable outputs included).
    pub invalid_actions: usize,
    /// Steps whose output had no parseable action.
    pub unparseable_outputs: usize,
    /// Steps whose action was replaced by the nearest admissible one.
    pub snapped_actions: usize,
    /// The steps, when transcripts are recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<TranscriptStep>,
}

impl EpisodeResult {
    /// The record of `played`, with its transcript when `transcript` is set.
    pub fn from_played(played: PlayedEpisode, transcript: bool) -> Self {
        let transcript = if transcript {
            played
                .turns
                .iter()
                .zip(&played.trajectory.steps)
                .map(|(turn, step)| TranscriptStep {
                    observation: step.observation.clone(),
                    output: turn.completion.text.clone(),
                    action: turn.action.clone(),
                    valid: turn.valid,
                    reward: turn.reward,
                })
                .collect()
        } else {
            Vec::new()
        };
        EpisodeResult {
            index: played.spec.index,
            won: played.won(),
            score: played.score(),
            steps: played.steps(),
            invalid_actions: played.invalid_actions(),
            unparseable_outputs: played.unparseable_outputs(),
            snapped_actions: played.snapped_actions(),
            transcript,
            task_id: played.trajectory.task_id,
            task_type: played.trajectory.task_type,
            seed: played.spec.seed,
        }
    }
}

impl<'a> Agent<'a> {
    /// The act-rollout actor that plays for this agent under `config`, prompted by `prompter`.
    pub(crate) fn actor(self, prompter: Prompter, config: &EpisodeEvalConfig) -> Box<dyn Actor + 'a> {
        match self {
            Agent::Expert => Box::new(ExpertActor),
            Agent::Policy(policy) => Box::new(
                PolicyActor::new(policy, prompter)
                    .with_sampling(config.sampling.clone())
                    .with_require_reasoning(config.require_reasoning)
                    .with_rejected_retry(config.rejected_retry.clone()),
            ),
        }
    }
}
