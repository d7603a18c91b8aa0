//! Navigation, grammar and episode rules of the native WebShop, checked against upstream's behaviour.

use std::sync::{Arc, OnceLock};

use act_core::{EnvError, Environment, EnvironmentFactory, Split, TaskRef, collect_expert_trajectory};
use act_webshop::SEARCH_ACTION;
use act_webshop::{EnvConfig, WebShopEnv, WebShopFactory, WebShopWorld};

fn world() -> Arc<WebShopWorld> {
    static WORLD: OnceLock<Arc<WebShopWorld>> = OnceLock::new();
    Arc::clone(WORLD.get_or_init(|| WebShopWorld::generate(400, 11).unwrap()))
}

fn env_at(goal: usize) -> WebShopEnv {
    let mut env = WebShopEnv::new(world());
    env.reset(&TaskRef::index(Split::Test, goal), 0).unwrap();
    env
}

/// The target product's title, for a search that finds it.
fn target_title(env: &WebShopEnv, goal: usize) -> (String, String) {
    let goal = &env.world().goals().goals()[goal];
    let product = env.world().catalogue().by_asin(&goal.asin).unwrap();
    (product.title.to_lowercase(), product.asin.to_lowercase())
}

#[test]
fn splits_and_task_ids() {
    let env = WebShopEnv::new(world());
    assert_eq!(env.num_tasks(Split::Test).unwrap(), 500);
    assert_eq!(env.num_tasks(Split::Dev).unwrap(), 300);
    assert_eq!(env.num_tasks(Split::Train).unwrap(), 0);
    assert!(matches!(env.num_tasks(Split::EvalInDistribution), Err(EnvError::UnsupportedSplit(_))));
    let mut env = WebShopEnv::new(world());
    let reset = env.reset(&TaskRef::index(Split::Dev, 3), 0).unwrap();
    assert_eq!(reset.task.id, "goal-503");
    assert_eq!(reset.task.split, Split::Dev);
    let again = env.reset(&TaskRef::Id("goal-503".into()), 9).unwrap();
    assert_eq!(again.task, reset.task);
    assert!(matches!(env.reset(&TaskRef::index(Split::Test, 500), 0), Err(EnvError::UnknownTask(_))));
    assert!(matches!(env.reset(&TaskRef::Id("nope".into()), 0), Err(EnvError::UnknownTask(_))));
}

#[test]
fn step_before_reset_is_an_error() {
    let mut env = WebShopEnv::new(world());
    assert!(matches!(env.step("search[x]"), Err(EnvError::NotReset)));
    assert!(env.admissible_actions().is_none());
    assert!(env.expert_action().is_err());
}

#[test]
fn start_page_and_admissible_actions() {
    let mut env = WebShopEnv::new(world());
    let reset = env.reset(&TaskRef::index(Split::Test, 0), 0).unwrap();
    let instruction = &reset.task.description;
    assert_eq!(reset.observation.as_str(), format!("WebShop [SEP] Instruction: [SEP] {instruction} [SEP] Search"));
    assert_eq!(reset.admissible_actions.unwrap(), vec![act_core::Action::from(SEARCH_ACTION)]);
    assert_eq!(env.instruction_text().unwrap(), format!("Instruction: {instruction}"));
    assert!(instruction.contains(", and price lower than "));
}

#[test]
fn invalid_actions_are_no_ops() {
    let mut env = env_at(1);
    let before = env.observation().unwrap();
    for action in ["click[buy now]", "click[search]", "search[]", "buy", "click[next >]", "", "search[a", "CLICK[x]"] {
        let t = env.step(action).unwrap();
        assert_eq!(t.observation.as_str(), before, "{action}");
        assert_eq!(t.reward, 0.0);
        assert!(!t.done);
        assert_eq!(t.info["valid"], false, "{action}");
    }
    // Search is only accepted where the page has a search bar.
    env.step("search[socks]").unwrap();
    let results = env.observation().unwrap();
    let t = env.step("search[shoes]").unwrap();
    assert_eq!(t.observation.as_str(), results);
    assert_eq!(t.info["valid"], false);
}

#[test]
fn upstream_search_anywhere_option() {
    let mut env = WebShopEnv::new(world()).with_config(EnvConfig { search_anywhere: true, ..EnvConfig::default() });
    env.reset(&TaskRef::index(Split::Test, 1), 0).unwrap();
    env.step("search[socks]").unwrap();
    let t = env.step("search[coffee beans]").unwrap();
    assert_eq!(t.info["valid"], true);
    assert!(env.admissible_actions().unwrap().contains(&SEARCH_ACTION.into()));
}

