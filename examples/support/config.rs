//! What an ACT experiment runs: the data sizes, the model, each training stage's settings and the methods compared.
//!
//! Plain serde structs with defaults sized for the quickstart (a tiny model on a 2-core CPU); a JSON file sets any
//! subset of fields (`{"training": {"act": {"steps": 300}}}`), and unknown fields are an error naming the file.

use std::path::{Path, PathBuf};

use act_grpo::{ComputeDtype, ScheduleKind};
use serde::{Deserialize, Serialize};

/// Where the initial policy comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum ModelSource {
    /// A model of an act-model preset shape (`micro`, `tiny`, `small-6m`, ...) trained from scratch: a BPE tokenizer is
    /// trained on environment text and the base stage teaches it the environment's language.
    Preset {
        /// The preset name.
        name: String,
        /// Tokens in the trained tokenizer.
        vocab_size: usize,
        /// The query and key RMSNorm gains at initialisation (`None`: 1, as upstream initialises Qwen3); see
        /// [`act_model::RandomInit::with_qk_norm_gain`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        qk_norm_gain: Option<f32>,
        /// How the trained tokenizer splits text before its merges (`byte_level`, GPT-2's split, by default;
        /// `named_numbers` keeps `shelf 3` one piece, see [`act_model::PreTokenization`]).
        #[serde(default, skip_serializing_if = "is_byte_level")]
        pre_tokenization: act_model::PreTokenization,
        /// Sliding-window attention in the upper layers (`None`, as in every released Qwen3: full attention
        /// everywhere): the layers after the first `max_window_layers` see only the last `sliding_window`
        /// positions ([`act_model::Qwen3Config::sliding_window`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sliding_window: Option<usize>,
        /// Leading layers that keep full attention when `sliding_window` is set (`None`: half the layers).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_window_layers: Option<usize>,
    },
    /// A Hugging Face Qwen3 checkpoint directory (`config.json`, safetensors, `tokenizer.json`): π₀ is the
    /// checkpoint as loaded, and there is no base stage.
    Checkpoint {
        /// The directory.
        dir: PathBuf,
    },
}

fn is_upstream_search(order: &act_alfworld::SearchOrder) -> bool {
    *order == act_alfworld::SearchOrder::LastListedFirst
}

fn is_byte_level(p: &act_model::PreTokenization) -> bool {
    *p == act_model::PreTokenization::ByteLevel
}

impl Default for ModelSource {
    fn default() -> Self {
        ModelSource::Preset {
            name: "tiny".into(),
            vocab_size: 1024,
            qk_norm_gain: None,
            pre_tokenization: act_model::PreTokenization::ByteLevel,
            sliding_window: None,
            max_window_layers: None,
        }
    }
}

/// Which prompt templates the run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptStyle {
    /// Short prompts for tiny models (task, recent actions, observation, admissible actions): a few hundred tokens
    /// a prompt, so a CPU trains on thousands of them in minutes.
    #[default]
    Compact,
    /// act-core's default templates, in the style of verl-agent's that the paper builds on: for real checkpoints.
    Paper,
    /// The episode as a conversation (observations as user turns, actions as assistant turns), no admissible
    /// list: the whole history is the agent's memory, and IL trains one packed sequence per expert episode.
    Conversation,
}

/// What the base stage of a from-scratch preset trains π₀ on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseData {
    /// Random-policy episodes on the training tasks: π₀ learns the environment's words and the output formats,
    /// and nothing about which action is good.
    #[default]
    Random,
    /// The expert's episodes on `base_episodes` training tasks after the first `train_games`, so disjoint from the
    /// tasks IL and ACT train on: π₀ starts as a weak imitator, the way the paper's π₀ (a pretrained LLM) starts
    /// with a prior over sensible actions. Comparisons are still answered by a coin flip. The environment needs
    /// `train_games + base_episodes` training tasks.
    Expert,
    /// The same expert episodes as [`BaseData::Expert`], read as whole episodes: the plain action prompt at every
    /// state (one packed sequence per episode in the conversation style) and, at one random state per episode, the
    /// reasoning prompt and a coin-flip comparison, so π₀ still knows every output format. With
    /// `base.loss_on_prompts` this is language modelling on the episodes, the stage that made the first agents
    /// win games (docs/results.md, "Reading before acting"); it costs about one sequence per episode instead of
    /// three per state.
    ExpertEpisodes,
}

/// Which two actions the base stage's coin-flip comparisons show (they teach π₀ the comparison format; the answer
/// is random either way, so π₀ is never told which action to prefer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseComparisons {
    /// Two random admissible actions.
    #[default]
    Random,
    /// The expert's action against a random other admissible action, in random order: as in the comparisons ACT
    /// trains on, one candidate is the expert's, so language modelling the candidates teaches π₀ to tell them apart
    /// as text (the second candidate is the expert's exactly when the first is not) without any answer.
    ExpertCandidate,
    /// As [`BaseComparisons::ExpertCandidate`], and the completion first proposes an action, the state's expert
    /// action, as its reasoning (`<think>go to desk 1</think><answer>2</answer>`), then the coin-flip answer. π₀
    /// learns nothing it does not learn from the episodes' actions, and the answer stays uninformed (its critic
    /// accuracy is chance); what it gains is a reasoning format its own next-action knowledge can fill, so that ACT's
    /// GRPO, rewarded for the choice only, can learn to answer with the candidate its thought proposes. A reasoning
    /// format for models trained from scratch, which have none of a pretrained model's; reported as such.
    ThoughtFirst,
}

/// How the base stage's coin-flip comparisons write their (random) answer, and so how π₀ answers comparisons.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonAnswers {
    /// The chosen action's number: `<answer>2</answer>`.
    #[default]
    Number,
    /// The chosen action's text: `<answer>go to desk 1</answer>`. The reward and the critic evaluation read
    /// either form ([`act_core::parse_choice_among`]). Alone, π₀ copied the listed actions badly (46% of its
    /// answers named neither) and ACT only's critic was no better (docs/results.md, thirteenth session); after a
    /// thought ([`BaseComparisons::ThoughtFirst`]) the answer can copy the thought, which ACT's GRPO learns (the
    /// quickstart's setting, docs/results.md, fourteenth session).
    Action,
}

