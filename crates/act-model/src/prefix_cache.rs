//! Keys and values kept across generation calls, so a prompt that begins with an earlier call's prompt and
//! completion encodes only its new tokens.

use std::collections::VecDeque;

use burn::prelude::*;

/// One stored sequence: its token ids and, per layer, the keys and values of every position
/// (`[1, kv_heads, len, head_dim]`, after q/k-norm and rotary embedding).
#[derive(Debug, Clone)]
pub(crate) struct StoredPrefix {
    pub ids: Vec<u32>,
    pub layers: Vec<(Tensor<4>, Tensor<4>)>,
}

/// A bounded store of earlier sequences' keys and values, oldest evicted first.
///
/// ```
/// let store = act_model::PrefixStore::new(64);
/// assert_eq!(store.len(), 0);
/// assert_eq!(store.reused_tokens(), 0);
/// ```
///
/// A multi-turn agent's prompt at step `t + 1` is its prompt at step `t`, its answer and the new observation: without
/// reuse every step re-encodes the whole episode (quadratic in its length), with reuse each step encodes one turn.
/// Reuse matches token ids, not text, so it is exact: the stored keys and values are those the same tokens at the
/// same positions would produce again (up to floating-point summation order in a batch). A prompt re-tokenized
/// differently from what was generated simply matches a shorter prefix.
#[derive(Debug)]
pub struct PrefixStore {
    entries: VecDeque<StoredPrefix>,
    capacity: usize,
    min_match: usize,
    reused: u64,
    encoded: u64,
}

impl PrefixStore {
    /// A store of at most `capacity` sequences (at least one). Matches shorter than 16 tokens are not reused.
    pub fn new(capacity: usize) -> Self {
        PrefixStore { entries: VecDeque::new(), capacity: capacity.max(1), min_match: 16, reused: 0, encoded: 0 }
    }

    /// Stored sequences.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Prompt tokens taken from the store instead of encoded, since the store was made.
    pub fn reused_tokens(&self) -> u64 {
        self.reused
    }

    /// Prompt tokens encoded (not found in the store), since the store was made.
    pub fn encoded_tokens(&self) -> u64 {
        self.encoded
    }

    /// Forgets every stored sequence (e.g. after the model's weights changed: stored keys would be stale).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The stored entry sharing the longest prefix with `prompt`, and that length, capped so at least the prompt's
    /// last token is left to encode (its logits start generation). `None` below the minimum match.
    pub(crate) fn longest_match(&self, prompt: &[u32]) -> Option<(usize, usize)> {
        let cap = prompt.len().saturating_sub(1);
        let mut best: Option<(usize, usize)> = None;
        for (i, entry) in self.entries.iter().enumerate() {
            let shared = entry.ids.iter().zip(prompt).take(cap).take_while(|(a, b)| a == b).count();
            if shared >= self.min_match && best.is_none_or(|(_, len)| shared > len) {
                best = Some((i, shared));
            }
        }
        best
    }

    /// The entry at `index`.
    pub(crate) fn entry(&self, index: usize) -> &StoredPrefix {
        &self.entries[index]
    }

    /// Counts `reused` prompt tokens taken from the store and `encoded` ones computed.
    pub(crate) fn record(&mut self, reused: usize, encoded: usize) {
        self.reused += reused as u64;
        self.encoded += encoded as u64;
    }

    /// A store of this one's capacity holding, for each of `prompts`, the entry sharing its longest prefix (when
    /// one qualifies): what generation for those prompts reads, so it can run apart, on another thread, and be
    /// merged back with [`PrefixStore::absorb`]. Entries are shared, not copied (tensors are reference-counted).
    pub(crate) fn matches_for(&self, prompts: &[Vec<u32>]) -> PrefixStore {
        let mut part = PrefixStore::new(self.capacity);
        part.min_match = self.min_match;
        let mut taken: Vec<usize> = prompts.iter().filter_map(|p| self.longest_match(p).map(|(i, _)| i)).collect();
        taken.sort_unstable();
        taken.dedup();
        part.entries.extend(taken.into_iter().map(|i| self.entries[i].clone()));
        part
    }

    /// Merges a store made by [`PrefixStore::matches_for`] after generation used it: its entries (the matched
    /// ones and those generation stored) are inserted as by [`PrefixStore::insert`], and its counts added.
    pub(crate) fn absorb(&mut self, part: PrefixStore) {
        self.record(part.reused as usize, part.encoded as usize);
        for entry in part.entries {
            self.insert(entry);
        }
    }

    /// Stores `prefix`, dropping the entries it extends (an episode keeps only its latest turn) and then the
    /// oldest beyond capacity.
    pub(crate) fn insert(&mut self, prefix: StoredPrefix) {
        self.entries.retain(|e| !(e.ids.len() <= prefix.ids.len() && prefix.ids[..e.ids.len()] == e.ids[..]));
        self.entries.push_back(prefix);
        while self.entries.len() > self.capacity {
            self.entries.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(ids: Vec<u32>) -> StoredPrefix {
        let device = Device::flex();
        let t = Tensor::<4>::zeros([1, 1, ids.len(), 2], &device);
        StoredPrefix { ids, layers: vec![(t.clone(), t)] }
    }

    #[test]
    fn longest_match_leaves_the_last_token_and_respects_the_minimum() {
        let mut store = PrefixStore::new(4);
        store.insert(stored((0..20).collect()));
        store.insert(stored((100..140).collect()));
        let prompt: Vec<u32> = (0..30).collect();
        assert_eq!(store.longest_match(&prompt), Some((0, 20)));
        // The whole stored sequence again: one token must stay to encode.
        let same: Vec<u32> = (0..20).collect();
        assert_eq!(store.longest_match(&same), Some((0, 19)), "one token is left to encode");
        let short: Vec<u32> = (0..10).collect();
        assert_eq!(store.longest_match(&short), None);
        let other: Vec<u32> = (100..120).collect();
        assert_eq!(store.longest_match(&other), Some((1, 19)));
    }

    #[test]
    fn matches_for_takes_each_prompts_entry_and_absorb_merges_back() {
        let mut store = PrefixStore::new(8);
        for start in [0u32, 100, 200] {
            store.insert(stored((start..start + 20).collect()));
        }
        let prompts: Vec<Vec<u32>> = vec![(100..130).collect(), (500..540).collect(), (100..125).collect()];
        let mut part = store.matches_for(&prompts);
        assert_eq!(part.len(), 1, "one entry serves both prompts that continue it; none the unmatched one");
        assert_eq!(part.longest_match(&prompts[0]), store.longest_match(&prompts[0]).map(|(_, n)| (0, n)));
        part.insert(stored((100..130).collect()));
        part.insert(stored((500..540).collect()));
        part.record(20, 70);
        store.absorb(part);
        assert_eq!(store.len(), 4, "the extended entry replaced, the new one added");
        assert_eq!(store.longest_match(&(100..140).collect::<Vec<_>>()), Some((2, 30)));
        assert_eq!((store.reused_tokens(), store.encoded_tokens()), (20, 70));
    }

    #[test]
    fn insert_replaces_what_it_extends_and_evicts_the_oldest() {
        let mut store = PrefixStore::new(2);
        store.insert(stored((0..20).collect()));
        store.insert(stored((0..30).collect()));
        assert_eq!(store.len(), 1, "the longer turn of the same episode replaces the shorter");
        store.insert(stored((50..70).collect()));
        store.insert(stored((80..100).collect()));
        assert_eq!(store.len(), 2);
        assert!(store.longest_match(&(0..40).collect::<Vec<_>>()).is_none(), "the oldest was evicted");
    }
}
