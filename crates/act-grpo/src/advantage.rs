//! Group-relative advantages: each completion's reward against the other completions of its prompt.

use crate::config::{AdvantageConfig, AdvantageMode, SingletonAdvantage};
use crate::error::GrpoError;

/// A reward standard deviation at or below this counts as zero (torch's `isclose(std, 0)` tolerance, which TRL
/// uses for the same metric).
pub const ZERO_STD_TOLERANCE: f64 = 1e-8;

/// Advantages of a batch of groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Advantages {
    /// One advantage per completion, in the order of the rewards.
    pub advantages: Vec<f64>,
    /// Groups whose rewards were all equal (no learning signal).
    pub zero_std_groups: usize,
    /// Number of groups.
    pub groups: usize,
}

impl Advantages {
    /// The fraction of groups with zero reward spread.
    pub fn zero_std_fraction(&self) -> f64 {
        if self.groups == 0 { 0.0 } else { self.zero_std_groups as f64 / self.groups as f64 }
    }
}

/// Mean and unbiased (Bessel) standard deviation; the std of fewer than two values is `None`.
pub fn mean_std(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, None);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, Some(var.sqrt()))
}

/// Advantages of `rewards`, laid out as consecutive groups of `group_size` (the last group may be shorter).
///
/// Errors on an empty batch, a zero group size or a non-finite reward.
///
/// ```
/// use act_grpo::{AdvantageConfig, group_advantages};
/// // Two prompts, G = 2: the Bessel std of {0, 1} is 0.7071, so the advantages are about +-0.7070.
/// let out = group_advantages(&[0.0, 1.0, 1.0, 1.0], 2, &AdvantageConfig::default()).unwrap();
/// assert!((out.advantages[1] - 0.5 / (0.5f64.sqrt() + 1e-4)).abs() < 1e-12);
/// assert_eq!(&out.advantages[2..], &[0.0, 0.0]);
/// assert_eq!(out.zero_std_groups, 1);
/// ```
pub fn group_advantages(rewards: &[f64], group_size: usize, config: &AdvantageConfig) -> Result<Advantages, GrpoError> {
    if group_size == 0 {
        return Err(GrpoError::Input("group size must be positive".into()));
    }
    if rewards.is_empty() {
        return Err(GrpoError::Input("no rewards to compute advantages from".into()));
    }
    if let Some(i) = rewards.iter().position(|r| !r.is_finite()) {
        return Err(GrpoError::Input(format!("reward {i} is not finite ({})", rewards[i])));
    }
    let batch_std = mean_std(rewards).1;
    let mut advantages = Vec::with_capacity(rewards.len());
    let mut zero_std_groups = 0;
    let mut groups = 0;
    for group in rewards.chunks(group_size) {
        groups += 1;
        let (mean, std) = mean_std(group);
        let Some(std) = std else {
            // A lone completion: no group to compare with.
            zero_std_groups += 1;
            advantages.push(match config.singleton {
                SingletonAdvantage::Zero => 0.0,
                SingletonAdvantage::Reward => group[0],
            });
            continue;
        };
        if std <= ZERO_STD_TOLERANCE {
            zero_std_groups += 1;
        }
        let scale = match config.mode {
            AdvantageMode::Group => std + config.eps,
            // A batch of one completion has no std; its only group is a singleton, handled above.
            AdvantageMode::Batch => batch_std.unwrap_or(0.0) + config.eps,
            AdvantageMode::MeanOnly => 1.0,
        };
        if scale == 0.0 {
            // eps = 0 and every reward equal: the centred rewards are all 0, and 0 is the only sensible advantage.
            advantages.extend(std::iter::repeat_n(0.0, group.len()));
            continue;
        }
        advantages.extend(group.iter().map(|r| (r - mean) / scale));
    }
    Ok(Advantages { advantages, zero_std_groups, groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn config(mode: AdvantageMode) -> AdvantageConfig {
        AdvantageConfig { mode, ..AdvantageConfig::default() }
    }

    // Expected values from scripts/expected_losses.py (section "advantages"), same formulas as TRL.
    const REWARDS: [f64; 8] = [1.0, 0.0, 0.5, 0.0, 0.2, 0.2, 0.2, 0.2];

    #[test]
    fn group_mode_matches_reference() {
        let out = group_advantages(&REWARDS, 4, &config(AdvantageMode::Group)).unwrap();
        let expected =
            [1.3053097493539774, -0.7831858496123865, 0.2610619498707955, -0.7831858496123865, 0.0, 0.0, 0.0, 0.0];
        for (a, e) in out.advantages.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{a} vs {e}");
        }
        assert_eq!((out.zero_std_groups, out.groups), (1, 2));
        assert_eq!(out.zero_std_fraction(), 0.5);
    }

    #[test]
    fn batch_mode_matches_reference() {
        let out = group_advantages(&REWARDS, 4, &config(AdvantageMode::Batch)).unwrap();
        let expected =
            [1.9104155748373635, -1.146249344902418, 0.38208311496747266, -1.146249344902418, 0.0, 0.0, 0.0, 0.0];
        for (a, e) in out.advantages.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{a} vs {e}");
        }
    }

    #[test]
    fn mean_only_matches_reference() {
        let out = group_advantages(&REWARDS, 4, &config(AdvantageMode::MeanOnly)).unwrap();
        let expected = [0.625, -0.375, 0.125, -0.375, 0.0, 0.0, 0.0, 0.0];
        for (a, e) in out.advantages.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{a} vs {e}");
        }
    }

    #[test]
    fn two_sample_group_is_plus_minus_0_707() {
        let c = AdvantageConfig { eps: 0.0, ..AdvantageConfig::default() };
        let out = group_advantages(&[0.0, 1.0], 2, &c).unwrap();
        assert!((out.advantages[0] + std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        assert!((out.advantages[1] - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        let verl = AdvantageConfig { eps: 1e-6, ..AdvantageConfig::default() };
        let trl = group_advantages(&[0.0, 1.0], 2, &AdvantageConfig::default()).unwrap();
        let verl = group_advantages(&[0.0, 1.0], 2, &verl).unwrap();
        assert!(trl.advantages[1] < verl.advantages[1], "the larger eps shrinks the advantage");
    }

    #[test]
    fn singleton_conventions() {
        let trl = group_advantages(&[0.7], 1, &AdvantageConfig::default()).unwrap();
        assert_eq!(trl.advantages, vec![0.0]);
        let verl = AdvantageConfig { singleton: SingletonAdvantage::Reward, ..AdvantageConfig::default() };
        assert_eq!(group_advantages(&[0.7, 0.1], 1, &verl).unwrap().advantages, vec![0.7, 0.1]);
        // A short last group of one.
        let out = group_advantages(&[1.0, 0.0, 0.3], 2, &verl).unwrap();
        assert_eq!(out.advantages[2], 0.3);
        assert_eq!(out.groups, 2);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(group_advantages(&[], 2, &AdvantageConfig::default()).is_err());
        assert!(group_advantages(&[1.0], 0, &AdvantageConfig::default()).is_err());
        let err = group_advantages(&[1.0, f64::NAN], 2, &AdvantageConfig::default()).unwrap_err();
        assert!(err.to_string().contains("reward 1"), "{err}");
    }

    #[test]
    fn zero_eps_equal_rewards_give_zero() {
        let c = AdvantageConfig { eps: 0.0, ..AdvantageConfig::default() };
        assert_eq!(group_advantages(&[0.5, 0.5, 0.5], 3, &c).unwrap().advantages, vec![0.0; 3]);
    }

    proptest! {
        #[test]
        fn group_advantages_are_centred_and_scaled(
            rewards in proptest::collection::vec(-10.0f64..10.0, 2..40),
            g in 2usize..6,
        ) {
            let n = rewards.len() / g * g;
            prop_assume!(n >= g);
            let rewards = &rewards[..n];
            for mode in [AdvantageMode::Group, AdvantageMode::Batch, AdvantageMode::MeanOnly] {
                let out = group_advantages(rewards, g, &config(mode)).unwrap();
                prop_assert_eq!(out.advantages.len(), n);
                for (group, adv) in rewards.chunks(g).zip(out.advantages.chunks(g)) {
                    prop_assert!(adv.iter().sum::<f64>().abs() < 1e-9);
                    // Order is preserved: a higher reward never gets a lower advantage.
                    for i in 0..g {
                        for j in 0..g {
                            if group[i] > group[j] {
                                prop_assert!(adv[i] >= adv[j]);
                            }
                        }
                    }
                    if mode == AdvantageMode::Group {
                        let (_, std) = mean_std(adv);
                        prop_assert!(std.unwrap() <= 1.0 + 1e-9);
                    }
                }
            }
        }
    }
}
