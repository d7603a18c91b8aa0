//! Training-data augmentation: the same episode with its objects' instance numbers renamed.

use std::collections::BTreeMap;

use act_core::{Action, Observation, Trajectory, rng_from_seed};
use rand::seq::{IndexedRandom, SliceRandom};

use crate::vocab::{ObjectClass, ReceptacleClass};

/// A renaming of instance numbers, per object class (and optionally per receptacle class): `numbers[class][n - 1]`
/// is the new number of instance `n`.
///
/// An ALFWorld object's number (`tomato 3`) is an arbitrary label: which tomato is on the sink basin is a fact of
/// this game, told only by the observations. In the expert's data the numbers are skewed (the first instance is
/// taken most often), so a small model can score well by writing `1` instead of reading the number off the
/// observation, and then fails whenever the object in front of it is `tomato 3`. Renaming each object class's
/// instances by a random permutation, consistently over the whole episode (task, observations, admissible actions,
/// actions, labels), gives an episode that is just as valid and makes the number learnable only by reading.
///
/// Receptacle numbers are kept by [`InstanceRenaming::random`]: the expert's search order over them (`cabinet 1`,
/// then `cabinet 2`) is part of what IL learns. But in the game's rooms a class's receptacles are always numbered
/// `1..=m`, so a model can also write `shelf 3` from habit in a room whose last shelf is `shelf 2`, and the game
/// answers "Nothing happens.". [`InstanceRenaming::random_with_receptacles`] also renumbers each receptacle class
/// to `m` distinct numbers drawn from `1..=2m`, in increasing order: the search order and the room's descending
/// list stay as they were, but which numbers exist can then only be read from the room's description.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstanceRenaming {
    numbers: BTreeMap<ObjectClass, Vec<u32>>,
    receptacles: BTreeMap<ReceptacleClass, Vec<u32>>,
}

/// What a `<class> <number>` mention names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Object(ObjectClass),
    Receptacle(ReceptacleClass),
}

impl InstanceRenaming {
    /// A random permutation of `1..=m` for every object class in `texts`, `m` being the highest instance number
    /// of that class the texts mention; the same `seed` gives the same renaming.
    pub fn random<'a>(texts: impl IntoIterator<Item = &'a str>, seed: u64) -> Self {
        Self::build(texts, seed, false)
    }

    /// As [`InstanceRenaming::random`] (the same object renaming for the same seed), and each receptacle class's
    /// `1..=m` renumbered to `m` distinct numbers drawn uniformly from `1..=2m`, kept in increasing order.
    ///
    /// ```
    /// use act_alfworld::InstanceRenaming;
    /// let room = "you see a shelf 2, a shelf 1, and a sinkbasin 1.";
    /// let renaming = InstanceRenaming::random_with_receptacles([room], 3);
    /// // Still two shelves and one sink basin, listed in the same (descending) order.
    /// let renamed = renaming.apply(room);
    /// assert_eq!(renamed.matches("shelf").count(), 2);
    /// assert_eq!(renamed, renaming.apply(room));
    /// ```
    pub fn random_with_receptacles<'a>(texts: impl IntoIterator<Item = &'a str>, seed: u64) -> Self {
        Self::build(texts, seed, true)
    }

    fn build<'a>(texts: impl IntoIterator<Item = &'a str>, seed: u64, receptacles: bool) -> Self {
        let mut highest_object: BTreeMap<ObjectClass, u32> = BTreeMap::new();
        let mut highest_receptacle: BTreeMap<ReceptacleClass, u32> = BTreeMap::new();
        for text in texts {
            for (class, number, _) in mentions(text) {
                let entry = match class {
                    Class::Object(class) => highest_object.entry(class).or_insert(0),
                    Class::Receptacle(class) => highest_receptacle.entry(class).or_insert(0),
                };
                *entry = (*entry).max(number);
            }
        }
        // Objects first, so that a seed renames objects alike with or without receptacles.
        let mut rng = rng_from_seed(seed);
        let numbers = highest_object
            .into_iter()
            .map(|(class, m)| {
                let mut permutation: Vec<u32> = (1..=m).collect();
                permutation.shuffle(&mut rng);
                (class, permutation)
            })
            .collect();
        let receptacles = if receptacles {
            highest_receptacle
                .into_iter()
                .map(|(class, m)| {
                    let mut pool: Vec<u32> = (1..=2 * m).collect();
                    pool.shuffle(&mut rng);
                    let mut chosen = pool[..m as usize].to_vec();
                    chosen.sort_unstable();
                    (class, chosen)
                })
                .collect()
        } else {
            BTreeMap::new()
        };
        InstanceRenaming { numbers, receptacles }
    }

    /// `text` with every object mention renamed (and every receptacle mention, when the renaming has receptacles);
    /// other numbers are left alone.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (class, number, span) in mentions(text) {
            let table = match class {
                Class::Object(class) => self.numbers.get(&class),
                Class::Receptacle(class) => self.receptacles.get(&class),
            };
            let Some(new) = table.and_then(|p| p.get(number as usize - 1)) else { continue };
            out.push_str(&text[copied..span.start]);
            out.push_str(&new.to_string());
            copied = span.end;
        }
        out.push_str(&text[copied..]);
        out
    }

    /// `trajectory` with every text renamed (task, observations, admissible actions, actions).
    pub fn apply_to_trajectory(&self, trajectory: &Trajectory) -> Trajectory {
        map_texts(trajectory, |text| self.apply(text))
    }

    /// `action` renamed.
    pub fn apply_to_action(&self, action: &Action) -> Action {
        Action::new(self.apply(action.as_str()))
    }
}

