//! Random streams and the draws the model needs, with bit-reproducible math.
//!
//! Each purpose (arrivals, one tier's service times, one caller's backoff)
//! has its own ChaCha8 stream keyed by `(seed, stream name)`, so the same
//! seed gives the same arrivals under every strategy (common random numbers).
//! Floats come from the top 53 bits of a word and transcendental functions
//! from `libm` (a pure-Rust port of musl's), never from the platform's math
//! library, so a draw is the same bits on every machine and build.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

pub struct Stream(ChaCha8Rng);

impl Stream {
    /// The stream `name` of run `seed`: the ChaCha key is the seed (8 bytes,
    /// little endian) followed by the FNV-1a hash of the name (8 bytes).
    pub fn new(seed: u64, name: &str) -> Stream {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(&fnv1a(name.as_bytes()).to_le_bytes());
        Stream(ChaCha8Rng::from_seed(key))
    }

    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `[0, hi]` (multiply-shift; the bias is below 2^-64 * hi).
    pub fn below_or_eq(&mut self, hi: u64) -> u64 {
        ((self.0.next_u64() as u128 * (hi as u128 + 1)) >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * libm::log(1.0 - self.uniform())
    }

    /// Standard normal by Box-Muller (one value per two uniforms).
    pub fn standard_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
    }
}

/// 64-bit FNV-1a: a fixed, documented hash (std's hasher may change).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_keyed_by_seed_and_name() {
        let draw = |seed, name| Stream::new(seed, name).uniform();
        assert_eq!(draw(1, "arrivals"), draw(1, "arrivals"));
        assert_ne!(draw(1, "arrivals"), draw(2, "arrivals"));
        assert_ne!(draw(1, "arrivals"), draw(1, "service.svc_b"));
    }

    #[test]
    fn exponential_mean_and_uniform_range() {
        let mut s = Stream::new(7, "t");
        let n = 200_000;
        let mean = (0..n).map(|_| s.exponential(0.02)).sum::<f64>() / n as f64;
        assert!((mean - 0.02).abs() < 0.0004, "mean {mean}");
        assert!((0..10_000).all(|_| s.below_or_eq(5) <= 5));
        let hits = (0..60_000).filter(|_| s.below_or_eq(2) == 2).count();
        assert!((19_000..21_000).contains(&hits), "{hits}");
    }

    #[test]
    fn normal_moments() {
        let mut s = Stream::new(3, "n");
        let xs: Vec<f64> = (0..100_000).map(|_| s.standard_normal()).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(
            mean.abs() < 0.02 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
    }
}
