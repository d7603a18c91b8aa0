//! Uncertainty: seeded percentile-bootstrap intervals, Wilson score intervals, and paired comparisons.

use act_core::rng_from_seed;
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::error::EvalError;

/// How bootstrap intervals are drawn.
///
/// Every bootstrap draws its resamples from [`seed`](Self::seed) alone, so the same data and configuration give
/// the same interval on every machine and thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BootstrapConfig {
    /// How many resamples (2,000 by default).
    pub resamples: usize,
    /// The confidence level, in (0, 1) (0.95 by default).
    pub level: f64,
    /// The seed of the resampling.
    pub seed: u64,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        BootstrapConfig { resamples: 2000, level: 0.95, seed: 0 }
    }
}

impl BootstrapConfig {
    /// Sets the number of resamples.
    #[must_use]
    pub fn with_resamples(mut self, resamples: usize) -> Self {
        self.resamples = resamples;
        self
    }

    /// Sets the confidence level.
    #[must_use]
    pub fn with_level(mut self, level: f64) -> Self {
        self.level = level;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Checks the settings: at least one resample, a level strictly between 0 and 1.
    pub fn validate(&self) -> Result<(), EvalError> {
        if self.resamples == 0 {
            return Err(EvalError::Config("bootstrap needs at least one resample".into()));
        }
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(EvalError::Config(format!("confidence level {} is not in (0, 1)", self.level)));
        }
        Ok(())
    }
}

/// A closed interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The lower end.
    pub lower: f64,
    /// The upper end.
    pub upper: f64,
}

impl Interval {
    /// Whether `x` lies in the interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }

    /// Half the width: the "±" of a table cell.
    pub fn half_width(&self) -> f64 {
        (self.upper - self.lower) / 2.0
    }
}

/// A point estimate with its bootstrap interval (and, for rates of independent trials, the Wilson interval).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The estimate on the full data.
    pub value: f64,
    /// How many units (episodes, items) it rests on; the bootstrap resamples these.
    pub n: usize,
    /// The percentile-bootstrap interval.
    pub ci: Interval,
    /// The Wilson score interval, for a rate of `n` independent trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wilson: Option<Interval>,
}

/// The mean of `values` with its bootstrap interval; `None` when `values` is empty.
pub fn mean(values: &[f64], config: &BootstrapConfig) -> Option<Estimate> {
    let ones = vec![1.0; values.len()];
    ratio(values, &ones, config)
}

/// The success rate of `outcomes` with its bootstrap and Wilson intervals; `None` when `outcomes` is empty.
pub fn rate(outcomes: &[bool], config: &BootstrapConfig) -> Option<Estimate> {
    let values: Vec<f64> = outcomes.iter().map(|&won| if won { 1.0 } else { 0.0 }).collect();
    let mut estimate = mean(&values, config)?;
    let successes = outcomes.iter().filter(|&&won| won).count();
    estimate.wilson = Some(wilson_interval(successes, outcomes.len(), config.level));
    Some(estimate)
}

/// The ratio of sums `Σ numerators / Σ denominators`, with a bootstrap interval that resamples the units (the
/// pairs `(numerators[i], denominators[i])`) — right for per-step rates where steps cluster within episodes.
///
/// `None` when there are no units, the lengths differ, or the denominators sum to zero. A resample whose
/// denominators sum to zero counts as ratio 0 (for counts, its numerators are zero too).
pub fn ratio(numerators: &[f64], denominators: &[f64], config: &BootstrapConfig) -> Option<Estimate> {
    let n = numerators.len();
    if n == 0 || denominators.len() != n {
        return None;
    }
    let total: f64 = denominators.iter().sum();
    if total == 0.0 {
        return None;
    }
    let value = numerators.iter().sum::<f64>() / total;
    let ci = bootstrap(n, config, |indices| {
        let (num, den) = indices.iter().fold((0.0, 0.0), |(num, den), &i| (num + numerators[i], den + denominators[i]));
        if den == 0.0 { 0.0 } else { num / den }
    });
    Some(Estimate { value, n, ci, wilson: None })
}