#[test]
fn results_paging_and_navigation() {
    let mut env = env_at(2);
    let t = env.step("search[black]").unwrap();
    let obs = t.observation.as_str();
    assert!(obs.contains("[SEP] Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] "), "{obs}");
    assert!(!obs.contains("< Prev"));
    let admissible = t.admissible_actions.unwrap();
    assert_eq!(admissible[0].as_str(), "click[back to search]");
    assert_eq!(admissible[1].as_str(), "click[next >]");
    assert_eq!(admissible.len(), 2 + 10);
    let t = env.step("click[next >]").unwrap();
    assert!(t.observation.as_str().contains("Page 2 (Total results: 50) [SEP] < Prev [SEP] Next >"));
    let t = env.step("click[< prev]").unwrap();
    assert!(t.observation.as_str().contains("Page 1 (Total results: 50) [SEP] Next >"));
    // Paging past the last result shows an empty page, as upstream.
    for _ in 0..5 {
        env.step("click[next >]").unwrap();
    }
    let page6 = env.observation().unwrap();
    assert!(page6.ends_with("Page 6 (Total results: 50) [SEP] < Prev [SEP] Next >"), "{page6}");
    let t = env.step("click[back to search]").unwrap();
    assert!(t.observation.as_str().starts_with("WebShop [SEP] Instruction:"));
}

#[test]
fn item_options_sub_pages_and_purchase() {
    let goal_index = 3;
    let mut env = env_at(goal_index);
    let (title, asin) = target_title(&env, goal_index);
    let t = env.step(&format!("search[{title}]")).unwrap();
    assert!(t.observation.as_str().to_lowercase().contains(&asin));
    let t = env.step(&format!("click[{asin}]")).unwrap();
    let item = t.observation.as_str().to_owned();
    assert!(item.contains("[SEP] Back to Search [SEP] < Prev [SEP] "));
    assert!(item.ends_with("[SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"));
    assert!(item.contains("[SEP] Rating: N.A. [SEP]"));
    // Sub-pages and back.
    let t = env.step("click[features]").unwrap();
    assert_eq!(
        t.admissible_actions.unwrap().iter().map(|a| a.as_str()).collect::<Vec<_>>(),
        vec!["click[back to search]", "click[< prev]"]
    );
    let t = env.step("click[< prev]").unwrap();
    assert_eq!(t.observation.as_str(), item);
    // Select every option value the goal asks for, then buy: reward 1.
    let goal = env.world().goals().goals()[goal_index].clone();
    for value in &goal.goal_options {
        let t = env.step(&format!("click[{value}]")).unwrap();
        assert_eq!(t.info["valid"], true, "{value}");
    }
    let t = env.step("click[buy now]").unwrap();
    assert!(t.done);
    assert_eq!(t.reward, 1.0);
    assert!(t.won);
    assert_eq!(t.score, 1.0);
    assert!(t.observation.as_str().starts_with("Thank you for shopping with us!"));
    assert!(t.observation.as_str().contains("Your score (min 0.0, max 1.0) [SEP] 1.0"));
    assert_eq!(t.info["reward_terms"]["r_type"], 1.0);
    assert_eq!(t.admissible_actions.unwrap(), vec![]);
    assert!(matches!(env.step("click[buy now]"), Err(EnvError::NotReset)));
}

#[test]
fn prev_from_item_returns_to_same_results_page_and_clears_options() {
    let mut env = env_at(4);
    env.step("search[shirt]").unwrap();
    env.step("click[next >]").unwrap();
    let page2 = env.observation().unwrap();
    let asin = env.page().unwrap().clickables.iter().find(|c| c.text.starts_with("b0")).unwrap().text.clone();
    env.step(&format!("click[{asin}]")).unwrap();
    let first_value = env.page().unwrap().clickables.iter().skip(6).map(|c| c.text.clone()).next();
    if let Some(value) = first_value {
        env.step(&format!("click[{value}]")).unwrap();
    }
    let t = env.step("click[< prev]").unwrap();
    assert_eq!(t.observation.as_str(), page2);
    // Buying right after re-opening the product counts no option.
    env.step(&format!("click[{asin}]")).unwrap();
    let t = env.step("click[buy now]").unwrap();
    assert!(t.done);
    assert_eq!(t.info["reward_terms"]["num_option_matches"], 0);
}

#[test]
fn budget_ends_the_episode() {
    let mut env = WebShopEnv::new(world()).with_config(EnvConfig { max_steps: 3, ..EnvConfig::default() });
    env.reset(&TaskRef::index(Split::Test, 5), 0).unwrap();
    assert!(!env.step("look").unwrap().done);
    assert!(!env.step("look").unwrap().done);
    let t = env.step("look").unwrap();
    assert!(t.done);
    assert!(!t.won);
    assert_eq!(t.info["truncated"], true);
    assert_eq!(env.step_budget(), 3);
}

#[test]
fn expert_trajectory_in_act_core_format() {
    let factory = WebShopFactory::new(world(), EnvConfig::default());
    let mut env = factory.make().unwrap();
    let trajectory = collect_expert_trajectory(&mut env, &TaskRef::index(Split::Test, 7), 3).unwrap();
    assert_eq!(trajectory.env, "webshop");
    assert_eq!(trajectory.task_id, "goal-7");
    assert!(trajectory.steps[0].action.as_str().starts_with("search["));
    assert_eq!(trajectory.steps.last().unwrap().action.as_str(), "click[buy now]");
    for step in &trajectory.steps[1..] {
        assert!(step.admissible_actions.contains(&step.action), "{} not admissible", step.action);
    }
    assert!(trajectory.outcome.won);
    assert_eq!(trajectory.outcome.score, 1.0);
}
