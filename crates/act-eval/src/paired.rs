//! Paired comparisons of two evaluations of the same tasks or items: the paired-bootstrap interval of the
//! difference and the exact sign (McNemar) test, after checking the two really cover the same units.

use crate::critic::CriticReport;
use crate::episodes::EpisodeReport;
use crate::error::EvalError;
use crate::next_action::NextActionReport;
use crate::stats::{BootstrapConfig, PairedComparison, paired_comparison};

/// Which score of an episode to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EpisodeMetric {
    /// Won (1) or not (0): the comparison's sign test is the exact McNemar test.
    Success,
    /// The environment's final score.
    Score,
}

/// Compares `a` and `b` episode by episode. Fails unless both played the same tasks (same split, same task ids in
/// the same order).
pub fn compare_episodes(
    a: &EpisodeReport,
    b: &EpisodeReport,
    metric: EpisodeMetric,
    bootstrap: &BootstrapConfig,
) -> Result<PairedComparison, EvalError> {
    if a.config.split != b.config.split || a.env != b.env {
        return Err(EvalError::Unpaired(format!(
            "`{}` {} against `{}` {}",
            a.env, a.config.split, b.env, b.config.split
        )));
    }
    same_units(a.results.iter().map(|r| r.task_id.as_str()), b.results.iter().map(|r| r.task_id.as_str()), "task")?;
    let values = |report: &EpisodeReport| -> Vec<f64> {
        match metric {
            EpisodeMetric::Success => report.success_values(),
            EpisodeMetric::Score => report.results.iter().map(|r| r.score).collect(),
        }
    };
    paired_comparison(&values(a), &values(b), bootstrap)
}

/// Compares next-action correctness item by item. Fails unless both cover the same items (task and step).
pub fn compare_next_action(
    a: &NextActionReport,
    b: &NextActionReport,
    bootstrap: &BootstrapConfig,
) -> Result<PairedComparison, EvalError> {
    let key =
        |r: &NextActionReport| r.results.iter().map(|x| format!("{}#{}", x.task_id, x.step_index)).collect::<Vec<_>>();
    same_units(key(a).iter().map(String::as_str), key(b).iter().map(String::as_str), "item")?;
    paired_comparison(&a.correct_values(), &b.correct_values(), bootstrap)
}

/// Compares critic correctness pair by pair. Fails unless both cover the same pairs (task, step, expert position).
pub fn compare_critic(
    a: &CriticReport,
    b: &CriticReport,
    bootstrap: &BootstrapConfig,
) -> Result<PairedComparison, EvalError> {
    let key = |r: &CriticReport| {
        r.results
            .iter()
            .map(|x| format!("{}#{}#{}", x.task_id, x.step_index, x.expert_choice.number()))
            .collect::<Vec<_>>()
    };
    same_units(key(a).iter().map(String::as_str), key(b).iter().map(String::as_str), "pair")?;
    paired_comparison(&a.correct_values(), &b.correct_values(), bootstrap)
}

fn same_units<'a>(
    a: impl ExactSizeIterator<Item = &'a str>,
    b: impl ExactSizeIterator<Item = &'a str>,
    what: &str,
) -> Result<(), EvalError> {
    if a.len() != b.len() {
        return Err(EvalError::Unpaired(format!("{} {what}s against {}", a.len(), b.len())));
    }
    for (i, (x, y)) in a.zip(b).enumerate() {
        if x != y {
            return Err(EvalError::Unpaired(format!("{what} {i} is `{x}` in one and `{y}` in the other")));
        }
    }
    Ok(())
}
