//! Caller-side policies and load spikes, each against its rule in a chain
//! small enough to compute by hand.

mod common;
use sim_core::{RunResult, Scenario};

/// client -> a -> b; b takes `b_service_s` (constant) and never queues.
/// The client propagates its deadline to a; a propagates none to b, which
/// would read none. `a_sets` are overrides of a's parameters (`key = value`
/// lines).
fn chain(a_sets: &str, b_service_s: f64) -> Scenario {
    chain_with(a_sets, b_service_s, &[])
}

/// [`chain`] with the further overrides `sets`.
fn chain_with(a_sets: &str, b_service_s: f64, sets: &[(&str, &str)]) -> Scenario {
    let text = format!(
        r#"
name = "policy"
horizon_s = 30
[client]
rate_per_s = 20
duration_s = 20
[client.call]
attempt_timeout_s = 1.0
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
propagate_deadline = true
[[tiers]]
name = "a"
slots = 10000
[tiers.call]
attempt_timeout_s = 0.3
max_retries = 5
backoff = "fixed"
backoff_base_s = 0.1
[[tiers]]
name = "b"
slots = 10000
service = {{ dist = "constant", mean_s = {b_service_s} }}
"#
    );
    let paths: Vec<(String, &str)> = a_sets
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (format!("a.{k}"), v))
        .collect();
    let mut all: Vec<(&str, &str)> = paths.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    all.extend_from_slice(sets);
    common::from_toml(&text, "policy", &all)
}

fn run(s: &Scenario) -> RunResult {
    common::run(s, 1)
}

#[test]
fn safety_margin_ends_attempts_early_and_fails_fast() {
    // a's single attempt must end by the client's deadline less 0.2 s, so
    // the client gets a's error at 0.8 s instead of timing out at 1 s.
    let r = run(&chain(
        "attempt_timeout_s = 1.0\nmax_retries = 0\ndeadline_margin_s = 0.2",
        2.0,
    ));
    let (client, a) = (&r.callers[0], &r.callers[1]);
    assert!(r.users > 300);
    assert_eq!(client.calls_error, r.users);
    assert_eq!(client.calls_timeout, 0);
    assert_eq!(a.calls_timeout, r.users);
    assert_eq!(r.failed_latency_median_s, Some(0.8));
    // A margin larger than the whole budget: no call at all, counted apart.
    let r = run(&chain("deadline_margin_s = 1.5", 2.0));
    assert_eq!(r.callers[1].margin_exhausted, r.users);
    assert_eq!(r.callers[1].calls, 0);
    assert_eq!(r.tiers[1].arrivals, 0);
    assert_eq!(r.failed_latency_median_s, Some(0.0));
    // Without a margin the same chain times out at the client.
    let r = run(&chain("attempt_timeout_s = 1.0\nmax_retries = 0", 2.0));
    assert_eq!(r.callers[0].calls_timeout, r.users);
}

#[test]
fn budget_admission_stops_before_an_attempt_that_cannot_fit() {
    // Deadline 1 s from a's start; attempts 0.3 s, backoff 0.1 s:
    // attempt 1 [0, 0.3), attempt 2 [0.4, 0.7); a third would start at 0.8
    // and need until 1.1 > 1.0: refused as insufficient_deadline.
    let r = run(&chain("budget_admission = true", 2.0));
    let a = &r.callers[1];
    assert_eq!(a.calls, 2 * r.users);
    assert_eq!(a.insufficient_deadline, r.users);
    assert_eq!(a.giveup_limit + a.giveup_deadline + a.no_time_left, 0);
    assert_eq!(r.tiers[1].max_arrivals_per_user, 2);
    // Count-only: a third attempt is sent (cut at the deadline), then the
    // fourth finds the deadline passed: more calls to b, all wasted.
    let r = run(&chain("", 2.0));
    let a = &r.callers[1];
    assert_eq!(a.calls, 3 * r.users);
    assert_eq!(a.insufficient_deadline, 0);
    assert_eq!(a.giveup_deadline, r.users);
    // The first attempt alone must fit too.
    let r = run(&chain(
        "attempt_timeout_s = 1.5\nbudget_admission = true",
        2.0,
    ));
    assert_eq!(r.callers[1].insufficient_deadline, r.users);
    assert_eq!(r.tiers[1].arrivals, 0);
    // Plenty of budget: admission changes nothing.
    let fast = run(&chain("budget_admission = true", 0.01));
    assert_eq!(fast.users_ok, fast.users);
    assert_eq!(fast.callers[1].insufficient_deadline, 0);
}

#[test]
fn load_spike_multiplies_the_arrival_rate_inside_its_window() {
    let base = common::ch37(
        "protected",
        "fifo",
        &[("svc_b.slow.duration_s", "0"), ("client.rate_per_s", "200")],
    );
    let spiked = common::ch37(
        "protected",
        "fifo",
        &[
            ("svc_b.slow.duration_s", "0"),
            ("svc_b.slow.start_s", "20"),
            ("client.rate_per_s", "200"),
            ("client.spike.start_s", "20"),
            ("client.spike.duration_s", "10"),
            ("client.spike.factor", "3"),
        ],
    );
    let (a, b) = (common::run(&base, 3), common::run(&spiked, 3));
    let rate = |r: &RunResult, from: usize, to: usize| {
        r.series.user_arrivals[from..to].iter().sum::<u64>() as f64 / (to - from) as f64
    };
    // Before the spike the same draws give the same arrivals.
    assert_eq!(a.series.user_arrivals[..20], b.series.user_arrivals[..20]);
    assert!(
        (rate(&b, 20, 30) / 600.0 - 1.0).abs() < 0.05,
        "{}",
        rate(&b, 20, 30)
    );
    assert!(
        (rate(&b, 30, 60) / 200.0 - 1.0).abs() < 0.05,
        "{}",
        rate(&b, 30, 60)
    );
    assert!((rate(&a, 20, 30) / 200.0 - 1.0).abs() < 0.05);
    // The spike is the trigger window: phases and recovery are measured from it.
    assert_eq!((b.window_start_s, b.window_end_s), (20.0, 30.0));
    assert_eq!(
        b.phases[1].users,
        b.series.user_arrivals[20..30].iter().sum::<u64>()
    );
}

#[test]
fn load_spike_can_tip_naive_into_metastable_failure() {
    // No slow window at all: a 5 s spike to 2.5x the load is the trigger.
    let spike = [
        ("svc_b.slow.duration_s", "0"),
        ("client.spike.start_s", "10"),
        ("client.spike.duration_s", "5"),
        ("client.spike.factor", "2.5"),
    ];
    let r = common::run(&common::ch37("naive", "fifo", &spike), 1);
    assert_eq!(r.recovery_s, None, "naive stays overloaded after the spike");
    let protected = common::ch37("protected", "fifo", &spike);
    assert!(
        common::run(&protected, 1)
            .recovery_s
            .is_some_and(|t| t <= 2.0)
    );
}

#[test]
fn cooperative_cancellation_abandons_work_at_the_first_check_past_the_deadline() {
    // b works 2 s for a caller whose deadline is 1 s after b starts; checks
    // every 0.3 s: at 0.3, 0.6, 0.9 the deadline has not passed, at 1.2 it
    // has, so b holds each slot 1.2 s instead of 2 s.
    let sets = "attempt_timeout_s = 1.0\nmax_retries = 0";
    let s = chain_with(
        sets,
        2.0,
        &[
            ("a.propagate_deadline", "true"),
            ("b.cancel_check_s", "0.3"),
        ],
    );
    let with = run(&s);
    let without = run(&chain(sets, 2.0));
    let b = &with.tiers[1];
    assert!(b.abandoned > 300);
    assert_eq!((b.abandoned + b.busy_at_end, b.completed), (b.started, 0));
    let per_request = b.busy_s / b.started as f64;
    assert!((per_request - 1.2).abs() < 1e-6, "{per_request}");
    let b0 = &without.tiers[1];
    assert_eq!(b0.abandoned, 0);
    assert!((b0.busy_s / b0.started as f64 - 2.0).abs() < 0.05);
    // Work that ends before the deadline is never abandoned.
    let fast = chain_with(
        sets,
        0.5,
        &[
            ("a.propagate_deadline", "true"),
            ("b.cancel_check_s", "0.1"),
        ],
    );
    let r = run(&fast);
    assert_eq!((r.tiers[1].abandoned, r.users_ok), (0, r.users));
}

#[test]
fn cancellation_cuts_the_wasted_work_of_ch37() {
    let plain = common::run(&common::ch37("deadline", "fifo", &[]), 1);
    let cancel = common::run(
        &common::ch37("deadline", "fifo", &[("svc_b.cancel_check_s", "0.01")]),
        1,
    );
    let (p, c) = (&plain.tiers[2], &cancel.tiers[2]);
    assert!(c.abandoned > 0 && p.abandoned == 0);
    // Work finished for callers that had left: most of it is now cut short.
    assert!(
        c.late * 4 < p.late,
        "late completions {} vs {}",
        c.late,
        p.late
    );
    assert!(c.busy_s < p.busy_s);
    assert!(cancel.wasted_share().unwrap() < plain.wasted_share().unwrap());
}

#[test]
fn retry_budget_refuses_retries_beyond_its_share() {
    // Every attempt of a times out (b takes 2 s); a would send 2 retries
    // per user. 20 users/s with ~1 s in flight: about 20 attempts in
    // flight, so a 10% budget with a floor of 1 allows about 2 retries.
    let without = run(&chain("", 2.0));
    let with = run(&chain(
        "retry_budget = true\nretry_budget_percent = 10\nretry_budget_min_concurrency = 1",
        2.0,
    ));
    let (a0, a) = (&without.callers[1], &with.callers[1]);
    assert_eq!(a0.retries_sent, 2 * without.users);
    assert_eq!(a0.retry_budget_exhausted, 0);
    assert!(
        a.retry_budget_exhausted > without.users / 2,
        "{}",
        a.retry_budget_exhausted
    );
    assert!(a.retries_sent + a.retry_budget_exhausted <= a0.retries_sent);
    assert!(a.retries_sent > 0);
    // A floor above any concurrency refuses nothing.
    let loose = run(&chain(
        "retry_budget = true\nretry_budget_min_concurrency = 100000",
        2.0,
    ));
    assert_eq!(loose.callers[1].retry_budget_exhausted, 0);
    assert_eq!(loose.callers[1].retries_sent, a0.retries_sent);
}

