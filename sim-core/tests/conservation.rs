//! Counts add up: every user request ends exactly once, every request a tier
//! receives is accounted for, every attempt has exactly one outcome.

mod common;
use common::*;
use sim_core::RunResult;

/// Every way a caller ends without success, one count per job.
fn giveups(c: &sim_core::result::CallerStats) -> u64 {
    c.giveup_limit
        + c.giveup_deadline
        + c.retries_throttled
        + c.no_time_left
        + c.margin_exhausted
        + c.insufficient_deadline
        + c.retry_budget_exhausted
}

fn check(r: &RunResult, label: &str) {
    let ctx = |what: &str| format!("{label}: {what}");
    // Every user ends exactly once: ok, failed, or still in flight at the horizon.
    assert_eq!(r.users, r.users_ok + r.users_failed, "{}", ctx("users"));
    assert!(r.users_unfinished <= r.users_failed);
    assert_eq!(
        r.phases.iter().map(|p| p.users).sum::<u64>(),
        r.users,
        "{}",
        ctx("phases")
    );
    assert_eq!(r.phases.iter().map(|p| p.ok).sum::<u64>(), r.users_ok);
    let client = &r.callers[0];
    assert_eq!(
        client.calls_ok,
        r.users_ok,
        "{}",
        ctx("one ok per successful user")
    );
    let client_giveups = giveups(client);
    assert_eq!(
        client_giveups,
        r.users_failed - r.users_unfinished,
        "{}",
        ctx("one give-up per failed user")
    );

    for (i, t) in r.tiers.iter().enumerate() {
        let ctx = |what: &str| format!("{label}: {} {what}", t.name);
        assert_eq!(
            t.arrivals,
            t.admitted + t.rejected_full + t.rate_limited + t.shed_low,
            "{}",
            ctx("arrivals")
        );
        assert_eq!(
            t.admitted,
            t.started + t.dropped_expired + t.codel_dropped + t.queued_at_end,
            "{}",
            ctx("admitted")
        );
        assert_eq!(
            t.started,
            t.completed + t.abandoned + t.busy_at_end,
            "{}",
            ctx("started")
        );
        assert!(t.late <= t.completed);
        // The caller above sent exactly the requests this tier received.
        let caller = &r.callers[i];
        assert_eq!(
            caller.calls,
            t.arrivals + t.in_transit_at_end,
            "{}",
            ctx("calls = arrivals (+ still on the network)")
        );
        let ended = caller.calls_ok
            + caller.calls_timeout
            + caller.calls_rejected
            + caller.calls_expired
            + caller.calls_error
            + caller.calls_pending;
        assert_eq!(
            caller.calls - caller.hedges_sent,
            ended,
            "{}",
            ctx("one outcome per attempt (hedges share their attempt's)")
        );
        assert!(
            caller.calls_rejected
                <= t.rejected_full + t.rate_limited + t.shed_low + t.codel_dropped
        );
        assert!(caller.calls_expired <= t.dropped_expired);
        assert!(
            t.max_arrivals_per_user <= t.arrival_bound_per_user,
            "{}",
            ctx("R1 bound")
        );
        // A non-leaf tier completes ok exactly when one of its attempts got ok.
        if let Some(own) = r.callers.get(i + 1) {
            assert_eq!(t.completed_ok, own.calls_ok, "{}", ctx("ok completions"));
            assert_eq!(
                t.completed - t.completed_ok,
                giveups(own),
                "{}",
                ctx("error completions")
            );
        } else {
            assert_eq!(
                t.completed_ok,
                t.completed,
                "{}",
                ctx("the leaf never fails work it completes")
            );
        }
        let series = &r.series.tiers[i];
        assert_eq!(series.arrivals.iter().sum::<u64>(), t.arrivals);
        assert_eq!(series.admitted.iter().sum::<u64>(), t.admitted);
        assert_eq!(series.completed.iter().sum::<u64>(), t.completed);
        assert_eq!(series.late.iter().sum::<u64>(), t.late);
        assert!(series.queue_len.iter().all(|q| *q <= t.max_queue));
    }
    assert_eq!(r.series.user_arrivals.iter().sum::<u64>(), r.users);
    assert_eq!(r.series.user_ok_by_arrival.iter().sum::<u64>(), r.users_ok);
    assert_eq!(r.series.successes.iter().sum::<u64>(), r.users_ok);
    assert_eq!(
        r.series.failures.iter().sum::<u64>(),
        r.users_failed - r.users_unfinished
    );
}

#[test]
fn counts_add_up_for_every_preset_and_dispatch() {
    for dispatch in ["fifo", "reply_first"] {
        for p in sim_core::CH37_STRATEGIES {
            for seed in [1, 2] {
                let r = run(&ch37(p, dispatch, &[]), seed);
                check(&r, &format!("{p}/{dispatch}/{seed}"));
            }
        }
    }
}

#[test]
fn counts_add_up_with_users_in_flight_at_the_horizon() {
    // The horizon cuts the run while naive's queues are full of work.
    let s = ch37(
        "naive",
        "fifo",
        &[("horizon_s", "60.5"), ("client.duration_s", "60")],
    );
    let r = run(&s, 4);
    assert!(r.users_unfinished > 0);
    assert!(
        r.tiers
            .iter()
            .any(|t| t.queued_at_end > 0 && t.busy_at_end > 0)
    );
    check(&r, "cut");
}

#[test]
fn counts_add_up_with_every_policy_on() {
    for p in ["deadline", "protected"] {
        let s = ch37(
            p,
            "fifo",
            &[
                ("svc_b.cancel_check_s", "0.01"),
                ("svc_a.deadline_margin_s", "0.02"),
                ("svc_a.budget_admission", "true"),
                ("gateway.budget_admission", "true"),
                ("svc_a.retry_budget", "true"),
                ("gateway.adaptive_throttle", "true"),
                ("svc_a.latency.mean_s", "0.002"),
                ("gateway.codel", "true"),
                ("svc_a.breaker", "true"),
                ("gateway.hedge_delay_s", "0.2"),
                ("client.low_share", "0.3"),
                ("svc_b.low_slots", "8"),
                ("svc_a.shed_low_queue", "20"),
                ("svc_b.rate_limit_per_s", "600"),
                ("svc_b.rate_limit_burst", "20"),
                ("svc_a.queue_order", "\"adaptive_lifo\""),
                ("svc_a.lifo_threshold", "20"),
                ("svc_a.latency.dist", "exponential"),
                ("client.spike.start_s", "35"),
                ("client.spike.duration_s", "5"),
                ("client.spike.factor", "2"),
            ],
        );
        let r = run(&s, 5);
        assert!(r.tiers[2].abandoned > 0);
        check(&r, &format!("{p} with policies"));
    }
}
