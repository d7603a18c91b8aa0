//! Products and catalogues in WebShop's schema.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use rand::RngExt;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::WebShopError;

/// What upstream shows as the rating of every product (its review data is not loaded).
pub const NO_RATING: &str = "N.A.";

/// One customisation option of a product (say `size` with its values), in page order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProductOption {
    /// The lower-cased option name ("size", "color", "flavor name").
    pub name: String,
    /// The lower-cased values, in page order.
    pub values: Vec<String>,
}

/// A product as the environment uses it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Product {
    /// The 10-character upper-case identifier.
    pub asin: String,
    /// The title (`name` in the scraped item).
    pub title: String,
    /// The top-level category (`beauty`, `electronics`, `fashion`, `food`, `furniture`).
    pub category: String,
    /// The search query the product was collected with (its product type).
    pub query: String,
    /// The category path, levels joined by ` › `.
    pub product_category: String,
    /// The full description.
    pub description: String,
    /// The feature bullet points.
    pub bullet_points: Vec<String>,
    /// One price, or a `[low, high]` range.
    pub pricing: Vec<f64>,
    /// The price as the pages show it (`$12.99` or `$10.0 to $20.0`).
    pub price_tag: String,
    /// The customisation options, in page order.
    pub options: Vec<ProductOption>,
    /// The product's attributes (`Attributes` upstream), used by the reward.
    pub attributes: Vec<String>,
}

impl Product {
    /// The text the search engine indexes: lower-cased title, description, first bullet and option text.
    pub fn search_text(&self) -> String {
        let option_text = self
            .options
            .iter()
            .map(|o| format!("{}: {}", o.name, o.values.join(", ")))
            .collect::<Vec<_>>()
            .join(", and ");
        let first_bullet = self.bullet_points.first().map(String::as_str).unwrap_or("");
        [self.title.as_str(), self.description.as_str(), first_bullet, option_text.as_str()].join(" ").to_lowercase()
    }

    /// The option that offers `value`, if any.
    pub fn option_with_value(&self, value: &str) -> Option<&ProductOption> {
        self.options.iter().find(|o| o.values.iter().any(|v| v == value))
    }

    /// The price upstream charges: the single price, or a draw inside the range (upstream's
    /// `random.uniform(low, high)`), 100.0 when there is no price.
    pub fn draw_price(&self, rng: &mut impl rand::Rng) -> f64 {
        match self.pricing.as_slice() {
            [] => 100.0,
            [single] => *single,
            [low, high, ..] => {
                let (low, high) = if low <= high { (*low, *high) } else { (*high, *low) };
                if high > low { rng.random_range(low..high) } else { low }
            }
        }
    }

    /// Converts back to the scraped-item schema.
    pub fn to_raw(&self) -> RawProduct {
        let pricing = match self.pricing.as_slice() {
            [] => None,
            prices => Some(prices.iter().map(|p| format!("${p:.2}")).collect::<String>()),
        };
        RawProduct {
            asin: self.asin.clone(),
            name: self.title.clone(),
            full_description: self.description.clone(),
            small_description: BulletText::Many(self.bullet_points.clone()),
            pricing,
            customization_options: Some(CustomizationOptions(
                self.options
                    .iter()
                    .map(|o| {
                        let values = o.values.iter().map(|v| OptionContent { value: v.clone(), image: None }).collect();
                        (o.name.clone(), Some(values))
                    })
                    .collect(),
            )),
            images: vec![String::new()],
            category: self.category.clone(),
            query: self.query.clone(),
            product_category: self.product_category.clone(),
            attributes: Some(self.attributes.clone()),
        }
    }