#[test]
fn adaptive_throttling_rejects_locally_when_the_backend_refuses() {
    // b has one slot, no queue and 2 s of work: almost every call is
    // rejected at once, so accepts stay near 0 and a stops sending.
    let overloaded = |sets: &str| {
        run(&chain_with(
            sets,
            2.0,
            &[("b.slots", "1"), ("b.queue_cap", "0")],
        ))
    };
    let plain = overloaded("");
    let throttled = overloaded("adaptive_throttle = true\nadaptive_throttle_window_s = 5");
    let a = &throttled.callers[1];
    assert_eq!(plain.callers[1].rejected_locally, 0);
    assert!(
        a.rejected_locally * 10 > (a.calls + a.rejected_locally) * 8,
        "{} of {} attempts rejected locally",
        a.rejected_locally,
        a.calls + a.rejected_locally
    );
    assert!(throttled.tiers[1].arrivals * 3 < plain.tiers[1].arrivals);
    // A healthy backend accepts everything, and nothing is rejected
    // locally: the probability comes from the requests before this one,
    // so the first, with no history, is not a coin toss ((1 - 0) / 2).
    let healthy = run(&chain("adaptive_throttle = true", 0.01));
    assert_eq!(healthy.callers[1].rejected_locally, 0);
    assert_eq!(healthy.users_ok, healthy.users);
}

#[test]
fn retry_after_spaces_the_retries_of_rejected_attempts() {
    // b has one slot, no queue and long work: a's attempts are rejected
    // (reply after 0.5 ms). a retries up to 3 times after a fixed 10 ms;
    // honouring b's Retry-After of 0.2 s, a user ends at
    // 4 x 0.0005 + 3 x 0.2 = 0.602 s instead of 4 x 0.0005 + 3 x 0.01 = 0.032 s.
    let rejecting = |sets: &str, retry_after: &str| {
        run(&chain_with(
            &format!("max_retries = 3\nbackoff_base_s = 0.01\n{sets}"),
            30.0,
            &[
                ("b.slots", "1"),
                ("b.queue_cap", "0"),
                ("b.retry_after_s", retry_after),
            ],
        ))
    };
    // A Retry-After nobody honours is refused (it could not act), so the
    // run that ignores it is the run without one.
    let ignored = rejecting("", "0");
    let honoured = rejecting("honor_retry_after = true", "0.2");
    assert_eq!(ignored.failed_latency_median_s, Some(0.032));
    assert_eq!(honoured.failed_latency_median_s, Some(0.602));
    assert_eq!(
        honoured.callers[1].calls_rejected,
        ignored.callers[1].calls_rejected
    );
}

#[test]
fn stacked_retries_amplify_as_the_arithmetic_says() {
    // grids/stacked-retries.toml: c rejects everything; every tier retries
    // at once, without deadlines. 3 tiers x 3 attempts = 27 calls at c per
    // user, 3 tiers x (1 + 3 retries) = 64, measured from the counters.
    for (retries, expected) in [("2", 27), ("3", 64)] {
        let mut sets: Vec<(String, &str)> = Vec::new();
        for caller in ["client", "a", "b"] {
            for (k, v) in [
                ("propagate_deadline", "false"),
                ("attempt_timeout_s", "10"),
                ("backoff_base_s", "0"),
                ("max_retries", retries),
            ] {
                sets.push((format!("{caller}.{k}"), v));
            }
        }
        for (k, v) in [
            ("c.slots", "1"),
            ("c.queue_cap", "0"),
            ("c.service.slow_p", "0"),
            ("c.service.mean_s", "1000"),
            ("client.rate_per_s", "5"),
        ] {
            sets.push((k.to_string(), v));
        }
        let sets: Vec<(&str, &str)> = sets.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        // c.slow_p = 0 leaves the file's c.service.slow_s idle: the file's
        // value, not refused (as in the grid).
        let s = common::scenario("three-hop.toml", &sets);
        let r = run(&s);
        let c = &r.tiers[2];
        assert_eq!(c.arrival_bound_per_user, expected);
        assert_eq!(c.max_arrivals_per_user, expected);
        // Every user but the one whose call holds c's slot gets exactly the
        // bound; that one waits out its timeout and the horizon.
        assert!(c.arrivals >= expected * (r.users - 1) && c.arrivals <= expected * r.users);
    }
}

#[test]
fn network_latency_is_paid_on_every_hop_both_ways() {
    // client -> a -> b and back, 10 ms each way on both hops, b works 20 ms:
    // every user takes 4 x 10 + 20 = 60 ms.
    let r = run(&chain_with(
        "",
        0.02,
        &[("a.latency.mean_s", "0.01"), ("b.latency.mean_s", "0.01")],
    ));
    assert_eq!(r.users_ok, r.users);
    assert_eq!(r.success_latency_median_s, Some(0.06));
    assert_eq!(r.success_latency_p99_s, Some(0.06));
    // A rejection crosses the hop too: reject latency (0.5 ms) + 10 ms back.
    let r = run(&chain_with(
        "max_retries = 0",
        30.0,
        &[
            ("b.latency.mean_s", "0.01"),
            ("b.slots", "1"),
            ("b.queue_cap", "0"),
        ],
    ));
    assert_eq!(r.failed_latency_median_s, Some(0.0205));
}

#[test]
fn calls_sent_after_the_user_left_are_counted() {
    // Fixed 1 s timeouts at a without a propagated deadline: a keeps
    // retrying b (2 s of work) after the client (0.5 s) has given up.
    let mut s = chain_with(
        "propagate_deadline = false\nattempt_timeout_s = 1.0\nmax_retries = 2",
        2.0,
        &[
            ("client.attempt_timeout_s", "0.5"),
            ("client.propagate_deadline", "false"),
        ],
    );
    let fixed = run(&s);
    let b = &fixed.tiers[1];
    // Attempts at 0, 1.1 and 2.2 s (backoff 0.1): the last two after 0.5 s.
    assert_eq!(b.max_arrivals_per_user, 3);
    assert!(
        b.arrivals_after_user_left >= 2 * (fixed.users - 2),
        "{}",
        b.arrivals_after_user_left
    );
    // With the client's deadline propagated, a stops with it.
    common::set(
        &mut s,
        &[
            ("a.propagate_deadline", "true"),
            ("client.propagate_deadline", "true"),
        ],
    );
    let propagated = run(&s);
    assert_eq!(propagated.tiers[1].arrivals_after_user_left, 0);
}

/// grids/scenarios/single-queue.toml: 80 users/s against 50/s of capacity,
/// 400 ms deadline, no retries.
fn single_queue(sets: &[(&str, &str)]) -> RunResult {
    run(&common::scenario("single-queue.toml", sets))
}

#[test]
fn lifo_serves_callers_that_still_wait() {
    let fifo = single_queue(&[]);
    let lifo = single_queue(&[("server.queue_order", "\"lifo\"")]);
    let adaptive = single_queue(&[
        ("server.queue_order", "\"adaptive_lifo\""),
        ("server.lifo_threshold", "10"),
    ]);
    // FIFO serves requests that waited for seconds: nearly all fail.
    assert!(
        fifo.success_rate().unwrap() < 0.05,
        "{:?}",
        fifo.success_rate()
    );
    // LIFO serves the newest: capacity (50/s of 80/s) turns into successes.
    assert!(
        lifo.success_rate().unwrap() > 0.55,
        "{:?}",
        lifo.success_rate()
    );
    assert!(
        adaptive.success_rate().unwrap() > 0.55,
        "{:?}",
        adaptive.success_rate()
    );
    // Adaptive LIFO is FIFO while the queue is short: no overload, same result.
    let quiet = [("client.rate_per_s", "20")];
    let q_fifo = single_queue(&quiet);
    let q_adaptive = single_queue(&[
        quiet[0],
        ("server.queue_order", "\"adaptive_lifo\""),
        ("server.lifo_threshold", "1000"),
    ]);
    assert_eq!(q_fifo, q_adaptive);
}

#[test]
fn codel_keeps_the_queueing_delay_near_its_target() {
    let fifo = single_queue(&[]);
    let codel = single_queue(&[("server.codel", "true")]);
    let (f, c) = (&fifo.tiers[0], &codel.tiers[0]);
    assert!(c.codel_dropped > 0 && f.codel_dropped == 0);
    let wait = |t: &sim_core::result::TierStats| t.wait_s / t.started as f64;
    assert!(wait(c) < 0.1, "CoDel mean wait {}", wait(c));
    assert!(wait(f) > 1.0, "FIFO mean wait {}", wait(f));
    // Short waits leave time for the 400 ms deadline: most served requests succeed.
    assert!(
        codel.success_rate().unwrap() > 0.5,
        "{:?}",
        codel.success_rate()
    );
}

#[test]
fn rate_limit_admits_its_rate_and_rejects_the_rest() {
    // 20 users/s for 20 s into b limited to 5/s with a burst of 2; a does
    // not retry.
    let r = run(&chain_with(
        "max_retries = 0",
        0.01,
        &[("b.rate_limit_per_s", "5"), ("b.rate_limit_burst", "2")],
    ));
    let b = &r.tiers[1];
    assert!((95..=102).contains(&b.admitted), "admitted {}", b.admitted);
    assert_eq!(b.admitted + b.rate_limited, b.arrivals);
    assert_eq!(r.users_ok, b.admitted);
    assert_eq!(r.callers[1].calls_rejected, b.rate_limited);
}

#[test]
fn circuit_breaker_fails_fast_while_the_downstream_is_down_and_closes_after() {
    // b is 1000x slower from 5 s to 10 s: every call of a times out.
    let down = |sets: &str| {
        run(&chain_with(
            &format!("max_retries = 0\n{sets}"),
            0.01,
            &[
                ("b.slow.start_s", "5"),
                ("b.slow.duration_s", "5"),
                ("b.slow.factor", "1000"),
            ],
        ))
    };
    let plain = down("");
    let breaker = down("breaker = true\nbreaker_open_s = 1.0");
    let a = &breaker.callers[1];
    assert_eq!(plain.callers[1].breaker_rejected, 0);
    assert!(a.breaker_rejected > 50, "{}", a.breaker_rejected);
    // Rejected locally, so b sees far fewer calls during the outage.
    assert!(breaker.tiers[1].arrivals_during * 3 < plain.tiers[1].arrivals_during);
    // Failing fast: the median failed request ends long before a's 0.3 s timeout.
    assert!(
        breaker.failed_latency_median_s.unwrap() < 0.05,
        "{:?}",
        breaker.failed_latency_median_s
    );
    // After the outage the probes succeed and it closes: recovery as without it.
    assert!(
        breaker.recovery_s.is_some_and(|t| t <= 2.0),
        "{:?}",
        breaker.recovery_s
    );
    let ok: u64 = breaker.series.user_ok_by_arrival[12..20].iter().sum();
    let all: u64 = breaker.series.user_arrivals[12..20].iter().sum();
    assert_eq!(ok, all, "closed again two seconds after the outage");
}

