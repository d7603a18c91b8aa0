//! Pair builds end to end on small hand-built trajectories: determinism across runs and thread counts, the
//! all-expert case, balance, modes, provenance and errors.

use act_core::{
    Action, ActionPair, Outcome, Policy, PolicyError, PresentedOrder, Query, RandomAdmissiblePolicy, ReplayPolicy,
    SamplingParams, Split, Step, Trajectory, actions_match, derive_seed, read_jsonl, rng_from_seed,
};
use act_pairs::{PairBuilder, PairConfig, PairError, PairMode, PairSet, PairStats, select_alternatives};
use proptest::prelude::*;
use rand::RngExt;

const ROOMS: [&str; 6] = ["kitchen", "hall", "garden", "cellar", "attic", "study"];

/// A trajectory of `len` steps whose states list five admissible actions, the expert's among them.
fn trajectory(index: usize, len: usize) -> Trajectory {
    let steps = (0..len)
        .map(|s| {
            let admissible: Vec<Action> =
                ROOMS.iter().skip((index + s) % 2).take(5).map(|r| Action::from(format!("go to {r}"))).collect();
            Step {
                observation: format!("task {index} step {s}: you are somewhere.").into(),
                action: admissible[(index * 7 + s) % admissible.len()].clone(),
                admissible_actions: admissible,
                reward: 0.0,
            }
        })
        .collect();
    Trajectory {
        env: "toy".into(),
        task_id: format!("task-{index}"),
        task_type: "walk".into(),
        split: Split::Train,
        task: "walk around.".into(),
        seed: index as u64,
        steps,
        outcome: Outcome { won: true, score: 1.0, steps_used: len },
    }
}

fn trajectories(count: usize) -> Vec<Trajectory> {
    (0..count).map(|i| trajectory(i, 3 + i % 4)).collect()
}

fn config() -> PairConfig {
    PairConfig::default().with_seed(2024).with_progress(false)
}

fn build(config: PairConfig, policy: impl Policy, trajectories: &[Trajectory], epoch: u64) -> PairSet {
    PairBuilder::new(config, policy).unwrap().build(trajectories, epoch).unwrap()
}

fn jsonl_bytes(set: &PairSet) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pairs.jsonl");
    set.write_jsonl(&path).unwrap();
    std::fs::read(path).unwrap()
}

fn check_sample_accounting(stats: &PairStats) {
    assert_eq!(stats.samples_drawn, stats.filtered.total() + stats.surplus + stats.pairs_from_samples, "{stats:?}");
    assert_eq!(stats.pairs, stats.pairs_from_samples + stats.fallbacks);
    assert_eq!(stats.states_seen, stats.states_with_pairs + stats.states_without_pairs);
}

#[test]
fn same_seed_gives_byte_identical_jsonl_across_runs_and_thread_counts() {
    let data = trajectories(24);
    let config = config().with_k(3).with_max_pairs_per_state(2).with_fallback(true);
    let in_pool = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| build(config.clone(), RandomAdmissiblePolicy::new(), &data, 0))
    };
    let one = in_pool(1);
    let four = in_pool(4);
    assert!(!one.pairs.is_empty());
    let bytes = jsonl_bytes(&one);
    assert_eq!(bytes, jsonl_bytes(&in_pool(1)), "two runs, same seed");
    assert_eq!(bytes, jsonl_bytes(&four), "1 vs 4 threads");
    let sequential = build(config.clone().with_parallel(false), RandomAdmissiblePolicy::new(), &data, 0);
    assert_eq!(bytes, jsonl_bytes(&sequential), "parallel vs sequential");
    assert_eq!(one.stats, four.stats);
    assert_ne!(bytes, jsonl_bytes(&build(config.with_seed(2025), RandomAdmissiblePolicy::new(), &data, 0)));
}

