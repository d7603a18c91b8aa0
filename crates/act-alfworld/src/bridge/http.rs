//! [`AgentGymClient`]: the act-core [`Environment`] over an AgentGym-style ALFWorld HTTP server.
//!
//! The API (AgentGym's `agentenv-alfworld`): `POST /create` -> `{id}`; `POST /reset {id, game, world_type}` ->
//! `{observation, available_actions, task_type}`; `POST /step {id, action}` -> `{observation, reward,
//! available_actions, done}`. Failures come back as `{"error": "..."}`, often with status 200. Games are indexed by
//! one flat integer; [`AgentGymConfig`] maps act-core splits onto ranges of it. The server takes no seed, so the
//! reset seed is not used.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use act_core::{Action, EnvError, Environment, Reset, Split, TaskInfo, TaskRef, Transition};
use serde_json::{Map, Value, json};

/// The six ALFWorld task types, as they prefix AgentGym's `task_type` paths.
const TASK_TYPES: [&str; 6] = [
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
];

/// How [`AgentGymClient`] talks to the server. There is no `Default`: the server's URL is required
/// ([`AgentGymConfig::new`] fills in the rest; in JSON every field is given, `timeout` as serde writes a `Duration`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentGymConfig {
    /// The server's base URL, such as `http://127.0.0.1:36001`.
    pub base_url: String,
    /// Which game indices form each split.
    pub splits: BTreeMap<Split, Range<usize>>,
    /// AgentGym's `world_type` (default `Text`).
    pub world_type: String,
    /// Steps per episode (default 50).
    pub step_budget: usize,
    /// Time allowed for each HTTP call (default 120 s: a reset loads a game).
    pub timeout: Duration,
}

impl AgentGymConfig {
    /// A configuration for the server at `base_url`, with no split yet (add them with [`AgentGymConfig::with_split`]).
    pub fn new(base_url: impl Into<String>) -> Self {
        AgentGymConfig {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            splits: BTreeMap::new(),
            world_type: "Text".to_owned(),
            step_budget: 50,
            timeout: Duration::from_secs(120),
        }
    }

    /// Checks the settings: an http(s) URL, a positive step budget, at least one split.
    pub fn validate(&self) -> Result<(), EnvError> {
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(EnvError::Config(format!("`{}` is not an http(s) URL", self.base_url)));
        }
        if self.step_budget == 0 {
            return Err(EnvError::Config("the step budget must be at least 1".into()));
        }
        if self.splits.is_empty() {
            return Err(EnvError::Config("no split: map at least one split to a range of game indices".into()));
        }
        Ok(())
    }

    /// Game indices `range` form `split`.
    #[must_use]
    pub fn with_split(mut self, split: Split, range: Range<usize>) -> Self {
        self.splits.insert(split, range);
        self
    }

    /// Sets the step budget.
    #[must_use]
    pub fn with_step_budget(mut self, step_budget: usize) -> Self {
        self.step_budget = step_budget;
        self
    }

    /// Sets the time-out of each call.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets AgentGym's `world_type`.
    #[must_use]
    pub fn with_world_type(mut self, world_type: impl Into<String>) -> Self {
        self.world_type = world_type.into();
        self
    }
}

#[derive(Debug, Clone)]
struct Episode {
    task: TaskInfo,
    admissible: Vec<Action>,
    score: f64,
    steps: usize,
    over: bool,
}

/// An AgentGym ALFWorld server as an act-core [`Environment`]. One client holds one server-side environment
/// (created at the first reset).
///
/// ```no_run
/// use act_alfworld::bridge::{AgentGymClient, AgentGymConfig};
/// use act_core::{Environment, Split, TaskRef};
///
/// let config = AgentGymConfig::new("http://127.0.0.1:36001").with_split(Split::EvalOutOfDistribution, 0..134);
/// let mut env = AgentGymClient::new(config)?;
/// let reset = env.reset(&TaskRef::index(Split::EvalOutOfDistribution, 3), 0)?;
/// let transition = env.step("look")?;
/// println!("{}\n> look\n{}", reset.observation, transition.observation);
/// # Ok::<(), act_core::EnvError>(())
/// ```
#[derive(Debug)]
pub struct AgentGymClient {
    config: AgentGymConfig,
    agent: ureq::Agent,
    env_id: Option<Value>,
    episode: Option<Episode>,
}

impl AgentGymClient {
    /// A client for the server in `config`; no request is made until the first reset.
    pub fn new(config: AgentGymConfig) -> Result<Self, EnvError> {
        config.validate()?;
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(AgentGymClient { config, agent, env_id: None, episode: None })
    }

    /// The configuration.
    pub fn config(&self) -> &AgentGymConfig {
        &self.config
    }

    /// The server-side environment id, once created.
    pub fn env_id(&self) -> Option<&Value> {
        self.env_id.as_ref()
    }

