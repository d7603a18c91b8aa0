//! Prompt builders: the action prompt (with or without reasoning) and the comparison prompt of ACT.

use serde::{Deserialize, Serialize};

use crate::error::TemplateError;
use crate::pair::ActionPair;
use crate::policy::{Query, QueryKind};
use crate::reward::RewardTarget;
use crate::sample::{GrpoSample, SftSample};
use crate::scripted::action_completion;
use crate::template::Template;
use crate::trajectory::{Action, AgentState, Trajectory};

/// The prompt templates. [`Default`] gives prompts in the style of verl-agent's (which the ACT paper builds on).
///
/// Templates are data ([`PromptTemplates`], serde): a user can load their own from JSON. Placeholders:
///
/// | template | placeholders |
/// |---|---|
/// | `act_reasoning`, `act_plain` | `{environment}` `{task}` `{history}` `{observation}` `{admissible_actions}` `{step}` |
/// | `compare` | the above and `{action_1}` `{action_2}` (both required) |
/// | `predict` | the above and `{action}` (required): what follows the action (world modelling, Early Experience) |
/// | `reflect` | the above and `{action}` `{outcome}` `{alternative}` `{alternative_outcome}` (all required): why the expert's action beats another, given what followed each (self-reflection, Early Experience) |
/// | `history` | `{step}` `{shown}` `{entries}` (used when there is history; otherwise `{history}` is empty) |
/// | `history_entry` | `{index}` `{observation}` `{action}` `{task}` |
/// | `admissible` | `{actions}` (used when admissible actions are shown and known) |
/// | `hint` | `{entries}` (a guided rollout's reference actions, placed before the action prompt) |
/// | `hint_entry` | `{index}` `{action}` |
/// | `critique` | `{environment}` `{task}` `{score}` `{trajectory}` (required): a critic's view of a failed episode (ICRL), answered with tips in `<critic>` |
/// | `critique_step` | `{index}` `{observation}` `{action}`: one step of that episode, its observation cut at [`PromptConfig::critique_observation_chars`] |
/// | `tips` | `{tips}` (required): a critic's tips, placed before the action prompt of the next round |
/// | `reflector` | `{environment}` `{system_prompt}` `{episodes}` (required): a reflector's view of an actor's episodes under its current system prompt (ICT), answered with `ANALYSIS:` then `IMPROVED PROMPT:` ([`crate::parse_reflection`]) |
/// | `reflector_episode` | `{index}` `{task}` `{result}` (`success` or `failure`) `{score}` `{steps}` (each step as `critique_step` renders it): one episode of that view |
///
/// ```
/// use act_core::*;
/// let prompter = Prompter::new(PromptConfig::default().with_environment("the ALFRED Embodied Environment")).unwrap();
/// let state = AgentState {
///     task_id: "t".into(), task: "put a hot apple in countertop.".into(), step_index: 0, history: vec![],
///     observation: "You are in the middle of a room.".into(),
///     admissible_actions: vec!["go to fridge 1".into(), "look".into()],
/// };
/// let prompt = prompter.act(&state);
/// assert!(prompt.contains("Your task is to: put a hot apple in countertop."));
/// assert!(prompt.contains("'go to fridge 1'"));
/// assert!(prompt.contains("<think>"));
/// let compare = prompter.compare(&state, [&"look".into(), &"go to fridge 1".into()]);
/// assert!(compare.contains("Action 1: look\nAction 2: go to fridge 1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PromptTemplates {
    /// The action prompt asking for reasoning in `<think>` and the action in `<action>`.
    pub act_reasoning: String,
    /// The action prompt asking for the action alone.
    pub act_plain: String,
    /// The comparison prompt (ACT): reasoning, then `<answer>1</answer>` or `<answer>2</answer>`.
    pub compare: String,
    /// The world-modelling prompt (Early Experience's implicit world modelling): the state and an action, asking
    /// what the environment answers; the completion is the next observation.
    pub predict: String,
    /// The reflection prompt (Early Experience's self-reflection): the state, the expert's action and what
    /// followed it, another action and what followed that; asking why the expert's is better. The completion is a
    /// rationale, which then precedes the expert's action in a training sample.
    pub reflect: String,
    /// The history section.
    pub history: String,
    /// One history entry.
    pub history_entry: String,
    /// What stands between two history entries.
    pub history_separator: String,
    /// The admissible-actions section.
    pub admissible: String,
    /// The hint of a guided rollout (ActGuide-RL): the first reference actions of the task, shown before the
    /// action prompt ([`Prompter::hint`]). At the start, so that a multi-turn prompt still extends the previous
    /// turn's, with the hint as with the plain prompt.
    pub hint: String,
    /// One reference action of the hint.
    pub hint_entry: String,
    /// The critic's prompt (ICRL): the task and a failed episode's steps, asking for short tips inside
    /// `<critic>` `</critic>` ([`Prompter::critique`], [`crate::parse_critique`]).
    pub critique: String,
    /// One step of the failed episode in the critic's prompt.
    pub critique_step: String,
    /// The critic's tips as the solver sees them in its next round, before the action prompt (at the start, as
    /// the hint, so a multi-turn prompt still extends the previous turn's).
    pub tips: String,
    /// The reflector's prompt (ICT): the actor's current system prompt and its episodes, asking for an analysis
    /// and an improved system prompt ([`Prompter::reflector`], [`crate::parse_reflection`]).
    pub reflector: String,
    /// One episode in the reflector's prompt.
    pub reflector_episode: String,
}

