//! `sweep run`: executes a grid's runs on every core and streams them to
//! Parquet, surviving failures, Ctrl-C and `kill -9`.
//!
//! Workers (a rayon pool) send each finished run over a channel; this
//! thread batches them and writes a part every few hundred runs or seconds,
//! so memory stays flat and a crash loses at most one batch of work.

use crate::error::{DirError, Error, RunnerError, ShardError, StoreError};
use crate::grid::Grid;
use crate::lock::Lock;
use crate::progress::{Progress, counted, human_duration};
use crate::records::{Layout, Outcome, RunFailure};
use crate::store::{Check, Manifest, Shard, Store, count_runs, parse_shard};
use analysis::manifest::{Resume, TriggerWindow};
use clap::Args;
use rayon::prelude::*;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct RunArgs {
    /// Grid file (see grids/).
    pub grid: PathBuf,
    #[command(flatten)]
    pub overrides: crate::grid::Overrides,
    /// Output directory [default: out/<grid name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads [default: all cores].
    #[arg(long, short = 'j', value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Run only shard I of N (0-based, round-robin over the runs). Default:
    /// from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT when set.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Continue an interrupted sweep of the same grid in the output directory.
    #[arg(long, conflicts_with = "force")]
    pub resume: bool,
    /// Delete the output directory's previous results first (only the files
    /// this tool wrote).
    #[arg(long)]
    pub force: bool,
    /// Resume results written by another version of this tool (refused
    /// otherwise; the manifest keeps the earlier versions).
    #[arg(long, requires = "resume")]
    pub allow_version_change: bool,
    /// Do not write the analysis report at the end.
    #[arg(long)]
    pub no_report: bool,
    /// No progress and no notes: only errors and the results line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print a JSON summary on stdout instead of the results line and the
    /// report's table: counts, failures, paths, timings.
    #[arg(long)]
    pub json: bool,
    /// Runs per part file.
    #[arg(long, default_value_t = 1000, hide = true)]
    pub batch_runs: usize,
    /// Longest time between two part files (seconds).
    #[arg(long, default_value_t = 5.0, hide = true)]
    pub batch_secs: f64,
    /// Largest memory one run may need (e.g. 2G, 512M) [default: half the
    /// machine's memory divided by the worker threads]. A grid whose largest
    /// run is estimated above it is refused before anything runs.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_run_memory: Option<u64>,
    /// Fault injection for tests: the run with this enumeration index panics.
    #[arg(long, hide = true)]
    pub inject_panic: Option<u64>,
    /// Fault injection for tests: abort at STEP of the N-th part committed
    /// (`series-written`, ..., `index-renamed`: see crash.rs).
    #[arg(long, hide = true, value_name = "STEP:N", value_parser = crate::crash::parse)]
    pub inject_crash: Option<(&'static str, u64)>,
}

thread_local! {
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
    /// Each worker thread's run memory, reused from run to run (a run that
    /// panics leaves it empty, not inconsistent: it takes what it uses).
    static SCRATCH: RefCell<sim_core::Scratch> = RefCell::new(sim_core::Scratch::default());
}

/// What every part of a sweep, a refinement or a boundary search says of
/// itself in its Parquet metadata (beside its columns' descriptions).
pub fn part_metadata(grid: &Grid, manifest: &Manifest, shard: Shard) -> Vec<(String, String)> {
    vec![
        ("sweep.grid_name".to_string(), grid.name.clone()),
        ("sweep.grid_sha256".to_string(), grid.sha256.clone()),
        (
            "sweep.fingerprint".to_string(),
            manifest.fingerprint.clone(),
        ),
        ("sweep.tool".to_string(), manifest.tool.clone()),
        ("sweep.git_commit".to_string(), manifest.git_commit.clone()),
        (
            "sweep.shard".to_string(),
            format!("{}/{}", shard.index, shard.count),
        ),
        // The bucket edges of the runs' latency histograms, for readers.
        (
            "sweep.latency_edges_s".to_string(),
            serde_json::to_string(
                &sim_core::result::LATENCY_EDGES_NS
                    .map(|e| e as f64 / 1e9)
                    .to_vec(),
            )
            .expect("floats serialize"),
        ),
    ]
}

pub fn default_out(grid: &Grid) -> PathBuf {
    Path::new("out").join(&grid.name)
}

fn shard_from(args: &RunArgs) -> Result<Shard, ShardError> {
    if let Some(s) = &args.shard {
        return parse_shard(s);
    }
    const ID: &str = "SLURM_ARRAY_TASK_ID";
    const COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
    match (std::env::var(ID), std::env::var(COUNT)) {
        (Ok(i), Ok(n)) => {
            // Counted from the array's first index by its step: `--array=1-4`
            // numbers its tasks 1 to 4, `--array=0-6:2` 0, 2, 4 and 6,
            // shards 0 to 3 both. An array whose indexes are not evenly
            // spaced (`--array=1,2,9`) maps to no shard split.
            let number =
                |key: &str| (std::env::var(key).ok()).and_then(|v| v.trim().parse::<u64>().ok());
            let (min, max) = (
                number("SLURM_ARRAY_TASK_MIN"),
                number("SLURM_ARRAY_TASK_MAX"),
            );
            let step = number("SLURM_ARRAY_TASK_STEP")
                .filter(|s| *s > 0)
                .unwrap_or(1);
            let (id, count) = (i.trim().parse::<u64>(), n.trim().parse::<u64>());
            let i = match (id, min) {
                (Ok(id), Some(min)) if id >= min => {
                    let spaced = (id - min) % step == 0
                        && match (max, &count) {
                            (Some(max), Ok(count)) => {
                                max >= min
                                    && (max - min) % step == 0
                                    && (max - min) / step + 1 == *count
                            }
                            _ => true,
                        };
                    if !spaced {
                        return Err(ShardError::UnevenSlurm {
                            id,
                            min,
                            max: max.map_or("unset".into(), |m| m.to_string()),
                            step,
                            count: n,
                        });
                    }
                    ((id - min) / step).to_string()
                }
                _ => i,
            };
            parse_shard(&format!("{i}/{n}")).map_err(|e| ShardError::FromSlurm(Box::new(e)))
        }
        (Ok(_), Err(_)) => Err(ShardError::HalfSlurm {
            set: ID,
            unset: COUNT,
        }),
        (Err(_), Ok(_)) => Err(ShardError::HalfSlurm {
            set: COUNT,
            unset: ID,
        }),
        (Err(_), Err(_)) => Ok(Shard::WHOLE),
    }
}

pub fn run(args: &RunArgs) -> Result<ExitCode, Error> {
    if let Some(at) = args.inject_crash {
        crate::crash::arm(at);
    }
    let mut grid = Grid::load_overridden(&args.grid, None, &args.overrides)?;
    grid.refuse_adaptive()?;
    let shard = shard_from(args)?;
    let out = args.out.clone().unwrap_or_else(|| default_out(&grid));
    check_run_memory(&grid, args)?;
    let store = Store::new(&out);
    store.refuse_not_ours_as(args.force)?;
    // A whole-grid run writes any run a shard may be about to commit (it
    // finishes what shards left, and --force deletes their files): it runs
    // beside no shard's writer, and none starts beside it.
    let _lock = Lock::writer(&out, shard, shard == Shard::WHOLE).map_err(DirError::from)?;
    if prepare_dir(&store, &mut grid, shard, args)? == Prepared::AlreadyComplete {
        let index = store.root.join("analysis").join("index.md");
        // A report older than the manifest's last word was written while
        // the sweep ran (`sweep report` beside it): of some runs only.
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let current = modified(&index)
            .is_some_and(|r| modified(&store.root.join("manifest.json")).is_none_or(|m| r >= m));
        let write_it = format!(
            "sweep report {}",
            crate::slurm::shell_quote(&store.root.display().to_string())
        );
        let report = if current || shard != Shard::WHOLE {
            format!("report: {}", index.display())
        } else if index.exists() {
            format!("its report was written while it ran, of some runs only: {write_it}")
        } else {
            format!("no report yet: {write_it}")
        };
        let (ok, failed, _) = count_runs(&store, (shard != Shard::WHOLE).then_some(shard))
            .map_err(RunnerError::from)?;
        if args.json {
            let mut summary = Summary::new(&grid, &store, shard, "already_complete");
            // A shard's share may hold runs another split wrote (`reused`).
            let planned = (store.manifests().map_err(DirError::from)?.into_iter())
                .find(|(_, m)| m.shard == shard)
                .map_or(ok + failed, |(_, m)| m.planned);
            (summary.planned, summary.already_done) = (planned, planned);
            (summary.ok, summary.failed) = (ok, failed);
            if failed > 0 {
                let of = (shard != Shard::WHOLE).then_some(shard);
                summary.failures = (crate::store::failed_runs(&store, of))
                    .map_err(RunnerError::from)?
                    .into_iter()
                    .map(|f| FailedRun::of(&grid, f))
                    .collect();
            }
            summary.paths.report = index.exists().then(|| index.display().to_string());
            summary.print();
        }
        eprintln!(
            "{} already holds the complete results of this grid ({report}); --force to run it again",
            store.root.display()
        );
        // The status is the results', whichever run of the command wrote
        // them (and whether or not with --resume).
        if failed > 0 {
            eprintln!(
                "{failed} of its {} failed (status = 'failed' in the runs table)",
                counted(ok + failed, "run", "runs")
            );
            return Ok(ExitCode::from(1));
        }
        return Ok(ExitCode::SUCCESS);
    }
    Ok(execute(&grid, &store, shard, args)?)
}

/// What a prepared output directory asks for.
#[derive(Debug, PartialEq, Eq)]
enum Prepared {
    Run,
    /// Its results of this grid and shard are complete: nothing to do.
    AlreadyComplete,
}

/// `--jobs`: at least one worker, and not absurdly many.
pub fn parse_jobs(text: &str) -> Result<usize, String> {
    const MOST: usize = 1024;
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) if n > MOST => Err(format!(
            "{n} workers is more than {MOST}; this machine has {} cores",
            jobs_or_cores(None)
        )),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("expected a number of workers, got `{text}`")),
    }
}

