//! WebShop's pages as upstream's text mode shows them: the visible texts of the rendered page, stripped and joined
//! with ` [SEP] `, and the clickables a text agent may name.
//!
//! The texts and their order follow upstream's templates (`search_page.html`, `results_page.html`,
//! `item_page.html`, the sub-pages and `done_page.html`); clickables follow `get_available_actions`: buttons and
//! product links lower-cased, then option values as they are, one entry per distinct text (a later element with
//! the same text replaces the earlier one, as in upstream's dict).

use crate::catalog::{NO_RATING, Product, python_float};

/// Separator between the visible texts of a page.
pub const SEP: &str = " [SEP] ";
/// The purchase button.
pub const BUY_NOW: &str = "Buy Now";
/// The next-page button.
pub const NEXT_PAGE: &str = "Next >";
/// The previous-page button.
pub const PREV_PAGE: &str = "< Prev";
/// The button back to the start page.
pub const BACK_TO_SEARCH: &str = "Back to Search";
/// Results per page (upstream's `PRODUCT_WINDOW`).
pub const PRODUCT_WINDOW: usize = 10;

/// The sub-pages of an item page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubPage {
    /// The full description.
    Description,
    /// The bullet points.
    Features,
    /// Reviews (upstream loads none).
    Reviews,
    /// Attributes and categories (only with `show_attrs`).
    Attributes,
}

impl SubPage {
    /// The button text.
    pub fn label(self) -> &'static str {
        match self {
            SubPage::Description => "Description",
            SubPage::Features => "Features",
            SubPage::Reviews => "Reviews",
            SubPage::Attributes => "Attributes",
        }
    }

    /// The sub-page a lower-cased click names.
    pub fn from_click(name: &str) -> Option<SubPage> {
        [SubPage::Description, SubPage::Features, SubPage::Reviews, SubPage::Attributes]
            .into_iter()
            .find(|s| s.label().eq_ignore_ascii_case(name))
    }
}

/// Which page the session is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageKind {
    /// The search page.
    Start,
    /// A page of search results.
    Results,
    /// A product page.
    Item,
    /// A product's sub-page.
    Sub(SubPage),
    /// After Buy Now.
    Done,
}

/// What a clickable does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClickTarget {
    /// The search button (clicking it does nothing; upstream rejects `click[search]`).
    SearchButton,
    /// A navigation or purchase button, by its label.
    Button(&'static str),
    /// A product link on the results page (catalogue position).
    Product(usize),
    /// A radio button for an option value.
    OptionValue {
        /// The option name.
        name: String,
        /// The value.
        value: String,
    },
}

/// One clickable: the text an agent names in `click[...]` and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clickable {
    /// The click text (lower-cased for buttons and links; option values as they are).
    pub text: String,
    /// The element.
    pub target: ClickTarget,
}

/// A rendered page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The visible texts, in page order.
    pub parts: Vec<String>,
    /// The clickables, in upstream's order.
    pub clickables: Vec<Clickable>,
    /// Whether the page has a search bar.
    pub has_search_bar: bool,
}

impl Page {
    /// The text observation (`parts` joined with ` [SEP] `).
    pub fn observation(&self) -> String {
        self.parts.join(SEP)
    }

    /// The clickable named `text`.
    pub fn clickable(&self, text: &str) -> Option<&Clickable> {
        self.clickables.iter().find(|c| c.text == text)
    }

    /// The click texts.
    pub fn clickable_texts(&self) -> Vec<String> {
        self.clickables.iter().map(|c| c.text.clone()).collect()
    }
}

/// Collects page texts and clickables as BeautifulSoup would see them.
#[derive(Default)]
struct PageBuilder {
    parts: Vec<String>,
    clickables: Vec<Clickable>,
    has_search_bar: bool,
}

impl PageBuilder {
    /// A text node: stripped, and dropped when only whitespace.
    fn text(&mut self, text: &str) {
        let trimmed = text.trim();
        if !trimmed.is_empty() {
            self.parts.push(trimmed.to_owned());
        }
    }

    /// A clickable with dict semantics: a repeated text keeps its first position and takes the new target.
    fn clickable(&mut self, text: String, target: ClickTarget) {
        match self.clickables.iter_mut().find(|c| c.text == text) {
            Some(existing) => existing.target = target,
            None => self.clickables.push(Clickable { text, target }),
        }
    }

    fn button(&mut self, label: &'static str) {
        self.text(label);
        self.clickable(label.to_lowercase(), ClickTarget::Button(label));
    }

    fn instruction(&mut self, instruction: &str) {
        self.text("Instruction:");
        self.text(instruction);
    }