/// A swap of two object classes' names in an episode's text: the task's object class (the one it moves or
/// examines) and another class the same task could name.
///
/// Whether the task's object is in view is the decision behind `take`: the expert takes it in every state whose
/// observation shows it while its hands are empty. In the expert's data the object's class also predicts where it
/// is found (apples in the fridge), so a small model can decide from the receptacle and the step instead of matching
/// the task's word against the observation's. The same episode with the class renamed throughout (task,
/// observations, actions) is just as consistent and only the match predicts the `take`, as renamed instance numbers
/// ([`InstanceRenaming`]) make the number learnable only by reading it. The other class keeps what the task needs:
/// it can be heated, cooled or cleaned when the task says so, and the task's receptacle can hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassSwap {
    object: ObjectClass,
    other: ObjectClass,
}

impl ClassSwap {
    /// A random partner for the object class of `task` (an ALFWorld task line, such as "put a hot apple in
    /// countertop."), drawn from `seed`; `None` when the task names no object class or no other class fits it.
    pub fn random(task: &str, seed: u64) -> Option<ClassSwap> {
        let words: Vec<&str> = task.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
        let named: Vec<ObjectClass> = words.iter().filter_map(|w| ObjectClass::from_name(w)).collect();
        let object = *named.first()?;
        let receptacle = words.iter().rev().find_map(|w| ReceptacleClass::from_name(w));
        let has = |word: &str| words.contains(&word);
        let fits = |c: ObjectClass| {
            c.pickupable()
                && !named.contains(&c)
                && (!(has("hot") || has("heat")) || c.heatable())
                && (!has("cool") || c.coolable())
                && (!has("clean") || c.cleanable())
                && receptacle.is_none_or(|r| r.can_contain(c))
        };
        // Drawn from the procedural vocabulary only, so that a seed swaps in the class it always did.
        let candidates: Vec<ObjectClass> = ObjectClass::PROCEDURAL.iter().copied().filter(|&c| fits(c)).collect();
        let other = *candidates.choose(&mut rng_from_seed(seed))?;
        Some(ClassSwap { object, other })
    }

    /// The task's object class and the class it is swapped with.
    pub fn classes(&self) -> (ObjectClass, ObjectClass) {
        (self.object, self.other)
    }

