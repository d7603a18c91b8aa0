//! Results over several seeds: each method's success and next-action accuracy per seed and across seeds, and the
//! paired comparisons the project asks about ([`COMPARISONS`]: ACT → IL against IL first), per seed and pooled
//! over seeds.

use act_core::Split;
use act_eval::{
    BootstrapConfig, EpisodeMetric, PairedComparison, Series, compare_episodes, compare_next_action, paired_comparison,
    render_paired,
};

use crate::experiment::{ExperimentResult, METHODS, online_stages};
use crate::stages::BoxError;

/// Mean and sample standard deviation.
fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n.max(1.0);
    let var = if values.len() > 1 { values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    (mean, var.sqrt())
}

/// The method names that every result evaluated, in table order (expert and random first).
fn methods_in(results: &[ExperimentResult]) -> Vec<String> {
    let mut names = vec!["expert".to_owned(), "random-admissible".to_owned()];
    names.extend(METHODS.iter().map(|m| m.name.to_owned()));
    names.into_iter().filter(|name| results.iter().all(|r| r.episodes.iter().any(|e| e.method() == name))).collect()
}

/// What the summary measures: on-line success (paired by task) or next-action accuracy (paired by state).
#[derive(Debug, Clone, Copy)]
enum Metric {
    Success,
    NextAction,
}

impl Metric {
    /// The headline rate of `method` on `split` in one seed's result, and the 0/1 values it pools.
    fn values(self, result: &ExperimentResult, method: &str, split: Split) -> Option<(f64, Vec<f64>)> {
        match self {
            Metric::Success => result.episodes_of(method, split).map(|e| (e.summary.success.value, e.success_values())),
            Metric::NextAction => {
                result.next_action_of(method, split).map(|e| (e.summary.accuracy.value, e.correct_values()))
            }
        }
    }

    /// The paired comparison of `a` against `b` on `split` within one seed.
    fn compare(
        self,
        result: &ExperimentResult,
        (a, b): (&str, &str),
        split: Split,
        bootstrap: &BootstrapConfig,
    ) -> Result<PairedComparison, BoxError> {
        let missing = || -> BoxError { format!("`{a}` or `{b}` was not evaluated on {split}").into() };
        Ok(match self {
            Metric::Success => {
                let (Some(ra), Some(rb)) = (result.episodes_of(a, split), result.episodes_of(b, split)) else {
                    return Err(missing());
                };
                compare_episodes(ra, rb, EpisodeMetric::Success, bootstrap)?
            }
            Metric::NextAction => {
                let (Some(ra), Some(rb)) = (result.next_action_of(a, split), result.next_action_of(b, split)) else {
                    return Err(missing());
                };
                compare_next_action(ra, rb, bootstrap)?
            }
        })
    }
}

/// The paired comparisons a summary reports where both methods were evaluated: the paper's question (ACT → IL
/// against IL), the same after RL, then the controls that say whether a gain is ACT's: IL trained as long as ACT
/// and IL together, and ACT on pairs re-sampled for every pass instead of fixed ones.
pub const COMPARISONS: [(&str, &str); 18] = [
    ("ACT -> IL", "IL"),
    ("ACT -> IL -> RL", "IL -> RL"),
    ("IWM -> IL", "IL"),
    ("ACT -> IL", "IWM -> IL"),
    ("SR -> IL", "IL"),
    ("ACT -> IL", "SR -> IL"),
    ("ACT -> IL", "IL (matched steps)"),
    ("ACT (re-sampled pairs) -> IL", "IL"),
    ("ACT -> IL", "ACT (re-sampled pairs) -> IL"),
    ("IL -> GiGPO", "IL"),
    ("IL -> GRPO (on-line)", "IL"),
    ("IL -> GiGPO", "IL -> GRPO (on-line)"),
    ("ACT -> IL -> GiGPO", "IL -> GiGPO"),
    ("IL -> ActGuide-RL", "IL"),
    ("IL -> ActGuide-RL", "IL -> GRPO (on-line)"),
    ("IL -> ActGuide-RL", "IL -> GiGPO"),
    ("IL -> ICRL", "IL"),
    ("IL -> ICRL", "IL -> GRPO (on-line)"),
];

