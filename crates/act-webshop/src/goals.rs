//! Shopping goals: a target product, the attributes and options asked for, a price bound, and the instruction a
//! person would write, split into test / dev / train by goal index as upstream does.

use std::collections::HashMap;
use std::path::Path;

use act_core::Split;
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::catalog::{Catalogue, read_json};
use crate::error::WebShopError;

/// Upstream's price grid (`PRICE_RANGE`): 10, 20, ..., 990 dollars.
const PRICE_GRID_STEP: f64 = 10.0;
const PRICE_GRID_LEN: usize = 99;
/// The bound upstream uses when a price is too high for the grid (and then adds no price clause).
pub const NO_PRICE_BOUND: f64 = 1_000_000.0;

/// One goal, in upstream's goal schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    /// The target product.
    pub asin: String,
    /// The target's top-level category.
    pub category: String,
    /// The target's collection query.
    pub query: String,
    /// The target's title (upstream's `name`), whose nouns the type reward compares.
    pub name: String,
    /// The target's category path.
    pub product_category: String,
    /// The instruction the agent reads.
    pub instruction_text: String,
    /// The attributes asked for (at least one).
    pub attributes: Vec<String>,
    /// The highest acceptable price.
    pub price_upper: f64,
    /// The option values asked for.
    pub goal_options: Vec<String>,
    /// Option names, one per value, when the goal names them (upstream's dict-shaped synthetic goals); empty for
    /// list-shaped goals (human goals and ours).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goal_option_names: Vec<String>,
    /// Sampling weight (upstream sets 1 for human goals).
    #[serde(default = "one")]
    pub weight: f64,
}

fn one() -> f64 {
    1.0
}

impl Goal {
    /// Checks what the reward needs: at least one attribute, a positive price bound, names matching values.
    pub fn validate(&self) -> Result<(), WebShopError> {
        if self.attributes.is_empty() {
            return Err(WebShopError::Goal(format!("goal for {} has no attributes", self.asin)));
        }
        if self.price_upper.is_nan() || self.price_upper <= 0.0 {
            return Err(WebShopError::Goal(format!(
                "goal for {} has a non-positive price bound {}",
                self.asin, self.price_upper
            )));
        }
        if !self.goal_option_names.is_empty() && self.goal_option_names.len() != self.goal_options.len() {
            return Err(WebShopError::Goal(format!(
                "goal for {} names {} options but gives {} values",
                self.asin,
                self.goal_option_names.len(),
                self.goal_options.len()
            )));
        }
        Ok(())
    }

    /// The texts the option reward compares: the values, or "name value" for named options.
    pub fn option_texts(&self) -> Vec<String> {
        if self.goal_option_names.is_empty() {
            self.goal_options.clone()
        } else {
            self.goal_option_names.iter().zip(&self.goal_options).map(|(n, v)| format!("{n} {v}")).collect()
        }
    }
}

/// Upstream's price bound: two distinct draws from the first four grid prices above `price`, the larger one.
/// Returns the bound and whether the instruction gets a price clause.
pub fn draw_price_bound(price: f64, rng: &mut impl rand::Rng) -> (f64, bool) {
    let candidates: Vec<f64> =
        (1..=PRICE_GRID_LEN).map(|i| PRICE_GRID_STEP * i as f64).filter(|p| *p > price).take(4).collect();
    if candidates.len() < 2 {
        return (NO_PRICE_BOUND, false);
    }
    let first = rng.random_range(0..candidates.len());
    let mut second = rng.random_range(0..candidates.len() - 1);
    if second >= first {
        second += 1;
    }
    (candidates[first].max(candidates[second]), true)
}

/// The clause upstream appends: `, and price lower than 40.00 dollars`.
pub fn price_clause(bound: f64) -> String {
    format!(", and price lower than {bound:.2} dollars")
}

/// How instructions open, with weights (how often people used each opener).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phrasing {
    /// (prefix people typed, text our goals use, weight).
    pub openers: Vec<Opener>,
}

/// One instruction opener.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opener {
    /// The prefix that identifies it in human instructions.
    pub prefix: String,
    /// The words generated instructions start with.
    pub text: String,
    /// Relative frequency.
    pub weight: f64,
}