    /// `text` with every whole-word mention of either class replaced by the other.
    pub fn apply(&self, text: &str) -> String {
        let (a, b) = (self.object.name(), self.other.name());
        let mut out = String::with_capacity(text.len() + 8);
        let mut rest = text;
        while let Some(start) = rest.find(|c: char| c.is_ascii_alphanumeric()) {
            out.push_str(&rest[..start]);
            let word_len = rest[start..].find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len() - start);
            let word = &rest[start..start + word_len];
            out.push_str(if word == a {
                b
            } else if word == b {
                a
            } else {
                word
            });
            rest = &rest[start + word_len..];
        }
        out.push_str(rest);
        out
    }

    /// `trajectory` with every text swapped (task, observations, admissible actions, actions).
    pub fn apply_to_trajectory(&self, trajectory: &Trajectory) -> Trajectory {
        map_texts(trajectory, |text| self.apply(text))
    }

    /// `action` swapped.
    pub fn apply_to_action(&self, action: &Action) -> Action {
        Action::new(self.apply(action.as_str()))
    }
}

/// `trajectory` with `map` applied to every text (task, observations, admissible actions, actions).
fn map_texts(trajectory: &Trajectory, map: impl Fn(&str) -> String) -> Trajectory {
    let mut mapped = trajectory.clone();
    mapped.task = map(&trajectory.task);
    for step in &mut mapped.steps {
        step.observation = Observation::new(map(step.observation.as_str()));
        step.action = Action::new(map(step.action.as_str()));
        for action in &mut step.admissible_actions {
            *action = Action::new(map(action.as_str()));
        }
    }
    mapped
}

