//! The crate's error type.

use crate::py4j::Py4jError;

/// Everything that can go wrong between Rust and the ScienceWorld jar.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SciWorldError {
    /// The jar or its resources could not be found.
    #[error("scienceworld.jar not found: {0}")]
    JarNotFound(String),
    /// `java` could not be started.
    #[error("cannot start `{java}`: {source}")]
    JavaNotStarted {
        /// The Java command tried.
        java: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The JVM did not announce its gateway in time, or exited while starting.
    #[error("ScienceWorld JVM failed to start: {reason}; last output:\n{output}")]
    Startup {
        /// What happened.
        reason: String,
        /// The JVM's last output lines.
        output: String,
    },
    /// The JVM exited (or stopped answering) while a call was in flight.
    #[error(
        "ScienceWorld JVM died during `{method}` ({status}); the episode in flight is lost, \
         the next reset restarts the JVM; last output:\n{output}"
    )]
    JvmDied {
        /// The call in flight.
        method: String,
        /// Exit status, or what is known about the failure.
        status: String,
        /// The JVM's last output lines.
        output: String,
    },
    /// A protocol-level failure that leaves the JVM alive.
    #[error(transparent)]
    Py4j(#[from] Py4jError),
    /// The simulator refused a request (unknown task, variation out of range...).
    #[error("ScienceWorld: {0}")]
    Simulator(String),
    /// The caller asked for something invalid.
    #[error("{0}")]
    InvalidRequest(String),
    /// The gold path was not generated for this episode.
    #[error("gold path unavailable: {0}")]
    NoGoldPath(String),
    /// The JSON a method returned did not parse.
    #[error("{method} returned malformed JSON: {source}")]
    Json {
        /// The method called.
        method: &'static str,
        /// The parse error.
        source: serde_json::Error,
    },
}