    fn post(&self, route: &str, body: Value) -> Result<Map<String, Value>, EnvError> {
        let url = format!("{}/{route}", self.config.base_url);
        let mut response = self.agent.post(&url).send_json(&body).map_err(|error| match error {
            ureq::Error::Timeout(_) => {
                EnvError::Timeout { seconds: self.config.timeout.as_secs_f64(), during: format!("POST {url}") }
            }
            other => EnvError::Backend(format!("POST {url} failed: {other}")),
        })?;
        let status = response.status();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|error| EnvError::Backend(format!("POST {url}: cannot read the reply: {error}")))?;
        let value: Value = serde_json::from_str(&text).map_err(|error| {
            EnvError::Backend(format!("POST {url} answered {status} with non-JSON ({error}): {}", clip(&text)))
        })?;
        let Value::Object(map) = value else {
            return Err(EnvError::Backend(format!("POST {url} answered {status} with a non-object: {}", clip(&text))));
        };
        if let Some(error) = map.get("error") {
            let message = error.as_str().map_or_else(|| error.to_string(), str::to_owned);
            return Err(EnvError::Backend(format!("POST {url}: the server says: {message}")));
        }
        if !status.is_success() {
            return Err(EnvError::Backend(format!("POST {url} answered {status}: {}", clip(&text))));
        }
        Ok(map)
    }

    fn game_index(&self, task: &TaskRef) -> Result<(Split, usize), EnvError> {
        match task {
            TaskRef::Index { split, index } => {
                let range = self.config.splits.get(split).ok_or(EnvError::UnsupportedSplit(*split))?;
                if *index >= range.len() {
                    return Err(EnvError::UnknownTask(format!(
                        "index {index} of split `{split}`, which has {} games",
                        range.len()
                    )));
                }
                Ok((*split, range.start + index))
            }
            TaskRef::Id(id) => {
                let game: usize =
                    id.parse().map_err(|_| EnvError::UnknownTask(format!("`{id}` is not an AgentGym game index")))?;
                self.config
                    .splits
                    .iter()
                    .find(|(_, range)| range.contains(&game))
                    .map(|(split, _)| (*split, game))
                    .ok_or_else(|| EnvError::UnknownTask(format!("game {game} is in no configured split")))
            }
        }
    }
}

fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(200).collect();
    if clipped.len() < text.len() { format!("{clipped}...") } else { clipped }
}

fn text_field(reply: &Map<String, Value>, key: &str) -> Result<String, EnvError> {
    reply
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| EnvError::Backend(format!("the AgentGym reply lacks the text field `{key}`")))
}

fn actions_field(reply: &Map<String, Value>) -> Result<Vec<Action>, EnvError> {
    let list = reply
        .get("available_actions")
        .and_then(Value::as_array)
        .ok_or_else(|| EnvError::Backend("the AgentGym reply lacks `available_actions`".into()))?;
    list.iter()
        .map(|item| item.as_str().map(Action::from).ok_or_else(|| EnvError::Backend(format!("non-text action {item}"))))
        .collect()
}

/// The task type from AgentGym's `task_type` (`pick_heat_then_place_in_recep-Egg-None-Fridge-13/trial_...`).
fn task_type_of(path: &str) -> String {
    let first = path.split('/').next().unwrap_or(path);
    TASK_TYPES.iter().find(|t| first.starts_with(*t)).map_or_else(|| first.to_owned(), |t| (*t).to_owned())
}

/// The goal from the first observation ("... Your task is to: put a hot egg in fridge.").
fn task_description(observation: &str) -> String {
    observation
        .split_once("Your task is to: ")
        .map(|(_, task)| task.trim().trim_end_matches('.').to_owned())
        .unwrap_or_default()
}

impl Environment for AgentGymClient {
    fn name(&self) -> &str {
        "alfworld"
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        self.config.splits.get(&split).map(Range::len).ok_or(EnvError::UnsupportedSplit(split))
    }

