//! [`RealAlfworld`]: the act-core [`Environment`] over the real ALFWorld engine, run in a Python worker.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use act_core::{Action, EnvError, Environment, EnvironmentFactory, Reset, Split, TaskInfo, TaskRef, Transition};
use serde_json::{Map, Value};

use super::games::{GameEntry, GameSet};
use super::worker::{RequestError, Worker, WorkerCommand, default_python};

/// Which command set the real engine plays with. The game file carries its grammar; the worker rewrites it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub enum BridgeGrammar {
    /// ALFWorld <= 0.3 (ReAct, AgentGym, most papers): `put O in/on R`, "You arrive at loc N.", no `help`.
    #[default]
    #[serde(rename = "0.3")]
    V03,
    /// ALFWorld 0.4: `move O to R`, "You arrive at R.", `help`.
    #[serde(rename = "0.4")]
    V04,
    /// Whatever the game file says.
    #[serde(rename = "as_is")]
    AsIs,
}

impl BridgeGrammar {
    /// The worker's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            BridgeGrammar::V03 => "0.3",
            BridgeGrammar::V04 => "0.4",
            BridgeGrammar::AsIs => "as_is",
        }
    }
}

impl From<crate::config::GrammarVersion> for BridgeGrammar {
    /// The same command set as the native simulator's grammar version.
    fn from(version: crate::config::GrammarVersion) -> Self {
        match version {
            crate::config::GrammarVersion::V03 => BridgeGrammar::V03,
            crate::config::GrammarVersion::V04 => BridgeGrammar::V04,
        }
    }
}

impl fmt::Display for BridgeGrammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for BridgeGrammar {
    type Err = EnvError;

    fn from_str(text: &str) -> Result<Self, EnvError> {
        match text.trim() {
            "0.3" | "v03" | "03" => Ok(BridgeGrammar::V03),
            "0.4" | "v04" | "04" => Ok(BridgeGrammar::V04),
            "as_is" | "as-is" => Ok(BridgeGrammar::AsIs),
            other => Err(EnvError::Config(format!("unknown ALFWorld grammar `{other}`; expected 0.3, 0.4 or as_is"))),
        }
    }
}

/// How [`RealAlfworld`] runs the engine. In JSON every field is optional; the timeouts are serde's `Duration`
/// (`{"secs": 60, "nanos": 0}`) and the grammar is `"0.3"`, `"0.4"` or `"as_is"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RealAlfworldConfig {
    /// The Python interpreter with `alfworld` and `textworld[pddl]` installed (default `$ACT_PYTHON`, else
    /// `python3`).
    pub python: String,
    /// The command set (default [`BridgeGrammar::V03`], what the papers used).
    pub grammar: BridgeGrammar,
    /// Whether to run ALFWorld's handcoded expert alongside (needed for [`Environment::expert_action`]; costs a
    /// little time per step). Default on.
    pub expert: bool,
    /// Steps per episode (default 50, as in the papers).
    pub step_budget: usize,
    /// Time allowed for each reset or step before the worker is killed (default 60 s).
    pub request_timeout: Duration,
    /// Time allowed for the worker to start and import the engine (default 120 s).
    pub startup_timeout: Duration,
}

impl Default for RealAlfworldConfig {
    fn default() -> Self {
        RealAlfworldConfig {
            python: default_python(),
            grammar: BridgeGrammar::default(),
            expert: true,
            step_budget: 50,
            request_timeout: Duration::from_secs(60),
            startup_timeout: Duration::from_secs(120),
        }
    }
}

impl RealAlfworldConfig {
    /// Uses this Python interpreter.
    #[must_use]
    pub fn with_python(mut self, python: impl Into<String>) -> Self {
        self.python = python.into();
        self
    }

    /// Plays with this command set.
    #[must_use]
    pub fn with_grammar(mut self, grammar: BridgeGrammar) -> Self {
        self.grammar = grammar;
        self
    }

    /// Turns the handcoded expert on or off.
    #[must_use]
    pub fn with_expert(mut self, expert: bool) -> Self {
        self.expert = expert;
        self
    }

    /// Sets the step budget.
    #[must_use]
    pub fn with_step_budget(mut self, step_budget: usize) -> Self {
        self.step_budget = step_budget;
        self
    }

    /// Sets the per-request time-out.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets the start-up time-out.
    #[must_use]
    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    fn validate(&self) -> Result<(), EnvError> {
        if self.python.trim().is_empty() {
            return Err(EnvError::Config("the Python interpreter path is empty".into()));
        }
        if self.step_budget == 0 {
            return Err(EnvError::Config("the step budget must be at least 1".into()));
        }
        if self.request_timeout.is_zero() || self.startup_timeout.is_zero() {
            return Err(EnvError::Config("time-outs must be positive".into()));
        }
        Ok(())
    }
}

