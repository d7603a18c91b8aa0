//! Seeded randomness: every random choice in act-rs flows from a `u64` seed through ChaCha8.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The generator used everywhere in act-rs.
pub type ActRng = ChaCha8Rng;

/// A ChaCha8 generator seeded from `seed`.
///
/// ```
/// use rand::RngExt;
/// let mut a = act_core::rng_from_seed(7);
/// let mut b = act_core::rng_from_seed(7);
/// assert_eq!(a.random::<u64>(), b.random::<u64>());
/// ```
pub fn rng_from_seed(seed: u64) -> ActRng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A seed for sub-stream `stream` of `seed` (SplitMix64 over both), so that streams are independent of each other.
///
/// ```
/// use act_core::derive_seed;
/// assert_eq!(derive_seed(1, 0), derive_seed(1, 0));
/// assert_ne!(derive_seed(1, 0), derive_seed(1, 1));
/// assert_ne!(derive_seed(1, 2), derive_seed(2, 1));
/// ```
///
/// [`derive_seed`] splits one seed into independent streams (one per episode, per query, per worker), so results
/// do not depend on the order or thread in which work runs. [`RngState`] captures a generator exactly, so training
/// can stop and resume bit-identically.
pub fn derive_seed(seed: u64, stream: u64) -> u64 {
    splitmix64(splitmix64(seed) ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The exact position of an [`ActRng`], serialisable into a checkpoint.
///
/// ```
/// use rand::RngExt;
/// let mut rng = act_core::rng_from_seed(3);
/// let _ = rng.random::<u32>();
/// let state = act_core::RngState::capture(&rng);
/// let next = rng.random::<u64>();
/// let mut restored = state.restore();
/// assert_eq!(restored.random::<u64>(), next);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RngState {
    /// The 32-byte ChaCha key.
    pub seed: [u8; 32],
    /// The stream number.
    pub stream: u64,
    /// The word position within the stream (a 68-bit number; stored as a string-free `u128`).
    pub word_pos: u128,
}

impl RngState {
    /// Captures `rng`'s position.
    pub fn capture(rng: &ActRng) -> Self {
        RngState { seed: rng.get_seed(), stream: rng.get_stream(), word_pos: rng.get_word_pos() }
    }

    /// A generator at exactly the captured position.
    pub fn restore(&self) -> ActRng {
        let mut rng = ChaCha8Rng::from_seed(self.seed);
        rng.set_stream(self.stream);
        rng.set_word_pos(self.word_pos);
        rng
    }
}
