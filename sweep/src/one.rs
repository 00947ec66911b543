//! `sweep one` and `sweep scenario show`: a single scenario, no grid.

use crate::error::Error;
use crate::table;
use clap::Args;
use sim_core::{ConfigError, Scenario, ValidScenario};
use std::process::ExitCode;

#[derive(Args)]
pub struct OneArgs {
    /// Built-in scenario name or path to a scenario TOML file.
    #[arg(long, default_value = "ch37")]
    scenario: String,
    /// Preset (strategy) to apply; repeat for several, or `all` for each of the scenario's presets.
    #[arg(long = "preset", value_name = "NAME")]
    presets: Vec<String>,
    // Negative numbers reach the parser, which says a seed is >= 0; clap
    // would otherwise take `-1` for an unknown flag.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = parse_seed)]
    seed: u64,
    /// Override a parameter (see `sweep params`); repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Print one JSON object per run (the `runs` table's column names) instead of the table;
    /// with --trace, one per step.
    #[arg(long)]
    json: bool,
    /// Print the story of user request USER (0: the first to arrive) instead of the
    /// metrics: every attempt, outcome and retry decision at every level, with the
    /// budget left before each.
    #[arg(long, value_name = "USER", allow_negative_numbers = true)]
    trace: Option<u32>,
}

#[derive(Args)]
pub struct ShowArgs {
    /// Built-in scenario name or path to a scenario TOML file.
    #[arg(default_value = "ch37")]
    scenario: String,
    /// Preset (strategy) to apply before printing.
    #[arg(long)]
    preset: Option<String>,
    /// Override a parameter; repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
}

/// Parses `PATH=VALUE` arguments of `--set`.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, toml::Value)>, Vec<ConfigError>> {
    match parse_sets_partly(sets) {
        (out, errors) if errors.is_empty() => Ok(out),
        (_, errors) => Err(errors),
    }
}

/// The `--set` arguments that parse, and why each other one does not: the
/// ones that parse are checked too, so that every problem is said at once.
fn parse_sets_partly(sets: &[String]) -> (Vec<(String, toml::Value)>, Vec<ConfigError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for s in sets {
        match s.split_once('=') {
            // The same parameter twice: which one was meant? (As `run` asks.)
            Some((path, _))
                if (out.iter()).any(|(p, _): &(String, toml::Value)| {
                    sim_core::params::canonical(p) == sim_core::params::canonical(path.trim())
                }) =>
            {
                errors.push(ConfigError::new(
                    format!("--set {s}"),
                    format!(
                        "`{}` is given more than once on the command line",
                        sim_core::params::canonical(path.trim())
                    ),
                ))
            }
            Some((path, value)) if !path.trim().is_empty() => {
                out.push((path.trim().to_string(), sim_core::parse_value(value.trim())))
            }
            _ => errors.push(ConfigError::new(
                "--set",
                format!("expected PATH=VALUE (e.g. svc_b.queue_cap=32), got `{s}`"),
            )),
        }
    }
    (out, errors)
}

/// The `--set` argument that set `path`, as typed: its value as given
/// (`1e400`, not the `inf` it parses to).
fn as_typed(typed: &[String], path: &str) -> String {
    let arg = (typed.iter()).find(|a| a.split_once('=').is_some_and(|(p, _)| p.trim() == path));
    format!("--set {}", arg.map_or(path, |a| a.trim()))
}