/// `4G`, `512M`, `1.5G`, `300K` (binary units) or bytes.
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let scale: u64 = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => {
            return Err(format!(
                "`{text}`: expected a size such as 2G, 512M or 1500000"
            ));
        }
    };
    match number.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok((x * scale as f64) as u64),
        _ => Err(format!(
            "`{text}`: expected a size such as 2G, 512M or 1500000"
        )),
    }
}

/// `bytes` as `1.5 GB` (binary units).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_048_576 => format!("{:.0} KB", b / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.0} MB", b / 1_048_576.0),
        _ => format!("{:.1} GB", b / 1_073_741_824.0),
    }
}

/// Refuses a grid whose largest run is estimated to need more memory than
/// one worker may use: `--max-run-memory`, or half the machine's memory
/// divided by the workers.
fn check_run_memory(grid: &Grid, args: &RunArgs) -> Result<(), RunnerError> {
    let (point, bytes) = grid.largest_run;
    let jobs = jobs_or_cores(args.jobs).max(1) as u64;
    let (budget, why) = match args.max_run_memory {
        Some(b) => (b, "--max-run-memory".to_string()),
        None => {
            use sysinfo::{MemoryRefreshKind, RefreshKind, System};
            let total = System::new_with_specifics(
                RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing().with_ram()),
            )
            .total_memory();
            if total == 0 {
                return Ok(()); // unknown: nothing to compare with
            }
            (
                total / 2 / jobs,
                format!(
                    "half of this machine's {} divided by {jobs} worker(s)",
                    human_bytes(total)
                ),
            )
        }
    };
    if bytes <= budget {
        return Ok(());
    }
    let overrides = grid.point(point);
    let levels = crate::grid::describe(&overrides[grid.fixed.len()..]);
    Err(RunnerError::RunTooLarge {
        point,
        describe: if levels.is_empty() {
            levels
        } else {
            format!(" ({levels})")
        },
        estimate: human_bytes(bytes),
        budget: human_bytes(budget),
        why,
    })
}

