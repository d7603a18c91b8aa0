//! Next-action accuracy: how often the policy's action in an expert state matches the expert's, after
//! [`normalize_action`](act_core::normalize_action) (the ACT paper's ScienceWorld metric).

use act_core::{Action, AgentState, Policy, Prompter, actions_match, parse_action};
use serde::{Deserialize, Serialize};

use crate::batch::{ItemEvalConfig, generate_all};
use crate::episodes::check_indices;
use crate::error::EvalError;
use crate::stats::{self, BootstrapConfig, Estimate};

/// One expert state and the expert's action there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextActionItem {
    /// The state the policy sees.
    pub state: AgentState,
    /// The expert's action in it.
    pub expert_action: Action,
}

impl NextActionItem {
    /// Every (state, action) of an expert trajectory, with at most `history_len` history pairs per state.
    pub fn from_trajectory(trajectory: &act_core::Trajectory, history_len: usize) -> Vec<NextActionItem> {
        trajectory
            .states(history_len)
            .map(|(state, action)| NextActionItem { state, expert_action: action.clone() })
            .collect()
    }
}

/// The outcome on one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextActionResult {
    /// The 0-based item index.
    pub index: usize,
    /// The item's task.
    pub task_id: String,
    /// The item's step within its episode.
    pub step_index: usize,
    /// The policy's raw output.
    pub output: String,
    /// The parsed action; `None` when the output did not parse.
    pub predicted: Option<String>,
    /// Whether the parsed action matches the expert's.
    pub correct: bool,
    /// The expert's action in the item's state (empty in reports written before it was recorded).
    #[serde(default)]
    pub expert_action: String,
}

/// The verb of an action: its text up to the first space or `[` (`go` of `go to desk 1`, `search` of
/// `search[red shoes]`), lower-cased; empty for an empty action.
///
/// ```
/// assert_eq!(act_eval::action_verb("go to desk 1"), "go");
/// assert_eq!(act_eval::action_verb("Click[Buy Now]"), "click");
/// ```
pub fn action_verb(action: &str) -> String {
    let action = action.trim();
    let end = action.find(|c: char| c.is_whitespace() || c == '[').unwrap_or(action.len());
    action[..end].to_lowercase()
}

/// Next-action accuracy on the items whose expert action has one verb ([`action_verb`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerbAccuracy {
    /// The expert's verb.
    pub verb: String,
    /// Items whose expert action has this verb.
    pub items: usize,
    /// How many of them the policy got right.
    pub correct: usize,
}

impl VerbAccuracy {
    /// `correct / items`.
    pub fn accuracy(&self) -> f64 {
        self.correct as f64 / self.items.max(1) as f64
    }
}

/// Accuracy and parse rate, with intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextActionSummary {
    /// The fraction of items whose action matches the expert's (unparseable outputs count as wrong).
    pub accuracy: Estimate,
    /// The fraction of outputs that parse.
    pub parse_rate: Estimate,
}

impl NextActionSummary {
    /// Summarises `results`; fails when there are none.
    pub fn compute(results: &[NextActionResult], bootstrap: &BootstrapConfig) -> Result<Self, EvalError> {
        let empty = || EvalError::Config("no items to summarise".into());
        let correct: Vec<bool> = results.iter().map(|r| r.correct).collect();
        let parsed: Vec<bool> = results.iter().map(|r| r.predicted.is_some()).collect();
        Ok(NextActionSummary {
            accuracy: stats::rate(&correct, bootstrap).ok_or_else(empty)?,
            parse_rate: stats::rate(&parsed, bootstrap).ok_or_else(empty)?,
        })
    }
}

/// A whole next-action evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextActionReport {
    /// The policy's name.
    pub method: String,
    /// The settings.
    pub config: ItemEvalConfig,
    /// How many items were evaluated; always `results.len()`.
    pub items: usize,
    /// Every item, in order.
    pub results: Vec<NextActionResult>,
    /// The summary of `results`.
    pub summary: NextActionSummary,
}

impl NextActionReport {
    /// Checks the report is whole and consistent (see [`EpisodeReport::validate`](crate::EpisodeReport::validate)).
    pub fn validate(&self) -> Result<(), String> {
        if self.results.len() != self.items {
            return Err(format!(
                "records {} items but holds {} (truncated or edited?)",
                self.items,
                self.results.len()
            ));
        }
        check_indices(self.results.iter().map(|r| r.index), "item")?;
        if let Some(bad) = self.results.iter().find(|r| r.correct && r.predicted.is_none()) {
            return Err(format!("item {} is marked correct without a parsed action", bad.index));
        }
        self.config.bootstrap.validate().map_err(|e| e.to_string())?;
        let summary = NextActionSummary::compute(&self.results, &self.config.bootstrap).map_err(|e| e.to_string())?;
        if summary != self.summary {
            return Err("the summary does not match the per-item results (edited or corrupted?)".into());
        }
        Ok(())
    }

    /// Accuracy per expert verb ([`action_verb`]), the most frequent verb first (ties by name); items without a
    /// recorded expert action are left out. Which decisions a policy gets wrong: an agent that walks past the
    /// object it needs shows a low `take` row beside a high `go` row.
    pub fn accuracy_by_verb(&self) -> Vec<VerbAccuracy> {
        let outcomes = self
            .results
            .iter()
            .filter(|r| !r.expert_action.is_empty())
            .map(|r| (action_verb(&r.expert_action), r.correct));
        crate::stats::tally_by_group(outcomes)
            .into_iter()
            .map(|(verb, items, correct)| VerbAccuracy { verb, items, correct })
            .collect()
    }

    /// Correctness as 0/1 values in item order, for [`paired_comparison`](crate::stats::paired_comparison).
    pub fn correct_values(&self) -> Vec<f64> {
        self.results.iter().map(|r| if r.correct { 1.0 } else { 0.0 }).collect()
    }
}

/// Asks `policy` for the next action in every item's state and scores it against the expert's.
pub fn evaluate_next_action(
    policy: &dyn Policy,
    items: &[NextActionItem],
    config: &ItemEvalConfig,
) -> Result<NextActionReport, EvalError> {
    config.validate()?;
    if items.is_empty() {
        return Err(EvalError::Config("no next-action items to evaluate".into()));
    }
    let prompter =
        Prompter::new(config.prompt.clone()).map_err(|e| EvalError::Config(format!("prompt templates: {e}")))?;
    let queries: Vec<_> = items.iter().map(|item| prompter.act_query(&item.state)).collect();
    let outputs = generate_all(policy, &queries, config, &format!("{} next action", policy.name()))?;
    let results: Vec<NextActionResult> = items
        .iter()
        .zip(outputs)
        .enumerate()
        .map(|(index, (item, output))| {
            let predicted = parse_action(&output, config.require_reasoning).ok().map(|p| p.action);
            let correct = predicted.as_deref().is_some_and(|a| actions_match(a, item.expert_action.as_str()));
            NextActionResult {
                index,
                task_id: item.state.task_id.clone(),
                step_index: item.state.step_index,
                output,
                predicted,
                correct,
                expert_action: item.expert_action.as_str().to_owned(),
            }
        })
        .collect();
    let summary = NextActionSummary::compute(&results, &config.bootstrap)?;
    Ok(NextActionReport {
        method: policy.name().to_owned(),
        config: ItemEvalConfig { progress: false, ..config.clone() },
        items: results.len(),
        results,
        summary,
    })
}
