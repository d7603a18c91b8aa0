//! # act-webshop
//!
//! A native WebShop: a seeded catalogue of realistic products, goals phrased like upstream's human instructions,
//! BM25 search (tantivy), pages and clickables in upstream's text format, upstream's purchase reward, an expert,
//! and an HTTP bridge speaking the AgentGym WebShop API in both directions ([`http`]).
//!
//! Pages are shown as upstream's text mode shows them: the visible texts of the rendered page, stripped and joined
//! with [`SEP`], in the order of upstream's templates (`search_page.html`, `results_page.html`, `item_page.html`,
//! the sub-pages and `done_page.html`); the clickables follow `get_available_actions`: buttons and product links
//! lower-cased, then option values as they are, one entry per distinct text.
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

mod action;
mod catalog;
mod env;
mod error;
mod expert;
pub mod fuzzy;
mod generate;
mod goals;
pub mod http;
mod pages;
mod reward;
mod search;
mod session;
mod vocab;
mod world;

pub use action::{ParsedAction, parse_action};
pub use catalog::{BulletText, Catalogue, CustomizationOptions, OptionContent, Product, ProductOption, RawProduct};
pub use env::{AvailableActions, ENV_NAME, EnvConfig, SEARCH_ACTION, WebShopEnv, WebShopFactory};
pub use error::WebShopError;
pub use expert::instruction_query;
pub use generate::CatalogueConfig;
pub use goals::{Goal, GoalConfig, GoalSet, Opener, Phrasing, SplitSizes};
pub use pages::{
    BACK_TO_SEARCH, BUY_NOW, ClickTarget, Clickable, NEXT_PAGE, PREV_PAGE, PRODUCT_WINDOW, Page, SEP, SubPage,
};
pub use reward::{NounLexicon, RewardBreakdown, purchase_reward};
pub use search::{SEARCH_RETURN_N, SearchIndex};
pub use world::{WebShopWorld, WorldConfig};