/// Refuses a directory of another grid, and results of this shard of the
/// same grid unless told what to do with them. Shards share a directory, so
/// a shard only ever looks at (and deletes) its own files.
fn prepare_dir(
    store: &Store,
    grid: &mut Grid,
    shard: Shard,
    args: &RunArgs,
) -> Result<Prepared, DirError> {
    let dir = || store.root.clone();
    store.refuse_linked_dirs()?;
    // A merge stopped midway (this run holds the directory, so none runs):
    // its copies are no sweep's parts to resume.
    if !args.force
        && let Some(command) = store.unfinished_merge()?
    {
        return Err(StoreError::MergeStopped {
            dir: dir(),
            command: format!("{command} (or --force to start this grid over)"),
        }
        .into());
    }
    let manifests = store.manifests()?;
    grid.keep_layout_of(&manifests);
    let own_parts = store.own_parts(shard)?;
    if manifests.is_empty() && store.holds_foreign_files()? {
        return Err(DirError::NotOurs {
            dir: dir(),
            force: args.force,
        });
    }
    if args.force && shard == Shard::WHOLE {
        store.remove_all_written()?;
        store.create_dirs()?;
        return Ok(Prepared::Run);
    }
    let fix = if shard == Shard::WHOLE {
        ", or --force to delete them"
    } else {
        " (or delete it first)"
    };
    let edited = manifests
        .iter()
        .filter(|(_, m)| m.fingerprint != grid.fingerprint())
        .find_map(|(_, m)| Some((grid.changes_since(m)?, m.flags.clone())));
    let given = args.overrides.as_args();
    if let Some((changes, flags)) = edited.filter(|(c, _)| !c.is_empty()) {
        return Err(DirError::Edited {
            dir: dir(),
            name: grid.name.clone(),
            changes,
            flags: flags.filter(|f| *f != given),
            shard: shard != Shard::WHOLE,
        });
    }
    store.refuse_foreign(&grid.fingerprint(), "grid", fix, &|_| Vec::new())?;
    if args.force {
        store.remove_own(shard)?;
    } else if !own_parts.is_empty() && !manifests.iter().any(|(_, m)| m.shard == shard) {
        return Err(DirError::NoManifest { dir: dir() });
    } else if !own_parts.is_empty() && !args.resume && own_manifest_complete(&manifests, shard) {
        return Ok(Prepared::AlreadyComplete);
    } else if !own_parts.is_empty() && !args.resume {
        return Err(DirError::Unfinished {
            dir: dir(),
            parts: own_parts.len(),
            grid: grid.path.clone(),
            shard_flag: format!("{}{}", args.overrides.as_args(), shard_flag(shard)),
        });
    }
    earlier_versions(
        store,
        shard,
        args.allow_version_change,
        "--force to start over",
    )?;
    store.create_dirs()?;
    Ok(Prepared::Run)
}

