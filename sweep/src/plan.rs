//! `sweep plan`: what a grid will run, and how long it should take here.

use crate::error::Error;
use crate::grid::{Grid, PLAN_SAMPLE, describe};
use crate::progress::human_duration;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct PlanArgs {
    /// Grid file.
    pub grid: PathBuf,
    #[command(flatten)]
    pub overrides: crate::grid::Overrides,
    /// Threads the estimate assumes [default: all cores].
    #[arg(long, short = 'j', value_parser = crate::runner::parse_jobs)]
    pub jobs: Option<usize>,
    /// Runs of the calibration (spread over the grid; more is closer).
    #[arg(long, default_value_t = 24)]
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
                .map(|l| l[j].to_string())
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
                "  axis  {} ({} levels): {}",
                d.paths[0],
                d.levels.len(),
                levels(0)
            );
        }
    }
    for line in design_lines(&grid) {
        say!("{line}");
    }
    let seeds: Vec<String> = grid.seeds.iter().take(10).map(u64::to_string).collect();
    let more = if grid.seeds.len() > 10 { ", ..." } else { "" };
    say!("  seeds {} ({}{more})", grid.seeds.len(), seeds.join(", "));
    say!(
        "{} points x {} seeds = {} runs",
        grid.points(),
        grid.seeds.len(),
        grid.runs()
    );
    if grid.points_checked == grid.points() {
        say!("checked: every value and every point");
    } else {
        say!(
            "checked: every value, and {} of the {} points (spread over the grid); `sweep run` validates every point before it starts",
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
    // Calibrate on runs spread evenly over the enumeration.
    let k = args.calibrate.min(grid.runs()).max(1);
    let started = Instant::now();
    for j in 0..k {
        let (_, point, seed) = grid.run(j * grid.runs() / k);
        if let Ok(s) = grid.scenario(&point) {
            let _ = sim_core::run(&s, seed);
        }
    }
    let per_run = started.elapsed().as_secs_f64() / k as f64;
    let estimate = per_run * grid.runs() as f64 / jobs as f64;
    say!(
        "estimated wall time: {} on {jobs} threads (calibrated on {k} runs here: {:.1} ms per run)",
        human_duration(estimate),
        per_run * 1000.0
    );
    say!(
        "nothing was written; run it with: sweep run {}{}",
        grid.path.display(),
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
                "wall_s": estimate,
                "threads": jobs,
                "calibration_runs": k,
                "per_run_ms": per_run * 1000.0,
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
            "         {designs} design(s), one per combination of the categorical axes; {} replicate seed(s) per point",
            spec.replicates
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