/// (prefix, text) of the openers we recognise; the default weights are the counts among upstream's 12,087 human
/// instructions (recomputable with [`Phrasing::from_human_goals`]).
const OPENERS: &[(&str, &str, f64)] = &[
    ("i am looking for", "i am looking for", 3228.0),
    ("im looking for", "im looking for", 1831.0),
    ("i would like", "i would like", 1486.0),
    ("i need", "i need", 1854.0),
    ("i want to", "i want to buy", 652.0),
    ("i want", "i want", 1160.0),
    ("i am interested in", "i am interested in", 237.0),
    ("id like to", "id like to buy", 91.0),
    ("find me", "find me", 105.0),
    ("get me", "get me", 81.0),
    ("i am searching for", "i am searching for", 44.0),
    ("can you find", "can you find me", 42.0),
    ("buy me", "buy me", 44.0),
    ("look for", "look for", 39.0),
    ("help me find", "help me find", 17.0),
];

impl Default for Phrasing {
    fn default() -> Self {
        Phrasing {
            openers: OPENERS
                .iter()
                .map(|(prefix, text, weight)| Opener {
                    prefix: (*prefix).to_owned(),
                    text: (*text).to_owned(),
                    weight: *weight,
                })
                .collect(),
        }
    }
}

impl Phrasing {
    /// Opener weights counted in a JSON list of human instructions (upstream's `human_goals.json`): each
    /// instruction counts for the longest known opener it starts with.
    pub fn from_human_goals(path: &Path) -> Result<Phrasing, WebShopError> {
        let instructions: Vec<String> = read_json(path)?;
        let mut phrasing = Phrasing::default();
        let mut counts = vec![0.0; phrasing.openers.len()];
        for instruction in &instructions {
            let text = instruction.trim().to_lowercase();
            let best = phrasing
                .openers
                .iter()
                .enumerate()
                .filter(|(_, o)| text.starts_with(&o.prefix))
                .max_by_key(|(_, o)| o.prefix.len());
            if let Some((i, _)) = best {
                counts[i] += 1.0;
            }
        }
        if counts.iter().all(|c| *c == 0.0) {
            return Err(WebShopError::Data(format!("{}: no instruction starts with a known opener", path.display())));
        }
        for (opener, count) in phrasing.openers.iter_mut().zip(counts) {
            opener.weight = count;
        }
        Ok(phrasing)
    }

    fn draw<'a>(&'a self, rng: &mut impl rand::Rng) -> &'a str {
        let total: f64 = self.openers.iter().map(|o| o.weight).sum();
        let mut x = rng.random::<f64>() * total;
        for opener in &self.openers {
            if x < opener.weight {
                return &opener.text;
            }
            x -= opener.weight;
        }
        self.openers.last().map(|o| o.text.as_str()).unwrap_or("i need")
    }
}

/// How many goals each split holds (upstream: test 500, dev 1,000, train the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitSizes {
    /// Goals in the test split (the first ones after shuffling).
    pub test: usize,
    /// Goals in the dev split (the next ones).
    pub dev: usize,
}

impl Default for SplitSizes {
    fn default() -> Self {
        SplitSizes { test: 500, dev: 1000 }
    }
}

/// How to sample goals from a catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GoalConfig {
    /// Goals per product.
    pub goals_per_product: usize,
    /// The seed every choice flows from.
    pub seed: u64,
    /// Openers and their weights.
    pub phrasing: Phrasing,
    /// Split sizes.
    pub splits: SplitSizes,
}

impl Default for GoalConfig {
    fn default() -> Self {
        GoalConfig { goals_per_product: 2, seed: 0, phrasing: Phrasing::default(), splits: SplitSizes::default() }
    }
}

impl GoalConfig {
    /// The default config with `seed`.
    #[must_use]
    pub fn with_seed(seed: u64) -> Self {
        GoalConfig { seed, ..GoalConfig::default() }
    }

    /// Checks the settings: at least one goal per product and an opener with positive weight.
    pub fn validate(&self) -> Result<(), WebShopError> {
        if self.goals_per_product == 0 {
            return Err(WebShopError::Config("goals_per_product is 0".into()));
        }
        if self.phrasing.openers.is_empty() || self.phrasing.openers.iter().all(|o| o.weight <= 0.0) {
            return Err(WebShopError::Config("phrasing has no opener with positive weight".into()));
        }
        Ok(())
    }

    /// Goals per product.
    #[must_use]
    pub fn with_goals_per_product(mut self, n: usize) -> Self {
        self.goals_per_product = n;
        self
    }

