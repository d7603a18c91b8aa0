//! Which sampled alternatives survive at one state, and the uniform-random fallback when none does.

use std::collections::HashSet;

use act_core::{Action, AgentState, normalize_action, parse_action, rng_from_seed};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// How many samples each filter removed. Each sample is counted once, under the first reason that applies, in
/// the order of the fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FilterCounts {
    /// No parseable `<action>` (or no `<think>` when reasoning is required).
    pub unparseable: usize,
    /// Equal to the expert action after [`normalize_action`].
    pub equal_to_expert: usize,
    /// Not among the state's admissible actions.
    pub inadmissible: usize,
    /// Equal (after normalisation) to an earlier surviving sample of the same state.
    pub duplicate: usize,
}

impl FilterCounts {
    /// Samples removed for any reason.
    pub fn total(&self) -> usize {
        self.unparseable + self.equal_to_expert + self.inadmissible + self.duplicate
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &FilterCounts) {
        self.unparseable += other.unparseable;
        self.equal_to_expert += other.equal_to_expert;
        self.inadmissible += other.inadmissible;
        self.duplicate += other.duplicate;
    }
}

/// What to filter. The default keeps one admissible alternative and does not require reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FilterOptions {
    /// Require a `<think>` block for a sample to parse.
    pub require_reasoning: bool,
    /// Drop samples outside the state's admissible actions (ignored when the state lists none).
    pub filter_inadmissible: bool,
    /// Keep at most this many survivors.
    pub max_kept: usize,
}

impl Default for FilterOptions {
    fn default() -> Self {
        FilterOptions { require_reasoning: false, filter_inadmissible: true, max_kept: 1 }
    }
}

/// The outcome of filtering one state's samples.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// The kept alternatives with the index of the sample each came from, in sampling order. An alternative that
    /// matches an admissible action is spelled as the environment spells it.
    pub kept: Vec<(usize, Action)>,
    /// Samples removed, by reason.
    pub filtered: FilterCounts,
    /// Samples that survived every filter but were not kept because `max_kept` were already.
    pub surplus: usize,
}

/// Filters the `completions` sampled at `state` against the `expert` action.
///
/// ```
/// use act_core::{AgentState, Action};
/// use act_pairs::{FilterOptions, select_alternatives};
/// let state = AgentState {
///     task_id: "t".into(), task: "open the door".into(), step_index: 0, history: vec![],
///     observation: "A door.".into(), admissible_actions: vec!["open door".into(), "look".into()],
/// };
/// let samples = ["<action>Open Door</action>", "<action>look</action>", "look", "<action>fly</action>"]
///     .map(String::from);
/// let options = FilterOptions { require_reasoning: false, filter_inadmissible: true, max_kept: 1 };
/// let selection = select_alternatives(&state, &"open door".into(), &samples, options);
/// assert_eq!(selection.kept, vec![(1, Action::from("look"))]);
/// assert_eq!((selection.filtered.equal_to_expert, selection.filtered.unparseable, selection.filtered.inadmissible), (1, 1, 1));
/// ```
pub fn select_alternatives(
    state: &AgentState,
    expert: &Action,
    completions: &[String],
    options: FilterOptions,
) -> Selection {
    let expert = normalize_action(expert.as_str());
    let check_admissible = options.filter_inadmissible && !state.admissible_actions.is_empty();
    let mut seen = HashSet::new();
    let mut selection = Selection::default();
    for (index, completion) in completions.iter().enumerate() {
        let Ok(parsed) = parse_action(completion, options.require_reasoning) else {
            selection.filtered.unparseable += 1;
            continue;
        };
        let normalized = normalize_action(&parsed.action);
        if normalized == expert {
            selection.filtered.equal_to_expert += 1;
            continue;
        }
        let admissible = state.admissible_actions.iter().find(|a| normalize_action(a.as_str()) == normalized);
        if check_admissible && admissible.is_none() {
            selection.filtered.inadmissible += 1;
            continue;
        }
        if !seen.insert(normalized) {
            selection.filtered.duplicate += 1;
            continue;
        }
        if selection.kept.len() < options.max_kept {
            let alternative = admissible.cloned().unwrap_or_else(|| Action::from(parsed.action));
            selection.kept.push((index, alternative));
        } else {
            selection.surplus += 1;
        }
    }
    selection
}

