//! Backlog replay (`[clients.<g>.queue]`): each rule in isolation (the
//! drain rate spaces delivery starts exactly, a failed delivery comes back
//! exactly `redeliver_after_s` later, full speed is bounded by the
//! consumers, a backlog grows during an outage by exactly the producers'
//! arrivals), conservation of messages under several settings, and the
//! errors a user sees.

mod common;
use common::*;
use sim_core::RunResult;
use sim_core::time::NANOS_PER_SEC;

/// A queue group `replay` delivering to `db`, the only tier (constant
/// service of `service_s`). The online users (`client`) are one, at 29 s
/// (even arrivals, a gap of 58 s), so that before it the replay's
/// deliveries are users 0, 1, ...
fn replay(service_s: f64, sets: &[(&str, &str)]) -> sim_core::Scenario {
    let text = format!(
        r#"
name = "replay-rules"
horizon_s = 40.0

[client]
duration_s = 30.0
rate_per_s = {online}
arrivals = "even"
[client.call]
attempt_timeout_s = 10.0
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0

[clients.replay]
rate_per_s = 10.0
arrivals = "even"
duration_s = 30.0
queue = {{ consumers = 4, redeliver_after_s = 0.5 }}
[clients.replay.call]
attempt_timeout_s = 10.0
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0

[[tiers]]
name = "db"
slots = 64
service = {{ dist = "constant", mean_s = {service_s} }}
"#,
        online = 1.0 / 58.0
    );
    from_toml(&text, "replay-rules", sets)
}

/// The instant (ns) delivery `user` started: its first traced step.
fn started_ns(s: &sim_core::Scenario, user: u32) -> u64 {
    let (_, steps) = common::trace(s, 1, user);
    (steps[0].at_s * NANOS_PER_SEC as f64).round() as u64
}

/// The replay group's queue counts and users.
fn queue(r: &RunResult) -> sim_core::result::QueueStats {
    r.groups[1].queue.clone().expect("the replay group's queue")
}

/// Every message published is consumed, dropped, waiting or being
/// delivered at the end; every delivery ended ok, failed (its message put
/// back) or is in flight; the group's successes are its consumed messages.
fn conserved(r: &RunResult, label: &str) {
    let q = queue(r);
    let g = &r.groups[1];
    assert_eq!(
        q.published,
        q.consumed_ok + q.dropped + q.backlog_end + q.in_flight_end,
        "{label}: published = consumed + dropped + waiting + in flight: {q:?}"
    );
    assert_eq!(
        g.users,
        q.consumed_ok + q.redelivered + q.in_flight_end,
        "{label}: deliveries"
    );
    assert_eq!(g.users_ok, q.consumed_ok, "{label}");
    assert_eq!(g.users_unfinished, q.in_flight_end, "{label}");
    assert!(q.backlog_peak >= q.backlog_end, "{label}");
    let series = &r.series.groups[1].backlog;
    assert!(series.iter().all(|b| *b <= q.backlog_peak), "{label}");
}

#[test]
fn the_drain_rate_spaces_delivery_starts_exactly() {
    // 100 messages in the first 0.1 s, drained at 5 per second by 4
    // consumers that could go far faster.
    let s = replay(
        0.001,
        &[
            ("replay.rate_per_s", "1000"),
            ("replay.duration_s", "0.1"),
            ("replay.queue.drain_rate_per_s", "5"),
        ],
    );
    let first = 500_000; // the first even arrival, half a gap in
    for k in [0, 1, 2, 7, 30] {
        assert_eq!(
            started_ns(&s, k),
            first + k as u64 * 200_000_000,
            "delivery {k}"
        );
    }
    let r = run(&s, 1);
    let by_sec = &r.series.groups[1].user_arrivals;
    assert!(by_sec[..20].iter().all(|&n| n == 5), "{by_sec:?}");
    assert_eq!(queue(&r).consumed_ok, 100);
    // 95 have started by 19 s (the 95th at 18.8005 s), the 100th at
    // 19.8005 s: nothing waits from 20 s on.
    assert_eq!(r.series.groups[1].backlog[18], 5);
    assert_eq!(r.series.groups[1].backlog[19], 0);
    conserved(&r, "drain rate");
}

#[test]
fn a_failed_delivery_is_redelivered_exactly_after_the_delay() {
    // One message at 0.5 s; db fails every request starting before 2 s,
    // after 10 ms: deliveries at 0.5, 1.21, 1.92 fail, the one at 2.63 s
    // (0.7 s after each failure) succeeds.
    let s = replay(
        0.001,
        &[
            ("replay.rate_per_s", "1"),
            ("replay.duration_s", "1"),
            ("replay.queue.redeliver_after_s", "0.7"),
            ("db.errors.start_s", "0"),
            ("db.errors.duration_s", "2"),
            ("db.errors.p", "1"),
            ("db.error_latency_s", "0.01"),
        ],
    );
    let starts: Vec<u64> = (0..4).map(|k| started_ns(&s, k)).collect();
    assert_eq!(
        starts,
        [500_000_000, 1_210_000_000, 1_920_000_000, 2_630_000_000]
    );
    let r = run(&s, 1);
    let q = queue(&r);
    assert_eq!((q.published, q.redelivered, q.consumed_ok), (1, 3, 1));
    assert_eq!(r.groups[1].users, 4);
    // The queue's retries: db sees the three redeliveries as retries.
    assert_eq!(r.series.tiers[0].retries[..3], [0, 2, 1]);
    conserved(&r, "redelivery");
}

