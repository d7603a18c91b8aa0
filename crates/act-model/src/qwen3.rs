//! The Qwen3 decoder, top to bottom: MLP, attention, decoder layer, model with LM head.

use burn::module::{Param, ParamId};
use burn::nn::{Embedding, Linear, RmsNorm};
use burn::prelude::*;
use burn::tensor::DType;
use burn::tensor::activation::{silu, softmax};
use burn::tensor::ops::AttentionModuleOptions;
use rand::RngExt;

use crate::batch::{MASKED, TokenBatch};
use crate::config::Qwen3Config;
use crate::error::ModelError;
use crate::kv_cache::{KvCache, LayerCache};
use crate::rope::{RopeTables, RotaryEmbedding, apply_rotary};

/// What a parameter is, which decides its initialisation and its on-disk layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A Linear weight: `[out, in]` in HF layout, normal(0, initializer_range) when fresh.
    LinearWeight,
    /// A Linear bias: zeros when fresh.
    Bias,
    /// The token embedding `[vocab, hidden]`: normal(0, initializer_range) when fresh.
    Embedding,
    /// An RMSNorm weight: ones when fresh.
    Norm,
}

/// A provider of parameter values by Hugging Face name, in HF layout (`shape` is the HF shape).
pub trait WeightSource {
    /// The values of `name`, row-major in `shape`; an error when missing or mis-shaped.
    fn take(&mut self, name: &str, shape: &[usize], kind: ParamKind) -> Result<Vec<f32>, ModelError>;
    /// The `ParamId` to give this parameter (training checkpoints restore ids so optimizer state still matches).
    fn param_id(&mut self, _name: &str) -> ParamId {
        ParamId::new()
    }
}

/// Fresh weights from a seed: normal(0, std) matrices, ones for norms (see
/// [`RandomInit::with_qk_norm_gain`]), zeros for biases.
#[derive(Debug)]
pub struct RandomInit {
    rng: rand_chacha::ChaCha8Rng,
    std: f32,
    qk_norm_gain: f32,
}

impl RandomInit {
    /// Weights drawn from `seed` with standard deviation `std`.
    pub fn new(seed: u64, std: f64) -> Self {
        RandomInit { rng: act_core::rng_from_seed(seed), std: std as f32, qk_norm_gain: 1.0 }
    }

    /// Starts the query and key RMSNorm gains at `gain` instead of 1. Qwen3 normalises queries and keys per head,
    /// so an attention logit is at most `sqrt(head_dim) * gain_q * gain_k`: 5.7 for a 32-wide head at gain 1, too
    /// flat to single out a few tokens of a long prompt until training has grown the gains. A larger start gives
    /// a small model sharp attention from the first step; the architecture (and the checkpoint layout) is
    /// unchanged, so the result still loads as a plain Qwen3.
    #[must_use]
    pub fn with_qk_norm_gain(mut self, gain: f32) -> Self {
        self.qk_norm_gain = gain;
        self
    }

