//! The crate's error type.

use std::path::{Path, PathBuf};

/// Everything that can go wrong loading, running or saving a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A bad or unsupported model configuration.
    #[error("invalid model config: {0}")]
    Config(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A checkpoint is malformed or does not fit the model.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The checkpoint file or directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The tokenizer failed to load, train, encode or decode.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// Inputs with inconsistent shapes or out-of-range values.
    #[error("invalid input: {0}")]
    Input(String),
    /// The backend is not compiled in or failed to start.
    #[error("backend: {0}")]
    Backend(String),
}

impl ModelError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        ModelError::Io { path: path.to_path_buf(), source }
    }

    /// A checkpoint error on `path`.
    pub fn checkpoint(path: &Path, message: impl Into<String>) -> Self {
        ModelError::Checkpoint { path: path.to_path_buf(), message: message.into() }
    }
}
