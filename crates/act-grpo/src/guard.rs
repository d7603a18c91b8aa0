//! Guard rails: an update whose loss or gradient is NaN/inf is skipped and counted; too many in a row stop the run.

use serde::{Deserialize, Serialize};

use crate::error::GrpoError;

/// Counts skipped updates.
///
/// ```
/// let mut guard = act_grpo::NonFiniteGuard::new(2);
/// assert!(guard.record_skip(1, "loss").is_ok());
/// guard.record_success();
/// assert!(guard.record_skip(2, "loss").is_ok());
/// assert!(guard.record_skip(3, "gradient").is_err());
/// assert_eq!(guard.total(), 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NonFiniteGuard {
    limit: usize,
    consecutive: usize,
    total: usize,
}

impl NonFiniteGuard {
    /// A guard that fails on the `limit`-th skipped update in a row.
    pub fn new(limit: usize) -> Self {
        NonFiniteGuard { limit: limit.max(1), consecutive: 0, total: 0 }
    }

    /// Records a skipped update; an error once `limit` updates in a row were skipped.
    pub fn record_skip(&mut self, step: usize, what: &'static str) -> Result<(), GrpoError> {
        self.consecutive += 1;
        self.total += 1;
        if self.consecutive >= self.limit {
            return Err(GrpoError::NonFinite { step, consecutive: self.consecutive, total: self.total, what });
        }
        Ok(())
    }

    /// Records a good update.
    pub fn record_success(&mut self) {
        self.consecutive = 0;
    }

    /// Skipped updates in the run.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Skipped updates since the last good one.
    pub fn consecutive(&self) -> usize {
        self.consecutive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_names_the_step_and_counts() {
        let mut guard = NonFiniteGuard::new(3);
        guard.record_skip(4, "loss").unwrap();
        guard.record_skip(5, "loss").unwrap();
        let err = guard.record_skip(6, "gradient").unwrap_err().to_string();
        assert!(err.contains("step 6") && err.contains("3 updates in a row") && err.contains("gradient"), "{err}");
    }
}
