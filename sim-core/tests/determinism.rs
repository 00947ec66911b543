//! The same scenario and seed give bit-identical results, whatever thread
//! runs them; and the results are pinned, so a change in any draw, order or
//! count is noticed on every machine.
//!
//! # Pins
//!
//! `tests/pins/ch37.txt` (ch37 at seed 1, both dispatch disciplines, every
//! strategy) and `tests/pins/policies.txt` (the shipped scenarios of fan-out,
//! request classes, cancellation and hedging) are snapshots of the results,
//! one value a line, `<scenario> <name> = <value>`:
//!
//! - every metric of [`sim_core::RunResult::metrics`], e.g.
//!   `fifo/naive users_ok = 4143`; reals are written with `{:?}`, the
//!   shortest text that reads back to the same bits, so the pin checks
//!   bit-identity; an undefined value is `none`;
//! - every per-second series in full, `series.<name>` for the users' and
//!   `series.<tier>.<name>` for a tier's, one number a second.
//!
//! Which metrics are pinned: every one the snapshot lists, that is, all that
//! the code reported when the snapshot was written. A metric added since is
//! not in the snapshot and does not move the pin (a regeneration adds it); a
//! pinned metric the code no longer reports fails, as does a scenario that
//! has no pin.
//!
//! A failure lists every value that moved, with the scenario, the name and
//! both values: `fifo/naive users_ok: pinned 4143, now 4150`.
//!
//! If a change to the model is intended, rewrite the snapshots with
//!
//! ```text
//! UPDATE_PINS=1 cargo test -p sim-core --test determinism
//! ```
//!
//! and commit them with the change, saying in its message why they moved;
//! otherwise a moved pin is a determinism or regression bug.

mod common;
use common::*;
use sim_core::RunResult;
use sim_core::result::{GroupSeries, LatencyHistogram, Series, TierSeries};
use std::collections::HashMap;

#[test]
fn same_seed_same_result_different_seed_different_result() {
    let s = ch37("deadline_budget", "fifo", &[]);
    let a = run(&s, 7);
    let b = run(&s, 7);
    assert_eq!(a, b);
    assert_eq!(format!("{:?}", a.metrics()), format!("{:?}", b.metrics()));
    let c = run(&s, 8);
    assert_ne!(a.events, c.events);
    assert_ne!(a.series.user_arrivals, c.series.user_arrivals);
}

