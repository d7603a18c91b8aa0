//! The GRPO objective on Burn tensors: clipped surrogate (clip-higher, optional dual clip, log-ratio clamp), a KL
//! term to a frozen reference, and the aggregation modes, with the statistics trainers log.

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::{KlEstimator, LossAggregation, LossConfig};
use crate::error::GrpoError;

/// Per-token inputs of one (micro-)batch, all `[batch, tokens]` except the advantages (`[batch, 1]` or
/// `[batch, tokens]`).
#[derive(Debug, Clone)]
pub struct LossInputs {
    /// Log-probs of the sampled tokens under the policy being optimised (carries the gradient).
    pub log_probs: Tensor<2>,
    /// Log-probs under the policy that sampled them (pass `log_probs.clone().detach()` when on-policy).
    pub old_log_probs: Tensor<2>,
    /// Log-probs under the frozen reference; required when the KL coefficient is not 0.
    pub ref_log_probs: Option<Tensor<2>>,
    /// `[batch, 1]`: one advantage per completion; `[batch, tokens]`: one per token (a packed sequence of several
    /// turns, each turn's tokens with its own advantage).
    pub advantages: Tensor<2>,
    /// 1 on completion tokens that carry loss, 0 on prompt and padding.
    pub mask: Tensor<2>,
    /// The policy's predictive entropy at each token (carrying the gradient); required when the entropy
    /// coefficient is not 0.
    pub entropy: Option<Tensor<2>>,
}

/// Totals of the whole update batch (every micro-batch of one optimizer update), which the aggregation divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchTotals {
    /// Completions in the update batch.
    pub sequences: usize,
    /// Completion tokens (mask ones) in the update batch.
    pub tokens: usize,
    /// The completion length limit: Dr. GRPO's constant.
    pub max_completion_tokens: usize,
}

/// Sums over the masked tokens of one micro-batch; [`LossStats::merge`] adds micro-batches together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LossStats {
    /// The aggregated loss of this micro-batch (its share of the update's loss).
    pub loss: f64,
    /// Masked tokens.
    pub tokens: f64,
    /// Tokens with `A < 0` and ratio below `1 - eps_low` (the clip is active).
    pub low_clipped: f64,
    /// Tokens with `A > 0` and ratio above `1 + eps_high`.
    pub high_clipped: f64,
    /// Tokens with `A < 0` and ratio above the dual-clip constant.
    pub dual_clipped: f64,
    /// Sum of the per-token KL estimates (0 when the KL term is off).
    pub kl_sum: f64,
    /// Sum of the importance ratios.
    pub ratio_sum: f64,
}

impl LossStats {
    /// Adds another micro-batch's sums.
    pub fn merge(&mut self, other: &LossStats) {
        self.loss += other.loss;
        self.tokens += other.tokens;
        self.low_clipped += other.low_clipped;
        self.high_clipped += other.high_clipped;
        self.dual_clipped += other.dual_clipped;
        self.kl_sum += other.kl_sum;
        self.ratio_sum += other.ratio_sum;
    }

    fn per_token(&self, value: f64) -> f64 {
        if self.tokens > 0.0 { value / self.tokens } else { 0.0 }
    }

    /// Fraction of tokens where the lower clip is active.
    pub fn low_clip_fraction(&self) -> f64 {
        self.per_token(self.low_clipped)
    }

    /// Fraction of tokens where the upper clip is active.
    pub fn high_clip_fraction(&self) -> f64 {
        self.per_token(self.high_clipped)
    }

    /// Fraction of tokens where either clip is active (TRL's `clip_ratio/region_mean`).
    pub fn clip_fraction(&self) -> f64 {
        self.per_token(self.low_clipped + self.high_clipped)
    }

    /// Fraction of tokens where the dual clip is active.
    pub fn dual_clip_fraction(&self) -> f64 {
        self.per_token(self.dual_clipped)
    }

    /// Mean per-token KL estimate.
    pub fn kl_mean(&self) -> f64 {
        self.per_token(self.kl_sum)
    }

    /// Mean importance ratio.
    pub fn ratio_mean(&self) -> f64 {
        self.per_token(self.ratio_sum)
    }
}