    fn normal(&mut self) -> f32 {
        // Box-Muller: one normal per two uniforms keeps the stream simple and reproducible.
        let u1: f32 = self.rng.random::<f32>().max(f32::MIN_POSITIVE);
        let u2: f32 = self.rng.random::<f32>();
        (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
    }
}

impl WeightSource for RandomInit {
    fn take(&mut self, name: &str, shape: &[usize], kind: ParamKind) -> Result<Vec<f32>, ModelError> {
        let n = shape.iter().product();
        Ok(match kind {
            ParamKind::Norm if name.ends_with("q_norm.weight") || name.ends_with("k_norm.weight") => {
                vec![self.qk_norm_gain; n]
            }
            ParamKind::Norm => vec![1.0; n],
            ParamKind::Bias => vec![0.0; n],
            ParamKind::LinearWeight | ParamKind::Embedding => (0..n).map(|_| self.normal() * self.std).collect(),
        })
    }
}

fn tensor_param<const D: usize>(
    source: &mut dyn WeightSource,
    name: &str,
    shape: [usize; D],
    kind: ParamKind,
    device: &Device,
) -> Result<Param<Tensor<D>>, ModelError> {
    let values = source.take(name, &shape, kind)?;
    let id = source.param_id(name);
    Ok(trainable(id, Tensor::from_data(TensorData::new(values, shape), device)))
}

/// A parameter that tracks gradients on an autodiff device (and after `Module::train` elsewhere).
fn trainable<const D: usize>(id: ParamId, tensor: Tensor<D>) -> Param<Tensor<D>> {
    Param::initialized(id, tensor).set_require_grad(true)
}

fn linear(
    source: &mut dyn WeightSource,
    prefix: &str,
    d_in: usize,
    d_out: usize,
    bias: bool,
    device: &Device,
) -> Result<Linear, ModelError> {
    let name = format!("{prefix}.weight");
    let hf = source.take(&name, &[d_out, d_in], ParamKind::LinearWeight)?;
    // PyTorch stores [out, in]; Burn's Linear multiplies by [in, out].
    let mut burn_layout = vec![0f32; hf.len()];
    for o in 0..d_out {
        for i in 0..d_in {
            burn_layout[i * d_out + o] = hf[o * d_in + i];
        }
    }
    let id = source.param_id(&name);
    let weight = trainable(id, Tensor::from_data(TensorData::new(burn_layout, [d_in, d_out]), device));
    let bias = if bias {
        Some(tensor_param(source, &format!("{prefix}.bias"), [d_out], ParamKind::Bias, device)?)
    } else {
        None
    };
    Ok(Linear { weight, bias })
}

fn rms_norm(
    source: &mut dyn WeightSource,
    name: &str,
    dim: usize,
    eps: f64,
    device: &Device,
) -> Result<RmsNorm, ModelError> {
    Ok(RmsNorm { gamma: tensor_param(source, name, [dim], ParamKind::Norm, device)?, epsilon: eps })
}

/// `x` through a projection. With a LoRA adapter ([`crate::lora`]) this computes `x W + scale (x A) B` from the
/// frozen `W` and the factors, instead of reading the reparameterized weight (`W + scale A B`, which
/// [`Linear::forward`] would materialise as a dense matrix that autodiff keeps, with a weight-shaped gradient,
/// for the backward pass): the same value up to float rounding, with the memory and time of the factors only.
pub fn project<const D: usize>(linear: &Linear, x: Tensor<D>) -> Tensor<D> {
    let Some(adapter) = linear.weight.reparameterization::<burn::module::LoraAdapter>() else {
        return linear.forward(x);
    };
    let base = linear.weight.base();
    let bias = linear.bias.as_ref().map(|b| b.val());
    // The factors may be kept in f32 on a half-precision base: the low-rank path runs in the factors' dtype.
    let (dtype, a) = (x.dtype(), adapter.a.val());
    let low_x = if a.dtype() == dtype { x.clone() } else { x.clone().cast(a.dtype()) };
    let low_rank = burn::tensor::module::linear(low_x, a, None);
    let update = burn::tensor::module::linear(low_rank, adapter.b.val(), None).mul_scalar(adapter.scale);
    let update = if update.dtype() == dtype { update } else { update.cast(dtype) };
    burn::tensor::module::linear(x, base, bias) + update
}

/// The SwiGLU feed-forward block: `down(silu(gate(x)) * up(x))`.
#[derive(Module, Debug)]
pub struct Mlp {
    /// Gate projection, hidden -> intermediate.
    pub gate_proj: Linear,
    /// Up projection, hidden -> intermediate.
    pub up_proj: Linear,
    /// Down projection, intermediate -> hidden.
    pub down_proj: Linear,
}

impl Mlp {
    fn load(source: &mut dyn WeightSource, prefix: &str, c: &Qwen3Config, device: &Device) -> Result<Self, ModelError> {
        let (h, i) = (c.hidden_size, c.intermediate_size);
        Ok(Mlp {
            gate_proj: linear(source, &format!("{prefix}.gate_proj"), h, i, false, device)?,
            up_proj: linear(source, &format!("{prefix}.up_proj"), h, i, false, device)?,
            down_proj: linear(source, &format!("{prefix}.down_proj"), i, h, false, device)?,
        })
    }

    /// Applies the block to `[batch, seq, hidden]`.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let gate = silu(project(&self.gate_proj, x.clone()));
        project(&self.down_proj, gate * project(&self.up_proj, x))
    }
}

