//! Upstream's purchase reward (`web_agent_site/engine/goal.py`, `get_reward`):

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalogue, Product};
use crate::error::WebShopError;
use crate::fuzzy::{COLOR_SET, fuzzy_match, normalize_color};
use crate::goals::Goal;
use crate::vocab::NON_NOUNS;

/// The words that count as nouns when comparing titles (the spaCy substitute, see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NounLexicon {
    nouns: HashSet<String>,
}

/// Lower-cased alphanumeric words of at least two characters.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 2).map(str::to_lowercase)
}

impl NounLexicon {
    /// The words of every product type and category-path level in `catalogue`, less function words and numbers.
    pub fn from_catalogue(catalogue: &Catalogue) -> Self {
        let mut lexicon = NounLexicon::default();
        for product in catalogue.products() {
            lexicon.add_text(&product.query);
            lexicon.add_text(&product.product_category);
        }
        lexicon
    }

    /// Adds the words of `text` as nouns.
    pub fn add_text(&mut self, text: &str) {
        for word in words(text) {
            if !NON_NOUNS.contains(&word.as_str()) && !word.chars().all(|c| c.is_ascii_digit()) {
                self.nouns.insert(word);
            }
        }
    }

    /// Whether `word` (lower-case) is a noun.
    pub fn contains(&self, word: &str) -> bool {
        self.nouns.contains(word)
    }

    /// The number of nouns.
    pub fn len(&self) -> usize {
        self.nouns.len()
    }

    /// Whether the lexicon is empty.
    pub fn is_empty(&self) -> bool {
        self.nouns.is_empty()
    }

    /// The nouns of `title`, in order, repeats kept (upstream's list before its set intersection).
    pub fn title_nouns(&self, title: &str) -> Vec<String> {
        words(title).filter(|w| self.nouns.contains(w)).collect()
    }
}

/// The parts of the type factor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TypeReward {
    /// 1, 0.5, 0.1 or 0.
    pub r_type: f64,
    /// Same collection query.
    pub query_match: bool,
    /// At least two shared category-path levels.
    pub category_match: bool,
    /// Share of the target's title nouns found in the purchased title (0.2 when the target has none).
    pub title_score: f64,
}

/// Upstream's `get_type_reward`.
pub fn type_reward(purchased: &Product, goal: &Goal, lexicon: &NounLexicon) -> TypeReward {
    let query_match = purchased.query == goal.query;
    let levels = |path: &str| path.split('›').map(|x| x.trim().to_owned()).collect::<HashSet<_>>();
    let category_match = levels(&purchased.product_category).intersection(&levels(&goal.product_category)).count() >= 2;
    let purchased_nouns: HashSet<String> = lexicon.title_nouns(&purchased.title).into_iter().collect();
    let desired_nouns = lexicon.title_nouns(&goal.name);
    let title_score = if desired_nouns.is_empty() {
        0.2
    } else {
        let desired_set: HashSet<&String> = desired_nouns.iter().collect();
        desired_set.iter().filter(|n| purchased_nouns.contains(n.as_str())).count() as f64 / desired_nouns.len() as f64
    };
    TypeReward {
        r_type: r_type_rule(query_match, category_match, title_score),
        query_match,
        category_match,
        title_score,
    }
}

/// The r_type rules in upstream's order: 0.5 without any match, then 0.1 below 0.1, then 0 at exactly 0.
pub fn r_type_rule(query_match: bool, category_match: bool, title_score: f64) -> f64 {
    let mut r_type = 1.0;
    if !(query_match || category_match || title_score > 0.2) {
        r_type = 0.5;
    }
    if title_score < 0.1 {
        r_type = 0.1;
    }
    if title_score == 0.0 {
        r_type = 0.0;
    }
    r_type
}

/// Upstream's `get_attribute_reward`: the share of goal attributes matched, and the count.
pub fn attribute_reward(purchased: &Product, goal: &Goal) -> (f64, usize) {
    let title = purchased.title.to_lowercase();
    let bullets = purchased.bullet_points.join(" ").to_lowercase();
    let description = purchased.description.to_lowercase();
    let matches = goal
        .attributes
        .iter()
        .filter(|g_attr| {
            purchased.attributes.iter().any(|p_attr| fuzzy_match(p_attr, g_attr))
                || title.contains(g_attr.as_str())
                || bullets.contains(g_attr.as_str())
                || description.contains(g_attr.as_str())
        })
        .count();
    let share = if goal.attributes.is_empty() { 0.0 } else { matches as f64 / goal.attributes.len() as f64 };
    (share, matches)
}

