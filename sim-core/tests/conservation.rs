//! Counts add up: every user request ends exactly once, every request a tier
//! receives is accounted for, every attempt has exactly one outcome.

mod common;
use common::*;
use sim_core::{RunResult, Scenario};

/// Every way a caller ends without success, one count per job.
fn giveups(c: &sim_core::result::CallerStats) -> u64 {
    c.giveup_limit
        + c.giveup_deadline
        + c.giveup_not_retryable
        + c.retries_throttled
        + c.no_time_left
        + c.margin_exhausted
        + c.insufficient_deadline
        + c.retry_budget_exhausted
}

fn check(s: &Scenario, r: &RunResult, label: &str) {
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
    // Each client group calls through its own edge, the first ones.
    let groups = s.groups().count();
    let clients = &r.callers[..groups];
    assert_eq!(
        clients.iter().map(|c| c.calls_ok).sum::<u64>(),
        r.users_ok,
        "{}",
        ctx("one ok per successful user")
    );
    assert_eq!(
        clients.iter().map(giveups).sum::<u64>(),
        r.users_failed - r.users_unfinished,
        "{}",
        ctx("one give-up per failed user")
    );
    // With several groups, each balances on its own and they sum to the totals.
    assert_eq!(r.groups.len(), if groups > 1 { groups } else { 0 });
    for (stats, caller) in r.groups.iter().zip(clients) {
        let ctx = |what: &str| format!("{label}: group {} {what}", stats.name);
        assert_eq!(
            stats.users,
            stats.users_ok + stats.users_failed,
            "{}",
            ctx("users")
        );
        assert_eq!(caller.calls_ok, stats.users_ok, "{}", ctx("ok"));
        // A message queue's messages end once each, or are still there;
        // its deliveries are the group's users.
        if let Some(q) = &stats.queue {
            assert_eq!(
                q.published,
                q.consumed_ok + q.dropped + q.backlog_end + q.in_flight_end,
                "{}",
                ctx("messages")
            );
            if q.published > 0 {
                assert_eq!(q.consumed_ok, stats.users_ok, "{}", ctx("consumed"));
                assert_eq!(
                    stats.users,
                    q.consumed_ok + q.redelivered + q.in_flight_end,
                    "{}",
                    ctx("deliveries")
                );
            }
        }
        let phases =
            |f: fn(&sim_core::result::Phase) -> u64| stats.phases.iter().map(f).sum::<u64>();
        assert_eq!(phases(|p| p.users), stats.users, "{}", ctx("phases"));
        assert_eq!(phases(|p| p.ok), stats.users_ok, "{}", ctx("phases ok"));
        assert_eq!(
            giveups(caller),
            stats.users_failed - stats.users_unfinished,
            "{}",
            ctx("give-ups")
        );
    }
    // Every user of a group with tenants is one tenant's, once.
    for (i, (g, c)) in s.groups().enumerate().filter(|(_, (_, c))| c.tenants > 1) {
        let of_group = |t: &&sim_core::result::TenantStats| usize::from(t.group) == i;
        let tenants = r.tenants.iter().filter(of_group);
        let (users, ok) = tenants.fold((0, 0), |(u, o), t| (u + t.users, o + t.users_ok));
        let own = (r.groups.iter().find(|x| x.name == g))
            .map_or((r.users, r.users_ok), |x| (x.users, x.users_ok));
        assert_eq!((users, ok), own, "{}", ctx(&format!("tenants of {g}")));
        assert_eq!(
            r.tenants.iter().filter(of_group).count(),
            c.tenants as usize
        );
    }
    if groups > 1 {
        let sum = |f: fn(&sim_core::result::GroupStats) -> u64| r.groups.iter().map(f).sum::<u64>();
        assert_eq!(sum(|g| g.users), r.users, "{}", ctx("group users"));
        assert_eq!(sum(|g| g.users_ok), r.users_ok, "{}", ctx("group ok"));
        for k in 0..3 {
            let users = r.groups.iter().map(|g| g.phases[k].users).sum::<u64>();
            assert_eq!(users, r.phases[k].users, "{}", ctx("group phase users"));
            let ok = r.groups.iter().map(|g| g.phases[k].ok).sum::<u64>();
            assert_eq!(ok, r.phases[k].ok, "{}", ctx("group phase ok"));
        }
        assert_eq!(
            sum(|g| g.users_failed),
            r.users_failed,
            "{}",
            ctx("group failed")
        );
        assert_eq!(
            sum(|g| g.users_unfinished),
            r.users_unfinished,
            "{}",
            ctx("group unfinished")
        );
    }

    let edges = s.edges();
    for (i, t) in r.tiers.iter().enumerate() {
        let ctx = |what: &str| format!("{label}: {} {what}", t.name);
        // The tier balances, and so does each of its replicas.
        assert_eq!(
            t.replicas.len(),
            if s.tiers[i].replicas > 1 {
                s.tiers[i].replicas as usize
            } else {
                0
            },
            "{}",
            ctx("replicas")
        );
        for (k, part) in std::iter::once(t).chain(&t.replicas).enumerate() {
            let ctx = |what: &str| format!("{label}: {} part {k} {what}", t.name);
            assert_eq!(
                part.arrivals,
                part.admitted
                    + part.rejected_full
                    + part.rate_limited
                    + part.shed
                    + part.refused_down
                    + part.black_holed
                    + part.in_bucket_at_end,
                "{}",
                ctx("arrivals")
            );
            assert_eq!(
                part.admitted,
                part.started
                    + part.dropped_expired
                    + part.codel_dropped
                    + part.cancelled
                    + part.queued_at_end
                    + part.lost_queued_in_crash,
                "{}",
                ctx("admitted")
            );
            assert_eq!(
                part.started,
                part.completed + part.abandoned + part.busy_at_end + part.lost_in_crash,
                "{}",
                ctx("started")
            );
            assert!(part.late <= part.completed);
        }
        let sum =
            |f: fn(&sim_core::result::TierStats) -> u64| t.replicas.iter().map(f).sum::<u64>();
        if !t.replicas.is_empty() {
            assert_eq!(
                sum(|p| p.arrivals),
                t.arrivals,
                "{}",
                ctx("replica arrivals")
            );
            assert_eq!(sum(|p| p.completed_ok), t.completed_ok);
            assert_eq!(
                t.max_queue,
                t.replicas.iter().map(|p| p.max_queue).max().unwrap()
            );
        }
        // The callers above sent exactly the requests this tier received.
        let into: Vec<usize> = (0..edges.len()).filter(|e| edges[*e].to == i).collect();
        let calls: u64 = into.iter().map(|e| r.callers[*e].calls).sum();
        assert_eq!(
            calls,
            t.arrivals + t.in_transit_at_end + t.cache_hits,
            "{}",
            ctx("calls = arrivals (+ still on the network)")
        );
        for caller in into.iter().map(|e| &r.callers[*e]) {
            let ended = caller.calls_ok
                + caller.calls_timeout
                + caller.calls_rejected
                + caller.calls_expired
                + caller.calls_error
                + caller.calls_refused
                + caller.calls_pending
                + caller.calls_cancelled;
            assert_eq!(
                caller.calls - caller.hedges_sent,
                ended,
                "{}",
                ctx("one outcome per attempt (hedges share their attempt's)")
            );
            assert_eq!(caller.balanced, !t.replicas.is_empty());
            assert!(
                caller.ejected_s <= s.tiers[i].replicas as f64 * r.horizon_s,
                "{}",
                ctx("ejected time")
            );
            assert!(caller.ejections == 0 || caller.ejected_s > 0.0);
        }
        let sum_c = |f: fn(&sim_core::result::CallerStats) -> u64| {
            into.iter().map(|e| f(&r.callers[*e])).sum::<u64>()
        };
        assert!(
            sum_c(|c| c.calls_rejected)
                <= t.rejected_full + t.rate_limited + t.shed + t.codel_dropped
        );
        assert!(sum_c(|c| c.calls_expired) <= t.dropped_expired);
        assert!(sum_c(|c| c.calls_refused) <= t.refused_down);
        assert!(
            t.max_arrivals_per_user <= t.arrival_bound_per_user,
            "{}",
            ctx("R1 bound")
        );
        let out: Vec<usize> = (0..edges.len())
            .filter(|e| edges[*e].from == Some(i))
            .collect();
        // A chain tier completes ok exactly when one of its attempts got ok.
        if let [e] = out[..]
            && s.tiers[i].fanout.is_empty()
        {
            let own = &r.callers[e];
            assert_eq!(t.completed_ok, own.calls_ok, "{}", ctx("ok completions"));
            assert_eq!(
                t.completed - t.completed_ok,
                giveups(own) + t.errors_injected,
                "{}",
                ctx("error completions")
            );
        } else if out.is_empty() {
            assert_eq!(
                t.completed - t.completed_ok,
                t.errors_injected,
                "{}",
                ctx("the leaf fails only the work an error window fails")
            );
        } else {
            // A fan-out tier succeeds only if every required branch did, so
            // at most as often as its least successful required branch.
            for e in out.iter().filter(|e| edges[**e].required) {
                assert!(
                    t.completed_ok <= r.callers[*e].calls_ok,
                    "{}",
                    ctx("fan-out ok")
                );
            }
            assert!(t.degraded <= t.completed_ok, "{}", ctx("degraded"));
        }
        let series = &r.series.tiers[i];
        assert_eq!(series.arrivals.iter().sum::<u64>(), t.arrivals);
        assert_eq!(series.admitted.iter().sum::<u64>(), t.admitted);
        assert_eq!(series.completed.iter().sum::<u64>(), t.completed);
        assert_eq!(series.late.iter().sum::<u64>(), t.late);
        assert_eq!(
            series.after_user_left.iter().sum::<u64>(),
            t.arrivals_after_user_left
        );
        // Retries arriving: every retry sent, less those still on the
        // network and those the tier's cache answered (a hit never
        // reaches it); from the client (the top), also every hedged copy and
        // a message queue's redeliveries (at most one each), and nothing
        // more; below, also the requests serving a retry above.
        let retries: u64 = series.retries.iter().sum();
        let redelivered: u64 = (r.groups.iter().filter_map(|g| g.queue.as_ref()))
            .map(|q| q.redelivered)
            .sum();
        let (sent, hedges) = (sum_c(|c| c.retries_sent), sum_c(|c| c.hedges_sent));
        assert!(
            retries + t.in_transit_at_end + t.cache_hits >= sent,
            "{}: {retries} retries arrived, {sent} sent",
            ctx("retries")
        );
        if into.iter().all(|e| edges[*e].from.is_none()) {
            assert!(
                retries <= sent + hedges + redelivered,
                "{}: {retries} retries arrived, {sent} sent, {hedges} hedges, {redelivered} redelivered",
                ctx("retries from the client")
            );
        }
        assert!(
            series
                .retries
                .iter()
                .zip(&series.arrivals)
                .all(|(r, a)| r <= a)
        );
        // The retries split by what sent the nearest retry or hedge add up,
        // second by second; a caller of this tier is the origin of exactly
        // its own retries that arrived (a first try it sends for a retry
        // above belongs to that retry's sender), and the hedges include
        // every hedged copy its callers sent that arrived.
        for sec in 0..series.arrivals.len() {
            let split: u64 = series.retries_from.iter().map(|f| f.per_s[sec]).sum();
            assert_eq!(
                split + series.hedges[sec],
                series.retries[sec],
                "{}",
                ctx("retries by origin")
            );
        }
        for f in &series.retries_from {
            assert_eq!(f.caller, edges[f.edge].name, "{}", ctx("origin names"));
        }
        let from = |e: usize| {
            (series.retries_from.iter())
                .find(|f| f.edge == e)
                .map_or(0, |f| f.per_s.iter().sum::<u64>())
        };
        for e in &into {
            let sent = r.callers[*e].retries_sent;
            // A group's queue redelivers failed messages: its retries too
            // (each redelivery at most once; some still wait at the end).
            let redelivered: u64 = (r.groups.iter())
                .filter(|g| edges[*e].from.is_none() && g.name == edges[*e].name)
                .filter_map(|g| g.queue.as_ref())
                .map(|q| q.redelivered)
                .sum();
            assert!(
                from(*e) <= sent + redelivered
                    && from(*e) + t.in_transit_at_end + t.cache_hits >= sent,
                "{}: {} arrived from {}, {sent} sent",
                ctx("a caller's own retries"),
                from(*e),
                edges[*e].name
            );
        }
        let hedged: u64 = series.hedges.iter().sum();
        assert!(
            hedged + t.in_transit_at_end + t.cache_hits >= hedges,
            "{}",
            ctx("hedges")
        );
        assert_eq!(series.capacity_per_s.len(), series.arrivals.len());
        // The replicas' series add up to the tier's, second by second.
        assert_eq!(series.replicas.len(), t.replicas.len());
        if !series.replicas.is_empty() {
            type Get = fn(&sim_core::result::TierSeries) -> &Vec<u64>;
            let each: [(&str, Get); 5] = [
                ("arrivals", |x| &x.arrivals),
                ("retries", |x| &x.retries),
                ("after_user_left", |x| &x.after_user_left),
                ("queue_len", |x| &x.queue_len),
                ("busy", |x| &x.busy),
            ];
            for (what, get) in each {
                let summed: Vec<u64> = (0..series.arrivals.len())
                    .map(|sec| series.replicas.iter().map(|r| get(r)[sec]).sum())
                    .collect();
                assert_eq!(&summed, get(series), "{}", ctx(what));
            }
        }
        // The tier's queue is its replicas' together.
        let longest = match t.replicas.len() {
            0 => t.max_queue,
            _ => sum(|p| p.max_queue),
        };
        assert!(series.queue_len.iter().all(|q| *q <= longest));
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
    for dispatch in DISPATCHES {
        for p in sim_core::CH37_STRATEGIES {
            for seed in [1, 2] {
                let s = ch37(p, dispatch, &[]);
                check(&s, &run(&s, seed), &format!("{p}/{dispatch}/{seed}"));
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
    check(&s, &r, "cut");
}

#[test]
fn counts_add_up_with_every_policy_on() {
    for p in ["deadline", "protected"] {
        let mut s = ch37(p, "fifo", &[]);
        with_classes(&mut s, &[("online", 0.6), ("replay", 0.3), ("batch", 0.1)]);
        set(
            &mut s,
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
                ("svc_a.hedge_quantile", "0.9"),
                ("svc_a.cancel", "hedge_losers"),
                ("gateway.cancel", "always"),
                ("client.classes.replay.share", "0.3"),
                ("svc_b.class_slots.replay", "8"),
                ("svc_a.shed_queue.replay", "20"),
                ("svc_a.shed_queue.batch", "5"),
                ("svc_b.rate_limit_per_s", "600"),
                ("svc_b.rate_limit_burst", "20"),
                ("svc_a.queue_order", "\"adaptive_lifo\""),
                ("svc_a.lifo_threshold", "20"),
                ("svc_a.latency.dist", "exponential"),
                ("client.spike.start_s", "35"),
                ("client.spike.duration_s", "5"),
                ("client.spike.factor", "2"),
                ("svc_b.errors.start_s", "32"),
                ("svc_b.errors.duration_s", "5"),
                ("svc_b.errors.p", "0.2"),
                ("svc_a.errors.start_s", "40"),
                ("svc_a.errors.duration_s", "5"),
                ("svc_a.errors.p", "0.1"),
            ],
        );
        valid(&s);
        let r = run(&s, 5);
        assert!(r.tiers[2].abandoned > 0);
        let injected: Vec<u64> = r.tiers.iter().map(|t| t.errors_injected).collect();
        assert!(injected[1] > 0 && injected[2] > 0, "{injected:?}");
        check(&s, &r, &format!("{p} with policies"));
    }
}

#[test]
fn counts_add_up_with_gc_pauses() {
    // Pauses at svc_b (longer with its queue) and at svc_a, whose caller
    // hedges and cancels: frozen work is cancelled, crashed and resumed.
    for p in ["naive", "protected"] {
        let s = ch37(
            p,
            "fifo",
            &[
                ("svc_b.gc.every_s", "1"),
                ("svc_b.gc.pause_s", "0.05"),
                ("svc_b.gc.per_queued_s", "0.0005"),
                ("svc_b.replicas", "2"),
                ("svc_b.crash.start_s", "40"),
                ("svc_b.crash.duration_s", "1"),
                ("svc_a.service.mean_s", "0.001"),
                ("svc_a.gc.every_s", "0.7"),
                ("svc_a.gc.pause_s", "0.02"),
                ("svc_a.hedge_delay_s", "0.05"),
                ("svc_a.cancel", "always"),
            ],
        );
        let r = run(&s, 2);
        let b = &r.tiers[2];
        assert!(b.gc_pauses > 100 && b.lost_in_crash > 0, "{p}");
        assert!(b.gc_longest_pause_s > 0.05, "{p}");
        assert!(r.tiers[2].abandoned + r.tiers[2].cancelled > 0, "{p}");
        check(&s, &r, &format!("{p} with gc pauses"));
    }
}

/// ch37 (`deadline`) with svc_b as 2 replicas behind a leaky bucket of
/// 700/s (each replica's own, or one shared: `scope`), replica 1 crashing
/// for 1 s at `crash_start_s`, and a spike over the buckets' rate from 58
/// s, arrivals up to the horizon.
fn leaky_bucket_with_a_crash(scope: &str, crash_start_s: &str) -> Scenario {
    ch37(
        "deadline",
        "fifo",
        &[
            ("svc_b.replicas", "2"),
            ("svc_b.rate_limit_per_s", "700"),
            ("svc_b.rate_limit_burst", "30"),
            ("svc_b.rate_limit_kind", "leaky_bucket"),
            ("svc_b.rate_limit_scope", scope),
            ("svc_b.crash.start_s", crash_start_s),
            ("svc_b.crash.duration_s", "1"),
            ("svc_b.crash.replicas", "[1]"),
            ("horizon_s", "60.5"),
            ("client.duration_s", "60.5"),
            ("client.spike.start_s", "58"),
            ("client.spike.duration_s", "3"),
            ("client.spike.factor", "4"),
        ],
    )
}

#[test]
fn a_trace_follows_requests_through_a_crash_behind_a_leaky_bucket() {
    // A replica crashes while requests wait in the buckets (a spike over
    // their rate): one that waited in a shared bucket is refused by the
    // replica that is down, and one that waited and started is lost in
    // the crash. The users traced are ones these runs are known to reach.
    let cases = [
        ("service", [23677, 23733], ["queued", "refused: down"]),
        ("replica", [23887, 23915], ["start", "lost: crash"]),
    ];
    for (scope, users, wanted) in cases {
        let s = leaky_bucket_with_a_crash(scope, "58.5");
        let valid = sim_core::ValidScenario::new(s).expect("valid");
        for user in users {
            let label = format!("crash behind a leaky bucket, {scope}, user {user}");
            let (_, steps) = sim_core::trace(&valid, 4, user).expect("a run");
            check_lineage(&steps, &label);
            // The job's events, in order, that end a wait or a service.
            let seen = (steps.iter()).any(|s| {
                let mut job = (steps.iter())
                    .filter(|x| x.job == s.job && x.who == "svc_b")
                    .map(|x| x.event.as_str());
                job.any(|e| e == wanted[0]) && job.any(|e| e == wanted[1])
            });
            assert!(seen, "{label}: no request met {wanted:?}");
        }
    }
}

#[test]
fn a_trace_tells_a_request_in_transit_at_the_horizon_from_a_queued_one() {
    // The published chain with a hop into b of 12 s: the run
    // ends with requests still on their way to b, and with others queued
    // at c (4 slots, each request 5 s). Every user's trace names where
    // each of its requests was, and the names add up to the tiers' counts.
    let s = scenario(
        "published-two-hop.toml",
        &[("b.latency.mean_s", "12.0"), ("c.slots", "4")],
    );
    let r = run(&s, 1);
    check(&s, &r, "two hops, 12 s into b");
    let at_end = |f: fn(&sim_core::result::TierStats) -> u64| r.tiers.iter().map(f).sum::<u64>();
    let (in_transit, queued) = (at_end(|t| t.in_transit_at_end), at_end(|t| t.queued_at_end));
    assert!(
        in_transit > 0 && queued > 0,
        "{in_transit} in transit, {queued} queued"
    );
    let mut steps_at_end = [0, 0];
    for user in 0..r.users as u32 {
        let (_, steps) = trace(&s, 1, user);
        check_lineage(&steps, &format!("two hops, 12 s into b, user {user}"));
        for (n, event) in steps_at_end
            .iter_mut()
            .zip(["in transit at the horizon", "queued at the horizon"])
        {
            *n += steps.iter().filter(|x| x.event == event).count() as u64;
        }
    }
    assert_eq!(steps_at_end, [in_transit, queued]);
}

#[test]
fn counts_add_up_with_a_leaky_bucket() {
    // A bucket per replica and one shared, with a replica crashing while
    // requests wait in front of it, and requests still waiting at the
    // horizon (arrivals up to it).
    for scope in ["replica", "service"] {
        let s = leaky_bucket_with_a_crash(scope, "40");
        let r = run(&s, 4);
        let b = &r.tiers[2];
        assert!(b.bucket_waited > 0 && b.rate_limited > 0, "{scope}");
        assert!(b.in_bucket_at_end > 0, "{scope}");
        check(&s, &r, &format!("leaky bucket, {scope}"));
        // A wait in the bucket is in the trace as queueing.
        let valid = sim_core::ValidScenario::new(s.clone()).expect("valid");
        let mut waited = 0;
        for user in (r.users as u32 - 3000..r.users as u32).step_by(100) {
            let (_, steps) = sim_core::trace(&valid, 4, user).expect("the same run");
            check_lineage(&steps, &format!("leaky bucket, {scope}, user {user}"));
            waited += steps
                .iter()
                .any(|x| x.who == "svc_b" && x.event == "queued") as u32;
        }
        assert!(waited > 0, "{scope}: no traced request waited");
    }
}

#[test]
fn counts_add_up_with_per_tenant_limits() {
    // Per-tenant limits at svc_b's two replicas, each keeping its own per
    // tenant, with retries above and users in flight at the horizon.
    let s = ch37(
        "deadline",
        "fifo",
        &[
            ("client.tenants", "30"),
            ("client.tenant_zipf_s", "1.3"),
            ("svc_b.replicas", "2"),
            ("svc_b.rate_limit_key", "tenant"),
            ("svc_b.rate_limit_per_s", "40"),
            ("svc_b.rate_limit_burst", "10"),
            ("horizon_s", "60.5"),
        ],
    );
    let r = run(&s, 5);
    assert!(r.tiers[2].rate_limited > 0 && r.users_unfinished > 0);
    check(&s, &r, "per-tenant limits");
}

#[test]
fn counts_add_up_with_a_cache() {
    // Hits are calls that never reach the tier; the app hedges and cancels,
    // so a hit can win against a copy in flight, and the flush overloads
    // db with and without a queue cap.
    for cap in ["unbounded", "16"] {
        let s = scenario(
            "cold-cache.toml",
            &[
                ("db.queue_cap", cap),
                ("app.hedge_delay_s", "0.05"),
                ("app.cancel", "always"),
                ("horizon_s", "60.5"),
                ("client.duration_s", "60.5"),
            ],
        );
        let r = run(&s, 3);
        let db = &r.tiers[1];
        assert!(db.cache_hits > 0 && db.cache_misses > 0, "{cap}");
        assert_eq!(db.cache_hits + db.cache_misses, r.callers[1].calls, "{cap}");
        check(&s, &r, &format!("cache, queue cap {cap}"));
    }
}

#[test]
fn counts_add_up_with_a_message_queue() {
    // The replay grid's scenario: a backlog drained at full speed (a
    // second outage, deliveries timing out at app), at a rate, and cut by
    // the horizon inside the crash or by a small backlog.
    let cases: &[&[(&str, &str)]] = &[
        &[],
        &[("replay.queue.drain_rate_per_s", "300")],
        &[("horizon_s", "60"), ("db.crash.duration_s", "60")],
        &[
            ("replay.queue.max_backlog", "200"),
            ("app.max_retries", "2"),
        ],
    ];
    for sets in cases {
        let s = scenario("replay.toml", sets);
        let r = run(&s, 2);
        assert!(
            r.groups[1].queue.as_ref().unwrap().published > 0,
            "{sets:?}"
        );
        check(&s, &r, &format!("queue {sets:?}"));
    }
}

#[test]
fn counts_add_up_with_a_breaker_per_replica() {
    // One bad host of four, a breaker and a bulkhead per replica at svc_a,
    // hedges (which take no probe) and cancellation of their losers.
    for balancer in ["round_robin", "p2c"] {
        let s = scenario(
            "bad-replica.toml",
            &[
                ("svc_a.balancer", balancer),
                ("svc_a.breaker", "true"),
                ("svc_a.breaker_scope", "replica"),
                ("svc_a.breaker_open_s", "0.5"),
                ("svc_a.hedge_delay_s", "0.1"),
                ("svc_a.cancel", "hedge_losers"),
                ("svc_a.outlier_ejection", "true"),
                ("svc_a.outlier_max_ejection_percent", "25"),
                ("svc_a.max_in_flight", "6"),
                ("svc_a.bulkhead_scope", "replica"),
            ],
        );
        let r = run(&s, 4);
        assert!(r.callers[1].bulkhead_rejected > 0, "{balancer}");
        check(
            &s,
            &r,
            &format!("breaker and bulkhead per replica, {balancer}"),
        );
    }
}

#[test]
fn counts_add_up_with_fan_out() {
    // ch37 with svc_a fanning out to svc_b (required) and a flaky optional
    // cache, under the slow window, with bulkheads, a time-based breaker
    // and retries on every branch.
    let mut s = ch37(
        "deadline",
        "fifo",
        &[("horizon_s", "60.5"), ("client.duration_s", "60")],
    );
    let call = s.tiers[1].call.take().unwrap();
    let mut cache = sim_core::scenario::Tier::new("cache", 8);
    cache.service.mean_s = 0.005;
    cache.queue_cap = Some(4);
    cache.slow = s.tiers[2].slow.clone();
    s.tiers.push(cache);
    s.tiers[1].fanout = vec![
        sim_core::scenario::Branch {
            to: "svc_b".into(),
            required: true,
            call: call.clone(),
        },
        sim_core::scenario::Branch {
            to: "cache".into(),
            required: false,
            // The cache reads no deadline: none is passed to it.
            call: sim_core::scenario::Call {
                attempt_timeout_s: 0.05,
                propagate_deadline: false,
                ..call
            },
        },
    ];
    set(
        &mut s,
        &[
            ("svc_a.fanout.svc_b.max_in_flight", "30"),
            ("svc_a.fanout.cache.max_in_flight", "6"),
            ("svc_a.fanout.svc_b.breaker", "true"),
            ("svc_a.fanout.svc_b.breaker_window_s", "2"),
            ("cache.latency.mean_s", "0.001"),
        ],
    );
    valid(&s);
    let r = run(&s, 3);
    let names: Vec<&str> = r.callers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["client", "gateway", "svc_a_to_svc_b", "svc_a_to_cache"]
    );
    assert!(r.tiers[1].degraded > 0);
    assert!(r.callers[2].calls_cancelled + r.callers[3].calls_cancelled > 0);
    assert!(r.callers[2].bulkhead_rejected + r.callers[3].bulkhead_rejected > 0);
    check(&s, &r, "fan-out");
}

#[test]
fn counts_add_up_with_closed_loop_users() {
    // Closed-loop users under every preset, and cut by the horizon while
    // naive's queues are full: every request ends exactly once, and every
    // request that ended is one user's cycle.
    for p in sim_core::CH37_STRATEGIES {
        for horizon in ["70", "60.5"] {
            let s = ch37(
                p,
                "fifo",
                &[
                    ("horizon_s", horizon),
                    ("client.rate_per_s", "0"),
                    ("client.closed.users", "408"),
                    ("client.closed.think.mean_s", "1"),
                    ("client.closed.think.dist", "exponential"),
                ],
            );
            let r = run(&s, 2);
            let label = format!("closed {p} until {horizon} s");
            check(&s, &r, &label);
            let closed = r.closed.as_ref().unwrap();
            assert_eq!(
                closed.cycles,
                r.users - r.users_unfinished,
                "{label}: one cycle per ended request"
            );
            assert!(r.users_unfinished <= 408, "{label}");
            assert_eq!(closed.span_ns, closed.think_ns + closed.response_ns);
        }
    }
}

#[test]
fn counts_add_up_with_client_groups() {
    // ch37's open client beside a closed batch group and an open replay
    // group with a load spike, classes and its own retries, under every
    // preset and cut by the horizon while naive's queues are full.
    for p in sim_core::CH37_STRATEGIES {
        for horizon in ["70", "60.5"] {
            let mut s = ch37(p, "fifo", &[("horizon_s", horizon)]);
            s.clients.insert("batch".into(), s.client.clone());
            s.clients.insert("replay".into(), s.client.clone());
            set(
                &mut s,
                &[
                    ("client.rate_per_s", "300"),
                    ("batch.rate_per_s", "0"),
                    ("batch.closed.users", "50"),
                    ("batch.closed.think.mean_s", "0.5"),
                    ("batch.closed.think.dist", "exponential"),
                    ("replay.rate_per_s", "60"),
                    ("replay.max_retries", "5"),
                    ("replay.spike.start_s", "5"),
                    ("replay.spike.duration_s", "5"),
                    ("replay.spike.factor", "3"),
                ],
            );
            s.clients.get_mut("replay").unwrap().classes = vec![sim_core::scenario::RequestClass {
                name: "replay".into(),
                share: 1.0,
            }];
            valid(&s);
            let r = run(&s, 3);
            let label = format!("groups {p} until {horizon} s");
            check(&s, &r, &label);
            let batch = r.groups[1].closed.as_ref().unwrap();
            assert_eq!(
                batch.cycles,
                r.groups[1].users - r.groups[1].users_unfinished,
                "{label}: one cycle per ended batch request"
            );
            assert_eq!(batch.span_ns, batch.think_ns + batch.response_ns);
            assert!(r.groups.iter().all(|g| g.users > 0), "{label}");
            assert_eq!(
                r.classes[0].users, r.groups[2].users,
                "{label}: replay class"
            );
        }
    }
}

#[test]
fn counts_add_up_with_replicas_and_ejection() {
    // ch37 with 4 replicas of svc_b (one of them slow), 2 of svc_a, every
    // balancer at svc_a's calls, outlier ejection, hedging to another
    // replica and cancellation of the losers, cut by the horizon.
    for balancer in [
        "round_robin",
        "random",
        "least_outstanding",
        "p2c",
        "pin_until_error",
    ] {
        for p in ["naive", "protected"] {
            let s = ch37(
                p,
                "fifo",
                &[
                    ("horizon_s", "60.5"),
                    ("client.duration_s", "60"),
                    ("svc_b.replicas", "4"),
                    ("svc_b.slots", "4"),
                    ("svc_b.slow.replicas", "[1]"),
                    ("svc_a.replicas", "2"),
                    ("svc_a.slots", "64"),
                    ("svc_a.balancer", balancer),
                    ("gateway.balancer", balancer),
                    ("svc_a.outlier_ejection", "true"),
                    ("svc_a.outlier_base_ejection_s", "5"),
                    ("svc_a.outlier_interval_s", "1"),
                    ("svc_a.outlier_max_ejection_percent", "50"),
                    ("svc_a.hedge_delay_s", "0.1"),
                    ("svc_a.cancel", "hedge_losers"),
                    ("svc_b.latency.mean_s", "0.001"),
                ],
            );
            let r = run(&s, 2);
            let label = format!("{p} with replicas, {balancer}");
            check(&s, &r, &label);
            // Blind rules keep sending it its share, so it fails in a row.
            if ["round_robin", "random"].contains(&balancer) {
                assert!(
                    r.callers[2].ejections > 0,
                    "{label}: svc_a ejects the slow replica"
                );
            }
            // A pin moves only when its replica fails an attempt (a hedge
            // goes elsewhere and leaves it), which it may never do.
            let arrivals: Vec<u64> = r.tiers[2].replicas.iter().map(|x| x.arrivals).collect();
            if balancer != "pin_until_error" {
                assert!(arrivals.iter().all(|&a| a > 0), "{label}: {arrivals:?}");
            }
        }
    }
}

#[test]
fn counts_add_up_on_a_diamond() {
    // client -> a -> fan-out {b, c}, and b and c both call db, under a slow
    // window at db, with retries on every edge; db has two replicas.
    let s = from_toml(DIAMOND, "diamond.toml", &[]);
    for replicas in ["1", "2"] {
        let mut s = s.clone();
        set(&mut s, &[("db.replicas", replicas)]);
        valid(&s);
        let r = run(&s, 1);
        let names: Vec<&str> = r.callers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["client", "a_to_b", "a_to_c", "b_to_db", "c_to_db"]);
        let db = &r.tiers[3];
        assert_eq!(
            db.arrivals,
            r.callers[3].calls + r.callers[4].calls - db.in_transit_at_end
        );
        // R1 sums over both paths: 2 x (2 x 2 + 2 x 3) = 20.
        assert_eq!(db.arrival_bound_per_user, 20);
        assert!(
            db.max_arrivals_per_user > 4,
            "both paths retried for one user"
        );
        check(&s, &r, &format!("diamond, {replicas} replica(s) of db"));
    }
}

const DIAMOND: &str = r#"
name = "diamond"
horizon_s = 40
[client]
rate_per_s = 200
duration_s = 30
[client.call]
attempt_timeout_s = 1.0
max_retries = 1
backoff = "fixed"
backoff_base_s = 0.05
[[tiers]]
name = "a"
slots = 200
[[tiers.fanout]]
to = "b"
call = { attempt_timeout_s = 0.5, max_retries = 1, backoff = "fixed", backoff_base_s = 0.01 }
[[tiers.fanout]]
to = "c"
required = false
call = { attempt_timeout_s = 0.5, max_retries = 1, backoff = "fixed", backoff_base_s = 0.01 }
[[tiers]]
name = "b"
slots = 100
service = { dist = "exponential", mean_s = 0.002 }
[[tiers.fanout]]
to = "db"
call = { attempt_timeout_s = 0.2, max_retries = 1, backoff = "fixed", backoff_base_s = 0.01 }
[[tiers]]
name = "c"
slots = 100
service = { dist = "exponential", mean_s = 0.002 }
[[tiers.fanout]]
to = "db"
call = { attempt_timeout_s = 0.2, max_retries = 2, backoff = "fixed", backoff_base_s = 0.01 }
[[tiers]]
name = "db"
slots = 8
queue_cap = 50
service = { dist = "exponential", mean_s = 0.01 }
slow = [{ start_s = 10.0, duration_s = 10.0, factor = 5.0 }]
"#;

/// The bottleneck's capacity series is its slots over its mean service
/// time, divided by the slow factor in the seconds the window covers; a
/// forwarder has none; replicas add up.
#[test]
fn capacity_is_slots_over_mean_service_time_slowed_in_the_window() {
    let s = ch37("naive", "fifo", &[]);
    let r = run(&s, 1);
    let svc_b = &r.series.tiers[2].capacity_per_s;
    assert_eq!(svc_b.len(), 70);
    let full = 16.0 / 0.020;
    for (sec, c) in svc_b.iter().enumerate() {
        let expected = if (10..30).contains(&sec) {
            full / 10.0
        } else {
            full
        };
        let c = c.expect("svc_b does work");
        assert!(
            (c - expected).abs() < 1e-9 * full,
            "second {sec}: {c} vs {expected}"
        );
    }
    assert!(r.series.tiers[0].capacity_per_s.iter().all(Option::is_none));
    let four = run(&ch37("naive", "fifo", &[("svc_b.replicas", "4")]), 1);
    let c = four.series.tiers[2].capacity_per_s[0].unwrap();
    assert!((c - 4.0 * full).abs() < 1e-9 * full);
}

#[test]
fn counts_add_up_with_crashes() {
    // One replica of four crashes (refused, then a black hole) while a
    // hedging, cancelling caller calls it; the whole tier crashes once.
    for mode in ["refused", "black_hole"] {
        let s = scenario(
            "bad-replica.toml",
            &[
                ("svc_b.crash.start_s", "12"),
                ("svc_b.crash.duration_s", "3"),
                ("svc_b.crash.mode", mode),
                ("svc_b.crash.replicas", "[1]"),
                ("svc_b.crash.1.start_s", "40"),
                ("svc_b.crash.1.duration_s", "1"),
                ("svc_a.crash.start_s", "45"),
                ("svc_a.crash.duration_s", "0.5"),
                ("svc_a.hedge_delay_s", "0.1"),
                ("svc_a.cancel", "always"),
            ],
        );
        let r = run(&s, 3);
        let (a, b) = (&r.tiers[0], &r.tiers[1]);
        assert!(b.lost_in_crash > 0 && a.lost_in_crash > 0, "{mode}");
        assert!(b.refused_down + b.black_holed > 0, "{mode}");
        // A crashed replica serves nothing while it is down.
        let cap = &r.series.tiers[1].replicas[1].capacity_per_s;
        assert_eq!(cap[13], Some(0.0), "{mode}");
        assert!(cap[20].is_some_and(|c| c > 0.0), "{mode}");
        check(&s, &r, &format!("crashes, {mode}"));
    }
}

/// A value for a parameter of `kind` within `bounds`, drawn from `rng`:
/// the bounds themselves often (where rules meet), otherwise moderate
/// values, so that runs stay short. `None` for free text.
fn random_value(
    kind: sim_core::params::Kind,
    bounds: Option<sim_core::params::Bounds>,
    rng: &mut sim_core::random::Stream,
) -> Option<String> {
    use sim_core::params::Kind;
    let pick = |rng: &mut sim_core::random::Stream, n: usize| (rng.uniform() * n as f64) as usize;
    let number = |rng: &mut sim_core::random::Stream, span: f64| {
        let b = bounds.unwrap_or(sim_core::params::Bounds::NON_NEGATIVE);
        let lo = if b.min_open { b.min + 0.01 } else { b.min };
        let hi = b.max.min(lo + span);
        let hi = if b.max_open && hi >= b.max {
            b.max - 0.01
        } else {
            hi
        };
        match pick(rng, 4) {
            0 => lo,
            1 => hi,
            _ => lo + (hi - lo) * rng.uniform(),
        }
    };
    Some(match kind {
        Kind::Float => format!("{:?}", number(rng, 50.0)),
        Kind::Int => format!("{}", number(rng, 40.0).ceil() as u64),
        Kind::Bool => (rng.uniform() < 0.7).to_string(),
        Kind::Choice(names) => format!("{:?}", names[pick(rng, names.len())]),
        Kind::Cap if pick(rng, 4) == 0 => "\"unbounded\"".to_string(),
        Kind::Cap => format!("{}", 1 + pick(rng, 64)),
        Kind::Indexes => "[0]".to_string(),
        Kind::Floats => format!("[{:?}]", rng.uniform()),
        Kind::Choices(names) => format!("[{:?}]", names[pick(rng, names.len())]),
        Kind::Text => return None,
    })
}

/// Random combinations of parameters on every shipped scenario and ch37
/// preset: each one that validates runs without a panic, its counts add
/// up, and the same run in fresh memory, or tracing a user, gives the same
/// result as in the memory of the runs before it. The mechanisms' own tests
/// set them one at a time or as a known set; this finds the combinations
/// nobody wrote down. Each failure names the base and the overrides.
/// `SIM_FUZZ_SEED` and `SIM_FUZZ_RUNS` (7 and 160 by default) draw other
/// and more combinations.
#[test]
fn random_valid_scenarios_conserve_and_repeat() {
    let bases = shipped_scenarios();
    let env = |name: &str, default: u64| {
        std::env::var(name).map_or(default, |v| v.parse().expect("a number"))
    };
    let mut rng = sim_core::random::Stream::new(env("SIM_FUZZ_SEED", 7), "fuzz");
    let wanted = env("SIM_FUZZ_RUNS", 160);
    let (mut tried, mut ran, mut budget) = (0, 0, 0);
    let mut scratch = sim_core::Scratch::default();
    while ran < wanted {
        tried += 1;
        assert!(
            tried < 200 * wanted,
            "only {ran} of {tried} random scenarios validate"
        );
        let (name, base) = &bases[(rng.uniform() * bases.len() as f64) as usize];
        let paths: Vec<String> = sim_core::params::paths(base)
            .into_iter()
            .filter(|p| p != "max_events")
            .collect();
        let mut sets: Vec<(String, String)> = Vec::new();
        for _ in 0..1 + (rng.uniform() * 5.0) as usize {
            let path = &paths[(rng.uniform() * paths.len() as f64) as usize];
            let param = sim_core::params::param_of(path).expect("a catalogued path");
            if let Some(value) = random_value(param.kind, param.bounds, &mut rng) {
                sets.push((path.clone(), value));
            }
        }
        let mut s = base.clone();
        let overrides: Vec<(String, toml::Value)> = (sets.iter())
            .map(|(k, x)| (k.clone(), sim_core::parse_value(x)))
            .collect();
        if sim_core::apply_all(&mut s, &overrides).is_err() {
            continue;
        }
        s.max_events = Some(1_500_000);
        if sim_core::validate(&s).is_err() {
            continue;
        }
        ran += 1;
        let label = format!("{name} with {sets:?}");
        let seed = 1 + ran;
        // In the memory of every run before, as a sweep's worker runs
        // whatever points come its way; every fourth again in fresh memory.
        let in_scratch = std::panic::AssertUnwindSafe(|| sim_core::run_in(&s, seed, &mut scratch));
        let result = std::panic::catch_unwind(in_scratch)
            .unwrap_or_else(|_| panic!("{label}: the run panicked"));
        match result {
            Ok(r) => {
                check(&s, &r, &label);
                if ran % 4 == 0 {
                    let fresh = sim_core::run(&s, seed).expect("the same run");
                    assert_eq!(fresh, r, "{label}: in fresh memory");
                }
                if ran % 8 == 0 && r.users > 0 {
                    let valid = sim_core::ValidScenario::new(s.clone()).expect("valid");
                    let user = (r.users / 2) as u32;
                    let (traced, steps) =
                        sim_core::trace(&valid, seed, user).expect("the same run");
                    assert_eq!(traced, r, "{label}: traced (user {user})");
                    assert!(!steps.is_empty(), "{label}: no steps for user {user}");
                    check_lineage(&steps, &format!("{label}, user {user}"));
                }
            }
            Err(sim_core::RunError::EventBudget { .. }) => budget += 1,
            Err(e) => panic!("{label}: {e}"),
        }
    }
    // Most runs must finish: a budget hit is not a check of the counts.
    assert!(
        budget * 4 < wanted,
        "{budget} of {wanted} runs hit the event budget"
    );
    eprintln!("{ran} random scenarios ran ({tried} drawn, {budget} over the event budget)");
}

/// A trace's lineage: job 0 is the user request and serves nobody; each
/// request's steps at its tier serve an attempt its caller sent (or
/// hedged) before; a request that queued stops waiting once (a started
/// one may still be lost in a crash), and starts only after it queued.
fn check_lineage(steps: &[sim_core::TraceStep], label: &str) {
    assert_eq!((steps[0].job, steps[0].serves), (0, None), "{label}");
    let sent = |caller: u32, attempt: u32, upto: usize| {
        steps[..upto].iter().any(|s| {
            s.job == caller && s.attempt == attempt && (s.event == "send" || s.event == "hedge")
        })
    };
    let at_tier = [
        "queued",
        "start",
        "reply ok",
        "reply error",
        "rejected: ",
        "dropped: ",
    ];
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s.serves.is_none(), s.job == 0, "{label}: {s:?}");
        // A job is numbered after the one it serves.
        assert!(s.serves.is_none_or(|c| c < s.job), "{label}: {s:?}");
        if at_tier.iter().any(|e| s.event.starts_with(e)) {
            let caller = s.serves.expect("a request serves its caller");
            assert!(
                sent(caller, s.attempt, i),
                "{label}: {s:?} serves nothing sent"
            );
        }
    }
    // A request that queued stops waiting once: it starts, is turned away
    // (dropped, rejected, or refused or lost at an instance that is down),
    // or is still queued at the horizon. Once started, only a crash may
    // still lose it.
    let wait_ends = [
        "start",
        "dropped: ",
        "rejected: ",
        "refused: down",
        "lost: ",
        "queued at the horizon",
    ];
    for (i, s) in steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.event == "queued")
    {
        let mut ends = (steps[i + 1..].iter())
            .filter(|x| x.job == s.job && wait_ends.iter().any(|e| x.event.starts_with(e)))
            .map(|x| x.event.as_str());
        let first = (ends.next()).unwrap_or_else(|| panic!("{label}: {s:?} never stops waiting"));
        let then: Vec<&str> = ends.collect();
        let may_follow: &[&str] = if first == "start" {
            &["lost: crash"]
        } else {
            &[]
        };
        assert!(
            then.len() <= 1 && then.iter().all(|e| may_follow.contains(e)),
            "{label}: {s:?} stopped waiting by {first}, then {then:?}"
        );
    }
    // What only a request that waited can meet (a leaky bucket's wait is
    // one): a start, a drop when it would start, the horizon in a queue.
    let after_waiting = [
        "start",
        "dropped: expired",
        "dropped: codel",
        "queued at the horizon",
    ];
    for (i, s) in steps.iter().enumerate() {
        if after_waiting.contains(&s.event.as_str()) {
            let queued = steps[..i]
                .iter()
                .any(|x| x.job == s.job && x.event == "queued");
            assert!(queued, "{label}: {s:?} without waiting");
        }
    }
}
