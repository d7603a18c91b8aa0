//! ICRL's arithmetic (arXiv 2605.15224; code brick-pid/ICRL on the slime framework), as pure
//! functions: one backbone plays two roles, a *solver* that plays an episode and, after a failed round, a *critic*
//! that reads the failed trajectory and writes tips for the solver's next round.
//!
//! - Role-wise advantages ([`icrl_advantages`]): the samples of one task group are split into buckets keyed
//!   (group, round, role); each bucket is normalised with one pseudo reward [`PSEUDO_REWARD`] = 1 added to its
//!   statistics only, `A = (r − mean(B ∪ {1})) / (std(B ∪ {1}) + 1e-6)` with the unbiased (Bessel) std, as the
//!   reference's `rewards2.py` computes it. A bucket that always fails gets a negative advantage (eight failures:
//!   −1/3 each), one that always succeeds gets 0.
//! - The filter ([`icrl_trained`]): a group's round-2+ solver buckets and its critic buckets are trained only if one
//!   of their samples succeeded and their mean reward is at least [`MASK_THRESHOLD`] (the reference's
//!   `sample_filters.py`); round-1 solver buckets are always trained.
//! - The critic's reward ([`critic_reward`]): 1 when the round after its tips succeeds, else how much the reward
//!   rose (after − before).
//! - Distribution calibration ([`calibration_weights`]): a solver turn sampled under a prompt with tips is trained
//!   under its critique-free prompt with the same completion tokens, each token weighted by
//!   `w = clamp(exp(log π_old(y | x_free) − log π_behaviour(y | x_tips)), 0, 2)`, detached, multiplied into the
//!   clipped term. Because `w ≥ 0`, weighting the clipped term equals weighting the token's advantage:
//!   [`crate::PreparedSequence::token_weights`] carries it.
//!
//! ```
//! use act_grpo::icrl::{IcrlRole, IcrlSample, icrl_advantages, icrl_trained};
//! let sample = |round, role, reward: f64| IcrlSample { group: 0, round, role, reward, success: reward == 1.0 };
//! // Eight first rounds that all failed, and the two second rounds that followed two of them (one won).
//! let mut samples = vec![sample(1, IcrlRole::Solver, 0.0); 8];
//! samples.extend([sample(2, IcrlRole::Solver, 1.0), sample(2, IcrlRole::Solver, 0.0)]);
//! let advantages = icrl_advantages(&samples);
//! assert!((advantages[0] + 1.0 / 3.0).abs() < 1e-5);
//! // The second-round bucket has a success and mean 0.5 >= 0.3: trained.
//! assert!(icrl_trained(&samples, 0.3).iter().all(|&t| t));
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The pseudo reward added to every bucket's statistics.
pub const PSEUDO_REWARD: f64 = 1.0;

/// The reference's `mask_reward_threshold`: the smallest mean reward a filtered bucket must reach.
pub const MASK_THRESHOLD: f64 = 0.3;

/// The reference's bound on the calibration weight.
pub const MAX_CALIBRATION_WEIGHT: f32 = 2.0;

/// Added to a bucket's std before dividing (the reference's 1e-6).
const STD_EPS: f64 = 1e-6;

/// Which role a sample was generated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IcrlRole {
    /// Plays a round of the episode.
    Solver,
    /// Writes tips after a failed round.
    Critic,
}

/// One trained sample: a solver's round or a critic's tips.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IcrlSample {
    /// The task group (the episodes played on one task and seed).
    pub group: usize,
    /// The round, from 1 (a critic's round is the round its tips were written after).
    pub round: usize,
    /// The role it was generated in.
    pub role: IcrlRole,
    /// Its reward: the round's final reward for a solver, [`critic_reward`] for a critic.
    pub reward: f64,
    /// Whether it counts as a success for the filter (a won round; a critic whose next round was won).
    pub success: bool,
}

impl IcrlSample {
    fn bucket(&self) -> (usize, usize, IcrlRole) {
        (self.group, self.round, self.role)
    }

    /// Whether the filter looks at this sample's bucket: every critic bucket and the solver's later rounds.
    fn filtered(&self) -> bool {
        self.role == IcrlRole::Critic || self.round >= 2
    }
}