/// The earlier versions of the tool whose runs a writer of `shard` reuses
/// in `store`, for its new manifest (a resume allowed across versions keeps
/// their names): its own shard's, and for a whole-grid writer every
/// shard's (it reuses them all). Refused unless `allow` when one is not
/// this version; `start_over` says how to start over instead.
pub(crate) fn earlier_versions(
    store: &Store,
    shard: Shard,
    allow: bool,
    start_over: &'static str,
) -> Result<Vec<String>, DirError> {
    let now = this_version();
    let mut earlier: Vec<String> = Vec::new();
    let reused = (store.manifests()?.into_iter())
        .filter(|(_, m)| m.status != "merged" && (shard == Shard::WHOLE || m.shard == shard));
    for (_, old) in reused {
        if old.version() != now && !allow {
            return Err(DirError::VersionChanged {
                dir: store.root.clone(),
                recorded: old.version(),
                now,
                start_over,
            });
        }
        for v in old.earlier_versions.iter().cloned().chain([old.version()]) {
            if v != now && !earlier.contains(&v) {
                earlier.push(v);
            }
        }
    }
    Ok(earlier)
}

/// This build's tool and commit, as a manifest records them.
fn this_version() -> String {
    analysis::manifest::version(&tool_name(), env!("SWEEP_GIT_COMMIT"))
}

fn tool_name() -> String {
    format!("sweep {}", env!("CARGO_PKG_VERSION"))
}

/// The enumeration indexes of the runs already committed, each checked to
/// be the planned run of its index (same run id) and written once.
fn committed_planned_runs(
    grid: &Grid,
    store: &Store,
    shard: Shard,
) -> Result<std::collections::HashSet<u64>, StoreError> {
    let committed = store.committed_runs(None, Check::Own(shard))?;
    let total = grid.runs();
    let bad = committed.runs.par_iter().find_any(|&(id, &(i, _))| {
        i >= total || {
            let (_, overrides, seed) = grid.run(i);
            Grid::run_id(&grid.point_id(&overrides), seed) != *id
        }
    });
    if let Some((id, &(index, part))) = bad {
        return Err(StoreError::NotPlanned {
            path: committed.parts[part].clone(),
            run_id: id.clone(),
            index,
        });
    }
    Ok(committed.runs.into_values().map(|(i, _)| i).collect())
}

fn own_manifest_complete(manifests: &[(PathBuf, Manifest)], shard: Shard) -> bool {
    manifests
        .iter()
        .any(|(_, m)| m.shard == shard && m.status == "complete")
}

