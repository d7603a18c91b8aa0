//! What a pair build did: states, samples, filters, fallbacks and the balance of presented orders.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::PairMode;
use crate::filter::FilterCounts;

/// The statistics of one [`PairBuilder::build`](crate::PairBuilder::build), serialisable and rendered as a
/// Markdown table by [`Display`](fmt::Display).
///
/// Samples add up: `samples_drawn = filtered.total() + surplus + pairs_from_samples`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PairStats {
    /// The policy that proposed alternatives.
    pub policy: String,
    /// Fixed or re-sampled.
    pub mode: PairMode,
    /// The epoch asked for.
    pub epoch: u64,
    /// The base seed.
    pub seed: u64,
    /// Trajectories read.
    pub trajectories: usize,
    /// Expert states (steps) visited.
    pub states_seen: usize,
    /// Samples drawn from the policy.
    pub samples_drawn: usize,
    /// Samples removed, by reason.
    pub filtered: FilterCounts,
    /// Samples that survived the filters beyond the per-state maximum.
    pub surplus: usize,
    /// Pairs whose alternative is a policy sample.
    pub pairs_from_samples: usize,
    /// Pairs whose alternative is a uniform-random admissible fallback.
    pub fallbacks: usize,
    /// All pairs.
    pub pairs: usize,
    /// States that yielded at least one pair.
    pub states_with_pairs: usize,
    /// States that yielded none (every sample filtered and no fallback).
    pub states_without_pairs: usize,
    /// Pairs presenting the expert as "Action 1".
    pub expert_first: usize,
    /// `expert_first / pairs`; `None` when there are no pairs.
    pub expert_first_fraction: Option<f64>,
}

impl PairStats {
    /// Adds the per-trajectory counts of `other` into `self` (identity fields are left alone).
    pub(crate) fn add_counts(&mut self, other: &PairStats) {
        self.trajectories += other.trajectories;
        self.states_seen += other.states_seen;
        self.samples_drawn += other.samples_drawn;
        self.filtered.add(&other.filtered);
        self.surplus += other.surplus;
        self.pairs_from_samples += other.pairs_from_samples;
        self.fallbacks += other.fallbacks;
        self.pairs += other.pairs;
        self.states_with_pairs += other.states_with_pairs;
        self.states_without_pairs += other.states_without_pairs;
        self.expert_first += other.expert_first;
    }

    /// The fraction of drawn samples that became pairs; `None` when nothing was drawn.
    pub fn yield_fraction(&self) -> Option<f64> {
        (self.samples_drawn > 0).then(|| self.pairs_from_samples as f64 / self.samples_drawn as f64)
    }
}

fn percent(part: usize, whole: usize) -> String {
    if whole == 0 { "-".to_owned() } else { format!("{:.1}%", 100.0 * part as f64 / whole as f64) }
}

impl fmt::Display for PairStats {
    /// A Markdown table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            PairMode::Fixed => "fixed",
            PairMode::Resampled => "re-sampled",
        };
        let drawn = self.samples_drawn;
        writeln!(f, "Pairs from policy `{}` ({mode}, epoch {}, seed {})", self.policy, self.epoch, self.seed)?;
        writeln!(f)?;
        writeln!(f, "| metric | count | share |")?;
        writeln!(f, "|---|---:|---:|")?;
        writeln!(f, "| trajectories | {} | |", self.trajectories)?;
        writeln!(f, "| states seen | {} | |", self.states_seen)?;
        writeln!(f, "| samples drawn | {drawn} | |")?;
        let rows = [
            ("filtered: unparseable", self.filtered.unparseable),
            ("filtered: equal to expert", self.filtered.equal_to_expert),
            ("filtered: inadmissible", self.filtered.inadmissible),
            ("filtered: duplicate", self.filtered.duplicate),
            ("surplus (beyond M per state)", self.surplus),
            ("kept", self.pairs_from_samples),
        ];
        for (name, count) in rows {
            writeln!(f, "| {name} | {count} | {} of samples |", percent(count, drawn))?;
        }
        writeln!(f, "| fallback pairs | {} | {} of pairs |", self.fallbacks, percent(self.fallbacks, self.pairs))?;
        writeln!(f, "| pairs | {} | |", self.pairs)?;
        let states = self.states_seen;
        writeln!(
            f,
            "| states with pairs | {} | {} of states |",
            self.states_with_pairs,
            percent(self.states_with_pairs, states)
        )?;
        writeln!(
            f,
            "| states without pairs | {} | {} of states |",
            self.states_without_pairs,
            percent(self.states_without_pairs, states)
        )?;
        writeln!(
            f,
            "| expert is Action 1 | {} | {} of pairs |",
            self.expert_first,
            percent(self.expert_first, self.pairs)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_lists_every_count_with_shares() {
        let stats = PairStats {
            policy: "random-admissible".into(),
            samples_drawn: 8,
            filtered: FilterCounts { unparseable: 1, equal_to_expert: 2, inadmissible: 0, duplicate: 1 },
            pairs_from_samples: 4,
            pairs: 4,
            states_seen: 4,
            states_with_pairs: 4,
            expert_first: 2,
            expert_first_fraction: Some(0.5),
            ..PairStats::default()
        };
        let text = stats.to_string();
        assert!(text.starts_with("Pairs from policy `random-admissible` (fixed, epoch 0, seed 0)"), "{text}");
        assert!(text.contains("| filtered: equal to expert | 2 | 25.0% of samples |"), "{text}");
        assert!(text.contains("| kept | 4 | 50.0% of samples |"), "{text}");
        assert!(text.contains("| expert is Action 1 | 2 | 50.0% of pairs |"), "{text}");
        assert_eq!(stats.yield_fraction(), Some(0.5));
        let empty = PairStats::default();
        assert!(empty.to_string().contains("| fallback pairs | 0 | - of pairs |"));
        assert_eq!(empty.yield_fraction(), None);
    }
}
