//! Tenant keys and per-key rate limits: users' tenants follow the Zipf
//! law, a per-tenant limit sheds the big tenant and never a tenant within
//! its limit, one global limit sheds every tenant alike, and the tenants'
//! counts add up to the users'.

mod common;
use sim_core::result::TenantStats;
use sim_core::{ConfigError, RunResult};

fn run(sets: &[(&str, &str)]) -> RunResult {
    let s = common::scenario("tenants.toml", sets);
    common::run(&s, 1)
}

fn success(t: &TenantStats) -> f64 {
    t.users_ok as f64 / t.users as f64
}

#[test]
fn tenants_are_drawn_by_the_zipf_law() {
    for zipf_s in ["0", "1", "1.5"] {
        let r = run(&[
            ("client.tenants", "6"),
            ("client.tenant_zipf_s", zipf_s),
            ("api.rate_limit_per_s", "0"),
        ]);
        let s: f64 = zipf_s.parse().unwrap();
        let h: f64 = (1..=6).map(|k| 1.0 / (k as f64).powf(s)).sum();
        assert_eq!(r.tenants.len(), 6);
        for t in &r.tenants {
            let p = 1.0 / ((t.rank + 1) as f64).powf(s) / h;
            let want = r.users as f64 * p;
            // Four binomial standard deviations.
            let sd = (want * (1.0 - p)).sqrt();
            assert!(
                (t.users as f64 - want).abs() < 4.0 * sd,
                "s = {s}, rank {}: {} users, expected {want:.0} +- {sd:.0}",
                t.rank,
                t.users
            );
        }
    }
}

#[test]
fn a_per_tenant_limit_sheds_the_big_tenant_and_never_one_within_its_limit() {
    // Each tenant's bucket holds 50 and refills at 2/s: a tenant with at
    // most 50 users in the whole run never finds it empty.
    let r = run(&[
        ("client.tenants", "50"),
        ("client.tenant_zipf_s", "1.2"),
        ("api.rate_limit_key", "tenant"),
        ("api.rate_limit_per_s", "2"),
        ("api.rate_limit_burst", "50"),
    ]);
    let within: Vec<&TenantStats> = r.tenants.iter().filter(|t| t.users <= 50).collect();
    assert!(
        within.len() >= 20,
        "{} tenants within the limit",
        within.len()
    );
    for t in &within {
        assert_eq!(t.users_ok, t.users, "tenant of rank {} was shed", t.rank);
    }
    let top = &r.tenants[0];
    // Its bucket passes at most 50 + 2 x 30 of its 1,000-odd users.
    assert!(top.users > 1_000 && top.users_ok <= 110, "{top:?}");
    assert_eq!(
        r.tiers[0].rate_limited,
        r.users - r.users_ok,
        "every failure is the limiter's"
    );

    // One limit for all at about the same admitted total sheds the small
    // tenants as well.
    let global = run(&[
        ("client.tenants", "50"),
        ("client.tenant_zipf_s", "1.2"),
        ("api.rate_limit_per_s", "60"),
        ("api.rate_limit_burst", "50"),
    ]);
    let shed_small = (global.tenants.iter())
        .filter(|t| t.users <= 50 && t.users_ok < t.users)
        .count();
    assert!(shed_small >= 10, "{shed_small} small tenants shed");
}

#[test]
fn a_global_limit_sheds_every_tenant_in_proportion() {
    let r = run(&[("client.tenants", "5"), ("client.tenant_zipf_s", "1.5")]);
    // 150/s of 200/s pass: every tenant keeps about three quarters.
    let overall = r.users_ok as f64 / r.users as f64;
    assert!((0.70..0.80).contains(&overall), "{overall}");
    for t in &r.tenants {
        let sd = (overall * (1.0 - overall) / t.users as f64).sqrt();
        assert!(
            (success(t) - overall).abs() < 4.0 * sd,
            "rank {}: {:.3} against {overall:.3} +- {sd:.3}",
            t.rank,
            success(t)
        );
    }
    let m = |name: &str| r.metric(name).expect(name);
    use sim_core::Value::{Count, MaybeReal};
    assert_eq!(m("tenant_top_users"), Count(r.tenants[0].users));
    assert_eq!(
        m("tenant_top_success_rate"),
        MaybeReal(Some(success(&r.tenants[0])))
    );
    let rest: u64 = r.tenants[1..].iter().map(|t| t.users).sum();
    assert_eq!(m("tenant_rest_users"), Count(rest));
}

