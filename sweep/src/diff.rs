//! `sweep diff DIR_A DIR_B`: how the results of two sweeps of the same
//! points differ, point by point (`compare` is the exact-equality check).
//! The points pair up by their levels: B may be the same grid with other
//! fixed settings (`[set]`, `--set`) or another scenario file, a change
//! applied to every point, which the report names.
//!
//! Runs pair up by their point's levels and their seed: a run's random
//! numbers come from its seed alone, so both sweeps drew the same ones, and
//! the seed-to-seed noise cancels in the per-seed difference B - A. A metric moved at a point when the 95%
//! t-interval of the mean per-seed difference excludes 0 (a paired t-test
//! at 5%); with one seed there is no noise estimate and any difference
//! counts. A point changed outcome when it went between recovered (every
//! seed), not recovered (none) and mixed.
//!
//! A sweep not complete (interrupted, or still being written: fewer runs
//! than its manifest plans) is compared by the runs it holds, as its report
//! is, and the diff says so first, with the command that runs the rest:
//! the points and seeds it lacks are not yet run, not levels it leaves out.

use crate::error::{DiffError, Error};
use crate::store::Store;
use analysis::tables::markdown_text;
use clap::Args;
use polars::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct DiffArgs {
    /// The sweep's output directory to compare from (e.g. out/ch37).
    pub a: PathBuf,
    /// The output directory to compare with it: the same points (axes and
    /// levels) and seeds; the fixed settings and the scenario may differ.
    /// A sweep not complete (interrupted, or still running) is compared by
    /// the runs it holds, as its report is, and said so with the command
    /// that runs the rest.
    pub b: PathBuf,
    /// The Markdown report [default: DIR_B/analysis/diff.md, never written
    /// through a symbolic link].
    #[arg(long)]
    pub report: Option<PathBuf>,
}

/// One sweep's runs, by point.
struct Side {
    dir: PathBuf,
    /// Its axis paths, and per run (in grid order) its point's id, seed,
    /// levels (by axis) and results.
    axes: Vec<String>,
    rows: Vec<(String, u64, Vec<String>, Run)>,
    /// Points in grid order, each by its levels over both sweeps' axes
    /// ([`Side::pair_by`]), and its label (`path=value ...`).
    points: Vec<(Levels, String)>,
    /// Point -> its seeds.
    by_point: HashMap<Levels, Vec<u64>>,
    /// (point, seed) -> the run's results.
    runs: HashMap<(Levels, u64), Run>,
    /// The client group whose users its user-level metrics are
    /// (`[report] group`; `None`: every user's).
    group: Option<String>,
    /// What every point shares: the scenario (as the grid names it, and
    /// its content's id), and each fixed setting's path and value.
    scenario: (String, String),
    fixed: Vec<(String, String)>,
    /// Where the sweep is not complete: what it holds and how to finish it.
    partial: Option<Partial>,
}

/// A sweep with fewer runs than its manifest plans, as its report says it.
struct Partial {
    /// `37 of the 120 planned runs` ([`analysis::report::partial_runs`]).
    held: String,
    /// Its manifest's status (`interrupted`, `running`).
    status: String,
    /// The command that runs the rest.
    resume: String,
    /// The seeds its grid plans at every point (`None`: unreadable).
    seeds: Option<Vec<u64>>,
}

/// A point's values at the paths that pair the points, in their order:
/// compared value by value (a joined label could read alike for two
/// points whose levels hold the separator).
type Levels = Vec<String>;

/// What is compared of one run.
struct Run {
    failed: bool,
    recovered: Option<bool>,
    /// The compared metrics' values, in their order (null: failed run).
    values: Vec<Option<f64>>,
}

/// What moved at one point.
struct Moved {
    point: String,
    metric: String,
    a: f64,
    b: f64,
    /// The 95% interval of the mean per-seed difference (None: one seed).
    ci: Option<(f64, f64)>,
}

pub fn diff(args: &DiffArgs) -> Result<ExitCode, Error> {
    Ok(run(args)?)
}

