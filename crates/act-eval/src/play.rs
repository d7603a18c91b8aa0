//! Playing one episode: who acts ([`Agent`]), the settings of an evaluation ([`EpisodeEvalConfig`]), what to do
//! with an invalid action ([`InvalidActionHandling`], [`nearest_admissible`]), the record of a played episode
//! ([`EpisodeResult`]), and the runner that plays episodes step by step for the [`episodes`](crate::episodes)
//! module's workers and the lockstep driver.

use act_core::{
    Action, AgentState, Environment, HistoryEntry, Observation, Policy, PromptConfig, Prompter, Query, SamplingParams,
    Split, TaskInfo, TaskRef, actions_match, derive_seed, normalize_action, parse_action,
};
use serde::{Deserialize, Serialize};

use crate::error::EvalError;
use crate::stats::BootstrapConfig;

/// What to do with an action that is not admissible (or an output with no parseable action).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidActionHandling {
    /// Send it to the environment unchanged (an unparseable output is sent as its trimmed text), which answers as
    /// the real benchmark does. The default.
    #[default]
    AsIs,
    /// Replace it by the admissible action nearest in edit distance (after [`normalize_action`]; ties go to the
    /// earlier admissible action), as MetaGym does. Only where the environment lists admissible actions.
    SnapToNearest,
}

/// Who acts in the episodes.
#[derive(Clone, Copy)]
pub enum Agent<'a> {
    /// The environment's own expert ([`Environment::expert_action`]).
    Expert,
    /// A policy, prompted with [`Prompter::act_query`] and parsed with [`parse_action`].
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
    /// The most steps per episode; `None` uses the environment's [`Environment::step_budget`].
    pub step_budget: Option<usize>,
    /// What to do with invalid actions.
    pub invalid_actions: InvalidActionHandling,
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
    pub fn with_episodes(mut self, episodes: usize) -> Self {
        self.episodes = Some(episodes);
        self
    }

    /// Sets the seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Overrides the step budget.
    pub fn with_step_budget(mut self, step_budget: usize) -> Self {
        self.step_budget = Some(step_budget);
        self
    }

    /// Sets the invalid-action handling.
    pub fn with_invalid_actions(mut self, handling: InvalidActionHandling) -> Self {
        self.invalid_actions = handling;
        self
    }

    /// Sets whether reasoning is required for an output to parse.
    pub fn with_require_reasoning(mut self, require: bool) -> Self {
        self.require_reasoning = require;
        self
    }

    /// Sets the prompt configuration.
    pub fn with_prompt(mut self, prompt: PromptConfig) -> Self {
        self.prompt = prompt;
        self
    }

    /// Sets the sampling parameters.
    pub fn with_sampling(mut self, sampling: SamplingParams) -> Self {
        self.sampling = sampling;
        self
    }

    /// Plays up to `batch_size` episodes in lockstep, one [`Policy::generate`] call per step of them all (0 counts
    /// as 1). See [`EpisodeEvalConfig::batch_size`] for what it changes.
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Sets the bootstrap configuration.
    pub fn with_bootstrap(mut self, bootstrap: BootstrapConfig) -> Self {
        self.bootstrap = bootstrap;
        self
    }

    /// Keeps transcripts in the report.
    pub fn with_transcripts(mut self, record: bool) -> Self {
        self.record_transcripts = record;
        self
    }

    /// Turns the progress bar on or off.
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

/// Plays episodes with fixed settings: whole episodes on their own ([`EpisodeRunner::run`]), or step by step from
/// outside (the lockstep driver), through the same pieces.
pub(crate) struct EpisodeRunner<'a> {
    pub(crate) agent: Agent<'a>,
    pub(crate) prompter: &'a Prompter,
    pub(crate) config: &'a EpisodeEvalConfig,
    pub(crate) step_budget: usize,
}

/// What the agent chose at one step.
pub(crate) struct Decision {
    output: String,
    action: Action,
    valid: bool,
    parsed: bool,
    snapped: bool,
}

/// An episode in play: its result so far, and what the agent sees at its next step.
pub(crate) struct Episode {
    result: EpisodeResult,
    task: TaskInfo,
    observation: Observation,
    admissible: Vec<Action>,
    history: Vec<HistoryEntry>,
    done: bool,
}

impl Episode {
    /// The episode's index.
    pub(crate) fn index(&self) -> usize {
        self.result.index
    }