/// One supervised stage (the base stage or IL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SftStageConfig {
    /// Optimizer steps.
    pub steps: usize,
    /// Sequences per step.
    pub batch_size: usize,
    /// Peak learning rate.
    pub lr: f64,
    /// The learning-rate shape after warm-up (`constant`, `linear`, `cosine`).
    pub schedule: ScheduleKind,
    /// Warm-up steps (linear from 0 to `lr`).
    pub warmup_steps: usize,
    /// Language modelling on whole sequences: the prompts' tokens (an episode's observations) carry loss as well
    /// as the completions. Off for imitation; for a base stage that teaches a from-scratch model to read.
    pub loss_on_prompts: bool,
    /// LoRA adapters on the stage's starting model (`act_model::lora`): only they train, the stage's model is
    /// saved merged, and the adapters also in PEFT's layout under `<stage>/adapter/`; `None` (the default): full
    /// fine-tuning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lora: Option<act_model::lora::LoraConfig>,
}

/// One GRPO stage (ACT or RL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrpoStageConfig {
    /// Trainer steps.
    pub steps: usize,
    /// Prompts per step.
    pub prompts_per_step: usize,
    /// Completions per prompt (G).
    pub group_size: usize,
    /// Peak learning rate.
    pub lr: f64,
    /// The most tokens per completion.
    pub max_completion_tokens: usize,
    /// The KL coefficient toward the stage's starting model (k3 estimator); 0 runs no reference model.
    pub kl_coef: f64,
    /// The learning-rate schedule after a 5-step warm-up: `constant` (the default), `linear` or `cosine` decay to
    /// 0 at the last step.
    #[serde(skip_serializing_if = "is_constant")]
    pub schedule: ScheduleKind,
    /// LoRA adapters on the stage's starting model (`act_model::lora`): only they train, the stage's model is
    /// saved merged, and the adapters also in PEFT's layout under `<stage>/adapter/`; `None` (the default): full
    /// fine-tuning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lora: Option<act_model::lora::LoraConfig>,
}

impl Default for SftStageConfig {
    fn default() -> Self {
        SftStageConfig {
            steps: 100,
            batch_size: 16,
            lr: 3e-3,
            schedule: ScheduleKind::Constant,
            warmup_steps: 10,
            loss_on_prompts: false,
            lora: None,
        }
    }
}

impl Default for GrpoStageConfig {
    fn default() -> Self {
        GrpoStageConfig {
            steps: 60,
            prompts_per_step: 8,
            group_size: 4,
            lr: 1e-3,
            max_completion_tokens: 16,
            kl_coef: 0.0,
            schedule: ScheduleKind::Constant,
            lora: None,
        }
    }
}

/// Which on-line RL advantage the stage trains with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnlineAlgorithm {
    /// Episode-level GRPO: every step of an episode gets its episode's group-normalised return.
    EpisodeGrpo,
    /// GiGPO: the episode advantage plus a step advantage from anchor states (verl-agent's).
    Gigpo,
    /// ActGuide-RL: episode-level GRPO where every group without a win is played again with a hint of the
    /// environment expert's first `k` actions (`k` by binary search over probe rollouts), and the policy learns
    /// from those guided episodes under its unguided prompts.
    #[serde(rename = "actguide")]
    ActGuide,
    /// ICRL: after a failed first round the same model, as a critic, writes tips and the solver retries the
    /// task with them; role-wise bucket advantages with a pseudo reward, the reference's filter, and the retries
    /// learnt under their tip-free prompts with calibration weights (act-grpo's `icrl`).
    Icrl,
}

/// What an episode's last step is rewarded with in on-line RL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnlineReward {
    /// `win_reward` for a won episode, 0 otherwise (verl-agent's, on ALFWorld and WebShop).
    #[default]
    Win,
    /// `win_reward` times the episode's final score (WebShop's partial purchase reward in [0, 1]): a signal for a
    /// policy that buys the wrong product more often than the right one. Not verl-agent's; say so when reporting.
    Score,
}

impl OnlineReward {
    fn is_win(&self) -> bool {
        *self == OnlineReward::Win
    }
}

/// On-line RL in the environment after IL (verl-agent's episode-level GRPO and GiGPO): each iteration plays
/// `group_size` episodes of each of `tasks_per_iteration` training tasks with the current policy, computes the
/// advantages and makes one update on every turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OnlineRlConfig {
    /// The advantage estimators trained, each its own stage from IL (and from ACT → IL).
    pub algorithms: Vec<OnlineAlgorithm>,
    /// Iterations (one update each).
    pub iterations: usize,
    /// Training tasks per iteration (drawn without replacement from the IL games).
    pub tasks_per_iteration: usize,
    /// Episodes per task (G; verl-agent uses 8).
    pub group_size: usize,
    /// The most steps per episode.
    pub step_budget: usize,
    /// Sampling temperature of the rollouts (verl-agent's 1.0).
    pub temperature: f32,
    /// The most tokens per action.
    pub max_completion_tokens: usize,
    /// Learning rate (constant after 2 warm-up updates).
    pub lr: f64,
    /// KL coefficient toward the stage's starting model (k3); 0 runs no reference model.
    pub kl_coef: f64,
    /// Entropy bonus coefficient (verl's `entropy_coeff`; 0, the default, adds none).
    #[serde(skip_serializing_if = "is_zero")]
    pub entropy_coef: f64,
    /// The reward of a won episode, given at its last step (verl-agent's 10).
    pub win_reward: f64,
    /// What the last step is rewarded with: the win (the default) or the final score, times `win_reward`.
    #[serde(skip_serializing_if = "OnlineReward::is_win")]
    pub reward: OnlineReward,
    /// GiGPO's discount of step returns.
    pub gamma: f64,
    /// GiGPO's weight of the step advantage (ω).
    pub step_weight: f64,
    /// Subtracted from an invalid action's score and step return.
    pub invalid_penalty: f64,
    /// Whether each algorithm also runs from ACT → IL (the default), or from IL only, at half the cost.
    #[serde(skip_serializing_if = "is_true")]
    pub from_act_il: bool,
    /// ActGuide-RL's search for hint lengths (used by the `actguide` algorithm only).
    #[serde(skip_serializing_if = "GuidanceConfig::is_default")]
    pub guidance: GuidanceConfig,
    /// ICRL's critic and filter (used by the `icrl` algorithm only).
    #[serde(skip_serializing_if = "IcrlConfig::is_default")]
    pub icrl: IcrlConfig,
}

