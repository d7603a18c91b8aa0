//! Per-layer key/value cache for incremental decoding with grouped-query attention.
//!
//! Keys and values are stored after q/k-norm and rotary embedding, with `kv_heads` heads (not expanded to the
//! query heads), shaped `[batch, kv_heads, cached, head_dim]`.

use burn::prelude::*;

/// The cached keys and values of one layer.
#[derive(Debug, Clone, Default)]
pub struct LayerCache {
    keys: Option<Tensor<4>>,
    values: Option<Tensor<4>>,
}

impl LayerCache {
    /// Appends this step's keys and values (`[batch, kv_heads, new, head_dim]`) and returns all of them.
    pub fn append(&mut self, keys: Tensor<4>, values: Tensor<4>) -> (Tensor<4>, Tensor<4>) {
        let keys = match self.keys.take() {
            Some(old) => Tensor::cat(vec![old, keys], 2),
            None => keys,
        };
        let values = match self.values.take() {
            Some(old) => Tensor::cat(vec![old, values], 2),
            None => values,
        };
        self.keys = Some(keys.clone());
        self.values = Some(values.clone());
        (keys, values)
    }

    /// Number of cached positions.
    pub fn len(&self) -> usize {
        self.keys.as_ref().map(|k| k.dims()[2]).unwrap_or(0)
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A cache holding `keys` and `values` (`[batch, kv_heads, cached, head_dim]`).
    pub(crate) fn from_parts(keys: Tensor<4>, values: Tensor<4>) -> Self {
        LayerCache { keys: Some(keys), values: Some(values) }
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
    pub fn layer_mut(&mut self, i: usize) -> &mut LayerCache {
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

    /// Keeps only the batch rows `rows` (in that order), e.g. to drop finished sequences.
    pub fn retain_rows(&mut self, rows: &[usize], device: &Device) {
        let index: Vec<i64> = rows.iter().map(|&r| r as i64).collect();
        let index = Tensor::<1, Int>::from_data(TensorData::new(index, [rows.len()]), device);
        for layer in &mut self.layers {
            layer.select_rows(&index);
        }
    }
}
