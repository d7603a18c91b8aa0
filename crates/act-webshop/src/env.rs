//! [`WebShopEnv`]: one shopping session over a shared [`WebShopWorld`], implementing act-core's [`Environment`].

use std::sync::Arc;

use act_core::{
    Action, EnvError, EnvSnapshot, Environment, EnvironmentFactory, Reset, Split, TaskInfo, TaskRef, Transition,
};
use serde::{Deserialize, Serialize};

use crate::action::parse_action;
use crate::expert;
use crate::pages::{self, BACK_TO_SEARCH, BUY_NOW, ClickTarget, NEXT_PAGE, PREV_PAGE, Page, PageKind, SubPage};
use crate::reward::{RewardBreakdown, purchase_reward};
use crate::search::SEARCH_RETURN_N;
use crate::session::{Episode, Session};
use crate::world::WebShopWorld;

/// The admissible action listed for a page with a search bar (the agent supplies its own keywords).
pub const SEARCH_ACTION: &str = "search[<your query>]";
/// The environment's name.
pub const ENV_NAME: &str = "webshop";

/// Per-environment settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvConfig {
    /// Steps per episode before it ends unfinished (WebShop's usual budget is 15).
    pub max_steps: usize,
    /// Show upstream's optional Attributes button on item pages.
    pub show_attrs: bool,
    /// Accept `search[...]` on every page, as upstream's text environment does; by default only where the page
    /// shows a search bar (the start page), as agents are told.
    pub search_anywhere: bool,
}

impl Default for EnvConfig {
    fn default() -> Self {
        EnvConfig { max_steps: 15, show_attrs: false, search_anywhere: false }
    }
}

/// What `/available_actions` reports: upstream's `get_available_actions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AvailableActions {
    /// Whether the page has a search bar.
    pub has_search_bar: bool,
    /// The click texts.
    pub clickables: Vec<String>,
}

/// A native WebShop session.
///
/// Navigation follows upstream's `SimServer.receive`: `search[...]` runs a search and shows page 1; clicks are
/// resolved by name in upstream's order (Buy Now, Back to Search, Next/Prev on results, Prev on sub-pages and item
/// pages, sub-page buttons, then product links and option values). Anything else is a no-op with reward 0.
/// Episodes have no randomness once the goal is fixed (prices are drawn once per world), so `reset`'s seed only
/// labels the episode.
#[derive(Debug, Clone)]
pub struct WebShopEnv {
    world: Arc<WebShopWorld>,
    config: EnvConfig,
    episode: Option<Episode>,
}

impl WebShopEnv {
    /// An environment over `world` with default settings.
    pub fn new(world: Arc<WebShopWorld>) -> Self {
        WebShopEnv { world, config: EnvConfig::default(), episode: None }
    }

    /// Uses `config`.
    #[must_use]
    pub fn with_config(mut self, config: EnvConfig) -> Self {
        self.config = config;
        self
    }

    /// The shared world.
    pub fn world(&self) -> &Arc<WebShopWorld> {
        &self.world
    }

    /// The settings.
    pub fn config(&self) -> &EnvConfig {
        &self.config
    }

    /// The number of goals in every split together.
    pub fn num_goals(&self) -> usize {
        self.world.goals().goals().len()
    }

    /// The task id of global goal `index`.
    pub fn task_id(index: usize) -> String {
        format!("goal-{index}")
    }

    /// Starts an episode on global goal `index` (test goals first, then dev, then train).
    pub fn reset_goal(&mut self, index: usize) -> Result<Reset, EnvError> {
        let (goal, _) = self.world.goal(index).ok_or_else(|| EnvError::UnknownTask(format!("goal index {index}")))?;
        let task = TaskInfo {
            id: Self::task_id(index),
            task_type: goal.category.clone(),
            split: self.world.goals().split_of(index),
            description: goal.instruction_text.clone(),
        };
        let page = pages::start_page(&goal.instruction_text);
        let episode = Episode {
            goal_index: index,
            task: task.clone(),
            session: Session::new(),
            page,
            steps: 0,
            done: false,
            purchase: None,
        };
        let observation = episode.page.observation();
        self.episode = Some(episode);
        Ok(Reset { observation: observation.into(), task, admissible_actions: self.admissible_actions() })
    }

