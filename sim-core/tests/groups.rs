//! Several client groups in one scenario: superposed open groups against
//! M/M/c, a closed group beside an open one keeping the interactive
//! response time law exactly, a group leaving the client's own users as
//! they were, their parameter paths and their validation.

mod common;
use common::*;

/// Two open Poisson groups, `client` at `a` and `batch` at `b` per second,
/// at one tier of `c` slots with exponential service of mean `1 / mu`;
/// timeouts far beyond any wait.
fn two_open(a: f64, b: f64, c: u32, mu: f64, duration_s: f64) -> sim_core::Scenario {
    let group = |name: &str, rate: f64| {
        format!(
            r#"
[{name}]
rate_per_s = {rate}
duration_s = {duration_s}
[{name}.call]
attempt_timeout_s = 1e6
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
"#
        )
    };
    let text = format!(
        r#"
name = "two-open"
horizon_s = {duration_s}
{}{}
[[tiers]]
name = "server"
slots = {c}
service = {{ dist = "exponential", mean_s = {mean} }}
"#,
        group("client", a),
        group("clients.batch", b),
        mean = 1.0 / mu
    );
    from_toml(&text, "two-open", &[])
}

/// Erlang C: mean wait in queue of M/M/c.
fn erlang_c_wait(c: u32, lambda: f64, mu: f64) -> f64 {
    let a = lambda / mu;
    let rho = a / c as f64;
    let (mut term, mut sum) = (1.0, 1.0);
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let last = term * a / c as f64 / (1.0 - rho);
    last / (sum + last) / (c as f64 * mu - lambda)
}

#[test]
fn two_open_groups_are_one_poisson_stream_of_the_summed_rate() {
    // 30 + 50 per second at 2 slots of 50 per second each: rho = 0.8, where
    // the wait is very sensitive to the rate (a group left out, or counted
    // twice, moves it by a factor of two or more).
    let (a, b, c, mu, duration_s) = (30.0, 50.0, 2, 50.0, 4000.0);
    let s = two_open(a, b, c, mu, duration_s);
    let theory = erlang_c_wait(c, a + b, mu);
    let runs: Vec<_> = (1..=4).map(|seed| run(&s, seed)).collect();
    let waits: Vec<f64> = (runs.iter())
        .map(|r| r.tiers[0].wait_s / r.tiers[0].started as f64)
        .collect();
    let mean = waits.iter().sum::<f64>() / waits.len() as f64;
    println!("mean wait {mean:.5} s, Erlang C {theory:.5} s ({waits:?})");
    assert!(
        (mean / theory - 1.0).abs() < 0.05,
        "{mean} vs Erlang C {theory}"
    );
    for r in &runs {
        // Each group's arrivals within 4 standard deviations of its rate.
        for (g, rate) in r.groups.iter().zip([a, b]) {
            let expected = rate * duration_s;
            let z = (g.users as f64 - expected) / expected.sqrt();
            assert!(
                z.abs() < 4.0,
                "{}: {} users, {expected} expected",
                g.name,
                g.users
            );
        }
        assert_eq!(r.groups[0].users + r.groups[1].users, r.users);
        // Both see the same queue: the same latency within noise.
        let (m0, m1) = (
            r.groups[0].success_latency_median_s.unwrap(),
            r.groups[1].success_latency_median_s.unwrap(),
        );
        assert!((m0 / m1 - 1.0).abs() < 0.05, "medians {m0} and {m1}");
    }
}

