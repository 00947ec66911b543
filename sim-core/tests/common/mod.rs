//! Helpers shared by the integration tests: one way to build a scenario
//! (a built-in, a file of grids/scenarios or a TOML text, then `path =
//! value` overrides), one way to set paths, and readers of the results.
#![allow(dead_code)]

use sim_core::scenario::RequestClass;
use sim_core::{RunResult, Scenario, Value};

/// Both dispatch disciplines.
pub const DISPATCHES: [&str; 2] = ["fifo", "reply_first"];

/// A value in command-line syntax (`3`, `0.5`, `true`, `fifo`, `"unbounded"`).
pub fn v(text: &str) -> toml::Value {
    sim_core::parse_value(text)
}

/// `path = value` pairs (values in command-line syntax) as overrides.
pub fn overrides(sets: &[(&str, &str)]) -> Vec<(String, toml::Value)> {
    sets.iter().map(|(k, x)| (k.to_string(), v(x))).collect()
}

/// Sets `path = value` overrides (values in command-line syntax), `strategy`
/// first as on the command line; panics naming every path that cannot be set.
pub fn set(s: &mut Scenario, sets: &[(&str, &str)]) {
    if let Err(errors) = sim_core::apply_all(s, &overrides(sets)) {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        panic!("cannot set {sets:?}: {}", errors.join("; "));
    }
}

/// Panics with every validation problem of `s`, if it has any.
pub fn valid(s: &Scenario) {
    if let Err(errors) = sim_core::validate(s) {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        panic!("{}: invalid: {}", s.name, errors.join("; "));
    }
}

/// The path of a shipped scenario file: `grids/scenarios/<file>`.
pub fn scenario_file(file: &str) -> String {
    format!("{}/../grids/scenarios/{file}", env!("CARGO_MANIFEST_DIR"))
}

/// A built-in scenario by name (`ch37`) or a file of grids/scenarios
/// (`three-hop.toml`), as loaded: not yet validated, for tests that change
/// it further (then [`valid`]).
pub fn load(base: &str) -> Scenario {
    let path = if base.ends_with(".toml") {
        scenario_file(base)
    } else {
        base.to_string()
    };
    sim_core::load_base(&path).unwrap_or_else(|e| panic!("{base}: {e:?}"))
}

/// [`load`]`(base)` with the overrides `sets` applied, validated.
pub fn scenario(base: &str, sets: &[(&str, &str)]) -> Scenario {
    let mut s = load(base);
    set(&mut s, sets);
    valid(&s);
    s
}

/// A scenario written in TOML (`name` is its file name in errors) with the
/// overrides `sets` applied, validated.
pub fn from_toml(text: &str, name: &str, sets: &[(&str, &str)]) -> Scenario {
    let mut s = Scenario::from_toml(text, name).unwrap_or_else(|e| panic!("{e}"));
    set(&mut s, sets);
    valid(&s);
    s
}

/// ch37 with a strategy, a dispatch discipline and further `path=value` overrides.
pub fn ch37(strategy: &str, dispatch: &str, sets: &[(&str, &str)]) -> Scenario {
    let mut all = vec![("strategy", strategy), ("dispatch", dispatch)];
    all.extend_from_slice(sets);
    scenario("ch37", &all)
}

/// Declares request classes `(name, share)`, in priority order.
pub fn with_classes(s: &mut Scenario, classes: &[(&str, f64)]) {
    s.client.classes = classes
        .iter()
        .map(|(name, share)| RequestClass {
            name: name.to_string(),
            share: *share,
        })
        .collect();
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
