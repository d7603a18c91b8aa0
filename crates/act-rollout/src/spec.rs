//! Which episodes to play: a task, the seed the environment resets with, the seed stream of the actor's sampling,
//! and the group the episode belongs to.

use act_core::{Split, TaskRef, derive_seed};
use serde::{Deserialize, Serialize};

/// The sub-stream of a group's seed that seeds its members' sampling: member `m` samples from
/// `derive_seed(derive_seed(group_seed, MEMBER_STREAM), m)`.
const MEMBER_STREAM: u64 = 0x6D65_6D62_6572; // "member"

/// One episode to play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeSpec {
    /// The episode's position among those played together; played episodes come back in this order.
    pub index: usize,
    /// The task.
    pub task: TaskRef,
    /// The seed the environment resets with: episodes with the same task and seed start identically.
    pub seed: u64,
    /// The actor's sampling stream when the episode is played on its own (a rollout batch size of 1): step `t`
    /// samples from `derive_seed(sample_seed, t)`. Lockstep batches seed each call instead
    /// ([`RolloutConfig::seed`](crate::RolloutConfig::seed)).
    pub sample_seed: u64,
    /// The group key: the members of a group play the same task from the same seed (GRPO's and GiGPO's groups).
    pub group: usize,
}

impl EpisodeSpec {
    /// Tasks `0..episodes` of `split`, one episode each, in its own group: episode `i` plays task `i` with seed
    /// `derive_seed(seed, i)`, which also seeds its sampling (act-eval's layout).
    ///
    /// ```
    /// use act_core::{Split, TaskRef};
    /// let specs = act_rollout::EpisodeSpec::split(Split::Test, 3, 7);
    /// assert_eq!(specs[2].task, TaskRef::index(Split::Test, 2));
    /// assert_eq!(specs[2].seed, act_core::derive_seed(7, 2));
    /// assert_eq!(specs[2].group, 2);
    /// ```
    pub fn split(split: Split, episodes: usize, seed: u64) -> Vec<EpisodeSpec> {
        (0..episodes)
            .map(|i| {
                let episode_seed = derive_seed(seed, i as u64);
                EpisodeSpec {
                    index: i,
                    task: TaskRef::index(split, i),
                    seed: episode_seed,
                    sample_seed: episode_seed,
                    group: i,
                }
            })
            .collect()
    }

    /// `group_size` episodes of each task in `tasks`, member by member: group `j` plays `tasks[j]` with seed
    /// `derive_seed(seed, j)` (every member starts from the same state), and each member has its own sampling
    /// stream. Episode `j * group_size + m` is member `m` of group `j`.
    ///
    /// ```
    /// use act_core::{Split, TaskRef};
    /// let tasks = [TaskRef::index(Split::Train, 4), TaskRef::index(Split::Train, 9)];
    /// let specs = act_rollout::EpisodeSpec::groups(&tasks, 3, 0);
    /// assert_eq!(specs.len(), 6);
    /// assert_eq!((specs[4].group, &specs[4].task), (1, &tasks[1]));
    /// assert_eq!(specs[3].seed, specs[5].seed);
    /// assert_ne!(specs[3].sample_seed, specs[5].sample_seed);
    /// ```
    pub fn groups(tasks: &[TaskRef], group_size: usize, seed: u64) -> Vec<EpisodeSpec> {
        tasks
            .iter()
            .enumerate()
            .flat_map(|(j, task)| {
                let group_seed = derive_seed(seed, j as u64);
                let members = derive_seed(group_seed, MEMBER_STREAM);
                (0..group_size).map(move |m| EpisodeSpec {
                    index: j * group_size + m,
                    task: task.clone(),
                    seed: group_seed,
                    sample_seed: derive_seed(members, m as u64),
                    group: j,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn groups_share_task_and_seed_and_nothing_else(tasks in 1usize..6, size in 1usize..6, seed in 0u64..1000) {
            let refs: Vec<TaskRef> = (0..tasks).map(|i| TaskRef::index(Split::Train, i * 3)).collect();
            let specs = EpisodeSpec::groups(&refs, size, seed);
            proptest::prop_assert_eq!(specs.len(), tasks * size);
            for (i, spec) in specs.iter().enumerate() {
                proptest::prop_assert_eq!(spec.index, i);
                proptest::prop_assert_eq!(spec.group, i / size);
                proptest::prop_assert_eq!(&spec.task, &refs[i / size]);
                proptest::prop_assert_eq!(spec.seed, specs[spec.group * size].seed);
            }
            let mut streams: Vec<u64> = specs.iter().map(|s| s.sample_seed).collect();
            streams.sort_unstable();
            streams.dedup();
            proptest::prop_assert_eq!(streams.len(), specs.len());
            let mut seeds: Vec<u64> = specs.iter().map(|s| s.seed).collect();
            seeds.dedup();
            proptest::prop_assert_eq!(seeds.len(), tasks);
        }
    }
}
