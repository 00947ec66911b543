//! Tenant keys: which tenant a user request belongs to (a Zipf draw per
//! user), and the per-key rate limiters of a tier (`rate_limit_key =
//! "tenant"`), one per key, each as the tier's limiter would be alone.

use crate::policy::RateLimiter;
use crate::random::Stream;
use crate::time::Nanos;

/// The tenants of one client group: key `offset + k` is its tenant of rank
/// `k` (0: the most frequent), drawn with probability proportional to
/// 1 / (k + 1)^s. Keys are numbered over all groups (a group without
/// tenants has one), so that per-key limiters never mix groups.
///
/// Drawn by inverse CDF over the cumulative shares (one uniform, a binary
/// search), exact and the same bits everywhere: `rand_distr`'s `Zipf`
/// rejection sampler uses float math whose library the workspace's
/// feature unification can switch (STACK.md), and it draws a variable
/// number of uniforms.
#[derive(Clone, Debug, PartialEq)]
pub struct Tenants {
    pub offset: u32,
    /// Cumulative shares, the last exactly 1 (empty: one key, no draw).
    cumulative: Vec<f64>,
}

impl Tenants {
    /// `tenants` tenants (0 or 1: one key, no draw) from key `offset`.
    pub fn new(offset: u32, tenants: u32, s: f64) -> Tenants {
        if tenants <= 1 {
            return Tenants {
                offset,
                cumulative: Vec::new(),
            };
        }
        let weights: Vec<f64> = (1..=tenants)
            .map(|k| 1.0 / libm::pow(k as f64, s))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut cumulative: Vec<f64> = (weights.iter())
            .scan(0.0, |acc, w| {
                *acc += w / total;
                Some(*acc)
            })
            .collect();
        // Rounding must not leave a draw beyond the last tenant.
        *cumulative.last_mut().expect("two tenants or more") = 1.0;
        Tenants { offset, cumulative }
    }

    /// Keys of this group's tenants.
    pub fn count(&self) -> u32 {
        self.cumulative.len().max(1) as u32
    }

    /// Does the group draw a tenant for each user?
    pub fn draws(&self) -> bool {
        !self.cumulative.is_empty()
    }

    /// The share of tenant of rank `k` (0: the most frequent).
    #[cfg(test)]
    pub fn share(&self, k: usize) -> f64 {
        match k {
            0 => self.cumulative.first().copied().unwrap_or(1.0),
            k => self.cumulative[k] - self.cumulative[k - 1],
        }
    }

    /// A user's key: one uniform from the group's tenant stream.
    pub fn draw(&self, rng: &mut Stream) -> u32 {
        let u = rng.uniform();
        self.offset + self.cumulative.partition_point(|c| *c <= u) as u32
    }
}

/// A tier's per-key limiters: each key's made from the tier's template when
/// its first request comes. A limiter untouched since time 0 and one made
/// now admit alike (a token bucket starts full, a window count at 0), so
/// making them late changes nothing and costs nothing for keys never seen.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedLimits {
    template: RateLimiter,
    by_key: Vec<Option<RateLimiter>>,
}

impl KeyedLimits {
    pub fn new(template: RateLimiter, keys: usize) -> KeyedLimits {
        KeyedLimits {
            template,
            by_key: vec![None; keys],
        }
    }

    /// Key `key`'s limiter admits one request at `now`, or not. Out of
    /// line: most tiers have no keyed limit.
    #[inline(never)]
    pub fn try_take(&mut self, key: u32, now: Nanos) -> bool {
        let limiter = self.by_key[key as usize].get_or_insert_with(|| self.template.clone());
        limiter.try_take(now, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::TokenBucket;
    use crate::scenario::RateLimitKind;

    #[test]
    fn zipf_shares_follow_one_over_k_to_the_s() {
        let t = Tenants::new(0, 4, 1.0);
        let h = 1.0 + 1.0 / 2.0 + 1.0 / 3.0 + 1.0 / 4.0;
        for k in 0..4 {
            let want = 1.0 / (k as f64 + 1.0) / h;
            assert!((t.share(k) - want).abs() < 1e-12, "rank {k}");
        }
        let uniform = Tenants::new(0, 5, 0.0);
        assert!((0..5).all(|k| (uniform.share(k) - 0.2).abs() < 1e-12));
        assert!(!Tenants::new(3, 1, 1.0).draws());
        assert_eq!(Tenants::new(3, 0, 1.0).count(), 1);
    }

    #[test]
    fn draws_land_on_the_keys_by_their_shares() {
        let t = Tenants::new(10, 3, 2.0);
        let mut rng = Stream::new(1, "tenants");
        let mut counts = [0u32; 3];
        for _ in 0..60_000 {
            let key = t.draw(&mut rng);
            assert!((10..13).contains(&key), "{key}");
            counts[(key - 10) as usize] += 1;
        }
        for (k, c) in counts.iter().enumerate() {
            let want = 60_000.0 * t.share(k);
            // Four binomial standard deviations.
            let sd = (want * (1.0 - t.share(k))).sqrt();
            assert!(
                (*c as f64 - want).abs() < 4.0 * sd,
                "rank {k}: {c} vs {want}"
            );
        }
    }

    #[test]
    fn one_key_over_its_limit_leaves_the_others_theirs() {
        let template = RateLimiter::new(RateLimitKind::TokenBucket, 1.0, 2.0, 1);
        let mut limits = KeyedLimits::new(template, 3);
        let ms = 1_000_000;
        // Key 0 takes its burst of 2 and is refused after.
        assert!(limits.try_take(0, 0));
        assert!(limits.try_take(0, ms));
        assert!(!limits.try_take(0, 2 * ms));
        // Key 2, first seen later, still has its whole burst.
        assert!(limits.try_take(2, 3 * ms));
        assert!(limits.try_take(2, 4 * ms));
        assert!(!limits.try_take(2, 5 * ms));
        // A late-made limiter admits as one made at 0 would.
        let mut early = RateLimiter::Token(TokenBucket::new(1.0, 2.0));
        let mut late = KeyedLimits::new(early.clone(), 1);
        for t in [7 * ms, 8 * ms, 9 * ms, 1_500 * ms] {
            assert_eq!(early.try_take(t, 0), late.try_take(0, t));
        }
    }
}