    /// The 0-based index of the next step (the steps taken so far).
    pub(crate) fn step(&self) -> usize {
        self.result.steps
    }

    /// The result, once the episode is over.
    pub(crate) fn into_result(self) -> EpisodeResult {
        self.result
    }
}

impl EpisodeRunner<'_> {
    /// Plays episode `index` on `env` from start to finish.
    pub(crate) fn run<E: Environment>(&self, env: &mut E, index: usize) -> Result<EpisodeResult, EvalError> {
        let mut episode = self.start(env, index)?;
        while !self.is_over(&episode) {
            let Some(decision) = self.decide(env, &episode)? else {
                break; // The expert has nothing more to do.
            };
            self.play(env, &mut episode, decision)?;
        }
        Ok(episode.into_result())
    }

    /// Resets `env` to episode `index`.
    pub(crate) fn start<E: Environment>(&self, env: &mut E, index: usize) -> Result<Episode, EvalError> {
        let seed = derive_seed(self.config.seed, index as u64);
        let reset = env
            .reset(&TaskRef::index(self.config.split, index), seed)
            .map_err(|source| EvalError::Env { episode: index, source })?;
        Ok(Episode {
            result: EpisodeResult {
                index,
                task_id: reset.task.id.clone(),
                task_type: reset.task.task_type.clone(),
                seed,
                won: false,
                score: 0.0,
                steps: 0,
                invalid_actions: 0,
                unparseable_outputs: 0,
                snapped_actions: 0,
                transcript: Vec::new(),
            },
            task: reset.task,
            observation: reset.observation,
            admissible: reset.admissible_actions.unwrap_or_default(),
            history: Vec::new(),
            done: false,
        })
    }

    /// Whether `episode` has ended or used up its step budget.
    pub(crate) fn is_over(&self, episode: &Episode) -> bool {
        episode.done || episode.result.steps >= self.step_budget
    }

    /// The action query for the next step of `episode`.
    pub(crate) fn query(&self, episode: &Episode) -> Query {
        let history = &episode.history;
        let shown = history.len().min(self.config.prompt.history_len);
        let state = AgentState {
            task_id: episode.task.id.clone(),
            task: episode.task.description.clone(),
            step_index: episode.step(),
            history: history[history.len() - shown..].to_vec(),
            observation: episode.observation.clone(),
            admissible_actions: episode.admissible.clone(),
        };
        self.prompter.act_query(&state)
    }

    /// The agent's choice at the next step of `episode`, asking the policy alone; `None` when the expert has
    /// nothing more to do.
    fn decide<E: Environment>(&self, env: &mut E, episode: &Episode) -> Result<Option<Decision>, EvalError> {
        let (index, step) = (episode.index(), episode.step());
        let policy = match self.agent {
            Agent::Expert => {
                let action = env.expert_action().map_err(|source| EvalError::Env { episode: index, source })?;
                return match action {
                    Some(action) => Ok(Some(Decision {
                        output: action.to_string(),
                        valid: is_admissible(action.as_str(), &episode.admissible),
                        action,
                        parsed: true,
                        snapped: false,
                    })),
                    None if step == 0 => Err(EvalError::NoExpert { episode: index, env: env.name().to_owned() }),
                    None => Ok(None),
                };
            }
            Agent::Policy(policy) => policy,
        };
        let what = || format!("episode {index}, step {step}");
        let params = self.config.sampling.clone().with_seed(derive_seed(episode.result.seed, step as u64));
        let mut outputs = policy
            .generate(&[self.query(episode)], &params)
            .map_err(|source| EvalError::Policy { what: what(), source })?;
        if outputs.len() != 1 {
            return Err(EvalError::CompletionCount {
                what: what(),
                policy: policy.name().to_owned(),
                expected: 1,
                got: outputs.len(),
            });
        }
        Ok(Some(self.interpret(outputs.remove(0), episode)))
    }

    /// Turns the policy's `output` for the next step of `episode` into the action to send: parsed, checked
    /// against the admissible actions, and snapped where the settings say so.
    pub(crate) fn interpret(&self, output: String, episode: &Episode) -> Decision {
        let admissible = &episode.admissible;
        let parsed = parse_action(&output, self.config.require_reasoning).ok().map(|p| p.action);
        let proposed = parsed.clone().unwrap_or_else(|| output.trim().to_owned());
        let valid = parsed.as_deref().is_some_and(|a| is_admissible(a, admissible));
        let snap = !valid && self.config.invalid_actions == InvalidActionHandling::SnapToNearest;
        let action = match nearest_admissible(&proposed, admissible).filter(|_| snap) {
            Some(nearest) => nearest.clone(),
            None => Action::from(proposed),
        };
        Decision { output, action, valid, parsed: parsed.is_some(), snapped: snap && !admissible.is_empty() }
    }

    /// Sends `decision`'s action to `env` and records the step in `episode`.
    pub(crate) fn play<E: Environment>(
        &self,
        env: &mut E,
        episode: &mut Episode,
        decision: Decision,
    ) -> Result<(), EvalError> {
        let transition =
            env.step(decision.action.as_str()).map_err(|source| EvalError::Env { episode: episode.index(), source })?;
        let result = &mut episode.result;
        result.steps += 1;
        result.invalid_actions += usize::from(!decision.valid);
        result.unparseable_outputs += usize::from(!decision.parsed);
        result.snapped_actions += usize::from(decision.snapped);
        result.won = transition.won;
        result.score = transition.score;
        if self.config.record_transcripts {
            result.transcript.push(TranscriptStep {
                observation: episode.observation.clone(),
                output: decision.output,
                action: decision.action.clone(),
                valid: decision.valid,
                reward: transition.reward,
            });
        }
        let observation = std::mem::replace(&mut episode.observation, transition.observation);
        episode.history.push(HistoryEntry { observation, action: decision.action });
        episode.admissible = transition.admissible_actions.unwrap_or_default();
        episode.done = transition.done;
        Ok(())
    }
}

