//! The whole ACT pipeline (tokenizer, π₀, pairs, ACT, IL, RL, evaluation of every method) at toy size on the
//! native ALFWorld: every stage's outputs exist and agree, a rerun resumes instead of retraining, and the same
//! seed gives the same results.

use std::path::Path;

use act_alfworld::{AlfworldConfig, AlfworldFactory};
use act_core::{ActionPair, Split, Trajectory, actions_match, read_jsonl};
use act_eval::{EvalRecord, Evaluation};
use act_examples::config::{
    ExperimentConfig, GrpoStageConfig, IcrlConfig, ModelSource, OnlineAlgorithm, OnlineRlConfig, PromptStyle,
    ReflectionConfig, SftStageConfig, TrainingConfig, WorldModelConfig,
};
use act_examples::experiment::{Benchmark, METHODS, run_experiment, slug};
use act_examples::seeds::{COMPARISONS, summarize};
use act_examples::stages::{StageRecord, finished};

fn bench() -> Benchmark<AlfworldFactory> {
    Benchmark {
        name: "alfworld".into(),
        environment: "ALFWorld".into(),
        factory: AlfworldFactory::new(AlfworldConfig::default().with_train_size(8)),
        train_split: Split::Train,
        eval_splits: vec![Split::EvalInDistribution, Split::EvalOutOfDistribution],
        show_admissible: true,
        numbered_objects: true,
        memory_line: false,
        expert_search: act_alfworld::SearchOrder::LastListedFirst,
    }
}

fn toy_config() -> ExperimentConfig {
    let sft = SftStageConfig { steps: 4, batch_size: 4, lr: 3e-3, ..SftStageConfig::default() };
    let grpo = GrpoStageConfig {
        steps: 2,
        prompts_per_step: 2,
        group_size: 2,
        lr: 1e-3,
        max_completion_tokens: 6,
        ..GrpoStageConfig::default()
    };
    ExperimentConfig {
        train_games: 4,
        k: 2,
        seed: 5,
        eval_episodes: Some(3),
        eval_step_budget: Some(6),
        critic_games: 2,
        eval_batch_size: 4,
        controls: true,
        training: TrainingConfig {
            model: ModelSource::Preset {
                name: "tiny".into(),
                vocab_size: 400,
                qk_norm_gain: None,
                pre_tokenization: Default::default(),
                sliding_window: None,
                max_window_layers: None,
            },
            base: sft.clone(),
            base_episodes: 4,
            iwm: Some(WorldModelConfig {
                games: 2,
                alternatives_per_state: 1,
                stage: SftStageConfig { steps: 2, ..sft.clone() },
                ..WorldModelConfig::default()
            }),
            sr: Some(ReflectionConfig {
                games: 2,
                // A π₀ trained for 4 steps rarely proposes a usable action: a random admissible one stands in.
                fallback: true,
                max_rationale_tokens: 8,
                stage: SftStageConfig { steps: 2, ..sft.clone() },
                ..ReflectionConfig::default()
            }),
            act: grpo.clone(),
            il: sft,
            rl: grpo,
            max_length: 256,
            checkpoint_every: 2,
            online: Some(OnlineRlConfig {
                algorithms: vec![
                    OnlineAlgorithm::Gigpo,
                    OnlineAlgorithm::EpisodeGrpo,
                    OnlineAlgorithm::ActGuide,
                    OnlineAlgorithm::Icrl,
                ],
                iterations: 2,
                tasks_per_iteration: 2,
                group_size: 2,
                step_budget: 4,
                max_completion_tokens: 6,
                icrl: IcrlConfig { critic_max_tokens: 8, ..IcrlConfig::default() },
                ..OnlineRlConfig::default()
            }),
            ..TrainingConfig::default()
        },
        ..ExperimentConfig::default()
    }
}

fn record(dir: &Path, stage: &str) -> StageRecord {
    finished(&dir.join("models").join(stage)).unwrap_or_else(|| panic!("stage {stage} did not finish"))
}

