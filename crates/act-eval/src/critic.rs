//! Critic accuracy: on held-out [`ActionPair`]s, how often the model picks the expert action, and how often its
//! answer parses.

use act_core::{ActionPair, Choice, Policy, Prompter, extract_tag, parse_choice_among};
use serde::{Deserialize, Serialize};

use crate::batch::{ItemEvalConfig, generate_all};
use crate::episodes::check_indices;
use crate::error::EvalError;
use crate::next_action::action_verb;
use crate::stats::{self, BootstrapConfig, Estimate};

/// The outcome on one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticResult {
    /// The 0-based pair index.
    pub index: usize,
    /// The pair's task.
    pub task_id: String,
    /// The pair's step within its episode.
    pub step_index: usize,
    /// Where the expert action was presented.
    pub expert_choice: Choice,
    /// The policy's raw output.
    pub output: String,
    /// The parsed answer; `None` when it did not parse.
    pub answer: Option<Choice>,
    /// Whether the answer picks the expert action.
    pub correct: bool,
    /// The expert's action (empty in reports written before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub expert_action: String,
    /// The other action of the pair (empty in reports written before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub alternative: String,
}

/// Critic accuracy on the pairs of one kind of comparison ([`CriticReport::accuracy_by_comparison`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonAccuracy {
    /// The kind: `go vs go` when both actions have the expert's verb, `take vs other` when the alternative's verb
    /// differs.
    pub comparison: String,
    /// Pairs of this kind.
    pub items: usize,
    /// How many of them the critic answered with the expert action.
    pub correct: usize,
}

impl ComparisonAccuracy {
    /// `correct / items`.
    pub fn accuracy(&self) -> f64 {
        self.correct as f64 / self.items.max(1) as f64
    }
}

/// The kind of comparison a pair makes, by [`action_verb`]: `go vs go` when the alternative has the expert's verb
/// (two destinations: which to search first), `go vs other` when not (a different kind of step).
///
/// ```
/// assert_eq!(act_eval::comparison_kind("go to desk 1", "go to bed 1"), "go vs go");
/// assert_eq!(act_eval::comparison_kind("take pen 1 from desk 1", "go to bed 1"), "take vs other");
/// ```
pub fn comparison_kind(expert_action: &str, alternative: &str) -> String {
    let verb = action_verb(expert_action);
    if action_verb(alternative) == verb { format!("{verb} vs {verb}") } else { format!("{verb} vs other") }
}

/// Accuracy, parse rate and position bias, with intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticSummary {
    /// The fraction of pairs answered with the expert action (unparseable answers count as wrong).
    pub accuracy: Estimate,
    /// The fraction of answers that parse.
    pub parse_rate: Estimate,
    /// Accuracy among parsed answers; `None` when none parsed.
    pub accuracy_when_parsed: Option<Estimate>,
    /// The fraction of parsed answers that pick action 1 (0.5 for a critic without position bias on balanced
    /// pairs); `None` when none parsed.
    pub first_choice_rate: Option<Estimate>,
}

impl CriticSummary {
    /// Summarises `results`; fails when there are none.
    pub fn compute(results: &[CriticResult], bootstrap: &BootstrapConfig) -> Result<Self, EvalError> {
        let empty = || EvalError::Config("no pairs to summarise".into());
        let correct: Vec<bool> = results.iter().map(|r| r.correct).collect();
        let parsed: Vec<bool> = results.iter().map(|r| r.answer.is_some()).collect();
        let answered: Vec<&CriticResult> = results.iter().filter(|r| r.answer.is_some()).collect();
        let correct_when_parsed: Vec<bool> = answered.iter().map(|r| r.correct).collect();
        let first: Vec<bool> = answered.iter().map(|r| r.answer == Some(Choice::First)).collect();
        Ok(CriticSummary {
            accuracy: stats::rate(&correct, bootstrap).ok_or_else(empty)?,
            parse_rate: stats::rate(&parsed, bootstrap).ok_or_else(empty)?,
            accuracy_when_parsed: stats::rate(&correct_when_parsed, bootstrap),
            first_choice_rate: stats::rate(&first, bootstrap),
        })
    }
}

