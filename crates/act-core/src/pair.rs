//! Critic data: an expert action paired with an alternative, presented in a random order.

use serde::{Deserialize, Serialize};

use crate::choice::Choice;
use crate::reward::RewardTarget;
use crate::trajectory::{Action, AgentState};

/// The order in which a pair's actions are presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PresentedOrder {
    /// The expert action is "Action 1".
    ExpertFirst,
    /// The alternative is "Action 1".
    AlternativeFirst,
}

impl PresentedOrder {
    /// Where the expert action sits.
    pub fn expert_choice(self) -> Choice {
        match self {
            PresentedOrder::ExpertFirst => Choice::First,
            PresentedOrder::AlternativeFirst => Choice::Second,
        }
    }
}

/// Where a pair came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairProvenance {
    /// The environment's name.
    pub env: String,
    /// The task of the expert trajectory.
    pub task_id: String,
    /// The step of the expert trajectory.
    pub step_index: usize,
    /// The name of the policy that proposed the alternative.
    pub policy: String,
    /// The seed the alternative was sampled with.
    pub seed: u64,
    /// The sampling temperature, where a model sampled it.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Whether the alternative is a uniform-random admissible fallback (every sample was filtered out).
    #[serde(default)]
    pub fallback: bool,
}

/// An expert action and an alternative at one state, with the order they are shown in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionPair {
    /// The state both actions answer.
    pub state: AgentState,
    /// The expert's action.
    pub expert_action: Action,
    /// The alternative, from the initial policy.
    pub alternative: Action,
    /// Which comes first when presented.
    pub order: PresentedOrder,
    /// Where the pair came from.
    pub provenance: PairProvenance,
}

impl ActionPair {
    /// The two actions as presented: `[action 1, action 2]`.
    pub fn presented(&self) -> [&Action; 2] {
        match self.order {
            PresentedOrder::ExpertFirst => [&self.expert_action, &self.alternative],
            PresentedOrder::AlternativeFirst => [&self.alternative, &self.expert_action],
        }
    }

    /// Where the expert action is presented.
    pub fn expert_choice(&self) -> Choice {
        self.order.expert_choice()
    }

    /// The comparison reward's target for this pair.
    pub fn reward_target(&self) -> RewardTarget {
        let [a, b] = self.presented();
        RewardTarget::Choice {
            expert: self.expert_choice(),
            actions: [a.clone(), b.clone()],
            admissible: self.state.admissible_actions.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presented_order_places_the_expert() {
        let mut pair = ActionPair {
            state: AgentState {
                task_id: "t".into(),
                task: "x".into(),
                step_index: 0,
                history: vec![],
                observation: "o".into(),
                admissible_actions: vec![],
            },
            expert_action: "good".into(),
            alternative: "bad".into(),
            order: PresentedOrder::ExpertFirst,
            provenance: PairProvenance {
                env: "toy".into(),
                task_id: "t".into(),
                step_index: 0,
                policy: "p".into(),
                seed: 0,
                temperature: None,
                fallback: false,
            },
        };
        assert_eq!(pair.presented()[0].as_str(), "good");
        assert_eq!(pair.expert_choice(), Choice::First);
        pair.order = PresentedOrder::AlternativeFirst;
        assert_eq!(pair.presented()[1].as_str(), "good");
        match pair.reward_target() {
            RewardTarget::Choice { expert, actions, .. } => {
                assert_eq!(expert, Choice::Second);
                assert_eq!(actions[1].as_str(), "good");
            }
            other => panic!("unexpected target {other:?}"),
        }
        assert_eq!(Choice::from_number(2), Some(Choice::Second));
        assert_eq!(Choice::First.other(), Choice::Second);
    }
}
