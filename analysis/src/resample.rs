//! The bootstrap's random draws, reproducible: the same seed gives the
//! same resamples on every machine (ChaCha8, multiply-shift indexes).

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// The two-sided 95% normal quantile, scipy's `norm.ppf(0.975)`, as SALib
/// uses for its confidence half-widths.
pub const Z95: f64 = 1.959963984540054;

/// Resamples of the indexes `0..n` (with replacement).
pub struct Resampler(ChaCha8Rng);

impl Resampler {
    pub fn new(seed: u64) -> Resampler {
        Resampler(ChaCha8Rng::seed_from_u64(seed))
    }

    /// `count` resamples, each of `n` indexes below `n`.
    pub fn indexes(mut self, n: usize, count: usize) -> Vec<Vec<usize>> {
        (0..count)
            .map(|_| {
                (0..n)
                    .map(|_| ((self.0.next_u64() as u128 * n as u128) >> 64) as usize)
                    .collect()
            })
            .collect()
    }
}
