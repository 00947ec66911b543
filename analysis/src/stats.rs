//! Small, exact statistics over plain slices: means, sample standard
//! deviations and 95% intervals for a mean and for a proportion, and the
//! interval each kind of metric gets ([`Support`], [`ci95`]).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The two-sided 95% normal quantile, Φ⁻¹(0.975).
const Z95: f64 = 1.959963984540054;

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    let first = *xs.first()?;
    // About the first value: equal values have exactly their value as mean
    // (a plain sum / n of forty 0.3s is 0.30000000000000016), and so a
    // standard deviation of exactly 0.
    Some(first + xs.iter().map(|x| x - first).sum::<f64>() / xs.len() as f64)
}

/// Sample standard deviation (divisor n − 1); `None` when n < 2.
pub fn std_dev(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// The 95% Student-t interval for the mean, `mean ± t(0.975, n−1) · s/√n`;
/// `None` when n < 2.
pub fn mean_ci95(xs: &[f64]) -> Option<(f64, f64)> {
    let s = std_dev(xs)?;
    let m = mean(xs)?;
    let n = xs.len() as f64;
    let t = StudentsT::new(0.0, 1.0, n - 1.0).ok()?.inverse_cdf(0.975);
    let half = t * s / n.sqrt();
    Some((m - half, m + half))
}

/// The 95% Wilson score interval for a proportion of `successes` out of
/// `n`; `None` when n = 0.
///
/// Wilson rather than the normal approximation because sweeps often see 0 or
/// n successes, where the normal interval collapses to a point.
pub fn wilson95(successes: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = successes as f64 / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // Exact bounds at k = 0 and k = n: rounding leaves them a step inside
    // otherwise, and the observed proportion then falls outside its own
    // interval. Mathematically the interval always contains p.
    let lower = if successes == 0 {
        0.0
    } else {
        (center - half).clamp(0.0, p)
    };
    let upper = if p == 1.0 {
        1.0
    } else {
        (center + half).clamp(p, 1.0)
    };
    Some((lower, upper))
}

/// The values a metric can take, which decides its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// A yes/no (a flag column; 1 = yes): Wilson interval of the share.
    YesNo,
    /// A rate or share in [0, 1]: t-interval clipped to [0, 1].
    Unit,
    /// A time in seconds, never negative and usually skewed (recovery
    /// time, latencies): bootstrap-t interval clipped at 0.
    Time,
    /// A count or ratio, never negative: t-interval clipped at 0.
    NonNegative,
    /// Anything else: the plain t-interval.
    Real,
}

impl Support {
    /// The support of a `runs` column: flags are yes/no; success rates
    /// and shares are in [0, 1]; a name ending in `_s` is a time; every
    /// other metric the simulation writes is a count or a ratio of counts,
    /// never negative. Goodput is one of those ratios, not a share: it
    /// exceeds 1 where the last tier is not on every user's path (an
    /// optional fan-out branch, a cache in front of it).
    pub fn of_metric(name: &str, is_flag: bool) -> Support {
        if is_flag {
            Support::YesNo
        } else if name.starts_with("success_rate")
            || name.contains("_success_rate")
            || name.ends_with("_share")
        {
            Support::Unit
        } else if name.ends_with("_s") {
            Support::Time
        } else {
            Support::NonNegative
        }
    }

    /// The range a mean of such values lies in.
    pub fn range(self) -> (f64, f64) {
        match self {
            Support::YesNo | Support::Unit => (0.0, 1.0),
            Support::Time | Support::NonNegative => (0.0, f64::INFINITY),
            Support::Real => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// The name of the interval a mean of such values gets.
    pub fn method(self) -> &'static str {
        match self {
            Support::YesNo => "Wilson",
            Support::Unit => "t, clipped to [0, 1]",
            Support::Time => "bootstrap-t, clipped at 0",
            Support::NonNegative => "t, clipped at 0",
            Support::Real => "t",
        }
    }

    /// `(low, high)` clipped into the support. Clipping never lowers
    /// coverage: the true mean lies in the support, so an interval that
    /// held it still does.
    pub fn clip(self, (low, high): (f64, f64)) -> (f64, f64) {
        let (a, b) = self.range();
        (low.clamp(a, b), high.clamp(a, b))
    }
}

/// A 95% interval for the mean of a metric over seeds, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub struct Ci95 {
    /// `None` when there is no interval: no seed-to-seed variation was
    /// observed (a zero-width interval would claim certainty), or one seed.
    pub bounds: Option<(f64, f64)>,
    /// How the interval was computed, or why there is none.
    pub method: String,
    /// For a yes/no constant over its `n` seeds: the exact one-sided 95%
    /// upper bound on the rate of the outcome never seen ([`unseen_high`]).
    pub unseen_high: Option<f64>,
}

