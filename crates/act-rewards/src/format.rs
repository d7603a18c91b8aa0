//! Format requirements every reward can impose: a reasoning block and length limits.

use act_core::THINK_TAG;
use act_core::{ParseError, extract_tag};
use serde::{Deserialize, Serialize};

use crate::error::RewardConfigError;

/// What a length is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LengthUnit {
    /// Unicode scalar values (`str::chars`).
    #[default]
    Chars,
    /// Whitespace-separated words.
    Words,
}

impl LengthUnit {
    /// The length of `text` in this unit.
    pub fn measure(self, text: &str) -> usize {
        match self {
            LengthUnit::Chars => text.chars().count(),
            LengthUnit::Words => text.split_whitespace().count(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            LengthUnit::Chars => "characters",
            LengthUnit::Words => "words",
        }
    }
}

/// Which text the length limits apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LengthScope {
    /// The whole completion.
    #[default]
    Completion,
    /// The inside of the `<think>` block (length 0 when there is none).
    Reasoning,
}

/// Format requirements shared by every reward in this crate. A completion that breaks one is a format failure:
/// it scores as an unparseable completion would, with `format_ok = false`.
///
/// The default requires nothing.
///
/// ```
/// use act_rewards::{FormatRequirements, LengthUnit};
/// let format = FormatRequirements::default().with_require_think(true).with_max_length(5).with_length_unit(LengthUnit::Words);
/// assert!(format.check("<think>short</think><answer>1</answer>").is_ok());
/// assert!(format.check("<answer>1</answer>").is_err());
/// assert!(format.check("<think>a b c d e f</think><answer>1</answer>").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FormatRequirements {
    /// Require one closed, non-empty `<think>...</think>` block.
    pub require_think: bool,
    /// The least length allowed, if any.
    pub min_length: Option<usize>,
    /// The greatest length allowed, if any.
    pub max_length: Option<usize>,
    /// What lengths are counted in.
    pub length_unit: LengthUnit,
    /// Which text lengths are measured on.
    pub length_scope: LengthScope,
}

/// Why a completion breaks the [`FormatRequirements`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatViolation {
    /// A reasoning block is required and there is no usable one.
    #[error("reasoning required: {0}")]
    MissingReasoning(ParseError),
    /// The measured text is shorter than the minimum.
    #[error("too short: {length} {unit}, at least {min} required")]
    TooShort {
        /// The measured length.
        length: usize,
        /// The minimum.
        min: usize,
        /// The unit's name.
        unit: &'static str,
    },
    /// The measured text is longer than the maximum.
    #[error("too long: {length} {unit}, at most {max} allowed")]
    TooLong {
        /// The measured length.
        length: usize,
        /// The maximum.
        max: usize,
        /// The unit's name.
        unit: &'static str,
    },
}

impl FormatRequirements {
    /// Sets whether a `<think>` block is required.
    #[must_use]
    pub fn with_require_think(mut self, require: bool) -> Self {
        self.require_think = require;
        self
    }

    /// Sets the minimum length.
    #[must_use]
    pub fn with_min_length(mut self, min: usize) -> Self {
        self.min_length = Some(min);
        self
    }

    /// Sets the maximum length.
    #[must_use]
    pub fn with_max_length(mut self, max: usize) -> Self {
        self.max_length = Some(max);
        self
    }

    /// Sets the length unit.
    #[must_use]
    pub fn with_length_unit(mut self, unit: LengthUnit) -> Self {
        self.length_unit = unit;
        self
    }

    /// Sets which text the length limits apply to.
    #[must_use]
    pub fn with_length_scope(mut self, scope: LengthScope) -> Self {
        self.length_scope = scope;
        self
    }

    /// Checks the limits are consistent (minimum at most maximum).
    pub fn validate(&self) -> Result<(), RewardConfigError> {
        match (self.min_length, self.max_length) {
            (Some(min), Some(max)) if min > max => Err(RewardConfigError::LengthBounds { min, max }),
            _ => Ok(()),
        }
    }

