//! Not repeating a rejected action: when the environment answered the agent's last actions with its rejection
//! message ("Nothing happens." on ALFWorld) and the policy proposes one of them again, sample other proposals
//! ([`RejectedRetry`], [`PolicyActor::with_rejected_retry`](crate::PolicyActor::with_rejected_retry)).
//!
//! A rejected action leaves the state as it was, so on a deterministic environment the same action is rejected
//! again: a greedy policy that proposes it once proposes it until the step budget runs out (the loops of the
//! quickstart's lost games). The rule reads only what the agent itself saw (its actions and the observations that
//! followed them), never the admissible actions: evaluation stays free generation under the benchmarks' protocol,
//! and the agent is the policy plus this decoding rule, reported as such.

use std::collections::HashSet;

use act_core::{Action, AgentState};
use serde::{Deserialize, Serialize};

/// Re-sampling a proposal the environment already rejected in the current state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RejectedRetry {
    /// The observation with which the environment rejects an action (ALFWorld's "Nothing happens.").
    pub rejection: String,
    /// How many times to sample another proposal; the first one not rejected yet is sent, and the policy's own
    /// proposal when none of them is. Must not be 0.
    pub attempts: usize,
    /// The temperature of those samples; must be positive.
    pub temperature: f32,
}

impl Default for RejectedRetry {
    /// ALFWorld's rejection, 4 attempts at temperature 1.
    fn default() -> Self {
        RejectedRetry { rejection: "Nothing happens.".into(), attempts: 4, temperature: 1.0 }
    }
}

impl RejectedRetry {
    /// Checks the settings: a rejection text, a positive attempt count and a positive, finite temperature.
    pub fn validate(&self) -> Result<(), String> {
        if self.rejection.trim().is_empty() {
            return Err("the rejection observation is empty".into());
        }
        if self.attempts == 0 {
            return Err("attempts is 0".into());
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(format!("the temperature {} is not positive", self.temperature));
        }
        Ok(())
    }

    /// The actions rejected since the last one the environment accepted: walking back from the latest action,
    /// every action whose next observation is the rejection message, until one whose next observation is not.
    pub fn rejected_actions<'s>(&self, state: &'s AgentState) -> HashSet<&'s Action> {
        let rejection = self.rejection.trim();
        let mut rejected = HashSet::new();
        let mut next_observation = state.observation.as_str();
        for entry in state.history.iter().rev() {
            if next_observation.trim() != rejection {
                break;
            }
            rejected.insert(&entry.action);
            next_observation = entry.observation.as_str();
        }
        rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_core::{HistoryEntry, Observation};

    fn state(history: &[(&str, &str)], observation: &str) -> AgentState {
        AgentState {
            task_id: "t".into(),
            task: "put a pen in drawer".into(),
            step_index: history.len(),
            history: history
                .iter()
                .map(|(o, a)| HistoryEntry { observation: Observation::from(*o), action: Action::from(*a) })
                .collect(),
            observation: Observation::from(observation),
            admissible_actions: Vec::new(),
        }
    }

    fn names<'a>(set: &HashSet<&'a Action>) -> Vec<&'a str> {
        let mut names: Vec<&str> = set.iter().map(|a| a.as_str()).collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn the_actions_rejected_since_the_last_accepted_one_are_collected() {
        let retry = RejectedRetry::default();
        let s = state(
            &[
                ("You are in the middle of a room.", "go to drawer 1"),
                ("You arrive at drawer 1.", "take pen 1 from drawer 1"),
                ("Nothing happens.", "open drawer 1"),
                ("Nothing happens.", "go to drawer 1"),
            ],
            "Nothing happens.",
        );
        // The first `go to drawer 1` was accepted, its repetition rejected.
        assert_eq!(names(&retry.rejected_actions(&s)), ["go to drawer 1", "open drawer 1", "take pen 1 from drawer 1"]);
    }

    #[test]
    fn nothing_is_rejected_after_an_accepted_action_or_at_the_start() {
        let retry = RejectedRetry::default();
        assert!(retry.rejected_actions(&state(&[], "Nothing happens.")).is_empty());
        let accepted = state(&[("Nothing happens.", "go to desk 1")], "You arrive at desk 1.");
        assert!(retry.rejected_actions(&accepted).is_empty());
    }

    #[test]
    fn settings_are_checked() {
        assert!(RejectedRetry::default().validate().is_ok());
        assert!(RejectedRetry { attempts: 0, ..RejectedRetry::default() }.validate().is_err());
        assert!(RejectedRetry { temperature: 0.0, ..RejectedRetry::default() }.validate().is_err());
        assert!(RejectedRetry { rejection: " ".into(), ..RejectedRetry::default() }.validate().is_err());
    }
}