/// The note for values that did not vary over `n` seeds.
pub fn no_variation(n: usize) -> String {
    format!("no seed-to-seed variation observed in {n} seeds")
}

/// The 95% interval of the mean of `xs` (one value per seed) by the
/// metric's support: Wilson for yes/no (0 or 1 values), bootstrap-t clipped
/// at 0 for times (the t-interval clipped at 0 when the values are too tied
/// for it, and the method says so), the t-interval clipped to the support
/// otherwise. `None` for no values.
pub fn ci95(xs: &[f64], support: Support) -> Option<Ci95> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let constant = xs.iter().all(|x| *x == xs[0]);
    if support == Support::YesNo {
        let yes = xs.iter().filter(|x| **x != 0.0).count() as u64;
        return Some(Ci95 {
            bounds: wilson95(yes, n as u64),
            method: if constant {
                format!("Wilson; {}", no_variation(n))
            } else {
                "Wilson".to_string()
            },
            unseen_high: constant.then(|| unseen_high(n)),
        });
    }
    if n == 1 {
        return Some(Ci95 {
            bounds: None,
            method: "one seed: no interval".to_string(),
            unseen_high: None,
        });
    }
    if constant {
        return Some(Ci95 {
            bounds: None,
            method: no_variation(n),
            unseen_high: None,
        });
    }
    if support == Support::Time {
        if let Some(b) = bootstrap_t95(xs) {
            return Some(Ci95 {
                bounds: Some(support.clip(b)),
                method: support.method().to_string(),
                unseen_high: None,
            });
        }
        // Of n distinct values, a resample repeats one n times with
        // probability n^(1 - n): 11% at 3, 1.6% at 4. Below
        // BOOTSTRAP_T_SEEDS the seeds are too few whatever their values;
        // from it on, ties are what leaves the resamples without spread.
        let why = if n < BOOTSTRAP_T_SEEDS {
            format!("too few seeds for bootstrap-t: {n}, it needs {BOOTSTRAP_T_SEEDS} or more")
        } else {
            "too few distinct values for bootstrap-t".to_string()
        };
        return Some(Ci95 {
            bounds: mean_ci95(xs).map(|b| support.clip(b)),
            method: format!("{} ({why})", Support::NonNegative.method()),
            unseen_high: None,
        });
    }
    Some(Ci95 {
        bounds: mean_ci95(xs).map(|b| support.clip(b)),
        method: support.method().to_string(),
        unseen_high: None,
    })
}

/// The 95% t-interval `estimate ± t(0.975, df) · se`, clipped to the
/// support; `None` when df < 1 or se is not finite.
pub fn t_interval(estimate: f64, se: f64, df: usize, support: Support) -> Option<(f64, f64)> {
    if df < 1 || !se.is_finite() {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, df as f64).ok()?.inverse_cdf(0.975);
    Some(support.clip((estimate - t * se, estimate + t * se)))
}

/// Resamples behind a bootstrap-t interval: with 999, the 2.5% and 97.5%
/// points are exactly the 25th and 975th of the sorted values.
pub const BOOTSTRAP_T_RESAMPLES: usize = 999;

/// The fewest values [`bootstrap_t95`] can give an interval from when they
/// are all distinct: below it, more than 2.5% of its resamples repeat one
/// value (n^(1 - n) of them: 11% at 3 values, 1.6% at 4).
pub const BOOTSTRAP_T_SEEDS: usize = 4;