/// A stage's learning curves: held-out measurements at `steps` (step 0 and four evenly spaced steps, fewer when the
/// stage is shorter), with critic accuracy once π₀'s held-out pairs exist, and both plots.
fn check_learning_curves(stage_dir: &Path, steps: &[u64], with_critic: bool) {
    let rows = act_eval::read_metrics(stage_dir.join("heldout.jsonl")).unwrap();
    let measured: Vec<u64> = rows.iter().map(|r| r.step).collect();
    assert_eq!(measured, steps, "{}", stage_dir.display());
    for row in &rows {
        let accuracy = row.values["next_action_accuracy"];
        assert!((0.0..=1.0).contains(&accuracy), "{accuracy}");
        assert_eq!(row.values.contains_key("critic_accuracy"), with_critic, "{}", stage_dir.display());
    }
    for plot in ["curves.svg", "heldout.svg"] {
        let svg = std::fs::read_to_string(stage_dir.join(plot)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<polyline"), "{}: {plot}", stage_dir.display());
    }
}

#[test]
fn the_pipeline_runs_resumes_and_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let config = toy_config();
    let result = run_experiment(&bench(), &config, &run).unwrap();

    // Stage 1: the expert's trajectories.
    let train: Vec<Trajectory> = read_jsonl(run.join("expert_train.jsonl")).unwrap();
    assert_eq!(train.len(), 4);
    assert!(train.iter().all(|t| t.outcome.won));

    // Stage 0: a tokenizer and π₀ trained on random-policy episodes.
    assert!(run.join("tokenizer.json").is_file());
    assert!(run.join("random_train.jsonl").is_file());
    let base = record(&run, "base");
    assert_eq!((base.steps, base.started_from.clone()), (4, None));
    assert!(base.final_value.is_finite());

    // Stage 2: pairs from π₀, one per expert state; alternatives differ from the expert's action.
    let pairs: Vec<ActionPair> = read_jsonl(run.join("pairs.jsonl")).unwrap();
    let states: usize = train.iter().map(|t| t.steps.len()).sum();
    assert_eq!(pairs.len(), states);
    assert!(pairs.iter().all(|p| !actions_match(p.alternative.as_str(), p.expert_action.as_str())));
    let resampled: Vec<ActionPair> = read_jsonl(run.join("pairs_resampled.jsonl")).unwrap();
    assert_eq!(resampled.len() % states, 0);
    // Stage 2c: the world model's branches, the expert's action at every state of the first two games and at
    // most one alternative of π₀'s per state.
    let branches: Vec<act_rollout::Branch> = read_jsonl(run.join("world_model.jsonl")).unwrap();
    let branched: usize = train[..2].iter().map(|t| t.steps.len()).sum();
    assert!((branched..=2 * branched).contains(&branches.len()), "{} branches, {branched} states", branches.len());
    assert!(branches.iter().all(|b| train[..2].iter().any(|t| t.task_id == b.task_id)));
    // Stage 2d: self-reflection, one admissible alternative per state of the first two games, each with both
    // outcomes and π₀'s rationale.
    let reflections: Vec<act_examples::early::Reflection> = read_jsonl(run.join("reflections.jsonl")).unwrap();
    assert!((1..=branched).contains(&reflections.len()), "{} reflections", reflections.len());
    for r in &reflections {
        let game = train[..2].iter().find(|t| t.task_id == r.task_id).unwrap();
        assert_eq!(r.expert, game.steps[r.step_index].action);
        assert_ne!(r.alternative, r.expert);
        assert!(game.steps[r.step_index].admissible_actions.contains(&r.alternative), "{r:?}");
        assert!(!r.alternative_outcome.is_empty() && !r.outcome.is_empty());
    }

    // Stages 3-5 and the controls: each started from the model the method says.
    let models = run.join("models");
    let from = |stage: &str| Some(models.join(stage).join("model"));
    for (stage, parent, steps) in [
        ("act", "base", 2),
        ("il", "base", 4),
        ("act_il", "act", 4),
        ("il_rl", "il", 2),
        ("act_il_rl", "act_il", 2),
        ("iwm", "base", 2),
        ("iwm_il", "iwm", 4),
        ("sr", "base", 2),
        ("sr_il", "sr", 4),
        ("il_matched", "base", 6),
        ("act_resampled", "base", 2),
        ("act_resampled_il", "act_resampled", 4),
        ("il_gigpo", "il", 2),
        ("act_il_gigpo", "act_il", 2),
        ("il_grpo_online", "il", 2),
        ("act_il_grpo_online", "act_il", 2),
        ("il_icrl", "il", 2),
        ("act_il_icrl", "act_il", 2),
    ] {
        let r = record(&run, stage);
        assert_eq!((r.started_from, r.steps), (from(parent), steps), "{stage}");
        let metrics = std::fs::read_to_string(models.join(stage).join("trainer/metrics.jsonl")).unwrap();
        assert_eq!(metrics.lines().count(), steps, "{stage}: one metrics line per step");
        assert!(!models.join(stage).join("trainer/checkpoint-000002").exists(), "{stage}: checkpoints are cleaned");
        let measured: &[u64] = match steps {
            2 => &[0, 1, 2],
            4 => &[0, 1, 2, 3, 4],
            _ => &[0, 2, 3, 5, 6],
        };
        check_learning_curves(&models.join(stage), measured, true);
    }
    check_learning_curves(&models.join("base"), &[0, 1, 2, 3, 4], false);
    // ICRL's iterations critique the failed episodes (a 4-step budget fails every one) and retry them.
    let icrl = std::fs::read_to_string(models.join("il_icrl/trainer/metrics.jsonl")).unwrap();
    for line in icrl.lines() {
        let m: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(m["critiques"], 4, "{line}");
        assert_eq!(m["episodes"], 4, "{line}");
        assert!(m["env_steps"].as_u64().unwrap() > 16, "the retries' steps count: {line}");
    }
    let critiques = std::fs::read_to_string(models.join("il_icrl/critiques.jsonl")).unwrap();
    assert_eq!(critiques.lines().count(), 8, "four critiques in each of two iterations");

    // Stage 6: every method on both splits, three episodes each, and critic accuracy per method.
    for method in METHODS {
        for split in [Split::EvalInDistribution, Split::EvalOutOfDistribution] {
            let report = result.episodes_of(method.name, split).unwrap_or_else(|| panic!("{}", method.name));
            assert_eq!(report.results.len(), 3);
            let file = run.join("eval").join(format!("{}_{split}.json", slug(method.name)));
            assert!(EvalRecord::load(&file).is_ok());
        }
        assert!(result.markdown.contains(method.name));
    }
    // Next-action accuracy on held-out expert states of both splits, every method scored on every state.
    let held_out: Vec<Trajectory> = read_jsonl(run.join("expert_held_out.jsonl")).unwrap();
    let ood: Vec<Trajectory> = read_jsonl(run.join("expert_held_out_eval_out_of_distribution.jsonl")).unwrap();
    assert_eq!((held_out.len(), ood.len()), (2, 2));
    for (split, trajectories) in [(Split::EvalInDistribution, &held_out), (Split::EvalOutOfDistribution, &ood)] {
        let states: usize = trajectories.iter().map(|t| t.steps.len()).sum();
        for method in METHODS {
            let report = result.next_action_of(method.name, split).unwrap_or_else(|| panic!("{}", method.name));
            assert_eq!(report.items, states, "{} on {split}", method.name);
            let file = run.join("eval").join(format!("next_action_{}_{split}.json", slug(method.name)));
            assert!(EvalRecord::load(&file).is_ok());
        }
    }
    assert_eq!(result.next_action.len(), 2 * METHODS.len());
    assert_eq!(result.critic.len(), METHODS.len());
    for critic in &result.critic {
        let Evaluation::Critic(report) = &critic.evaluation else { panic!("not a critic record") };
        assert_eq!(report.items, read_jsonl::<ActionPair>(run.join("critic_pairs.jsonl")).unwrap().len());
    }
    let expert = result.episodes_of("expert", Split::EvalInDistribution).unwrap();
    assert!(expert.results.iter().all(|r| r.steps <= 6), "the step budget applies");
    assert!(run.join("success.svg").is_file());
    // The on-line stages' success against environment steps, one line each.
    let online = std::fs::read_to_string(run.join("online_success.svg")).unwrap();
    assert!(["IL -&gt; GiGPO", "ACT -&gt; IL -&gt; GRPO (on-line)"].iter().all(|m| online.contains(m)), "{online}");

    // A rerun finds every stage done: nothing retrains and the results are the same.
    let before = std::fs::read_to_string(models.join("act_il/done.json")).unwrap();
    let again = run_experiment(&bench(), &config, &run).unwrap();
    assert_eq!(std::fs::read_to_string(models.join("act_il/done.json")).unwrap(), before);
    assert_eq!(again.markdown, result.markdown);

    // Asked for transcripts, the run evaluates the trained methods again, now keeping every step, with the same
    // outcomes; its saved config still matches (transcripts change no result).
    let transcribed =
        run_experiment(&bench(), &ExperimentConfig { transcripts: true, ..config.clone() }, &run).unwrap();
    for split in [Split::EvalInDistribution, Split::EvalOutOfDistribution] {
        let il = transcribed.episodes_of("IL", split).unwrap();
        assert!(il.config.record_transcripts);
        assert!(il.results.iter().all(|r| r.transcript.len() == r.steps && r.steps > 0), "{split}");
        assert_eq!(il.success_values(), result.episodes_of("IL", split).unwrap().success_values());
    }
    assert_eq!(transcribed.markdown, result.markdown);

    // A stage whose output is lost is redone, from the same seed, to the same model.
    let weights = |dir: &Path| std::fs::read(dir.join("models/il_rl/model/model.safetensors")).unwrap();
    let original = weights(&run);
    std::fs::remove_dir_all(models.join("il_rl")).unwrap();
    run_experiment(&bench(), &config, &run).unwrap();
    assert_eq!(weights(&run), original);

    // A Hugging Face checkpoint as π₀ (here the base stage's model with the run's tokenizer): no base stage, and
    // from the same π₀ and seed the same pairs and the same trained models.
    let checkpoint = dir.path().join("checkpoint");
    std::fs::create_dir_all(&checkpoint).unwrap();
    for file in ["config.json", "model.safetensors"] {
        std::fs::copy(models.join("base/model").join(file), checkpoint.join(file)).unwrap();
    }
    std::fs::copy(run.join("tokenizer.json"), checkpoint.join("tokenizer.json")).unwrap();
    let mut from_checkpoint = ExperimentConfig { controls: false, ..config };
    from_checkpoint.training.model = ModelSource::Checkpoint { dir: checkpoint.clone() };
    let twin = dir.path().join("twin");
    let twin_result = run_experiment(&bench(), &from_checkpoint, &twin).unwrap();
    assert!(!twin.join("models/base").exists() && !twin.join("tokenizer.json").exists());
    assert_eq!(record(&twin, "act").started_from, Some(checkpoint));
    assert_eq!(std::fs::read(twin.join("pairs.jsonl")).unwrap(), std::fs::read(run.join("pairs.jsonl")).unwrap());
    let weights = |run: &Path, stage: &str| {
        std::fs::read(run.join("models").join(stage).join("model/model.safetensors")).unwrap()
    };
    assert_eq!(weights(&twin, "act_il"), weights(&run, "act_il"));
    // On-line RL from the same model with the same seed plays and trains the same episodes.
    for stage in ["il_gigpo", "act_il_grpo_online", "il_icrl"] {
        assert_eq!(weights(&twin, stage), weights(&run, stage), "{stage}");
        let metrics =
            |run: &Path| std::fs::read_to_string(run.join("models").join(stage).join("trainer/metrics.jsonl")).unwrap();
        let drop_times = |text: String| -> Vec<serde_json::Value> {
            text.lines()
                .map(|l| {
                    let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                    for key in ["generation_seconds", "environment_seconds", "update_seconds", "env_steps_per_second"] {
                        v.as_object_mut().unwrap().remove(key);
                    }
                    v
                })
                .collect()
        };
        assert_eq!(drop_times(metrics(&twin)), drop_times(metrics(&run)), "{stage}");
    }
    let success = |r: &act_examples::experiment::ExperimentResult| {
        r.episodes_of("ACT -> IL", Split::EvalOutOfDistribution).unwrap().success_values()
    };
    assert_eq!(success(&twin_result), success(&result));

    // The summary over seeds reports the paired comparisons whose methods every seed evaluated: with the controls
    // all of them, without (the twin) those that need none.
    let splits = [Split::EvalInDistribution, Split::EvalOutOfDistribution];
    let heading = |(a, b): &(&str, &str)| format!("## {a} against {b}: success");
    let with_controls = summarize(&[result, again], &[0, 1], &splits, &COMPARISONS).unwrap();
    assert!(COMPARISONS.iter().all(|c| with_controls.contains(&heading(c))), "{with_controls}");
    assert!(with_controls.contains("- seed 1: ") && with_controls.contains("pooled over seeds"));
    let twin_only = summarize(&[twin_result], &[0], &splits, &COMPARISONS).unwrap();
    let reported: Vec<bool> = COMPARISONS.iter().map(|c| twin_only.contains(&heading(c))).collect();
    let with_controls_only = [6, 7, 8];
    let expected: Vec<bool> = (0..COMPARISONS.len()).map(|i| !with_controls_only.contains(&i)).collect();
    assert_eq!(reported, expected, "{twin_only}");

    // Another config in the same directory is refused rather than mixed in.
    let other = ExperimentConfig { seed: 6, ..toy_config() };
    let err = run_experiment(&bench(), &other, &run).unwrap_err().to_string();
    assert!(err.contains("another config"), "{err}");
}

