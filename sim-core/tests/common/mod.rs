//! Helpers shared by the integration tests.
#![allow(dead_code)]

use sim_core::{RunResult, Scenario, Value};

pub fn v(text: &str) -> toml::Value {
    sim_core::parse_value(text)
}

/// Sets `path = value` overrides (values in command-line syntax).
pub fn set(s: &mut Scenario, sets: &[(&str, &str)]) {
    for (k, x) in sets {
        sim_core::params::set(s, k, &v(x)).unwrap();
    }
}

/// ch37 with a strategy, a dispatch discipline and further `path=value` overrides.
pub fn ch37(strategy: &str, dispatch: &str, sets: &[(&str, &str)]) -> Scenario {
    let mut overrides = vec![
        ("strategy".to_string(), v(strategy)),
        ("dispatch".to_string(), v(dispatch)),
    ];
    overrides.extend(sets.iter().map(|(k, x)| (k.to_string(), v(x))));
    sim_core::resolve("ch37", &overrides).expect("valid scenario")
}

pub fn run(s: &Scenario, seed: u64) -> RunResult {
    sim_core::run(s, seed).expect("run succeeds")
}

pub fn real(r: &RunResult, name: &str) -> Option<f64> {
    match r.metric(name) {
        Some(Value::Real(x)) => Some(x),
        Some(Value::MaybeReal(x)) => x,
        Some(Value::Count(c)) => Some(c as f64),
        other => panic!("{name}: {other:?}"),
    }
}

pub fn count(r: &RunResult, name: &str) -> u64 {
    match r.metric(name) {
        Some(Value::Count(c)) => c,
        other => panic!("{name}: {other:?}"),
    }
}
