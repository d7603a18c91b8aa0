//! Environment invariants over many seeded games: admissible actions are accepted, anything else
//! is "Nothing happens." with no change, and the same (split, index, seed) gives the same game and
//! transcript.

use act_alfworld::{AlfworldConfig, AlfworldEnv, GrammarVersion};
use act_core::{Environment, Split, TaskRef};
use proptest::prelude::*;

fn split_strategy() -> impl Strategy<Value = Split> {
    prop_oneof![Just(Split::Train), Just(Split::EvalInDistribution), Just(Split::EvalOutOfDistribution)]
}

fn grammar_strategy() -> impl Strategy<Value = GrammarVersion> {
    prop_oneof![Just(GrammarVersion::V03), Just(GrammarVersion::V04)]
}

fn env(grammar: GrammarVersion) -> AlfworldEnv {
    AlfworldEnv::new(AlfworldConfig::default().with_grammar(grammar)).unwrap()
}

/// A state fingerprint: the world state plus the step counter.
fn fingerprint(env: &AlfworldEnv) -> (act_alfworld::WorldState, usize, Vec<String>) {
    let world = env.world().unwrap();
    let admissible = world.admissible().iter().map(|(t, _)| t.clone()).collect();
    (world.state().clone(), env.steps_used(), admissible)
}

/// Strings that are not admissible: garbage, case changes, extra words, wrong numbers.
fn mutate(command: &str, how: u8, noise: &str) -> String {
    match how % 6 {
        0 => noise.to_owned(),
        1 => command.to_uppercase(),
        2 => format!("{command} {noise}"),
        3 => command.replace('1', "9").replace('2', "8"),
        4 => command.replacen(' ', "  ", 1),
        _ => format!("{noise}{command}"),
    }
}

