//! The position in a dataset: a seeded shuffle per epoch, saved in checkpoints so a resumed run sees the same order.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use act_core::ActRng;

/// Which sample comes next: the current epoch's order and the position in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataCursor {
    order: Vec<usize>,
    position: usize,
    epoch: usize,
}

impl DataCursor {
    /// A cursor over `len` samples, shuffled with `rng` (no shuffle for an empty dataset).
    pub fn new(len: usize, rng: &mut ActRng) -> Self {
        let mut order: Vec<usize> = (0..len).collect();
        shuffle(&mut order, rng);
        DataCursor { order, position: 0, epoch: 0 }
    }

    /// The next `n` sample indices, starting a new shuffled epoch whenever one ends.
    pub fn take(&mut self, n: usize, rng: &mut ActRng) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        if self.order.is_empty() {
            return out;
        }
        while out.len() < n {
            if self.position == self.order.len() {
                shuffle(&mut self.order, rng);
                self.position = 0;
                self.epoch += 1;
            }
            out.push(self.order[self.position]);
            self.position += 1;
        }
        out
    }

    /// Completed passes over the data.
    pub fn epoch(&self) -> usize {
        self.epoch
    }

    /// Samples in the dataset.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether the dataset is empty.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// Fisher-Yates.
fn shuffle(items: &mut [usize], rng: &mut ActRng) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_epoch_is_a_permutation_and_the_seed_decides() {
        let mut rng = act_core::rng_from_seed(3);
        let mut cursor = DataCursor::new(5, &mut rng);
        let first: Vec<usize> = cursor.take(5, &mut rng);
        let second: Vec<usize> = cursor.take(5, &mut rng);
        for epoch in [&first, &second] {
            let mut sorted = epoch.clone();
            sorted.sort();
            assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        }
        assert_eq!(cursor.epoch(), 1);
        let mut rng2 = act_core::rng_from_seed(3);
        let mut again = DataCursor::new(5, &mut rng2);
        assert_eq!(again.take(5, &mut rng2), first);
        let json = serde_json::to_string(&cursor).unwrap();
        assert_eq!(serde_json::from_str::<DataCursor>(&json).unwrap(), cursor);
    }
}
