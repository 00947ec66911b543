//! The sub-second series (`series_bin_s`): each bin counts the arrivals in
//! its own slice of time, so the bins of a second add up to its count, and
//! retries sent every 800 ms without jitter show as spikes 800 ms apart
//! (the source text's limiter answering 500), which jitter spreads out.

mod common;
use common::{load, set, valid};
use sim_core::{RunResult, run};

/// grids/scenarios/limiter.toml with `sets`, run with seed 1.
fn limiter(sets: &[(&str, &str)]) -> RunResult {
    let mut s = load("limiter.toml");
    set(&mut s, sets);
    valid(&s);
    run(&s, 1).expect("the run ends")
}

/// The "500" level of grids/reject-500-vs-429.toml and its "429_jitter".
const JITTER_429: &[(&str, &str)] = &[
    ("api.reject_as", "overload"),
    ("api.retry_after_s", "0.8"),
    ("client.honor_retry_after", "true"),
    ("client.backoff_jitter", "0.2"),
];

#[test]
fn the_bins_of_a_second_add_up_to_its_count() {
    for bin in ["0.5", "0.2", "0.1", "0.05"] {
        let r = limiter(&[("series_bin_s", bin)]);
        let api = &r.series.tiers[0];
        let per_s = (1.0 / bin.parse::<f64>().unwrap()).round() as usize;
        assert_eq!(api.arrivals_by_bin.len(), api.arrivals.len() * per_s);
        for (by_bin, per_second) in [
            (&api.arrivals_by_bin, &api.arrivals),
            (&api.retries_by_bin, &api.retries),
        ] {
            let summed: Vec<u64> = by_bin.chunks(per_s).map(|c| c.iter().sum()).collect();
            assert_eq!(&summed, per_second, "bins of {bin} s");
        }
    }
    // Per second only by default; and the bins change nothing else.
    let plain = limiter(&[]);
    assert!(plain.series.tiers[0].arrivals_by_bin.is_empty());
    let mut binned = limiter(&[("series_bin_s", "0.1")]);
    for t in &mut binned.series.tiers {
        t.arrivals_by_bin.clear();
        t.retries_by_bin.clear();
    }
    assert_eq!(binned, plain);
}

/// The bins of 0.1 s from 10.5 s to 16 s (after the burst at 10 s) in which
/// api received at least `share` of the most retries any of them did.
fn retry_peaks(r: &RunResult, share: f64) -> Vec<usize> {
    let bins = &r.series.tiers[0].retries_by_bin;
    let window = 105..160;
    let top = bins[window.clone()].iter().copied().max().unwrap_or(0) as f64;
    window.filter(|b| bins[*b] as f64 >= share * top).collect()
}

#[test]
fn retries_every_800_ms_spike_800_ms_apart_and_jitter_spreads_them() {
    let r = limiter(&[("series_bin_s", "0.1")]);
    let peaks = retry_peaks(&r, 0.5);
    // Every peak bin is a multiple of 800 ms after one in the burst.
    assert!(peaks.len() >= 5, "{peaks:?}");
    for p in &peaks {
        assert!(
            (100..102).any(|b| (p - b) % 8 == 0),
            "bin {p} (at {:.1} s) is not 800 ms after the burst: {peaks:?}",
            *p as f64 / 10.0
        );
    }
    let spread = limiter(&[JITTER_429, &[("series_bin_s", "0.1")]].concat());
    // From the second wave on (12 s to 16 s), where each wait's jitter has
    // added up.
    let top = |r: &RunResult| {
        r.series.tiers[0].retries_by_bin[120..160]
            .iter()
            .copied()
            .max()
    };
    assert!(
        top(&spread).unwrap() * 2 < top(&r).unwrap(),
        "jitter flattens the spikes: {:?} vs {:?}",
        top(&spread),
        top(&r)
    );
}

#[test]
fn a_bin_that_does_not_divide_a_second_is_refused() {
    for bad in ["0.3", "0.001", "2", "0"] {
        let mut s = load("limiter.toml");
        set(&mut s, &[("series_bin_s", bad)]);
        let errors = sim_core::validate(&s).expect_err(bad);
        assert!(
            errors
                .iter()
                .any(|e| e.to_string().contains("series_bin_s")),
            "{bad}: {errors:?}"
        );
    }
}
