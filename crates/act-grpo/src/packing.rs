//! Prefix packing for supervised fine-tuning: a sample whose whole token sequence (prompt + completion) begins
//! another sample's prompt is trained inside that longer sequence, as one more loss span, instead of on its own.

use std::collections::HashMap;
use std::ops::Range;

/// One training sequence with the positions whose tokens carry loss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedSequence {
    /// The token ids.
    pub ids: Vec<u32>,
    /// Token ranges that carry loss, one per sample (its completion); identical samples packed into one sequence
    /// give the same range twice, so their tokens count once per sample.
    pub spans: Vec<Range<usize>>,
    /// The samples trained in this sequence (indices into the input).
    pub samples: Vec<usize>,
}

impl PackedSequence {
    /// One sample alone: its ids with the completion span.
    pub fn single(ids: Vec<u32>, prompt_len: usize, sample: usize) -> Self {
        let len = ids.len();
        PackedSequence { ids, spans: std::iter::once(prompt_len..len).collect(), samples: vec![sample] }
    }

    /// Tokens that carry loss (counting overlapping spans once each).
    pub fn target_tokens(&self) -> usize {
        self.spans.iter().map(|s| s.len()).sum()
    }
}

/// Cuts a sequence of `prompt_len` prompt tokens and a completion to `max_length` tokens (0: no limit): the prompt
/// loses tokens from its start first (the recent history matters most), keeping at least one; then the completion
/// loses its end. Returns the new prompt length; `None` when `max_length` is 1.
pub fn truncate_sequence(ids: &mut Vec<u32>, prompt_len: usize, max_length: usize) -> Option<usize> {
    if max_length == 0 || ids.len() <= max_length {
        return Some(prompt_len);
    }
    if max_length < 2 {
        return None;
    }
    let excess = ids.len() - max_length;
    let from_prompt = excess.min(prompt_len - 1);
    ids.drain(..from_prompt);
    ids.truncate(max_length);
    Some(prompt_len - from_prompt)
}

/// Packs `encoded` samples (untruncated ids, prompt length) into sequences of at most `max_length` tokens
/// (0: no limit).
///
/// A sample whose ids are a strict prefix of another's prompt goes into the longest such sequence that fits in
/// `max_length`; every other sample (and every sample longer than `max_length`, truncated as
/// the prompt-keeping truncation does) is a sequence of its own. The result is deterministic and ordered by the first
/// sample of each sequence.
///
/// Multi-turn data makes this the common case: when step `t + 1`'s prompt repeats step `t`'s prompt and answer
/// (a conversation whose earlier turns are the agent's own actions), the whole episode becomes one sequence with a
/// loss span on every action, as AgentTuning and AgentGym train. Under causal attention the loss of each span is
/// exactly the loss of its sample trained alone, so packing changes the cost, not the objective: an episode of
/// `T` steps costs one forward pass over its last prompt instead of `T` passes over growing prompts.
///
/// Packing is found from the tokens, not from sample ids: a chain is packed only where the token prefix really
/// matches, so templates that are not prefix-consistent silently fall back to one sequence per sample.
pub fn pack_prefixes(encoded: &[(Vec<u32>, usize)], max_length: usize) -> Vec<PackedSequence> {
    let fits = |i: usize| max_length == 0 || encoded[i].0.len() <= max_length;
    // Every fitting sample by (length, hash of its ids).
    let mut by_hash: HashMap<(usize, u64), Vec<usize>> = HashMap::new();
    for (i, (ids, _)) in encoded.iter().enumerate() {
        if fits(i) {
            by_hash.entry((ids.len(), rolling_hash(ids))).or_default().push(i);
        }
    }
    // parent[a] = the shortest fitting sample whose prompt starts with all of sample a (lowest index on ties).
    let mut parent: Vec<Option<usize>> = vec![None; encoded.len()];
    for (b, (ids, prompt_len)) in encoded.iter().enumerate() {
        if !fits(b) {
            continue;
        }
        let mut hash = 0u64;
        for (p, &id) in ids[..*prompt_len].iter().enumerate() {
            hash = step_hash(hash, id);
            let Some(candidates) = by_hash.get(&(p + 1, hash)) else { continue };
            for &a in candidates {
                if a != b && encoded[a].0[..] == ids[..=p] {
                    let better = match parent[a] {
                        None => true,
                        Some(current) => (encoded[b].0.len(), b) < (encoded[current].0.len(), current),
                    };
                    if better {
                        parent[a] = Some(b);
                    }
                }
            }
        }
    }
    // Each sample goes to the root of its parent chain (chains only grow, so every root fits too).
    let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
    for a in 0..encoded.len() {
        if !fits(a) {
            continue;
        }
        let mut root = a;
        while let Some(p) = parent[root] {
            root = p;
        }
        members.entry(root).or_default().push(a);
    }
    let mut out: Vec<PackedSequence> = Vec::new();
    for (i, (ids, prompt_len)) in encoded.iter().enumerate() {
        if !fits(i) {
            let mut ids = ids.clone();
            let prompt_len = truncate_sequence(&mut ids, *prompt_len, max_length).unwrap_or(1);
            out.push(PackedSequence::single(ids, prompt_len, i));
            continue;
        }
        let Some(samples) = members.remove(&i) else { continue };
        let spans = samples.iter().map(|&a| encoded[a].1..encoded[a].0.len()).collect();
        out.push(PackedSequence { ids: ids.clone(), spans, samples });
    }
    // Order by first sample so the data order follows the input, not the roots.
    out.sort_by_key(|s| s.samples.iter().copied().min().unwrap_or(usize::MAX));
    out
}

