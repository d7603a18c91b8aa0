//! The environment seam: every benchmark (native or bridged) is one implementation of [`Environment`].

use std::any::Any;

use serde::{Deserialize, Serialize};

use crate::error::EnvError;
use crate::trajectory::{Action, Observation, Outcome, Split, Step, Trajectory};

/// Which task to reset to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskRef {
    /// The `index`-th task of `split` (0-based).
    Index {
        /// The split.
        split: Split,
        /// The 0-based index within the split.
        index: usize,
    },
    /// A task by its identifier.
    Id(String),
}

impl TaskRef {
    /// The `index`-th task of `split`.
    pub fn index(split: Split, index: usize) -> Self {
        TaskRef::Index { split, index }
    }
}

/// What an environment says about the task of the current episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// A stable identifier (the same task gets the same id in every run).
    pub id: String,
    /// The task type, for per-type breakdowns.
    pub task_type: String,
    /// The split the task belongs to.
    pub split: Split,
    /// The task description the agent reads.
    pub description: String,
}

/// The start of an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reset {
    /// The first observation.
    pub observation: Observation,
    /// The task.
    pub task: TaskInfo,
    /// The admissible actions, where the environment lists them.
    pub admissible_actions: Option<Vec<Action>>,
}

/// The result of one [`Environment::step`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// The feedback text.
    pub observation: Observation,
    /// The reward for this step.
    pub reward: f64,
    /// Whether the episode is over (won, failed, or out of steps).
    pub done: bool,
    /// Whether the task is completed.
    pub won: bool,
    /// The environment's running score.
    pub score: f64,
    /// The admissible actions after the step, where the environment lists them.
    pub admissible_actions: Option<Vec<Action>>,
    /// Anything else the environment reports (say, whether the action was valid).
    #[serde(default)]
    pub info: serde_json::Map<String, serde_json::Value>,
}

/// A text environment an agent acts in.
///
/// Episodes are reproducible: the same [`TaskRef`] and seed give the same episode for the same actions.
pub trait Environment {
    /// A short name ("alfworld", "webshop", "sciworld").
    fn name(&self) -> &str;

    /// How many tasks `split` holds; [`EnvError::UnsupportedSplit`] when there is no such split.
    fn num_tasks(&self, split: Split) -> Result<usize, EnvError>;

    /// Starts an episode on `task`, with every random choice drawn from `seed`.
    fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<Reset, EnvError>;

    /// Takes one action. An action the environment does not accept is answered, not rejected with an error: the
    /// returned observation says what happened, as the real benchmarks do.
    fn step(&mut self, action: &str) -> Result<Transition, EnvError>;

    /// The admissible actions now, where the environment lists them; `None` where it does not.
    fn admissible_actions(&self) -> Option<Vec<Action>>;

    /// The current task, once reset.
    fn task(&self) -> Option<&TaskInfo>;

    /// The most steps an episode may take.
    fn step_budget(&self) -> usize;

    /// The expert's next action in the current state, for environments that have an expert (a handcoded planner,
    /// a gold path); `None` when there is none.
    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        Ok(None)
    }

    /// The state of the current episode, to come back to with [`Environment::restore`]; `None` where the
    /// environment cannot take one (an external engine, or no episode in progress). Taking one does not change
    /// the episode.
    ///
    /// Where there is none, the same state is reached by replay: reset on the task and seed, then the same actions
    /// (episodes are reproducible).
    fn snapshot(&self) -> Option<EnvSnapshot> {
        None
    }

    /// Returns to the state of `snapshot`, taken from an environment of the same kind: the next steps answer as
    /// they would have after the snapshot was taken. The environment's own settings stay its own.
    ///
    /// Fails with [`EnvError::Config`] when this environment takes no snapshots or `snapshot` comes from another
    /// kind of environment.
    fn restore(&mut self, snapshot: &EnvSnapshot) -> Result<(), EnvError> {
        let _ = snapshot;
        Err(EnvError::Config(format!("environment `{}` cannot restore a snapshot", self.name())))
    }
}

/// One moment of an episode, taken by [`Environment::snapshot`]: opaque outside the environment that took it.
pub struct EnvSnapshot {
    environment: &'static str,
    state: Box<dyn Any + Send + Sync>,
}

impl EnvSnapshot {
    /// Wraps an environment's episode state; `environment` names the kind that took it, for error messages.
    pub fn new<T: Any + Send + Sync>(environment: &'static str, state: T) -> Self {
        EnvSnapshot { environment, state: Box::new(state) }
    }

    /// The name given by the environment that took it.
    pub fn environment(&self) -> &'static str {
        self.environment
    }

    /// The state, when it is a `T`; otherwise [`EnvError::Config`] saying which environment took it.
    pub fn state<T: Any>(&self) -> Result<&T, EnvError> {
        self.state.downcast_ref::<T>().ok_or_else(|| {
            EnvError::Config(format!(
                "this snapshot was taken by a `{}` environment and does not fit this one",
                self.environment
            ))
        })
    }
}

impl std::fmt::Debug for EnvSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvSnapshot").field("environment", &self.environment).finish_non_exhaustive()
    }
}

/// Makes independent [`Environment`] instances, one per worker thread, for parallel rollouts.
///
/// Any `Fn() -> Result<E, EnvError>` closure that is `Send + Sync` is a factory.
pub trait EnvironmentFactory: Send + Sync {
    /// The environment type made.
    type Env: Environment + Send;

    /// A fresh, independent instance.
    fn make(&self) -> Result<Self::Env, EnvError>;
}

impl<F, E> EnvironmentFactory for F
where
    F: Fn() -> Result<E, EnvError> + Send + Sync,
    E: Environment + Send,
{
    type Env = E;

    fn make(&self) -> Result<E, EnvError> {
        self()
    }
}

/// Runs the environment's expert on `task` from `seed` and records the episode.
///
/// Fails with [`EnvError::Config`] when the environment has no expert. The episode stops when the environment says
/// `done` or the step budget is used up; a losing expert still yields its trajectory (check `outcome.won`).
pub fn collect_expert_trajectory<E: Environment + ?Sized>(
    env: &mut E,
    task: &TaskRef,
    seed: u64,
) -> Result<Trajectory, EnvError> {
    let reset = env.reset(task, seed)?;
    let mut observation = reset.observation;
    let mut admissible = reset.admissible_actions.unwrap_or_default();
    let mut steps = Vec::new();
    let mut outcome = Outcome { won: false, score: 0.0, steps_used: 0 };
    while steps.len() < env.step_budget() {
        let Some(action) = env.expert_action()? else {
            if steps.is_empty() {
                return Err(EnvError::Config(format!("environment `{}` has no expert", env.name())));
            }
            break;
        };
        let transition = env.step(action.as_str())?;
        steps.push(Step { observation, admissible_actions: admissible, action, reward: transition.reward });
        outcome = Outcome { won: transition.won, score: transition.score, steps_used: steps.len() };
        observation = transition.observation;
        admissible = transition.admissible_actions.unwrap_or_default();
        if transition.done {
            break;
        }
    }
    Ok(Trajectory {
        env: env.name().to_owned(),
        task_id: reset.task.id,
        task_type: reset.task.task_type,
        split: reset.task.split,
        task: reset.task.description,
        seed,
        steps,
        outcome,
    })
}