#[test]
fn renamed_copies_need_numbered_objects() {
    let dir = tempfile::tempdir().unwrap();
    let unnumbered = Benchmark { numbered_objects: false, ..bench() };
    let config = ExperimentConfig { renamed_copies: 2, ..toy_config() };
    let err = run_experiment(&unnumbered, &config, &dir.path().join("run")).unwrap_err().to_string();
    assert!(err.contains("renamed_copies"), "{err}");
    assert!(!dir.path().join("run").exists(), "refused before anything is written");
}

#[test]
fn a_memory_line_must_match_the_benchmark() {
    let dir = tempfile::tempdir().unwrap();
    let config = ExperimentConfig { memory_line: true, ..toy_config() };
    let err = run_experiment(&bench(), &config, &dir.path().join("run")).unwrap_err().to_string();
    assert!(err.contains("memory_line"), "{err}");
    assert!(!dir.path().join("run").exists(), "refused before anything is written");
}

#[test]
fn dagger_rounds_train_each_il_stage_in_parts_on_its_own_relabelled_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = toy_config();
    config.controls = false;
    config.training.online = None;
    config.il_dagger = Some(act_examples::config::DaggerConfig { games: 2, rounds: 2, ..Default::default() });
    run_experiment(&bench(), &config, dir.path()).unwrap();
    for stage in ["il", "act_il"] {
        let first = record(dir.path(), &format!("{stage}_round1"));
        let last = record(dir.path(), stage);
        assert_eq!(first.steps + last.steps, config.training.il.steps);
        assert!(last.samples > first.samples, "{stage}: the second part adds its DAgger episodes");
        assert_eq!(last.started_from, Some(dir.path().join("models").join(format!("{stage}_round1")).join("model")));
        // The second round plays the next games, with the first part's model.
        let episodes: Vec<act_examples::dart::Relabelled> =
            read_jsonl(dir.path().join(format!("dagger_{stage}_round1.jsonl"))).unwrap();
        let ids: Vec<&str> = episodes.iter().map(|r| r.trajectory.task_id.as_str()).collect();
        assert_eq!(ids, ["train/2", "train/3"]);
    }
    let first: Vec<act_examples::dart::Relabelled> = read_jsonl(dir.path().join("dagger_train.jsonl")).unwrap();
    assert_eq!(first.iter().map(|r| r.trajectory.task_id.as_str()).collect::<Vec<_>>(), ["train/0", "train/1"]);
}

