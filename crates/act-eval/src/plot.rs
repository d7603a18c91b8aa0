//! Plots: training curves from a trainer's metrics JSONL, and success by method with interval whiskers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::EvalError;
use crate::report::EvalRecord;

/// One line of a metrics file: the step and every numeric field.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsRow {
    /// The training step.
    pub step: u64,
    /// Every numeric field but `step` (`reward_mean`, `kl`, `loss`, ...).
    pub values: BTreeMap<String, f64>,
}

/// Reads a metrics JSONL file: one JSON object per line, each with a non-negative integer `step`; numeric fields
/// are kept, nested objects flattened (`reward.mean` is `reward_mean`), others (strings, arrays) ignored; blank lines are skipped. A bad line is an error naming the
/// file and line.
pub fn read_metrics(path: impl AsRef<Path>) -> Result<Vec<MetricsRow>, EvalError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io { path: path.to_owned(), source })?;
    parse_metrics(&text).map_err(|message| EvalError::Record { path: path.to_owned(), message })
}

fn parse_metrics(text: &str) -> Result<Vec<MetricsRow>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(line).map_err(|e| format!("line {line_no}: not a JSON object: {e}"))?;
        let step = object
            .get("step")
            .ok_or_else(|| format!("line {line_no}: no `step` field"))?
            .as_u64()
            .ok_or_else(|| format!("line {line_no}: `step` is not a non-negative integer"))?;
        let mut values = BTreeMap::new();
        for (key, value) in object.iter().filter(|(key, _)| key.as_str() != "step") {
            flatten_into(&mut values, key, value);
        }
        rows.push(MetricsRow { step, values });
    }
    Ok(rows)
}

/// Adds the finite numbers of `value` under `key`; a nested object's fields are named `key_field` (GRPO's
/// `"reward": {"mean": ..}` becomes `reward_mean`), at any depth.
fn flatten_into(values: &mut BTreeMap<String, f64>, key: &str, value: &serde_json::Value) {
    match value {
        serde_json::Value::Object(fields) => {
            for (field, inner) in fields {
                flatten_into(values, &format!("{key}_{field}"), inner);
            }
        }
        other => {
            if let Some(v) = other.as_f64().filter(|v| v.is_finite()) {
                values.insert(key.to_owned(), v);
            }
        }
    }
}

/// Draws one panel per field of `fields` (value against step), stacked, into `path` (`.svg` or `.png`).
///
/// Fails when a field occurs in no row.
///
/// The file's extension picks the format: `.svg` or `.png`. Text is laid out with an embedded DejaVu Sans (through
/// ab_glyph), so no system fonts are needed and plots draw the same everywhere. Files are written atomically.
pub fn plot_training_curves(
    rows: &[MetricsRow],
    fields: &[&str],
    title: &str,
    path: impl AsRef<Path>,
) -> Result<(), EvalError> {
    let path = path.as_ref();
    let fail = |message: String| EvalError::Plot { path: path.to_owned(), message };
    if fields.is_empty() {
        return Err(fail("no fields to plot".into()));
    }
    let series: Vec<Vec<(f64, f64)>> = fields
        .iter()
        .map(|field| {
            let points: Vec<(f64, f64)> =
                rows.iter().filter_map(|r| r.values.get(*field).map(|&v| (r.step as f64, v))).collect();
            if points.is_empty() { Err(fail(format!("field `{field}` occurs in no row"))) } else { Ok(points) }
        })
        .collect::<Result<_, _>>()?;
    render(&Curves { title, fields, series: &series }, path)
}

