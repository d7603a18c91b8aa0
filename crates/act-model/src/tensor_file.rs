//! Safetensors bytes to and from f32 values, for the HF checkpoints ([`crate::checkpoint`]) and the PEFT adapters
//! ([`crate::lora`]) alike.

use std::path::Path;

use burn::prelude::*;
use safetensors::Dtype;
use safetensors::tensor::TensorView;

use crate::error::ModelError;

/// The f32 values of a stored tensor (f32, bf16, f16 and f64 convert); errors name `path` and `name`.
pub(crate) fn f32_values(view: &TensorView<'_>, path: &Path, name: &str) -> Result<Vec<f32>, ModelError> {
    let data = view.data();
    Ok(match view.dtype() {
        Dtype::F32 => data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::BF16 => data.chunks_exact(2).map(|b| burn::tensor::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::F16 => data.chunks_exact(2).map(|b| burn::tensor::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32)
            .collect(),
        other => return Err(ModelError::checkpoint(path, format!("tensor `{name}` has unsupported dtype {other:?}"))),
    })
}

/// The safetensors bytes of named f32 tensors (with PyTorch's `format: pt` metadata), to be written to `path`.
pub(crate) fn f32_safetensors(tensors: &[(String, TensorData)], path: &Path) -> Result<Vec<u8>, ModelError> {
    let views = tensors
        .iter()
        .map(|(name, data)| {
            TensorView::new(Dtype::F32, data.shape().to_vec(), data.as_bytes())
                .map(|v| (name.clone(), v))
                .map_err(|e| ModelError::checkpoint(path, format!("tensor `{name}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let metadata = Some(std::collections::HashMap::from([("format".to_string(), "pt".to_string())]));
    safetensors::tensor::serialize(views, metadata).map_err(|e| ModelError::checkpoint(path, format!("serialize: {e}")))
}
