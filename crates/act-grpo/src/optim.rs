//! One optimizer update: global-norm clipping, the scheduled learning rate, AdamW, and the non-finite guard.

use act_model::Qwen3;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};

use crate::clip::{clip_grad_norm, global_grad_norm};
use crate::config::OptimizerConfig;
use crate::error::GrpoError;
use crate::guard::NonFiniteGuard;
use crate::precision::{MasterWeights, grads_to_f32};
use crate::schedule::LrSchedule;

/// AdamW built from `config` (no per-tensor clipping: clipping is global, in the trainer's update step).
pub fn adamw(config: &OptimizerConfig) -> ModuleOptimizer {
    AdamWConfig::new()
        .with_beta_1(config.beta1)
        .with_beta_2(config.beta2)
        .with_epsilon(config.epsilon)
        .with_weight_decay(config.weight_decay)
        .init()
}

/// What an update did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UpdateOutcome {
    /// Whether the parameters changed.
    pub applied: bool,
    /// The global gradient norm before clipping (NaN when the loss was already non-finite).
    pub grad_norm: f64,
    /// The learning rate of this update slot.
    pub lr: f64,
}

/// The optimiser side of a trainer.
pub(crate) struct Updater {
    pub optimizer: ModuleOptimizer,
    pub schedule: LrSchedule,
    pub max_grad_norm: Option<f64>,
    /// Update slots used so far (skipped ones included, so the schedule does not depend on failures).
    pub updates: usize,
    pub guard: NonFiniteGuard,
    /// The f32 weights the updates apply to, when the model trains in half precision.
    pub master: Option<MasterWeights>,
}

impl Updater {
    pub fn new(config: &OptimizerConfig, total_updates: usize, nonfinite_limit: usize) -> Self {
        Updater {
            optimizer: adamw(config),
            schedule: LrSchedule::new(config, total_updates),
            max_grad_norm: config.max_grad_norm,
            updates: 0,
            guard: NonFiniteGuard::new(nonfinite_limit),
            master: None,
        }
    }

    /// Uses an update slot without changing the model, because the loss was not finite.
    pub fn skip_nonfinite_loss(&mut self, step: usize) -> Result<UpdateOutcome, GrpoError> {
        let lr = self.schedule.lr(self.updates);
        self.updates += 1;
        self.guard.record_skip(step, "loss")?;
        Ok(UpdateOutcome { applied: false, grad_norm: f64::NAN, lr })
    }

    /// The weights to checkpoint or hand out: the f32 master weights when there are some, else `model`.
    pub fn trained<'a>(&'a self, model: &'a Qwen3) -> &'a Qwen3 {
        self.master.as_ref().map_or(model, |m| &m.model)
    }

    /// Clips `grads` and applies them, unless their norm is not finite. With master weights, `model` is the
    /// working copy the gradients came from: they are widened to f32 and applied to the master, and the result is
    /// a new working copy.
    pub fn apply(
        &mut self,
        model: Qwen3,
        grads: GradientsParams,
        step: usize,
    ) -> Result<(Qwen3, UpdateOutcome), GrpoError> {
        match self.master.take() {
            None => self.apply_to(model, grads, step),
            Some(MasterWeights { model: master, dtype }) => {
                let grads = grads_to_f32(&master, grads);
                let (master, outcome) = self.apply_to(master, grads, step)?;
                let master = MasterWeights { model: master, dtype };
                let working = if outcome.applied { master.working() } else { Ok(model) };
                self.master = Some(master);
                Ok((working?, outcome))
            }
        }
    }

    fn apply_to(
        &mut self,
        model: Qwen3,
        mut grads: GradientsParams,
        step: usize,
    ) -> Result<(Qwen3, UpdateOutcome), GrpoError> {
        let lr = self.schedule.lr(self.updates);
        self.updates += 1;
        let grad_norm = match self.max_grad_norm {
            Some(max) => clip_grad_norm(&model, &mut grads, max),
            None => global_grad_norm(&model, &grads),
        };
        if !grad_norm.is_finite() {
            self.guard.record_skip(step, "gradient")?;
            return Ok((model, UpdateOutcome { applied: false, grad_norm, lr }));
        }
        let model = self.optimizer.step(lr, model, grads);
        self.guard.record_success();
        Ok((model, UpdateOutcome { applied: true, grad_norm, lr }))
    }
}
