//! Training episodes with their objects' instance numbers renamed (ALFWorld), for the base stage and IL: see
//! [`act_alfworld::augment`] for why. Each episode is replaced by `copies` renamed copies, each with its own
//! random renaming (of receptacle numbers too when `receptacles` is set); the environment is never touched, only
//! the text the model trains on.

use act_alfworld::InstanceRenaming;
use act_core::{Trajectory, derive_seed};

use crate::dart::Relabelled;

/// Every text of `trajectory` that can mention an object (observations, actions, admissible actions, the task).
fn texts(trajectory: &Trajectory) -> impl Iterator<Item = &str> {
    std::iter::once(trajectory.task.as_str()).chain(trajectory.steps.iter().flat_map(|s| {
        [s.observation.as_str(), s.action.as_str()].into_iter().chain(s.admissible_actions.iter().map(|a| a.as_str()))
    }))
}

/// `copies` copies of each item, copy `c` of item `i` made by `rename(item, derive_seed(seed, i * copies + c))`;
/// the items as they are when `copies` is 0.
fn copies_of<T: Clone>(items: &[T], copies: usize, seed: u64, rename: impl Fn(&T, u64) -> T) -> Vec<T> {
    if copies == 0 {
        return items.to_vec();
    }
    let rename = &rename;
    items
        .iter()
        .enumerate()
        .flat_map(|(i, item)| (0..copies).map(move |c| rename(item, derive_seed(seed, (i * copies + c) as u64))))
        .collect()
}

/// A random renaming of `texts`' objects, and of their receptacles when `receptacles` is set.
fn renaming<'a>(texts: impl IntoIterator<Item = &'a str>, seed: u64, receptacles: bool) -> InstanceRenaming {
    if receptacles {
        InstanceRenaming::random_with_receptacles(texts, seed)
    } else {
        InstanceRenaming::random(texts, seed)
    }
}

/// `copies` renamed copies of each trajectory (episode `i`'s copy `c` renamed with `derive_seed(seed, i * copies
/// + c)`), or the trajectories as they are when `copies` is 0; `receptacles` renumbers receptacles too.
pub fn renamed_trajectories(
    trajectories: &[Trajectory],
    copies: usize,
    receptacles: bool,
    seed: u64,
) -> Vec<Trajectory> {
    copies_of(trajectories, copies, seed, |t, seed| renaming(texts(t), seed, receptacles).apply_to_trajectory(t))
}

/// As [`renamed_trajectories`] for relabelled episodes: each copy's labels get its trajectory's renaming.
pub fn renamed_relabelled(relabelled: &[Relabelled], copies: usize, receptacles: bool, seed: u64) -> Vec<Relabelled> {
    copies_of(relabelled, copies, seed, |r, seed| {
        let all = texts(&r.trajectory).chain(r.labels.iter().map(|a| a.as_str()));
        let renaming = renaming(all, seed, receptacles);
        Relabelled {
            trajectory: renaming.apply_to_trajectory(&r.trajectory),
            labels: r.labels.iter().map(|a| renaming.apply_to_action(a)).collect(),
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
            check_renamed(&relabelled, receptacles);
        }
    }

    fn check_renamed(relabelled: &[Relabelled], receptacles: bool) {
        let renamed = renamed_relabelled(relabelled, 2, receptacles, 9);
        assert_eq!(renamed.len(), 24);
        assert_eq!(renamed_relabelled(relabelled, 2, receptacles, 9), renamed, "seeded");
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
        }
        assert!(changed > 0, "some episode has an object with two instances");
        let first = [relabelled[0].trajectory.clone()];
        assert_eq!(renamed_trajectories(&first, 0, receptacles, 1), first);
    }
}
