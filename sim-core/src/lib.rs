//! `sim-core`: a deterministic discrete-event simulation of a call chain
//! (client -> gateway -> svc_a -> svc_b, and chains like it) under a slow
//! downstream. The model is specified in MODEL.md; this crate's one job is
//! [`run`]: a pure function of a [`Scenario`] and a seed.
//!
//! No I/O, no global state, no threads, no wall clock: the same scenario and
//! seed give a bit-identical [`RunResult`] on any machine.

mod builtin;
mod caller;
mod engine;
mod event_queue;
mod job;
mod model;
pub mod params;
pub mod policy;
pub mod random;
pub mod result;
pub mod scenario;
mod server;
pub mod time;
pub mod trace;
mod validate;

pub use builtin::{BUILTIN_SCENARIOS, CH37_STRATEGIES, builtin, ch37};
pub use engine::RunError;
pub use params::{ConfigError, apply_all, parse_value};
pub use result::{Metric, RunResult, Value};
pub use scenario::Scenario;
pub use trace::TraceStep;
pub use validate::validate;

/// Runs one simulation. Validates first: an invalid scenario returns every
/// problem at once; a run that exceeds its event budget returns an error
/// instead of running on.
pub fn run(scenario: &Scenario, seed: u64) -> Result<RunResult, RunError> {
    validate(scenario).map_err(RunError::Invalid)?;
    let model = model::Model::new(scenario);
    engine::simulate(&model, seed, None).map(|(r, _)| r)
}

/// Runs one simulation like [`run`] and also records every step taken on
/// behalf of user request number `user` (0 is the first to arrive). The
/// result is the same as [`run`]'s: tracing draws nothing.
pub fn trace(
    scenario: &Scenario,
    seed: u64,
    user: u32,
) -> Result<(RunResult, Vec<TraceStep>), RunError> {
    validate(scenario).map_err(RunError::Invalid)?;
    let model = model::Model::new(scenario);
    engine::simulate(&model, seed, Some(user))
}

/// A built-in scenario (by name) or a scenario file (by path), with
/// `overrides` applied (`strategy` first) and validated.
pub fn resolve(
    base: &str,
    overrides: &[(String, toml::Value)],
) -> Result<Scenario, Vec<ConfigError>> {
    let mut scenario = load_base(base)?;
    apply_all(&mut scenario, overrides)?;
    validate(&scenario)?;
    Ok(scenario)
}

/// A built-in scenario by name, or else a TOML file by path.
pub fn load_base(base: &str) -> Result<Scenario, Vec<ConfigError>> {
    if let Some(s) = builtin(base) {
        return Ok(s);
    }
    let fail = |m: String| vec![ConfigError::new("scenario", m)];
    let text = std::fs::read_to_string(base).map_err(|e| {
        fail(format!(
            "`{base}` is neither a built-in scenario ({}) nor a readable file: {e}",
            BUILTIN_SCENARIOS.join(", ")
        ))
    })?;
    let mut scenario = Scenario::from_toml(&text, base).map_err(fail)?;
    let dir = std::path::Path::new(base).parent().unwrap_or(".".as_ref());
    read_profile_csv(&mut scenario, dir)?;
    Ok(scenario)
}

/// Reads `client.profile_csv`, relative to `dir` (the scenario file's), into
/// `client.profile`, so that the scenario no longer names a file: runs
/// read none, and the points show in the resolved scenario.
pub fn read_profile_csv(
    scenario: &mut Scenario,
    dir: &std::path::Path,
) -> Result<(), Vec<ConfigError>> {
    let Some(file) = scenario.client.profile_csv.take() else {
        return Ok(());
    };
    let fail = |m: String| vec![ConfigError::new("client.profile_csv", m)];
    if !scenario.client.profile.is_empty() {
        return Err(fail(
            "give the load profile either as [[client.profile]] points or as a CSV file, not both"
                .into(),
        ));
    }
    let path = dir.join(&file);
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(&path).map_err(|e| fail(format!("cannot read `{shown}`: {e}")))?;
    scenario.client.profile = scenario::profile_from_csv(&text, &shown).map_err(fail)?;
    Ok(())
}
