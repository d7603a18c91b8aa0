//! The driver on native ALFWorld: groups, seeds, batch sizes, thread counts, turns and errors.

use act_alfworld::{AlfworldConfig, AlfworldEnv};
use act_core::{
    Completion, EnvError, Environment, Policy, PolicyError, PromptConfig, Prompter, Query, QueryKind,
    RandomAdmissiblePolicy, SamplingParams, Split, TaskRef, collect_expert_trajectory, derive_seed,
};
use act_rollout::{
    EpisodeSpec, ExpertActor, InvalidActionHandling, PlayedEpisode, PolicyActor, Rollout, RolloutConfig, RolloutError,
};

fn alfworld() -> Result<AlfworldEnv, EnvError> {
    AlfworldEnv::new(AlfworldConfig::default())
}

fn prompter() -> Prompter {
    Prompter::new(PromptConfig::default()).unwrap()
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

fn play(actor: &dyn act_rollout::Actor, specs: &[EpisodeSpec], config: RolloutConfig) -> Vec<PlayedEpisode> {
    Rollout::new(&alfworld, actor).with_config(config).play(specs).unwrap()
}

/// Actions without their turns' completions, to compare what was played.
fn actions(episode: &PlayedEpisode) -> Vec<String> {
    episode.trajectory.steps.iter().map(|s| s.action.to_string()).collect()
}

/// A deterministic policy that ignores its seed: the first admissible action whose hash with the step is
/// smallest, so it wanders without looping on one action.
struct Wanderer;

impl Policy for Wanderer {
    fn name(&self) -> &str {
        "wanderer"
    }

    fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        Ok(queries
            .iter()
            .map(|q| match &q.kind {
                QueryKind::Act(state) => {
                    let pick = state
                        .admissible_actions
                        .iter()
                        .min_by_key(|a| derive_seed(a.as_str().len() as u64 * 131 + state.step_index as u64, 3))
                        .map_or("look".to_owned(), |a| a.to_string());
                    format!("<action>{pick}</action>")
                }
                _ => String::new(),
            })
            .collect())
    }
}

#[test]
fn the_expert_actor_plays_what_the_expert_loop_records() {
    let specs = EpisodeSpec::split(Split::Train, 6, 11);
    for batch_size in [1, 4] {
        let played = play(&ExpertActor, &specs, RolloutConfig::default().with_batch_size(batch_size));
        for (spec, episode) in specs.iter().zip(&played) {
            let mut env = alfworld().unwrap();
            let expert = collect_expert_trajectory(&mut env, &spec.task, spec.seed).unwrap();
            assert_eq!(episode.trajectory, expert, "batch size {batch_size}, episode {}", spec.index);
            assert_eq!(episode.spec, *spec);
            assert!(episode.won() && episode.invalid_actions() == 0);
            assert!(episode.turns.iter().all(|t| t.valid && t.parsed && !t.snapped));
        }
    }
}

#[test]
fn members_of_a_group_replay_the_same_episode_with_a_seed_independent_actor() {
    let tasks: Vec<TaskRef> = [3, 8, 21].into_iter().map(|i| TaskRef::index(Split::Train, i)).collect();
    let specs = EpisodeSpec::groups(&tasks, 4, 5);
    let wanderer = Wanderer;
    let actor = PolicyActor::new(&wanderer, prompter());
    for batch_size in [1, 5] {
        let played = play(&actor, &specs, RolloutConfig::default().with_batch_size(batch_size).with_step_budget(12));
        for group in played.chunks(4) {
            for member in group {
                assert_eq!(member.trajectory, group[0].trajectory, "group {}", member.spec.group);
                assert_eq!(member.turns, group[0].turns);
            }
        }
        assert_ne!(played[0].trajectory.task_id, played[4].trajectory.task_id);
    }
}

#[test]
fn sampled_members_of_a_group_start_alike_and_then_differ() {
    let tasks: Vec<TaskRef> = (0..4).map(|i| TaskRef::index(Split::Train, i)).collect();
    let specs = EpisodeSpec::groups(&tasks, 4, 9);
    let random = RandomAdmissiblePolicy::new();
    let actor = PolicyActor::new(&random, prompter()).with_sampling(SamplingParams::default());
    for batch_size in [1, 16] {
        let played = play(&actor, &specs, RolloutConfig::default().with_batch_size(batch_size).with_step_budget(8));
        let mut differing = 0;
        for group in played.chunks(4) {
            for member in group {
                assert_eq!(member.trajectory.steps[0].observation, group[0].trajectory.steps[0].observation);
                assert_eq!(member.trajectory.seed, group[0].trajectory.seed);
                differing += usize::from(actions(member) != actions(&group[0]));
            }
        }
        assert!(differing >= 8, "batch size {batch_size}: only {differing} of 12 members differ from the first");
    }
}