/// ICRL's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IcrlConfig {
    /// The most tokens of a critique (tips take more than an action).
    pub critic_max_tokens: usize,
    /// The smallest mean reward a critic or second-round bucket needs to be trained (the reference's 0.3).
    pub mask_threshold: f64,
    /// Ends an episode (both rounds) once the same action was sent this many times in a row (the reference's 3).
    pub stop_after_repeats: usize,
}

impl Default for IcrlConfig {
    fn default() -> Self {
        IcrlConfig { critic_max_tokens: 48, mask_threshold: act_grpo::icrl::MASK_THRESHOLD, stop_after_repeats: 3 }
    }
}

impl IcrlConfig {
    fn is_default(&self) -> bool {
        *self == IcrlConfig::default()
    }
}

/// How ActGuide-RL searches the hint length of a group without a win.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GuidanceConfig {
    /// The most probes of a group's binary search over hint lengths (the reference's 5; a plan of up to 31
    /// actions is then searched exactly).
    pub max_probes: usize,
    /// Episodes per probe, at the rollout temperature; a probe succeeds if any of them wins (the reference's 2).
    pub probe_rollouts: usize,
}

impl Default for GuidanceConfig {
    fn default() -> Self {
        GuidanceConfig { max_probes: 5, probe_rollouts: 2 }
    }
}

impl GuidanceConfig {
    fn is_default(&self) -> bool {
        *self == GuidanceConfig::default()
    }
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_zero_count(value: &usize) -> bool {
    *value == 0
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

fn is_constant(value: &ScheduleKind) -> bool {
    *value == ScheduleKind::Constant
}

fn is_random_comparisons(value: &BaseComparisons) -> bool {
    *value == BaseComparisons::Random
}

fn is_number_answers(value: &ComparisonAnswers) -> bool {
    *value == ComparisonAnswers::Number
}

impl Default for OnlineRlConfig {
    fn default() -> Self {
        OnlineRlConfig {
            algorithms: vec![OnlineAlgorithm::Gigpo, OnlineAlgorithm::EpisodeGrpo],
            iterations: 20,
            tasks_per_iteration: 8,
            group_size: 4,
            step_budget: 50,
            temperature: 1.0,
            max_completion_tokens: 24,
            lr: 1e-4,
            kl_coef: 0.01,
            entropy_coef: 0.0,
            win_reward: 10.0,
            reward: OnlineReward::Win,
            gamma: 0.95,
            step_weight: 1.0,
            invalid_penalty: 0.1,
            from_act_il: true,
            guidance: GuidanceConfig::default(),
            icrl: IcrlConfig::default(),
        }
    }
}

impl OnlineRlConfig {
    /// Checks the sizes; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("iterations", self.iterations),
            ("tasks_per_iteration", self.tasks_per_iteration),
            ("group_size", self.group_size),
            ("step_budget", self.step_budget),
            ("max_completion_tokens", self.max_completion_tokens),
            ("guidance.probe_rollouts", self.guidance.probe_rollouts),
            ("icrl.critic_max_tokens", self.icrl.critic_max_tokens),
            ("icrl.stop_after_repeats", self.icrl.stop_after_repeats),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("training.online.{name} must be at least 1"));
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err("training.online.temperature must be > 0 (rollouts sample)".into());
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err("training.online.lr must be > 0".into());
        }
        if !(self.entropy_coef.is_finite() && self.entropy_coef >= 0.0) {
            return Err("training.online.entropy_coef must be finite and >= 0".into());
        }
        if self.algorithms.is_empty() {
            return Err("training.online.algorithms names no algorithm".into());
        }
        if !self.icrl.mask_threshold.is_finite() {
            return Err("training.online.icrl.mask_threshold must be finite".into());
        }
        Ok(())
    }
}