    /// Upstream's `load_products` conversion of one scraped item. `attributes` is the item's entry of
    /// `items_ins_v2*.json` when one exists; without attributes upstream uses `["DUMMY_ATTR"]`.
    pub fn from_raw(raw: RawProduct, attributes: Option<Vec<String>>) -> Result<Product, WebShopError> {
        let pricing = parse_pricing(raw.pricing.as_deref().unwrap_or(""))
            .map_err(|message| WebShopError::Data(format!("product {}: pricing: {message}", raw.asin)))?;
        let price_tag = match pricing.as_slice() {
            [] => "$100.0".to_owned(),
            [single] => format!("${}", python_float(*single)),
            [low, high, ..] => format!("${} to ${}", python_float(*low), python_float(*high)),
        };
        let pricing = if pricing.is_empty() { vec![100.0] } else { pricing.into_iter().take(2).collect() };
        let options = raw
            .customization_options
            .map(|o| o.0)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, contents)| {
                contents.map(|contents| ProductOption {
                    name: name.to_lowercase(),
                    values: contents.into_iter().map(|c| c.value.trim().replace('/', " | ").to_lowercase()).collect(),
                })
            })
            .collect();
        let attributes = attributes.or(raw.attributes).unwrap_or_else(|| vec!["DUMMY_ATTR".to_owned()]);
        Ok(Product {
            asin: raw.asin,
            title: raw.name,
            category: raw.category,
            query: raw.query.trim().to_lowercase(),
            product_category: raw.product_category,
            description: raw.full_description,
            bullet_points: raw.small_description.into_vec(),
            pricing,
            price_tag,
            options,
            attributes,
        })
    }
}

/// Parses upstream's pricing text (`"$12.99"`, `"$10.00$20.00"`, `"$1,299.00 - $1,499.00"`): every `$`-separated
/// part, stripped of everything but digits and dots.
fn parse_pricing(text: &str) -> Result<Vec<f64>, String> {
    text.split('$')
        .skip(1)
        .map(|part| {
            let digits: String = part.chars().filter(|c| c.is_ascii_digit() || *c == '.').collect();
            digits.parse::<f64>().map_err(|_| format!("cannot read a price from `${part}`"))
        })
        .collect()
}

/// Python's `str(float)` for the values prices take: shortest round-trip digits, with `.0` on whole numbers.
pub fn python_float(x: f64) -> String {
    let text = format!("{x}");
    if text.contains(['.', 'e', 'i', 'N']) { text } else { format!("{text}.0") }
}

/// A scraped item in upstream's `items_*.json` schema (extra fields are ignored; `attributes` is our addition so
/// one JSONL file carries what upstream splits over `items_shuffle` and `items_ins_v2`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawProduct {
    /// The identifier.
    pub asin: String,
    /// The title.
    pub name: String,
    /// The description.
    #[serde(default)]
    pub full_description: String,
    /// The bullet points: a list, or a single string.
    #[serde(default)]
    pub small_description: BulletText,
    /// The price text (`"$12.99"` or `"$10.00$20.00"`).
    #[serde(default)]
    pub pricing: Option<String>,
    /// Option name -> values, in page order.
    #[serde(default)]
    pub customization_options: Option<CustomizationOptions>,
    /// Image URLs (unused here; kept for the schema).
    #[serde(default)]
    pub images: Vec<String>,
    /// The top-level category.
    #[serde(default)]
    pub category: String,
    /// The collection query.
    #[serde(default)]
    pub query: String,
    /// The category path.
    #[serde(default)]
    pub product_category: String,
    /// The attributes, when the file carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Vec<String>>,
}

/// `small_description`: upstream stores a list or a single string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BulletText {
    /// A list of bullets.
    Many(Vec<String>),
    /// One bullet.
    One(String),
}

impl Default for BulletText {
    fn default() -> Self {
        BulletText::Many(Vec::new())
    }
}

impl BulletText {
    /// The bullets as a list (upstream wraps a single string in a list).
    pub fn into_vec(self) -> Vec<String> {
        match self {
            BulletText::Many(v) => v,
            BulletText::One(s) => vec![s],
        }
    }
}

/// One option value with its image, as scraped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionContent {
    /// The value text.
    pub value: String,
    /// The image URL, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// `customization_options`: a JSON object whose key order is the page order, so it is read as a list of pairs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CustomizationOptions(pub Vec<(String, Option<Vec<OptionContent>>)>);