/// A procedural game with what upstream's games add (`mask` picks which): objects in a second receptacle (bit 0),
/// drawers and cabinets without `openable` (bit 1), objects that start cool (bit 2), a sliceable object in no
/// receptacle (bit 3).
fn upstream_like(split: Split, index: usize, mask: u8) -> act_alfworld::Scene {
    let mut scene = act_alfworld::generate_game(&AlfworldConfig::default(), split, index).unwrap();
    let n = scene.receptacles.len();
    if mask & 1 != 0 {
        scene.also_in = (0..scene.objects.len())
            .step_by(2)
            .map(|o| (o, (scene.objects[o].receptacle + 1 + o) % n))
            .filter(|&(o, r)| r != scene.objects[o].receptacle)
            .collect();
        scene.also_in.sort_unstable();
    }
    if mask & 2 != 0 {
        let classes = ["drawer", "cabinet"];
        scene.not_openable = (0..n).filter(|&r| classes.contains(&scene.receptacles[r].class.name())).collect();
    }
    if mask & 4 != 0 {
        scene.start_cool = (0..scene.objects.len()).filter(|&o| scene.objects[o].class.coolable()).collect();
    }
    if mask & 8 != 0 {
        let target = scene.goal.object;
        let sliceable = (0..scene.objects.len()).find(|&o| {
            let class = scene.objects[o].class;
            class.sliceable() && class != target && !scene.also_in.iter().any(|p| p.0 == o)
        });
        if let Some(o) = sliceable {
            scene.floor = vec![o];
            scene.at_locations = vec![(o, scene.receptacles[0].location)];
            scene.start_cool.retain(|&c| c != o);
        }
    }
    scene
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_expert_wins_games_with_upstreams_extra_facts_from_any_reachable_state(
        split in split_strategy(),
        index in 0usize..134,
        mask in 1u8..16,
        grammar in grammar_strategy(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
    ) {
        use act_alfworld::{Expert, World};
        let mut world = World::new(upstream_like(split, index, mask), grammar);
        let mut expert = Expert::new(&world);
        for pick in picks {
            let command = pick.get(world.admissible()).1;
            world.apply(command);
            expert.observe(&world, command);
            let state = world.state();
            // Only a held object, or one that started on the floor, is in no receptacle.
            let floor = &world.scene().floor;
            let placed = |o: usize| state.held == Some(o) || floor.contains(&o) || !state.places[o].is_empty();
            prop_assert!((0..state.places.len()).all(placed));
        }
        for _ in 0..200 {
            let Some(command) = expert.next_command(&world) else { break };
            prop_assert!(world.admissible().iter().any(|(_, c)| *c == command), "{:?} not admissible", command);
            world.apply(command);
            expert.observe(&world, command);
        }
        prop_assert!(world.goal_satisfied(), "{}/{} (mask {}): the expert did not win", split, index, mask);
    }

    #[test]
    fn admissible_actions_are_accepted_and_the_rest_changes_nothing(
        split in split_strategy(),
        index in 0usize..134,
        grammar in grammar_strategy(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), "[a-z 0-9/]{0,12}"), 1..60),
    ) {
        let mut env = env(grammar);
        let reset = env.reset(&TaskRef::index(split, index), 0).unwrap();
        let mut admissible = reset.admissible_actions.unwrap();
        for (pick, how, noise) in picks {
            // A non-admissible string first: "Nothing happens.", same state, no step used.
            let chosen = pick.get(&admissible).as_str().to_owned();
            let wrong = mutate(&chosen, how, &noise);
            if !admissible.iter().any(|a| a.as_str() == wrong.trim()) {
                let before = fingerprint(&env);
                let t = env.step(&wrong).unwrap();
                prop_assert_eq!(t.observation.as_str(), "Nothing happens.");
                prop_assert_eq!(t.reward, 0.0);
                prop_assert_eq!(&fingerprint(&env), &before);
                prop_assert_eq!(t.info["valid"].as_bool(), Some(false));
            }
            // Then an admissible one: accepted, with its own feedback, one step used.
            let steps = env.steps_used();
            let t = env.step(&chosen).unwrap();
            prop_assert_eq!(t.info["valid"].as_bool(), Some(true));
            prop_assert_ne!(t.observation.as_str(), "Nothing happens.");
            prop_assert!(!t.observation.as_str().is_empty());
            prop_assert_eq!(env.steps_used(), steps + 1);
            let list = t.admissible_actions.unwrap();
            prop_assert!(list.windows(2).all(|w| w[0].as_str() < w[1].as_str()), "sorted and de-duplicated");
            prop_assert!(list.iter().any(|a| a.as_str() == "look") && list.iter().any(|a| a.as_str() == "inventory"));
            prop_assert_eq!(list.iter().any(|a| a.as_str() == "help"), grammar == GrammarVersion::V04);
            prop_assert_eq!(t.score, if t.won { 1.0 } else { 0.0 });
            if t.done {
                prop_assert!(t.won || env.steps_used() == env.step_budget());
                prop_assert!(env.step("look").is_err(), "no steps after the end");
                break;
            }
            admissible = list;
        }
    }

    #[test]
    fn same_split_index_and_seed_give_the_same_game_and_transcript(
        split in split_strategy(),
        index in 0usize..134,
        seed in any::<u64>(),
        grammar in grammar_strategy(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..40),
    ) {
        let transcript = |env: &mut AlfworldEnv| {
            let reset = env.reset(&TaskRef::index(split, index), seed).unwrap();
            let mut lines = vec![reset.observation.as_str().to_owned()];
            let mut admissible = reset.admissible_actions.unwrap();
            for pick in &picks {
                let action = pick.get(&admissible).clone();
                let t = env.step(action.as_str()).unwrap();
                lines.push(format!("> {action}\n{}", t.observation));
                if t.done {
                    break;
                }
                admissible = t.admissible_actions.unwrap();
            }
            lines
        };
        let first = transcript(&mut env(grammar));
        let again = transcript(&mut env(grammar));
        prop_assert_eq!(first, again);
    }

    #[test]
    fn the_expert_takes_over_from_any_reachable_state(
        index in 0usize..140,
        grammar in grammar_strategy(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        // After a few random actions the expert's commands stay admissible and it still wins
        // given a larger budget.
        let config = AlfworldConfig::default().with_grammar(grammar).with_step_budget(200);
        let mut env = AlfworldEnv::new(config).unwrap();
        let reset = env.reset(&TaskRef::index(Split::EvalInDistribution, index), 1).unwrap();
        let mut admissible = reset.admissible_actions.unwrap();
        let mut won = false;
        for pick in picks {
            let t = env.step(pick.get(&admissible).as_str()).unwrap();
            admissible = t.admissible_actions.unwrap();
            if t.done { won = t.won; break; }
        }
        while !won {
            let action = env.expert_action().unwrap().expect("the expert has a move until the game is won");
            prop_assert!(admissible.contains(&action), "{} not admissible", action);
            let t = env.step(action.as_str()).unwrap();
            prop_assert!(!t.done || t.won, "expert ran out of budget");
            admissible = t.admissible_actions.unwrap_or_default();
            won = t.won;
        }
    }

    #[test]
    fn a_restored_snapshot_steps_as_a_replay_to_the_same_state_does(
        split in split_strategy(),
        index in 0usize..134,
        grammar in grammar_strategy(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..40),
        cut in any::<prop::sample::Index>(),
        after in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12),
    ) {
        // A walk of admissible and mistyped actions; a snapshot at a point of it; the walk goes on; restoring and
        // taking other actions answers exactly as a fresh environment replayed to that point.
        let task = TaskRef::index(split, index);
        let action = |admissible: &[act_core::Action], (pick, how): (prop::sample::Index, u8)| {
            let chosen = pick.get(admissible).as_str().to_owned();
            if how % 5 == 0 { mutate(&chosen, how / 5, "x") } else { chosen }
        };
        let mut walked = env(grammar);
        let mut admissible = walked.reset(&task, 3).unwrap().admissible_actions.unwrap();
        let cut = cut.index(picks.len() + 1);
        let mut prefix = Vec::new();
        let mut snapshot = None;
        for (i, pick) in picks.iter().enumerate() {
            if i == cut { snapshot = walked.snapshot(); }
            let a = action(&admissible, *pick);
            let t = walked.step(&a).unwrap();
            if i < cut { prefix.push(a); }
            admissible = t.admissible_actions.unwrap();
            if t.done { break; }
        }
        // A walk that ended (or a cut past its end) is snapshotted at its end, where the prefix is every step.
        let snapshot = match snapshot { Some(s) => s, None => walked.snapshot().unwrap() };
        let mut replayed = env(grammar);
        let mut replay_admissible = replayed.reset(&task, 3).unwrap().admissible_actions.unwrap();
        for a in &prefix {
            replay_admissible = replayed.step(a).unwrap().admissible_actions.unwrap();
        }
        walked.restore(&snapshot).unwrap();
        prop_assert_eq!(walked.steps_used(), replayed.steps_used());
        prop_assert_eq!(walked.admissible_actions().unwrap(), replay_admissible.clone());
        let mut admissible = replay_admissible;
        for pick in after {
            let a = action(&admissible, pick);
            let (x, y) = (walked.step(&a), replayed.step(&a));
            match (x, y) {
                (Ok(x), Ok(y)) => {
                    prop_assert_eq!(&x, &y);
                    admissible = x.admissible_actions.unwrap();
                    if x.done { break; }
                }
                (x, y) => { prop_assert_eq!(x.is_err(), y.is_err()); break; }
            }
        }
    }
}

