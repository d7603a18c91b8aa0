//! Training episodes with their objects' instance numbers renamed (ALFWorld), for the base stage and IL: see
//! [`act_alfworld::InstanceRenaming`] for why. Each episode is replaced by `copies` renamed copies, each with its own
//! random renaming (of receptacle numbers too when `receptacles` is set; every copy after the first also swaps the
//! task's object class with another when `classes` is set, [`act_alfworld::ClassSwap`]); the environment is never
//! touched, only the text the model trains on.

use act_alfworld::{ClassSwap, InstanceRenaming};
use act_core::{Trajectory, derive_seed};

use crate::dart::Relabelled;

/// Every text of `trajectory` that can mention an object (observations, actions, admissible actions, the task).
fn texts(trajectory: &Trajectory) -> impl Iterator<Item = &str> {
    std::iter::once(trajectory.task.as_str()).chain(trajectory.steps.iter().flat_map(|s| {
        [s.observation.as_str(), s.action.as_str()].into_iter().chain(s.admissible_actions.iter().map(|a| a.as_str()))
    }))
}

/// How the renamed copies rename.
#[derive(Debug, Clone, Copy, Default)]
pub struct Renaming {
    /// Copies per episode (0: the episodes as they are).
    pub copies: usize,
    /// Whether receptacle numbers are renamed too.
    pub receptacles: bool,
    /// Whether every copy after the first also swaps the task's object class with another.
    pub classes: bool,
}

/// The class swap of copy `copy` of an episode with task `task`: none for the first copy or without `classes`.
fn class_swap(task: &str, copy: usize, classes: bool, seed: u64) -> Option<ClassSwap> {
    (classes && copy > 0).then(|| ClassSwap::random(task, derive_seed(seed, u64::MAX))).flatten()
}

/// `copies` copies of each item, copy `c` of item `i` made by `rename(item, c, derive_seed(seed, i * copies + c))`;
/// the items as they are when `copies` is 0.
fn copies_of<T: Clone>(items: &[T], copies: usize, seed: u64, rename: impl Fn(&T, usize, u64) -> T) -> Vec<T> {
    if copies == 0 {
        return items.to_vec();
    }
    let rename = &rename;
    items
        .iter()
        .enumerate()
        .flat_map(|(i, item)| (0..copies).map(move |c| rename(item, c, derive_seed(seed, (i * copies + c) as u64))))
        .collect()
}

/// A random renaming of `texts`' objects' numbers, and of their receptacles' when `receptacles` is set.
fn numbers<'a>(texts: impl IntoIterator<Item = &'a str>, seed: u64, receptacles: bool) -> InstanceRenaming {
    if receptacles {
        InstanceRenaming::random_with_receptacles(texts, seed)
    } else {
        InstanceRenaming::random(texts, seed)
    }
}

/// `renaming.copies` renamed copies of each trajectory (episode `i`'s copy `c` renamed with `derive_seed(seed, i *
/// copies + c)`), or the trajectories as they are when `copies` is 0.
pub fn renamed_trajectories(trajectories: &[Trajectory], renaming: Renaming, seed: u64) -> Vec<Trajectory> {
    copies_of(trajectories, renaming.copies, seed, |t, copy, seed| {
        let swapped = class_swap(&t.task, copy, renaming.classes, seed).map(|s| s.apply_to_trajectory(t));
        let t = swapped.as_ref().unwrap_or(t);
        numbers(texts(t), seed, renaming.receptacles).apply_to_trajectory(t)
    })
}

/// As [`renamed_trajectories`] for relabelled episodes: each copy's labels get its trajectory's renaming.
pub fn renamed_relabelled(relabelled: &[Relabelled], renaming: Renaming, seed: u64) -> Vec<Relabelled> {
    copies_of(relabelled, renaming.copies, seed, |r, copy, seed| {
        let swap = class_swap(&r.trajectory.task, copy, renaming.classes, seed);
        let swapped = swap.map(|s| Relabelled {
            trajectory: s.apply_to_trajectory(&r.trajectory),
            labels: r.labels.iter().map(|a| s.apply_to_action(a)).collect(),
        });
        let r = swapped.as_ref().unwrap_or(r);
        let all = texts(&r.trajectory).chain(r.labels.iter().map(|a| a.as_str()));
        let numbers = numbers(all, seed, renaming.receptacles);
        Relabelled {
            trajectory: numbers.apply_to_trajectory(&r.trajectory),
            labels: r.labels.iter().map(|a| numbers.apply_to_action(a)).collect(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_alfworld::{AlfworldConfig, AlfworldFactory};
    use act_core::Split;

    #[test]
    fn renamed_expert_episodes_stay_consistent_with_their_labels() {
        let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(12));
        let relabelled = crate::dart::relabelled_episodes(&factory, Split::Train, 12, 0.3, 4).unwrap();
        for receptacles in [false, true] {
            for classes in [false, true] {
                check_renamed(&relabelled, Renaming { copies: 2, receptacles, classes });
            }
        }
    }

    fn check_renamed(relabelled: &[Relabelled], renaming: Renaming) {
        let renamed = renamed_relabelled(relabelled, renaming, 9);
        assert_eq!(renamed.len(), 24);
        assert_eq!(renamed_relabelled(relabelled, renaming, 9), renamed, "seeded");
        let mut changed = 0;
        for (i, r) in renamed.iter().enumerate() {
            let original = &relabelled[i / 2];
            changed += usize::from(r.trajectory != original.trajectory);
            for (step, label) in r.trajectory.steps.iter().zip(&r.labels) {
                // The expert's label was admissible, and stays so: the list and the label get the same renaming.
                assert!(step.admissible_actions.contains(label), "{label}");
            }
            // Renaming keeps every step and the outcome.
            assert_eq!(
                (r.trajectory.steps.len(), r.trajectory.outcome),
                (original.trajectory.steps.len(), original.trajectory.outcome)
            );
            // The first copy keeps the task; a later one names another object class when classes are swapped.
            let swapped = r.trajectory.task != original.trajectory.task;
            let swappable = ClassSwap::random(&original.trajectory.task, 0);
            assert_eq!(swapped, renaming.classes && i % 2 == 1 && swappable.is_some(), "{}", r.trajectory.task);
            if let (true, Some(swap)) = (swapped, swappable) {
                let words = |t: &str| t.split([' ', '.']).map(str::to_owned).collect::<Vec<_>>();
                assert!(!words(&r.trajectory.task).contains(&swap.classes().0.name().to_owned()));
                let takes = |t: &Trajectory| t.steps.iter().filter(|s| s.action.as_str().starts_with("take")).count();
                assert_eq!(takes(&r.trajectory), takes(&original.trajectory));
            }
        }
        assert!(changed > 0, "some episode has an object with two instances");
        let first = [relabelled[0].trajectory.clone()];
        assert_eq!(renamed_trajectories(&first, Renaming::default(), 1), first);
    }
}