    /// Openers and weights.
    #[must_use]
    pub fn with_phrasing(mut self, phrasing: Phrasing) -> Self {
        self.phrasing = phrasing;
        self
    }

    /// Split sizes.
    #[must_use]
    pub fn with_splits(mut self, splits: SplitSizes) -> Self {
        self.splits = splits;
        self
    }
}

/// The goals of a WebShop, shuffled once; splits are contiguous index ranges.
///
/// Generated goals are phrased like upstream's human instructions ("i am looking for a gluten free protein bars in
/// peanut butter flavor, and price lower than 40.00 dollars"): the openers and their frequencies come from the
/// 12,087 human instructions (`Phrasing::from_human_goals` in `goals.rs` recomputes them from the file).
#[derive(Debug, Clone, PartialEq)]
pub struct GoalSet {
    goals: Vec<Goal>,
    splits: SplitSizes,
}

impl GoalSet {
    /// Wraps goals that are already in split order (validated).
    pub fn new(goals: Vec<Goal>, splits: SplitSizes) -> Result<GoalSet, WebShopError> {
        for goal in &goals {
            goal.validate()?;
        }
        Ok(GoalSet { goals, splits })
    }

    /// Samples goals from every product of `catalogue` (`prices` from [`Catalogue::draw_prices`]), then shuffles.
    pub fn sample(catalogue: &Catalogue, prices: &[f64], config: &GoalConfig) -> Result<GoalSet, WebShopError> {
        if prices.len() != catalogue.len() {
            return Err(WebShopError::Config(format!("{} prices for {} products", prices.len(), catalogue.len())));
        }
        config.validate()?;
        let mut rng = act_core::rng_from_seed(act_core::derive_seed(config.seed, 0x60A1));
        let mut goals = Vec::with_capacity(catalogue.len() * config.goals_per_product);
        for (product, price) in catalogue.products().iter().zip(prices) {
            if product.attributes.is_empty() || product.attributes.iter().all(|a| a == "DUMMY_ATTR") {
                continue;
            }
            for _ in 0..config.goals_per_product {
                goals.push(sample_goal(product, *price, &config.phrasing, &mut rng));
            }
        }
        shuffle(&mut goals, &mut rng);
        GoalSet::new(goals, config.splits)
    }

    /// Upstream's human goals: `items_human_ins.json` maps ASIN -> `[{instruction, instruction_attributes,
    /// instruction_options}]`. Goals for products missing from `catalogue`, and goals without attributes (as
    /// upstream), are skipped; bounds come from `prices` and `seed`, then the goals are shuffled with `seed`.
    pub fn from_upstream_human(
        catalogue: &Catalogue,
        prices: &[f64],
        path: &Path,
        seed: u64,
        splits: SplitSizes,
    ) -> Result<GoalSet, WebShopError> {
        #[derive(Deserialize)]
        struct HumanInstruction {
            instruction: String,
            #[serde(default)]
            instruction_attributes: Vec<String>,
            #[serde(default)]
            instruction_options: Vec<String>,
        }
        let by_asin: HashMap<String, Vec<HumanInstruction>> = read_json(path)?;
        let mut rng = act_core::rng_from_seed(act_core::derive_seed(seed, 0x4A11));
        let mut goals = Vec::new();
        for (product, price) in catalogue.products().iter().zip(prices) {
            let Some(instructions) = by_asin.get(&product.asin) else { continue };
            for human in instructions {
                if human.instruction_attributes.is_empty() {
                    continue;
                }
                let (price_upper, clause) = draw_price_bound(*price, &mut rng);
                let text = human.instruction.trim_matches('.').to_owned();
                goals.push(Goal {
                    asin: product.asin.clone(),
                    category: product.category.clone(),
                    query: product.query.clone(),
                    name: product.title.clone(),
                    product_category: product.product_category.clone(),
                    instruction_text: if clause { text + &price_clause(price_upper) } else { text },
                    attributes: human.instruction_attributes.clone(),
                    price_upper,
                    goal_options: human.instruction_options.clone(),
                    goal_option_names: Vec::new(),
                    weight: 1.0,
                });
            }
        }
        shuffle(&mut goals, &mut rng);
        GoalSet::new(goals, splits)
    }

    /// Every goal, in split order.
    pub fn goals(&self) -> &[Goal] {
        &self.goals
    }