/// The model and every training stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainingConfig {
    /// The initial policy.
    pub model: ModelSource,
    /// The backend: `flex` (CPU, default), `tch`, `tch-cuda:N` or `cuda:N` (the latter need act-model's features).
    pub backend: String,
    /// The base stage (from-scratch presets only): random-policy (or, with [`BaseData::Expert`], expert) episodes
    /// teach π₀ the environment's language.
    pub base: SftStageConfig,
    /// Episodes the base stage trains on.
    pub base_episodes: usize,
    /// What they are.
    pub base_data: BaseData,
    /// The fraction of base episodes shown with a hint before every prompt (their own first `k` actions, `k`
    /// uniform in 1..=length, as ActGuide-RL's hints show them), so that π₀, like a pretrained LLM, can follow a
    /// hint; 0 (the default) shows none. Only the plain action prompts get hints.
    #[serde(skip_serializing_if = "is_zero")]
    pub base_hint_fraction: f64,
    /// The fraction of base-episode states that are also a sample of their own turn alone (the task and the
    /// current observation, no earlier turns; a short sequence of its own beside the packed episode), drawn from
    /// the seed; 0 (the default) adds none. On a synthetic take-or-go decision a small model learnt to match the
    /// task's object against what is in view from such short prompts and carried it over to long ones; in the
    /// quickstart's π₀ stage 0.35 made every method worse (docs/results.md, twelfth session), hence the default.
    #[serde(skip_serializing_if = "is_zero")]
    pub base_single_turn_fraction: f64,
    /// The same for the IL data (the expert's training episodes and their renamed copies), so IL and ACT → IL
    /// alike; 0 (the default) adds none.
    #[serde(skip_serializing_if = "is_zero")]
    pub il_single_turn_fraction: f64,
    /// Which two actions the base stage's coin-flip comparisons show; `random` (the default) or `expert_candidate`.
    #[serde(skip_serializing_if = "is_random_comparisons")]
    pub base_comparisons: BaseComparisons,
    /// How those comparisons write their coin-flip answer: `number` (the default) or `action` (the chosen
    /// action's text), so how π₀, and ACT after it, answer.
    #[serde(skip_serializing_if = "is_number_answers")]
    pub base_answers: ComparisonAnswers,
    /// ACT: GRPO on comparison prompts.
    pub act: GrpoStageConfig,
    /// IL: SFT on expert actions.
    pub il: SftStageConfig,
    /// RL: GRPO on next-action prompts.
    pub rl: GrpoStageConfig,
    /// Longest training sequence in tokens (the prompt loses its start first).
    pub max_length: usize,
    /// Write a trainer checkpoint every this many steps, so an interrupted stage resumes (0: only stage ends).
    pub checkpoint_every: usize,
    /// Gradient (activation) checkpointing in every training stage
    /// (`act_model::BackendKind::checkpointed_training_device`): less activation memory for some recomputation,
    /// the same gradients; off by default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gradient_checkpointing: bool,
    /// The dtype of the models' weights and activations in every stage and evaluation (`act_model::Qwen3::
    /// with_float_dtype`): `f32` (the default), `bf16` or `f16`. A stage with `lora` trains f32 adapters on the
    /// half-precision base; a stage without fine-tunes every weight on a half-precision working copy with f32
    /// master weights (`act_grpo::ComputeDtype`), and saves the f32 weights. Logits, log-probs and losses stay f32.
    #[serde(skip_serializing_if = "is_f32")]
    pub float_dtype: ComputeDtype,
    /// On-line RL in the environment after IL and after ACT → IL; `None` (the default) runs none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online: Option<OnlineRlConfig>,
    /// Early Experience's implicit world modelling, the method `IWM -> IL`: a stage from π₀ that predicts the
    /// observations following π₀'s alternatives and the expert's actions, then IL from it; `None` (the default)
    /// runs none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iwm: Option<WorldModelConfig>,
    /// Early Experience's self-reflection, the method `SR -> IL`: π₀ explains why the expert's action beats an
    /// alternative, given what followed each; a stage from π₀ learns to write that before the expert's action, then
    /// IL from it; `None` (the default) runs none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sr: Option<ReflectionConfig>,
}

/// Early Experience's self-reflection ([`crate::early::reflections`]): its data and its stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReflectionConfig {
    /// Training games (the first ones, IL's own) whose expert states are branched, as for the world model: π₀
    /// samples the experiment's `k` actions per state, distinct and unlike the expert's.
    pub games: usize,
    /// The most alternatives per state, each with its own reflection.
    pub alternatives_per_state: usize,
    /// Keep alternatives the state does not admit (ALFWorld answers them "Nothing happens."); false by default,
    /// so the rationale compares two things the agent could do (ours: the paper does not say).
    pub keep_inadmissible: bool,
    /// Where π₀ proposes no usable alternative at a state, take a random admissible one instead (as ACT's pairs do);
    /// off by default, so every alternative is π₀'s own.
    pub fallback: bool,
    /// The longest rationale π₀ writes, in tokens.
    pub max_rationale_tokens: usize,
    /// π₀'s sampling temperature for rationales.
    pub temperature: f32,
    /// The stage's SFT settings (one sequence per sample: a reasoning prompt is no prefix of the episode).
    pub stage: SftStageConfig,
}

impl Default for ReflectionConfig {
    fn default() -> Self {
        ReflectionConfig {
            games: 200,
            alternatives_per_state: 1,
            keep_inadmissible: false,
            fallback: false,
            max_rationale_tokens: 48,
            temperature: 1.0,
            stage: SftStageConfig { steps: 300, batch_size: 16, lr: 1e-3, ..SftStageConfig::default() },
        }
    }
}

/// Whether a training configuration's dtype is the default, f32 (for `skip_serializing_if`).
fn is_f32(dtype: &ComputeDtype) -> bool {
    dtype.is_f32()
}

/// Early Experience's implicit world modelling ([`crate::early`]): its data and its stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorldModelConfig {
    /// Training games (the first ones, IL's own) whose expert states are branched: at each, π₀ samples `k`
    /// alternatives (the experiment's `k`, distinct and unlike the expert's action), and each is taken there.
    pub games: usize,
    /// The most alternatives kept per state.
    pub alternatives_per_state: usize,
    /// Keep alternatives the state does not admit (the environment answers them, ALFWorld with "Nothing
    /// happens."), so the world model learns what is not there; true by default (ours: the paper does not say).
    pub keep_inadmissible: bool,
    /// Also predict what follows the expert's own action at every state.
    pub include_expert: bool,
    /// The stage's SFT settings (one sequence per sample: a branch is no prefix of the episode).
    pub stage: SftStageConfig,
}

impl Default for WorldModelConfig {
    fn default() -> Self {
        WorldModelConfig {
            games: 200,
            alternatives_per_state: 2,
            keep_inadmissible: true,
            include_expert: true,
            stage: SftStageConfig { steps: 300, batch_size: 16, lr: 1e-3, ..SftStageConfig::default() },
        }
    }
}

impl Default for TrainingConfig {
    fn default() -> Self {
        TrainingConfig {
            model: ModelSource::default(),
            backend: "flex".into(),
            base: SftStageConfig { steps: 80, ..SftStageConfig::default() },
            base_episodes: 100,
            base_data: BaseData::Random,
            base_hint_fraction: 0.0,
            base_single_turn_fraction: 0.0,
            il_single_turn_fraction: 0.0,
            base_comparisons: BaseComparisons::Random,
            base_answers: ComparisonAnswers::Number,
            act: GrpoStageConfig { steps: 40, max_completion_tokens: 8, ..GrpoStageConfig::default() },
            il: SftStageConfig::default(),
            rl: GrpoStageConfig { steps: 20, lr: 3e-4, ..GrpoStageConfig::default() },
            max_length: 768,
            checkpoint_every: 20,
            gradient_checkpointing: false,
            float_dtype: ComputeDtype::F32,
            online: None,
            iwm: None,
            sr: None,
        }
    }
}

