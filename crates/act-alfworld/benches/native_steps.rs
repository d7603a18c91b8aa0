//! Native ALFWorld steps per second on one core: random admissible actions through the
//! `Environment` API (resets included whenever an episode ends), plus resets alone, and the two ways of taking an
//! action at a state deep in an episode: restoring a snapshot, or replaying the episode from a reset.
//!
//! Run: `cargo bench -p act-alfworld --bench native_steps`. Criterion reports the throughput in
//! elements (steps) per second.

use std::hint::black_box;

use act_alfworld::{AlfworldConfig, AlfworldEnv, GrammarVersion};
use act_core::{Environment, Split, TaskRef, rng_from_seed};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::RngExt;

const STEPS_PER_ITER: u64 = 1_000;
const TRAIN_GAMES: usize = 3_553;

fn random_admissible_steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("alfworld_native");
    group.throughput(Throughput::Elements(STEPS_PER_ITER));
    for grammar in [GrammarVersion::V03, GrammarVersion::V04] {
        let mut env = AlfworldEnv::new(AlfworldConfig::default().with_grammar(grammar)).expect("valid config");
        let mut rng = rng_from_seed(0);
        let mut index = 0usize;
        let mut admissible = env.reset(&TaskRef::index(Split::Train, index), 0).unwrap().admissible_actions.unwrap();
        group.bench_function(format!("random_admissible_steps/{grammar}"), |b| {
            b.iter(|| {
                for _ in 0..STEPS_PER_ITER {
                    let action = &admissible[rng.random_range(0..admissible.len())];
                    let transition = env.step(action.as_str()).unwrap();
                    admissible = if transition.done {
                        index = (index + 1) % TRAIN_GAMES;
                        env.reset(&TaskRef::index(Split::Train, index), 0).unwrap().admissible_actions.unwrap()
                    } else {
                        transition.admissible_actions.unwrap()
                    };
                    black_box(&transition.observation);
                }
            })
        });
    }
    group.finish();
}

fn resets(c: &mut Criterion) {
    let mut group = c.benchmark_group("alfworld_native");
    group.throughput(Throughput::Elements(1));
    let mut env = AlfworldEnv::default();
    let mut index = 0usize;
    group.bench_function("reset", |b| {
        b.iter(|| {
            index = (index + 1) % TRAIN_GAMES;
            black_box(env.reset(&TaskRef::index(Split::Train, index), 0).unwrap())
        })
    });
    group.finish();
}

/// One branch off the 15th state of an expert episode: restore a snapshot and step, against reset, replay 15 expert
/// actions and step (what `act_rollout::branch_outcomes` does without snapshots).
fn branch_at_a_deep_state(c: &mut Criterion) {
    const DEPTH: usize = 15;
    let mut group = c.benchmark_group("alfworld_native");
    group.throughput(Throughput::Elements(1));
    let mut env = AlfworldEnv::default();
    let (task, mut prefix) = (0..TRAIN_GAMES)
        .find_map(|index| {
            let task = TaskRef::index(Split::Train, index);
            let trajectory = act_core::collect_expert_trajectory(&mut env, &task, 0).unwrap();
            (trajectory.steps.len() > DEPTH).then_some((task, trajectory.steps))
        })
        .expect("an expert episode longer than the depth");
    prefix.truncate(DEPTH);
    env.reset(&task, 0).unwrap();
    for step in &prefix {
        env.step(step.action.as_str()).unwrap();
    }
    let snapshot = env.snapshot().unwrap();
    group.bench_function("branch/snapshot_restore", |b| {
        b.iter(|| {
            env.restore(&snapshot).unwrap();
            black_box(env.step("look").unwrap())
        })
    });
    group.bench_function(format!("branch/replay_{DEPTH}_steps"), |b| {
        b.iter(|| {
            env.reset(&task, 0).unwrap();
            for step in &prefix {
                env.step(step.action.as_str()).unwrap();
            }
            black_box(env.step("look").unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, random_admissible_steps, resets, branch_at_a_deep_state);
criterion_main!(benches);