#[test]
fn the_same_seed_gives_the_same_rollout_on_any_thread_count() {
    let specs = EpisodeSpec::split(Split::EvalOutOfDistribution, 10, 3);
    let random = RandomAdmissiblePolicy::new();
    let actor = PolicyActor::new(&random, prompter()).with_sampling(SamplingParams::default());
    for batch_size in [1, 4] {
        let config = RolloutConfig::default().with_batch_size(batch_size).with_step_budget(15).with_seed(3);
        let one = in_pool(1, || play(&actor, &specs, config.clone()));
        let three = in_pool(3, || play(&actor, &specs, config.clone()));
        assert_eq!(one, three, "batch size {batch_size}");
        let other = in_pool(2, || play(&actor, &specs, config.clone().with_seed(4)));
        if batch_size > 1 {
            // Lockstep calls are seeded by the rollout's seed.
            assert_ne!(one, other);
        } else {
            // Alone, each episode samples from its own stream.
            assert_eq!(one, other);
        }
    }
}

#[test]
fn turns_keep_what_was_written_and_what_was_sent() {
    // Every other step an inadmissible action; snapping replaces it.
    struct Clumsy;
    impl Policy for Clumsy {
        fn name(&self) -> &str {
            "clumsy"
        }
        fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
            Ok(self.complete(queries, params)?.into_iter().map(|c| c.text).collect())
        }
        fn complete(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<Completion>, PolicyError> {
            Ok(queries
                .iter()
                .map(|q| {
                    let QueryKind::Act(state) = &q.kind else { unreachable!() };
                    let text = if state.step_index % 2 == 0 {
                        "<action>go to the moon</action>".to_owned()
                    } else {
                        format!("<action>{}</action>", state.admissible_actions[0])
                    };
                    Completion { text, prompt_ids: vec![1, 2], token_ids: vec![7, 8, 9], log_probs: vec![-0.5; 3] }
                })
                .collect())
        }
    }
    let specs = EpisodeSpec::split(Split::Train, 3, 0);
    let clumsy = Clumsy;
    let with_tokens = PolicyActor::new(&clumsy, prompter()).with_tokens(true);
    let as_is = play(&with_tokens, &specs, RolloutConfig::default().with_step_budget(6));
    for episode in &as_is {
        assert_eq!(episode.steps(), 6);
        assert_eq!(episode.invalid_actions(), 3);
        assert_eq!(episode.unparseable_outputs(), 0);
        assert_eq!(episode.turns[0].action.as_str(), "go to the moon");
        assert_eq!(episode.trajectory.steps[1].observation.as_str(), "Nothing happens.");
        assert!(episode.turns.iter().all(|t| t.completion.has_tokens() && t.completion.log_probs == [-0.5; 3]));
        assert!(
            episode
                .turns
                .iter()
                .enumerate()
                .all(|(i, t)| t.step == i && t.action == episode.trajectory.steps[i].action)
        );
    }
    let snapped = play(
        &with_tokens,
        &specs,
        RolloutConfig::default().with_step_budget(6).with_invalid_actions(InvalidActionHandling::SnapToNearest),
    );
    for episode in &snapped {
        assert_eq!((episode.invalid_actions(), episode.snapped_actions()), (3, 3));
        assert!(episode.trajectory.steps[0].admissible_actions.contains(&episode.turns[0].action));
        assert_eq!(episode.turns[0].completion.text, "<action>go to the moon</action>");
    }
    // Without tokens the policy's text alone is kept.
    let text_only = play(&PolicyActor::new(&clumsy, prompter()), &specs, RolloutConfig::default().with_step_budget(2));
    assert!(text_only[0].turns.iter().all(|t| !t.completion.has_tokens() && t.completion.text.starts_with("<action>")));
}

