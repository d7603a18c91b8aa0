//! Typed calls on the jar's entry object (`scienceworld.runtime.pythonapi.PythonInterface`),
//! the same methods the official Python wrapper calls.

use serde::Deserialize;

use crate::error::SciWorldError;
use crate::locate::JarLocation;
use crate::process::{Gateway, JvmOptions};
use crate::py4j::Arg;

/// The simulator's answer to an unknown or unparsable input.
pub const UNKNOWN_ACTION: &str = "No known action matches that input.";

/// One running simulator (one JVM). All calls block until the JVM answers.
#[derive(Debug)]
pub struct Simulator {
    gateway: Gateway,
}

/// What one step returned, read the way the Python wrapper reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepResult {
    /// The observation text.
    pub observation: String,
    /// Score 0..=100 (-100 after a failure), rounded as the wrapper does.
    pub score: i64,
    /// Whether the simulator marks the task as finished (won or failed).
    pub completed: bool,
    /// Moves taken so far (free actions such as `look around` do not count).
    pub moves: i64,
}

#[derive(Deserialize)]
struct ValidActions {
    #[serde(rename = "validActions")]
    valid_actions: Vec<ValidAction>,
}

#[derive(Deserialize)]
struct ValidAction {
    action: String,
}

impl Simulator {
    /// Starts a JVM running the jar.
    pub fn start(location: &JarLocation, options: &JvmOptions) -> Result<Self, SciWorldError> {
        Ok(Self { gateway: Gateway::start(location, options)? })
    }

    /// The underlying process.
    pub(crate) fn gateway(&mut self) -> &mut Gateway {
        &mut self.gateway
    }

    /// Task names in the jar's order (30 in 1.2.3).
    pub fn task_names(&mut self) -> Result<Vec<String>, SciWorldError> {
        self.gateway.with_client("getTaskNames", |c| c.call_list("getTaskNames", &[]))
    }

    /// Number of variations of a task (the jar answers -1 for an unknown task).
    pub fn max_variations(&mut self, task: &str) -> Result<i64, SciWorldError> {
        let n = self
            .gateway
            .with_client("getTaskMaxVariations", |c| c.call_int("getTaskMaxVariations", &[Arg::Str(task)]))?;
        if n < 0 {
            return Err(SciWorldError::Simulator(format!("unknown task {task:?}")));
        }
        Ok(n)
    }

    /// The simplifications the jar knows (without `easy`, which names them all).
    pub fn possible_simplifications(&mut self) -> Result<Vec<String>, SciWorldError> {
        let text = self
            .gateway
            .with_client("getPossibleSimplifications", |c| c.call_string("getPossibleSimplifications", &[]))?;
        Ok(text.split(", ").filter(|s| !s.is_empty()).map(str::to_string).collect())
    }

    /// The jar's own train / dev / test variation lists for the loaded task.
    pub fn loaded_task_splits(&mut self) -> Result<[Vec<usize>; 3], SciWorldError> {
        let mut out: [Vec<usize>; 3] = Default::default();
        for (slot, method) in out.iter_mut().zip(["getVariationsTrain", "getVariationsDev", "getVariationsTest"]) {
            let items = self.gateway.with_client(method, |c| c.call_list(method, &[]))?;
            *slot = items
                .iter()
                .map(|v| v.parse().map_err(|_| SciWorldError::Simulator(format!("{method} returned {v:?}"))))
                .collect::<Result<_, _>>()?;
        }
        Ok(out)
    }

    /// Loads a task variation; with `gold` the jar also plans the gold action sequence.
    pub fn load(&mut self, task: &str, variation: i32, simplifications: &str, gold: bool) -> Result<(), SciWorldError> {
        let error = self.gateway.with_client("load", |c| {
            c.call_string("load", &[Arg::Str(task), Arg::Int(variation), Arg::Str(simplifications), Arg::Bool(gold)])
        })?;
        if error.is_empty() { Ok(()) } else { Err(SciWorldError::Simulator(error)) }
    }

    /// Takes one step; reads the observation, score, completion flag and move count.
    pub fn step(&mut self, action: &str) -> Result<StepResult, SciWorldError> {
        self.gateway.with_client("step", |c| {
            let observation = c.call_string("step", &[Arg::Str(action)])?;
            let score = c.call_double("getScore", &[])?;
            let completed = c.call_bool("getCompleted", &[])?;
            let moves = c.call_int("getNumMoves", &[])?;
            Ok(StepResult { observation, score: (100.0 * score).round() as i64, completed, moves })
        })
    }

    /// The gold action sequence planned by the last `load` with `gold = true`.
    pub fn gold_action_sequence(&mut self) -> Result<Vec<String>, SciWorldError> {
        self.gateway.with_client("getGoldActionSequence", |c| c.call_list("getGoldActionSequence", &[]))
    }

    /// Every valid action-object combination in the current state (the jar's JSON method),
    /// sorted and without duplicates.
    pub fn valid_actions(&mut self) -> Result<Vec<String>, SciWorldError> {
        const METHOD: &str = "getValidActionObjectCombinationsJSON";
        let json = self.gateway.with_client(METHOD, |c| c.call_string(METHOD, &[]))?;
        if json.starts_with("ERROR") {
            return Err(SciWorldError::Simulator(json));
        }
        let parsed: ValidActions =
            serde_json::from_str(&json).map_err(|source| SciWorldError::Json { method: METHOD, source })?;
        let mut actions: Vec<String> = parsed.valid_actions.into_iter().map(|a| a.action).collect();
        actions.sort_unstable();
        actions.dedup();
        Ok(actions)
    }

    /// The current room's description (a free action: no move is spent).
    pub fn look(&mut self) -> Result<String, SciWorldError> {
        self.free_action("freeActionLook")
    }

    /// The inventory (a free action).
    pub fn inventory(&mut self) -> Result<String, SciWorldError> {
        self.free_action("freeActionInventory")
    }

    /// The task description prefixed with "Task Description:" (a free action).
    pub fn task_description_free(&mut self) -> Result<String, SciWorldError> {
        self.free_action("freeActionTaskDesc")
    }

    /// The plain task description.
    pub fn task_description(&mut self) -> Result<String, SciWorldError> {
        self.free_action("getTaskDescription")
    }

    /// The simulator's goal-progress report.
    pub fn goal_progress(&mut self) -> Result<String, SciWorldError> {
        self.free_action("getGoalProgressStr")
    }

    /// The run history of the current episode as the jar's JSON.
    pub fn run_history(&mut self) -> Result<serde_json::Value, SciWorldError> {
        const METHOD: &str = "getRunHistoryJSON";
        let json = self.free_action(METHOD)?;
        serde_json::from_str(&json).map_err(|source| SciWorldError::Json { method: METHOD, source })
    }

    fn free_action(&mut self, method: &str) -> Result<String, SciWorldError> {
        self.gateway.with_client(method, |c| c.call_string(method, &[]))
    }
}