fn run(args: &DiffArgs) -> Result<ExitCode, DiffError> {
    let metrics = compared_metrics(&args.a)?;
    let mut a = read(&args.a, &metrics)?;
    let mut b = read(&args.b, &metrics)?;
    // The report goes into B's `analysis/`, as B's own report does: never
    // through a link (refused before anything is compared).
    let report = match &args.report {
        Some(path) => path.clone(),
        None => {
            Store::new(&args.b).refuse_linked_dirs()?;
            let path = args.b.join("analysis").join("diff.md");
            crate::store::refuse_link(&path).map_err(write_error)?;
            path
        }
    };
    // Over both sweeps' axes: a path one sweep varies and the other fixes
    // pairs the fixed sweep's points with those of its value.
    let mut paths = a.axes.clone();
    paths.extend(b.axes.iter().filter(|p| !a.axes.contains(p)).cloned());
    a.pair_by(&paths)?;
    b.pair_by(&paths)?;
    if a.group != b.group {
        let users = |g: &Option<String>| {
            g.as_ref().map_or("all users".to_string(), |g| {
                format!("client group `{g}`'s users")
            })
        };
        return Err(DiffError::Groups {
            a: args.a.clone(),
            b: args.b.clone(),
            users_a: users(&a.group),
            users_b: users(&b.group),
        });
    }
    let notes = check_same_points(args, &a, &b)?;
    let mut changed: Vec<[String; 3]> = Vec::new();
    let mut moved: Vec<Moved> = Vec::new();
    let mut undefined: Vec<[String; 3]> = Vec::new();
    let mut paired = 0;
    for (levels, label) in &a.points {
        // A point of the sweep that varies an axis the other fixes, at
        // another level: left out, and said.
        if !b.by_point.contains_key(levels) {
            continue;
        }
        let runs: Vec<(&Run, &Run)> = a.by_point[levels]
            .iter()
            .filter_map(|seed| {
                let key = (levels.clone(), *seed);
                Some((&a.runs[&key], b.runs.get(&key)?))
            })
            .collect();
        // An incomplete sweep may hold none of the other's seeds there yet.
        if runs.is_empty() {
            continue;
        }
        paired += 1;
        let oa = outcome_text(&runs.iter().map(|(ra, _)| ra.outcome()).collect::<Vec<_>>());
        let ob = outcome_text(&runs.iter().map(|(_, rb)| rb.outcome()).collect::<Vec<_>>());
        if oa != ob {
            changed.push([label.clone(), oa, ob]);
        }
        // Runs ok on both sides: a metric null on one side only (a p99
        // without successes, a recovery time not observed) has changed.
        let both_ok: Vec<&(&Run, &Run)> = runs
            .iter()
            .filter(|(ra, rb)| !ra.failed && !rb.failed)
            .collect();
        for (k, metric) in metrics.iter().enumerate() {
            // NaN (which the tool never writes: it writes null) is no value.
            let defined = |r: &Run| r.values[k].is_some_and(f64::is_finite);
            let in_a = (both_ok.iter())
                .filter(|(ra, rb)| defined(ra) && !defined(rb))
                .count();
            let in_b = (both_ok.iter())
                .filter(|(ra, rb)| !defined(ra) && defined(rb))
                .count();
            if in_a + in_b > 0 {
                undefined.push([
                    label.clone(),
                    metric.clone(),
                    format!(
                        "of {n} seeds: {in_a} with a value in A only, {in_b} in B only",
                        n = both_ok.len()
                    ),
                ]);
            }
            let pairs: Vec<(f64, f64)> = runs
                .iter()
                .filter_map(|(ra, rb)| Some((ra.values[k]?, rb.values[k]?)))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            let support = analysis::stats::Support::of_metric(metric, false);
            if let Some(m) = moved_beyond_noise(&pairs, support) {
                moved.push(Moved {
                    point: label.clone(),
                    metric: metric.clone(),
                    ..m
                });
            }
        }
    }
    let mut md = report_markdown(
        args,
        paired,
        &settings_changed(&a, &b),
        &changed,
        &moved,
        &undefined,
    );
    for note in notes.iter().rev() {
        let at = md.find("\n\n").map_or(0, |i| i + 2);
        md.insert_str(at, &format!("{note}\n\n"));
    }
    if let Some(g) = &a.group {
        let at = md.find("\n\n").map_or(0, |i| i + 2);
        md.insert_str(
            at,
            &format!("Users: client group `{g}`'s (`[report] group`): the outcome and the user-level metrics are its own users'.\n\n"),
        );
    }
    let path = report;
    if args.report.is_some() {
        // A path the user named, wherever it is.
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| DiffError::Write {
                path: path.clone(),
                source,
            })?;
        }
        std::fs::write(&path, &md).map_err(|source| DiffError::Write {
            path: path.clone(),
            source,
        })?;
    } else {
        crate::store::write_inside(&path, md.as_bytes(), None).map_err(write_error)?;
    }
    print!("{}", crate::table::terminal_from_markdown(&md));
    println!("report: {}", path.display());
    Ok(
        if changed.is_empty() && moved.is_empty() && undefined.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}

