//! Upstream's game files played natively (`AlfworldConfig::game_dir`) against the real engine through the bridge, on
//! the same games (the repository's five PDDL games) with the same random admissible actions, in one run: the ratio
//! the two steps-per-second figures give is the native world's speed-up on real game files.
//!
//! Run: `ACT_PYTHON=<python with alfworld 0.4.2> cargo bench -p act-alfworld --bench loaded_games`. Without a usable
//! engine only the native figure is measured (the bench says so). Criterion reports elements (steps) per second;
//! resets (a new game each time an episode ends) are included on both sides.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use act_alfworld::bridge::{BridgeGrammar, GameSet, RealAlfworld, RealAlfworldConfig, default_python, probe_engine};
use act_alfworld::{AlfworldConfig, AlfworldEnv, GrammarVersion};
use act_core::{Environment, Split, TaskRef, rng_from_seed};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::RngExt;

fn games_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pddl")
}

/// `steps` random admissible actions on `env`, resetting the next game whenever an episode ends.
fn play(env: &mut dyn Environment, games: usize, steps: u64, state: &mut (usize, Vec<act_core::Action>, u64)) {
    let (index, admissible, seed) = state;
    let mut rng = rng_from_seed(*seed);
    *seed += 1;
    for _ in 0..steps {
        let action = admissible[rng.random_range(0..admissible.len())].clone();
        let transition = env.step(action.as_str()).unwrap();
        *admissible = if transition.done {
            *index = (*index + 1) % games;
            env.reset(&TaskRef::index(Split::Train, *index), 0).unwrap().admissible_actions.unwrap()
        } else {
            transition.admissible_actions.unwrap()
        };
        black_box(&transition.observation);
    }
}

fn loaded_games(c: &mut Criterion) {
    let mut group = c.benchmark_group("alfworld_loaded_games");
    let config = AlfworldConfig::default().with_grammar(GrammarVersion::V03).with_game_dir(games_dir());
    let mut native = AlfworldEnv::new(config).unwrap();
    let games = native.num_tasks(Split::Train).unwrap();
    let first = native.reset(&TaskRef::index(Split::Train, 0), 0).unwrap().admissible_actions.unwrap();
    let mut state = (0, first, 0);
    const NATIVE_STEPS: u64 = 1_000;
    group.throughput(Throughput::Elements(NATIVE_STEPS));
    group.bench_function("native/random_admissible_steps", |b| {
        b.iter(|| play(&mut native, games, NATIVE_STEPS, &mut state))
    });

    let python = default_python();
    match probe_engine(&python, Duration::from_secs(180)) {
        Err(error) => eprintln!("the real engine is not usable with `{python}` ({error}): only the native figure"),
        Ok(_) => {
            let set = GameSet::from_dir(games_dir(), Split::Train).unwrap();
            let config = RealAlfworldConfig::default().with_python(&python).with_grammar(BridgeGrammar::V03);
            let mut real = RealAlfworld::new(config, set).unwrap();
            let first = real.reset(&TaskRef::index(Split::Train, 0), 0).unwrap().admissible_actions.unwrap();
            let mut state = (0, first, 0);
            const REAL_STEPS: u64 = 20;
            group.throughput(Throughput::Elements(REAL_STEPS));
            group.sample_size(10).measurement_time(Duration::from_secs(20));
            group.bench_function("real_engine/random_admissible_steps", |b| {
                b.iter(|| play(&mut real, games, REAL_STEPS, &mut state))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, loaded_games);
criterion_main!(benches);
