//! A Qwen3-architecture language model in Burn: the policy ACT trains.
//!
//! One job: turn token ids into logits, log-probs and generated text for Qwen3-shaped models, from a tiny model
//! trained on a laptop CPU to a Hugging Face Qwen3 checkpoint, and save the result so transformers loads it.
//!
//! - [`Qwen3`]: the architecture (RMSNorm, rotate-half RoPE, grouped-query attention with q/k norm, SwiGLU,
//!   tied or untied head), initialised from any [`WeightSource`] ([`RandomInit`], a checkpoint); [`Qwen3Config`]
//!   reads and writes HF `config.json`.
//! - [`load_hf`] / [`save_hf`]: HF safetensors (single or sharded) in and out; [`TrainingCheckpoint`]: training
//!   checkpoints with optimizer state.
//! - [`generate()`], [`generate_in_parts`], [`KvCache`], [`Sampler`]: batched KV-cache decoding of mixed-length
//!   prompts, seeded sampling; [`PrefixStore`] and [`SharedPrefixBatch`] reuse a shared prompt start.
//! - [`next_token_log_probs`], [`masked_nll`]: per-token log-probs of a padded [`TokenBatch`], chunked over positions.
//! - [`ChatTokenizer`]: `tokenizer.json` files, in-process BPE training, Qwen's chat template ([`ChatTemplate`])
//!   with an exact completion boundary; [`ModelPolicy`]: act-core's `Policy`.
//! - [`shard_gradients`]: data-parallel gradients of batch shards on one device (both CPU cores busy on flex).
//! - [`lora`]: LoRA adapters in PEFT's layout (attach, merge, save, load).
//! - [`BackendKind`]: flex (CPU, default), `tch` and `cuda` features, chosen at run time.
//!
//! ```
//! use act_core::{Policy, Query, SamplingParams};
//! use act_model::{ChatTemplate, ChatTokenizer, ModelPolicy, Qwen3, Qwen3Config};
//!
//! let corpus = ["go to the desk", "take the mug from the desk", "open the drawer"];
//! let tokenizer = ChatTokenizer::train_bpe(corpus.iter().map(|s| s.to_string()), 300)?;
//! let config = Qwen3Config::tiny(tokenizer.vocab_size());
//! let model = Qwen3::init(&config, 7, &burn::prelude::Device::flex())?;
//! let policy = ModelPolicy::new("tiny", model, tokenizer, ChatTemplate::default());
//! let params = SamplingParams::default().with_max_new_tokens(5).with_seed(1);
//! let out = policy.generate(&[Query::text("where is the mug?")], &params)?;
//! assert_eq!(out.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod backend;
mod batch;
mod checkpoint;
mod config;
mod error;
mod generate;
mod kv_cache;
mod logprobs;
pub mod lora;
mod parallel;
mod policy;
mod prefix_cache;
mod qwen3;
mod rope;
mod sampling;
mod shared_prefix;
mod tensor_file;
mod tokenizer;

pub use backend::BackendKind;
pub use batch::{PadSide, TokenBatch};
pub use checkpoint::{LoadReport, TrainingCheckpoint, hf_tensors, load_hf, save_hf};
pub use config::Qwen3Config;
pub use error::ModelError;
pub use generate::{
    FinishReason, Generation, GenerationConfig, MIN_ROWS_PER_PART, NoStop, StopCondition, generate, generate_in_parts,
    generate_reusing,
};
pub use kv_cache::KvCache;
pub use logprobs::{masked_nll, next_token_log_probs, shifted_mask};
pub use parallel::{ShardGradients, default_shards, shard_gradients};
pub use policy::{Completion, ModelPolicy, cut_after_stop};
pub use prefix_cache::PrefixStore;
pub use qwen3::{Attention, AttentionBias, DecoderLayer, Mlp, ParamKind, Qwen3, RandomInit, WeightSource};
pub use sampling::Sampler;
pub use shared_prefix::SharedPrefixBatch;
pub use tokenizer::{ChatEncoding, ChatTemplate, ChatTokenizer, END_OF_TEXT, IM_END, IM_START, PreTokenization};