impl Run {
    /// Failed (`Err`), or its recovery (`None`: undefined).
    fn outcome(&self) -> Result<Option<bool>, ()> {
        if self.failed {
            Err(())
        } else {
            Ok(self.recovered)
        }
    }
}

/// Of a point's runs: `recovered` (every seed), `not recovered` (none) or
/// `k of n recovered`, and how many failed (`, 1 failed`): a run that
/// fails has changed, whatever the other seeds did.
fn outcome_text(runs: &[Result<Option<bool>, ()>]) -> String {
    let flags: Vec<bool> = runs.iter().filter_map(|r| r.ok().flatten()).collect();
    let failed = runs.iter().filter(|r| r.is_err()).count();
    let k = flags.iter().filter(|f| **f).count();
    let recovery = match (k, flags.len()) {
        (_, 0) if failed > 0 => return format!("{failed} failed, no ok run"),
        (_, 0) => "no ok run".to_string(),
        (k, n) if k == n => "recovered".to_string(),
        (0, _) => "not recovered".to_string(),
        (k, n) => format!("{k} of {n} recovered"),
    };
    if failed > 0 {
        format!("{recovery}, {failed} failed")
    } else {
        recovery
    }
}

/// The means of A and B and the interval of the mean per-seed difference,
/// when that interval excludes 0 (or, with one pair, when they differ).
fn moved_beyond_noise(pairs: &[(f64, f64)], support: analysis::stats::Support) -> Option<Moved> {
    let n = pairs.len() as f64;
    let a = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let b = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let d: Vec<f64> = pairs.iter().map(|(x, y)| y - x).collect();
    // A difference of two values in [low, high] lies within +-(high - low):
    // a rate's within [-1, 1]. Clipping never lowers coverage.
    let (low, high) = support.range();
    let ci =
        analysis::stats::mean_ci95(&d).map(|(lo, hi)| (lo.max(low - high), hi.min(high - low)));
    let moved = match (pairs.len(), ci) {
        (0, _) => false,
        (_, Some((lo, hi))) => lo > 0.0 || hi < 0.0,
        (_, None) => d.iter().any(|x| *x != 0.0),
    };
    moved.then(|| Moved {
        point: String::new(),
        metric: String::new(),
        a,
        b,
        ci,
    })
}

/// The report's file could not be written: the file (or its temporary
/// twin) and why.
fn write_error(e: analysis::IoError) -> DiffError {
    DiffError::Write {
        path: e.path,
        source: e.source,
    }
}

/// The report's metrics (as `analysis` chooses them for DIR_A) that are
/// numbers; `recovered` is the outcome, compared on its own.
fn compared_metrics(dir: &Path) -> Result<Vec<String>, DiffError> {
    Ok(analysis::tables::main_metrics(&load(dir)?)
        .into_iter()
        .filter(|m| m != "recovered")
        .collect())
}

/// The sweep in `dir` as the report reads it.
fn load(dir: &Path) -> Result<analysis::load::Sweep, DiffError> {
    analysis::load::Sweep::load(dir).map_err(|e| DiffError::Load {
        dir: dir.to_path_buf(),
        message: e.to_string(),
    })
}

