//! The ACT comparison reward: did the answer pick the expert's action?

use std::collections::BTreeMap;

use act_core::{Choice, Reward, RewardError, RewardFn, RewardTarget, admits, parse_choice_among};
use serde::{Deserialize, Serialize};

use crate::error::{RewardConfigError, finite};
use crate::format::FormatRequirements;

/// How [`ComparisonReward`] scores. The default is the paper's: only the choice is rewarded.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ComparisonConfig {
    /// Added when the answer parses and meets the format requirements (0 disables the term).
    pub format_weight: f64,
    /// Added when the answer parses and the chosen action is admissible in the state (0 disables the term).
    /// When the target lists no admissible actions, admissibility is unknown and the term is 0.
    pub admissibility_weight: f64,
    /// Format requirements; breaking one scores as an unparseable answer.
    pub format: FormatRequirements,
}

impl ComparisonConfig {
    /// Sets the format weight.
    #[must_use]
    pub fn with_format_weight(mut self, weight: f64) -> Self {
        self.format_weight = weight;
        self
    }

    /// Sets the admissibility weight.
    #[must_use]
    pub fn with_admissibility_weight(mut self, weight: f64) -> Self {
        self.admissibility_weight = weight;
        self
    }

    /// Sets the format requirements.
    #[must_use]
    pub fn with_format(mut self, format: FormatRequirements) -> Self {
        self.format = format;
        self
    }

    /// Checks the configuration, rejecting non-finite weights and inconsistent format limits.
    pub fn validate(&self) -> Result<(), RewardConfigError> {
        finite("format_weight", self.format_weight)?;
        finite("admissibility_weight", self.admissibility_weight)?;
        self.format.validate()?;
        Ok(())
    }

    /// Validates the configuration into a reward.
    pub fn build(self) -> Result<ComparisonReward, RewardConfigError> {
        ComparisonReward::new(self)
    }
}

/// Scores a comparison answer (`<answer>1</answer>` or `<answer>2</answer>`, or one of the two actions' text,
/// [`act_core::parse_choice_among`]) against a
/// [`RewardTarget::Choice`]: 1 when it names the expert action, else 0. An answer that cannot be parsed, names
/// both actions, or breaks the format requirements scores 0 with `format_ok = false`.
///
/// ```
/// use act_core::{Choice, RewardFn, RewardTarget};
/// use act_rewards::ComparisonReward;
/// let reward = ComparisonReward::default();
/// let target = RewardTarget::Choice {
///     expert: Choice::Second, actions: ["go to fridge 1".into(), "go to sinkbasin 1".into()], admissible: vec![],
/// };
/// assert_eq!(reward.score(&target, "<think>clean it first</think><answer>2</answer>").unwrap().total, 1.0);
/// assert_eq!(reward.score(&target, "<answer>1</answer>").unwrap().total, 0.0);
/// assert!(!reward.score(&target, "Action 2").unwrap().format_ok);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ComparisonReward {
    config: ComparisonConfig,
}

impl ComparisonReward {
    /// Component: 1 when the answer names the expert action.
    pub const CORRECT: &'static str = "correct";
    /// Component: the format weight when the answer parses and meets the format requirements.
    pub const FORMAT: &'static str = "format";
    /// Component: the admissibility weight when the chosen action is one of the state's admissible actions.
    pub const ADMISSIBLE: &'static str = "admissible";

    /// A reward with `config`, once [`ComparisonConfig::validate`] accepts it.
    pub fn new(config: ComparisonConfig) -> Result<Self, RewardConfigError> {
        config.validate()?;
        Ok(ComparisonReward { config })
    }

    /// The configuration.
    pub fn config(&self) -> &ComparisonConfig {
        &self.config
    }

    /// The parsed choice (by number or by one of `actions`' text), or `None` for a format failure.
    fn parsed_choice(&self, completion: &str, actions: &[act_core::Action; 2]) -> Option<Choice> {
        let choice = parse_choice_among(completion, [actions[0].as_str(), actions[1].as_str()]).ok()?;
        self.config.format.check(completion).ok()?;
        Some(choice)
    }

