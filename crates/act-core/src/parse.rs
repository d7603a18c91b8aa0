//! Parsing model output: `<think>...</think>`, `<action>...</action>` and `<answer>...</answer>`.
//!
//! Every malformed input is a typed [`ParseError`]; nothing here panics, whatever the text.

use serde::{Deserialize, Serialize};

use crate::choice::Choice;
use crate::error::ParseError;

/// The tag that holds reasoning.
pub const THINK_TAG: &str = "think";
/// The tag that holds an action.
pub const ACTION_TAG: &str = "action";
/// The tag that holds a critic's tips (ICRL).
pub const CRITIC_TAG: &str = "critic";

/// The tag that holds a comparison answer.
pub const ANSWER_TAG: &str = "answer";

/// The text inside the one `<tag>...</tag>` of `text`, trimmed.
///
/// ```
/// use act_core::{extract_tag, ParseError};
/// assert_eq!(extract_tag("<think>hm</think><action> look </action>", "action"), Ok("look"));
/// assert_eq!(extract_tag("look", "action"), Err(ParseError::MissingTag("action".into())));
/// assert!(matches!(extract_tag("<action>a</action><action>b</action>", "action"), Err(ParseError::DuplicateTag { .. })));
/// assert_eq!(extract_tag("<action>look", "action"), Err(ParseError::UnclosedTag("action".into())));
/// ```
pub fn extract_tag<'a>(text: &'a str, tag: &str) -> Result<&'a str, ParseError> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let opens = text.matches(open.as_str()).count();
    let closes = text.matches(close.as_str()).count();
    match (opens, closes) {
        (0, 0) => return Err(ParseError::MissingTag(tag.to_owned())),
        (1, 1) => {}
        (o, c) if o > 1 || c > 1 => return Err(ParseError::DuplicateTag { tag: tag.to_owned(), count: o.max(c) }),
        _ => return Err(ParseError::UnclosedTag(tag.to_owned())),
    }
    // Both occur exactly once here, so `find` succeeds.
    let (Some(start), Some(end)) = (text.find(open.as_str()), text.find(close.as_str())) else {
        return Err(ParseError::UnclosedTag(tag.to_owned()));
    };
    let start = start + open.len();
    if end < start {
        return Err(ParseError::UnclosedTag(tag.to_owned()));
    }
    Ok(text[start..end].trim())
}

/// A parsed action completion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedAction {
    /// The reasoning, when a `<think>` block is present.
    pub reasoning: Option<String>,
    /// The action, trimmed and non-empty.
    pub action: String,
}

/// Parses `<think>...</think><action>...</action>`; the think block is optional unless `require_reasoning`.
///
/// A malformed think block is an error even when reasoning is optional: a model that writes one must close it.
///
/// ```
/// use act_core::parse_action;
/// let parsed = parse_action("<think>the apple is hot</think> <action>put apple 1 in/on countertop 1</action>", true).unwrap();
/// assert_eq!(parsed.action, "put apple 1 in/on countertop 1");
/// assert_eq!(parsed.reasoning.as_deref(), Some("the apple is hot"));
/// assert!(parse_action("<action>look</action>", true).is_err());
/// assert!(parse_action("<action>look</action>", false).is_ok());
/// ```
pub fn parse_action(text: &str, require_reasoning: bool) -> Result<ParsedAction, ParseError> {
    let reasoning = match extract_tag(text, THINK_TAG) {
        Ok(r) => Some(r.to_owned()),
        Err(ParseError::MissingTag(_)) if !require_reasoning => None,
        Err(e) => return Err(e),
    };
    let action = extract_tag(text, ACTION_TAG)?;
    if action.is_empty() {
        return Err(ParseError::EmptyTag(ACTION_TAG.to_owned()));
    }
    Ok(ParsedAction { reasoning, action: action.to_owned() })
}

