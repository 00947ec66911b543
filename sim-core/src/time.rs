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
/// to 0), at most [`LONGEST`], without the call to the C library's `round`
/// that `f64::round` makes on a baseline x86-64: it ran on every service
/// time, arrival gap and backoff (1.1% of `naive`'s time). `x - floor(x)`
/// is exact for every finite `x >= 0`. It converts through `i64`, one
/// instruction each way on x86-64, where the conversions to and from `u64`
/// take about ten.
#[inline]
pub fn round_nanos(x: f64) -> Nanos {
    if (0.0..LONGEST as f64).contains(&x) {
        let floor = x as i64;
        return (floor + i64::from(x - floor as f64 >= 0.5)) as Nanos;
    }
    if x >= LONGEST as f64 { LONGEST } else { 0 }
}

/// The longest duration: 2^61 ns, 73 years, far past any horizon (at most
/// 11.6 days), which it stands for. Every duration (a parameter, a draw, a
/// backoff) is at most this, so that an instant plus a few of them stays
/// far below `Nanos::MAX` (`NEVER`) and the engine's sums cannot wrap
/// around: a service time of 10^300 s ends past the horizon, not before.
pub const LONGEST: Nanos = 1 << 61;

/// `n` times duration `d` (a term per queued or in-flight request), at
/// most [`LONGEST`] as every duration.
pub fn times(d: Nanos, n: u64) -> Nanos {
    d.saturating_mul(n).min(LONGEST)
}

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
            // Either side of the longest duration.
            LONGEST as f64,
            (LONGEST as f64).next_down(),
            (LONGEST as f64).next_up(),
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
            let want = (x.round() as Nanos).min(LONGEST);
            assert_eq!(round_nanos(x), want, "{x:e}");
        }
    }
}
