//! Choosing the next token from logits: greedy, temperature, top-k and top-p (nucleus) sampling.

use rand::RngExt;

use crate::error::ModelError;

/// How to pick tokens; the token-level part of act-core's `SamplingParams`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    /// Softmax temperature; 0 means greedy.
    pub temperature: f32,
    /// Keep only the `top_k` most likely tokens; 0 keeps all.
    pub top_k: usize,
    /// Keep the smallest set of most likely tokens whose probability reaches `top_p`; 1 keeps all.
    pub top_p: f32,
}

impl Sampler {
    /// Greedy decoding (argmax).
    pub fn greedy() -> Self {
        Sampler { temperature: 0.0, top_k: 0, top_p: 1.0 }
    }

    /// Checks the parameters.
    pub fn new(temperature: f32, top_k: usize, top_p: f32) -> Result<Self, ModelError> {
        if !(temperature.is_finite() && temperature >= 0.0) {
            return Err(ModelError::Input(format!("temperature must be finite and >= 0, got {temperature}")));
        }
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(ModelError::Input(format!("top_p must be in (0, 1], got {top_p}")));
        }
        Ok(Sampler { temperature, top_k, top_p })
    }

    /// Whether this sampler is deterministic argmax.
    pub fn is_greedy(&self) -> bool {
        self.temperature == 0.0
    }

    /// The next token for one row of logits.
    pub fn sample(&self, logits: &[f32], rng: &mut impl RngExt) -> u32 {
        self.sample_with_log_prob(logits, rng).0
    }

    /// The next token for one row of logits and its [`log_prob`](Self::log_prob), in one pass over the row when
    /// neither top-k nor top-p truncates (plain temperature sampling, what GRPO uses; the same distribution as
    /// the truncating path, drawn in token-id order instead of by sorted probability, so no sort is needed).
    pub fn sample_with_log_prob(&self, logits: &[f32], rng: &mut impl RngExt) -> (u32, f32) {
        if self.is_greedy() {
            let token = argmax(logits);
            return (token, self.log_prob(logits, token));
        }
        if self.top_k == 0 && self.top_p >= 1.0 {
            return self.sample_untruncated(logits, rng);
        }
        let token = self.sample_truncated(logits, rng);
        (token, self.log_prob(logits, token))
    }

    /// Temperature sampling over the whole vocabulary: one pass for the maximum, one for the weights (kept in
    /// f64, as [`log_prob`](Self::log_prob) sums them), one to draw.
    fn sample_untruncated(&self, logits: &[f32], rng: &mut impl RngExt) -> (u32, f32) {
        let t = f64::from(self.temperature);
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let weights: Vec<f64> = logits.iter().map(|&x| ((x as f64 - max) / t).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut u = rng.random::<f64>() * total;
        // The last token with positive weight, should rounding leave `u` past every weight.
        let mut token = weights.iter().rposition(|&w| w > 0.0).unwrap_or(0);
        for (i, &w) in weights.iter().enumerate() {
            if u < w {
                token = i;
                break;
            }
            u -= w;
        }
        let log_prob = ((logits[token] as f64 - max) / t - total.ln()) as f32;
        (token as u32, log_prob)
    }

    /// Top-k / top-p sampling: candidates sorted by probability, truncated, then drawn.
    fn sample_truncated(&self, logits: &[f32], rng: &mut impl RngExt) -> u32 {
        // Candidates sorted by logit, descending; ties keep the lower id first so results are stable.
        let mut order: Vec<u32> = (0..logits.len() as u32).collect();
        order.sort_by(|&a, &b| logits[b as usize].total_cmp(&logits[a as usize]).then(a.cmp(&b)));
        if self.top_k > 0 && self.top_k < order.len() {
            order.truncate(self.top_k);
        }
        let max = logits[order[0] as usize];
        let mut probs: Vec<f32> =
            order.iter().map(|&t| ((logits[t as usize] - max) / self.temperature).exp()).collect();
        let total: f32 = probs.iter().sum();
        probs.iter_mut().for_each(|p| *p /= total);
        if self.top_p < 1.0 {
            let mut cumulative = 0.0;
            let mut keep = probs.len();
            for (i, p) in probs.iter().enumerate() {
                cumulative += p;
                if cumulative >= self.top_p {
                    keep = i + 1;
                    break;
                }
            }
            probs.truncate(keep);
            order.truncate(keep);
        }
        let total: f32 = probs.iter().sum();
        let mut u = rng.random::<f32>() * total;
        for (p, &t) in probs.iter().zip(&order) {
            if u < *p {
                return t;
            }
            u -= p;
        }
        *order.last().expect("at least one candidate")
    }

    /// The log-probability of `token` under the model's distribution at this sampler's temperature
    /// (`log_softmax(logits / T)`, with `T = 1` for greedy decoding), over the whole vocabulary: top-k and top-p
    /// shape which tokens are drawn but not this value, as in TRL and verl, whose trainers recompute it the same
    /// way. Summed in `f64`.
    pub fn log_prob(&self, logits: &[f32], token: u32) -> f32 {
        let t = if self.is_greedy() { 1.0 } else { f64::from(self.temperature) };
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let log_total = logits.iter().map(|&x| ((x as f64 - max) / t).exp()).sum::<f64>().ln();
        ((logits[token as usize] as f64 - max) / t - log_total) as f32
    }
}

