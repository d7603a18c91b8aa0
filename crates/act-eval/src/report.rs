//! Result records: one JSON file per evaluation, written atomically and validated on load, and their Markdown
//! rendering, alone or side by side as the paper's table (methods as rows, benchmarks as columns).

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::critic::CriticReport;
use crate::episodes::EpisodeReport;
use crate::error::EvalError;
use crate::next_action::NextActionReport;
use crate::stats::{Estimate, PairedComparison};

/// The format tag every record carries; a file with another tag is refused.
pub const RECORD_FORMAT: &str = "act-eval/1";

/// One evaluation of any kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Evaluation {
    /// On-line episodes.
    Episodes(EpisodeReport),
    /// Next-action accuracy.
    NextAction(NextActionReport),
    /// Critic accuracy.
    Critic(CriticReport),
}

impl Evaluation {
    /// The evaluated method's name.
    pub fn method(&self) -> &str {
        match self {
            Evaluation::Episodes(r) => &r.method,
            Evaluation::NextAction(r) => &r.method,
            Evaluation::Critic(r) => &r.method,
        }
    }

    /// The headline metric's name and estimate: success rate for episodes, accuracy otherwise.
    pub fn headline(&self) -> (&'static str, &Estimate) {
        match self {
            Evaluation::Episodes(r) => ("success rate", &r.summary.success),
            Evaluation::NextAction(r) => ("next-action accuracy", &r.summary.accuracy),
            Evaluation::Critic(r) => ("critic accuracy", &r.summary.accuracy),
        }
    }

    /// Checks the evaluation is whole and consistent.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Evaluation::Episodes(r) => r.validate(),
            Evaluation::NextAction(r) => r.validate(),
            Evaluation::Critic(r) => r.validate(),
        }
    }
}

/// A saved evaluation: what was measured ("alfworld eval_in_distribution") and the whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRecord {
    /// Always [`RECORD_FORMAT`].
    pub format: String,
    /// The benchmark's label: a column of the comparison table.
    pub benchmark: String,
    /// The report.
    pub evaluation: Evaluation,
}

impl EvalRecord {
    /// A record of `evaluation` under the label `benchmark`.
    pub fn new(benchmark: impl Into<String>, evaluation: Evaluation) -> Self {
        EvalRecord { format: RECORD_FORMAT.to_owned(), benchmark: benchmark.into(), evaluation }
    }

    /// A record of an on-line evaluation, labelled "{env} {split}".
    pub fn episodes(report: EpisodeReport) -> Self {
        let benchmark = format!("{} {}", report.env, report.config.split);
        Self::new(benchmark, Evaluation::Episodes(report))
    }

    /// The evaluated method's name.
    pub fn method(&self) -> &str {
        self.evaluation.method()
    }

