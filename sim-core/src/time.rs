//! Simulated time: integer nanoseconds, so that event order never depends on
//! float rounding.

pub type Nanos = u64;

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Far enough away to mean "no deadline".
pub const NEVER: Nanos = Nanos::MAX;

/// Rounds to the nearest nanosecond; negative values (rejected by validation) become 0.
pub fn secs_to_nanos(s: f64) -> Nanos {
    round_nanos(s * NANOS_PER_SEC as f64)
}

/// `x.round() as Nanos`, exactly (halves away from zero; negative and NaN
/// to 0, beyond the range to `Nanos::MAX`), without the call to the C
/// library's `round` that `f64::round` makes on a baseline x86-64: it ran
/// on every service time, arrival gap and backoff (1.1% of `naive`'s
/// time). `x - floor(x)` is exact for every finite `x >= 0`.
///
/// Below 2^63 ns (292 years: every time a run draws) it converts through
/// `i64`, one instruction each way on x86-64, where the conversions to and
/// from `u64` take about ten.
#[inline]
pub fn round_nanos(x: f64) -> Nanos {
    if (0.0..TWO_POW_63).contains(&x) {
        let floor = x as i64;
        return (floor + i64::from(x - floor as f64 >= 0.5)) as Nanos;
    }
    let floor = x as Nanos;
    floor.saturating_add(Nanos::from(x - floor as f64 >= 0.5))
}

/// 2^63: below it, a float's integer part fits an `i64`, and so does one
/// more (the float below 2^63 is an integer itself).
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

pub fn nanos_to_secs(n: Nanos) -> f64 {
    n as f64 / NANOS_PER_SEC as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_nanos_is_round_exactly() {
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.5,
            -3.7,
            1e15 + 0.5,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1.8446744073709552e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            // Either side of the fast path's bound.
            9_223_372_036_854_775_808.0,
            9_223_372_036_854_775_808.0f64.next_down(),
            9_223_372_036_854_775_808.0f64.next_up(),
        ];
        // Halves and their neighbours across the magnitudes times take.
        let mut x = 0.5f64;
        while x < 1e19 {
            cases.extend([
                x,
                x.next_up(),
                x.next_down(),
                x + 0.5,
                (x + 0.5).next_down(),
            ]);
            x = x * 3.7 + 0.5;
        }
        for x in cases {
            assert_eq!(round_nanos(x), x.round() as Nanos, "{x:e}");
        }
    }
}
