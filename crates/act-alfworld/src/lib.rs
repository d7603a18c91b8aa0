//! ALFWorld for Agentic Critical Training: a native text simulator that speaks upstream's text.
//!
//! [`AlfworldEnv`] implements act-core's [`act_core::Environment`] over a pure-Rust ALFWorld: the
//! upstream vocabulary ([`ObjectClass`], [`ReceptacleClass`]: `alfworld/gen/constants.py` as Rust data, with
//! which receptacle may hold which class and the openable / heatable / coolable / cleanable / toggleable /
//! sliceable sets), seeded procedural rooms whose held-out layouts make an out-of-distribution split ([`Scene`],
//! [`Layout`], [`generate_game`]), the world with upstream's preconditions, effects and feedback strings word for
//! word in grammar 0.3 or 0.4 ([`World`], [`Command`], [`WELCOME`], [`NOTHING_HAPPENS`], [`HELP`]), and
//! upstream's handcoded expert strategy ([`Expert`]), which wins every game it generates within the 50-step
//! budget.
//!
//! ```
//! use act_core::{Environment, Split, TaskRef, collect_expert_trajectory};
//! use act_alfworld::{AlfworldConfig, AlfworldEnv, GrammarVersion};
//!
//! let mut env = AlfworldEnv::new(AlfworldConfig::default().with_grammar(GrammarVersion::V03))?;
//! let reset = env.reset(&TaskRef::index(Split::EvalOutOfDistribution, 0), 7)?;
//! assert!(reset.observation.as_str().starts_with("-= Welcome to TextWorld, ALFRED! =-"));
//! assert_eq!(env.step("jump")?.observation.as_str(), "Nothing happens.");
//!
//! let trajectory = collect_expert_trajectory(&mut env, &TaskRef::index(Split::Train, 3), 0)?;
//! assert!(trajectory.outcome.won && trajectory.steps.len() <= 50);
//! # Ok::<(), act_core::EnvError>(())
//! ```
//!
//! # Fidelity
//! Same as upstream: every feedback string, list formatting, entity numbering and listing order,
//! admissible commands (sorted, de-duplicated), "Nothing happens." for anything else (no state
//! change, no step used), the six task types with both goal phrasings, the PDDL preconditions and
//! effects, won/score/done; in loaded games also several receptacles at one location, objects inside movable
//! containers or in several receptacles, drawers that do not open and objects off every list that `slice` still
//! reaches. Different: scenes are procedural rooms from upstream's vocabulary by default, one receptacle per
//! location and each object in one; upstream's game files play natively ([`load_scene`],
//! [`AlfworldConfig::game_dir`]; all 474 solvable games of upstream's valid_seen, valid_unseen and valid_train load,
//! checked step by step against the real engine); the expert reads sub-goal progress from the state and is deterministic. See the crate README.
//!
//! # Training-data augmentation
//! [`InstanceRenaming`] renames objects' instance numbers (`tomato 3` → `tomato 1`) consistently over an episode, so that a
//! model trained on the renamed copies can only get a number right by reading it; [`ClassSwap`] swaps the task's
//! object class with another throughout an episode, so that only matching the task's word against the observation
//! tells when the object is in view.
//!
//! # Bridge to the real ALFWorld
//! [`bridge`] drives the real engine (ALFWorld 0.4.2 on TextWorld 1.7.0, `pip install alfworld==0.4.2
//! "textworld[pddl]==1.7.0"`) through a Python worker whose lifecycle the Rust side owns (spawn, time-outs,
//! restart after a crash, kill on drop): [`bridge::RealAlfworld`] implements the same `Environment` over a user's
//! `ALFWORLD_DATA` games or a directory of PDDL games, and [`bridge::AgentGymClient`] talks to AgentGym-style HTTP
//! servers.
#![warn(missing_docs)]

mod augment;
pub mod bridge;
mod commands;
mod config;
mod env;
mod expert;
mod pddl;
mod scene;
mod split;
mod task;
mod text;
mod vocab;
mod world;

pub use augment::{ClassSwap, InstanceRenaming};
pub use commands::{Command, EntityNames};
pub use config::{AlfworldConfig, GrammarVersion, SearchOrder, UnknownGrammarVersion};
pub use env::{AlfworldEnv, AlfworldFactory};
pub use expert::Expert;
pub use pddl::{load_scene, scene_from_pddl, scene_to_pddl, write_game};
pub use scene::{Layout, ObjectEntity, ReceptacleEntity, RoomType, Scene};
pub use split::generate_game;
pub use task::{Goal, TaskType, UnknownTaskType};
pub use text::{HELP, NOTHING_HAPPENS, WELCOME};
pub use vocab::{ObjectClass, ReceptacleClass};
pub use world::{IndexSet, ObjectState, World, WorldState};