fn read(dir: &Path, metrics: &[String]) -> Result<Side, DiffError> {
    let store = Store::new(dir);
    // Shards not merged yet have no whole grid's manifest to pair points by.
    (store.refuse_shards_only(&store.manifests()?)).map_err(|e| DiffError::Refused(Box::new(e)))?;
    let df = store.read_runs()?.ok_or_else(|| DiffError::NoRuns {
        dir: dir.to_path_buf(),
    })?;
    let table = |source| DiffError::Table {
        dir: dir.to_path_buf(),
        source,
    };
    // In grid order, so that points are listed as the grid enumerates them.
    let df = df
        .sort(["run_index"], SortMultipleOptions::default())
        .map_err(table)?;
    let sweep = load(dir)?;
    let partial = analysis::report::partial_runs(&sweep).map(|held| {
        let m = &sweep.manifest;
        Partial {
            held,
            seeds: crate::grid::planned_seeds(&m.grid_text),
            status: m.status.clone(),
            resume: crate::runner::resume_command(m, dir),
        }
    });
    let manifest = sweep.manifest;
    let text = |name: &str| -> Result<Vec<Option<String>>, DiffError> {
        let c = df.column(name).map_err(table)?;
        Ok((0..c.len())
            .map(|i| match c.get(i) {
                Ok(AnyValue::Null) => None,
                // Floats exactly (shortest round trip): the levels pair
                // the points, and Polars' display rounds to 6 decimals.
                Ok(AnyValue::Float64(x)) => Some(x.to_string()),
                Ok(AnyValue::Float32(x)) => Some(x.to_string()),
                Ok(v) => Some(v.get_str().map_or_else(|| v.to_string(), str::to_string)),
                Err(_) => None,
            })
            .collect())
    };
    let points = text("point_id")?;
    let seeds: Vec<Option<u64>> = (df.column("seed").map_err(table)?)
        .cast(&DataType::UInt64)
        .map_err(table)?
        .u64()
        .map_err(table)?
        .iter()
        .collect();
    // A design's points are told apart by their sample too: a Morris
    // trajectory comes back to levels another point has.
    let sample = crate::grid::SAMPLE_INDEX.to_string();
    let axes: Vec<(String, Vec<Option<String>>)> = (manifest.axes.iter())
        .chain(manifest.design.as_ref().map(|_| &sample))
        .filter(|a| df.column(a).is_ok())
        .map(|a| Ok((a.clone(), text(a)?)))
        .collect::<Result<_, DiffError>>()?;
    let failed: Vec<bool> = text("status")?
        .iter()
        .map(|s| s.as_deref() == Some("failed"))
        .collect();
    // With `[report] group`, the group's users' metrics, as the report's.
    let column = |m: &str| manifest.report.column_of(m);
    let recovered: Vec<Option<bool>> = match df.column(&column("recovered")) {
        Ok(c) => c.bool().map_err(table)?.iter().collect(),
        Err(_) => vec![None; df.height()],
    };
    let values: Vec<Vec<Option<f64>>> = metrics
        .iter()
        .map(|m| match df.column(&column(m)) {
            Ok(c) => Ok(c
                .cast(&DataType::Float64)
                .map_err(table)?
                .f64()
                .map_err(table)?
                .iter()
                .collect()),
            Err(_) => Ok(vec![None; df.height()]),
        })
        .collect::<Result<_, DiffError>>()?;
    let fixed: Vec<(String, Vec<Option<String>>)> = (manifest.fixed.iter())
        .filter(|f| df.column(f).is_ok())
        .map(|f| Ok((f.clone(), text(f)?)))
        .collect::<Result<_, DiffError>>()?;
    let mut side = Side {
        dir: dir.to_path_buf(),
        axes: axes.iter().map(|(a, _)| a.clone()).collect(),
        rows: Vec::new(),
        points: Vec::new(),
        by_point: HashMap::new(),
        runs: HashMap::new(),
        group: manifest.report.group.clone(),
        scenario: (manifest.scenario.clone(), manifest.scenario_id.clone()),
        fixed: (fixed.iter())
            .map(|(f, v)| (f.clone(), shown(v.first().cloned().flatten())))
            .collect(),
        partial,
    };
    for i in 0..df.height() {
        let (Some(point), Some(seed)) = (&points[i], seeds[i]) else {
            continue;
        };
        let levels = axes.iter().map(|(_, v)| shown(v[i].clone())).collect();
        let run = Run {
            failed: failed[i],
            recovered: recovered[i],
            values: values.iter().map(|v| v[i]).collect(),
        };
        side.rows.push((point.clone(), seed, levels, run));
    }
    Ok(side)
}

