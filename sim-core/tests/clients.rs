//! Kinds of clients: closed-loop users against exact mean-value analysis
//! and the interactive response time law; open arrivals shaped by a load
//! profile or a sinusoid against the integral of their rate; and the
//! behaviour the grids `open-vs-closed.toml` and `ramp.toml` are meant to show.

mod common;
use common::*;
use sim_core::result::ClosedStats;

/// One tier with one slot and exponential service of mean `service_s`,
/// `users` closed-loop users thinking `think_s` on average (exponential),
/// timeouts far beyond any response.
fn one_station(users: u32, service_s: f64, think_s: f64, duration_s: f64) -> sim_core::Scenario {
    let text = format!(
        r#"
name = "closed"
horizon_s = {duration_s}
[client]
duration_s = {duration_s}
closed = {{ users = {users}, think = {{ dist = "exponential", mean_s = {think_s} }} }}
[client.call]
attempt_timeout_s = 1e5
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
[[tiers]]
name = "server"
slots = 1
service = {{ dist = "exponential", mean_s = {service_s} }}
"#
    );
    from_toml(&text, "closed", &[])
}

/// Exact mean-value analysis of one FCFS exponential station and a delay
/// (think) station: throughput and mean response time with `n` users.
fn mva(n: u32, service_s: f64, think_s: f64) -> (f64, f64) {
    let (mut x, mut r, mut q) = (0.0, 0.0, 0.0);
    for k in 1..=n {
        r = service_s * (1.0 + q);
        x = k as f64 / (r + think_s);
        q = x * r;
    }
    (x, r)
}

fn closed(r: &sim_core::RunResult) -> &ClosedStats {
    r.closed.as_ref().expect("closed-loop users")
}

#[test]
fn mva_formula_against_known_values() {
    // One user: no queueing, R = S.
    let (x, r) = mva(1, 0.01, 0.5);
    assert!((r - 0.01).abs() < 1e-15 && (x - 1.0 / 0.51).abs() < 1e-12);
    // Two users, S = Z = 1: R(2) = 1 + Q(1) = 1.5, X = 2 / 2.5.
    let (x, r) = mva(2, 1.0, 1.0);
    assert!((r - 1.5).abs() < 1e-12 && (x - 0.8).abs() < 1e-12);
}

#[test]
fn closed_loop_agrees_with_mean_value_analysis_and_the_response_time_law() {
    let (service_s, think_s) = (0.01, 0.5);
    // Long enough for some 2e5 cycles each.
    for (users, duration_s) in [(1, 100_000.0), (10, 10_000.0), (100, 2_000.0)] {
        let s = one_station(users, service_s, think_s, duration_s);
        let r = run(&s, 1);
        let c = closed(&r);
        let (x_mva, r_mva) = mva(users, service_s, think_s);
        let (x, resp, z) = (
            c.throughput_per_s().unwrap(),
            c.response_mean_s().unwrap(),
            c.think_mean_s().unwrap(),
        );
        println!(
            "N = {users}: X = {x:.4}/s (MVA {x_mva:.4}, {:+.2}%), R = {resp:.5} s (MVA {r_mva:.5}, {:+.2}%), Z = {z:.4} s, {} cycles",
            (x / x_mva - 1.0) * 100.0,
            (resp / r_mva - 1.0) * 100.0,
            c.cycles
        );
        assert!(
            (x / x_mva - 1.0).abs() < 0.01,
            "N = {users}: X {x} vs {x_mva}"
        );
        assert!(
            (resp / r_mva - 1.0).abs() < 0.01,
            "N = {users}: R {resp} vs {r_mva}"
        );
        assert!((z / think_s - 1.0).abs() < 0.01, "N = {users}: Z {z}");
        // The cycles tile each user's time exactly, so X = N / (R + Z).
        assert_eq!(c.span_ns, c.think_ns + c.response_ns, "N = {users}");
        let law = users as f64 / (resp + z);
        assert!((x / law - 1.0).abs() < 1e-12, "N = {users}: {x} vs {law}");
        // Every request a user sent ended (no timeout fires, the horizon
        // leaves nobody in flight but the last requests) and succeeded.
        assert_eq!(r.users_failed, r.users_unfinished);
        assert!(r.users_unfinished <= users as u64);
        assert_eq!(c.cycles, r.users_ok);
        assert_eq!(c.users, users as u64);
    }
}

