//! Advantages for on-line, multi-turn RL: episode-level GRPO and GiGPO (Feng et al. 2025, "Group-in-Group Policy
//! Optimization for LLM Agent Training"), as pure functions of rewards and keys.

use std::collections::HashMap;
use std::hash::Hash;

use serde::{Deserialize, Serialize};

use crate::advantage::{ZERO_STD_TOLERANCE, mean_std};
use crate::config::SingletonAdvantage;
use crate::error::GrpoError;

/// How rewards are normalised within an episode group or a step group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GigpoNormalisation {
    /// `(x - mean) / (std + eps)` with the Bessel-corrected std (verl-agent's `mean_std_norm`).
    #[default]
    MeanStd,
    /// `x - mean` (verl-agent's `mean_norm`).
    MeanOnly,
}

/// Settings of [`gigpo_advantages`]; the defaults are verl-agent's ALFWorld and WebShop runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GigpoConfig {
    /// Discount of the step returns (`gamma`, 0.95).
    pub gamma: f64,
    /// Weight of the step advantage (`omega`, 1.0); 0 gives episode-level GRPO.
    pub step_weight: f64,
    /// Subtracted from an invalid row's score and from its step return after discounting (0.1).
    pub invalid_penalty: f64,
    /// How both levels normalise.
    pub normalisation: GigpoNormalisation,
    /// Added to the std before dividing (1e-6, verl's).
    pub eps: f64,
    /// What the episode advantage of a group with a single row is.
    pub singleton: SingletonAdvantage,
}

impl Default for GigpoConfig {
    fn default() -> Self {
        GigpoConfig {
            gamma: 0.95,
            step_weight: 1.0,
            invalid_penalty: 0.1,
            normalisation: GigpoNormalisation::MeanStd,
            eps: 1e-6,
            singleton: SingletonAdvantage::Reward,
        }
    }
}

impl GigpoConfig {
    /// Episode-level GRPO: the same episode advantage, no step advantage.
    pub fn episode_grpo() -> Self {
        GigpoConfig { step_weight: 0.0, ..GigpoConfig::default() }
    }

    /// Checks the ranges; the message names the field.
    pub fn validate(&self) -> Result<(), GrpoError> {
        let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(GrpoError::Config(what.to_string())) };
        check((0.0..=1.0).contains(&self.gamma), "gigpo gamma must be in [0, 1]")?;
        check(self.step_weight.is_finite() && self.step_weight >= 0.0, "gigpo step_weight must be >= 0")?;
        check(self.invalid_penalty.is_finite() && self.invalid_penalty >= 0.0, "gigpo invalid_penalty must be >= 0")?;
        check(self.eps.is_finite() && self.eps >= 0.0, "gigpo eps must be >= 0")
    }
}

/// One step of a played episode, as the estimator needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord<A> {
    /// The state's key: rows of one group with equal anchors are compared with each other.
    pub anchor: A,
    /// The environment's reward for this step.
    pub reward: f64,
    /// Whether the action was invalid (penalised).
    pub invalid: bool,
}

/// A played episode: its group key and its steps in order.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeRecord<A> {
    /// Episodes with the same key were played on the same task and seed.
    pub group: u64,
    /// The steps, first to last.
    pub steps: Vec<StepRecord<A>>,
}

/// Counts that say how much signal a batch had.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct GigpoStats {
    /// Episode groups.
    pub episode_groups: usize,
    /// Episode groups whose row scores were all equal (no episode-level signal).
    pub zero_std_episode_groups: usize,
    /// Step groups (distinct anchors within a group).
    pub step_groups: usize,
    /// Step groups of one row (step advantage 0).
    pub singleton_step_groups: usize,
    /// Rows over step groups: how many rows share an anchor on average.
    pub mean_step_group_size: f64,
}