/// Every `<object or receptacle class> <number>` in `text`: the class, the number and the byte range of the number.
fn mentions(text: &str) -> Vec<(Class, u32, std::ops::Range<usize>)> {
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
                .map(Class::Object)
                .or_else(|| ReceptacleClass::from_name(&text[i..word_end]).map(Class::Receptacle))
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
        InstanceRenaming {
            numbers: pairs.iter().map(|(c, p)| (*c, p.to_vec())).collect(),
            receptacles: BTreeMap::new(),
        }
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

    #[test]
    fn no_class_name_is_both_an_object_and_a_receptacle() {
        for class in ReceptacleClass::ALL {
            assert_eq!(ObjectClass::from_name(class.name()), None, "{class}");
        }
    }

    #[test]
    fn receptacles_are_renumbered_in_order_and_objects_as_without_them() {
        let room = "you see a cabinet 3, a cabinet 2, a cabinet 1, a fridge 1, and a mug 2. take mug 1 from cabinet 2";
        let with = InstanceRenaming::random_with_receptacles([room], 11);
        let without = InstanceRenaming::random([room], 11);
        assert_eq!(with.numbers, without.numbers, "the same seed renames objects alike");
        assert!(without.receptacles.is_empty());
        let cabinets = &with.receptacles[&ReceptacleClass::Cabinet];
        assert_eq!(cabinets.len(), 3);
        assert!(cabinets.windows(2).all(|w| w[0] < w[1]) && cabinets[2] <= 6, "{cabinets:?}");
        assert!(with.receptacles[&ReceptacleClass::Fridge][0] <= 2);
        let renamed = with.apply(room);
        assert!(renamed.ends_with(&format!("from cabinet {}", cabinets[1])), "{renamed}");
        assert!(
            renamed
                .contains(&format!("a cabinet {}, a cabinet {}, a cabinet {},", cabinets[2], cabinets[1], cabinets[0]))
        );
        // Some seed moves a receptacle off its original number.
        assert!(
            (0..20)
                .any(|seed| InstanceRenaming::random_with_receptacles([room], seed).apply(room) != without.apply(room))
        );
    }

    #[test]
    fn a_class_swap_renames_the_task_object_everywhere() {
        let swap = ClassSwap { object: ObjectClass::Apple, other: ObjectClass::Tomato };
        assert_eq!(
            swap.apply("put a hot apple in countertop. On the fridge 1, you see a tomato 2, an apple 1, a pineapple."),
            "put a hot tomato in countertop. On the fridge 1, you see a apple 2, an tomato 1, a pineapple."
        );
        assert_eq!(
            swap.apply_to_action(&Action::new("take apple 1 from fridge 1")).as_str(),
            "take tomato 1 from fridge 1"
        );
    }

    #[test]
    fn a_class_swap_keeps_what_the_task_needs() {
        for seed in 0..200 {
            let hot = ClassSwap::random("put a hot apple in countertop.", seed).unwrap();
            assert_eq!(hot.object, ObjectClass::Apple);
            assert!(hot.other.heatable() && hot.other != ObjectClass::Apple, "{hot:?}");
            assert!(ReceptacleClass::CounterTop.can_contain(hot.other));
            let look = ClassSwap::random("look at bowl under the desklamp.", seed).unwrap();
            assert!(look.other.pickupable() && look.other != ObjectClass::DeskLamp && look.other != ObjectClass::Bowl);
            let clean = ClassSwap::random("clean some fork and put it in drawer.", seed).unwrap();
            assert!(clean.other.cleanable() && ReceptacleClass::Drawer.can_contain(clean.other), "{clean:?}");
        }
        assert_eq!(ClassSwap::random("go somewhere.", 1), None);
        let partners: std::collections::BTreeSet<_> =
            (0..200).map(|seed| ClassSwap::random("put a hot apple in countertop.", seed).unwrap().other).collect();
        assert!(partners.len() > 3, "{partners:?}");
    }

    proptest! {
        /// A renaming is a bijection on each class's instances: mentions stay distinct and stay objects.
        #[test]
        fn renaming_permutes_the_mentions(numbers in proptest::collection::vec(1u32..9, 1..12), seed in any::<u64>()) {
            let text: String = numbers.iter().map(|n| format!("a mug {n}, a cabinet {n}, ")).collect();
            let r = InstanceRenaming::random([text.as_str()], seed);
            let renamed = r.apply(&text);
            let objects = |t: &str| -> Vec<u32> {
                mentions(t).into_iter().filter(|(c, _, _)| matches!(c, Class::Object(_))).map(|(_, n, _)| n).collect()
            };
            let (before, after) = (objects(&text), objects(&renamed));
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

        /// A class swap is its own inverse and changes nothing but the two classes' words.
        #[test]
        fn a_class_swap_is_an_involution(words in proptest::collection::vec(0usize..6, 0..30), seed in any::<u64>()) {
            const WORDS: [&str; 6] = ["apple", "tomato", "apples", "fridge 1", "a", "pineapple"];
            let text = words.iter().map(|&w| WORDS[w]).collect::<Vec<_>>().join(", ");
            let swap = ClassSwap::random("put a cool apple in fridge.", seed).unwrap();
            prop_assert_eq!(swap.apply(&swap.apply(&text)), text.clone());
            let other = swap.other.name();
            let untouched = |t: &str| t.split(", ").filter(|w| *w != "apple" && *w != other).map(str::to_owned).collect::<Vec<_>>();
            prop_assert_eq!(untouched(&swap.apply(&text)).len(), untouched(&text).len());
        }

        /// Renumbered receptacles stay distinct, keep their order and fall in `1..=2m`.
        #[test]
        fn receptacle_renumbering_is_increasing(count in 1u32..12, seed in any::<u64>()) {
            let text: String = (1..=count).rev().map(|n| format!("a drawer {n}, a mug {n}, ")).collect();
            let renamed = InstanceRenaming::random_with_receptacles([text.as_str()], seed).apply(&text);
            let drawers: Vec<u32> = mentions(&renamed)
                .into_iter()
                .filter(|(c, _, _)| *c == Class::Receptacle(ReceptacleClass::Drawer))
                .map(|(_, n, _)| n)
                .collect();
            prop_assert_eq!(drawers.len(), count as usize);
            prop_assert!(drawers.windows(2).all(|w| w[0] > w[1]), "descending as listed: {:?}", drawers);
            prop_assert!(drawers.iter().all(|n| (1..=2 * count).contains(n)));
        }
    }
}
