//! Guided rollouts (ActGuide-RL, arXiv 2605.12004): when a group of episodes never succeeds, the task is played
//! again with a hint, the first `k` reference actions of the task, in the prompt
//! ([`PolicyActor::with_hints`](crate::PolicyActor::with_hints) shows it). [`search_hint_length`] picks `k` for such a group by binary search
//! over probe rollouts, as the reference code does.

/// What [`search_hint_length`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HintSearch {
    /// The hint length to play the group with.
    pub k: usize,
    /// Probes made (each costs the caller's probe rollouts).
    pub probes: usize,
    /// Whether some probe succeeded (otherwise `k` is the whole plan, untested or failed).
    pub found: bool,
}

/// The shortest hint (number of reference actions, `0..=plan_len`) with which a probe succeeds, by binary search as
/// ActGuide-RL does it: `lo = 0`, `hi = plan_len`; each probe plays hint `mid = (lo + hi) / 2` (the reference:
/// two rollouts at the training temperature, success if either wins); success sets `hi = mid`, failure
/// `lo = mid + 1`; at most `max_probes` probes.
///
/// With enough probes (`plan_len + 1 <= 2^max_probes`) and a probe that succeeds exactly from some threshold on,
/// this is the threshold, or the whole plan when nothing succeeds. Where the probes run out before `lo` meets
/// `hi`, the reference returns `lo`, a length no probe has seen succeed and below the threshold; this returns
/// `hi` instead: the shortest length a probe saw succeed, or the whole plan. So a short search errs towards
/// more guidance, never towards a hint known to be too short. [`HintSearcher`] runs the same search a probe
/// at a time, so that the probes of many groups can be played together.
///
/// ```
/// // Hints of 5 or more actions make the task succeed; the plan has 12.
/// let search = act_rollout::search_hint_length(12, 4, |k| Ok::<_, ()>(k >= 5)).unwrap();
/// assert_eq!((search.k, search.found), (5, true));
/// ```
pub fn search_hint_length<E>(
    plan_len: usize,
    max_probes: usize,
    mut probe: impl FnMut(usize) -> Result<bool, E>,
) -> Result<HintSearch, E> {
    let mut searcher = HintSearcher::new(plan_len, max_probes);
    while let Some(k) = searcher.next_probe() {
        searcher.record(probe(k)?);
    }
    Ok(searcher.result())
}

/// [`search_hint_length`] a probe at a time: ask [`next_probe`](HintSearcher::next_probe) for the hint length to
/// play, [`record`](HintSearcher::record) whether it succeeded, until `next_probe` says `None`.
///
/// ```
/// let mut searcher = act_rollout::HintSearcher::new(8, 5);
/// while let Some(k) = searcher.next_probe() {
///     searcher.record(k >= 3);
/// }
/// assert_eq!(searcher.result().k, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintSearcher {
    lo: usize,
    hi: usize,
    probes: usize,
    max_probes: usize,
    found: bool,
}

impl HintSearcher {
    /// A search over hints of `0..=plan_len` reference actions with at most `max_probes` probes.
    pub fn new(plan_len: usize, max_probes: usize) -> Self {
        HintSearcher { lo: 0, hi: plan_len, probes: 0, max_probes, found: false }
    }

    /// The hint length to probe next, or `None` when the search is over.
    pub fn next_probe(&self) -> Option<usize> {
        (self.lo < self.hi && self.probes < self.max_probes).then_some((self.lo + self.hi) / 2)
    }

    /// Records the outcome of the probe [`next_probe`](HintSearcher::next_probe) named (ignored when the search is
    /// over).
    pub fn record(&mut self, succeeded: bool) {
        let Some(mid) = self.next_probe() else { return };
        self.probes += 1;
        if succeeded {
            self.hi = mid;
            self.found = true;
        } else {
            self.lo = mid + 1;
        }
    }

    /// What the search has found so far (its answer once [`next_probe`](HintSearcher::next_probe) is `None`).
    pub fn result(&self) -> HintSearch {
        HintSearch { k: self.hi, probes: self.probes, found: self.found }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Probes needed to resolve every length of a plan: `plan_len + 1 <= 2^probes`.
    fn enough(plan_len: usize) -> usize {
        (usize::BITS - plan_len.leading_zeros()) as usize
    }

    #[test]
    fn the_whole_plan_when_nothing_succeeds() {
        let mut asked = Vec::new();
        let search = search_hint_length(10, 5, |k| {
            asked.push(k);
            Ok::<_, ()>(false)
        })
        .unwrap();
        // The whole plan is never probed: it is what is left when every shorter hint failed.
        assert_eq!(search, HintSearch { k: 10, probes: 3, found: false });
        assert_eq!(asked, [5, 8, 9]);
    }

    #[test]
    fn no_hint_when_the_unguided_probe_succeeds_and_no_probe_for_an_empty_plan() {
        assert_eq!(
            search_hint_length(1, 5, |_| Ok::<_, ()>(true)).unwrap(),
            HintSearch { k: 0, probes: 1, found: true }
        );
        let search = search_hint_length(0, 5, |_| -> Result<bool, ()> { panic!("probed an empty plan") }).unwrap();
        assert_eq!(search, HintSearch { k: 0, probes: 0, found: false });
    }

    #[test]
    fn a_probe_error_stops_the_search() {
        assert_eq!(search_hint_length(8, 5, |_| Err::<bool, _>("environment failed")), Err("environment failed"));
    }

    #[test]
    fn five_probes_on_a_long_plan_stop_above_the_threshold_where_the_reference_stops_below() {
        // 40 actions, threshold 3: lo and hi meet only after 6 probes; the reference's lo would be 3 - 1 = 2 here.
        let search = search_hint_length(40, 5, |k| Ok::<_, ()>(k >= 3)).unwrap();
        assert_eq!(search.probes, 5);
        assert!(search.found);
        assert_eq!(search.k, 4, "the shortest length seen to succeed");
    }

    proptest! {
        #[test]
        fn enough_probes_find_the_threshold_exactly(plan_len in 0usize..200, threshold in 0usize..220) {
            let search = search_hint_length(plan_len, enough(plan_len), |k| Ok::<_, ()>(k >= threshold)).unwrap();
            prop_assert_eq!(search.k, threshold.min(plan_len));
            prop_assert_eq!(search.found, threshold < plan_len);
        }

        #[test]
        fn any_probe_budget_never_returns_a_length_below_the_threshold(
            plan_len in 0usize..200, threshold in 0usize..200, max_probes in 0usize..10,
        ) {
            let search = search_hint_length(plan_len, max_probes, |k| Ok::<_, ()>(k >= threshold)).unwrap();
            prop_assert!(search.k >= threshold.min(plan_len));
            prop_assert!(search.k <= plan_len);
            prop_assert!(search.probes <= max_probes);
        }
    }
}
