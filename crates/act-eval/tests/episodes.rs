//! On-line evaluation on the Doors environment: the expert, the random policy against its analytic rate,
//! determinism across thread counts and re-runs, invalid-action handling, and errors.

mod common;

use act_core::{RandomAdmissiblePolicy, Split};
use act_eval::*;
use common::{doors, random_success, scripted};

fn config() -> EpisodeEvalConfig {
    EpisodeEvalConfig::new(Split::Test).with_seed(2024).with_progress(false)
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

#[test]
fn expert_scores_100_percent() {
    let report = evaluate_episodes(&doors(400), Agent::Expert, &config()).unwrap();
    assert_eq!(report.method, "expert");
    assert_eq!(report.episodes, 400);
    assert_eq!(report.summary.success.value, 1.0);
    assert_eq!(report.summary.score.value, 1.0);
    assert_eq!(report.summary.steps_to_success.as_ref().unwrap().value, 1.0);
    assert_eq!(report.summary.invalid_action_rate.as_ref().unwrap().value, 0.0);
    assert_eq!(report.summary.by_task_type.len(), 2);
    assert_eq!(report.summary.by_task_type["two-doors"].episodes, 200);
    assert!(report.results.iter().enumerate().all(|(i, r)| r.index == i && r.won && r.steps == 1));
    report.validate().unwrap();
}

#[test]
fn random_policy_matches_its_analytic_success_rate() {
    let random = RandomAdmissiblePolicy::new();
    let report = evaluate_episodes(&doors(400), Agent::Policy(&random), &config()).unwrap();
    let two = random_success(2);
    let four = random_success(4);
    assert!((two - 13.0 / 27.0).abs() < 1e-12 && (four - 31.0 / 125.0).abs() < 1e-12);
    let overall = (two + four) / 2.0;
    let s = &report.summary;
    assert!(s.success.ci.contains(overall), "{overall} not in {:?} (rate {})", s.success.ci, s.success.value);
    assert!(s.success.wilson.unwrap().contains(overall));
    let by_type = &s.by_task_type;
    assert!(by_type["two-doors"].success.ci.contains(two), "{:?}", by_type["two-doors"].success);
    assert!(by_type["four-doors"].success.ci.contains(four), "{:?}", by_type["four-doors"].success);
    // The two types differ clearly: the breakdown is not the overall rate repeated.
    assert!(by_type["four-doors"].success.ci.upper < by_type["two-doors"].success.ci.lower);
    // Random admissible actions are always valid; some episodes use every step.
    assert_eq!(s.invalid_action_rate.as_ref().unwrap().value, 0.0);
    assert!(report.results.iter().any(|r| r.steps == common::BUDGET && !r.won));
    let won_steps = s.steps_to_success.as_ref().unwrap();
    assert!(won_steps.value > 1.0 && won_steps.value < 1.5, "{won_steps:?}");
}

#[test]
fn results_are_identical_across_thread_counts_and_reruns() {
    let random = RandomAdmissiblePolicy::new();
    let run = |threads| in_pool(threads, || evaluate_episodes(&doors(300), Agent::Policy(&random), &config()).unwrap());
    let one = run(1);
    let four = run(4);
    assert_eq!(one, four);
    assert_eq!(one, run(4));
    let json = |r: &EpisodeReport| serde_json::to_string(r).unwrap();
    assert_eq!(json(&one), json(&four));
    let other_seed = evaluate_episodes(&doors(300), Agent::Policy(&random), &config().with_seed(2025)).unwrap();
    assert_ne!(one.results, other_seed.results);
}

#[test]
fn invalid_actions_are_counted_and_optionally_snapped() {
    // Says "open the door 0" in many words: never admissible as written.
    let wordy = scripted("wordy", |_| "<action>Open the door 0</action>".to_owned());
    let as_is = evaluate_episodes(&doors(40), Agent::Policy(&wordy), &config()).unwrap();
    assert_eq!(as_is.summary.success.value, 0.0);
    assert_eq!(as_is.summary.invalid_action_rate.as_ref().unwrap().value, 1.0);
    assert_eq!(as_is.summary.unparseable_rate.as_ref().unwrap().value, 0.0);
    assert!(as_is.results.iter().all(|r| r.steps == common::BUDGET && r.snapped_actions == 0));

    let snap = config().with_invalid_actions(InvalidActionHandling::SnapToNearest).with_transcripts(true);
    let snapped = evaluate_episodes(&doors(40), Agent::Policy(&wordy), &snap).unwrap();
    // Snapped to "open door 0", which ends every episode at once and wins where the prize is behind door 0.
    assert!(snapped.results.iter().all(|r| r.steps == 1 && r.snapped_actions == 1 && r.invalid_actions == 1));
    assert!(snapped.results.iter().all(|r| r.transcript[0].action.as_str() == "open door 0"));
    assert!(snapped.summary.success.value > 0.0 && snapped.summary.success.value < 1.0);

    let mute = scripted("mute", |_| "I am not sure.".to_owned());
    let report = evaluate_episodes(&doors(10), Agent::Policy(&mute), &config().with_transcripts(true)).unwrap();
    assert_eq!(report.summary.unparseable_rate.as_ref().unwrap().value, 1.0);
    assert_eq!(report.results[0].transcript[0].action.as_str(), "I am not sure.");
    // Each step records what the agent read: the start, then the answer to the previous action.
    let read: Vec<&str> = report.results[0].transcript[..2].iter().map(|s| s.observation.as_str()).collect();
    assert_eq!(read, ["You see 2 doors.", "Nothing happens."]);
    assert!(report.summary.steps_to_success.is_none());

    let thinker = scripted("thinker", |_| "<action>look</action>".to_owned());
    let strict = evaluate_episodes(&doors(4), Agent::Policy(&thinker), &config().with_require_reasoning(true)).unwrap();
    assert_eq!(strict.summary.unparseable_rate.as_ref().unwrap().value, 1.0);
}

#[test]
fn bad_settings_and_missing_experts_are_clear_errors() {
    let err = evaluate_episodes(&doors(5), Agent::Expert, &config().with_episodes(6)).unwrap_err();
    assert!(err.to_string().contains("asked for 6 episodes but split `test` of `doors` has 5 tasks"), "{err}");
    let err = evaluate_episodes(&doors(5), Agent::Expert, &EpisodeEvalConfig::new(Split::Train).with_progress(false))
        .unwrap_err();
    assert!(err.to_string().contains("split `train` is not available"), "{err}");
    let no_expert = || Ok::<_, act_core::EnvError>(common::Doors::new(3).without_expert());
    let err = evaluate_episodes(&no_expert, Agent::Expert, &config()).unwrap_err();
    assert!(err.to_string().contains("has no expert"), "{err}");
    let broken = || Err::<common::Doors, _>(act_core::EnvError::Backend("engine missing".into()));
    let err = evaluate_episodes(&broken, Agent::Expert, &config()).unwrap_err();
    assert!(err.to_string().contains("engine missing"), "{err}");
}

#[test]
fn first_episodes_only_and_step_budget_override() {
    let look = scripted("looker", |_| "<action>look</action>".to_owned());
    let report =
        evaluate_episodes(&doors(50), Agent::Policy(&look), &config().with_episodes(8).with_step_budget(5)).unwrap();
    assert_eq!(report.episodes, 8);
    assert_eq!(report.step_budget, 5);
    assert!(report.results.iter().all(|r| r.steps == 5 && !r.won));
}

#[test]
fn paired_comparison_of_expert_and_random() {
    let random = RandomAdmissiblePolicy::new();
    let expert = evaluate_episodes(&doors(200), Agent::Expert, &config()).unwrap();
    let guess = evaluate_episodes(&doors(200), Agent::Policy(&random), &config()).unwrap();
    let cmp = compare_episodes(&expert, &guess, EpisodeMetric::Success, &BootstrapConfig::default()).unwrap();
    assert_eq!(cmp.b_better, 0);
    assert_eq!(cmp.a_better + cmp.ties, 200);
    assert!(cmp.difference.ci.lower > 0.4, "{:?}", cmp.difference);
    assert!(cmp.sign_test_p < 1e-20);
    let text = render_paired("expert", "random", &cmp);
    assert!(text.contains("on 200 shared units"), "{text}");

    let shorter = evaluate_episodes(&doors(200), Agent::Expert, &config().with_episodes(100)).unwrap();
    assert!(compare_episodes(&expert, &shorter, EpisodeMetric::Score, &BootstrapConfig::default()).is_err());
}

#[test]
fn one_environment_per_worker_and_the_lowest_failure_is_reported() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let made = AtomicUsize::new(0);
    let counting = || {
        made.fetch_add(1, Ordering::Relaxed);
        Ok::<_, act_core::EnvError>(common::Doors::new(200))
    };
    in_pool(4, || evaluate_episodes(&counting, Agent::Expert, &config()).unwrap());
    assert!(made.load(Ordering::Relaxed) <= 4, "{} environments made", made.load(Ordering::Relaxed));

    // A policy that cannot answer in tasks 37 and 120: the report names episode 37 for any thread count.
    struct Failing;
    impl act_core::Policy for Failing {
        fn name(&self) -> &str {
            "failing"
        }
        fn generate(
            &self,
            queries: &[act_core::Query],
            _: &act_core::SamplingParams,
        ) -> Result<Vec<String>, act_core::PolicyError> {
            let act_core::QueryKind::Act(state) = &queries[0].kind else { unreachable!("only action queries") };
            if state.task_id == "doors-37" || state.task_id == "doors-120" {
                return Err(act_core::PolicyError::Generation { policy: "failing".into(), message: "boom".into() });
            }
            Ok(vec!["<action>look</action>".into()])
        }
    }
    for threads in [1, 3] {
        let err = in_pool(threads, || evaluate_episodes(&doors(200), Agent::Policy(&Failing), &config())).unwrap_err();
        assert_eq!(err.to_string(), "episode 37, step 0: policy failed: policy `failing` failed: boom");
    }
}
