//! The expert: searches with the instruction (less its opener and price clause), pages to the target product,
//! opens it, selects the option values the goal asks for, and buys. When the target is not among the results it
//! goes back and searches for the target's title instead.

use crate::fuzzy::{MATCH_THRESHOLD, normalize_color, token_set_ratio};
use crate::goals::Goal;
use crate::pages::{BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, PRODUCT_WINDOW, PageKind};
use crate::session::Episode;
use crate::world::WebShopWorld;

/// Openers stripped from instructions before searching (longest first).
const OPENERS: &[&str] = &[
    "i am searching for",
    "i am interested in",
    "i am looking for",
    "im looking for",
    "i want to buy",
    "id like to buy",
    "can you find me",
    "i would like",
    "help me find",
    "find me",
    "get me",
    "buy me",
    "look for",
    "i need",
    "i want",
];

/// The search query the expert types first: the instruction without its opener and price clause.
pub fn instruction_query(instruction: &str) -> String {
    let mut text = instruction.trim().to_lowercase();
    if let Some(cut) = text.find(", and price lower than") {
        text.truncate(cut);
    }
    for opener in OPENERS {
        if let Some(rest) = text.strip_prefix(opener) {
            text = rest.trim_start().to_owned();
            break;
        }
    }
    // Brackets would end the action's argument early.
    text.replace(['[', ']'], " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The fallback query: the target's title.
fn title_query(title: &str) -> String {
    title.to_lowercase().replace(['[', ']'], " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The product values that best match the goal's options (one per goal option that some value matches).
pub fn goal_option_values(goal: &Goal, values: &[&str]) -> Vec<String> {
    let mut chosen = Vec::new();
    for wanted in goal.option_texts() {
        if let Some(exact) = values.iter().find(|v| **v == wanted) {
            if !chosen.iter().any(|c| c == exact) {
                chosen.push((*exact).to_owned());
            }
            continue;
        }
        let wanted_norm = normalize_color(&wanted);
        let best = values
            .iter()
            .map(|v| (token_set_ratio(normalize_color(v), wanted_norm), token_set_ratio(v, &wanted), *v))
            // Prefer the best normalised score, then the best raw score (exact shade), then the first.
            .fold(None::<(u32, u32, &str)>, |best, candidate| match best {
                Some(b) if (b.0, b.1) >= (candidate.0, candidate.1) => Some(b),
                _ => Some(candidate),
            });
        if let Some((score, _, value)) = best
            && score > MATCH_THRESHOLD
            && !chosen.iter().any(|c| c == value)
        {
            chosen.push(value.to_owned());
        }
    }
    chosen
}

/// The expert's next action in `episode`.
pub(crate) fn next_action(world: &WebShopWorld, episode: &Episode) -> String {
    let Some((goal, target)) = world.goal(episode.goal_index) else {
        return format!("click[{}]", BACK_TO_SEARCH.to_lowercase());
    };
    let session = &episode.session;
    match session.kind {
        PageKind::Start => {
            let query = if session.searches.is_empty() {
                instruction_query(&goal.instruction_text)
            } else {
                world.product(target).map(|p| title_query(&p.title)).unwrap_or_default()
            };
            format!("search[{query}]")
        }
        PageKind::Results => match session.results.iter().position(|&p| p == target) {
            Some(rank) => {
                let target_page = rank / PRODUCT_WINDOW + 1;
                if target_page == session.page_num {
                    let asin = world.product(target).map(|p| p.asin.to_lowercase()).unwrap_or_default();
                    format!("click[{asin}]")
                } else if target_page > session.page_num {
                    format!("click[{}]", NEXT_PAGE.to_lowercase())
                } else {
                    format!("click[{}]", PREV_PAGE.to_lowercase())
                }
            }
            None => format!("click[{}]", BACK_TO_SEARCH.to_lowercase()),
        },
        PageKind::Item if session.product == Some(target) => {
            let Some(product) = world.product(target) else {
                return format!("click[{}]", BACK_TO_SEARCH.to_lowercase());
            };
            let values: Vec<&str> = product.options.iter().flat_map(|o| o.values.iter().map(String::as_str)).collect();
            let pending = goal_option_values(goal, &values)
                .into_iter()
                .find(|value| !session.options.iter().any(|(_, chosen)| chosen == value));
            match pending {
                Some(value) => format!("click[{value}]"),
                None => format!("click[{}]", BUY_NOW.to_lowercase()),
            }
        }
        PageKind::Item | PageKind::Sub(_) => format!("click[{}]", PREV_PAGE.to_lowercase()),
        PageKind::Done => format!("click[{}]", BUY_NOW.to_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_drops_opener_and_price() {
        assert_eq!(
            instruction_query("i am looking for a gluten free protein bars, and price lower than 40.00 dollars"),
            "a gluten free protein bars"
        );
        assert_eq!(instruction_query("Find me [red] socks"), "red socks");
        assert_eq!(instruction_query("socks"), "socks");
    }
}