/// The indices of `samples` per (group, round, role) bucket.
fn buckets(samples: &[IcrlSample]) -> BTreeMap<(usize, usize, IcrlRole), Vec<usize>> {
    let mut out: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    for (i, s) in samples.iter().enumerate() {
        out.entry(s.bucket()).or_default().push(i);
    }
    out
}

/// Each sample's advantage: its reward normalised within its (group, round, role) bucket, with one pseudo reward
/// [`PSEUDO_REWARD`] added to the bucket's mean and unbiased std (not given an advantage itself).
pub fn icrl_advantages(samples: &[IcrlSample]) -> Vec<f64> {
    let mut advantages = vec![0.0; samples.len()];
    for indices in buckets(samples).values() {
        let augmented: Vec<f64> =
            indices.iter().map(|&i| samples[i].reward).chain(std::iter::once(PSEUDO_REWARD)).collect();
        let n = augmented.len() as f64;
        let mean = augmented.iter().sum::<f64>() / n;
        let std = (augmented.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        for &i in indices {
            advantages[i] = (samples[i].reward - mean) / (std + STD_EPS);
        }
    }
    advantages
}

/// Which samples are trained: false for every sample of a critic or round-2+ solver bucket without a success or
/// whose mean reward is below `threshold` (the reference uses [`MASK_THRESHOLD`]).
pub fn icrl_trained(samples: &[IcrlSample], threshold: f64) -> Vec<bool> {
    let mut trained = vec![true; samples.len()];
    for indices in buckets(samples).values() {
        if !samples[indices[0]].filtered() {
            continue;
        }
        let success = indices.iter().any(|&i| samples[i].success);
        let mean = indices.iter().map(|&i| samples[i].reward).sum::<f64>() / indices.len() as f64;
        if !(success && mean >= threshold) {
            for &i in indices {
                trained[i] = false;
            }
        }
    }
    trained
}

/// The critic's reward for tips written between a round with final reward `before` and the next round, which
/// ended with `after` and succeeded or not: 1 on success, else `after − before`.
pub fn critic_reward(before: f64, after: f64, next_succeeded: bool) -> f64 {
    if next_succeeded { 1.0 } else { after - before }
}

/// The calibration weight of each completion token: `clamp(exp(old_free − behaviour), 0, 2)`, from the old
/// policy's log-probs under the critique-free prompt and the log-probs the tokens were sampled with (under the
/// prompt with tips). Both slices hold one log-prob per completion token; a shorter one bounds the output.
pub fn calibration_weights(old_free: &[f32], behaviour: &[f32]) -> Vec<f32> {
    old_free
        .iter()
        .zip(behaviour)
        .map(|(&free, &tips)| ((free - tips) as f64).exp().clamp(0.0, f64::from(MAX_CALIBRATION_WEIGHT)) as f32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(group: usize, round: usize, role: IcrlRole, reward: f64) -> IcrlSample {
        IcrlSample { group, round, role, reward, success: reward >= 1.0 }
    }

    #[test]
    fn an_all_fail_bucket_of_eight_gets_minus_a_third_and_an_all_success_bucket_zero() {
        let fails = vec![sample(0, 1, IcrlRole::Solver, 0.0); 8];
        for a in icrl_advantages(&fails) {
            // Mean 1/9, unbiased std of eight 0s and one 1 is 1/3: (0 - 1/9) / (1/3) = -1/3.
            assert!((a + 1.0 / 3.0).abs() < 1e-5, "{a}");
        }
        let wins = vec![sample(0, 1, IcrlRole::Solver, 1.0); 8];
        assert!(icrl_advantages(&wins).iter().all(|&a| a == 0.0));
    }

    #[test]
    fn buckets_are_normalised_apart() {
        // Group 0 round 1: rewards 0 and 1 (+ pseudo 1): mean 2/3, std sqrt(1/3).
        // Group 1 round 1 and group 0's critic are buckets of their own.
        let samples = vec![
            sample(0, 1, IcrlRole::Solver, 0.0),
            sample(0, 1, IcrlRole::Solver, 1.0),
            sample(1, 1, IcrlRole::Solver, 0.0),
            sample(0, 1, IcrlRole::Critic, 0.5),
        ];
        let a = icrl_advantages(&samples);
        let std = (1.0f64 / 3.0).sqrt();
        assert!((a[0] - (0.0 - 2.0 / 3.0) / (std + STD_EPS)).abs() < 1e-9);
        assert!((a[1] - (1.0 - 2.0 / 3.0) / (std + STD_EPS)).abs() < 1e-9);
        // A bucket of one: {0, 1} has mean 1/2 and std sqrt(1/2).
        assert!((a[2] - (-0.5 / (0.5f64.sqrt() + STD_EPS))).abs() < 1e-9);
        // The critic's bucket {0.5} + pseudo 1: mean 0.75, std sqrt(0.125).
        assert!((a[3] - (-0.25 / (0.125f64.sqrt() + STD_EPS))).abs() < 1e-9);
    }

    #[test]
    fn the_filter_masks_later_rounds_and_critics_without_a_success_or_a_high_enough_mean() {
        let samples = vec![
            // Round 1 solvers: never masked, even all failing.
            sample(0, 1, IcrlRole::Solver, 0.0),
            sample(0, 1, IcrlRole::Solver, 0.0),
            // Round 2 solvers: one success, mean 0.5: kept.
            sample(0, 2, IcrlRole::Solver, 1.0),
            sample(0, 2, IcrlRole::Solver, 0.0),
            // Critics: one success but mean 0.25 < 0.3: masked.
            sample(0, 1, IcrlRole::Critic, 1.0),
            sample(0, 1, IcrlRole::Critic, -0.5),
            sample(0, 1, IcrlRole::Critic, 0.25),
            sample(0, 1, IcrlRole::Critic, 0.25),
            // Another group's round 2: mean 0.5 but no success: masked.
            sample(1, 2, IcrlRole::Solver, 0.5),
        ];
        let trained = icrl_trained(&samples, MASK_THRESHOLD);
        assert_eq!(trained, vec![true, true, true, true, false, false, false, false, false]);
        // With a lower threshold the critics' bucket passes.
        assert!(icrl_trained(&samples, 0.2)[4..8].iter().all(|&t| t));
    }

    #[test]
    fn critic_reward_is_one_on_success_else_the_gain() {
        assert_eq!(critic_reward(0.0, 1.0, true), 1.0);
        assert_eq!(critic_reward(0.4, 0.9, true), 1.0);
        assert!((critic_reward(0.25, 0.5, false) - 0.25).abs() < 1e-12);
        assert!((critic_reward(0.5, 0.0, false) + 0.5).abs() < 1e-12);
    }

    #[test]
    fn calibration_weights_are_one_for_equal_prompts_and_clamped_at_two() {
        let lp = [-0.1f32, -2.0, -5.5];
        assert_eq!(calibration_weights(&lp, &lp), vec![1.0; 3]);
        let w = calibration_weights(&[-0.1, -3.0, -1.0], &[-2.0, -1.0, -1.0 - 2f32.ln()]);
        assert_eq!(w[0], MAX_CALIBRATION_WEIGHT, "exp(1.9) clamped");
        assert!((w[1] - (-2.0f32).exp()).abs() < 1e-6);
        assert!((w[2] - 2.0).abs() < 1e-5);
    }

    proptest! {
        #[test]
        fn advantages_are_centred_below_the_pseudo_reward(rewards in proptest::collection::vec(0.0f64..=1.0, 1..12)) {
            let samples: Vec<IcrlSample> =
                rewards.iter().map(|&r| sample(0, 1, IcrlRole::Solver, r)).collect();
            let a = icrl_advantages(&samples);
            // With the pseudo reward at the top of the range, the samples' advantages sum to at most 0, and
            // order follows reward.
            prop_assert!(a.iter().sum::<f64>() <= 1e-9);
            for i in 0..rewards.len() {
                for j in 0..rewards.len() {
                    if rewards[i] < rewards[j] {
                        prop_assert!(a[i] < a[j]);
                    }
                }
            }
        }

        #[test]
        fn calibration_weights_stay_in_range(pairs in proptest::collection::vec((-20.0f32..0.0, -20.0f32..0.0), 0..16)) {
            let (free, tips): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
            for w in calibration_weights(&free, &tips) {
                prop_assert!((0.0..=MAX_CALIBRATION_WEIGHT).contains(&w));
            }
        }
    }
}