/// One named line of a [`plot_lines`] chart: `(x, y)` points in drawing order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's entry.
    pub label: String,
    /// The points.
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` as lines on one chart with a legend into `path` (`.svg` or `.png`), the axes described by
/// `x_desc` and `y_desc`: say, the success of several methods against environment steps.
///
/// Fails when there is no series, a series has no point, or a value is not finite.
pub fn plot_lines(
    series: &[Series],
    x_desc: &str,
    y_desc: &str,
    title: &str,
    path: impl AsRef<Path>,
) -> Result<(), EvalError> {
    let path = path.as_ref();
    let fail = |message: String| EvalError::Plot { path: path.to_owned(), message };
    if series.is_empty() {
        return Err(fail("no series to plot".into()));
    }
    for line in series {
        if line.points.is_empty() {
            return Err(fail(format!("series `{}` has no point", line.label)));
        }
        if line.points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
            return Err(fail(format!("series `{}` has a value that is not finite", line.label)));
        }
    }
    render(&Lines { title, x_desc, y_desc, series }, path)
}

/// Something drawable on any plotters backend.
trait Figure {
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
}

/// Draws `figure` into `path`, SVG or PNG by its extension, atomically.
fn render(figure: &impl Figure, path: &Path) -> Result<(), EvalError> {
    let fail = |message: String| EvalError::Plot { path: path.to_owned(), message };
    register_fonts().map_err(fail)?;
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("svg") => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, figure.size()).into_drawing_area();
                figure.draw(&root).map_err(|e| fail(e.to_string()))?;
                root.present().map_err(|e| fail(e.to_string()))?;
            }
            act_core::atomic_write(path, svg.as_bytes())
                .map_err(|source| EvalError::Io { path: path.to_owned(), source })
        }
        Some("png") => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|source| EvalError::Io { path: path.to_owned(), source })?;
            }
            // The encoder picks the format from the extension, so the temporary file keeps `.png`.
            let temp = temp_png(path);
            let drawn = (|| {
                let root = BitMapBackend::new(&temp, figure.size()).into_drawing_area();
                figure.draw(&root).map_err(|e| e.to_string())?;
                root.present().map_err(|e| e.to_string())
            })();
            let result = drawn.map_err(fail).and_then(|()| {
                std::fs::rename(&temp, path).map_err(|source| EvalError::Io { path: path.to_owned(), source })
            });
            if result.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
            result
        }
        _ => Err(fail("unsupported plot format: the file name must end in .svg or .png".into())),
    }
}

fn temp_png(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{stem}.tmp-{}-{n}.png", std::process::id()))
}

/// Registers DejaVu Sans as the "sans-serif" family, once per process.
fn register_fonts() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let regular = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
            let bold = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
            match (regular, bold) {
                (Ok(()), Ok(())) => Ok(()),
                _ => Err("the embedded DejaVu Sans font could not be loaded".to_owned()),
            }
        })
        .clone()
}

struct Curves<'a> {
    title: &'a str,
    fields: &'a [&'a str],
    series: &'a [Vec<(f64, f64)>],
}

impl Figure for Curves<'_> {
    fn size(&self) -> (u32, u32) {
        (900, 80 + 260 * self.fields.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        draw_curves(root, self.title, self.fields, self.series)
    }
}

struct Lines<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    series: &'a [Series],
}

impl Figure for Lines<'_> {
    fn size(&self) -> (u32, u32) {
        (900, 560)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let (x_range, y_range) = (padded(points().map(|p| p.0), 0.0), padded(points().map(|p| p.1), 0.05));
        let mut chart = ChartBuilder::on(root)
            .caption(self.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range, y_range)?;
        chart
            .configure_mesh()
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        for (i, line) in self.series.iter().enumerate() {
            let colour = colour(i);
            chart
                .draw_series(LineSeries::new(line.points.iter().copied(), colour.stroke_width(2)))?
                .label(line.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2)));
            chart.draw_series(line.points.iter().map(|&p| Circle::new(p, 2, colour.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    }
}

struct Bars<'a> {
    title: &'a str,
    benchmarks: &'a [&'a str],
    methods: &'a [&'a str],
    bars: &'a [Bar],
}

impl Figure for Bars<'_> {
    fn size(&self) -> (u32, u32) {
        (360 + 200 * self.benchmarks.len() as u32, 520)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        draw_bars(root, self.title, self.benchmarks, self.methods, self.bars)
    }
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The "tab10" colours: distinct, and readable on white (unlike some of plotters' palette).
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

fn draw_curves<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    fields: &[&str],
    series: &[Vec<(f64, f64)>],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 24))?;
    let panels = root.split_evenly((fields.len(), 1));
    for (i, ((panel, field), points)) in panels.iter().zip(fields).zip(series).enumerate() {
        let (x_range, y_range) = (padded(points.iter().map(|p| p.0), 0.0), padded(points.iter().map(|p| p.1), 0.05));
        let mut chart = ChartBuilder::on(panel)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range, y_range)?;
        chart.configure_mesh().x_desc("step").x_label_formatter(&|x| format!("{x:.0}")).y_desc(*field).draw()?;
        let colour = colour(i);
        chart.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))?;
        if points.len() == 1 {
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        }
    }
    Ok(())
}

/// The range of `values`, widened by `margin` of its span on each side, and never empty.
fn padded(values: impl Iterator<Item = f64>, margin: f64) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let span = hi - lo;
    if span <= 0.0 {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - pad)..(hi + pad);
    }
    (lo - span * margin)..(hi + span * margin)
}

/// Draws the headline metric of every record as a bar chart into `path` (`.svg` or `.png`): one group per benchmark,
/// one coloured bar per method, whiskers at the bootstrap interval, in percent.
pub fn plot_success_by_method(records: &[EvalRecord], title: &str, path: impl AsRef<Path>) -> Result<(), EvalError> {
    let path = path.as_ref();
    let fail = |message: String| EvalError::Plot { path: path.to_owned(), message };
    if records.is_empty() {
        return Err(fail("no records to plot".into()));
    }
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
    let bars: Vec<Bar> = records
        .iter()
        .map(|record| {
            let group = benchmarks.iter().position(|b| *b == record.benchmark).unwrap_or(0);
            let slot = methods.iter().position(|m| *m == record.method()).unwrap_or(0);
            let estimate = record.evaluation.headline().1;
            Bar {
                group,
                slot,
                value: estimate.value * 100.0,
                lower: estimate.ci.lower * 100.0,
                upper: estimate.ci.upper * 100.0,
            }
        })
        .collect();
    render(&Bars { title, benchmarks: &benchmarks, methods: &methods, bars: &bars }, path)
}

struct Bar {
    group: usize,
    slot: usize,
    value: f64,
    lower: f64,
    upper: f64,
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    benchmarks: &[&str],
    methods: &[&str],
    bars: &[Bar],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let groups = benchmarks.len();
    // Each group spans [g - 0.4, g + 0.4], split evenly among the methods.
    let width = 0.8 / methods.len() as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        // The last 0.8 of the x range is room for the legend, clear of the bars.
        .build_cartesian_2d(-0.5..groups as f64 + 0.3, 0.0..100.0)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .y_desc("% (95% bootstrap CI)")
        .draw()?;
    for (m, method) in methods.iter().enumerate() {
        let colour = colour(m);
        let mine: Vec<&Bar> = bars.iter().filter(|b| b.slot == m).collect();
        let left = |b: &Bar| b.group as f64 - 0.4 + width * b.slot as f64;
        chart
            .draw_series(mine.iter().map(|b| {
                Rectangle::new([(left(b) + width * 0.05, 0.0), (left(b) + width * 0.95, b.value)], colour.filled())
            }))?
            .label(*method)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        chart.draw_series(mine.iter().flat_map(|b| {
            let centre = left(b) + width / 2.0;
            let cap = width * 0.2;
            [
                PathElement::new(vec![(centre, b.lower), (centre, b.upper)], BLACK.stroke_width(1)),
                PathElement::new(vec![(centre - cap, b.lower), (centre + cap, b.lower)], BLACK.stroke_width(1)),
                PathElement::new(vec![(centre - cap, b.upper), (centre + cap, b.upper)], BLACK.stroke_width(1)),
            ]
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    // Benchmark names under their groups (the numeric x axis has no labels of its own).
    let style = TextStyle::from(("sans-serif", 16)).pos(Pos::new(HPos::Center, VPos::Top));
    for (g, benchmark) in benchmarks.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(g as f64, 0.0));
        root.draw(&Text::new(benchmark.to_string(), (px, py + 8), style.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_lines_are_parsed_and_bad_lines_named() {
        let rows =
            parse_metrics("{\"step\": 1, \"loss\": 0.5, \"tag\": \"x\"}\n\n{\"step\": 2, \"kl\": 0.1}\n").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].values.get("loss"), Some(&0.5));
        assert!(!rows[0].values.contains_key("tag"));
        assert!(parse_metrics("{\"loss\": 1}").unwrap_err().contains("line 1: no `step`"));
        assert!(parse_metrics("{\"step\": 1}\n{\"step\": -3}").unwrap_err().contains("line 2"));
        assert!(
            parse_metrics("{\"step\": 1}\n{\"step\": 2, \"lo").unwrap_err().starts_with("line 2: not a JSON object")
        );
    }

    #[test]
    fn lines_are_drawn_with_a_legend_and_bad_series_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.svg");
        let series = [
            Series { label: "IL -> GiGPO".into(), points: vec![(0.0, 0.1), (1500.0, 0.25), (3100.0, 0.3)] },
            Series { label: "IL -> GRPO".into(), points: vec![(0.0, 0.1), (1600.0, 0.2)] },
        ];
        plot_lines(&series, "environment steps", "success", "on-line RL", &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        // A marker per point, and both legend entries.
        assert_eq!(svg.matches("<circle").count(), 5, "{svg}");
        assert!(svg.contains("IL -&gt; GiGPO") && svg.contains("IL -&gt; GRPO"), "{svg}");
        let empty = [Series { label: "x".into(), points: vec![] }];
        let err = plot_lines(&empty, "x", "y", "t", &path).unwrap_err().to_string();
        assert!(err.contains("series `x` has no point"), "{err}");
        let nan = [Series { label: "y".into(), points: vec![(0.0, f64::NAN)] }];
        assert!(plot_lines(&nan, "x", "y", "t", &path).unwrap_err().to_string().contains("not finite"));
        assert!(plot_lines(&[], "x", "y", "t", &path).is_err());
    }

    proptest::proptest! {
        #[test]
        fn metrics_parser_never_panics(text in "(\\{|\\}|\"step\"|:|,|-?[0-9.e]{1,6}|\"[a-z_]{0,6}\"|\n| ){0,30}") {
            let _ = parse_metrics(&text);
        }

        #[test]
        fn metrics_parser_never_panics_on_any_text(text in proptest::prelude::any::<String>()) {
            let _ = parse_metrics(&text);
        }
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded([2.0].into_iter(), 0.05), 1.8..2.2);
        assert_eq!(padded([0.0, 0.0].into_iter(), 0.05), -1.0..1.0);
        assert_eq!(padded([0.0, 10.0].into_iter(), 0.1), -1.0..11.0);
    }
}
