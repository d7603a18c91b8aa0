//! The prompts of an experiment: act-core's templates for real checkpoints, or compact or conversation ones for
//! tiny models.
//!
//! The compact templates keep what a policy needs to act (task, recent actions, observation, admissible actions)
//! and drop the instructions a tiny model trained from scratch cannot read anyway, so a prompt is a few hundred
//! tokens instead of a thousand. The conversation templates show the whole episode as chat turns instead (see
//! [`conversation_templates`]). Every style asks for the same output format (`<action>`, `<answer>`), so parsing,
//! rewards and evaluation are the same.

use act_core::{PromptConfig, PromptTemplates};
use act_model::{IM_END, IM_START};

use crate::config::PromptStyle;

/// The end of the reflection prompt (Early Experience's self-reflection) in the compact and conversation styles.
const REFLECT: &str =
    "expert: {action}\nthen: {outcome}\nother: {alternative}\nthen: {alternative_outcome}\nwhy is the expert's better?";

/// The compact templates.
pub fn compact_templates() -> PromptTemplates {
    const HEAD: &str = "task: {task}\n{history}now: {observation}\n{admissible_actions}";
    PromptTemplates {
        act_reasoning: format!("{HEAD}think, then act."),
        act_plain: format!("{HEAD}act."),
        compare: format!("{HEAD}1: {{action_1}}\n2: {{action_2}}\nwhich is better?"),
        predict: format!("{HEAD}after: {{action}}\nwhat happens?"),
        reflect: format!("{HEAD}{REFLECT}"),
        history: "done: {entries}\n".into(),
        history_entry: "{action};".into(),
        history_separator: " ".into(),
        admissible: "can: {actions}\n".into(),
        ..PromptTemplates::default()
    }
}

/// Earlier steps shown by the conversation style: every step of an expert episode on ALFWorld (the expert needs
/// at most about 30), and a bound on a failing agent's prompt.
pub const CONVERSATION_HISTORY: usize = 32;

/// How many steps a failing agent's shown history drops at a time once it is full: between two drops each prompt
/// extends the previous one, so evaluation with prefix reuse re-encodes the history once every 16 steps, not at
/// every step after the 32nd.
pub const CONVERSATION_HISTORY_STRIDE: usize = 16;

/// The conversation templates: the episode so far as earlier chat turns (each observation a user turn, each action
/// an assistant turn, in the model's chat markup), then the current observation.
///
/// Step `t + 1`'s prompt begins with step `t`'s prompt and answer, token for token, so the SFT trainer's prefix
/// packing trains a whole episode as one sequence with a loss span on every action. The full history is the agent's
/// memory (the room's receptacles, where it has been, what it saw); the admissible actions are not listed. The task
/// is restated before every observation, so it stays near the tokens a small model attends to when it acts (the
/// setting of the first agents that won games, docs/results.md "Reading before acting").
pub fn conversation_templates() -> PromptTemplates {
    const HEAD: &str = "{history}task: {task}\n{observation}";
    PromptTemplates {
        act_reasoning: format!("{HEAD}\nthink, then act."),
        act_plain: HEAD.into(),
        compare: format!("{HEAD}\n1: {{action_1}}\n2: {{action_2}}\nwhich is better?"),
        predict: format!("{HEAD}\nafter: {{action}}\nwhat happens?"),
        reflect: format!("{HEAD}\n{REFLECT}"),
        history: "{entries}".into(),
        history_entry: format!(
            "task: {{task}}\n{{observation}}{IM_END}\n{IM_START}assistant\n<action>{{action}}</action>{IM_END}\n\
             {IM_START}user\n"
        ),
        history_separator: String::new(),
        admissible: "can: {actions}\n".into(),
        ..PromptTemplates::default()
    }
}

/// The prompt configuration of `style` for an environment named `environment`. Action prompts ask for reasoning
/// when `reasoning` is set.
pub fn prompt_config(style: PromptStyle, environment: &str, reasoning: bool) -> PromptConfig {
    let config = PromptConfig::default().with_environment(environment).with_reasoning(reasoning);
    match style {
        // Recent actions are cheap without their observations: show four.
        PromptStyle::Compact => config.with_templates(compact_templates()).with_history_len(4),
        PromptStyle::Conversation => config
            .with_templates(conversation_templates())
            .with_history_len(CONVERSATION_HISTORY)
            .with_history_stride(CONVERSATION_HISTORY_STRIDE),
        PromptStyle::Paper => config,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use act_core::{AgentState, HistoryEntry, Prompter};

    #[test]
    fn compact_prompts_keep_what_a_policy_needs() {
        let state = AgentState {
            task_id: "t".into(),
            task: "put a mug in desk.".into(),
            step_index: 1,
            history: vec![HistoryEntry { observation: "You are in a room.".into(), action: "go to shelf 1".into() }],
            observation: "On the shelf 1, you see a mug 2.".into(),
            admissible_actions: vec!["take mug 2 from shelf 1".into(), "look".into()],
        };
        let prompter = Prompter::new(prompt_config(PromptStyle::Compact, "ALFWorld", false)).unwrap();
        let prompt = prompter.act(&state);
        assert_eq!(
            prompt,
            "task: put a mug in desk.\ndone: go to shelf 1;\nnow: On the shelf 1, you see a mug 2.\ncan: 'take mug 2 \
             from shelf 1', 'look'\nact."
        );
        let compare = prompter.compare(&state, [&"look".into(), &"take mug 2 from shelf 1".into()]);
        assert!(compare.ends_with("1: look\n2: take mug 2 from shelf 1\nwhich is better?"), "{compare}");
        let conversation = Prompter::new(prompt_config(PromptStyle::Conversation, "ALFWorld", false)).unwrap();
        assert_eq!(
            conversation.act(&state),
            "task: put a mug in desk.\nYou are in a room.<|im_end|>\n<|im_start|>assistant\n<action>go to \
             shelf 1</action><|im_end|>\n<|im_start|>user\ntask: put a mug in desk.\nOn the shelf 1, you see a mug 2."
        );
        let paper = Prompter::new(prompt_config(PromptStyle::Paper, "ALFWorld", true)).unwrap();
        assert!(paper.act(&state).contains("<think>"));
    }
}
