//! Learning-rate schedules: linear warm-up, then constant, linear or cosine decay.

use serde::{Deserialize, Serialize};

use crate::config::{OptimizerConfig, ScheduleKind};

/// A learning rate for every optimizer update of a run.
///
/// The formulas are Hugging Face transformers' `get_{constant,linear,cosine}_schedule_with_warmup` (which TRL
/// uses), evaluated at the 0-based index of the optimizer update, with an optional floor `min_lr_ratio`.
///
/// ```
/// use act_grpo::{LrSchedule, OptimizerConfig, ScheduleKind};
/// let config = OptimizerConfig { lr: 1.0, schedule: ScheduleKind::Cosine, warmup_updates: 2, ..OptimizerConfig::default() };
/// let s = LrSchedule::new(&config, 10);
/// assert_eq!(s.lr(0), 0.0);            // warm-up starts from 0, as in transformers
/// assert_eq!(s.lr(1), 0.5);
/// assert_eq!(s.lr(2), 1.0);            // the peak
/// assert!(s.lr(9) < 0.05);            // nearly decayed at the last update
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LrSchedule {
    peak: f64,
    kind: ScheduleKind,
    warmup: usize,
    total: usize,
    min_ratio: f64,
}

impl LrSchedule {
    /// The schedule of `config` over `total_updates` optimizer updates.
    pub fn new(config: &OptimizerConfig, total_updates: usize) -> Self {
        LrSchedule {
            peak: config.lr,
            kind: config.schedule,
            warmup: config.warmup_updates,
            total: total_updates,
            min_ratio: config.min_lr_ratio,
        }
    }

    /// The multiplier of the peak rate at update `update` (0-based).
    pub fn factor(&self, update: usize) -> f64 {
        if update < self.warmup {
            return update as f64 / self.warmup.max(1) as f64;
        }
        let progress = (update - self.warmup) as f64 / self.total.saturating_sub(self.warmup).max(1) as f64;
        let decay = match self.kind {
            ScheduleKind::Constant => return 1.0,
            ScheduleKind::Linear => (1.0 - progress).max(0.0),
            ScheduleKind::Cosine => (0.5 * (1.0 + (std::f64::consts::PI * progress).cos())).max(0.0),
        };
        self.min_ratio + (1.0 - self.min_ratio) * decay
    }

    /// The learning rate at update `update` (0-based).
    pub fn lr(&self, update: usize) -> f64 {
        self.peak * self.factor(update)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(kind: ScheduleKind, warmup: usize, total: usize) -> LrSchedule {
        let c = OptimizerConfig { lr: 2.0, schedule: kind, warmup_updates: warmup, ..OptimizerConfig::default() };
        LrSchedule::new(&c, total)
    }

    #[test]
    fn linear_matches_transformers() {
        // get_linear_schedule_with_warmup(warmup=2, total=6): [0, .5, 1, .75, .5, .25].
        let s = schedule(ScheduleKind::Linear, 2, 6);
        let got: Vec<f64> = (0..6).map(|u| s.factor(u)).collect();
        assert_eq!(got, vec![0.0, 0.5, 1.0, 0.75, 0.5, 0.25]);
        assert_eq!(s.lr(3), 1.5);
        assert_eq!(s.factor(100), 0.0);
    }

    #[test]
    fn cosine_matches_transformers() {
        // get_cosine_schedule_with_warmup(warmup=1, total=5): 0, then 0.5 (1 + cos(pi k / 4)).
        let s = schedule(ScheduleKind::Cosine, 1, 5);
        let expected = [0.0, 1.0, 0.8535533905932737, 0.5, 0.14644660940672627];
        for (u, e) in expected.iter().enumerate() {
            assert!((s.factor(u) - e).abs() < 1e-12, "{u}: {} vs {e}", s.factor(u));
        }
    }

    #[test]
    fn constant_and_floor() {
        let s = schedule(ScheduleKind::Constant, 4, 10);
        assert_eq!(s.factor(2), 0.5);
        assert_eq!(s.factor(9), 1.0);
        let c = OptimizerConfig { lr: 1.0, min_lr_ratio: 0.1, warmup_updates: 0, ..OptimizerConfig::default() };
        let s = LrSchedule::new(&c, 10);
        assert!((s.lr(10) - 0.1).abs() < 1e-12);
        assert!((s.lr(0) - 1.0).abs() < 1e-12);
    }
}