#[test]
fn threads_do_not_change_results() {
    let scenarios: Vec<_> = sim_core::CH37_STRATEGIES
        .iter()
        .map(|p| ch37(p, "reply_first", &[]))
        .collect();
    let serial: Vec<_> = scenarios.iter().map(|s| run(s, 3)).collect();
    let parallel: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = scenarios
            .iter()
            .map(|s| scope.spawn(move || run(s, 3)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(serial, parallel);
}

/// One worker's memory, passed from run to run (different presets and
/// topologies, more lanes then fewer, a run stopped by its event budget
/// halfway), changes no result.
#[test]
fn memory_kept_from_earlier_runs_changes_no_result() {
    let mut scenarios: Vec<_> = (sim_core::CH37_STRATEGIES.iter())
        .map(|p| ch37(p, "fifo", &[]))
        .collect();
    scenarios.insert(1, scenario("fan-out.toml", &[]));
    scenarios.insert(
        3,
        scenario("three-hop.toml", &[("client.cancel", "always")]),
    );
    let mut scratch = sim_core::Scratch::default();
    for s in &scenarios {
        for seed in [1, 2] {
            let kept = sim_core::run_in(s, seed, &mut scratch).expect("runs");
            assert_eq!(kept, run(s, seed), "{} seed {seed}", s.name);
        }
        let stopped = ch37("naive", "fifo", &[("max_events", "50000")]);
        assert!(sim_core::run_in(&stopped, 1, &mut scratch).is_err());
    }
}

#[test]
fn common_random_numbers_give_every_strategy_the_same_arrivals() {
    let arrivals: Vec<Vec<u64>> = sim_core::CH37_STRATEGIES
        .iter()
        .map(|p| run(&ch37(p, "fifo", &[]), 2).series.user_arrivals)
        .collect();
    assert!(arrivals.windows(2).all(|w| w[0] == w[1]));
}

/// One run's pinned values, `(name, value)` in the order of the report.
fn snapshot(r: &RunResult) -> Vec<(String, String)> {
    use sim_core::Value::{Count, Flag, MaybeFlag, MaybeReal, Real};
    let mut out: Vec<(String, String)> = r
        .metrics()
        .into_iter()
        .map(|m| {
            let value = match m.value {
                Count(c) => c.to_string(),
                Real(x) | MaybeReal(Some(x)) => format!("{x:?}"),
                MaybeReal(None) => "none".to_string(),
                Flag(b) | MaybeFlag(Some(b)) => b.to_string(),
                MaybeFlag(None) => "none".to_string(),
            };
            (m.name, value)
        })
        .collect();
    // Taken apart field by field, so that a new series fails to compile
    // here until it is pinned too.
    let Series {
        user_arrivals,
        user_ok_by_arrival,
        successes,
        failures,
        tiers,
        groups,
    } = &r.series;
    let mut series = |name: String, xs: Vec<String>| {
        out.push((format!("series.{name}"), xs.join(" ")));
    };
    let counts = |xs: &[u64]| xs.iter().map(u64::to_string).collect::<Vec<_>>();
    series("user_arrivals".into(), counts(user_arrivals));
    series("user_ok_by_arrival".into(), counts(user_ok_by_arrival));
    series("successes".into(), counts(successes));
    series("failures".into(), counts(failures));
    for g in groups {
        let GroupSeries {
            name,
            user_arrivals,
            user_ok_by_arrival,
            backlog,
        } = g;
        series(format!("group.{name}.user_arrivals"), counts(user_arrivals));
        series(
            format!("group.{name}.user_ok_by_arrival"),
            counts(user_ok_by_arrival),
        );
        // Only a group with a message queue has one (the pinned scenarios have none).
        if backlog.iter().any(|&b| b > 0) {
            series(format!("group.{name}.backlog"), counts(backlog));
        }
    }
    for t in tiers {
        let TierSeries {
            name,
            arrivals,
            retries,
            // A split of `retries` (conservation.rs checks that it adds
            // up), newer than the pins.
            retries_from: _,
            hedges: _,
            arrivals_by_bin: _,
            retries_by_bin: _,
            after_user_left,
            admitted,
            completed,
            late,
            queue_len,
            busy,
            limit,
            capacity_per_s,
            cache_hits,
            cache_misses,
            replicas,
        } = t;
        series(format!("{name}.arrivals"), counts(arrivals));
        series(format!("{name}.retries"), counts(retries));
        series(format!("{name}.after_user_left"), counts(after_user_left));
        series(format!("{name}.admitted"), counts(admitted));
        series(format!("{name}.completed"), counts(completed));
        series(format!("{name}.late"), counts(late));
        series(format!("{name}.queue_len"), counts(queue_len));
        series(format!("{name}.busy"), counts(busy));
        let capacity = (capacity_per_s.iter())
            .map(|c| c.map_or("none".to_string(), |c| format!("{c:?}")))
            .collect();
        series(format!("{name}.capacity_per_s"), capacity);
        // Only a tier with a cache has these (the pinned scenarios have none).
        if cache_hits.iter().chain(cache_misses).any(|&c| c > 0) {
            series(format!("{name}.cache_hits"), counts(cache_hits));
            series(format!("{name}.cache_misses"), counts(cache_misses));
        }
        // Only a tier with an adaptive limit has it (none in the pins).
        if limit.iter().any(|&l| l > 0) {
            series(format!("{name}.limit"), counts(limit));
        }
        for (k, r) in replicas.iter().enumerate() {
            series(format!("{name}.replica{k}.queue_len"), counts(&r.queue_len));
            series(format!("{name}.replica{k}.busy"), counts(&r.busy));
        }
    }
    let LatencyHistogram { ok, failed } = &r.latency_histogram;
    series("latency_histogram.ok".into(), counts(ok));
    series("latency_histogram.failed".into(), counts(failed));
    out
}

/// How one pinned value moved: both values, and for a series the seconds
/// that differ.
fn moved(name: &str, pinned: &str, now: &str) -> String {
    if !name.starts_with("series.") {
        return format!("pinned {pinned}, now {now}");
    }
    let (p, n): (Vec<&str>, Vec<&str>) = (pinned.split(' ').collect(), now.split(' ').collect());
    let seconds: Vec<String> = (0..p.len().max(n.len()))
        .filter(|&i| p.get(i) != n.get(i))
        .map(|i| {
            let at = |xs: &[&str]| xs.get(i).map_or("nothing".to_string(), |x| x.to_string());
            format!("second {i}: pinned {}, now {}", at(&p), at(&n))
        })
        .collect();
    let mut text = seconds
        .iter()
        .take(4)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if seconds.len() > 4 {
        text += &format!("; {} seconds differ in all", seconds.len());
    }
    if p.len() != n.len() {
        text += &format!(" ({} seconds pinned, now {})", p.len(), n.len());
    }
    text
}

/// Checks the results `got` (scenario label, its values) against the
/// snapshot `tests/pins/<file>`, or with `UPDATE_PINS=1` rewrites it.
fn check_pins(file: &str, about: &str, got: &[(String, Vec<(String, String)>)]) {
    let path = format!("{}/tests/pins/{file}", env!("CARGO_MANIFEST_DIR"));
    let regenerate = "UPDATE_PINS=1 cargo test -p sim-core --test determinism";
    if std::env::var_os("UPDATE_PINS").is_some_and(|x| x == "1") {
        let mut text =
            format!("# {about}\n# Written by `{regenerate}`: see tests/determinism.rs.\n");
        for (label, values) in got {
            for (name, value) in values {
                text += &format!("{label} {name} = {value}\n");
            }
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{path}: {e}"));
        eprintln!("rewrote {path}");
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let now: HashMap<(&str, &str), &str> = got
        .iter()
        .flat_map(|(label, values)| {
            values
                .iter()
                .map(move |(name, value)| ((label.as_str(), name.as_str()), value.as_str()))
        })
        .collect();
    let mut problems = Vec::new();
    let mut pinned_labels = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let parsed = line
            .split_once(" = ")
            .and_then(|(key, value)| key.split_once(' ').map(|(l, n)| (l, n, value)));
        let Some((label, name, pinned)) = parsed else {
            problems.push(format!("unreadable line `{line}`"));
            continue;
        };
        if !pinned_labels.contains(&label) {
            pinned_labels.push(label);
        }
        match now.get(&(label, name)) {
            Some(value) if *value == pinned => {}
            Some(value) => problems.push(format!("{label} {name}: {}", moved(name, pinned, value))),
            None if got.iter().any(|(l, _)| l == label) => problems.push(format!(
                "{label} {name}: pinned {pinned}, no longer reported"
            )),
            None => {}
        }
    }
    for (label, _) in got {
        if !pinned_labels.contains(&label.as_str()) {
            problems.push(format!("{label}: no pin (a new scenario?)"));
        }
    }
    for label in pinned_labels {
        if !got.iter().any(|(l, _)| l == label) {
            problems.push(format!("{label}: pinned, but no longer run"));
        }
    }
    let shown = 40;
    let mut report = problems
        .iter()
        .take(shown)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n  ");
    if problems.len() > shown {
        report += &format!("\n  ... and {} more", problems.len() - shown);
    }
    assert!(
        problems.is_empty(),
        "{about}: {} differences from the pins in tests/pins/{file}:\n  {report}\n\
         If the model changed on purpose, rewrite the pins with `{regenerate}` \
         and say why in the commit.",
        problems.len()
    );
}

/// Pinned results of ch37 at seed 1.
#[test]
fn ch37_results_are_pinned() {
    let mut got = Vec::new();
    for dispatch in DISPATCHES {
        for p in sim_core::CH37_STRATEGIES {
            let r = run(&ch37(p, dispatch, &[]), 1);
            got.push((format!("{dispatch}/{p}"), snapshot(&r)));
        }
    }
    check_pins(
        "ch37.txt",
        "ch37 at seed 1, both dispatch disciplines, every strategy",
        &got,
    );
}

/// A pinned case: label, scenario file under grids/scenarios, overrides.
type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

/// Pinned results at seed 1 of the shipped scenarios that exercise
/// fan-out, request classes, hedging and cancellation.
#[test]
fn policy_scenarios_are_pinned() {
    let cases: [Case; 4] = [
        (
            "fan-out",
            "fan-out.toml",
            &[("page.fanout.recs.max_in_flight", "8")],
        ),
        (
            "classes",
            "ch37-classes.toml",
            &[
                ("strategy", "naive"),
                ("svc_b.slow.factor", "2.5"),
                ("svc_a.shed_queue.replay", "8"),
                ("svc_b.class_slots.replay", "4"),
            ],
        ),
        (
            "cancel-always",
            "three-hop.toml",
            &[
                ("client.propagate_deadline", "false"),
                ("a.propagate_deadline", "false"),
                ("b.propagate_deadline", "false"),
                ("client.cancel", "always"),
                ("a.cancel", "always"),
                ("b.cancel", "always"),
            ],
        ),
        (
            "hedge-gradient",
            "three-hop.toml",
            &[
                ("b.hedge_quantile", "0.9"),
                ("b.cancel", "hedge_losers"),
                ("c.adaptive_limit", "true"),
                ("c.limit_algorithm", "gradient"),
                ("c.slots", "40"),
                ("b.max_in_flight", "30"),
                ("a.breaker", "true"),
                ("a.breaker_window_s", "2"),
            ],
        ),
    ];
    let got: Vec<_> = cases
        .iter()
        .map(|(label, file, sets)| (label.to_string(), snapshot(&run(&scenario(file, sets), 1))))
        .collect();
    check_pins(
        "policies.txt",
        "fan-out, request classes, cancellation and hedging scenarios at seed 1",
        &got,
    );
}
