//! The Qwen3 architecture's hyper-parameters, read from and written to Hugging Face `config.json`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::ModelError;

/// Qwen3 hyper-parameters (the fields of a Hugging Face `Qwen3Config` that change the computation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qwen3Config {
    /// Vocabulary size (rows of the embedding and of the LM head).
    pub vocab_size: usize,
    /// Width of the residual stream.
    pub hidden_size: usize,
    /// Width of the SwiGLU MLP's hidden layer.
    pub intermediate_size: usize,
    /// Number of decoder layers.
    pub num_hidden_layers: usize,
    /// Query heads per layer.
    pub num_attention_heads: usize,
    /// Key/value heads per layer (grouped-query attention when smaller than the query heads).
    pub num_key_value_heads: usize,
    /// Width of one attention head; its own field in Qwen3, not `hidden_size / heads`.
    pub head_dim: usize,
    /// Longest sequence the model is meant for (informational: rotary tables are computed on demand).
    pub max_position_embeddings: usize,
    /// Epsilon of every RMSNorm.
    pub rms_norm_eps: f64,
    /// Base of the rotary embedding frequencies.
    pub rope_theta: f64,
    /// Whether the LM head reuses the token embedding matrix.
    pub tie_word_embeddings: bool,
    /// Whether q/k/v/o projections carry biases (false for every released Qwen3).
    pub attention_bias: bool,
    /// Standard deviation of the normal initialisation of fresh weights.
    pub initializer_range: f64,
    /// Beginning-of-sequence token id, if any.
    pub bos_token_id: Option<u32>,
    /// End-of-sequence token id, if any.
    pub eos_token_id: Option<u32>,
    /// Sliding-window attention, as Hugging Face's Qwen3 defines it (`use_sliding_window` with `sliding_window`):
    /// `Some(w)` lets a query of the layers from [`max_window_layers`](Self::max_window_layers) on see only the
    /// last `w` positions, itself included; `None` (every released Qwen3) attends over the whole sequence in every
    /// layer. A short window in the upper layers keeps a decision made from the latest tokens from being averaged
    /// over a long history, while the lower layers still read all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_window: Option<usize>,
    /// How many leading layers attend over the whole sequence when `sliding_window` is set (Hugging Face's
    /// `max_window_layers`); the layers after them use the window. 0 without a window.
    #[serde(default)]
    pub max_window_layers: usize,
}

impl Qwen3Config {
    /// A tiny model for CPU tests and examples (about 0.1M parameters plus `vocab_size x 64` embeddings).
    pub fn tiny(vocab_size: usize) -> Self {
        Qwen3Config {
            vocab_size,
            hidden_size: 64,
            intermediate_size: 128,
            num_hidden_layers: 2,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            head_dim: 16,
            max_position_embeddings: 2048,
            rms_norm_eps: 1e-6,
            rope_theta: 10_000.0,
            tie_word_embeddings: true,
            attention_bias: false,
            initializer_range: 0.02,
            bos_token_id: None,
            eos_token_id: None,
            sliding_window: None,
            max_window_layers: 0,
        }
    }

    /// Half the tiny model's width (about 50k parameters with a 1024-token vocabulary): the smaller of the two
    /// sizes the examples use to show pairs collected by one model training another.
    pub fn micro(vocab_size: usize) -> Self {
        Qwen3Config {
            hidden_size: 32,
            intermediate_size: 64,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            head_dim: 8,
            ..Self::tiny(vocab_size)
        }
    }

    /// About 0.4 million parameters with a 1024-token vocabulary (2 layers, 128 wide, head_dim 32, MLP 256): the
    /// preset the ALFWorld conversation-format IL measurements in `docs/results.md` use; about twice as fast per
    /// token as `small-1m` on a CPU.
    pub fn small_400k(vocab_size: usize) -> Self {
        Qwen3Config { intermediate_size: 256, num_hidden_layers: 2, ..Self::small_1m(vocab_size) }
    }

    /// About 0.9 million parameters with a 1024-token vocabulary (4 layers, 128 wide, head_dim 32, MLP 384).
    pub fn small_1m(vocab_size: usize) -> Self {
        Qwen3Config {
            hidden_size: 128,
            intermediate_size: 384,
            num_hidden_layers: 4,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            head_dim: 32,
            ..Self::tiny(vocab_size)
        }
    }

    /// About six million parameters with a 4096-token vocabulary: a model a laptop CPU trains in minutes.
    pub fn small_6m(vocab_size: usize) -> Self {
        Qwen3Config {
            hidden_size: 256,
            intermediate_size: 768,
            num_hidden_layers: 6,
            num_attention_heads: 8,
            num_key_value_heads: 4,
            head_dim: 32,
            ..Self::tiny(vocab_size)
        }
    }