/// Whether `action` is admissible; anything is, where the environment lists no actions.
fn is_admissible(action: &str, admissible: &[Action]) -> bool {
    admissible.is_empty() || admissible.iter().any(|a| actions_match(a.as_str(), action))
}

/// The admissible action nearest to `action` in edit distance after normalisation (the first on ties); `None`
/// when there are none.
///
/// ```
/// use act_eval::episodes::nearest_admissible;
/// let admissible = ["go to fridge 1".into(), "go to sinkbasin 1".into()];
/// assert_eq!(nearest_admissible("Go to the fridge", &admissible).unwrap().as_str(), "go to fridge 1");
/// assert!(nearest_admissible("look", &[]).is_none());
/// ```
pub fn nearest_admissible<'a>(action: &str, admissible: &'a [Action]) -> Option<&'a Action> {
    let target: Vec<char> = normalize_action(action).chars().collect();
    admissible
        .iter()
        .enumerate()
        .min_by_key(|(i, a)| (edit_distance(&target, &normalize_action(a.as_str()).chars().collect::<Vec<_>>()), *i))
        .map(|(_, a)| a)
}

/// Levenshtein distance between two character sequences.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("abc"), &chars("abc")), 0);
    }

    #[test]
    fn snapping_prefers_the_first_on_ties() {
        let admissible: Vec<Action> = vec!["take a".into(), "take b".into()];
        assert_eq!(nearest_admissible("take c", &admissible).unwrap().as_str(), "take a");
        assert_eq!(nearest_admissible("TAKE  B", &admissible).unwrap().as_str(), "take b");
    }

    proptest::proptest! {
        #[test]
        fn snapping_returns_an_admissible_action(
            action in "[ a-zA-Z0-9]{0,20}",
            admissible in proptest::collection::vec("[a-z0-9 ]{1,12}", 1..8),
        ) {
            let admissible: Vec<Action> = admissible.into_iter().map(Action::from).collect();
            let nearest = nearest_admissible(&action, &admissible).unwrap();
            proptest::prop_assert!(admissible.contains(nearest));
            // An action that is admissible up to normalisation snaps to (an equivalent of) itself.
            let exact = nearest_admissible(&admissible[0].as_str().to_uppercase(), &admissible).unwrap();
            proptest::prop_assert!(actions_match(exact.as_str(), admissible[0].as_str()));
        }

        #[test]
        fn edit_distance_is_a_metric(a in "[a-c]{0,8}", b in "[a-c]{0,8}", c in "[a-c]{0,8}") {
            let (a, b, c) = (chars(&a), chars(&b), chars(&c));
            proptest::prop_assert_eq!(edit_distance(&a, &b), edit_distance(&b, &a));
            proptest::prop_assert_eq!(edit_distance(&a, &a), 0);
            proptest::prop_assert!(edit_distance(&a, &c) <= edit_distance(&a, &b) + edit_distance(&b, &c));
        }
    }
}