#[test]
fn written_pairs_read_back_identically() {
    let data = trajectories(5);
    let set = build(config(), RandomAdmissiblePolicy::new(), &data, 0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/pairs.jsonl");
    let stats =
        PairBuilder::new(config(), RandomAdmissiblePolicy::new()).unwrap().build_to_file(&data, 0, &path).unwrap();
    assert_eq!(stats, set.stats);
    assert_eq!(read_jsonl::<ActionPair>(&path).unwrap(), set.pairs);
}

#[test]
fn samples_all_equal_to_the_expert_are_dropped_without_fallback() {
    let data = trajectories(4);
    // The replay policy answers every query with the expert's recorded action.
    let set = build(config().with_k(5), ReplayPolicy::new(&data), &data, 0);
    let states: usize = data.iter().map(|t| t.steps.len()).sum();
    assert!(set.pairs.is_empty());
    assert_eq!(set.stats.filtered.equal_to_expert, 5 * states);
    assert_eq!((set.stats.states_without_pairs, set.stats.fallbacks), (states, 0));
    assert_eq!(set.stats.expert_first_fraction, None);
    check_sample_accounting(&set.stats);
}

#[test]
fn samples_all_equal_to_the_expert_fall_back_when_configured() {
    let data = trajectories(4);
    let set = build(config().with_k(5).with_fallback(true), ReplayPolicy::new(&data), &data, 0);
    let states: usize = data.iter().map(|t| t.steps.len()).sum();
    assert_eq!((set.pairs.len(), set.stats.fallbacks, set.stats.states_with_pairs), (states, states, states));
    for pair in &set.pairs {
        assert!(pair.provenance.fallback);
        assert_eq!(pair.provenance.temperature, None);
        assert!(!actions_match(pair.alternative.as_str(), pair.expert_action.as_str()));
        assert!(pair.state.admissible_actions.contains(&pair.alternative));
    }
    check_sample_accounting(&set.stats);
}

#[test]
fn fallback_needs_admissible_actions() {
    let mut data = trajectories(2);
    for step in data.iter_mut().flat_map(|t| t.steps.iter_mut()) {
        step.admissible_actions.clear();
    }
    let set = build(config().with_fallback(true), ReplayPolicy::new(&data), &data, 0);
    assert!(set.pairs.is_empty());
    assert_eq!(set.stats.states_without_pairs, set.stats.states_seen);
}

#[test]
fn presented_order_is_balanced() {
    let data = trajectories(40);
    for seed in 0..6 {
        let set = build(config().with_seed(seed).with_fallback(true), RandomAdmissiblePolicy::new(), &data, 0);
        let n = set.pairs.len();
        let first = set.pairs.iter().filter(|p| p.order == PresentedOrder::ExpertFirst).count();
        assert!(n > 100);
        assert!(first == n / 2 || first == n.div_ceil(2), "seed {seed}: {first} of {n}");
        assert_eq!(set.stats.expert_first, first);
        assert_eq!(set.stats.expert_first_fraction, Some(first as f64 / n as f64));
        // Both orders occur in the first and in the second half: the order is shuffled, not blocked.
        for half in set.pairs.chunks(n.div_ceil(2)) {
            assert!(half.iter().any(|p| p.order == PresentedOrder::ExpertFirst));
            assert!(half.iter().any(|p| p.order == PresentedOrder::AlternativeFirst));
        }
    }
}

#[test]
fn fixed_mode_repeats_and_resampled_mode_refreshes() {
    let data = trajectories(10);
    let fixed = PairBuilder::new(config(), RandomAdmissiblePolicy::new()).unwrap();
    assert_eq!(fixed.build(&data, 0).unwrap().pairs, fixed.build(&data, 7).unwrap().pairs);
    let resampled = PairBuilder::new(config().with_mode(PairMode::Resampled), RandomAdmissiblePolicy::new()).unwrap();
    let epoch0 = resampled.build(&data, 0).unwrap();
    let epoch1 = resampled.build(&data, 1).unwrap();
    assert_eq!(epoch0.pairs, fixed.build(&data, 0).unwrap().pairs, "epoch 0 is the fixed set");
    assert_ne!(epoch0.pairs, epoch1.pairs);
    assert_eq!(epoch1.pairs, resampled.build(&data, 1).unwrap().pairs, "deterministic per epoch");
    assert_eq!((epoch1.stats.epoch, epoch1.stats.mode), (1, PairMode::Resampled));
}

#[test]
fn provenance_names_the_sample_and_its_seed() {
    let data = trajectories(6);
    let set = build(config().with_k(1).with_temperature(0.7), RandomAdmissiblePolicy::new(), &data, 0);
    assert!(!set.pairs.is_empty());
    for pair in &set.pairs {
        let p = &pair.provenance;
        let t = &data[p.task_id.trim_start_matches("task-").parse::<usize>().unwrap()];
        assert_eq!(
            (p.env.as_str(), p.policy.as_str(), p.temperature, p.fallback),
            ("toy", "random-admissible", Some(0.7), false)
        );
        assert_eq!(pair.expert_action, t.steps[p.step_index].action);
        assert_eq!(pair.state.step_index, p.step_index);
        // The random policy picks uniformly with the query's seed: the recorded seed reproduces the pick.
        let admissible = &pair.state.admissible_actions;
        let pick = rng_from_seed(p.seed).random_range(0..admissible.len());
        assert_eq!(admissible[pick], pair.alternative);
    }
    let seeds: std::collections::HashSet<u64> = set.pairs.iter().map(|p| p.provenance.seed).collect();
    assert_eq!(seeds.len(), set.pairs.len());
}

#[test]
fn up_to_m_pairs_per_state() {
    let data = trajectories(8);
    let one = build(config().with_k(6), RandomAdmissiblePolicy::new(), &data, 0);
    let three = build(config().with_k(6).with_max_pairs_per_state(3), RandomAdmissiblePolicy::new(), &data, 0);
    assert!(three.pairs.len() > one.pairs.len());
    assert!(three.stats.surplus < one.stats.surplus);
    for set in [&one, &three] {
        check_sample_accounting(&set.stats);
    }
    let mut per_state = std::collections::HashMap::new();
    for pair in &three.pairs {
        *per_state.entry((pair.provenance.task_id.clone(), pair.provenance.step_index)).or_insert(0) += 1;
    }
    assert!(per_state.values().all(|&n| n <= 3));
    assert!(per_state.values().any(|&n| n > 1));
    // The first survivor of each state is the single pair of the M = 1 build.
    assert!(one.pairs.iter().all(|p| three.pairs.iter().any(|q| q.provenance.seed == p.provenance.seed)));
}

/// Answers every query with the same completions, in turn.
struct Canned(Vec<&'static str>, usize);

impl Policy for Canned {
    fn name(&self) -> &str {
        "canned"
    }

    fn generate(&self, queries: &[Query], _: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        Ok((0..queries.len() + self.1).map(|i| self.0[i % self.0.len()].to_owned()).collect())
    }
}

#[test]
fn unparseable_and_inadmissible_samples_are_counted() {
    let data = trajectories(3);
    let policy = Canned(vec!["I would go to the kitchen", "<action>fly to the moon</action>"], 0);
    let set = build(config().with_k(4), policy, &data, 0);
    let samples = set.stats.samples_drawn;
    assert!(set.pairs.is_empty());
    assert_eq!((set.stats.filtered.unparseable, set.stats.filtered.inadmissible), (samples / 2, samples / 2));

    let policy = Canned(vec!["<action>fly to the moon</action>"], 0);
    let set = build(config().with_k(4).with_filter_inadmissible(false), policy, &data, 0);
    assert_eq!(set.pairs.len(), set.stats.states_seen);
    assert_eq!(set.stats.filtered.duplicate, 3 * set.stats.states_seen);
    assert!(set.pairs.iter().all(|p| p.alternative.as_str() == "fly to the moon"));
}

#[test]
fn policy_failures_and_broken_contracts_are_errors() {
    let mut data = trajectories(2);
    data[1].steps[2].admissible_actions.clear();
    let err = PairBuilder::new(config(), RandomAdmissiblePolicy::new()).unwrap().build(&data, 0).unwrap_err();
    assert!(matches!(err, PairError::Policy { ref task_id, step_index: 2, .. } if task_id == "task-1"), "{err}");
    assert!(err.to_string().contains("task `task-1` step 2"), "{err}");

    let err = PairBuilder::new(config(), Canned(vec!["<action>x</action>"], 1)).unwrap().build(&data, 0).unwrap_err();
    assert!(err.to_string().contains("returned 5 completions for 4 queries"), "{err}");

    assert!(matches!(PairBuilder::new(config().with_k(0), RandomAdmissiblePolicy::new()), Err(PairError::Config(_))));
    let bad_prompt = act_core::PromptConfig::default()
        .with_templates(act_core::PromptTemplates { act_plain: "{nope}".into(), ..Default::default() });
    assert!(matches!(
        PairBuilder::new(config().with_prompt(bad_prompt), RandomAdmissiblePolicy::new()),
        Err(PairError::Template(_))
    ));
}

#[test]
fn empty_input_builds_an_empty_set() {
    let set = build(config(), RandomAdmissiblePolicy::new(), &[], 0);
    assert!(set.pairs.is_empty());
    assert_eq!(set.stats.trajectories, 0);
    assert!(set.stats.to_string().contains("| pairs | 0 |"));
}

#[test]
fn stats_serialise_and_render() {
    let data = trajectories(6);
    let set = build(config().with_k(4).with_fallback(true), RandomAdmissiblePolicy::new(), &data, 0);
    check_sample_accounting(&set.stats);
    let json = serde_json::to_string(&set.stats).unwrap();
    assert_eq!(serde_json::from_str::<PairStats>(&json).unwrap(), set.stats);
    let markdown = set.stats.to_string();
    assert!(markdown.contains(&format!("| samples drawn | {} |", set.stats.samples_drawn)), "{markdown}");
    assert!(markdown.contains("| expert is Action 1 |"));
    let _ = derive_seed(0, 0);
}

fn completion() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(
            prop_oneof![
                Just("<action>".to_owned()),
                Just("</action>".to_owned()),
                Just("<think>".to_owned()),
                Just("</think>".to_owned()),
                Just("go to kitchen".to_owned()),
                "[ a-zA-Z1é\u{0}-\u{7f}]{0,8}",
            ],
            0..8
        )
        .prop_map(|parts| parts.concat()),
    ]
}