/// Index of the largest logit (the first one on ties).
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &x) in logits.iter().enumerate() {
        if x > logits[best] {
            best = i;
        }
    }
    best as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn log_probs_are_the_tempered_softmax() {
        let logits = [0.0f32, (2.0f32).ln(), (5.0f32).ln()];
        let greedy = Sampler::greedy();
        assert!((greedy.log_prob(&logits, 2) - (5.0f32 / 8.0).ln()).abs() < 1e-6);
        // At T = 0.5 the probabilities go as the squares: 1, 4, 25.
        let hot = Sampler::new(0.5, 1, 1.0).unwrap();
        assert!((hot.log_prob(&logits, 1) - (4.0f32 / 30.0).ln()).abs() < 1e-6, "top-k does not change it");
        let total: f32 = (0..3).map(|t| hot.log_prob(&logits, t).exp()).sum();
        assert!((total - 1.0).abs() < 1e-6);
    }

    #[test]
    fn greedy_is_argmax() {
        let mut rng = act_core::rng_from_seed(0);
        assert_eq!(Sampler::greedy().sample(&[0.1, 3.0, 2.0, 3.0], &mut rng), 1);
    }

    #[test]
    fn top_k_one_is_greedy_and_seed_repeats() {
        let logits = [0.5, 0.1, 2.0, -1.0];
        let s = Sampler::new(1.0, 1, 1.0).unwrap();
        let mut rng = act_core::rng_from_seed(3);
        assert!((0..50).all(|_| s.sample(&logits, &mut rng) == 2));
        let t = Sampler::new(1.5, 0, 1.0).unwrap();
        let draw = |seed| {
            let mut rng = act_core::rng_from_seed(seed);
            (0..20).map(|_| t.sample(&logits, &mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(9), draw(9));
        assert_ne!(draw(9), draw(10));
    }

    #[test]
    fn sampling_frequencies_follow_softmax() {
        let logits = [0.0f32, (2.0f32).ln(), (5.0f32).ln()];
        let s = Sampler::new(1.0, 0, 1.0).unwrap();
        let mut rng = act_core::rng_from_seed(11);
        let mut counts = [0usize; 3];
        for _ in 0..8000 {
            counts[s.sample(&logits, &mut rng) as usize] += 1;
        }
        let expected = [1.0 / 8.0, 2.0 / 8.0, 5.0 / 8.0];
        for (c, e) in counts.iter().zip(expected) {
            assert!((*c as f64 / 8000.0 - e).abs() < 0.03, "{counts:?}");
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(Sampler::new(-1.0, 0, 1.0).is_err());
        assert!(Sampler::new(f32::NAN, 0, 1.0).is_err());
        assert!(Sampler::new(1.0, 0, 0.0).is_err());
        assert!(Sampler::new(1.0, 0, 1.5).is_err());
    }

    proptest! {
        #[test]
        fn one_pass_draws_report_their_log_prob(logits in proptest::collection::vec(-8.0f32..8.0, 1..64), t in 0.0f32..2.0, top_k in 0usize..4, seed: u64) {
            let s = Sampler::new(t, top_k, 1.0).unwrap();
            let mut rng = act_core::rng_from_seed(seed);
            let (token, log_prob) = s.sample_with_log_prob(&logits, &mut rng);
            prop_assert!((token as usize) < logits.len());
            prop_assert_eq!(log_prob, s.log_prob(&logits, token));
            let mut again = act_core::rng_from_seed(seed);
            prop_assert_eq!(s.sample(&logits, &mut again), token);
        }

        #[test]
        fn top_p_keeps_only_the_nucleus(logits in proptest::collection::vec(-5.0f32..5.0, 2..20), top_p in 0.05f32..1.0, seed: u64) {
            let s = Sampler::new(0.7, 0, top_p).unwrap();
            let mut rng = act_core::rng_from_seed(seed);
            let token = s.sample(&logits, &mut rng) as usize;
            prop_assert!(token < logits.len());
            // Mass strictly above the chosen token must be below top_p, or it would not be in the nucleus.
            let probs: Vec<f32> = {
                let max = logits.iter().cloned().fold(f32::MIN, f32::max);
                let e: Vec<f32> = logits.iter().map(|l| ((l - max) / 0.7).exp()).collect();
                let t: f32 = e.iter().sum();
                e.iter().map(|x| x / t).collect()
            };
            let above: f32 = probs.iter().enumerate()
                .filter(|&(i, p)| *p > probs[token] || (*p == probs[token] && i < token))
                .map(|(_, p)| p).sum();
            prop_assert!(above < top_p + 1e-5);
        }
    }
}
