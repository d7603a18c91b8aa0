//! Next-action and critic accuracy with scripted policies.

mod common;

use act_core::*;
use act_eval::*;

fn state(task: usize, step: usize) -> AgentState {
    AgentState {
        task_id: format!("t{task}"),
        task: "open the right door".into(),
        step_index: step,
        history: vec![],
        observation: "Doors.".into(),
        admissible_actions: vec!["open door 0".into(), "open door 1".into(), "look".into()],
    }
}

fn items(n: usize) -> Vec<NextActionItem> {
    (0..n)
        .map(|i| NextActionItem { state: state(i, i % 3), expert_action: format!("open door {}", i % 2).into() })
        .collect()
}

fn pairs(n: usize) -> Vec<ActionPair> {
    items(n)
        .into_iter()
        .enumerate()
        .map(|(i, item)| ActionPair {
            state: item.state,
            expert_action: item.expert_action,
            alternative: "look".into(),
            order: if i % 3 == 0 { PresentedOrder::ExpertFirst } else { PresentedOrder::AlternativeFirst },
            provenance: PairProvenance {
                env: "doors".into(),
                task_id: format!("t{i}"),
                step_index: i % 3,
                policy: "test".into(),
                seed: 0,
                temperature: None,
                fallback: false,
            },
        })
        .collect()
}

fn config() -> ItemEvalConfig {
    ItemEvalConfig::default().with_seed(9).with_batch_size(7).with_progress(false)
}

/// Answers with the expert action of its item, in a different case and spacing.
fn oracle() -> common::Scripted<impl Fn(&AgentState) -> String + Send + Sync> {
    common::scripted("oracle", |s| {
        let task: usize = s.task_id[1..].parse().unwrap();
        format!("<think>prize</think><action>  OPEN Door {} </action>", task % 2)
    })
}

#[test]
fn next_action_accuracy_of_oracle_and_random() {
    let items = items(300);
    let perfect = evaluate_next_action(&oracle(), &items, &config()).unwrap();
    assert_eq!(perfect.summary.accuracy.value, 1.0);
    assert_eq!(perfect.summary.parse_rate.value, 1.0);
    perfect.validate().unwrap();

    let random = RandomAdmissiblePolicy::new();
    let report = evaluate_next_action(&random, &items, &config()).unwrap();
    assert!(report.summary.accuracy.ci.contains(1.0 / 3.0), "{:?}", report.summary.accuracy);
    let in_pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
            .install(|| evaluate_next_action(&random, &items, &config()).unwrap())
    };
    assert_eq!(in_pool(1), in_pool(4));
    assert_eq!(in_pool(1), report);

    let cmp = compare_next_action(&perfect, &report, &BootstrapConfig::default()).unwrap();
    assert_eq!(cmp.b_better, 0);
    assert!(cmp.sign_test_p < 1e-10);

    let strict = evaluate_next_action(&random, &items, &config().with_require_reasoning(true)).unwrap();
    assert_eq!(strict.summary.parse_rate.value, 0.0);
    assert_eq!(strict.summary.accuracy.value, 0.0);
    assert!(evaluate_next_action(&random, &[], &config()).is_err());
    assert!(evaluate_next_action(&random, &items, &config().with_batch_size(0)).is_err());
}

#[test]
fn accuracy_by_verb_counts_each_expert_verb() {
    // Expert: `open door k` on even items, `look` on odd ones; the policy always opens door 0.
    let items: Vec<NextActionItem> = items(40)
        .into_iter()
        .enumerate()
        .map(|(i, item)| if i % 2 == 1 { NextActionItem { expert_action: "look".into(), ..item } } else { item })
        .collect();
    let door0 = common::scripted("door0", |_| "<action>open door 0</action>".to_owned());
    let report = evaluate_next_action(&door0, &items, &config()).unwrap();
    report.validate().unwrap();
    assert!(report.results.iter().zip(&items).all(|(r, i)| r.expert_action == i.expert_action.as_str()));
    let by_verb = report.accuracy_by_verb();
    assert_eq!(
        by_verb,
        vec![
            VerbAccuracy { verb: "look".into(), items: 20, correct: 0 },
            VerbAccuracy { verb: "open".into(), items: 20, correct: 20 }
        ]
    );
    // Items 0, 2, 4, ... are `open door 0`, as `items` numbers doors by i % 2: all right.
    let table = render_verb_table(&[&report]);
    assert_eq!(table, "| method | look (20) | open (20) |\n|---|---:|---:|\n| door0 | 0.0 | 100.0 |\n");
}

