//! Training-data augmentation: the same episode with its objects' instance numbers renamed.
//!
//! An ALFWorld object's number (`tomato 3`) is an arbitrary label: which tomato is on the sink basin is a fact of
//! this game, told only by the observations. In the expert's data the numbers are skewed (the first instance is
//! taken most often), so a small model can score well by writing `1` instead of reading the number off the
//! observation, and then fails whenever the object in front of it is `tomato 3`. Renaming each object class's
//! instances by a random permutation, consistently over the whole episode (task, observations, admissible actions,
//! actions, labels), gives an episode that is just as valid and makes the number learnable only by reading.
//! Receptacle numbers are kept: the expert's search order over them (`cabinet 1`, then `cabinet 2`) is part of
//! what IL learns.

use std::collections::BTreeMap;

use act_core::{Action, Observation, Trajectory, rng_from_seed};
use rand::seq::SliceRandom;

use crate::vocab::ObjectClass;

/// A renaming of object instance numbers, per object class: `numbers[class][n - 1]` is the new number of
/// instance `n`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstanceRenaming {
    numbers: BTreeMap<ObjectClass, Vec<u32>>,
}

impl InstanceRenaming {
    /// A random permutation of `1..=m` for every object class in `texts`, `m` being the highest instance number
    /// of that class the texts mention; the same `seed` gives the same renaming.
    pub fn random<'a>(texts: impl IntoIterator<Item = &'a str>, seed: u64) -> Self {
        let mut highest: BTreeMap<ObjectClass, u32> = BTreeMap::new();
        for text in texts {
            for (class, number, _) in object_mentions(text) {
                let entry = highest.entry(class).or_insert(0);
                *entry = (*entry).max(number);
            }
        }
        let mut rng = rng_from_seed(seed);
        let numbers = highest
            .into_iter()
            .map(|(class, m)| {
                let mut permutation: Vec<u32> = (1..=m).collect();
                permutation.shuffle(&mut rng);
                (class, permutation)
            })
            .collect();
        InstanceRenaming { numbers }
    }

    /// `text` with every object mention renamed; receptacles and other numbers are left alone.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (class, number, span) in object_mentions(text) {
            let Some(new) = self.numbers.get(&class).and_then(|p| p.get(number as usize - 1)) else { continue };
            out.push_str(&text[copied..span.start]);
            out.push_str(&new.to_string());
            copied = span.end;
        }
        out.push_str(&text[copied..]);
        out
    }

    /// `trajectory` with every text renamed (task, observations, admissible actions, actions).
    pub fn apply_to_trajectory(&self, trajectory: &Trajectory) -> Trajectory {
        let mut renamed = trajectory.clone();
        renamed.task = self.apply(&trajectory.task);
        for step in &mut renamed.steps {
            step.observation = Observation::new(self.apply(step.observation.as_str()));
            step.action = self.apply_to_action(&step.action);
            for action in &mut step.admissible_actions {
                *action = self.apply_to_action(action);
            }
        }
        renamed
    }

    /// `action` renamed.
    pub fn apply_to_action(&self, action: &Action) -> Action {
        Action::new(self.apply(action.as_str()))
    }
}