/// Parses a comparison answer, `<answer>1</answer>` or `<answer>2</answer>`.
///
/// "Action 2", "2." and surrounding spaces are accepted; an answer naming both actions is
/// [`ParseError::AmbiguousChoice`], anything else [`ParseError::InvalidChoice`].
///
/// ```
/// use act_core::{parse_choice, Choice, ParseError};
/// assert_eq!(parse_choice("<think>2 is wrong</think><answer>1</answer>"), Ok(Choice::First));
/// assert_eq!(parse_choice("<answer> Action 2. </answer>"), Ok(Choice::Second));
/// assert!(matches!(parse_choice("<answer>1 or 2</answer>"), Err(ParseError::AmbiguousChoice(_))));
/// ```
pub fn parse_choice(text: &str) -> Result<Choice, ParseError> {
    let answer = extract_tag(text, ANSWER_TAG)?;
    let lowered = answer.to_ascii_lowercase();
    let core = lowered.trim().trim_start_matches("action").trim().trim_end_matches(['.', ')']).trim();
    match core {
        "1" => return Ok(Choice::First),
        "2" => return Ok(Choice::Second),
        _ => {}
    }
    if answer.contains('1') && answer.contains('2') {
        Err(ParseError::AmbiguousChoice(answer.to_owned()))
    } else if answer.is_empty() {
        Err(ParseError::EmptyTag(ANSWER_TAG.to_owned()))
    } else {
        Err(ParseError::InvalidChoice(answer.to_owned()))
    }
}

/// Parses a comparison answer that names its choice by number, as [`parse_choice`] does, or by the chosen action's
/// text (`<answer>go to desk 1</answer>`), matched after [`normalize_action`] against the two presented
/// `actions`, in presented order; an answer that is one of the actions counts as that action before it is read as
/// a number.
///
/// A policy writes actions anyway, so a model may answer with the action it prefers rather than match it to its
/// number; the ACT reward and the critic evaluation accept both (tried on the quickstart in docs/results.md,
/// thirteenth session). An answer that is neither a number nor one of the two actions is an error as in
/// [`parse_choice`].
///
/// ```
/// use act_core::{parse_choice_among, Choice};
/// let actions = ["go to desk 1", "take pen 2 from desk 1"];
/// assert_eq!(parse_choice_among("<answer>Take pen 2 from desk 1</answer>", actions), Ok(Choice::Second));
/// assert_eq!(parse_choice_among("<answer>1</answer>", actions), Ok(Choice::First));
/// assert!(parse_choice_among("<answer>go to desk 2</answer>", actions).is_err());
/// ```
pub fn parse_choice_among(text: &str, actions: [&str; 2]) -> Result<Choice, ParseError> {
    // The text first: an answer that is one of the two actions names it, even where the action holds a number.
    let answer = normalize_action(extract_tag(text, ANSWER_TAG)?);
    match actions.map(|a| normalize_action(a) == answer) {
        [true, false] => Ok(Choice::First),
        [false, true] => Ok(Choice::Second),
        _ => parse_choice(text),
    }
}

/// The canonical form used wherever actions are compared: trimmed, lower-case, single spaces.
///
/// ```
/// assert_eq!(act_core::normalize_action("  Go To   Cabinet 1 \n"), "go to cabinet 1");
/// ```
pub fn normalize_action(action: &str) -> String {
    action.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Whether two actions are the same after [`normalize_action`].
pub fn actions_match(a: &str, b: &str) -> bool {
    normalize_action(a) == normalize_action(b)
}

/// Whether `admissible`, an entry of an environment's admissible actions, admits `action`: the same action after
/// [`normalize_action`], or, where the entry is a template whose bracketed argument is a `<placeholder>` (WebShop's
/// `search[<your query>]`), the same verb with any non-empty argument.
///
/// ```
/// use act_core::admits;
/// assert!(admits("search[<your query>]", "search[red running shoes]"));
/// assert!(!admits("search[<your query>]", "search[]"));
/// assert!(!admits("click[buy now]", "click[next >]"));
/// assert!(admits("go to fridge 1", "Go to  fridge 1"));
/// ```
pub fn admits(admissible: &str, action: &str) -> bool {
    if actions_match(admissible, action) {
        return true;
    }
    let (entry, action) = (normalize_action(admissible), normalize_action(action));
    let Some(open) = entry.find("[<").filter(|_| entry.ends_with(">]")) else {
        return false;
    };
    let verb = &entry[..open];
    action
        .strip_prefix(verb)
        .and_then(|rest| rest.strip_prefix('['))
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|argument| !argument.trim().is_empty())
}

/// The tips inside a critic's one `<critic>...</critic>` (ICRL), trimmed; an empty block is an error, so a critic
/// that writes nothing gives no tips.
///
/// ```
/// use act_core::{parse_critique, ParseError};
/// assert_eq!(parse_critique("<think>it looped</think><critic>Tip 1: open the fridge first.</critic>"), Ok("Tip 1: open the fridge first."));
/// assert_eq!(parse_critique("<critic> </critic>"), Err(ParseError::EmptyTag("critic".into())));
/// assert_eq!(parse_critique("go to fridge 1"), Err(ParseError::MissingTag("critic".into())));
/// ```
pub fn parse_critique(text: &str) -> Result<&str, ParseError> {
    let tips = extract_tag(text, CRITIC_TAG)?;
    if tips.is_empty() { Err(ParseError::EmptyTag(CRITIC_TAG.to_owned())) } else { Ok(tips) }
}

