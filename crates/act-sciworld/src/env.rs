//! [`SciWorldEnv`]: the act-core [`Environment`] over one simulator JVM, restarted when it dies.

use std::path::PathBuf;

use act_core::{Action, EnvError, Environment, EnvironmentFactory, Reset, Split, TaskInfo, TaskRef, Transition};
use serde_json::{Map, Value};

use crate::error::SciWorldError;
use crate::locate::JarLocation;
use crate::process::JvmOptions;
use crate::simulator::{Simulator, StepResult};
use crate::tasks::{TaskOrder, is_electrical, order_members, parse_task_id, split_variations, task_id};

/// The environment's name in trajectories and reports.
pub const ENV_NAME: &str = "sciworld";

/// The action the Python wrapper's `reset` takes to produce the first observation (a free action).
pub const FIRST_ACTION: &str = "look around";

/// How to run ScienceWorld. Plain data (serde, every field optional in JSON) with `with_*` builders.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SciWorldConfig {
    /// The jar; `None` searches `$SCIENCEWORLD_JAR`, then the installed Python package.
    pub jar: Option<PathBuf>,
    /// How to run the JVM.
    pub jvm: JvmOptions,
    /// Comma-separated simplifications (`teleportAction`, `openDoors`, ..., or `easy`); empty for none.
    pub simplifications: String,
    /// The most steps an episode may take, counting every `step` call (the Python wrapper counts
    /// the simulator's moves, which skip free actions such as `look around`). The default is the
    /// wrapper's 100; some gold paths are longer, so gold replays raise it to the gold length.
    pub step_limit: usize,
    /// Read the valid action-object combinations after every reset and step (costs 0.05-0.3 s
    /// per step in the jar, as in the Python wrapper's `step`).
    pub admissible_actions: bool,
    /// Plan the gold action sequence at every reset (makes [`Environment::expert_action`] work
    /// at every step; it works at step 0 without it).
    pub gold_path: bool,
    /// Restrict [`TaskRef::Index`] enumeration to these task names; `None` for all 30.
    pub tasks: Option<Vec<String>>,
    /// How [`TaskRef::Index`] numbers a split's (task, variation) pairs.
    pub order: TaskOrder,
}

impl Default for SciWorldConfig {
    fn default() -> Self {
        Self {
            jar: None,
            jvm: JvmOptions::default(),
            simplifications: String::new(),
            step_limit: 100,
            admissible_actions: true,
            gold_path: false,
            tasks: None,
            order: TaskOrder::TaskMajor,
        }
    }
}

impl SciWorldConfig {
    /// Checks what can be checked without the simulator: a positive step limit and, when tasks are listed, at
    /// least one.
    pub fn validate(&self) -> Result<(), SciWorldError> {
        if self.step_limit == 0 {
            return Err(SciWorldError::InvalidRequest("step_limit is 0".into()));
        }
        if self.tasks.as_ref().is_some_and(Vec::is_empty) {
            return Err(SciWorldError::InvalidRequest("tasks is an empty list (None means all 30)".into()));
        }
        Ok(())
    }

    /// Uses this jar.
    #[must_use]
    pub fn with_jar(mut self, jar: impl Into<PathBuf>) -> Self {
        self.jar = Some(jar.into());
        self
    }

    /// Uses these JVM options.
    #[must_use]
    pub fn with_jvm(mut self, jvm: JvmOptions) -> Self {
        self.jvm = jvm;
        self
    }

    /// Applies these simplifications (comma-separated, as the Python wrapper takes them).
    #[must_use]
    pub fn with_simplifications(mut self, simplifications: impl Into<String>) -> Self {
        self.simplifications = simplifications.into();
        self
    }

    /// Sets the step limit.
    #[must_use]
    pub fn with_step_limit(mut self, step_limit: usize) -> Self {
        self.step_limit = step_limit;
        self
    }

