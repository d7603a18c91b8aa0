//! A Qwen3-architecture language model in Burn: the policy ACT trains.
//!
//! One job: turn token ids into logits, log-probs and generated text for Qwen3-shaped models, from a tiny model
//! trained on a laptop CPU to a Hugging Face Qwen3 checkpoint, and save the result so transformers loads it.
//!
//! - [`qwen3`]: the architecture (RMSNorm, rotate-half RoPE, grouped-query attention with q/k norm, SwiGLU,
//!   tied or untied head); [`config`] reads and writes HF `config.json`.
//! - [`checkpoint`]: HF safetensors (single or sharded) in and out; training checkpoints with optimizer state.
//! - [`generate`](mod@generate), [`kv_cache`], [`sampling`]: batched KV-cache decoding of mixed-length prompts, seeded sampling.
//! - [`logprobs`]: per-token log-probs of a padded batch, chunked over positions.
//! - [`tokenizer`]: `tokenizer.json` files, in-process BPE training, Qwen's chat template with an exact
//!   completion boundary; [`policy`]: act-core's `Policy`.
//! - [`parallel`]: data-parallel gradients of batch shards on one device (both CPU cores busy on flex).
//! - [`backend`]: flex (CPU, default), `tch` and `cuda` features, chosen at run time.
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

pub mod backend;
pub mod batch;
pub mod checkpoint;
pub mod config;
pub mod error;
pub mod generate;
pub mod kv_cache;
pub mod logprobs;
pub mod lora;
pub mod parallel;
pub mod policy;
pub mod prefix_cache;
pub mod qwen3;
pub mod rope;
pub mod sampling;
pub mod shared_prefix;
mod tensor_file;
pub mod tokenizer;

pub use backend::BackendKind;
pub use batch::{PadSide, TokenBatch};
pub use checkpoint::{LoadReport, TrainingCheckpoint, load_hf, save_hf};
pub use config::Qwen3Config;
pub use error::ModelError;
pub use generate::{
    FinishReason, Generation, GenerationConfig, MIN_ROWS_PER_PART, NoStop, StopCondition, generate, generate_in_parts,
    generate_reusing,
};
pub use kv_cache::KvCache;
pub use logprobs::{masked_nll, next_token_log_probs, shifted_mask};
pub use policy::{Completion, ModelPolicy};
pub use prefix_cache::PrefixStore;
pub use qwen3::Qwen3;
pub use sampling::Sampler;
pub use shared_prefix::SharedPrefixBatch;
pub use tokenizer::{ChatEncoding, ChatTemplate, ChatTokenizer, PreTokenization};