/// A goal option as upstream compares it: list values are colour-normalised by substring; named options
/// (`(name, value)` pairs upstream) become the colour that equals the name or the value, else "name value".
fn normalized_goal_options(goal: &Goal) -> Vec<String> {
    if goal.goal_option_names.is_empty() {
        goal.goal_options.iter().map(|o| normalize_color(o).to_owned()).collect()
    } else {
        goal.goal_option_names
            .iter()
            .zip(&goal.goal_options)
            .map(|(name, value)| match COLOR_SET.iter().find(|c| **c == name.as_str() || **c == value.as_str()) {
                Some(colour) => (*colour).to_owned(),
                None => format!("{name} {value}"),
            })
            .collect()
    }
}

/// Upstream's `get_option_reward`: the share of goal options matched by a chosen option (`None` when the goal has
/// no options), and the count.
pub fn option_reward(chosen: &[&str], goal: &Goal) -> (Option<f64>, usize) {
    let purchased: Vec<&str> = chosen.iter().map(|o| normalize_color(o)).collect();
    let wanted = normalized_goal_options(goal);
    let matches = wanted.iter().filter(|g| purchased.iter().any(|p| fuzzy_match(p, g))).count();
    let share = if wanted.is_empty() { None } else { Some(matches as f64 / wanted.len() as f64) };
    (share, matches)
}

/// Every term of one purchase's reward.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewardBreakdown {
    /// The reward, 0..=1.
    pub reward: f64,
    /// The type factor.
    pub r_type: f64,
    /// Share of goal attributes matched.
    pub r_att: f64,
    /// Share of goal options matched (absent without goal options).
    pub r_option: Option<f64>,
    /// Whether the price is within the bound.
    pub r_price: bool,
    /// Matched attributes.
    pub num_attr_matches: usize,
    /// Matched options.
    pub num_option_matches: usize,
    /// Same collection query.
    pub query_match: bool,
    /// At least two shared category levels.
    pub category_match: bool,
    /// Share of title nouns shared.
    pub title_score: f64,
}

impl RewardBreakdown {
    /// Whether the purchase succeeds (reward exactly 1, as upstream's success rate counts).
    pub fn success(&self) -> bool {
        self.reward >= 1.0
    }

    /// The terms as a JSON object (for a transition's `info`).
    pub fn to_info(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }
    }
}

