//! The expert wins every generated game within the 50-step budget, through the public
//! `Environment` API, in both grammar versions.

use std::collections::BTreeMap;

use act_alfworld::{AlfworldConfig, AlfworldEnv, GrammarVersion};
use act_core::{Environment, Split, TaskRef, collect_expert_trajectory};

struct Tally {
    games: usize,
    steps: usize,
    max_steps: usize,
    per_type: BTreeMap<String, usize>,
}

fn run_split(env: &mut AlfworldEnv, split: Split, games: usize) -> Tally {
    let mut tally = Tally { games: 0, steps: 0, max_steps: 0, per_type: BTreeMap::new() };
    for index in 0..games {
        let trajectory = collect_expert_trajectory(env, &TaskRef::index(split, index), index as u64).unwrap();
        assert!(
            trajectory.outcome.won,
            "expert lost {split}/{index} ({}): {:?}",
            trajectory.task,
            trajectory.steps.iter().map(|s| s.action.as_str()).collect::<Vec<_>>()
        );
        assert!(trajectory.steps.len() <= env.step_budget());
        for step in &trajectory.steps {
            assert!(step.admissible_actions.contains(&step.action), "{split}/{index}: {} not admissible", step.action);
        }
        tally.games += 1;
        tally.steps += trajectory.steps.len();
        tally.max_steps = tally.max_steps.max(trajectory.steps.len());
        *tally.per_type.entry(trajectory.task_type).or_default() += 1;
    }
    eprintln!(
        "{split}: expert won {}/{} games, mean {:.1} steps, max {}, types {:?}",
        tally.games,
        games,
        tally.steps as f64 / tally.games as f64,
        tally.max_steps,
        tally.per_type
    );
    tally
}

#[test]
fn expert_wins_every_evaluation_game_in_both_grammars() {
    for grammar in [GrammarVersion::V03, GrammarVersion::V04] {
        let mut env = AlfworldEnv::new(AlfworldConfig::default().with_grammar(grammar)).unwrap();
        for split in [Split::EvalInDistribution, Split::EvalOutOfDistribution] {
            let size = env.num_tasks(split).unwrap();
            let tally = run_split(&mut env, split, size);
            assert_eq!(tally.per_type.len(), 6, "{split} covers all six task types");
        }
    }
}

#[test]
fn expert_wins_two_thousand_training_games() {
    let mut env = AlfworldEnv::new(AlfworldConfig::default().with_train_size(2000)).unwrap();
    let tally = run_split(&mut env, Split::Train, 2000);
    assert_eq!(tally.games, 2000);
    // Upstream's proportions: pick-two and pick-and-place are the most common, look-in-light the rarest.
    assert!(tally.per_type["pick_two_obj_and_place"] > tally.per_type["look_at_obj_in_light"]);
}

#[test]
fn expert_wins_with_another_dataset_seed() {
    let mut env = AlfworldEnv::new(AlfworldConfig::default().with_dataset_seed(99).with_train_size(300)).unwrap();
    run_split(&mut env, Split::Train, 300);
}