#[test]
fn an_expert_base_stage_trains_on_tasks_disjoint_from_the_training_games() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = toy_config();
    config.controls = false;
    config.training.online = None;
    config.training.base_data = act_examples::config::BaseData::Expert;
    assert_eq!(config.train_tasks(), 8);
    run_experiment(&bench(), &config, dir.path()).unwrap();
    let base: Vec<Trajectory> = read_jsonl(dir.path().join("expert_base.jsonl")).unwrap();
    let train: Vec<Trajectory> = read_jsonl(dir.path().join("expert_train.jsonl")).unwrap();
    let ids = |t: &[Trajectory]| t.iter().map(|t| t.task_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&base), ["train/4", "train/5", "train/6", "train/7"]);
    assert_eq!(ids(&train), ["train/0", "train/1", "train/2", "train/3"]);
    assert!(base.iter().all(|t| t.outcome.won));
    assert!(!dir.path().join("random_train.jsonl").exists());
    assert_eq!(record(dir.path(), "base").steps, config.training.base.steps);

    // Too few tasks after the training games: a clear error, not a silently smaller base stage.
    config.training.base_episodes = 5;
    let short = dir.path().join("short");
    let err = run_experiment(&bench(), &config, &short).unwrap_err().to_string();
    assert!(err.contains("needs 5 training tasks after the first 4"), "{err}");
    assert!(!short.join("expert_base.jsonl").exists(), "a short base set is not cached");
}