#[test]
fn critic_accuracy_of_replay_and_coin() {
    let pairs = pairs(300);
    // A replay of the expert's actions picks the expert action every time.
    let trajectories: Vec<Trajectory> = pairs
        .iter()
        .map(|p| Trajectory {
            env: "doors".into(),
            task_id: p.state.task_id.clone(),
            task_type: "x".into(),
            split: Split::Test,
            task: p.state.task.clone(),
            seed: 0,
            steps: (0..=p.state.step_index)
                .map(|_| Step {
                    observation: "o".into(),
                    admissible_actions: vec![],
                    action: p.expert_action.clone(),
                    reward: 0.0,
                })
                .collect(),
            outcome: Outcome { won: true, score: 1.0, steps_used: 1 },
        })
        .collect();
    let replay = ReplayPolicy::new(&trajectories);
    let perfect = evaluate_critic(&replay, &pairs, &config()).unwrap();
    assert_eq!(perfect.summary.accuracy.value, 1.0);
    assert_eq!(perfect.summary.parse_rate.value, 1.0);
    // A third of the pairs show the expert first.
    let first = perfect.summary.first_choice_rate.as_ref().unwrap().value;
    assert!((first - 100.0 / 300.0).abs() < 1e-12);
    // Every expert action opens a door and every alternative is `look`: one kind of comparison, all right.
    assert!(perfect.results.iter().zip(&pairs).all(|(r, p)| r.expert_action == p.expert_action.as_str()));
    assert_eq!(
        perfect.accuracy_by_comparison(),
        vec![ComparisonAccuracy { comparison: "open vs other".into(), items: 300, correct: 300 }]
    );
    assert_eq!(
        render_comparison_table(&[&perfect]),
        format!("| method | open vs other (300) |\n|---|---:|\n| {} | 100.0 |\n", perfect.method)
    );

    let coin = RandomAdmissiblePolicy::new();
    let report = evaluate_critic(&coin, &pairs, &config()).unwrap();
    assert!(report.summary.accuracy.ci.contains(0.5), "{:?}", report.summary.accuracy);
    report.validate().unwrap();

    // An unparseable critic: every answer counts as wrong.
    let mute = common::scripted("mute", |_| "both look fine".to_owned());
    let silent = evaluate_critic(&mute, &pairs, &config()).unwrap();
    assert_eq!(silent.summary.parse_rate.value, 0.0);
    assert_eq!(silent.summary.accuracy.value, 0.0);
    assert!(silent.summary.accuracy_when_parsed.is_none());

    let cmp = compare_critic(&perfect, &report, &BootstrapConfig::default()).unwrap();
    assert!(cmp.difference.value > 0.3);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("critic.json");
    let record = EvalRecord::new("doors pairs", Evaluation::Critic(report));
    record.save(&path).unwrap();
    assert_eq!(EvalRecord::load(&path).unwrap(), record);
    assert!(record.to_markdown().contains("| critic accuracy |"));

    // A record written before the pairs' actions were kept still loads, and has no kinds of comparison to show.
    let Evaluation::Critic(mut old) = record.evaluation.clone() else { unreachable!() };
    for r in &mut old.results {
        r.expert_action.clear();
        r.alternative.clear();
    }
    let old = EvalRecord::new("doors pairs", Evaluation::Critic(old));
    let json = serde_json::to_string(&old).unwrap();
    assert!(!json.contains("\"alternative\""), "empty actions are not written");
    old.save(&path).unwrap();
    let Evaluation::Critic(loaded) = EvalRecord::load(&path).unwrap().evaluation else { unreachable!() };
    assert!(loaded.accuracy_by_comparison().is_empty());
}
