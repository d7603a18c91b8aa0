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

/// A named stage of an example, timed and reported on one line when done.
pub struct Stage {
    name: String,
    started: std::time::Instant,
}

impl Stage {
    /// Announces and starts timing `name`.
    pub fn start(name: &str) -> Stage {
        println!("- {name} ...");
        Stage { name: name.to_owned(), started: std::time::Instant::now() }
    }

    /// Reports the stage as done, with a short summary.
    pub fn done(self, summary: &str) {
        println!("  {}: {summary} ({:.2} s)", self.name, self.started.elapsed().as_secs_f64());
    }
}