/// The marker before a reflector's analysis (ICT).
pub const ANALYSIS_MARKER: &str = "ANALYSIS:";
/// The marker before a reflector's improved system prompt (ICT).
pub const IMPROVED_PROMPT_MARKER: &str = "IMPROVED PROMPT:";

/// A reflector's answer (ICT): an analysis, then an improved system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reflection<'a> {
    /// The text after `ANALYSIS:` up to `IMPROVED PROMPT:` (or the end), trimmed; `None` without the marker or when
    /// empty.
    pub analysis: Option<&'a str>,
    /// The text after the last `IMPROVED PROMPT:`, trimmed; `None` without the marker or when empty.
    pub improved_prompt: Option<&'a str>,
}

impl<'a> Reflection<'a> {
    /// The improved prompt, or `current` when the reflector wrote none: a reflection without its second section
    /// keeps the prompt as it was.
    pub fn prompt_or(&self, current: &'a str) -> &'a str {
        self.improved_prompt.unwrap_or(current)
    }
}

/// Reads a reflector's answer: `ANALYSIS:` then `IMPROVED PROMPT:` (ICT / MetaGym's format). Never fails: what is
/// missing is `None`, and [`Reflection::prompt_or`] then keeps the current prompt.
///
/// ```
/// use act_core::parse_reflection;
/// let text = "ANALYSIS: it searched the drawers last.\nIMPROVED PROMPT: Search countertops first.";
/// let reflection = parse_reflection(text);
/// assert_eq!(reflection.analysis, Some("it searched the drawers last."));
/// assert_eq!(reflection.prompt_or("Be careful."), "Search countertops first.");
/// assert_eq!(parse_reflection("ANALYSIS: no idea").prompt_or("Be careful."), "Be careful.");
/// assert_eq!(parse_reflection("IMPROVED PROMPT:   ").improved_prompt, None);
/// ```
pub fn parse_reflection(text: &str) -> Reflection<'_> {
    fn nonempty(s: &str) -> Option<&str> {
        let s = s.trim();
        (!s.is_empty()).then_some(s)
    }
    let prompt_at = text.rfind(IMPROVED_PROMPT_MARKER);
    let improved_prompt = prompt_at.and_then(|at| nonempty(&text[at + IMPROVED_PROMPT_MARKER.len()..]));
    let analysis = text.find(ANALYSIS_MARKER).and_then(|at| {
        let start = at + ANALYSIS_MARKER.len();
        // Up to the first prompt marker after the analysis starts (a reflector may repeat the marker).
        let end = text[start..].find(IMPROVED_PROMPT_MARKER).map_or(text.len(), |e| start + e);
        nonempty(&text[start..end])
    });
    Reflection { analysis, improved_prompt }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn placeholder_templates_admit_any_argument_of_their_verb() {
        assert!(admits("search[<your query>]", "search[a bluetooth speaker]"));
        assert!(admits("search[<your query>]", "SEARCH[Shoes]"));
        assert!(!admits("search[<your query>]", "search[  ]"));
        assert!(!admits("search[<your query>]", "click[a bluetooth speaker]"));
        assert!(!admits("search[<your query>]", "search a bluetooth speaker"));
        // An argument in brackets without a placeholder is a literal.
        assert!(!admits("click[b0ecy1n1m6]", "click[b0xxxxxxxx]"));
        assert!(admits("click[b0ecy1n1m6]", "click[B0ECY1N1M6]"));
        assert!(!admits("take <obj> from <recep>", "take apple 1 from table 1"));
    }

    #[test]
    fn tag_errors_are_typed() {
        assert_eq!(extract_tag("</action>x<action>", "action"), Err(ParseError::UnclosedTag("action".into())));
        assert_eq!(extract_tag("x</action>", "action"), Err(ParseError::UnclosedTag("action".into())));
        assert_eq!(
            extract_tag("<action>a</action></action>", "action"),
            Err(ParseError::DuplicateTag { tag: "action".into(), count: 2 })
        );
        assert_eq!(parse_action("<action>  </action>", false), Err(ParseError::EmptyTag("action".into())));
        assert_eq!(
            parse_action("<think>unclosed <action>look</action>", false),
            Err(ParseError::UnclosedTag("think".into()))
        );
    }