    /// The goal at global index `index`.
    pub fn get(&self, index: usize) -> Option<&Goal> {
        self.goals.get(index)
    }

    /// The global index range of `split`; [`Split::Test`], [`Split::Dev`] and [`Split::Train`] exist.
    pub fn split_range(&self, split: Split) -> Option<std::ops::Range<usize>> {
        let n = self.goals.len();
        let test_end = self.splits.test.min(n);
        let dev_end = (test_end + self.splits.dev).min(n);
        match split {
            Split::Test => Some(0..test_end),
            Split::Dev => Some(test_end..dev_end),
            Split::Train => Some(dev_end..n),
            Split::EvalInDistribution | Split::EvalOutOfDistribution => None,
        }
    }

    /// The split a global goal index belongs to.
    pub fn split_of(&self, index: usize) -> Split {
        let test_end = self.splits.test;
        if index < test_end {
            Split::Test
        } else if index < test_end + self.splits.dev {
            Split::Dev
        } else {
            Split::Train
        }
    }

    /// Writes the goals as JSONL.
    pub fn save_jsonl(&self, path: &Path) -> Result<(), WebShopError> {
        let mut text = String::new();
        for goal in &self.goals {
            text.push_str(&serde_json::to_string(goal).map_err(|e| WebShopError::Data(e.to_string()))?);
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|e| WebShopError::Io { path: path.to_owned(), source: e })
    }

    /// Reads goals written by [`save_jsonl`](Self::save_jsonl) (order kept: it is the split order).
    pub fn load_jsonl(path: &Path, splits: SplitSizes) -> Result<GoalSet, WebShopError> {
        let text = std::fs::read_to_string(path).map_err(|e| WebShopError::Io { path: path.to_owned(), source: e })?;
        let mut goals = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            goals.push(serde_json::from_str(line).map_err(|e| WebShopError::Parse {
                path: path.to_owned(),
                line: i + 1,
                message: e.to_string(),
            })?);
        }
        GoalSet::new(goals, splits)
    }
}

fn shuffle<T>(items: &mut [T], rng: &mut impl rand::Rng) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

/// How an option is named in an instruction ("in navy blue color").
fn option_word(name: &str) -> &str {
    match name {
        "flavor name" => "flavor",
        "item package quantity" => "",
        other => other,
    }
}

fn article_for(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "an " } else { "a " }
}