#[test]
fn at_full_speed_the_consumers_bound_the_deliveries() {
    // 100 messages in the first 0.1 s, 0.1 s of work each, 64 slots at
    // db: k consumers deliver 10 k per second, k at a time.
    for consumers in [4_u64, 8] {
        let c = consumers.to_string();
        let s = replay(
            0.1,
            &[
                ("replay.rate_per_s", "1000"),
                ("replay.duration_s", "0.1"),
                ("replay.queue.consumers", &c),
            ],
        );
        let r = run(&s, 1);
        let per_s = 10 * consumers;
        let by_sec = &r.series.groups[1].user_arrivals;
        let full = (100 / per_s) as usize;
        assert!(
            by_sec[..full].iter().all(|&n| n == per_s),
            "{consumers}: {by_sec:?}"
        );
        assert_eq!(by_sec[..full + 1].iter().sum::<u64>(), 100, "{consumers}");
        let busy = &r.series.tiers[0].busy;
        assert!(
            busy[..full].iter().all(|&b| b == consumers),
            "{consumers}: {busy:?}"
        );
        assert_eq!(count(&r, "db_max_queue"), 0, "{consumers}");
        assert_eq!(queue(&r).consumed_ok, 100);
        conserved(&r, &format!("{consumers} consumers"));
    }
}

#[test]
fn during_an_outage_the_backlog_grows_by_the_producers_arrivals() {
    // 10 messages a second (even); db refuses connections from 10 s to
    // 20 s. Every message published in the outage waits (its deliveries
    // fail, it comes back 0.5 s later), none before it does.
    let s = replay(
        0.001,
        &[
            ("db.crash.start_s", "10"),
            ("db.crash.duration_s", "10"),
            ("db.crash.connect_latency_s", "0.001"),
        ],
    );
    let r = run(&s, 1);
    let backlog = &r.series.groups[1].backlog;
    // backlog[k]: messages waiting at the end of second k.
    assert!(backlog[..10].iter().all(|&b| b == 0), "{backlog:?}");
    for (k, b) in backlog.iter().enumerate().take(20).skip(10) {
        assert_eq!(*b, 10 * (k as u64 - 9), "end of second {k}: {backlog:?}");
    }
    let q = queue(&r);
    // The message published at 20.05 s finds the 100 still waiting for
    // their next delivery (due within 0.5 s of their last failure).
    assert_eq!(q.backlog_peak, 101);
    assert!(q.redelivered > 100, "{q:?}");
    assert_eq!((q.consumed_ok, q.backlog_end), (300, 0));
    // 4 consumers at 1 ms each drain 100 messages at once after 20 s.
    assert_eq!(q.drain_s, Some(1.0));
    conserved(&r, "outage");
}

#[test]
fn messages_are_conserved_under_every_setting() {
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("plain", &[]),
        (
            "a small backlog drops",
            &[
                ("db.crash.start_s", "5"),
                ("db.crash.duration_s", "10"),
                ("replay.queue.max_backlog", "30"),
            ],
        ),
        (
            "black hole: deliveries time out",
            &[
                ("db.crash.start_s", "5"),
                ("db.crash.duration_s", "10"),
                ("db.crash.mode", "black_hole"),
                ("replay.attempt_timeout_s", "0.3"),
                ("replay.max_retries", "2"),
            ],
        ),
        (
            "slow db, drain rate, horizon inside the outage",
            &[
                ("db.slow.start_s", "5"),
                ("db.slow.duration_s", "30"),
                ("db.slow.factor", "2000"),
                ("replay.attempt_timeout_s", "1"),
                ("replay.queue.drain_rate_per_s", "20"),
                ("horizon_s", "30"),
            ],
        ),
        (
            "errors, one consumer, a deadline per delivery",
            &[
                ("db.errors.start_s", "5"),
                ("db.errors.duration_s", "10"),
                ("db.errors.p", "0.5"),
                ("replay.queue.consumers", "1"),
                ("replay.deadline_s", "0.5"),
            ],
        ),
    ];
    for (label, sets) in cases {
        let r = run(&replay(0.01, sets), 1);
        conserved(&r, label);
        let q = queue(&r);
        assert!(q.published >= 290, "{label}: {q:?}");
        if label.contains("drops") {
            assert!(q.dropped > 0 && q.backlog_peak == 30, "{label}: {q:?}");
        }
        if label.contains("time out") {
            assert!(
                q.redelivered > 0 && r.callers[1].calls_timeout > 0,
                "{label}: {q:?}"
            );
        }
        if label.contains("horizon") {
            assert!(q.backlog_end > 0 && q.in_flight_end > 0, "{label}: {q:?}");
            assert_eq!(q.drain_s, None, "{label}");
        }
    }
}

