//! The quickstart's data pipeline at toy size: every stage's outputs exist, parse, and agree with each other.

use act_core::{ActionPair, GrpoSample, RewardTarget, SftSample, Trajectory, actions_match, parse_action, read_jsonl};
use act_eval::{EvalRecord, Evaluation};
use act_examples::pipeline::{PipelineConfig, run_alfworld_pipeline};

fn toy_config(seed: u64) -> PipelineConfig {
    PipelineConfig { train_games: 12, k: 3, seed, eval_episodes: Some(6), held_out_games: Some(6), verbose: false }
}

#[test]
fn every_stage_writes_consistent_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let summary = run_alfworld_pipeline(dir.path(), &toy_config(3)).unwrap();

    // Expert trajectories: all won, within budget, and what was written is what was returned.
    let train: Vec<Trajectory> = read_jsonl(dir.path().join("expert_train.jsonl")).unwrap();
    assert_eq!(train, summary.train);
    assert_eq!(train.len(), 12);
    assert!(train.iter().all(|t| t.outcome.won && t.steps.len() <= 50));

    // Pairs: one per expert state; the expert action is the trajectory's, the alternative differs and is admissible.
    let pairs: Vec<ActionPair> = read_jsonl(dir.path().join("pairs.jsonl")).unwrap();
    assert_eq!(pairs, summary.pairs);
    let states: usize = train.iter().map(|t| t.steps.len()).sum();
    assert_eq!(pairs.len(), states);
    for pair in &pairs {
        let t = train.iter().find(|t| t.task_id == pair.provenance.task_id).unwrap();
        let step = &t.steps[pair.provenance.step_index];
        assert_eq!(pair.expert_action, step.action);
        assert!(!actions_match(pair.alternative.as_str(), pair.expert_action.as_str()));
        assert!(step.admissible_actions.contains(&pair.alternative));
    }
    let expert_first = pairs.iter().filter(|p| p.expert_choice() == act_core::Choice::First).count();
    assert!(expert_first.abs_diff(pairs.len() - expert_first) <= 1, "order not balanced");

    // Training sets: one sample per pair / state, with targets that name the expert action.
    let act: Vec<GrpoSample> = read_jsonl(dir.path().join("act_comparison.jsonl")).unwrap();
    let il: Vec<SftSample> = read_jsonl(dir.path().join("il_sft.jsonl")).unwrap();
    let rl: Vec<GrpoSample> = read_jsonl(dir.path().join("rl_next_action.jsonl")).unwrap();
    assert_eq!((act.len(), il.len(), rl.len()), (pairs.len(), states, states));
    for (sample, pair) in act.iter().zip(&pairs) {
        let RewardTarget::Choice { expert, actions, .. } = &sample.target else { panic!("not a choice target") };
        assert_eq!(actions[expert.number() as usize - 1], pair.expert_action);
        assert!(sample.prompt.contains(&format!("Action 1: {}", actions[0])));
    }
    let expert_actions: Vec<_> = train.iter().flat_map(|t| t.steps.iter().map(|s| s.action.clone())).collect();
    for ((sft, next), expert) in il.iter().zip(&rl).zip(&expert_actions) {
        assert_eq!(parse_action(&sft.completion, false).unwrap().action, expert.as_str());
        assert!(!sft.prompt.contains("<think>"), "IL prompts are the no-reasoning variant");
        assert!(matches!(&next.target, RewardTarget::NextAction { expert: e, .. } if e == expert));
    }

    // Reward check: replaying the expert is always right and earns reward 1; a coin flip earns about half.
    let (expert_critic, expert_reward) = &summary.critic[0];
    assert_eq!(expert_critic.summary.accuracy.value, 1.0);
    assert_eq!(*expert_reward, 1.0);
    let (random_critic, random_reward) = &summary.critic[1];
    assert_eq!(random_critic.summary.accuracy.value, *random_reward);

    // Evaluation records reload, and the expert wins every episode.
    let mut loaded = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with("eval_") {
            let record = EvalRecord::load(&path).unwrap();
            if let Evaluation::Episodes(report) = &record.evaluation {
                assert_eq!(report.results.len(), 6);
                if record.method() == "expert" {
                    assert_eq!(report.summary.success.value, 1.0);
                }
            }
            loaded += 1;
        }
    }
    assert_eq!(loaded, 4);
    assert!(dir.path().join("success.svg").exists());
    assert!(summary.results_markdown.contains("| expert | 100.0 ± 0.0 | 100.0 ± 0.0 |"));
}

#[test]
fn same_seed_same_files() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run_alfworld_pipeline(a.path(), &toy_config(9)).unwrap();
    run_alfworld_pipeline(b.path(), &toy_config(9)).unwrap();
    for file in ["expert_train.jsonl", "pairs.jsonl", "act_comparison.jsonl", "il_sft.jsonl", "rl_next_action.jsonl"] {
        assert_eq!(std::fs::read(a.path().join(file)).unwrap(), std::fs::read(b.path().join(file)).unwrap(), "{file}");
    }
}