impl Default for PromptTemplates {
    fn default() -> Self {
        const HEAD: &str = "You are an expert agent operating in {environment}. Your task is to: {task}\n{history}\
Your current observation is: {observation}\n{admissible_actions}";
        PromptTemplates {
            act_reasoning: format!(
                "{HEAD}Now it's your turn to take an action. You should first reason step-by-step about the current \
situation. This reasoning process MUST be enclosed within <think> </think> tags. Once you've finished your \
reasoning, you should choose an action and present it within <action> </action> tags."
            ),
            act_plain: format!(
                "{HEAD}Now it's your turn to take an action. Present the action within <action> </action> tags, \
with nothing else."
            ),
            compare: format!(
                "{HEAD}Two candidate actions are proposed for this step:\nAction 1: {{action_1}}\nAction 2: \
{{action_2}}\nWhich action is better for completing the task? First reason step-by-step within <think> </think> \
tags, then give the number of the better action within <answer> </answer> tags, for example <answer>1</answer>."
            ),
            predict: format!(
                "{HEAD}Suppose you take the action: {{action}}\nWhat will you observe next? Answer with the \
observation alone."
            ),
            reflect: format!(
                "{HEAD}An expert took the action: {{action}}\nand then observed: {{outcome}}\nAnother possible \
action was: {{alternative}}\nwhich would have led to: {{alternative_outcome}}\nExplain briefly, from what each action \
led to and what the task needs, why the expert's action is the better one. Answer with the explanation alone."
            ),
            history: "Prior to this step, you have already taken {step} step(s). Below are the most recent {shown} \
observations and the corresponding actions you took: {entries}\n"
                .to_owned(),
            history_entry: "[Observation {index}: '{observation}', Action {index}: '{action}']".to_owned(),
            history_separator: " ".to_owned(),
            admissible: "Your admissible actions of the current situation are: [{actions}].\n".to_owned(),
            // ActGuide-RL's wording (AMAP-ML/ActGuide-RL), numbered actions one per line.
            hint: "Reference action trajectory hint:\n{entries}\n".to_owned(),
            hint_entry: "{index}. {action}\n".to_owned(),
            // In the spirit of ICRL's critic (brick-pid/ICRL, templates/critic_system.j2): diagnose the failure,
            // give reusable tips for a fresh retry, no actions.
            critique: "You are the critic of an agent operating in {environment}. The agent failed its task: {task}\n\
Final score: {score}. Its steps:\n{trajectory}Identify the mistake that cost the most and write a few short, \
reusable tips that would help a fresh attempt from the initial observation succeed. Do not write actions. Put the \
tips within <critic> </critic> tags, one per line: Tip 1: ..., Tip 2: ..."
                .to_owned(),
            critique_step: "Observation {index}: {observation}\nAction {index}: {action}\n".to_owned(),
            tips: "Tips from a previous attempt at this task:\n{tips}\n".to_owned(),
            // MetaGym's reflector (ICT): what the actor was told, what it did, then a section for the analysis and
            // one for the new system prompt, which is kept as it was when the second is missing.
            reflector: "You write the instructions of an agent operating in {environment}. Its current \
instructions:\n{system_prompt}\nIts episodes under them:\n{episodes}Analyse what made it fail or succeed, then write \
improved instructions that will help it on new tasks of this environment. Answer in two sections: ANALYSIS: your \
analysis, then IMPROVED PROMPT: the new instructions alone."
                .to_owned(),
            reflector_episode: "Episode {index} ({result}, total reward {score}). Task: {task}\n{steps}".to_owned(),
        }
    }
}

impl PromptTemplates {
    /// Reads templates from a JSON file (missing fields keep their defaults).
    pub fn from_json_file(path: impl AsRef<std::path::Path>) -> Result<Self, crate::DatasetError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|source| crate::DatasetError::Io { path: path.to_owned(), source })?;
        crate::jsonl::parse_record(&text, path, 1)
    }
}

