//! `sweep plan`: what a grid will run, and how long it should take here.

use crate::error::{Error, RunnerError};
use crate::grid::{Grid, PLAN_SAMPLE, describe};
use crate::progress::{counted, human_duration};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct PlanArgs {
    /// Grid file.
    pub grid: PathBuf,
    #[command(flatten)]
    pub overrides: crate::grid::Overrides,
    /// Threads the estimate assumes [default: all cores].
    #[arg(long, short = 'j', value_parser = crate::runner::parse_jobs)]
    pub jobs: Option<usize>,
    /// Points of the calibration spread over the grid, besides its cheapest
    /// and dearest (one run each; more is closer).
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u64).range(1..))]
    pub calibrate: u64,
    /// Print a JSON summary on stdout instead: points, runs, axes, sample
    /// points, estimate.
    #[arg(long)]
    pub json: bool,
}

pub fn plan(args: &PlanArgs) -> Result<ExitCode, Error> {
    // Every value of every path is checked; points are validated on a
    // sample, so that `plan` answers at once for any grid.
    let grid = Grid::load_overridden(&args.grid, Some(PLAN_SAMPLE), &args.overrides)?;
    let jobs = crate::runner::jobs_or_cores(args.jobs);
    // The text, unless --json asks for the summary alone.
    macro_rules! say {
        ($($t:tt)*) => {
            if !args.json {
                println!($($t)*);
            }
        };
    }
    say!(
        "grid {} ({}), scenario {}",
        grid.name,
        grid.path.display(),
        grid.scenario_ref
    );
    for (k, v) in &grid.fixed {
        say!("  set   {k} = {v}");
    }
    let listed = grid.dimensions.len() - usize::from(grid.design.is_some());
    for d in &grid.dimensions[..listed] {
        let levels = |j: usize| {
            d.levels
                .iter()
                .map(|l| match &l[j] {
                    // TOML's plain form writes every digit (309 for 1e308).
                    toml::Value::Float(x) => {
                        analysis::load::exponent_form(*x).unwrap_or_else(|| l[j].to_string())
                    }
                    v => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if d.is_zip() {
            say!("  zip   {} positions:", d.levels.len());
            for (j, p) in d.paths.iter().enumerate() {
                say!("          {p} = [{}]", levels(j));
            }
        } else {
            say!(
                "  axis  {} ({}): {}",
                d.paths[0],
                counted(d.levels.len() as u64, "level", "levels"),
                levels(0)
            );
        }
    }
    for line in design_lines(&grid) {
        say!("{line}");
    }
    for note in grid.design.iter().flat_map(crate::design::notes) {
        say!("{note}");
    }
    let seeds: Vec<String> = grid.seeds.iter().take(10).map(u64::to_string).collect();
    let more = if grid.seeds.len() > 10 { ", ..." } else { "" };
    say!("  seeds {} ({}{more})", grid.seeds.len(), seeds.join(", "));
    // An adaptive design runs at most its budget of its candidates: the
    // headline, the time and the output are the budget's.
    let budget = adaptive_budget(&grid);
    match budget {
        Some(points) => say!(
            "`sweep refine` runs at most {} x {} = {} (of {} candidate points): the time and output below are the most it runs",
            counted(points, "point", "points"),
            counted(grid.seeds.len() as u64, "seed", "seeds"),
            counted(points * grid.seeds.len() as u64, "run", "runs"),
            grid.points(),
        ),
        None => say!(
            "{} x {} = {}",
            counted(grid.points(), "point", "points"),
            counted(grid.seeds.len() as u64, "seed", "seeds"),
            counted(grid.runs(), "run", "runs")
        ),
    }
    if grid.points_checked == grid.points() {
        say!("checked: every value and every point");
    } else {
        // An adaptive design's candidates are run by `refine`, a round's
        // worth at a time.
        let runner = match budget.is_some() {
            true => "`sweep refine` validates each round's points before it runs them",
            false => "`sweep run` validates every point before it starts",
        };
        say!(
            "checked: every value, and {} of the {} points (spread over the grid); {runner}",
            grid.points_checked,
            grid.points()
        );
    }
    let (point, bytes) = grid.largest_run;
    say!(
        "largest run: about {} of memory (point #{point}{})",
        crate::runner::human_bytes(bytes),
        if grid.points_checked == grid.points() {
            ""
        } else {
            ", of those checked"
        }
    );
    say!("sample points:");
    let n = grid.points();
    let mut samples: Vec<u64> = [0, 1, n / 2, n - 1]
        .into_iter()
        .filter(|i| *i < n)
        .collect();
    samples.dedup();
    for i in &samples {
        say!("  #{i}: {}", describe(&grid.point(*i)[grid.fixed.len()..]));
    }
    let mut est = estimate(&grid, jobs, args.calibrate)?;
    if let Some(points) = budget {
        let share = points as f64 / grid.points().max(1) as f64;
        est.wall_s = (est.wall_s.0 * share, est.wall_s.1 * share);
        est.output_bytes = (est.output_bytes as f64 * share) as u64;
    }
    // The calibration runs share the machine with whatever else runs now:
    // a sweep started when the load is different takes longer or shorter.
    let load_now = load_average();
    let load = load_now
        .map(|l| {
            format!(
                ", at load average {l:.1} on {} cores: more load later makes the runs slower",
                std::thread::available_parallelism().map_or(1, |n| n.get())
            )
        })
        .unwrap_or_default();
    say!(
        "estimated wall time: {} to {} on {jobs} threads (calibrated on {} runs here, the cheapest and dearest points by expected users and a spread between: {:.1} to {:.1} ms per 1000 users{load})",
        human_duration(est.wall_s.0),
        human_duration(est.wall_s.1),
        // The runs timed: a failed one is said below, not counted here.
        est.calibration_runs - est.failed,
        est.ms_per_kuser.0,
        est.ms_per_kuser.1,
    );
    say!(
        "expected output: about {} on disk (runs and series parts, from the calibration runs written to Parquet in memory)",
        crate::runner::human_bytes(est.output_bytes),
    );
    // A failed run takes no time worth scaling: the estimate is of the rest.
    if let Some(first) = &est.first_failure {
        let which = if est.failed == est.calibration_runs {
            "every calibration run failed, so the times above say nothing"
        } else {
            "they are left out of the times above"
        };
        say!(
            "failed: {} of the {} calibration runs ({which}; `sweep run` records such runs as failed); the first, {first}",
            est.failed,
            est.calibration_runs,
        );
    }
    say!(
        "nothing was written; run it with: sweep {} {}{}",
        if budget.is_some() { "refine" } else { "run" },
        crate::slurm::shell_quote(&grid.path.display().to_string()),
        args.overrides.as_args()
    );
    if args.json {
        let value = |v: &toml::Value| serde_json::to_value(v).expect("TOML values serialize");
        let summary = serde_json::json!({
            "grid": grid.name,
            "grid_file": grid.path.display().to_string(),
            "scenario": grid.scenario_ref,
            "fingerprint": grid.fingerprint(),
            "points": grid.points(),
            "seeds": grid.seeds,
            "runs": grid.runs(),
            "set": grid.fixed.iter().map(|(k, v)| (k.clone(), value(v))).collect::<serde_json::Map<_, _>>(),
            "axes": grid.dimensions.iter().map(|d| serde_json::json!({
                "paths": d.paths,
                "levels": d.levels.iter().map(|l| l.iter().map(value).collect::<Vec<_>>()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "design": grid.design.as_ref().map(|d| serde_json::json!({
                "spec": d,
                "points_per_design": grid.dimensions.last().map_or(0, |l| l.levels.len()),
                "designs": grid.points() / grid.dimensions.last().map_or(1, |l| l.levels.len() as u64),
            })),
            "points_checked": grid.points_checked,
            "largest_run": { "point": point, "bytes": bytes },
            "sample_points": samples.iter().map(|i| serde_json::json!({
                "point": i,
                "overrides": grid.point(*i)[grid.fixed.len()..].iter().map(|(k, v)| (k.clone(), value(v))).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            "estimate": {
                "wall_s_low": est.wall_s.0,
                "wall_s_high": est.wall_s.1,
                "threads": jobs,
                "calibration_runs": est.calibration_runs,
                "calibration_runs_failed": est.failed,
                "first_failure": est.first_failure,
                "ms_per_1000_users": [est.ms_per_kuser.0, est.ms_per_kuser.1],
                "output_bytes": est.output_bytes,
                "load_average": load_now,
            },
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("a summary serializes")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// How many sample points a design shows in `plan`.
const DESIGN_ROWS_SHOWN: usize = 5;

/// The most points `sweep refine` runs of an adaptive design: its budget
/// per design (at most its candidates) times the designs.
fn adaptive_budget(grid: &Grid) -> Option<u64> {
    let (Some(spec), Some(dim)) = (&grid.design, grid.dimensions.last()) else {
        return None;
    };
    spec.boundary.as_ref()?;
    let candidates = dim.levels.len() as u64;
    let designs = grid.points() / candidates.max(1);
    Some(spec.n.min(candidates) * designs)
}

/// The sampled design as `plan` shows it: method and options, its size
/// (points per design, designs over the categories), its axes, and the
/// first rows in SALib's order.
fn design_lines(grid: &Grid) -> Vec<String> {
    let (Some(spec), Some(dim)) = (&grid.design, grid.dimensions.last()) else {
        return Vec::new();
    };
    let k = spec.axes.len();
    let points = dim.levels.len() as u64;
    let layout = match spec.method.as_str() {
        "sobol" if spec.second_order => format!(
            "Saltelli on a scrambled Sobol' sequence, N = {} x (2k + 2) = {points} points, second-order terms",
            spec.n
        ),
        "sobol" => format!(
            "Saltelli on a scrambled Sobol' sequence, N = {} x (k + 2) = {points} points, no second-order terms",
            spec.n
        ),
        "morris" => format!(
            "{} trajectories x (k + 1) = {points} points on a {}-level grid",
            spec.n, spec.levels
        ),
        "boundary" => format!(
            "adaptive boundary search, run by `sweep refine`: at most n = {} points per design ({} runs), picked from {points} candidates (a scrambled Sobol' sequence)",
            spec.n,
            spec.n * spec.replicates
        ),
        _ => format!(
            "Latin hypercube of {points} points{}",
            if spec.maximin {
                " (maximin over 50 candidates)"
            } else {
                ""
            }
        ),
    };
    let designs = grid.points() / points.max(1);
    let mut out = vec![
        format!(
            "  design {} (seed {}, k = {k} sampled axes): {layout}",
            spec.method, spec.seed
        ),
        format!(
            "         {}, one per combination of the categorical axes; {} per point",
            counted(designs, "design", "designs"),
            counted(spec.replicates, "replicate seed", "replicate seeds")
        ),
    ];
    for a in &spec.axes {
        let mut how = Vec::new();
        if a.log {
            how.push("log");
        }
        if a.integer {
            how.push("integer");
        }
        let how = if how.is_empty() {
            String::new()
        } else {
            format!(" ({})", how.join(", "))
        };
        out.push(format!(
            "         {} in [{}, {}]{how}",
            a.path,
            analysis::load::number(a.min),
            analysis::load::number(a.max)
        ));
    }
    out.push(format!(
        "         first sample points (sample_index: {}):",
        dim.paths.join(", ")
    ));
    for (i, row) in dim.levels.iter().take(DESIGN_ROWS_SHOWN).enumerate() {
        let values: Vec<String> = row.iter().map(ToString::to_string).collect();
        out.push(format!("           {i}: {}", values.join(", ")));
    }
    out
}

/// The expected users from which a calibration run's time is mostly
/// their cost, not the run's fixed setup.
const MANY_USERS: f64 = 100.0;

/// What `plan` expects of a grid here.
struct Estimate {
    /// Wall time on the threads given: low and high, seconds.
    wall_s: (f64, f64),
    /// The range of the cost per 1000 expected users used for it.
    ms_per_kuser: (f64, f64),
    calibration_runs: u64,
    /// The calibration runs that failed (left out of the times), and the
    /// first one's point and error.
    failed: u64,
    first_failure: Option<String>,
    /// Parquet bytes of both tables, parts' overhead included.
    output_bytes: u64,
}

/// Times runs at the cheapest and the dearest point by expected users
/// (the cost a run's events grow with) and at points spread evenly over
/// the grid, one seed each, and scales their cost per user to the grid's
/// expected users. The range is the 95% interval of the mean cost per
/// user over the calibration runs, within the smallest and largest seen:
/// the cost per user is what varies with the other axes (retries, queues).
/// The runs are written to Parquet in memory to measure the output size.
fn estimate(grid: &Grid, jobs: usize, calibrate: u64) -> Result<Estimate, Error> {
    let n = grid.points();
    // As many points as are validated, spread evenly: building a scenario
    // per point of a huge grid would make `plan` slow.
    let sampled = n.min(PLAN_SAMPLE);
    let users_of = |p: u64| {
        grid.scenario(&grid.point(p))
            .map_or(0.0, |s| sim_core::expected_users(&s))
    };
    let costs: Vec<(u64, f64)> = (0..sampled)
        .map(|j| {
            let p = (j as u128 * n as u128 / sampled as u128) as u64;
            (p, users_of(p))
        })
        .collect();
    // The grid's expected users over all its runs.
    let users_total = costs.iter().map(|(_, u)| u).sum::<f64>()
        * (n as f64 / sampled as f64)
        * grid.seeds.len() as f64;
    let by_cost = |a: &&(u64, f64), b: &&(u64, f64)| a.1.total_cmp(&b.1);
    let cheapest = costs.iter().min_by(by_cost).map_or(0, |c| c.0);
    let dearest = costs.iter().max_by(by_cost).map_or(0, |c| c.0);
    let k = calibrate.min(n);
    let mut points: Vec<u64> = vec![cheapest, dearest];
    points.extend((0..k).map(|j| j * n / k));
    points.sort_unstable();
    points.dedup();
    let seed = grid.seeds[0];
    let mut runs: Vec<(u64, u64)> = points.iter().map(|p| (*p, seed)).collect();
    // A part's size is told apart from its fixed overhead by two runs at
    // least: a grid of one point runs it with a second seed.
    if let [only] = points[..] {
        runs.push((only, seed.wrapping_add(1)));
    }
    // On `jobs` threads, as `run` would: each run's time then includes the
    // contention of its neighbours for the machine.
    let (pool, _) = crate::runner::worker_pool(Some(jobs)).map_err(RunnerError::Pool)?;
    let outcomes: Vec<crate::records::Outcome> = pool.install(|| {
        use rayon::prelude::*;
        (runs.par_iter().enumerate())
            .with_max_len(1)
            .map(|(i, (p, s))| {
                crate::runner::execute_point(grid, i as u64, grid.point(*p), *s, false)
            })
            .collect()
    });
    let timed: Vec<(f64, f64)> = (runs.iter().map(|(p, _)| users_of(*p)))
        .zip(&outcomes)
        .filter(|(_, o)| o.result.is_ok())
        .map(|(users, o)| (users, o.wall_ms))
        .collect();
    // A run of a few users costs its fixed setup, not its users: where the
    // grid has runs of more, they alone say the cost per user.
    let many = timed.iter().any(|(users, _)| *users >= MANY_USERS);
    let per_kuser: Vec<f64> = (timed.iter())
        .filter(|(users, _)| !many || *users >= MANY_USERS)
        .map(|(users, ms)| ms / (users.max(1.0) / 1000.0))
        .collect();
    let (lo, hi) = interval(&per_kuser);
    // Every run's fixed part: the cheapest run's time, at least.
    let fixed_ms = (timed.iter().map(|(_, ms)| *ms)).fold(f64::INFINITY, f64::min);
    let fixed_ms = if fixed_ms.is_finite() { fixed_ms } else { 0.0 };
    let runs_total = grid.runs() as f64;
    let wall = |ms_per_kuser: f64| {
        (ms_per_kuser * users_total / 1000.0 + fixed_ms * runs_total) / 1000.0 / jobs as f64
    };
    let layout = crate::records::Layout::new(
        grid.point_columns(),
        &*grid
            .scenario(&grid.point(0))
            .map_err(|errors| Error::Config {
                context: "the grid's first point".to_string(),
                errors,
            })?,
        grid.metrics.clone(),
    );
    // Bytes of a part of the first `m` calibration runs (both tables).
    let metadata = layout.metadata(&[]);
    let part_bytes = |m: usize| {
        let size = |df: polars::prelude::PolarsResult<polars::prelude::DataFrame>, kv| {
            df.and_then(|mut df| crate::store::encode(&mut df, kv))
                .map_or(0.0, |b| b.len() as f64)
        };
        size(layout.runs_frame(&outcomes[..m]), &metadata.runs)
            + size(layout.series_frame(&outcomes[..m]), &metadata.series)
    };
    // A part costs a fixed overhead (schema, column descriptions) plus its
    // runs: the two from a part of all calibration runs and one of half.
    let (m, half) = (outcomes.len(), (outcomes.len() / 2).max(1));
    let per_run = ((part_bytes(m) - part_bytes(half)) / (m - half) as f64).max(0.0);
    let overhead = (part_bytes(m) - per_run * m as f64).max(0.0);
    let wall_s = (wall(lo), wall(hi));
    // `run` writes a part every 1000 runs or 5 s, whichever comes first.
    let parts = (grid.runs() as f64 / 1000.0)
        .max(wall_s.1 / 5.0)
        .ceil()
        .max(1.0);
    let failures: Vec<String> = (runs.iter().zip(&outcomes))
        .filter_map(|((p, seed), o)| {
            let e = o.result.as_ref().err()?;
            Some(format!("point #{p} seed {seed}: {e}"))
        })
        .collect();
    let failed = failures.len() as u64;
    Ok(Estimate {
        wall_s,
        ms_per_kuser: (lo, hi),
        calibration_runs: m as u64,
        failed,
        first_failure: failures.into_iter().next(),
        output_bytes: (per_run * grid.runs() as f64 + overhead * parts) as u64,
    })
}

/// The machine's 1-minute load average, where the system says it
/// (`/proc/loadavg` on Linux).
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The 95% t-interval of the mean of `xs`, within their smallest and
/// largest value (both 0 without values).
fn interval(xs: &[f64]) -> (f64, f64) {
    let (min, max) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    match analysis::stats::mean_ci95(xs) {
        Some((l, h)) => (l.max(min), h.min(max)),
        None => (min, max),
    }
}
