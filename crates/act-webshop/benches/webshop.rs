//! Throughput on a 100k-product catalogue: search queries per second and environment steps per second.
//!
//! `cargo bench -p act-webshop --bench webshop`. The catalogue is generated (seed 0) and its index kept on disk
//! under the system temp dir, so only the first run pays for indexing. `ACT_WEBSHOP_BENCH_PRODUCTS` overrides the
//! catalogue size.

use std::sync::Arc;
use std::time::{Duration, Instant};

use act_core::{Environment, Split, TaskRef};
use act_webshop::SEARCH_RETURN_N;
use act_webshop::instruction_query;
use act_webshop::{WebShopEnv, WebShopWorld, WorldConfig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn world() -> Arc<WebShopWorld> {
    let products: usize =
        std::env::var("ACT_WEBSHOP_BENCH_PRODUCTS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let dir = std::env::temp_dir().join(format!("act-webshop-bench-index-{products}"));
    let started = Instant::now();
    let world = WorldConfig::new(products, 0).with_index_dir(dir).build().expect("bench world");
    eprintln!("world of {products} products ready in {:.1} s", started.elapsed().as_secs_f64());
    Arc::new(world)
}

fn benches(c: &mut Criterion) {
    let world = world();
    let queries: Vec<String> =
        world.goals().goals().iter().take(500).map(|g| instruction_query(&g.instruction_text)).collect();

    let mut group = c.benchmark_group("webshop_100k");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(8));

    let mut next = 0usize;
    group.bench_function("search_query", |b| {
        b.iter(|| {
            next = (next + 1) % queries.len();
            world.index().search(&queries[next], SEARCH_RETURN_N).expect("search")
        })
    });

    // Expert episodes, step by step: one iteration is one environment step (searches included), with resets
    // between episodes not timed.
    group.bench_function("env_step_expert_episode", |b| {
        b.iter_custom(|iters| {
            let mut env = WebShopEnv::new(Arc::clone(&world));
            let mut goal = 0usize;
            let mut elapsed = Duration::ZERO;
            let mut done = 0u64;
            env.reset(&TaskRef::index(Split::Test, goal), 0).expect("reset");
            while done < iters {
                if env.is_done() {
                    goal = (goal + 1) % 500;
                    env.reset(&TaskRef::index(Split::Test, goal), 0).expect("reset");
                }
                let action = env.expert_action().expect("expert").expect("an action");
                let started = Instant::now();
                env.step(action.as_str()).expect("step");
                elapsed += started.elapsed();
                done += 1;
            }
            elapsed
        })
    });

    // Click steps only (item page <-> features page), the cost of rendering without search.
    group.bench_function("env_step_click", |b| {
        let mut env = WebShopEnv::new(Arc::clone(&world))
            .with_config(act_webshop::EnvConfig { max_steps: usize::MAX, ..Default::default() });
        env.reset(&TaskRef::index(Split::Test, 0), 0).expect("reset");
        let target = world.goals().goals()[0].asin.to_lowercase();
        let title = world.catalogue().by_asin(&world.goals().goals()[0].asin).expect("target").title.to_lowercase();
        env.step(&format!("search[{title}]")).expect("search");
        env.step(&format!("click[{target}]")).expect("open");
        assert!(env.current_product().is_some(), "the target's page is open");
        let mut on_item = true;
        b.iter(|| {
            let action = if on_item { "click[features]" } else { "click[< prev]" };
            on_item = !on_item;
            env.step(action).expect("step")
        })
    });
    group.finish();
}

criterion_group!(webshop, benches);
criterion_main!(webshop);
