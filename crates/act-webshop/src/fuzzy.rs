//! Fuzzy string matching as WebShop's reward uses it: thefuzz's `token_set_ratio`, rebuilt on
//! [`rapidfuzz::fuzz::ratio`], and upstream's colour normalisation.
//!
//! thefuzz pre-processes both strings (drops non-ASCII characters, turns every non-alphanumeric character into a
//! space, lower-cases, trims), compares the sorted token sets and rounds the best of three ratios to a whole number
//! (Python's round-half-to-even) before the caller's `> 85` test.
//!
//! One choice differs from upstream's pin: [`full_process`] turns `_` into a space, as thefuzz does since it moved
//! onto rapidfuzz (and rapidfuzz's `default_process`), while the thefuzz 0.19 that WebShop pins keeps it (its
//! pre-processing replaces the regex class `\W`, which does not contain `_`). `pink_cotton` is then two tokens
//! here and one there; WebShop's titles, options and attributes rarely contain `_`.

/// The threshold the reward applies: a pair matches when the rounded score is strictly above it.
pub const MATCH_THRESHOLD: u32 = 85;

/// thefuzz's `full_process(s, force_ascii=True)`: ASCII only, non-alphanumerics to spaces, lower case, trimmed.
pub fn full_process(text: &str) -> String {
    let mapped: String = text
        .chars()
        .filter(char::is_ascii)
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { ' ' })
        .collect();
    mapped.trim().to_owned()
}

/// thefuzz's `fuzz.token_set_ratio(a, b)`: a whole number in 0..=100.
///
/// ```
/// use act_webshop::fuzzy::token_set_ratio;
/// assert_eq!(token_set_ratio("machine wash", "Machine-Wash cotton"), 100);
/// assert!(token_set_ratio("navy blue", "red") < 50);
/// ```
pub fn token_set_ratio(a: &str, b: &str) -> u32 {
    round_half_even(token_set_ratio_raw(a, b))
}

/// Whether `a` and `b` match under the reward's rule (rounded token-set ratio above 85).
pub fn fuzzy_match(a: &str, b: &str) -> bool {
    token_set_ratio(a, b) > MATCH_THRESHOLD
}

/// The unrounded token-set ratio (0.0..=100.0), after thefuzz's pre-processing.
pub fn token_set_ratio_raw(a: &str, b: &str) -> f64 {
    let a = full_process(a);
    let b = full_process(b);
    let mut tokens_a: Vec<&str> = a.split_whitespace().collect();
    let mut tokens_b: Vec<&str> = b.split_whitespace().collect();
    if tokens_a.is_empty() || tokens_b.is_empty() {
        return 0.0;
    }
    tokens_a.sort_unstable();
    tokens_a.dedup();
    tokens_b.sort_unstable();
    tokens_b.dedup();
    let intersection: Vec<&str> = tokens_a.iter().copied().filter(|t| tokens_b.binary_search(t).is_ok()).collect();
    let diff_ab: Vec<&str> = tokens_a.iter().copied().filter(|t| tokens_b.binary_search(t).is_err()).collect();
    let diff_ba: Vec<&str> = tokens_b.iter().copied().filter(|t| tokens_a.binary_search(t).is_err()).collect();
    // One token set contains the other.
    if !intersection.is_empty() && (diff_ab.is_empty() || diff_ba.is_empty()) {
        return 100.0;
    }
    let sect = intersection.join(" ");
    let ab = diff_ab.join(" ");
    let ba = diff_ba.join(" ");
    let with_sect = |rest: &str| if sect.is_empty() { rest.to_owned() } else { format!("{sect} {rest}") };
    let sect_ab = with_sect(&ab);
    let sect_ba = with_sect(&ba);
    let mut best = ratio(&sect_ab, &sect_ba);
    if !sect.is_empty() {
        best = best.max(ratio(&sect, &sect_ab)).max(ratio(&sect, &sect_ba));
    }
    best
}

/// rapidfuzz's `fuzz.ratio` on characters, scaled to 0..=100 as Python's rapidfuzz reports it.
fn ratio(a: &str, b: &str) -> f64 {
    100.0 * rapidfuzz::fuzz::ratio(a.chars(), b.chars())
}

/// Python's `int(round(x))` for non-negative scores: halves go to the even neighbour.
fn round_half_even(x: f64) -> u32 {
    let rounded = x.round_ties_even();
    if rounded <= 0.0 { 0 } else { rounded as u32 }
}

