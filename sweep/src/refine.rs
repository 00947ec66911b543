//! `sweep refine`: where does the system tip? For every point of the
//! grid's other axes, bisect one numeric axis until the level at which
//! P(not recovered) crosses a threshold is bracketed to a given precision.
//!
//! Every run is written like a sweep's (same Parquet, same ids), so a
//! second invocation reuses what is there and only runs what is missing.

use crate::error::{Error, GridError, RefineError, StoreError};
use crate::grid::{Grid, sha256_hex};
use crate::records::{Layout, Outcome, PartMetadata};
use crate::runner::{execute_point, finish_manifest, new_manifest, silence_panics, worker_pool};
use crate::store::{Shard, Store};
use analysis::IoError;
use analysis::manifest::Resume;
use analysis::plots::{BoundaryLine, BoundaryPlot, Crossing};
use clap::Args;
use rayon::prelude::*;
use sim_core::params::{Kind, param_of};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use toml::Value;

#[derive(Args)]
pub struct RefineArgs {
    /// Grid file; its seeds and other axes are used as they are.
    pub grid: PathBuf,
    /// Fix a parameter for every run, like the grid's [set] (replaces the
    /// path's value there, or its axis); repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// The numeric axis to bisect; its lowest and highest levels bracket
    /// the search. Not with a grid whose [sample] method is "boundary",
    /// which searches its sampled axes.
    #[arg(long)]
    pub axis: Option<String>,
    /// P(not recovered) that marks the boundary [default: 0.5] (a boundary
    /// grid's is its sample.threshold).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Stop when the bracket is this narrow (in the axis' unit); with --axis.
    #[arg(long)]
    pub precision: Option<f64>,
    /// Output directory [default: out/<grid name>-refine; a boundary
    /// grid's: out/<grid name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads [default: all cores].
    #[arg(long, short = 'j', value_parser = crate::runner::parse_jobs)]
    pub jobs: Option<usize>,
    /// Do not write the analysis report.
    #[arg(long)]
    pub no_report: bool,
    /// Reuse runs written by another version of this tool (refused
    /// otherwise; the manifest keeps the earlier versions).
    #[arg(long)]
    pub allow_version_change: bool,
}

/// A point's overrides (`path -> value`).
type Point = Vec<(String, Value)>;

/// The search on one point of the other axes.
struct Slice {
    /// Overrides of the other axes at this point.
    point: Point,
    lo: f64,
    hi: f64,
    p_lo: Option<Estimate>,
    p_hi: Option<Estimate>,
    done: bool,
    /// The values of the axis at which runs failed or cannot show
    /// recovery, with how many of their seeds: the slice stops at the
    /// first, without an estimate there (both ends of the first step may
    /// be such values).
    stopped_at: Vec<(f64, u64, Stop)>,
}

#[derive(Clone, Copy, PartialEq)]
enum Stop {
    Failed,
    NoVerdict,
}

#[derive(Clone, Copy)]
struct Estimate {
    not_recovered: u64,
    runs: u64,
}

impl Estimate {
    fn p(&self) -> f64 {
        self.not_recovered as f64 / self.runs.max(1) as f64
    }
}

pub fn refine(args: &RefineArgs) -> Result<ExitCode, Error> {
    Ok(run(args)?)
}

