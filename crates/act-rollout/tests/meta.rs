//! ICT's meta-environment on native ALFWorld: its reward, its two task orders, its family filters, its seeds, and
//! followers whose play depends on the system prompt.

use std::collections::BTreeSet;

use act_alfworld::{AlfworldConfig, AlfworldEnv};
use act_core::{EnvError, Policy, PolicyError, PromptConfig, Prompter, Query, SamplingParams, Split, TaskRef};
use act_rollout::{
    ExpertActor, LessonFollower, MetaEnvConfig, MetaEnvironment, PlayedEpisode, PolicyActor, PolicyFollower,
    PromptFollower, RandomActor, RolloutConfig, RolloutError, TaskOrder,
};

fn alfworld() -> Result<AlfworldEnv, EnvError> {
    AlfworldEnv::new(AlfworldConfig::default().with_train_size(40))
}

fn config(order: TaskOrder) -> MetaEnvConfig {
    MetaEnvConfig {
        split: Split::Train,
        tasks_per_step: 6,
        order,
        seed: 3,
        rollout: RolloutConfig::default().with_batch_size(6).with_step_budget(30),
        ..MetaEnvConfig::default()
    }
}

fn actions(episode: &PlayedEpisode) -> Vec<String> {
    episode.trajectory.steps.iter().map(|s| s.action.to_string()).collect()
}

#[test]
fn the_reward_is_the_fraction_won_and_follows_the_prompt() {
    let mut meta = MetaEnvironment::new(&alfworld, config(TaskOrder::Fixed)).unwrap();
    let follower = LessonFollower::new(ExpertActor);
    let batch = meta.next_batch();
    // No lessons: the expert plays and wins every game.
    let expert = meta.play(&follower, "Solve the task.", &batch).unwrap();
    assert_eq!(expert.reward, 1.0);
    // "prefer: go to" turns every trip the expert makes into a sweep of the room in listing order (the first
    // receptacle not visited yet): it wins less often, and its other actions are the expert's.
    let sweep = meta.play(&follower, "prefer: go to", &batch).unwrap();
    assert!(sweep.reward < 1.0, "{}", sweep.reward);
    for episode in &sweep.episodes {
        for (t, step) in episode.trajectory.steps.iter().enumerate() {
            if !step.action.as_str().starts_with("go to") {
                continue;
            }
            let before: Vec<&str> = episode.trajectory.steps[..t].iter().map(|s| s.action.as_str()).collect();
            let trips: Vec<&str> =
                step.admissible_actions.iter().map(|a| a.as_str()).filter(|a| a.starts_with("go to")).collect();
            let expected = trips.iter().find(|a| !before.contains(a)).or(trips.first()).unwrap();
            assert_eq!(step.action.as_str(), *expected);
        }
    }
    // A random fallback with a lesson that helps and one that does not: the reward is the fraction won.
    let random = LessonFollower::new(RandomActor);
    for prompt in ["", "prefer: take\nprefer: put", "prefer: examine"] {
        let outcome = meta.play(&random, prompt, &batch).unwrap();
        let won = outcome.episodes.iter().filter(|e| e.won()).count();
        assert_eq!(outcome.reward, won as f64 / 6.0, "{prompt:?}");
        assert_eq!(outcome.episodes.len(), 6);
    }
}

#[test]
fn shuffled_steps_play_new_tasks_and_fixed_steps_the_same() {
    let mut shuffled = MetaEnvironment::new(&alfworld, config(TaskOrder::Shuffled)).unwrap();
    let pool = shuffled.pool().len();
    assert_eq!(pool, 40);
    // Six steps of six tasks: the first 36 draws of one shuffle are distinct tasks.
    let batches: Vec<_> = (0..6).map(|_| shuffled.next_batch()).collect();
    let tasks: Vec<TaskRef> = batches.iter().flat_map(|b| b.tasks()).collect();
    let distinct: BTreeSet<String> = tasks.iter().map(|t| format!("{t:?}")).collect();
    assert_eq!(distinct.len(), 36);
    // The seventh needs a new shuffle; its tasks are again distinct among themselves.
    let seventh = shuffled.next_batch();
    let seventh_tasks: BTreeSet<String> = seventh.tasks().iter().map(|t| format!("{t:?}")).collect();
    assert_eq!(seventh_tasks.len(), 6);
    assert_eq!(seventh.step, 6);
    // Environment seeds differ between steps.
    assert_ne!(batches[0].specs[0].seed, batches[1].specs[0].seed);

    let mut fixed = MetaEnvironment::new(&alfworld, config(TaskOrder::Fixed)).unwrap();
    let first = fixed.next_batch();
    for _ in 0..3 {
        let next = fixed.next_batch();
        assert_eq!(next.specs, first.specs, "fixed order replays the same episodes");
    }
}

