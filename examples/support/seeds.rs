//! Results over several seeds: each method's success per seed and across seeds, and the paired comparison the
//! project asks about (ACT → IL against IL), per seed and pooled over seeds.

use act_core::Split;
use act_eval::{BootstrapConfig, EpisodeMetric, compare_episodes, render_paired, stats::paired_comparison};

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

/// The Markdown summary of `results` (one per seed, same benchmark and splits) comparing `a` against `b`.
pub fn summarize(
    results: &[ExperimentResult],
    seeds: &[u64],
    splits: &[Split],
    a: &str,
    b: &str,
) -> Result<String, BoxError> {
    let bootstrap = BootstrapConfig::default();
    let mut out = format!(
        "## Success rate over {} seeds ({})\n\nMean over seeds ± sample standard deviation, in %; then each seed's \
         value.\n\n| method |",
        seeds.len(),
        seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
    );
    for split in splits {
        out.push_str(&format!(" {split} | {split} per seed |"));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|---|".repeat(splits.len()));
    out.push('\n');
    for method in methods_in(results) {
        out.push_str(&format!("| {method} |"));
        for split in splits {
            let values: Vec<f64> = results
                .iter()
                .filter_map(|r| r.episodes_of(&method, *split))
                .map(|e| 100.0 * e.summary.success.value)
                .collect();
            let (mean, sd) = mean_sd(&values);
            let each: Vec<String> = values.iter().map(|v| format!("{v:.1}")).collect();
            out.push_str(&format!(" {mean:.1} ± {sd:.1} | {} |", each.join(" / ")));
        }
        out.push('\n');
    }

    out.push_str(&format!("\n## {a} against {b}\n\n"));
    for split in splits {
        out.push_str(&format!("**{split}.** Per seed (paired by task):\n\n"));
        let (mut pooled_a, mut pooled_b) = (Vec::new(), Vec::new());
        for (result, seed) in results.iter().zip(seeds) {
            let (Some(ra), Some(rb)) = (result.episodes_of(a, *split), result.episodes_of(b, *split)) else {
                return Err(format!("seed {seed}: `{a}` or `{b}` was not evaluated on {split}").into());
            };
            let comparison = compare_episodes(ra, rb, EpisodeMetric::Success, &bootstrap)?;
            out.push_str(&format!("- seed {seed}: {}", render_paired(a, b, &comparison)));
            pooled_a.extend(ra.success_values());
            pooled_b.extend(rb.success_values());
        }
        let pooled = paired_comparison(&pooled_a, &pooled_b, &bootstrap)?;
        out.push_str(&format!(
            "- pooled over seeds (each task-seed pair one unit; the interval ignores between-seed variance): {}\n",
            render_paired(a, b, &pooled)
        ));
    }
    Ok(out)
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
