//! The data of an episode: observations, actions, steps and whole trajectories.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

macro_rules! text_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// Wraps a string.
            pub fn new(text: impl Into<String>) -> Self {
                $name(text.into())
            }

            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                $name(text.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                $name(text)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

text_newtype!(
    /// What the environment shows the agent, as text.
    Observation
);
text_newtype!(
    /// An action in the environment's command language, such as `go to cabinet 1` or `click[buy now]`.
    Action
);

/// A partition of an environment's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Training tasks.
    Train,
    /// Evaluation on tasks like the training ones (ALFWorld's valid_seen).
    EvalInDistribution,
    /// Evaluation on tasks unlike the training ones (ALFWorld's valid_unseen).
    EvalOutOfDistribution,
    /// A development split, where the environment has one.
    Dev,
    /// A test split, where the environment has one.
    Test,
}

impl Split {
    /// Every split, in declaration order.
    pub const ALL: [Split; 5] =
        [Split::Train, Split::EvalInDistribution, Split::EvalOutOfDistribution, Split::Dev, Split::Test];

    /// The snake_case name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::EvalInDistribution => "eval_in_distribution",
            Split::EvalOutOfDistribution => "eval_out_of_distribution",
            Split::Dev => "dev",
            Split::Test => "test",
        }
    }
}

impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of [`Split::from_str`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown split `{0}`; expected one of train, eval_in_distribution (id), eval_out_of_distribution (ood), dev, test"
)]
pub struct UnknownSplit(pub String);

impl FromStr for Split {
    type Err = UnknownSplit;

    /// Parses a split name; `id`/`ood` and upstream ALFWorld's `valid_seen`/`valid_unseen` are accepted too.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "train" => Ok(Split::Train),
            "eval_in_distribution" | "id" | "valid_seen" => Ok(Split::EvalInDistribution),
            "eval_out_of_distribution" | "ood" | "valid_unseen" => Ok(Split::EvalOutOfDistribution),
            "dev" | "valid" => Ok(Split::Dev),
            "test" => Ok(Split::Test),
            _ => Err(UnknownSplit(s.to_owned())),
        }
    }
}

/// One earlier (observation, action) pair shown to the agent as history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// What the agent saw.
    pub observation: Observation,
    /// What it did then.
    pub action: Action,
}

/// Everything a policy sees at one step: the task, recent history, the current observation and (where the
/// environment has them) the admissible actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentState {
    /// The task's identifier.
    pub task_id: String,
    /// The task description ("put a hot apple in countertop.").
    pub task: String,
    /// The 0-based index of this step in the episode.
    pub step_index: usize,
    /// The most recent (observation, action) pairs, oldest first.
    #[serde(default)]
    pub history: Vec<HistoryEntry>,
    /// The current observation.
    pub observation: Observation,
    /// The admissible actions here; empty when the environment does not list them.
    #[serde(default)]
    pub admissible_actions: Vec<Action>,
}

/// One step of an episode: what the agent saw, what it could do, and what it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The observation the action answered.
    pub observation: Observation,
    /// The admissible actions at that point; empty when the environment does not list them.
    #[serde(default)]
    pub admissible_actions: Vec<Action>,
    /// The action taken.
    pub action: Action,
    /// The reward the environment returned for it.
    #[serde(default)]
    pub reward: f64,
}

/// How an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Whether the task was completed.
    pub won: bool,
    /// The environment's score (ALFWorld 0/1, WebShop reward in [0, 1], ScienceWorld 0..100).
    pub score: f64,
    /// Steps the episode used.
    pub steps_used: usize,
}

/// A whole episode on one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// The environment's name ("alfworld", "webshop", "sciworld").
    pub env: String,
    /// The task's identifier.
    pub task_id: String,
    /// The task type ("pick_heat_then_place_in_recep", ...).
    pub task_type: String,
    /// The split the task belongs to.
    pub split: Split,
    /// The task description.
    pub task: String,
    /// The episode seed.
    pub seed: u64,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// How it ended.
    pub outcome: Outcome,
}

impl Trajectory {
    /// The state the agent was in before step `index`, with at most `history_len` earlier pairs as history.
    ///
    /// Returns `None` when `index` is past the last step.
    ///
    /// ```
    /// # use act_core::*;
    /// let step = |o: &str, a: &str| Step { observation: o.into(), admissible_actions: vec![], action: a.into(), reward: 0.0 };
    /// let t = Trajectory {
    ///     env: "toy".into(), task_id: "t0".into(), task_type: "demo".into(), split: Split::Train,
    ///     task: "reach the door".into(), seed: 0,
    ///     steps: vec![step("start", "north"), step("hall", "east"), step("door", "open door")],
    ///     outcome: Outcome { won: true, score: 1.0, steps_used: 3 },
    /// };
    /// let s = t.state_at(2, 1).unwrap();
    /// assert_eq!(s.observation.as_str(), "door");
    /// assert_eq!(s.history.len(), 1);
    /// assert_eq!(s.history[0].action.as_str(), "east");
    /// ```
    pub fn state_at(&self, index: usize, history_len: usize) -> Option<AgentState> {
        let step = self.steps.get(index)?;
        let first = index.saturating_sub(history_len);
        let history = self.steps[first..index]
            .iter()
            .map(|s| HistoryEntry { observation: s.observation.clone(), action: s.action.clone() })
            .collect();
        Some(AgentState {
            task_id: self.task_id.clone(),
            task: self.task.clone(),
            step_index: index,
            history,
            observation: step.observation.clone(),
            admissible_actions: step.admissible_actions.clone(),
        })
    }

    /// Every (state, action taken) pair of the trajectory, in order.
    pub fn states(&self, history_len: usize) -> impl Iterator<Item = (AgentState, &Action)> + '_ {
        (0..self.steps.len()).filter_map(move |i| Some((self.state_at(i, history_len)?, &self.steps[i].action)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_names_round_trip() {
        for split in Split::ALL {
            assert_eq!(split.as_str().parse::<Split>().unwrap(), split);
            let json = serde_json::to_string(&split).unwrap();
            assert_eq!(json, format!("\"{}\"", split.as_str()));
        }
        assert_eq!("OOD".parse::<Split>().unwrap(), Split::EvalOutOfDistribution);
        assert!("nope".parse::<Split>().unwrap_err().to_string().contains("nope"));
    }

    #[test]
    fn history_is_clipped_at_the_start() {
        let step =
            |o: &str| Step { observation: o.into(), admissible_actions: vec![], action: "a".into(), reward: 0.0 };
        let t = Trajectory {
            env: "toy".into(),
            task_id: "t".into(),
            task_type: "x".into(),
            split: Split::Train,
            task: "task".into(),
            seed: 1,
            steps: vec![step("o0"), step("o1")],
            outcome: Outcome { won: false, score: 0.0, steps_used: 2 },
        };
        assert_eq!(t.state_at(0, 5).unwrap().history.len(), 0);
        assert_eq!(t.state_at(1, 5).unwrap().history.len(), 1);
        assert!(t.state_at(2, 5).is_none());
        assert_eq!(t.states(2).count(), 2);
    }
}