    fn qwen3_release(hidden: usize, intermediate: usize, layers: usize, heads: usize, tie: bool) -> Self {
        Qwen3Config {
            vocab_size: 151_936,
            hidden_size: hidden,
            intermediate_size: intermediate,
            num_hidden_layers: layers,
            num_attention_heads: heads,
            num_key_value_heads: 8,
            head_dim: 128,
            max_position_embeddings: 40_960,
            rms_norm_eps: 1e-6,
            rope_theta: 1_000_000.0,
            tie_word_embeddings: tie,
            attention_bias: false,
            initializer_range: 0.02,
            bos_token_id: Some(151_643),
            eos_token_id: Some(151_645),
            sliding_window: None,
            max_window_layers: 0,
        }
    }

    /// The shapes of Qwen3-0.6B.
    pub fn qwen3_0_6b() -> Self {
        Self::qwen3_release(1024, 3072, 28, 16, true)
    }

    /// The shapes of Qwen3-1.7B.
    pub fn qwen3_1_7b() -> Self {
        Self::qwen3_release(2048, 6144, 28, 16, true)
    }

    /// The shapes of Qwen3-4B.
    pub fn qwen3_4b() -> Self {
        Self::qwen3_release(2560, 9728, 36, 32, true)
    }

    /// The shapes of Qwen3-8B.
    pub fn qwen3_8b() -> Self {
        Self::qwen3_release(4096, 12_288, 36, 32, false)
    }

    /// A preset by name: `micro`, `tiny`, `small-400k`, `small-1m`, `small-6m`, `qwen3-0.6b`, `qwen3-1.7b`, `qwen3-4b`, `qwen3-8b`.
    ///
    /// `vocab_size` applies to the two small presets only; the Qwen3 presets use Qwen's vocabulary.
    pub fn preset(name: &str, vocab_size: usize) -> Result<Self, ModelError> {
        match name {
            "micro" => Ok(Self::micro(vocab_size)),
            "tiny" => Ok(Self::tiny(vocab_size)),
            "small-400k" => Ok(Self::small_400k(vocab_size)),
            "small-1m" => Ok(Self::small_1m(vocab_size)),
            "small-6m" => Ok(Self::small_6m(vocab_size)),
            "qwen3-0.6b" => Ok(Self::qwen3_0_6b()),
            "qwen3-1.7b" => Ok(Self::qwen3_1_7b()),
            "qwen3-4b" => Ok(Self::qwen3_4b()),
            "qwen3-8b" => Ok(Self::qwen3_8b()),
            other => Err(ModelError::Config(format!(
                "unknown preset `{other}` (expected micro, tiny, small-400k, small-1m, small-6m, qwen3-0.6b, qwen3-1.7b, qwen3-4b or qwen3-8b)"
            ))),
        }
    }

    /// Sets the vocabulary size.
    #[must_use]
    pub fn with_vocab_size(mut self, vocab_size: usize) -> Self {
        self.vocab_size = vocab_size;
        self
    }

    /// Sets whether the LM head is tied to the embedding.
    #[must_use]
    pub fn with_tie_word_embeddings(mut self, tie: bool) -> Self {
        self.tie_word_embeddings = tie;
        self
    }

    /// Sets the end-of-sequence token id.
    #[must_use]
    pub fn with_eos_token_id(mut self, eos: Option<u32>) -> Self {
        self.eos_token_id = eos;
        self
    }

    /// Sets sliding-window attention: layers `full_layers..` see the last `window` positions, the first
    /// `full_layers` the whole sequence.
    #[must_use]
    pub fn with_sliding_window(mut self, window: usize, full_layers: usize) -> Self {
        self.sliding_window = Some(window);
        self.max_window_layers = full_layers;
        self
    }

    /// The attention window of layer `layer`: `Some(w)` for a sliding-window layer, `None` for full attention.
    pub fn layer_window(&self, layer: usize) -> Option<usize> {
        self.sliding_window.filter(|_| layer >= self.max_window_layers)
    }

    /// Query heads per key/value head.
    pub fn group_size(&self) -> usize {
        self.num_attention_heads / self.num_key_value_heads.max(1)
    }

