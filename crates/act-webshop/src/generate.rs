//! The seeded catalogue generator: realistic products across WebShop's five categories.

use std::collections::HashSet;

use rand::RngExt;

use crate::catalog::{Catalogue, Product, ProductOption, python_float};
use crate::error::WebShopError;
use crate::vocab::{BULLET_LEADS, CATEGORIES, CategorySpec, DESCRIPTION_SENTENCES, Kind};

/// How to generate a catalogue.
///
/// Every product gets a brand, a product type with its category path, 2–6 attributes (some in the title, all in
/// the bullets or description), 0–3 customisation options with 2–6 values each, and a price or a price range.
/// Products of one type share attribute and option pools, so every target has near-miss distractors: the same
/// type without one asked-for attribute, or without the asked-for size.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CatalogueConfig {
    /// How many products (1 to 1,000,000).
    pub num_products: usize,
    /// The seed every choice flows from.
    pub seed: u64,
}

impl Default for CatalogueConfig {
    fn default() -> Self {
        CatalogueConfig { num_products: 1_000, seed: 0 }
    }
}

impl CatalogueConfig {
    /// `num_products` products from `seed`.
    pub fn new(num_products: usize, seed: u64) -> Self {
        CatalogueConfig { num_products, seed }
    }

    /// Checks the settings: between 1 and 1,000,000 products.
    pub fn validate(&self) -> Result<(), WebShopError> {
        if self.num_products == 0 || self.num_products > 1_000_000 {
            return Err(WebShopError::Config(format!(
                "num_products must be between 1 and 1000000, got {}",
                self.num_products
            )));
        }
        Ok(())
    }

    /// Generates the catalogue. The same config always gives the same catalogue.
    pub fn generate(&self) -> Result<Catalogue, WebShopError> {
        self.validate()?;
        let mut rng = act_core::rng_from_seed(act_core::derive_seed(self.seed, 0x0CA7_A106));
        let mut seen = HashSet::with_capacity(self.num_products);
        let mut products = Vec::with_capacity(self.num_products);
        for i in 0..self.num_products {
            // Categories in turn so that every size has all five; the type within the category at random.
            let category = &CATEGORIES[i % CATEGORIES.len()];
            let kind = &category.kinds[rng.random_range(0..category.kinds.len())];
            let asin = loop {
                let candidate = random_asin(&mut rng);
                if seen.insert(candidate.clone()) {
                    break candidate;
                }
            };
            products.push(generate_product(&mut rng, asin, category, kind));
        }
        Ok(Catalogue::new(products))
    }
}

/// `B0` and eight upper-case alphanumerics, like Amazon's ASINs.
fn random_asin(rng: &mut impl rand::Rng) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut asin = String::from("B0");
    for _ in 0..8 {
        asin.push(ALPHABET[rng.random_range(0..ALPHABET.len())] as char);
    }
    asin
}

fn pick<'a, T>(rng: &mut impl rand::Rng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// `count` distinct indices of `0..len`, in increasing order.
fn pick_indices(rng: &mut impl rand::Rng, len: usize, count: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..len).collect();
    for i in 0..count.min(len) {
        let j = rng.random_range(i..len);
        all.swap(i, j);
    }
    let mut chosen = all[..count.min(len)].to_vec();
    chosen.sort_unstable();
    chosen
}