/// Grouped-query self-attention with per-head RMSNorm on queries and keys, then rotary embeddings.
#[derive(Module, Debug)]
pub struct Attention {
    /// Query projection, hidden -> heads * head_dim.
    pub q_proj: Linear,
    /// Key projection, hidden -> kv_heads * head_dim.
    pub k_proj: Linear,
    /// Value projection, hidden -> kv_heads * head_dim.
    pub v_proj: Linear,
    /// Output projection, heads * head_dim -> hidden.
    pub o_proj: Linear,
    /// RMSNorm over each query head.
    pub q_norm: RmsNorm,
    /// RMSNorm over each key head.
    pub k_norm: RmsNorm,
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads.
    pub num_kv_heads: usize,
    /// Width of one head.
    pub head_dim: usize,
}

impl Attention {
    fn load(source: &mut dyn WeightSource, prefix: &str, c: &Qwen3Config, device: &Device) -> Result<Self, ModelError> {
        let (h, d) = (c.hidden_size, c.head_dim);
        let (q, kv) = (c.num_attention_heads * d, c.num_key_value_heads * d);
        let b = c.attention_bias;
        Ok(Attention {
            q_proj: linear(source, &format!("{prefix}.q_proj"), h, q, b, device)?,
            k_proj: linear(source, &format!("{prefix}.k_proj"), h, kv, b, device)?,
            v_proj: linear(source, &format!("{prefix}.v_proj"), h, kv, b, device)?,
            o_proj: linear(source, &format!("{prefix}.o_proj"), q, h, b, device)?,
            q_norm: rms_norm(source, &format!("{prefix}.q_norm.weight"), d, c.rms_norm_eps, device)?,
            k_norm: rms_norm(source, &format!("{prefix}.k_norm.weight"), d, c.rms_norm_eps, device)?,
            num_heads: c.num_attention_heads,
            num_kv_heads: c.num_key_value_heads,
            head_dim: d,
        })
    }

    /// Attends `x` (`[batch, seq, hidden]`) to itself and to the cached keys/values, if any.
    ///
    /// `bias` is `[batch, 1, seq, cached + seq]`: 0 where attention is allowed, [`MASKED`] elsewhere.
    pub(crate) fn forward(
        &self,
        x: Tensor<3>,
        rope: &RopeTables,
        bias: Tensor<4>,
        cache: Option<&mut LayerCache>,
    ) -> Tensor<3> {
        let [batch, seq, _] = x.dims();
        let x_device = x.device();
        let heads = |t: Tensor<3>, n: usize| t.reshape([batch, seq, n, self.head_dim]);
        let q = self.q_norm.forward(heads(project(&self.q_proj, x.clone()), self.num_heads)).swap_dims(1, 2);
        let k = self.k_norm.forward(heads(project(&self.k_proj, x.clone()), self.num_kv_heads)).swap_dims(1, 2);
        let v = heads(project(&self.v_proj, x), self.num_kv_heads).swap_dims(1, 2);
        let q = apply_rotary(q, rope);
        let k = apply_rotary(k, rope);
        let (k, v) = match cache {
            Some(cache) => cache.append(k, v),
            None => (k, v),
        };
        let group = self.num_heads / self.num_kv_heads;
        let out = if fused_attention_available(&x_device) {
            // Native GQA and a bias broadcast over heads: no expanded keys, one pass per head.
            let fused = |q, k, v, bias| {
                burn::tensor::module::attention(q, k, v, None, Some(bias), AttentionModuleOptions::default())
            };
            if seq > QUERY_BLOCK {
                blocked_causal_attention(q, k, v, bias, fused)
            } else {
                // Decoding: the cache's spare room after its cached positions is masked rather than cut off, so
                // the kernel reads the cache buffer as it is instead of copying a narrowed view of it.
                let [_, _, _, keys] = bias.dims();
                let room = k.dims()[2] - keys;
                let bias = if room > 0 {
                    let masked = Tensor::<4>::full([batch, 1, seq, room], MASKED, &x_device).cast(bias.dtype());
                    Tensor::cat(vec![bias, masked], 3)
                } else {
                    bias
                };
                fused(q, k, v, bias)
            }
        } else {
            blocked_causal_attention(q, k, v, bias, |q, k, v, bias| grouped_attention(q, k, v, bias, group))
        };
        project(&self.o_proj, out.swap_dims(1, 2).reshape([batch, seq, self.num_heads * self.head_dim]))
    }
}