/// What the engine reported about itself (see [`probe_engine`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    /// The Python version.
    pub python: String,
    /// The installed `alfworld` version.
    pub alfworld: Option<String>,
    /// The installed `textworld` version.
    pub textworld: Option<String>,
}

/// Starts a worker with `python`, checks that the ALFWorld engine imports, and stops it again. The error says
/// what is missing and how to install it; tests use this to decide whether to skip.
pub fn probe_engine(python: &str, timeout: Duration) -> Result<EngineInfo, EnvError> {
    let worker = Worker::spawn(&WorkerCommand { python: python.to_owned(), startup_timeout: timeout })?;
    let hello = worker.hello().clone();
    worker.shutdown();
    let text = |key: &str| hello.get(key).and_then(Value::as_str).map(str::to_owned);
    if hello.get("engine").and_then(Value::as_bool) != Some(true) {
        return Err(EnvError::Backend(text("engine_error").unwrap_or_else(|| "the engine does not import".into())));
    }
    Ok(EngineInfo {
        python: text("python").unwrap_or_default(),
        alfworld: text("alfworld"),
        textworld: text("textworld"),
    })
}

/// The episode in progress.
#[derive(Debug, Clone)]
struct Episode {
    task: TaskInfo,
    admissible: Vec<Action>,
    expert_action: Option<Action>,
    score: f64,
    steps: usize,
    over: bool,
}

/// The real ALFWorld (TextWorld PDDL engine) as an act-core [`Environment`].
///
/// Each instance owns one Python worker (started at the first reset, restarted after a crash or time-out, killed
/// on drop). Tasks come from a [`GameSet`]; the seed chooses ALFWorld's goal phrasing where the game leaves it
/// open and the handcoded expert's choices among equal objects.
///
/// ```no_run
/// use act_alfworld::bridge::{GameSet, RealAlfworld, RealAlfworldConfig};
/// use act_core::{Environment, Split, TaskRef};
///
/// let games = GameSet::from_env()?; // $ALFWORLD_DATA/json_2.1.1/{train,valid_seen,valid_unseen}
/// let mut env = RealAlfworld::new(RealAlfworldConfig::default(), games)?;
/// let reset = env.reset(&TaskRef::index(Split::EvalOutOfDistribution, 0), 7)?;
/// println!("{}", reset.observation);
/// let expert = env.expert_action()?.expect("the handcoded expert runs by default");
/// let transition = env.step(expert.as_str())?;
/// println!("{} (won: {})", transition.observation, transition.won);
/// # Ok::<(), act_core::EnvError>(())
/// ```
pub struct RealAlfworld {
    config: RealAlfworldConfig,
    games: Arc<GameSet>,
    worker: Option<Worker>,
    episode: Option<Episode>,
}

impl fmt::Debug for RealAlfworld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealAlfworld")
            .field("config", &self.config)
            .field("worker", &self.worker)
            .field("task", &self.episode.as_ref().map(|e| &e.task.id))
            .finish()
    }
}

impl RealAlfworld {
    /// An environment over `games`. The worker starts at the first reset (or [`RealAlfworld::start`]).
    pub fn new(config: RealAlfworldConfig, games: impl Into<Arc<GameSet>>) -> Result<Self, EnvError> {
        config.validate()?;
        let games = games.into();
        if games.is_empty() {
            return Err(EnvError::Config("the game set is empty".into()));
        }
        Ok(RealAlfworld { config, games, worker: None, episode: None })
    }

    /// The configuration.
    pub fn config(&self) -> &RealAlfworldConfig {
        &self.config
    }

    /// The games.
    pub fn games(&self) -> &GameSet {
        &self.games
    }

    /// Starts the worker now (if it is not running) and checks that the engine imports.
    pub fn start(&mut self) -> Result<&Worker, EnvError> {
        if self.worker.is_none() {
            let worker = Worker::spawn(&WorkerCommand {
                python: self.config.python.clone(),
                startup_timeout: self.config.startup_timeout,
            })?;
            if worker.hello().get("engine").and_then(Value::as_bool) != Some(true) {
                let message = worker.hello().get("engine_error").and_then(Value::as_str).unwrap_or("unknown error");
                return Err(EnvError::Backend(format!(
                    "the ALFWorld engine is not usable with `{}`: {message}",
                    self.config.python
                )));
            }
            self.worker = Some(worker);
        }
        self.worker.as_ref().ok_or_else(|| EnvError::Backend("the worker did not start".into()))
    }

    /// The worker's process id, while one runs.
    pub fn worker_pid(&self) -> Option<u32> {
        self.worker.as_ref().map(Worker::pid)
    }

    /// Changes the per-request time-out from the next request on.
    pub fn set_request_timeout(&mut self, timeout: Duration) {
        self.config.request_timeout = timeout;
    }

