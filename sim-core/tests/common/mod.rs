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

/// Every ch37 preset (FIFO) and every file of grids/scenarios, as loaded,
/// each with its name: the bases of the tests that draw settings over all.
pub fn shipped_scenarios() -> Vec<(String, Scenario)> {
    let mut bases: Vec<(String, Scenario)> = (sim_core::CH37_STRATEGIES.iter())
        .map(|p| (format!("ch37/{p}"), ch37(p, "fifo", &[])))
        .collect();
    let dir = format!("{}/../grids/scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the scenarios directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|f| f.ends_with(".toml"))
        .collect();
    files.sort();
    bases.extend(files.into_iter().map(|f| (f.clone(), load(&f))));
    bases
}

/// [`load`]`(base)` with the overrides `sets` applied, validated as the
/// command line does (a key idle only because an override turned its
/// mechanism off is the base's, not refused).
pub fn scenario(base: &str, sets: &[(&str, &str)]) -> Scenario {
    applied(load(base), sets)
}

/// A scenario written in TOML (`name` is its file name in errors) with the
/// overrides `sets` applied, validated as [`scenario`].
pub fn from_toml(text: &str, name: &str, sets: &[(&str, &str)]) -> Scenario {
    applied(
        Scenario::from_toml(text, name).unwrap_or_else(|e| panic!("{}", e.join("\n"))),
        sets,
    )
}

fn applied(base: Scenario, sets: &[(&str, &str)]) -> Scenario {
    let name = base.name.clone();
    let valid = sim_core::apply_validated(base, &overrides(sets)).unwrap_or_else(|errors| {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        panic!("{name} with {sets:?}: invalid: {}", errors.join("; "))
    });
    Scenario::clone(&valid)
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

/// Runs `s` as a grid point ([`sim_core::ValidScenario::point`]): a
/// scenario of [`scenario`] was checked against its base already, and a key
/// it inherits idle from the base file is not refused again.
pub fn run(s: &Scenario, seed: u64) -> RunResult {
    let valid = sim_core::ValidScenario::point(s.clone(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    sim_core::run_validated(&valid, seed, &mut sim_core::Scratch::default()).expect("run succeeds")
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

/// [`run`] with the steps of user request `user` ([`sim_core::trace`]).
pub fn trace(s: &Scenario, seed: u64, user: u32) -> (RunResult, Vec<sim_core::TraceStep>) {
    let valid = sim_core::ValidScenario::point(s.clone(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    sim_core::trace(&valid, seed, user).expect("run succeeds")
}