fn sample_goal(product: &crate::catalog::Product, price: f64, phrasing: &Phrasing, rng: &mut impl rand::Rng) -> Goal {
    // One to three attributes (30% / 45% / 25%), in the product's order.
    let wanted = match rng.random::<f64>() {
        x if x < 0.30 => 1,
        x if x < 0.75 => 2,
        _ => 3,
    }
    .min(product.attributes.len());
    let mut indices: Vec<usize> = (0..product.attributes.len()).collect();
    shuffle(&mut indices, rng);
    let mut chosen: Vec<usize> = indices[..wanted].to_vec();
    chosen.sort_unstable();
    let attributes: Vec<String> = chosen.iter().map(|&i| product.attributes[i].clone()).collect();

    // Each option asked for with probability 0.8; the value uniformly among the product's.
    let mut options: Vec<(String, String)> = Vec::new();
    for option in &product.options {
        if rng.random_bool(0.8) {
            let value = option.values[rng.random_range(0..option.values.len())].clone();
            options.push((option.name.clone(), value));
        }
    }

    let (price_upper, clause) = draw_price_bound(price, rng);
    let opener = phrasing.draw(rng);
    let noun = product.query.as_str();
    let plural = noun.ends_with('s');
    let attrs = attributes.join(" and ");
    let with_article = |first: &str| -> String {
        if plural {
            String::new()
        } else if product.category == "food" {
            "some ".to_owned()
        } else {
            article_for(first).to_owned()
        }
    };
    let body = match rng.random_range(0..3) {
        0 => format!("{}{attrs} {noun}", with_article(&attrs)),
        1 => format!("{}{noun} that {} {attrs}", with_article(noun), if plural { "are" } else { "is" }),
        _ => format!("{}{noun} with {attrs}", with_article(noun)),
    };
    let option_text = if options.is_empty() {
        String::new()
    } else {
        match rng.random_range(0..3) {
            0 => {
                let parts: Vec<String> = options
                    .iter()
                    .map(|(n, v)| {
                        let word = option_word(n);
                        if word.is_empty() { v.clone() } else { format!("{v} {word}") }
                    })
                    .collect();
                format!(" in {}", parts.join(" and "))
            }
            1 => {
                let parts: Vec<String> = options.iter().map(|(n, v)| format!("{n}: {v}")).collect();
                format!(" with {}", parts.join(", and "))
            }
            _ => format!(", {}", options.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join(", ")),
        }
    };
    let mut instruction_text = format!("{opener} {body}{option_text}");
    if clause {
        instruction_text.push_str(&price_clause(price_upper));
    }
    Goal {
        asin: product.asin.clone(),
        category: product.category.clone(),
        query: product.query.clone(),
        name: product.title.clone(),
        product_category: product.product_category.clone(),
        instruction_text,
        attributes,
        price_upper,
        goal_options: options.into_iter().map(|(_, v)| v).collect(),
        goal_option_names: Vec::new(),
        weight: 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::CatalogueConfig;

    fn goals(seed: u64) -> GoalSet {
        let catalogue = CatalogueConfig::new(300, 3).generate().unwrap();
        let prices = catalogue.draw_prices(3);
        GoalSet::sample(&catalogue, &prices, &GoalConfig::with_seed(seed)).unwrap()
    }

    #[test]
    fn price_bound_follows_upstream_grid() {
        let mut rng = act_core::rng_from_seed(0);
        for _ in 0..200 {
            let (bound, clause) = draw_price_bound(23.5, &mut rng);
            assert!(clause);
            assert!([40.0, 50.0, 60.0].contains(&bound), "{bound}");
        }
        assert_eq!(draw_price_bound(985.0, &mut rng), (NO_PRICE_BOUND, false));
        // Exactly two grid prices above: the bound is the larger one.
        assert_eq!(draw_price_bound(975.0, &mut rng), (990.0, true));
        assert_eq!(price_clause(40.0), ", and price lower than 40.00 dollars");
    }

    #[test]
    fn goals_are_reproducible_and_valid() {
        let a = goals(1);
        assert_eq!(a, goals(1));
        assert_ne!(a, goals(2));
        assert_eq!(a.goals().len(), 600);
        for g in a.goals() {
            g.validate().unwrap();
            assert!(g.instruction_text.ends_with(" dollars"), "{}", g.instruction_text);
            assert!(g.instruction_text.contains(", and price lower than "));
            assert_eq!(g.instruction_text, g.instruction_text.to_lowercase());
            for o in &g.goal_options {
                assert!(g.instruction_text.contains(o.as_str()));
            }
        }
    }

    #[test]
    fn splits_partition_by_index() {
        let set = goals(1);
        assert_eq!(set.split_range(Split::Test), Some(0..500));
        assert_eq!(set.split_range(Split::Dev), Some(500..600));
        assert_eq!(set.split_range(Split::Train), Some(600..600));
        assert_eq!(set.split_range(Split::EvalInDistribution), None);
        assert_eq!(set.split_of(499), Split::Test);
        assert_eq!(set.split_of(500), Split::Dev);
    }

    #[test]
    fn invalid_goals_are_rejected() {
        let mut g = goals(1).goals()[0].clone();
        g.attributes.clear();
        assert!(matches!(g.validate(), Err(WebShopError::Goal(_))));
        let mut g = goals(1).goals()[0].clone();
        g.price_upper = 0.0;
        assert!(g.validate().unwrap_err().to_string().contains("non-positive"));
    }

    #[test]
    fn jsonl_round_trip() {
        let set = goals(4);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("goals.jsonl");
        set.save_jsonl(&path).unwrap();
        assert_eq!(GoalSet::load_jsonl(&path, SplitSizes::default()).unwrap(), set);
    }

    #[test]
    fn phrasing_from_real_human_goals() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/webshop/human_goals.json");
        if !path.exists() {
            eprintln!("skipped: {} not present", path.display());
            return;
        }
        let phrasing = Phrasing::from_human_goals(&path).unwrap();
        let top = phrasing.openers.iter().max_by(|a, b| a.weight.total_cmp(&b.weight)).unwrap();
        assert_eq!(top.prefix, "i am looking for");
        // The built-in weights are these counts.
        let defaults = Phrasing::default();
        assert_eq!(phrasing, defaults);
    }
}