impl Serialize for CustomizationOptions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, values) in &self.0 {
            map.serialize_entry(name, values)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for CustomizationOptions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor;
        impl<'de> Visitor<'de> for OrderedVisitor {
            type Value = CustomizationOptions;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of option name -> list of {value, image}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some((name, values)) = access.next_entry::<String, Option<Vec<OptionContent>>>()? {
                    entries.push((name, values));
                }
                Ok(CustomizationOptions(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor)
    }
}

/// Upstream's `items_ins_v2*.json` entry: attributes (and synthetic instruction data, unused here).
#[derive(Debug, Clone, Deserialize)]
struct AttributeEntry {
    #[serde(default)]
    attributes: Option<Vec<String>>,
}

/// A list of products with an ASIN lookup.
///
/// A [`Product`] is what upstream's `load_products` produces from one scraped item: `Title`, `Description`,
/// `BulletPoints`, lower-cased option values with ` | ` for `/`, parsed pricing, attributes. Catalogues are saved as
/// scraped items (upstream's `items_shuffle*.json` rows), so a real upstream file
/// loads with [`Catalogue::load_upstream`] and a generated catalogue round-trips through JSONL.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    products: Vec<Product>,
    by_asin: HashMap<String, usize>,
}

impl Catalogue {
    /// A catalogue of `products`; later duplicates of an ASIN and ASINs that are `nan` or longer than 10
    /// characters are dropped, as upstream does.
    pub fn new(products: Vec<Product>) -> Catalogue {
        let mut kept = Vec::with_capacity(products.len());
        let mut by_asin = HashMap::with_capacity(products.len());
        for product in products {
            if product.asin == "nan" || product.asin.len() > 10 || by_asin.contains_key(&product.asin) {
                continue;
            }
            by_asin.insert(product.asin.clone(), kept.len());
            kept.push(product);
        }
        Catalogue { products: kept, by_asin }
    }

    /// The products, in catalogue order.
    pub fn products(&self) -> &[Product] {
        &self.products
    }

    /// The number of products.
    pub fn len(&self) -> usize {
        self.products.len()
    }

    /// Whether there are no products.
    pub fn is_empty(&self) -> bool {
        self.products.is_empty()
    }

    /// The product at catalogue position `index`.
    pub fn get(&self, index: usize) -> Option<&Product> {
        self.products.get(index)
    }

    /// The catalogue position of `asin` (upper-case, as pages show it).
    pub fn position(&self, asin: &str) -> Option<usize> {
        self.by_asin.get(asin).copied()
    }

    /// The product with `asin`.
    pub fn by_asin(&self, asin: &str) -> Option<&Product> {
        self.position(asin).map(|i| &self.products[i])
    }

    /// A price per product, drawn as upstream's `generate_product_prices` does, from `seed`.
    pub fn draw_prices(&self, seed: u64) -> Vec<f64> {
        let mut rng = act_core::rng_from_seed(seed);
        self.products.iter().map(|p| p.draw_price(&mut rng)).collect()
    }

    /// Saves as JSONL, one scraped item (upstream schema plus `attributes`) per line.
    pub fn save_jsonl(&self, path: &Path) -> Result<(), WebShopError> {
        let io = |e: std::io::Error| WebShopError::Io { path: path.to_owned(), source: e };
        let mut out = BufWriter::new(File::create(path).map_err(io)?);
        for product in &self.products {
            let line = serde_json::to_string(&product.to_raw())
                .map_err(|e| WebShopError::Data(format!("product {}: {e}", product.asin)))?;
            out.write_all(line.as_bytes()).map_err(io)?;
            out.write_all(b"\n").map_err(io)?;
        }
        out.flush().map_err(io)
    }

    /// Loads a JSONL file of scraped items (as [`save_jsonl`](Self::save_jsonl) writes them).
    pub fn load_jsonl(path: &Path) -> Result<Catalogue, WebShopError> {
        let io = |e: std::io::Error| WebShopError::Io { path: path.to_owned(), source: e };
        let reader = BufReader::new(File::open(path).map_err(io)?);
        let mut products = Vec::new();
        for (number, line) in reader.lines().enumerate() {
            let line = line.map_err(io)?;
            if line.trim().is_empty() {
                continue;
            }
            let raw: RawProduct = serde_json::from_str(&line).map_err(|e| WebShopError::Parse {
                path: path.to_owned(),
                line: number + 1,
                message: e.to_string(),
            })?;
            products.push(Product::from_raw(raw, None)?);
        }
        Ok(Catalogue::new(products))
    }

