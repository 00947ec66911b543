//! A look-aside cache in front of a tier: a caller looks a request up
//! first; a hit is answered from the cache after `hit_latency`, a miss goes
//! to the tier, and its successful reply stores the value. Warm, a share
//! `hit_ratio` of lookups hit. A flush window (a restart or deploy of the
//! cache) answers nothing (every lookup misses, nothing is stored) and
//! leaves the cache empty; after it, each miss the tier answers with
//! success fills one of `fill_keys` keys, and the hit ratio is
//! `hit_ratio x filled / fill_keys` until all are filled. So the cache
//! warms only as fast as the tier answers its misses: an overloaded tier
//! keeps its cache cold, and the 1 / (1 - hit_ratio) times larger load on
//! it with it (the cache-miss sustaining effect of metastable failures).

use crate::random::Stream;
use crate::scenario::Cache;
use crate::time::{Nanos, secs_to_nanos};

/// The `by` of a reply from the cache: answered by no replica of the tier.
pub const FROM_CACHE: u8 = crate::caller::NO_REPLICA - 1;

/// A tier's cache, in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheModel {
    hit_ratio: f64,
    pub hit_latency: Nanos,
    /// The flush window `[flush_start, flush_end)`; equal: none.
    flush_start: Nanos,
    flush_end: Nanos,
    fill_keys: u32,
}

impl CacheModel {
    /// The cache of `c`, or `None` without one.
    pub fn of(c: &Cache) -> Option<CacheModel> {
        (c.hit_ratio > 0.0).then(|| CacheModel {
            hit_ratio: c.hit_ratio,
            hit_latency: secs_to_nanos(c.hit_latency_s),
            flush_start: secs_to_nanos(c.flush_start_s),
            flush_end: secs_to_nanos(c.flush_start_s + c.flush_duration_s),
            fill_keys: c.fill_keys,
        })
    }

    fn has_flush(&self) -> bool {
        self.flush_end > self.flush_start
    }
}

/// The state of a tier's cache in a run.
pub struct CacheState {
    model: CacheModel,
    rng: Stream,
    /// Keys filled since the flush ended.
    filled: u32,
    pub hits: u64,
    pub misses: u64,
    /// Per second of the lookup.
    pub hits_per_s: Vec<u64>,
    pub misses_per_s: Vec<u64>,
}

impl CacheState {
    /// The cache of tier `name` in a run of `seed` over `secs` seconds: its
    /// draws have a stream of their own, so that adding a cache moves no
    /// other draw.
    pub fn new(model: &CacheModel, seed: u64, name: &str, secs: usize) -> CacheState {
        CacheState {
            model: model.clone(),
            rng: Stream::new(seed, &format!("cache.{name}")),
            filled: 0,
            hits: 0,
            misses: 0,
            hits_per_s: vec![0; secs],
            misses_per_s: vec![0; secs],
        }
    }

    pub fn hit_latency(&self) -> Nanos {
        self.model.hit_latency
    }

    /// The share of lookups at `now` that hit.
    pub fn hit_ratio(&self, now: Nanos) -> f64 {
        let m = &self.model;
        if !m.has_flush() || now < m.flush_start {
            m.hit_ratio
        } else if now < m.flush_end {
            0.0
        } else {
            m.hit_ratio * self.filled as f64 / m.fill_keys as f64
        }
    }

    /// A lookup at `now` (second `sec`): a hit or not (counted). One draw
    /// per lookup, whatever the ratio, so that the draws do not depend on
    /// the state of the cache.
    pub fn lookup(&mut self, now: Nanos, sec: usize) -> bool {
        let hit = self.rng.uniform() < self.hit_ratio(now);
        if hit {
            self.hits += 1;
            self.hits_per_s[sec] += 1;
        } else {
            self.misses += 1;
            self.misses_per_s[sec] += 1;
        }
        hit
    }

    /// A miss answered with success at `now` stores its value: after a
    /// flush, one more key is filled.
    pub fn fill(&mut self, now: Nanos) {
        let m = &self.model;
        if m.has_flush() && now >= m.flush_end && self.filled < m.fill_keys {
            self.filled += 1;
        }
    }

    pub fn filled(&self) -> u32 {
        self.filled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = crate::time::NANOS_PER_SEC;

    fn cache() -> CacheState {
        let c = Cache {
            hit_ratio: 0.8,
            hit_latency_s: 0.001,
            flush_start_s: 10.0,
            flush_duration_s: 5.0,
            fill_keys: 4,
        };
        CacheState::new(&CacheModel::of(&c).expect("a cache"), 1, "db", 30)
    }

    #[test]
    fn a_flushed_cache_hits_nothing_then_warms_with_each_miss_answered() {
        let mut c = cache();
        assert_eq!(c.hit_ratio(9 * S), 0.8);
        // During the flush nothing is stored.
        c.fill(12 * S);
        assert_eq!((c.hit_ratio(12 * S), c.filled()), (0.0, 0));
        assert_eq!(c.hit_ratio(15 * S), 0.0);
        c.fill(15 * S);
        assert_eq!(c.hit_ratio(15 * S), 0.2);
        (0..10).for_each(|_| c.fill(16 * S));
        assert_eq!((c.hit_ratio(16 * S), c.filled()), (0.8, 4));
    }

    #[test]
    fn lookups_hit_at_the_ratio_and_are_counted_per_second() {
        let mut c = cache();
        let hits = (0..100_000).filter(|_| c.lookup(S, 1)).count();
        assert!((hits as f64 / 1e5 - 0.8).abs() < 0.005, "{hits}");
        assert_eq!((c.hits + c.misses, c.hits_per_s[1]), (100_000, hits as u64));
        assert!(!(0..1000).any(|_| c.lookup(11 * S, 11)));
    }
}
