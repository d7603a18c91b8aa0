//! Invalid actions: what the driver does with an action the environment does not list ([`InvalidActionHandling`]),
//! and the admissible action nearest to it ([`nearest_admissible`]).

use act_core::{Action, admits, normalize_action};
use serde::{Deserialize, Serialize};

/// What to do with an action that is not admissible (or an output with no parseable action).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InvalidActionHandling {
    /// Send it to the environment unchanged (an unparseable output is sent as its trimmed text), which answers as
    /// the real benchmark does. The default.
    #[default]
    AsIs,
    /// Replace it by the admissible action nearest in edit distance (after [`normalize_action`]; ties go to the
    /// earlier admissible action), as MetaGym does. Only where the environment lists admissible actions.
    SnapToNearest,
}

/// Whether `action` is admissible ([`act_core::admits`]: placeholder templates such as WebShop's
/// `search[<your query>]` admit any argument); anything is, where the environment lists no actions.
pub(crate) fn is_admissible(action: &str, admissible: &[Action]) -> bool {
    admissible.is_empty() || admissible.iter().any(|a| admits(a.as_str(), action))
}

/// The admissible action nearest to `action` in edit distance after normalisation (the first on ties); `None`
/// when there are none.
///
/// ```
/// use act_rollout::nearest_admissible;
/// let admissible = ["go to fridge 1".into(), "go to sinkbasin 1".into()];
/// assert_eq!(nearest_admissible("Go to the fridge", &admissible).unwrap().as_str(), "go to fridge 1");
/// assert!(nearest_admissible("look", &[]).is_none());
/// ```
pub fn nearest_admissible<'a>(action: &str, admissible: &'a [Action]) -> Option<&'a Action> {
    let target: Vec<char> = normalize_action(action).chars().collect();
    admissible
        .iter()
        .enumerate()
        .min_by_key(|(i, a)| (edit_distance(&target, &normalize_action(a.as_str()).chars().collect::<Vec<_>>()), *i))
        .map(|(_, a)| a)
}

/// Levenshtein distance between two character sequences.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn a_search_is_admissible_where_the_search_template_is() {
        let start: Vec<Action> = vec!["search[<your query>]".into()];
        assert!(is_admissible("search[red running shoes]", &start));
        assert!(!is_admissible("click[buy now]", &start));
        let results: Vec<Action> = vec!["click[back to search]".into(), "click[b0ecy1n1m6]".into()];
        assert!(!is_admissible("search[red running shoes]", &results));
        assert!(!is_admissible("click[b0xxxxxxxx]", &results));
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("abc"), &chars("abc")), 0);
    }

    #[test]
    fn snapping_prefers_the_first_on_ties() {
        let admissible: Vec<Action> = vec!["take a".into(), "take b".into()];
        assert_eq!(nearest_admissible("take c", &admissible).unwrap().as_str(), "take a");
        assert_eq!(nearest_admissible("TAKE  B", &admissible).unwrap().as_str(), "take b");
    }

    proptest::proptest! {
        #[test]
        fn snapping_returns_an_admissible_action(
            action in "[ a-zA-Z0-9]{0,20}",
            admissible in proptest::collection::vec("[a-z0-9 ]{1,12}", 1..8),
        ) {
            let admissible: Vec<Action> = admissible.into_iter().map(Action::from).collect();
            let nearest = nearest_admissible(&action, &admissible).unwrap();
            proptest::prop_assert!(admissible.contains(nearest));
            // An action that is admissible up to normalisation snaps to (an equivalent of) itself.
            let exact = nearest_admissible(&admissible[0].as_str().to_uppercase(), &admissible).unwrap();
            proptest::prop_assert!(act_core::actions_match(exact.as_str(), admissible[0].as_str()));
        }

        #[test]
        fn edit_distance_is_a_metric(a in "[a-c]{0,8}", b in "[a-c]{0,8}", c in "[a-c]{0,8}") {
            let (a, b, c) = (chars(&a), chars(&b), chars(&c));
            proptest::prop_assert_eq!(edit_distance(&a, &b), edit_distance(&b, &a));
            proptest::prop_assert_eq!(edit_distance(&a, &a), 0);
            proptest::prop_assert!(edit_distance(&a, &c) <= edit_distance(&a, &b) + edit_distance(&b, &c));
        }
    }
}