fn step_hash(hash: u64, id: u32) -> u64 {
    hash.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(id) + 1)
}

fn rolling_hash(ids: &[u32]) -> u64 {
    ids.iter().fold(0, |h, &id| step_hash(h, id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An episode's samples: step t's prompt is everything before its completion.
    fn episode(base: u32, turns: usize) -> Vec<(Vec<u32>, usize)> {
        let mut out = Vec::new();
        let mut prefix = vec![base, base + 1];
        for t in 0..turns as u32 {
            prefix.push(100 + t);
            let prompt_len = prefix.len();
            let full: Vec<u32> = prefix.iter().copied().chain([200 + t, 201 + t]).collect();
            out.push((full.clone(), prompt_len));
            prefix = full;
        }
        out
    }

    #[test]
    fn an_episode_becomes_one_sequence_with_a_span_per_step() {
        let samples = episode(1, 4);
        let packed = pack_prefixes(&samples, 0);
        assert_eq!(packed.len(), 1);
        let seq = &packed[0];
        assert_eq!(seq.ids, samples[3].0);
        assert_eq!(seq.samples.len(), 4);
        for (i, (ids, prompt_len)) in samples.iter().enumerate() {
            assert!(seq.spans.contains(&(*prompt_len..ids.len())), "span of sample {i}");
            assert_eq!(&seq.ids[..ids.len()], &ids[..]);
        }
        assert_eq!(seq.target_tokens(), 8);
    }

    #[test]
    fn max_length_splits_chains_and_truncates_long_samples() {
        let samples = episode(1, 4); // lengths 5, 8, 11, 14
        let packed = pack_prefixes(&samples, 11);
        assert_eq!(packed.len(), 2);
        assert_eq!(packed[0].samples, vec![0, 1, 2]);
        assert_eq!(packed[0].ids.len(), 11);
        assert_eq!(packed[1].samples, vec![3]);
        assert_eq!(packed[1].ids.len(), 11);
        assert_eq!((packed[1].spans.len(), packed[1].spans[0].clone()), (1, 9..11));
    }

    #[test]
    fn unrelated_and_duplicate_samples_stay_apart() {
        let mut samples = episode(1, 2);
        samples.extend(episode(50, 2));
        samples.push(samples[0].clone());
        let packed = pack_prefixes(&samples, 0);
        assert_eq!(packed.len(), 2);
        let total: usize = packed.iter().map(|p| p.samples.len()).sum();
        assert_eq!(total, 5);
        // The duplicate of sample 0 is packed with it, so its completion carries loss twice.
        assert_eq!(packed[0].spans.iter().filter(|s| **s == (3..5)).count(), 2);
    }

    #[test]
    fn truncation_cuts_the_prompt_start_first() {
        let mut ids: Vec<u32> = (0..10).collect();
        assert_eq!(truncate_sequence(&mut ids, 7, 8), Some(5));
        assert_eq!(ids, (2..10).collect::<Vec<_>>());
        let mut ids: Vec<u32> = (0..10).collect();
        assert_eq!(truncate_sequence(&mut ids, 7, 3), Some(1));
        assert_eq!(ids, vec![6, 7, 8]);
        assert_eq!(truncate_sequence(&mut (0..10).collect(), 7, 1), None);
    }

    proptest! {
        /// Every sample is trained exactly once, inside a sequence that starts with its ids, on its completion.
        #[test]
        fn every_sample_is_trained_once_on_its_own_completion(
            episodes in prop::collection::vec((0u32..3, 1usize..6), 1..6),
            max_length in prop::option::of(4usize..20),
        ) {
            let mut samples = Vec::new();
            for (base, turns) in episodes {
                samples.extend(episode(base * 10 + 1, turns));
            }
            let max_length = max_length.unwrap_or(0);
            let packed = pack_prefixes(&samples, max_length);
            let mut seen = vec![0; samples.len()];
            for seq in &packed {
                prop_assert!(max_length == 0 || seq.ids.len() <= max_length);
                prop_assert_eq!(seq.samples.len(), seq.spans.len());
                for (&i, span) in seq.samples.iter().zip(&seq.spans) {
                    seen[i] += 1;
                    let (ids, prompt_len) = &samples[i];
                    let completion = &ids[*prompt_len..];
                    if max_length == 0 || ids.len() <= max_length {
                        prop_assert_eq!(&seq.ids[..ids.len()], &ids[..]);
                        prop_assert_eq!(span.clone(), *prompt_len..ids.len());
                    } else {
                        prop_assert!(completion.starts_with(&seq.ids[span.clone()]));
                    }
                }
            }
            prop_assert!(seen.iter().all(|&n| n == 1), "{:?}", seen);
        }
    }
}