    fn finish(self) -> Page {
        Page { parts: self.parts, clickables: self.clickables, has_search_bar: self.has_search_bar }
    }
}

/// The start page.
pub fn start_page(instruction: &str) -> Page {
    let mut b = PageBuilder::default();
    b.text("WebShop");
    b.instruction(instruction);
    b.has_search_bar = true;
    b.text("Search");
    b.clickable("search".to_owned(), ClickTarget::SearchButton);
    b.finish()
}

/// A results page: `page` (1-based) of `results` (catalogue positions), `products` resolving them.
pub fn results_page<'a>(
    instruction: &str,
    page: usize,
    results: &[usize],
    products: impl Fn(usize) -> Option<&'a Product>,
) -> Page {
    let mut b = PageBuilder::default();
    b.instruction(instruction);
    b.button(BACK_TO_SEARCH);
    b.text(&format!("Page {page} (Total results: {})", results.len()));
    if page > 1 {
        b.button(PREV_PAGE);
    }
    b.button(NEXT_PAGE);
    let start = page.saturating_sub(1).saturating_mul(PRODUCT_WINDOW);
    for &position in results.iter().skip(start).take(PRODUCT_WINDOW) {
        if let Some(product) = products(position) {
            b.text(&product.asin);
            b.clickable(product.asin.to_lowercase(), ClickTarget::Product(position));
            b.text(&product.title);
            b.text(&product.price_tag);
        }
    }
    b.finish()
}

/// A product page (`show_attrs` adds upstream's optional Attributes button).
pub fn item_page(instruction: &str, product: &Product, show_attrs: bool) -> Page {
    let mut b = PageBuilder::default();
    b.instruction(instruction);
    b.button(BACK_TO_SEARCH);
    b.button(PREV_PAGE);
    // Radio inputs come after every button in upstream's clickables, so collect them separately.
    let mut radios = Vec::new();
    for option in &product.options {
        b.text(&option.name);
        for value in &option.values {
            b.text(value);
            radios.push((value.clone(), option.name.clone()));
        }
    }
    b.text(&product.title);
    b.text(&format!("Price: {}", product.price_tag));
    b.text(&format!("Rating: {NO_RATING}"));
    b.button(SubPage::Description.label());
    b.button(SubPage::Features.label());
    b.button(SubPage::Reviews.label());
    if show_attrs {
        b.button(SubPage::Attributes.label());
    }
    b.button(BUY_NOW);
    for (value, name) in radios {
        b.clickable(value.clone(), ClickTarget::OptionValue { name, value });
    }
    b.finish()
}

/// A product's sub-page.
pub fn sub_page(instruction: &str, product: &Product, sub: SubPage) -> Page {
    let mut b = PageBuilder::default();
    b.instruction(instruction);
    b.button(BACK_TO_SEARCH);
    b.button(PREV_PAGE);
    match sub {
        SubPage::Description => b.text(&product.description),
        SubPage::Features => {
            for bullet in &product.bullet_points {
                b.text(bullet);
            }
        }
        // Upstream loads no reviews, so the page lists none.
        SubPage::Reviews => {}
        SubPage::Attributes => {
            for attribute in &product.attributes {
                b.text(attribute);
            }
            b.text(&product.category);
            b.text(&product.query);
            b.text(&product.product_category);
        }
    }
    b.finish()
}

/// Python's `repr` of a reward (shortest round-trip digits, `.0` on whole numbers).
pub fn reward_repr(reward: f64) -> String {
    python_float(reward)
}

/// The page after Buy Now, with the texts upstream's `done_page.html` renders in the text environment (no MTurk
/// code, no goal details).
pub fn done_page(asin: &str, options: &[(String, String)], reward: f64) -> Page {
    let mut sorted: Vec<&(String, String)> = options.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let options_json = format!(
        "{{{}}}",
        sorted.iter().map(|(k, v)| format!("{}: {}", json_string(k), json_string(v))).collect::<Vec<_>>().join(", ")
    );
    let mut b = PageBuilder::default();
    for text in [
        "Thank you for shopping with us!",
        "Your code:",
        "None",
        "(Paste it in your MTurk interface.)",
        "Purchased",
        "asin",
    ] {
        b.text(text);
    }
    b.text(asin);
    b.text("options");
    b.text(&options_json);
    for text in [
        "attrs",
        "None",
        "category",
        "None",
        "query",
        "None",
        "product category",
        "None",
        "Target",
        "asin",
        "options",
        "attrs",
        "price upper",
        "instuction text",
        "category",
        "product category",
        "query",
        "Goal",
        "None",
        "Reward",
        "Your score (min 0.0, max 1.0)",
    ] {
        b.text(text);
    }
    b.text(&reward_repr(reward));
    b.text("Reward Details");
    b.text("None");
    b.finish()
}

