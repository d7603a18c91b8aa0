//! # act-sciworld
//!
//! The official ScienceWorld simulator (the `scienceworld.jar` that PyPI's `scienceworld` 1.2.3
//! ships) driven from Rust, as an act-core [`Environment`](act_core::Environment). The crate starts
//! the jar in its own JVM and speaks py4j's line protocol to it over a local socket, calling the
//! same methods as the official Python wrapper, with no Python at run time. Python is needed at
//! most once, to find the jar inside the installed package.
//!
//! - [`py4j`]: the wire codec and a blocking client.
//! - [`JvmOptions`]: the JVM's lifecycle (free port, start-up handshake, output draining, kill on drop).
//! - [`Simulator`]: typed calls on the jar's `PythonInterface`.
//! - [`SciWorldEnv`]: the environment (restarting a JVM that died), and its factory [`SciWorldFactory`].
//! - [`gold_trajectory`], [`next_action_dataset`]: gold-path trajectories and next-action evaluation items.
//! - [`TASKS`], [`variation_splits`]: the 30 tasks and the train / dev / test variation splits.
//! - [`JarLocation`]: finding the jar ([`JAR_ENV_VAR`], [`PYTHON_ENV_VAR`]).
//!
//! ```
//! use act_sciworld::py4j::{Arg, Reply, decode_reply, encode_call};
//!
//! // What `env.step("open door to kitchen")` sends, and how an answer reads.
//! let call = encode_call("t", "step", &[Arg::Str("open door to kitchen")]);
//! assert_eq!(call, "c\nt\nstep\nsopen door to kitchen\ne\n");
//! let reply = decode_reply("!ysThe door is now open.\n").unwrap();
//! assert_eq!(reply, Reply::Str("The door is now open.".into()));
//! ```
//!
//! With the jar installed (`pip install scienceworld==1.2.3`, Java 17):
//!
//! ```no_run
//! use act_core::{Environment, Split, TaskRef};
//! use act_sciworld::{SciWorldConfig, SciWorldEnv, gold_trajectory};
//!
//! let mut env = SciWorldEnv::new(SciWorldConfig::default().with_admissible_actions(false))?;
//! let reset = env.reset(&TaskRef::index(Split::Dev, 0), 0)?;
//! println!("{}\n{}", reset.task.description, reset.observation);
//! let step = env.step("open door to kitchen")?;
//! println!("{} (score {})", step.observation, step.score);
//!
//! let gold = gold_trajectory(&mut env, "find-animal", 0)?;
//! assert!(gold.outcome.won);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod env;
mod error;
mod gold;
mod locate;
mod process;
pub mod py4j;
mod simulator;
mod tasks;

pub use env::{ENV_NAME, FIRST_ACTION, SciWorldConfig, SciWorldEnv, SciWorldFactory};
pub use error::SciWorldError;
pub use gold::{NextActionItem, gold_trajectories, gold_trajectory, next_action_dataset, next_action_items};
pub use locate::{JAR_ENV_VAR, JarLocation, PYTHON_ENV_VAR};
pub use process::JvmOptions;
pub use simulator::{Simulator, StepResult, UNKNOWN_ACTION};
pub use tasks::{TASKS, TaskOrder, TaskSpec, find_task, topic_number, variation_splits};