/// Every `<object class> <number>` in `text`: the class, the number and the byte range of the number.
fn object_mentions(text: &str) -> Vec<(ObjectClass, u32, std::ops::Range<usize>)> {
    let bytes = text.as_bytes();
    let mut mentions = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_lowercase() || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let word_end = i + bytes[i..].iter().take_while(|b| b.is_ascii_lowercase()).count();
        let digits = word_end + 1;
        let digits_end =
            digits + bytes.get(digits..).map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_digit()).count());
        let whole_number = digits_end > digits && bytes.get(digits_end).is_none_or(|b| !b.is_ascii_alphanumeric());
        if bytes.get(word_end) == Some(&b' ')
            && whole_number
            && let Some(class) = ObjectClass::from_name(&text[i..word_end])
            && let Ok(number @ 1..) = text[digits..digits_end].parse::<u32>()
        {
            mentions.push((class, number, digits..digits_end));
            i = digits_end;
        } else {
            i = word_end;
        }
    }
    mentions
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_core::{Outcome, Split, Step};
    use proptest::prelude::*;

    fn renaming(pairs: &[(ObjectClass, &[u32])]) -> InstanceRenaming {
        InstanceRenaming { numbers: pairs.iter().map(|(c, p)| (*c, p.to_vec())).collect() }
    }

    #[test]
    fn objects_are_renamed_and_receptacles_kept() {
        let r = renaming(&[(ObjectClass::Tomato, &[3, 1, 2]), (ObjectClass::Mug, &[2, 1])]);
        assert_eq!(
            r.apply("On the countertop 1, you see a tomato 3, a mug 1, and a tomato 1."),
            "On the countertop 1, you see a tomato 2, a mug 2, and a tomato 3."
        );
        assert_eq!(r.apply("take tomato 2 from sinkbasin 1"), "take tomato 1 from sinkbasin 1");
        // A class without a permutation, numbers that are not instances, and words that only end in a class name.
        assert_eq!(
            r.apply("an apple 1 in cabinet 12; tomato 12x; bigmug 1; tomato 0"),
            "an apple 1 in cabinet 12; tomato 12x; bigmug 1; tomato 0"
        );
    }

    #[test]
    fn a_renamed_trajectory_is_consistent_and_seeded() {
        let step = |observation: &str, action: &str, admissible: &[&str]| Step {
            observation: Observation::new(observation),
            admissible_actions: admissible.iter().map(|a| Action::new(*a)).collect(),
            action: Action::new(action),
            reward: 0.0,
        };
        let trajectory = Trajectory {
            env: "alfworld".into(),
            task_id: "train/0".into(),
            task_type: "pick_and_place_simple".into(),
            split: Split::Train,
            task: "put a tomato in fridge.".into(),
            seed: 1,
            steps: vec![
                step(
                    "On the sinkbasin 1, you see a tomato 4, and a tomato 2.",
                    "take tomato 2 from sinkbasin 1",
                    &["take tomato 2 from sinkbasin 1", "take tomato 4 from sinkbasin 1"],
                ),
                step("You pick up the tomato 2 from the sinkbasin 1.", "put tomato 2 in/on fridge 1", &[]),
            ],
            outcome: Outcome { won: true, score: 1.0, steps_used: 2 },
        };
        let texts = trajectory.steps.iter().flat_map(|s| [s.observation.as_str(), s.action.as_str()]);
        let r = InstanceRenaming::random(texts.clone(), 7);
        assert_eq!(r, InstanceRenaming::random(texts, 7));
        let renamed = r.apply_to_trajectory(&trajectory);
        let new_two = r.apply("tomato 2");
        assert_eq!(renamed.steps[0].action.as_str(), format!("take {new_two} from sinkbasin 1"));
        assert_eq!(renamed.steps[1].action.as_str(), format!("put {new_two} in/on fridge 1"));
        assert!(renamed.steps[1].observation.as_str().contains(&new_two));
        assert!(renamed.steps[0].admissible_actions.contains(&renamed.steps[0].action));
        assert_eq!(renamed.task, trajectory.task);
    }

    proptest! {
        /// A renaming is a bijection on each class's instances: mentions stay distinct and stay objects.
        #[test]
        fn renaming_permutes_the_mentions(numbers in proptest::collection::vec(1u32..9, 1..12), seed in any::<u64>()) {
            let text: String = numbers.iter().map(|n| format!("a mug {n}, a cabinet {n}, ")).collect();
            let r = InstanceRenaming::random([text.as_str()], seed);
            let renamed = r.apply(&text);
            let before: Vec<u32> = object_mentions(&text).into_iter().map(|(_, n, _)| n).collect();
            let after: Vec<u32> = object_mentions(&renamed).into_iter().map(|(_, n, _)| n).collect();
            prop_assert_eq!(before.len(), after.len());
            let highest = *numbers.iter().max().unwrap();
            prop_assert!(after.iter().all(|n| (1..=highest).contains(n)));
            for (i, j) in (0..before.len()).flat_map(|i| (0..before.len()).map(move |j| (i, j))) {
                prop_assert_eq!(before[i] == before[j], after[i] == after[j]);
            }
            let receptacles = |t: &str| t.matches("cabinet").count();
            prop_assert_eq!(receptacles(&renamed), receptacles(&text));
            let first_cabinet = format!("cabinet {}", numbers[0]);
            prop_assert!(renamed.contains(&first_cabinet));
        }
    }
}