/// A uniformly random admissible action other than the expert's (distinct after normalisation), drawn from
/// `seed`; `None` when the state lists no such action.
///
/// ```
/// use act_core::AgentState;
/// let state = AgentState {
///     task_id: "t".into(), task: "x".into(), step_index: 0, history: vec![], observation: "o".into(),
///     admissible_actions: vec!["open door".into(), "Open  door".into(), "look".into()],
/// };
/// assert_eq!(act_pairs::fallback_alternative(&state, &"open door".into(), 3).unwrap().as_str(), "look");
/// ```
pub fn fallback_alternative(state: &AgentState, expert: &Action, seed: u64) -> Option<Action> {
    let expert = normalize_action(expert.as_str());
    let mut seen = HashSet::new();
    let candidates: Vec<&Action> = state
        .admissible_actions
        .iter()
        .filter(|a| {
            let normalized = normalize_action(a.as_str());
            normalized != expert && !normalized.is_empty() && seen.insert(normalized)
        })
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let pick = rng_from_seed(seed).random_range(0..candidates.len());
    Some(candidates[pick].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(admissible: &[&str]) -> AgentState {
        AgentState {
            task_id: "t".into(),
            task: "task".into(),
            step_index: 2,
            history: vec![],
            observation: "o".into(),
            admissible_actions: admissible.iter().map(|a| Action::from(*a)).collect(),
        }
    }

    fn samples(actions: &[&str]) -> Vec<String> {
        actions.iter().map(|a| a.to_string()).collect()
    }

    const OPTIONS: FilterOptions = FilterOptions { require_reasoning: false, filter_inadmissible: true, max_kept: 1 };

    #[test]
    fn default_options_keep_one_admissible_alternative_and_read_partial_json() {
        assert_eq!(FilterOptions::default(), OPTIONS);
        let strict: FilterOptions = serde_json::from_str(r#"{"require_reasoning": true}"#).unwrap();
        assert_eq!(strict, FilterOptions { require_reasoning: true, ..OPTIONS });
    }

    #[test]
    fn each_filter_counts_its_samples() {
        let s = state(&["go north", "go south", "look"]);
        let out = select_alternatives(
            &s,
            &"go north".into(),
            &samples(&[
                "<action>GO  NORTH</action>", // expert
                "no tags",                    // unparseable
                "<action>dance</action>",     // inadmissible
                "<action>Look</action>",      // kept, spelled as admissible
                "<action>look</action>",      // duplicate
                "<action>go south</action>",  // surplus (M = 1)
            ]),
            OPTIONS,
        );
        assert_eq!(out.kept, vec![(3, Action::from("look"))]);
        assert_eq!(out.filtered, FilterCounts { unparseable: 1, equal_to_expert: 1, inadmissible: 1, duplicate: 1 });
        assert_eq!(out.surplus, 1);
        assert_eq!(out.filtered.total(), 4);
    }

    #[test]
    fn up_to_m_survivors_are_kept_in_sampling_order() {
        let s = state(&["a", "b", "c", "d"]);
        let out = select_alternatives(
            &s,
            &"a".into(),
            &samples(&["<action>c</action>", "<action>b</action>", "<action>d</action>"]),
            FilterOptions { max_kept: 2, ..OPTIONS },
        );
        assert_eq!(out.kept, vec![(0, Action::from("c")), (1, Action::from("b"))]);
        assert_eq!(out.surplus, 1);
    }

    #[test]
    fn admissibility_is_only_checked_where_known_and_enabled() {
        let free = select_alternatives(&state(&[]), &"a".into(), &samples(&["<action>Zap It</action>"]), OPTIONS);
        assert_eq!(free.kept, vec![(0, Action::from("Zap It"))]);
        let off = FilterOptions { filter_inadmissible: false, ..OPTIONS };
        let kept = select_alternatives(&state(&["a"]), &"a".into(), &samples(&["<action>zap</action>"]), off);
        assert_eq!(kept.kept.len(), 1);
        assert_eq!(kept.filtered.inadmissible, 0);
    }

    #[test]
    fn reasoning_can_be_required() {
        let strict = FilterOptions { require_reasoning: true, ..OPTIONS };
        let s = state(&["a", "b"]);
        let out = select_alternatives(&s, &"a".into(), &samples(&["<action>b</action>"]), strict);
        assert_eq!(out.filtered.unparseable, 1);
        let out = select_alternatives(&s, &"a".into(), &samples(&["<think>hm</think><action>b</action>"]), strict);
        assert_eq!(out.kept.len(), 1);
    }

    #[test]
    fn fallback_excludes_the_expert_and_is_seeded() {
        let s = state(&["go north", "Go North", "look", "open door", "take key"]);
        let picks: HashSet<String> =
            (0..64).filter_map(|seed| fallback_alternative(&s, &"go north".into(), seed)).map(|a| a.0).collect();
        assert_eq!(picks, ["look", "open door", "take key"].into_iter().map(String::from).collect());
        assert_eq!(fallback_alternative(&s, &"go north".into(), 5), fallback_alternative(&s, &"go north".into(), 5));
        assert_eq!(fallback_alternative(&state(&["go north"]), &"GO NORTH".into(), 1), None);
        assert_eq!(fallback_alternative(&state(&[]), &"x".into(), 1), None);
    }
}