proptest! {
    #[test]
    fn any_completions_are_filtered_without_panicking(
        completions in proptest::collection::vec(completion(), 0..8),
        max_kept in 1usize..4, require_reasoning in any::<bool>(), filter_inadmissible in any::<bool>(),
    ) {
        let state = trajectory(0, 1).state_at(0, 2).unwrap();
        let expert = state.admissible_actions[0].clone();
        let options = act_pairs::FilterOptions { require_reasoning, filter_inadmissible, max_kept };
        let selection = select_alternatives(&state, &expert, &completions, options);
        prop_assert_eq!(selection.filtered.total() + selection.surplus + selection.kept.len(), completions.len());
        prop_assert!(selection.kept.len() <= max_kept);
        for (_, action) in &selection.kept {
            prop_assert!(!actions_match(action.as_str(), expert.as_str()));
            prop_assert!(!action.as_str().trim().is_empty());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_build_accounts_for_every_sample_and_is_balanced(
        seed in any::<u64>(), k in 1usize..6, m in 1usize..4, fallback in any::<bool>(), count in 0usize..8,
    ) {
        let data = trajectories(count);
        let config = config().with_seed(seed).with_k(k).with_max_pairs_per_state(m).with_fallback(fallback);
        let set = build(config, RandomAdmissiblePolicy::new(), &data, 0);
        check_sample_accounting(&set.stats);
        prop_assert_eq!(set.stats.samples_drawn, k * data.iter().map(|t| t.steps.len()).sum::<usize>());
        let n = set.pairs.len();
        prop_assert!(set.stats.expert_first == n / 2 || set.stats.expert_first == n.div_ceil(2));
        if !fallback {
            prop_assert_eq!(set.stats.fallbacks, 0);
        }
        for pair in &set.pairs {
            prop_assert!(!actions_match(pair.alternative.as_str(), pair.expert_action.as_str()));
            prop_assert!(pair.state.admissible_actions.contains(&pair.alternative));
        }
    }
}