fn execute(
    grid: &Grid,
    store: &Store,
    shard: Shard,
    args: &RunArgs,
) -> Result<ExitCode, RunnerError> {
    let cleaned = store.clean_incomplete(shard)?;
    if cleaned > 0 && !args.quiet {
        eprintln!(
            "removed {} left by an interrupted run",
            counted(cleaned as u64, "incomplete file", "incomplete files")
        );
    }
    // A whole-grid run finishes what shards left, and redoes the runs of
    // a commit one of them cut short, as that shard's resume would: the
    // commit's files would otherwise sit beside the redone ones (readers
    // of `series/*.parquet` would count those runs twice, and the runs
    // part would be refused). No shard's writer runs beside it (its lock).
    if shard == Shard::WHOLE {
        for other in store.other_shards(shard)? {
            let cleaned = store.clean_incomplete(other)?;
            if cleaned > 0 && !args.quiet {
                eprintln!(
                    "removed {} left by an interrupted run of shard {}/{}",
                    counted(cleaned as u64, "incomplete file", "incomplete files"),
                    other.index,
                    other.count
                );
            }
            if store.index_path(other).exists() {
                for note in store.drop_uncommitted(other)? {
                    if !args.quiet {
                        eprintln!("shard {}/{}: {note}", other.index, other.count);
                    }
                }
            }
        }
    }
    for note in store.drop_uncommitted(shard)? {
        if !args.quiet {
            eprintln!("{note}");
        }
    }
    let done = committed_planned_runs(grid, store, shard)?;
    let planned: Vec<u64> = (0..grid.runs()).filter(|i| shard.owns(*i)).collect();
    let todo: Vec<u64> = planned
        .par_iter()
        .copied()
        .filter(|i| !done.contains(i))
        .collect();
    let (pool, jobs) = worker_pool(args.jobs)?;

    let mut manifest = new_manifest(grid, shard, jobs, planned.len() as u64);
    manifest.flags = Some(args.overrides.as_args());
    manifest.resume = Some(Resume {
        command: format!(
            "sweep run {}{}",
            crate::slurm::shell_quote(&grid.path.display().to_string()),
            args.overrides.as_args(),
        ),
        then: format!(" --resume{}", shard_flag(shard)),
    });
    // Checked by `prepare_dir`.
    manifest.earlier_versions = earlier_versions(store, shard, true, "")?;
    store.write_manifest(&manifest)?;
    let metadata = part_metadata(grid, &manifest, shard);
    let layout = Layout::new(
        grid.point_columns(),
        &*grid
            .scenario(&grid.point(0))
            .map_err(|_| RunnerError::InvalidFirstPoint)?,
        grid.metrics.clone(),
    );
    let metadata = layout.metadata(&metadata);

    let note = |line: String| {
        if !args.quiet {
            eprintln!("{line}");
        }
    };
    note(format!(
        "sweep {}: {} ({} x {}){}, {} already done, {} to run on {jobs} threads -> {}",
        grid.name,
        counted(grid.runs(), "run", "runs"),
        counted(grid.points(), "point", "points"),
        counted(grid.seeds.len() as u64, "seed", "seeds"),
        if shard == Shard::WHOLE {
            String::new()
        } else {
            format!(", shard {}/{}: {}", shard.index, shard.count, planned.len())
        },
        planned.len() - todo.len(),
        todo.len(),
        store.root.display()
    ));
    for line in grid.design.iter().flat_map(crate::design::notes) {
        note(line);
    }
    crate::signals::install(resume_command(&manifest, &store.root));
    silence_panics();

    let started = Instant::now();
    let cost = run_costs(grid, &todo);
    let mut progress = Progress::shown(todo.len() as u64, cost.values().sum(), !args.quiet);
    let mut failures: Vec<(u64, String)> = Vec::new();
    let mut batch: Vec<Outcome> = Vec::new();
    let mut next_part = store.next_part(shard)?;
    let mut last_flush = Instant::now();
    let mut sim_ms = 0.0;
    let mut write_error = None;
    // Set when a part cannot be written: nothing more could be saved.
    let write_failed = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Outcome>();
    std::thread::scope(|scope| {
        let inject = args.inject_panic;
        let todo = &todo;
        let write_failed = &write_failed;
        scope.spawn(move || {
            pool.install(|| {
                // One run per task: runs differ in cost (naive is slower), and
                // coarse chunks would leave a thread idle at the end.
                todo.par_iter().with_max_len(1).for_each_with(tx, |tx, &i| {
                    let stopped = crate::signals::received().is_some()
                        || write_failed.load(Ordering::Relaxed);
                    if !stopped {
                        let _ = tx.send(execute_one(grid, i, inject == Some(i)));
                    }
                })
            })
        });
        let batch_secs = Duration::from_secs_f64(args.batch_secs);
        loop {
            let received = rx.recv_timeout(Duration::from_millis(200));
            let closed = matches!(received, Err(mpsc::RecvTimeoutError::Disconnected));
            if let Ok(o) = received {
                progress.record(
                    o.result.is_err(),
                    cost.get(&o.index).copied().unwrap_or(1.0),
                );
                sim_ms += o.wall_ms;
                if let Err(e) = &o.result {
                    failures.push((o.index, e.to_string()));
                }
                batch.push(o);
            }
            let due = batch.len() >= args.batch_runs
                || (last_flush.elapsed() >= batch_secs && !batch.is_empty());
            if (due || closed) && !batch.is_empty() && write_error.is_none() {
                if let Err(e) = flush(store, &layout, shard, next_part, &mut batch, &metadata) {
                    write_failed.store(true, Ordering::Relaxed);
                    write_error = Some(e);
                }
                next_part += 1;
                last_flush = Instant::now();
            }
            if closed {
                break;
            }
        }
    });
    progress.finish();
    let _ = std::panic::take_hook();
    if let Some(e) = write_error {
        return Err(RunnerError::WriteStopped(e));
    }

    let wall = started.elapsed().as_secs_f64();
    let interrupted = crate::signals::received();
    let status = match interrupted {
        Some(_) => "interrupted",
        None => "complete",
    };
    let (ok, failed) = finish_manifest(store, &mut manifest, status, false)?;

    let ran = progress.done();
    let simulation_share = sim_ms / 1000.0 / (wall * jobs as f64).max(1e-9);
    // A resume of complete results runs nothing: no rate to tell.
    if todo.is_empty() {
        note("nothing left to run: every planned run is written, its part verified".to_string());
    } else {
        note(format!(
            "{} in {} ({:.1} runs/s on {jobs} threads; simulation {:.0}% of worker time; peak RSS {})",
            counted(ran, "run", "runs"),
            human_duration(wall),
            ran as f64 / wall.max(1e-9),
            100.0 * simulation_share,
            peak_rss().map_or("unknown".to_string(), |kb| format!(
                "{:.0} MB",
                kb as f64 / 1024.0
            ))
        ));
    }
    failures.sort();
    let mut summary = Summary::new(grid, store, shard, "complete");
    summary.planned = planned.len() as u64;
    summary.already_done = (planned.len() - todo.len()) as u64;
    (summary.ran, summary.ok, summary.failed) = (ran, ok, failed);
    // Every failed run of the results, those of an earlier invocation
    // (resumed) too: `failures` lists what `failed` counts.
    let all_failures = if failed > failures.len() as u64 {
        let of = (shard != Shard::WHOLE).then_some(shard);
        crate::store::failed_runs(store, of).map_err(RunnerError::from)?
    } else {
        failures.clone()
    };
    summary.failures = (all_failures.into_iter())
        .map(|f| FailedRun::of(grid, f))
        .collect();
    summary.timings = Timings {
        wall_s: wall,
        runs_per_s: ran as f64 / wall.max(1e-9),
        threads: jobs,
        simulation_share,
        peak_rss_bytes: peak_rss().map(|kb| kb * 1024),
    };
    if !failures.is_empty() {
        let earlier = failed.saturating_sub(failures.len() as u64);
        eprintln!(
            "{} failed{}:",
            counted(failures.len() as u64, "run", "runs"),
            if earlier > 0 {
                format!(" now ({earlier} more failed before this resume)")
            } else {
                String::new()
            }
        );
        for f in failures.iter().take(20) {
            eprintln!("  {}", FailedRun::of(grid, f.clone()));
        }
        if failures.len() > 20 {
            eprintln!(
                "  ... and {} more (status = 'failed' in the runs table)",
                failures.len() - 20
            );
        }
    }
    let dir = store.root.display();
    // Commands to paste: every path quoted as a shell needs it.
    let quoted_dir = crate::slurm::shell_quote(&dir.to_string());
    let resume = resume_command(&manifest, &store.root);
    if let Some(signal) = interrupted {
        if args.json {
            summary.status = "interrupted";
            summary.signal = Some(signal);
            summary.resume = Some(resume.clone());
            summary.print();
        }
        // Of its share: those done before (another split's included) and
        // those this run wrote.
        eprintln!(
            "interrupted: {} of {} runs are written. Resume with:",
            summary.already_done + ran,
            planned.len()
        );
        eprintln!("  {resume}");
        return Ok(ExitCode::from(crate::signals::exit_code(signal)));
    }
    if !args.json {
        println!(
            "results: {dir}/runs/*.parquet ({ok} ok, {failed} failed), {dir}/series/*.parquet, {}",
            store.manifest_path(shard).display()
        );
    }
    if shard != Shard::WHOLE {
        if !args.json {
            println!(
                "shard {}/{} done; when all shards are: sweep merge {quoted_dir}",
                shard.index, shard.count
            );
        }
    } else if !args.no_report {
        let written = if args.json || args.quiet {
            crate::report::write_report_quietly(&store.root).map(|r| {
                if !args.json {
                    println!("report: {}", r.index_md.display());
                }
                summary.paths.report = Some(r.index_md.display().to_string());
            })
        } else {
            crate::report::write_report(&store.root, false)
        };
        if let Err(e) = written {
            // The results stand on their own: say so, and how to redo the report.
            eprintln!("the results are complete, but writing the report failed: {e}");
            eprintln!(
                "write it again with: sweep report {}",
                crate::slurm::shell_quote(&store.root.display().to_string())
            );
            if args.json {
                summary.report_error = Some(e.to_string());
                summary.print();
            }
            return Ok(ExitCode::FAILURE);
        }
    }
    if args.json {
        summary.print();
    }
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `sweep run --json`: what a sweep did, for scripts.
#[derive(serde::Serialize)]
struct Summary {
    grid: String,
    grid_file: String,
    fingerprint: String,
    /// `complete`, `already_complete` (nothing ran) or `interrupted`.
    status: &'static str,
    shard: String,
    planned: u64,
    already_done: u64,
    ran: u64,
    ok: u64,
    failed: u64,
    failures: Vec<FailedRun>,
    paths: Paths,
    timings: Timings,
    /// The stopping signal's number, when interrupted.
    signal: Option<i32>,
    /// The command that continues an interrupted sweep.
    resume: Option<String>,
    report_error: Option<String>,
}

/// A failed run, with what reproduces it: its point's levels and its seed
/// (`sweep one --set ... --seed ...`).
#[derive(serde::Serialize)]
struct FailedRun {
    run_index: u64,
    point: u64,
    /// The point's overrides, `path=value` separated by spaces.
    levels: String,
    seed: u64,
    error: String,
}

impl FailedRun {
    fn of(grid: &Grid, (run_index, error): (u64, String)) -> FailedRun {
        let (point, levels, seed) = grid.run(run_index);
        FailedRun {
            run_index,
            point,
            levels: crate::grid::describe(&levels),
            seed,
            error,
        }
    }
}

impl std::fmt::Display for FailedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let FailedRun {
            run_index,
            point,
            levels,
            seed,
            error,
        } = self;
        let sep = if levels.is_empty() { "" } else { ": " };
        write!(
            f,
            "run {run_index} (point {point}{sep}{levels}, seed {seed}): {error}"
        )
    }
}