/// The Markdown summary of `results` (one per seed, same benchmark and splits) with the paired comparisons of
/// `comparisons` (method `a` against method `b`) whose methods every result evaluated.
pub fn summarize(
    results: &[ExperimentResult],
    seeds: &[u64],
    splits: &[Split],
    comparisons: &[(&str, &str)],
) -> Result<String, BoxError> {
    let bootstrap = BootstrapConfig::default();
    let seed_list = seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let decoding = results.first().and_then(crate::experiment::decoding_of).unwrap_or_else(|| "greedy decoding".into());
    let mut out = format!(
        "## Success rate over {} seeds ({seed_list})\n\nOn-line episodes, {decoding}. Mean over seeds ± sample \
         standard deviation, in %; then each seed's value.\n\n{}",
        seeds.len(),
        over_seeds(results, splits, Metric::Success)
    );
    out.push_str(&format!(
        "\n## Next-action accuracy over {} seeds ({seed_list})\n\nThe expert's action, exactly, on held-out expert \
         states of each split. Mean over seeds ± sample standard deviation, in %; then each seed's value.\n\n{}",
        seeds.len(),
        over_seeds(results, splits, Metric::NextAction)
    ));
    let evaluated = methods_in(results);
    let pairs = comparisons.iter().filter(|(a, b)| [a, b].iter().all(|m| evaluated.iter().any(|e| e == **m)));
    for ((a, b), (title, metric, unit)) in pairs.flat_map(|pair| {
        [("success", Metric::Success, "task"), ("next-action accuracy", Metric::NextAction, "state")]
            .map(|kind| (*pair, kind))
    }) {
        out.push_str(&format!("\n## {a} against {b}: {title}\n\n"));
        for split in splits {
            out.push_str(&format!("**{split}.** Per seed (paired by {unit}):\n\n"));
            let (mut pooled_a, mut pooled_b) = (Vec::new(), Vec::new());
            for (result, seed) in results.iter().zip(seeds) {
                let comparison =
                    metric.compare(result, (a, b), *split, &bootstrap).map_err(|e| format!("seed {seed}: {e}"))?;
                out.push_str(&format!("- seed {seed}: {}", render_paired(a, b, &comparison)));
                pooled_a.extend(metric.values(result, a, *split).map(|(_, v)| v).unwrap_or_default());
                pooled_b.extend(metric.values(result, b, *split).map(|(_, v)| v).unwrap_or_default());
            }
            let pooled = paired_comparison(&pooled_a, &pooled_b, &bootstrap)?;
            out.push_str(&format!(
                "- pooled over seeds (each {unit}-seed pair one unit; the interval ignores between-seed variance): {}\n",
                render_paired(a, b, &pooled)
            ));
        }
    }
    Ok(out)
}

/// The rollout success of each on-line method against environment steps, averaged over the seeds' runs
/// iteration by iteration (both coordinates; over the iterations every seed has), one series per method that every
/// seed trained. Empty when no seed ran on-line RL.
pub fn online_success_over_seeds(results: &[ExperimentResult]) -> Result<Vec<Series>, BoxError> {
    let per_seed: Vec<Vec<Series>> = results
        .iter()
        .map(|r| crate::online::success_by_env_steps(&online_stages(&r.dir.join("models"))))
        .collect::<Result<_, _>>()?;
    let Some(first) = per_seed.first() else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for series in first {
        let lines: Vec<&Series> =
            per_seed.iter().filter_map(|seed| seed.iter().find(|s| s.label == series.label)).collect();
        if lines.len() < per_seed.len() {
            continue;
        }
        let iterations = lines.iter().map(|s| s.points.len()).min().unwrap_or(0);
        let n = lines.len() as f64;
        let points = (0..iterations)
            .map(|i| {
                let (x, y) = lines.iter().fold((0.0, 0.0), |(x, y), s| (x + s.points[i].0, y + s.points[i].1));
                (x / n, y / n)
            })
            .collect();
        out.push(Series { label: format!("{} (mean of {} seeds)", series.label, lines.len()), points });
    }
    Ok(out)
}

/// A table of `metric` per method (rows) and split (columns) over the seeds' results.
fn over_seeds(results: &[ExperimentResult], splits: &[Split], metric: Metric) -> String {
    let mut out = "| method |".to_owned();
    for split in splits {
        out.push_str(&format!(" {split} | {split} per seed |"));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|---|".repeat(splits.len()));
    out.push('\n');
    for method in methods_in(results) {
        if splits.iter().all(|split| results.iter().all(|r| metric.values(r, &method, *split).is_none())) {
            continue;
        }
        out.push_str(&format!("| {method} |"));
        for split in splits {
            let values: Vec<f64> =
                results.iter().filter_map(|r| metric.values(r, &method, *split)).map(|(v, _)| 100.0 * v).collect();
            let (mean, sd) = mean_sd(&values);
            let each: Vec<String> = values.iter().map(|v| format!("{v:.1}")).collect();
            out.push_str(&format!(" {mean:.1} ± {sd:.1} | {} |", each.join(" / ")));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_standard_deviation() {
        let (mean, sd) = mean_sd(&[1.0, 2.0, 3.0]);
        assert!((mean - 2.0).abs() < 1e-12 && (sd - 1.0).abs() < 1e-12);
        assert_eq!(mean_sd(&[5.0]), (5.0, 0.0));
    }
}