#[test]
fn adaptive_limit_steps_down_under_slow_replies_and_recovers() {
    // b: 100 slots, 50 ms of work normally, 20x slower from 5 s to 10 s.
    // Latency target 0.2 s: the limit falls during the slow window and
    // climbs back after it.
    let r = run(&chain_with(
        "max_retries = 0",
        0.05,
        &[
            ("b.slots", "100"),
            ("b.adaptive_limit", "true"),
            ("b.limit_latency_s", "0.2"),
            ("b.limit_min", "2"),
            ("b.slow.start_s", "5"),
            ("b.slow.duration_s", "5"),
            ("b.slow.factor", "20"),
        ],
    ));
    let b = &r.tiers[1];
    assert!(b.limit_lowest < 50, "lowest limit {}", b.limit_lowest);
    // Additive increase: +1 per clean window of 10 replies (0.5 s at 20/s).
    assert!(
        b.limit_at_end >= b.limit_lowest + 15,
        "{} -> {}",
        b.limit_lowest,
        b.limit_at_end
    );
    // Without slow replies the limit never moves.
    let quiet = chain_with(
        "max_retries = 0",
        0.05,
        &[
            ("b.slots", "100"),
            ("b.adaptive_limit", "true"),
            ("b.limit_latency_s", "0.2"),
        ],
    );
    let q = run(&quiet);
    assert_eq!(
        (q.tiers[1].limit_lowest, q.tiers[1].limit_at_end),
        (100, 100)
    );
}

#[test]
fn gradient_limit_steps_down_under_slow_replies_and_recovers() {
    // The tier above at 200 users/s with 30 slots and the gradient rule:
    // about 10 requests in service normally, all 30 in the slow window,
    // whose completions are 20x slower than the long-term latency: the
    // limit falls. After it, 10 in service is over half the lowered limit,
    // so the limit is updated again, and climbs back.
    let slow = |algorithm: &str| {
        run(&chain_with(
            "max_retries = 0",
            0.05,
            &[
                ("client.rate_per_s", "200"),
                ("b.slots", "30"),
                ("b.adaptive_limit", "true"),
                ("b.limit_algorithm", algorithm),
                ("b.limit_min", "2"),
                // A gradient setting: the AIMD rule refuses any value but
                // its default (0.2).
                (
                    "b.limit_smoothing",
                    if algorithm == "gradient" {
                        "0.5"
                    } else {
                        "0.2"
                    },
                ),
                ("b.slow.start_s", "5"),
                ("b.slow.duration_s", "5"),
                ("b.slow.factor", "20"),
            ],
        ))
    };
    let r = slow("gradient");
    let b = &r.tiers[1];
    assert!(b.limit_lowest < 15, "lowest limit {}", b.limit_lowest);
    assert_eq!(b.limit_at_end, 30, "from {}", b.limit_lowest);
    // It is not the AIMD rule under another name.
    assert_ne!(slow("aimd").tiers[1].limit_lowest, b.limit_lowest);
}

/// The chain with a single 1 s attempt at a, and b answering in 10 ms
/// (`dist`: constant or exponential) but in 500 ms for 5% of requests;
/// `a_sets` are further overrides of a.
fn slow_tail(dist: &str, a_sets: &str) -> RunResult {
    run(&chain_with(
        &format!("max_retries = 0\nattempt_timeout_s = 1.0\n{a_sets}"),
        0.01,
        &[
            ("b.service.dist", dist),
            ("b.service.slow_p", "0.05"),
            ("b.service.slow_s", "0.5"),
        ],
    ))
}

/// Hedging in `hedged` cuts the tail of `plain` (p99 from 500 ms or more to
/// under 100 ms), with a hedge for between one attempt in `one_in.1` and
/// one in `one_in.0`, and at most two arrivals at b per user.
fn assert_hedging_cuts_the_tail(plain: &RunResult, hedged: &RunResult, one_in: (u64, u64)) {
    assert!(plain.success_latency_p99_s.unwrap() >= 0.5);
    assert!(
        hedged.success_latency_p99_s.unwrap() < 0.1,
        "{:?}",
        hedged.success_latency_p99_s
    );
    let a = &hedged.callers[1];
    let first = a.calls - a.hedges_sent;
    assert!(
        a.hedges_sent * one_in.1 > first && a.hedges_sent * one_in.0 < first,
        "{} of {first}",
        a.hedges_sent
    );
    assert_eq!(hedged.tiers[1].arrival_bound_per_user, 2);
}

#[test]
fn hedging_cuts_the_tail_within_its_budget() {
    // b answers in 10 ms, but 5% of requests take 500 ms. A hedge after
    // 50 ms almost always finds a fast copy (both slow: 0.25%).
    let tail = |sets: &str| slow_tail("constant", sets);
    let plain = tail("");
    let hedged = tail("hedge_delay_s = 0.05\nhedge_budget_percent = 50");
    // Only the slow twentieth needs a hedge.
    assert_hedging_cuts_the_tail(&plain, &hedged, (10, 40));
    // A 1% budget refuses most of them.
    let tight = tail("hedge_delay_s = 0.05\nhedge_budget_percent = 1");
    let t = &tight.callers[1];
    assert!(t.hedges_refused > t.hedges_sent);
    assert!(t.hedges_sent as f64 <= 0.01 * t.calls as f64 + 1.0);
}

#[test]
fn a_client_total_deadline_bounds_the_users_attempts_and_its_policies_act_on_it() {
    // b never answers in time (2 s); the client tries 3 times, 1 s each,
    // at once after a failure, and a has no retries of its own. With
    // `extra` client settings: (client attempts per user, the user's
    // failed latency, the client's stop counters).
    let client = |extra: &[(&str, &str)]| {
        let mut sets = vec![
            ("client.max_retries", "2"),
            ("a.max_retries", "0"),
            ("a.attempt_timeout_s", "5.0"),
        ];
        sets.extend_from_slice(extra);
        let r = run(&chain_with("", 2.0, &sets));
        let c = &r.callers[0];
        assert!(r.users > 300);
        assert_eq!(r.users_failed, r.users);
        (
            c.calls as f64 / r.users as f64,
            r.failed_latency_median_s.unwrap(),
            [
                c.giveup_limit,
                c.giveup_deadline,
                c.insufficient_deadline,
                c.margin_exhausted,
            ]
            .map(|n| n == r.users),
        )
    };
    let [no, yes] = [false, true];
    assert_eq!(client(&[]), (3.0, 3.0, [yes, no, no, no]));
    // 1.5 s of patience: the second attempt ends at 1.5 s, the deadline.
    let patient = [("client.deadline_s", "1.5")];
    assert_eq!(client(&patient), (2.0, 1.5, [no, yes, no, no]));
    // Budget admission: 0.5 s left after the first cannot hold a second.
    let admission = [patient[0], ("client.budget_admission", "true")];
    assert_eq!(client(&admission), (1.0, 1.0, [no, no, yes, no]));
    // A margin of 0.2 s: the second attempt ends at 1.3 s, and no third
    // starts in the margin.
    let margin = [patient[0], ("client.deadline_margin_s", "0.2")];
    assert_eq!(client(&margin), (2.0, 1.3, [no, no, no, yes]));
    // Half the budget per attempt: 0.75 s, then the rest.
    let share = [patient[0], ("client.budget_share", "0.5")];
    assert_eq!(client(&share), (2.0, 1.5, [no, yes, no, no]));
}

#[test]
fn budget_share_gives_each_attempt_a_share_of_the_budget_on_arrival() {
    // a has 1 s (the client's deadline); b takes 2 s. Sharing everything,
    // a's one attempt uses the whole second. With half of the budget a
    // had on arrival: attempts end at 0.5, then (retry at 0.6) at the
    // deadline, 1.0; the next retry would be due at 1.1, too late.
    let shared = run(&chain("attempt_timeout_s = 1.0", 2.0));
    let half = run(&chain("attempt_timeout_s = 1.0\nbudget_share = 0.5", 2.0));
    assert_eq!(shared.callers[1].calls, shared.users);
    assert_eq!(half.callers[1].calls, 2 * half.users);
    assert_eq!(half.callers[1].giveup_deadline, half.users);
    assert_eq!(half.tiers[1].max_arrivals_per_user, 2);
}

#[test]
fn an_equal_split_gives_each_hop_a_third_whatever_its_own_work() {
    // client -> a -> b -> c, 1 s in all; a and b do 20 ms of work first
    // and c never answers in time. With 2/3 at a and 1/2 at b each hop has
    // exactly a third: b's attempt to c ends 1/3 s after it was sent, a's
    // to b 2/3 s after it was sent (own work comes out of each hop's own
    // third, not out of its downstream's share).
    let s = common::scenario(
        "three-hop.toml",
        &[
            ("c.service.slow_p", "1.0"),
            ("c.service.slow_s", "2.0"),
            ("a.budget_share", "0.6666666666666666"),
            ("b.budget_share", "0.5"),
        ],
    );
    let (_, steps) = common::trace(&s, 1, 0);
    let step = |who: &str, event: &str| {
        let step = steps.iter().find(|x| x.who == who && x.event == event);
        step.unwrap_or_else(|| panic!("no {event} at {who}: {steps:#?}"))
    };
    // The deadline each hop received, from what it had left when it sent.
    let deadline = |who: &str| {
        let send = step(who, "send");
        send.t_s + send.remaining_s.unwrap()
    };
    let close = |x: f64, y: f64| (x - y).abs() < 1e-8;
    let third = 1.0 / 3.0;
    assert_eq!((step("a", "send").t_s, step("b", "send").t_s), (0.02, 0.04));
    assert!(close(deadline("a"), 1.0));
    let b_budget = deadline("b") - 0.02;
    let c_deadline = step("b", "timeout").t_s;
    let c_budget = c_deadline - 0.04;
    assert!(close(c_budget, third), "{c_budget}");
    assert!(close(b_budget, 2.0 * third), "{b_budget}");
    // So a's part (1 s less b's budget) and b's (b's budget less c's) are
    // a third each, like c's.
    assert!(close(1.0 - b_budget, third) && close(b_budget - c_budget, third));
}

/// grids/scenarios/single-queue.toml with request classes, then `sets`.
fn single_queue_classes(classes: &[(&str, f64)], sets: &[(&str, &str)]) -> RunResult {
    let mut s = common::load("single-queue.toml");
    common::with_classes(&mut s, classes);
    common::set(&mut s, sets);
    common::valid(&s);
    run(&s)
}

