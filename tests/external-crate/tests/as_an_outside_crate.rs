//! The toy environment, policy and reward function of this crate, driven through act-core's own tools.

use act_core::{
    ActionPair, Environment, PairProvenance, Policy, PresentedOrder, PromptConfig, Prompter, RewardFn, SamplingParams,
    Split, TaskRef, collect_expert_trajectory, parse_action, parse_choice, read_jsonl, write_jsonl,
};
use act_core_external::{ExactAction, FirstMention, Locks};

#[test]
fn the_expert_wins_and_its_trajectory_round_trips_through_jsonl() {
    let mut env = Locks::new();
    let trajectories: Vec<_> = (0..env.num_tasks(Split::Train).unwrap())
        .map(|i| collect_expert_trajectory(&mut env, &TaskRef::index(Split::Train, i), 11).unwrap())
        .collect();
    assert!(trajectories.iter().all(|t| t.outcome.won && t.steps.len() == 2));
    let path = std::env::temp_dir().join(format!("act-core-external-{}.jsonl", std::process::id()));
    write_jsonl(&path, &trajectories).unwrap();
    let back: Vec<act_core::Trajectory> = read_jsonl(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(back, trajectories);
}

#[test]
fn the_policy_plays_through_prompts_and_parsing_and_is_scored_by_the_reward() {
    let prompter = Prompter::new(PromptConfig::default().with_environment("a room of locks")).unwrap();
    let (policy, reward) = (FirstMention, ExactAction);
    let mut env = Locks::new();
    for index in 0..5 {
        let expert = collect_expert_trajectory(&mut env, &TaskRef::index(Split::EvalInDistribution, index), 3).unwrap();
        for (state, action) in expert.states(4) {
            let sample = prompter.next_action_sample(&state, action);
            let completion = &policy.generate(&[prompter.act_query(&state)], &SamplingParams::greedy()).unwrap()[0];
            let score = reward.score(&sample.target, completion).unwrap();
            assert_eq!(score.total, 1.0, "{completion} at {}", state.observation);
            assert_eq!(parse_action(completion, false).unwrap().action, action.as_str());
            assert_eq!(reward.score(&sample.target, "take key 9").unwrap().total, 0.0);
        }
        // And in a comparison against another action, it names the expert's.
        let state = expert.state_at(0, 0).unwrap();
        let provenance = PairProvenance {
            env: "locks".into(),
            task_id: expert.task_id.clone(),
            step_index: 0,
            policy: "random".into(),
            seed: 0,
            temperature: None,
            fallback: false,
        };
        for order in [PresentedOrder::ExpertFirst, PresentedOrder::AlternativeFirst] {
            let pair = ActionPair {
                state: state.clone(),
                expert_action: expert.steps[0].action.clone(),
                alternative: "look".into(),
                order,
                provenance: provenance.clone(),
            };
            let answer = &policy.generate(&[prompter.pair_query(&pair)], &SamplingParams::greedy()).unwrap()[0];
            assert_eq!(parse_choice(answer), Ok(pair.expert_choice()));
        }
    }
    let free_text = policy.generate(&[act_core::Query::text("why?")], &SamplingParams::greedy());
    assert!(free_text.unwrap_err().to_string().contains("first-mention"));
    let wrong_target = act_core::RewardTarget::Episode { won: true, score: 1.0 };
    assert!(reward.score(&wrong_target, "").is_err());
}

#[test]
fn snapshots_restore_the_episode_and_the_seed_picks_the_task() {
    let mut env = Locks::new();
    env.reset(&TaskRef::index(Split::Train, 3), 0).unwrap();
    let task = env.task().unwrap().description.clone();
    let snapshot = env.snapshot().unwrap();
    let first = env.expert_action().unwrap().unwrap();
    let taken = env.step(first.as_str()).unwrap();
    env.restore(&snapshot).unwrap();
    assert_eq!(env.step(first.as_str()).unwrap(), taken);
    env.reset(&TaskRef::index(Split::Train, 3), 1).unwrap();
    assert_ne!(env.task().unwrap().description, task, "another seed, another target lock");
    assert!(env.step("dance").unwrap().observation.as_str() == "Nothing happens.");
    assert!(env.reset(&TaskRef::Id("x".into()), 0).is_err());
}