/// How prompts are built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PromptConfig {
    /// How the environment is named in the prompt ("the ALFRED Embodied Environment").
    pub environment: String,
    /// How many recent (observation, action) pairs to show.
    pub history_len: usize,
    /// How the shown history moves once an episode is longer than `history_len`: by this many steps at a time.
    /// With 1 (the default) every prompt shows the last `history_len` pairs; with `s > 1` the oldest `s` pairs
    /// drop at once, so between two drops each prompt extends the previous one (a policy that reuses the keys and
    /// values of its previous prompt re-encodes the history once every `s` steps instead of every step). The
    /// prompt then shows between `history_len - s + 1` and `history_len` pairs.
    pub history_stride: usize,
    /// Whether to list the admissible actions (when the state has them).
    pub show_admissible: bool,
    /// Whether action prompts ask for reasoning first.
    pub reasoning: bool,
    /// The most characters of each observation the critic's prompt shows (ICRL's reference cuts at 800).
    pub critique_observation_chars: usize,
    /// The templates.
    pub templates: PromptTemplates,
}

impl Default for PromptConfig {
    fn default() -> Self {
        PromptConfig {
            environment: "a text-based environment".to_owned(),
            history_len: 2,
            history_stride: 1,
            show_admissible: true,
            reasoning: true,
            critique_observation_chars: 800,
            templates: PromptTemplates::default(),
        }
    }
}

impl PromptConfig {
    /// Sets the environment's name in prompts.
    #[must_use]
    pub fn with_environment(mut self, environment: impl Into<String>) -> Self {
        self.environment = environment.into();
        self
    }

    /// Sets how many history pairs are shown.
    #[must_use]
    pub fn with_history_len(mut self, history_len: usize) -> Self {
        self.history_len = history_len;
        self
    }

    /// Sets how many steps the shown history moves at a time once it is full (see
    /// [`PromptConfig::history_stride`]; 0 counts as 1).
    #[must_use]
    pub fn with_history_stride(mut self, stride: usize) -> Self {
        self.history_stride = stride;
        self
    }

    /// How many of the `steps` earlier (observation, action) pairs a prompt shows, by `history_len` and
    /// `history_stride`.
    ///
    /// ```
    /// let config = act_core::PromptConfig::default().with_history_len(4).with_history_stride(2);
    /// let shown: Vec<usize> = (0..9).map(|steps| config.history_shown(steps)).collect();
    /// assert_eq!(shown, [0, 1, 2, 3, 4, 3, 4, 3, 4]);
    /// ```
    pub fn history_shown(&self, steps: usize) -> usize {
        if steps <= self.history_len {
            return steps;
        }
        let stride = self.history_stride.clamp(1, self.history_len.max(1));
        let dropped = (steps - self.history_len).div_ceil(stride) * stride;
        steps - dropped
    }

    /// Sets whether admissible actions are listed.
    #[must_use]
    pub fn with_show_admissible(mut self, show: bool) -> Self {
        self.show_admissible = show;
        self
    }

    /// Sets whether action prompts ask for reasoning.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: bool) -> Self {
        self.reasoning = reasoning;
        self
    }

    /// Sets how many characters of each observation the critic's prompt shows.
    #[must_use]
    pub fn with_critique_observation_chars(mut self, chars: usize) -> Self {
        self.critique_observation_chars = chars;
        self
    }

    /// Replaces the templates.
    #[must_use]
    pub fn with_templates(mut self, templates: PromptTemplates) -> Self {
        self.templates = templates;
        self
    }
}

const STATE_FIELDS: [&str; 6] = ["environment", "task", "history", "observation", "admissible_actions", "step"];

/// Renders prompts from [`AgentState`]s with validated templates.
#[derive(Debug, Clone)]
pub struct Prompter {
    config: PromptConfig,
    act_reasoning: Template,
    act_plain: Template,
    compare: Template,
    predict: Template,
    reflect: Template,
    history: Template,
    history_entry: Template,
    admissible: Template,
    hint: Template,
    hint_entry: Template,
    critique: Template,
    critique_step: Template,
    tips: Template,
    reflector: Template,
    reflector_episode: Template,
}