#[test]
fn classes_are_served_in_priority_order_and_the_lowest_is_shed_first() {
    // One queue at 80/s against 50/s, 400 ms deadline, expired requests
    // dropped. Half the users are online, a quarter replay, a quarter
    // batch, served in that order: online (40/s) gets what it needs, replay
    // (20/s) about half of the 10/s left, batch almost nothing.
    let classes = [("online", 2.0), ("replay", 1.0), ("batch", 1.0)];
    let r = single_queue_classes(
        &classes,
        &[
            ("client.propagate_deadline", "true"),
            ("server.drop_expired", "true"),
        ],
    );
    let rate = |r: &RunResult, class: &str| {
        common::real(r, &format!("class_{class}_success_rate")).unwrap()
    };
    let (online, replay, batch) = (rate(&r, "online"), rate(&r, "replay"), rate(&r, "batch"));
    assert!(online > 0.9, "{online}");
    assert!(replay > 0.3 && replay < 0.7, "{replay}");
    assert!(batch < 0.1, "{batch}");
    let share = |i: usize| r.classes[i].users as f64 / r.users as f64;
    assert!((share(0) - 0.5).abs() < 0.03 && (share(2) - 0.25).abs() < 0.03);
    assert_eq!(r.classes.iter().map(|c| c.users).sum::<u64>(), r.users);
    // Shares are weights: the same users for any scale of them.
    let scaled = single_queue_classes(
        &[("online", 0.5), ("replay", 0.25), ("batch", 0.25)],
        &[
            ("client.propagate_deadline", "true"),
            ("server.drop_expired", "true"),
        ],
    );
    assert_eq!(scaled.classes, r.classes);
    // Shedding batch at a queue of 5: only batch arrivals are turned away,
    // and online is not worse off.
    let shed = single_queue_classes(
        &classes,
        &[
            ("client.propagate_deadline", "true"),
            ("server.drop_expired", "true"),
            ("server.shed_queue.batch", "5"),
        ],
    );
    let t = &shed.tiers[0];
    assert!(t.shed > 0);
    assert!(t.shed <= shed.classes[2].users);
    assert!(rate(&shed, "online") >= online - 0.01);
    // Without classes there are no class metrics, and nothing is drawn.
    let none = single_queue(&[]);
    assert!(none.classes.is_empty());
    assert!(none.metric("class_online_users").is_none());
}

#[test]
fn even_arrivals_send_exactly_the_rate_in_every_second() {
    // 80/s for 5 s: exactly 400 users, 80 in every second; a load spike of
    // 2x from 1 s to 2 s adds exactly 80. Poisson arrivals of the same rate
    // vary around 400.
    let even = single_queue(&[("client.duration_s", "5"), ("client.arrivals", "even")]);
    assert_eq!(even.users, 400);
    assert_eq!(even.series.user_arrivals[..5], [80; 5]);
    let spiked = single_queue(&[
        ("client.duration_s", "5"),
        ("client.arrivals", "even"),
        ("client.spike.start_s", "1"),
        ("client.spike.duration_s", "1"),
        ("client.spike.factor", "2"),
    ]);
    assert_eq!(spiked.users, 480);
    assert_eq!(spiked.series.user_arrivals[..5], [80, 160, 80, 80, 80]);
    let poisson = single_queue(&[("client.duration_s", "5")]);
    assert_ne!(poisson.series.user_arrivals[..5], [80; 5]);
}

#[test]
fn a_class_with_its_own_service_time_does_that_work() {
    // One server with room for everyone (10 slots, 10 users/s), 20 ms of
    // constant work; exports (a quarter of the users) take 200 ms here.
    // Every user succeeds, so the busy time is exactly 20 ms per read and
    // 200 ms per export; without the key every request costs 20 ms.
    let classes = [("read", 3.0), ("export", 1.0)];
    let sets = [
        ("client.rate_per_s", "10"),
        ("server.slots", "10"),
        ("client.attempt_timeout_s", "1"),
    ];
    let plain = single_queue_classes(&classes, &sets);
    let mut with = sets.to_vec();
    with.push(("server.class_service_s.export", "0.2"));
    let costly = single_queue_classes(&classes, &with);
    for r in [&plain, &costly] {
        assert_eq!(r.users_ok, r.users, "no request waits or fails");
    }
    let busy = |r: &RunResult| common::real(r, "server_busy_s").unwrap();
    let users = |r: &RunResult, i: usize| r.classes[i].users as f64;
    assert!((busy(&plain) - 0.02 * plain.users as f64).abs() < 1e-6);
    let expected = 0.02 * users(&costly, 0) + 0.2 * users(&costly, 1);
    assert!(
        (busy(&costly) - expected).abs() < 1e-6,
        "{} vs {expected}",
        busy(&costly)
    );
    assert!(users(&costly, 1) > 50.0, "some exports ran");
}

#[test]
fn a_bulkhead_caps_a_class_concurrency() {
    // b: 4 slots, 200 ms of work, the replay class limited to 1 slot. 20
    // users/s, all replay: one slot serves at most 5 per second, 150 in the
    // 30 s run.
    let mut s = chain("max_retries = 0\nattempt_timeout_s = 1.0", 0.2);
    common::with_classes(&mut s, &[("online", 0.0001), ("replay", 1.0)]);
    common::set(&mut s, &[("b.slots", "4"), ("b.class_slots.replay", "1")]);
    let r = run(&s);
    assert!(r.classes[0].users < 5);
    assert!(r.tiers[1].completed <= 150, "{}", r.tiers[1].completed);
    assert!(r.series.tiers[1].busy.iter().all(|b| *b <= 1));
    // Without the bulkhead all four slots work.
    common::set(&mut s, &[("b.class_slots.replay", "\"unbounded\"")]);
    let free = run(&s);
    assert!(free.tiers[1].completed > 2 * r.tiers[1].completed);
}

/// grids/scenarios/budget-admission.toml under one of the three policies
/// of grids/budget-admission.toml, the gateway's first attempt lasting
/// `first_s` (the others 150 ms).
fn budget_admission(policy: &str, first_s: &str) -> Scenario {
    let (propagate, admission) = match policy {
        "count_only" => ("false", "false"),
        "deadline" => ("true", "false"),
        _ => ("true", "true"),
    };
    let first = format!("[{first_s}]");
    common::scenario(
        "budget-admission.toml",
        &[
            ("gateway.attempt_timeouts_s", first.as_str()),
            ("client.propagate_deadline", propagate),
            ("gateway.budget_admission", admission),
        ],
    )
}

/// The gateway's story: its attempts as (time since arrival, budget left)
/// when sent and when they ended, how it stopped (time, reason), and when
/// the user request ended.
struct Story {
    sends: Vec<(f64, Option<f64>)>,
    ends: Vec<(f64, Option<f64>)>,
    stop: (f64, String),
    user_ended: f64,
}

fn story(s: &Scenario) -> Story {
    let (plain, steps) = common::trace(s, 1, 0);
    assert_eq!(plain, run(s), "tracing must not change the run");
    let gateway = |e: &'static str| {
        steps
            .iter()
            .filter(move |x| x.who == "gateway" && x.event.starts_with(e))
    };
    let stop = gateway("stop: ").next().unwrap();
    let user = steps.iter().find(|x| x.event == "user failed").unwrap();
    Story {
        sends: gateway("send").map(|x| (x.t_s, x.remaining_s)).collect(),
        ends: gateway("timeout").map(|x| (x.t_s, x.remaining_s)).collect(),
        stop: (stop.t_s, stop.event.clone()),
        user_ended: user.t_s,
    }
}

#[test]
fn budget_admission_experiment_gives_the_exact_figures() {
    // 800 ms in all, 100 ms fixed cost, attempts of 150 ms, 80 ms backoff,
    // at most 3 attempts: all three fit (100 + 3 x 150 + 2 x 80 = 710 ms),
    // whatever the policy. Budget left before each: 700, 470, 240 ms;
    // after each: 550, 320, 90 ms; then the attempt limit stops it.
    for policy in ["count_only", "deadline", "admission"] {
        let st = story(&budget_admission(policy, "0.15"));
        let times = |v: &[(f64, Option<f64>)]| v.iter().map(|s| s.0).collect::<Vec<f64>>();
        assert_eq!(times(&st.sends), [0.1, 0.33, 0.56], "{policy}");
        assert_eq!(times(&st.ends), [0.25, 0.48, 0.71], "{policy}");
        assert_eq!(st.stop, (0.71, "stop: attempt_limit".to_string()));
        assert_eq!(st.user_ended, 0.71, "{policy}");
        if policy != "count_only" {
            let left = |v: &[(f64, Option<f64>)]| v.iter().map(|s| s.1).collect::<Vec<_>>();
            assert_eq!(left(&st.sends), [Some(0.7), Some(0.47), Some(0.24)]);
            assert_eq!(left(&st.ends), [Some(0.55), Some(0.32), Some(0.09)]);
        }
    }
    // A first attempt of 600 ms ends at 700 ms with 100 ms left. Admission
    // reserves the next attempt's timeout: 80 ms backoff + 150 ms > 100 ms.
    let st = story(&budget_admission("admission", "0.6"));
    assert_eq!(st.sends, [(0.1, Some(0.7))]);
    assert_eq!(st.ends, [(0.7, Some(0.1))]);
    assert_eq!(st.stop, (0.7, "stop: insufficient_deadline".to_string()));
    assert_eq!(st.user_ended, 0.7);
    // With only the deadline, a second attempt is sent with 20 ms left.
    let st = story(&budget_admission("deadline", "0.6"));
    assert_eq!(st.sends, [(0.1, Some(0.7)), (0.78, Some(0.02))]);
    assert_eq!(st.stop, (0.8, "stop: deadline".to_string()));
    assert_eq!(st.user_ended, 0.8);
    // Count-only knows no deadline: three attempts (100 + 600 + 80 + 150 +
    // 80 + 150 = 1160 ms), the last ending 360 ms after the user (whose
    // client timed out at 800 ms) had gone.
    let st = story(&budget_admission("count_only", "0.6"));
    assert_eq!(st.sends, [(0.1, None), (0.78, None), (1.01, None)]);
    assert_eq!(st.stop, (1.16, "stop: attempt_limit".to_string()));
    assert_eq!(st.user_ended, 0.8);
    assert!((st.stop.0 - st.user_ended - 0.36).abs() < 1e-12);
    // The counters tell the same story for every user.
    let r = run(&budget_admission("admission", "0.6"));
    assert!(r.users > 5);
    assert_eq!(r.callers[1].insufficient_deadline, r.users);
    assert_eq!(r.tiers[1].arrivals, r.users);
    let r = run(&budget_admission("count_only", "0.6"));
    assert_eq!(r.tiers[1].arrivals, 3 * r.users);
    // The third attempt (at 1.01 s) leaves after the user's timeout.
    assert_eq!(r.tiers[1].arrivals_after_user_left, r.users);
    assert_eq!(r.tiers[0].late, r.users);
}