    /// Turns reading the admissible actions on or off.
    #[must_use]
    pub fn with_admissible_actions(mut self, on: bool) -> Self {
        self.admissible_actions = on;
        self
    }

    /// Turns gold-path planning at every reset on or off.
    #[must_use]
    pub fn with_gold_path(mut self, on: bool) -> Self {
        self.gold_path = on;
        self
    }

    /// Numbers a split's (task, variation) pairs in this order.
    #[must_use]
    pub fn with_order(mut self, order: TaskOrder) -> Self {
        self.order = order;
        self
    }

    /// Restricts index-based task selection to these task names.
    #[must_use]
    pub fn with_tasks<S: Into<String>>(mut self, tasks: impl IntoIterator<Item = S>) -> Self {
        self.tasks = Some(tasks.into_iter().map(Into::into).collect());
        self
    }
}

/// Every task's variation count, read once from the jar and kept across JVM restarts.
#[derive(Debug, Clone)]
struct Catalog {
    /// (task name, number of variations), in the jar's order, filtered by the config.
    tasks: Vec<(String, usize)>,
    /// Every task name the jar knows.
    all_names: Vec<String>,
    /// Simplification names the jar accepts, plus `easy`.
    simplifications: Vec<String>,
}

impl Catalog {
    fn read(sim: &mut Simulator, only: Option<&[String]>) -> Result<Self, SciWorldError> {
        let mut all_names = sim.task_names()?;
        // The jar lists tasks alphabetically; the paper's order (topic by topic) reads better.
        all_names.sort_by_key(|name| crate::tasks::TASKS.iter().position(|t| t.name == name).unwrap_or(usize::MAX));
        if let Some(only) = only
            && let Some(unknown) = only.iter().find(|t| !all_names.contains(t))
        {
            return Err(SciWorldError::InvalidRequest(format!(
                "unknown task {unknown:?}; the simulator knows: {}",
                all_names.join(", ")
            )));
        }
        let mut tasks = Vec::new();
        for name in &all_names {
            if only.is_some_and(|only| !only.contains(name)) {
                continue;
            }
            let n = sim.max_variations(name)?;
            tasks.push((name.clone(), usize::try_from(n).unwrap_or(0)));
        }
        let mut simplifications = vec!["easy".to_string()];
        simplifications.extend(sim.possible_simplifications()?);
        Ok(Self { tasks, all_names, simplifications })
    }

    fn split_members(&self, split: Split, order: TaskOrder) -> Option<Vec<(String, usize)>> {
        let per_task: Option<Vec<(String, Vec<usize>)>> =
            self.tasks.iter().map(|(name, n)| Some((name.clone(), split_variations(*n, split)?))).collect();
        Some(order_members(&per_task?, order))
    }
}

/// The episode in progress.
#[derive(Debug, Clone)]
struct Episode {
    info: TaskInfo,
    task: String,
    variation: usize,
    last_score: i64,
    steps: usize,
    moves: i64,
    completed: bool,
    done: bool,
    gold: Option<Vec<String>>,
    on_gold_path: bool,
    admissible: Option<Vec<Action>>,
}

/// ScienceWorld through its official jar, as an act-core [`Environment`].
///
/// Each instance owns one JVM; instances are independent and can run in parallel threads.
/// When the JVM dies, the call in flight fails with [`EnvError::Backend`] naming the cause, the
/// episode ends, and the next [`Environment::reset`] starts a fresh JVM.
#[derive(Debug)]
pub struct SciWorldEnv {
    config: SciWorldConfig,
    location: JarLocation,
    sim: Option<Simulator>,
    catalog: Catalog,
    episode: Option<Episode>,
    restarts: usize,
}

