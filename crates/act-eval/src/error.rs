//! The error type of act-eval: every variant says what was being evaluated, read or drawn when it failed.

use std::path::PathBuf;

use act_core::{EnvError, PolicyError};

/// An evaluation, report or plot error. Errors from environments, policies and rollouts keep their source
/// ([`std::error::Error::source`]). Variants may be added: match with a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The evaluation settings are unusable (say, zero episodes, or an empty item list).
    #[error("invalid evaluation configuration: {0}")]
    Config(String),
    /// A worker could not make its environment instance.
    #[error("could not make an environment instance: {0}")]
    MakeEnv(#[source] EnvError),
    /// The environment could not describe the split to evaluate (say, it has no such split).
    #[error("environment setup failed: {0}")]
    EnvSetup(#[source] EnvError),
    /// The environment failed during an episode.
    #[error("episode {episode}: environment failed: {source}")]
    Env {
        /// The 0-based episode index.
        episode: usize,
        /// The underlying error.
        source: EnvError,
    },
    /// The environment has no expert, but the expert was asked to act.
    #[error("episode {episode}: environment `{env}` has no expert (Environment::expert_action gave none)")]
    NoExpert {
        /// The 0-based episode index.
        episode: usize,
        /// The environment's name.
        env: String,
    },
    /// The policy failed.
    #[error("{what}: policy failed: {source}")]
    Policy {
        /// What was being evaluated ("episode 3, step 7", "items 64..96").
        what: String,
        /// The underlying error.
        source: PolicyError,
    },
    /// The policy returned the wrong number of completions.
    #[error("{what}: policy `{policy}` returned {got} completions for {expected} queries")]
    CompletionCount {
        /// What was being evaluated.
        what: String,
        /// The policy's name.
        policy: String,
        /// How many queries were sent.
        expected: usize,
        /// How many completions came back.
        got: usize,
    },
    /// A results or metrics file is missing, truncated, corrupted or inconsistent.
    #[error("{path}: {message}")]
    Record {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Two evaluations cannot be compared pairwise (different tasks or items).
    #[error("cannot pair the evaluations: {0}")]
    Unpaired(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Playing the episodes failed in a way the variants above do not name.
    #[error(transparent)]
    Rollout(act_rollout::RolloutError),
    /// Drawing a plot failed.
    #[error("plot {path}: {message}")]
    Plot {
        /// The output file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl From<act_rollout::RolloutError> for EvalError {
    fn from(error: act_rollout::RolloutError) -> Self {
        use act_rollout::RolloutError as R;
        match error {
            R::Config(message) => EvalError::Config(message),
            R::MakeEnv(source) => EvalError::MakeEnv(source),
            R::Env { episode, source } => EvalError::Env { episode, source },
            R::NoAction { episode, env, .. } => EvalError::NoExpert { episode, env },
            R::Policy { what, source } => EvalError::Policy { what, source },
            R::DecisionCount { what, actor, expected, got } => {
                EvalError::CompletionCount { what, policy: actor, expected, got }
            }
            other => EvalError::Rollout(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn errors_from_other_crates_keep_their_source_chain() {
        // An environment that failed to start, reported by the rollout layer, then by evaluation: three crates.
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such jar");
        let env = EnvError::Io { context: "starting the engine".into(), source: io };
        let error = EvalError::from(act_rollout::RolloutError::MakeEnv(env));
        assert!(matches!(error, EvalError::MakeEnv(_)));
        let env = error.source().expect("the environment's error");
        assert_eq!(env.to_string(), "starting the engine: no such jar");
        let io = env.source().expect("the I/O error");
        assert_eq!(io.to_string(), "no such jar");
        assert!(io.downcast_ref::<std::io::Error>().is_some());
        let setup = EvalError::EnvSetup(EnvError::UnsupportedSplit(act_core::Split::Test));
        assert!(setup.source().is_some_and(|s| s.to_string().contains("not available")));
    }
}
