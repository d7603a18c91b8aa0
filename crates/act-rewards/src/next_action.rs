//! The next-action reward for RL on expert states: does the generated action match the expert's?

use std::collections::BTreeMap;

use act_core::{Reward, RewardError, RewardFn, RewardTarget, actions_match, admits, parse_action};
use serde::{Deserialize, Serialize};

use crate::error::{RewardConfigError, finite, penalty};
use crate::format::FormatRequirements;

/// How [`NextActionReward`] scores. The default rewards only an exact (normalised) match.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NextActionConfig {
    /// Credit for an action that is admissible but not the expert's (0 disables the term).
    pub partial_credit: f64,
    /// Subtracted when the completion has no parseable `<action>`: the tag is missing, unclosed, repeated or
    /// empty, or a `<think>` block is malformed (0 disables the term).
    pub missing_action_penalty: f64,
    /// Format requirements; breaking one scores as a wrong action (no credit, no penalty unless the action is
    /// missing too).
    pub format: FormatRequirements,
}

impl NextActionConfig {
    /// Sets the partial credit for admissible non-expert actions.
    #[must_use]
    pub fn with_partial_credit(mut self, credit: f64) -> Self {
        self.partial_credit = credit;
        self
    }

    /// Sets the penalty magnitude for a completion without a parseable action.
    #[must_use]
    pub fn with_missing_action_penalty(mut self, penalty: f64) -> Self {
        self.missing_action_penalty = penalty;
        self
    }

    /// Sets the format requirements.
    #[must_use]
    pub fn with_format(mut self, format: FormatRequirements) -> Self {
        self.format = format;
        self
    }

    /// Checks the configuration, rejecting non-finite values, a negative penalty and inconsistent format limits.
    pub fn validate(&self) -> Result<(), RewardConfigError> {
        finite("partial_credit", self.partial_credit)?;
        penalty("missing_action_penalty", self.missing_action_penalty)?;
        self.format.validate()?;
        Ok(())
    }

    /// Validates the configuration into a reward.
    pub fn build(self) -> Result<NextActionReward, RewardConfigError> {
        NextActionReward::new(self)
    }
}

/// Scores an action completion (`<action>...</action>`, after optional reasoning) against a
/// [`RewardTarget::NextAction`]: 1 when the action equals the expert's after
/// [`normalize_action`](act_core::normalize_action), else 0, with optional partial credit and missing-action
/// penalty.
///
/// ```
/// use act_core::{RewardFn, RewardTarget};
/// use act_rewards::NextActionConfig;
/// let reward = NextActionConfig::default().with_partial_credit(0.2).with_missing_action_penalty(0.1).build().unwrap();
/// let target = RewardTarget::NextAction {
///     expert: "go to sinkbasin 1".into(), admissible: vec!["go to sinkbasin 1".into(), "look".into()],
/// };
/// assert_eq!(reward.score(&target, "<action>Go to  sinkbasin 1</action>").unwrap().total, 1.0);
/// assert_eq!(reward.score(&target, "<action>look</action>").unwrap().total, 0.2);
/// assert_eq!(reward.score(&target, "go to sinkbasin 1").unwrap().total, -0.1);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NextActionReward {
    config: NextActionConfig,
}

/// How a completion turned out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Expert,
    AdmissibleOther,
    Wrong,
    FormatFailure,
    MissingAction,
}

impl NextActionReward {
    /// Component: 1 on a normalised exact match with the expert action.
    pub const CORRECT: &'static str = "correct";
    /// Component: the partial credit for an admissible action that is not the expert's.
    pub const PARTIAL: &'static str = "partial";
    /// Component: minus the penalty when the completion has no parseable `<action>`.
    pub const MISSING_ACTION: &'static str = "missing_action";

    /// A reward with `config`, once [`NextActionConfig::validate`] accepts it.
    pub fn new(config: NextActionConfig) -> Result<Self, RewardConfigError> {
        config.validate()?;
        Ok(NextActionReward { config })
    }

    /// The configuration.
    pub fn config(&self) -> &NextActionConfig {
        &self.config
    }

    fn outcome(&self, expert: &str, admissible: &[act_core::Action], completion: &str) -> Outcome {
        let Ok(parsed) = parse_action(completion, false) else {
            return Outcome::MissingAction;
        };
        if self.config.format.check(completion).is_err() {
            Outcome::FormatFailure
        } else if actions_match(&parsed.action, expert) {
            Outcome::Expert
        } else if admissible.iter().any(|a| admits(a.as_str(), &parsed.action)) {
            Outcome::AdmissibleOther
        } else {
            Outcome::Wrong
        }
    }

    fn reward(&self, outcome: Outcome) -> Reward {
        let c = &self.config;
        let mut components = BTreeMap::new();
        components.insert(NextActionReward::CORRECT.to_owned(), if outcome == Outcome::Expert { 1.0 } else { 0.0 });
        if c.partial_credit != 0.0 {
            components.insert(
                NextActionReward::PARTIAL.to_owned(),
                if outcome == Outcome::AdmissibleOther { c.partial_credit } else { 0.0 },
            );
        }
        if c.missing_action_penalty != 0.0 {
            let value = if outcome == Outcome::MissingAction { -c.missing_action_penalty } else { 0.0 };
            components.insert(NextActionReward::MISSING_ACTION.to_owned(), value);
        }
        let format_ok = !matches!(outcome, Outcome::MissingAction | Outcome::FormatFailure);
        Reward::from_components(components, format_ok)
    }
}