/// 100 users/s against 500/s of capacity (10 slots, 20 ms, a queue of 20),
/// then a burst: 50 times the rate for 0.2 s at t = 10 s. Rejected
/// attempts retry (up to 5 times) by the backoff in `sets`.
fn burst(sets: &[(&str, &str)]) -> RunResult {
    let text = r#"
name = "burst"
horizon_s = 30
[client]
rate_per_s = 100
duration_s = 25
[[client.spike]]
start_s = 10
duration_s = 0.2
factor = 50
[client.call]
attempt_timeout_s = 1.0
max_retries = 5
backoff = "fixed"
backoff_base_s = 2.0
[[tiers]]
name = "server"
slots = 10
queue_cap = 20
service = { dist = "constant", mean_s = 0.02 }
"#;
    run(&common::from_toml(text, "burst", sets))
}

#[test]
fn fixed_interval_retries_come_back_in_synchronized_waves() {
    // The burst is rejected together, so with a fixed 2 s interval its
    // retries come back together: spikes in the per-second arrivals at 12,
    // 14, ... 20 s, each rejected again but for what the slots and queue
    // take, with the plain load (about 100) in the seconds between.
    let fixed = burst(&[]);
    let a = &fixed.series.tiers[0].arrivals;
    let spikes: Vec<u64> = (12..=20).step_by(2).map(|t| a[t]).collect();
    let between: Vec<u64> = (11..=19).step_by(2).map(|t| a[t]).collect();
    assert!(
        spikes.iter().min() > Some(&(3 * between.iter().max().unwrap())),
        "spikes {spikes:?}, between {between:?}"
    );
    assert!(spikes.windows(2).all(|w| w[1] < w[0]), "{spikes:?}");
    // A constant Retry-After, honoured, synchronizes just the same.
    let retry_after = burst(&[
        ("server.retry_after_s", "2"),
        ("client.honor_retry_after", "true"),
        ("client.backoff", "full_jitter"),
        ("client.backoff_base_s", "0.05"),
    ]);
    assert_eq!(retry_after.series.tiers[0].arrivals, *a);
    // Full jitter spreads the retries: no wave after the first seconds, and
    // the burst is served by t = 13 s instead of still retrying at 20 s.
    let jitter = burst(&[
        ("client.backoff", "full_jitter"),
        ("client.backoff_cap_s", "8"),
    ]);
    let a = &jitter.series.tiers[0].arrivals;
    assert!(a[13..=20].iter().all(|n| *n < 200), "{:?}", &a[10..=20]);
    assert!(jitter.users_ok > fixed.users_ok);
}

/// client -> agg, which fans out to x (required, 0.1 s) and y (0.3 s,
/// required or not); branch attempts time out after 0.5 s. `sets` are
/// further overrides.
fn fan_out(y_required: bool, sets: &[(&str, &str)]) -> RunResult {
    let call =
        "{ attempt_timeout_s = 0.5, max_retries = 0, backoff = \"fixed\", backoff_base_s = 0 }";
    let text = format!(
        r#"
name = "fan-out"
horizon_s = 30
[client]
rate_per_s = 20
duration_s = 20
[client.call]
attempt_timeout_s = 2.0
max_retries = 0
backoff = "fixed"
backoff_base_s = 0
propagate_deadline = true
[[tiers]]
name = "agg"
slots = 10000
[[tiers.fanout]]
to = "x"
call = {call}
[[tiers.fanout]]
to = "y"
required = {y_required}
call = {call}
[[tiers]]
name = "x"
slots = 10000
service = {{ dist = "constant", mean_s = 0.1 }}
[[tiers]]
name = "y"
slots = 10000
service = {{ dist = "constant", mean_s = 0.3 }}
"#
    );
    run(&common::from_toml(&text, "fan-out", sets))
}

#[test]
fn fan_out_waits_for_the_critical_path() {
    let r = fan_out(true, &[]);
    assert!(r.users > 300);
    assert_eq!(r.users_ok, r.users);
    // Both branches run in parallel: the slower one (0.3 s) decides.
    assert_eq!(r.success_latency_median_s, Some(0.3));
    assert_eq!(r.success_latency_p99_s, Some(0.3));
    let (x, y) = (&r.tiers[1], &r.tiers[2]);
    assert_eq!((x.arrivals, y.arrivals), (r.users, r.users));
    // One caller per branch, named after both ends.
    let names: Vec<&str> = r.callers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["client", "agg_to_x", "agg_to_y"]);
    assert_eq!(r.callers[2].calls_ok, r.users);
}

#[test]
fn an_optional_branch_that_fails_degrades_instead_of_failing() {
    // y takes 1 s against a 0.5 s branch timeout: it always fails.
    let slow_y = [("y.service.mean_s", "1.0")];
    let optional = fan_out(false, &slow_y);
    assert_eq!(optional.users_ok, optional.users);
    assert_eq!(optional.tiers[0].degraded, optional.users);
    // The reply waits for y's timeout: the critical path includes it.
    assert_eq!(optional.success_latency_median_s, Some(0.5));
    let required = fan_out(true, &slow_y);
    assert_eq!(required.users_ok, 0);
    assert_eq!(required.tiers[0].degraded, 0);
    assert_eq!(required.failed_latency_median_s, Some(0.5));
}

#[test]
fn a_required_branch_that_fails_fails_the_caller_at_once() {
    // x times out at 0.05 s: the user fails then, while y still works; y's
    // reply at 0.3 s comes for nobody.
    let r = fan_out(true, &[("agg.fanout.x.attempt_timeout_s", "0.05")]);
    assert_eq!(r.users_ok, 0);
    assert_eq!(r.failed_latency_median_s, Some(0.05));
    assert_eq!(r.tiers[2].completed, r.users);
    assert_eq!(r.tiers[2].late, r.users);
    // The caller stopped waiting for y: its attempts end as cancelled.
    assert_eq!(r.callers[2].calls_cancelled, r.users);
    assert_eq!(r.callers[2].calls_pending + r.callers[2].calls_ok, 0);
}

#[test]
fn a_bulkhead_caps_the_attempts_in_flight_to_one_downstream() {
    // x now takes 1 s (within a 2 s branch timeout) and its bulkhead admits
    // 3 at a time: of 20 users/s, 3 per second reach x; the others fail
    // fast, locally. y is called at the same instant (whatever the order of
    // the branches), then cancelled; its own pool is untouched.
    let r = fan_out(
        true,
        &[
            ("x.service.mean_s", "1.0"),
            ("agg.fanout.x.attempt_timeout_s", "2.0"),
            ("agg.fanout.x.max_in_flight", "3"),
        ],
    );
    let (x, to_x, to_y) = (&r.tiers[1], &r.callers[1], &r.callers[2]);
    assert!(x.arrivals <= 3 * 21, "{}", x.arrivals);
    assert!(x.arrivals >= 3 * 19, "{}", x.arrivals);
    assert_eq!(to_x.bulkhead_rejected + x.arrivals, r.users);
    assert_eq!(r.users_ok, x.arrivals - to_x.calls_pending);
    assert_eq!(to_y.bulkhead_rejected, 0);
    assert_eq!(r.tiers[2].arrivals, r.users);
    assert_eq!(to_y.calls_cancelled, to_x.bulkhead_rejected);
    assert_eq!(r.tiers[2].late, to_x.bulkhead_rejected);
}

#[test]
fn hedging_on_a_quantile_learns_its_delay_and_can_cancel_the_loser() {
    // b: exponential 10 ms, but 5% of requests take 500 ms. Hedging at the
    // 90th percentile of a's recent latencies (about 30 ms) sends a copy
    // for roughly one attempt in ten.
    let tail = |sets: &str| slow_tail("exponential", &format!("hedge_budget_percent = 50\n{sets}"));
    let plain = slow_tail("exponential", "");
    let hedged = tail("hedge_quantile = 0.9");
    assert_hedging_cuts_the_tail(&plain, &hedged, (5, 20));
    let a = &hedged.callers[1];
    // Without cancellation the losing copies finish for nobody.
    let b = &hedged.tiers[1];
    assert!(
        b.late * 2 > a.hedges_sent,
        "{} late of {}",
        b.late,
        a.hedges_sent
    );
    // With it, each hedged attempt's loser is dropped or stopped: nothing
    // completes late, and b works less for the same successes.
    let cancelling = tail("hedge_quantile = 0.9\ncancel = \"hedge_losers\"");
    let (a, b) = (&cancelling.callers[1], &cancelling.tiers[1]);
    assert_eq!(b.late, 0);
    assert_eq!(b.cancelled + b.abandoned, a.hedges_sent);
    assert!(b.abandoned > 0);
    assert_eq!(cancelling.users_ok, cancelling.users);
    assert!(
        b.busy_s < hedged.tiers[1].busy_s * 0.9,
        "{} vs {}",
        b.busy_s,
        hedged.tiers[1].busy_s
    );
}

#[test]
fn cancellation_travels_down_through_callers_that_cancel_always() {
    // grids/scenarios/three-hop.toml with fixed 1 s timeouts and no
    // deadlines: 10% of requests take 1.5 s at c, so the client times out
    // and c finishes that work for nobody.
    let fixed_timeouts = [
        ("client.propagate_deadline", "false"),
        ("a.propagate_deadline", "false"),
        ("b.propagate_deadline", "false"),
        ("a.drop_expired", "false"),
        ("b.drop_expired", "false"),
        ("c.drop_expired", "false"),
    ];
    let three_hop = |sets: &[(&str, &str)]| {
        run(&common::scenario(
            "three-hop.toml",
            &[&fixed_timeouts[..], sets].concat(),
        ))
    };
    let never = three_hop(&[]);
    let c = &never.tiers[2];
    assert!(c.late > 50, "{}", c.late);
    // Every caller cancels: the client's timeout stops a, a stops b, b
    // stops c. Nothing completes late anywhere, and c works less.
    let always = [
        ("client.cancel", "always"),
        ("a.cancel", "always"),
        ("b.cancel", "always"),
    ];
    let r = three_hop(&always);
    assert!(
        r.tiers.iter().all(|t| t.late == 0),
        "{:?}",
        r.tiers.iter().map(|t| t.late).collect::<Vec<_>>()
    );
    assert!(r.tiers[2].abandoned > 50, "{}", r.tiers[2].abandoned);
    assert!(
        r.tiers[2].busy_s < c.busy_s - 40.0,
        "{} vs {}",
        r.tiers[2].busy_s,
        c.busy_s
    );
    assert_eq!(r.users_ok, never.users_ok);
    // It stops where a caller does not pass it on: b never cancels, so c
    // still finishes the slow work for nobody.
    let r = three_hop(&always[..2]);
    assert_eq!(r.tiers[0].late + r.tiers[1].late, 0);
    assert!(r.tiers[2].late > 50, "{}", r.tiers[2].late);
    // Hedge losers only: timeouts cancel nothing. (With a budget of 0 no
    // hedge is sent: the attempts are the same as without.)
    let r = three_hop(&[
        ("client.cancel", "hedge_losers"),
        ("client.hedge_delay_s", "0.5"),
        ("client.hedge_budget_percent", "0"),
    ]);
    assert_eq!(r.callers[0].hedges_sent, 0);
    assert_eq!(r.tiers[0].late, never.tiers[0].late);
}