#[test]
fn snapshots_refuse_another_grammar_and_other_environments() {
    let mut v03 = env(GrammarVersion::V03);
    let mut v04 = env(GrammarVersion::V04);
    assert!(v03.snapshot().is_none(), "no episode, no snapshot");
    v04.reset(&TaskRef::index(Split::Train, 2), 0).unwrap();
    let snapshot = v04.snapshot().unwrap();
    let err = v03.restore(&snapshot).unwrap_err().to_string();
    assert!(err.contains("grammar"), "{err}");
    let err = v03.restore(&act_core::EnvSnapshot::new("webshop", 1_u8)).unwrap_err().to_string();
    assert!(err.contains("`webshop`"), "{err}");
    // A restored environment is one whose episode can be stepped, even if it had none.
    let mut fresh = env(GrammarVersion::V04);
    fresh.restore(&snapshot).unwrap();
    assert_eq!(fresh.task().unwrap().id, v04.task().unwrap().id);
    assert_eq!(fresh.step("look").unwrap(), v04.step("look").unwrap());
}

#[test]
fn ids_and_indices_name_the_same_game() {
    let mut env = env(GrammarVersion::V03);
    let by_index = env.reset(&TaskRef::index(Split::EvalOutOfDistribution, 5), 0).unwrap();
    let by_id = env.reset(&TaskRef::Id(by_index.task.id.clone()), 0).unwrap();
    assert_eq!(by_index, by_id);
    assert_eq!(by_id.task.id, "eval_out_of_distribution/5");
    assert!(env.reset(&TaskRef::Id("valid_unseen/999".into()), 0).is_err());
    assert!(matches!(env.num_tasks(Split::Test), Err(act_core::EnvError::UnsupportedSplit(_))));
    assert_eq!(env.num_tasks(Split::EvalInDistribution).unwrap(), 140);
    assert_eq!(env.num_tasks(Split::EvalOutOfDistribution).unwrap(), 134);
}