fn title_case(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn generate_product(rng: &mut impl rand::Rng, asin: String, category: &CategorySpec, kind: &Kind) -> Product {
    let brand = *pick(rng, category.brands);
    // Attributes: two or three of the type's own, one to three of the category's.
    let mut attributes: Vec<String> = Vec::new();
    let own = rng.random_range(2..=3);
    for i in pick_indices(rng, kind.attributes.len(), own) {
        attributes.push(kind.attributes[i].to_owned());
    }
    let shared = rng.random_range(1..=3);
    for i in pick_indices(rng, category.attributes.len(), shared) {
        let attribute = category.attributes[i].to_owned();
        if !attributes.contains(&attribute) {
            attributes.push(attribute);
        }
    }
    // Shuffle so that the title does not always show the type's own attributes.
    for i in (1..attributes.len()).rev() {
        let j = rng.random_range(0..=i);
        attributes.swap(i, j);
    }

    let descriptor = *pick(rng, kind.descriptors);
    let title_attributes = rng.random_range(1..=2).min(attributes.len());
    let title = format!(
        "{brand} {} {} - {}",
        title_case(descriptor),
        title_case(kind.noun),
        attributes[..title_attributes].iter().map(|a| title_case(a)).collect::<Vec<_>>().join(", ")
    );

    // Options: each of the type's options is offered with probability 0.85, with 2-6 values from its pool.
    let mut options = Vec::new();
    for (name, pool) in kind.options {
        if rng.random_bool(0.85) {
            let count = rng.random_range(2..=pool.len().clamp(2, 6));
            let values = pick_indices(rng, pool.len(), count).into_iter().map(|i| pool[i].to_owned()).collect();
            options.push(ProductOption { name: (*name).to_owned(), values });
        }
    }

    // The description mentions the attributes not in the bullets; the bullets mention the rest.
    let in_bullets = rng.random_range(1..=attributes.len());
    let mut bullet_points = Vec::new();
    for attribute in &attributes[..in_bullets] {
        let lead = *pick(rng, BULLET_LEADS);
        bullet_points.push(format!("{lead}: {} {} with {attribute} for lasting comfort and value.", brand, kind.noun));
    }
    if let Some(option) = options.first() {
        bullet_points.push(format!(
            "AVAILABLE OPTIONS: choose your {} from {}.",
            option.name,
            option.values.join(", ")
        ));
    }
    let mut sentences = Vec::new();
    for attribute in &attributes[in_bullets..] {
        sentences.push(pick(rng, DESCRIPTION_SENTENCES).replace("{noun}", kind.noun).replace("{attr}", attribute));
    }
    sentences.push(
        pick(rng, DESCRIPTION_SENTENCES).replace("{noun}", kind.noun).replace("{attr}", &format!("{descriptor} style")),
    );
    let description = sentences.join(" ");

    // Price: 75% one price, 25% a range; prices end in .99 like shop prices.
    let (low, high) = kind.price;
    let base = (low + (high - low) * rng.random::<f64>()).floor() + 0.99;
    let pricing = if rng.random_bool(0.25) {
        let top = (base * rng.random_range(1.15..1.8)).floor() + 0.99;
        vec![base, top]
    } else {
        vec![base]
    };
    let price_tag = match pricing.as_slice() {
        [single] => format!("${}", python_float(*single)),
        [a, b, ..] => format!("${} to ${}", python_float(*a), python_float(*b)),
        [] => "$100.0".to_owned(),
    };

    let product_category =
        std::iter::once(category.root).chain(kind.path.iter().copied()).collect::<Vec<_>>().join(" › ");
    Product {
        asin,
        title,
        category: category.name.to_owned(),
        query: kind.noun.to_owned(),
        product_category,
        description,
        bullet_points,
        pricing,
        price_tag,
        options,
        attributes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_catalogue() {
        let a = CatalogueConfig::new(200, 5).generate().unwrap();
        let b = CatalogueConfig::new(200, 5).generate().unwrap();
        assert_eq!(a.products(), b.products());
        let c = CatalogueConfig::new(200, 6).generate().unwrap();
        assert_ne!(a.products(), c.products());
    }

    #[test]
    fn products_are_well_formed() {
        let catalogue = CatalogueConfig::new(500, 1).generate().unwrap();
        assert_eq!(catalogue.len(), 500);
        let mut categories = HashSet::new();
        for p in catalogue.products() {
            categories.insert(p.category.clone());
            assert_eq!(p.asin.len(), 10);
            assert!(p.asin.starts_with("B0"));
            assert!(p.attributes.len() >= 2, "{p:?}");
            assert!(!p.bullet_points.is_empty());
            assert!(p.product_category.split(" › ").count() >= 3);
            assert!(p.pricing[0] > 0.0);
            for o in &p.options {
                assert!(o.values.len() >= 2);
                assert!(o.values.iter().all(|v| *v == v.to_lowercase()));
            }
            // Every attribute is findable by the reward's text check.
            let text = format!("{} {} {}", p.title, p.bullet_points.join(" "), p.description).to_lowercase();
            for a in &p.attributes {
                assert!(text.contains(a.as_str()), "{a} missing from {text}");
            }
        }
        assert_eq!(categories.len(), 5);
    }

    #[test]
    fn rejects_bad_sizes() {
        assert!(CatalogueConfig::new(0, 1).generate().is_err());
        assert!(CatalogueConfig::new(2_000_000, 1).generate().is_err());
    }
}
