//! Choosing the compute backend at run time.

use std::str::FromStr;

use burn::prelude::*;

use crate::error::ModelError;

/// A backend and device, parsed from strings such as `flex`, `tch`, `tch-cuda:0` or `cuda:1`.
///
/// `flex` (pure-Rust CPU) is always compiled in. `tch` (libtorch, CPU or NVIDIA) and `cuda` (burn-cuda) need the
/// crate features of the same names; asking for one that is not compiled in is an error, not a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BackendKind {
    /// Burn's pure-Rust CPU backend.
    #[default]
    Flex,
    /// libtorch on the CPU (`tch` feature).
    Tch,
    /// libtorch on an NVIDIA GPU (`tch` feature).
    TchCuda(usize),
    /// burn-cuda on an NVIDIA GPU (`cuda` feature).
    Cuda(usize),
}

impl FromStr for BackendKind {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, index) = match s.split_once(':') {
            Some((n, i)) => {
                let index =
                    i.parse::<usize>().map_err(|_| ModelError::Backend(format!("bad device index in `{s}`")))?;
                (n, Some(index))
            }
            None => (s, None),
        };
        match (name, index) {
            ("flex" | "cpu", None) => Ok(BackendKind::Flex),
            ("tch" | "libtorch", None) => Ok(BackendKind::Tch),
            ("tch-cuda" | "libtorch-cuda", i) => Ok(BackendKind::TchCuda(i.unwrap_or(0))),
            ("cuda", i) => Ok(BackendKind::Cuda(i.unwrap_or(0))),
            _ => Err(ModelError::Backend(format!(
                "unknown backend `{s}` (expected flex, tch, tch-cuda[:N] or cuda[:N])"
            ))),
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackendKind::Flex => write!(f, "flex"),
            BackendKind::Tch => write!(f, "tch"),
            BackendKind::TchCuda(i) => write!(f, "tch-cuda:{i}"),
            BackendKind::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl BackendKind {
    /// How many generations [`crate::ModelPolicy::with_workers`] should run side by side on this backend: the
    /// CPU's cores on flex (one generation keeps about one core busy), 1 on libtorch (its kernels use every core
    /// already) and on GPUs.
    ///
    /// ```
    /// assert_eq!(act_model::BackendKind::TchCuda(0).generation_workers(), 1);
    /// assert!(act_model::BackendKind::Flex.generation_workers() >= 1);
    /// ```
    pub fn generation_workers(self) -> usize {
        match self {
            BackendKind::Flex => std::thread::available_parallelism().map_or(1, usize::from),
            BackendKind::Tch | BackendKind::TchCuda(_) | BackendKind::Cuda(_) => 1,
        }
    }

    /// The inference device (no autodiff).
    pub fn device(self) -> Result<Device, ModelError> {
        match self {
            BackendKind::Flex => Ok(Device::flex()),
            #[cfg(feature = "tch")]
            #[allow(deprecated)]
            BackendKind::Tch => Ok(Device::libtorch()),
            #[cfg(feature = "tch")]
            #[allow(deprecated)]
            BackendKind::TchCuda(i) => Ok(Device::libtorch_cuda(i)),
            #[cfg(feature = "cuda")]
            BackendKind::Cuda(i) => Ok(Device::cuda(i)),
            #[allow(unreachable_patterns)]
            other => Err(ModelError::Backend(format!(
                "backend `{other}` is not compiled in; rebuild act-model with its cargo feature"
            ))),
        }
    }

    /// The training device: the same device with autodiff.
    pub fn training_device(self) -> Result<Device, ModelError> {
        Ok(self.device()?.autodiff())
    }

    /// The training device with gradient (activation) checkpointing: Burn's balanced strategy keeps the outputs
    /// of compute-bound operations (matrix products) for the backward pass and recomputes the memory-bound ones
    /// (element-wise work, softmax, norms) from them, trading some compute for a lower peak of activation memory.
    /// Gradients are those of [`BackendKind::training_device`] (tested to 1e-5).
    pub fn checkpointed_training_device(self) -> Result<Device, ModelError> {
        Ok(self.device()?.autodiff().gradient_checkpointing())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays() {
        for s in ["flex", "tch", "tch-cuda:1", "cuda:0"] {
            assert_eq!(s.parse::<BackendKind>().unwrap().to_string(), s);
        }
        assert_eq!("cuda".parse::<BackendKind>().unwrap(), BackendKind::Cuda(0));
        assert!("tpu".parse::<BackendKind>().is_err());
        assert!("cuda:x".parse::<BackendKind>().is_err());
        assert!(BackendKind::Flex.device().is_ok());
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn missing_feature_is_an_error() {
        assert!(BackendKind::Cuda(0).device().unwrap_err().to_string().contains("not compiled in"));
    }
}
