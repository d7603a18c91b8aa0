//! The error type of act-rollout: every variant names the episode (or the batched call) it happened in.

use act_core::{EnvError, PolicyError};

/// A rollout error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RolloutError {
    /// The rollout settings are unusable (say, a batch size or step budget of 0).
    #[error("invalid rollout configuration: {0}")]
    Config(String),
    /// A slot could not make its environment instance.
    #[error("could not make an environment instance: {0}")]
    MakeEnv(#[source] EnvError),
    /// The environment failed during an episode.
    #[error("episode {episode}: environment failed: {source}")]
    Env {
        /// The episode's index ([`EpisodeSpec::index`](crate::EpisodeSpec::index)).
        episode: usize,
        /// The underlying error.
        #[source]
        source: EnvError,
    },
    /// The actor had no action at the first step of an episode (the expert of an environment without one).
    #[error("episode {episode}: actor `{actor}` has no action at its first step on environment `{env}`")]
    NoAction {
        /// The episode's index.
        episode: usize,
        /// The actor's name.
        actor: String,
        /// The environment's name.
        env: String,
    },
    /// The actor's policy failed.
    #[error("{what}: policy failed: {source}")]
    Policy {
        /// The episodes and steps of the failed call ("episode 3, step 7", "episodes 0-2 at step 4 (batched call 9)").
        what: String,
        /// The underlying error.
        #[source]
        source: PolicyError,
    },
    /// The actor returned the wrong number of decisions.
    #[error("{what}: actor `{actor}` returned {got} decisions for {expected} episodes")]
    DecisionCount {
        /// The episodes and steps of the call.
        what: String,
        /// The actor's name.
        actor: String,
        /// How many episodes asked.
        expected: usize,
        /// How many decisions came back.
        got: usize,
    },
}

/// Why an [`Actor`](crate::Actor) could not decide; the driver adds which episodes asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ActError {
    /// The policy behind the actor failed.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The environment of view `view` failed (the expert's planner, say).
    #[error("environment failed: {source}")]
    Env {
        /// The position of the failing view in the call.
        view: usize,
        /// The underlying error.
        #[source]
        source: EnvError,
    },
    /// The policy returned the wrong number of completions.
    #[error("the policy returned {got} completions for {expected} queries")]
    CompletionCount {
        /// How many queries were sent.
        expected: usize,
        /// How many completions came back.
        got: usize,
    },
}
