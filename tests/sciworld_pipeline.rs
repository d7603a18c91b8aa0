//! The ACT pipeline at toy size on the real ScienceWorld jar, as the `sciworld` example composes it: gold-path
//! training data taken round-robin over two tasks, and every stage's output.
//!
//! Without the jar or Java it prints "skipped: ..." and passes, unless `ACT_REQUIRE_EXTERNAL=1` (as
//! `tests/run.sh` sets it), where it fails.

use act_core::{Split, Trajectory, read_jsonl};
use act_examples::config::{ExperimentConfig, GrpoStageConfig, ModelSource, SftStageConfig, TrainingConfig};
use act_examples::experiment::{Benchmark, run_experiment};
use act_sciworld::{JarLocation, SciWorldConfig};

fn jar_available(test: &str) -> bool {
    let java = std::process::Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    let reason = match JarLocation::find(None) {
        Ok(_) if java => return true,
        Ok(_) => "java is not runnable".to_string(),
        Err(e) => e.to_string(),
    };
    if std::env::var("ACT_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1") {
        panic!("{test}: ScienceWorld is required (ACT_REQUIRE_EXTERNAL=1) but unavailable: {reason}");
    }
    eprintln!("skipped: {test}: ScienceWorld unavailable ({reason}); pip install scienceworld==1.2.3");
    false
}

#[test]
fn the_pipeline_runs_on_scienceworld() {
    if !jar_available("the_pipeline_runs_on_scienceworld") {
        return;
    }
    let env = SciWorldConfig::default()
        .with_tasks(["find-plant", "find-animal"])
        .with_simplifications("easy")
        .with_step_limit(30);
    let bench = Benchmark::sciworld(env);
    let sft = SftStageConfig { steps: 2, batch_size: 2, lr: 3e-3, ..SftStageConfig::default() };
    let grpo = GrpoStageConfig {
        steps: 1,
        prompts_per_step: 2,
        group_size: 2,
        lr: 1e-3,
        max_completion_tokens: 4,
        ..GrpoStageConfig::default()
    };
    let config = ExperimentConfig {
        train_games: 2,
        k: 2,
        eval_episodes: Some(2),
        eval_step_budget: Some(3),
        critic_games: 1,
        eval_batch_size: 2,
        training: TrainingConfig {
            model: ModelSource::Preset {
                name: "micro".into(),
                vocab_size: 400,
                qk_norm_gain: None,
                pre_tokenization: Default::default(),
                sliding_window: None,
                max_window_layers: None,
            },
            base: sft.clone(),
            base_episodes: 2,
            act: grpo.clone(),
            il: sft,
            rl: grpo,
            max_length: 256,
            ..TrainingConfig::default()
        },
        ..ExperimentConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let result = run_experiment(&bench, &config, &run).unwrap();

    // Round-robin: the two training games are one of each task, both won by the gold path.
    let train: Vec<Trajectory> = read_jsonl(run.join("expert_train.jsonl")).unwrap();
    let mut types: Vec<&str> = train.iter().map(|t| t.task_type.as_str()).collect();
    types.sort();
    assert_eq!(types, ["find-animal", "find-plant"]);
    assert!(train.iter().all(|t| t.outcome.won), "{:?}", train.iter().map(|t| &t.outcome).collect::<Vec<_>>());

    // The states carry the valid actions (the random exploration and the rewards read them).
    assert!(train[0].steps[0].admissible_actions.len() > 20);
    let pairs: Vec<act_core::ActionPair> = read_jsonl(run.join("pairs.jsonl")).unwrap();
    assert_eq!(pairs.len(), train.iter().map(|t| t.steps.len()).sum::<usize>());

    // Every method is evaluated on-line on the test variations and by next-action accuracy there.
    for method in ["prompt", "IL", "ACT -> IL", "ACT -> IL -> RL"] {
        let report = result.episodes_of(method, Split::Test).unwrap_or_else(|| panic!("{method}: no episodes"));
        assert_eq!(report.episodes, 2);
        assert!(report.results.iter().all(|r| r.steps <= 3 && (-100.0..=100.0).contains(&r.score)));
        assert!(result.next_action_of(method, Split::Test).is_some(), "{method}: no next-action record");
    }
    let expert = result.episodes_of("expert", Split::Test).unwrap();
    assert!(expert.results.iter().all(|r| r.score > 0.0), "the gold path scores within 3 steps");
    assert!(result.markdown.contains("Mean final score"));
}