/// DAgger's data for IL (Ross et al. 2011, one round): π₀ plays the first `games` training tasks greedily with the
/// expert acting at each step with probability `expert_prob` ([`act_rollout::ExpertMixture`]), and every state
/// reached is labelled with the expert's action ([`crate::dart::mixture_episodes`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaggerConfig {
    /// Training tasks played, the first ones (IL's own).
    pub games: usize,
    /// The probability that the expert, not π₀, acts at a step (DAgger's β).
    pub expert_prob: f64,
    /// Whether to train on the expert's label at the states where π₀ acted and erred (each such sample then needs a
    /// sequence of its own, since the next step's history shows π₀'s action), or only on the states where the
    /// action played was the expert's (every episode packs into one sequence; the default).
    pub mistake_labels: bool,
    /// DAgger's rounds: 1 (the default) trains each IL stage once on the expert's and π₀'s relabelled episodes;
    /// `n` > 1 splits each IL stage's steps into `n` equal parts (the stage `il` then trains as `il_round1`, ...,
    /// `il`, each part a new learning-rate schedule from the last part's model), and before part `r` the model of
    /// part `r - 1` plays `games` further training games mixed with the expert, whose relabelled episodes join
    /// the data (DAgger's aggregation): each IL stage, IL and ACT → IL alike, then also learns from the states
    /// its own mistakes lead to.
    #[serde(skip_serializing_if = "is_one")]
    pub rounds: usize,
}

fn is_one(value: &usize) -> bool {
    *value == 1
}

impl Default for DaggerConfig {
    fn default() -> Self {
        DaggerConfig { games: 200, expert_prob: 0.5, mistake_labels: false, rounds: 1 }
    }
}

/// A whole experiment on one benchmark and one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Training tasks whose expert trajectories are the training data.
    pub train_games: usize,
    /// Alternatives sampled from π₀ at each expert state.
    pub k: usize,
    /// The seed every random choice flows from.
    pub seed: u64,
    /// Evaluation episodes per split (`None`: the whole split; 140 and 134 tasks on ALFWorld).
    pub eval_episodes: Option<usize>,
    /// The most steps per evaluation episode (`None`: the environment's budget, 50 on ALFWorld).
    pub eval_step_budget: Option<usize>,
    /// Softmax temperature of the trained policies' actions in on-line evaluation episodes (`None`, the default:
    /// greedy). A sampling policy draws each step from a seed derived from the episode's, so results stay
    /// reproducible; the next-action and critic accuracies stay greedy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_temperature: Option<f32>,
    /// In on-line evaluation episodes, whether a trained policy's proposal that the environment already rejected
    /// in the current state is sampled again (`act_eval::RejectedRetry`: `{}` takes ALFWorld's "Nothing happens.",
    /// 4 attempts at temperature 1). `None`, the default: every proposal is sent as the policy made it. The
    /// results say which.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_rejected_retry: Option<act_eval::RejectedRetry>,
    /// Held-out expert trajectories per evaluation split: their states measure next-action accuracy, and on the
    /// first split their pairs measure critic accuracy.
    pub critic_games: usize,
    /// Episodes played in lockstep per policy call during evaluation.
    pub eval_batch_size: usize,
    /// Prompt templates.
    pub prompt_style: PromptStyle,
    /// The most tokens an action completion may take when the trained policies act (evaluation, pairs, the
    /// held-out probes); `None`: 24 for the compact and conversation styles (every ALFWorld action fits), 512 for the
    /// paper's reasoning prompts. WebShop's searches restate the instruction and need about 48.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_tokens: Option<usize>,
    /// Whether to run the paper's controls (re-sampled pairs; IL for as many extra steps as ACT took). Off by
    /// default: they add about two minutes to the quickstart's four.
    pub controls: bool,
    /// How many of the training games (the first ones) give ACT its comparison pairs (`None`: all of them).
    /// Sampling π₀'s alternatives costs a generation per state and sample, and ACT's budget covers fewer states
    /// than IL's: a long-context study caps it here.
    pub pair_games: Option<usize>,
    /// A pair file (`pairs.jsonl` of another run) to train ACT on instead of sampling pairs from this run's π₀:
    /// the paper's cross-size reuse.
    pub pairs_from: Option<PathBuf>,
    /// Adds to IL's data one expert-relabelled episode per training game in which each step is, with this
    /// probability, a mistake (a random admissible action or the previous action again) and every state is labelled
    /// with the expert's action ([`crate::dart`]); 0 (the default) trains on clean expert episodes only. An IL
    /// variant that needs the expert at training time; it applies to every IL stage alike.
    pub il_noise: f64,
    /// Whether `il_noise`'s episodes train on the expert's label at the mistake steps themselves (DART, the
    /// default) or only on the steps after them (recovery only): a mistake step's label differs from the action in
    /// the next step's history, so its sample cannot be packed with the rest of the episode and costs a sequence of
    /// its own; without those samples every relabelled episode trains as one packed sequence.
    pub il_noise_mistake_labels: bool,
    /// Adds to IL's data expert-relabelled episodes of DAgger's mixture of the expert and π₀ ([`DaggerConfig`]):
    /// the states π₀'s own mistakes lead to, each labelled with the expert's action. `None` (the default): none. An
    /// IL variant that needs the expert at training time; it applies to every IL stage alike.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub il_dagger: Option<DaggerConfig>,
    /// Replaces each training episode of the base stage and of IL (the relabelled ones included) by this many
    /// copies whose objects' instance numbers are renamed at random, consistently within the copy
    /// ([`crate::augment`]), so that an object's number can only be learnt by reading it; 0 (the default) trains
    /// on the episodes as played. Needs a benchmark whose objects are numbered (ALFWorld). Applies to every base
    /// and IL stage alike; ACT's pairs and the evaluation are not renamed.
    #[serde(skip_serializing_if = "is_zero_count")]
    pub renamed_copies: usize,
    /// Whether `renamed_copies` also renumber each receptacle class (`m` receptacles get `m` increasing numbers
    /// from `1..=2m`, [`act_alfworld::InstanceRenaming::random_with_receptacles`]), so that which receptacles a
    /// room has can only be read from its description, not guessed from the habit that numbers run `1..=m`;
    /// false (the default) keeps receptacle numbers. Needs `renamed_copies` > 0.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub renamed_receptacles: bool,
    /// Whether every renamed copy after the first also swaps the task's object class with another class the task
    /// could name ([`act_alfworld::ClassSwap`]: `put a hot apple ...` becomes `put a hot egg ...`, and every apple
    /// and egg of the episode trade names), so that when the object is in view can only be learnt by matching the
    /// task's word against the observation's, not from where that class usually is; false (the default) keeps the
    /// classes. Needs `renamed_copies` > 1.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub renamed_classes: bool,
    /// Whether ALFWorld's observations end with a memory line of the receptacles not visited yet
    /// ([`act_alfworld::AlfworldConfig::memory_line`]), in training data and evaluation alike; false (the default)
    /// keeps upstream's text. Native ALFWorld only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub memory_line: bool,
    /// The order in which ALFWorld's expert searches for an object it has not seen
    /// ([`act_alfworld::SearchOrder`]): `last_listed_first`, upstream's, by default; `numbers_descending` searches
    /// each class from its highest number down to 1. It changes the expert's actions: the training data, the
    /// labels, the pairs and the next-action targets. Native ALFWorld only.
    #[serde(default, skip_serializing_if = "is_upstream_search")]
    pub expert_search: act_alfworld::SearchOrder,
    /// Upstream's ALFWorld game files to play natively instead of the procedural scenes
    /// ([`act_alfworld::AlfworldConfig::game_dir`]): `$ALFWORLD_DATA` or its `json_2.1.1` (train, valid_seen and
    /// valid_unseen are the training, in-distribution and out-of-distribution splits). Absent (the default): the
    /// procedural scenes. Native ALFWorld only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alfworld_game_dir: Option<std::path::PathBuf>,
    /// Held-out measurements per training stage, after step 0 (evenly spaced, the last at the final step): the
    /// learning curves in each stage's `heldout.jsonl` / `heldout.svg`; 0 turns them off.
    pub heldout_points: usize,
    /// Held-out expert states (next-action accuracy) and held-out pairs (critic accuracy) each measurement uses,
    /// the first of those the final evaluation uses.
    pub heldout_items: usize,
    /// The model and training stages.
    pub training: TrainingConfig,
    /// Keep every evaluated episode's steps (what the agent read, wrote and did) in the evaluation records. Set by
    /// `--transcripts`; not part of the run's saved config, since it changes no result, only what is written.
    #[serde(skip)]
    pub transcripts: bool,
}