/// The studentized-bootstrap (bootstrap-t) 95% interval of the mean of `xs`:
/// `[m − t*₀.₉₇₅ · se, m − t*₀.₀₂₅ · se]`, `t*` the distribution of
/// `(m* − m)/se*` over [`BOOTSTRAP_T_RESAMPLES`] resamples, drawn from a
/// fixed seed so that the same values give the same interval.
///
/// Unlike the t-interval it is longer on the side of a long tail: on
/// exponential samples (a skewed time) of 10 and 20 it covers 94.3% and
/// 94.8% where the t-interval covers 90.1% and 91.7%; heavier tails still
/// cover less (lognormal, sigma = 1: 90.8% and 92.1%). `None` when n < 2, or when the values are so tied that
/// more than 2.5% of the resamples have no spread (their `t*` is infinite,
/// and so would be a bound).
pub fn bootstrap_t95(xs: &[f64]) -> Option<(f64, f64)> {
    let n = xs.len();
    let se = std_dev(xs)? / (n as f64).sqrt();
    let m = mean(xs)?;
    // Deviations from the mean: sums of squares without cancellation.
    let d: Vec<f64> = xs.iter().map(|x| x - m).collect();
    let nf = n as f64;
    let mut rng = SplitMix64(0x5EED_B007);
    let mut t = Vec::with_capacity(BOOTSTRAP_T_RESAMPLES);
    for _ in 0..BOOTSTRAP_T_RESAMPLES {
        let (mut sum, mut squares) = (0.0, 0.0);
        let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
        for _ in 0..n {
            let x = d[rng.below(n)];
            sum += x;
            squares += x * x;
            low = low.min(x);
            high = high.max(x);
        }
        t.push(if low == high {
            // No spread: infinitely far from the mean, or at it.
            if low == 0.0 { 0.0 } else { low * f64::INFINITY }
        } else {
            let seb = ((squares - sum * sum / nf).max(0.0) / (nf - 1.0) / nf).sqrt();
            sum / nf / seb
        });
    }
    t.sort_by(f64::total_cmp);
    let (low, high) = (t[24], t[974]);
    (low.is_finite() && high.is_finite()).then_some((m - high * se, m - low * se))
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, fast, seeded generator
/// for resampling, without another crate.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (> 0); the multiply-shift bias is below
    /// n/2⁶⁴, far under anything a resample could notice.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// After `n` independent trials without an event, its rate is below
/// `1 − 0.05^(1/n)` with 95% confidence (the one-sided Clopper-Pearson
/// bound). The rule of three, `3/n`, approximates it only from about 30
/// trials: at 3 seeds it says "< 1", this bound 0.632. libm's `pow`, so
/// that every machine writes the same digits.
pub fn unseen_high(n: usize) -> f64 {
    1.0 - libm::pow(0.05, 1.0 / n as f64)
}

#[cfg(test)]
mod tests {

    /// Equal values have exactly their value as mean, and no spread.
    #[test]
    fn equal_values_have_their_value_as_mean() {
        let xs = [0.3; 40];
        assert_eq!(super::mean(&xs), Some(0.3));
        assert_eq!(super::std_dev(&xs), Some(0.0));
    }

    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn mean_of_known_values() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[4.0]), Some(4.0));
        assert_eq!(mean(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), Some(5.0));
    }

    #[test]
    fn std_dev_uses_n_minus_one() {
        assert_eq!(std_dev(&[]), None);
        assert_eq!(std_dev(&[1.0]), None);
        let s = std_dev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!(close(s, (32.0f64 / 7.0).sqrt(), 1e-12), "{s}");
        assert_eq!(std_dev(&[3.0, 3.0, 3.0]), Some(0.0));
    }

    #[test]
    fn mean_ci95_matches_hand_computation() {
        assert_eq!(mean_ci95(&[1.0]), None);
        // mean 3, s = 1.5811, t(0.975, 4) = 2.776445.
        let (lo, hi) = mean_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!(close(lo, 1.0368, 1e-4), "{lo}");
        assert!(close(hi, 4.9632, 1e-4), "{hi}");
        // Two points: t(0.975, 1) = 12.7062, s/√n = 0.5.
        let (lo, hi) = mean_ci95(&[0.0, 1.0]).unwrap();
        assert!(close(lo, 0.5 - 6.35310, 1e-4), "{lo}");
        assert!(close(hi, 0.5 + 6.35310, 1e-4), "{hi}");
    }

    #[test]
    fn wilson95_contains_the_observed_proportion_with_exact_ends() {
        for n in 1..=1000u64 {
            assert_eq!(wilson95(0, n).unwrap().0, 0.0, "0/{n}");
            assert_eq!(wilson95(n, n).unwrap().1, 1.0, "{n}/{n}");
            for k in [0, 1, n / 3, n / 2, n - 1, n] {
                let p = k as f64 / n as f64;
                let (lo, hi) = wilson95(k, n).unwrap();
                assert!(
                    lo <= p && p <= hi && 0.0 <= lo && hi <= 1.0,
                    "{k}/{n}: [{lo}, {hi}]"
                );
            }
        }
    }

    #[test]
    fn wilson95_matches_known_values() {
        assert_eq!(wilson95(0, 0), None);
        let cases = [
            (0, 10, 0.0, 0.2775),
            (5, 10, 0.2366, 0.7634),
            (10, 10, 0.7225, 1.0),
            (1, 100, 0.0018, 0.0545),
        ];
        for (k, n, lo, hi) in cases {
            let (l, h) = wilson95(k, n).unwrap();
            assert!(close(l, lo, 1e-4), "{k}/{n}: lower {l}");
            assert!(close(h, hi, 1e-4), "{k}/{n}: upper {h}");
        }
    }

    /// xorshift64*: enough to draw test samples.
    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) + 1) as f64 / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    #[test]
    fn wilson95_covers_95_percent_on_average() {
        // Exact coverage (a sum over the binomial outcomes), averaged over
        // p in [0.05, 0.95].
        use statrs::distribution::{Binomial, Discrete};
        for n in [10u64, 20, 50, 100] {
            let ps: Vec<f64> = (5..=95).map(|i| i as f64 / 100.0).collect();
            let cover: f64 = ps
                .iter()
                .map(|&p| {
                    let b = Binomial::new(p, n).unwrap();
                    (0..=n)
                        .filter(|&k| {
                            let (lo, hi) = wilson95(k, n).unwrap();
                            lo <= p && p <= hi
                        })
                        .map(|k| b.pmf(k))
                        .sum::<f64>()
                })
                .sum::<f64>()
                / ps.len() as f64;
            eprintln!("Wilson coverage, n = {n}: {cover:.4}");
            assert!((0.93..=0.97).contains(&cover), "n = {n}: {cover}");
        }
    }

    /// Share of `reps` samples of `n` whose interval holds `truth`.
    fn coverage(
        reps: usize,
        n: usize,
        support: Support,
        truth: f64,
        draw: &mut dyn FnMut() -> f64,
    ) -> f64 {
        let hits = (0..reps)
            .filter(|_| {
                let xs: Vec<f64> = (0..n).map(|_| draw()).collect();
                let (lo, hi) = ci95(&xs, support).unwrap().bounds.unwrap();
                lo <= truth && truth <= hi
            })
            .count();
        hits as f64 / reps as f64
    }

    #[test]
    fn t_intervals_cover_95_percent() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for n in [3, 5, 10] {
            let c = coverage(4000, n, Support::Real, 2.0, &mut || 2.0 + rng.normal());
            eprintln!("t coverage, normal, n = {n}: {c:.4}");
            assert!((0.93..=0.97).contains(&c), "n = {n}: {c}");
        }
        // A success rate near 1 (uniform in [0.9, 1]), clipped to [0, 1]:
        // clipping never loses coverage (93.2% at n = 5).
        for n in [10, 20] {
            let c = coverage(4000, n, Support::Unit, 0.95, &mut || {
                0.9 + 0.1 * rng.uniform()
            });
            eprintln!("t coverage, clipped to [0, 1], n = {n}: {c:.4}");
            assert!((0.93..=0.97).contains(&c), "n = {n}: {c}");
        }
        // A skewed time: exponential, mean 0.5. Over 20,000 samples the
        // t-interval covers 90.1% at n = 10 and 91.7% at 20 (short on the
        // long side), bootstrap-t 94.3% and 94.8% (92.9% at n = 5; on
        // lognormal times, sigma = 1, 90.8% and 92.1% against the t's 84%
        // and 87%). Here 1,000 samples each, a Monte Carlo error of 0.7
        // points: bootstrap-t lands about two of them inside the band.
        for n in [10, 20] {
            let mut exponential = || -0.5 * rng.uniform().ln();
            let t = coverage(1000, n, Support::NonNegative, 0.5, &mut exponential);
            let c = coverage(1000, n, Support::Time, 0.5, &mut exponential);
            eprintln!("exponential, n = {n}: t {t:.4}, bootstrap-t {c:.4}");
            assert!((0.93..=0.97).contains(&c), "n = {n}: {c}");
            assert!(t < 0.93, "n = {n}: t-interval {t}");
        }
    }

    #[test]
    fn intervals_respect_the_support_and_say_when_seeds_never_differed() {
        // The report's 0.333 [-1.101, 1.768] s and 0.999 [0.995, 1.002].
        let (lo, hi) = ci95(&[0.0, 0.0, 1.0], Support::NonNegative)
            .unwrap()
            .bounds
            .unwrap();
        assert!(lo == 0.0 && (hi - 1.767_592).abs() < 1e-4, "{lo} {hi}");
        let c = ci95(&[1.0, 0.998, 0.999], Support::Unit).unwrap();
        assert_eq!(c.bounds.unwrap().1, 1.0);
        assert_eq!(c.method, "t, clipped to [0, 1]");
        // Yes/no: Wilson, never above 1, the exact bound when constant.
        let c = ci95(&[1.0; 10], Support::YesNo).unwrap();
        assert_eq!(c.bounds.unwrap().1, 1.0);
        assert!((c.unseen_high.unwrap() - 0.258_866).abs() < 1e-6);
        assert!(
            c.method
                .contains("no seed-to-seed variation observed in 10 seeds")
        );
        // A constant metric has no interval, and says why.
        let c = ci95(&[0.5; 4], Support::Unit).unwrap();
        assert_eq!(c.bounds, None);
        assert_eq!(c.method, "no seed-to-seed variation observed in 4 seeds");
        assert_eq!(ci95(&[0.5], Support::Unit).unwrap().bounds, None);
        assert_eq!(ci95(&[], Support::Unit), None);
        // A time: bootstrap-t, longer on the side of the long tail.
        let c = ci95(&[0.2, 0.3, 0.1, 0.4, 2.5, 0.2, 0.3, 0.6], Support::Time).unwrap();
        let (lo, hi) = c.bounds.unwrap();
        let m = 4.6 / 8.0;
        assert!(hi - m > 2.0 * (m - lo), "[{lo}, {hi}] around {m}");
        assert_eq!(c.method, "bootstrap-t, clipped at 0");
        // Seven zeros of eight: over 2.5% of resamples have no spread.
        let c = ci95(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0], Support::Time).unwrap();
        assert_eq!(c.bounds.unwrap().0, 0.0);
        assert_eq!(
            c.method,
            "t, clipped at 0 (too few distinct values for bootstrap-t)"
        );
        // Three seeds, all distinct: the seeds are too few, not their
        // values; four distinct are enough.
        let c = ci95(&[0.30, 0.31, 0.29], Support::Time).unwrap();
        assert_eq!(
            c.method,
            "t, clipped at 0 (too few seeds for bootstrap-t: 3, it needs 4 or more)"
        );
        assert!(bootstrap_t95(&[0.30, 0.31, 0.29]).is_none());
        assert!(bootstrap_t95(&[0.30, 0.31, 0.29, 0.32]).is_some());
        assert_eq!(
            Support::of_metric("recovery_censored_s", false),
            Support::Time
        );
        assert_eq!(
            Support::of_metric("svc_b_max_queue", false),
            Support::NonNegative
        );
        // Above 1 behind an optional fan-out branch: a [0, 1] interval
        // would leave out its own mean (1.35 in [1.00, 1.00]).
        assert_eq!(Support::of_metric("goodput", false), Support::NonNegative);
        let c = ci95(&[1.30, 1.35, 1.40], Support::of_metric("goodput", false)).unwrap();
        let (lo, hi) = c.bounds.unwrap();
        assert!(lo < 1.35 && 1.35 < hi && lo > 1.0, "[{lo}, {hi}]");
        assert_eq!(Support::of_metric("wasted_share", false), Support::Unit);
        // 0.05^(1/3) = 0.368; from 30 trials on it is about the rule of
        // three's 3/n (0.0950 against 0.1 at 30, 0.00299 against 0.003 at
        // 1,000).
        assert!((unseen_high(3) - 0.631_597).abs() < 1e-6);
        assert!((unseen_high(30) - 0.095_034).abs() < 1e-6);
        assert!((unseen_high(1000) - 0.002_991).abs() < 1e-6);
    }
}