#[test]
fn tenants_count_every_user_once_and_other_groups_apart() {
    let mut s = common::load("tenants.toml");
    s.clients.insert("batch".to_string(), s.client.clone());
    common::set(
        &mut s,
        &[
            ("batch.tenants", "0"),
            ("batch.rate_per_s", "50"),
            ("api.rate_limit_key", "tenant"),
            ("api.rate_limit_per_s", "20"),
        ],
    );
    common::valid(&s);
    let r = sim_core::run(&s, 2).expect("a run");
    let client = &r.groups[0];
    assert_eq!(client.name, "client");
    let sum = |f: fn(&TenantStats) -> u64| r.tenants.iter().map(f).sum::<u64>();
    assert_eq!(r.tenants.len(), 20, "batch has no tenants");
    assert_eq!(sum(|t| t.users), client.users);
    assert_eq!(sum(|t| t.users_ok), client.users_ok);
    // batch is one key of its own: 20/s of its 50/s pass, whatever the
    // client's tenants do.
    let batch = &r.groups[1];
    let pass = batch.users_ok as f64 / batch.users as f64;
    assert!((0.37..0.45).contains(&pass), "{pass}");
}

#[test]
fn the_tenant_parameters_are_refused_where_they_cannot_act() {
    let errors = |sets: &[(&str, &str)]| -> Vec<String> {
        match sim_core::apply_validated(common::load("tenants.toml"), &common::overrides(sets)) {
            Ok(_) => vec![],
            Err(e) => e.iter().map(ConfigError::to_string).collect(),
        }
    };
    assert_eq!(
        errors(&[("client.tenants", "1"), ("client.tenant_zipf_s", "2")]),
        [
            "client.tenant_zipf_s: 2.0 has no effect: tenant_zipf_s is the shape of the tenants' shares, and client.tenants is 1 (one key); set client.tenants > 1, or leave tenant_zipf_s at its default (1.0)"
        ]
    );
    assert_eq!(
        errors(&[("client.tenants", "0"), ("api.rate_limit_key", "tenant")]),
        [
            "api.rate_limit_key: no user carries a tenant key: set `client.tenants` (or a group's) > 1"
        ]
    );
    assert_eq!(
        errors(&[
            ("api.rate_limit_key", "tenant"),
            ("api.rate_limit_per_s", "0"),
            ("api.rate_limit_kind", "leaky_bucket"),
        ]),
        [
            "api.rate_limit_key: a per-tenant rate limit needs `rate_limit_per_s` > 0 at this tier",
            "api.rate_limit_key: a leaky bucket is one queue in front of the tier, not one per tenant: use token_bucket, fixed_window or sliding_window",
            "api.rate_limit_kind: \"leaky_bucket\" has no effect: rate_limit_kind is a setting of the rate limit, and api.rate_limit_per_s is 0 (no rate limit); set api.rate_limit_per_s > 0, or leave rate_limit_kind at its default (\"token_bucket\")",
        ]
    );
    assert_eq!(
        errors(&[
            ("api.replicas", "2"),
            ("api.rate_limit_key", "tenant"),
            ("api.rate_limit_scope", "service"),
        ]),
        [
            "api.rate_limit_key: per-tenant limiters shared by the replicas (`rate_limit_scope = \"service\"`) are not modelled: each replica keeps its own per tenant"
        ]
    );
    assert_eq!(
        errors(&[("client.tenants", "100001")]),
        ["client.tenants: must be at most 100000"]
    );
}