#[test]
fn a_queue_is_off_by_default_and_its_knobs_are_refused_without_consumers() {
    let errors = |sets: &[(&str, &str)]| {
        let mut s = replay(0.001, &[]);
        set(&mut s, sets);
        sim_core::validate(&s)
            .err()
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        errors(&[
            ("replay.queue.consumers", "0"),
            ("replay.queue.drain_rate_per_s", "5"),
            ("replay.queue.max_backlog", "10"),
        ]),
        [
            "replay.queue.drain_rate_per_s: 5.0 has no effect: queue.drain_rate_per_s is a setting of the group's message queue, and replay.queue.consumers is 0 (no queue); set replay.queue.consumers >= 1, or leave queue.drain_rate_per_s at its default (0.0)",
            "replay.queue.redeliver_after_s: 0.5 has no effect: queue.redeliver_after_s is a setting of the group's message queue, and replay.queue.consumers is 0 (no queue); set replay.queue.consumers >= 1, or leave queue.redeliver_after_s at its default (1.0)",
            "replay.queue.max_backlog: 10 has no effect: queue.max_backlog is a setting of the group's message queue, and replay.queue.consumers is 0 (no queue); set replay.queue.consumers >= 1, or leave queue.max_backlog at its default (unset)",
        ]
    );
    // At their defaults they are the run without them: accepted (a grid
    // whose axis turns the queue on and off may set them for its other
    // points).
    assert_eq!(
        errors(&[
            ("replay.queue.consumers", "0"),
            ("replay.queue.redeliver_after_s", "1.0"),
        ]),
        Vec::<String>::new()
    );
    let not_client = "`client` is the online users, who wait for their own answers; a queue's consumers are a client group of their own: declare [clients.<name>] with queue.consumers";
    assert_eq!(
        errors(&[("client.queue.consumers", "2")]),
        [format!("client.queue.consumers: {not_client}")]
    );
    assert_eq!(
        errors(&[("client.queue.drain_rate_per_s", "5")]),
        [format!("client.queue.drain_rate_per_s: {not_client}")]
    );
    assert_eq!(
        errors(&[
            ("replay.queue.redeliver_after_s", "0"),
            ("replay.queue.max_backlog", "0")
        ]),
        [
            "replay.queue.redeliver_after_s: must be > 0: a message redelivered at once to a dependency that fails at once would be delivered forever at one instant",
            "replay.queue.max_backlog: must be >= 1 (or \"unbounded\"): 0 would drop every message",
        ]
    );
    assert_eq!(
        errors(&[
            ("replay.rate_per_s", "0"),
            ("replay.arrivals", "poisson"),
            ("replay.closed.users", "3"),
            ("replay.closed.think.mean_s", "1"),
        ]),
        [
            "replay.queue.consumers: a queue's producers are the group's open arrivals; closed-loop users wait for their own outcome, which a published message does not"
        ]
    );
    // Without consumers the group is an ordinary one: its arrivals are users.
    let off = [
        ("replay.queue.consumers", "0"),
        ("replay.queue.redeliver_after_s", "1"),
    ];
    let r = run(&replay(0.001, &off), 1);
    assert_eq!((r.groups[1].users, &r.groups[1].queue), (300, &None));
    // Its queue's columns: counts 0, the drain null (neither drained nor not).
    let metric = |name: &str| {
        let m = r.metrics().into_iter().find(|m| m.name == name);
        m.unwrap_or_else(|| panic!("{name}")).value
    };
    assert_eq!(metric("group_replay_published"), sim_core::Value::Count(0));
    assert_eq!(
        metric("group_replay_drained"),
        sim_core::Value::MaybeFlag(None)
    );
    assert_eq!(
        metric("group_replay_drain_s"),
        sim_core::Value::MaybeReal(None)
    );
    let censored = metric("group_replay_drain_censored_s");
    assert_eq!(censored, sim_core::Value::MaybeReal(None));
}

#[test]
fn draining_at_full_speed_after_the_outage_causes_a_second_one() {
    // grids/replay.toml, seed 1: db down from 10 s to 30 s, about 2000
    // messages waiting when it restarts. 1000 consumers at once fill db's
    // queue past app's 0.5 s timeout: every delivery times out and comes
    // back, the online users never recover. At 400/s (db's spare capacity
    // beside the online users is about 600/s) the backlog drains in 7 s
    // and the online users do not notice.
    let full = run(&scenario("replay.toml", &[]), 1);
    let paced = run(
        &scenario("replay.toml", &[("replay.queue.drain_rate_per_s", "400")]),
        1,
    );
    assert_eq!(full.groups[0].recovery_s, None);
    assert!(full.groups[0].phases[2].success_rate().unwrap() < 0.05);
    let q = queue(&full);
    assert!(q.drain_s.is_none() && q.backlog_end > 2000, "{q:?}");
    assert_eq!(paced.groups[0].recovery_s, Some(0.0));
    let q = queue(&paced);
    assert_eq!((q.drain_s, q.backlog_end), (Some(7.0), 0));
    conserved(&full, "full speed");
    conserved(&paced, "400/s");
}
