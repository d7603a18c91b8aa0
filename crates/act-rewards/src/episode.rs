//! The environment reward for on-line episodes: every turn of an episode is scored by how the episode ended.

use std::collections::BTreeMap;

use act_core::{Reward, RewardError, RewardFn, RewardTarget, parse_action};
use serde::{Deserialize, Serialize};

use crate::error::{RewardConfigError, finite, penalty};
use crate::format::FormatRequirements;

/// What an episode is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EpisodeScoring {
    /// `success_weight` if won, else 0 (verl-agent's ALFWorld reward, with weight 10).
    #[default]
    Won,
    /// `score_scale` times the environment's score, clamped into `score_range` (WebShop, ScienceWorld).
    Score,
}

/// How [`EpisodeReward`] scores. The default is verl-agent's ALFWorld reward, `10 * won`, without the
/// invalid-output penalty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EpisodeConfig {
    /// Won-based or score-based.
    pub scoring: EpisodeScoring,
    /// The reward of a won episode under [`EpisodeScoring::Won`].
    pub success_weight: f64,
    /// The factor applied to the score under [`EpisodeScoring::Score`].
    pub score_scale: f64,
    /// The interval the environment's score lies in; scores outside it are clamped, and a NaN score counts as
    /// the lower bound, so the reward stays in its declared range.
    pub score_range: (f64, f64),
    /// Subtracted from a turn whose completion has no parseable action or breaks the format requirements
    /// (verl-agent uses 0.1; 0 disables the term).
    pub invalid_output_penalty: f64,
    /// Format requirements; breaking one makes the output invalid.
    pub format: FormatRequirements,
}

impl Default for EpisodeConfig {
    fn default() -> Self {
        EpisodeConfig {
            scoring: EpisodeScoring::Won,
            success_weight: 10.0,
            score_scale: 1.0,
            score_range: (0.0, 1.0),
            invalid_output_penalty: 0.0,
            format: FormatRequirements::default(),
        }
    }
}

impl EpisodeConfig {
    /// Won-based scoring with `weight` for a win.
    pub fn won(weight: f64) -> Self {
        EpisodeConfig { scoring: EpisodeScoring::Won, success_weight: weight, ..Self::default() }
    }

    /// Score-based scoring: `scale * clamp(score, min, max)`.
    pub fn score(scale: f64, min: f64, max: f64) -> Self {
        EpisodeConfig { scoring: EpisodeScoring::Score, score_scale: scale, score_range: (min, max), ..Self::default() }
    }

    /// Sets the invalid-output penalty magnitude (verl-agent: 0.1).
    #[must_use]
    pub fn with_invalid_output_penalty(mut self, penalty: f64) -> Self {
        self.invalid_output_penalty = penalty;
        self
    }

    /// Sets the format requirements.
    #[must_use]
    pub fn with_format(mut self, format: FormatRequirements) -> Self {
        self.format = format;
        self
    }

    /// Checks the configuration, rejecting non-finite values, a negative penalty, an empty score range and
    /// inconsistent format limits.
    pub fn validate(&self) -> Result<(), RewardConfigError> {
        finite("success_weight", self.success_weight)?;
        finite("score_scale", self.score_scale)?;
        penalty("invalid_output_penalty", self.invalid_output_penalty)?;
        let (min, max) = self.score_range;
        if !(min.is_finite() && max.is_finite() && min <= max) {
            return Err(RewardConfigError::ScoreRange { min, max });
        }
        self.format.validate()?;
        Ok(())
    }

    /// Validates the configuration into a reward.
    pub fn build(self) -> Result<EpisodeReward, RewardConfigError> {
        EpisodeReward::new(self)
    }
}

/// Scores one turn of an on-line episode against a [`RewardTarget::Episode`]: the episode's worth (won or
/// score), minus an optional penalty when this turn's completion had no parseable action.
///
/// ```
/// use act_core::{RewardFn, RewardTarget};
/// use act_rewards::{EpisodeConfig, EpisodeReward};
/// let reward = EpisodeConfig::won(10.0).with_invalid_output_penalty(0.1).build().unwrap();
/// let won = RewardTarget::Episode { won: true, score: 1.0 };
/// assert_eq!(reward.score(&won, "<action>open fridge 1</action>").unwrap().total, 10.0);
/// assert_eq!(reward.score(&won, "open fridge 1").unwrap().total, 9.9);
/// assert_eq!(reward.range(), (-0.1, 10.0));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EpisodeReward {
    config: EpisodeConfig,
}

impl EpisodeReward {
    /// Component: `success_weight` when the episode was won ([`EpisodeScoring::Won`]).
    pub const WON: &'static str = "won";
    /// Component: the scaled, clamped environment score ([`EpisodeScoring::Score`]).
    pub const SCORE: &'static str = "score";
    /// Component: minus the invalid-output penalty when the turn's completion has no parseable action.
    pub const INVALID_OUTPUT: &'static str = "invalid_output";

    /// A reward with `config`, once [`EpisodeConfig::validate`] accepts it.
    pub fn new(config: EpisodeConfig) -> Result<Self, RewardConfigError> {
        config.validate()?;
        Ok(EpisodeReward { config })
    }

    /// The configuration.
    pub fn config(&self) -> &EpisodeConfig {
        &self.config
    }

    fn valid_output(&self, completion: &str) -> bool {
        parse_action(completion, false).is_ok() && self.config.format.check(completion).is_ok()
    }

