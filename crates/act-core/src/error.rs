//! Error types shared by every act-rs crate.
//!
//! Each concern has its own enum so a caller can match on what went wrong; [`Error`] gathers them for code that
//! only needs to report.

use std::path::PathBuf;

/// An error from an [`Environment`](crate::Environment). Variants may be added: match with a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// The task reference names no task (bad index or unknown id).
    #[error("no such task: {0}")]
    UnknownTask(String),
    /// The environment does not provide this split.
    #[error("split `{0}` is not available in this environment")]
    UnsupportedSplit(crate::Split),
    /// `step` was called before `reset`, or after the episode ended.
    #[error("no episode in progress: call reset first")]
    NotReset,
    /// The configuration is invalid.
    #[error("invalid environment configuration: {0}")]
    Config(String),
    /// An external engine (a worker process, a JVM, a server) failed; the message says how.
    #[error("environment backend failed: {0}")]
    Backend(String),
    /// An external engine did not answer in time.
    #[error("environment backend timed out after {seconds:.1} s while {during}")]
    Timeout {
        /// Seconds waited.
        seconds: f64,
        /// What the call was doing.
        during: String,
    },
    /// The environment's own machinery failed (a search index, a simulator); its error is kept as the
    /// [`source`](std::error::Error::source), so callers can downcast it.
    #[error("{context}: {source}")]
    Engine {
        /// Which engine, doing what.
        context: String,
        /// The engine's error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// An error from a [`Policy`](crate::Policy).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy cannot answer this kind of query (for example a scripted policy asked a free-text question).
    #[error("policy `{policy}` cannot answer this query: {reason}")]
    Unsupported {
        /// The policy's name.
        policy: String,
        /// Why not.
        reason: String,
    },
    /// The policy failed while generating.
    #[error("policy `{policy}` failed: {message}")]
    Generation {
        /// The policy's name.
        policy: String,
        /// What went wrong.
        message: String,
    },
}

/// An error from a [`RewardFn`](crate::RewardFn).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewardError {
    /// The reward function was handed a target it does not score (say, a next-action target to a comparison reward).
    #[error("reward `{reward}` cannot score a `{target}` target")]
    WrongTarget {
        /// The reward function's name.
        reward: String,
        /// The kind of target it received.
        target: &'static str,
    },
}

/// An error while parsing model output (see [`parse_action`](crate::parse_action)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The tag does not occur.
    #[error("missing <{0}>...</{0}>")]
    MissingTag(String),
    /// The tag occurs more than once.
    #[error("<{tag}> occurs {count} times; expected exactly once")]
    DuplicateTag {
        /// The tag name.
        tag: String,
        /// How often its opening tag occurs.
        count: usize,
    },
    /// An opening tag without a closing one, or the reverse.
    #[error("unbalanced <{0}> tag")]
    UnclosedTag(String),
    /// The tag is present but holds nothing.
    #[error("<{0}> is empty")]
    EmptyTag(String),
    /// The answer does not name action 1 or action 2.
    #[error("answer `{0}` names neither action 1 nor action 2")]
    InvalidChoice(String),
    /// The answer names both actions.
    #[error("answer `{0}` names both actions")]
    AmbiguousChoice(String),
}

/// An error while reading or writing a JSONL dataset. Every variant names the file; parse errors name the line and
/// the field too.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line is not valid JSON or does not match the record type.
    #[error("{path}:{line}: {}{message}", field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// The field at fault (a dotted path such as `steps[2].action`), when known.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A record could not be serialised.
    #[error("{path}: record {index} cannot be serialised: {message}")]
    Serialize {
        /// The file.
        path: PathBuf,
        /// The 0-based record index.
        index: usize,
        /// What went wrong.
        message: String,
    },
}

impl DatasetError {
    /// The line number of a parse error, if this is one.
    pub fn line(&self) -> Option<usize> {
        match self {
            DatasetError::Parse { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// The field of a parse error, if known.
    pub fn field(&self) -> Option<&str> {
        match self {
            DatasetError::Parse { field, .. } => field.as_deref(),
            _ => None,
        }
    }
}

/// An error in a prompt template (see [`PromptTemplates`](crate::PromptTemplates)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template names a placeholder the renderer does not know.
    #[error("template `{template}` uses unknown placeholder `{{{placeholder}}}`; known: {known}")]
    UnknownPlaceholder {
        /// Which template.
        template: String,
        /// The unknown name.
        placeholder: String,
        /// The placeholders this template accepts, comma-separated.
        known: String,
    },
    /// A `{` without its `}` (write `{{` and `}}` for literal braces).
    #[error("template `{template}` has an unclosed `{{` at byte {offset}")]
    Unclosed {
        /// Which template.
        template: String,
        /// Byte offset of the brace.
        offset: usize,
    },
    /// A template lacks a placeholder it must have (say, a comparison template without `{action_2}`).
    #[error("template `{template}` must contain `{{{placeholder}}}`")]
    MissingPlaceholder {
        /// Which template.
        template: String,
        /// The required name.
        placeholder: String,
    },
}

/// Any act-core error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// See [`EnvError`].
    #[error(transparent)]
    Env(#[from] EnvError),
    /// See [`PolicyError`].
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// See [`RewardError`].
    #[error(transparent)]
    Reward(#[from] RewardError),
    /// See [`ParseError`].
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// See [`DatasetError`].
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// See [`TemplateError`].
    #[error(transparent)]
    Template(#[from] TemplateError),
}