impl Prompter {
    /// Validates the templates of `config`.
    pub fn new(config: PromptConfig) -> Result<Self, TemplateError> {
        let t = &config.templates;
        let compare_fields: Vec<&str> = STATE_FIELDS.iter().copied().chain(["action_1", "action_2"]).collect();
        let predict_fields: Vec<&str> = STATE_FIELDS.iter().copied().chain(["action"]).collect();
        const REFLECT_FIELDS: [&str; 4] = ["action", "outcome", "alternative", "alternative_outcome"];
        let reflect_fields: Vec<&str> = STATE_FIELDS.iter().copied().chain(REFLECT_FIELDS).collect();
        Ok(Prompter {
            act_reasoning: Template::parse("act_reasoning", &t.act_reasoning, &STATE_FIELDS, &["observation"])?,
            act_plain: Template::parse("act_plain", &t.act_plain, &STATE_FIELDS, &["observation"])?,
            compare: Template::parse("compare", &t.compare, &compare_fields, &["action_1", "action_2"])?,
            predict: Template::parse("predict", &t.predict, &predict_fields, &["action"])?,
            reflect: Template::parse("reflect", &t.reflect, &reflect_fields, &REFLECT_FIELDS)?,
            history: Template::parse("history", &t.history, &["step", "shown", "entries"], &["entries"])?,
            history_entry: Template::parse(
                "history_entry",
                &t.history_entry,
                &["index", "observation", "action", "task"],
                &[],
            )?,
            admissible: Template::parse("admissible", &t.admissible, &["actions"], &["actions"])?,
            hint: Template::parse("hint", &t.hint, &["entries"], &["entries"])?,
            hint_entry: Template::parse("hint_entry", &t.hint_entry, &["index", "action"], &["action"])?,
            critique: Template::parse(
                "critique",
                &t.critique,
                &["environment", "task", "score", "trajectory"],
                &["trajectory"],
            )?,
            critique_step: Template::parse(
                "critique_step",
                &t.critique_step,
                &["index", "observation", "action"],
                &[],
            )?,
            tips: Template::parse("tips", &t.tips, &["tips"], &["tips"])?,
            reflector: Template::parse(
                "reflector",
                &t.reflector,
                &["environment", "system_prompt", "episodes"],
                &["episodes"],
            )?,
            reflector_episode: Template::parse(
                "reflector_episode",
                &t.reflector_episode,
                &["index", "task", "result", "score", "steps"],
                &[],
            )?,
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &PromptConfig {
        &self.config
    }

    /// The action prompt for `state` (reasoning or not, as configured).
    pub fn act(&self, state: &AgentState) -> String {
        let template = if self.config.reasoning { &self.act_reasoning } else { &self.act_plain };
        template.render(|name| self.state_field(state, name))
    }

    /// The comparison prompt for `state` with `actions` presented as action 1 and action 2.
    pub fn compare(&self, state: &AgentState, actions: [&Action; 2]) -> String {
        self.compare.render(|name| match name {
            "action_1" => actions[0].to_string(),
            "action_2" => actions[1].to_string(),
            other => self.state_field(state, other),
        })
    }

    /// The world-modelling prompt for taking `action` in `state`.
    pub fn predict(&self, state: &AgentState, action: &Action) -> String {
        self.predict.render(|name| if name == "action" { action.to_string() } else { self.state_field(state, name) })
    }

    /// An implicit-world-modelling sample (Early Experience): the [`Prompter::predict`] prompt of `action` in
    /// `state`, and the observation that followed as the completion.
    pub fn world_model_sample(&self, state: &AgentState, action: &Action, next: &str) -> SftSample {
        SftSample {
            id: format!("{}#{}:{}", state.task_id, state.step_index, action),
            prompt: self.predict(state, action),
            completion: next.to_owned(),
        }
    }

    /// The reflection prompt (Early Experience's self-reflection) of `state`: the expert took `expert`, which led
    /// to `outcome`; `alternative` would have led to `alternative_outcome`.
    pub fn reflect(
        &self,
        state: &AgentState,
        expert: &Action,
        outcome: &str,
        alternative: &Action,
        alternative_outcome: &str,
    ) -> String {
        self.reflect.render(|name| match name {
            "action" => expert.to_string(),
            "outcome" => outcome.to_owned(),
            "alternative" => alternative.to_string(),
            "alternative_outcome" => alternative_outcome.to_owned(),
            other => self.state_field(state, other),
        })
    }

    /// The hint that shows `actions` (a guided rollout's first reference actions, numbered from 1), to be put
    /// before an action prompt; empty for no actions, so a hint of length 0 leaves the prompt as it is.
    pub fn hint(&self, actions: &[Action]) -> String {
        if actions.is_empty() {
            return String::new();
        }
        let entries: String = actions
            .iter()
            .enumerate()
            .map(|(i, action)| {
                self.hint_entry.render(|name| if name == "index" { (i + 1).to_string() } else { action.to_string() })
            })
            .collect();
        self.hint.render(|_| entries.clone())
    }

    /// Every step of `episode` as `critique_step` renders it, numbered from 1, observations cut at
    /// [`PromptConfig::critique_observation_chars`] characters (the critic's and the reflector's view).
    fn episode_steps(&self, episode: &Trajectory) -> String {
        let limit = self.config.critique_observation_chars;
        episode
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                self.critique_step.render(|name| match name {
                    "index" => (i + 1).to_string(),
                    "observation" => cut_chars(step.observation.as_str(), limit).to_owned(),
                    _ => step.action.to_string(),
                })
            })
            .collect()
    }

    /// The critic's prompt for a failed episode (ICRL): its task and final score, and every step's observation
    /// (cut at [`PromptConfig::critique_observation_chars`] characters) and action, numbered from 1.
    pub fn critique(&self, episode: &Trajectory) -> String {
        let steps = self.episode_steps(episode);
        self.critique.render(|name| match name {
            "environment" => self.config.environment.clone(),
            "task" => episode.task.clone(),
            "score" => episode.outcome.score.to_string(),
            _ => steps.clone(),
        })
    }

    /// The reflector's prompt (ICT): the actor's `system_prompt` (as written, possibly empty) and its `episodes`,
    /// numbered from 1, each with its result, total reward, task and steps (as the critic sees them:
    /// `critique_step`, observations cut at [`PromptConfig::critique_observation_chars`]).
    ///
    /// ```
    /// use act_core::*;
    /// let prompter = Prompter::new(PromptConfig::default()).unwrap();
    /// let episode = Trajectory {
    ///     env: "alfworld".into(), task_id: "t".into(), task_type: "pick".into(), split: Split::Train,
    ///     task: "put a mug in desk.".into(), seed: 0,
    ///     steps: vec![Step { observation: "You see a mug 1.".into(), action: "take mug 1 from shelf 1".into(),
    ///                        reward: 0.0, admissible_actions: vec![] }],
    ///     outcome: Outcome { won: false, score: 0.0, steps_used: 1 },
    /// };
    /// let prompt = prompter.reflector("Search shelves first.", &[episode]);
    /// assert!(prompt.contains("Search shelves first."));
    /// assert!(prompt.contains("Episode 1 (failure, total reward 0). Task: put a mug in desk."));
    /// assert!(prompt.contains("Action 1: take mug 1 from shelf 1"));
    /// assert!(prompt.ends_with("IMPROVED PROMPT: the new instructions alone."));
    /// ```
    pub fn reflector(&self, system_prompt: &str, episodes: &[Trajectory]) -> String {
        let rendered: String = episodes
            .iter()
            .enumerate()
            .map(|(e, episode)| {
                let steps = self.episode_steps(episode);
                self.reflector_episode.render(|name| match name {
                    "index" => (e + 1).to_string(),
                    "task" => episode.task.clone(),
                    "result" => if episode.outcome.won { "success" } else { "failure" }.to_owned(),
                    "score" => episode.outcome.score.to_string(),
                    _ => steps.clone(),
                })
            })
            .collect();
        self.reflector.render(|name| match name {
            "environment" => self.config.environment.clone(),
            "system_prompt" => system_prompt.to_owned(),
            _ => rendered.clone(),
        })
    }

    /// The tips section that shows a critic's `tips` to the solver, to be put before an action prompt; empty for
    /// empty tips, so a round without tips sees the plain prompt.
    pub fn tips(&self, tips: &str) -> String {
        let tips = tips.trim();
        if tips.is_empty() {
            return String::new();
        }
        self.tips.render(|_| tips.to_owned())
    }

    /// The action prompt as a policy query.
    pub fn act_query(&self, state: &AgentState) -> Query {
        Query { prompt: self.act(state), kind: QueryKind::Act(state.clone()) }
    }

    /// The comparison prompt of `pair`, in its presented order, as a policy query.
    pub fn pair_query(&self, pair: &ActionPair) -> Query {
        let [a, b] = pair.presented();
        Query {
            prompt: self.compare(&pair.state, [a, b]),
            kind: QueryKind::Compare { state: pair.state.clone(), actions: [a.clone(), b.clone()] },
        }
    }

    /// An ACT training sample: the comparison prompt of `pair`, scored by which action the answer picks.
    pub fn comparison_sample(&self, pair: &ActionPair) -> GrpoSample {
        GrpoSample {
            id: format!("{}#{}", pair.provenance.task_id, pair.provenance.step_index),
            prompt: self.compare(&pair.state, pair.presented()),
            target: pair.reward_target(),
        }
    }

    /// An RL sample on an expert state: the action prompt, scored against the expert's action.
    pub fn next_action_sample(&self, state: &AgentState, expert: &Action) -> GrpoSample {
        GrpoSample {
            id: format!("{}#{}", state.task_id, state.step_index),
            prompt: self.act(state),
            target: RewardTarget::NextAction { expert: expert.clone(), admissible: state.admissible_actions.clone() },
        }
    }

    /// An imitation-learning sample: the action prompt and the expert's action as the completion, after
    /// `reasoning` in a think block when given.
    pub fn sft_sample(&self, state: &AgentState, expert: &Action, reasoning: Option<&str>) -> SftSample {
        let action = action_completion(expert.as_str());
        let completion = match reasoning {
            Some(r) => format!("<think>{r}</think>\n{action}"),
            None => action,
        };
        SftSample { id: format!("{}#{}", state.task_id, state.step_index), prompt: self.act(state), completion }
    }

    fn state_field(&self, state: &AgentState, name: &str) -> String {
        match name {
            "environment" => self.config.environment.clone(),
            "task" => state.task.clone(),
            "observation" => state.observation.to_string(),
            "step" => state.step_index.to_string(),
            "history" => self.history_section(state),
            "admissible_actions" => self.admissible_section(state),
            // Template::parse admits no other name.
            _ => String::new(),
        }
    }

    fn history_section(&self, state: &AgentState) -> String {
        // The steps taken so far: a state may carry only its last `history_len` pairs.
        let steps = state.step_index.max(state.history.len());
        let shown = state.history.len().min(self.config.history_shown(steps));
        if shown == 0 {
            return String::new();
        }
        let recent = &state.history[state.history.len() - shown..];
        let first_index = state.step_index.saturating_sub(shown) + 1;
        let entries: Vec<String> = recent
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                self.history_entry.render(|name| match name {
                    "index" => (first_index + i).to_string(),
                    "observation" => entry.observation.to_string(),
                    "task" => state.task.clone(),
                    _ => entry.action.to_string(),
                })
            })
            .collect();
        self.history.render(|name| match name {
            "step" => state.step_index.to_string(),
            "shown" => shown.to_string(),
            _ => entries.join(&self.config.templates.history_separator),
        })
    }

    fn admissible_section(&self, state: &AgentState) -> String {
        if !self.config.show_admissible || state.admissible_actions.is_empty() {
            return String::new();
        }
        let actions: Vec<String> = state.admissible_actions.iter().map(|a| format!("'{a}'")).collect();
        self.admissible.render(|_| actions.join(", "))
    }
}