/// Flex without autodiff has a fused attention kernel with grouped-query support; autodiff and the other
/// backends run [`grouped_attention`] (libtorch's fused kernel and Burn's fallback do not share k/v heads).
fn fused_attention_available(device: &Device) -> bool {
    !device.is_autodiff() && matches!(device.as_dispatch(), burn::backend::DispatchDevice::Flex(_))
}

/// Queries per block of [`blocked_causal_attention`]: long enough that the per-block overhead is small, short
/// enough that a 1,500-token training sequence computes about 45% fewer scores than one full square.
pub const QUERY_BLOCK: usize = 64;

/// Causal attention `attend(q, k, v, bias)` in blocks of [`QUERY_BLOCK`] queries that each see only the keys up
/// to their last query. `bias` is `[batch, 1, seq, keys]` and causal (query `i` never sees a key after
/// `keys - seq + i`, as every bias of [`crate::batch::causal_bias`]); `k` and `v` may hold more than `keys`
/// positions (a cache's spare room), which are never read.
///
/// Why: a pass over a whole sequence would otherwise compute, exponentiate (and in training differentiate) a
/// full `seq x seq` score square of which half is masked; on the CPU the softmax of masked scores was a fifth of
/// a packed SFT step. The result is that of one pass: the skipped keys are those the bias masks, whose
/// probabilities are exactly zero, unless a query sees no key at all (a padding position, whose output is unused).
pub fn blocked_causal_attention(
    q: Tensor<4>,
    k: Tensor<4>,
    v: Tensor<4>,
    bias: Tensor<4>,
    attend: impl Fn(Tensor<4>, Tensor<4>, Tensor<4>, Tensor<4>) -> Tensor<4>,
) -> Tensor<4> {
    let seq = q.dims()[2];
    let keys = bias.dims()[3];
    let offset = keys - seq;
    if seq <= QUERY_BLOCK {
        return attend(q, k.narrow(2, 0, keys), v.narrow(2, 0, keys), bias);
    }
    let blocks = (0..seq)
        .step_by(QUERY_BLOCK)
        .map(|start| {
            let len = QUERY_BLOCK.min(seq - start);
            let visible = offset + start + len;
            attend(
                q.clone().narrow(2, start, len),
                k.clone().narrow(2, 0, visible),
                v.clone().narrow(2, 0, visible),
                bias.clone().narrow(2, start, len).narrow(3, 0, visible),
            )
        })
        .collect();
    Tensor::cat(blocks, 2)
}

/// `softmax(q k^T / sqrt(d) + bias) v` where each key/value head serves `group` consecutive query heads.
///
/// Folding the group into the query length (`[b, kv, group * s, d]`) shares keys and values without copying
/// them, on every backend and under autodiff.
pub fn grouped_attention(q: Tensor<4>, k: Tensor<4>, v: Tensor<4>, bias: Tensor<4>, group: usize) -> Tensor<4> {
    let [b, hq, s, d] = q.dims();
    let [_, hkv, t, _] = k.dims();
    let scale = 1.0 / (d as f64).sqrt();
    let q = q.reshape([b, hkv, group * s, d]);
    let scores = q.matmul(k.swap_dims(2, 3)).mul_scalar(scale).reshape([b, hkv, group, s, t]);
    let scores = scores + bias.reshape([b, 1, 1, s, t]);
    let probs = softmax(scores, 4).reshape([b, hkv, group * s, t]);
    probs.matmul(v).reshape([b, hq, s, d])
}

/// One pre-norm decoder layer: attention and MLP, each with a residual connection.
#[derive(Module, Debug)]
pub struct DecoderLayer {
    /// Self-attention.
    pub self_attn: Attention,
    /// Feed-forward block.
    pub mlp: Mlp,
    /// Norm before attention.
    pub input_layernorm: RmsNorm,
    /// Norm before the MLP.
    pub post_attention_layernorm: RmsNorm,
}