/// The percentile interval of `statistic` over `config.resamples` resamples of `0..n` (with replacement).
fn bootstrap(n: usize, config: &BootstrapConfig, statistic: impl Fn(&[usize]) -> f64) -> Interval {
    let mut rng = rng_from_seed(config.seed);
    let mut indices = vec![0; n];
    let mut stats: Vec<f64> = (0..config.resamples.max(1))
        .map(|_| {
            for slot in indices.iter_mut() {
                *slot = rng.random_range(0..n);
            }
            statistic(&indices)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    let alpha = (1.0 - config.level).clamp(0.0, 1.0);
    Interval { lower: quantile(&stats, alpha / 2.0), upper: quantile(&stats, 1.0 - alpha / 2.0) }
}

/// The `p`-quantile of sorted, non-empty `sorted`, interpolating linearly between order statistics.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let position = p.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let weight = position - below as f64;
    sorted[below] * (1.0 - weight) + sorted[above] * weight
}

/// The Wilson score interval for `successes` out of `n` trials at confidence `level`; `[0, 1]` when `n` is 0.
///
/// ```
/// let w = act_eval::wilson_interval(8, 10, 0.95);
/// assert!((w.lower - 0.4902).abs() < 1e-4 && (w.upper - 0.9433).abs() < 1e-4);
/// ```
pub fn wilson_interval(successes: usize, n: usize, level: f64) -> Interval {
    if n == 0 {
        return Interval { lower: 0.0, upper: 1.0 };
    }
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    let (n, p) = (n as f64, successes as f64 / n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At p = 0 (p = 1) the lower (upper) end is exactly 0 (1); rounding would leave it a hair off.
    let lower = if successes == 0 { 0.0 } else { (centre - half).max(0.0) };
    let upper = if successes as f64 == n { 1.0 } else { (centre + half).min(1.0) };
    Interval { lower, upper }
}

/// The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Two evaluations of the same units (tasks, items) compared pairwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedComparison {
    /// How many units.
    pub n: usize,
    /// The mean of `a`.
    pub mean_a: f64,
    /// The mean of `b`.
    pub mean_b: f64,
    /// `mean_a - mean_b`, with a paired-bootstrap interval (units resampled together).
    pub difference: Estimate,
    /// Units where `a` scored higher (for success: `a` won, `b` lost).
    pub a_better: usize,
    /// Units where `b` scored higher.
    pub b_better: usize,
    /// Units where both scored the same.
    pub ties: usize,
    /// The exact two-sided sign-test p-value on the untied units; for 0/1 outcomes this is the exact McNemar test.
    pub sign_test_p: f64,
}

/// Compares `a` and `b`, two measurements of the same units in the same order.
///
/// Fails when the lengths differ or there are no units.
///
/// ```
/// use act_eval::{BootstrapConfig, paired_comparison};
/// // Two policies on the same tasks: a wins where b loses on 3 tasks, never the reverse.
/// let a = [1.0, 1.0, 1.0, 0.0, 1.0];
/// let b = [0.0, 0.0, 0.0, 0.0, 1.0];
/// let cmp = paired_comparison(&a, &b, &BootstrapConfig::default()).unwrap();
/// assert_eq!((cmp.a_better, cmp.b_better, cmp.ties), (3, 0, 2));
/// assert_eq!(cmp.sign_test_p, 0.25); // exact two-sided: 2 * 0.5^3
/// assert!(cmp.difference.ci.lower <= 0.6 && 0.6 <= cmp.difference.ci.upper);
/// ```
pub fn paired_comparison(a: &[f64], b: &[f64], config: &BootstrapConfig) -> Result<PairedComparison, EvalError> {
    if a.len() != b.len() {
        return Err(EvalError::Unpaired(format!("{} units against {}", a.len(), b.len())));
    }
    if a.is_empty() {
        return Err(EvalError::Unpaired("no units to compare".into()));
    }
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let difference = mean(&differences, config).ok_or_else(|| EvalError::Unpaired("no units to compare".into()))?;
    let a_better = differences.iter().filter(|&&d| d > 0.0).count();
    let b_better = differences.iter().filter(|&&d| d < 0.0).count();
    let n = a.len();
    Ok(PairedComparison {
        n,
        mean_a: a.iter().sum::<f64>() / n as f64,
        mean_b: b.iter().sum::<f64>() / n as f64,
        difference,
        a_better,
        b_better,
        ties: n - a_better - b_better,
        sign_test_p: sign_test_p(a_better, b_better),
    })
}

/// Counts `(group, correct)` outcomes per group as `(group, items, correct)`, the most items first (ties by name):
/// the rows of the per-verb and per-comparison accuracy tables.
pub(crate) fn tally_by_group(outcomes: impl IntoIterator<Item = (String, bool)>) -> Vec<(String, usize, usize)> {
    let mut by_group: std::collections::BTreeMap<String, (usize, usize)> = std::collections::BTreeMap::new();
    for (group, correct) in outcomes {
        let entry = by_group.entry(group).or_default();
        entry.0 += 1;
        entry.1 += usize::from(correct);
    }
    let mut rows: Vec<(String, usize, usize)> =
        by_group.into_iter().map(|(group, (items, correct))| (group, items, correct)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows
}

/// The exact two-sided sign-test (binomial, p = 1/2) p-value for `a` successes against `b`; 1 when both are 0.
///
/// Summed directly up to 1,000 untied units and in log space beyond, so it neither underflows nor loses precision.
///
/// ```
/// use act_eval::sign_test_p;
/// assert_eq!(sign_test_p(0, 0), 1.0);
/// assert!((sign_test_p(1, 9) - 0.021484375).abs() < 1e-12); // 2 * (1 + 10) / 1024
/// ```
pub fn sign_test_p(a: usize, b: usize) -> f64 {
    let n = a + b;
    if n == 0 {
        return 1.0;
    }
    let k = a.min(b);
    let tail = if n <= 1000 {
        // 0.5^n is still a normal f64 here: sum the binomial terms directly, each from the last.
        let mut term = 0.5f64.powi(n as i32);
        let mut tail = term;
        for i in 1..=k {
            term *= (n - i + 1) as f64 / i as f64;
            tail += term;
        }
        tail
    } else {
        // ln C(n, i) built up term by term; the sum uses log-sum-exp around the largest term.
        let ln_half_n = n as f64 * std::f64::consts::LN_2;
        let mut ln_choose = 0.0;
        let mut terms = Vec::with_capacity(k + 1);
        for i in 0..=k {
            if i > 0 {
                ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
            }
            terms.push(ln_choose - ln_half_n);
        }
        let peak = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        peak.exp() * terms.iter().map(|t| (t - peak).exp()).sum::<f64>()
    };
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bootstrap_is_deterministic_under_its_seed() {
        let values: Vec<f64> = (0..50).map(|i| (i % 7) as f64).collect();
        let config = BootstrapConfig::default().with_seed(11);
        assert_eq!(mean(&values, &config), mean(&values, &config));
        assert_ne!(mean(&values, &config).unwrap().ci, mean(&values, &config.clone().with_seed(12)).unwrap().ci);
    }

    #[test]
    fn bootstrap_interval_matches_normal_theory_for_a_large_sample() {
        // 1,000 fair-coin-like outcomes with rate 0.3: the interval's half-width should be about 1.96 * sd / sqrt(n).
        let outcomes: Vec<bool> = (0..1000).map(|i| i % 10 < 3).collect();
        let estimate = rate(&outcomes, &BootstrapConfig::default()).unwrap();
        assert_eq!(estimate.value, 0.3);
        let expected = 1.959964 * (0.3f64 * 0.7 / 1000.0).sqrt();
        assert!((estimate.ci.half_width() - expected).abs() < 0.004, "{:?} vs ±{expected}", estimate.ci);
        assert!(estimate.ci.contains(0.3));
        let wilson = estimate.wilson.unwrap();
        assert!((wilson.half_width() - expected).abs() < 0.002, "{wilson:?}");
    }

    #[test]
    fn bootstrap_intervals_cover_the_true_mean_about_95_percent_of_the_time() {
        // 200 independent samples of 60 Bernoulli(0.4) draws from a fixed seed: coverage must be near 0.95.
        let mut rng = rng_from_seed(5);
        let covered = (0..200u64)
            .filter(|&trial| {
                let outcomes: Vec<bool> = (0..60).map(|_| rng.random_bool(0.4)).collect();
                let config = BootstrapConfig::default().with_resamples(500).with_seed(trial);
                rate(&outcomes, &config).unwrap().ci.contains(0.4)
            })
            .count();
        assert!((175..=200).contains(&covered), "coverage {covered}/200");
    }

    #[test]
    fn degenerate_inputs() {
        let config = BootstrapConfig::default();
        assert!(mean(&[], &config).is_none());
        assert!(ratio(&[1.0], &[0.0], &config).is_none());
        assert!(ratio(&[1.0], &[1.0, 2.0], &config).is_none());
        let all = rate(&[true; 5], &config).unwrap();
        assert_eq!((all.ci.lower, all.ci.upper), (1.0, 1.0));
        assert!(all.wilson.unwrap().lower < 1.0);
        assert!(BootstrapConfig::default().with_level(1.0).validate().is_err());
        assert!(BootstrapConfig::default().with_resamples(0).validate().is_err());
    }

    #[test]
    fn ratio_of_sums_weights_by_denominator() {
        let estimate = ratio(&[1.0, 0.0, 3.0], &[2.0, 4.0, 4.0], &BootstrapConfig::default()).unwrap();
        assert_eq!(estimate.value, 0.4);
        assert!(estimate.ci.contains(0.4));
    }

    #[test]
    fn wilson_matches_published_values() {
        // Wilson (1927) / Newcombe (1998) example: 81 of 263 at 95%: (0.2553, 0.3662).
        let w = wilson_interval(81, 263, 0.95);
        assert!((w.lower - 0.2553).abs() < 1e-4 && (w.upper - 0.3662).abs() < 1e-4, "{w:?}");
        assert_eq!(wilson_interval(0, 0, 0.95), Interval { lower: 0.0, upper: 1.0 });
        assert_eq!(wilson_interval(0, 10, 0.95).lower, 0.0);
    }

    #[test]
    fn normal_quantiles() {
        assert!((normal_quantile(0.975) - 1.959963985).abs() < 1e-8);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.005) + 2.575829304).abs() < 1e-8);
    }

    #[test]
    fn sign_test_matches_binomial_sums() {
        // Direct sums for small n.
        fn direct(a: usize, b: usize) -> f64 {
            let n = a + b;
            let choose = |k: usize| (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64);
            let tail: f64 = (0..=a.min(b)).map(choose).sum::<f64>() / 2f64.powi(n as i32);
            (2.0 * tail).min(1.0)
        }
        for (a, b) in [(0, 1), (3, 3), (2, 10), (10, 2), (0, 20), (7, 13)] {
            assert!((sign_test_p(a, b) - direct(a, b)).abs() < 1e-12, "{a} {b}");
        }
        // Large counts stay finite and tiny rather than underflowing into NaN.
        // 400 vs 600: the normal approximation with continuity correction gives about 3e-10.
        let p = sign_test_p(400, 600);
        assert!(p > 1e-10 && p < 1e-9, "{p}");
        assert!(sign_test_p(100, 5000).is_finite());
        // Both branches against exact rational arithmetic (Python's math.comb) on either side of n = 1000.
        let close = |p: f64, exact: f64| ((p - exact) / exact).abs() < 1e-9;
        assert!(close(sign_test_p(400, 600), 2.7284641560660184e-10));
        assert!(close(sign_test_p(480, 520), 0.21744829320414094));
        assert!(close(sign_test_p(480, 521), 0.20610731083295322));
        assert!(sign_test_p(1000, 1000) > 0.9);
    }

    #[test]
    fn paired_comparison_counts_and_intervals() {
        let config = BootstrapConfig::default().with_seed(3);
        let a: Vec<f64> = (0..100).map(|i| if i % 4 == 0 { 0.0 } else { 1.0 }).collect(); // 0.75
        let b: Vec<f64> = (0..100).map(|i| if i % 2 == 0 { 0.0 } else { 1.0 }).collect(); // 0.50
        let cmp = paired_comparison(&a, &b, &config).unwrap();
        assert_eq!((cmp.mean_a, cmp.mean_b), (0.75, 0.5));
        assert_eq!((cmp.a_better, cmp.b_better, cmp.ties), (25, 0, 75));
        assert!((cmp.difference.value - 0.25).abs() < 1e-12);
        assert!(cmp.difference.ci.contains(0.25) && cmp.difference.ci.lower > 0.0);
        assert!(cmp.sign_test_p < 1e-6);
        assert_eq!(cmp, paired_comparison(&a, &b, &config).unwrap());
        assert!(paired_comparison(&a, &b[..10], &config).is_err());
        assert!(paired_comparison(&[], &[], &config).is_err());
    }

    proptest! {
        #[test]
        fn intervals_bracket_the_estimate_for_rates(outcomes in proptest::collection::vec(any::<bool>(), 1..80), seed in any::<u64>()) {
            let config = BootstrapConfig::default().with_resamples(200).with_seed(seed);
            let e = rate(&outcomes, &config).unwrap();
            prop_assert!(e.ci.lower <= e.ci.upper);
            prop_assert!(0.0 <= e.ci.lower && e.ci.upper <= 1.0);
            let w = e.wilson.unwrap();
            prop_assert!(w.contains(e.value));
        }

        #[test]
        fn sign_test_is_a_probability(a in 0usize..3000, b in 0usize..3000) {
            let p = sign_test_p(a, b);
            prop_assert!((0.0..=1.0).contains(&p));
            prop_assert_eq!(p, sign_test_p(b, a));
        }
    }
}
