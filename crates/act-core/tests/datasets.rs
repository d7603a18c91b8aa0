//! JSONL datasets round-trip losslessly, and bad files fail with file, line and field.

use act_core::*;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    // Any unicode, including quotes, backslashes, newlines and control characters.
    any::<String>()
}

fn action() -> impl Strategy<Value = Action> {
    text().prop_map(Action)
}

fn state() -> impl Strategy<Value = AgentState> {
    (
        text(),
        text(),
        0usize..60,
        proptest::collection::vec((text(), text()), 0..3),
        text(),
        proptest::collection::vec(action(), 0..4),
    )
        .prop_map(|(task_id, task, step_index, history, observation, admissible_actions)| AgentState {
            task_id,
            task,
            step_index,
            history: history
                .into_iter()
                .map(|(o, a)| HistoryEntry { observation: Observation(o), action: Action(a) })
                .collect(),
            observation: Observation(observation),
            admissible_actions,
        })
}

fn finite() -> impl Strategy<Value = f64> {
    // JSON has no NaN or infinity; every finite f64 must survive exactly.
    any::<f64>().prop_filter("finite", |x| x.is_finite())
}

fn trajectory() -> impl Strategy<Value = Trajectory> {
    let step = (text(), proptest::collection::vec(action(), 0..3), action(), finite()).prop_map(
        |(observation, admissible_actions, action, reward)| Step {
            observation: Observation(observation),
            admissible_actions,
            action,
            reward,
        },
    );
    (
        text(),
        text(),
        text(),
        prop::sample::select(Split::ALL.to_vec()),
        text(),
        any::<u64>(),
        proptest::collection::vec(step, 0..4),
        (any::<bool>(), finite(), 0usize..100),
    )
        .prop_map(|(env, task_id, task_type, split, task, seed, steps, (won, score, steps_used))| Trajectory {
            env,
            task_id,
            task_type,
            split,
            task,
            seed,
            steps,
            outcome: Outcome { won, score, steps_used },
        })
}

fn pair() -> impl Strategy<Value = ActionPair> {
    (
        state(),
        action(),
        action(),
        any::<bool>(),
        text(),
        any::<u64>(),
        proptest::option::of(any::<f32>()),
        any::<bool>(),
    )
        .prop_filter("finite temperature", |t| t.6.is_none_or(f32::is_finite))
        .prop_map(|(state, expert_action, alternative, first, policy, seed, temperature, fallback)| ActionPair {
            provenance: PairProvenance {
                env: "alfworld".into(),
                task_id: state.task_id.clone(),
                step_index: state.step_index,
                policy,
                seed,
                temperature,
                fallback,
            },
            state,
            expert_action,
            alternative,
            order: if first { PresentedOrder::ExpertFirst } else { PresentedOrder::AlternativeFirst },
        })
}

fn target() -> impl Strategy<Value = RewardTarget> {
    prop_oneof![
        (any::<bool>(), action(), action(), proptest::collection::vec(action(), 0..3)).prop_map(|(f, a, b, adm)| {
            RewardTarget::Choice {
                expert: if f { Choice::First } else { Choice::Second },
                actions: [a, b],
                admissible: adm,
            }
        }),
        (action(), proptest::collection::vec(action(), 0..3))
            .prop_map(|(expert, admissible)| RewardTarget::NextAction { expert, admissible }),
        (any::<bool>(), finite()).prop_map(|(won, score)| RewardTarget::Episode { won, score }),
    ]
}

fn round_trip<T>(records: &[T]) -> Vec<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records.jsonl");
    write_jsonl(&path, records).unwrap();
    read_jsonl(&path).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn trajectories_round_trip(records in proptest::collection::vec(trajectory(), 0..4)) {
        prop_assert_eq!(round_trip(&records), records);
    }

    #[test]
    fn pairs_round_trip(records in proptest::collection::vec(pair(), 0..4)) {
        prop_assert_eq!(round_trip(&records), records);
    }

    #[test]
    fn samples_round_trip(
        sft in proptest::collection::vec((text(), text(), text()), 0..4),
        grpo in proptest::collection::vec((text(), text(), target()), 0..4),
    ) {
        let sft: Vec<SftSample> =
            sft.into_iter().map(|(id, prompt, completion)| SftSample { id, prompt, completion }).collect();
        prop_assert_eq!(round_trip(&sft), sft);
        let grpo: Vec<GrpoSample> =
            grpo.into_iter().map(|(id, prompt, target)| GrpoSample { id, prompt, target }).collect();
        prop_assert_eq!(round_trip(&grpo), grpo);
    }

    #[test]
    fn reading_garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("garbage.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let _ = read_jsonl::<Trajectory>(&path);
        let _ = read_jsonl::<ActionPair>(&path);
    }
}

#[test]
fn malformed_line_seven_and_missing_field_are_reported_precisely() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pairs.jsonl");
    let good = SftSample { id: "a".into(), prompt: "p".into(), completion: "c".into() };
    let mut lines: Vec<String> = (0..6).map(|_| serde_json::to_string(&good).unwrap()).collect();
    lines.push("{\"id\": \"b\", \"prompt\": \"p\", \"completion\": }".into());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let err = read_jsonl::<SftSample>(&path).unwrap_err();
    assert_eq!(err.line(), Some(7));
    assert!(err.to_string().contains("pairs.jsonl:7:"), "{err}");

    lines[6] = "{\"id\": \"b\", \"prompt\": \"p\"}".into();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let err = read_jsonl::<SftSample>(&path).unwrap_err();
    assert_eq!((err.line(), err.field()), (Some(7), Some("completion")));

    // A streaming reader yields the six good records before the error.
    let results: Vec<_> = JsonlReader::<SftSample>::open(&path).unwrap().collect();
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 6);
    assert!(results[6].is_err());
}
