//! The policy seam: anything that turns prompts into completions, from a scripted baseline to a language model.

use serde::{Deserialize, Serialize};

use crate::error::PolicyError;
use crate::trajectory::{Action, AgentState};

/// How to sample completions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SamplingParams {
    /// Softmax temperature; 0 means greedy.
    pub temperature: f32,
    /// Nucleus sampling mass in (0, 1]; 1 disables it.
    pub top_p: f32,
    /// Keep only the `top_k` most likely tokens; 0 disables it.
    pub top_k: usize,
    /// The most tokens to generate per completion (`max_completion_tokens`, TRL's name, is accepted in JSON).
    #[serde(alias = "max_completion_tokens")]
    pub max_new_tokens: usize,
    /// Generation stops after any of these strings (which are kept in the completion).
    pub stop: Vec<String>,
    /// The seed; query `i` of a batch samples from [`derive_seed`](crate::derive_seed)`(seed, i)`.
    pub seed: u64,
}

impl Default for SamplingParams {
    fn default() -> Self {
        SamplingParams { temperature: 1.0, top_p: 1.0, top_k: 0, max_new_tokens: 256, stop: Vec::new(), seed: 0 }
    }
}

impl SamplingParams {
    /// Greedy decoding.
    pub fn greedy() -> Self {
        SamplingParams { temperature: 0.0, ..Self::default() }
    }

    /// Sets the temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = temperature;
        self
    }

    /// Sets top-p.
    #[must_use]
    pub fn with_top_p(mut self, top_p: f32) -> Self {
        self.top_p = top_p;
        self
    }

    /// Sets top-k.
    #[must_use]
    pub fn with_top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k;
        self
    }

    /// Sets the token limit.
    #[must_use]
    pub fn with_max_new_tokens(mut self, max_new_tokens: usize) -> Self {
        self.max_new_tokens = max_new_tokens;
        self
    }

    /// Adds a stop string.
    #[must_use]
    pub fn with_stop(mut self, stop: impl Into<String>) -> Self {
        self.stop.push(stop.into());
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// What a query asks, in structured form: scripted policies read this, language models read the prompt. Kinds may
/// be added: a policy answers the ones it knows and declines the rest (`PolicyError::Unsupported`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum QueryKind {
    /// Choose the next action in this state.
    Act(AgentState),
    /// Say which of two actions is better in this state (action 1 is `actions[0]`).
    Compare {
        /// The state.
        state: AgentState,
        /// The two actions, in presented order.
        actions: [Action; 2],
    },
    /// Free text with no structure (a language model only).
    Text,
}

/// One prompt for a policy, with its structured meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// The rendered prompt (a user message; chat formatting is the model's business).
    pub prompt: String,
    /// What the prompt asks.
    pub kind: QueryKind,
}

impl Query {
    /// A free-text query.
    pub fn text(prompt: impl Into<String>) -> Self {
        Query { prompt: prompt.into(), kind: QueryKind::Text }
    }
}

/// A completion with the tokens behind it: what on-line RL trains on without tokenizing the text again.
///
/// Policies without tokens (scripted baselines, remote APIs) return the text alone; see [`Completion::has_tokens`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Completion {
    /// The completion text (what [`Policy::generate`] returns).
    pub text: String,
    /// The prompt's token ids as the model read them (chat template applied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_ids: Vec<u32>,
    /// The sampled token ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_ids: Vec<u32>,
    /// Each sampled token's log-probability under the distribution it was drawn from (the model's at the sampling
    /// temperature, before top-k/top-p): a trainer's behaviour log-probs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_probs: Vec<f32>,
}

impl Completion {
    /// A completion that is text only.
    pub fn text_only(text: impl Into<String>) -> Self {
        Completion { text: text.into(), ..Completion::default() }
    }

    /// Whether token ids and one log-prob per token came with the text.
    pub fn has_tokens(&self) -> bool {
        !self.token_ids.is_empty() && self.token_ids.len() == self.log_probs.len()
    }
}

/// Turns a batch of queries into completions, one per query, in order.
///
/// Implementations must be deterministic given `params.seed`: query `i` samples from
/// [`derive_seed`](crate::derive_seed)`(params.seed, i)`.
pub trait Policy: Send + Sync {
    /// A name for reports and provenance ("random-admissible", "qwen3-tiny@step-200").
    fn name(&self) -> &str;

    /// One completion per query.
    fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError>;

    /// One completion per query with its token ids and sampled log-probs, under the same seeding contract as
    /// [`generate`](Policy::generate) (the texts are the same). The default is `generate`'s text alone, which is
    /// right for policies without tokens; language-model policies override it.
    fn complete(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<Completion>, PolicyError> {
        Ok(self.generate(queries, params)?.into_iter().map(Completion::text_only).collect())
    }
}

impl<P: Policy + ?Sized> Policy for &P {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        (**self).generate(queries, params)
    }

    fn complete(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<Completion>, PolicyError> {
        (**self).complete(queries, params)
    }
}

impl<P: Policy + ?Sized> Policy for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn generate(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<String>, PolicyError> {
        (**self).generate(queries, params)
    }

    fn complete(&self, queries: &[Query], params: &SamplingParams) -> Result<Vec<Completion>, PolicyError> {
        (**self).complete(queries, params)
    }
}