impl DecoderLayer {
    /// The seven projections, by their names under the layer in HF checkpoints (`self_attn.q_proj`, ...).
    pub(crate) fn projections(&self) -> [(&'static str, &Linear); 7] {
        let (a, m) = (&self.self_attn, &self.mlp);
        [
            ("self_attn.q_proj", &a.q_proj),
            ("self_attn.k_proj", &a.k_proj),
            ("self_attn.v_proj", &a.v_proj),
            ("self_attn.o_proj", &a.o_proj),
            ("mlp.gate_proj", &m.gate_proj),
            ("mlp.up_proj", &m.up_proj),
            ("mlp.down_proj", &m.down_proj),
        ]
    }

    fn load(source: &mut dyn WeightSource, prefix: &str, c: &Qwen3Config, device: &Device) -> Result<Self, ModelError> {
        let h = c.hidden_size;
        Ok(DecoderLayer {
            self_attn: Attention::load(source, &format!("{prefix}.self_attn"), c, device)?,
            mlp: Mlp::load(source, &format!("{prefix}.mlp"), c, device)?,
            input_layernorm: rms_norm(source, &format!("{prefix}.input_layernorm.weight"), h, c.rms_norm_eps, device)?,
            post_attention_layernorm: rms_norm(
                source,
                &format!("{prefix}.post_attention_layernorm.weight"),
                h,
                c.rms_norm_eps,
                device,
            )?,
        })
    }

    fn forward(&self, x: Tensor<3>, rope: &RopeTables, bias: Tensor<4>, cache: Option<&mut LayerCache>) -> Tensor<3> {
        let x = x.clone() + self.self_attn.forward(self.input_layernorm.forward(x), rope, bias, cache);
        x.clone() + self.mlp.forward(self.post_attention_layernorm.forward(x))
    }
}

/// The additive attention biases of one pass (`[batch, 1, queries, keys]`, 0 where attention is allowed, a large
/// negative number elsewhere): the causal one of full-attention layers and, for a model with sliding-window
/// layers, the windowed one. Built by [`Qwen3::causal_bias`].
#[derive(Debug, Clone)]
pub struct AttentionBias {
    full: Tensor<4>,
    window: Option<Tensor<4>>,
}

/// A Qwen3 causal language model: embedding, decoder layers, final norm and LM head (tied or not).
///
/// Parameter names follow Hugging Face (`model.layers.3.self_attn.q_proj.weight`), so the checkpoint mapping in
/// [`load_hf`](crate::load_hf) and [`save_hf`](crate::save_hf) is a list of names; Linear weights live in Burn's `[in, out]` layout here and in
/// PyTorch's `[out, in]` layout on disk.
#[derive(Module, Debug)]
pub struct Qwen3 {
    /// Token embedding `[vocab, hidden]`.
    pub embed_tokens: Embedding,
    /// Decoder layers.
    pub layers: Vec<DecoderLayer>,
    /// Final norm.
    pub norm: RmsNorm,
    /// Untied LM head; `None` when the head reuses `embed_tokens`.
    pub lm_head: Option<Linear>,
    /// The hyper-parameters.
    #[module(skip)]
    pub config: Qwen3Config,
    #[module(skip)]
    rope: RotaryEmbedding,
}

impl Qwen3 {
    /// A freshly initialised model (normal(0, `initializer_range`) weights) drawn from `seed`.
    pub fn init(config: &Qwen3Config, seed: u64, device: &Device) -> Result<Self, ModelError> {
        Self::from_source(config, &mut RandomInit::new(seed, config.initializer_range), device)
    }

    /// Builds the model from named HF-layout weights.
    pub fn from_source(
        config: &Qwen3Config,
        source: &mut dyn WeightSource,
        device: &Device,
    ) -> Result<Self, ModelError> {
        config.validate()?;
        let c = config;
        let embed = tensor_param(
            source,
            "model.embed_tokens.weight",
            [c.vocab_size, c.hidden_size],
            ParamKind::Embedding,
            device,
        )?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| DecoderLayer::load(source, &format!("model.layers.{i}"), c, device))
            .collect::<Result<Vec<_>, _>>()?;
        let norm = rms_norm(source, "model.norm.weight", c.hidden_size, c.rms_norm_eps, device)?;
        let lm_head = if c.tie_word_embeddings {
            None
        } else {
            Some(linear(source, "lm_head", c.hidden_size, c.vocab_size, false, device)?)
        };
        Ok(Qwen3 {
            embed_tokens: Embedding { weight: embed },
            layers,
            norm,
            lm_head,
            config: config.clone(),
            rope: RotaryEmbedding::new(c.head_dim, c.rope_theta),
        })
    }