/// grids/bad-replica.toml, point by point (its `[set]`, then each point):
/// one of svc_b's 4 replicas is 10x slow for 20 s.
fn bad_replica(balancer: &str, ejection: bool, seed: u64) -> RunResult {
    let mut sets = vec![("svc_a.balancer", balancer)];
    if ejection {
        sets.extend([
            ("svc_a.outlier_ejection", "true"),
            ("svc_a.outlier_base_ejection_s", "10.0"),
            ("svc_a.outlier_interval_s", "1.0"),
            ("svc_a.outlier_max_ejection_percent", "25.0"),
        ]);
    }
    let s = common::scenario("bad-replica.toml", &sets);
    sim_core::run(&s, seed).unwrap()
}

#[test]
fn balancers_keep_requests_away_from_one_bad_replica() {
    let metric = |r: &RunResult, name: &str| match r.metric(name) {
        Some(sim_core::Value::Count(n)) => n as f64,
        Some(sim_core::Value::Real(x) | sim_core::Value::MaybeReal(Some(x))) => x,
        other => panic!("{name}: {other:?}"),
    };
    for seed in [1, 2] {
        let at = |balancer: &str, ejection: bool| {
            let r = bad_replica(balancer, ejection, seed);
            // Retries go to another replica: users never see the bad host.
            assert!(
                metric(&r, "success_rate_during") >= 0.999,
                "{balancer} {ejection}"
            );
            let m = |name: &str| metric(&r, name);
            (
                m("success_latency_p99_s"),
                m("svc_a_calls_timeout"),
                m("svc_a_ejections"),
            )
        };
        let (rr_p99, rr_timeouts, rr_ejections) = at("round_robin", false);
        let (lo_p99, lo_timeouts, _) = at("least_outstanding", false);
        let (p2c_p99, p2c_timeouts, _) = at("p2c", false);
        let (pin_p99, _, _) = at("pin_until_error", false);
        let (rr_ej_p99, rr_ej_timeouts, rr_ej_ejections) = at("round_robin", true);
        let label = format!("seed {seed}");
        // Blind round robin keeps sending the bad host its quarter; the
        // load-aware rules see its requests pile up and avoid it.
        assert!(rr_timeouts > 5.0 * lo_timeouts.max(p2c_timeouts), "{label}");
        assert!(rr_p99 > 1.5 * lo_p99.max(p2c_p99), "{label}");
        // Pinning moves only on an error: as slow as round robin's tail.
        assert!(pin_p99 > 1.5 * lo_p99, "{label}");
        // Ejection takes the bad host out of round robin's turn.
        assert_eq!(rr_ejections, 0.0);
        assert!(rr_ej_ejections >= 1.0, "{label}");
        assert!(rr_ej_timeouts * 10.0 < rr_timeouts, "{label}");
        assert!(rr_ej_p99 * 2.0 < rr_p99, "{label}");
    }
}

/// With one replica the balancer and ejection are never consulted: setting
/// them changes nothing, bit for bit (a grid point of a replicas axis from
/// 1 runs so), and a scenario that sets them so is refused with the reason.
#[test]
fn with_one_replica_balancing_changes_nothing() {
    let plain = common::ch37("naive", "fifo", &[]);
    let mut set = common::load("ch37");
    common::set(
        &mut set,
        &[
            ("strategy", "naive"),
            ("dispatch", "fifo"),
            ("svc_a.balancer", "p2c"),
            ("svc_a.outlier_ejection", "true"),
            ("svc_a.outlier_consecutive", "1"),
            ("svc_b.replicas", "1"),
            ("svc_b.slow.replicas", "[0]"),
        ],
    );
    let point = sim_core::ValidScenario::point(set.clone(), &[]).unwrap();
    assert_eq!(
        sim_core::run(&plain, 3).unwrap(),
        sim_core::run_validated(&point, 3, &mut sim_core::Scratch::default()).unwrap()
    );
    let refused: Vec<String> = (sim_core::validate(&set).unwrap_err().iter())
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        refused,
        [
            "svc_a.balancer: \"p2c\" has no effect: balancer is a choice between the called \
             tier's replicas, and svc_a calls svc_b, which has one replica; set svc_b.replicas \
             > 1, or leave balancer at its default (\"round_robin\")",
            "svc_a.outlier_ejection: true has no effect: outlier_ejection is a choice between \
             the called tier's replicas, and svc_a calls svc_b, which has one replica; set \
             svc_b.replicas > 1, or leave outlier_ejection at its default (false)",
        ]
    );
}

/// grids/shared-db.toml, point by point: svc_a (naive retries) and svc_b
/// (a deadline, one retry; the users need it) share db, 4x slow for 10 s.
/// `(success during, success after, recovered)` of the users, i.e. svc_b.
fn shared_db(bulkhead: &str, cap: &str, budget: &str, seed: u64) -> (f64, f64, bool) {
    let s = common::scenario(
        "shared-db.toml",
        &[
            ("svc_b.max_in_flight", bulkhead),
            ("db.queue_cap", cap),
            ("svc_a.fanout.db.retry_budget", budget),
        ],
    );
    let r = sim_core::run(&s, seed).unwrap();
    for name in [
        "db_max_queue",
        "db_rejected_full",
        "svc_a_to_db_retries_sent",
        "svc_b_bulkhead_rejected",
    ] {
        assert!(r.metric(name).is_some(), "the grid's metric {name}");
    }
    let rate = |name: &str| common::real(&r, name).unwrap();
    (
        rate("success_rate_during"),
        rate("success_rate_after"),
        r.recovery_s.is_some(),
    )
}

#[test]
fn a_shared_database_carries_one_service_s_retry_storm_to_the_other() {
    let none = "\"unbounded\"";
    for seed in [1, 2] {
        let at = |bulkhead, cap, budget| shared_db(bulkhead, cap, budget, seed);
        let label = format!("seed {seed}");
        // Unprotected, svc_a's retries keep db's queue full after the
        // window: svc_b never recovers, whatever its own deadline.
        let (during, after, recovered) = at(none, none, "false");
        assert!(!recovered && after < 0.01 && during < 0.05, "{label}");
        // svc_b's bulkhead refuses only svc_b's own calls: db's queue
        // still holds svc_a's storm, and svc_b fails faster.
        let (b_during, b_after, b_recovered) = at("8", none, "false");
        assert!(
            !b_recovered && b_after < 0.01 && b_during <= during,
            "{label}"
        );
        // A queue cap at db rejects the storm fast: svc_b recovers at once
        // and keeps a third of its users during the window.
        let (c_during, c_after, c_recovered) = at(none, "50", "false");
        assert!(c_recovered && c_after > 0.99 && c_during > 0.25, "{label}");
        // A retry budget at the source ends the storm after the window.
        let (_, r_after, r_recovered) = at(none, none, "true");
        assert!(r_recovered && r_after > 0.98, "{label}");
        // Both: more than half of svc_b's users during the window.
        let (both_during, both_after, _) = at(none, "50", "true");
        assert!(both_during > 0.5 && both_after > 0.999, "{label}");
        // With the cap, svc_b's bulkhead costs it more than half of that.
        let (bc_during, _, bc_recovered) = at("8", "50", "false");
        assert!(bc_recovered && bc_during * 2.0 < c_during, "{label}");
    }
}

/// grids/scenarios/bad-replica.toml under round robin, with a circuit
/// breaker at svc_a of scope `scope` (one for svc_b, or one per replica).
fn bad_replica_breaker(scope: &str, seed: u64) -> RunResult {
    let s = common::scenario(
        "bad-replica.toml",
        &[("svc_a.breaker", "true"), ("svc_a.breaker_scope", scope)],
    );
    sim_core::run(&s, seed).unwrap()
}

#[test]
fn a_breaker_per_replica_opens_for_the_bad_host_only() {
    let m = |r: &RunResult, name: &str| common::real(r, name).unwrap();
    for seed in [1, 2] {
        let label = format!("seed {seed}");
        // One breaker for svc_b: the bad host's timeouts (a quarter of the
        // calls, half of a window now and then) open it for every replica,
        // and users fail during the window.
        let edge = bad_replica_breaker("service", seed);
        assert!(m(&edge, "success_rate_during") < 0.5, "{label}");
        assert!(m(&edge, "svc_a_breaker_rejected") > 10_000.0, "{label}");
        // One per replica: only the bad host's opens, the balancer sends its
        // turns to the other three, and no call is refused.
        let per = bad_replica_breaker("replica", seed);
        assert!(m(&per, "success_rate_during") >= 0.999, "{label}");
        assert_eq!(m(&per, "svc_a_breaker_rejected"), 0.0, "{label}");
        let (r0, r1) = (m(&per, "svc_b_r0_arrivals"), m(&per, "svc_b_r1_arrivals"));
        assert!(r1 < 0.7 * r0, "{label}: {r1} vs {r0}");
        assert!(
            m(&per, "svc_a_calls_timeout") < 0.6 * m(&edge, "svc_a_calls_timeout"),
            "{label}"
        );
    }
}

/// grids/scenarios/bad-replica.toml under round robin, with a bulkhead of
/// `limit` at svc_a of scope `scope` (for svc_b, or per replica).
fn bad_replica_bulkhead(limit: &str, scope: &str, seed: u64) -> RunResult {
    let s = common::scenario(
        "bad-replica.toml",
        &[
            ("svc_a.max_in_flight", limit),
            ("svc_a.bulkhead_scope", scope),
        ],
    );
    sim_core::run(&s, seed).unwrap()
}