#[derive(serde::Serialize)]
struct Paths {
    out: String,
    runs: String,
    series: String,
    manifest: String,
    report: Option<String>,
}

#[derive(serde::Serialize, Default)]
struct Timings {
    wall_s: f64,
    runs_per_s: f64,
    threads: usize,
    /// The share of the workers' time spent in the simulation.
    simulation_share: f64,
    peak_rss_bytes: Option<u64>,
}

impl Summary {
    fn new(grid: &Grid, store: &Store, shard: Shard, status: &'static str) -> Summary {
        let dir = store.root.display();
        Summary {
            grid: grid.name.clone(),
            grid_file: grid.path.display().to_string(),
            fingerprint: grid.fingerprint(),
            status,
            shard: format!("{}/{}", shard.index, shard.count),
            planned: 0,
            already_done: 0,
            ran: 0,
            ok: 0,
            failed: 0,
            failures: Vec::new(),
            paths: Paths {
                out: dir.to_string(),
                runs: format!("{dir}/runs/*.parquet"),
                series: format!("{dir}/series/*.parquet"),
                manifest: store.manifest_path(shard).display().to_string(),
                report: None,
            },
            timings: Timings::default(),
            signal: None,
            resume: None,
            report_error: None,
        }
    }

    fn print(&self) {
        println!(
            "{}",
            serde_json::to_string_pretty(self).expect("a summary serializes")
        );
    }
}