#[test]
fn a_closed_group_beside_an_open_one_keeps_the_response_time_law_exactly() {
    let mut s = two_open(40.0, 1.0, 1, 100.0, 2000.0);
    set(
        &mut s,
        &[
            ("batch.rate_per_s", "0"),
            ("batch.closed.users", "5"),
            ("batch.closed.think.mean_s", "0.2"),
            ("batch.closed.think.dist", "exponential"),
        ],
    );
    let r = run(&s, 7);
    let batch = &r.groups[1];
    let c = batch.closed.as_ref().expect("the batch group is closed");
    assert!(r.groups[0].closed.is_none(), "the client is open");
    // The run's closed loop (`closed_*`) is its closed groups' together.
    assert_eq!(r.closed.as_ref(), Some(c));
    // The cycles tile each batch user's time: X = N / (R + Z) exactly.
    assert_eq!(c.span_ns, c.think_ns + c.response_ns);
    let (x, resp, z) = (
        c.throughput_per_s().unwrap(),
        c.response_mean_s().unwrap(),
        c.think_mean_s().unwrap(),
    );
    assert!((x / (5.0 / (resp + z)) - 1.0).abs() < 1e-12, "{x}");
    assert_eq!(c.users, 5);
    assert_eq!(c.cycles, batch.users - batch.users_unfinished);
    assert!(batch.users_unfinished <= 5);
    // The open group's users wait behind the batch's: the station is busier
    // than the open load alone (40 of 100 per second) makes it.
    let busy = r.tiers[0].busy_s / 2000.0;
    assert!(busy > 0.4 + 0.1, "utilisation {busy}");
    assert!(
        (busy - (40.0 + x) / 100.0).abs() < 0.02,
        "utilisation {busy}, batch {x}/s"
    );
}

#[test]
fn the_runs_closed_loop_sums_every_closed_groups_and_keeps_the_law() {
    let mut s = two_open(40.0, 1.0, 1, 100.0, 500.0);
    set(
        &mut s,
        &[
            ("client.rate_per_s", "0"),
            ("client.closed.users", "3"),
            ("client.closed.think.mean_s", "0.1"),
            ("batch.rate_per_s", "0"),
            ("batch.closed.users", "5"),
            ("batch.closed.think.mean_s", "0.2"),
        ],
    );
    let r = run(&s, 7);
    let (a, b) = (
        r.groups[0].closed.as_ref().unwrap(),
        r.groups[1].closed.as_ref().unwrap(),
    );
    let total = r.closed.as_ref().unwrap();
    assert_eq!(
        (total.users, total.cycles, total.span_ns),
        (8, a.cycles + b.cycles, a.span_ns + b.span_ns)
    );
    // X = N / (R + Z) over the union: each user's cycles fill its span.
    let (x, resp, z) = (
        total.throughput_per_s().unwrap(),
        total.response_mean_s().unwrap(),
        total.think_mean_s().unwrap(),
    );
    assert!((x / (8.0 / (resp + z)) - 1.0).abs() < 1e-12, "{x}");
}

#[test]
fn a_group_leaves_the_clients_own_users_as_they_were() {
    // Open arrivals do not depend on the load, and each group draws from
    // streams of its own: the client's users are the same with a group
    // beside it, and the group's users are not a copy of the client's.
    let alone = ch37("naive", "fifo", &[]);
    let mut with = alone.clone();
    with.clients.insert("batch".into(), alone.client.clone());
    // Shorter attempts, so that its failed users' latencies are its own.
    set(
        &mut with,
        &[
            ("batch.rate_per_s", "400"),
            ("batch.attempt_timeout_s", "0.5"),
        ],
    );
    let (a, w) = (run(&alone, 5), run(&with, 5));
    assert!(a.groups.is_empty(), "one group: the totals are its counts");
    assert_eq!(w.groups[0].users, a.users);
    assert_ne!(w.groups[1].users, a.users);
    assert_eq!(w.users, w.groups[0].users + w.groups[1].users);
    let series = |r: &sim_core::RunResult| r.series.user_arrivals.iter().sum::<u64>();
    assert_eq!(series(&w), w.users);
    // Its own metrics, beside the totals'.
    for name in ["group_client_users", "group_batch_users"] {
        assert!(count(&w, name) > 20_000, "{name}");
    }
    assert!(real(&w, "group_batch_success_latency_p99_s").is_some());
    // The unfinished users add up; the median of every failed user's
    // latency lies between the groups' own (as the median of a union must).
    let unfinished = [
        "group_client_users_unfinished",
        "group_batch_users_unfinished",
    ];
    assert_eq!(
        unfinished.map(|n| count(&w, n)).iter().sum::<u64>(),
        count(&w, "users_unfinished")
    );
    let [c, b] = [
        "group_client_failed_latency_median_s",
        "group_batch_failed_latency_median_s",
    ]
    .map(|n| real(&w, n).expect("failed users in both groups"));
    let all = real(&w, "failed_latency_median_s").unwrap();
    assert!(c.min(b) <= all && all <= c.max(b), "{c} {b} {all}");
    assert!(b < c, "each group's own users: {b} {c}");
}

