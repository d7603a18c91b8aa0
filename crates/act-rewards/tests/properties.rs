//! Property tests: no completion panics a reward, and every reward stays in its declared range for any valid
//! configuration, with `total` the sum of the components.

use act_core::{Choice, Reward, RewardFn, RewardTarget};
use act_rewards::{
    ComparisonConfig, EpisodeConfig, EpisodeScoring, FormatRequirements, LengthScope, LengthUnit, NextActionConfig,
};
use proptest::prelude::*;

/// Arbitrary text, or tag soup that comes close to well-formed completions.
fn completion() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        // Well-formed answers and actions, so the scoring branches (not only the failures) are exercised.
        ("[a-z ]{0,30}", 1u8..=2, prop_oneof![Just("look"), Just("go to fridge 1"), Just("fly")], any::<bool>())
            .prop_map(|(thought, n, action, think)| {
                let think = if think { format!("<think>{thought}</think>") } else { String::new() };
                format!("{think}<answer>{n}</answer><action>{action}</action>")
            }),
        proptest::collection::vec(
            prop_oneof![
                Just("<think>".to_owned()),
                Just("</think>".to_owned()),
                Just("<action>".to_owned()),
                Just("</action>".to_owned()),
                Just("<answer>".to_owned()),
                Just("</answer>".to_owned()),
                Just("look".to_owned()),
                Just("go to fridge 1".to_owned()),
                Just("Action 2".to_owned()),
                "[ a-z12é.)\u{0}-\u{7f}]{0,8}",
            ],
            0..10
        )
        .prop_map(|parts| parts.concat()),
    ]
}

fn format() -> impl Strategy<Value = FormatRequirements> {
    (
        any::<bool>(),
        proptest::option::of(0usize..20),
        proptest::option::of(0usize..40),
        prop_oneof![Just(LengthUnit::Chars), Just(LengthUnit::Words)],
        prop_oneof![Just(LengthScope::Completion), Just(LengthScope::Reasoning)],
    )
        .prop_map(|(require_think, min, max, length_unit, length_scope)| {
            // Keep the bounds consistent: inconsistent ones are rejected by `build`, tested elsewhere.
            let (min_length, max_length) = match (min, max) {
                (Some(a), Some(b)) => (Some(a.min(b)), Some(a.max(b))),
                other => other,
            };
            FormatRequirements { require_think, min_length, max_length, length_unit, length_scope }
        })
}

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), -10.0f64..10.0, Just(1e-17), Just(0.1)]
}

fn actions() -> impl Strategy<Value = Vec<act_core::Action>> {
    proptest::collection::vec(prop_oneof![Just("look"), Just("go to fridge 1"), Just("Go To Fridge 1 ")], 0..3)
        .prop_map(|v| v.into_iter().map(act_core::Action::from).collect())
}

fn check(reward: &dyn RewardFn, scored: Reward) -> Result<(), TestCaseError> {
    let (lo, hi) = reward.range();
    prop_assert!(lo <= hi, "{}: empty range [{lo}, {hi}]", reward.name());
    prop_assert!(scored.total >= lo && scored.total <= hi, "{}: {} outside [{lo}, {hi}]", reward.name(), scored.total);
    let sum: f64 = scored.components.values().sum();
    prop_assert_eq!(sum, scored.total);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn comparison_stays_in_range(
        text in completion(), format in format(), fw in weight(), aw in weight(),
        first in any::<bool>(), admissible in actions(),
    ) {
        let reward = ComparisonConfig::default()
            .with_format_weight(fw).with_admissibility_weight(aw).with_format(format).build().unwrap();
        let expert = if first { Choice::First } else { Choice::Second };
        let target = RewardTarget::Choice { expert, actions: ["look".into(), "go to fridge 1".into()], admissible };
        check(&reward, reward.score(&target, &text).unwrap())?;
    }

    #[test]
    fn next_action_stays_in_range(
        text in completion(), format in format(), partial in weight(), penalty in 0.0f64..10.0,
        admissible in actions(),
    ) {
        let reward = NextActionConfig::default()
            .with_partial_credit(partial).with_missing_action_penalty(penalty).with_format(format).build().unwrap();
        let target = RewardTarget::NextAction { expert: "go to fridge 1".into(), admissible };
        check(&reward, reward.score(&target, &text).unwrap())?;
    }

    #[test]
    fn episode_stays_in_range(
        text in completion(), format in format(), by_score in any::<bool>(), w in weight(), penalty in 0.0f64..10.0,
        a in -200.0f64..200.0, b in -200.0f64..200.0, won in any::<bool>(),
        score in prop_oneof![any::<f64>(), -300.0f64..300.0],
    ) {
        let mut config = if by_score { EpisodeConfig::score(w, a.min(b), a.max(b)) } else { EpisodeConfig::won(w) };
        config = config.with_invalid_output_penalty(penalty).with_format(format);
        prop_assert_eq!(config.scoring, if by_score { EpisodeScoring::Score } else { EpisodeScoring::Won });
        let reward = config.build().unwrap();
        check(&reward, reward.score(&RewardTarget::Episode { won, score }, &text).unwrap())?;
    }

    #[test]
    fn format_checks_never_panic(text in completion(), format in format()) {
        let _ = format.check(&text);
    }

    #[test]
    fn configs_round_trip_through_json(fw in weight(), aw in weight(), format in format()) {
        let config = ComparisonConfig::default().with_format_weight(fw).with_admissibility_weight(aw).with_format(format);
        let json = serde_json::to_string(&config).unwrap();
        prop_assert_eq!(serde_json::from_str::<ComparisonConfig>(&json).unwrap(), config);
    }
}

#[test]
fn a_reward_set_can_be_used_as_trait_objects() {
    let rewards: Vec<Box<dyn RewardFn>> = vec![
        Box::new(act_rewards::ComparisonReward::default()),
        Box::new(act_rewards::NextActionReward::default()),
        Box::new(act_rewards::EpisodeReward::default()),
    ];
    let names: Vec<&str> = rewards.iter().map(|r| r.name()).collect();
    assert_eq!(names, ["comparison", "next_action", "episode"]);
    // Each rejects the other two kinds of target.
    let targets = [
        RewardTarget::Choice { expert: Choice::First, actions: ["a".into(), "b".into()], admissible: vec![] },
        RewardTarget::NextAction { expert: "a".into(), admissible: vec![] },
        RewardTarget::Episode { won: true, score: 1.0 },
    ];
    for (i, reward) in rewards.iter().enumerate() {
        for (j, target) in targets.iter().enumerate() {
            assert_eq!(
                reward.score(target, "<answer>1</answer>").is_ok(),
                i == j,
                "{} on {}",
                reward.name(),
                target.kind()
            );
        }
    }
}
