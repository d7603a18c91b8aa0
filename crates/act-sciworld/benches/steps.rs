//! Steps per second through the Rust client, next to the official Python wrapper's `env.step`.
//!
//! Both replay the gold path of the same task and variation (default `chemistry-mix` variation 0;
//! set `SCIWORLD_BENCH_TASK` / `SCIWORLD_BENCH_VARIATION`), timing only step calls:
//! - `rust_step_lean`: one step (step + score + completion + moves, four py4j calls);
//! - `rust_step_full`: what the Python wrapper's `step` computes: the above plus look, inventory,
//!   task description and the valid action-object combinations.
//!
//! After criterion's runs a report times each for `SCIWORLD_BENCH_SECONDS` (default 20) and runs
//! `benches/python_step.py` with `$ACT_PYTHON` (default python3) for the same time, then prints
//! steps/s and the ratios. Without the jar the bench says so and exits.

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use act_core::Environment;
use act_sciworld::{JarLocation, SciWorldConfig, SciWorldEnv};
use criterion::{Criterion, Throughput};

struct Bench {
    env: SciWorldEnv,
    task: String,
    variation: usize,
    gold: Vec<String>,
    next: usize,
    done: bool,
    full: bool,
}

impl Bench {
    fn new(task: &str, variation: usize, full: bool) -> Self {
        let config = SciWorldConfig::default().with_admissible_actions(full).with_step_limit(10_000);
        let mut env = SciWorldEnv::new(config).expect("simulator starts");
        env.reset_variation(task, variation, true).expect("reset");
        let gold = env.gold_actions().expect("gold path").to_vec();
        Self { env, task: task.to_string(), variation, gold, next: 0, done: false, full }
    }

    /// Times `n` steps along the gold path, restarting the episode (untimed) when it ends (the
    /// task can complete before the last gold action).
    fn timed_steps(&mut self, n: u64) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..n {
            if self.done || self.next == self.gold.len() {
                self.env.reset_variation(&self.task, self.variation, false).expect("reset");
                self.next = 0;
                self.done = false;
            }
            let start = Instant::now();
            let t = self.env.step(&self.gold[self.next]).expect("step");
            if self.full {
                black_box(self.env.look().expect("look"));
                black_box(self.env.inventory().expect("inventory"));
                black_box(self.env.task_description().expect("task description"));
            }
            total += start.elapsed();
            self.done = t.done;
            black_box(t);
            self.next += 1;
        }
        total
    }

    fn rate(&mut self, seconds: f64) -> f64 {
        let mut steps = 0u64;
        let mut time = Duration::ZERO;
        while time.as_secs_f64() < seconds {
            time += self.timed_steps(1);
            steps += 1;
        }
        steps as f64 / time.as_secs_f64()
    }
}

fn python_rate(task: &str, variation: usize, seconds: f64) -> Result<f64, String> {
    let python = std::env::var("ACT_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/python_step.py");
    let out = Command::new(&python)
        .arg(&script)
        .args([task, &variation.to_string(), &seconds.to_string()])
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{python} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
    json["steps_per_sec"].as_f64().ok_or_else(|| format!("no steps_per_sec in {line}"))
}

fn main() {
    if let Err(e) = JarLocation::find(None) {
        eprintln!("skipped: the ScienceWorld jar is unavailable ({e})");
        return;
    }
    let task = std::env::var("SCIWORLD_BENCH_TASK").unwrap_or_else(|_| "chemistry-mix".into());
    let variation: usize = std::env::var("SCIWORLD_BENCH_VARIATION").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let seconds: f64 = std::env::var("SCIWORLD_BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20.0);

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10))
        .configure_from_args();
    let mut group = criterion.benchmark_group("sciworld");
    group.throughput(Throughput::Elements(1));
    for (name, full) in [("rust_step_lean", false), ("rust_step_full", true)] {
        let mut bench = Bench::new(&task, variation, full);
        group.bench_function(name, |b| b.iter_custom(|iters| bench.timed_steps(iters)));
    }
    group.finish();
    criterion.final_summary();

    println!("\n== steps/s on {task} variation {variation} (gold path replayed, {seconds} s each) ==");
    let lean = Bench::new(&task, variation, false).rate(seconds);
    println!("rust  step (lean: step, score, completed, moves)   {lean:10.1} steps/s");
    let full = Bench::new(&task, variation, true).rate(seconds);
    println!("rust  step (full: as the Python wrapper's step)     {full:10.1} steps/s");
    match python_rate(&task, variation, seconds) {
        Ok(py) => {
            println!("python env.step (scienceworld wrapper)              {py:10.1} steps/s");
            println!("ratio rust full / python: {:.2}x", full / py);
            println!("ratio rust lean / python: {:.2}x", lean / py);
        }
        Err(e) => println!("python env.step: unavailable ({e})"),
    }
}