/// The scenario `base` with `preset` and the parsed `sets` applied;
/// `typed`, the `--set` arguments as given, for the errors.
fn resolve(
    base: &str,
    preset: Option<&str>,
    sets: &[(String, toml::Value)],
    typed: &[String],
) -> Result<ValidScenario, Vec<ConfigError>> {
    if let (Some(_), Some((path, _))) = (preset, sets.iter().find(|(p, _)| p == "strategy")) {
        return Err(vec![ConfigError::new(
            as_typed(typed, path),
            "not with --preset: both choose the strategy (a preset)",
        )]);
    }
    let mut overrides = sets.to_vec();
    if let Some(p) = preset {
        overrides.insert(
            0,
            ("strategy".to_string(), toml::Value::String(p.to_string())),
        );
    }
    // A problem of a value given on the command line names its flag; one
    // of the scenario file (its CSV profile's) is the file's, whatever the
    // flags also set.
    let scenario = sim_core::load_base(base)?;
    sim_core::apply_validated(scenario, &overrides).map_err(|errors| {
        (errors.into_iter())
            .map(|e| {
                let canonical = sim_core::params::canonical(&e.path);
                match sets
                    .iter()
                    .find(|(p, _)| sim_core::params::canonical(p) == canonical)
                {
                    Some((p, _)) => ConfigError::new(as_typed(typed, p), e.message),
                    // The preset is the strategy the command line names.
                    None => match preset {
                        Some(name) if e.path == "strategy" => {
                            ConfigError::new(format!("--preset {name}"), e.message)
                        }
                        _ => e,
                    },
                }
            })
            .collect()
    })
}

/// Overrides that do not parse or apply, under `context`.
fn config(context: &str) -> impl FnOnce(Vec<ConfigError>) -> Error {
    let context = context.to_string();
    move |errors| Error::Config { context, errors }
}

