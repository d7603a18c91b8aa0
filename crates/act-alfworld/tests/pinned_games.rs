//! The procedural games are pinned: every past experiment's data is a function of (dataset seed, split, index), so a
//! change to the vocabulary, the generator or the texts must leave these hashes alone. They cover the first games of
//! each split: the scene, the expert's whole trajectory (observations, admissible lists, actions) in both grammars,
//! and the augmentations drawn from it ([`ClassSwap`], [`InstanceRenaming`]). A mismatch means the generated data
//! changed; if that is intended, say so where the experiments are reported.

use act_alfworld::{AlfworldConfig, AlfworldEnv, ClassSwap, GrammarVersion, InstanceRenaming, generate_game};
use act_core::{Split, TaskRef, collect_expert_trajectory};

/// FNV-1a, 64 bits: fixed by its definition, unlike `DefaultHasher`.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Hashes `text` and a separator, so that consecutive texts cannot run together.
    fn text(&mut self, text: &str) {
        for &byte in text.as_bytes().iter().chain(&[0xff]) {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

const GAMES_PER_SPLIT: usize = 40;

fn split_hash(split: Split) -> u64 {
    let mut hash = Fnv::new();
    let config = AlfworldConfig::default();
    for index in 0..GAMES_PER_SPLIT {
        hash.text(&serde_json::to_string(&generate_game(&config, split, index).unwrap()).unwrap());
    }
    for grammar in [GrammarVersion::V03, GrammarVersion::V04] {
        let mut env = AlfworldEnv::new(AlfworldConfig::default().with_grammar(grammar)).unwrap();
        for index in 0..GAMES_PER_SPLIT {
            let seed = index as u64;
            let trajectory = collect_expert_trajectory(&mut env, &TaskRef::index(split, index), seed).unwrap();
            hash.text(&serde_json::to_string(&trajectory).unwrap());
            let swap = ClassSwap::random(&trajectory.task, seed);
            hash.text(&format!("{:?}", swap.map(|s| s.classes())));
            let texts = trajectory.steps.iter().flat_map(|s| {
                [s.observation.as_str(), s.action.as_str()]
                    .into_iter()
                    .chain(s.admissible_actions.iter().map(|a| a.as_str()))
            });
            let renaming = InstanceRenaming::random_with_receptacles(texts, seed);
            hash.text(&serde_json::to_string(&renaming.apply_to_trajectory(&trajectory)).unwrap());
        }
    }
    hash.0
}

#[test]
fn the_first_games_of_every_split_are_what_they_were() {
    let hashes: Vec<(Split, String)> = [Split::Train, Split::EvalInDistribution, Split::EvalOutOfDistribution]
        .into_iter()
        .map(|split| (split, format!("{:016x}", split_hash(split))))
        .collect();
    let pinned = [
        (Split::Train, "e60a2b5b044ece05"),
        (Split::EvalInDistribution, "daa41720694e5f29"),
        (Split::EvalOutOfDistribution, "22908e4d6b3b1ee1"),
    ]
    .map(|(split, hash)| (split, hash.to_owned()));
    assert_eq!(hashes, pinned, "the generated games or their texts changed");
}