    fn reset(&mut self, task: &TaskRef, _seed: u64) -> Result<Reset, EnvError> {
        let (split, game) = self.game_index(task)?;
        self.episode = None;
        let id = match &self.env_id {
            Some(id) => id.clone(),
            None => {
                let created = self.post("create", json!({}))?;
                let id = created
                    .get("id")
                    .cloned()
                    .ok_or_else(|| EnvError::Backend("the AgentGym /create reply has no `id`".into()))?;
                self.env_id = Some(id.clone());
                id
            }
        };
        let reply = self.post("reset", json!({"id": id, "game": game, "world_type": self.config.world_type}))?;
        let observation = text_field(&reply, "observation")?;
        let admissible = actions_field(&reply)?;
        let task = TaskInfo {
            id: game.to_string(),
            task_type: task_type_of(&text_field(&reply, "task_type")?),
            split,
            description: task_description(&observation),
        };
        self.episode =
            Some(Episode { task: task.clone(), admissible: admissible.clone(), score: 0.0, steps: 0, over: false });
        Ok(Reset { observation: observation.into(), task, admissible_actions: Some(admissible) })
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        match &self.episode {
            Some(episode) if !episode.over => {}
            _ => return Err(EnvError::NotReset),
        }
        let id = self.env_id.clone().ok_or(EnvError::NotReset)?;
        let reply = self.post("step", json!({"id": id, "action": action}))?;
        let observation = text_field(&reply, "observation")?;
        let admissible = actions_field(&reply)?;
        let score = reply.get("reward").and_then(Value::as_f64).unwrap_or(0.0);
        let server_done = reply.get("done").and_then(Value::as_bool).unwrap_or(false);
        let budget = self.config.step_budget;
        let episode = self.episode.as_mut().ok_or(EnvError::NotReset)?;
        let valid = episode.admissible.iter().any(|a| a.as_str() == action.trim());
        // AgentGym's reward is ALFWorld's `won` (0 or 1) after every step.
        let won = score > 0.0;
        let reward = score - episode.score;
        episode.score = score;
        episode.steps += 1;
        episode.over = server_done || won || episode.steps >= budget;
        episode.admissible = admissible.clone();
        let mut info = Map::new();
        info.insert("valid_action".into(), Value::from(valid));
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_validation_lives_in_the_config_and_json_round_trips() {
        let config = AgentGymConfig::new("http://127.0.0.1:36001/").with_split(Split::Test, 0..10);
        config.validate().unwrap();
        let round_trip: AgentGymConfig = serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
        assert_eq!(round_trip, config);
        assert!(AgentGymConfig::new("127.0.0.1").with_split(Split::Test, 0..1).validate().is_err());
        assert!(AgentGymConfig::new("http://h").validate().unwrap_err().to_string().contains("no split"));
        assert!(AgentGymClient::new(config.with_step_budget(0)).is_err());
    }

    #[test]
    fn task_types_and_descriptions_are_read_from_agentgym_text() {
        assert_eq!(
            task_type_of("pick_heat_then_place_in_recep-Egg-None-Fridge-13/trial_T2019_01"),
            "pick_heat_then_place_in_recep"
        );
        assert_eq!(task_type_of("custom/trial"), "custom");
        assert_eq!(
            task_description("You are in the middle of a room.\nYour task is to: put a hot egg in fridge."),
            "put a hot egg in fridge"
        );
        assert_eq!(task_description("no task here"), "");
    }

    #[test]
    fn configs_are_validated_and_tasks_map_to_game_indices() {
        assert!(matches!(AgentGymClient::new(AgentGymConfig::new("127.0.0.1:1")), Err(EnvError::Config(_))));
        assert!(matches!(AgentGymClient::new(AgentGymConfig::new("http://127.0.0.1:1")), Err(EnvError::Config(_))));
        let config = AgentGymConfig::new("http://127.0.0.1:1/")
            .with_split(Split::Train, 0..10)
            .with_split(Split::EvalOutOfDistribution, 10..12);
        assert_eq!(config.base_url, "http://127.0.0.1:1");
        let client = AgentGymClient::new(config).unwrap();
        assert_eq!(client.num_tasks(Split::EvalOutOfDistribution).unwrap(), 2);
        assert!(matches!(client.num_tasks(Split::Dev), Err(EnvError::UnsupportedSplit(Split::Dev))));
        assert_eq!(
            client.game_index(&TaskRef::index(Split::EvalOutOfDistribution, 1)).unwrap(),
            (Split::EvalOutOfDistribution, 11)
        );
        assert_eq!(client.game_index(&TaskRef::Id("3".into())).unwrap(), (Split::Train, 3));
        assert!(matches!(client.game_index(&TaskRef::index(Split::Train, 10)), Err(EnvError::UnknownTask(_))));
        assert!(matches!(client.game_index(&TaskRef::Id("12".into())), Err(EnvError::UnknownTask(_))));
        assert!(matches!(client.game_index(&TaskRef::Id("x".into())), Err(EnvError::UnknownTask(_))));
    }

    #[test]
    fn an_unreachable_server_is_a_backend_error_not_a_panic() {
        // Port 9 (discard) on 127.0.0.1 refuses connections on a normal machine.
        let config = AgentGymConfig::new("http://127.0.0.1:9")
            .with_split(Split::Train, 0..1)
            .with_timeout(Duration::from_secs(5));
        let mut client = AgentGymClient::new(config).unwrap();
        assert!(matches!(client.step("look"), Err(EnvError::NotReset)));
        let error = client.reset(&TaskRef::index(Split::Train, 0), 0).unwrap_err();
        assert!(matches!(error, EnvError::Backend(_) | EnvError::Timeout { .. }), "{error}");
    }
}
