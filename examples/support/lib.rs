//! Helpers shared by the act-rs examples and the root integration tests: run directories, stage reporting, and the
//! pipelines the examples run.
//!
//! The crates of the workspace never depend on each other beyond `act-core`; the examples are where they meet, and
//! this library holds what several examples (and the tests that check them) need:
//!
//! - [`pipeline`]: ACT's data pipeline with scripted policies (expert trajectories, pairs, training sets);
//! - [`experiment`]: the whole method on one benchmark and seed: tokenizer, π₀, pairs, ACT, IL, RL and the
//!   evaluation of every method of the paper's table, resumable stage by stage ([`stages`]);
//! - [`online`]: on-line RL in the environment (episode-level GRPO, GiGPO, ActGuide-RL, ICRL) as a resumable stage;
//!   [`guided`]: ActGuide-RL's guided rollouts; [`icrl`]: ICRL's critiques and retries;
//! - [`dart`]: expert-relabelled episodes, with injected mistakes (DART) or π₀'s own (DAgger's mixture), optional
//!   additions to IL's data; [`early`]: Early Experience's world-model branches and samples (the `IWM -> IL` method);
//! - [`config`]: what an experiment runs, from defaults or a JSON file; [`prompts`]: compact and conversation prompts for tiny
//!   models; [`seeds`]: results over several seeds with paired comparisons; [`cli`]: the examples' command line;
//!   [`synthetic`]: workloads with random weights for the speed and memory examples.

use std::path::{Path, PathBuf};

pub mod augment;
pub mod cli;
pub mod config;
pub mod dart;
pub mod early;
pub mod experiment;
pub mod guided;
pub mod icrl;
pub mod online;
pub mod pipeline;
pub mod prompts;
pub mod seeds;
pub mod stages;
pub mod synthetic;
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
    quiet: bool,
}

impl Stage {
    /// Announces and starts timing `name`.
    pub fn start(name: &str) -> Stage {
        Self::start_quiet(name, false)
    }

    /// Starts timing `name`, printing nothing when `quiet`.
    pub fn start_quiet(name: &str, quiet: bool) -> Stage {
        if !quiet {
            println!("- {name} ...");
        }
        Stage { name: name.to_owned(), started: std::time::Instant::now(), quiet }
    }

    /// Reports the stage as done, with a short summary.
    pub fn done(self, summary: &str) {
        if !self.quiet {
            println!("  {}: {summary} ({:.2} s)", self.name, self.started.elapsed().as_secs_f64());
        }
    }
}