pub fn run_one(args: &OneArgs) -> Result<ExitCode, Error> {
    // Every problem of the command line at once: the --set arguments that
    // parse are checked beside those that do not.
    let (sets, mut errors) = parse_sets_partly(&args.sets);
    let all = args.presets.iter().any(|p| p == "all");
    if all && args.presets.len() > 1 {
        errors.push(ConfigError::new(
            "--preset",
            format!(
                "`all` runs every preset of the scenario: give it alone, not with {}",
                (args.presets.iter().filter(|p| *p != "all"))
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let presets: Vec<Option<String>> = if all {
        match sim_core::load_base(&args.scenario) {
            Ok(s) if !s.presets.is_empty() => s.presets.keys().cloned().map(Some).collect(),
            Ok(_) => {
                errors.push(ConfigError::new(
                    "--preset",
                    "`all`: this scenario defines no presets",
                ));
                // Resolved without one, so that its other problems are said too.
                vec![None]
            }
            Err(e) => return Err(config("cannot load the scenario")(e)),
        }
    } else if args.presets.is_empty() {
        vec![None]
    } else {
        // A preset given twice runs once.
        let mut presets: Vec<Option<String>> = Vec::new();
        for p in &args.presets {
            if !presets.iter().flatten().any(|q| q == p) {
                presets.push(Some(p.clone()));
            }
        }
        presets
    };
    // Resolve everything before running anything, and report every problem.
    let mut scenarios = Vec::new();
    for p in &presets {
        match resolve(&args.scenario, p.as_deref(), &sets, &args.sets) {
            Ok(s) => scenarios.push(s),
            // A problem of the command line, not of a preset, is said once.
            Err(e) => {
                for e in e {
                    if !errors.contains(&e) {
                        errors.push(e);
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        errors.dedup();
        return Err(config(&format!("invalid scenario `{}`", args.scenario))(
            errors,
        ));
    }
    order_like_the_source(&mut scenarios);
    if let Some(user) = args.trace {
        return Ok(print_traces(&scenarios, args.seed, user, args.json));
    }
    // A run that fails is said; the others are still shown.
    let mut runs = Vec::new();
    let mut ran = Vec::new();
    let mut failed = false;
    for s in &scenarios {
        match sim_core::run_validated(s, args.seed, &mut sim_core::Scratch::default()) {
            Ok(r) => {
                runs.push((s.strategy.clone(), r));
                ran.push(s);
            }
            Err(e) => {
                eprintln!("error: run `{}` seed {} failed: {e}", s.strategy, args.seed);
                failed = true;
            }
        }
    }
    let scenarios = ran;
    if args.json {
        for (strategy, r) in &runs {
            println!("{}", table::json_line(strategy, args.seed, r));
        }
    } else {
        print!("{}", table::render(&args.scenario, args.seed, &runs));
        for ((strategy, r), s) in runs.iter().zip(&scenarios) {
            if let Some(why) = why_not_recovered(r, s.recovery.threshold) {
                println!("why `{strategy}` did not recover: {why}");
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// For a run with a trigger that did not recover, the diagnosis of
/// `analysis::why` from its series: each tier's traffic from the trigger's
/// end while users still arrive; a run whose users before the trigger
/// succeeded under the recovery `threshold` was failing before it, as the
/// report says.
fn why_not_recovered(r: &sim_core::RunResult, threshold: f64) -> Option<analysis::why::Diagnosis> {
    // Without a recovery window of arrivals after the trigger, recovery
    // cannot be seen: nothing to explain.
    if r.recovery_s.is_some() || r.window_end_s <= 0.0 || r.recovery_censor_s == 0.0 {
        return None;
    }
    let seconds: Vec<usize> = (0..r.series.seconds())
        .filter(|s| {
            analysis::why::after_trigger(*s, r.window_end_s, r.series.user_arrivals[*s] as f64)
        })
        .collect();
    let tiers: Vec<analysis::why::TierAfter> = (r.series.tiers.iter())
        .map(|t| {
            let sum = |xs: &[u64]| seconds.iter().map(|s| xs[*s] as f64).sum::<f64>();
            analysis::why::TierAfter {
                tier: t.name.clone(),
                arrivals: sum(&t.arrivals),
                retries: sum(&t.retries),
                retries_from: (t.retries_from.iter())
                    .map(|f| (f.caller.clone(), sum(&f.per_s)))
                    .collect(),
                hedges: sum(&t.hedges),
                after_user_left: sum(&t.after_user_left),
                late: sum(&t.late),
                capacity: seconds.iter().map(|s| t.capacity_per_s[*s]).sum(),
                completed: Some(sum(&t.completed)),
                backlogged: Some(seconds.iter().filter(|s| t.queue_len[**s] > 0).count() as f64),
                seconds: seconds.len() as f64,
            }
        })
        .collect();
    let d = analysis::why::diagnose(&tiers)?;
    Some(match r.phases[0].success_rate() {
        Some(before) if before < threshold => d.failing_before(before, threshold),
        _ => d,
    })
}

fn print_traces(scenarios: &[ValidScenario], seed: u64, user: u32, json: bool) -> ExitCode {
    // Strategies may see different numbers of users (closed loops,
    // redelivery): one without this user is said, the others traced; with
    // none, the number is no user at all, a mistyped argument.
    let mut traced = 0;
    let mut missing = Vec::new();
    for s in scenarios {
        let steps = match sim_core::trace(s, seed, user) {
            Ok((run, steps)) if steps.is_empty() => {
                let arrived = match run.users {
                    0 => "none arrived before the horizon".to_string(),
                    n => format!("{n} arrived before the horizon, numbered 0 to {}", n - 1),
                };
                missing.push(format!(
                    "`{}` seed {seed} has no user request {user}; {arrived}",
                    s.strategy
                ));
                continue;
            }
            Ok((_, steps)) => steps,
            Err(e) => {
                eprintln!("error: run `{}` seed {seed} failed: {e}", s.strategy);
                return ExitCode::FAILURE;
            }
        };
        traced += 1;
        if json {
            for step in &steps {
                let mut line = serde_json::to_value(step).expect("a trace step serializes");
                line["strategy"] = s.strategy.clone().into();
                line["seed"] = seed.into();
                println!("{line}");
            }
        } else {
            print!("{}", render_trace(&s.strategy, seed, user, &steps));
        }
    }
    let kind = if traced == 0 { "error" } else { "note" };
    for m in &missing {
        eprintln!("{kind}: --trace {user}: {m}");
    }
    if traced == 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The trace as a table, then how long work went on after the user's
/// request had ended (the overrun).
fn render_trace(strategy: &str, seed: u64, user: u32, steps: &[sim_core::TraceStep]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let first = steps.first().expect("a traced user arrived");
    let arrived = first.at_s - first.t_s;
    writeln!(
        out,
        "{strategy}, seed {seed}: user request {user}, arrived at {arrived:.3} s; t_s counts from its arrival; job #0 is the user request, and a job `serves` an attempt of the job it names\n"
    )
    .unwrap();
    let who_width = steps.iter().map(|s| s.who.len()).max().unwrap_or(3).max(3);
    writeln!(
        out,
        "{:>8}  {:<who_width$}  {:>4}  {:>6}  {:>7}  {:<28}  {:>11}",
        "t_s", "who", "job", "serves", "attempt", "event", "remaining_s"
    )
    .unwrap();
    for s in steps {
        let remaining = s.remaining_s.map_or("-".to_string(), |r| format!("{r:.3}"));
        let serves = s.serves.map_or("-".to_string(), |j| format!("#{j}"));
        writeln!(
            out,
            "{:>8.3}  {:<who_width$}  {:>4}  {:>6}  {:>7}  {:<28}  {:>11}",
            s.t_s,
            s.who,
            format!("#{}", s.job),
            serves,
            s.attempt,
            s.event,
            remaining
        )
        .unwrap();
    }
    let ended = steps.iter().find(|s| s.event.starts_with("user "));
    let last = steps.last().expect("not empty");
    let at_horizon = |state: &str| {
        let n = (steps.iter())
            .filter(|s| s.event == format!("{state} at the horizon"))
            .count();
        (n > 0).then(|| crate::progress::counted(n as u64, "request", "requests") + " " + state)
    };
    let pending: Vec<String> = ["in transit", "queued", "in service"]
        .into_iter()
        .filter_map(at_horizon)
        .collect();
    match ended {
        Some(end) if !pending.is_empty() => writeln!(
            out,
            "\nThe user request ended at t = {:.3} s; work for it was still pending when the run ended at t = {:.3} s ({}): an overrun of at least {:.3} s.\n",
            end.t_s,
            last.t_s,
            pending.join(", "),
            last.t_s - end.t_s
        ),
        None if !pending.is_empty() => writeln!(
            out,
            "\nThe user request had not ended at the horizon (t = {:.3} s), with {} for it.\n",
            last.t_s,
            pending.join(", ")
        ),
        Some(end) if last.t_s > end.t_s => writeln!(
            out,
            "\nThe user request ended at t = {:.3} s; work for it went on until t = {:.3} s: an overrun of {:.3} s.\n",
            end.t_s,
            last.t_s,
            last.t_s - end.t_s
        ),
        Some(end) => writeln!(
            out,
            "\nThe user request ended at t = {:.3} s, and nothing was done for it after that.\n",
            end.t_s
        ),
        None => writeln!(out, "\nThe user request had not ended at the horizon.\n"),
    }
    .unwrap();
    out
}

/// ch37's presets in the source's order (naive first), others by name.
fn order_like_the_source(scenarios: &mut [ValidScenario]) {
    let rank = |s: &Scenario| {
        sim_core::CH37_STRATEGIES
            .iter()
            .position(|n| *n == s.strategy)
            .unwrap_or(usize::MAX)
    };
    scenarios.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then_with(|| a.strategy.cmp(&b.strategy))
    });
}

pub fn show(args: &ShowArgs) -> Result<ExitCode, Error> {
    let sets = parse_sets(&args.sets).map_err(config("bad --set"))?;
    let s = resolve(&args.scenario, args.preset.as_deref(), &sets, &args.sets)
        .map_err(config(&format!("invalid scenario `{}`", args.scenario)))?;
    print!("{}", s.to_toml());
    Ok(ExitCode::SUCCESS)
}

/// `--seed`: the message says what a seed is, not the integer parser's
/// "invalid digit found in string".
fn parse_seed(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("a seed is a whole number from 0 to {}", u64::MAX))
}