#[test]
fn closed_loop_users_never_have_more_than_one_request_out() {
    // A tier that always times out: each user's request takes its three
    // attempts (3 x 1 s + 2 x 50 ms), so each of 20 users thinking 1 s sends
    // at most 60 / 4.1 + 1 requests.
    let mut s = ch37(
        "naive",
        "fifo",
        &[
            ("client.rate_per_s", "0"),
            ("client.closed.users", "20"),
            ("client.closed.think.mean_s", "1"),
            ("svc_b.service.mean_s", "5"),
            ("svc_b.service.dist", "constant"),
            ("svc_b.slow.duration_s", "0"),
        ],
    );
    s.horizon_s = 70.0;
    let r = run(&s, 3);
    assert!(r.users_ok == 0 && r.users > 20, "{} users", r.users);
    assert!(r.users <= 20 * 15, "{} users", r.users);
    assert!(r.tiers[0].arrivals <= 3 * r.users);
}

/// A sink that serves every arrival at once: the client's arrivals are all
/// there is to see.
fn sink(client: &str) -> sim_core::Scenario {
    let text = format!(
        r#"
name = "sink"
horizon_s = 120.0
[client]
duration_s = 120.0
{client}
[client.call]
attempt_timeout_s = 1.0
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
[[tiers]]
name = "sink"
slots = 100000
"#
    );
    from_toml(&text, "sink", &[])
}

/// Pearson's chi-square of per-second arrival counts against their
/// expectation (the rate's integral over each second, computed here from
/// the rate by Simpson's rule on 100 steps).
fn chi_square(counts: &[u64], rate: impl Fn(f64) -> f64) -> (f64, f64, f64) {
    let mut chi2 = 0.0;
    let (mut total_expected, mut total) = (0.0, 0.0);
    for (sec, &observed) in counts.iter().enumerate() {
        let n = 100;
        let h = 1.0 / n as f64;
        let expected: f64 = (0..n)
            .map(|k| {
                let a = sec as f64 + k as f64 * h;
                h / 6.0 * (rate(a) + 4.0 * rate(a + h / 2.0) + rate(a + h))
            })
            .sum();
        chi2 += (observed as f64 - expected).powi(2) / expected;
        total_expected += expected;
        total += observed as f64;
    }
    (chi2, total, total_expected)
}

/// Asserts that the counts of three seeds fit `rate`: each chi-square with
/// 120 degrees of freedom below its mean plus 5 standard deviations.
fn fits(s: &sim_core::Scenario, rate: impl Fn(f64) -> f64 + Copy) {
    for seed in [1, 2, 3] {
        let r = run(s, seed);
        let (chi2, total, expected) = chi_square(&r.series.user_arrivals, rate);
        let dof = r.series.user_arrivals.len() as f64;
        println!(
            "{}: seed {seed}: chi2 {chi2:.1} (dof {dof}), {total} users, expected {expected:.0}",
            s.name
        );
        assert!(
            chi2 < dof + 5.0 * (2.0 * dof).sqrt(),
            "seed {seed}: chi2 {chi2}"
        );
        assert!((total - expected).abs() < 4.0 * expected.sqrt());
    }
}

fn ramp(t: f64) -> f64 {
    let points = [
        (0.0, 100.0),
        (20.0, 100.0),
        (60.0, 1000.0),
        (80.0, 1000.0),
        (100.0, 200.0),
    ];
    let i = points.partition_point(|(at, _)| *at <= t);
    match (points.get(i.wrapping_sub(1)), points.get(i)) {
        (Some((a0, r0)), Some((a1, r1))) => r0 + (r1 - r0) * (t - a0) / (a1 - a0),
        (Some((_, r)), None) | (None, Some((_, r))) => *r,
        (None, None) => unreachable!(),
    }
}

#[test]
fn ramp_arrivals_follow_the_profile() {
    let s = sink(
        "profile = [{ at_s = 0, rate_per_s = 100 }, { at_s = 20, rate_per_s = 100 }, \
         { at_s = 60, rate_per_s = 1000 }, { at_s = 80, rate_per_s = 1000 }, \
         { at_s = 100, rate_per_s = 200 }]",
    );
    fits(&s, ramp);
    // The counts tell a ramp from a constant rate of the same mean.
    let mean = (0..120).map(|t| ramp(t as f64 + 0.5)).sum::<f64>() / 120.0;
    let (chi2, _, _) = chi_square(&run(&s, 1).series.user_arrivals, |_| mean);
    assert!(chi2 > 1000.0, "{chi2}");
}

#[test]
fn sinusoid_arrivals_follow_the_rate_times_the_spikes() {
    let s = sink(
        "rate_per_s = 500\nsinusoid = { period_s = 30, amplitude = 0.8 }\n\
         spike = [{ start_s = 40, duration_s = 10, factor = 2 }]",
    );
    let rate = |t: f64| {
        let spike = if (40.0..50.0).contains(&t) { 2.0 } else { 1.0 };
        500.0 * (1.0 + 0.8 * (2.0 * std::f64::consts::PI * t / 30.0).sin()) * spike
    };
    fits(&s, rate);
    let mut no_spike = s.clone();
    no_spike.client.spike.clear();
    let (chi2, _, _) = chi_square(&run(&no_spike, 1).series.user_arrivals, rate);
    assert!(chi2 > 1000.0, "{chi2}");
}

