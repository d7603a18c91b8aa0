//! # act-webshop
//!
//! A native WebShop: a seeded catalogue of realistic products, goals phrased like upstream's human instructions,
//! BM25 search (tantivy), pages and clickables in upstream's text format, upstream's purchase reward, an expert,
//! and an HTTP bridge speaking the AgentGym WebShop API in both directions.
//!
//! ```
//! use act_core::{Environment, Split, TaskRef, collect_expert_trajectory};
//! use act_webshop::{WebShopEnv, WebShopWorld};
//!
//! let world = WebShopWorld::generate(300, 7).unwrap();
//! let mut env = WebShopEnv::new(world);
//! let reset = env.reset(&TaskRef::index(Split::Test, 0), 0).unwrap();
//! assert!(reset.observation.as_str().starts_with("WebShop [SEP] Instruction: [SEP] "));
//!
//! let transition = env.step("click[buy now]").unwrap(); // not on this page: a no-op
//! assert_eq!(transition.reward, 0.0);
//! assert!(!transition.done);
//!
//! let trajectory = collect_expert_trajectory(&mut env, &TaskRef::index(Split::Test, 0), 0).unwrap();
//! assert!(trajectory.steps.len() <= env.step_budget());
//! assert_eq!(trajectory.steps.last().unwrap().action.as_str(), "click[buy now]");
//! ```
#![warn(missing_docs)]

pub mod action;
pub mod catalog;
pub mod env;
pub mod error;
pub mod expert;
pub mod fuzzy;
pub mod generate;
pub mod goals;
pub mod http;
pub mod pages;
pub mod reward;
pub mod search;
mod session;
mod vocab;
pub mod world;

pub use catalog::{Catalogue, Product, ProductOption};
pub use env::{AvailableActions, EnvConfig, WebShopEnv, WebShopFactory};
pub use error::WebShopError;
pub use generate::CatalogueConfig;
pub use goals::{Goal, GoalConfig, GoalSet, SplitSizes};
pub use reward::{NounLexicon, RewardBreakdown, purchase_reward};
pub use search::SearchIndex;
pub use world::{WebShopWorld, WorldConfig};