impl Default for ExperimentConfig {
    fn default() -> Self {
        ExperimentConfig {
            train_games: 100,
            k: 4,
            seed: 0,
            eval_episodes: Some(32),
            eval_step_budget: None,
            eval_temperature: None,
            eval_rejected_retry: None,
            critic_games: 20,
            eval_batch_size: 32,
            prompt_style: PromptStyle::Compact,
            action_tokens: None,
            controls: false,
            pair_games: None,
            pairs_from: None,
            il_noise: 0.0,
            il_noise_mistake_labels: true,
            il_dagger: None,
            renamed_copies: 0,
            renamed_classes: false,
            renamed_receptacles: false,
            memory_line: false,
            expert_search: act_alfworld::SearchOrder::LastListedFirst,
            alfworld_game_dir: None,
            heldout_points: 4,
            heldout_items: 32,
            training: TrainingConfig::default(),
            transcripts: false,
        }
    }
}

impl ExperimentConfig {
    /// The training tasks the experiment uses: the first `train_games`, then the base stage's expert tasks.
    pub fn train_tasks(&self) -> usize {
        match self.training.base_data {
            BaseData::Random => self.train_games,
            BaseData::Expert | BaseData::ExpertEpisodes => self.train_games + self.training.base_episodes,
        }
    }

    /// How the renamed copies of the training episodes are made.
    pub fn renaming(&self) -> crate::augment::Renaming {
        crate::augment::Renaming {
            copies: self.renamed_copies,
            receptacles: self.renamed_receptacles,
            classes: self.renamed_classes,
        }
    }