/// The on-line stage's metrics lines without their wall times (which differ between any two runs).
fn online_metrics_without_times(stage_dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(stage_dir.join("trainer/metrics.jsonl")).unwrap();
    text.lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            for key in ["generation_seconds", "environment_seconds", "update_seconds", "env_steps_per_second"] {
                value.as_object_mut().unwrap().remove(key);
            }
            value
        })
        .collect()
}

/// A 400-token BPE tokenizer trained on the expert's episodes of the first `games` training games, and those.
fn expert_tokenizer(factory: &AlfworldFactory, games: usize) -> (act_model::ChatTokenizer, Vec<Trajectory>) {
    let expert = act_examples::pipeline::expert_trajectories(factory, Split::Train, games, 1).unwrap();
    let corpus: Vec<String> = expert
        .iter()
        .flat_map(|t| t.steps.iter().flat_map(|s| [s.observation.as_str().to_owned(), s.action.as_str().to_owned()]))
        .collect();
    (act_model::ChatTokenizer::train_bpe(corpus, 400).unwrap(), expert)
}

#[test]
fn an_online_stage_interrupted_mid_run_resumes_to_the_same_weights_and_curves() {
    use act_core::{EnvError, EnvironmentFactory, TaskRef};
    use act_examples::stages::{ModelContext, StageRun, StartFrom};
    use act_model::{BackendKind, ChatTemplate, Qwen3Config};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(8));
    let (tokenizer, _) = expert_tokenizer(&factory, 4);
    let start = StartFrom::fresh(Qwen3Config::preset("tiny", tokenizer.vocab_size()).unwrap());
    let context = ModelContext { tokenizer, template: ChatTemplate::default(), backend: BackendKind::default() };
    // A checkpoint after every iteration, so that an interruption leaves one behind.
    let training = TrainingConfig { checkpoint_every: 1, ..TrainingConfig::default() };
    let online = OnlineRlConfig {
        iterations: 3,
        tasks_per_iteration: 2,
        group_size: 2,
        step_budget: 4,
        temperature: 1.0,
        max_completion_tokens: 6,
        ..OnlineRlConfig::default()
    };
    let tasks: Vec<TaskRef> = (0..4).map(|i| TaskRef::index(Split::Train, i)).collect();
    let dir = tempfile::tempdir().unwrap();
    let run = |stage_dir: &Path, factory: &(dyn Fn() -> Result<act_alfworld::AlfworldEnv, EnvError> + Sync)| {
        let stage = StageRun {
            name: "online",
            dir: stage_dir.to_owned(),
            context: &context,
            training: &training,
            start: start.clone(),
            seed: 9,
            probe: None,
        };
        stage.online(&online, OnlineAlgorithm::Gigpo, &factory, act_examples::pipeline::alfworld_prompt(), &tasks)
    };

    // Uninterrupted, counting the environments the rollouts make.
    let made = AtomicUsize::new(0);
    let straight = dir.path().join("straight");
    run(&straight, &|| {
        made.fetch_add(1, Ordering::Relaxed);
        factory.make()
    })
    .unwrap();
    let per_iteration = made.load(Ordering::Relaxed) / 3;
    assert_eq!(made.load(Ordering::Relaxed), 3 * per_iteration, "every iteration makes as many environments");

    // Interrupted in the third iteration: its rollout cannot make an environment.
    let interrupted = dir.path().join("interrupted");
    let made = AtomicUsize::new(0);
    let err = run(&interrupted, &|| {
        if made.fetch_add(1, Ordering::Relaxed) >= 2 * per_iteration {
            return Err(EnvError::Config("interrupted".into()));
        }
        factory.make()
    })
    .unwrap_err();
    assert!(err.to_string().contains("interrupted"), "{err}");
    assert!(interrupted.join("trainer/checkpoint-000002").is_dir());
    assert!(!interrupted.join("model").exists());
    assert_eq!(online_metrics_without_times(&interrupted).len(), 2);

    // Resumed from iteration 2: the same weights and the same per-iteration metrics as the straight run.
    run(&interrupted, &|| factory.make()).unwrap();
    let weights = |stage_dir: &Path| std::fs::read(stage_dir.join("model/model.safetensors")).unwrap();
    assert_eq!(weights(&interrupted), weights(&straight));
    let metrics = online_metrics_without_times(&straight);
    assert_eq!(metrics.len(), 3);
    assert_eq!(online_metrics_without_times(&interrupted), metrics);
    assert!(std::fs::read_to_string(straight.join("curves.svg")).unwrap().contains("<polyline"));
    // The success curve against environment steps counts the steps over the resume.
    let series = act_examples::online::success_by_env_steps(&[("GiGPO", interrupted.clone())]).unwrap();
    let steps: Vec<f64> = series[0].points.iter().map(|p| p.0).collect();
    let totals: Vec<f64> = metrics.iter().map(|m| m["env_steps_total"].as_f64().unwrap()).collect();
    assert_eq!(steps, totals);
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
}

