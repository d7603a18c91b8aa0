//! Rotary position embeddings in Hugging Face's rotate-half convention.
//!
//! Burn's `nn::RotaryEncoding` rotates interleaved pairs `(x0, x1), (x2, x3), ...`; Qwen3 (like Llama in
//! transformers) rotates the two halves of each head: `x * cos + rotate_half(x) * sin` with
//! `rotate_half([a, b]) = [-b, a]`. Weights trained one way give wrong logits the other way.

use burn::prelude::*;

/// Cosine and sine tables for a batch of positions, shaped `[batch, 1, seq, head_dim]` to broadcast over heads.
#[derive(Debug, Clone)]
pub struct RopeTables {
    /// `cos(position * inv_freq)`, both halves.
    pub cos: Tensor<4>,
    /// `sin(position * inv_freq)`, both halves.
    pub sin: Tensor<4>,
}

impl RopeTables {
    /// The tables in `dtype` (computed in f32, then cast, as transformers does for half-precision models).
    pub fn cast(self, dtype: burn::tensor::DType) -> Self {
        RopeTables { cos: self.cos.cast(dtype), sin: self.sin.cast(dtype) }
    }
}

/// The rotary embedding of one attention head width and base.
#[derive(Debug, Clone, PartialEq)]
pub struct RotaryEmbedding {
    head_dim: usize,
    inv_freq: Vec<f32>,
}

impl RotaryEmbedding {
    /// Frequencies `1 / theta^(2i / head_dim)`, computed in f32 as transformers does.
    pub fn new(head_dim: usize, theta: f64) -> Self {
        let inv_freq = (0..head_dim / 2).map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / head_dim as f32)).collect();
        RotaryEmbedding { head_dim, inv_freq }
    }

    /// Tables for `positions`, a row-major `[batch, seq]` array of absolute positions.
    pub fn tables(&self, positions: &[usize], batch: usize, seq: usize, device: &Device) -> RopeTables {
        debug_assert_eq!(positions.len(), batch * seq);
        let half = self.head_dim / 2;
        let mut cos = Vec::with_capacity(positions.len() * self.head_dim);
        let mut sin = Vec::with_capacity(positions.len() * self.head_dim);
        let mut row_cos = vec![0f32; half];
        let mut row_sin = vec![0f32; half];
        for &p in positions {
            for (i, f) in self.inv_freq.iter().enumerate() {
                let angle = p as f32 * f;
                row_cos[i] = angle.cos();
                row_sin[i] = angle.sin();
            }
            cos.extend_from_slice(&row_cos);
            cos.extend_from_slice(&row_cos);
            sin.extend_from_slice(&row_sin);
            sin.extend_from_slice(&row_sin);
        }
        let shape = [batch, 1, seq, self.head_dim];
        RopeTables {
            cos: Tensor::from_data(TensorData::new(cos, shape), device),
            sin: Tensor::from_data(TensorData::new(sin, shape), device),
        }
    }
}

/// `x * cos + rotate_half(x) * sin` for `x` shaped `[batch, heads, seq, head_dim]`.
pub fn apply_rotary(x: Tensor<4>, tables: &RopeTables) -> Tensor<4> {
    let [_, _, _, head_dim] = x.dims();
    let half = head_dim / 2;
    let first = x.clone().narrow(3, 0, half);
    let second = x.clone().narrow(3, half, half);
    let rotated = Tensor::cat(vec![second.neg(), first], 3);
    x * tables.cos.clone() + rotated * tables.sin.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotate_half_matches_hand_computation() {
        let device = Device::flex();
        let rope = RotaryEmbedding::new(4, 100.0);
        // head_dim 4: inv_freq = [1, 100^-0.5 = 0.1]
        let tables = rope.tables(&[0, 2], 1, 2, &device);
        let x = Tensor::<4>::from_data(TensorData::new(vec![1f32, 2., 3., 4., 1., 2., 3., 4.], [1, 1, 2, 4]), &device);
        let y: Vec<f32> = apply_rotary(x, &tables).into_data().try_into_vec().unwrap();
        // Position 0 is the identity.
        assert_eq!(&y[..4], &[1., 2., 3., 4.]);
        // Position 2: angles [2, 0.2]; pairs are (x0, x2) and (x1, x3).
        let (c0, s0, c1, s1) = (2f32.cos(), 2f32.sin(), 0.2f32.cos(), 0.2f32.sin());
        let expect = [1. * c0 - 3. * s0, 2. * c1 - 4. * s1, 3. * c0 + 1. * s0, 4. * c1 + 2. * s1];
        for (a, b) in y[4..].iter().zip(expect) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }
}