#[test]
fn family_filters_keep_and_hold_out_task_types() {
    let all = MetaEnvironment::new(&alfworld, config(TaskOrder::Fixed)).unwrap();
    let families: BTreeSet<String> = all.pool().iter().map(|(_, f)| f.clone()).collect();
    assert!(families.len() >= 4, "{families:?}");
    let held_out: Vec<String> = families.iter().take(2).cloned().collect();
    let kept = MetaEnvConfig { excluded_families: held_out.clone(), ..config(TaskOrder::Shuffled) };
    let training = MetaEnvironment::new(&alfworld, kept).unwrap();
    assert!(training.pool().iter().all(|(_, f)| !held_out.contains(f)));
    assert!(training.pool().len() < all.pool().len());
    let only = MetaEnvConfig { families: held_out.clone(), tasks_per_step: 1, ..config(TaskOrder::Fixed) };
    let evaluation = MetaEnvironment::new(&alfworld, only).unwrap();
    assert!(evaluation.pool().iter().all(|(_, f)| held_out.contains(f)));
    assert_eq!(training.pool().len() + evaluation.pool().len(), all.pool().len());
    // The played tasks are of the kept families.
    let mut training = training;
    let step = training.step(&LessonFollower::new(ExpertActor), "").unwrap();
    assert!(step.outcome.episodes.iter().all(|e| !held_out.contains(&e.trajectory.task_type)));

    let none = MetaEnvConfig { families: vec!["no_such_family".into()], ..config(TaskOrder::Fixed) };
    let err = MetaEnvironment::new(&alfworld, none).err().expect("an empty pool is refused");
    assert!(matches!(&err, RolloutError::Config(m) if m.contains("fewer than tasks_per_step")), "{err}");
}

#[test]
fn the_same_seed_gives_the_same_run_and_a_batch_replays_under_every_prompt() {
    let run = |seed: u64| {
        let mut meta = MetaEnvironment::new(&alfworld, MetaEnvConfig { seed, ..config(TaskOrder::Shuffled) }).unwrap();
        let follower = LessonFollower::new(RandomActor);
        (0..3).map(|_| meta.step(&follower, "prefer: take").unwrap()).collect::<Vec<_>>()
    };
    let (a, b, other) = (run(3), run(3), run(4));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.batch, y.batch);
        assert_eq!(x.outcome.reward, y.outcome.reward);
        for (e, f) in x.outcome.episodes.iter().zip(&y.outcome.episodes) {
            assert_eq!(e.trajectory, f.trajectory);
        }
    }
    assert_ne!(a[0].batch.tasks(), other[0].batch.tasks());

    // A GRPO group of reflections: each prompt plays the same tasks from the same first observations.
    let mut meta = MetaEnvironment::new(&alfworld, config(TaskOrder::Shuffled)).unwrap();
    let batch = meta.next_batch();
    let follower = LessonFollower::new(RandomActor);
    let outcomes: Vec<_> =
        ["", "prefer: take", "prefer: open"].iter().map(|p| meta.play(&follower, p, &batch).unwrap()).collect();
    for outcome in &outcomes[1..] {
        for (e, f) in outcome.episodes.iter().zip(&outcomes[0].episodes) {
            assert_eq!(e.trajectory.task_id, f.trajectory.task_id);
            assert_eq!(e.trajectory.steps[0].observation, f.trajectory.steps[0].observation);
        }
    }
}

/// Plays "look" when its prompt starts with the system prompt, "inventory" otherwise; records nothing else.
struct SystemReader;

impl Policy for SystemReader {
    fn name(&self) -> &str {
        "system-reader"
    }

    fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        Ok(queries
            .iter()
            .map(|q| {
                let action = if q.prompt.starts_with("LESSON: look first.\n\n") { "look" } else { "inventory" };
                format!("<action>{action}</action>")
            })
            .collect())
    }
}

#[test]
fn a_policy_follower_puts_the_system_prompt_first() {
    let prompter = Prompter::new(PromptConfig::default()).unwrap();
    let follower = PolicyFollower::new(&SystemReader, prompter.clone(), SamplingParams::greedy());
    assert_eq!(follower.name(), "system-reader");
    let config = MetaEnvConfig { tasks_per_step: 2, ..config(TaskOrder::Fixed) };
    let config = MetaEnvConfig { rollout: config.rollout.clone().with_step_budget(2), ..config };
    let mut meta = MetaEnvironment::new(&alfworld, config).unwrap();
    let batch = meta.next_batch();
    let told = meta.play(&follower, "LESSON: look first.", &batch).unwrap();
    let untold = meta.play(&follower, "", &batch).unwrap();
    assert!(told.episodes.iter().all(|e| actions(e) == ["look", "look"]));
    assert!(untold.episodes.iter().all(|e| actions(e) == ["inventory", "inventory"]));
    // The system prompt comes before a hint, and the query a trainer learns under keeps it.
    let actor = PolicyActor::new(&SystemReader, prompter).with_system_prompt("LESSON: look first.");
    let state = told.episodes[0].trajectory.state_at(0, usize::MAX).unwrap();
    assert!(actor.query(&state).prompt.starts_with("LESSON: look first.\n\n"));
}
