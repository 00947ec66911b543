//! `sim-core`: a deterministic discrete-event simulation of a call chain
//! (client -> gateway -> svc_a -> svc_b, and chains like it) under a slow
//! downstream. The model is specified in MODEL.md; this crate's one job is
//! [`run`]: a pure function of a [`Scenario`] and a seed.
//!
//! No I/O, no global state, no threads, no wall clock: the same scenario and
//! seed give a bit-identical [`RunResult`] on any machine.

mod backlog;
mod builtin;
mod cache;
mod caller;
mod engine;
mod event_queue;
mod gc;
mod job;
mod model;
pub mod params;
pub mod policy;
pub mod random;
pub mod result;
pub mod scenario;
mod server;
mod tenant;
pub mod time;
pub mod trace;
mod validate;

pub use builtin::{BUILTIN_SCENARIOS, CH37_STRATEGIES, builtin, ch37};
pub use engine::{RunError, Scratch};
pub use model::expected_users;
pub use params::{ConfigError, apply_all, parse_value};
pub use result::{Metric, RunResult, Value};
pub use scenario::Scenario;
pub use trace::TraceStep;
pub use validate::{inert_overrides, inert_settings, overrides_write, validate, validate_settings};

/// Runs one simulation. Validates first: an invalid scenario returns every
/// problem at once; a run that exceeds its event budget returns an error
/// instead of running on.
pub fn run(scenario: &Scenario, seed: u64) -> Result<RunResult, RunError> {
    run_in(scenario, seed, &mut Scratch::default())
}

/// Runs one simulation like [`run`], in the memory of earlier runs: a
/// worker that runs many keeps one [`Scratch`] and passes it to each. The
/// result is the same as [`run`]'s.
pub fn run_in(
    scenario: &Scenario,
    seed: u64,
    scratch: &mut Scratch,
) -> Result<RunResult, RunError> {
    validate(scenario).map_err(RunError::Invalid)?;
    simulate(scenario, seed, scratch)
}

/// Runs one simulation like [`run_in`], of a scenario validated before:
/// for a caller that runs one scenario many times (a sweep's seeds of one
/// point), or has validated it already to report its errors. Validation is
/// about 8% of the instructions of a short run (ch37 with a 5 s horizon),
/// so each run should pay it at most once; the type says it was paid.
pub fn run_validated(
    scenario: &ValidScenario,
    seed: u64,
    scratch: &mut Scratch,
) -> Result<RunResult, RunError> {
    simulate(&scenario.0, seed, scratch)
}

fn simulate(scenario: &Scenario, seed: u64, scratch: &mut Scratch) -> Result<RunResult, RunError> {
    let model = model::Model::new(scenario);
    engine::simulate(&model, seed, None, scratch).map(|(r, _)| r)
}

/// A scenario that [`validate`] accepted (or, as a grid's point,
/// [`validate_settings`]; as a base with overrides, [`apply_validated`]).
/// Only these make one, and it gives read access only, so
/// that [`run_validated`] can trust it without validating again.
#[derive(Clone, Debug)]
pub struct ValidScenario(Scenario);

impl ValidScenario {
    /// Validates `scenario`: every problem at once, as [`validate`] reports
    /// them.
    pub fn new(scenario: Scenario) -> Result<ValidScenario, Vec<ConfigError>> {
        validate(&scenario)?;
        Ok(ValidScenario(scenario))
    }

    /// Validates `scenario` (a base with a grid point's `overrides`
    /// applied) as a point of a grid ([`validate_settings`], the values
    /// told as [`with_values`] tells them): a key that cannot act at this
    /// point is the grid's to refuse, when it acts at none of its points.
    pub fn point(
        scenario: Scenario,
        overrides: &[(String, toml::Value)],
    ) -> Result<ValidScenario, Vec<ConfigError>> {
        match validate_settings(&scenario) {
            Ok(()) => Ok(ValidScenario(scenario)),
            Err(errors) => Err(with_values(&scenario, overrides, errors)),
        }
    }
}

impl std::ops::Deref for ValidScenario {
    type Target = Scenario;

    fn deref(&self) -> &Scenario {
        &self.0
    }
}

/// Runs one simulation like [`run_validated`] and also records every step
/// taken on behalf of user request number `user` (0 is the first to
/// arrive). The result is the same as [`run`]'s: tracing draws nothing.
pub fn trace(
    scenario: &ValidScenario,
    seed: u64,
    user: u32,
) -> Result<(RunResult, Vec<TraceStep>), RunError> {
    let model = model::Model::new(scenario);
    engine::simulate(&model, seed, Some(user), &mut Scratch::default())
}