/// The loss to back-propagate and its statistics.
#[derive(Debug, Clone)]
pub struct GrpoLoss {
    /// A one-element tensor.
    pub loss: Tensor<1>,
    /// Detached statistics.
    pub stats: LossStats,
}

/// The per-token KL estimate for `d = logp - logp_ref`.
pub fn kl_estimate(d: Tensor<2>, estimator: KlEstimator, clamp: f64) -> Tensor<2> {
    match estimator {
        KlEstimator::K1 => d,
        KlEstimator::K2 => d.square().mul_scalar(0.5),
        KlEstimator::K3 => {
            let d = d.clamp(-clamp, clamp);
            d.clone().neg().exp() + d.sub_scalar(1.0)
        }
    }
}

/// The GRPO loss of one micro-batch, divided by the totals of its whole update batch (see [`LossAggregation`]).
///
/// ```
/// use act_grpo::{BatchTotals, LossConfig, LossInputs, grpo_loss};
/// use burn::prelude::*;
/// let device = Device::flex();
/// let t = |v: Vec<f32>| Tensor::<2>::from_data(TensorData::new(v, [1, 2]), &device);
/// let inputs = LossInputs {
///     log_probs: t(vec![-0.5, -1.0]),
///     old_log_probs: t(vec![-0.5, -1.0]),
///     ref_log_probs: None,
///     advantages: Tensor::from_data(TensorData::new(vec![2.0f32], [1, 1]), &device),
///     mask: t(vec![1.0, 1.0]),
///     entropy: None,
/// };
/// // On-policy (ratio 1), the loss is -A averaged over tokens.
/// let out = grpo_loss(inputs, &LossConfig::default(), BatchTotals { sequences: 1, tokens: 2, max_completion_tokens: 2 })
///     .unwrap();
/// assert!((out.loss.into_scalar::<f32>() + 2.0).abs() < 1e-6);
/// ```
pub fn grpo_loss(inputs: LossInputs, config: &LossConfig, totals: BatchTotals) -> Result<GrpoLoss, GrpoError> {
    let LossInputs { log_probs, old_log_probs, ref_log_probs, advantages, mask, entropy } = inputs;
    let [batch, tokens] = log_probs.dims();
    let shape_error = |what: &str, dims: Vec<usize>| {
        Err(GrpoError::Input(format!("{what} has shape {dims:?}; log-probs are [{batch}, {tokens}]")))
    };
    if old_log_probs.dims() != [batch, tokens] {
        return shape_error("old log-probs", old_log_probs.dims().to_vec());
    }
    if mask.dims() != [batch, tokens] {
        return shape_error("the mask", mask.dims().to_vec());
    }
    let token_level = match advantages.dims() {
        [b, 1] if b == batch => false,
        [b, t] if b == batch && t == tokens => true,
        dims => return shape_error("the advantages (one per row, or one per token)", dims.to_vec()),
    };
    let kl_on = config.kl_coef != 0.0;
    if kl_on {
        match &ref_log_probs {
            None => {
                return Err(GrpoError::Input(
                    "the KL coefficient is not 0 but no reference log-probs were given".into(),
                ));
            }
            Some(r) if r.dims() != [batch, tokens] => return shape_error("reference log-probs", r.dims().to_vec()),
            Some(_) => {}
        }
    }
    if totals.sequences == 0 {
        return Err(GrpoError::Input("the update batch has no completions".into()));
    }
    let entropy = match (config.entropy_coef != 0.0, entropy) {
        (false, _) => None,
        (true, None) => {
            return Err(GrpoError::Input("the entropy coefficient is not 0 but no entropies were given".into()));
        }
        (true, Some(e)) if e.dims() != [batch, tokens] => return shape_error("the entropies", e.dims().to_vec()),
        (true, Some(e)) => Some(e),
    };

    let clamp = config.log_ratio_clamp;
    let ratio = (log_probs.clone() - old_log_probs).clamp(-clamp, clamp).exp();
    let adv = if token_level { advantages } else { advantages.repeat_dim(1, tokens) };
    let unclipped = ratio.clone() * adv.clone();
    let clipped = ratio.clone().clamp(1.0 - config.clip_eps_low, 1.0 + config.clip_eps_high) * adv.clone();
    let mut per_token = unclipped.min_pair(clipped).neg();
    let negative = adv.clone().lower_elem(0.0);
    if let Some(c) = config.dual_clip {
        // For A < 0 the clipped surrogate grows without bound in the ratio; verl caps it at -A * c.
        let cap = adv.clone().neg().mul_scalar(c);
        let capped = per_token.clone().min_pair(cap);
        per_token = per_token.mask_where(negative.clone(), capped);
    }
    let kl = match (kl_on, ref_log_probs) {
        (true, Some(reference)) => {
            let kl = kl_estimate(log_probs - reference, config.kl_estimator, clamp);
            per_token = per_token + kl.clone().mul_scalar(config.kl_coef);
            Some(kl)
        }
        _ => None,
    };
    if let Some(entropy) = entropy {
        // verl's entropy bonus: the entropy, aggregated as the loss is, is subtracted from it.
        per_token = per_token - entropy.mul_scalar(config.entropy_coef);
    }

    let masked = per_token * mask.clone();
    let loss = match config.aggregation {
        LossAggregation::TokenMean => masked.sum().div_scalar(totals.tokens.max(1) as f64),
        LossAggregation::SequenceMean => {
            let lengths = mask.clone().sum_dim(1).clamp_min(1.0);
            (masked.sum_dim(1) / lengths).sum().div_scalar(totals.sequences as f64)
        }
        LossAggregation::ConstantNormalizer => {
            if totals.max_completion_tokens == 0 {
                return Err(GrpoError::Input("Dr. GRPO's normaliser needs a positive max_completion_tokens".into()));
            }
            masked.sum().div_scalar((totals.sequences * totals.max_completion_tokens) as f64)
        }
    };

    // Statistics: one host read for all of them.
    let ratio = ratio.detach();
    let adv = adv.detach();
    let selected = mask.clone().detach().greater_elem(0.5);
    let count = |b: Tensor<2, Bool>| b.bool_and(selected.clone()).float().sum();
    let positive = adv.greater_elem(0.0);
    let low = count(ratio.clone().lower_elem(1.0 - config.clip_eps_low).bool_and(negative.clone()));
    let high = count(ratio.clone().greater_elem(1.0 + config.clip_eps_high).bool_and(positive));
    let dual = match config.dual_clip {
        Some(c) => count(ratio.clone().greater_elem(c).bool_and(negative)),
        None => low.clone().zeros_like(),
    };
    let mask = mask.detach();
    let kl_sum = match kl {
        Some(kl) => (kl.detach() * mask.clone()).sum(),
        None => low.clone().zeros_like(),
    };
    let ratio_sum = (ratio * mask.clone()).sum();
    let summary = Tensor::cat(vec![loss.clone().detach(), mask.sum(), low, high, dual, kl_sum, ratio_sum], 0);
    let values: Vec<f32> = summary
        .into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|e| GrpoError::Input(format!("reading loss statistics: {e:?}")))?;
    let stats = LossStats {
        loss: values[0] as f64,
        tokens: values[1] as f64,
        low_clipped: values[2] as f64,
        high_clipped: values[3] as f64,
        dual_clipped: values[4] as f64,
        kl_sum: values[5] as f64,
        ratio_sum: values[6] as f64,
    };
    Ok(GrpoLoss { loss, stats })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Inputs and expected values: scripts/expected_losses.py (TRL's formulas in float64 numpy).
    const LOGP: [f32; 16] =
        [-1.0, -0.5, -2.0, -0.1, -0.3, -1.2, -0.7, -3.0, -2.0, -0.05, -1.5, -0.9, -0.4, -0.6, -0.8, -1.0];
    const OLD: [f32; 16] =
        [-1.1, -0.9, -1.6, -0.1, -1.5, -0.9, -0.7, -2.0, -1.0, -0.3, -1.5, -0.5, -0.4, -0.6, -0.8, -1.0];
    const REF: [f32; 16] =
        [-1.3, -0.4, -2.5, -0.2, -0.1, -1.0, -1.7, -2.5, -2.2, -0.5, -1.0, -0.9, -0.4, -0.6, -0.8, -1.0];
    const ADV: [f32; 4] = [0.8, -1.2, 0.5, 0.3];
    const MASK: [f32; 16] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    const TOTALS: BatchTotals = BatchTotals { sequences: 4, tokens: 9, max_completion_tokens: 5 };

    fn t2(values: &[f32], device: &Device) -> Tensor<2> {
        Tensor::from_data(TensorData::new(values.to_vec(), [4, 4]), device)
    }

    fn inputs(device: &Device) -> LossInputs {
        LossInputs {
            log_probs: t2(&LOGP, device),
            old_log_probs: t2(&OLD, device),
            ref_log_probs: Some(t2(&REF, device)),
            advantages: Tensor::from_data(TensorData::new(ADV.to_vec(), [4, 1]), device),
            mask: t2(&MASK, device),
            entropy: None,
        }
    }

    fn config(f: impl FnOnce(&mut LossConfig)) -> LossConfig {
        let mut c = LossConfig::default();
        f(&mut c);
        c
    }

    /// (loss, low clip fraction, high clip fraction, dual clip fraction, KL mean).
    fn check(name: &str, config: LossConfig, expected: [f64; 5]) {
        let out = grpo_loss(inputs(&Device::flex()), &config, TOTALS).unwrap();
        let loss = out.loss.into_scalar::<f32>() as f64;
        assert!(
            (loss - expected[0]).abs() < 2e-6 * expected[0].abs().max(1.0),
            "{name}: loss {loss} vs {}",
            expected[0]
        );
        assert!((out.stats.loss - expected[0]).abs() < 2e-6, "{name}: stats.loss");
        let s = out.stats;
        let got = [s.low_clip_fraction(), s.high_clip_fraction(), s.dual_clip_fraction(), s.kl_mean()];
        for (i, (g, e)) in got.iter().zip(&expected[1..]).enumerate() {
            assert!((g - e).abs() < 2e-6, "{name}: statistic {i}: {g} vs {e}");
        }
        assert_eq!(s.tokens, 9.0);
    }

    #[test]
    fn token_mean() {
        check("token_mean", LossConfig::default(), [0.24220086837878949, 1.0 / 9.0, 2.0 / 9.0, 0.0, 0.0]);
    }

    #[test]
    fn clip_higher() {
        let c = config(|c| c.clip_eps_high = 0.28);
        check("clip_higher", c, [0.23064531282323397, 1.0 / 9.0, 2.0 / 9.0, 0.0, 0.0]);
    }

    #[test]
    fn dual_clip() {
        let c = config(|c| c.dual_clip = Some(3.0));
        check("dual_clip", c, [0.19951861201391655, 1.0 / 9.0, 2.0 / 9.0, 1.0 / 9.0, 0.0]);
    }

    #[test]
    fn kl_estimators() {
        for (estimator, loss, kl) in [
            (KlEstimator::K1, 0.25131197948990064, 0.2277777777777778),
            (KlEstimator::K2, 0.2459397572676784, 0.09347222222222223),
            (KlEstimator::K3, 0.24519820650633395, 0.07493345318861068),
        ] {
            let c = config(|c| {
                c.kl_estimator = estimator;
                c.kl_coef = 0.04;
            });
            check(&format!("{estimator:?}"), c, [loss, 1.0 / 9.0, 2.0 / 9.0, 0.0, kl]);
        }
    }

    #[test]
    fn sequence_mean_counts_the_empty_completion() {
        let c = config(|c| c.aggregation = LossAggregation::SequenceMean);
        check("sequence_mean", c, [0.21524467899487526, 1.0 / 9.0, 2.0 / 9.0, 0.0, 0.0]);
    }

    #[test]
    fn constant_normalizer() {
        let c = config(|c| c.aggregation = LossAggregation::ConstantNormalizer);
        check("constant_normalizer", c, [0.10899039077045528, 1.0 / 9.0, 2.0 / 9.0, 0.0, 0.0]);
    }

    #[test]
    fn everything_at_once() {
        let c = config(|c| {
            c.aggregation = LossAggregation::SequenceMean;
            c.kl_estimator = KlEstimator::K3;
            c.kl_coef = 0.1;
            c.dual_clip = Some(3.0);
            c.clip_eps_high = 0.28;
        });
        check("sequence_mean_k3_dual", c, [0.1799683302788945, 1.0 / 9.0, 2.0 / 9.0, 1.0 / 9.0, 0.07493345318861068]);
    }

    #[test]
    fn the_entropy_bonus_subtracts_the_aggregated_entropy() {
        let device = Device::flex();
        let entropy: Vec<f32> = (0..16).map(|i| 0.1 * i as f32).collect();
        for aggregation in
            [LossAggregation::TokenMean, LossAggregation::SequenceMean, LossAggregation::ConstantNormalizer]
        {
            let plain = config(|c| c.aggregation = aggregation);
            let base = grpo_loss(inputs(&device), &plain, TOTALS).unwrap().loss.into_scalar::<f32>() as f64;
            let with = config(|c| {
                c.aggregation = aggregation;
                c.entropy_coef = 0.01;
            });
            let mut i = inputs(&device);
            i.entropy = Some(t2(&entropy, &device));
            let bonus = grpo_loss(i, &with, TOTALS).unwrap().loss.into_scalar::<f32>() as f64;
            // The entropy alone, aggregated as the loss is (coefficient 1, advantages 0, on-policy).
            let mut alone = inputs(&device);
            alone.old_log_probs = alone.log_probs.clone();
            alone.advantages = alone.advantages.zeros_like();
            alone.entropy = Some(t2(&entropy, &device).neg());
            let only = config(|c| {
                c.aggregation = aggregation;
                c.entropy_coef = 1.0;
            });
            let aggregated = -(grpo_loss(alone, &only, TOTALS).unwrap().loss.into_scalar::<f32>() as f64);
            assert!(aggregated < -0.1, "{aggregation:?}: the entropy enters with a minus sign: {aggregated}");
            assert!((bonus - (base + 0.01 * aggregated)).abs() < 1e-6, "{aggregation:?}: {bonus} vs {base}");
        }
        let mut missing = inputs(&device);
        missing.entropy = None;
        let err = grpo_loss(missing, &config(|c| c.entropy_coef = 0.01), TOTALS).err().unwrap().to_string();
        assert!(err.contains("entropies"), "{err}");
    }

    #[test]
    fn log_ratio_clamp_and_dual_clip_bound_the_loss() {
        let device = Device::flex();
        let one = |v: f32| Tensor::<2>::from_data(TensorData::new(vec![v], [1, 1]), &device);
        let run = |c: LossConfig| {
            let inputs = LossInputs {
                log_probs: one(0.0),
                old_log_probs: one(-25.0),
                ref_log_probs: None,
                advantages: Tensor::from_data(TensorData::new(vec![-1.0f32], [1, 1]), &device),
                mask: one(1.0),
                entropy: None,
            };
            let totals = BatchTotals { sequences: 1, tokens: 1, max_completion_tokens: 1 };
            grpo_loss(inputs, &c, totals).unwrap().loss.into_scalar::<f32>() as f64
        };
        let clamped = run(LossConfig::default());
        assert!((clamped - 485165195.4097903).abs() / 485165195.4097903 < 1e-5, "{clamped}");
        assert!((run(config(|c| c.dual_clip = Some(3.0))) - 3.0).abs() < 1e-6);
    }

    fn gradient(config: LossConfig) -> Vec<f32> {
        let device = Device::flex().autodiff();
        let mut inputs = inputs(&device);
        let log_probs = inputs.log_probs.require_grad();
        inputs.log_probs = log_probs.clone();
        let out = grpo_loss(inputs, &config, TOTALS).unwrap();
        let grads = out.loss.backward();
        log_probs.grad(&grads).unwrap().into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
    }

    #[test]
    fn gradients_match_finite_differences() {
        let expected_default = [
            -0.09823741493886207,
            0.0,
            -0.05958400410566167,
            -0.088888888888361,
            0.44268225632415614,
            0.0,
            0.1333333333186637,
            0.0,
            -0.02043774670335008,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        ];
        let expected_all = [
            -0.053638659791577226,
            -0.0006573182553815116,
            -0.031056818922126084,
            -0.049405233848442975,
            -0.001845022939983565,
            -0.0018450229677391405,
            0.10526767132978954,
            0.0,
            -0.020726599492260078,
            0.004529648101048167,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        ];
        let all = config(|c| {
            c.aggregation = LossAggregation::SequenceMean;
            c.kl_coef = 0.1;
            c.dual_clip = Some(3.0);
            c.clip_eps_high = 0.28;
        });
        for (name, c, expected) in [("default", LossConfig::default(), expected_default), ("all", all, expected_all)] {
            let got = gradient(c);
            for (i, (g, e)) in got.iter().zip(expected).enumerate() {
                assert!((*g as f64 - e).abs() < 1e-5, "{name} grad[{i}]: {g} vs {e}");
            }
        }
    }

    #[test]
    fn micro_batches_add_up_to_the_whole_batch() {
        let device = Device::flex();
        for aggregation in
            [LossAggregation::TokenMean, LossAggregation::SequenceMean, LossAggregation::ConstantNormalizer]
        {
            let c = config(|c| {
                c.aggregation = aggregation;
                c.kl_coef = 0.05;
            });
            let whole = grpo_loss(inputs(&device), &c, TOTALS).unwrap().stats;
            let mut parts = LossStats::default();
            for rows in [0..1, 1..4] {
                let i = inputs(&device);
                let n = rows.len();
                let slice = |t: Tensor<2>| t.narrow(0, rows.start, n);
                let part = LossInputs {
                    log_probs: slice(i.log_probs),
                    old_log_probs: slice(i.old_log_probs),
                    ref_log_probs: i.ref_log_probs.map(slice),
                    advantages: i.advantages.narrow(0, rows.start, n),
                    mask: slice(i.mask),
                    entropy: None,
                };
                parts.merge(&grpo_loss(part, &c, TOTALS).unwrap().stats);
            }
            assert!((parts.loss - whole.loss).abs() < 1e-6, "{aggregation:?}: {} vs {}", parts.loss, whole.loss);
            assert_eq!(parts.tokens, whole.tokens);
            assert!((parts.kl_sum - whole.kl_sum).abs() < 1e-5);
        }
    }

    #[test]
    fn per_token_advantages_equal_per_row_ones_when_constant_in_a_row() {
        let device = Device::flex();
        let c = config(|c| c.kl_coef = 0.05);
        let per_row = grpo_loss(inputs(&device), &c, TOTALS).unwrap();
        let mut i = inputs(&device);
        let spread: Vec<f32> = ADV.iter().flat_map(|&a| [a; 4]).collect();
        i.advantages = t2(&spread, &device);
        let per_token = grpo_loss(i, &c, TOTALS).unwrap();
        assert_eq!(per_row.stats, per_token.stats);
        // A token's own advantage counts: flipping the sign of row 0's last masked token changes the loss.
        let mut i = inputs(&device);
        let mut flipped = spread.clone();
        flipped[3] = -flipped[3];
        i.advantages = t2(&flipped, &device);
        assert!((grpo_loss(i, &c, TOTALS).unwrap().stats.loss - per_row.stats.loss).abs() > 1e-4);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let device = Device::flex();
        let mut i = inputs(&device);
        i.advantages = Tensor::from_data(TensorData::new(vec![1.0f32; 3], [3, 1]), &device);
        assert!(grpo_loss(i, &LossConfig::default(), TOTALS).unwrap_err().to_string().contains("advantages"));
        let mut i = inputs(&device);
        i.ref_log_probs = None;
        let kl = config(|c| c.kl_coef = 0.1);
        assert!(grpo_loss(i, &kl, TOTALS).unwrap_err().to_string().contains("reference"));
        let zero = BatchTotals { sequences: 0, ..TOTALS };
        assert!(grpo_loss(inputs(&device), &LossConfig::default(), zero).is_err());
    }
}