/// Advantages per episode and step, in the order of the input.
#[derive(Debug, Clone, PartialEq)]
pub struct GigpoAdvantages {
    /// `A_E + step_weight * A_S` per episode and step: the advantage to train on.
    pub advantages: Vec<Vec<f64>>,
    /// `A_E` per episode and step.
    pub episode_part: Vec<Vec<f64>>,
    /// `A_S` per episode and step (before the weight).
    pub step_part: Vec<Vec<f64>>,
    /// Step returns `R_t` after the invalid penalty.
    pub returns: Vec<Vec<f64>>,
    /// Signal counts.
    pub stats: GigpoStats,
}

/// Discounted returns `R_t = r_t + gamma * R_{t+1}` of one episode's rewards.
pub fn discounted_returns(rewards: &[f64], gamma: f64) -> Vec<f64> {
    let mut returns = vec![0.0; rewards.len()];
    let mut running = 0.0;
    for (t, r) in rewards.iter().enumerate().rev() {
        running = r + gamma * running;
        returns[t] = running;
    }
    returns
}

/// Normalises each bucket of `values` (rows with the same key) in place; a bucket of one row becomes
/// `singleton(value)`. Returns (buckets, buckets with zero spread, buckets of one row).
fn normalise_buckets<K: Hash + Eq>(
    values: &mut [f64],
    keys: &[K],
    normalisation: GigpoNormalisation,
    eps: f64,
    singleton: impl Fn(f64) -> f64,
) -> (usize, usize, usize) {
    let mut buckets: HashMap<&K, Vec<usize>> = HashMap::new();
    for (row, key) in keys.iter().enumerate() {
        buckets.entry(key).or_default().push(row);
    }
    let (mut zero_std, mut singletons) = (0, 0);
    for rows in buckets.values() {
        let bucket: Vec<f64> = rows.iter().map(|&r| values[r]).collect();
        let (mean, std) = mean_std(&bucket);
        let Some(std) = std else {
            singletons += 1;
            zero_std += 1;
            values[rows[0]] = singleton(bucket[0]);
            continue;
        };
        if std <= ZERO_STD_TOLERANCE {
            zero_std += 1;
        }
        let scale = match normalisation {
            GigpoNormalisation::MeanStd => std + eps,
            GigpoNormalisation::MeanOnly => 1.0,
        };
        for &r in rows {
            values[r] = if scale == 0.0 { 0.0 } else { (values[r] - mean) / scale };
        }
    }
    (buckets.len(), zero_std, singletons)
}

