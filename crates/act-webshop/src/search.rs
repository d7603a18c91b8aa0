//! BM25 product search with tantivy, over the text upstream indexes with Pyserini: the lower-cased title,
//! description, first bullet point and option text of every product.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::query::BooleanQuery;
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer, TokenStream,
};
use tantivy::{Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument, Term};

use crate::catalog::Catalogue;
use crate::error::WebShopError;

/// How many products a search returns (upstream's `SEARCH_RETURN_N`).
pub const SEARCH_RETURN_N: usize = 50;

const TOKENIZER: &str = "webshop_english";
const CONTENTS: &str = "contents";
const POSITION: &str = "position";
const FINGERPRINT_FILE: &str = "act-webshop-catalogue.txt";

/// Lucene's English stop words (the list Pyserini's default analyzer removes).
const LUCENE_ENGLISH_STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
    "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
];

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser)
        .filter(StopWordFilter::remove(LUCENE_ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_owned())))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// A BM25 index over a catalogue; hits are catalogue positions.
///
/// The analyzer follows Lucene's English analyzer as Pyserini uses it (Lucene's English stop words, an English
/// stemmer; tantivy's is Snowball's where Lucene's is Porter's), and a query is the OR of its analysed terms, each
/// repeat counting again, as Lucene's classic query parser builds it. tantivy's BM25 uses k1 = 1.2, b = 0.75
/// (Pyserini's defaults are 0.9 and 0.4), so rankings are close to upstream's, not identical.
///
/// Indexes live in memory ([`SearchIndex::in_memory`], for tests and small catalogues) or in a directory
/// ([`SearchIndex::open_or_build`], for large ones), built with one writer thread into one segment so that rankings,
/// ties included, are the same on every run.
pub struct SearchIndex {
    contents: Field,
    searcher: Searcher,
    // Kept so the searcher's segments stay open.
    _reader: IndexReader,
    positions: Vec<Column<u64>>,
    analyzer: TextAnalyzer,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex").field("num_docs", &self.searcher.num_docs()).finish()
    }
}

fn schema() -> (Schema, Field, Field) {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs);
    let contents = builder.add_text_field(CONTENTS, TextOptions::default().set_indexing_options(indexing));
    let position = builder.add_u64_field(POSITION, FAST);
    (builder.build(), contents, position)
}

/// A stable fingerprint of a catalogue (FNV-1a over ASINs and titles), to tell whether an on-disk index fits it.
fn fingerprint(catalogue: &Catalogue) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for product in catalogue.products() {
        for byte in product.asin.bytes().chain([0]).chain(product.title.bytes()).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{} products, fnv1a {hash:016x}", catalogue.len())
}

impl SearchIndex {
    /// Indexes `catalogue` in memory.
    pub fn in_memory(catalogue: &Catalogue) -> Result<SearchIndex, WebShopError> {
        let (schema, contents, position) = schema();
        let index = Index::create_in_ram(schema);
        fill(&index, catalogue, contents, position)?;
        SearchIndex::from_index(index, contents)
    }

    /// Opens the index in `dir` if it was built for `catalogue`, else (re)builds it there.
    pub fn open_or_build(catalogue: &Catalogue, dir: &Path) -> Result<SearchIndex, WebShopError> {
        let io = |e: std::io::Error| WebShopError::Io { path: dir.to_owned(), source: e };
        let expected = fingerprint(catalogue);
        let marker = dir.join(FINGERPRINT_FILE);
        if marker.exists() && std::fs::read_to_string(&marker).map_err(io)? == expected {
            let index = Index::open_in_dir(dir)?;
            let contents = index.schema().get_field(CONTENTS)?;
            return SearchIndex::from_index(index, contents);
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io)?;
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        let (schema, contents, position) = schema();
        let index = Index::create_in_dir(dir, schema)?;
        fill(&index, catalogue, contents, position)?;
        std::fs::write(&marker, expected).map_err(io)?;
        SearchIndex::from_index(index, contents)
    }

    fn from_index(index: Index, contents: Field) -> Result<SearchIndex, WebShopError> {
        index.tokenizers().register(TOKENIZER, analyzer());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let searcher = reader.searcher();
        let positions = searcher
            .segment_readers()
            .iter()
            .map(|segment| segment.fast_fields().u64(POSITION))
            .collect::<tantivy::Result<Vec<_>>>()?;
        Ok(SearchIndex { contents, searcher, _reader: reader, positions, analyzer: analyzer() })
    }

