//! The crate's error type.

use std::path::PathBuf;

use act_core::EnvError;

/// What can go wrong while building or running a WebShop.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebShopError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file is not valid JSON of the expected shape.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A product or goal holds data the environment cannot use.
    #[error("invalid data: {0}")]
    Data(String),
    /// A goal the reward cannot score (no attributes, non-positive price bound).
    #[error("invalid goal: {0}")]
    Goal(String),
    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The search index failed.
    #[error("search index: {0}")]
    Search(String),
    /// An HTTP exchange failed.
    #[error("http: {0}")]
    Http(String),
}

impl From<tantivy::TantivyError> for WebShopError {
    fn from(e: tantivy::TantivyError) -> Self {
        WebShopError::Search(e.to_string())
    }
}

impl From<WebShopError> for EnvError {
    fn from(e: WebShopError) -> Self {
        match e {
            WebShopError::Io { path, source } => EnvError::Io { context: path.display().to_string(), source },
            WebShopError::Http(message) => EnvError::Backend(message),
            WebShopError::Config(message) => EnvError::Config(message),
            other => EnvError::Engine { context: "webshop".into(), source: Box::new(other) },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn engine_failures_reach_env_error_with_their_source() {
        let env = EnvError::from(WebShopError::Search("the index is gone".into()));
        assert!(matches!(env, EnvError::Engine { .. }), "{env:?}");
        let source = env.source().expect("the WebShop error");
        assert!(matches!(source.downcast_ref::<WebShopError>(), Some(WebShopError::Search(_))));
        assert!(env.to_string().contains("the index is gone"), "{env}");
        // Configuration stays a configuration error.
        assert!(matches!(EnvError::from(WebShopError::Config("x".into())), EnvError::Config(_)));
    }
}