    /// Writes the record as pretty JSON, atomically (a reader sees the old file or the whole new one).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), EvalError> {
        let path = path.as_ref();
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| EvalError::Record { path: path.to_owned(), message: format!("cannot serialise: {e}") })?;
        act_core::atomic_write(path, &json).map_err(|source| EvalError::Io { path: path.to_owned(), source })
    }

    /// Reads and validates a record. A missing, empty, truncated or corrupted file, a foreign format, or a report
    /// whose episode count or summary disagrees with its per-episode results is an error naming the file and what
    /// is wrong.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, EvalError> {
        let path = path.as_ref();
        let fail = |message: String| EvalError::Record { path: path.to_owned(), message };
        let bytes = std::fs::read(path).map_err(|source| EvalError::Io { path: path.to_owned(), source })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(fail("the file is empty (an interrupted write?)".into()));
        }
        let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            fail(match e.classify() {
                serde_json::error::Category::Eof => format!("the JSON ends early: the file is truncated ({e})"),
                _ => format!("not valid JSON: {e}"),
            })
        })?;
        match value.get("format").and_then(|f| f.as_str()) {
            Some(RECORD_FORMAT) => {}
            Some(other) => return Err(fail(format!("format `{other}` is not `{RECORD_FORMAT}`"))),
            None => {
                return Err(fail(format!("not an act-eval record: no `format` field (expected `{RECORD_FORMAT}`)")));
            }
        }
        let record: EvalRecord = serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            fail(format!("field `{field}`: {}", e.into_inner()))
        })?;
        record.evaluation.validate().map_err(fail)?;
        Ok(record)
    }

    /// The record as Markdown: the headline numbers with intervals and, for episodes, the per-task-type table.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("### {} on {}\n\n", escape(self.method()), escape(&self.benchmark));
        out.push_str("| metric | value | 95% CI (bootstrap) | Wilson |\n|---|---:|---:|---:|\n");
        let mut row = |name: &str, estimate: Option<&Estimate>, percent: bool| {
            let Some(e) = estimate else {
                let _ = writeln!(out, "| {name} | n/a | | |");
                return;
            };
            let wilson = e.wilson.map(|w| format_interval(&w, percent)).unwrap_or_default();
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {wilson} |",
                format_number(e.value, percent),
                format_interval(&e.ci, percent)
            );
        };
        match &self.evaluation {
            Evaluation::Episodes(r) => {
                let s = &r.summary;
                row("success rate", Some(&s.success), true);
                row("mean score", Some(&s.score), false);
                row("steps to success", s.steps_to_success.as_ref(), false);
                row("invalid-action rate", s.invalid_action_rate.as_ref(), true);
                row("unparseable-output rate", s.unparseable_rate.as_ref(), true);
                let _ = write!(
                    out,
                    "\n{} episodes on split `{}` of `{}`, step budget {}, seed {}, invalid actions {}; {}.\n",
                    r.episodes,
                    r.config.split,
                    escape(&r.env),
                    r.step_budget,
                    r.config.seed,
                    serde_json::to_value(r.config.invalid_actions)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    bootstrap_note(&r.config.bootstrap)
                );
                out.push_str("\n| task type | episodes | success | 95% CI | mean score |\n|---|---:|---:|---:|---:|\n");
                for (task_type, t) in &r.summary.by_task_type {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} | {} |",
                        escape(task_type),
                        t.episodes,
                        format_number(t.success.value, true),
                        format_interval(&t.success.ci, true),
                        format_number(t.score.value, false)
                    );
                }
            }
            Evaluation::NextAction(r) => {
                row("next-action accuracy", Some(&r.summary.accuracy), true);
                row("parse rate", Some(&r.summary.parse_rate), true);
                let _ = write!(
                    out,
                    "\n{} items, seed {}; {}.\n",
                    r.items,
                    r.config.seed,
                    bootstrap_note(&r.config.bootstrap)
                );
            }
            Evaluation::Critic(r) => {
                row("critic accuracy", Some(&r.summary.accuracy), true);
                row("parse rate", Some(&r.summary.parse_rate), true);
                row("accuracy when parsed", r.summary.accuracy_when_parsed.as_ref(), true);
                row("picks action 1", r.summary.first_choice_rate.as_ref(), true);
                let _ = write!(
                    out,
                    "\n{} pairs, seed {}; {}.\n",
                    r.items,
                    r.config.seed,
                    bootstrap_note(&r.config.bootstrap)
                );
            }
        }
        out
    }
}

fn bootstrap_note(config: &crate::stats::BootstrapConfig) -> String {
    format!(
        "intervals: {:.0}% percentile bootstrap, {} resamples, seed {}",
        config.level * 100.0,
        config.resamples,
        config.seed
    )
}

/// The paper's table: one row per method, one column per benchmark, each cell the record's headline metric as
/// "rate ± half-width of its bootstrap interval", in percent. Rows and columns keep the order in which they first
/// appear in `records`; a missing cell shows "–".
///
/// Fails when two records share a method and benchmark (which one would the cell show?).
pub fn render_table(records: &[EvalRecord]) -> Result<String, EvalError> {
    render_table_with(records, |record| Some(record.evaluation.headline().1))
}