    /// The reward of an outcome; `parsed` means the answer parsed and met the format requirements.
    fn reward(&self, correct: bool, parsed: bool, admissible: bool) -> Reward {
        let c = &self.config;
        let mut components = BTreeMap::new();
        components.insert(ComparisonReward::CORRECT.to_owned(), if parsed && correct { 1.0 } else { 0.0 });
        if c.format_weight != 0.0 {
            components.insert(ComparisonReward::FORMAT.to_owned(), if parsed { c.format_weight } else { 0.0 });
        }
        if c.admissibility_weight != 0.0 {
            components.insert(
                ComparisonReward::ADMISSIBLE.to_owned(),
                if parsed && admissible { c.admissibility_weight } else { 0.0 },
            );
        }
        Reward::from_components(components, parsed)
    }
}

impl RewardFn for ComparisonReward {
    fn name(&self) -> &str {
        "comparison"
    }

    fn range(&self) -> (f64, f64) {
        // Every achievable outcome, summed exactly as `score` sums it, so the bounds hold to the last bit.
        let parsed = [(false, false), (true, false), (false, true), (true, true)]
            .map(|(correct, admissible)| self.reward(correct, true, admissible).total);
        let failure = self.reward(false, false, false).total;
        parsed.into_iter().fold((failure, failure), |(lo, hi), total| (lo.min(total), hi.max(total)))
    }