impl Side {
    /// The value every point of this sweep has at `path`: its fixed
    /// setting, or the scenario's.
    fn fixed_value(&self, path: &str) -> String {
        (self.fixed.iter())
            .find(|(p, _)| p == path)
            .map_or("(the scenario's)".to_string(), |(_, v)| v.clone())
    }

    /// Indexes the runs by their point's levels at `paths` (an axis of
    /// this sweep or a value all its points share) and seed. Two points
    /// with the same levels (a design's axes not among the columns) could
    /// not be paired.
    fn pair_by(&mut self, paths: &[String]) -> Result<(), DiffError> {
        let mut id_of: HashMap<Levels, String> = HashMap::new();
        for (point, seed, levels, run) in std::mem::take(&mut self.rows) {
            let key: Levels = (paths.iter())
                .map(|p| match self.axes.iter().position(|a| a == p) {
                    Some(k) => levels[k].clone(),
                    None => self.fixed_value(p),
                })
                .collect();
            let label = || {
                (paths.iter().zip(&key))
                    .map(|(p, value)| format!("{p}={value}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            match id_of.get(&key) {
                Some(id) if *id != point => {
                    return Err(DiffError::SameLevels {
                        dir: self.dir.clone(),
                        point: label(),
                    });
                }
                Some(_) => {}
                None => {
                    id_of.insert(key.clone(), point);
                    self.points.push((key.clone(), label()));
                }
            }
            self.by_point.entry(key.clone()).or_default().push(seed);
            self.runs.insert((key, seed), run);
        }
        Ok(())
    }
}

/// A level or fixed value as the report writes it: a null cap `unbounded`.
fn shown(value: Option<String>) -> String {
    value.unwrap_or_else(|| "unbounded".to_string())
}

/// What B changes for every point: the scenario, and each fixed setting
/// set on one side only or to another value, as `path: A -> B`.
fn settings_changed(a: &Side, b: &Side) -> Vec<String> {
    let mut changed = Vec::new();
    // By content: the same file named another way (`./s.toml`, a copy)
    // changes nothing.
    match (&a.scenario, &b.scenario) {
        ((_, ia), (_, ib)) if ia == ib => {}
        ((na, _), (nb, _)) if na != nb => changed.push(format!("scenario: {na} -> {nb}")),
        ((name, _), _) => changed.push(format!("scenario: {name}, its content edited")),
    }
    // A path either sweep varies is in the points' levels instead.
    let mut paths: Vec<&String> = (a.fixed.iter().chain(&b.fixed))
        .map(|(p, _)| p)
        .filter(|p| !a.axes.contains(p) && !b.axes.contains(p))
        .collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        let (va, vb) = (a.fixed_value(path), b.fixed_value(path));
        if va != vb {
            changed.push(format!("{path}: {va} -> {vb}"));
        }
    }
    changed
}

/// The sweeps must hold the same points and runs (point and seed), or
/// one of them a part of the other's points, all paired: a sweep that
/// fixes an axis of the other (`--set strategy=protected`) pairs with that
/// level's points, and the other's points are left out. A sweep not
/// complete lacks points and seeds it has not run yet: the runs both hold
/// are compared. The notes returned say what was left out, and why.
fn check_same_points(args: &DiffArgs, a: &Side, b: &Side) -> Result<Vec<String>, DiffError> {
    let only = |x: &Side, y: &Side| -> Vec<String> {
        (x.points.iter())
            .filter(|(levels, _)| !y.by_point.contains_key(levels))
            .map(|(_, label)| label.clone())
            .collect()
    };
    let (only_a, only_b) = (only(a, b), only(b, a));
    let sides = [(&args.a, &only_a, b), (&args.b, &only_b, a)];
    let shared = a.points.len() - only_a.len();
    // Points that a complete sweep lacks are levels it does not hold; an
    // incomplete one may not have run them yet.
    let unexplained =
        |points: &[String], lacking: &Side| !points.is_empty() && lacking.partial.is_none();
    if shared == 0 || (unexplained(&only_a, b) && unexplained(&only_b, a)) {
        let problems = (sides.iter())
            .filter_map(|(dir, points, _)| {
                let first = points.first()?;
                Some(format!(
                    "{} point{} only in {} (e.g. {first})",
                    points.len(),
                    if points.len() == 1 { "" } else { "s" },
                    dir.display()
                ))
            })
            .collect();
        return Err(DiffError::Points {
            a: args.a.clone(),
            b: args.b.clone(),
            problems,
        });
    }
    // The runs of the points in both pair by seed, but for those a sweep
    // not complete has not run yet.
    for (x, y) in [(a, b), (b, a)] {
        // A sweep not complete has not run every seed yet: its grid says
        // which it will, and those are the ones to pair with.
        let unpaired = match &y.partial {
            None => first_unpaired(x, y),
            Some(p) => p.seeds.as_ref().and_then(|planned| {
                (x.points.iter()).find(|(levels, _)| {
                    y.by_point.contains_key(levels)
                        && x.by_point[levels].iter().any(|s| !planned.contains(s))
                })
            }),
        };
        if let Some((levels, label)) = unpaired {
            // Each sweep's seeds; where both hold every seed at some point
            // (their lists would read the same), those of the point where
            // they differ.
            let all = |side: &Side| match side.partial.as_ref().and_then(|p| p.seeds.as_ref()) {
                Some(planned) => format!("{} (its grid's plan)", seed_list(planned)),
                None => seed_list(
                    &(side.runs.keys())
                        .map(|(_, seed)| *seed)
                        .collect::<Vec<_>>(),
                ),
            };
            let at = |side: &Side| seed_list(&side.by_point[levels]);
            let (seeds_a, seeds_b) = match (all(a), all(b)) {
                (sa, sb) if sa != sb => (sa, sb),
                _ => (format!("{} at {label}", at(a)), at(b)),
            };
            return Err(DiffError::Seeds {
                a: args.a.clone(),
                b: args.b.clone(),
                seeds_a,
                seeds_b,
            });
        }
    }
    let mut notes = Vec::new();
    for (dir, side, other, other_dir) in [(&args.a, a, b, &args.b), (&args.b, b, a, &args.a)] {
        let Some(p) = &side.partial else { continue };
        let pairs = (side.runs.keys())
            .filter(|k| other.runs.contains_key(*k))
            .count();
        let left_out = other.runs.len() - pairs;
        notes.push(format!(
            "{} is incomplete: {} (its manifest says {}). Compared: the {} both sweeps hold; {} of {} that it does not hold yet {} left out. `{}` runs the rest.",
            dir.display(),
            p.held,
            p.status,
            crate::progress::counted(pairs as u64, "run", "runs"),
            crate::progress::counted(left_out as u64, "run", "runs"),
            other_dir.display(),
            if left_out == 1 { "is" } else { "are" },
            p.resume,
        ));
    }
    if let Some((dir, points, _)) =
        (sides.iter()).find(|(_, points, lacking)| unexplained(points, lacking))
    {
        notes.push(format!(
            "Compared: the {shared} points in both. {} more point{} of {} {} no counterpart in the other sweep, which holds fewer levels of its axes (e.g. {}): left out.",
            points.len(),
            if points.len() == 1 { "" } else { "s" },
            dir.display(),
            if points.len() == 1 { "has" } else { "have" },
            points[0],
        ));
    }
    Ok(notes)
}

/// The first point of `x` that `y` holds without a run of each of its
/// seeds there.
fn first_unpaired<'a>(x: &'a Side, y: &Side) -> Option<&'a (Levels, String)> {
    x.points.iter().find(|(levels, _)| {
        y.by_point.contains_key(levels)
            && (x.by_point[levels].iter())
                .any(|seed| !y.runs.contains_key(&(levels.clone(), *seed)))
    })
}