/// The first `limit` characters of `text` (whole characters, never a split code point).
fn cut_chars(text: &str, limit: usize) -> &str {
    text.char_indices().nth(limit).map_or(text, |(end, _)| &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::HistoryEntry;

    fn state() -> AgentState {
        AgentState {
            task_id: "task-7".into(),
            task: "open the box.".into(),
            step_index: 3,
            history: vec![
                HistoryEntry { observation: "o0".into(), action: "a0".into() },
                HistoryEntry { observation: "o1".into(), action: "a1".into() },
                HistoryEntry { observation: "o2".into(), action: "a2".into() },
            ],
            observation: "You see a box.".into(),
            admissible_actions: vec!["open box 1".into(), "look".into()],
        }
    }

    #[test]
    fn a_hint_numbers_its_actions_and_is_empty_without_any() {
        let prompter = Prompter::new(PromptConfig::default()).unwrap();
        assert_eq!(prompter.hint(&[]), "");
        assert_eq!(
            prompter.hint(&["go to shelf 1".into(), "take mug 2 from shelf 1".into()]),
            "Reference action trajectory hint:\n1. go to shelf 1\n2. take mug 2 from shelf 1\n\n"
        );
        let templates =
            PromptTemplates { hint: "plan: {entries}|".into(), hint_entry: "{action};".into(), ..Default::default() };
        let custom = Prompter::new(PromptConfig::default().with_templates(templates)).unwrap();
        assert_eq!(custom.hint(&["look".into(), "wait".into()]), "plan: look;wait;|");
        let bad = PromptTemplates { hint: "no entries".into(), ..Default::default() };
        assert!(Prompter::new(PromptConfig::default().with_templates(bad)).is_err());
    }

    #[test]
    fn a_critique_shows_the_failed_episode_with_observations_cut() {
        use crate::trajectory::{Outcome, Split, Step, Trajectory};
        let step = |observation: &str, action: &str| Step {
            observation: observation.into(),
            admissible_actions: vec![],
            action: action.into(),
            reward: 0.0,
        };
        let episode = Trajectory {
            env: "alfworld".into(),
            task_id: "t".into(),
            task_type: "pick".into(),
            split: Split::Train,
            task: "put a mug in desk.".into(),
            seed: 0,
            // An observation of 7 characters, two of them outside ASCII: cut at 5 characters, not bytes.
            steps: vec![step("You are in a room.", "go to desk 1"), step("Désk 1é", "take mug 1 from desk 1")],
            outcome: Outcome { won: false, score: 0.0, steps_used: 2 },
        };
        let prompter =
            Prompter::new(PromptConfig::default().with_critique_observation_chars(5).with_environment("ALFWorld"))
                .unwrap();
        let prompt = prompter.critique(&episode);
        assert!(prompt.starts_with(
            "You are the critic of an agent operating in ALFWorld. The agent failed its task: \
                                    put a mug in desk.\nFinal score: 0. Its steps:\nObservation 1: You a\nAction 1: \
                                    go to desk 1\nObservation 2: Désk \nAction 2: take mug 1 from desk 1\n"
        ));
        assert!(prompt.ends_with("one per line: Tip 1: ..., Tip 2: ..."));
        // Tips go before the next round's prompt; none leave it as it is.
        assert_eq!(prompter.tips("  \n"), "");
        assert_eq!(
            prompter.tips(" Tip 1: look in the drawers. "),
            "Tips from a previous attempt at this task:\nTip 1: look in the drawers.\n"
        );
        // The templates are data, checked like the others.
        for bad in [
            PromptTemplates { critique: "no steps: {task}".into(), ..Default::default() },
            PromptTemplates { tips: "nothing".into(), ..Default::default() },
            PromptTemplates { critique_step: "{unknown}".into(), ..Default::default() },
            PromptTemplates { reflector: "no episodes: {system_prompt}".into(), ..Default::default() },
            PromptTemplates { reflector_episode: "{unknown}".into(), ..Default::default() },
        ] {
            assert!(Prompter::new(PromptConfig::default().with_templates(bad)).is_err());
        }

        // The reflector (ICT) sees the current system prompt and every episode, won or lost, observations cut alike.
        let won = Trajectory { outcome: Outcome { won: true, score: 1.0, steps_used: 2 }, ..episode.clone() };
        let reflector = prompter.reflector("Look in drawers.", &[episode, won]);
        assert!(reflector.starts_with(
            "You write the instructions of an agent operating in ALFWorld. Its current instructions:\nLook in \
             drawers.\nIts episodes under them:\nEpisode 1 (failure, total reward 0). Task: put a mug in desk.\n\
             Observation 1: You a\nAction 1: go to desk 1\n"
        ));
        assert!(reflector.contains("Episode 2 (success, total reward 1). Task: put a mug in desk.\nObservation 1:"));
        assert!(reflector.contains("IMPROVED PROMPT:"));
    }

    #[test]
    fn history_shows_the_most_recent_entries_numbered_by_step() {
        let prompter = Prompter::new(PromptConfig::default().with_history_len(2)).unwrap();
        let prompt = prompter.act(&state());
        assert!(prompt.contains("already taken 3 step(s)"), "{prompt}");
        assert!(prompt.contains("[Observation 2: 'o1', Action 2: 'a1'] [Observation 3: 'o2', Action 3: 'a2']"));
        assert!(!prompt.contains("'o0'"));
    }

    #[test]
    fn a_history_stride_drops_old_steps_in_blocks_so_prompts_extend_each_other() {
        let config = PromptConfig::default().with_reasoning(false).with_history_len(4).with_history_stride(2);
        let prompter = Prompter::new(config.clone()).unwrap();
        let history: Vec<HistoryEntry> = (0..8)
            .map(|i| HistoryEntry { observation: format!("o{i}").into(), action: format!("a{i}").into() })
            .collect();
        let prompt_at = |steps: usize| {
            let first = steps.saturating_sub(config.history_len);
            prompter.act(&AgentState { step_index: steps, history: history[first..steps].to_vec(), ..state() })
        };
        // Steps 5 and 6 show pairs 3.. (drop two at once), so the prompt at 6 continues the one at 5.
        let (five, six) = (prompt_at(5), prompt_at(6));
        assert!(five.contains("'o2'") && !five.contains("'o1'"), "{five}");
        assert!(six.contains("'o2'") && six.contains("'o5'"), "{six}");
        // Stride 1 keeps the sliding window: the last four pairs at step 5.
        let sliding = Prompter::new(config.clone().with_history_stride(1)).unwrap();
        let five_sliding = sliding.act(&AgentState { step_index: 5, history: history[1..5].to_vec(), ..state() });
        assert!(five_sliding.contains("'o1'") && five_sliding.contains("'o4'"), "{five_sliding}");
        for steps in 0..40 {
            let shown = config.history_shown(steps);
            assert!(shown <= 4 && (steps <= 4 || shown >= 3), "{steps} -> {shown}");
        }
    }

    #[test]
    fn plain_prompt_has_no_think_and_hides_actions_when_asked() {
        let prompter =
            Prompter::new(PromptConfig::default().with_reasoning(false).with_show_admissible(false)).unwrap();
        let prompt = prompter.act(&state());
        assert!(!prompt.contains("<think>"));
        assert!(!prompt.contains("admissible"));
        assert!(prompt.contains("<action>"));
    }

    #[test]
    fn custom_templates_are_validated_and_used() {
        let templates = PromptTemplates { act_reasoning: "T={task} O={observation}".into(), ..Default::default() };
        let prompter = Prompter::new(PromptConfig::default().with_templates(templates)).unwrap();
        assert_eq!(prompter.act(&state()), "T=open the box. O=You see a box.");

        // A history entry may restate the task (a conversation turn per step, the task in each).
        let templates = PromptTemplates {
            act_plain: "{history}{observation} ({task})".into(),
            history_entry: "{observation} ({task}) > {action}\n".into(),
            history_separator: String::new(),
            history: "{entries}".into(),
            ..Default::default()
        };
        let prompter =
            Prompter::new(PromptConfig::default().with_templates(templates).with_reasoning(false).with_history_len(2))
                .unwrap();
        assert_eq!(
            prompter.act(&state()),
            "o1 (open the box.) > a1\no2 (open the box.) > a2\nYou see a box. (open the box.)"
        );

        let bad = PromptTemplates { compare: "{action_1} only".into(), ..Default::default() };
        let err = Prompter::new(PromptConfig::default().with_templates(bad)).unwrap_err();
        assert!(err.to_string().contains("action_2"), "{err}");
    }

    #[test]
    fn world_model_samples_ask_what_follows_an_action_and_answer_with_the_observation() {
        let prompter = Prompter::new(PromptConfig::default().with_history_len(2)).unwrap();
        let sample = prompter.world_model_sample(&state(), &"open box 1".into(), "You open the box 1.");
        assert_eq!(sample.completion, "You open the box 1.");
        assert_eq!(sample.id, "task-7#3:open box 1");
        assert!(sample.prompt.contains("Suppose you take the action: open box 1\n"), "{}", sample.prompt);
        assert!(sample.prompt.contains("Your current observation is: You see a box."));
        assert!(sample.prompt.contains("[Observation 3: 'o2', Action 3: 'a2']"), "the history is the action prompt's");
        let custom = PromptTemplates { predict: "{observation} + {action} =".into(), ..Default::default() };
        let prompter = Prompter::new(PromptConfig::default().with_templates(custom)).unwrap();
        assert_eq!(prompter.predict(&state(), &"look".into()), "You see a box. + look =");
        let bad = PromptTemplates { predict: "{observation} =".into(), ..Default::default() };
        let err = Prompter::new(PromptConfig::default().with_templates(bad)).unwrap_err();
        assert!(err.to_string().contains("action"), "{err}");
    }

    #[test]
    fn reflection_prompts_show_both_actions_and_what_followed_each() {
        let prompter = Prompter::new(PromptConfig::default()).unwrap();
        let prompt = prompter.reflect(
            &state(),
            &"open box 1".into(),
            "You open the box 1.",
            &"go to shelf 9".into(),
            "Nothing happens.",
        );
        assert!(prompt.contains("Your current observation is: You see a box."), "{prompt}");
        assert!(
            prompt.contains("An expert took the action: open box 1\nand then observed: You open the box 1.\n"),
            "{prompt}"
        );
        assert!(
            prompt.contains("Another possible action was: go to shelf 9\nwhich would have led to: Nothing happens.\n"),
            "{prompt}"
        );
        let custom = PromptTemplates {
            reflect: "{action}>{outcome}|{alternative}>{alternative_outcome}".into(),
            ..Default::default()
        };
        let prompter = Prompter::new(PromptConfig::default().with_templates(custom)).unwrap();
        assert_eq!(prompter.reflect(&state(), &"a".into(), "x", &"b".into(), "y"), "a>x|b>y");
        let bad = PromptTemplates { reflect: "{action}>{outcome} or {alternative}".into(), ..Default::default() };
        let err = Prompter::new(PromptConfig::default().with_templates(bad)).unwrap_err();
        assert!(err.to_string().contains("alternative_outcome"), "{err}");
    }

    #[test]
    fn samples_carry_targets() {
        let prompter = Prompter::new(PromptConfig::default()).unwrap();
        let s = state();
        let sft = prompter.sft_sample(&s, &"open box 1".into(), None);
        assert_eq!(sft.completion, "<action>open box 1</action>");
        assert_eq!(sft.id, "task-7#3");
        let grpo = prompter.next_action_sample(&s, &"open box 1".into());
        assert!(matches!(grpo.target, RewardTarget::NextAction { ref expert, .. } if expert.as_str() == "open box 1"));
    }
}
