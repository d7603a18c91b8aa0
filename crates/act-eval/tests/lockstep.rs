//! Lockstep batched episodes: the same results as one episode at a time for a seed-independent policy, whatever
//! the batch size and thread count; really batched calls; reproducible sampling; errors naming the episodes; and
//! records without a batch size.

mod common;

use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use act_core::{
    EnvError, Environment, Policy, PolicyError, Query, QueryKind, RandomAdmissiblePolicy, SamplingParams, Split,
};
use act_eval::*;
use common::{Doors, doors};

fn config() -> EpisodeEvalConfig {
    EpisodeEvalConfig::new(Split::Test).with_seed(99).with_progress(false).with_transcripts(true)
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

/// Answers from a hash of the prompt and task id (never the seed): mostly an admissible action, sometimes a wordy
/// inadmissible one, sometimes no action at all, so every counter moves. Records the size of every call.
#[derive(Default)]
struct Hashing {
    calls: Mutex<Vec<usize>>,
}

impl Hashing {
    fn calls(&self) -> Vec<usize> {
        self.calls.lock().unwrap().clone()
    }
}

impl Policy for Hashing {
    fn name(&self) -> &str {
        "hashing"
    }

    fn generate(&self, queries: &[Query], _: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        self.calls.lock().unwrap().push(queries.len());
        Ok(queries
            .iter()
            .map(|query| {
                let QueryKind::Act(state) = &query.kind else { unreachable!("only action queries") };
                let mut hasher = std::hash::DefaultHasher::new();
                (&query.prompt, &state.task_id).hash(&mut hasher);
                let h = hasher.finish();
                match h % 7 {
                    0 => "I am not sure.".to_owned(),
                    1 => "<action>Open the door 1</action>".to_owned(),
                    _ => {
                        let actions = &state.admissible_actions;
                        format!("<action>{}</action>", actions[(h / 7) as usize % actions.len()])
                    }
                }
            })
            .collect())
    }
}

#[test]
fn batched_results_match_unbatched_for_any_batch_size_and_thread_count() {
    for handling in [InvalidActionHandling::AsIs, InvalidActionHandling::SnapToNearest] {
        let settings = config().with_invalid_actions(handling).with_step_budget(4);
        let policy = Hashing::default();
        let unbatched = evaluate_episodes(&doors(150), Agent::Policy(&policy), &settings).unwrap();
        assert!(policy.calls().iter().all(|&n| n == 1));
        // Every counter is exercised, so the comparison below means something.
        let results = &unbatched.results;
        assert!(results.iter().any(|r| r.won) && results.iter().any(|r| !r.won));
        assert!(results.iter().any(|r| r.steps > 1) && results.iter().any(|r| r.steps == 1));
        assert!(results.iter().any(|r| r.invalid_actions > 0));
        match handling {
            InvalidActionHandling::AsIs => assert!(results.iter().any(|r| r.unparseable_outputs > 0 && r.steps == 4)),
            InvalidActionHandling::SnapToNearest => assert!(results.iter().any(|r| r.snapped_actions > 0)),
            other => panic!("untested handling {other:?}"),
        }
        for batch_size in [1, 3, 7, 64, 500] {
            for threads in [1, 4] {
                let settings = settings.clone().with_batch_size(batch_size);
                let batched = in_pool(threads, || {
                    evaluate_episodes(&doors(150), Agent::Policy(&Hashing::default()), &settings).unwrap()
                });
                assert_eq!(batched.results, unbatched.results, "batch size {batch_size}, {threads} threads");
                assert_eq!(batched.summary, unbatched.summary);
                assert_eq!((batched.episodes, batched.step_budget), (unbatched.episodes, unbatched.step_budget));
                assert_eq!(batched.config, EpisodeEvalConfig { batch_size, ..unbatched.config.clone() });
                batched.validate().unwrap();
            }
        }
    }
}

#[test]
fn batched_calls_carry_one_query_per_live_episode() {
    let policy = Hashing::default();
    let report =
        evaluate_episodes(&doors(40), Agent::Policy(&policy), &config().with_batch_size(7).with_step_budget(4))
            .unwrap();
    let calls = policy.calls();
    assert_eq!(calls[0], 7);
    assert!(calls.iter().all(|&n| (1..=7).contains(&n)), "{calls:?}");
    // One query per step taken, in far fewer calls than steps; the batch stays full while episodes remain.
    let steps: usize = report.results.iter().map(|r| r.steps).sum();
    assert_eq!(calls.iter().sum::<usize>(), steps);
    assert!(calls.len() * 3 < steps, "{} calls for {steps} steps", calls.len());
    assert!(calls.iter().filter(|&&n| n == 7).count() >= calls.len() / 2, "{calls:?}");

    // The batch never exceeds the episodes, and one environment is made per slot.
    let made = AtomicUsize::new(0);
    let counting = || {
        made.fetch_add(1, Ordering::Relaxed);
        Ok::<_, EnvError>(Doors::new(40))
    };
    let policy = Hashing::default();
    evaluate_episodes(&counting, Agent::Policy(&policy), &config().with_batch_size(64).with_episodes(5)).unwrap();
    assert_eq!(policy.calls()[0], 5);
    assert_eq!(made.load(Ordering::Relaxed), 5);
}

#[test]
fn sampled_results_are_reproducible_for_a_batch_size() {
    let random = RandomAdmissiblePolicy::new();
    let run = |batch_size, threads| {
        in_pool(threads, || {
            evaluate_episodes(&doors(300), Agent::Policy(&random), &config().with_batch_size(batch_size)).unwrap()
        })
    };
    let eight = run(8, 1);
    assert_eq!(eight, run(8, 4));
    assert_eq!(eight, run(8, 1));
    // The per-query seeds follow the batch layout, so sampled results differ from batch size 1 (and between
    // batch sizes), while the success rate is still the policy's.
    assert_ne!(eight.results, run(1, 1).results);
    assert_ne!(eight.results, run(9, 1).results);
    let overall = (common::random_success(2) + common::random_success(4)) / 2.0;
    assert!(eight.summary.success.ci.contains(overall), "{:?}", eight.summary.success);
}

#[test]
fn the_expert_ignores_the_batch_size() {
    let one = evaluate_episodes(&doors(50), Agent::Expert, &config()).unwrap();
    let many = evaluate_episodes(&doors(50), Agent::Expert, &config().with_batch_size(16)).unwrap();
    assert_eq!(one.results, many.results);
    assert_eq!(many.config.batch_size, 16);
}

/// Answers one completion too many.
struct Overeager;

impl Policy for Overeager {
    fn name(&self) -> &str {
        "overeager"
    }

    fn generate(&self, queries: &[Query], _: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        Ok(vec!["<action>look</action>".to_owned(); queries.len() + 1])
    }
}

/// Fails whenever a query of task 37 is in the call.
struct Failing;

impl Policy for Failing {
    fn name(&self) -> &str {
        "failing"
    }

    fn generate(&self, queries: &[Query], _: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        let failing = queries.iter().any(|q| matches!(&q.kind, QueryKind::Act(s) if s.task_id == "doors-37"));
        if failing {
            return Err(PolicyError::Generation { policy: "failing".into(), message: "boom".into() });
        }
        Ok(vec!["<action>look</action>".to_owned(); queries.len()])
    }
}

/// Doors whose environment breaks at the second step of task 13.
struct Brittle(Doors);

impl Environment for Brittle {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn num_tasks(&self, split: Split) -> Result<usize, EnvError> {
        self.0.num_tasks(split)
    }
    fn reset(&mut self, task: &act_core::TaskRef, seed: u64) -> Result<act_core::Reset, EnvError> {
        self.0.reset(task, seed)
    }
    fn step(&mut self, action: &str) -> Result<act_core::Transition, EnvError> {
        if self.0.task().is_some_and(|t| t.id == "doors-13") && action == "look" {
            return Err(EnvError::Backend("the engine crashed".into()));
        }
        self.0.step(action)
    }
    fn admissible_actions(&self) -> Option<Vec<act_core::Action>> {
        self.0.admissible_actions()
    }
    fn task(&self) -> Option<&act_core::TaskInfo> {
        self.0.task()
    }
    fn step_budget(&self) -> usize {
        self.0.step_budget()
    }
    fn expert_action(&mut self) -> Result<Option<act_core::Action>, EnvError> {
        self.0.expert_action()
    }
}

#[test]
fn errors_name_the_episodes() {
    let err = evaluate_episodes(&doors(20), Agent::Policy(&Overeager), &config().with_batch_size(7)).unwrap_err();
    assert!(matches!(&err, EvalError::CompletionCount { expected: 7, got: 8, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "episodes 0-6 at step 0 (batched call 0): policy `overeager` returned 8 completions for 7 queries"
    );
    let err = evaluate_episodes(&doors(20), Agent::Policy(&Overeager), &config()).unwrap_err();
    assert_eq!(err.to_string(), "episode 0, step 0: policy `overeager` returned 2 completions for 1 queries");

    // Lookers never finish early: episodes 32-39 play together, the fifth batch of eight.
    for threads in [1, 3] {
        let err =
            in_pool(threads, || evaluate_episodes(&doors(100), Agent::Policy(&Failing), &config().with_batch_size(8)))
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "episodes 32-39 at step 0 (batched call 12): policy failed: policy `failing` failed: boom"
        );
    }

    let brittle = || Ok::<_, EnvError>(Brittle(Doors::new(30)));
    let looker = common::scripted("looker", |_| "<action>look</action>".to_owned());
    for batch_size in [1, 4, 64] {
        let err =
            evaluate_episodes(&brittle, Agent::Policy(&looker), &config().with_batch_size(batch_size)).unwrap_err();
        assert!(matches!(err, EvalError::Env { episode: 13, .. }), "batch size {batch_size}: {err:?}");
        assert_eq!(err.to_string(), "episode 13: environment failed: environment backend failed: the engine crashed");
    }
}

#[test]
fn batch_size_defaults_to_one_and_zero_is_refused() {
    assert_eq!(EpisodeEvalConfig::new(Split::Test).batch_size, 1);
    // The setter stores what it is given and validation refuses 0, as ItemEvalConfig and RolloutConfig do.
    let zero = config().with_batch_size(0);
    assert_eq!(zero.batch_size, 0);
    assert!(zero.validate().unwrap_err().to_string().contains("the batch size is 0"));
    let err = evaluate_episodes(&doors(5), Agent::Expert, &zero).unwrap_err();
    assert!(err.to_string().contains("the batch size is 0"), "{err}");

    // A configuration written before the field existed.
    let mut json = serde_json::to_value(config().with_batch_size(5)).unwrap();
    assert_eq!(json["batch_size"], 5);
    json.as_object_mut().unwrap().remove("batch_size");
    let old: EpisodeEvalConfig = serde_json::from_value(json).unwrap();
    assert_eq!(old, EpisodeEvalConfig { progress: false, ..config() });

    // And a whole record of one.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.json");
    let record = EvalRecord::episodes(
        evaluate_episodes(&doors(12), Agent::Policy(&RandomAdmissiblePolicy::new()), &config()).unwrap(),
    );
    let mut json = serde_json::to_value(&record).unwrap();
    let config = json["evaluation"]["episodes"]["config"].as_object_mut().unwrap();
    assert!(config.remove("batch_size").is_some());
    std::fs::write(&path, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
    assert_eq!(EvalRecord::load(&path).unwrap(), record);
}
