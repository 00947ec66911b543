//! Built-in scenarios: `ch37`, the reference scenario of MODEL.md 2, with its
//! four strategies as presets.

use crate::scenario::{
    BackoffKind, Call, Client, Dispatch, Dist, RecoveryRule, Scenario, Service, SlowWindow, Tier,
};
use std::collections::BTreeMap;

/// Names of the built-in scenarios.
pub const BUILTIN_SCENARIOS: &[&str] = &["ch37"];

/// The four strategies of ch37, in the order the source presents them.
pub const CH37_STRATEGIES: &[&str] = &["naive", "deadline", "deadline_budget", "protected"];

/// A built-in scenario by name, with its default strategy applied.
pub fn builtin(name: &str) -> Option<Scenario> {
    match name {
        "ch37" => Some(ch37()),
        _ => None,
    }
}

fn server_call(timeout_s: f64, max_retries: u32) -> Call {
    Call::new(timeout_s, max_retries, BackoffKind::FullJitter, 0.025)
}

fn forwarder(name: &str, slots: u32, call: Call) -> Tier {
    Tier {
        call: Some(call),
        ..Tier::new(name, slots)
    }
}

/// client -> gateway -> svc_a -> svc_b; svc_b slow (x10) from 10 s to 30 s.
/// The tier values are those of `naive`; the presets set the others.
pub fn ch37() -> Scenario {
    let client_call = Call::new(1.0, 2, BackoffKind::Fixed, 0.05);
    let svc_b = Tier {
        service: Service {
            dist: Dist::Exponential,
            mean_s: 0.020,
            ..Service::default()
        },
        slow: vec![SlowWindow {
            start_s: 10.0,
            duration_s: 20.0,
            factor: 10.0,
            replicas: Vec::new(),
        }],
        ..Tier::new("svc_b", 16)
    };
    Scenario {
        name: "ch37".to_string(),
        strategy: "naive".to_string(),
        dispatch: Dispatch::Fifo,
        horizon_s: 70.0,
        series_bin_s: 1.0,
        max_events: None,
        recovery: RecoveryRule::default(),
        client: Client {
            rate_per_s: 400.0,
            arrivals: Default::default(),
            duration_s: 60.0,
            deadline_s: 0.0,
            closed: Default::default(),
            profile: Vec::new(),
            profile_csv: None,
            sinusoid: Default::default(),
            classes: Vec::new(),
            tenants: 0,
            tenant_zipf_s: 1.0,
            spike: Vec::new(),
            queue: Default::default(),
            calls: None,
            call: client_call,
        },
        clients: Default::default(),
        tiers: vec![
            forwarder("gateway", 512, server_call(1.0, 3)),
            forwarder("svc_a", 128, server_call(1.0, 3)),
            svc_b,
        ],
        presets: ch37_presets(),
    }
}

/// Each preset sets every parameter any preset touches, so that applying one
/// after another gives the same result as applying it alone.
fn ch37_presets() -> BTreeMap<String, BTreeMap<String, toml::Value>> {
    use toml::Value::{Boolean as B, Float as F, Integer as I, String as S};
    let unbounded = || S("unbounded".to_string());
    let common = |deadline: bool, budget: bool, protected: bool| {
        let mut p = BTreeMap::new();
        let mut set = |k: &str, v: toml::Value| {
            p.insert(k.to_string(), v);
        };
        set("client.propagate_deadline", B(deadline));
        set("gateway.propagate_deadline", B(deadline));
        set("svc_a.propagate_deadline", B(deadline));
        set("gateway.attempt_timeout_s", F(1.0));
        set(
            "svc_a.attempt_timeout_s",
            F(if deadline { 0.3 } else { 1.0 }),
        );
        set("gateway.max_retries", I(if budget { 0 } else { 3 }));
        set("svc_a.max_retries", I(if budget { 2 } else { 3 }));
        set("svc_a.retry_throttle", B(budget));
        for tier in ["gateway", "svc_a", "svc_b"] {
            set(&format!("{tier}.drop_expired"), B(deadline));
        }
        set(
            "svc_a.queue_cap",
            if protected { I(64) } else { unbounded() },
        );
        set(
            "svc_b.queue_cap",
            if protected { I(16) } else { unbounded() },
        );
        p
    };
    let mut presets = BTreeMap::new();
    presets.insert("naive".to_string(), common(false, false, false));
    presets.insert("deadline".to_string(), common(true, false, false));
    presets.insert("deadline_budget".to_string(), common(true, true, false));
    presets.insert("protected".to_string(), common(true, true, true));
    presets
}