#[test]
fn a_guided_turn_is_trained_under_the_prompt_the_policy_sees_without_the_hint() {
    use act_core::{Prompter, SamplingParams, TaskRef};
    use act_examples::prompts::{CONVERSATION_HISTORY, prompt_config};
    use act_model::{ChatTemplate, ModelPolicy, Qwen3, Qwen3Config};
    use act_rollout::{EpisodeSpec, PolicyActor, Rollout, RolloutConfig};

    let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(4));
    let (tokenizer, expert) = expert_tokenizer(&factory, 2);
    let template = ChatTemplate::default();
    let config = Qwen3Config::preset("tiny", tokenizer.vocab_size()).unwrap();
    let model = Qwen3::init(&config, 3, &burn::tensor::Device::flex()).unwrap();
    let policy = ModelPolicy::new("tiny", model, tokenizer.clone(), template.clone()).with_batch_size(2);
    let prompter = Prompter::new(prompt_config(PromptStyle::Conversation, "ALFWorld", false)).unwrap();
    let plan: Vec<act_core::Action> = expert[0].steps.iter().map(|s| s.action.clone()).take(3).collect();
    let specs = EpisodeSpec::groups(&[TaskRef::index(Split::Train, 0)], 2, 4);
    let sampling = SamplingParams::default().with_max_new_tokens(4).with_stop("</action>");
    let actor = PolicyActor::new(&policy, prompter.clone())
        .with_tokens(true)
        .with_sampling(sampling)
        .with_hints([(1, plan.clone())]);
    // Longer than the conversation's history window, so that the window moves.
    let budget = CONVERSATION_HISTORY + 8;
    let played = Rollout::new(&factory, &actor)
        .with_config(RolloutConfig::default().with_batch_size(2).with_step_budget(budget))
        .play(&specs)
        .unwrap();
    let hint = prompter.hint(&plan);
    for (episode, hinted) in played.iter().zip([false, true]) {
        assert_eq!(episode.turns.len(), budget, "a random tiny model does not win");
        for turn in &episode.turns {
            // What the online stage encodes as a guided turn's training prompt.
            let state = episode.trajectory.state_at(turn.step, usize::MAX).unwrap();
            let unguided = actor.query(&state).prompt;
            let sampled = if hinted { format!("{hint}{unguided}") } else { unguided.clone() };
            assert_eq!(
                tokenizer.encode_prompt(&template, &sampled).unwrap(),
                turn.completion.prompt_ids,
                "step {}",
                turn.step
            );
        }
    }
}

/// The LoRA stage tests' material: a context with a tokenizer trained on two expert ALFWorld games, and the SFT and
/// next-action samples of their states (compact prompts).
fn lora_stage_material() -> (act_examples::stages::ModelContext, Vec<act_core::SftSample>, Vec<act_core::GrpoSample>) {
    use act_examples::prompts::prompt_config;
    let factory = AlfworldFactory::new(AlfworldConfig::default().with_train_size(2));
    let (tokenizer, expert) = expert_tokenizer(&factory, 2);
    let context = act_examples::stages::ModelContext {
        tokenizer,
        template: act_model::ChatTemplate::default(),
        backend: act_model::BackendKind::default(),
    };
    let prompter = act_core::Prompter::new(prompt_config(PromptStyle::Compact, "ALFWorld", false)).unwrap();
    let states: Vec<_> = expert.iter().flat_map(|t| t.states(4)).collect();
    let sft = states.iter().map(|(s, a)| prompter.sft_sample(s, a, None)).collect();
    let rl = states.iter().map(|(s, a)| prompter.next_action_sample(s, a)).collect();
    (context, sft, rl)
}