/// A JSON string as Flask's `tojson` writes it (ASCII-only, HTML-sensitive characters escaped).
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\'' => out.push_str("\\u0027"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ProductOption;

    fn product() -> Product {
        Product {
            asin: "B0ABCDEF12".into(),
            title: "Acme Classic T-Shirt".into(),
            category: "fashion".into(),
            query: "t-shirt".into(),
            product_category: "Clothing › Men › Shirts".into(),
            description: "  Soft cotton.  ".into(),
            bullet_points: vec!["Machine wash".into(), "Crew neck".into()],
            pricing: vec![12.99],
            price_tag: "$12.99".into(),
            options: vec![
                ProductOption { name: "color".into(), values: vec!["black".into(), "navy blue".into()] },
                ProductOption { name: "size".into(), values: vec!["small".into(), "large".into()] },
            ],
            attributes: vec!["machine wash".into()],
        }
    }

    #[test]
    fn start_page_text() {
        let page = start_page("i need a shirt, and price lower than 20.00 dollars");
        assert_eq!(
            page.observation(),
            "WebShop [SEP] Instruction: [SEP] i need a shirt, and price lower than 20.00 dollars [SEP] Search"
        );
        assert_eq!(page.clickable_texts(), vec!["search"]);
        assert!(page.has_search_bar);
    }

    #[test]
    fn item_page_text_and_clickables() {
        let page = item_page("i need a shirt", &product(), false);
        assert_eq!(
            page.observation(),
            "Instruction: [SEP] i need a shirt [SEP] Back to Search [SEP] < Prev [SEP] color [SEP] black [SEP] \
             navy blue [SEP] size [SEP] small [SEP] large [SEP] Acme Classic T-Shirt [SEP] Price: $12.99 [SEP] \
             Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"
        );
        assert_eq!(
            page.clickable_texts(),
            vec![
                "back to search",
                "< prev",
                "description",
                "features",
                "reviews",
                "buy now",
                "black",
                "navy blue",
                "small",
                "large"
            ]
        );
    }

    #[test]
    fn results_pages() {
        let p = product();
        let results = vec![0; 23];
        let lookup = |_: usize| Some(&p);
        let first = results_page("x", 1, &results, lookup);
        assert!(first.observation().starts_with(
            "Instruction: [SEP] x [SEP] Back to Search [SEP] Page 1 (Total results: 23) [SEP] Next > [SEP] \
             B0ABCDEF12 [SEP] Acme Classic T-Shirt [SEP] $12.99"
        ));
        // Ten identical links collapse into one clickable, as in upstream's dict.
        assert_eq!(first.clickable_texts(), vec!["back to search", "next >", "b0abcdef12"]);
        let third = results_page("x", 3, &results, lookup);
        assert!(third.observation().contains("Page 3 (Total results: 23) [SEP] < Prev [SEP] Next >"));
        assert_eq!(third.observation().matches("B0ABCDEF12").count(), 3);
        let past_end = results_page("x", 4, &results, lookup);
        assert!(past_end.observation().ends_with("< Prev [SEP] Next >"));
    }

    #[test]
    fn sub_pages() {
        let p = product();
        assert_eq!(
            sub_page("x", &p, SubPage::Description).observation(),
            "Instruction: [SEP] x [SEP] Back to Search [SEP] < Prev [SEP] Soft cotton."
        );
        assert!(
            sub_page("x", &p, SubPage::Features).observation().ends_with("< Prev [SEP] Machine wash [SEP] Crew neck")
        );
        assert!(sub_page("x", &p, SubPage::Reviews).observation().ends_with("< Prev"));
        assert_eq!(sub_page("x", &p, SubPage::Reviews).clickable_texts(), vec!["back to search", "< prev"]);
    }

    #[test]
    fn done_page_reports_reward() {
        let page = done_page("B0ABCDEF12", &[("size".into(), "large".into()), ("color".into(), "black".into())], 0.75);
        let text = page.observation();
        assert!(text.contains("B0ABCDEF12 [SEP] options [SEP] {\"color\": \"black\", \"size\": \"large\"}"), "{text}");
        assert!(text.contains("Your score (min 0.0, max 1.0) [SEP] 0.75"));
        assert!(page.clickables.is_empty());
        assert!(done_page("A", &[], 1.0).observation().contains("[SEP] 1.0 [SEP]"));
    }
}