    /// Whether `completion` meets every requirement; the first one broken otherwise.
    pub fn check(&self, completion: &str) -> Result<(), FormatViolation> {
        let reasoning = extract_tag(completion, THINK_TAG);
        if self.require_think {
            match &reasoning {
                Ok("") => {
                    return Err(FormatViolation::MissingReasoning(ParseError::EmptyTag(THINK_TAG.to_owned())));
                }
                Ok(_) => {}
                Err(e) => return Err(FormatViolation::MissingReasoning(e.clone())),
            }
        }
        if self.min_length.is_none() && self.max_length.is_none() {
            return Ok(());
        }
        let measured = match self.length_scope {
            LengthScope::Completion => completion,
            LengthScope::Reasoning => reasoning.unwrap_or(""),
        };
        let length = self.length_unit.measure(measured);
        let unit = self.length_unit.name();
        if let Some(min) = self.min_length.filter(|&min| length < min) {
            return Err(FormatViolation::TooShort { length, min, unit });
        }
        if let Some(max) = self.max_length.filter(|&max| length > max) {
            return Err(FormatViolation::TooLong { length, max, unit });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_requires_nothing() {
        let format = FormatRequirements::default();
        assert_eq!(format.check(""), Ok(()));
        assert_eq!(format.check("<think>unclosed"), Ok(()));
    }

    #[test]
    fn think_must_be_present_closed_and_non_empty() {
        let format = FormatRequirements::default().with_require_think(true);
        assert_eq!(format.check("<think>why</think><answer>1</answer>"), Ok(()));
        assert_eq!(
            format.check("<answer>1</answer>"),
            Err(FormatViolation::MissingReasoning(ParseError::MissingTag("think".into())))
        );
        assert_eq!(
            format.check("<think> </think>"),
            Err(FormatViolation::MissingReasoning(ParseError::EmptyTag("think".into())))
        );
        assert_eq!(
            format.check("<think>a"),
            Err(FormatViolation::MissingReasoning(ParseError::UnclosedTag("think".into())))
        );
        assert!(matches!(
            format.check("<think>a</think><think>b</think>"),
            Err(FormatViolation::MissingReasoning(ParseError::DuplicateTag { .. }))
        ));
    }

    #[test]
    fn length_limits_in_chars_and_words() {
        let chars = FormatRequirements::default().with_min_length(3).with_max_length(5);
        assert_eq!(chars.check("ab"), Err(FormatViolation::TooShort { length: 2, min: 3, unit: "characters" }));
        assert_eq!(chars.check("abc"), Ok(()));
        assert_eq!(chars.check("ééééé"), Ok(()), "characters, not bytes");
        assert_eq!(chars.check("abcdef"), Err(FormatViolation::TooLong { length: 6, max: 5, unit: "characters" }));

        let words = chars.with_length_unit(LengthUnit::Words);
        assert_eq!(words.check("one two three"), Ok(()));
        assert!(matches!(words.check("one  two"), Err(FormatViolation::TooShort { length: 2, .. })));
        assert!(matches!(words.check("a b c d e f"), Err(FormatViolation::TooLong { length: 6, .. })));
    }

    #[test]
    fn reasoning_scope_measures_the_think_block() {
        let format = FormatRequirements::default()
            .with_min_length(2)
            .with_length_unit(LengthUnit::Words)
            .with_length_scope(LengthScope::Reasoning);
        assert_eq!(format.check("<think>two words</think><answer>1</answer>"), Ok(()));
        assert!(matches!(
            format.check("<think>one</think> many many many words"),
            Err(FormatViolation::TooShort { .. })
        ));
        assert!(matches!(format.check("no think block at all"), Err(FormatViolation::TooShort { length: 0, .. })));
    }

    #[test]
    fn inconsistent_bounds_are_rejected() {
        let format = FormatRequirements::default().with_min_length(4).with_max_length(3);
        assert!(matches!(format.validate(), Err(RewardConfigError::LengthBounds { min: 4, max: 3 })));
        assert!(FormatRequirements::default().with_max_length(3).validate().is_ok());
    }

    #[test]
    fn violations_explain_themselves() {
        let err = FormatViolation::TooLong { length: 9, max: 5, unit: "words" };
        assert_eq!(err.to_string(), "too long: 9 words, at most 5 allowed");
    }
}