    /// The device holding the weights.
    pub fn device(&self) -> Device {
        self.embed_tokens.weight.val().device()
    }

    /// Final hidden states `[batch, seq, hidden]` of a padded batch (no cache).
    pub fn hidden_states(&self, batch: &TokenBatch) -> Tensor<3> {
        let device = self.device();
        let positions = batch.positions();
        let bias = self.causal_bias(batch.mask(), batch.batch(), batch.seq(), batch.seq(), &device);
        self.run(batch.ids_tensor(&device), &positions, bias, None)
    }

    /// Logits `[batch, seq, vocab]` of a padded batch: the training forward.
    pub fn forward(&self, batch: &TokenBatch) -> Tensor<3> {
        self.logits(self.hidden_states(batch))
    }

    /// Applies the LM head to hidden states `[batch, seq, hidden]`. The logits are f32 whatever the model's dtype,
    /// so log-probs, sampling and losses are computed in f32.
    pub fn logits(&self, hidden: Tensor<3>) -> Tensor<3> {
        let logits = match &self.lm_head {
            Some(head) => head.forward(hidden),
            None => {
                let [b, s, h] = hidden.dims();
                let weight = self.embed_tokens.weight.val();
                let logits = hidden.reshape([b * s, h]).matmul(weight.transpose());
                logits.reshape([b, s, self.config.vocab_size])
            }
        };
        if logits.dtype() == DType::F32 { logits } else { logits.cast(DType::F32) }
    }

    /// The dtype of the weights (and of the activations): f32 unless cast by [`Qwen3::with_float_dtype`].
    pub fn float_dtype(&self) -> DType {
        self.embed_tokens.weight.val().dtype()
    }

    /// The model with every weight cast to `dtype` (`DType::BF16` or `DType::F16` for half precision; `DType::F32`
    /// back). Activations then run in that dtype, except the RMSNorm statistics, which Burn computes in f32, and the
    /// logits, which [`Qwen3::logits`] returns in f32. Cast before attaching LoRA adapters: a model with adapters is
    /// refused.
    pub fn with_float_dtype(self, dtype: DType) -> Result<Self, ModelError> {
        if !matches!(dtype, DType::F32 | DType::BF16 | DType::F16) {
            return Err(ModelError::Config(format!("a model's weights are f32, bf16 or f16, not {dtype:?}")));
        }
        if self.has_lora_adapters() {
            return Err(ModelError::Config(
                "cast the model's dtype before attaching LoRA adapters (this one has adapters)".into(),
            ));
        }
        Ok(self.cast_float_params(dtype))
    }

    /// Whether any projection carries a LoRA adapter.
    fn has_lora_adapters(&self) -> bool {
        self.layers
            .iter()
            .flat_map(DecoderLayer::projections)
            .any(|(_, l)| l.weight.reparameterization::<burn::module::LoraAdapter>().is_some())
    }