    fn reward(&self, won: bool, score: f64, valid: bool) -> Reward {
        let c = &self.config;
        let mut components = BTreeMap::new();
        match c.scoring {
            EpisodeScoring::Won => {
                components.insert(EpisodeReward::WON.to_owned(), if won { c.success_weight } else { 0.0 });
            }
            EpisodeScoring::Score => {
                let (min, max) = c.score_range;
                let clamped = if score.is_nan() { min } else { score.clamp(min, max) };
                components.insert(EpisodeReward::SCORE.to_owned(), c.score_scale * clamped);
            }
        }
        if c.invalid_output_penalty != 0.0 {
            components
                .insert(EpisodeReward::INVALID_OUTPUT.to_owned(), if valid { 0.0 } else { -c.invalid_output_penalty });
        }
        Reward::from_components(components, valid)
    }
}

impl RewardFn for EpisodeReward {
    fn name(&self) -> &str {
        "episode"
    }

    fn range(&self) -> (f64, f64) {
        // The extremes, summed exactly as `score` sums them (rounding is monotone, so the ends bound the rest).
        let (min, max) = self.config.score_range;
        let mut bounds = (f64::INFINITY, f64::NEG_INFINITY);
        for (won, score) in [(false, min), (true, max), (false, max), (true, min)] {
            for valid in [true, false] {
                let total = self.reward(won, score, valid).total;
                bounds = (bounds.0.min(total), bounds.1.max(total));
            }
        }
        bounds
    }

    fn score(&self, target: &RewardTarget, completion: &str) -> Result<Reward, RewardError> {
        let RewardTarget::Episode { won, score } = target else {
            return Err(RewardError::WrongTarget { reward: self.name().to_owned(), target: target.kind() });
        };
        Ok(self.reward(*won, *score, self.valid_output(completion)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(won: bool, score: f64) -> RewardTarget {
        RewardTarget::Episode { won, score }
    }

    #[test]
    fn default_is_ten_times_won() {
        let reward = EpisodeReward::default();
        let r = reward.score(&episode(true, 1.0), "<action>look</action>").unwrap();
        assert_eq!((r.total, r.format_ok), (10.0, true));
        assert_eq!(r.components.keys().collect::<Vec<_>>(), vec![EpisodeReward::WON]);
        assert_eq!(reward.score(&episode(false, 1.0), "<action>look</action>").unwrap().total, 0.0);
        // No penalty by default, but the format failure is still flagged.
        let r = reward.score(&episode(true, 0.0), "look").unwrap();
        assert_eq!((r.total, r.format_ok), (10.0, false));
        assert_eq!(reward.range(), (0.0, 10.0));
    }

    #[test]
    fn invalid_output_penalty_applies_only_without_a_parseable_action() {
        let reward = EpisodeConfig::won(10.0).with_invalid_output_penalty(0.1).build().unwrap();
        let r = reward.score(&episode(false, 0.0), "<action></action>").unwrap();
        assert_eq!((r.total, r.components[EpisodeReward::INVALID_OUTPUT]), (-0.1, -0.1));
        let r = reward.score(&episode(false, 0.0), "<think>ok</think><action>look</action>").unwrap();
        assert_eq!((r.total, r.components[EpisodeReward::INVALID_OUTPUT]), (0.0, 0.0));
    }

    #[test]
    fn format_requirements_make_output_invalid() {
        let format = FormatRequirements::default().with_require_think(true);
        let reward = EpisodeConfig::won(1.0).with_invalid_output_penalty(0.5).with_format(format).build().unwrap();
        assert_eq!(reward.score(&episode(true, 0.0), "<action>look</action>").unwrap().total, 0.5);
        assert_eq!(reward.score(&episode(true, 0.0), "<think>hm</think><action>look</action>").unwrap().total, 1.0);
    }

    #[test]
    fn score_based_clamps_into_the_declared_range() {
        let reward = EpisodeConfig::score(0.01, -100.0, 100.0).build().unwrap();
        assert_eq!(reward.range(), (-1.0, 1.0));
        let at = |score: f64| reward.score(&episode(false, score), "<action>x</action>").unwrap();
        assert_eq!(at(50.0).total, 0.5);
        assert_eq!(at(50.0).components[EpisodeReward::SCORE], 0.5);
        assert_eq!(at(250.0).total, 1.0);
        assert_eq!(at(f64::NEG_INFINITY).total, -1.0);
        assert_eq!(at(f64::NAN).total, -1.0);
        // `won` does not matter when scoring by score.
        assert_eq!(reward.score(&episode(true, 0.0), "<action>x</action>").unwrap().total, 0.0);
    }

    #[test]
    fn negative_weights_are_allowed_and_bounded() {
        let reward = EpisodeConfig::won(-2.0).with_invalid_output_penalty(1.0).build().unwrap();
        assert_eq!(reward.range(), (-3.0, 0.0));
        let reward = EpisodeConfig::score(-1.0, 0.0, 1.0).build().unwrap();
        assert_eq!(reward.range(), (-1.0, 0.0));
    }

    #[test]
    fn wrong_target_and_bad_config_are_errors() {
        let target = RewardTarget::NextAction { expert: "x".into(), admissible: vec![] };
        assert!(EpisodeReward::default().score(&target, "<action>x</action>").is_err());
        assert!(EpisodeConfig::won(f64::NAN).build().is_err());
        assert!(EpisodeConfig::score(f64::INFINITY, 0.0, 1.0).build().is_err());
        assert!(matches!(EpisodeConfig::score(1.0, 1.0, 0.0).build(), Err(RewardConfigError::ScoreRange { .. })));
        assert!(matches!(
            EpisodeConfig::score(1.0, 0.0, f64::INFINITY).build(),
            Err(RewardConfigError::ScoreRange { .. })
        ));
        assert!(EpisodeConfig::default().with_invalid_output_penalty(-0.1).build().is_err());
        assert_eq!(EpisodeReward::default().config(), &EpisodeConfig::default());
    }
}