    /// Sends a request; a fatal failure drops the worker and ends the episode.
    fn call(&mut self, cmd: &str, fields: Map<String, Value>) -> Result<Map<String, Value>, EnvError> {
        self.start()?;
        let timeout = self.config.request_timeout;
        let worker = self.worker.as_mut().ok_or_else(|| EnvError::Backend("the worker did not start".into()))?;
        match worker.request(cmd, fields, timeout) {
            Ok(reply) => Ok(reply),
            Err(RequestError::Reply { kind, message }) => Err(match kind.as_str() {
                "not_reset" => EnvError::NotReset,
                "bad_game" | "no_expert" | "bad_request" => EnvError::Config(message),
                _ => EnvError::Backend(format!("ALFWorld engine error ({kind}): {message}")),
            }),
            Err(RequestError::Fatal(error)) => {
                self.worker = None;
                self.episode = None;
                Err(error)
            }
        }
    }

    fn resolve(&self, task: &TaskRef) -> Result<(Split, GameEntry), EnvError> {
        match task {
            TaskRef::Index { split, index } => Ok((*split, self.games.get(*split, *index)?.clone())),
            TaskRef::Id(id) => self.games.find(id).map(|(split, game)| (split, game.clone())),
        }
    }
}

fn string_field(reply: &Map<String, Value>, key: &str) -> Result<String, EnvError> {
    reply
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| EnvError::Backend(format!("the ALFWorld worker's reply lacks the text field `{key}`")))
}

fn actions_field(reply: &Map<String, Value>, key: &str) -> Result<Vec<Action>, EnvError> {
    let list = reply
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| EnvError::Backend(format!("the ALFWorld worker's reply lacks the list `{key}`")))?;
    list.iter()
        .map(|item| {
            item.as_str()
                .map(Action::from)
                .ok_or_else(|| EnvError::Backend(format!("`{key}` holds a non-text entry: {item}")))
        })
        .collect()
}

fn optional_action(reply: &Map<String, Value>, key: &str) -> Option<Action> {
    reply.get(key).and_then(Value::as_str).map(Action::from)
}

impl Environment for RealAlfworld {
    fn name(&self) -> &str {
        "alfworld"
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        self.games.len(split)
    }

    fn reset(&mut self, task: &TaskRef, seed: u64) -> Result<Reset, EnvError> {
        let (split, game) = self.resolve(task)?;
        self.episode = None;
        let mut fields = Map::new();
        fields.insert("game".into(), Value::from(game.path.to_string_lossy().into_owned()));
        fields.insert("seed".into(), Value::from(seed));
        fields.insert("grammar".into(), Value::from(self.config.grammar.as_str()));
        fields.insert("expert".into(), Value::from(self.config.expert));
        let reply = self.call("reset", fields)?;
        let observation = string_field(&reply, "observation")?;
        let admissible = actions_field(&reply, "admissible_commands")?;
        let task = TaskInfo {
            id: game.id.clone(),
            task_type: string_field(&reply, "task_type")?,
            split,
            description: string_field(&reply, "task")?,
        };
        self.episode = Some(Episode {
            task: task.clone(),
            admissible: admissible.clone(),
            expert_action: optional_action(&reply, "expert_action"),
            score: 0.0,
            steps: 0,
            over: false,
        });
        Ok(Reset { observation: observation.into(), task, admissible_actions: Some(admissible) })
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        match &self.episode {
            Some(episode) if !episode.over => {}
            _ => return Err(EnvError::NotReset),
        }
        let mut fields = Map::new();
        fields.insert("action".into(), Value::from(action));
        let reply = self.call("step", fields)?;
        let observation = string_field(&reply, "observation")?;
        let admissible = actions_field(&reply, "admissible_commands")?;
        let won = reply.get("won").and_then(Value::as_bool).unwrap_or(false);
        let engine_done = reply.get("done").and_then(Value::as_bool).unwrap_or(false);
        let score = reply.get("score").and_then(Value::as_f64).unwrap_or(0.0);
        let budget = self.config.step_budget;
        let episode = self.episode.as_mut().ok_or(EnvError::NotReset)?;
        let valid = episode.admissible.iter().any(|a| a.as_str() == action.trim());
        episode.steps += 1;
        let reward = score - episode.score;
        episode.score = score;
        episode.over = engine_done || won || episode.steps >= budget;
        episode.admissible = admissible.clone();
        episode.expert_action = optional_action(&reply, "expert_action");
        let mut info = Map::new();
        info.insert("valid_action".into(), Value::from(valid));
        if let Some(failed) = reply.get("expert_failed").filter(|v| !v.is_null()) {
            info.insert("expert_failed".into(), failed.clone());
        }
        Ok(Transition {
            observation: observation.into(),
            reward,
            done: episode.over,
            won,
            score,
            admissible_actions: Some(admissible),
            info,
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        self.episode.as_ref().map(|episode| episode.admissible.clone())
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.episode.as_ref().map(|episode| &episode.task)
    }

    fn step_budget(&self) -> usize {
        self.config.step_budget
    }

    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        if !self.config.expert {
            return Ok(None);
        }
        match &self.episode {
            Some(episode) if !episode.over => Ok(episode.expert_action.clone()),
            _ => Err(EnvError::NotReset),
        }
    }
}

/// Makes [`RealAlfworld`] instances over one shared [`GameSet`], one worker process each.
#[derive(Debug, Clone)]
pub struct RealAlfworldFactory {
    config: RealAlfworldConfig,
    games: Arc<GameSet>,
}

impl RealAlfworldFactory {
    /// A factory for this configuration and these games.
    pub fn new(config: RealAlfworldConfig, games: impl Into<Arc<GameSet>>) -> Result<Self, EnvError> {
        config.validate()?;
        let games = games.into();
        if games.is_empty() {
            return Err(EnvError::Config("the game set is empty".into()));
        }
        Ok(RealAlfworldFactory { config, games })
    }
}

impl EnvironmentFactory for RealAlfworldFactory {
    type Env = RealAlfworld;

