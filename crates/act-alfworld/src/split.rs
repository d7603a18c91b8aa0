//! Splits: which game each (split, index) is.

use act_core::{EnvError, Split, derive_seed, rng_from_seed};
use rand::distr::{Distribution, weighted::WeightedIndex};
use rand::seq::IndexedRandom;

use crate::config::{AlfworldConfig, GrammarVersion};
use crate::expert::Expert;
use crate::scene::{Layout, Scene, layouts};
use crate::task::TaskType;
use crate::world::World;

/// Upstream's training games per task type (in [`TaskType::ALL`] order; 3,553 in all).
pub const UPSTREAM_TRAIN_COUNTS: [u32; 6] = [790, 308, 650, 459, 533, 813];

/// How many redraws a game may need before generation gives up with an error.
const MAX_ATTEMPTS: u64 = 256;

/// Every game is one the expert wins within this many steps (upstream's default budget). Fixed, so
/// that the game set does not depend on the episode budget a user configures.
pub const SOLVABLE_WITHIN: usize = 50;

/// The number of games in `split` under `config`.
pub fn split_size(config: &AlfworldConfig, split: Split) -> Result<usize, EnvError> {
    match split {
        Split::Train => Ok(config.train_size),
        Split::EvalInDistribution => Ok(config.eval_in_distribution_size),
        Split::EvalOutOfDistribution => Ok(config.eval_out_of_distribution_size),
        other => Err(EnvError::UnsupportedSplit(other)),
    }
}

fn split_stream(split: Split) -> Result<u64, EnvError> {
    match split {
        Split::Train => Ok(1),
        Split::EvalInDistribution => Ok(2),
        Split::EvalOutOfDistribution => Ok(3),
        other => Err(EnvError::UnsupportedSplit(other)),
    }
}

/// The stable id of a game: `"{split}/{index}"`.
pub fn task_id(split: Split, index: usize) -> String {
    format!("{split}/{index}")
}

/// Parses an id made by [`task_id`].
pub fn parse_task_id(id: &str) -> Result<(Split, usize), EnvError> {
    let unknown = || EnvError::UnknownTask(format!("`{id}` (expected `<split>/<index>`, e.g. `train/12`)"));
    let (split, index) = id.split_once('/').ok_or_else(unknown)?;
    let split: Split = split.parse().map_err(|_| unknown())?;
    let index: usize = index.parse().map_err(|_| unknown())?;
    Ok((split, index))
}

/// The layouts a split draws from for a task type.
pub fn layouts_for(split: Split, task_type: TaskType) -> Vec<&'static Layout> {
    let want_seen = split != Split::EvalOutOfDistribution;
    layouts().iter().filter(|l| l.seen() == want_seen && l.room.hosts(task_type)).collect()
}

/// The game `index` of `split`: a scene the expert wins within the budget.
///
/// A game is a pure function of the dataset seed, the split and the index. Training and
/// in-distribution evaluation games come from seen layouts (different seed streams, so different
/// games), out-of-distribution games from held-out layouts only. Task types are drawn with
/// upstream's training-set proportions. Every game is checked at generation: the expert must win it
/// within 50 steps, or the scene is redrawn in the same layout.
pub fn generate_game(config: &AlfworldConfig, split: Split, index: usize) -> Result<Scene, EnvError> {
    let size = split_size(config, split)?;
    if index >= size {
        return Err(EnvError::UnknownTask(format!("{} (split `{split}` has {size} games)", task_id(split, index))));
    }
    let seed = derive_seed(derive_seed(config.dataset_seed, split_stream(split)?), index as u64);
    let mut rng = rng_from_seed(seed);
    let weights = WeightedIndex::new(UPSTREAM_TRAIN_COUNTS).expect("positive constant weights");
    let task_type = TaskType::ALL[weights.sample(&mut rng)];
    let layout = *layouts_for(split, task_type)
        .choose(&mut rng)
        .ok_or_else(|| EnvError::Config(format!("no layout hosts {task_type} in split {split}")))?;
    for attempt in 1..=MAX_ATTEMPTS {
        let Some(scene) = Scene::generate(layout, task_type, derive_seed(seed, attempt)) else {
            continue;
        };
        if expert_wins(&scene, SOLVABLE_WITHIN) {
            return Ok(scene);
        }
    }
    Err(EnvError::Config(format!(
        "no scene of {task_type} in layout {} that the expert wins within {SOLVABLE_WITHIN} steps after {MAX_ATTEMPTS} draws",
        layout.number
    )))
}

/// Whether the expert, playing alone from the start, wins `scene` within `budget` steps.
pub fn expert_wins(scene: &Scene, budget: usize) -> bool {
    let mut world = World::new_unrendered(scene.clone(), GrammarVersion::V04);
    if world.goal_satisfied() {
        return false;
    }
    let mut expert = Expert::new(&world);
    for _ in 0..budget {
        let Some(command) = expert.next_command(&world) else {
            return false;
        };
        if !world.admissible().iter().any(|(_, c)| *c == command) {
            return false;
        }
        world.apply(command);
        expert.observe(&world, command);
        if world.goal_satisfied() {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_bad_ids_are_errors() {
        assert_eq!(
            parse_task_id(&task_id(Split::EvalOutOfDistribution, 7)).unwrap(),
            (Split::EvalOutOfDistribution, 7)
        );
        assert!(parse_task_id("train").is_err());
        assert!(parse_task_id("nope/1").is_err());
        assert!(parse_task_id("train/x").is_err());
    }

    #[test]
    fn out_of_range_and_unsupported_splits_are_errors() {
        let config = AlfworldConfig::default();
        assert!(matches!(generate_game(&config, Split::EvalInDistribution, 140), Err(EnvError::UnknownTask(_))));
        assert!(matches!(generate_game(&config, Split::Dev, 0), Err(EnvError::UnsupportedSplit(Split::Dev))));
    }

    #[test]
    fn ood_games_use_held_out_layouts_only() {
        let config = AlfworldConfig::default();
        for index in 0..20 {
            let ood = generate_game(&config, Split::EvalOutOfDistribution, index).unwrap();
            assert!(ood.layout % 100 <= crate::scene::HELD_OUT_PER_ROOM);
            let id = generate_game(&config, Split::EvalInDistribution, index).unwrap();
            assert!(id.layout % 100 > crate::scene::HELD_OUT_PER_ROOM);
        }
    }
}