#[test]
fn a_bulkhead_per_replica_is_not_filled_by_the_bad_host() {
    let m = |r: &RunResult, name: &str| common::real(r, name).unwrap();
    for seed in [1, 2] {
        let label = format!("seed {seed}");
        // 32 in flight for svc_b: the bad host's slow requests hold most of
        // them, and the others' calls fail fast with them.
        let edge = bad_replica_bulkhead("32", "service", seed);
        assert!(m(&edge, "success_rate_during") < 0.7, "{label}");
        assert!(m(&edge, "svc_a_bulkhead_rejected") > 10_000.0, "{label}");
        // 8 per replica, the same 32 in all: the bad host fills its own 8,
        // the balancer sends its turns to the others.
        let per = bad_replica_bulkhead("8", "replica", seed);
        assert!(m(&per, "success_rate_during") >= 0.999, "{label}");
        assert!(m(&per, "svc_a_bulkhead_rejected") < 100.0, "{label}");
        let (r0, r1) = (m(&per, "svc_b_r0_arrivals"), m(&per, "svc_b_r1_arrivals"));
        assert!(r1 < 0.75 * r0, "{label}: {r1} vs {r0}");
        assert!(
            m(&per, "svc_a_calls_timeout") * 3.0 < m(&edge, "svc_a_calls_timeout"),
            "{label}"
        );
    }
}

#[test]
fn an_error_window_fails_its_share_fast_on_the_replicas_it_names() {
    // b answers in 10 ms; in [5 s, 10 s) every request that starts there
    // fails after b's error latency (2 ms), without b's work. a does not
    // retry: exactly the users arriving in the window fail, in 2 ms.
    let sets = [
        ("a.max_retries", "0"),
        ("b.errors.start_s", "5"),
        ("b.errors.duration_s", "5"),
        ("b.errors.p", "1"),
        ("b.error_latency_s", "0.002"),
    ];
    let r = run(&chain_with("", 0.01, &sets));
    let b = &r.tiers[1];
    assert_eq!(r.phases[1].users, r.users - r.users_ok);
    assert_eq!(b.errors_injected, r.phases[1].users);
    assert_eq!(b.completed - b.completed_ok, b.errors_injected);
    assert_eq!(r.failed_latency_median_s, Some(0.002));
    assert!(b.busy_s < 0.01 * b.completed_ok as f64 + 0.0021 * b.errors_injected as f64);
    // A share p fails, as binomial draws: 30% of about 100 users.
    let mut some = sets.to_vec();
    some[3] = ("b.errors.p", "0.3");
    let r = run(&chain_with("", 0.01, &some));
    let (n, k) = (r.phases[1].users as f64, r.tiers[1].errors_injected as f64);
    let sd = (n * 0.3 * 0.7).sqrt();
    assert!((k - 0.3 * n).abs() < 4.0 * sd, "{k} of {n}");
    // On one replica of two: round robin sends half there, and one retry
    // to the other replica saves every user.
    let mut one = sets.to_vec();
    one.extend([
        ("b.replicas", "2"),
        ("b.errors.replicas", "[1]"),
        ("a.max_retries", "1"),
    ]);
    let r = run(&chain_with("", 0.01, &one));
    let b = &r.tiers[1];
    assert_eq!(r.users_ok, r.users);
    assert_eq!(b.replicas[0].errors_injected, 0);
    assert_eq!(b.replicas[1].errors_injected, b.errors_injected);
    assert!(b.errors_injected > r.phases[1].users / 3);
    assert_eq!(r.callers[1].calls_error, b.errors_injected);
}

#[test]
fn a_limiter_answering_500_keeps_the_retry_waves_that_jitter_dissolves() {
    // grids/reject-500-vs-429.toml, seed 1: a burst rejected by the
    // limiter comes back every 800 ms at once. A 429 whose Retry-After
    // equals the clients' fixed wait changes nothing; +-20% jitter on it
    // spreads the waves: more users succeed during the trigger and the
    // service recovers sooner. Clients that do not retry 500s fail fast.
    let run_as = |sets: &[(&str, &str)]| run(&common::scenario("limiter.toml", sets));
    let as_500 = run_as(&[]);
    let as_429 = [
        ("api.reject_as", "overload"),
        ("api.retry_after_s", "0.8"),
        ("client.honor_retry_after", "true"),
    ];
    // Only the outcomes' names differ (rejected instead of error).
    let same = |r: &RunResult| (r.phases, r.series.tiers[0].arrivals.clone());
    assert_eq!(same(&run_as(&as_429)), same(&as_500), "the same waits");
    // At one-second resolution a wave every 800 ms is a beat: two waves
    // fall into one second in every four (10 and 14 s after the burst).
    let arrivals = &as_500.series.tiers[0].arrivals;
    assert!(arrivals[14] > arrivals[13] + 250 && arrivals[14] > arrivals[15] + 250);
    let mut jitter = as_429.to_vec();
    jitter.push(("client.backoff_jitter", "0.2"));
    let jittered = run_as(&jitter);
    let during = |r: &RunResult| r.phases[1].ok as f64 / r.phases[1].users as f64;
    assert!(during(&as_500) < 0.6 && during(&jittered) > 0.9);
    assert!(jittered.recovery_s.unwrap() + 3.0 < as_500.recovery_s.unwrap());
    assert!(jittered.tiers[0].rejected_full < as_500.tiers[0].rejected_full);
    let no_retry = run_as(&[(
        "client.retry_on",
        "[\"timeout\", \"overload\", \"expired\"]",
    )]);
    let c = &no_retry.callers[0];
    assert_eq!(c.retries_sent, 0);
    assert_eq!(c.giveup_not_retryable, c.calls_error);
    assert_eq!(no_retry.users_failed, c.calls_error);
}

#[test]
fn a_crashed_tier_loses_its_work_and_refuses_or_swallows_arrivals() {
    // b works 100 ms; a tries 6 times, 300 ms each, 100 ms apart; b is
    // down from 5 s to 7 s.
    let crash = |mode: &str| {
        let sets = [
            ("a.attempt_timeout_s", "0.3"),
            ("b.crash.start_s", "5"),
            ("b.crash.duration_s", "2"),
            ("b.crash.mode", mode),
        ];
        run(&chain_with("", 0.1, &sets))
    };
    let r = crash("refused");
    let (a, b) = (&r.callers[1], &r.tiers[1]);
    // Requests in service at the crash are lost: their attempts time out.
    assert!(b.lost_in_crash > 0);
    assert!(a.calls_timeout >= b.lost_in_crash);
    assert_eq!(b.lost_queued_in_crash, 0, "b never queues");
    // Every attempt while down is refused at once (1 ms): a user whose six
    // attempts all fall in the window fails after 6 x 1 ms + 5 x 100 ms.
    assert_eq!(a.calls_refused, b.refused_down);
    assert!(b.refused_down > 0 && b.black_holed == 0);
    assert_eq!(r.failed_latency_median_s, Some(0.506));
    // After the restart everyone succeeds.
    assert_eq!(r.phases[2].ok, r.phases[2].users);
    // A black hole answers nothing: those attempts time out instead.
    let r = crash("black_hole");
    let (a, b) = (&r.callers[1], &r.tiers[1]);
    assert_eq!((a.calls_refused, b.refused_down), (0, 0));
    assert!(b.black_holed > 0);
    assert!(a.calls_timeout >= b.black_holed + b.lost_in_crash);
    assert_eq!(r.phases[2].ok, r.phases[2].users);
}

#[test]
fn service_time_grows_with_the_requests_in_service() {
    // b: 100 ms + 10 ms per request in service (itself included). One
    // user at a time (each waits 1 s): every request takes 110 ms.
    let lone = run(&chain_with(
        "",
        0.1,
        &[
            ("client.rate_per_s", "0.5"),
            ("b.service.per_inflight_s", "0.01"),
        ],
    ));
    assert!(lone.users > 5);
    assert_eq!(lone.success_latency_median_s, Some(0.11));
    assert_eq!(lone.success_latency_p99_s, Some(0.11));
    // At 20 users/s: an arrival sees (Poisson arrivals see time averages)
    // 20 x W requests in service, by Little's law, and adds itself, so
    // W = 0.1 + 0.01 (1 + 20 W), W = 0.11 / 0.8 = 137.5 ms; without the
    // term, 100 ms.
    let loaded = run(&chain_with(
        "",
        0.1,
        &[("b.service.per_inflight_s", "0.01")],
    ));
    let b = &loaded.tiers[1];
    let mean = b.busy_s / b.completed as f64;
    assert!((mean - 0.1375).abs() < 0.005, "{mean}");
    let plain = run(&chain("", 0.1));
    let p = &plain.tiers[1];
    assert!((p.busy_s / p.completed as f64 - 0.1).abs() < 1e-9);
}

/// A rate limit per replica admits the rate at each replica (the tier
/// admits the rate times its replicas); one shared by the service admits
/// the rate once, whatever the number of replicas.
#[test]
fn a_service_wide_rate_limit_is_one_bucket_for_all_replicas() {
    let admitted = |scope: &str, replicas: &str| {
        let s = common::ch37(
            "naive",
            "fifo",
            &[
                ("svc_b.replicas", replicas),
                ("svc_b.rate_limit_per_s", "50"),
                ("svc_b.rate_limit_burst", "1"),
                ("svc_b.rate_limit_scope", scope),
                ("svc_b.slow.duration_s", "0"),
            ],
        );
        run(&s).tiers[2].admitted as f64
    };
    // 70 s at 50 per second, one token to start with; the offered load is
    // far above it all along (400 users per second).
    let once = 50.0 * 70.0 + 1.0;
    let shared = admitted("service", "4");
    assert!(
        shared <= once && shared >= 0.95 * once,
        "service, 4 replicas: {shared}"
    );
    let two = admitted("service", "2");
    assert!(
        (shared - two).abs() <= 0.01 * once,
        "the number of replicas does not matter: {shared} vs {two}"
    );
    let each = admitted("replica", "4");
    assert!(
        each <= 4.0 * once && each >= 0.95 * 4.0 * once,
        "replica, 4 replicas: {each}"
    );
}

#[test]
fn a_hedge_loser_cancelled_while_queued_is_dropped_when_it_would_start() {
    // b has two slots: a slow request holds one, so copies queue behind
    // each other, and the loser of a hedged attempt is often still queued
    // when the winner answers.
    let s = chain_with(
        "max_retries = 0\nattempt_timeout_s = 1.0\nhedge_delay_s = 0.05\nhedge_budget_percent = 50\ncancel = \"hedge_losers\"",
        0.01,
        &[
            ("b.slots", "2"),
            ("b.service.slow_p", "0.05"),
            ("b.service.slow_s", "0.5"),
        ],
    );
    let r = run(&s);
    let b = &r.tiers[1];
    assert!(b.cancelled > 0, "{b:?}");
    // A dropped copy never takes a slot: every arrival started, was
    // dropped, or is still queued or in transit.
    assert_eq!(
        b.arrivals,
        b.started + b.cancelled + b.queued_at_end + b.rejected_full + b.dropped_expired,
        "{b:?}"
    );
}