/// `seeds` (a point's), runs of consecutive seeds as ranges: `1-3, 7`
/// (the first 10 ranges, then how many more).
fn seed_list(seeds: &[u64]) -> String {
    let mut seeds = seeds.to_vec();
    seeds.sort_unstable();
    seeds.dedup();
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for s in seeds {
        match ranges.last_mut() {
            Some((_, last)) if s == *last + 1 => *last = s,
            _ => ranges.push((s, s)),
        }
    }
    let shown: Vec<String> = (ranges.iter().take(10))
        .map(|&(first, last)| match last - first {
            0 => first.to_string(),
            1 => format!("{first}, {last}"),
            _ => format!("{first}-{last}"),
        })
        .collect();
    match ranges.len() {
        n if n > 10 => format!("{}, ... ({} more ranges)", shown.join(", "), n - 10),
        _ => shown.join(", "),
    }
}

fn report_markdown(
    args: &DiffArgs,
    points: usize,
    settings: &[String],
    changed: &[[String; 3]],
    moved: &[Moved],
    undefined: &[[String; 3]],
) -> String {
    let (a, b) = (args.a.display(), args.b.display());
    let mut md = format!("# {b} against {a}\n\n");
    if !settings.is_empty() {
        md.push_str("Every point of B differs from A's in:\n\n");
        for s in settings {
            md.push_str(&format!("- `{s}`\n"));
        }
        md.push('\n');
    }
    md.push_str(&format!(
        "{points} points; {} changed outcome, {} (point, metric) pairs moved beyond their seed-to-seed noise (the 95% interval of the mean per-seed difference B - A excludes 0; one seed: any difference), {} defined on one side only (null in the other, the run ok in both). A run that fails changes its point's outcome.\n\n",
        changed.len(),
        moved.len(),
        undefined.len()
    ));
    if !changed.is_empty() {
        md.push_str("## Changed outcome\n\n| point | A | B |\n|---|---|---|\n");
        for [p, oa, ob] in changed {
            md.push_str(&format!("| {} | {oa} | {ob} |\n", markdown_text(p)));
        }
        md.push('\n');
    }
    if !moved.is_empty() {
        md.push_str("## Moved beyond noise\n\n| point | metric | A | B | B - A [95%] |\n|---|---|---|---|---|\n");
        for m in moved {
            // An interval of width 0 would claim certainty: every seed
            // moved by as much.
            let ci = match m.ci {
                None => "(one seed)".to_string(),
                Some((l, h)) if l == h => "(the same in every seed)".to_string(),
                Some((l, h)) => format!("[{l:.3}, {h:.3}]"),
            };
            md.push_str(&format!(
                "| {} | {} | {:.3} | {:.3} | {:+.3} {ci} |\n",
                markdown_text(&m.point),
                m.metric,
                m.a,
                m.b,
                m.b - m.a
            ));
        }
        md.push('\n');
    }
    if !undefined.is_empty() {
        md.push_str("## Defined on one side only\n\n| point | metric | runs |\n|---|---|---|\n");
        for [p, m, n] in undefined {
            md.push_str(&format!("| {} | {m} | {n} |\n", markdown_text(p)));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shift larger than the noise of the differences moves; the same
    /// noise around no shift does not; one pair moves when it differs.
    #[test]
    fn a_metric_moves_when_the_interval_of_the_paired_difference_excludes_zero() {
        use analysis::stats::Support;
        let moved = |pairs: &[(f64, f64)]| moved_beyond_noise(pairs, Support::Real);
        let shifted = [(1.0, 2.1), (2.0, 2.9), (3.0, 4.1), (4.0, 4.9)];
        assert!(moved(&shifted).is_some());
        let noise = [(1.0, 1.1), (2.0, 1.9), (3.0, 3.1), (4.0, 3.9)];
        assert!(moved(&noise).is_none());
        assert!(moved(&[(1.0, 1.0), (2.0, 2.0)]).is_none());
        assert!(moved(&[(1.0, 1.5), (2.0, 2.5)]).is_some());
        assert!(moved(&[(1.0, 1.5)]).is_some());
        assert!(moved(&[(1.0, 1.0)]).is_none());
        // A rate's difference: its interval within [-1, 1].
        let rate = [(0.0, 1.0), (0.1, 1.0), (0.0, 0.6)];
        let wide = moved(&rate).unwrap().ci.unwrap();
        assert!(wide.1 > 1.0, "{wide:?}");
        let clipped = moved_beyond_noise(&rate, Support::Unit).unwrap().ci;
        assert_eq!(clipped, Some((wide.0, 1.0)));
    }

    #[test]
    fn outcomes_are_recovered_not_recovered_or_mixed_and_say_failed_runs() {
        let ok = |r: bool| Ok(Some(r));
        assert_eq!(outcome_text(&[ok(true), ok(true)]), "recovered");
        assert_eq!(outcome_text(&[ok(false), ok(false)]), "not recovered");
        assert_eq!(
            outcome_text(&[ok(true), ok(false), ok(true)]),
            "2 of 3 recovered"
        );
        assert_eq!(
            outcome_text(&[ok(true), Err(()), ok(true)]),
            "recovered, 1 failed"
        );
        assert_eq!(outcome_text(&[Err(()), Err(())]), "2 failed, no ok run");
        assert_eq!(outcome_text(&[Ok(None)]), "no ok run");
    }

    /// A sweep of no runs yet, of the scenario `name` whose content is `id`.
    fn side(name: &str, id: &str) -> Side {
        Side {
            dir: PathBuf::from("a"),
            axes: Vec::new(),
            rows: Vec::new(),
            points: Vec::new(),
            by_point: HashMap::new(),
            runs: HashMap::new(),
            group: None,
            scenario: (name.to_string(), id.to_string()),
            fixed: Vec::new(),
            partial: None,
        }
    }

    /// The scenario changed when its content did, whatever its path's
    /// spelling; a fixed setting when its value did.
    #[test]
    fn the_settings_changed_are_those_whose_content_differs() {
        let a = side("grids/s.toml", "id1");
        let said = |b: &Side| settings_changed(&a, b);
        assert!(said(&side("grids/./s.toml", "id1")).is_empty());
        assert_eq!(
            said(&side("grids/t.toml", "id2")),
            ["scenario: grids/s.toml -> grids/t.toml"]
        );
        assert_eq!(
            said(&side("grids/s.toml", "id2")),
            ["scenario: grids/s.toml, its content edited"]
        );
        let b = Side {
            fixed: vec![("svc_b.queue_cap".to_string(), "20".to_string())],
            ..side("grids/s.toml", "id1")
        };
        assert_eq!(said(&b), ["svc_b.queue_cap: (the scenario's) -> 20"]);
    }

    /// Two points whose levels would read alike joined as text (a level
    /// holding ` name=`) are two points, not one refused as repeated.
    #[test]
    fn points_pair_by_their_levels_not_by_their_label() {
        let run = || Run {
            failed: false,
            recovered: Some(true),
            values: Vec::new(),
        };
        let level = |s: &str| s.to_string();
        let mut side = Side {
            axes: vec![level("strategy"), level("name")],
            rows: vec![
                (level("p0"), 1, vec![level("x name=y"), level("z")], run()),
                (level("p1"), 1, vec![level("x"), level("y name=z")], run()),
                (level("p1"), 2, vec![level("x"), level("y name=z")], run()),
            ],
            ..side("s.toml", "id")
        };
        side.pair_by(&side.axes.clone()).unwrap();
        let labels: Vec<&str> = side.points.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["strategy=x name=y name=z"; 2]);
        let seeds: Vec<usize> = (side.points.iter())
            .map(|(levels, _)| side.by_point[levels].len())
            .collect();
        assert_eq!(seeds, [1, 2]);
    }
}