impl SciWorldEnv {
    /// Finds the jar, starts the JVM and reads the task catalogue, after [`SciWorldConfig::validate`]; the task
    /// names and simplifications are then checked against what the simulator knows.
    pub fn new(config: SciWorldConfig) -> Result<Self, SciWorldError> {
        config.validate()?;
        let location = JarLocation::find(config.jar.as_deref())?;
        let mut sim = Simulator::start(&location, &config.jvm)?;
        let catalog = Catalog::read(&mut sim, config.tasks.as_deref())?;
        for s in config.simplifications.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if !catalog.simplifications.iter().any(|known| known == s) {
                return Err(SciWorldError::InvalidRequest(format!(
                    "unknown simplification {s:?}; supported: {}",
                    catalog.simplifications.join(", ")
                )));
            }
        }
        Ok(Self { config, location, sim: Some(sim), catalog, episode: None, restarts: 0 })
    }

    /// The configuration.
    pub fn config(&self) -> &SciWorldConfig {
        &self.config
    }

    /// Where the jar was found.
    pub fn jar_location(&self) -> &JarLocation {
        &self.location
    }

    /// Changes the step limit (takes effect at once).
    pub fn set_step_limit(&mut self, step_limit: usize) {
        self.config.step_limit = step_limit;
    }

    /// Every task name the simulator knows, in the paper's order (that of [`crate::tasks::TASKS`]).
    pub fn task_names(&self) -> &[String] {
        &self.catalog.all_names
    }

    /// The number of variations of `task`.
    pub fn max_variations(&self, task: &str) -> Option<usize> {
        self.catalog.tasks.iter().find(|(name, _)| name == task).map(|(_, n)| *n)
    }

    /// The variations of `task` in `split` (`None` for an unknown task or an unsupported split).
    pub fn variations(&self, task: &str, split: Split) -> Option<Vec<usize>> {
        split_variations(self.max_variations(task)?, split)
    }

    /// The (task, variation) pairs of `split`, in the order [`TaskRef::Index`] numbers them.
    pub fn split_members(&self, split: Split) -> Result<Vec<(String, usize)>, EnvError> {
        self.catalog.split_members(split, self.config.order).ok_or(EnvError::UnsupportedSplit(split))
    }

    /// How many times the JVM was restarted after dying.
    pub fn restarts(&self) -> usize {
        self.restarts
    }

    /// The running JVM's process id (`None` after it died and before the next reset).
    pub fn jvm_pid(&mut self) -> Option<u32> {
        self.sim.as_mut().map(|s| s.gateway().pid())
    }

    /// The task name and variation of the current episode.
    pub fn current_variation(&self) -> Option<(&str, usize)> {
        self.episode.as_ref().map(|e| (e.task.as_str(), e.variation))
    }

    /// The current score, 0..=100 (-100 after a failure).
    pub fn score(&self) -> Option<i64> {
        self.episode.as_ref().map(|e| e.last_score)
    }

    /// Whether the simulator marks the task finished.
    pub fn completed(&self) -> Option<bool> {
        self.episode.as_ref().map(|e| e.completed)
    }

    /// Moves counted by the simulator (free actions do not count).
    pub fn moves(&self) -> Option<i64> {
        self.episode.as_ref().map(|e| e.moves)
    }

    /// The gold action sequence of the current episode, when planned.
    pub fn gold_actions(&self) -> Option<&[String]> {
        self.episode.as_ref()?.gold.as_deref()
    }

    /// Starts an episode on `task` (a simulator task name or paper id such as "4-4") and
    /// `variation`, planning the gold path when `gold` is set (or the config asks for it).
    pub fn reset_variation(&mut self, task: &str, variation: usize, gold: bool) -> Result<Reset, EnvError> {
        let task = crate::tasks::find_task(task).map_or(task, |t| t.name).to_string();
        let Some(n) = self.catalog.all_names.contains(&task).then(|| self.max_variations_any(&task)) else {
            return Err(EnvError::UnknownTask(format!(
                "task {task:?}; the simulator knows: {}",
                self.catalog.all_names.join(", ")
            )));
        };
        let n = n?;
        if variation >= n {
            return Err(EnvError::UnknownTask(format!(
                "variation {variation} of {task}: it has {n} variations (0..{n})"
            )));
        }
        if is_electrical(&task) && self.config.simplifications.contains("noElectricalAction") {
            return Err(EnvError::Config(format!(
                "task {task} needs electrical actions, but the simplifications include noElectricalAction"
            )));
        }
        let split = Self::split_of(variation, n);
        self.episode = None;
        let gold = gold || self.config.gold_path;
        let simplifications = self.config.simplifications.clone();
        let admissible = self.config.admissible_actions;
        let variation_i32 = i32::try_from(variation)
            .map_err(|_| EnvError::UnknownTask(format!("variation {variation} is out of range")))?;
        let sim = self.simulator()?;
        let (first, description, gold_actions, valid) = with_sim(sim, |sim| {
            sim.load(&task, variation_i32, &simplifications, gold)?;
            let gold_actions = if gold { Some(sim.gold_action_sequence()?) } else { None };
            let first = sim.step(FIRST_ACTION)?;
            let description = sim.task_description()?;
            let valid = if admissible { Some(sim.valid_actions()?) } else { None };
            Ok((first, description, gold_actions, valid))
        })
        .map_err(|e| self.fail(e))?;
        let info = TaskInfo { id: task_id(&task, variation), task_type: task.clone(), split, description };
        let admissible = valid.map(|v| v.into_iter().map(Action::from).collect::<Vec<_>>());
        self.episode = Some(Episode {
            info: info.clone(),
            task,
            variation,
            last_score: first.score,
            steps: 0,
            moves: first.moves,
            completed: false,
            done: false,
            gold: gold_actions,
            on_gold_path: true,
            admissible: admissible.clone(),
        });
        Ok(Reset { observation: first.observation.into(), task: info, admissible_actions: admissible })
    }

    /// The room description now (a free action: no move is spent).
    pub fn look(&mut self) -> Result<String, EnvError> {
        self.free(|sim| sim.look())
    }

    /// The inventory now (a free action).
    pub fn inventory(&mut self) -> Result<String, EnvError> {
        self.free(|sim| sim.inventory())
    }

    /// The task description as the simulator states it.
    pub fn task_description(&mut self) -> Result<String, EnvError> {
        self.free(|sim| sim.task_description())
    }

    /// The simulator's goal-progress report.
    pub fn goal_progress(&mut self) -> Result<String, EnvError> {
        self.free(|sim| sim.goal_progress())
    }

    /// The valid action-object combinations now, read fresh from the jar.
    pub fn valid_actions(&mut self) -> Result<Vec<Action>, EnvError> {
        self.free(|sim| sim.valid_actions()).map(|v| v.into_iter().map(Action::from).collect())
    }

    /// The jar's JSON run history of the current episode.
    pub fn run_history(&mut self) -> Result<Value, EnvError> {
        self.free(|sim| sim.run_history())
    }

    fn free<T>(&mut self, call: impl FnOnce(&mut Simulator) -> Result<T, SciWorldError>) -> Result<T, EnvError> {
        if self.episode.is_none() {
            return Err(EnvError::NotReset);
        }
        let sim = self.sim.as_mut().ok_or(EnvError::NotReset)?;
        with_sim(sim, call).map_err(|e| self.fail(e))
    }

    fn max_variations_any(&mut self, task: &str) -> Result<usize, EnvError> {
        if let Some(n) = self.max_variations(task) {
            return Ok(n);
        }
        let sim = self.simulator()?;
        let n = with_sim(sim, |sim| sim.max_variations(task)).map_err(|e| self.fail(e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    fn split_of(variation: usize, n: usize) -> Split {
        [Split::Train, Split::Dev, Split::Test]
            .into_iter()
            .find(|&s| split_variations(n, s).is_some_and(|v| v.contains(&variation)))
            // Variations the jar puts in no split (see `variation_splits`) are reported as train.
            .unwrap_or(Split::Train)
    }

    /// The live simulator, restarting the JVM if it died.
    fn simulator(&mut self) -> Result<&mut Simulator, EnvError> {
        let alive = match self.sim.as_mut() {
            Some(sim) => sim.gateway().is_alive(),
            None => false,
        };
        if !alive {
            self.sim = None;
            let sim = Simulator::start(&self.location, &self.config.jvm).map_err(EnvError::from)?;
            self.restarts += 1;
            tracing::warn!(restarts = self.restarts, "ScienceWorld JVM restarted");
            self.sim = Some(sim);
        }
        self.sim.as_mut().ok_or(EnvError::NotReset)
    }

    /// Records a failure: a dead JVM is dropped (the next reset restarts it) and ends the episode.
    fn fail(&mut self, err: SciWorldError) -> EnvError {
        if matches!(err, SciWorldError::JvmDied { .. }) {
            self.sim = None;
            self.episode = None;
        }
        EnvError::from(err)
    }

    fn resolve(&self, task: &TaskRef) -> Result<(String, usize), EnvError> {
        match task {
            TaskRef::Index { split, index } => {
                let members = self.split_members(*split)?;
                let count = members.len();
                members.into_iter().nth(*index).ok_or_else(|| {
                    EnvError::UnknownTask(format!("index {index} of split {split}: it holds {count} tasks"))
                })
            }
            TaskRef::Id(id) => {
                let (name, variation) = parse_task_id(id).ok_or_else(|| {
                    EnvError::UnknownTask(format!("{id:?} (expected <task name>-var<variation>, e.g. boil-var3)"))
                })?;
                Ok((name.to_string(), variation))
            }
        }
    }
}

/// Runs several simulator calls as one unit, so that any failure maps to one error.
fn with_sim<T>(
    sim: &mut Simulator,
    call: impl FnOnce(&mut Simulator) -> Result<T, SciWorldError>,
) -> Result<T, SciWorldError> {
    call(sim)
}

impl From<SciWorldError> for EnvError {
    fn from(err: SciWorldError) -> Self {
        match err {
            SciWorldError::JarNotFound(_) | SciWorldError::JavaNotStarted { .. } | SciWorldError::InvalidRequest(_) => {
                EnvError::Config(err.to_string())
            }
            SciWorldError::Simulator(message) if message.contains("Unknown task") || message.contains("variation") => {
                EnvError::UnknownTask(message)
            }
            other => EnvError::Engine { context: "ScienceWorld".into(), source: Box::new(other) },
        }
    }
}

impl Environment for SciWorldEnv {
    fn name(&self) -> &str {
        ENV_NAME
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        Ok(self.split_members(split)?.len())
    }

    /// ScienceWorld variations are fixed worlds: `seed` only labels the episode.
    fn reset(&mut self, task: &TaskRef, _seed: u64) -> Result<Reset, EnvError> {
        let (name, variation) = self.resolve(task)?;
        self.reset_variation(&name, variation, false)
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        let Some(episode) = self.episode.as_ref() else {
            return Err(EnvError::NotReset);
        };
        if episode.done {
            return Err(EnvError::NotReset);
        }
        let admissible = self.config.admissible_actions;
        let sim = self.sim.as_mut().ok_or(EnvError::NotReset)?;
        let (result, valid): (StepResult, Option<Vec<String>>) = with_sim(sim, |sim| {
            let result = sim.step(action)?;
            let valid = if admissible { Some(sim.valid_actions()?) } else { None };
            Ok((result, valid))
        })
        .map_err(|e| self.fail(e))?;
        let step_limit = self.config.step_limit;
        let Some(episode) = self.episode.as_mut() else {
            return Err(EnvError::NotReset);
        };
        let reward = result.score - episode.last_score;
        episode.last_score = result.score;
        episode.moves = result.moves;
        episode.completed = result.completed;
        if let Some(gold) = &episode.gold {
            let expected = gold.get(episode.steps).map(|g| g.trim());
            episode.on_gold_path &= expected == Some(action.trim());
        }
        episode.steps += 1;
        let won = result.score >= 100;
        let failed = result.score < 0;
        let out_of_steps = episode.steps >= step_limit;
        episode.done = result.completed || failed || out_of_steps;
        episode.admissible = valid.map(|v| v.into_iter().map(Action::from).collect());
        let mut info = Map::new();
        info.insert("moves".into(), Value::from(result.moves));
        info.insert("completed".into(), Value::from(result.completed));
        info.insert("failed".into(), Value::from(failed));
        info.insert("truncated".into(), Value::from(out_of_steps && !result.completed && !failed));
        info.insert("task_name".into(), Value::from(episode.task.clone()));
        info.insert("variation".into(), Value::from(episode.variation));
        info.insert("simplifications".into(), Value::from(self.config.simplifications.clone()));
        Ok(Transition {
            observation: result.observation.into(),
            reward: reward as f64,
            done: episode.done,
            won,
            score: result.score as f64,
            admissible_actions: episode.admissible.clone(),
            info,
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        self.episode.as_ref()?.admissible.clone()
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.episode.as_ref().map(|e| &e.info)
    }

    fn step_budget(&self) -> usize {
        self.config.step_limit
    }

    /// The gold path's next action while the episode has followed it; `None` once it left the
    /// path or the path is used up. At step 0 the gold path is planned on demand.
    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        let Some(episode) = self.episode.as_ref() else {
            return Err(EnvError::NotReset);
        };
        if episode.gold.is_none() {
            if episode.steps > 0 {
                return Err(EnvError::Config(
                    "the gold path was not planned for this episode: call expert_action before the first step, \
                     or enable SciWorldConfig::gold_path"
                        .into(),
                ));
            }
            let (task, variation) = (episode.task.clone(), episode.variation);
            self.reset_variation(&task, variation, true)?;
        }
        let Some(episode) = self.episode.as_ref() else {
            return Err(EnvError::NotReset);
        };
        if !episode.on_gold_path {
            return Ok(None);
        }
        Ok(episode.gold.as_ref().and_then(|g| g.get(episode.steps)).map(|a| Action::from(a.as_str())))
    }
}

/// Makes independent [`SciWorldEnv`]s (one JVM each) from one configuration.
#[derive(Debug, Clone, Default)]
pub struct SciWorldFactory {
    /// The configuration every instance gets.
    pub config: SciWorldConfig,
}

impl SciWorldFactory {
    /// A factory for `config`.
    pub fn new(config: SciWorldConfig) -> Self {
        Self { config }
    }
}

impl EnvironmentFactory for SciWorldFactory {
    type Env = SciWorldEnv;

    fn make(&self) -> Result<SciWorldEnv, EnvError> {
        SciWorldEnv::new(self.config.clone()).map_err(EnvError::from)
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;

    #[test]
    fn config_reads_partial_json_and_checks_what_it_can_without_the_jar() {
        let config: SciWorldConfig = serde_json::from_str(r#"{"step_limit": 30, "order": "round-robin"}"#).unwrap();
        assert_eq!(config, SciWorldConfig::default().with_step_limit(30).with_order(TaskOrder::RoundRobin));
        config.validate().unwrap();
        assert!(SciWorldConfig::default().with_step_limit(0).validate().is_err());
        let no_tasks = SciWorldConfig { tasks: Some(Vec::new()), ..SciWorldConfig::default() };
        assert!(no_tasks.validate().unwrap_err().to_string().contains("tasks is an empty list"));
        // Refused before any JVM starts, so this holds without Java or the jar.
        assert!(SciWorldEnv::new(no_tasks).is_err());
    }
}