/// Upstream's `get_reward` for buying `purchased` at `price` with `chosen` option values.
///
/// ```
/// use act_webshop::Product;
/// use act_webshop::Goal;
/// use act_webshop::{NounLexicon, purchase_reward};
/// let product = Product {
///     asin: "B000000001".into(), title: "Acme Gluten Free Protein Bars".into(), category: "food".into(),
///     query: "protein bars".into(), product_category: "Grocery › Snacks › Bars".into(),
///     description: String::new(), bullet_points: vec![], pricing: vec![19.99], price_tag: "$19.99".into(),
///     options: vec![], attributes: vec!["gluten free".into()],
/// };
/// let goal = Goal {
///     asin: product.asin.clone(), category: "food".into(), query: "protein bars".into(),
///     name: product.title.clone(), product_category: product.product_category.clone(),
///     instruction_text: "i need gluten free protein bars".into(), attributes: vec!["gluten free".into()],
///     price_upper: 30.0, goal_options: vec!["peanut butter".into()], goal_option_names: vec![], weight: 1.0,
/// };
/// let mut lexicon = NounLexicon::default();
/// lexicon.add_text("protein bars");
/// let r = purchase_reward(&product, &goal, 19.99, &["peanut butter"], &lexicon).unwrap();
/// assert_eq!(r.reward, 1.0);
/// let r = purchase_reward(&product, &goal, 19.99, &["chocolate"], &lexicon).unwrap();
/// assert!((r.reward - 2.0 / 3.0).abs() < 1e-12);
/// ```
///
/// `R = r_type * (n_attr_match + n_option_match + [price <= price_upper]) / (n_goal_attrs + n_goal_options + 1)`
///
/// * an attribute matches when a product attribute scores above 85 in thefuzz's `token_set_ratio`, or when it
///   occurs in the lower-cased title, bullet points or description;
/// * an option matches when, after colour normalisation, a chosen option scores above 85;
/// * `r_type` is 1, lowered to 0.5 when neither the query, two category levels nor more than 20% of the target's
///   title nouns match, to 0.1 when under 10% of the title nouns match, and to 0 when none do.
///
/// Upstream finds title nouns with spaCy's part-of-speech tagger. We use a [`NounLexicon`] instead: the words of
/// every product type (`query`) and category-path level in the catalogue, which are the nouns titles use to name
/// what a product is. Brand names (proper nouns to spaCy) are not in it, so titles that share only a brand count
/// as sharing no noun.
pub fn purchase_reward(
    purchased: &Product,
    goal: &Goal,
    price: f64,
    chosen: &[&str],
    lexicon: &NounLexicon,
) -> Result<RewardBreakdown, WebShopError> {
    goal.validate()?;
    let type_terms = type_reward(purchased, goal, lexicon);
    let r_price = price <= goal.price_upper;
    let (r_att, num_attr_matches) = attribute_reward(purchased, goal);
    let (r_option, num_option_matches) = option_reward(chosen, goal);
    let denominator = (goal.attributes.len() + goal.goal_options.len() + 1) as f64;
    let numerator = (num_attr_matches + num_option_matches + usize::from(r_price)) as f64;
    Ok(RewardBreakdown {
        reward: numerator / denominator * type_terms.r_type,
        r_type: type_terms.r_type,
        r_att,
        r_option,
        r_price,
        num_attr_matches,
        num_option_matches,
        query_match: type_terms.query_match,
        category_match: type_terms.category_match,
        title_score: type_terms.title_score,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ProductOption;

    fn product() -> Product {
        Product {
            asin: "B000000001".into(),
            title: "Sunmeadow Chewy Protein Bars - Gluten Free".into(),
            category: "food".into(),
            query: "protein bars".into(),
            product_category: "Grocery & Gourmet Food › Snack Foods › Bars › Protein Bars".into(),
            description: "Made with whey protein.".into(),
            bullet_points: vec!["PREMIUM QUALITY: bars with low sugar.".into()],
            pricing: vec![24.99],
            price_tag: "$24.99".into(),
            options: vec![ProductOption {
                name: "flavor name".into(),
                values: vec!["peanut butter".into(), "chocolate chip".into()],
            }],
            attributes: vec!["gluten free".into(), "non gmo".into(), "high fiber".into()],
        }
    }

    fn goal() -> Goal {
        let p = product();
        Goal {
            asin: p.asin.clone(),
            category: p.category.clone(),
            query: p.query.clone(),
            name: p.title.clone(),
            product_category: p.product_category.clone(),
            instruction_text: "i need gluten free protein bars".into(),
            attributes: vec!["gluten free".into(), "non-gmo".into()],
            price_upper: 30.0,
            goal_options: vec!["peanut butter".into()],
            goal_option_names: vec![],
            weight: 1.0,
        }
    }

    fn lexicon() -> NounLexicon {
        let mut l = NounLexicon::default();
        for text in [
            "protein bars",
            "Grocery & Gourmet Food › Snack Foods › Bars › Protein Bars",
            "office chair",
            "Home & Kitchen › Furniture › Chairs",
            "shampoo",
            "Beauty › Hair Care › Shampoos",
            "chocolate",
        ] {
            l.add_text(text);
        }
        l
    }

    fn reward(p: &Product, g: &Goal, price: f64, chosen: &[&str]) -> RewardBreakdown {
        purchase_reward(p, g, price, chosen, &lexicon()).unwrap()
    }

    #[test]
    fn all_matched_scores_one() {
        // 2 attributes (one via fuzzy "non-gmo" ~ "non gmo"), 1 option, price 24.99 <= 30: 4/4 * 1.
        let r = reward(&product(), &goal(), 24.99, &["peanut butter"]);
        assert_eq!(r.reward, 1.0);
        assert!(r.success());
        assert_eq!((r.num_attr_matches, r.num_option_matches, r.r_price), (2, 1, true));
        assert_eq!(r.r_option, Some(1.0));
    }

    #[test]
    fn attribute_found_in_text_counts() {
        let mut g = goal();
        g.attributes = vec!["low sugar".into(), "whey protein".into()]; // in bullets and description only
        let r = reward(&product(), &g, 24.99, &["peanut butter"]);
        assert_eq!(r.num_attr_matches, 2);
        assert_eq!(r.reward, 1.0);
    }

    #[test]
    fn missing_attribute() {
        let mut g = goal();
        g.attributes.push("sugar free".into()); // not an attribute, not in any text
        let r = reward(&product(), &g, 24.99, &["peanut butter"]);
        // (2 + 1 + 1) / (3 + 1 + 1) = 0.8
        assert!((r.reward - 0.8).abs() < 1e-12, "{r:?}");
        assert!((r.r_att - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn wrong_option() {
        let r = reward(&product(), &goal(), 24.99, &["chocolate chip"]);
        // (2 + 0 + 1) / 4 = 0.75
        assert_eq!(r.reward, 0.75);
        assert_eq!(r.r_option, Some(0.0));
        let none_chosen = reward(&product(), &goal(), 24.99, &[]);
        assert_eq!(none_chosen.reward, 0.75);
    }

    #[test]
    fn colour_normalisation_matches_shades() {
        let mut g = goal();
        g.goal_options = vec!["navy blue".into()];
        // "dark blue" and "navy blue" both normalise to "blue".
        assert_eq!(reward(&product(), &g, 24.99, &["dark blue"]).num_option_matches, 1);
        assert_eq!(reward(&product(), &g, 24.99, &["red"]).num_option_matches, 0);
    }

    #[test]
    fn named_goal_options_compare_name_and_value() {
        let mut g = goal();
        g.goal_option_names = vec!["flavor name".into()];
        // "flavor name peanut butter" vs "peanut butter": token-set subset -> 100.
        assert_eq!(reward(&product(), &g, 24.99, &["peanut butter"]).num_option_matches, 1);
        g.goal_option_names = vec!["color".into()];
        g.goal_options = vec!["black".into()];
        assert_eq!(reward(&product(), &g, 24.99, &["jet black"]).num_option_matches, 1);
    }

    #[test]
    fn price_over_bound() {
        let r = reward(&product(), &goal(), 30.01, &["peanut butter"]);
        assert!(!r.r_price);
        assert_eq!(r.reward, 0.75);
        let at_bound = reward(&product(), &goal(), 30.0, &["peanut butter"]);
        assert_eq!(at_bound.reward, 1.0);
    }

    #[test]
    fn r_type_half_when_only_some_nouns_shared() {
        // Different query and category; title shares "bars" (1 of the target's 3 nouns? see below) -> check rule.
        let mut other = product();
        other.query = "granola".into();
        other.product_category = "Pantry › Cereal".into();
        other.title = "Sunmeadow Granola Bars Chocolate".into();
        // Target nouns: protein, bars, (gluten/free are not nouns) -> ["protein", "bars"]; shared {"bars"} = 0.5.
        let t = type_reward(&other, &goal(), &lexicon());
        assert_eq!(t.title_score, 0.5);
        assert_eq!(t.r_type, 1.0, "title score above 0.2 keeps r_type at 1");
        // Make the target's title noun-heavy so one shared noun is below 0.2.
        let mut g = goal();
        g.name = "Protein Bars Chocolate Shampoo Chair Office".into(); // 6 nouns
        let t = type_reward(&other, &g, &lexicon());
        assert!((t.title_score - 2.0 / 6.0).abs() < 1e-12, "bars, chocolate shared: {t:?}");
        g.name = "Protein Bars Shampoo Chair Office Protein".into(); // nouns with a repeat: 6 listed, "bars" shared
        let t = type_reward(&other, &g, &lexicon());
        assert!((t.title_score - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(t.r_type, 0.5);
        let r = reward(&other, &g, 24.99, &["peanut butter"]);
        assert!((r.reward - 0.5).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn r_type_rules_every_level() {
        assert_eq!(r_type_rule(true, false, 0.5), 1.0);
        assert_eq!(r_type_rule(false, true, 0.15), 1.0);
        assert_eq!(r_type_rule(false, false, 0.25), 1.0);
        assert_eq!(r_type_rule(false, false, 0.2), 0.5);
        assert_eq!(r_type_rule(false, false, 0.15), 0.5);
        // Below 0.1 the factor is 0.1 even when the query matches.
        assert_eq!(r_type_rule(true, true, 0.05), 0.1);
        assert_eq!(r_type_rule(true, true, 0.0), 0.0);
    }

    #[test]
    fn r_type_tenth_and_zero_in_full_reward() {
        let mut other = product();
        other.title = "Velora Office Chair".into();
        other.query = "office chair".into();
        other.product_category = "Home & Kitchen › Furniture › Chairs".into();
        // No shared title noun -> 0.
        let r = reward(&other, &goal(), 24.99, &["peanut butter"]);
        assert_eq!(r.r_type, 0.0);
        assert_eq!(r.reward, 0.0);
        // One shared noun out of eleven (< 0.1) -> 0.1; attrs "gluten free", "non gmo" still match the attributes.
        let mut g = goal();
        g.name = "Chair Protein Bars Shampoo Shampoos Chocolate Grocery Gourmet Food Snack Foods".into();
        let t = type_reward(&other, &g, &lexicon());
        assert!((t.title_score - 1.0 / 11.0).abs() < 1e-12, "{t:?}");
        let r = reward(&other, &g, 24.99, &["peanut butter"]);
        assert_eq!(r.r_type, 0.1);
        assert!((r.reward - 0.1).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn target_without_nouns_scores_point_two() {
        let mut g = goal();
        g.name = "Sunmeadow 12".into();
        let mut other = product();
        other.query = "granola".into();
        other.product_category = "Pantry".into();
        let t = type_reward(&other, &g, &lexicon());
        assert_eq!(t.title_score, 0.2);
        assert_eq!(t.r_type, 0.5);
    }

    #[test]
    fn invalid_goal_is_an_error_not_a_panic() {
        let mut g = goal();
        g.attributes.clear();
        assert!(purchase_reward(&product(), &g, 1.0, &[], &lexicon()).is_err());
        let mut g = goal();
        g.price_upper = -1.0;
        assert!(purchase_reward(&product(), &g, 1.0, &[], &lexicon()).is_err());
    }
}