fn shard_flag(shard: Shard) -> String {
    if shard == Shard::WHOLE {
        String::new()
    } else {
        format!(" --shard {}/{}", shard.index, shard.count)
    }
}

fn flush(
    store: &Store,
    layout: &Layout,
    shard: Shard,
    part: u64,
    batch: &mut Vec<Outcome>,
    metadata: &crate::records::PartMetadata,
) -> Result<(), StoreError> {
    batch.sort_by_key(|o| o.index);
    let mut runs = layout.runs_frame(batch).map_err(StoreError::Batch)?;
    let mut series = layout.series_frame(batch).map_err(StoreError::Batch)?;
    store.write_batch(shard, part, &mut runs, &mut series, metadata)?;
    batch.clear();
    Ok(())
}

/// One run, isolated: an invalid point, an exceeded event budget or a panic
/// becomes a failed outcome with its message.
fn execute_one(grid: &Grid, index: u64, inject_panic: bool) -> Outcome {
    let (_, point, seed) = grid.run(index);
    execute_point(grid, index, point, seed, inject_panic)
}

/// The expected cost of each run to do: the expected users of its point
/// (at least one), for the progress' ETA, as validation found them (a
/// grid loaded to run has every point checked).
fn run_costs(grid: &Grid, todo: &[u64]) -> std::collections::HashMap<u64, f64> {
    assert_eq!(
        grid.point_users.len() as u64,
        grid.points(),
        "validation built every point"
    );
    let seeds = grid.seeds.len() as u64;
    (todo.iter())
        .map(|&i| (i, grid.point_users[(i / seeds) as usize]))
        .collect()
}

/// One run of `point` with `seed`, isolated like [`execute_one`]'s: the
/// point's scenario is validated once (by [`Grid::with_scenario`]), and
/// the run trusts it.
pub fn execute_point(
    grid: &Grid,
    index: u64,
    point: Vec<(String, toml::Value)>,
    seed: u64,
    inject_panic: bool,
) -> Outcome {
    let point_id = grid.point_id(&point);
    let run_id = Grid::run_id(&point_id, seed);
    let started = Instant::now();
    let result = grid
        .with_scenario(&point, |scenario| {
            std::panic::catch_unwind(|| {
                if inject_panic {
                    panic!("injected panic (test)");
                }
                SCRATCH.with(|scratch| {
                    sim_core::run_validated(scenario, seed, &mut scratch.borrow_mut())
                })
            })
            .map_err(|_| RunFailure::Panicked(LAST_PANIC.with(|p| p.borrow().clone())))
            .and_then(|r| r.map_err(RunFailure::Run))
        })
        .unwrap_or_else(|errors| Err(RunFailure::Invalid(errors)));
    Outcome {
        index,
        run_id,
        point_id,
        seed,
        point,
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
        result,
    }
}