/// [`render_table`] with the cell's rate chosen by `metric` (say, an episode report's unparseable-output rate);
/// `None` shows "–".
pub fn render_table_with<'a>(
    records: &'a [EvalRecord],
    metric: impl Fn(&'a EvalRecord) -> Option<&'a Estimate>,
) -> Result<String, EvalError> {
    render_cells(records, |record| {
        metric(record).map(|e| format!("{:.1} ± {:.1}", e.value * 100.0, e.ci.half_width() * 100.0))
    })
}

/// The table of [`render_table`] for the episode records' mean final score, in the environment's own units
/// (ScienceWorld 0-100, WebShop reward 0-1), "mean ± half-width of its bootstrap interval"; other records show "–".
pub fn render_score_table(records: &[EvalRecord]) -> Result<String, EvalError> {
    render_cells(records, |record| match &record.evaluation {
        Evaluation::Episodes(e) => {
            Some(format!("{:.2} ± {:.2}", e.summary.score.value, e.summary.score.ci.half_width()))
        }
        _ => None,
    })
}

/// The method x benchmark table with each record's cell written by `cell`.
fn render_cells<'a>(
    records: &'a [EvalRecord],
    cell: impl Fn(&'a EvalRecord) -> Option<String>,
) -> Result<String, EvalError> {
    let mut methods: Vec<&str> = Vec::new();
    let mut benchmarks: Vec<&str> = Vec::new();
    for record in records {
        if !methods.contains(&record.method()) {
            methods.push(record.method());
        }
        if !benchmarks.contains(&record.benchmark.as_str()) {
            benchmarks.push(&record.benchmark);
        }
    }
    let mut out = String::from("| method |");
    for benchmark in &benchmarks {
        let _ = write!(out, " {} |", escape(benchmark));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(benchmarks.len()));
    out.push('\n');
    for method in &methods {
        let _ = write!(out, "| {} |", escape(method));
        for benchmark in &benchmarks {
            let mut matching = records.iter().filter(|r| r.method() == *method && r.benchmark == *benchmark);
            let cell = match (matching.next(), matching.next()) {
                (Some(_), Some(_)) => {
                    return Err(EvalError::Config(format!(
                        "two records of method `{method}` on benchmark `{benchmark}`"
                    )));
                }
                (Some(record), None) => cell(record).unwrap_or_else(|| "–".to_owned()),
                _ => "–".to_owned(),
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    Ok(out)
}

/// Next-action accuracy per expert verb ([`NextActionReport::accuracy_by_verb`]), one row per report and one
/// column per verb (the most frequent over all reports first), in percent; the header gives each verb's item count
/// in the first report that has it, and a cell whose report has another count shows its own in brackets.
///
/// ```
/// # use act_eval::*;
/// let result = |index, predicted: &str, expert: &str| NextActionResult {
///     index, task_id: "t".into(), step_index: index, output: String::new(),
///     predicted: Some(predicted.into()), correct: predicted == expert, expert_action: expert.into(),
/// };
/// let results = vec![
///     result(0, "go to desk 1", "go to desk 1"),
///     result(1, "go to bed 1", "go to bed 1"),
///     result(2, "go to bed 1", "take pen 1 from desk 1"),
/// ];
/// let report = NextActionReport {
///     method: "IL".into(), config: ItemEvalConfig::default(), items: 3,
///     summary: NextActionSummary::compute(&results, &BootstrapConfig::default()).unwrap(), results,
/// };
/// assert_eq!(render_verb_table(&[&report]), "| method | go (2) | take (1) |\n|---|---:|---:|\n| IL | 100.0 | 0.0 |\n");
/// ```
pub fn render_verb_table(reports: &[&NextActionReport]) -> String {
    let rows: Vec<GroupRow> = reports
        .iter()
        .map(|r| (r.method.as_str(), r.accuracy_by_verb().into_iter().map(|v| (v.verb, v.items, v.correct)).collect()))
        .collect();
    render_group_table(&rows)
}

/// Critic accuracy per kind of comparison ([`CriticReport::accuracy_by_comparison`](crate::CriticReport::accuracy_by_comparison)),
/// laid out as [`render_verb_table`]: one row per report, one column per kind (`go vs go`, `take vs other`, ...).
///
/// ```
/// # use act_eval::*;
/// # use act_core::Choice;
/// let result = |index, correct: bool, expert: &str, alternative: &str| CriticResult {
///     index, task_id: "t".into(), step_index: index, expert_choice: Choice::First, output: String::new(),
///     answer: Some(if correct { Choice::First } else { Choice::Second }), correct,
///     expert_action: expert.into(), alternative: alternative.into(),
/// };
/// let results = vec![
///     result(0, true, "take pen 1 from desk 1", "go to bed 1"),
///     result(1, false, "go to desk 1", "go to bed 1"),
///     result(2, true, "go to bed 1", "go to desk 1"),
/// ];
/// let report = CriticReport {
///     method: "ACT".into(), config: ItemEvalConfig::default(), items: 3,
///     summary: CriticSummary::compute(&results, &BootstrapConfig::default()).unwrap(), results,
/// };
/// assert_eq!(
///     render_comparison_table(&[&report]),
///     "| method | go vs go (2) | take vs other (1) |\n|---|---:|---:|\n| ACT | 50.0 | 100.0 |\n"
/// );
/// ```
pub fn render_comparison_table(reports: &[&crate::CriticReport]) -> String {
    let rows: Vec<GroupRow> = reports
        .iter()
        .map(|r| {
            let groups = r.accuracy_by_comparison().into_iter().map(|g| (g.comparison, g.items, g.correct)).collect();
            (r.method.as_str(), groups)
        })
        .collect();
    render_group_table(&rows)
}

/// A method's name and its (group, items, correct) triples: one row of [`render_group_table`].
type GroupRow<'a> = (&'a str, Vec<(String, usize, usize)>);

/// One row per method of (group, items, correct) triples, one column per group (the most items over all rows
/// first), accuracy in percent; the header holds each group's count in the first row that has it, and a cell
/// whose row has another count shows its own in brackets.
fn render_group_table(rows: &[GroupRow]) -> String {
    let mut totals: Vec<(String, usize, usize)> = Vec::new(); // group, items over all rows, header count
    for (_, groups) in rows {
        for (group, items, _) in groups {
            match totals.iter_mut().find(|(g, ..)| g == group) {
                Some(total) => total.1 += items,
                None => totals.push((group.clone(), *items, *items)),
            }
        }
    }
    totals.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out = String::from("| method |");
    for (group, _, items) in &totals {
        let _ = write!(out, " {} ({items}) |", escape(group));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(totals.len()));
    out.push('\n');
    for (method, groups) in rows {
        let _ = write!(out, "| {} |", escape(method));
        for (group, _, header) in &totals {
            let cell = match groups.iter().find(|(g, ..)| g == group) {
                Some((_, items, correct)) => {
                    let percent = *correct as f64 / (*items).max(1) as f64 * 100.0;
                    if items == header { format!("{percent:.1}") } else { format!("{percent:.1} ({items})") }
                }
                None => "–".to_owned(),
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out
}

/// A paired comparison as a Markdown sentence.
pub fn render_paired(name_a: &str, name_b: &str, comparison: &PairedComparison) -> String {
    let d = &comparison.difference;
    format!(
        "{} − {} on {} shared units: {:+.1} points (95% CI [{:+.1}, {:+.1}]); {} better on {}, {} better on {}, {} ties; \
exact sign test (McNemar) p = {:.3e}\n",
        escape(name_a),
        escape(name_b),
        comparison.n,
        d.value * 100.0,
        d.ci.lower * 100.0,
        d.ci.upper * 100.0,
        escape(name_a),
        comparison.a_better,
        escape(name_b),
        comparison.b_better,
        comparison.ties,
        comparison.sign_test_p
    )
}

fn format_number(value: f64, percent: bool) -> String {
    if percent { format!("{:.1}%", value * 100.0) } else { format!("{value:.3}") }
}

fn format_interval(interval: &crate::stats::Interval, percent: bool) -> String {
    if percent {
        format!("[{:.1}, {:.1}]", interval.lower * 100.0, interval.upper * 100.0)
    } else {
        format!("[{:.3}, {:.3}]", interval.lower, interval.upper)
    }
}

/// Keeps a name from breaking a Markdown table.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
