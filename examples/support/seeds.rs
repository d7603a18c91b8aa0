//! Results over several seeds: each method's success and next-action accuracy per seed and across seeds, and the
//! paired comparison the project asks about (ACT → IL against IL), per seed and pooled over seeds.

use act_core::Split;
use act_eval::{
    BootstrapConfig, EpisodeMetric, PairedComparison, compare_episodes, compare_next_action, render_paired,
    stats::paired_comparison,
};

use crate::experiment::{ExperimentResult, METHODS};
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

/// One measure of a method on a split, from one seed's result: the headline rate and the 0/1 values it pools.
type Measure = fn(&ExperimentResult, &str, Split) -> Option<(f64, Vec<f64>)>;

fn success(result: &ExperimentResult, method: &str, split: Split) -> Option<(f64, Vec<f64>)> {
    result.episodes_of(method, split).map(|e| (e.summary.success.value, e.success_values()))
}

fn next_action(result: &ExperimentResult, method: &str, split: Split) -> Option<(f64, Vec<f64>)> {
    result.next_action_of(method, split).map(|e| (e.summary.accuracy.value, e.correct_values()))
}

/// The Markdown summary of `results` (one per seed, same benchmark and splits) comparing `a` against `b`.
pub fn summarize(
    results: &[ExperimentResult],
    seeds: &[u64],
    splits: &[Split],
    a: &str,
    b: &str,
) -> Result<String, BoxError> {
    let bootstrap = BootstrapConfig::default();
    let seed_list = seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let mut out = format!(
        "## Success rate over {} seeds ({seed_list})\n\nOn-line episodes, greedy decoding. Mean over seeds ± sample \
         standard deviation, in %; then each seed's value.\n\n{}",
        seeds.len(),
        over_seeds(results, splits, success)
    );
    out.push_str(&format!(
        "\n## Next-action accuracy over {} seeds ({seed_list})\n\nThe expert's action, exactly, on held-out expert \
         states of each split. Mean over seeds ± sample standard deviation, in %; then each seed's value.\n\n{}",
        seeds.len(),
        over_seeds(results, splits, next_action)
    ));
    for (title, episodes, unit) in [("success", true, "task"), ("next-action accuracy", false, "state")] {
        let measure: Measure = if episodes { success } else { next_action };
        out.push_str(&format!("\n## {a} against {b}: {title}\n\n"));
        for split in splits {
            out.push_str(&format!("**{split}.** Per seed (paired by {unit}):\n\n"));
            let (mut pooled_a, mut pooled_b) = (Vec::new(), Vec::new());
            for (result, seed) in results.iter().zip(seeds) {
                let comparison =
                    paired_on(result, a, b, *split, episodes, &bootstrap).map_err(|e| format!("seed {seed}: {e}"))?;
                out.push_str(&format!("- seed {seed}: {}", render_paired(a, b, &comparison)));
                pooled_a.extend(measure(result, a, *split).map(|(_, v)| v).unwrap_or_default());
                pooled_b.extend(measure(result, b, *split).map(|(_, v)| v).unwrap_or_default());
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

/// The paired comparison of `a` against `b` on `split` within one seed: on-line success when `episodes`, else
/// next-action accuracy.
fn paired_on(
    result: &ExperimentResult,
    a: &str,
    b: &str,
    split: Split,
    episodes: bool,
    bootstrap: &BootstrapConfig,
) -> Result<PairedComparison, BoxError> {
    let missing = || format!("`{a}` or `{b}` was not evaluated on {split}");
    Ok(if episodes {
        let (Some(ra), Some(rb)) = (result.episodes_of(a, split), result.episodes_of(b, split)) else {
            return Err(missing().into());
        };
        compare_episodes(ra, rb, EpisodeMetric::Success, bootstrap)?
    } else {
        let (Some(ra), Some(rb)) = (result.next_action_of(a, split), result.next_action_of(b, split)) else {
            return Err(missing().into());
        };
        compare_next_action(ra, rb, bootstrap)?
    })
}

/// A table of `measure` per method (rows) and split (columns) over the seeds' results.
fn over_seeds(results: &[ExperimentResult], splits: &[Split], measure: Measure) -> String {
    let mut out = "| method |".to_owned();
    for split in splits {
        out.push_str(&format!(" {split} | {split} per seed |"));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|---|".repeat(splits.len()));
    out.push('\n');
    for method in methods_in(results) {
        if splits.iter().all(|split| results.iter().all(|r| measure(r, &method, *split).is_none())) {
            continue;
        }
        out.push_str(&format!("| {method} |"));
        for split in splits {
            let values: Vec<f64> =
                results.iter().filter_map(|r| measure(r, &method, *split)).map(|(v, _)| 100.0 * v).collect();
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