    /// Every float parameter cast to `dtype` (no checks: [`Qwen3::with_float_dtype`] checks). Each cast parameter
    /// is a new leaf with the original's autodiff settings (gradient tracking, checkpointing strategy), not the
    /// output of a cast in the autodiff graph, so a cast model trains: its gradients land on its own parameters.
    pub(crate) fn cast_float_params(self, dtype: DType) -> Self {
        struct Cast(DType);
        impl burn::module::ModuleMapper for Cast {
            fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
                let dtype = self.0;
                param.map(|t| {
                    if t.dtype() == dtype {
                        return t;
                    }
                    let require_grad = t.is_require_grad();
                    let strategy = t.gradient_checkpointing_strategy();
                    let cast = t.inner().cast(dtype);
                    // `Some` exactly when the tensor had autodiff enabled.
                    let cast = match strategy {
                        Some(strategy) => Tensor::from_inner(cast).with_gradient_checkpointing_strategy(strategy),
                        None => cast,
                    };
                    if require_grad { cast.require_grad() } else { cast }
                })
            }
        }
        self.map(&mut Cast(dtype))
    }

    /// Runs the decoder over `ids` (`[batch, seq]`) at absolute `positions` (row-major `[batch, seq]`), with an
    /// additive attention `bias` `[batch, 1, seq, cached + seq]`, appending keys/values to `cache` if given.
    /// Returns the final hidden states.
    pub fn run(
        &self,
        ids: Tensor<2, Int>,
        positions: &[usize],
        bias: AttentionBias,
        mut cache: Option<&mut KvCache>,
    ) -> Tensor<3> {
        let [batch, seq] = ids.dims();
        let device = ids.device();
        let rope = self.rope.tables(positions, batch, seq, &device);
        let mut x = self.embed_tokens.forward(ids);
        // A half-precision model (`Qwen3::with_float_dtype`) runs its activations in its weights' dtype: the
        // tables and the bias are built in f32 and cast, as transformers does.
        let dtype = x.dtype();
        let cast = |t: Tensor<4>| if dtype == DType::F32 { t } else { t.cast(dtype) };
        let rope = if dtype == DType::F32 { rope } else { rope.cast(dtype) };
        let full = cast(bias.full);
        let window = bias.window.map(cast);
        for (i, layer) in self.layers.iter().enumerate() {
            let layer_cache = cache.as_deref_mut().map(|c| c.layer_mut(i));
            let bias = match (&window, self.config.layer_window(i)) {
                (Some(window), Some(_)) => window.clone(),
                _ => full.clone(),
            };
            x = layer.forward(x, &rope, bias, layer_cache);
        }
        self.norm.forward(x)
    }

    /// The attention bias of a pass of `queries` new tokens at the end of `keys` positions per row
    /// (`key_mask` marks real tokens, padding excluded), with the sliding-window variant when this model has
    /// windowed layers.
    pub fn causal_bias(
        &self,
        key_mask: &[bool],
        batch: usize,
        keys: usize,
        queries: usize,
        device: &Device,
    ) -> AttentionBias {
        let full = crate::batch::causal_bias(key_mask, batch, keys, queries, device);
        let window = self
            .config
            .sliding_window
            .filter(|_| self.config.max_window_layers < self.config.num_hidden_layers)
            .map(|w| crate::batch::windowed_causal_bias(key_mask, batch, keys, queries, w, device));
        AttentionBias { full, window }
    }

    /// An empty KV cache sized for this model.
    pub fn new_cache(&self) -> KvCache {
        KvCache::new(self.layers.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(norm: &RmsNorm) -> Vec<f32> {
        norm.gamma.val().into_data().try_into_vec().unwrap()
    }

    /// The q/k-norm gain changes those two gains only, and gain 1 is upstream's initialisation exactly.
    #[test]
    fn qk_norm_gain_sets_only_the_query_and_key_norms() {
        let device = Device::flex();
        let config = Qwen3Config::micro(64);
        let plain = Qwen3::init(&config, 7, &device).unwrap();
        let one = Qwen3::from_source(&config, &mut RandomInit::new(7, config.initializer_range), &device).unwrap();
        let mut init = RandomInit::new(7, config.initializer_range).with_qk_norm_gain(2.5);
        let scaled = Qwen3::from_source(&config, &mut init, &device).unwrap();
        let embed = |m: &Qwen3| -> Vec<f32> { m.embed_tokens.weight.val().into_data().try_into_vec().unwrap() };
        assert_eq!(embed(&plain), embed(&scaled), "the random draws are the same");
        assert_eq!(embed(&plain), embed(&one));
        for (a, b) in plain.layers.iter().zip(&scaled.layers) {
            let attention = (&a.self_attn, &b.self_attn);
            assert!(values(&attention.0.q_norm).iter().all(|&g| g == 1.0));
            assert!(values(&attention.1.q_norm).iter().all(|&g| g == 2.5));
            assert!(values(&attention.1.k_norm).iter().all(|&g| g == 2.5));
            assert_eq!(values(&a.input_layernorm), values(&b.input_layernorm));
            assert_eq!(values(&a.post_attention_layernorm), values(&b.post_attention_layernorm));
        }
        assert_eq!(values(&plain.norm), values(&scaled.norm));
    }

    #[test]
    fn fused_and_decomposed_attention_agree() {
        let device = Device::flex();
        assert!(fused_attention_available(&device));
        assert!(!fused_attention_available(&device.clone().autodiff()));
        let mut init = RandomInit::new(3, 1.0);
        let mut t = |shape: [usize; 4]| {
            let v = init.take("x", &shape, ParamKind::Embedding).unwrap();
            Tensor::<4>::from_data(TensorData::new(v, shape), &device)
        };
        let (q, k, v) = (t([2, 4, 3, 8]), t([2, 2, 5, 8]), t([2, 2, 5, 8]));
        let mask = [true, true, true, true, true, false, false, true, true, true];
        let bias = crate::batch::causal_bias(&mask, 2, 5, 3, &device);
        let fused: Vec<f32> = burn::tensor::module::attention(
            q.clone(),
            k.clone(),
            v.clone(),
            None,
            Some(bias.clone()),
            AttentionModuleOptions::default(),
        )
        .into_data()
        .try_into_vec()
        .unwrap();
        let manual: Vec<f32> = grouped_attention(q, k, v, bias, 2).into_data().try_into_vec().unwrap();
        let diff = fused.iter().zip(&manual).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(diff < 1e-5, "{diff}");
    }

    /// Outputs and gradients of blocked attention equal one full pass, for a sequence of several blocks (the last
    /// one partial) after cached keys, with masked keys and spare cache room that must never be read. (A query
    /// with no visible key at all, a padding position, attends uniformly to whatever keys its pass holds; its
    /// output is padding either way, so the masked keys leave every query one real key.)
    #[test]
    fn blocked_causal_attention_equals_one_pass() {
        let device = Device::flex().autodiff();
        let (seq, cached, room) = (2 * QUERY_BLOCK + 37, 19, 5);
        let keys = cached + seq;
        let mut init = RandomInit::new(5, 1.0);
        let mut t = |shape: [usize; 4]| {
            let v = init.take("x", &shape, ParamKind::Embedding).unwrap();
            Tensor::<4>::from_data(TensorData::new(v, shape), &device).require_grad()
        };
        let (q, k, v) = (t([2, 4, seq, 8]), t([2, 2, keys + room, 8]), t([2, 2, keys + room, 8]));
        let mut mask = vec![true; 2 * keys];
        mask[keys + 3..keys + 11].fill(false);
        mask[keys + cached + 50..keys + cached + 60].fill(false);
        let bias = crate::batch::causal_bias(&mask, 2, keys, seq, &device);
        let run = |blocked: bool| {
            let out = if blocked {
                let grouped = |q, k, v, bias| grouped_attention(q, k, v, bias, 2);
                blocked_causal_attention(q.clone(), k.clone(), v.clone(), bias.clone(), grouped)
            } else {
                let (k, v) = (k.clone().narrow(2, 0, keys), v.clone().narrow(2, 0, keys));
                grouped_attention(q.clone(), k, v, bias.clone(), 2)
            };
            let weights = Tensor::<4>::from_data(
                TensorData::new((0..out.shape().num_elements()).map(|i| (i % 7) as f32 - 3.0).collect(), out.dims()),
                &device,
            );
            let grads = (out.clone() * weights).sum().backward();
            let flat = |t: Tensor<4>| -> Vec<f32> { t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap() };
            [flat(out), flat(q.grad(&grads).unwrap()), flat(k.grad(&grads).unwrap()), flat(v.grad(&grads).unwrap())]
        };
        let (full, blocked) = (run(false), run(true));
        for (name, (a, b)) in ["output", "dq", "dk", "dv"].iter().zip(full.iter().zip(&blocked)) {
            assert_eq!(a.len(), b.len(), "{name}");
            let diff = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
            assert!(diff < 1e-4, "{name}: {diff}");
        }
        // The spare room gets no gradient.
        let dk = &blocked[2];
        let row = keys + room;
        assert!((keys..row).all(|j| (0..8).all(|d| dk[j * 8 + d] == 0.0)));
        // Flex's fused kernel in blocks (a long prefill) gives the same output.
        let plain = Device::flex();
        let inner = |t: &Tensor<4>| Tensor::<4>::from_data(t.clone().into_data(), &plain);
        let fused = |q, k, v, bias| {
            burn::tensor::module::attention(q, k, v, None, Some(bias), AttentionModuleOptions::default())
        };
        let bias = crate::batch::causal_bias(&mask, 2, keys, seq, &plain);
        let out: Vec<f32> =
            blocked_causal_attention(inner(&q), inner(&k), inner(&v), bias, fused).into_data().try_into_vec().unwrap();
        let diff = full[0].iter().zip(&out).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
        assert!(diff < 1e-4, "fused: {diff}");
    }
}