#[test]
fn a_groups_parameters_are_under_its_name() {
    let mut s = ch37("naive", "fifo", &[]);
    s.clients.insert("batch".into(), s.client.clone());
    set(
        &mut s,
        &[
            ("batch.rate_per_s", "25"),
            ("batch.max_retries", "7"),
            ("batch.spike.factor", "2"),
        ],
    );
    let b = &s.clients["batch"];
    assert_eq!(b.rate_per_s, 25.0);
    assert_eq!(b.call.max_retries, 7);
    assert_eq!(b.spike[0].factor, 2.0);
    let e = sim_core::params::set(&mut s, "batch.profile.1.rate_per_s", &v("9")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "batch.profile.1.rate_per_s: `batch` has 0 profile point(s); the next one is index 0"
    );
    // The client is untouched.
    assert_eq!(s.client.rate_per_s, 400.0);
    let paths = sim_core::params::paths(&s);
    for p in [
        "batch.rate_per_s",
        "batch.closed.users",
        "batch.max_retries",
        "batch.spike.factor",
    ] {
        assert!(paths.contains(&p.to_string()), "{p}");
    }
}

fn problems(s: &sim_core::Scenario) -> Vec<String> {
    match sim_core::validate(s) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn a_group_is_checked_under_its_name() {
    let mut s = ch37("naive", "fifo", &[]);
    let mut batch = s.client.clone();
    batch.rate_per_s = -1.0;
    batch.duration_s = 80.0;
    batch.call.budget_admission = true;
    s.clients.insert("batch".into(), batch.clone());
    s.clients.insert("svc_b".into(), s.client.clone());
    s.clients.insert("Bad".into(), s.client.clone());
    s.clients.insert("client".into(), s.client.clone());
    assert_eq!(
        problems(&s),
        [
            "clients.client: `client` is the scenario's own client ([client]); name the other groups otherwise",
            "clients.Bad: a client group name is made of a-z, 0-9 and _ (it begins its parameter paths and names metric columns)",
            "batch.rate_per_s: must be > 0: at rate 0 no user arrives (a load profile or a closed loop gives the load otherwise)",
            "horizon_s: the horizon (70.0 s) ends before the arrivals do (batch.duration_s = 80.0 s): raise horizon_s or shorten batch.duration_s",
            "clients.svc_b: a client group and a tier share this name, which begins both their parameter paths",
            "batch.budget_admission: acts on a deadline, and client group `batch`'s requests have none unless batch.deadline_s (a user's total patience) is set; set batch.deadline_s, or set `budget_admission` on a tier that receives a deadline (`<tier>.budget_admission`)",
        ]
    );
}

#[test]
fn a_groups_class_is_a_class_of_the_tiers() {
    // The batch group's own class, lowest in priority (after the client's
    // unnamed one), with a bulkhead of one slot at svc_b: at most one of its
    // requests in service there, so its users wait behind each other.
    let mut s = ch37(
        "naive",
        "fifo",
        &[("svc_b.slow.duration_s", "0"), ("svc_b.slow.factor", "1")],
    );
    let mut batch = s.client.clone();
    batch.rate_per_s = 50.0;
    batch.classes = vec![sim_core::scenario::RequestClass {
        name: "batch".into(),
        share: 1.0,
    }];
    s.clients.insert("batch".into(), batch);
    let free = run(&s, 1);
    s.tiers[2].class_slots.insert("batch".into(), 1);
    valid(&s);
    let held = run(&s, 1);
    assert_eq!(held.classes.len(), 1);
    assert_eq!(held.classes[0].users, held.groups[1].users);
    let p99 = |r: &sim_core::RunResult| r.groups[1].success_latency_p99_s.unwrap();
    assert!(
        p99(&held) > 2.0 * p99(&free),
        "{} vs {}",
        p99(&held),
        p99(&free)
    );
    assert!(sim_core::params::paths(&s).contains(&"svc_b.class_slots.batch".to_string()));
}

#[test]
fn the_columns_of_a_run_with_groups_are_known_before_it() {
    // An open client and a closed group: the schema (zero values) names
    // and types every metric the run reports, in order.
    let mut s = two_open(40.0, 1.0, 1, 100.0, 50.0);
    set(
        &mut s,
        &[
            ("batch.rate_per_s", "0"),
            ("batch.closed.users", "5"),
            ("batch.closed.think.mean_s", "0.2"),
        ],
    );
    let kinds = |ms: Vec<sim_core::result::Metric>| -> Vec<(String, String)> {
        ms.into_iter()
            .map(|m| {
                (
                    m.name,
                    format!("{:?}", m.value)
                        .split('(')
                        .next()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect()
    };
    let got = kinds(run(&s, 1).metrics());
    assert_eq!(kinds(sim_core::result::metric_schema(&s)), got);
    assert!(
        got.iter()
            .any(|(n, _)| n == "group_batch_closed_throughput_per_s")
    );
}

/// grids/mixed-clients.toml, one point: online users at `rate` per second
/// and `workers` closed-loop batch workers, svc_b slow for 2 s.
fn mixed(strategy: &str, rate: &str, workers: &str, seed: u64) -> sim_core::RunResult {
    let s = scenario(
        "mixed-clients.toml",
        &[
            ("strategy", strategy),
            ("svc_b.slow.duration_s", "2"),
            ("client.rate_per_s", rate),
            ("batch.closed.users", workers),
        ],
    );
    run(&s, seed)
}

#[test]
fn mixed_clients_grid_the_batch_keeps_naive_online_users_down_not_protected_ones() {
    let after = |r: &sim_core::RunResult| r.groups[0].phases[2].success_rate().unwrap();
    // The online users' own recovery, from their users alone.
    let online = |r: &sim_core::RunResult| r.groups[0].recovery_s;
    for seed in [1, 2] {
        // At 200/s the online users recover under naive retries whatever the
        // batch, later the more workers it has.
        let (one, sixty) = (
            mixed("naive", "200", "1", seed),
            mixed("naive", "200", "60", seed),
        );
        let (a, b) = (
            online(&one).expect("recovers"),
            online(&sixty).expect("recovers"),
        );
        assert!(a < b, "seed {seed}: {a} vs {b}");
        // At 300/s, 20 workers keep them down: none succeeds after the
        // window, and the batch, slowed by its own users' waits, with them.
        for workers in ["20", "60"] {
            let r = mixed("naive", "300", workers, seed);
            assert_eq!(online(&r), None, "naive, {workers} workers, seed {seed}");
            assert_eq!(r.recovery_s, None);
            assert_eq!(after(&r), 0.0);
            assert_eq!(r.groups[1].phases[2].success_rate(), Some(0.0));
        }
        // Deadlines (and their drops) recover at once with any batch.
        for (rate, workers) in [("200", "60"), ("300", "20"), ("300", "60")] {
            let r = mixed("deadline", rate, workers, seed);
            assert_eq!(online(&r), Some(0.0), "deadline {rate}/s {workers} workers");
            assert_eq!(r.groups[1].recovery_s, Some(0.0));
            assert!(after(&r) > 0.999);
        }
    }
    // Protected, 200/s and 60 workers: the total, mostly the batch's users,
    // recovers before the online users do.
    let r = mixed("protected", "200", "60", 2);
    let (total, online) = (r.recovery_s.unwrap(), online(&r).unwrap());
    assert!(online > total, "online {online} s, total {total} s");
}

#[test]
fn batch_direct_grid_a_batch_reading_svc_b_directly_skips_the_storm_in_svc_a() {
    let point = |strategy: &str, calls: &str, seed: u64| {
        let s = scenario(
            "mixed-clients.toml",
            &[
                ("strategy", strategy),
                ("svc_b.slow.duration_s", "2"),
                ("client.rate_per_s", "300"),
                ("batch.closed.users", "60"),
                ("batch.calls", calls),
            ],
        );
        run(&s, seed)
    };
    let after = |r: &sim_core::RunResult, g: usize| r.groups[g].phases[2].success_rate();
    let during = |r: &sim_core::RunResult| r.groups[0].phases[1].success_rate().unwrap();
    for seed in [1, 2] {
        // Naive: the online users never recover either way, but the batch
        // does once it skips svc_a, whose queue holds the storm.
        let (front, direct) = (
            point("naive", "gateway", seed),
            point("naive", "svc_b", seed),
        );
        for r in [&front, &direct] {
            assert_eq!(r.groups[0].recovery_s, None, "seed {seed}");
            assert_eq!(after(r, 0), Some(0.0));
        }
        assert_eq!(after(&front, 1), Some(0.0), "seed {seed}");
        assert_eq!(after(&direct, 1), Some(1.0), "seed {seed}");
        // Deadlines: past the front's drops the batch takes more of svc_b
        // during the window, and the online users succeed less.
        let (front, direct) = (
            point("deadline", "gateway", seed),
            point("deadline", "svc_b", seed),
        );
        let (a, b) = (during(&front), during(&direct));
        assert!(b < a - 0.1, "seed {seed}: online during {b} direct vs {a}");
    }
}

#[test]
fn the_groups_users_add_up_to_the_totals_second_by_second() {
    let r = mixed("naive", "200", "20", 1);
    let s = &r.series;
    assert_eq!(s.groups.len(), 2);
    for sec in 0..s.seconds() {
        let sum = |f: fn(&sim_core::result::GroupSeries) -> &Vec<u64>| -> u64 {
            s.groups.iter().map(|g| f(g)[sec]).sum()
        };
        assert_eq!(
            sum(|g| &g.user_arrivals),
            s.user_arrivals[sec],
            "second {sec}"
        );
        assert_eq!(
            sum(|g| &g.user_ok_by_arrival),
            s.user_ok_by_arrival[sec],
            "second {sec}"
        );
    }
    for (g, gs) in r.groups.iter().zip(&s.groups) {
        assert_eq!(g.name, gs.name);
        assert_eq!(gs.user_arrivals.iter().sum::<u64>(), g.users, "{}", g.name);
        assert_eq!(gs.user_ok_by_arrival.iter().sum::<u64>(), g.users_ok);
        assert!(
            g.users > 0 && g.users_ok > 0,
            "{}: both groups load",
            g.name
        );
    }
    // The client alone: no per-group series (the totals are its own).
    let alone = run(&ch37("naive", "fifo", &[]), 1);
    assert!(alone.series.groups.is_empty() && alone.groups.is_empty());
}

#[test]
fn a_group_whose_users_all_arrive_before_the_trigger_has_no_recovery() {
    // A third group that stops arriving at 5 s, before svc_b slows at 10 s:
    // no window of its arrivals lies after the trigger, so it never
    // recovers and the smallest time it could not observe is 0, while the
    // online users, who arrive until 60 s, recover.
    let s = scenario(
        "mixed-clients.toml",
        &[("strategy", "deadline"), ("svc_b.slow.duration_s", "2")],
    );
    let text = std::fs::read_to_string(scenario_file("mixed-clients.toml")).unwrap()
        + r#"
[clients.early]
rate_per_s = 20.0
duration_s = 5.0
[clients.early.call]
attempt_timeout_s = 1.0
max_retries = 2
backoff = "fixed"
backoff_base_s = 0.05
"#;
    let mut early = from_toml(
        &text,
        "mixed-clients",
        &[("strategy", "deadline"), ("svc_b.slow.duration_s", "2")],
    );
    let r = run(&early, 1);
    let g = |name: &str| r.groups.iter().find(|g| g.name == name).unwrap();
    assert!(g("early").users > 50, "{}", g("early").users);
    assert_eq!(g("early").recovery_s, None);
    assert_eq!(real(&r, "group_early_recovery_censored_s"), Some(0.0));
    assert_eq!(g("client").recovery_s, Some(0.0));
    assert!(g("client").recovery_censor_s > 40.0);
    // Its users were all before the window, and counted there.
    assert_eq!(g("early").phases[0].users, g("early").users);
    let without = run(&s, 1);
    assert_eq!(without.groups[0].recovery_s, g("client").recovery_s);
    set(&mut early, &[("early.duration_s", "60")]);
    assert!(
        run(&early, 1).groups[2].recovery_s.is_some(),
        "arriving after the window it is measured"
    );
}

/// `client` at `a` per second through `front` to `db`; `batch` at `b` per
/// second calling `db` directly (`batch.calls`). `db` is one slot of
/// exponential service of mean `1 / mu`; no retries, timeouts far beyond
/// any wait.
fn batch_past_the_front(a: f64, b: f64, mu: f64, duration_s: f64) -> sim_core::Scenario {
    let call =
        "attempt_timeout_s = 1e6\nmax_retries = 0\nbackoff = \"fixed\"\nbackoff_base_s = 0.0";
    let text = format!(
        r#"
name = "batch-past-the-front"
horizon_s = {horizon}
[client]
rate_per_s = {a}
duration_s = {duration_s}
[client.call]
{call}
[clients.batch]
rate_per_s = {b}
duration_s = {duration_s}
calls = "db"
[clients.batch.call]
{call}
[[tiers]]
name = "front"
slots = 1000
[tiers.call]
{call}
[[tiers]]
name = "db"
slots = 1
service = {{ dist = "exponential", mean_s = {mean} }}
"#,
        mean = 1.0 / mu,
        // Time for the last users to finish.
        horizon = duration_s + 10.0
    );
    from_toml(&text, "batch-past-the-front", &[])
}

#[test]
fn a_group_calling_a_tier_further_down_loads_it_and_not_the_tiers_above() {
    // 40 + 30 per second at one slot of 100 per second: rho = 0.7. Were the
    // batch's requests to reach db through front, or not at all, front's
    // count or db's wait would show it.
    let (a, b, mu, duration_s) = (40.0, 30.0, 100.0, 4000.0);
    let s = batch_past_the_front(a, b, mu, duration_s);
    let (lambda, mut waits) = (a + b, Vec::new());
    for seed in 1..=3 {
        let r = run(&s, seed);
        let (front, db) = (&r.tiers[0], &r.tiers[1]);
        let (client, batch) = (&r.groups[0], &r.groups[1]);
        assert_eq!(
            front.arrivals, client.users,
            "front serves the client alone"
        );
        assert_eq!(db.arrivals, client.users + batch.users, "db serves both");
        assert_eq!(r.users_ok, client.users + batch.users, "nobody fails");
        let z = (batch.users as f64 - b * duration_s) / (b * duration_s).sqrt();
        assert!(z.abs() < 4.0, "batch users {} (z = {z:.2})", batch.users);
        waits.push(db.wait_s / db.started as f64);
    }
    // M/M/1 with the summed rate: Wq = rho / (mu - lambda).
    let theory = lambda / mu / (mu - lambda);
    let mean = waits.iter().sum::<f64>() / waits.len() as f64;
    println!("db's mean wait {mean:.5} s, M/M/1 {theory:.5} s ({waits:?})");
    assert!((mean / theory - 1.0).abs() < 0.05, "{mean} vs {theory}");
}

#[test]
fn a_group_calls_a_tier_that_exists_and_the_first_tier_stays_called() {
    let mut s = batch_past_the_front(40.0, 30.0, 100.0, 10.0);
    s.clients.get_mut("batch").expect("batch").calls = Some("dbx".into());
    assert_eq!(
        problems(&s),
        ["batch.calls: no tier is named `dbx` (tiers: front, db)"]
    );
    let mut s = batch_past_the_front(40.0, 30.0, 100.0, 10.0);
    s.client.calls = Some("db".into());
    assert_eq!(
        problems(&s),
        [
            "front.call: nothing calls the first tier: every client group names another in `calls`; let one call it (`calls` unset)"
        ]
    );
    // Through the parameter path, like any other group parameter.
    let mut s = batch_past_the_front(40.0, 30.0, 100.0, 10.0);
    set(&mut s, &[("batch.calls", "front")]);
    assert_eq!(s.clients["batch"].calls.as_deref(), Some("front"));
    assert!(problems(&s).is_empty());
}

#[test]
fn each_group_reports_its_own_classes_and_tenants() {
    // Two groups name the class `gold` (one class of the tiers, counted in
    // each group apart); the batch has a class of its own and 4 tenants.
    let mut s = two_open(40.0, 20.0, 2, 50.0, 30.0);
    with_classes(&mut s, &[("gold", 1.0), ("silver", 3.0)]);
    let mut batch = s.clients["batch"].clone();
    batch.classes = vec![
        sim_core::scenario::RequestClass {
            name: "gold".into(),
            share: 1.0,
        },
        sim_core::scenario::RequestClass {
            name: "bulk".into(),
            share: 1.0,
        },
    ];
    batch.tenants = 4;
    s.clients.insert("batch".into(), batch);
    valid(&s);
    let r = run(&s, 1);
    let n = |name: &str| count(&r, name);
    // Each group's classes add up to its users; each class's groups to it.
    assert_eq!(
        n("group_client_class_gold_users") + n("group_client_class_silver_users"),
        n("group_client_users")
    );
    assert_eq!(
        n("group_batch_class_gold_users") + n("group_batch_class_bulk_users"),
        n("group_batch_users")
    );
    assert_eq!(
        n("group_client_class_gold_users") + n("group_batch_class_gold_users"),
        n("class_gold_users")
    );
    assert_eq!(
        n("group_client_class_silver_users"),
        n("class_silver_users")
    );
    assert_eq!(n("group_batch_class_bulk_users"), n("class_bulk_users"));
    assert!(n("group_batch_class_gold_users") > 0 && n("group_client_class_gold_users") > 0);
    assert_eq!(r.metric("group_batch_class_silver_users"), None);
    // Only the batch has tenants: its two columns are the run's.
    assert_eq!(
        n("group_batch_tenant_top_users") + n("group_batch_tenant_rest_users"),
        n("group_batch_users")
    );
    assert_eq!(n("group_batch_tenant_top_users"), n("tenant_top_users"));
    assert_eq!(
        r.metric("group_batch_tenant_top_success_rate"),
        r.metric("tenant_top_success_rate")
    );
    assert_eq!(r.metric("group_client_tenant_top_users"), None);
    let ok = r.groups[1].classes.iter().map(|c| c.users_ok).sum::<u64>();
    assert_eq!(ok, r.groups[1].users_ok);
    // The schema knows the columns before the run.
    let names = |ms: Vec<sim_core::result::Metric>| -> Vec<String> {
        ms.into_iter().map(|x| x.name).collect()
    };
    assert_eq!(
        names(sim_core::result::metric_schema(&s)),
        names(r.metrics())
    );
}