/// `jobs`, or every core when not given.
pub fn jobs_or_cores(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The rayon pool of `jobs` workers (default: every core) and its size.
pub fn worker_pool(
    jobs: Option<usize>,
) -> Result<(rayon::ThreadPool, usize), rayon::ThreadPoolBuildError> {
    let jobs = jobs_or_cores(jobs);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build()?;
    Ok((pool, jobs))
}

/// Panics of runs are recorded with the run (their message is kept for the
/// runs table) instead of printed over the progress display.
pub fn silence_panics() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.payload_as_str().unwrap_or("(no message)");
        let at = info
            .location()
            .map_or(String::new(), |l| format!(" (at {l})"));
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{message}{at}"))
    }));
}

/// The command that finishes the sweep `manifest` describes in `dir`, its
/// paths quoted as a shell needs them: the one it recorded, or, for a
/// manifest written before it recorded one, `sweep run` of its grid with
/// its flags.
pub fn resume_command(manifest: &Manifest, dir: &Path) -> String {
    let quoted = crate::slurm::shell_quote(&dir.display().to_string());
    manifest.resume_command(&quoted).unwrap_or_else(|| {
        format!(
            "sweep run {}{} --out {quoted} --resume",
            crate::slurm::shell_quote(&manifest.grid_file),
            manifest.flags.as_deref().unwrap_or_default(),
        )
    })
}

pub fn new_manifest(grid: &Grid, shard: Shard, threads: usize, planned: u64) -> Manifest {
    Manifest {
        tool: tool_name(),
        git_commit: env!("SWEEP_GIT_COMMIT").to_string(),
        grid_name: grid.name.clone(),
        grid_file: grid.path.display().to_string(),
        grid_sha256: grid.sha256.clone(),
        grid_text: grid.text.clone(),
        scenario: grid.scenario_ref.clone(),
        scenario_id: grid.scenario_id.clone(),
        scenario_text: grid.scenario_text.clone(),
        fingerprint: grid.fingerprint(),
        shard,
        host: hostname(),
        threads,
        started_at: now_rfc3339(),
        finished_at: None,
        status: "running".to_string(),
        axes: grid
            .dimensions
            .iter()
            .flat_map(|d| d.paths.clone())
            .collect(),
        dimensions: grid.dimensions.iter().map(|d| d.paths.clone()).collect(),
        fixed: grid.fixed.iter().map(|(k, _)| k.clone()).collect(),
        triggers: (grid.base.triggers().into_iter())
            .map(|t| TriggerWindow {
                path: t.path,
                start_s: t.start_s,
                duration_s: t.duration_s,
                factor: t.factor,
            })
            .collect(),
        recovery_threshold: Some(grid.base.recovery.threshold),
        report: grid.report.clone(),
        design: grid.design.clone(),
        planned,
        ok: 0,
        failed: 0,
        reused: 0,
        events_total: 0,
        command: std::env::args().collect(),
        flags: None,
        resume: None,
        earlier_versions: Vec::new(),
    }
}

/// Ends `manifest` with `status`: the runs its shard holds counted from the
/// parts (ok, failed, events), the finishing time, written; with
/// `planned_is_written` (an adaptive search, whose plan is what it ran)
/// the runs written are also the runs planned. Returns the ok and failed
/// counts.
pub fn finish_manifest(
    store: &Store,
    manifest: &mut Manifest,
    status: &str,
    planned_is_written: bool,
) -> Result<(u64, u64), StoreError> {
    let shard = manifest.shard;
    let (ok, failed, events) = count_runs(store, (shard != Shard::WHOLE).then_some(shard))?;
    if planned_is_written {
        manifest.planned = ok + failed;
    }
    manifest.ok = ok;
    manifest.failed = failed;
    // A shard's own parts hold what it ran; the rest of its share another
    // split's shards wrote first.
    manifest.reused = if status == "complete" && shard != Shard::WHOLE {
        manifest.planned.saturating_sub(ok + failed)
    } else {
        0
    };
    manifest.events_total = events;
    manifest.status = status.to_string();
    manifest.finished_at = Some(now_rfc3339());
    store.write_manifest(manifest)?;
    Ok((ok, failed))
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Peak resident set size in KiB (Linux: VmHWM).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".to_string())
}
