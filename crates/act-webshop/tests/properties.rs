//! Property tests: determinism from seeds, robustness to any action text, and pages whose clickables are exactly
//! the clickable texts the observation shows.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use act_core::{Environment, Split, TaskRef};
use act_webshop::Catalogue;
use act_webshop::{BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, SEP, SubPage};
use act_webshop::{CatalogueConfig, GoalConfig, GoalSet, WebShopEnv, WebShopWorld};
use proptest::prelude::*;

fn world() -> Arc<WebShopWorld> {
    static WORLD: OnceLock<Arc<WebShopWorld>> = OnceLock::new();
    Arc::clone(WORLD.get_or_init(|| WebShopWorld::generate(300, 21).unwrap()))
}

/// One move of a random walk: an admissible action by index, a search, or arbitrary text.
#[derive(Debug, Clone)]
enum Move {
    Admissible(usize),
    Search(String),
    Raw(String),
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    prop::collection::vec(
        prop_oneof![
            6 => any::<usize>().prop_map(Move::Admissible),
            2 => "[a-z ]{1,20}".prop_map(Move::Search),
            1 => any::<String>().prop_map(Move::Raw),
            1 => "(click|search)\\[[ -~]{0,12}\\][ -~]{0,3}".prop_map(Move::Raw),
        ],
        0..25,
    )
}

fn action_for(env: &WebShopEnv, m: &Move) -> String {
    match m {
        Move::Admissible(i) => {
            let actions = env.admissible_actions().unwrap_or_default();
            if actions.is_empty() {
                "click[buy now]".to_owned()
            } else {
                let a = actions[i % actions.len()].as_str().to_owned();
                if a.starts_with("search[") { "search[socks]".to_owned() } else { a }
            }
        }
        Move::Search(q) => format!("search[{q}]"),
        Move::Raw(s) => s.clone(),
    }
}

/// Runs `moves` on goal `goal`, returning (observation, reward, done) per step.
fn transcript(world: Arc<WebShopWorld>, goal: usize, moves: &[Move]) -> Vec<(String, f64, bool)> {
    let mut env = WebShopEnv::new(world);
    env.reset(&TaskRef::index(Split::Test, goal), 0).unwrap();
    let mut out = Vec::new();
    for m in moves {
        if env.is_done() {
            break;
        }
        let action = action_for(&env, m);
        let t = env.step(&action).unwrap();
        out.push((t.observation.0, t.reward, t.done));
    }
    out
}