    /// Loads upstream's files: `items_path` is a JSON array of scraped items (`items_shuffle*.json`),
    /// `attributes_path` the optional `items_ins_v2*.json` map of ASIN -> `{attributes, ...}`.
    pub fn load_upstream(items_path: &Path, attributes_path: Option<&Path>) -> Result<Catalogue, WebShopError> {
        let raws: Vec<RawProduct> = read_json(items_path)?;
        let attributes: HashMap<String, AttributeEntry> = match attributes_path {
            Some(path) => read_json(path)?,
            None => HashMap::new(),
        };
        let products = raws
            .into_iter()
            .map(|raw| {
                let attrs = attributes.get(&raw.asin).and_then(|a| a.attributes.clone());
                Product::from_raw(raw, attrs)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Catalogue::new(products))
    }
}

/// Reads a whole JSON file into `T`, naming the file in errors.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, WebShopError> {
    let file = File::open(path).map_err(|e| WebShopError::Io { path: path.to_owned(), source: e })?;
    serde_json::from_reader(BufReader::new(file)).map_err(|e| WebShopError::Parse {
        path: path.to_owned(),
        line: e.line(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_item() -> RawProduct {
        serde_json::from_str(
            r#"{"asin": "B000TEST01", "name": "Acme Shampoo", "full_description": "Gentle.",
                "small_description": "Sulfate free", "pricing": "$10.00$20.50",
                "customization_options": {"Size": [{"value": "8 Fl Oz/Pack of 2", "image": null}],
                                          "Color": null, "Scent": [{"value": "Lavender"}]},
                "images": ["x"], "category": "beauty", "query": " Shampoo ",
                "product_category": "Beauty › Hair Care › Shampoo", "brand": "ignored"}"#,
        )
        .unwrap()
    }

    #[test]
    fn upstream_conversion() {
        let p = Product::from_raw(raw_item(), Some(vec!["sulfate free".into()])).unwrap();
        assert_eq!(p.price_tag, "$10.0 to $20.5");
        assert_eq!(p.pricing, vec![10.0, 20.5]);
        assert_eq!(p.bullet_points, vec!["Sulfate free"]);
        assert_eq!(p.query, "shampoo");
        assert_eq!(p.options.len(), 2);
        assert_eq!(p.options[0].name, "size");
        assert_eq!(p.options[0].values, vec!["8 fl oz | pack of 2"]);
        assert_eq!(p.options[1].name, "scent");
        assert_eq!(p.attributes, vec!["sulfate free"]);
    }

    #[test]
    fn missing_price_and_attributes_follow_upstream() {
        let mut raw = raw_item();
        raw.pricing = None;
        let p = Product::from_raw(raw, None).unwrap();
        assert_eq!(p.price_tag, "$100.0");
        assert_eq!(p.pricing, vec![100.0]);
        assert_eq!(p.attributes, vec!["DUMMY_ATTR"]);
    }

    #[test]
    fn bad_price_is_an_error() {
        let mut raw = raw_item();
        raw.pricing = Some("$abc".into());
        let err = Product::from_raw(raw, None).unwrap_err();
        assert!(err.to_string().contains("B000TEST01"), "{err}");
    }

    #[test]
    fn jsonl_round_trip() {
        let p = Product::from_raw(raw_item(), Some(vec!["sulfate free".into()])).unwrap();
        let catalogue = Catalogue::new(vec![p.clone(), p]);
        assert_eq!(catalogue.len(), 1, "duplicate ASINs are dropped");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        catalogue.save_jsonl(&path).unwrap();
        let loaded = Catalogue::load_jsonl(&path).unwrap();
        assert_eq!(loaded.products(), catalogue.products());
    }

    #[test]
    fn bad_jsonl_names_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        std::fs::write(&path, "{\"asin\": \"A\", \"name\": \"x\"}\n{oops\n").unwrap();
        let err = Catalogue::load_jsonl(&path).unwrap_err();
        assert!(err.to_string().contains(":2:"), "{err}");
    }

    #[test]
    fn python_float_format() {
        assert_eq!(python_float(100.0), "100.0");
        assert_eq!(python_float(12.99), "12.99");
        assert_eq!(python_float(0.5), "0.5");
    }

    #[test]
    fn range_price_is_inside() {
        let p = Product::from_raw(raw_item(), None).unwrap();
        let mut rng = act_core::rng_from_seed(1);
        for _ in 0..100 {
            let price = p.draw_price(&mut rng);
            assert!((10.0..20.5).contains(&price));
        }
    }
}
