//! The expert on the test split (500 goals): success rate (reward = 1) and mean reward, printed for the record.
//!
//! Run with `cargo test -p act-webshop --test expert -- --nocapture` to see the figures.

use act_core::{Environment, Split, TaskRef, collect_expert_trajectory};
use act_webshop::{WebShopEnv, WebShopWorld};

fn measure(num_products: usize, seed: u64) -> (f64, f64, f64) {
    let world = WebShopWorld::generate(num_products, seed).unwrap();
    let mut env = WebShopEnv::new(world);
    let n = env.num_tasks(Split::Test).unwrap();
    assert_eq!(n, 500);
    let (mut wins, mut reward_sum, mut steps) = (0usize, 0.0, 0usize);
    for i in 0..n {
        let trajectory = collect_expert_trajectory(&mut env, &TaskRef::index(Split::Test, i), i as u64).unwrap();
        wins += usize::from(trajectory.outcome.won);
        reward_sum += trajectory.outcome.score;
        steps += trajectory.steps.len();
        assert!(trajectory.steps.len() <= env.step_budget());
    }
    let success = wins as f64 / n as f64;
    let mean_reward = reward_sum / n as f64;
    let mean_steps = steps as f64 / n as f64;
    eprintln!(
        "expert on test split ({n} goals, {num_products} products, seed {seed}): success rate {success:.3}, \
         mean reward {mean_reward:.4}, mean steps {mean_steps:.2}"
    );
    (success, mean_reward, mean_steps)
}

#[test]
fn expert_succeeds_on_most_test_goals_1k() {
    let (success, mean_reward, mean_steps) = measure(1_000, 0);
    assert!(success >= 0.9, "success rate {success}");
    assert!(mean_reward >= success);
    assert!(mean_steps < 15.0);
}

#[test]
fn expert_succeeds_on_most_test_goals_10k() {
    let (success, mean_reward, _) = measure(10_000, 1);
    assert!(success >= 0.9, "success rate {success}");
    assert!(mean_reward >= success);
}