/// Checks that the page's clickables are exactly the clickable texts its observation shows.
fn check_page(env: &WebShopEnv) -> Result<(), TestCaseError> {
    let page = env.page().unwrap();
    let observation = page.observation();
    let parts: Vec<&str> = observation.split(SEP).collect();
    let shown: HashSet<String> = parts.iter().map(|p| p.to_lowercase()).collect();
    let clickables: HashSet<String> = page.clickable_texts().into_iter().collect();
    prop_assert_eq!(clickables.len(), page.clickables.len(), "clickables are distinct");
    // Every clickable is shown.
    for c in &clickables {
        prop_assert!(shown.contains(c), "clickable `{}` not in `{}`", c, observation);
    }
    // Everything shown that is clickable on upstream's pages is a clickable.
    let world = env.world();
    let catalogue: &Catalogue = world.catalogue();
    let buttons = [
        BACK_TO_SEARCH,
        PREV_PAGE,
        NEXT_PAGE,
        BUY_NOW,
        "Search",
        SubPage::Description.label(),
        SubPage::Features.label(),
        SubPage::Reviews.label(),
    ];
    let is_item = observation.ends_with(BUY_NOW);
    let item_values: HashSet<String> = if is_item {
        let product = env.current_product().unwrap();
        product.options.iter().flat_map(|o| o.values.iter().cloned()).collect()
    } else {
        HashSet::new()
    };
    let is_results = parts.iter().any(|p| p.starts_with("Page ") && p.contains("(Total results: "));
    for (i, part) in parts.iter().enumerate() {
        // The instruction (part 1 or 2) is text, whatever it says.
        if i <= 2 {
            continue;
        }
        let lower = part.to_lowercase();
        let expected = buttons.contains(part)
            || (is_results && catalogue.by_asin(part).is_some() && parts.get(i + 1).is_some())
            || item_values.contains(*part);
        if expected {
            prop_assert!(clickables.contains(&lower), "`{}` shown but not clickable in `{}`", part, observation);
        }
    }
    // And the admissible actions are the clickables (less the search button) plus search where there is a bar.
    let admissible = env.admissible_actions().unwrap();
    let expected = clickables.iter().filter(|c| *c != "search").count() + usize::from(page.has_search_bar);
    prop_assert_eq!(admissible.len(), expected);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn same_seed_same_catalogue_and_goals(seed in 0u64..1000, n in 20usize..120) {
        let a = CatalogueConfig::new(n, seed).generate().unwrap();
        let b = CatalogueConfig::new(n, seed).generate().unwrap();
        prop_assert_eq!(a.products(), b.products());
        let prices_a = a.draw_prices(seed);
        prop_assert_eq!(&prices_a, &b.draw_prices(seed));
        let goals_a = GoalSet::sample(&a, &prices_a, &GoalConfig::with_seed(seed)).unwrap();
        let goals_b = GoalSet::sample(&b, &prices_a, &GoalConfig::with_seed(seed)).unwrap();
        prop_assert_eq!(goals_a, goals_b);
    }

    #[test]
    fn same_moves_same_transcript(goal in 0usize..500, moves in moves()) {
        let a = transcript(world(), goal, &moves);
        let b = transcript(world(), goal, &moves);
        prop_assert_eq!(a, b);
    }

    #[test]
    fn a_restored_snapshot_steps_as_a_replay_to_the_same_state_does(
        goal in 0usize..500,
        moves in moves(),
        cut in any::<prop::sample::Index>(),
        after in moves(),
    ) {
        let cut = cut.index(moves.len() + 1);
        let mut walked = WebShopEnv::new(world());
        walked.reset(&TaskRef::index(Split::Test, goal), 0).unwrap();
        let (mut prefix, mut snapshot) = (Vec::new(), None);
        for (i, m) in moves.iter().enumerate() {
            if walked.is_done() { break; }
            if i == cut { snapshot = walked.snapshot(); }
            let action = action_for(&walked, m);
            walked.step(&action).unwrap();
            if i < cut { prefix.push(action); }
        }
        // A walk that ended (or a cut past its end) is snapshotted at its end, where the prefix is every step.
        let snapshot = match snapshot { Some(s) => s, None => walked.snapshot().unwrap() };
        let mut replayed = WebShopEnv::new(world());
        replayed.reset(&TaskRef::index(Split::Test, goal), 0).unwrap();
        for action in &prefix {
            replayed.step(action).unwrap();
        }
        walked.restore(&snapshot).unwrap();
        prop_assert_eq!(walked.admissible_actions(), replayed.admissible_actions());
        for m in &after {
            if replayed.is_done() {
                prop_assert!(walked.is_done());
                break;
            }
            let action = action_for(&replayed, m);
            prop_assert_eq!(walked.step(&action).unwrap(), replayed.step(&action).unwrap());
        }
    }

    #[test]
    fn no_action_text_panics(goal in 0usize..500, actions in prop::collection::vec(any::<String>(), 1..10)) {
        let mut env = WebShopEnv::new(world());
        env.reset(&TaskRef::index(Split::Test, goal), 0).unwrap();
        for action in &actions {
            if env.is_done() { break; }
            let t = env.step(action).unwrap();
            prop_assert!(t.reward >= 0.0 && t.reward <= 1.0);
        }
    }

    #[test]
    fn clickables_are_what_the_page_shows(goal in 0usize..500, moves in moves()) {
        let mut env = WebShopEnv::new(world());
        env.reset(&TaskRef::index(Split::Test, goal), 0).unwrap();
        check_page(&env)?;
        for m in &moves {
            if env.is_done() { break; }
            let action = action_for(&env, m);
            env.step(&action).unwrap();
            if !env.is_done() {
                check_page(&env)?;
            }
        }
    }
}

#[test]
fn same_seed_same_world_transcripts() {
    let a = WebShopWorld::generate(150, 5).unwrap();
    let b = WebShopWorld::generate(150, 5).unwrap();
    let moves: Vec<Move> = (0..12).map(Move::Admissible).collect();
    for goal in 0..20 {
        assert_eq!(transcript(Arc::clone(&a), goal, &moves), transcript(Arc::clone(&b), goal, &moves));
    }
}

#[test]
fn snapshots_refuse_another_world() {
    let mut env = WebShopEnv::new(world());
    assert!(env.snapshot().is_none(), "no episode, no snapshot");
    env.reset(&TaskRef::index(Split::Test, 3), 0).unwrap();
    let snapshot = env.snapshot().unwrap();
    let mut elsewhere = WebShopEnv::new(WebShopWorld::generate(40, 5).unwrap());
    let err = elsewhere.restore(&snapshot).unwrap_err().to_string();
    assert!(err.contains("another WebShop world"), "{err}");
    let err = env.restore(&act_core::EnvSnapshot::new("alfworld", ())).unwrap_err().to_string();
    assert!(err.contains("`alfworld`"), "{err}");
}