#[test]
fn prefixed_episodes_see_their_text_before_every_prompt_and_keep_its_tokens() {
    // Plays "look" when its prompt starts with tips, "inventory" otherwise; its prompt ids are the prompt's length.
    struct TipReader;
    impl Policy for TipReader {
        fn name(&self) -> &str {
            "tip-reader"
        }
        fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
            Ok(self.complete(queries, params)?.into_iter().map(|c| c.text).collect())
        }
        fn complete(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<Completion>, PolicyError> {
            Ok(queries
                .iter()
                .map(|q| {
                    let action = if q.prompt.starts_with("Tips from") { "look" } else { "inventory" };
                    Completion {
                        text: format!("<action>{action}</action>"),
                        prompt_ids: vec![0; q.prompt.len()],
                        token_ids: vec![1],
                        log_probs: vec![-0.1],
                    }
                })
                .collect())
        }
    }
    let specs = EpisodeSpec::split(Split::Train, 3, 0);
    let tips = prompter().tips("Tip 1: look around.");
    let actor = PolicyActor::new(&TipReader, prompter())
        .with_tokens(true)
        .with_prefixes([(1, tips.clone()), (2, String::new())]);
    let played = play(&actor, &specs, RolloutConfig::default().with_step_budget(3));
    assert_eq!(actions(&played[1]), ["look"; 3]);
    assert_eq!(actions(&played[0]), ["inventory"; 3]);
    assert_eq!(actions(&played[2]), ["inventory"; 3], "empty tips are no prefix");
    // The behaviour prompt holds the tips; the query a trainer learns under does not.
    for (turn, step) in played[1].turns.iter().zip(0..) {
        let state = played[1].trajectory.state_at(step, usize::MAX).unwrap();
        let free = actor.query(&state).prompt;
        assert!(!free.contains("Tips from"));
        assert_eq!(turn.completion.prompt_ids.len(), tips.len() + free.len());
    }
}

#[test]
fn an_episode_ends_after_the_same_action_repeated() {
    // "inventory" once, then "look" for ever.
    struct Stuck;
    impl Policy for Stuck {
        fn name(&self) -> &str {
            "stuck"
        }
        fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
            Ok(queries
                .iter()
                .map(|q| {
                    let QueryKind::Act(state) = &q.kind else { unreachable!() };
                    let action = if state.step_index == 0 { "inventory" } else { "look" };
                    format!("<action>{action}</action>")
                })
                .collect())
        }
    }
    let specs = EpisodeSpec::split(Split::Train, 2, 0);
    let actor = PolicyActor::new(&Stuck, prompter());
    let budget = RolloutConfig::default().with_step_budget(8);
    let unbounded = play(&actor, &specs, budget.clone());
    assert!(unbounded.iter().all(|e| e.steps() == 8));
    for batch in [1, 2] {
        let stopped = play(&actor, &specs, budget.clone().with_batch_size(batch).with_stop_after_repeats(3));
        for episode in &stopped {
            assert_eq!(actions(episode), ["inventory", "look", "look", "look"]);
            assert!(!episode.trajectory.outcome.won);
        }
    }
    // One repeat allowed stops at the first action; 0 is refused.
    let once = play(&actor, &specs, budget.clone().with_stop_after_repeats(1));
    assert!(once.iter().all(|e| e.steps() == 1));
    let err = Rollout::new(&alfworld, &actor).with_config(budget.with_stop_after_repeats(0)).play(&specs).unwrap_err();
    assert!(err.to_string().contains("stop_after_repeats is 0"), "{err}");
}