#[test]
fn stepping_before_reset_is_an_error_not_a_panic() {
    let mut env = AlfworldEnv::default();
    assert!(env.step("look").is_err());
    assert!(env.expert_action().is_err());
    assert!(env.admissible_actions().is_none());
    assert!(AlfworldEnv::new(AlfworldConfig::default().with_step_budget(0)).is_err());
}

#[test]
fn invalid_commands_can_be_made_to_count() {
    let config = AlfworldConfig::default().with_count_invalid_steps(true).with_step_budget(3);
    let mut env = AlfworldEnv::new(config).unwrap();
    env.reset(&TaskRef::index(Split::Train, 0), 0).unwrap();
    assert!(!env.step("dance").unwrap().done);
    assert!(!env.step("dance").unwrap().done);
    let last = env.step("dance").unwrap();
    assert!(last.done && !last.won && last.observation.as_str() == "Nothing happens.");
}

#[test]
fn training_and_evaluation_games_differ() {
    let mut env = env(GrammarVersion::V03);
    let intros = |env: &mut AlfworldEnv, split| {
        (0..40)
            .map(|i| env.reset(&TaskRef::index(split, i), 0).unwrap().observation.as_str().to_owned())
            .collect::<Vec<_>>()
    };
    let train = intros(&mut env, Split::Train);
    let id = intros(&mut env, Split::EvalInDistribution);
    assert!(id.iter().filter(|o| train.contains(o)).count() < 4, "in-distribution games are new games");
    let distinct: std::collections::BTreeSet<_> = train.iter().collect();
    assert!(distinct.len() > 35, "games vary");
}

/// The same invariants as the property test, over a thousand games of every split with a seeded
/// random walk each (cheap enough to run on every `cargo test`).
#[test]
fn random_walks_over_a_thousand_games_keep_the_invariants() {
    use rand::RngExt;
    let mut rng = act_core::rng_from_seed(2024);
    for grammar in [GrammarVersion::V03, GrammarVersion::V04] {
        let mut env = env(grammar);
        for game in 0..500usize {
            let split = [Split::Train, Split::EvalInDistribution, Split::EvalOutOfDistribution][game % 3];
            let index = game % env.num_tasks(split).unwrap();
            let mut admissible = env.reset(&TaskRef::index(split, index), 0).unwrap().admissible_actions.unwrap();
            loop {
                let chosen = admissible[rng.random_range(0..admissible.len())].as_str().to_owned();
                let wrong = mutate(&chosen, rng.random::<u8>(), "xyzzy");
                if !admissible.iter().any(|a| a.as_str() == wrong.trim()) {
                    let before = fingerprint(&env);
                    assert_eq!(env.step(&wrong).unwrap().observation.as_str(), "Nothing happens.");
                    assert_eq!(fingerprint(&env), before, "{split}/{index}: `{wrong}` changed the state");
                }
                let t = env.step(&chosen).unwrap();
                assert_ne!(t.observation.as_str(), "Nothing happens.", "{split}/{index}: `{chosen}` refused");
                if t.done {
                    break;
                }
                admissible = t.admissible_actions.unwrap();
                assert!(admissible.windows(2).all(|w| w[0].as_str() < w[1].as_str()));
            }
        }
    }
}