    /// The current page's text observation.
    pub fn observation(&self) -> Option<String> {
        self.episode.as_ref().map(|e| e.page.observation())
    }

    /// The current page.
    pub fn page(&self) -> Option<&Page> {
        self.episode.as_ref().map(|e| &e.page)
    }

    /// Upstream's `get_available_actions` for the current page.
    pub fn available_actions(&self) -> Option<AvailableActions> {
        self.episode
            .as_ref()
            .map(|e| AvailableActions { has_search_bar: e.page.has_search_bar, clickables: e.page.clickable_texts() })
    }

    /// The instruction text the current page's instruction block shows (upstream's `get_instruction_text`):
    /// `Instruction: <text>` on the start page, `Instruction:<text>` on the others.
    pub fn instruction_text(&self) -> Option<String> {
        let episode = self.episode.as_ref()?;
        let separator = if episode.session.kind == PageKind::Start { " " } else { "" };
        Some(format!("Instruction:{separator}{}", episode.task.description))
    }

    /// The product whose page (or sub-page) is open, or that was bought.
    pub fn current_product(&self) -> Option<&crate::catalog::Product> {
        self.episode.as_ref().and_then(|e| e.session.product).and_then(|p| self.world.product(p))
    }

    /// The options chosen on the open product, in the order first chosen.
    pub fn chosen_options(&self) -> &[(String, String)] {
        self.episode.as_ref().map_or(&[], |e| e.session.options.as_slice())
    }

    /// The purchase's reward terms, once bought.
    pub fn purchase(&self) -> Option<&RewardBreakdown> {
        self.episode.as_ref().and_then(|e| e.purchase.as_ref())
    }

    /// Whether the episode has ended.
    pub fn is_done(&self) -> bool {
        self.episode.as_ref().is_some_and(|e| e.done)
    }

    fn render(&self, episode: &Episode) -> Page {
        let instruction = episode.task.description.as_str();
        let session = &episode.session;
        let product = session.product.and_then(|p| self.world.product(p));
        match (session.kind, product) {
            (PageKind::Start, _) => pages::start_page(instruction),
            (PageKind::Results, _) => {
                pages::results_page(instruction, session.page_num, &session.results, |p| self.world.product(p))
            }
            (PageKind::Item, Some(product)) => pages::item_page(instruction, product, self.config.show_attrs),
            (PageKind::Sub(sub), Some(product)) => pages::sub_page(instruction, product, sub),
            (PageKind::Done, _) => {
                let asin = product.map(|p| p.asin.as_str()).unwrap_or("");
                let reward = episode.purchase.as_ref().map_or(0.0, |r| r.reward);
                pages::done_page(asin, &session.options, reward)
            }
            // Item and sub-pages always have a product; fall back to the start page if not.
            (PageKind::Item | PageKind::Sub(_), None) => pages::start_page(instruction),
        }
    }

    /// Applies `action`; returns whether it was valid and the reward.
    fn apply(&self, episode: &mut Episode, action: &str) -> Result<(bool, f64), EnvError> {
        let parsed = parse_action(action);
        let arg = parsed.arg.map(str::to_lowercase);
        let has_search_bar = episode.page.has_search_bar || self.config.search_anywhere;
        match (parsed.name, arg) {
            ("search", Some(keywords)) if has_search_bar && !keywords.is_empty() => {
                let results = self.world.index().search(&keywords, SEARCH_RETURN_N).map_err(|e| EnvError::Engine {
                    context: format!("webshop search `{keywords}`"),
                    source: Box::new(e),
                })?;
                let session = &mut episode.session;
                session.searches.push(keywords.clone());
                session.keywords = keywords;
                session.results = results;
                session.page_num = 1;
                session.product = None;
                session.options.clear();
                session.kind = PageKind::Results;
                Ok((true, 0.0))
            }
            ("click", Some(name)) if name != "search" => {
                let Some(clickable) = episode.page.clickable(&name).cloned() else {
                    return Ok((false, 0.0));
                };
                self.click(episode, &name, &clickable.target)
            }
            _ => Ok((false, 0.0)),
        }
    }