/// GC-like pauses: while a tier pauses its slots do no work. One slot of
/// 20 ms against 80 users/s stays busy from the first second to the
/// horizon (40 s), so every pause costs exactly its length in completions:
/// 39 ticks (1 s to 39 s) of 0.25 s are 9.75 s, 487.5 fewer 20 ms units.
/// With a term per queued request, each pause lasts its base plus the term
/// times the queue when it begins (the queue sampled at the second's end,
/// just before the tick).
#[test]
fn a_gc_pause_stops_the_slots_for_its_length() {
    let completed = |sets: &[(&str, &str)]| {
        let r = common::run(&common::scenario("single-queue.toml", sets), 1);
        (r.tiers[0].completed, r)
    };
    let (plain, _) = completed(&[]);
    let (paused, r) = completed(&[("server.gc.every_s", "1"), ("server.gc.pause_s", "0.25")]);
    let t = &r.tiers[0];
    assert_eq!(
        (t.gc_pauses, t.gc_paused_s, t.gc_longest_pause_s),
        (39, 9.75, 0.25)
    );
    let lost = plain - paused;
    assert!((487..=488).contains(&lost), "{plain} - {paused}");

    let (_, r) = completed(&[
        ("server.gc.every_s", "1"),
        ("server.gc.pause_s", "0.1"),
        ("server.gc.per_queued_s", "0.0001"),
    ]);
    let queued: u64 = r.series.tiers[0].queue_len[..39].iter().sum();
    let expected = 39.0 * 0.1 + 0.0001 * queued as f64;
    assert!(
        (r.tiers[0].gc_paused_s - expected).abs() < 1e-9,
        "{} vs {expected}",
        r.tiers[0].gc_paused_s
    );
    assert!(r.tiers[0].gc_longest_pause_s > 0.1 + 0.0001 * 500.0);
}

/// A leaky bucket lets requests into the tier exactly 1 / rate apart: at
/// 40 a second (25 ms apart, longer than the 20 ms of work) against 80
/// users a second, every whole second of arrivals admits exactly 40, the
/// one slot is always free when a request leaves the bucket (no queue),
/// and no request waits more than its 4 predecessors' turns (100 ms) plus
/// its work. A token bucket of the same rate and size lets 4 through at
/// once instead, so requests queue at the slot.
#[test]
fn a_leaky_bucket_admits_one_request_per_interval() {
    let run_with = |kind: &str| {
        let s = common::scenario(
            "single-queue.toml",
            &[
                ("server.rate_limit_per_s", "40"),
                ("server.rate_limit_burst", "4"),
                ("server.rate_limit_kind", kind),
            ],
        );
        common::run(&s, 1)
    };
    let r = run_with("leaky_bucket");
    let t = &r.tiers[0];
    assert!(r.series.tiers[0].admitted[1..30].iter().all(|&a| a == 40));
    assert_eq!(t.max_queue, 0);
    assert!(t.bucket_waited > 1000 && t.rate_limited > 1000);
    assert_eq!(t.arrivals, t.admitted + t.rate_limited + t.in_bucket_at_end);
    let p99 = r.success_latency_p99_s.expect("successes");
    assert!(p99 > 0.1 && p99 <= 0.12 + 1e-9, "{p99}");
    let token = run_with("token_bucket");
    assert!(token.tiers[0].max_queue >= 3);
    assert_eq!(token.tiers[0].bucket_waited, 0);
}

/// A crash loses what waits in the replica's own leaky bucket, as it loses
/// its queue: two replicas take 40 users a second each against buckets of
/// 20 a second and 4 places, so 4 requests wait in front of replica 0 at
/// every instant, and its crash at 10 s loses those 4; it restarts with an
/// empty bucket. A bucket the whole service
/// shares is not the replica's: its waiting requests leave on their turns
/// and are refused while their replica is down.
#[test]
fn a_crash_empties_the_replicas_own_leaky_bucket() {
    let run_with = |scope: &str, rate: &str| {
        let s = common::scenario(
            "single-queue.toml",
            &[
                ("server.replicas", "2"),
                ("server.rate_limit_per_s", rate),
                ("server.rate_limit_burst", "4"),
                ("server.rate_limit_kind", "leaky_bucket"),
                ("server.rate_limit_scope", scope),
                ("server.crash.start_s", "10.001"),
                ("server.crash.duration_s", "1"),
                ("server.crash.replicas", "[0]"),
            ],
        );
        common::run(&s, 1)
    };
    let own = run_with("replica", "20");
    let down = &own.tiers[0].replicas[0];
    assert_eq!(down.lost_queued_in_crash, 4);
    assert_eq!(own.tiers[0].replicas[1].lost_queued_in_crash, 0);
    // Counted admitted in the seconds they entered the bucket, not in the
    // crash's (1 ms into second 10), as a burst let in as they were lost.
    let admitted = &own.series.tiers[0].replicas[0].admitted;
    assert!(admitted[10] <= 1, "{admitted:?}");
    assert_eq!(
        down.arrivals,
        down.admitted + down.rate_limited + down.refused_down + down.in_bucket_at_end
    );
    let shared = run_with("service", "40");
    let kept = &shared.tiers[0].replicas[0];
    assert_eq!(kept.lost_queued_in_crash, 0);
    assert!(kept.refused_down > 0);
}

/// A look-aside cache answers its hit ratio of the lookups, so a cold one
/// sends the tier 1 / (1 - h) times the load of a warm one: with h = 0.9
/// and a database with room to spare, db's arrivals per second are 10 times
/// higher during the flush (every lookup misses) than before it, and back
/// to a tenth once the misses have refilled the keys.
#[test]
fn a_cold_cache_sends_the_tier_one_over_one_minus_h_times_the_load() {
    let s = common::scenario("cold-cache.toml", &[("db.slots", "100")]);
    let r = common::run(&s, 1);
    let (db, series) = (&r.tiers[1], &r.series.tiers[1]);
    let sum = |v: &[u64], from: usize, to: usize| v[from..to].iter().sum::<u64>() as f64;
    let warm = sum(&series.arrivals, 5, 20) / 15.0;
    let cold = sum(&series.arrivals, 20, 22) / 2.0;
    let ratio = cold / warm;
    assert!((ratio - 10.0).abs() < 1.0, "{cold} / {warm} = {ratio}");
    // During the flush nothing hits; every lookup is a miss and reaches db.
    assert_eq!(sum(&series.cache_hits, 20, 22), 0.0);
    assert_eq!(
        sum(&series.cache_misses, 20, 22),
        sum(&series.arrivals, 20, 22)
    );
    // The 2000 keys refill within seconds of the flush: the share of hits
    // is back to 0.9.
    assert_eq!(db.cache_fills, 2000);
    let hits = sum(&series.cache_hits, 30, 60);
    let share = hits / (hits + sum(&series.cache_misses, 30, 60));
    assert!((share - 0.9).abs() < 0.005, "{share}");
    assert!((sum(&series.arrivals, 30, 60) / 30.0 / warm - 1.0).abs() < 0.1);
    // Hits and misses are the app's calls to db, every one.
    assert_eq!(db.cache_hits + db.cache_misses, r.callers[1].calls);
    assert_eq!(db.cache_misses, db.arrivals + db.in_transit_at_end);
}

/// The cache warms only as fast as the tier answers: the same flush
/// against the 8-slot database, which cannot serve every lookup, leaves it
/// with an unbounded queue that answers nothing in time, so no key is
/// refilled and the cache stays cold to the end; a queue cap answers
/// some in time and the cache refills.
#[test]
fn a_cache_refills_only_from_the_answers_of_its_tier() {
    let cold = common::run(&common::scenario("cold-cache.toml", &[]), 1);
    assert!(
        cold.tiers[1].cache_fills < 100,
        "{}",
        cold.tiers[1].cache_fills
    );
    assert_eq!(cold.recovery_s, None);
    let capped = common::run(
        &common::scenario("cold-cache.toml", &[("db.queue_cap", "16")]),
        1,
    );
    assert_eq!(capped.tiers[1].cache_fills, 2000);
    assert!(capped.recovery_s.is_some());
}

/// Shedding turns away only a request that would wait: with
/// `shed_queue.replay = 0` an idle tier still serves replay requests a
/// free slot takes at once (they were all shed, 0% success).
#[test]
fn shedding_spares_a_request_a_free_slot_takes_at_once() {
    let s = common::scenario(
        "ch37-classes.toml",
        &[
            ("svc_b.slow.duration_s", "0"),
            ("client.rate_per_s", "50"),
            ("svc_b.shed_queue.replay", "0"),
        ],
    );
    let r = common::run(&s, 1);
    match r.metric("class_replay_success_rate") {
        Some(sim_core::Value::MaybeReal(Some(x)) | sim_core::Value::Real(x)) => {
            assert!(x > 0.99, "replay success {x}")
        }
        other => panic!("{other:?}"),
    }
}

/// Abandoned work is not a completion: the losing copy of a hedge,
/// cancelled in service, teaches the adaptive limit nothing (it counted
/// as an error, and brought AIMD to its floor without one failure).
#[test]
fn cancelled_work_does_not_move_the_adaptive_limit() {
    let a = "max_retries = 0\nhedge_delay_s = 0.03\nhedge_budget_percent = 100\ncancel = \"hedge_losers\"";
    let s = chain_with(
        a,
        0.05,
        &[
            ("b.slots", "64"),
            ("b.adaptive_limit", "true"),
            ("b.limit_min", "4"),
            ("b.limit_latency_s", "0.5"),
            ("b.limit_min_samples", "5"),
            ("b.limit_interval_s", "0.1"),
        ],
    );
    let r = run(&s);
    assert!(common::count(&r, "b_abandoned") > 100, "{r:?}");
    assert_eq!(r.success_rate(), Some(1.0));
    let b = &r.tiers[1];
    assert_eq!((b.limit_lowest, b.limit_at_end), (64, 64));
}

/// Waiting in a leaky bucket is queueing: with drop-expired, a request
/// whose deadline passed while it waited is dropped as it leaves, not
/// started for nobody (all of them were, late).
#[test]
fn a_request_expired_in_a_leaky_bucket_is_dropped() {
    let sets = [
        ("a.rate_limit_kind", "\"leaky_bucket\""),
        ("a.rate_limit_per_s", "5"),
        ("a.rate_limit_burst", "100"),
        ("a.drop_expired", "true"),
    ];
    let r = run(&chain_with("max_retries = 0", 0.01, &sets));
    let (dropped, late) = (
        common::count(&r, "a_dropped_expired"),
        common::count(&r, "a_late"),
    );
    assert!(dropped > 100, "{dropped} dropped");
    assert_eq!(late, 0);
}