    fn score(&self, target: &RewardTarget, completion: &str) -> Result<Reward, RewardError> {
        let RewardTarget::Choice { expert, actions, admissible } = target else {
            return Err(RewardError::WrongTarget { reward: self.name().to_owned(), target: target.kind() });
        };
        let choice = self.parsed_choice(completion, actions);
        let chosen_is_admissible = choice.is_some_and(|choice| {
            let chosen = &actions[usize::from(choice.number() - 1)];
            admissible.iter().any(|a| admits(a.as_str(), chosen.as_str()))
        });
        Ok(self.reward(choice == Some(*expert), choice.is_some(), chosen_is_admissible))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{FormatRequirements, LengthUnit};

    fn target(expert: Choice) -> RewardTarget {
        RewardTarget::Choice {
            expert,
            actions: ["go to fridge 1".into(), "Go To  Sinkbasin 1".into()],
            admissible: vec!["go to sinkbasin 1".into(), "look".into()],
        }
    }

    #[test]
    fn correct_and_wrong_answers() {
        let reward = ComparisonReward::default();
        let r = reward.score(&target(Choice::First), "<think>x</think><answer>1</answer>").unwrap();
        assert_eq!((r.total, r.format_ok), (1.0, true));
        assert_eq!(r.components.keys().collect::<Vec<_>>(), vec![ComparisonReward::CORRECT]);
        let r = reward.score(&target(Choice::First), "<answer>Action 2</answer>").unwrap();
        assert_eq!((r.total, r.format_ok), (0.0, true));
        // Naming the action itself chooses it.
        let r = reward.score(&target(Choice::Second), "<answer>go to sinkbasin 1</answer>").unwrap();
        assert_eq!((r.total, r.format_ok), (1.0, true));
        let r = reward.score(&target(Choice::Second), "<answer>go to fridge 1</answer>").unwrap();
        assert_eq!((r.total, r.format_ok), (0.0, true));
        let r = reward.score(&target(Choice::Second), "<answer>go to fridge 2</answer>").unwrap();
        assert_eq!((r.total, r.format_ok), (0.0, false));
    }

    #[test]
    fn unparseable_and_ambiguous_answers_are_format_failures() {
        let reward = ComparisonReward::default();
        for bad in ["", "1", "<answer>1 or 2</answer>", "<answer>3</answer>", "<answer>1", "<answer></answer>"] {
            let r = reward.score(&target(Choice::First), bad).unwrap();
            assert_eq!((r.total, r.format_ok), (0.0, false), "{bad:?}");
        }
    }

    #[test]
    fn format_term_rewards_parseable_answers_only() {
        let reward = ComparisonConfig::default().with_format_weight(0.1).build().unwrap();
        let r = reward.score(&target(Choice::First), "<answer>2</answer>").unwrap();
        assert_eq!(r.components[ComparisonReward::FORMAT], 0.1);
        assert_eq!(r.total, 0.1);
        let r = reward.score(&target(Choice::First), "<answer>1</answer>").unwrap();
        assert!((r.total - 1.1).abs() < 1e-12);
        let r = reward.score(&target(Choice::First), "nothing").unwrap();
        assert_eq!(r.components[ComparisonReward::FORMAT], 0.0);
        assert_eq!(reward.range(), (0.0, 1.1));
    }

    #[test]
    fn admissibility_term_checks_the_chosen_action() {
        let reward = ComparisonConfig::default().with_admissibility_weight(0.5).build().unwrap();
        // Action 2 matches "go to sinkbasin 1" after normalisation; action 1 is not admissible.
        let r = reward.score(&target(Choice::Second), "<answer>2</answer>").unwrap();
        assert_eq!((r.components[ComparisonReward::ADMISSIBLE], r.total), (0.5, 1.5));
        let r = reward.score(&target(Choice::Second), "<answer>1</answer>").unwrap();
        assert_eq!((r.components[ComparisonReward::ADMISSIBLE], r.total), (0.0, 0.0));
        let r = reward.score(&target(Choice::Second), "<answer>?</answer>").unwrap();
        assert_eq!(r.components[ComparisonReward::ADMISSIBLE], 0.0);
        // Unknown admissibility earns nothing.
        let unknown =
            RewardTarget::Choice { expert: Choice::First, actions: ["a".into(), "b".into()], admissible: vec![] };
        assert_eq!(reward.score(&unknown, "<answer>1</answer>").unwrap().components[ComparisonReward::ADMISSIBLE], 0.0);
    }

    #[test]
    fn negative_weights_widen_the_range_downwards() {
        let reward =
            ComparisonConfig::default().with_format_weight(-0.2).with_admissibility_weight(-0.3).build().unwrap();
        let (lo, hi) = reward.range();
        assert!((lo - -0.5).abs() < 1e-12 && (hi - 0.8).abs() < 1e-12, "{lo} {hi}");
        let r = reward.score(&target(Choice::First), "<answer>2</answer>").unwrap();
        assert!((r.total - -0.5).abs() < 1e-12);
    }

    #[test]
    fn format_requirements_gate_the_answer() {
        let format = FormatRequirements::default().with_require_think(true).with_max_length(4);
        let reward = ComparisonConfig::default()
            .with_format(format.with_length_unit(LengthUnit::Words))
            .with_format_weight(0.1)
            .build()
            .unwrap();
        let r = reward.score(&target(Choice::First), "<answer>1</answer>").unwrap();
        assert_eq!((r.total, r.format_ok), (0.0, false));
        let r = reward.score(&target(Choice::First), "<think>fridge first</think><answer>1</answer>").unwrap();
        assert!(r.format_ok && (r.total - 1.1).abs() < 1e-12);
        let r = reward.score(&target(Choice::First), "<think>a b c d e</think><answer>1</answer>").unwrap();
        assert_eq!((r.total, r.format_ok), (0.0, false));
    }

    #[test]
    fn wrong_target_and_bad_config_are_errors() {
        let reward = ComparisonReward::default();
        let err = reward.score(&RewardTarget::Episode { won: true, score: 1.0 }, "<answer>1</answer>").unwrap_err();
        assert_eq!(err.to_string(), "reward `comparison` cannot score a `episode` target");
        assert!(ComparisonConfig::default().with_format_weight(f64::NAN).build().is_err());
        assert!(ComparisonConfig::default().with_admissibility_weight(f64::INFINITY).build().is_err());
        let bad_format = FormatRequirements::default().with_min_length(3).with_max_length(1);
        assert!(matches!(
            ComparisonConfig::default().with_format(bad_format).build(),
            Err(RewardConfigError::LengthBounds { .. })
        ));
        assert_eq!(reward.config(), &ComparisonConfig::default());
    }
}