impl RewardFn for NextActionReward {
    fn name(&self) -> &str {
        "next_action"
    }

    fn range(&self) -> (f64, f64) {
        // Every outcome, summed exactly as `score` sums it.
        [Outcome::Expert, Outcome::AdmissibleOther, Outcome::Wrong, Outcome::FormatFailure, Outcome::MissingAction]
            .map(|o| self.reward(o).total)
            .into_iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| (lo.min(t), hi.max(t)))
    }

    fn score(&self, target: &RewardTarget, completion: &str) -> Result<Reward, RewardError> {
        let RewardTarget::NextAction { expert, admissible } = target else {
            return Err(RewardError::WrongTarget { reward: self.name().to_owned(), target: target.kind() });
        };
        Ok(self.reward(self.outcome(expert.as_str(), admissible, completion)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> RewardTarget {
        RewardTarget::NextAction {
            expert: "take apple 1 from fridge 1".into(),
            admissible: vec!["take apple 1 from fridge 1".into(), "close fridge 1".into()],
        }
    }

    fn score(reward: &NextActionReward, completion: &str) -> Reward {
        reward.score(&target(), completion).unwrap()
    }

    #[test]
    fn exact_match_after_normalisation() {
        let reward = NextActionReward::default();
        let r = score(&reward, "<think>grab it</think><action> Take Apple 1  from fridge 1 </action>");
        assert_eq!((r.total, r.format_ok), (1.0, true));
        assert_eq!(r.components.len(), 1);
        let r = score(&reward, "<action>take apple 2 from fridge 1</action>");
        assert_eq!((r.total, r.format_ok), (0.0, true));
        assert_eq!(reward.range(), (0.0, 1.0));
    }

    #[test]
    fn admissible_non_expert_actions_earn_partial_credit() {
        let reward = NextActionConfig::default().with_partial_credit(0.25).build().unwrap();
        let r = score(&reward, "<action>close fridge 1</action>");
        assert_eq!(
            (r.components[NextActionReward::PARTIAL], r.components[NextActionReward::CORRECT], r.total),
            (0.25, 0.0, 0.25)
        );
        assert_eq!(score(&reward, "<action>fly away</action>").total, 0.0);
        assert_eq!(
            score(&reward, "<action>take apple 1 from fridge 1</action>").components[NextActionReward::PARTIAL],
            0.0
        );
        assert_eq!(reward.range(), (0.0, 1.0));
    }

    #[test]
    fn missing_actions_are_penalised() {
        let reward = NextActionConfig::default().with_missing_action_penalty(0.1).build().unwrap();
        for bad in
            ["take apple 1", "<action></action>", "<action>a</action><action>b</action>", "<think>x <action>a</action>"]
        {
            let r = score(&reward, bad);
            assert_eq!((r.total, r.format_ok), (-0.1, false), "{bad:?}");
            assert_eq!(r.components[NextActionReward::MISSING_ACTION], -0.1);
        }
        assert_eq!(reward.range(), (-0.1, 1.0));
        // Without the penalty a missing action is simply wrong.
        let r = score(&NextActionReward::default(), "take apple 1 from fridge 1");
        assert_eq!((r.total, r.format_ok), (0.0, false));
    }

    #[test]
    fn format_failures_get_nothing_and_no_penalty() {
        let format = FormatRequirements::default().with_require_think(true);
        let reward = NextActionConfig::default()
            .with_format(format)
            .with_partial_credit(0.5)
            .with_missing_action_penalty(0.2)
            .build()
            .unwrap();
        let r = score(&reward, "<action>take apple 1 from fridge 1</action>");
        assert_eq!((r.total, r.format_ok), (0.0, false));
        let r = score(&reward, "<think>it is there</think><action>take apple 1 from fridge 1</action>");
        assert_eq!((r.total, r.format_ok), (1.0, true));
    }

    #[test]
    fn negative_partial_credit_lowers_the_range() {
        let reward = NextActionConfig::default().with_partial_credit(-0.3).build().unwrap();
        assert_eq!(reward.range(), (-0.3, 1.0));
        assert_eq!(score(&reward, "<action>close fridge 1</action>").total, -0.3);
    }

    #[test]
    fn wrong_target_and_bad_config_are_errors() {
        let err = NextActionReward::default()
            .score(&RewardTarget::Episode { won: false, score: 0.0 }, "<action>x</action>")
            .unwrap_err();
        assert!(err.to_string().contains("`episode`"), "{err}");
        assert!(matches!(
            NextActionConfig::default().with_missing_action_penalty(-1.0).build(),
            Err(RewardConfigError::NegativePenalty { .. })
        ));
        assert!(NextActionConfig::default().with_partial_credit(f64::NAN).build().is_err());
        assert_eq!(NextActionReward::default().config(), &NextActionConfig::default());
    }
}
