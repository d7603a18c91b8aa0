//! Balanced presentation orders: exactly half the pairs show the expert as "Action 1" (one more or fewer when
//! the count is odd), in a seeded random arrangement.

use act_core::{PresentedOrder, rng_from_seed};
use rand::RngExt;
use rand::seq::SliceRandom;

/// `count` presentation orders from `seed`: `count / 2` of each, the odd one out (if any) by a coin flip, then a
/// uniform shuffle. So every pair is expert-first with probability 1/2, and the expert-first count never differs
/// from `count / 2` by more than one half.
///
/// ```
/// use act_core::PresentedOrder;
/// let orders = act_pairs::balanced_orders(10, 42);
/// assert_eq!(orders.iter().filter(|o| **o == PresentedOrder::ExpertFirst).count(), 5);
/// assert_eq!(orders, act_pairs::balanced_orders(10, 42));
/// ```
pub fn balanced_orders(count: usize, seed: u64) -> Vec<PresentedOrder> {
    let mut rng = rng_from_seed(seed);
    let half = count / 2;
    let mut orders = Vec::with_capacity(count);
    orders.extend(std::iter::repeat_n(PresentedOrder::ExpertFirst, half));
    orders.extend(std::iter::repeat_n(PresentedOrder::AlternativeFirst, half));
    if count % 2 == 1 {
        orders.push(if rng.random_bool(0.5) { PresentedOrder::ExpertFirst } else { PresentedOrder::AlternativeFirst });
    }
    orders.shuffle(&mut rng);
    orders
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expert_first(orders: &[PresentedOrder]) -> usize {
        orders.iter().filter(|o| **o == PresentedOrder::ExpertFirst).count()
    }

    #[test]
    fn counts_are_balanced_for_every_size() {
        for count in 0..50 {
            for seed in 0..5 {
                let orders = balanced_orders(count, seed);
                assert_eq!(orders.len(), count);
                let first = expert_first(&orders);
                assert!(first == count / 2 || first == count.div_ceil(2), "{count}: {first}");
            }
        }
    }

    #[test]
    fn arrangement_depends_on_the_seed() {
        assert_ne!(balanced_orders(64, 1), balanced_orders(64, 2));
        // The odd pair goes either way across seeds.
        let odd: std::collections::HashSet<usize> = (0..32).map(|s| expert_first(&balanced_orders(5, s))).collect();
        assert_eq!(odd, [2, 3].into_iter().collect());
    }

    #[test]
    fn every_position_is_expert_first_about_half_the_time() {
        let seeds = 400;
        let mut first_at = [0usize; 6];
        for seed in 0..seeds {
            for (i, order) in balanced_orders(6, seed).iter().enumerate() {
                first_at[i] += usize::from(*order == PresentedOrder::ExpertFirst);
            }
        }
        // 400 fair coin flips: mean 200, sd 10; 5 sd is a bound a correct shuffle passes with certainty in practice.
        for count in first_at {
            assert!((150..=250).contains(&count), "{first_at:?}");
        }
    }
}
