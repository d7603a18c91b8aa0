//! Result records: round trips, and clear errors for truncated, corrupted or edited files.

mod common;

use act_core::{RandomAdmissiblePolicy, Split};
use act_eval::*;
use common::doors;

fn record(policy: Option<&RandomAdmissiblePolicy>) -> EvalRecord {
    let config = EpisodeEvalConfig::new(Split::Test).with_seed(5).with_progress(false).with_transcripts(true);
    let agent = policy.map_or(Agent::Expert, |p| Agent::Policy(p));
    EvalRecord::episodes(evaluate_episodes(&doors(60), agent, &config).unwrap())
}

fn load_err(path: &std::path::Path) -> String {
    EvalRecord::load(path).unwrap_err().to_string()
}

#[test]
fn records_round_trip_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs/random.json");
    let original = record(Some(&RandomAdmissiblePolicy::new()));
    original.save(&path).unwrap();
    let loaded = EvalRecord::load(&path).unwrap();
    assert_eq!(loaded, original);
    assert_eq!(loaded.benchmark, "doors test");
    // Only the record itself is left behind: the write went through a temporary file.
    assert_eq!(std::fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
}

#[test]
fn truncated_files_fail_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.json");
    record(None).save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    for cut in [bytes.len() / 3, bytes.len() - 2] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let err = load_err(&path);
        assert!(err.starts_with(&path.display().to_string()), "{err}");
        assert!(err.contains("truncated"), "{err}");
    }
    std::fs::write(&path, "").unwrap();
    assert!(load_err(&path).contains("the file is empty"));
    assert!(load_err(&dir.path().join("absent.json")).contains("absent.json"));
}

#[test]
fn corrupted_files_fail_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.json");
    record(None).save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();

    std::fs::write(&path, text.replacen("\"won\": true", "\"won\": tru#", 1)).unwrap();
    assert!(load_err(&path).contains("not valid JSON"), "{}", load_err(&path));

    std::fs::write(&path, text.replacen("\"won\": true", "\"won\": \"yes\"", 1)).unwrap();
    let err = load_err(&path);
    assert!(err.contains("evaluation.episodes.results[0].won"), "{err}");

    std::fs::write(&path, text.replacen("act-eval/1", "act-eval/0", 1)).unwrap();
    assert!(load_err(&path).contains("format `act-eval/0` is not `act-eval/1`"));

    std::fs::write(&path, "{\"hello\": 1}").unwrap();
    assert!(load_err(&path).contains("no `format` field"));
}

#[test]
fn episodes_are_never_silently_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dropped.json");
    let original = record(Some(&RandomAdmissiblePolicy::new()));

    // One episode removed, count kept.
    let mut json = serde_json::to_value(&original).unwrap();
    let results = json["evaluation"]["episodes"]["results"].as_array_mut().unwrap();
    results.remove(17);
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let err = load_err(&path);
    assert!(err.contains("records 60 episodes but holds 59"), "{err}");

    // Removed and the count lowered to match: the episode numbering and the summary give it away.
    json["evaluation"]["episodes"]["episodes"] = 59.into();
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let err = load_err(&path);
    assert!(err.contains("episode 17 is missing"), "{err}");

    // The last one removed, count lowered: only the summary can tell.
    let mut json = serde_json::to_value(&original).unwrap();
    json["evaluation"]["episodes"]["results"].as_array_mut().unwrap().pop();
    json["evaluation"]["episodes"]["episodes"] = 59.into();
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let err = load_err(&path);
    assert!(err.contains("summary does not match"), "{err}");

    // An outcome flipped.
    let mut json = serde_json::to_value(&original).unwrap();
    let won = json["evaluation"]["episodes"]["results"][3]["won"].as_bool().unwrap();
    json["evaluation"]["episodes"]["results"][3]["won"] = (!won).into();
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    assert!(load_err(&path).contains("summary does not match"));
}

#[test]
fn markdown_and_the_comparison_table() {
    let expert = record(None);
    let random = record(Some(&RandomAdmissiblePolicy::new()));
    let md = random.to_markdown();
    assert!(md.starts_with("### random-admissible on doors test"), "{md}");
    assert!(md.contains("| success rate |"));
    assert!(md.contains("| two-doors | 30 |"), "{md}");
    assert!(md.contains("60 episodes on split `test` of `doors`, step budget 3, seed 5"), "{md}");

    let mut short = random.clone();
    short.benchmark = "doors short".into();
    let table = render_table(&[expert.clone(), random.clone(), short]).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "| method | doors test | doors short |");
    assert_eq!(lines[2], "| expert | 100.0 ± 0.0 | – |");
    let s = &random.evaluation.headline().1;
    let cell = format!("{:.1} ± {:.1}", s.value * 100.0, s.ci.half_width() * 100.0);
    assert_eq!(lines[3], format!("| random-admissible | {cell} | {cell} |"));
    assert!(render_table(&[expert.clone(), expert]).unwrap_err().to_string().contains("two records"));
}

#[test]
fn the_score_table_keeps_the_environments_units() {
    let expert = record(None);
    let random = record(Some(&RandomAdmissiblePolicy::new()));
    let table = render_score_table(&[expert.clone(), random.clone()]).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "| method | doors test |");
    let Evaluation::Episodes(e) = &random.evaluation else { panic!("an episode record") };
    let s = &e.summary.score;
    assert_eq!(lines[3], format!("| random-admissible | {:.2} ± {:.2} |", s.value, s.ci.half_width()));
    let Evaluation::Episodes(e) = &expert.evaluation else { panic!("an episode record") };
    assert_eq!(lines[2], format!("| expert | {:.2} ± 0.00 |", e.summary.score.value));
}