    /// The number of parameters a model of this shape holds.
    pub fn num_parameters(&self) -> usize {
        let h = self.hidden_size;
        let q = self.num_attention_heads * self.head_dim;
        let kv = self.num_key_value_heads * self.head_dim;
        let bias = if self.attention_bias { q + 2 * kv + h } else { 0 };
        let attention = h * q + 2 * h * kv + q * h + bias + 2 * self.head_dim;
        let mlp = 3 * h * self.intermediate_size;
        let layer = attention + mlp + 2 * h;
        let head = if self.tie_word_embeddings { 0 } else { self.vocab_size * h };
        self.vocab_size * h + self.num_hidden_layers * layer + h + head
    }

    /// Checks that the shapes are consistent.
    pub fn validate(&self) -> Result<(), ModelError> {
        let positive = [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("head_dim", self.head_dim),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(ModelError::Config(format!("{name} must be positive")));
            }
        }
        if !self.num_attention_heads.is_multiple_of(self.num_key_value_heads) {
            return Err(ModelError::Config(format!(
                "num_attention_heads ({}) must be a multiple of num_key_value_heads ({})",
                self.num_attention_heads, self.num_key_value_heads
            )));
        }
        if !self.head_dim.is_multiple_of(2) {
            return Err(ModelError::Config(format!("head_dim ({}) must be even for rotary embeddings", self.head_dim)));
        }
        if !(self.rope_theta.is_finite() && self.rope_theta > 0.0) {
            return Err(ModelError::Config(format!("rope_theta ({}) must be positive", self.rope_theta)));
        }
        if !(self.rms_norm_eps.is_finite() && self.rms_norm_eps > 0.0) {
            return Err(ModelError::Config(format!("rms_norm_eps ({}) must be positive", self.rms_norm_eps)));
        }
        if self.sliding_window == Some(0) {
            return Err(ModelError::Config("sliding_window must be positive".into()));
        }
        Ok(())
    }

    /// Parses a Hugging Face `config.json` text.
    ///
    /// Reads `rope_theta` at top level (Hub Qwen3 repos, transformers 4.x) or inside `rope_parameters`
    /// (transformers 5.x); rejects rope scaling other than the default, which this model does not implement.
    pub fn from_hf_json(text: &str) -> Result<Self, ModelError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| ModelError::Config(format!("config.json is not JSON: {e}")))?;
        let obj = value.as_object().ok_or_else(|| ModelError::Config("config.json is not an object".into()))?;
        if let Some(model_type) = obj.get("model_type").and_then(Value::as_str)
            && model_type != "qwen3"
        {
            return Err(ModelError::Config(format!("model_type is `{model_type}`, expected `qwen3`")));
        }
        let usize_field = |name: &str| -> Result<usize, ModelError> {
            obj.get(name)
                .and_then(Value::as_u64)
                .map(|v| v as usize)
                .ok_or_else(|| ModelError::Config(format!("config.json: `{name}` missing or not a positive integer")))
        };
        let hidden_size = usize_field("hidden_size")?;
        let num_attention_heads = usize_field("num_attention_heads")?;
        let head_dim = match obj.get("head_dim") {
            Some(Value::Null) | None => hidden_size / num_attention_heads.max(1),
            Some(_) => usize_field("head_dim")?,
        };
        let num_key_value_heads = match obj.get("num_key_value_heads") {
            Some(Value::Null) | None => num_attention_heads,
            Some(_) => usize_field("num_key_value_heads")?,
        };
        let rope_theta = rope_theta(obj)?;
        let float_or = |name: &str, default: f64| -> Result<f64, ModelError> {
            match obj.get(name) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => {
                    v.as_f64().ok_or_else(|| ModelError::Config(format!("config.json: `{name}` is not a number")))
                }
            }
        };
        let bool_or = |name: &str, default: bool| -> Result<bool, ModelError> {
            match obj.get(name) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => {
                    v.as_bool().ok_or_else(|| ModelError::Config(format!("config.json: `{name}` is not a bool")))
                }
            }
        };
        let mut config = Qwen3Config {
            vocab_size: usize_field("vocab_size")?,
            hidden_size,
            intermediate_size: usize_field("intermediate_size")?,
            num_hidden_layers: usize_field("num_hidden_layers")?,
            num_attention_heads,
            num_key_value_heads,
            head_dim,
            max_position_embeddings: match obj.get("max_position_embeddings") {
                None | Some(Value::Null) => 32_768,
                Some(_) => usize_field("max_position_embeddings")?,
            },
            rms_norm_eps: float_or("rms_norm_eps", 1e-6)?,
            rope_theta,
            tie_word_embeddings: bool_or("tie_word_embeddings", false)?,
            attention_bias: bool_or("attention_bias", false)?,
            initializer_range: float_or("initializer_range", 0.02)?,
            bos_token_id: token_id(obj.get("bos_token_id")),
            eos_token_id: token_id(obj.get("eos_token_id")),
            // transformers keeps `sliding_window` only with `use_sliding_window`.
            sliding_window: if bool_or("use_sliding_window", false)? {
                Some(usize_field("sliding_window")?)
            } else {
                None
            },
            max_window_layers: 0,
        };
        // The layer count only matters with a window (0 otherwise, as every preset has it, so that configs
        // compare equal); transformers' default is 28.
        if config.sliding_window.is_some() {
            config.max_window_layers = match obj.get("max_window_layers") {
                None | Some(Value::Null) => 28,
                Some(_) => usize_field("max_window_layers")?,
            };
        }
        if let Some(types) = obj.get("layer_types").filter(|v| !v.is_null()) {
            let derived = config.layer_types();
            if types.as_array().is_none_or(|t| t.len() != derived.len() || t.iter().zip(&derived).any(|(a, b)| a != b))
            {
                return Err(ModelError::Config(format!(
                    "config.json: `layer_types` {types} is not supported (only full attention followed by sliding \
                     window layers, as `use_sliding_window`, `sliding_window` and `max_window_layers` give: {derived:?})"
                )));
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// Reads a Hugging Face `config.json` file.
    pub fn from_hf_file(path: impl AsRef<Path>) -> Result<Self, ModelError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::io(path, e))?;
        Self::from_hf_json(&text).map_err(|e| match e {
            ModelError::Config(m) => ModelError::Config(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    /// The `config.json` that transformers (4.x and 5.x) loads as a `Qwen3ForCausalLM`.
    pub fn to_hf_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("architectures".into(), json!(["Qwen3ForCausalLM"]));
        obj.insert("model_type".into(), json!("qwen3"));
        obj.insert("vocab_size".into(), json!(self.vocab_size));
        obj.insert("hidden_size".into(), json!(self.hidden_size));
        obj.insert("intermediate_size".into(), json!(self.intermediate_size));
        obj.insert("num_hidden_layers".into(), json!(self.num_hidden_layers));
        obj.insert("num_attention_heads".into(), json!(self.num_attention_heads));
        obj.insert("num_key_value_heads".into(), json!(self.num_key_value_heads));
        obj.insert("head_dim".into(), json!(self.head_dim));
        obj.insert("hidden_act".into(), json!("silu"));
        obj.insert("max_position_embeddings".into(), json!(self.max_position_embeddings));
        obj.insert("rms_norm_eps".into(), json!(self.rms_norm_eps));
        // Top-level rope_theta: transformers 4.x reads only this form and 5.x reads it too.
        obj.insert("rope_theta".into(), json!(self.rope_theta));
        obj.insert("rope_scaling".into(), Value::Null);
        obj.insert("tie_word_embeddings".into(), json!(self.tie_word_embeddings));
        obj.insert("attention_bias".into(), json!(self.attention_bias));
        obj.insert("attention_dropout".into(), json!(0.0));
        obj.insert("initializer_range".into(), json!(self.initializer_range));
        obj.insert("use_sliding_window".into(), json!(self.sliding_window.is_some()));
        obj.insert("sliding_window".into(), json!(self.sliding_window));
        obj.insert("max_window_layers".into(), json!(self.max_window_layers));
        obj.insert("layer_types".into(), json!(self.layer_types()));
        obj.insert("use_cache".into(), json!(true));
        obj.insert("torch_dtype".into(), json!("float32"));
        obj.insert("bos_token_id".into(), json!(self.bos_token_id));
        obj.insert("eos_token_id".into(), json!(self.eos_token_id));
        Value::Object(obj)
    }
}

impl Qwen3Config {
    /// Hugging Face's `layer_types`: `sliding_attention` for a windowed layer, `full_attention` otherwise.
    fn layer_types(&self) -> Vec<&'static str> {
        (0..self.num_hidden_layers)
            .map(|i| if self.layer_window(i).is_some() { "sliding_attention" } else { "full_attention" })
            .collect()
    }
}

fn token_id(value: Option<&Value>) -> Option<u32> {
    match value? {
        Value::Number(n) => n.as_u64().map(|v| v as u32),
        // Some configs list several end tokens; the first is the one chat templates emit.
        Value::Array(items) => items.first().and_then(Value::as_u64).map(|v| v as u32),
        _ => None,
    }
}

fn rope_theta(obj: &Map<String, Value>) -> Result<f64, ModelError> {
    let check_type = |params: &Map<String, Value>| -> Result<(), ModelError> {
        let kind = params.get("rope_type").or_else(|| params.get("type")).and_then(Value::as_str).unwrap_or("default");
        if kind == "default" {
            Ok(())
        } else {
            Err(ModelError::Config(format!("rope scaling type `{kind}` is not supported")))
        }
    };
    if let Some(Value::Object(scaling)) = obj.get("rope_scaling") {
        check_type(scaling)?;
    }
    if let Some(theta) = obj.get("rope_theta").filter(|v| !v.is_null()) {
        return theta.as_f64().ok_or_else(|| ModelError::Config("config.json: `rope_theta` is not a number".into()));
    }
    if let Some(Value::Object(params)) = obj.get("rope_parameters") {
        check_type(params)?;
        if let Some(theta) = params.get("rope_theta") {
            return theta
                .as_f64()
                .ok_or_else(|| ModelError::Config("config.json: `rope_parameters.rope_theta` is not a number".into()));
        }
    }
    // transformers' own default when neither form is present.
    Ok(10_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base_json() -> Value {
        json!({
            "model_type": "qwen3", "vocab_size": 100, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
            "rms_norm_eps": 1e-6, "tie_word_embeddings": false
        })
    }

    #[test]
    fn reads_top_level_rope_theta() {
        let mut v = base_json();
        v["rope_theta"] = json!(1_000_000.0);
        let c = Qwen3Config::from_hf_json(&v.to_string()).unwrap();
        assert_eq!(c.rope_theta, 1_000_000.0);
        assert_eq!(c.head_dim, 16);
        assert_eq!(c.group_size(), 2);
    }

    #[test]
    fn reads_rope_parameters_form() {
        let mut v = base_json();
        v["rope_parameters"] = json!({"rope_type": "default", "rope_theta": 5e5});
        assert_eq!(Qwen3Config::from_hf_json(&v.to_string()).unwrap().rope_theta, 5e5);
    }

    #[test]
    fn missing_rope_theta_defaults_like_transformers() {
        assert_eq!(Qwen3Config::from_hf_json(&base_json().to_string()).unwrap().rope_theta, 10_000.0);
    }

    #[test]
    fn rejects_yarn_and_bad_heads() {
        let mut v = base_json();
        v["rope_scaling"] = json!({"rope_type": "yarn", "factor": 4.0});
        assert!(Qwen3Config::from_hf_json(&v.to_string()).unwrap_err().to_string().contains("yarn"));
        let mut v = base_json();
        v["num_key_value_heads"] = json!(3);
        assert!(Qwen3Config::from_hf_json(&v.to_string()).is_err());
        let mut v = base_json();
        v["model_type"] = json!("llama");
        assert!(Qwen3Config::from_hf_json(&v.to_string()).is_err());
        assert!(Qwen3Config::from_hf_json("[1]").is_err());
        assert!(Qwen3Config::from_hf_json("{").is_err());
    }

    #[test]
    fn hf_json_round_trips() {
        for c in [
            Qwen3Config::micro(300),
            Qwen3Config::tiny(300),
            Qwen3Config::small_400k(1024),
            Qwen3Config::small_1m(1024),
            Qwen3Config::small_6m(4096),
            Qwen3Config::qwen3_8b(),
        ] {
            let back = Qwen3Config::from_hf_json(&c.to_hf_json().to_string()).unwrap();
            assert_eq!(back, c);
        }
    }

    #[test]
    fn parameter_counts_match_known_models() {
        // Qwen3-0.6B: 596M parameters with tied embeddings (0.44B without them, as its model card says).
        let c = Qwen3Config::qwen3_0_6b();
        assert_eq!(c.num_parameters(), 596_049_920);
        let one = Qwen3Config::small_1m(1024).num_parameters();
        assert!((500_000..2_000_000).contains(&one), "{one}");
        let two_layers = Qwen3Config::preset("small-400k", 1024).unwrap();
        assert_eq!((two_layers.num_hidden_layers, two_layers.head_dim), (2, 32));
        assert!((350_000..450_000).contains(&two_layers.num_parameters()), "{}", two_layers.num_parameters());
        let small = Qwen3Config::small_6m(4096).num_parameters();
        assert!((5_000_000..7_000_000).contains(&small), "{small}");
        let micro = Qwen3Config::preset("micro", 1024).unwrap().num_parameters();
        assert!(micro < Qwen3Config::tiny(1024).num_parameters() / 2, "{micro}");
        assert!(Qwen3Config::preset("qwen3-9b", 10).is_err());
    }
}