fn run(args: &RefineArgs) -> Result<ExitCode, RefineError> {
    let overrides = crate::grid::Overrides {
        sets: args.sets.clone(),
        axes: Vec::new(),
    };
    // The flags' own values, said with the grid's problems if it has any.
    let mut flag_problems: Vec<GridError> = Vec::new();
    // A path that is no number is told whatever the grid's problems.
    let numeric =
        |path: &str| param_of(path).is_none_or(|p| matches!(p.kind, Kind::Float | Kind::Int));
    if let Some(axis) = &args.axis
        && !numeric(axis)
    {
        flag_problems.push(GridError::Flag {
            flag: "--axis",
            arg: format!("`{axis}`"),
            reason: "not numeric, so there is no value between two levels to try".into(),
        });
    }
    if let Some(t) = args.threshold
        && !(t > 0.0 && t < 1.0)
    {
        flag_problems.push(GridError::Flag {
            flag: "--threshold",
            arg: t.to_string(),
            reason: "must be in (0, 1), the P(not recovered) whose crossing is searched".into(),
        });
    }
    if let Some(p) = args.precision
        && !(p.is_finite() && p > 0.0)
    {
        flag_problems.push(GridError::Flag {
            flag: "--precision",
            arg: p.to_string(),
            reason: "must be a positive number, the bracket's width at which the bisection stops"
                .into(),
        });
    }
    let mut grid = match Grid::load_overridden(&args.grid, None, &overrides) {
        Ok(grid) => grid,
        Err(mut e) => {
            e.0.append(&mut flag_problems);
            return Err(RefineError::Grid(e));
        }
    };
    if grid.design.as_ref().is_some_and(|d| d.boundary.is_some()) {
        let given: Vec<&str> = [
            ("--axis", args.axis.is_some()),
            ("--precision", args.precision.is_some()),
            ("--threshold", args.threshold.is_some()),
        ]
        .iter()
        .filter(|(_, g)| *g)
        .map(|(f, _)| *f)
        .collect();
        if !given.is_empty() {
            return Err(RefineError::BoundaryFlags {
                flags: given.join(", "),
                grid: args.grid.clone(),
            });
        }
        return crate::adaptive::run(args, &mut grid);
    }
    let (Some(given_axis), Some(precision)) = (args.axis.clone(), args.precision) else {
        return Err(RefineError::NoAxis {
            grid: args.grid.clone(),
        });
    };
    let threshold = args.threshold.unwrap_or(0.5);
    // Every problem of the flags at once.
    let mut errors: Vec<String> = Vec::new();
    // The axis in whichever spelling (`svc_b.slow.duration_s` is
    // `svc_b.slow.0.duration_s`), named as the grid names it.
    let canonical = sim_core::params::canonical(&given_axis);
    let d = (grid.dimensions.iter())
        .position(|d| d.paths.len() == 1 && sim_core::params::canonical(&d.paths[0]) == canonical);
    let axis_path = d.map_or(given_axis, |d| grid.dimensions[d].paths[0].clone());
    let kind = param_of(&axis_path).map(|p| p.kind);
    let mut levels: Vec<f64> = Vec::new();
    // A `--set` of the axis replaces it by one value.
    let set_here = (args.sets.iter()).find(|s| {
        s.split_once('=')
            .is_some_and(|(p, _)| sim_core::params::canonical(p.trim()) == canonical)
    });
    match (d, set_here) {
        (None, Some(set)) => errors.push(format!(
            "--axis `{axis_path}`: `--set {set}` fixes it to one value (a --set replaces the grid's axis); leave the --set out to bisect it"
        )),
        (None, None) => errors.push(format!(
            "--axis `{axis_path}`: not a (non-zipped) axis of {}",
            args.grid.display()
        )),
        // Told with the flags' problems.
        (Some(_), _) if !matches!(kind, Some(Kind::Float | Kind::Int)) => {}
        (Some(d), _) => {
            levels = (grid.dimensions[d].levels.iter())
                .filter_map(|l| l[0].as_float().or(l[0].as_integer().map(|i| i as f64)))
                .collect();
        }
    }
    let (lo, hi) = (
        levels.iter().copied().fold(f64::INFINITY, f64::min),
        levels.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    if d.is_some() && !levels.is_empty() && (levels.len() < 2 || lo >= hi) {
        errors.push(format!(
            "--axis `{axis_path}`: needs two distinct levels to bracket the search"
        ));
    }
    errors.extend(flag_problems.iter().map(ToString::to_string));
    if !errors.is_empty() {
        return Err(RefineError::Flags(errors));
    }
    let d = d.expect("checked above");
    let integer = kind == Some(Kind::Int);
    let precision = if integer {
        precision.max(1.0)
    } else {
        precision
    };

    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-refine", grid.name)));
    let store = Store::new(&out);
    // One writer: a second refinement beside this one would write the same
    // runs again.
    store.refuse_not_ours()?;
    let _lock = crate::lock::Lock::writer(&out, Shard::WHOLE, true)
        .map_err(crate::error::DirError::from)?;
    grid.keep_layout_of(&store.manifests()?);
    let fingerprint = sha256_hex(
        format!(
            "{}|{}|{}|{}",
            grid.fingerprint(),
            axis_path,
            threshold,
            precision
        )
        .as_bytes(),
    )[..16]
        .to_string();
    let resume = refine_command(
        args,
        &format!(
            " --axis {} --precision {precision} --threshold {threshold}",
            crate::slurm::shell_quote(&axis_path)
        ),
    );
    store.refuse_foreign(&fingerprint, "sweep or refinement", "", &|m| {
        differences(&grid, &resume, m)
    })?;
    store.create_dirs()?;
    store.clean_incomplete(Shard::WHOLE)?;
    store.drop_uncommitted(Shard::WHOLE)?;
    let group = grid.report.group.as_deref();
    let mut known = known_results(&store, &grid.report)?;

    // Every point of the other axes, in grid order.
    let others: Vec<usize> = (0..grid.dimensions.len()).filter(|i| *i != d).collect();
    let mut slices: Vec<Slice> = (0..grid.points_of(&others))
        .map(|c| Slice {
            point: grid.point_of(&others, c),
            lo,
            hi,
            p_lo: None,
            p_hi: None,
            done: false,
            stopped_at: Vec::new(),
        })
        .collect();

    let (pool, jobs) = worker_pool(args.jobs)?;
    let axis_point = grid.point(0);
    let layout = Layout::new(
        grid.point_columns(),
        &*grid
            .scenario(&axis_point)
            .map_err(RefineError::InvalidPoint)?,
        grid.metrics.clone(),
    );
    let mut manifest = new_manifest(&grid, Shard::WHOLE, jobs, 0);
    manifest.resume = Some(resume);
    manifest.earlier_versions = reused_versions(&store, args)?;
    manifest.fingerprint = fingerprint;
    manifest.status = "running".to_string();
    store.write_manifest(&manifest)?;
    let mut metadata = crate::runner::part_metadata(&grid, &manifest, Shard::WHOLE);
    metadata.push((
        "sweep.refine".to_string(),
        format!("{axis_path} threshold {threshold} precision {precision}"),
    ));
    let metadata = layout.metadata(&metadata);
    silence_panics();
    crate::signals::install(crate::runner::resume_command(&manifest, &store.root));

    // A run's index is its place in the order an uninterrupted refinement
    // asks for runs (steps in order, each step's values and seeds in
    // order), counting those already written: a resumed refinement replays
    // the same steps on the same results, so it gives every run the index
    // it would have had.
    let mut next_index = 0u64;
    let mut indexed: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut step = 0;
    loop {
        // The axis values each unfinished slice needs now.
        let mut wanted: Vec<(usize, f64)> = Vec::new();
        for (i, s) in slices.iter().enumerate().filter(|(_, s)| !s.done) {
            match (s.p_lo, s.p_hi) {
                (None, _) => wanted.extend([(i, s.lo), (i, s.hi)]),
                _ => wanted.push((i, midpoint(s.lo, s.hi, integer))),
            }
        }
        if wanted.is_empty() {
            break;
        }
        step += 1;
        let value = |x: f64| {
            if integer {
                Value::Integer(x as i64)
            } else {
                Value::Float(x)
            }
        };
        let point_of = |slice: &Slice, x: f64| {
            let mut p = slice.point.clone();
            p.push((axis_path.clone(), value(x)));
            // The grid's column order: fixed overrides, then axes in order.
            p.sort_by_key(|(k, _)| {
                axis_point
                    .iter()
                    .position(|(a, _)| a == k)
                    .unwrap_or(usize::MAX)
            });
            p
        };
        let mut todo: Vec<(u64, Point, u64)> = Vec::new();
        for (i, x) in &wanted {
            let point = point_of(&slices[*i], *x);
            for seed in &grid.seeds {
                let id = Grid::run_id(&grid.point_id(&point), *seed);
                if !indexed.insert(id.clone()) {
                    continue;
                }
                if !known.contains_key(&id) {
                    todo.push((next_index, point.clone(), *seed));
                }
                next_index += 1;
            }
        }
        eprintln!(
            "refine step {step}: {} to evaluate, {}",
            crate::progress::counted(wanted.len() as u64, "value", "values"),
            crate::progress::counted(todo.len() as u64, "new run", "new runs")
        );
        // After a stopping signal no run starts; those in progress finish
        // and are written below.
        let mut outcomes: Vec<Outcome> = pool.install(|| {
            todo.par_iter()
                .with_max_len(1)
                .filter(|_| crate::signals::received().is_none())
                .map(|(i, p, s)| execute_point(&grid, *i, p.clone(), *s, false))
                .collect()
        });
        for o in &outcomes {
            known.insert(o.run_id.clone(), Verdict::of_outcome(o, group));
        }
        write_outcomes(&store, &layout, &metadata, &outcomes)?;
        outcomes.clear();
        if let Some(signal) = crate::signals::received() {
            // A step cut short would move the brackets on partial
            // estimates: the refinement stops here, and running it again
            // reuses every run written.
            return stopped(&store, &mut manifest, &out, signal);
        }
        for (i, x) in wanted {
            let point = point_of(&slices[i], x);
            let mut est = Estimate {
                not_recovered: 0,
                runs: 0,
            };
            let (mut failed, mut unjudged) = (0, 0);
            for seed in &grid.seeds {
                match known.get(&Grid::run_id(&grid.point_id(&point), *seed)) {
                    Some(Verdict::Recovered(recovered)) => {
                        est.runs += 1;
                        est.not_recovered += !recovered as u64;
                    }
                    Some(Verdict::Failed) => failed += 1,
                    Some(Verdict::None) => unjudged += 1,
                    None => {}
                }
            }
            // A run without a verdict (failed, or unable to show recovery):
            // an estimate without it could move the bracket the wrong way,
            // so the slice stops.
            if failed > 0 {
                slices[i].stopped_at.push((x, failed, Stop::Failed));
            } else if unjudged > 0 {
                slices[i].stopped_at.push((x, unjudged, Stop::NoVerdict));
            } else {
                // The other end of a first step that stopped is still
                // estimated, for the table.
                update(&mut slices[i], x, est, threshold, precision, integer);
            }
            if !slices[i].stopped_at.is_empty() {
                slices[i].done = true;
            }
        }
    }

    let (_, failed_runs) = finish_manifest(&store, &mut manifest, "complete", true)?;
    let table = boundary_table(&grid, &others, &slices, &axis_path, threshold);
    let dir = out.join("analysis");
    std::fs::create_dir_all(&dir).map_err(IoError::at(&dir))?;
    let boundary = dir.join("boundary.md");
    std::fs::write(&boundary, &table).map_err(IoError::at(boundary))?;
    println!("{table}");
    let labels: Vec<Vec<String>> = slices
        .iter()
        .map(|s| slice_label(&grid, &others, s))
        .collect();
    // Along x, the first numeric other axis (lines of a boundary against a
    // load or a timeout), else the first.
    let numeric = |d: &usize| {
        let paths = &grid.dimensions[*d].paths;
        paths.len() == 1
            && matches!(
                param_of(&paths[0]).map(|p| p.kind),
                Some(Kind::Float | Kind::Int | Kind::Cap)
            )
    };
    let x = others.iter().position(numeric).unwrap_or(0);
    let plot = boundary_plot(
        &other_heads(&grid, &others),
        &labels,
        x,
        &slices,
        &axis_path,
        threshold,
        (lo, hi),
    );
    // Every slice stopped by failed runs: nothing to draw.
    let drawn = slices.iter().any(|s| crossing(s, threshold).is_some());
    if drawn {
        analysis::plots::boundary(&dir.join("plots").join("boundary"), &plot)?;
    }
    println!(
        "boundary: {0}/analysis/boundary.md{1}; runs: {0}/runs/*.parquet",
        out.display(),
        if drawn {
            format!(", {}/analysis/plots/boundary.svg", out.display())
        } else {
            String::new()
        }
    );
    if !args.no_report {
        crate::report::write_report(&out, false)?;
    }
    let stopped = |why: Stop| {
        (slices.iter())
            .filter(|s| s.stopped_at.first().is_some_and(|(_, _, w)| *w == why))
            .count()
    };
    let unjudged = stopped(Stop::NoVerdict);
    if unjudged > 0 {
        eprintln!(
            "warning: {unjudged} of {} slices stopped without a boundary where their runs cannot show recovery (the trigger ends less than recovery.window_s before the arrivals end, or no user arrives in a window after it: a longer {} or more load gives them a verdict)",
            slices.len(),
            grid.report.duration_path()
        );
    }
    let failed = stopped(Stop::Failed);
    if failed_runs > 0 {
        eprintln!(
            "error: {} failed (their errors: `status` and `error` in {}/runs/*.parquet){}",
            crate::progress::counted(failed_runs, "run", "runs"),
            out.display(),
            if failed > 0 {
                format!(
                    "; {failed} of {} slices stopped without a boundary where they did",
                    slices.len()
                )
            } else {
                String::new()
            }
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn midpoint(lo: f64, hi: f64, integer: bool) -> f64 {
    let m = (lo + hi) / 2.0;
    if integer { m.floor() } else { m }
}

/// Narrows the slice's bracket with the estimate at `x`.
fn update(s: &mut Slice, x: f64, est: Estimate, threshold: f64, precision: f64, integer: bool) {
    let above = |e: &Estimate| e.p() >= threshold;
    if x == s.lo && s.p_lo.is_none() {
        s.p_lo = Some(est);
    } else if x == s.hi && s.p_hi.is_none() {
        s.p_hi = Some(est);
    } else if let (Some(lo), Some(_)) = (s.p_lo, s.p_hi) {
        if above(&est) == above(&lo) {
            s.lo = x;
            s.p_lo = Some(est);
        } else {
            s.hi = x;
            s.p_hi = Some(est);
        }
    }
    if let (Some(lo), Some(hi)) = (s.p_lo, s.p_hi) {
        let bracketed = above(&lo) != above(&hi);
        let mid = midpoint(s.lo, s.hi, integer);
        s.done = !bracketed || s.hi - s.lo <= precision || mid <= s.lo || mid >= s.hi;
    }
}

/// Writes a round's runs as one part (nothing when there are none).
pub(crate) fn write_outcomes(
    store: &Store,
    layout: &Layout,
    metadata: &PartMetadata,
    outcomes: &[Outcome],
) -> Result<(), StoreError> {
    if outcomes.is_empty() {
        return Ok(());
    }
    let mut runs = layout.runs_frame(outcomes).map_err(StoreError::Batch)?;
    let mut series = layout.series_frame(outcomes).map_err(StoreError::Batch)?;
    let part = store.next_part(Shard::WHOLE)?;
    store.write_batch(Shard::WHOLE, part, &mut runs, &mut series, metadata)
}

/// A refinement stopped by a signal between its steps: the manifest says
/// `interrupted`, and the command that finishes it (it reuses every run
/// written) is printed.
pub(crate) fn stopped(
    store: &Store,
    manifest: &mut crate::store::Manifest,
    out: &std::path::Path,
    signal: i32,
) -> Result<ExitCode, RefineError> {
    let (ok, failed) = finish_manifest(store, manifest, "interrupted", false)?;
    eprintln!(
        "interrupted: {} runs are written. Resume with (the runs written are reused):",
        ok + failed
    );
    eprintln!("  {}", crate::runner::resume_command(manifest, out));
    Ok(ExitCode::from(crate::signals::exit_code(signal)))
}

/// What differs between a refinement that `resume` finishes, of `grid`,
/// and the results of manifest `m`: the grid's changes, and the command's
/// (another axis, precision, threshold or `--set`).
pub(crate) fn differences(grid: &Grid, resume: &Resume, m: &crate::store::Manifest) -> Vec<String> {
    let mut changes = grid.changes_since(m).unwrap_or_default();
    if let Some(before) = &m.resume
        && before.command != resume.command
    {
        changes.push(format!(
            "they were made by `{}`, this is `{}`",
            before.command, resume.command
        ));
    }
    changes
}

/// The `sweep refine` command of `args` with the bisection's `flags`
/// (empty for a boundary search): what finishes it.
pub(crate) fn refine_command(args: &RefineArgs, flags: &str) -> Resume {
    let sets: String = (args.sets.iter())
        .map(|s| format!(" --set {}", crate::slurm::shell_quote(s)))
        .collect();
    Resume {
        command: format!(
            "sweep refine {}{flags}{sets}",
            crate::slurm::shell_quote(&args.grid.display().to_string()),
        ),
        then: String::new(),
    }
}

/// The earlier versions of the tool whose runs a refinement reuses;
/// refused unless `--allow-version-change`.
pub(crate) fn reused_versions(
    store: &Store,
    args: &RefineArgs,
) -> Result<Vec<String>, crate::error::DirError> {
    crate::runner::earlier_versions(
        store,
        Shard::WHOLE,
        args.allow_version_change,
        "choose another --out to start over",
    )
}

/// What a run says about recovery.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    /// The run failed: no metrics.
    Failed,
    /// It cannot show recovery ([`analysis::load::cannot_show_recovery`],
    /// as the report's `Sweep::without_verdict`).
    None,
    Recovered(bool),
}

impl Verdict {
    fn of(recovered: Option<bool>, censored_s: Option<f64>) -> Verdict {
        match recovered {
            None => Verdict::Failed,
            Some(r) if censored_s.is_some_and(|c| analysis::load::cannot_show_recovery(r, c)) => {
                Verdict::None
            }
            Some(r) => Verdict::Recovered(r),
        }
    }

    /// The verdict of a run just made, on the recovery of `group`'s users
    /// (the grid's `[report] group`) or of every user's.
    pub(crate) fn of_outcome(o: &Outcome, group: Option<&str>) -> Verdict {
        let Ok(r) = &o.result else {
            return Verdict::Failed;
        };
        let (recovery, censor) = match group.map(|g| r.groups.iter().find(|s| s.name == g)) {
            None => (r.recovery_s, r.recovery_censor_s),
            Some(Some(g)) => (g.recovery_s, g.recovery_censor_s),
            // As a run read back without the group's columns (the grid
            // refuses a group its scenario has not).
            Some(None) => return Verdict::Failed,
        };
        Verdict::of(Some(recovery.is_some()), Some(recovery.unwrap_or(censor)))
    }
}

/// Results already in the output directory: run id -> its verdict (on
/// the recovery the report reads, as [`Verdict::of_outcome`]).
pub(crate) fn known_results(
    store: &Store,
    report: &analysis::manifest::ReportOptions,
) -> Result<HashMap<String, Verdict>, StoreError> {
    let (recovered, censored) = (
        report.column_of("recovered"),
        report.column_of("recovery_censored_s"),
    );
    let mut known = HashMap::new();
    for part in store.read_parts(None, &["run_id", &recovered, &censored])? {
        let censored = part.f64(&censored)?;
        for ((id, r), c) in (part.str("run_id")?.iter())
            .zip(part.bool(&recovered)?.iter())
            .zip(censored.iter())
        {
            if let Some(id) = id {
                known.insert(id.to_string(), Verdict::of(r, c));
            }
        }
    }
    Ok(known)
}

/// A level as a person reads it (`naive`, not `"naive"`).
fn level_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The slice's level of each of the other axes (a zip's values joined).
fn slice_label(grid: &Grid, others: &[usize], s: &Slice) -> Vec<String> {
    others
        .iter()
        .map(|i| {
            let dim = &grid.dimensions[*i];
            dim.paths
                .iter()
                .map(|p| {
                    s.point
                        .iter()
                        .find(|(k, _)| k == p)
                        .map_or("?".to_string(), |(_, v)| level_text(v))
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect()
}

/// Where the slice's P(not recovered) crosses the threshold, once both
/// ends of its bracket are estimated.
fn crossing(s: &Slice, threshold: f64) -> Option<Crossing> {
    if !s.stopped_at.is_empty() {
        return None;
    }
    let (lo, hi) = (s.p_lo?, s.p_hi?);
    Some(match (lo.p() >= threshold, hi.p() >= threshold) {
        (a, b) if a != b => Crossing::Between { lo: s.lo, hi: s.hi },
        (true, _) => Crossing::AboveEverywhere,
        (false, _) => Crossing::BelowEverywhere,
    })
}

fn boundary_table(
    grid: &Grid,
    others: &[usize],
    slices: &[Slice],
    axis: &str,
    threshold: f64,
) -> String {
    let mut heads = other_heads(grid, others);
    heads.extend([
        format!("{axis} low"),
        "P low".to_string(),
        format!("{axis} high"),
        "P high".to_string(),
        "boundary".to_string(),
    ]);
    let mut md = format!(
        "Boundary of P(not recovered) = {threshold} along `{axis}` ({} seeds per value; Wilson 95% intervals)\n\n| {} |\n|{}\n",
        grid.seeds.len(),
        heads.join(" | "),
        "---|".repeat(heads.len())
    );
    let show = |e: Option<Estimate>| {
        e.map_or("-".to_string(), |e| {
            let (l, h) =
                analysis::stats::wilson95(e.not_recovered, e.runs).unwrap_or((f64::NAN, f64::NAN));
            format!("{:.2} [{l:.2}, {h:.2}]", e.p())
        })
    };
    for s in slices {
        let stops: Vec<String> = (s.stopped_at.iter())
            .map(|(x, n, why)| match why {
                Stop::Failed => format!("{n} of {} runs failed at {axis} = {x}", grid.seeds.len()),
                Stop::NoVerdict => format!(
                    "{n} of {} runs at {axis} = {x} cannot show recovery (the trigger ends too close to the end of the arrivals, or no user arrives after it)",
                    grid.seeds.len()
                ),
            })
            .collect();
        let boundary = if !stops.is_empty() {
            format!("none: {}", stops.join("; "))
        } else {
            match crossing(s, threshold) {
                Some(Crossing::Between { lo, hi }) => format!("{:.4}", (lo + hi) / 2.0),
                Some(Crossing::AboveEverywhere) => {
                    format!("no crossing ({threshold} or more throughout)")
                }
                Some(Crossing::BelowEverywhere) | None => {
                    format!("no crossing (below {threshold} throughout)")
                }
            }
        };
        let mut cells = slice_label(grid, others, s);
        cells.extend([
            format!("{}", s.lo),
            show(s.p_lo),
            format!("{}", s.hi),
            show(s.p_hi),
            boundary,
        ]);
        md.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    md
}

/// The column head of each other axis (a zip's paths joined by `+`).
fn other_heads(grid: &Grid, others: &[usize]) -> Vec<String> {
    others
        .iter()
        .map(|i| grid.dimensions[*i].paths.join("+"))
        .collect()
}

/// The plot's data: other axis `x` along x (its levels in grid order), one
/// line per combination of the rest (`path=level, ...`), each slice's
/// crossing at its level; without other axes, one point.
fn boundary_plot(
    heads: &[String],
    labels: &[Vec<String>],
    x: usize,
    slices: &[Slice],
    axis: &str,
    threshold: f64,
    range: (f64, f64),
) -> BoundaryPlot {
    let mut x_levels: Vec<String> = Vec::new();
    let mut lines: Vec<BoundaryLine> = Vec::new();
    for (s, label) in slices.iter().zip(labels) {
        let Some(c) = crossing(s, threshold) else {
            continue;
        };
        let level = label.get(x).cloned().unwrap_or_else(|| "all".to_string());
        let xi = x_levels
            .iter()
            .position(|l| *l == level)
            .unwrap_or_else(|| {
                x_levels.push(level);
                x_levels.len() - 1
            });
        let rest = heads
            .iter()
            .zip(label)
            .enumerate()
            .filter(|(i, _)| *i != x)
            .map(|(_, (h, v))| format!("{h}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        match lines.iter_mut().find(|l| l.label == rest) {
            Some(l) => l.points.push((xi, c)),
            None => lines.push(BoundaryLine {
                label: rest,
                points: vec![(xi, c)],
            }),
        }
    }
    BoundaryPlot {
        title: format!("Where P(not recovered) crosses {threshold}"),
        x_label: heads
            .get(x)
            .cloned()
            .unwrap_or_else(|| "(no other axis)".to_string()),
        x_levels,
        y_label: format!("{axis} at the crossing"),
        y_range: range,
        threshold,
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(lo: f64, hi: f64, p_lo: u64, p_hi: u64) -> Slice {
        let est = |n| {
            Some(Estimate {
                not_recovered: n,
                runs: 4,
            })
        };
        Slice {
            point: Vec::new(),
            lo,
            hi,
            p_lo: est(p_lo),
            p_hi: est(p_hi),
            done: true,
            stopped_at: Vec::new(),
        }
    }

    /// The plot draws every slice: a crossing at its bracket, the two kinds
    /// of no crossing as such, along the first other axis' levels in grid
    /// order, one line per level of the rest, labelled with its path.
    #[test]
    fn the_boundary_plot_has_every_slice_and_its_kind_of_crossing() {
        let heads = ["client.rate_per_s".to_string(), "strategy".to_string()];
        let labels: Vec<Vec<String>> = [
            ["250", "naive"],
            ["400", "naive"],
            ["250", "protected"],
            ["400", "protected"],
        ]
        .iter()
        .map(|l| l.map(String::from).to_vec())
        .collect();
        let slices = [
            slice(1.0, 1.5, 1, 3),
            slice(0.5, 8.0, 4, 4),
            slice(0.5, 8.0, 0, 1),
            slice(2.0, 2.25, 0, 2),
        ];
        let plot = boundary_plot(
            &heads,
            &labels,
            0,
            &slices,
            "svc_b.slow.duration_s",
            0.5,
            (0.5, 8.0),
        );
        assert_eq!(plot.x_label, "client.rate_per_s");
        assert_eq!(plot.x_levels, ["250", "400"]);
        assert_eq!(plot.y_label, "svc_b.slow.duration_s at the crossing");
        assert_eq!(plot.y_range, (0.5, 8.0));
        assert_eq!(
            plot.lines,
            [
                BoundaryLine {
                    label: "strategy=naive".into(),
                    points: vec![
                        (0, Crossing::Between { lo: 1.0, hi: 1.5 }),
                        (1, Crossing::AboveEverywhere)
                    ],
                },
                BoundaryLine {
                    label: "strategy=protected".into(),
                    points: vec![
                        (0, Crossing::BelowEverywhere),
                        (1, Crossing::Between { lo: 2.0, hi: 2.25 })
                    ],
                },
            ]
        );
    }

    /// Any other axis can be the x axis; the lines are the rest.
    #[test]
    fn the_x_axis_can_be_any_other_axis() {
        let heads = ["strategy".to_string(), "client.rate_per_s".to_string()];
        let labels: Vec<Vec<String>> = [["naive", "250"], ["naive", "400"], ["protected", "250"]]
            .iter()
            .map(|l| l.map(String::from).to_vec())
            .collect();
        let slices = [
            slice(1.0, 1.5, 1, 3),
            slice(0.5, 8.0, 4, 4),
            slice(0.5, 8.0, 0, 1),
        ];
        let plot = boundary_plot(&heads, &labels, 1, &slices, "a", 0.5, (0.5, 8.0));
        assert_eq!(plot.x_label, "client.rate_per_s");
        assert_eq!(plot.x_levels, ["250", "400"]);
        let lines: Vec<(&str, usize)> = (plot.lines.iter())
            .map(|l| (l.label.as_str(), l.points.len()))
            .collect();
        assert_eq!(lines, [("strategy=naive", 2), ("strategy=protected", 1)]);
    }

    /// Without other axes the boundary is one point, not an unlabelled x.
    #[test]
    fn a_grid_of_one_axis_has_one_labelled_point() {
        let plot = boundary_plot(
            &[],
            &[vec![]],
            0,
            &[slice(1.0, 2.0, 0, 4)],
            "a",
            0.5,
            (0.0, 4.0),
        );
        assert_eq!(plot.x_levels, ["all"]);
        assert_eq!(plot.lines.len(), 1);
        assert_eq!(plot.lines[0].label, "");
    }
}
