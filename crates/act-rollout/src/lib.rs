//! # act-rollout
//!
//! Play, for training and for evaluation: an [`Actor`] chooses actions, the [`Rollout`] driver plays
//! [`EpisodeSpec`]s with it on environments from any act-core
//! [`EnvironmentFactory`](act_core::EnvironmentFactory) (native ALFWorld and WebShop, the ScienceWorld jar, the
//! bridges), one episode per worker or many in lockstep (one batched policy call per step of them all), and
//! returns every episode as a [`PlayedEpisode`]: the act-core [`Trajectory`](act_core::Trajectory) it made and one
//! trainable [`Turn`] per step (the completion with its token ids and sampled log-probs when the policy returns
//! them, the action sent, its validity and reward).
//!
//! Actors: the environment's expert ([`ExpertActor`]), a uniformly random admissible action ([`RandomActor`]),
//! any act-core [`Policy`](act_core::Policy) behind a prompt ([`PolicyActor`]), DAgger's mixture of the expert and a
//! learner ([`ExpertMixture`]), or your own [`Actor`]. [`branch_outcomes`] takes another action than the recorded one at
//! states of recorded episodes and returns what followed (Early Experience's alternatives).
//! [`EpisodeSpec::groups`] makes groups of G episodes on the same task from the same seed, with group keys, for
//! GRPO and GiGPO. Invalid actions are sent as they are (the benchmarks' protocol) or snapped to the nearest
//! admissible action ([`InvalidActionHandling`]); a policy's proposal that the environment already rejected in the
//! current state can be sampled again instead of sent ([`RejectedRetry`]). Guided rollouts (ActGuide-RL) show a hint of reference actions
//! ([`PolicyActor::with_hints`], [`search_hint_length`]). In-context training's meta-environment
//! ([`MetaEnvironment`]) plays batches of tasks under a system prompt and rewards the fraction won. Everything is
//! deterministic in the seeds and independent of the thread count (see [`Rollout`] for how calls are seeded).
//!
//! ```
//! use act_alfworld::{AlfworldConfig, AlfworldEnv};
//! use act_core::{EnvError, PromptConfig, Prompter, RandomAdmissiblePolicy, Split, TaskRef};
//! use act_rollout::{EpisodeSpec, ExpertActor, PolicyActor, Rollout, RolloutConfig};
//!
//! let factory = || AlfworldEnv::new(AlfworldConfig::default());
//!
//! // The expert on the first 4 in-distribution games, 4 at a time in lockstep.
//! let specs = EpisodeSpec::split(Split::EvalInDistribution, 4, 0);
//! let config = RolloutConfig::default().with_batch_size(4);
//! let expert = Rollout::new(&factory, &ExpertActor).with_config(config.clone()).play(&specs)?;
//! assert!(expert.iter().all(|episode| episode.won()));
//!
//! // Two groups of 3 episodes of a policy (a random one here; an act-model `ModelPolicy` with
//! // `PolicyActor::with_tokens(true)` also records token ids and log-probs).
//! let tasks = [TaskRef::index(Split::Train, 0), TaskRef::index(Split::Train, 1)];
//! let groups = EpisodeSpec::groups(&tasks, 3, 7);
//! let random = RandomAdmissiblePolicy::new();
//! let actor = PolicyActor::new(&random, Prompter::new(PromptConfig::default()).unwrap());
//! let played = Rollout::new(&factory, &actor).with_config(config.with_step_budget(10)).play(&groups)?;
//! assert_eq!(played.len(), 6);
//! for episode in &played {
//!     assert_eq!(episode.turns.len(), episode.trajectory.steps.len());
//!     assert!(episode.turns.len() <= 10);
//!     // Members of a group start in the same room.
//!     let first = &played[episode.spec.group * 3].trajectory.steps[0].observation;
//!     assert_eq!(&episode.trajectory.steps[0].observation, first);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod actor;
mod branch;
mod driver;
mod episode;
mod error;
mod guidance;
mod invalid;
mod meta;
mod mixture;
mod retry;
mod spec;

pub use actor::{Actor, Decision, ExpertActor, PolicyActor, RandomActor, View};
pub use branch::{Branch, BranchRequest, branch_outcomes};
pub use driver::{Rollout, RolloutConfig};
pub use episode::{PlayedEpisode, Turn};
pub use error::{ActError, RolloutError};
pub use guidance::{HintSearch, HintSearcher, search_hint_length};
pub use invalid::{InvalidActionHandling, nearest_admissible};
pub use meta::{
    LessonFollower, MetaBatch, MetaEnvConfig, MetaEnvironment, MetaOutcome, MetaStep, PolicyFollower, PromptFollower,
    TaskOrder, parse_lessons,
};
pub use mixture::ExpertMixture;
pub use retry::RejectedRetry;
pub use spec::EpisodeSpec;