/// A whole critic evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticReport {
    /// The policy's name.
    pub method: String,
    /// The settings.
    pub config: ItemEvalConfig,
    /// How many pairs were evaluated; always `results.len()`.
    pub items: usize,
    /// Every pair, in order.
    pub results: Vec<CriticResult>,
    /// The summary of `results`.
    pub summary: CriticSummary,
}

impl CriticReport {
    /// Checks the report is whole and consistent (see [`EpisodeReport::validate`](crate::EpisodeReport::validate)).
    pub fn validate(&self) -> Result<(), String> {
        if self.results.len() != self.items {
            return Err(format!(
                "records {} pairs but holds {} (truncated or edited?)",
                self.items,
                self.results.len()
            ));
        }
        check_indices(self.results.iter().map(|r| r.index), "pair")?;
        if let Some(bad) = self.results.iter().find(|r| r.correct != (r.answer == Some(r.expert_choice))) {
            return Err(format!("pair {}: `correct` disagrees with its answer and expert choice", bad.index));
        }
        self.config.bootstrap.validate().map_err(|e| e.to_string())?;
        let summary = CriticSummary::compute(&self.results, &self.config.bootstrap).map_err(|e| e.to_string())?;
        if summary != self.summary {
            return Err("the summary does not match the per-pair results (edited or corrupted?)".into());
        }
        Ok(())
    }

    /// Correctness as 0/1 values in pair order, for [`paired_comparison`](crate::stats::paired_comparison).
    pub fn correct_values(&self) -> Vec<f64> {
        self.results.iter().map(|r| if r.correct { 1.0 } else { 0.0 }).collect()
    }

    /// Accuracy by [`comparison_kind`], the most frequent kind first; pairs recorded without their actions are
    /// left out. Where a critic fails shows here: a model can tell every local step from a random move and still
    /// be at chance on which destination the expert searches first.
    pub fn accuracy_by_comparison(&self) -> Vec<ComparisonAccuracy> {
        let outcomes = self
            .results
            .iter()
            .filter(|r| !r.expert_action.is_empty())
            .map(|r| (comparison_kind(&r.expert_action, &r.alternative), r.correct));
        crate::stats::tally_by_group(outcomes)
            .into_iter()
            .map(|(comparison, items, correct)| ComparisonAccuracy { comparison, items, correct })
            .collect()
    }
}

/// Shows `policy` the comparison prompt of every pair (in its presented order) and scores the answers.
pub fn evaluate_critic(
    policy: &dyn Policy,
    pairs: &[ActionPair],
    config: &ItemEvalConfig,
) -> Result<CriticReport, EvalError> {
    config.validate()?;
    if pairs.is_empty() {
        return Err(EvalError::Config("no pairs to evaluate".into()));
    }
    let prompter =
        Prompter::new(config.prompt.clone()).map_err(|e| EvalError::Config(format!("prompt templates: {e}")))?;
    let queries: Vec<_> = pairs.iter().map(|pair| prompter.pair_query(pair)).collect();
    let outputs = generate_all(policy, &queries, config, &format!("{} critic", policy.name()))?;
    let results: Vec<CriticResult> = pairs
        .iter()
        .zip(outputs)
        .enumerate()
        .map(|(index, (pair, output))| {
            let reasoned = !config.require_reasoning || extract_tag(&output, "think").is_ok();
            let presented = pair.presented();
            let answer =
                parse_choice_among(&output, [presented[0].as_str(), presented[1].as_str()]).ok().filter(|_| reasoned);
            let expert_choice = pair.expert_choice();
            CriticResult {
                index,
                task_id: pair.state.task_id.clone(),
                step_index: pair.state.step_index,
                expert_choice,
                output,
                answer,
                correct: answer == Some(expert_choice),
                expert_action: pair.expert_action.as_str().to_owned(),
                alternative: pair.alternative.as_str().to_owned(),
            }
        })
        .collect();
    let summary = CriticSummary::compute(&results, &config.bootstrap)?;
    Ok(CriticReport {
        method: policy.name().to_owned(),
        config: ItemEvalConfig { progress: false, ..config.clone() },
        items: results.len(),
        results,
        summary,
    })
}
