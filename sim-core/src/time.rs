//! Simulated time: integer nanoseconds, so that event order never depends on
//! float rounding.

pub type Nanos = u64;

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Far enough away to mean "no deadline".
pub const NEVER: Nanos = Nanos::MAX;

/// Rounds to the nearest nanosecond; negative values (rejected by validation) become 0.
pub fn secs_to_nanos(s: f64) -> Nanos {
    (s * NANOS_PER_SEC as f64).round() as Nanos
}

pub fn nanos_to_secs(n: Nanos) -> f64 {
    n as f64 / NANOS_PER_SEC as f64
}