    /// The number of indexed products.
    pub fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// The analysed terms of `text` (lower-cased, stop words removed, stemmed).
    pub fn analyze(&self, text: &str) -> Vec<String> {
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(text);
        let mut terms = Vec::new();
        while stream.advance() {
            terms.push(stream.token().text.clone());
        }
        terms
    }

    /// The catalogue positions of the best `limit` products for `query`, best first. A query with no searchable
    /// term finds nothing.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<usize>, WebShopError> {
        let terms: Vec<Term> =
            self.analyze(&query.to_lowercase()).iter().map(|t| Term::from_field_text(self.contents, t)).collect();
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let query = BooleanQuery::new_multiterms_query(terms);
        let hits = self.searcher.search(&query, &TopDocs::with_limit(limit).order_by_score())?;
        hits.into_iter()
            .map(|(_, address)| {
                self.positions
                    .get(address.segment_ord as usize)
                    .and_then(|column| column.first(address.doc_id))
                    .map(|p| p as usize)
                    .ok_or_else(|| WebShopError::Search(format!("document {address:?} has no position")))
            })
            .collect()
    }
}

fn fill(index: &Index, catalogue: &Catalogue, contents: Field, position: Field) -> Result<(), WebShopError> {
    index.tokenizers().register(TOKENIZER, analyzer());
    // One thread and a budget large enough for one segment: document order, hence tie order, is catalogue order.
    let budget = (catalogue.len() * 4_096).clamp(50_000_000, 1_500_000_000);
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, budget)?;
    for (i, product) in catalogue.products().iter().enumerate() {
        let mut doc = TantivyDocument::default();
        doc.add_text(contents, product.search_text());
        doc.add_u64(position, i as u64);
        writer.add_document(doc)?;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::CatalogueConfig;

    #[test]
    fn finds_products_by_title_words() {
        let catalogue = CatalogueConfig::new(300, 2).generate().unwrap();
        let index = SearchIndex::in_memory(&catalogue).unwrap();
        assert_eq!(index.num_docs(), 300);
        for (i, product) in catalogue.products().iter().enumerate().take(30) {
            let hits = index.search(&product.title, SEARCH_RETURN_N).unwrap();
            assert!(hits.len() <= SEARCH_RETURN_N);
            assert!(hits.iter().take(10).any(|&h| h == i), "{} not in the top 10", product.title);
        }
    }

    #[test]
    fn analysis_stems_and_drops_stop_words() {
        let catalogue = CatalogueConfig::new(10, 2).generate().unwrap();
        let index = SearchIndex::in_memory(&catalogue).unwrap();
        assert_eq!(index.analyze("The Running Shoes for men"), vec!["run", "shoe", "men"]);
        assert!(index.search("the and of", 50).unwrap().is_empty());
        assert!(index.search("", 50).unwrap().is_empty());
        assert!(index.search("\"[]:(*)~^", 50).unwrap().is_empty());
    }

    #[test]
    fn same_query_same_ranking() {
        let catalogue = CatalogueConfig::new(500, 3).generate().unwrap();
        let a = SearchIndex::in_memory(&catalogue).unwrap();
        let b = SearchIndex::in_memory(&catalogue).unwrap();
        for query in ["gluten free protein bars", "black", "queen bed frame", "wireless earbuds charging case"] {
            assert_eq!(a.search(query, 50).unwrap(), b.search(query, 50).unwrap());
        }
    }

    #[test]
    fn on_disk_index_is_reused_and_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let catalogue = CatalogueConfig::new(200, 4).generate().unwrap();
        let built = SearchIndex::open_or_build(&catalogue, &path).unwrap();
        let expected = built.search("coffee beans", 50).unwrap();
        drop(built);
        let reopened = SearchIndex::open_or_build(&catalogue, &path).unwrap();
        assert_eq!(reopened.search("coffee beans", 50).unwrap(), expected);
        let other = CatalogueConfig::new(100, 5).generate().unwrap();
        let rebuilt = SearchIndex::open_or_build(&other, &path).unwrap();
        assert_eq!(rebuilt.num_docs(), 100);
    }
}
