//! Agreement with queueing theory where theory has an answer: M/M/c with an
//! unbounded queue and no timeouts against Erlang C, and Little's law.

mod common;
use sim_core::Scenario;

/// One server tier with `c` slots, exponential service of mean `1/mu`,
/// Poisson arrivals at `lambda`, and timeouts far beyond any wait.
fn mmc(c: u32, lambda: f64, mu: f64, duration_s: f64) -> Scenario {
    let text = format!(
        r#"
name = "mmc"
horizon_s = {duration_s}
[client]
rate_per_s = {lambda}
duration_s = {duration_s}
[client.call]
attempt_timeout_s = 1e6
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
[[tiers]]
name = "server"
slots = {c}
service = {{ dist = "exponential", mean_s = {mean} }}
"#,
        mean = 1.0 / mu
    );
    common::from_toml(&text, "mmc", &[])
}

/// Erlang C: mean wait in queue of M/M/c.
fn erlang_c_wait(c: u32, lambda: f64, mu: f64) -> f64 {
    let a = lambda / mu;
    let rho = a / c as f64;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let last = term * a / c as f64 / (1.0 - rho);
    let p_wait = last / (sum + last);
    p_wait / (c as f64 * mu - lambda)
}

fn check(rho: f64, tolerance: f64) {
    let (c, mu) = (4, 100.0);
    let lambda = rho * c as f64 * mu;
    let s = mmc(c, lambda, mu, 3000.0);
    let theory = erlang_c_wait(c, lambda, mu);
    // The mean over seeds of the mean wait of each run.
    let seeds = [1, 2, 3, 4];
    let runs: Vec<_> = seeds.iter().map(|&seed| common::run(&s, seed)).collect();
    let waits: Vec<f64> = runs
        .iter()
        .map(|r| r.tiers[0].wait_s / r.tiers[0].started as f64)
        .collect();
    let mean = waits.iter().sum::<f64>() / waits.len() as f64;
    let rel = (mean - theory).abs() / theory;
    assert!(
        rel < tolerance,
        "rho {rho}: simulated wait {mean:.6} s vs Erlang C {theory:.6} s ({:.1}% off)",
        rel * 100.0
    );
    for r in &runs {
        // Little's law on the queue: time-average length = throughput x mean wait.
        let t = &r.tiers[0];
        let mean_queue = t.queue_s / r.horizon_s;
        let little = t.started as f64 / r.horizon_s * (t.wait_s / t.started as f64);
        assert!(
            (mean_queue - little).abs() / little < 0.01,
            "Little: {mean_queue} vs {little}"
        );
        // Utilisation = lambda / (c mu).
        let util = t.busy_s / (c as f64 * r.horizon_s);
        assert!((util - rho).abs() < 0.01, "utilisation {util} vs {rho}");
    }
}

#[test]
fn mmc_wait_matches_erlang_c_at_half_load() {
    check(0.5, 0.03);
}

#[test]
fn mmc_wait_matches_erlang_c_at_ninety_percent_load() {
    check(0.9, 0.03);
}

#[test]
fn erlang_c_formula_against_a_known_value() {
    // M/M/1: W_q = rho / (mu - lambda).
    let w = erlang_c_wait(1, 0.5, 1.0);
    assert!((w - 1.0).abs() < 1e-12);
    // M/M/2, a = 1: C = 1/3, W_q = C / (2 - 1) = 1/3.
    assert!((erlang_c_wait(2, 1.0, 1.0) - 1.0 / 3.0).abs() < 1e-12);
}
