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
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Runs of the calibration (spread over the grid; more is closer).
    #[arg(long, default_value_t = 24)]
    pub calibrate: u64,
}

pub fn plan(args: &PlanArgs) -> Result<ExitCode, Error> {
    // Every value of every path is checked; points are validated on a
    // sample, so that `plan` answers at once for any grid.
    let grid = Grid::load_overridden(&args.grid, Some(PLAN_SAMPLE), &args.overrides)?;
    let jobs = crate::runner::jobs_or_cores(args.jobs);
    println!(
        "grid {} ({}), scenario {}",
        grid.name,
        grid.path.display(),
        grid.scenario_ref
    );
    for (k, v) in &grid.fixed {
        println!("  set   {k} = {v}");
    }
    for d in &grid.dimensions {
        let levels = |j: usize| {
            d.levels
                .iter()
                .map(|l| l[j].to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if d.is_zip() {
            println!("  zip   {} positions:", d.levels.len());
            for (j, p) in d.paths.iter().enumerate() {
                println!("          {p} = [{}]", levels(j));
            }
        } else {
            println!(
                "  axis  {} ({} levels): {}",
                d.paths[0],
                d.levels.len(),
                levels(0)
            );
        }
    }
    let seeds: Vec<String> = grid.seeds.iter().take(10).map(u64::to_string).collect();
    let more = if grid.seeds.len() > 10 { ", ..." } else { "" };
    println!("  seeds {} ({}{more})", grid.seeds.len(), seeds.join(", "));
    println!(
        "{} points x {} seeds = {} runs",
        grid.points(),
        grid.seeds.len(),
        grid.runs()
    );
    if grid.points_checked == grid.points() {
        println!("checked: every value and every point");
    } else {
        println!(
            "checked: every value, and {} of the {} points (spread over the grid); `sweep run` validates every point before it starts",
            grid.points_checked,
            grid.points()
        );
    }
    let (point, bytes) = grid.largest_run;
    println!(
        "largest run: about {} of memory (point #{point}{})",
        crate::runner::human_bytes(bytes),
        if grid.points_checked == grid.points() {
            ""
        } else {
            ", of those checked"
        }
    );
    println!("sample points:");
    let n = grid.points();
    let mut samples: Vec<u64> = [0, 1, n / 2, n - 1]
        .into_iter()
        .filter(|i| *i < n)
        .collect();
    samples.dedup();
    for i in samples {
        println!("  #{i}: {}", describe(&grid.point(i)[grid.fixed.len()..]));
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
    println!(
        "estimated wall time: {} on {jobs} threads (calibrated on {k} runs here: {:.1} ms per run)",
        human_duration(estimate),
        per_run * 1000.0
    );
    println!(
        "nothing was written; run it with: sweep run {}{}",
        grid.path.display(),
        args.overrides.as_args()
    );
    Ok(ExitCode::SUCCESS)
}