#[test]
fn a_profile_draws_from_its_own_stream_and_is_deterministic() {
    let s = sink("profile = [{ at_s = 0, rate_per_s = 50 }, { at_s = 100, rate_per_s = 500 }]");
    assert_eq!(run(&s, 4), run(&s, 4));
    assert_ne!(
        run(&s, 4).series.user_arrivals,
        run(&s, 5).series.user_arrivals
    );
}

/// grids/open-vs-closed.toml, one point: ch37 under naive, svc_b slow for
/// `window_s` from 10 s, open arrivals at 400/s (`users` 0) or closed-loop
/// users thinking `think_s` (exponential).
fn open_or_closed(users: &str, think_s: &str, window_s: &str) -> sim_core::Scenario {
    let mut sets = vec![
        ("strategy", "naive"),
        ("svc_b.slow.start_s", "10"),
        ("svc_b.slow.duration_s", window_s),
    ];
    if users == "0" {
        sets.push(("client.rate_per_s", "400"));
    } else {
        sets.extend([
            ("client.rate_per_s", "0"),
            ("client.closed.users", users),
            ("client.closed.think.dist", "exponential"),
            ("client.closed.think.mean_s", think_s),
        ]);
    }
    scenario("ch37", &sets)
}

#[test]
fn open_vs_closed_grid_retries_sustain_the_storm_only_with_open_arrivals() {
    for seed in [1, 2] {
        for window in ["2", "5", "10", "20"] {
            let open = run(&open_or_closed("0", "1", window), seed);
            assert_eq!(open.recovery_s, None, "open, {window} s, seed {seed}");
            // Few users thinking briefly: the slow window slows their load
            // at once, and every request after it succeeds.
            let few = run(&open_or_closed("48", "0.1", window), seed);
            assert_eq!(few.recovery_s, Some(0.0), "48 users, {window} s");
            assert_eq!(few.phases[2].success_rate(), Some(1.0));
            // The same load before the window.
            let ratio = few.phases[0].users as f64 / open.phases[0].users as f64;
            assert!((ratio - 1.0).abs() < 0.05, "{ratio}");
        }
        // Many users thinking longer keep more requests in flight: they
        // recover after short windows, later after longer ones, and a 20 s
        // window holds them in the storm too.
        let many = |w| run(&open_or_closed("408", "1", w), seed).recovery_s;
        let (two, five, ten) = (many("2"), many("5"), many("10"));
        assert!(two.is_some() && five.is_some() && ten.is_some());
        assert!(two <= five && five <= ten, "{two:?} {five:?} {ten:?}");
        assert_eq!(many("20"), None);
    }
}

#[test]
fn ramp_grid_each_strategy_against_a_ramp_to_one_and_a_half_capacity() {
    let ramp = |strategy, dispatch| {
        let s = ch37(
            strategy,
            dispatch,
            &[
                ("client.rate_per_s", "0"),
                ("client.profile.0.at_s", "10"),
                ("client.profile.0.rate_per_s", "400"),
                ("client.profile.1.at_s", "20"),
                ("client.profile.1.rate_per_s", "1200"),
                ("client.profile.2.at_s", "25"),
                ("client.profile.2.rate_per_s", "1200"),
                ("client.profile.3.at_s", "35"),
                ("client.profile.3.rate_per_s", "400"),
                ("svc_b.slow.start_s", "30"),
                ("svc_b.slow.duration_s", "0"),
            ],
        );
        run(&s, 1)
    };
    for dispatch in DISPATCHES {
        let naive = ramp("naive", dispatch);
        assert_eq!(naive.recovery_s, None, "naive {dispatch}");
        assert_eq!(naive.phases[2].success_rate(), Some(0.0));
        let protected = ramp("protected", dispatch);
        assert_eq!(protected.recovery_s, Some(0.0), "protected {dispatch}");
        // 400/s for 10 s, the ramp's integral, 400/s for 25 s.
        let expected = 400.0 * 10.0 + (800.0 * 10.0 + 1200.0 * 5.0 + 800.0 * 10.0) + 400.0 * 25.0;
        assert!(((naive.users as f64) - expected).abs() < 4.0 * expected.sqrt());
    }
    for strategy in ["deadline", "deadline_budget"] {
        let fifo = ramp(strategy, "fifo").recovery_s.expect("recovers");
        let reply_first = ramp(strategy, "reply_first").recovery_s.expect("recovers");
        assert!(reply_first < fifo, "{strategy}: {reply_first} vs {fifo}");
    }
}