    fn click(&self, episode: &mut Episode, name: &str, target: &ClickTarget) -> Result<(bool, f64), EnvError> {
        let session = &mut episode.session;
        let kind = session.kind;
        if name == BUY_NOW.to_lowercase() {
            let position = session.product.ok_or_else(|| EnvError::Backend("Buy Now without a product".into()))?;
            let (goal, _) = self
                .world
                .goal(episode.goal_index)
                .ok_or_else(|| EnvError::UnknownTask(format!("goal index {}", episode.goal_index)))?;
            let product = self.world.product(position).ok_or_else(|| EnvError::Backend("unknown product".into()))?;
            let chosen: Vec<&str> = session.options.iter().map(|(_, v)| v.as_str()).collect();
            let breakdown =
                purchase_reward(product, goal, self.world.prices()[position], &chosen, self.world.lexicon())
                    .map_err(|e| EnvError::Engine { context: "webshop purchase reward".into(), source: Box::new(e) })?;
            let reward = breakdown.reward;
            episode.purchase = Some(breakdown);
            session.kind = PageKind::Done;
            episode.done = true;
            return Ok((true, reward));
        }
        if name == BACK_TO_SEARCH.to_lowercase() {
            let searches = std::mem::take(&mut session.searches);
            *session = Session::new();
            session.searches = searches;
        } else if name == NEXT_PAGE.to_lowercase() && kind == PageKind::Results {
            session.page_num += 1;
        } else if name == PREV_PAGE.to_lowercase() && kind == PageKind::Results {
            session.page_num = session.page_num.saturating_sub(1).max(1);
        } else if name == PREV_PAGE.to_lowercase() && matches!(kind, PageKind::Sub(_)) {
            session.kind = PageKind::Item;
        } else if name == PREV_PAGE.to_lowercase() && kind == PageKind::Item {
            // Back to the same results page; upstream's search_results clears the product and options.
            session.kind = PageKind::Results;
            session.product = None;
            session.options.clear();
        } else if let Some(sub) = SubPage::from_click(name) {
            session.kind = PageKind::Sub(sub);
        } else {
            match target {
                ClickTarget::Product(position) => {
                    session.product = Some(*position);
                    session.kind = PageKind::Item;
                }
                ClickTarget::OptionValue { name: option, value } => {
                    match session.options.iter_mut().find(|(n, _)| n == option) {
                        Some(entry) => entry.1 = value.clone(),
                        None => session.options.push((option.clone(), value.clone())),
                    }
                    session.kind = PageKind::Item;
                }
                // A button whose name none of the rules above takes (none exists on upstream's pages).
                ClickTarget::Button(_) | ClickTarget::SearchButton => return Ok((false, 0.0)),
            }
        }
        Ok((true, 0.0))
    }
}

