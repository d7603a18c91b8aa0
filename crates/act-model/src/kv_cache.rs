//! Per-layer key/value cache for incremental decoding with grouped-query attention.

use burn::prelude::*;

/// Positions added at once when a layer's cache is full: decoding then writes each new token in place instead of
/// copying the whole cache per token (a `cat` per step is quadratic in the episode's length).
const GROWTH: usize = 64;

/// The cached keys and values of one layer.
///
/// The tensors may hold unused positions (zeros) after the [`LayerCache::len`] cached ones, room for the next
/// tokens; attention masks them.
#[derive(Debug, Clone, Default)]
pub struct LayerCache {
    keys: Option<Tensor<4>>,
    values: Option<Tensor<4>>,
    len: usize,
}

impl LayerCache {
    /// Appends this step's keys and values (`[batch, kv_heads, new, head_dim]`) and returns the cache's tensors:
    /// the [`LayerCache::len`] cached positions first, then possibly unused ones that a caller must mask.
    ///
    /// A single new position (a decoding step) is written in place into room left by an earlier append, and a full
    /// cache grows by a block of room; several new positions (a prompt, a training pass) are concatenated exactly.
    pub fn append(&mut self, keys: Tensor<4>, values: Tensor<4>) -> (Tensor<4>, Tensor<4>) {
        let new = keys.dims()[2];
        let (keys, values) = match (self.keys.take(), self.values.take()) {
            (Some(old_keys), Some(old_values)) => {
                let [batch, heads, capacity, dim] = old_keys.dims();
                let (len, end) = (self.len, self.len + new);
                if end <= capacity {
                    // In place when the cache holds the only reference (the attention's copies are gone by now).
                    let at = [0..batch, 0..heads, len..end, 0..dim];
                    (old_keys.slice_assign(at.clone(), keys), old_values.slice_assign(at, values))
                } else {
                    let room = if new == 1 { GROWTH - 1 } else { 0 };
                    let extend = |old: Tensor<4>, fresh: Tensor<4>| {
                        let old = if len < capacity { old.narrow(2, 0, len) } else { old };
                        let mut parts = vec![old, fresh];
                        if room > 0 {
                            let zeros = Tensor::<4>::zeros([batch, heads, room, dim], &parts[0].device());
                            parts.push(zeros.cast(parts[0].dtype()));
                        }
                        Tensor::cat(parts, 2)
                    };
                    (extend(old_keys, keys), extend(old_values, values))
                }
            }
            _ => (keys, values),
        };
        self.len += new;
        self.keys = Some(keys.clone());
        self.values = Some(values.clone());
        (keys, values)
    }

    /// Number of cached positions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// A cache holding `keys` and `values` (`[batch, kv_heads, cached, head_dim]`).
    pub(crate) fn from_parts(keys: Tensor<4>, values: Tensor<4>) -> Self {
        let len = keys.dims()[2];
        LayerCache { keys: Some(keys), values: Some(values), len }
    }

    /// Batch row `row`'s keys and values at the positions `keep` (`[1, kv_heads, keep.len(), head_dim]`).
    pub(crate) fn row(&self, row: usize, keep: &Tensor<1, Int>) -> Option<(Tensor<4>, Tensor<4>)> {
        let (k, v) = (self.keys.as_ref()?, self.values.as_ref()?);
        Some((k.clone().narrow(0, row, 1).select(2, keep.clone()), v.clone().narrow(0, row, 1).select(2, keep.clone())))
    }

    fn select_rows(&mut self, rows: &Tensor<1, Int>) {
        self.keys = self.keys.take().map(|k| k.select(0, rows.clone()));
        self.values = self.values.take().map(|v| v.select(0, rows.clone()));
    }
}

/// The cache of every layer of a model.
///
/// Keys and values are stored after q/k-norm and rotary embedding, with `kv_heads` heads (not expanded to the
/// query heads), shaped `[batch, kv_heads, cached, head_dim]`.
#[derive(Debug, Clone)]
pub struct KvCache {
    layers: Vec<LayerCache>,
}

impl KvCache {
    /// An empty cache for `num_layers` layers.
    pub fn new(num_layers: usize) -> Self {
        KvCache { layers: vec![LayerCache::default(); num_layers] }
    }

    /// A cache made of the given layers.
    pub(crate) fn from_layers(layers: Vec<LayerCache>) -> Self {
        KvCache { layers }
    }

    /// Every layer's cache.
    pub(crate) fn layers(&self) -> &[LayerCache] {
        &self.layers
    }

    /// Layer `i`'s cache.
    pub(crate) fn layer_mut(&mut self, i: usize) -> &mut LayerCache {
        &mut self.layers[i]
    }

    /// Number of cached positions (the same in every layer).
    pub fn len(&self) -> usize {
        self.layers.first().map(LayerCache::len).unwrap_or(0)
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps only the batch rows `rows` (in that order), e.g. to drop finished sequences; a row listed twice is
    /// copied (one prompt's keys and values for several generations).
    pub fn retain_rows(&mut self, rows: &[usize], device: &Device) {
        let index: Vec<i64> = rows.iter().map(|&r| r as i64).collect();
        let index = Tensor::<1, Int>::from_data(TensorData::new(index, [rows.len()]), device);
        for layer in &mut self.layers {
            layer.select_rows(&index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_grow_in_blocks_and_keep_every_position_in_order() {
        let device = Device::flex();
        let step = |i: usize, n: usize| {
            let data: Vec<f32> = (0..2 * n * 3).map(|j| (i * 100 + j) as f32).collect();
            Tensor::<4>::from_data(TensorData::new(data, [1, 2, n, 3]), &device)
        };
        let mut cache = LayerCache::default();
        let mut reference = Vec::new();
        for (i, n) in [5, 1, 1, 70, 1, 2].into_iter().enumerate() {
            let (keys, values) = cache.append(step(i, n), step(i, n).neg());
            reference.push(step(i, n));
            let expected = Tensor::cat(reference.clone(), 2);
            let len = expected.dims()[2];
            assert_eq!(cache.len(), len);
            assert!(keys.dims()[2] >= len && values.dims()[2] == keys.dims()[2]);
            keys.clone().narrow(2, 0, len).into_data().assert_eq(&expected.clone().into_data(), true);
            values.narrow(2, 0, len).into_data().assert_eq(&expected.neg().into_data(), true);
        }
        // Room is added in blocks for decoding: 5 cached, then 1 more grows to 5 + 64 and the next fits without
        // growing; several positions at once are concatenated exactly.
        let mut cache = LayerCache::default();
        cache.append(step(0, 5), step(0, 5));
        assert_eq!(cache.append(step(1, 1), step(1, 1)).0.dims()[2], 5 + GROWTH);
        assert_eq!(cache.append(step(2, 1), step(2, 1)).0.dims()[2], 5 + GROWTH);
        assert_eq!(cache.append(step(3, 70), step(3, 70)).0.dims()[2], 7 + 70);
    }
}