#[test]
fn errors_name_the_episode_and_the_call() {
    struct Failing;
    impl Policy for Failing {
        fn name(&self) -> &str {
            "failing"
        }
        fn generate(&self, queries: &[Query], _params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
            match queries.iter().any(|q| matches!(&q.kind, QueryKind::Act(s) if s.step_index == 2)) {
                true => Err(PolicyError::Generation { policy: "failing".into(), message: "out of memory".into() }),
                false => Ok(queries.iter().map(|_| "<action>look</action>".to_owned()).collect()),
            }
        }
    }
    let specs = EpisodeSpec::split(Split::Train, 5, 0);
    let failing = Failing;
    let actor = PolicyActor::new(&failing, prompter());
    let err = Rollout::new(&alfworld, &actor)
        .with_config(RolloutConfig::default().with_batch_size(5))
        .play(&specs)
        .unwrap_err();
    assert!(matches!(&err, RolloutError::Policy { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "episodes 0-4 at step 2 (batched call 2): policy failed: policy `failing` failed: out of memory"
    );
    let err = in_pool(2, || Rollout::new(&alfworld, &actor).play(&specs)).unwrap_err();
    assert!(err.to_string().starts_with("episode 0, step 2: policy failed"), "{err}");

    let err =
        Rollout::new(&alfworld, &ExpertActor).with_config(RolloutConfig::default().with_batch_size(0)).play(&specs);
    assert!(err.unwrap_err().to_string().contains("the batch size is 0"));
    let err =
        Rollout::new(&alfworld, &ExpertActor).with_config(RolloutConfig::default().with_step_budget(0)).play(&specs);
    assert!(err.unwrap_err().to_string().contains("the step budget is 0"));

    let missing =
        [EpisodeSpec { index: 7, task: TaskRef::Id("no-such-task".into()), seed: 0, sample_seed: 0, group: 0 }];
    let err = Rollout::new(&alfworld, &ExpertActor).play(&missing).unwrap_err();
    assert!(matches!(err, RolloutError::Env { episode: 7, .. }), "{err:?}");
    assert!(Rollout::new(&alfworld, &ExpertActor).play(&[]).unwrap().is_empty());
}

#[test]
fn an_actor_without_an_action_at_the_first_step_is_an_error() {
    struct Silent;
    impl act_rollout::Actor for Silent {
        fn name(&self) -> &str {
            "silent"
        }
        fn act(
            &self,
            views: &mut [act_rollout::View<'_>],
            _seed: u64,
        ) -> Result<Vec<Option<act_rollout::Decision>>, act_rollout::ActError> {
            // Acts once, then has nothing more to do.
            Ok(views
                .iter()
                .map(|v| {
                    (v.state.step_index == 0 && v.spec.index > 0).then(|| act_rollout::Decision::action("look".into()))
                })
                .collect())
        }
    }
    let specs = EpisodeSpec::split(Split::Train, 3, 0);
    let err = Rollout::new(&alfworld, &Silent).play(&specs).unwrap_err();
    assert_eq!(err.to_string(), "episode 0: actor `silent` has no action at its first step on environment `alfworld`");
    let played = Rollout::new(&alfworld, &Silent).play(&specs[1..]).unwrap();
    assert!(played.iter().all(|e| e.steps() == 1 && !e.won()));
    let _ = alfworld().unwrap().name();
}

#[test]
fn the_random_actor_draws_what_the_random_policy_draws() {
    let specs = EpisodeSpec::split(Split::EvalInDistribution, 6, 2);
    let random = RandomAdmissiblePolicy::new();
    let policy = PolicyActor::new(&random, prompter()).with_sampling(SamplingParams::default());
    for batch_size in [1, 3] {
        let config = RolloutConfig::default().with_batch_size(batch_size).with_step_budget(12).with_seed(2);
        let by_policy = play(&policy, &specs, config.clone());
        let by_actor = play(&act_rollout::RandomActor, &specs, config);
        for (a, b) in by_policy.iter().zip(&by_actor) {
            assert_eq!(a.trajectory, b.trajectory, "batch size {batch_size}");
            assert!(b.turns.iter().all(|t| t.valid));
        }
    }
}

#[test]
fn hinted_episodes_see_their_reference_actions_and_the_others_play_unguided() {
    // Follows the hint's numbered actions where the prompt has one, and wanders where it does not.
    struct HintFollower;
    impl Policy for HintFollower {
        fn name(&self) -> &str {
            "hint-follower"
        }
        fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
            let wandered = Wanderer.generate(queries, params)?;
            Ok(queries
                .iter()
                .zip(wandered)
                .map(|(q, wander)| {
                    let QueryKind::Act(state) = &q.kind else { unreachable!() };
                    let Some(hint) = q.prompt.strip_prefix("Reference action trajectory hint:\n") else {
                        return wander;
                    };
                    let numbered = format!("{}. ", state.step_index + 1);
                    hint.lines()
                        .find_map(|line| line.strip_prefix(numbered.as_str()))
                        .map_or(wander, |action| format!("<action>{action}</action>"))
                })
                .collect())
        }
    }
    let tasks = [TaskRef::index(Split::Train, 2)];
    let specs = EpisodeSpec::groups(&tasks, 3, 5);
    let mut env = alfworld().unwrap();
    let plan: Vec<_> = collect_expert_trajectory(&mut env, &tasks[0], specs[0].seed)
        .unwrap()
        .steps
        .into_iter()
        .map(|s| s.action)
        .collect();
    let follower = HintFollower;
    // Member 1 gets the whole plan, member 2 an empty hint (unguided), member 0 none.
    let actor = PolicyActor::new(&follower, prompter()).with_hints([(1, plan.clone()), (2, Vec::new())]);
    let played = play(&actor, &specs, RolloutConfig::default().with_step_budget(50));
    assert!(played[1].won(), "the whole plan as a hint wins");
    assert_eq!(actions(&played[1]), plan.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    let unguided =
        play(&PolicyActor::new(&follower, prompter()), &specs, RolloutConfig::default().with_step_budget(50));
    assert_eq!(actions(&played[0]), actions(&unguided[0]));
    assert_eq!(actions(&played[2]), actions(&unguided[2]));
    // The query a trainer learns under has no hint.
    let state = played[1].trajectory.state_at(0, 2).unwrap();
    assert!(!actor.query(&state).prompt.contains("hint"));
}

/// Proposes "fly to the moon" (which ALFWorld rejects) when greedy, and when sampling the first admissible action
/// if `samples_admissible` (else "fly to the moon" again); counts the sampled queries.
struct Insistent {
    samples_admissible: bool,
    sampled: std::sync::atomic::AtomicUsize,
}

impl Policy for Insistent {
    fn name(&self) -> &str {
        "insistent"
    }

    fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        if params.temperature > 0.0 {
            self.sampled.fetch_add(queries.len(), std::sync::atomic::Ordering::Relaxed);
        }
        Ok(queries
            .iter()
            .map(|q| {
                let QueryKind::Act(state) = &q.kind else { unreachable!() };
                let action = if params.temperature > 0.0 && self.samples_admissible {
                    state.admissible_actions[0].to_string()
                } else {
                    "fly to the moon".to_owned()
                };
                format!("<action>{action}</action>")
            })
            .collect())
    }
}

#[test]
fn a_rejected_action_is_not_repeated_when_the_policy_can_propose_another() {
    use act_rollout::RejectedRetry;
    use std::sync::atomic::Ordering;
    let specs = EpisodeSpec::split(Split::Train, 3, 4);
    let budget = RolloutConfig::default().with_step_budget(6);
    let policy = Insistent { samples_admissible: true, sampled: 0.into() };

    // As the policy made them: every proposal is the rejected one.
    let plain = play(&PolicyActor::new(&policy, prompter()), &specs, budget.clone());
    assert!(plain.iter().all(|e| actions(e).iter().all(|a| a == "fly to the moon") && e.invalid_actions() == 6));
    assert_eq!(policy.sampled.load(Ordering::Relaxed), 0);

    // With the rule: after each rejection the retry's sample goes instead, then the policy's own proposal (no
    // longer rejected since an action was accepted) is sent again.
    let retrying = PolicyActor::new(&policy, prompter()).with_rejected_retry(Some(RejectedRetry::default()));
    for batch in [1, 3] {
        for episode in play(&retrying, &specs, budget.clone().with_batch_size(batch)) {
            let sent = actions(&episode);
            for (step, action) in sent.iter().enumerate() {
                assert_eq!(action == "fly to the moon", step % 2 == 0, "batch {batch}, step {step}: {sent:?}");
            }
            assert_eq!(episode.invalid_actions(), 3);
            let retried = &episode.turns[1];
            assert!(retried.valid && retried.completion.text.contains(retried.action.as_str()));
        }
    }
    // One sample per retried step (3 per episode, 3 episodes, two batch sizes): the first was accepted.
    assert_eq!(policy.sampled.load(Ordering::Relaxed), 18);

    // A policy whose samples are rejected too: every attempt is made, then its own proposal is sent.
    let stubborn = Insistent { samples_admissible: false, sampled: 0.into() };
    let retry = RejectedRetry { attempts: 3, ..RejectedRetry::default() };
    let actor = PolicyActor::new(&stubborn, prompter()).with_rejected_retry(Some(retry));
    let played = play(&actor, &specs, budget);
    assert!(played.iter().all(|e| actions(e).iter().all(|a| a == "fly to the moon")));
    // Steps 1-5 of each episode retry 3 times.
    assert_eq!(stubborn.sampled.load(Ordering::Relaxed), 3 * 5 * 3);
}
