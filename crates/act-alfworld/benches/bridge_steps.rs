//! Real ALFWorld engine steps per second through the bridge (`RealAlfworld`), random admissible actions, on the
//! repository's PDDL games. Only the step calls are timed; resets between episodes are not.
//!
//! Needs the engine for `$ACT_PYTHON` (`pip install alfworld==0.4.2 "textworld[pddl]==1.7.0"`); without it the bench
//! prints "skipped: ..." and measures nothing.
//!
//! Run: `cargo bench -p act-alfworld --bench bridge_steps`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use act_alfworld::bridge::{GameSet, RealAlfworld, RealAlfworldConfig, default_python, probe_engine};
use act_core::{Environment, Split, TaskRef, rng_from_seed};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::RngExt;

fn real_engine_steps(c: &mut Criterion) {
    let python = default_python();
    if let Err(error) = probe_engine(&python, Duration::from_secs(180)) {
        eprintln!("skipped: bridge_steps: the real ALFWorld engine is not usable with `{python}` ({error})");
        return;
    }
    let games = GameSet::from_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pddl"), Split::Train)
        .expect("the repository's PDDL games");
    let count = games.len(Split::Train).expect("train split");
    // The expert is off: this measures the engine, as an agent rollout uses it.
    let config = RealAlfworldConfig::default().with_python(&python).with_expert(false);
    let mut env = RealAlfworld::new(config, games).expect("environment");
    let mut rng = rng_from_seed(7);
    let mut episode = 0usize;
    let mut over = true;

    let mut group = c.benchmark_group("bridge_steps");
    group.throughput(Throughput::Elements(1));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(3));
    group.measurement_time(Duration::from_secs(30));
    group.bench_function("real_engine_random_admissible_step", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                if over {
                    env.reset(&TaskRef::index(Split::Train, episode % count), episode as u64).expect("reset");
                    episode += 1;
                    over = false;
                }
                let admissible = env.admissible_actions().expect("admissible actions");
                let action = admissible[rng.random_range(0..admissible.len())].clone();
                let start = Instant::now();
                let transition = env.step(action.as_str()).expect("step");
                timed += start.elapsed();
                over = transition.done;
            }
            timed
        })
    });
    group.finish();
}

criterion_group!(benches, real_engine_steps);
criterion_main!(benches);