/// Upstream's colour list (`normalize.py` `COLOR_SET`), in its order: the first one contained in an option wins.
pub const COLOR_SET: [&str; 102] = [
    "alabaster",
    "apricot",
    "aqua",
    "ash",
    "asphalt",
    "azure",
    "banana",
    "beige",
    "black",
    "blue",
    "blush",
    "bordeaux",
    "bronze",
    "brown",
    "burgundy",
    "camel",
    "camo",
    "caramel",
    "champagne",
    "charcoal",
    "cheetah",
    "chestnut",
    "chocolate",
    "christmas",
    "coffee",
    "cognac",
    "copper",
    "coral",
    "cranberry",
    "cream",
    "crystal",
    "dark",
    "denim",
    "eggplant",
    "elephant",
    "espresso",
    "fuchsia",
    "gold",
    "granite",
    "grape",
    "graphite",
    "grass",
    "gray",
    "green",
    "grey",
    "heather",
    "indigo",
    "ivory",
    "ivy",
    "khaki",
    "lavender",
    "lemon",
    "leopard",
    "light",
    "lilac",
    "lime",
    "magenta",
    "maroon",
    "mauve",
    "merlot",
    "midnight",
    "mint",
    "mocha",
    "multicolor",
    "mushroom",
    "mustard",
    "natural",
    "navy",
    "nude",
    "olive",
    "orange",
    "peach",
    "pewter",
    "pink",
    "plum",
    "purple",
    "rainbow",
    "red",
    "rose",
    "royal",
    "rust",
    "sand",
    "sapphire",
    "seashell",
    "silver",
    "skull",
    "slate",
    "steel",
    "stone",
    "stonewash",
    "sunflower",
    "tan",
    "taupe",
    "teal",
    "tiger",
    "turquoise",
    "violet",
    "walnut",
    "wheat",
    "white",
    "wine",
    "yellow",
];

/// Upstream's `normalize_color`: the first colour of [`COLOR_SET`] that occurs as a substring, else the text.
///
/// ```
/// use act_webshop::fuzzy::normalize_color;
/// assert_eq!(normalize_color("navy blue"), "blue"); // "blue" precedes "navy" in upstream's list
/// assert_eq!(normalize_color("x-large"), "x-large");
/// ```
pub fn normalize_color(option: &str) -> &str {
    COLOR_SET.iter().copied().find(|colour| option.contains(colour)).unwrap_or(option)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_matches_thefuzz() {
        assert_eq!(full_process("  Pack of 2 (12-Ounce)! "), "pack of 2  12 ounce");
        assert_eq!(full_process("café"), "caf");
        assert_eq!(full_process("!!!"), "");
    }

    #[test]
    fn subset_scores_100() {
        assert_eq!(token_set_ratio("gluten free", "certified gluten free snack"), 100);
        assert_eq!(token_set_ratio("a b", "b a"), 100);
    }

    #[test]
    fn empty_scores_zero() {
        assert_eq!(token_set_ratio("", "abc"), 0);
        assert_eq!(token_set_ratio("---", "abc"), 0);
    }

    #[test]
    fn hand_worked_ratios() {
        // No shared token: ratio("abcd", "abce") = 100 * (1 - 2/8) = 75.
        assert_eq!(token_set_ratio("abcd", "abce"), 75);
        // sect = "x", ab = "abcd", ba = "abce": sect_ab = "x abcd" (6), sect_ba = "x abce" (6)
        // ratios: full pair 1 - 2/12 = 83.33; sect vs sect_ab: 1 - 5/7 = 28.6 -> best 83.33 -> 83.
        assert_eq!(token_set_ratio("x abcd", "x abce"), 83);
        // "long lasting" vs "long-lasting" processes to identical tokens.
        assert_eq!(token_set_ratio("long lasting", "Long-Lasting"), 100);
        // Plural: "hair extension" vs "hair extensions": sect "hair", ab "extension" (9), ba "extensions" (10):
        // full ratio = 1 - 1/(14+15) = 96.55 -> 97.
        assert_eq!(token_set_ratio("hair extension", "hair extensions"), 97);
        assert!(fuzzy_match("hair extension", "hair extensions"));
    }

    #[test]
    fn rounding_is_half_even() {
        assert_eq!(round_half_even(85.5), 86);
        assert_eq!(round_half_even(84.5), 84);
        assert_eq!(round_half_even(85.4), 85);
        assert_eq!(round_half_even(85.1), 85);
    }

    #[test]
    fn colour_normalisation_follows_upstream_order() {
        assert_eq!(normalize_color("dark blue"), "blue");
        assert_eq!(normalize_color("charcoal grey"), "charcoal");
        assert_eq!(normalize_color("ashley"), "ash");
        assert_eq!(normalize_color("large"), "large");
    }
}
