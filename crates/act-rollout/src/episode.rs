//! A played episode: the act-core [`Trajectory`] it made and one trainable [`Turn`] per step.

use act_core::{Action, Completion, Trajectory};
use serde::{Deserialize, Serialize};

use crate::spec::EpisodeSpec;

/// One step of a played episode as training data: what the actor wrote and what came of it.
///
/// The state the actor saw is the trajectory's: `trajectory.state_at(step, history_len)`, rendered by the
/// actor's prompter, is the prompt (a language-model policy's `completion.prompt_ids` are its tokens).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The 0-based step.
    pub step: usize,
    /// The actor's output: text, and for token-returning policies the prompt and completion token ids and the
    /// sampled log-probs (behaviour log-probs for importance ratios).
    pub completion: Completion,
    /// The action sent to the environment (after snapping, where the rollout snaps).
    pub action: Action,
    /// Whether the output parsed to an action the environment listed as admissible (any action counts as
    /// admissible where the environment lists none).
    pub valid: bool,
    /// Whether the output parsed to an action at all.
    pub parsed: bool,
    /// Whether the proposed action was replaced by the nearest admissible one.
    pub snapped: bool,
    /// The environment's reward for the step.
    pub reward: f64,
}

/// An episode as it was played.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlayedEpisode {
    /// What was played.
    pub spec: EpisodeSpec,
    /// The episode as a trajectory (each step's observation, admissible actions, the action sent and its reward;
    /// the outcome), the form expert data has, so played episodes can become SFT data or critic pairs.
    pub trajectory: Trajectory,
    /// One turn per step of the trajectory, in order.
    pub turns: Vec<Turn>,
}

impl PlayedEpisode {
    /// Whether the task was completed.
    pub fn won(&self) -> bool {
        self.trajectory.outcome.won
    }

    /// The environment's final score.
    pub fn score(&self) -> f64 {
        self.trajectory.outcome.score
    }

    /// Steps taken.
    pub fn steps(&self) -> usize {
        self.turns.len()
    }

    /// Steps whose output was not an admissible action (unparseable outputs included).
    pub fn invalid_actions(&self) -> usize {
        self.turns.iter().filter(|t| !t.valid).count()
    }

    /// Steps whose output had no parseable action.
    pub fn unparseable_outputs(&self) -> usize {
        self.turns.iter().filter(|t| !t.parsed).count()
    }

    /// Steps whose action was replaced by the nearest admissible one.
    pub fn snapped_actions(&self) -> usize {
        self.turns.iter().filter(|t| t.snapped).count()
    }
}