/// A short GRPO stage with a KL term and `lora`, as the LoRA stage tests run it.
fn lora_grpo_stage(lora: act_model::lora::LoraConfig) -> GrpoStageConfig {
    GrpoStageConfig {
        steps: 2,
        prompts_per_step: 2,
        group_size: 2,
        max_completion_tokens: 6,
        kl_coef: 0.1,
        lora: Some(lora),
        ..GrpoStageConfig::default()
    }
}

/// A stage with `lora` trains adapters only: its saved model is the start model plus the adapters (PEFT's files
/// under `adapter/` give the same logits on top of the start model), and every weight it did not adapt is the
/// start model's, bit for bit; for SFT and for GRPO with a KL term alike.
#[test]
fn lora_stages_train_adapters_only_and_save_them_in_peft_layout() {
    use act_examples::stages::{StageRun, StartFrom, adapter_dir, load_model, model_dir};
    use act_model::lora::{LoraConfig, load_peft_adapter};
    use act_model::{PadSide, Qwen3, Qwen3Config, TokenBatch};
    use burn::prelude::*;

    let (context, sft, rl) = lora_stage_material();
    let training = TrainingConfig { checkpoint_every: 0, max_length: 512, ..TrainingConfig::default() };
    let dir = tempfile::tempdir().unwrap();
    let stage = |name: &'static str, start: StartFrom| StageRun {
        name,
        dir: dir.path().join(name),
        context: &context,
        training: &training,
        start,
        seed: 4,
        probe: None,
    };
    let shape = Qwen3Config::preset("tiny", context.tokenizer.vocab_size()).unwrap();
    let quick = SftStageConfig { steps: 3, batch_size: 2, lr: 1e-2, warmup_steps: 1, ..SftStageConfig::default() };
    stage("base", StartFrom::fresh(shape)).sft(&quick, sft.clone()).unwrap();
    let base_dir = model_dir(&dir.path().join("base"));
    let lora = LoraConfig::new(2, 4.0).with_target_modules(["q_proj", "down_proj"]);
    let sft_lora = SftStageConfig { lora: Some(lora.clone()), ..quick };
    stage("il", StartFrom::Dir(base_dir.clone())).sft(&sft_lora, sft).unwrap();
    let reward = act_rewards::NextActionConfig::default().build().unwrap();
    stage("rl", StartFrom::Dir(base_dir.clone())).grpo(&lora_grpo_stage(lora), rl, reward, "</action>").unwrap();

    let device = Device::flex();
    let weights = |model: &Qwen3| -> Vec<Vec<f32>> {
        let layer = &model.layers[0];
        [
            &layer.self_attn.q_proj.weight,
            &layer.self_attn.k_proj.weight,
            &layer.mlp.down_proj.weight,
            &layer.mlp.up_proj.weight,
        ]
        .into_iter()
        .map(|w| w.val().into_data().convert::<f32>().try_into_vec().unwrap())
        .chain([model.embed_tokens.weight.val().into_data().convert::<f32>().try_into_vec().unwrap()])
        .collect()
    };
    let logits = |model: &Qwen3| -> Vec<f32> {
        let batch = TokenBatch::from_sequences(&[vec![5, 6, 7, 8, 9]], 0, PadSide::Right).unwrap();
        model.forward(&batch).into_data().convert::<f32>().try_into_vec().unwrap()
    };
    let base = weights(&load_model(&base_dir, &device).unwrap());
    for name in ["il", "rl"] {
        let stage_dir = dir.path().join(name);
        let merged = load_model(&model_dir(&stage_dir), &device).unwrap();
        let w = weights(&merged);
        assert_ne!(w[0], base[0], "{name}: q_proj adapted");
        assert_ne!(w[2], base[2], "{name}: down_proj adapted");
        assert_eq!((&w[1], &w[3], &w[4]), (&base[1], &base[3], &base[4]), "{name}: the rest is the start model's");
        let adapters = adapter_dir(&stage_dir);
        assert!(adapters.join("adapter_config.json").exists() && adapters.join("adapter_model.safetensors").exists());
        let reloaded = load_peft_adapter(load_model(&base_dir, &device).unwrap(), &adapters).unwrap();
        let (a, b) = (logits(&reloaded), logits(&merged));
        let diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
        assert!(diff < 1e-4, "{name}: start model + PEFT adapter vs merged model: {diff}");
    }
}

