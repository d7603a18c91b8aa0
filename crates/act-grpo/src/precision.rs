//! Mixed precision for full fine-tuning: the forward and backward passes run on a half-precision working copy of
//! the model, while the weights the optimiser updates (and AdamW's moments) stay in f32.

use act_model::Qwen3;
use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::DType;
use serde::{Deserialize, Serialize};

use crate::error::GrpoError;

/// The dtype a trainer's forward and backward passes run in.
///
/// With [`Bf16`](Self::Bf16) or [`F16`](Self::F16) the trainer keeps the weights in f32 (master weights): each
/// update casts the half-precision gradients to f32, clips them and applies AdamW to the f32 weights (so its
/// moments are f32 too), then casts a new working copy. Updates smaller than a half-precision step of a weight
/// (about 0.4% of it in bf16) accumulate in the master instead of rounding away, which is why mixed-precision
/// trainers (Apex O2, DeepSpeed, PyTorch FSDP's `MixedPrecision`) keep one. It costs the f32 weights beside the
/// working copy: 4 + 2 bytes per parameter instead of 4, the same 8 bytes of moments; it saves activation memory
/// and, on accelerators with fast half-precision kernels, time (on a CPU with flex, bf16 is slower).
///
/// For full fine-tuning only: a model with LoRA adapters trains its f32 adapters on a base cast with
/// [`Qwen3::with_float_dtype`], and is refused here with anything but [`F32`](Self::F32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ComputeDtype {
    /// Everything in f32, no master copy (the default).
    #[default]
    F32,
    /// bfloat16 working copy, f32 master weights.
    Bf16,
    /// IEEE half-precision working copy, f32 master weights.
    F16,
}

impl ComputeDtype {
    /// The Burn dtype of the working copy.
    pub fn dtype(self) -> DType {
        match self {
            ComputeDtype::F32 => DType::F32,
            ComputeDtype::Bf16 => DType::BF16,
            ComputeDtype::F16 => DType::F16,
        }
    }

    /// Whether this is [`F32`](Self::F32).
    pub fn is_f32(self) -> bool {
        self == ComputeDtype::F32
    }
}

/// The f32 weights a half-precision working copy is cast from.
pub(crate) struct MasterWeights {
    /// The f32 weights (on the training device, tracking gradients as the working copy does).
    pub model: Qwen3,
    /// The working copy's dtype.
    pub dtype: DType,
}

impl MasterWeights {
    /// Splits `model` into a working copy in `compute`'s dtype and f32 master weights (`None` for f32). A
    /// half-precision `model` is widened to f32 first (its weights are then the half-precision values: give the
    /// f32 model to keep its full precision).
    pub fn split(model: Qwen3, compute: ComputeDtype) -> Result<(Qwen3, Option<MasterWeights>), GrpoError> {
        if compute.is_f32() {
            return Ok((model, None));
        }
        let master = model
            .with_float_dtype(DType::F32)
            .map_err(|e| GrpoError::Config(format!("compute_dtype {compute:?} is for full fine-tuning: {e}")))?;
        let dtype = compute.dtype();
        let working = working_copy(&master, dtype)?;
        Ok((working, Some(MasterWeights { model: master, dtype })))
    }

    /// The working copy of the current master weights.
    pub fn working(&self) -> Result<Qwen3, GrpoError> {
        working_copy(&self.model, self.dtype)
    }
}

/// `master` cast to `dtype` ([`Qwen3::with_float_dtype`] makes every parameter a leaf with the master's gradient
/// settings, so gradients land on the working copy's parameters, under the master's ids).
fn working_copy(master: &Qwen3, dtype: DType) -> Result<Qwen3, GrpoError> {
    Ok(master.clone().with_float_dtype(dtype)?)
}

/// `grads` with every gradient of `module`'s parameters cast to f32.
pub(crate) fn grads_to_f32(module: &Qwen3, grads: GradientsParams) -> GradientsParams {
    struct Widen {
        grads: GradientsParams,
    }
    impl ModuleVisitor for Widen {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(grad) = self.grads.remove::<D>(param.id) {
                let grad = if grad.dtype() == DType::F32 { grad } else { grad.cast(DType::F32) };
                self.grads.register::<D>(param.id, grad);
            }
        }
    }
    let mut widen = Widen { grads };
    module.visit(&mut widen);
    widen.grads
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_model::Qwen3Config;

    fn weights(model: &Qwen3) -> Vec<f32> {
        model.embed_tokens.weight.val().cast(DType::F32).into_data().try_to_vec::<f32>().unwrap()
    }

    #[test]
    fn the_working_copy_is_the_master_rounded_and_tracks_gradients() {
        let device = Device::flex().autodiff();
        let model = Qwen3::init(&Qwen3Config::tiny(64), 3, &device).unwrap();
        let f32_weights = weights(&model);
        let (working, master) = MasterWeights::split(model, ComputeDtype::Bf16).unwrap();
        let master = master.unwrap();
        assert_eq!(working.float_dtype(), DType::BF16);
        assert_eq!(weights(&master.model), f32_weights, "the master keeps the f32 weights");
        for (w, m) in weights(&working).iter().zip(&f32_weights) {
            assert_eq!(*w, burn::tensor::bf16::from_f32(*m).to_f32());
        }
        assert!(working.embed_tokens.weight.val().is_require_grad());
        assert_eq!(working.embed_tokens.weight.id, master.model.embed_tokens.weight.id);
        let (same, none) = MasterWeights::split(working, ComputeDtype::F32).unwrap();
        assert!(none.is_none());
        assert_eq!(same.float_dtype(), DType::BF16);
    }

    #[test]
    fn serde_names_are_lowercase() {
        assert_eq!(serde_json::to_string(&ComputeDtype::Bf16).unwrap(), "\"bf16\"");
        assert_eq!(serde_json::from_str::<ComputeDtype>("\"f16\"").unwrap(), ComputeDtype::F16);
        assert!(serde_json::from_str::<ComputeDtype>("\"fp8\"").is_err());
    }
}
