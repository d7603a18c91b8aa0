//! Helpers shared by the act-rs examples: run directories and small report utilities.
//!
//! The crates of the workspace never depend on each other beyond `act-core`; the examples are where they meet, and
//! this library holds what several examples need.

use std::path::{Path, PathBuf};

/// Creates (if needed) and returns the run directory `root/name`, where an example writes every artefact.
pub fn run_dir(root: impl AsRef<Path>, name: &str) -> std::io::Result<PathBuf> {
    let dir = root.as_ref().join(name);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