/// `training.float_dtype: bf16`: SFT and GRPO stages with LoRA on a bf16 base (f32 adapters) save the start model in
/// bf16 plus the merged adapters; stages without LoRA fine-tune every weight on a bf16 working copy and save the f32
/// master weights.
#[test]
fn bf16_lora_stages_keep_the_base_in_bf16_and_train_the_adapters() {
    use act_examples::stages::{StageRun, StartFrom, load_model, load_model_as, model_dir};
    use act_grpo::ComputeDtype;
    use act_model::lora::LoraConfig;
    use act_model::{Qwen3, Qwen3Config};
    use burn::prelude::*;

    let (context, sft, rl) = lora_stage_material();
    let f32_training = TrainingConfig { checkpoint_every: 0, max_length: 512, ..TrainingConfig::default() };
    let bf16_training = TrainingConfig { float_dtype: ComputeDtype::Bf16, ..f32_training.clone() };
    let dir = tempfile::tempdir().unwrap();
    // One closure per precision: a closure cannot take a reference of any lifetime, and both configs outlive it.
    let stage_with = |training| {
        let (context, dir) = (&context, dir.path());
        move |name: &'static str, start: StartFrom| StageRun {
            name,
            dir: dir.join(name),
            context,
            training,
            start,
            seed: 4,
            probe: None,
        }
    };
    let (f32_stage, bf16_stage) = (stage_with(&f32_training), stage_with(&bf16_training));
    let shape = Qwen3Config::preset("tiny", context.tokenizer.vocab_size()).unwrap();
    let quick = SftStageConfig { steps: 3, batch_size: 2, lr: 1e-2, warmup_steps: 1, ..SftStageConfig::default() };
    f32_stage("base", StartFrom::fresh(shape)).sft(&quick, sft.clone()).unwrap();
    let base_dir = model_dir(&dir.path().join("base"));
    let lora = LoraConfig::new(2, 4.0).with_target_modules(["q_proj", "down_proj"]);
    let sft_lora = SftStageConfig { lora: Some(lora.clone()), ..quick };
    bf16_stage("il", StartFrom::Dir(base_dir.clone())).sft(&sft_lora, sft.clone()).unwrap();
    let reward = || act_rewards::NextActionConfig::default().build().unwrap();
    let rl_lora = lora_grpo_stage(lora);
    bf16_stage("rl", StartFrom::Dir(base_dir.clone())).grpo(&rl_lora, rl.clone(), reward(), "</action>").unwrap();
    bf16_stage("il_full", StartFrom::Dir(base_dir.clone())).sft(&quick, sft).unwrap();
    let rl_full = GrpoStageConfig { lora: None, ..rl_lora };
    bf16_stage("rl_full", StartFrom::Dir(base_dir.clone())).grpo(&rl_full, rl, reward(), "</action>").unwrap();

    let device = Device::flex();
    let weights = |model: &Qwen3| -> Vec<Vec<f32>> {
        let layer = &model.layers[0];
        [&layer.self_attn.q_proj.weight, &layer.self_attn.k_proj.weight, &layer.mlp.down_proj.weight]
            .into_iter()
            .map(|w| w.val().into_data().convert::<f32>().try_into_vec().unwrap())
            .chain([model.embed_tokens.weight.val().into_data().convert::<f32>().try_into_vec().unwrap()])
            .collect()
    };
    let base_f32 = weights(&load_model(&base_dir, &device).unwrap());
    let base_bf16 = load_model_as(&base_dir, &device, ComputeDtype::Bf16).unwrap();
    assert_eq!(base_bf16.float_dtype(), burn::tensor::DType::BF16);
    let base_bf16 = weights(&base_bf16);
    assert_ne!(base_bf16[1], base_f32[1], "the cast rounds");
    for name in ["il", "rl"] {
        let saved = weights(&load_model(&model_dir(&dir.path().join(name)), &device).unwrap());
        assert_eq!((&saved[1], &saved[3]), (&base_bf16[1], &base_bf16[3]), "{name}: the rest is the base in bf16");
        assert_ne!(saved[0], base_bf16[0], "{name}: q_proj adapted");
        assert_ne!(saved[2], base_bf16[2], "{name}: down_proj adapted");
    }

    // Full fine-tuning in bf16 saves the f32 master weights: trained, and finer than bf16 can hold.
    for name in ["il_full", "rl_full"] {
        let saved = weights(&load_model(&model_dir(&dir.path().join(name)), &device).unwrap());
        for (i, tensor) in saved.iter().enumerate() {
            assert_ne!(tensor, &base_f32[i], "{name}: tensor {i} trained");
            let finer = tensor.iter().filter(|x| burn::tensor::bf16::from_f32(**x).to_f32() != **x).count();
            assert!(finer > tensor.len() / 2, "{name}: tensor {i} holds bf16 values only");
        }
    }

    // Half precision validates with a preset, with or without LoRA.
    let half = |training: TrainingConfig| ExperimentConfig { training, ..ExperimentConfig::default() }.validate();
    let preset = TrainingConfig { float_dtype: ComputeDtype::Bf16, ..TrainingConfig::default() };
    half(preset.clone()).unwrap();
    let checkpoint = ModelSource::Checkpoint { dir: base_dir.clone() };
    let lora = Some(LoraConfig::new(4, 8.0));
    let all_lora = TrainingConfig {
        model: checkpoint,
        il: SftStageConfig { lora: lora.clone(), ..SftStageConfig::default() },
        act: GrpoStageConfig { lora: lora.clone(), ..GrpoStageConfig::default() },
        rl: GrpoStageConfig { lora, ..GrpoStageConfig::default() },
        ..preset
    };
    half(all_lora).unwrap();
}
