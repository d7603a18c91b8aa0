//! A [`WebShopWorld`]: everything environments share read-only — catalogue, prices, goals, search index and noun
//! lexicon — built once and handed to every environment behind an `Arc`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::catalog::{Catalogue, Product};
use crate::error::WebShopError;
use crate::generate::CatalogueConfig;
use crate::goals::{Goal, GoalConfig, GoalSet};
use crate::reward::NounLexicon;
use crate::search::SearchIndex;

/// How to build a generated world. The default is 1,000 products, two goals per product, everything from seed 0,
/// index in memory.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct WorldConfig {
    /// The catalogue.
    pub catalogue: CatalogueConfig,
    /// The goals.
    pub goals: GoalConfig,
    /// Where to keep the search index; `None` keeps it in memory.
    pub index_dir: Option<PathBuf>,
}

impl WorldConfig {
    /// `num_products` products and two goals per product, everything from `seed`, index in memory.
    pub fn new(num_products: usize, seed: u64) -> Self {
        WorldConfig {
            catalogue: CatalogueConfig::new(num_products, seed),
            goals: GoalConfig::with_seed(seed),
            index_dir: None,
        }
    }

    /// Keeps the search index in `dir` (reused when it fits the catalogue).
    #[must_use]
    pub fn with_index_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.index_dir = Some(dir.into());
        self
    }

    /// Uses `goals` for goal sampling.
    #[must_use]
    pub fn with_goals(mut self, goals: GoalConfig) -> Self {
        self.goals = goals;
        self
    }

    /// Checks the catalogue and goal settings.
    pub fn validate(&self) -> Result<(), WebShopError> {
        self.catalogue.validate()?;
        self.goals.validate()
    }

    /// Generates the catalogue, draws prices, samples goals and builds the index.
    pub fn build(&self) -> Result<WebShopWorld, WebShopError> {
        self.validate()?;
        let catalogue = self.catalogue.generate()?;
        let prices = catalogue.draw_prices(act_core::derive_seed(self.catalogue.seed, 0x9_1CE5));
        let goals = GoalSet::sample(&catalogue, &prices, &self.goals)?;
        let index = match &self.index_dir {
            Some(dir) => SearchIndex::open_or_build(&catalogue, dir)?,
            None => SearchIndex::in_memory(&catalogue)?,
        };
        WebShopWorld::from_parts(catalogue, prices, goals, index)
    }
}

/// The shared, immutable state of a WebShop.
#[derive(Debug)]
pub struct WebShopWorld {
    catalogue: Catalogue,
    prices: Vec<f64>,
    goals: GoalSet,
    goal_targets: Vec<usize>,
    index: SearchIndex,
    lexicon: NounLexicon,
}

impl WebShopWorld {
    /// A world from its parts; every goal's target must be in the catalogue and `prices` must match it.
    pub fn from_parts(
        catalogue: Catalogue,
        prices: Vec<f64>,
        goals: GoalSet,
        index: SearchIndex,
    ) -> Result<WebShopWorld, WebShopError> {
        if prices.len() != catalogue.len() {
            return Err(WebShopError::Config(format!("{} prices for {} products", prices.len(), catalogue.len())));
        }
        if index.num_docs() != catalogue.len() as u64 {
            return Err(WebShopError::Config(format!(
                "the search index holds {} products, the catalogue {}",
                index.num_docs(),
                catalogue.len()
            )));
        }
        let goal_targets = goals
            .goals()
            .iter()
            .map(|g| {
                catalogue
                    .position(&g.asin)
                    .ok_or_else(|| WebShopError::Goal(format!("target {} is not in the catalogue", g.asin)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let lexicon = NounLexicon::from_catalogue(&catalogue);
        Ok(WebShopWorld { catalogue, prices, goals, goal_targets, index, lexicon })
    }

    /// A generated world in memory: `num_products` products, everything from `seed`.
    pub fn generate(num_products: usize, seed: u64) -> Result<Arc<WebShopWorld>, WebShopError> {
        Ok(Arc::new(WorldConfig::new(num_products, seed).build()?))
    }

    /// The catalogue.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// The price each product sells at (catalogue order).
    pub fn prices(&self) -> &[f64] {
        &self.prices
    }

    /// The goals.
    pub fn goals(&self) -> &GoalSet {
        &self.goals
    }

    /// The search index.
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }

    /// The noun lexicon the type reward uses.
    pub fn lexicon(&self) -> &NounLexicon {
        &self.lexicon
    }

    /// The product at catalogue position `position`.
    pub fn product(&self, position: usize) -> Option<&Product> {
        self.catalogue.get(position)
    }

    /// Goal `index` and its target's catalogue position.
    pub fn goal(&self, index: usize) -> Option<(&Goal, usize)> {
        Some((self.goals.get(index)?, *self.goal_targets.get(index)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_reads_partial_json_and_validates_in_one_place() {
        let config: WorldConfig = serde_json::from_str(r#"{"catalogue": {"num_products": 50}}"#).unwrap();
        assert_eq!(config, WorldConfig { catalogue: CatalogueConfig::new(50, 0), ..WorldConfig::default() });
        assert_eq!(WorldConfig::default(), WorldConfig::new(1_000, 0));
        config.validate().unwrap();
        let no_products = WorldConfig { catalogue: CatalogueConfig::new(0, 0), ..config.clone() };
        assert!(no_products.validate().unwrap_err().to_string().contains("num_products"));
        assert!(no_products.build().is_err());
        let no_goals = config.with_goals(GoalConfig::default().with_goals_per_product(0));
        assert!(no_goals.validate().unwrap_err().to_string().contains("goals_per_product"));
    }
}
