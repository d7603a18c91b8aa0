//! Configuration of the native simulator: grammar version, step budget, split sizes, dataset seed.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which upstream ALFWorld text grammar to speak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GrammarVersion {
    /// ALFWorld <= 0.3.x (ReAct, AgentGym and most papers): `put O in/on R`, "You arrive at loc N.", no `help`.
    #[default]
    #[serde(rename = "0.3")]
    V03,
    /// ALFWorld 0.4.x (current PyPI): `move O to R`, "You arrive at R.", `help`.
    #[serde(rename = "0.4")]
    V04,
}

impl GrammarVersion {
    /// "0.3" or "0.4".
    pub const fn as_str(self) -> &'static str {
        match self {
            GrammarVersion::V03 => "0.3",
            GrammarVersion::V04 => "0.4",
        }
    }
}

impl fmt::Display for GrammarVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of [`GrammarVersion::from_str`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ALFWorld grammar version `{0}`; expected 0.3 or 0.4")]
pub struct UnknownGrammarVersion(pub String);

impl FromStr for GrammarVersion {
    type Err = UnknownGrammarVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().trim_start_matches('v') {
            "0.3" | "0.3.x" => Ok(GrammarVersion::V03),
            "0.4" | "0.4.x" => Ok(GrammarVersion::V04),
            _ => Err(UnknownGrammarVersion(s.to_owned())),
        }
    }
}

/// Settings of [`crate::AlfworldEnv`]. `Default` follows upstream: grammar 0.3, 50 steps, 3,553 training
/// games, 140 in-distribution and 134 out-of-distribution evaluation games.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AlfworldConfig {
    /// The text grammar.
    pub grammar: GrammarVersion,
    /// Steps per episode.
    pub step_budget: usize,
    /// Seeds the game set: the same seed gives the same games in every split.
    pub dataset_seed: u64,
    /// Games in the training split (seen layouts).
    pub train_size: usize,
    /// Games in the in-distribution evaluation split (seen layouts, new games; like valid_seen).
    pub eval_in_distribution_size: usize,
    /// Games in the out-of-distribution evaluation split (unseen layouts; like valid_unseen).
    pub eval_out_of_distribution_size: usize,
    /// Whether a command answered "Nothing happens." uses up a step of the budget. TextWorld does not count it as
    /// a move (the default here), but upstream ALFWorld's gym wrapper (`max_episode_steps`) counts every command:
    /// set this to match published evaluations, where an invalid command costs a turn.
    pub count_invalid_steps: bool,
    /// Whether every observation ends with a memory line, `Unvisited: <the receptacles not gone to yet, in the
    /// room's listing order>.` (`Unvisited: nothing.` once all are), as agents with a memory of visited places
    /// keep one. Off by default (upstream's text); it only restates what the episode so far has shown the agent,
    /// so a small model need not recover the room's list and its own path from a long history to search.
    pub memory_line: bool,
    /// Where the expert searches for an object it has not seen: upstream's order by default (see
    /// [`SearchOrder`]). It changes the expert's actions, hence the training data, the labels and the next-action
    /// targets; the games are the same.
    #[serde(default)]
    pub expert_search: SearchOrder,
    /// Upstream's game files to play natively instead of the procedural scenes: an ALFWorld data download
    /// (`$ALFWORLD_DATA`, or its `json_2.1.1`, whose `train`, `valid_seen` and `valid_unseen` folders are the three
    /// splits), or any directory of games (all in the training split). Each game is read with
    /// [`load_scene`](crate::load_scene) when reset; one the native world cannot represent yet is an error that
    /// names its file. The split sizes then come from the directory, and a task's id is the game's path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_dir: Option<std::path::PathBuf>,
}

/// The order in which the expert searches the room for an object it has not seen yet.
///
/// Either way it searches the receptacles whose class may hold the object first, then the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SearchOrder {
    /// Upstream's: last listed first. The room lists a class's receptacles in descending numbers (`a drawer 3, a
    /// drawer 2, a drawer 1`), so a class is searched upwards from 1, and where it ends depends on how many the room
    /// has.
    #[default]
    LastListedFirst,
    /// Classes in upstream's order (last listed first), but each class from its highest number down to 1 (the
    /// order the room lists them in), so a class's search always ends at 1. Not upstream's expert; a variant whose
    /// search a small imitator can follow without knowing how many receptacles of a class the room has: a slip in
    /// where it starts names a receptacle that exists (`go to drawer 2` where the expert goes to `drawer 3`), where
    /// upstream's order invites one past the end (`go to drawer 4` after `drawer 3`), which the game answers with
    /// "Nothing happens.".
    NumbersDescending,
}

impl Default for AlfworldConfig {
    fn default() -> Self {
        AlfworldConfig {
            grammar: GrammarVersion::V03,
            step_budget: 50,
            dataset_seed: 0,
            train_size: 3553,
            eval_in_distribution_size: 140,
            eval_out_of_distribution_size: 134,
            count_invalid_steps: false,
            memory_line: false,
            expert_search: SearchOrder::LastListedFirst,
            game_dir: None,
        }
    }
}

impl AlfworldConfig {
    /// Sets the grammar version.
    #[must_use]
    pub fn with_grammar(mut self, grammar: GrammarVersion) -> Self {
        self.grammar = grammar;
        self
    }

    /// Sets the step budget.
    #[must_use]
    pub fn with_step_budget(mut self, steps: usize) -> Self {
        self.step_budget = steps;
        self
    }

    /// Sets the dataset seed.
    #[must_use]
    pub fn with_dataset_seed(mut self, seed: u64) -> Self {
        self.dataset_seed = seed;
        self
    }

    /// Sets the number of training games.
    #[must_use]
    pub fn with_train_size(mut self, games: usize) -> Self {
        self.train_size = games;
        self
    }

    /// Sets whether "Nothing happens." uses up a step.
    #[must_use]
    pub fn with_count_invalid_steps(mut self, count: bool) -> Self {
        self.count_invalid_steps = count;
        self
    }

    /// Sets whether observations end with the memory line of unvisited receptacles.
    #[must_use]
    pub fn with_memory_line(mut self, memory_line: bool) -> Self {
        self.memory_line = memory_line;
        self
    }

    /// Sets the expert's search order.
    #[must_use]
    pub fn with_expert_search(mut self, order: SearchOrder) -> Self {
        self.expert_search = order;
        self
    }

    /// Plays upstream's game files under `dir` ([`AlfworldConfig::game_dir`]).
    #[must_use]
    pub fn with_game_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.game_dir = Some(dir.into());
        self
    }

    /// Checks the settings; the message says what to fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.step_budget == 0 {
            return Err("step_budget must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_names_round_trip() {
        for g in [GrammarVersion::V03, GrammarVersion::V04] {
            assert_eq!(g.as_str().parse::<GrammarVersion>(), Ok(g));
            let json = serde_json::to_string(&g).unwrap();
            assert_eq!(serde_json::from_str::<GrammarVersion>(&json).unwrap(), g);
        }
        assert!("0.5".parse::<GrammarVersion>().is_err());
    }

    #[test]
    fn config_defaults_follow_upstream() {
        let c = AlfworldConfig::default();
        assert_eq!((c.step_budget, c.eval_in_distribution_size, c.eval_out_of_distribution_size), (50, 140, 134));
        assert!(c.validate().is_ok());
        assert!(c.with_step_budget(0).validate().is_err());
        let partial: AlfworldConfig = serde_json::from_str(r#"{"grammar":"0.4"}"#).unwrap();
        assert_eq!(partial.grammar, GrammarVersion::V04);
        assert_eq!(partial.step_budget, 50);
    }
}
