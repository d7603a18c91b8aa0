//! Configuration errors: a reward whose configuration could push it out of its declared range is never built.

/// Why a reward configuration was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RewardConfigError {
    /// A weight or penalty is NaN or infinite.
    #[error("`{field}` must be a finite number, got {value}")]
    NonFinite {
        /// The configuration field.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A penalty is negative (penalties are magnitudes, subtracted from the reward).
    #[error("`{field}` is a penalty magnitude and must be >= 0, got {value}")]
    NegativePenalty {
        /// The configuration field.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// The minimum length exceeds the maximum.
    #[error("format length limits are inconsistent: min_length {min} > max_length {max}")]
    LengthBounds {
        /// The minimum.
        min: usize,
        /// The maximum.
        max: usize,
    },
    /// The declared score range is empty or not finite.
    #[error("score range [{min}, {max}] must be finite with min <= max")]
    ScoreRange {
        /// The lower bound.
        min: f64,
        /// The upper bound.
        max: f64,
    },
}

/// Checks `value` is finite.
pub(crate) fn finite(field: &'static str, value: f64) -> Result<f64, RewardConfigError> {
    if value.is_finite() { Ok(value) } else { Err(RewardConfigError::NonFinite { field, value }) }
}

/// Checks `value` is a finite, non-negative penalty magnitude.
pub(crate) fn penalty(field: &'static str, value: f64) -> Result<f64, RewardConfigError> {
    finite(field, value)?;
    if value < 0.0 { Err(RewardConfigError::NegativePenalty { field, value }) } else { Ok(value) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_field() {
        assert_eq!(finite("w", 0.5), Ok(0.5));
        let err = finite("format_weight", f64::NAN).unwrap_err();
        assert!(err.to_string().starts_with("`format_weight` must be a finite number"), "{err}");
        assert!(matches!(penalty("p", f64::INFINITY), Err(RewardConfigError::NonFinite { field: "p", .. })));
        assert_eq!(penalty("p", -0.1), Err(RewardConfigError::NegativePenalty { field: "p", value: -0.1 }));
        assert_eq!(penalty("p", 0.0), Ok(0.0));
    }
}