/// A built-in scenario (by name) or a scenario file (by path), with
/// `overrides` applied (`strategy` first) and validated
/// ([`apply_validated`]).
pub fn resolve(
    base: &str,
    overrides: &[(String, toml::Value)],
) -> Result<ValidScenario, Vec<ConfigError>> {
    apply_validated(load_base(base)?, overrides)
}

/// `base` with `overrides` applied (`strategy` first), validated: every
/// problem at once, a key that cannot act among them when the overrides
/// write it or it cannot act in `base` already ([`inert_overrides`]).
pub fn apply_validated(
    base: Scenario,
    overrides: &[(String, toml::Value)],
) -> Result<ValidScenario, Vec<ConfigError>> {
    let idle_in_base: Vec<String> = inert_settings(&base).into_iter().map(|e| e.path).collect();
    let mut scenario = base;
    // The overrides that apply are applied whatever the others, so that
    // the values' ranges and the rules between fields are checked too; a
    // key may then be idle only for want of a refused value, so an idle
    // key whose reason names a refused path is not told.
    let mut errors = apply_all(&mut scenario, overrides)
        .err()
        .unwrap_or_default();
    let refused_paths: Vec<String> = (errors.iter())
        .map(|e| params::canonical(&e.path))
        .collect();
    // `inf` and `nan` are out of any bounds for another reason than the
    // one validation gives. Only such a value is looked up: the lookup
    // serializes the scenario, a cost per override and grid point.
    let not_finite = |v: &toml::Value| match v {
        toml::Value::Float(x) => !x.is_finite(),
        toml::Value::Array(entries) => {
            (entries.iter()).any(|e| e.as_float().is_some_and(|x| !x.is_finite()))
        }
        _ => false,
    };
    for (path, value) in overrides.iter().filter(|(_, value)| not_finite(value)) {
        if let Some(outside) = params::out_of_bounds(&scenario, path, value)
            && !outside.finite
            // Refused already for its type (`max_retries = inf`): once.
            && !errors.iter().any(|e| e.path == *path)
        {
            errors.push(ConfigError::new(path.as_str(), outside.to_string()));
        }
    }
    // A value refused above is not told again for its range.
    let refused = errors.len();
    let invalid = validate_settings(&scenario).err().unwrap_or_default();
    for e in with_values(&scenario, overrides, invalid) {
        let path = params::canonical(&e.path);
        if !(errors[..refused].iter()).any(|seen| params::canonical(&seen.path) == path) {
            errors.push(e);
        }
    }
    for e in inert_overrides(&scenario, &idle_in_base, overrides)
        .into_iter()
        .filter(|e| !refused_paths.iter().any(|p| e.message.contains(p.as_str())))
    {
        // A value refused for its range is not told twice.
        if !errors.iter().any(|seen| seen.path == e.path) {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(ValidScenario(scenario))
    } else {
        Err(errors)
    }
}

/// `errors` of `scenario` (a base with `overrides` applied), each of a
/// value no override gives with that value: a preset's, named, or the
/// scenario file's. An override's value its caller tells, by the flag or
/// grid key that gave it.
pub fn with_values(
    scenario: &Scenario,
    overrides: &[(String, toml::Value)],
    errors: Vec<ConfigError>,
) -> Vec<ConfigError> {
    let overridden: Vec<String> = (overrides.iter())
        .map(|(p, _)| params::canonical(p))
        .collect();
    // The last preset applied that sets a path gave its value.
    let preset_of = |path: &str| {
        (overrides.iter().rev())
            .filter(|(p, _)| p == "strategy")
            .filter_map(|(_, v)| v.as_str())
            .find(|name| {
                (scenario.presets.get(*name))
                    .is_some_and(|keys| keys.keys().any(|k| params::canonical(k) == path))
            })
    };
    // Two tiers of one name (refused) share their paths: a value read by
    // path would be the first one's, whichever tier the error is of.
    let ambiguous = |path: &str| {
        let tier = path.split('.').next();
        (scenario.tiers.iter())
            .filter(|t| Some(t.name.as_str()) == tier)
            .count()
            > 1
    };
    (errors.into_iter())
        .map(|mut e| {
            let path = params::canonical(&e.path);
            if !overridden.contains(&path)
                && !ambiguous(&path)
                && let Some(value) = params::get(scenario, &e.path)
            {
                let value = value.to_string();
                if !e.message.contains(&value) {
                    e.message = match preset_of(&path) {
                        Some(name) => format!("{} (preset `{name}` sets {value})", e.message),
                        None => format!("{} (the scenario has {value})", e.message),
                    };
                }
            }
            e
        })
        .collect()
}

/// A built-in scenario by name, or else a TOML file by path.
pub fn load_base(base: &str) -> Result<Scenario, Vec<ConfigError>> {
    if let Some(s) = builtin(base) {
        return Ok(s);
    }
    let fail = |m: String| vec![ConfigError::new("scenario", m)];
    let text = read_input(base.as_ref()).map_err(|e| {
        fail(format!(
            "`{base}` is neither a built-in scenario ({}) nor a readable file: {e}",
            BUILTIN_SCENARIOS.join(", ")
        ))
    })?;
    let mut scenario = Scenario::from_toml(&text, base).map_err(|problems| {
        let scenario = |m| ConfigError::new("scenario", m);
        problems.into_iter().map(scenario).collect::<Vec<_>>()
    })?;
    let dir = std::path::Path::new(base).parent().unwrap_or(".".as_ref());
    read_profile_csv(&mut scenario, dir)?;
    Ok(scenario)
}

/// The most a grid, scenario or profile file may hold: far beyond any real
/// one, and a device that never ends (`/dev/zero`) is refused at it
/// instead of read forever.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// A text input file, at most [`MAX_INPUT_BYTES`]: pipes (`<(...)`) read
/// too, which a check for a regular file would refuse.
pub fn read_input(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_INPUT_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, so not an input file",
                MAX_INPUT_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}

/// Reads every client group's `profile_csv` (`client.profile_csv`,
/// `<group>.profile_csv`), relative to `dir` (the scenario file's), into its
/// `profile`, so that the scenario no longer names a file: runs read none,
/// and the points show in the resolved scenario.
pub fn read_profile_csv(
    scenario: &mut Scenario,
    dir: &std::path::Path,
) -> Result<(), Vec<ConfigError>> {
    let mut errors = Vec::new();
    for (g, client) in scenario.groups_mut() {
        let Some(file) = client.profile_csv.take() else {
            continue;
        };
        let path = format!("{g}.profile_csv");
        if !client.profile.is_empty() {
            errors.push(ConfigError::new(
                path,
                format!("give the load profile either as [[{g}.profile]] points or as a CSV file, not both"),
            ));
            continue;
        }
        let file = dir.join(&file);
        let shown = file.display().to_string();
        let read = read_input(&file)
            .map_err(|e| vec![format!("cannot read `{shown}`: {e}")])
            .and_then(|text| scenario::profile_from_csv(&text, &shown));
        match read {
            Ok(points) => client.profile = points,
            Err(problems) => {
                errors.extend(problems.into_iter().map(|m| ConfigError::new(&path, m)));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Bytes per expected user: the user's own state and its latency.
pub const RUN_BYTES_PER_USER: u64 = 64;
/// Bytes per expected user and tier with an unbounded queue: the queued
/// jobs that grow with the users when the tier falls behind.
pub const RUN_BYTES_PER_USER_PER_UNBOUNDED_TIER: u64 = 70;
/// Bytes per job a capped tier can hold (in service or queued).
pub const RUN_BYTES_PER_JOB: u64 = 256;

/// An estimate of the memory one run of `scenario` needs at its peak, in
/// bytes (the process's own, shared by every run, not included):
///
/// `users x (64 B + 70 B x unbounded tiers) + sum over capped tiers of
/// (slots + queue_cap) x 256 B + seconds x (5 + 6 x tiers) x 8 B x 3`
///
/// - users: the expected users (the arrival rate over the client's
///   duration, load spikes included). Calibrated on ch37's presets with
///   0.24, 1.2 and 2.4 million users (peak RSS less the process's 30 MB):
///   naive (three unbounded queues, estimate 274 B) measured 266 to 275 B
///   per user; protected (one, estimate 134 B) 62 to 70 B: an unbounded
///   queue is counted as if it filled.
/// - in-flight jobs of capped tiers, whose number does not grow with the
///   users;
/// - the per-second series (user counters and six per tier), held three
///   times: in the result, the batch's table and its Parquet encoding;
/// - with `series_bin_s` under 1 s, each tier instance's two counts a bin
///   (16 B; 3 tiers of 10^6 s in 0.01 s bins: 4.8 GB, measured 4.7 GB);
/// - an adaptive throttle's one bucket a second of its window, at most
///   the run's (24 B a second);
/// - a limit per tenant key: a limiter slot per key (every group's
///   tenants, one key for a group without) for each replica, or one set
///   for the tier with `rate_limit_scope = "service"`, held twice (the
///   model's and the run's): 100,000 tenants at 64 replicas came to 614 MB.
///
/// A message queue's redeliveries are not counted: each holds a user's
/// state like a first delivery, but how many there are depends on the
/// failures the run meets (a bound from `redeliver_after_s` would refuse
/// ordinary runs by orders of magnitude).
pub fn estimated_peak_bytes(scenario: &Scenario) -> u64 {
    let users = model::expected_users(scenario).max(0.0).ceil() as u64;
    let unbounded = scenario
        .tiers
        .iter()
        .filter(|t| t.queue_cap.is_none())
        .count() as u64;
    let per_user = RUN_BYTES_PER_USER + RUN_BYTES_PER_USER_PER_UNBOUNDED_TIER * unbounded;
    let jobs: u64 = scenario
        .tiers
        .iter()
        .filter_map(|t| t.queue_cap.map(|cap| u64::from(t.slots) + u64::from(cap)))
        .sum();
    let seconds = scenario.horizon_s.max(0.0).ceil() as u64;
    let series = seconds * (5 + 6 * scenario.tiers.len() as u64) * 8 * 3;
    let bins = if scenario.series_bin_s > 0.0 && scenario.series_bin_s < 1.0 {
        let instances: u64 = scenario.tiers.iter().map(|t| u64::from(t.replicas)).sum();
        let per_s = (1.0 / scenario.series_bin_s).round() as u64;
        seconds.saturating_mul(per_s).saturating_mul(instances) * 16
    } else {
        0
    };
    let throttles: u64 = (scenario.edges().iter())
        .filter(|e| e.call.adaptive_throttle)
        .map(|e| {
            let window = e.call.adaptive_throttle_window_s;
            let buckets = policy::AdaptiveThrottle::buckets(window, scenario.horizon_s);
            (buckets * policy::AdaptiveThrottle::BUCKET_BYTES) as u64
        })
        .sum();
    let keys: u64 = (scenario.groups())
        .map(|(_, c)| u64::from(c.tenants.max(1)))
        .sum();
    let keyed_sets: u64 = (scenario.tiers.iter())
        .filter(|t| t.rate_limit_per_s > 0.0 && t.rate_limit_key == scenario::RateLimitKey::Tenant)
        .map(|t| match t.rate_limit_scope {
            scenario::LimitScope::Replica => u64::from(t.replicas),
            scenario::LimitScope::Service => 1,
        })
        .sum();
    let slot = std::mem::size_of::<Option<policy::RateLimiter>>() as u64;
    let tenant_limits = keyed_sets.saturating_mul(keys).saturating_mul(slot * 2);
    users
        .saturating_mul(per_user)
        .saturating_add(jobs.saturating_mul(RUN_BYTES_PER_JOB))
        .saturating_add(series)
        .saturating_add(bins)
        .saturating_add(throttles)
        .saturating_add(tenant_limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Limits per tenant key hold a limiter slot per key and replica: the
    /// estimate counts them (100,000 tenants at 64 replicas were "about
    /// 14 KB" and took 614 MB).
    #[test]
    fn the_estimate_counts_the_limits_per_tenant_key() {
        let mut s = ch37();
        s.client.tenants = 100_000;
        let without = estimated_peak_bytes(&s);
        s.tiers[0].replicas = 64;
        s.tiers[0].rate_limit_per_s = 100.0;
        s.tiers[0].rate_limit_key = scenario::RateLimitKey::Tenant;
        let slot = std::mem::size_of::<Option<policy::RateLimiter>>() as u64;
        assert_eq!(estimated_peak_bytes(&s) - without, 64 * 100_000 * slot * 2);
        assert!(estimated_peak_bytes(&s) > 500_000_000);
    }

    /// A run of a validated scenario is the run [`run`] gives, in fresh
    /// memory or in an earlier run's.
    #[test]
    fn run_validated_is_run() {
        let mut s = ch37();
        s.horizon_s = 5.0;
        s.client.duration_s = 5.0;
        params::set(&mut s, "svc_b.slow.start_s", &toml::Value::Float(2.0)).unwrap();
        let valid = ValidScenario::new(s.clone()).unwrap();
        let mut scratch = Scratch::default();
        for seed in [1, 2] {
            assert_eq!(
                run_validated(&valid, seed, &mut scratch).unwrap(),
                run(&s, seed).unwrap()
            );
        }
    }

    /// Only a scenario that validates becomes a `ValidScenario`, with the
    /// errors `validate` gives.
    #[test]
    fn an_invalid_scenario_is_not_valid() {
        let mut s = ch37();
        s.horizon_s = 5.0;
        assert_eq!(
            ValidScenario::new(s.clone()).unwrap_err(),
            validate(&s).unwrap_err()
        );
    }
}