    fn make(&self) -> Result<RealAlfworld, EnvError> {
        RealAlfworld::new(self.config.clone(), Arc::clone(&self.games))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_names_round_trip() {
        for grammar in [BridgeGrammar::V03, BridgeGrammar::V04, BridgeGrammar::AsIs] {
            assert_eq!(grammar.as_str().parse::<BridgeGrammar>().unwrap(), grammar);
        }
        assert!(matches!("0.5".parse::<BridgeGrammar>(), Err(EnvError::Config(_))));
        assert_eq!(BridgeGrammar::from(crate::config::GrammarVersion::V04), BridgeGrammar::V04);
        assert_eq!(BridgeGrammar::from(crate::config::GrammarVersion::V03), BridgeGrammar::V03);
    }

    #[test]
    fn config_reads_partial_json_with_the_grammar_by_its_worker_name() {
        for grammar in [BridgeGrammar::V03, BridgeGrammar::V04, BridgeGrammar::AsIs] {
            let json = serde_json::to_string(&grammar).unwrap();
            assert_eq!(json, format!("\"{}\"", grammar.as_str()));
        }
        let config: RealAlfworldConfig =
            serde_json::from_str(r#"{"grammar": "0.4", "request_timeout": {"secs": 5, "nanos": 0}}"#).unwrap();
        assert_eq!(
            config,
            RealAlfworldConfig::default().with_grammar(BridgeGrammar::V04).with_request_timeout(Duration::from_secs(5))
        );
        let round_trip: RealAlfworldConfig = serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
        assert_eq!(round_trip, config);
    }

    #[test]
    fn invalid_configs_and_empty_game_sets_are_rejected() {
        let games =
            GameSet::new().with_split(Split::Train, vec![GameEntry { id: "g".into(), path: "/nonexistent/g".into() }]);
        let zero_budget = RealAlfworldConfig::default().with_step_budget(0);
        assert!(matches!(RealAlfworld::new(zero_budget, games.clone()), Err(EnvError::Config(_))));
        let no_python = RealAlfworldConfig::default().with_python(" ");
        assert!(matches!(RealAlfworldFactory::new(no_python, games.clone()), Err(EnvError::Config(_))));
        assert!(matches!(RealAlfworld::new(RealAlfworldConfig::default(), GameSet::new()), Err(EnvError::Config(_))));
        let env = RealAlfworld::new(RealAlfworldConfig::default(), games).unwrap();
        assert_eq!(env.num_tasks(Split::Train).unwrap(), 1);
        assert!(matches!(env.num_tasks(Split::Test), Err(EnvError::UnsupportedSplit(Split::Test))));
    }

    #[test]
    fn stepping_before_reset_is_not_reset_and_starts_no_worker() {
        let games =
            GameSet::new().with_split(Split::Train, vec![GameEntry { id: "g".into(), path: "/nonexistent/g".into() }]);
        let mut env = RealAlfworld::new(RealAlfworldConfig::default(), games).unwrap();
        assert!(matches!(env.step("look"), Err(EnvError::NotReset)));
        assert!(matches!(env.expert_action(), Err(EnvError::NotReset)));
        assert!(env.worker_pid().is_none());
        assert!(env.admissible_actions().is_none());
        assert!(matches!(env.reset(&TaskRef::index(Split::Train, 5), 0), Err(EnvError::UnknownTask(_))));
        assert!(env.worker_pid().is_none());
    }
}
