//! SVG plots from metrics files and records.

mod common;

use act_core::{RandomAdmissiblePolicy, Split};
use act_eval::*;

/// The contents of the SVG's `<text>` elements, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_owned()))
        .collect()
}

/// The width and height in a PNG's header, after checking its signature.
fn png_size(path: &std::path::Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

#[test]
fn training_curves_from_metrics_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("metrics.jsonl");
    let lines: Vec<String> = (0..50)
        .map(|s| {
            format!(
                "{{\"step\": {s}, \"reward\": {{\"mean\": {}, \"std\": 0.5}}, \"kl\": {}, \"phase\": \"rl\"}}",
                s as f64 / 50.0,
                0.01 * s as f64
            )
        })
        .collect();
    std::fs::write(&metrics, lines.join("\n")).unwrap();
    let rows = read_metrics(&metrics).unwrap();
    assert_eq!(rows.len(), 50);
    assert_eq!(rows[10].values.get("reward_mean"), Some(&0.2), "nested fields are flattened");
    assert_eq!(rows[10].values.get("reward_std"), Some(&0.5));
    assert!(!rows[10].values.contains_key("phase"), "strings are not values");
    let out = dir.path().join("plots/curves.svg");
    plot_training_curves(&rows, &["reward_mean", "kl"], "GRPO run", &out).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let texts = texts(&svg);
    for label in ["GRPO run", "reward_mean", "kl", "step"] {
        assert!(texts.iter().any(|t| t == label), "label `{label}` missing from {texts:?}");
    }
    assert!(svg.contains("<polyline"), "no curve drawn");

    let png = dir.path().join("plots/curves.png");
    plot_training_curves(&rows, &["reward_mean", "kl"], "GRPO run", &png).unwrap();
    assert_eq!(png_size(&png), (900, 80 + 2 * 260));
    let err = plot_training_curves(&rows, &["kl"], "x", dir.path().join("curves.pdf")).unwrap_err();
    assert!(err.to_string().contains("must end in .svg or .png"), "{err}");

    let err = plot_training_curves(&rows, &["loss"], "x", &out).unwrap_err();
    assert!(err.to_string().contains("field `loss` occurs in no row"), "{err}");

    std::fs::write(&metrics, "{\"step\": 0, \"loss\": 1}\n{\"loss\": 2}\n").unwrap();
    let err = read_metrics(&metrics).unwrap_err().to_string();
    assert!(err.contains("metrics.jsonl: line 2: no `step` field"), "{err}");
}

#[test]
fn success_by_method_bars() {
    let config = EpisodeEvalConfig::new(Split::Test).with_progress(false);
    let random = RandomAdmissiblePolicy::new();
    let records = vec![
        EvalRecord::episodes(evaluate_episodes(&common::doors(40), Agent::Expert, &config).unwrap()),
        EvalRecord::episodes(evaluate_episodes(&common::doors(40), Agent::Policy(&random), &config).unwrap()),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("success.svg");
    plot_success_by_method(&records, "Success by method", &out).unwrap();
    let svg = std::fs::read_to_string(&out).unwrap();
    let texts = texts(&svg);
    for label in ["expert", "random-admissible", "doors test", "Success by method"] {
        assert!(texts.iter().any(|t| t == label), "label `{label}` missing from {texts:?}");
    }
    assert!(svg.matches("<rect").count() >= 3, "bars missing");
    assert!(plot_success_by_method(&[], "x", &out).is_err());

    // PNG: text is drawn with the embedded font, so a different title changes the pixels.
    let first = dir.path().join("a.png");
    let second = dir.path().join("b.png");
    plot_success_by_method(&records, "Success by method", &first).unwrap();
    plot_success_by_method(&records, "Another title", &second).unwrap();
    assert_eq!(png_size(&first), (360 + 200, 520));
    assert_ne!(std::fs::read(&first).unwrap(), std::fs::read(&second).unwrap());
    // Only the two images: the temporary files were renamed into place.
    let pngs = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "png"));
    assert_eq!(pngs.count(), 2);
}