    #[test]
    fn choices() {
        assert_eq!(parse_choice("<answer>2</answer>"), Ok(Choice::Second));
        assert_eq!(parse_choice("<answer>action 1)</answer>"), Ok(Choice::First));
        assert_eq!(parse_choice("<answer>3</answer>"), Err(ParseError::InvalidChoice("3".into())));
        assert_eq!(parse_choice("<answer></answer>"), Err(ParseError::EmptyTag("answer".into())));
        assert_eq!(
            parse_choice("<answer>both 1 and 2</answer>"),
            Err(ParseError::AmbiguousChoice("both 1 and 2".into()))
        );
        assert_eq!(parse_choice("1"), Err(ParseError::MissingTag("answer".into())));
    }

    #[test]
    fn normalisation() {
        assert!(actions_match("Take Apple 1 from Fridge 1", "take apple 1  from fridge 1"));
        assert!(!actions_match("take apple 1", "take apple 2"));
        assert_eq!(normalize_action(""), "");
    }

    proptest! {
        #[test]
        fn parsers_never_panic(text in any::<String>()) {
            let _ = extract_tag(&text, "action");
            let _ = parse_action(&text, true);
            let _ = parse_action(&text, false);
            let _ = parse_choice(&text);
            let _ = parse_choice_among(&text, [&text, "look"]);
            let _ = normalize_action(&text);
        }

        #[test]
        fn choices_by_action_name_the_matching_action(
            first in "[a-z]{1,8}( [a-z0-9/]{1,8}){0,4}",
            second in "[a-z]{1,8}( [a-z0-9/]{1,8}){0,4}",
            pick_second in any::<bool>(),
            shout in any::<bool>(),
        ) {
            prop_assume!(normalize_action(&first) != normalize_action(&second));
            let chosen = if pick_second { &second } else { &first };
            let written = if shout { chosen.to_uppercase() } else { chosen.clone() };
            let choice = parse_choice_among(&format!("<think>hm</think><answer> {written} </answer>"), [&first, &second]);
            prop_assert_eq!(choice, Ok(if pick_second { Choice::Second } else { Choice::First }));
            // Numbers keep their meaning whatever the actions are.
            prop_assert_eq!(parse_choice_among("<answer>2</answer>", [&first, &second]), Ok(Choice::Second));
        }

        #[test]
        fn parsers_never_panic_on_tag_soup(parts in proptest::collection::vec(
            prop_oneof![
                Just("<action>".to_owned()), Just("</action>".to_owned()), Just("<think>".to_owned()),
                Just("</think>".to_owned()), Just("<answer>".to_owned()), Just("</answer>".to_owned()),
                "[ a-z12é\u{0}-\u{7f}]{0,6}",
            ], 0..12)) {
            let text = parts.concat();
            let _ = parse_action(&text, false);
            let _ = parse_choice(&text);
        }

        #[test]
        fn well_formed_actions_round_trip(action in "[a-z0-9/]{1,8}( [a-z0-9/]{1,8}){0,5}", thought in "[a-z ,.]{0,40}") {
            let text = format!("<think>{thought}</think>\n<action>{action}</action>");
            let parsed = parse_action(&text, true).unwrap();
            prop_assert_eq!(parsed.action, action);
            prop_assert_eq!(parsed.reasoning.unwrap(), thought.trim());
        }

        #[test]
        fn reflections_round_trip_and_never_panic(
            analysis in "[a-zA-Z0-9 ,.\n]{0,60}",
            prompt in "[a-zA-Z0-9 ,.\n]{0,60}",
            noise in any::<String>(),
        ) {
            let text = format!("{ANALYSIS_MARKER} {analysis}\n{IMPROVED_PROMPT_MARKER} {prompt}");
            let parsed = parse_reflection(&text);
            let trimmed = |s: &str| { let s = s.trim().to_owned(); (!s.is_empty()).then_some(s) };
            prop_assert_eq!(parsed.analysis.map(str::to_owned), trimmed(&analysis));
            prop_assert_eq!(parsed.improved_prompt.map(str::to_owned), trimmed(&prompt));
            // Without the prompt marker the current prompt is kept, whatever else the text holds.
            let mut no_prompt = noise;
            while no_prompt.contains(IMPROVED_PROMPT_MARKER) {
                no_prompt = no_prompt.replace(IMPROVED_PROMPT_MARKER, "");
            }
            prop_assert_eq!(parse_reflection(&no_prompt).prompt_or("current"), "current");
        }

        #[test]
        fn normalisation_is_idempotent(text in any::<String>()) {
            let once = normalize_action(&text);
            prop_assert_eq!(normalize_action(&once), once.clone());
        }
    }
}