    /// Reads a JSON config file; fields it does not set keep their defaults.
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::from_json_str(&text, &path.display().to_string())
    }

    /// Parses a JSON config; fields it does not set keep their defaults. Errors name `origin` (a file name), the
    /// line and the field.
    pub fn from_json_str(text: &str, origin: &str) -> Result<Self, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let inner = e.inner();
            format!("{origin}: line {}, field `{}`: {inner}", inner.line(), e.path())
        })
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<(), String> {
        let t = &self.training;
        if self.train_games == 0 || self.k == 0 || self.critic_games == 0 || self.eval_batch_size == 0 {
            return Err("train_games, k, critic_games and eval_batch_size must be positive".into());
        }
        if self.action_tokens == Some(0) {
            return Err("action_tokens must be positive".into());
        }
        if self.pair_games == Some(0) {
            return Err("pair_games must be positive (or absent for every training game)".into());
        }
        if self.eval_step_budget == Some(0) {
            return Err("eval_step_budget must be positive (or absent for the environment's budget)".into());
        }
        for (name, lora) in [("base", &t.base.lora), ("il", &t.il.lora), ("act", &t.act.lora), ("rl", &t.rl.lora)] {
            if let Some(lora) = lora {
                lora.validate(true).map_err(|e| format!("training.{name}.lora: {e}"))?;
            }
        }
        if let Some(temperature) = self.eval_temperature
            && !(temperature.is_finite() && temperature > 0.0)
        {
            return Err(format!("eval_temperature must be > 0 (or absent for greedy), got {temperature}"));
        }
        if let Some(retry) = &self.eval_rejected_retry {
            retry.validate().map_err(|e| format!("eval_rejected_retry: {e}"))?;
        }
        if !(0.0..=1.0).contains(&t.base_hint_fraction) {
            return Err(format!("training.base_hint_fraction must be in [0, 1], got {}", t.base_hint_fraction));
        }
        for (name, fraction) in [("base", t.base_single_turn_fraction), ("il", t.il_single_turn_fraction)] {
            if !(0.0..=1.0).contains(&fraction) {
                return Err(format!("training.{name}_single_turn_fraction must be in [0, 1], got {fraction}"));
            }
        }
        if let Some(dagger) = &self.il_dagger
            && (dagger.games == 0 || !(0.0..=1.0).contains(&dagger.expert_prob))
        {
            return Err(format!(
                "il_dagger needs games > 0 and expert_prob in [0, 1], got {} and {}",
                dagger.games, dagger.expert_prob
            ));
        }
        if let Some(dagger) = &self.il_dagger
            && (dagger.rounds == 0 || dagger.rounds > t.il.steps)
        {
            return Err(format!(
                "il_dagger.rounds must be between 1 and training.il.steps ({}), got {}",
                t.il.steps, dagger.rounds
            ));
        }
        if !(0.0..1.0).contains(&self.il_noise) {
            return Err(format!("il_noise must be in [0, 1), got {}", self.il_noise));
        }
        if self.renamed_receptacles && self.renamed_copies == 0 {
            return Err("renamed_receptacles renames the renamed copies: set renamed_copies > 0 as well".into());
        }
        if self.renamed_classes && self.renamed_copies < 2 {
            return Err(
                "renamed_classes swaps classes in the renamed copies after the first: set renamed_copies > 1".into()
            );
        }
        if self.heldout_points > 0 && self.heldout_items == 0 {
            return Err("heldout_items must be positive when heldout_points is".into());
        }
        if self.eval_episodes == Some(0) {
            return Err("eval_episodes must be positive (or absent for the whole split)".into());
        }
        if let Some(iwm) = &t.iwm
            && (iwm.games == 0 || iwm.alternatives_per_state == 0)
        {
            return Err("training.iwm: games and alternatives_per_state must be positive".into());
        }
        if let Some(sr) = &t.sr
            && (sr.games == 0
                || sr.alternatives_per_state == 0
                || sr.max_rationale_tokens == 0
                || !sr.temperature.is_finite()
                || sr.temperature < 0.0)
        {
            return Err(
                "training.sr: games, alternatives_per_state and max_rationale_tokens must be positive, temperature \
                 finite and not negative"
                    .into(),
            );
        }
        let iwm_stage = t.iwm.as_ref().map(|iwm| ("iwm.stage", &iwm.stage));
        let sr_stage = t.sr.as_ref().map(|sr| ("sr.stage", &sr.stage));
        for (name, stage) in [("base", &t.base), ("il", &t.il)].into_iter().chain(iwm_stage).chain(sr_stage) {
            if stage.steps == 0 || stage.batch_size == 0 || !stage.lr.is_finite() || stage.lr <= 0.0 {
                return Err(format!("training.{name}: steps, batch_size and lr must be positive"));
            }
        }
        for (name, stage) in [("act", &t.act), ("rl", &t.rl)] {
            if stage.steps == 0
                || stage.prompts_per_step == 0
                || stage.group_size < 2
                || !stage.lr.is_finite()
                || stage.lr <= 0.0
                || !(stage.kl_coef.is_finite() && stage.kl_coef >= 0.0)
            {
                return Err(format!(
                    "training.{name}: steps, prompts_per_step and lr must be positive, group_size at least 2 and kl_coef \
                     finite and non-negative"
                ));
            }
        }
        if let Some(online) = &t.online {
            online.validate()?;
        }
        if let ModelSource::Preset { vocab_size, .. } = &t.model
            && *vocab_size < 300
        {
            return Err("training.model.vocab_size must be at least 300 (byte alphabet and special tokens)".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_json_keeps_defaults_and_bad_fields_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, r#"{"seed": 3, "training": {"act": {"steps": 5}}}"#).unwrap();
        let c = ExperimentConfig::from_json_file(&path).unwrap();
        assert_eq!((c.seed, c.training.act.steps), (3, 5));
        assert_eq!(c.training.il, TrainingConfig::default().il);
        std::fs::write(&path, "{\"seed\": 3,\n \"training\": {\"act\": {\"stepz\": 5}}}").unwrap();
        let err = ExperimentConfig::from_json_file(&path).unwrap_err();
        assert!(err.contains("c.json: line 2") && err.contains("training.act"), "{err}");
        let bad = ExperimentConfig { k: 0, ..ExperimentConfig::default() };
        assert!(bad.validate().is_err());
        ExperimentConfig::default().validate().unwrap();
        // Receptacles are renamed in the renamed copies only.
        let receptacles_alone = ExperimentConfig { renamed_receptacles: true, ..ExperimentConfig::default() };
        assert!(receptacles_alone.validate().unwrap_err().contains("renamed_copies"));
        ExperimentConfig { renamed_copies: 2, ..receptacles_alone }.validate().unwrap();
        // Classes are swapped in the copies after the first.
        let classes_one_copy =
            ExperimentConfig { renamed_classes: true, renamed_copies: 1, ..ExperimentConfig::default() };
        assert!(classes_one_copy.validate().unwrap_err().contains("renamed_copies > 1"));
        ExperimentConfig { renamed_copies: 3, ..classes_one_copy }.validate().unwrap();
        // New settings left at their defaults do not appear in a saved config, so earlier run directories resume.
        let saved = serde_json::to_string(&ExperimentConfig::default()).unwrap();
        for field in [
            "renamed_receptacles",
            "renamed_classes",
            "base_comparisons",
            "base_answers",
            "il_dagger",
            "memory_line",
            "iwm",
            "\"sr\"",
            "game_dir",
        ] {
            assert!(!saved.contains(field), "{field} in {saved}");
        }
        assert!(!serde_json::to_string(&GrpoStageConfig::default()).unwrap().contains("schedule"));
        std::fs::write(
            &path,
            r#"{"training": {"act": {"schedule": "cosine"}, "base_comparisons": "expert_candidate"}}"#,
        )
        .unwrap();
        let c = ExperimentConfig::from_json_file(&path).unwrap();
        assert_eq!(c.training.act.schedule, ScheduleKind::Cosine);
        assert_eq!(c.training.base_comparisons, BaseComparisons::ExpertCandidate);
        std::fs::write(&path, r#"{"il_dagger": {"games": 30}}"#).unwrap();
        let c = ExperimentConfig::from_json_file(&path).unwrap();
        assert_eq!(c.il_dagger, Some(DaggerConfig { games: 30, ..DaggerConfig::default() }));
        c.validate().unwrap();
        assert!(!serde_json::to_string(&c).unwrap().contains("rounds"), "one round is not written");
        let never_expert = ExperimentConfig {
            il_dagger: Some(DaggerConfig { expert_prob: 1.5, ..DaggerConfig::default() }),
            ..c.clone()
        };
        assert!(never_expert.validate().unwrap_err().contains("il_dagger"));
        std::fs::write(
            &path,
            r#"{"il_dagger": {"rounds": 2}, "training": {"base_comparisons": "thought_first", "base_answers": "action"}}"#,
        )
        .unwrap();
        let two = ExperimentConfig::from_json_file(&path).unwrap();
        assert_eq!(two.training.base_answers, ComparisonAnswers::Action);
        assert_eq!(two.il_dagger.as_ref().map(|d| d.rounds), Some(2));
        assert_eq!(two.training.base_comparisons, BaseComparisons::ThoughtFirst);
        two.validate().unwrap();
        for rounds in [0, two.training.il.steps + 1] {
            let bad =
                ExperimentConfig { il_dagger: Some(DaggerConfig { rounds, ..DaggerConfig::default() }), ..c.clone() };
            assert!(bad.validate().unwrap_err().contains("rounds"), "{rounds} rounds");
        }
        std::fs::write(&path, r#"{"training": {"iwm": {"games": 50, "stage": {"steps": 20}}}}"#).unwrap();
        let iwm = ExperimentConfig::from_json_file(&path).unwrap();
        let world_model = iwm.training.iwm.clone().unwrap();
        assert_eq!((world_model.games, world_model.stage.steps, world_model.stage.batch_size), (50, 20, 16));
        assert!(world_model.keep_inadmissible && world_model.include_expert);
        iwm.validate().unwrap();
        let mut bad = iwm.clone();
        bad.training.iwm.as_mut().unwrap().stage.lr = 0.0;
        assert!(bad.validate().unwrap_err().contains("iwm.stage"));
        bad.training.iwm.as_mut().unwrap().games = 0;
        assert!(bad.validate().unwrap_err().contains("training.iwm"));
        std::fs::write(&path, r#"{"training": {"sr": {"games": 40, "stage": {"steps": 10}}}}"#).unwrap();
        let sr = ExperimentConfig::from_json_file(&path).unwrap();
        let reflection = sr.training.sr.clone().unwrap();
        assert_eq!((reflection.games, reflection.stage.steps, reflection.max_rationale_tokens), (40, 10, 48));
        assert!(!reflection.keep_inadmissible && !reflection.fallback);
        sr.validate().unwrap();
        let mut bad = sr.clone();
        bad.training.sr.as_mut().unwrap().stage.batch_size = 0;
        assert!(bad.validate().unwrap_err().contains("sr.stage"));
        bad.training.sr.as_mut().unwrap().temperature = f32::NAN;
        assert!(bad.validate().unwrap_err().contains("training.sr"));
    }

    #[test]
    fn expert_base_data_uses_tasks_after_the_training_games() {
        let mut c = ExperimentConfig { train_games: 40, ..ExperimentConfig::default() };
        assert_eq!(c.train_tasks(), 40);
        c.training.base_data = BaseData::Expert;
        c.training.base_episodes = 25;
        assert_eq!(c.train_tasks(), 65);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, r#"{"training": {"base_data": "expert"}}"#).unwrap();
        assert_eq!(ExperimentConfig::from_json_file(&path).unwrap().training.base_data, BaseData::Expert);
        std::fs::write(&path, r#"{"training": {"base_data": "expert_episodes"}}"#).unwrap();
        let episodes = ExperimentConfig::from_json_file(&path).unwrap();
        assert_eq!((episodes.training.base_data, episodes.train_tasks()), (BaseData::ExpertEpisodes, 200));
        std::fs::write(&path, r#"{"training": {"base_data": "oracle"}}"#).unwrap();
        assert!(ExperimentConfig::from_json_file(&path).unwrap_err().contains("training.base_data"));
    }

    #[test]
    fn online_settings_are_checked_by_name() {
        let mut config = ExperimentConfig::default();
        config.training.online = Some(OnlineRlConfig { group_size: 0, ..OnlineRlConfig::default() });
        assert!(config.validate().unwrap_err().contains("training.online.group_size"));
        config.training.online = Some(OnlineRlConfig { temperature: 0.0, ..OnlineRlConfig::default() });
        assert!(config.validate().unwrap_err().contains("training.online.temperature"));
        config.training.online = Some(OnlineRlConfig::default());
        assert!(config.validate().is_ok());
        config.eval_temperature = Some(0.0);
        assert!(config.validate().unwrap_err().contains("eval_temperature"));
        config.eval_temperature = Some(0.7);
        config.eval_rejected_retry = Some(act_eval::RejectedRetry { attempts: 0, ..Default::default() });
        assert!(config.validate().unwrap_err().contains("eval_rejected_retry"));
        config.eval_rejected_retry = Some(act_eval::RejectedRetry::default());
        assert!(config.validate().is_ok());
        config.training.il.lora = Some(act_model::lora::LoraConfig::new(0, 8.0));
        assert!(config.validate().unwrap_err().contains("training.il.lora"));
        // Without the block the config serialises as before, so existing run directories still match.
        assert!(!serde_json::to_string(&ExperimentConfig::default()).unwrap().contains("online"));
    }

    #[test]
    fn every_shipped_config_reads_and_validates() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/configs");
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let config = ExperimentConfig::from_json_file(&path).unwrap();
                config.validate().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                count += 1;
            }
        }
        assert!(count >= 6, "{count} configs in {}", dir.display());
    }
}