/// GiGPO advantages (episode-level GRPO with `step_weight` 0) of `episodes`; see the module docs.
///
/// Errors on an invalid config, an episode without steps or a non-finite reward (naming the episode and step).
///
/// Every step an agent plays is one training row (its prompt and the completion it sampled). A *group* is G
/// episodes played on the same task with the same environment seed; the estimator needs, per episode, its group
/// key and per step an *anchor* (the state's key: verl-agent uses the raw observation text), the environment's
/// reward and whether the action was invalid. Conventions follow verl-agent (`gigpo/core_gigpo.py`):
///
/// - Row score: the episode's return (sum of its step rewards) minus `invalid_penalty` on rows whose action was
///   invalid. The episode advantage `A_E` normalises the row scores over all step rows of the group (rows, not
///   episodes, so a long episode weighs more); a group of one row gets its score (verl's singleton convention) or
///   0, as [`SingletonAdvantage`] says.
/// - Step return: `R_t = r_t + gamma * R_{t+1}`, then `invalid_penalty` is subtracted on invalid rows (after
///   discounting, so the penalty does not spread to earlier steps). Rows of one group with equal anchors form a
///   step group; the step advantage `A_S` normalises `R_t` within it, and a step group of one row gets 0.
/// - `A = A_E + step_weight * A_S`. With `step_weight = 0` this is episode-level GRPO.
///
/// ```
/// use act_grpo::{EpisodeRecord, GigpoConfig, StepRecord, gigpo_advantages};
/// let step = |anchor: &str, reward: f64| StepRecord { anchor: anchor.to_string(), reward, invalid: false };
/// // Two episodes of one task: both start in the same state; the first wins at its second step.
/// let episodes = vec![
///     EpisodeRecord { group: 0, steps: vec![step("start", 0.0), step("kitchen", 10.0)] },
///     EpisodeRecord { group: 0, steps: vec![step("start", 0.0), step("hall", 0.0)] },
/// ];
/// let out = gigpo_advantages(&episodes, &GigpoConfig::default()).unwrap();
/// // The shared first state compares 9.5 (0.95 * 10) with 0: the winner's first action is better.
/// assert!(out.step_part[0][0] > 0.0 && out.step_part[1][0] < 0.0);
/// // "kitchen" and "hall" occur once each: no step-level comparison.
/// assert_eq!((out.step_part[0][1], out.step_part[1][1]), (0.0, 0.0));
/// assert_eq!(out.stats.step_groups, 3);
/// ```
pub fn gigpo_advantages<A: Hash + Eq>(
    episodes: &[EpisodeRecord<A>],
    config: &GigpoConfig,
) -> Result<GigpoAdvantages, GrpoError> {
    config.validate()?;
    if episodes.is_empty() {
        return Err(GrpoError::Input("no episodes to compute advantages from".into()));
    }
    for (e, episode) in episodes.iter().enumerate() {
        if episode.steps.is_empty() {
            return Err(GrpoError::Input(format!("episode {e} has no steps")));
        }
        if let Some(t) = episode.steps.iter().position(|s| !s.reward.is_finite()) {
            return Err(GrpoError::Input(format!(
                "episode {e}, step {t}: reward is not finite ({})",
                episode.steps[t].reward
            )));
        }
    }
    // Flatten to rows: (episode, step).
    let mut scores = Vec::new();
    let mut returns_flat = Vec::new();
    let mut episode_keys = Vec::new();
    let mut step_keys = Vec::new();
    let mut returns = Vec::with_capacity(episodes.len());
    for episode in episodes {
        let rewards: Vec<f64> = episode.steps.iter().map(|s| s.reward).collect();
        let total: f64 = rewards.iter().sum();
        let mut episode_returns = discounted_returns(&rewards, config.gamma);
        for (step, ret) in episode.steps.iter().zip(&mut episode_returns) {
            let penalty = if step.invalid { config.invalid_penalty } else { 0.0 };
            *ret -= penalty;
            scores.push(total - penalty);
            returns_flat.push(*ret);
            episode_keys.push(episode.group);
            step_keys.push((episode.group, &step.anchor));
        }
        returns.push(episode_returns);
    }
    let singleton = |score: f64| match config.singleton {
        SingletonAdvantage::Zero => 0.0,
        SingletonAdvantage::Reward => match config.normalisation {
            // verl: mean 0 and std 1 for a one-row group.
            GigpoNormalisation::MeanStd => score / (1.0 + config.eps),
            GigpoNormalisation::MeanOnly => score,
        },
    };
    let (episode_groups, zero_std_episode_groups, _) =
        normalise_buckets(&mut scores, &episode_keys, config.normalisation, config.eps, singleton);
    let (step_groups, _, singleton_step_groups) =
        normalise_buckets(&mut returns_flat, &step_keys, config.normalisation, config.eps, |_| 0.0);
    let rows = scores.len();
    let (mut advantages, mut episode_part, mut step_part) = (Vec::new(), Vec::new(), Vec::new());
    let mut row = 0;
    for episode in episodes {
        let range = row..row + episode.steps.len();
        episode_part.push(scores[range.clone()].to_vec());
        step_part.push(returns_flat[range.clone()].to_vec());
        advantages.push(range.clone().map(|r| scores[r] + config.step_weight * returns_flat[r]).collect());
        row = range.end;
    }
    let stats = GigpoStats {
        episode_groups,
        zero_std_episode_groups,
        step_groups,
        singleton_step_groups,
        mean_step_group_size: rows as f64 / step_groups as f64,
    };
    Ok(GigpoAdvantages { advantages, episode_part, step_part, returns, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn step(anchor: &str, reward: f64, invalid: bool) -> StepRecord<String> {
        StepRecord { anchor: anchor.to_string(), reward, invalid }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// A hand-computed case: group 0 holds three episodes that share their first state `s0` (and two of them
    /// state `sA`); group 1 one episode of one step that also starts in `s0`, which must not join group 0's.
    fn case() -> Vec<EpisodeRecord<String>> {
        vec![
            // Won at its second step.
            EpisodeRecord { group: 0, steps: vec![step("s0", 0.0, false), step("sA", 10.0, false)] },
            // Lost, with an invalid action at step 1.
            EpisodeRecord {
                group: 0,
                steps: vec![step("s0", 0.0, false), step("sB", 0.0, true), step("sA", 0.0, false)],
            },
            // Lost.
            EpisodeRecord { group: 0, steps: vec![step("s0", 0.0, false), step("sC", 0.0, false)] },
            // Won at once, alone in its group.
            EpisodeRecord { group: 1, steps: vec![step("s0", 10.0, false)] },
        ]
    }

    #[test]
    fn matches_a_hand_computed_case() {
        let out = gigpo_advantages(&case(), &GigpoConfig::default()).unwrap();
        // Step returns, gamma 0.95, penalty 0.1 after discounting on the invalid row only.
        assert_eq!(out.returns, vec![vec![9.5, 10.0], vec![0.0, -0.1, 0.0], vec![0.0, 0.0], vec![10.0]]);

        // Episode level, over the 7 step rows of group 0 (not its 3 episodes): scores 10, 10, 0, -0.1, 0, 0, 0.
        // mean = 19.9 / 7 = 2.842857142857143; Bessel variance = (2 * 7.157142857^2 + 4 * 2.842857143^2
        // + 2.942857143^2) / 6 = 23.905190476..., std = 4.889395716874477.
        let (mean, std) = (19.9 / 7.0, 4.889395716874477_f64);
        let a = |score: f64| (score - mean) / (std + 1e-6);
        let expected_episode = [vec![a(10.0), a(10.0)], vec![a(0.0), a(-0.1), a(0.0)], vec![a(0.0), a(0.0)]];
        for (got, want) in out.episode_part.iter().zip(&expected_episode) {
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-8, "{g} vs {w}");
            }
        }
        assert!((a(10.0) - 1.46380898740367).abs() < 1e-9, "{}", a(10.0));
        // The one-row group gets its score (verl: mean 0, std 1).
        assert!(close(out.episode_part[3][0], 10.0 / (1.0 + 1e-6)));

        // Step level. s0 in group 0: returns 9.5, 0, 0 -> mean 3.1666..., std 5.4848275573...
        let s0_std = 5.484827557301445;
        assert!(close(out.step_part[0][0], (9.5 - 9.5 / 3.0) / (s0_std + 1e-6)));
        assert!(close(out.step_part[1][0], (-9.5 / 3.0) / (s0_std + 1e-6)));
        assert!(close(out.step_part[2][0], out.step_part[1][0]));
        // sA: 10 and 0 -> +-0.7071.
        assert!(close(out.step_part[0][1], 5.0 / (50f64.sqrt() + 1e-6)));
        assert!(close(out.step_part[1][2], -5.0 / (50f64.sqrt() + 1e-6)));
        // sB and sC occur once: 0. Group 1's s0 is alone in its group: 0.
        assert_eq!((out.step_part[1][1], out.step_part[2][1], out.step_part[3][0]), (0.0, 0.0, 0.0));

        // A = A_E + 1.0 * A_S.
        for e in 0..4 {
            for t in 0..out.advantages[e].len() {
                assert!(close(out.advantages[e][t], out.episode_part[e][t] + out.step_part[e][t]));
            }
        }
        // Step groups: group 0 has s0, sA, sB, sC; group 1 has s0. 8 rows.
        assert_eq!(
            out.stats,
            GigpoStats {
                episode_groups: 2,
                zero_std_episode_groups: 1,
                step_groups: 5,
                singleton_step_groups: 3,
                mean_step_group_size: 8.0 / 5.0
            }
        );
    }

    #[test]
    fn episode_grpo_and_mean_only_variants() {
        let grpo = gigpo_advantages(&case(), &GigpoConfig::episode_grpo()).unwrap();
        assert_eq!(grpo.advantages, grpo.episode_part);
        let mean_only = GigpoConfig { normalisation: GigpoNormalisation::MeanOnly, ..GigpoConfig::default() };
        let out = gigpo_advantages(&case(), &mean_only).unwrap();
        assert!(close(out.episode_part[0][0], 10.0 - 19.9 / 7.0));
        assert!(close(out.step_part[0][1], 5.0));
        assert!(close(out.episode_part[3][0], 10.0));
        let zero = GigpoConfig { singleton: SingletonAdvantage::Zero, ..GigpoConfig::default() };
        assert_eq!(gigpo_advantages(&case(), &zero).unwrap().episode_part[3][0], 0.0);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let none: Vec<EpisodeRecord<String>> = Vec::new();
        assert!(gigpo_advantages(&none, &GigpoConfig::default()).is_err());
        let empty = vec![EpisodeRecord::<String> { group: 0, steps: vec![] }];
        assert!(gigpo_advantages(&empty, &GigpoConfig::default()).unwrap_err().to_string().contains("episode 0"));
        let nan = vec![EpisodeRecord { group: 0, steps: vec![step("a", 0.0, false), step("b", f64::NAN, false)] }];
        let err = gigpo_advantages(&nan, &GigpoConfig::default()).unwrap_err().to_string();
        assert!(err.contains("episode 0, step 1"), "{err}");
        let bad = GigpoConfig { gamma: 1.5, ..GigpoConfig::default() };
        assert!(gigpo_advantages(&case(), &bad).unwrap_err().to_string().contains("gamma"));
    }

    proptest! {
        /// Within every step group of two or more rows the step advantages sum to zero, and the episode
        /// advantages of a group sum to zero over its rows (mean-centred at both levels).
        #[test]
        fn both_levels_are_centred(
            episodes in prop::collection::vec(
                (0u64..3, prop::collection::vec((0u8..4, 0.0f64..10.0, any::<bool>()), 1..6)),
                1..8,
            )
        ) {
            let episodes: Vec<EpisodeRecord<u8>> = episodes
                .into_iter()
                .map(|(group, steps)| EpisodeRecord {
                    group,
                    steps: steps.into_iter().map(|(anchor, reward, invalid)| StepRecord { anchor, reward, invalid }).collect(),
                })
                .collect();
            let config = GigpoConfig { normalisation: GigpoNormalisation::MeanOnly, ..GigpoConfig::default() };
            let out = gigpo_advantages(&episodes, &config).unwrap();
            let mut step_sums: HashMap<(u64, u8), (f64, usize)> = HashMap::new();
            let mut episode_sums: HashMap<u64, (f64, usize)> = HashMap::new();
            for (e, episode) in episodes.iter().enumerate() {
                for (t, s) in episode.steps.iter().enumerate() {
                    let entry = step_sums.entry((episode.group, s.anchor)).or_default();
                    entry.0 += out.step_part[e][t];
                    entry.1 += 1;
                    let entry = episode_sums.entry(episode.group).or_default();
                    entry.0 += out.episode_part[e][t];
                    entry.1 += 1;
                }
            }
            for (sum, n) in step_sums.values().chain(episode_sums.values()) {
                if *n > 1 {
                    prop_assert!(sum.abs() < 1e-6, "sum {sum} over {n} rows");
                }
            }
        }
    }
}