impl Environment for WebShopEnv {
    fn name(&self) -> &str {
        ENV_NAME
    }

    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        self.world.goals().split_range(split).map(|r| r.len()).ok_or(EnvError::UnsupportedSplit(split))
    }

    fn reset(&mut self, task: &TaskRef, _seed: u64) -> Result<Reset, EnvError> {
        let index = match task {
            TaskRef::Index { split, index } => {
                let range = self.world.goals().split_range(*split).ok_or(EnvError::UnsupportedSplit(*split))?;
                if *index >= range.len() {
                    return Err(EnvError::UnknownTask(format!(
                        "index {index} of split `{split}`, which has {} goals",
                        range.len()
                    )));
                }
                range.start + index
            }
            TaskRef::Id(id) => id
                .strip_prefix("goal-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n < self.num_goals())
                .ok_or_else(|| EnvError::UnknownTask(format!("`{id}` (ids look like goal-12)")))?,
        };
        self.reset_goal(index)
    }

    fn step(&mut self, action: &str) -> Result<Transition, EnvError> {
        let mut episode = match self.episode.take() {
            Some(e) if !e.done => e,
            other => {
                self.episode = other;
                return Err(EnvError::NotReset);
            }
        };
        let outcome = self.apply(&mut episode, action);
        let (valid, reward) = match outcome {
            Ok(v) => v,
            Err(e) => {
                self.episode = Some(episode);
                return Err(e);
            }
        };
        episode.steps += 1;
        if valid {
            episode.page = self.render(&episode);
        }
        let truncated = !episode.done && episode.steps >= self.config.max_steps;
        if truncated {
            episode.done = true;
        }
        let mut info = serde_json::Map::new();
        info.insert("valid".into(), valid.into());
        info.insert("steps".into(), episode.steps.into());
        info.insert("truncated".into(), truncated.into());
        let (won, score) = match &episode.purchase {
            Some(purchase) => {
                info.insert(
                    "purchased_asin".into(),
                    self.world
                        .product(episode.session.product.unwrap_or(usize::MAX))
                        .map(|p| p.asin.clone())
                        .unwrap_or_default()
                        .into(),
                );
                info.insert("reward_terms".into(), serde_json::Value::Object(purchase.to_info()));
                (purchase.success(), purchase.reward)
            }
            None => (false, 0.0),
        };
        info.insert("success".into(), won.into());
        let observation = episode.page.observation();
        let done = episode.done;
        self.episode = Some(episode);
        Ok(Transition {
            observation: observation.into(),
            reward,
            done,
            won,
            score,
            admissible_actions: self.admissible_actions(),
            info,
        })
    }

    fn admissible_actions(&self) -> Option<Vec<Action>> {
        let episode = self.episode.as_ref()?;
        if episode.done {
            return Some(Vec::new());
        }
        let mut actions = Vec::new();
        if episode.page.has_search_bar || self.config.search_anywhere {
            actions.push(Action::from(SEARCH_ACTION));
        }
        actions.extend(
            episode
                .page
                .clickables
                .iter()
                .filter(|c| c.text != "search")
                .map(|c| Action::from(format!("click[{}]", c.text))),
        );
        Some(actions)
    }

    fn task(&self) -> Option<&TaskInfo> {
        self.episode.as_ref().map(|e| &e.task)
    }

    fn step_budget(&self) -> usize {
        self.config.max_steps
    }

    fn expert_action(&mut self) -> Result<Option<Action>, EnvError> {
        let Some(episode) = self.episode.as_ref() else { return Err(EnvError::NotReset) };
        if episode.done {
            return Ok(None);
        }
        Ok(Some(expert::next_action(&self.world, episode).into()))
    }

    /// The session (goal, page, search results, chosen options, step count), cloned; the shared world is not.
    fn snapshot(&self) -> Option<EnvSnapshot> {
        let episode = self.episode.clone()?;
        Some(EnvSnapshot::new(ENV_NAME, (Arc::clone(&self.world), episode)))
    }

    fn restore(&mut self, snapshot: &EnvSnapshot) -> Result<(), EnvError> {
        let (world, episode) = snapshot.state::<(Arc<WebShopWorld>, Episode)>()?;
        if !Arc::ptr_eq(world, &self.world) {
            return Err(EnvError::Config(
                "the snapshot was taken over another WebShop world (catalogue and goals); restore it into an \
                 environment of the same factory"
                    .into(),
            ));
        }
        self.episode = Some(episode.clone());
        Ok(())
    }
}

/// Makes [`WebShopEnv`]s that share one world.
#[derive(Debug, Clone)]
pub struct WebShopFactory {
    world: Arc<WebShopWorld>,
    config: EnvConfig,
}

impl WebShopFactory {
    /// A factory over `world` with `config`.
    pub fn new(world: Arc<WebShopWorld>, config: EnvConfig) -> Self {
        WebShopFactory { world, config }
    }
}

impl EnvironmentFactory for WebShopFactory {
    type Env = WebShopEnv;

    fn make(&self) -> Result<WebShopEnv, EnvError> {
        Ok(WebShopEnv::new(Arc::clone(&self.world)).with_config(self.config))
    }
}
