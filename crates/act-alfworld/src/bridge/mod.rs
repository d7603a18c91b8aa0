//! The real ALFWorld behind the act-core [`Environment`](act_core::Environment) trait.
//!
//! Two ways in:
//! - [`RealAlfworld`] runs the real engine (ALFWorld 0.4.2 on TextWorld 1.7's PDDL backend) in a Python worker that
//!   speaks JSON lines over stdin/stdout. The Rust side owns the process: it starts it with `$ACT_PYTHON` (default
//!   `python3`), bounds every request with a time-out, kills it on drop, and after a crash or time-out fails the
//!   request in flight with a clear error and starts a fresh worker at the next reset. Games come from a
//!   [`GameSet`]: a directory of `.tw-pddl` games, or a user's `ALFWORLD_DATA` download. Install the engine with
//!   `pip install alfworld==0.4.2 "textworld[pddl]==1.7.0"`; no data download is needed for games you write.
//! - [`AgentGymClient`] talks to an AgentGym-style ALFWorld HTTP server (`/create`, `/reset`, `/step`).
//!
//! Both grammar versions are available ([`BridgeGrammar`]): the worker rewrites a game's grammar to the 0.3 command
//! set (`put O in/on R`, arrivals at "loc N") or the 0.4 one (`move O to R`, `help`). The handcoded expert runs
//! the way the 0.3.3 expert did in either version (the 0.4.2 expert loses track of what it carries after a `move`).
//!
//! ```no_run
//! use act_alfworld::bridge::{GameSet, RealAlfworld, RealAlfworldConfig};
//! use act_core::{Environment, Split, TaskRef, collect_expert_trajectory};
//!
//! let games = GameSet::from_dir("my-games/", Split::Train)?;
//! let mut env = RealAlfworld::new(RealAlfworldConfig::default(), games)?;
//! let trajectory = collect_expert_trajectory(&mut env, &TaskRef::index(Split::Train, 0), 1)?;
//! println!("won: {} in {} steps", trajectory.outcome.won, trajectory.outcome.steps_used);
//! # Ok::<(), act_core::EnvError>(())
//! ```

mod games;
mod http;
mod real;
mod worker;

pub use games::{ALFWORLD_JSON_DIR, ALFWORLD_SPLIT_DIRS, GameEntry, GameSet, discover_games};
pub use http::{AgentGymClient, AgentGymConfig};
pub use real::{BridgeGrammar, EngineInfo, RealAlfworld, RealAlfworldConfig, RealAlfworldFactory, probe_engine};
pub use worker::{PROTOCOL_VERSION, RequestError, WORKER_SCRIPT, Worker, WorkerCommand, default_python};
