//! The per-second split of a tier's retries by what sent them: each
//! arrival that exists because of a retry belongs to the caller whose retry
//! is the nearest in its lineage, and hedged copies are counted apart.

mod common;
use common::{from_toml, set, valid};
use sim_core::result::TierSeries;
use sim_core::{RunResult, run};

/// client -> a -> b; b takes 0.3 s, longer than a's 0.1 s attempts, so
/// every attempt of a times out; nobody retries until `sets` says so.
fn two_hops(sets: &[(&str, &str)]) -> RunResult {
    let mut s = from_toml(
        r#"
name = "two-hops"
horizon_s = 20
[client]
rate_per_s = 20
duration_s = 10
[client.call]
attempt_timeout_s = 2.0
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
[[tiers]]
name = "a"
slots = 10000
[tiers.call]
attempt_timeout_s = 0.1
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
[[tiers]]
name = "b"
slots = 10000
service = { dist = "constant", mean_s = 0.3 }
"#,
        "two-hops.toml",
        &[],
    );
    set(&mut s, sets);
    valid(&s);
    run(&s, 1).expect("the run ends")
}

fn total(xs: &[u64]) -> u64 {
    xs.iter().sum()
}

/// The callers named in a tier's split, and each one's total.
fn split(t: &TierSeries) -> Vec<(&str, u64)> {
    (t.retries_from.iter())
        .map(|f| (f.caller.as_str(), total(&f.per_s)))
        .collect()
}

#[test]
fn without_retries_nothing_is_split() {
    let r = two_hops(&[]);
    for t in &r.series.tiers {
        assert_eq!(total(&t.retries), 0);
        assert!(t.retries_from.is_empty());
        assert_eq!(total(&t.hedges), 0);
    }
}

#[test]
fn the_leafs_retries_all_come_from_the_middle_tier_when_only_it_retries() {
    let r = two_hops(&[("a.max_retries", "2")]);
    let b = &r.series.tiers[1];
    let sent = r.callers[1].retries_sent;
    assert_eq!(sent, 2 * r.users, "every attempt of a times out");
    assert_eq!(split(b), [("a", sent)]);
    assert_eq!(total(&b.retries), sent);
    assert_eq!(total(&b.hedges), 0);
    // The tier above received only first tries.
    assert_eq!(total(&r.series.tiers[0].retries), 0);
}

#[test]
fn with_both_retrying_each_caller_has_its_share_and_they_add_up() {
    // The client gives up on an attempt after 0.25 s, while a still
    // retries: a's first tries for a client's retry are the client's.
    let r = two_hops(&[
        ("a.max_retries", "2"),
        ("client.max_retries", "1"),
        ("client.attempt_timeout_s", "0.25"),
    ]);
    let (a, b) = (&r.series.tiers[0], &r.series.tiers[1]);
    let (client_sent, a_sent) = (r.callers[0].retries_sent, r.callers[1].retries_sent);
    assert_eq!(client_sent, r.users);
    assert_eq!(split(a), [("client", client_sent)]);
    // At b: a's own retries are a's; a's first tries for the client's
    // retries are the client's (one per client retry that reached a).
    assert_eq!(split(b), [("client", client_sent), ("a", a_sent)]);
    assert_eq!(total(&b.retries), client_sent + a_sent);
    for sec in 0..b.arrivals.len() {
        let by_origin: u64 = b.retries_from.iter().map(|f| f.per_s[sec]).sum();
        assert_eq!(by_origin + b.hedges[sec], b.retries[sec], "second {sec}");
    }
}

#[test]
fn hedged_copies_are_counted_apart_from_retries() {
    // a hedges after 0.05 s and retries once; the client does not retry.
    let r = two_hops(&[
        ("a.max_retries", "1"),
        ("a.hedge_delay_s", "0.05"),
        ("a.hedge_budget_percent", "100"),
    ]);
    let b = &r.series.tiers[1];
    let (retried, hedged) = (r.callers[1].retries_sent, r.callers[1].hedges_sent);
    assert!(
        retried > 0 && hedged > 0,
        "{retried} retries, {hedged} hedges"
    );
    assert_eq!(total(&b.hedges), hedged);
    assert_eq!(split(b), [("a", retried)]);
    assert_eq!(total(&b.retries), retried + hedged);
}
