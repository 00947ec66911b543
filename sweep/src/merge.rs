//! `sweep merge` (shards into one result) and `sweep compare` (are two
//! results the same runs with the same numbers?).

use crate::error::{Error, MergeError, StoreError};
use crate::lock::Lock;
use crate::runner::now_rfc3339;
use crate::store::{Check, CommittedRuns, Manifest, Shard, Store, count_runs};
use analysis::IoError;
use clap::Args;
use polars::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct MergeArgs {
    /// Output directory of the shards (one shared directory, or several).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to combine several directories [default: the only directory].
    #[arg(long)]
    pub into: Option<PathBuf>,
    /// Do not write the analysis report.
    #[arg(long)]
    pub no_report: bool,
}

pub fn merge(args: &MergeArgs) -> Result<ExitCode, Error> {
    let target = match (&args.into, args.dirs.as_slice()) {
        (Some(t), _) => t.clone(),
        (None, [one]) => one.clone(),
        (None, _) => return Err(Error::Merge(MergeError::NeedsInto)),
    };
    let (m, shards, cleaned) = merge_into(&target, &args.dirs).map_err(Error::Merge)?;
    for (shard, n) in cleaned {
        eprintln!(
            "removed {} left by an interrupted run of shard {}/{}",
            crate::progress::counted(n as u64, "incomplete file", "incomplete files"),
            shard.index,
            shard.count
        );
    }
    if shards == 0 {
        println!(
            "nothing to merge: {} holds the results of one whole-grid run or refinement of `{}` ({} runs, every part verified against its index)",
            target.display(),
            m.grid_name,
            m.ok + m.failed
        );
        return Ok(status_of(m.failed));
    }
    println!(
        "merged {} of `{}`: {} runs ({} ok, {} failed) in {}",
        crate::progress::counted(shards, "shard", "shards"),
        m.grid_name,
        m.ok + m.failed,
        m.ok,
        m.failed,
        target.display()
    );
    if !args.no_report {
        crate::report::write_report(&target, false)?;
    }
    Ok(status_of(m.failed))
}

/// The status of results with `failed` failed runs, as `run` gives it
/// (1: some runs failed, recorded with status 'failed').
fn status_of(failed: u64) -> ExitCode {
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// What a merge did: the merged manifest, the number of shards it
/// combines (0 in a whole-grid run's directory: nothing merged, its parts
/// verified), and the incomplete files it removed, by shard.
type Merged = (Manifest, u64, Vec<(Shard, usize)>);

fn merge_into(target: &Path, dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    let store = Store::new(target);
    // A directory is known by its canonical path, however it is spelled
    // (`./out` and `out`, or given twice), so that the merge does not lock
    // it twice itself.
    let key = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let target_key = key(target);
    let dir_keys: Vec<PathBuf> = dirs.iter().map(|d| key(d)).collect();
    let into_a_source = dir_keys.contains(&target_key);
    // Everything is checked before anything is written (a lock file
    // included).
    if !into_a_source {
        store.refuse_not_ours()?;
    }
    // One writer at a time from before the checks to the manifest; a
    // target not there yet is locked (created) only once they pass.
    let early = if target.is_dir() {
        Some(Lock::writer(target, Shard::WHOLE, true)?)
    } else {
        None
    };
    // No writer in a source either while it is read (a shard of another
    // split, or a run with `--force`, would change what is copied); only
    // a sweep's directory is locked (another is refused below). A source
    // is not the merge's output: no lock file is made there. One without
    // any has no writer now (a writer makes it first), and is looked at
    // again once its files are copied, for one that started since.
    let mut locked = HashSet::from([target_key.as_path()]);
    let mut _source_locks = Vec::new();
    let mut watched = Vec::new();
    for (dir, dir_key) in dirs.iter().zip(&dir_keys) {
        if locked.insert(dir_key.as_path()) && !Store::new(dir).manifests()?.is_empty() {
            match Lock::reader(dir)? {
                Some(lock) => _source_locks.push(lock),
                None if !crate::lock::has_dir_lock(dir) => watched.push(dir),
                None => {}
            }
        }
    }
    let (copies, source_parts) = plan_copies(target, dirs)?;
    // The shards' manifests, of every directory (of one grid:
    // `plan_copies`): the merge's completeness is decided before a file is
    // copied.
    let mut shards: Vec<Manifest> = Vec::new();
    // Where each shard's manifest is, for the command that finishes it.
    let mut shard_dirs: Vec<(Shard, PathBuf)> = Vec::new();
    for dir in dirs.iter().map(PathBuf::as_path).chain([target]) {
        for (path, m) in Store::new(dir).manifests()? {
            if m.status == "merged" {
                continue;
            }
            // A complete whole-grid run or refinement wrote the grid's
            // results itself, and its manifest is the one a merge would
            // write: in its own directory the merge only verifies its parts.
            // An unfinished one is a split into 1 that is not complete.
            if m.shard == Shard::WHOLE && m.status == "complete" {
                if dir_keys.iter().any(|k| *k != target_key) {
                    return Err(MergeError::NotShards { manifest: path });
                }
                let runs = store.committed_runs(None, Check::Alone)?.runs;
                if runs.len() as u64 != m.ok + m.failed {
                    return Err(MergeError::Count {
                        written: runs.len(),
                        planned: m.ok + m.failed,
                        before_copy: false,
                    });
                }
                return Ok((m, 0, Vec::new()));
            }
            if !shards.iter().any(|s| s.shard == m.shard) {
                shard_dirs.push((m.shard, dir.to_path_buf()));
                shards.push(m);
            }
        }
    }
    shards.sort_by_key(|m| (m.shard.count, m.shard.index));
    if shards.is_empty() {
        return Err(MergeError::NoManifest {
            dir: target.to_path_buf(),
        });
    }
    // The split whose every shard is complete (shards of another split
    // may have written some of its runs first, which it reused).
    let mut counts: Vec<u64> = shards.iter().map(|m| m.shard.count).collect();
    counts.dedup();
    let missing_of = |count: u64| -> Vec<String> {
        (0..count)
            .filter_map(|i| {
                match shards
                    .iter()
                    .find(|m| m.shard == (Shard { index: i, count }))
                {
                    Some(m) if m.status == "complete" => None,
                    Some(m) => {
                        let dir = (shard_dirs.iter().find(|(s, _)| *s == m.shard))
                            .map_or(String::new(), |(_, d)| d.display().to_string());
                        let quoted = crate::slurm::shell_quote(&dir);
                        let resume = m.resume_command(&quoted).unwrap_or_else(|| {
                            format!(
                                "sweep run {}{} --shard {i}/{count} --out {quoted} --resume",
                                crate::slurm::shell_quote(&m.grid_file),
                                m.flags.as_deref().unwrap_or(" (with its --set and --axis flags)"),
                            )
                        });
                        Some(if m.status == "running" {
                            format!("shard {i}/{count} is running, or was killed (if nothing runs there: {resume})")
                        } else {
                            format!("shard {i}/{count} is {}: {resume}", m.status)
                        })
                    }
                    // Not started: its command, from a shard that did
                    // (into their directory when they share one).
                    None => {
                        let m = &shards[0];
                        let mut dirs = shard_dirs.iter().map(|(_, d)| d);
                        let first = dirs.next();
                        let out = match first.filter(|d| dirs.all(|e| e == *d)) {
                            Some(d) => crate::slurm::shell_quote(&d.display().to_string()),
                            None => "<its directory>".to_string(),
                        };
                        Some(format!(
                            "shard {i}/{count} has no manifest (not started?): sweep run {}{} --shard {i}/{count} --out {out}",
                            crate::slurm::shell_quote(&m.grid_file),
                            m.flags.as_deref().unwrap_or(" (with its --set and --axis flags)"),
                        ))
                    }
                }
            })
            .collect()
    };
    let Some(count) = counts.iter().copied().find(|c| missing_of(*c).is_empty()) else {
        return Err(MergeError::Incomplete {
            missing: counts.iter().flat_map(|c| missing_of(*c)).collect(),
        });
    };
    let split: Vec<&Manifest> = shards.iter().filter(|m| m.shard.count == count).collect();
    // The merged manifest names the version that wrote the split merged
    // (its first shard's; the others' are `earlier_versions`).
    let base = split[0];
    let planned: u64 = split.iter().map(|m| m.planned).sum();
    // The runs the target will hold, checked before a file is copied: the
    // parts already there (one an interrupted merge copied is not indexed
    // yet) and those the copy brings.
    let mut parts = store.runs_parts()?;
    // A part there that no index lists, the target's or a source's
    // (one a crash left before indexing it), is refused as a resume or a
    // report refuses it.
    store.refuse_missing_parts()?;
    let indexed = store.indexed_parts()?;
    if let Some(path) = parts.iter().find(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        !indexed.contains(name) && !source_parts.contains(name)
    }) {
        return Err(StoreError::NotCommitted { path: path.clone() }.into());
    }
    let mut names: HashSet<PathBuf> = parts.iter().cloned().collect();
    let runs_dir = target.join("runs");
    for (src, dst) in &copies {
        if dst.parent() == Some(runs_dir.as_path()) && names.insert(dst.clone()) {
            parts.push(src.clone());
        }
    }
    let held = CommittedRuns::of_parts(parts).map_err(|e| match e {
        StoreError::DuplicateRun {
            run_id,
            first,
            second,
        } => MergeError::Duplicate {
            run_id,
            first,
            second,
        },
        e => e.into(),
    })?;
    check_runs(&held.runs, planned, true)?;
    let _lock = match early {
        Some(lock) => lock,
        None => Lock::writer(target, Shard::WHOLE, true)?,
    };
    store.create_dirs()?;
    store.remove_stale_tmp()?;
    // Until the manifest is written, the directory says which merge to run
    // again if this one stops: a reader would otherwise take the copies
    // so far for a sweep's own unfinished parts.
    let quote = |p: &Path| crate::slurm::shell_quote(&p.display().to_string());
    let sources: Vec<String> = dirs.iter().map(|d| quote(d)).collect();
    let command = match dirs {
        [one] if key(one) == target_key => format!("sweep merge {}", quote(one)),
        _ => format!("sweep merge {} --into {}", sources.join(" "), quote(target)),
    };
    store.begin_merge(&command)?;
    for (src, dst) in &copies {
        copy_atomic(src, dst)?;
    }
    // A writer that started in a source without a lock file while it was
    // copied: what was copied may be of its runs half done. The merge
    // stops before its manifest (so the target says to run it again).
    for dir in watched {
        if crate::lock::has_dir_lock(dir) {
            return Err(crate::lock::LockError::StartedDuringMerge { dir: dir.clone() }.into());
        }
    }
    // What any shard's interrupted commit left (a series part whose runs
    // part was never renamed), once every committed part is there: beside
    // the split that redid those runs, readers of `series/*.parquet` would
    // count them twice. The merge holds the directory: no writer uses them.
    let mut cleaned = Vec::new();
    for shard in (store.other_shards(Shard::WHOLE)?)
        .into_iter()
        .chain([Shard::WHOLE])
    {
        let n = store.clean_incomplete(shard)?;
        if n > 0 {
            cleaned.push((shard, n));
        }
    }
    // Again as written: verified against the indexes copied.
    check_runs(
        &store.committed_runs(None, Check::Alone)?.runs,
        planned,
        false,
    )?;
    let (ok, failed, events) = count_runs(&store, None)?;
    // Shards written by other versions of the tool are named, as a resumed
    // run names the versions before it.
    let mut earlier_versions: Vec<String> = Vec::new();
    for m in &shards {
        for v in m.earlier_versions.iter().cloned().chain([m.version()]) {
            if v != base.version() && !earlier_versions.contains(&v) {
                earlier_versions.push(v);
            }
        }
    }
    let merged = Manifest {
        earlier_versions,
        shard: Shard::WHOLE,
        status: "merged".to_string(),
        planned,
        ok,
        failed,
        reused: 0,
        events_total: events,
        threads: split.iter().map(|m| m.threads).sum(),
        host: split
            .iter()
            .map(|m| m.host.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(","),
        started_at: shards
            .iter()
            .map(|m| m.started_at.clone())
            .min()
            .unwrap_or_default(),
        finished_at: Some(now_rfc3339()),
        command: std::env::args().collect(),
        // Merged results are whole: nothing to resume (a shard's command
        // would resume that shard).
        resume: None,
        ..base.clone()
    };
    store.write_manifest(&merged)?;
    store.end_merge()?;
    Ok((merged, count, cleaned))
}

/// Each run once, exactly the run indexes 0..planned; `before_copy`: the
/// runs the merge would write, refused before it writes.
fn check_runs(
    runs: &HashMap<String, (u64, usize)>,
    planned: u64,
    before_copy: bool,
) -> Result<(), MergeError> {
    if runs.is_empty() {
        return Err(MergeError::NoRunsWritten);
    }
    let indexes: HashSet<u64> = runs
        .values()
        .map(|(i, _)| *i)
        .filter(|i| *i < planned)
        .collect();
    if runs.len() as u64 != planned {
        return Err(MergeError::Count {
            written: runs.len(),
            planned,
            before_copy,
        });
    }
    if indexes.len() as u64 != planned {
        let missing = (0..planned).find(|i| !indexes.contains(i)).unwrap_or(0);
        return Err(MergeError::Indexes {
            missing,
            planned,
            before_copy,
        });
    }
    Ok(())
}

/// The files to copy into `target` (source, destination), after checking
/// that every directory holds the same grid, that each source's parts are
/// those its index lists, and that no two files of one name differ (the
/// same shard from two sweeps would overwrite each other).
/// Also the names of the sources' committed parts (those their indexes,
/// copied too, list).
fn plan_copies(target: &Path, dirs: &[PathBuf]) -> Result<(Copies, HashSet<String>), MergeError> {
    let mut grids: Vec<(PathBuf, Manifest)> = Vec::new();
    for dir in dirs.iter().map(PathBuf::as_path).chain([target]) {
        for (_, m) in Store::new(dir).manifests()? {
            if m.status != "merged" {
                grids.push((dir.to_path_buf(), m));
            }
        }
    }
    if let Some((first_dir, first)) = grids.first()
        && let Some((other_dir, other)) = grids
            .iter()
            .find(|(_, m)| m.fingerprint != first.fingerprint)
    {
        // Said as a resume says an edited grid: what changed, or that the
        // files differ in their comments and layout alone (each shard keeps
        // its file's text, which the merge cannot choose between).
        let differs = match crate::grid::changes_between(first, other) {
            None => String::new(),
            Some(c) if c.is_empty() => "; the two grid files differ only in comments or layout: rerun that shard from the other's file (`--force` into its directory), or run every shard from one copy".to_string(),
            Some(c) => format!("; what changed: {}", c.join("; ")),
        };
        return Err(MergeError::GridMismatch {
            first: first.grid_name.clone(),
            first_dir: first_dir.clone(),
            other: other.grid_name.clone(),
            other_dir: other_dir.clone(),
            differs,
        });
    }
    let mut copies: Copies = Vec::new();
    let mut source_parts: HashSet<String> = HashSet::new();
    for dir in dirs.iter().filter(|d| d.as_path() != target) {
        let source = Store::new(dir);
        for part in source.committed_parts(None, Check::Alone)? {
            let name = part.file_name().expect("a file");
            source_parts.insert(name.to_string_lossy().into_owned());
            for sub in ["series", "runs"] {
                copies.push((dir.join(sub).join(name), target.join(sub).join(name)));
            }
        }
        let files = std::fs::read_dir(dir).map_err(|e| StoreError::from(IoError::at(dir)(e)))?;
        let mut indexes = Vec::new();
        let mut manifests = Vec::new();
        for entry in files {
            let p = entry
                .map_err(|e| StoreError::from(IoError::at(dir)(e)))?
                .path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if crate::store::is_index_name(name) {
                indexes.push(p.clone());
            }
        }
        for (p, m) in source.manifests()? {
            if m.status != "merged" {
                manifests.push(p);
            }
        }
        indexes.sort();
        for p in indexes.into_iter().chain(manifests) {
            let to = target.join(p.file_name().expect("a file"));
            copies.push((p, to));
        }
    }
    let same = |a: &Path, b: &Path| -> Result<bool, StoreError> {
        let read = |p: &Path| std::fs::read(p).map_err(IoError::at(p));
        Ok(read(a)? == read(b)?)
    };
    let mut planned: std::collections::HashMap<&Path, &Path> = Default::default();
    for (src, dst) in &copies {
        let clash = match planned.get(dst.as_path()) {
            Some(other) => (!same(other, src)?).then_some(other.to_path_buf()),
            // A merged manifest there is rewritten by this merge anyway.
            None => (dst.exists() && !is_merged_manifest(dst) && !same(dst, src)?)
                .then_some(dst.clone()),
        };
        if let Some(other) = clash {
            return Err(MergeError::Collision {
                src: src.clone(),
                other,
            });
        }
        planned.insert(dst, src);
    }
    // Identical files already there need no copy.
    let copies = (copies.into_iter())
        .filter(|(_, dst)| !dst.exists() || is_merged_manifest(dst))
        .collect();
    Ok((copies, source_parts))
}

/// Files to copy: (source, destination).
type Copies = Vec<(PathBuf, PathBuf)>;

fn is_merged_manifest(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
        .is_some_and(|m| m.status == "merged")
}

/// Copies `src` to `dst` by a temporary name and a rename.
fn copy_atomic(src: &Path, dst: &Path) -> Result<(), StoreError> {
    let tmp = crate::store::tmp_path(dst);
    std::fs::copy(src, &tmp).map_err(IoError::at(src))?;
    Ok(std::fs::rename(&tmp, dst).map_err(IoError::at(dst))?)
}

#[derive(Args)]
pub struct CompareArgs {
    /// A sweep's output directory (e.g. out/ch37).
    #[arg(value_name = "DIR_A")]
    pub a: PathBuf,
    /// The output directory to compare it with (e.g. the same grid run elsewhere).
    #[arg(value_name = "DIR_B")]
    pub b: PathBuf,
}

/// Columns that measure the machine, not the model.
const TIMING_COLUMNS: &[&str] = &["wall_ms"];

pub fn compare(args: &CompareArgs) -> Result<ExitCode, Error> {
    let load = |dir: &Path| -> Result<DataFrame, MergeError> {
        let store = Store::new(dir);
        // Shards of other grids, or of other overrides, hold other columns:
        // refused as a resume would, before their tables meet.
        let manifests = store.manifests()?;
        if let Some((first, m)) = manifests.first()
            && let Some((other, _)) =
                (manifests.iter()).find(|(_, o)| o.fingerprint != m.fingerprint)
        {
            return Err(MergeError::MixedGrids {
                dir: dir.to_path_buf(),
                first: first.clone(),
                other: other.clone(),
            });
        }
        // A run in two parts is refused naming its files (`read_runs`).
        let df = store.read_runs()?.ok_or_else(|| MergeError::NoRuns {
            dir: dir.to_path_buf(),
        })?;
        df.drop_many(TIMING_COLUMNS.iter().copied())
            .sort(["run_id"], SortMultipleOptions::default())
            .map_err(|source| MergeError::Table {
                dir: dir.join("runs"),
                source,
            })
    };
    // Each run's seconds, in the order of the runs.
    let series = |dir: &Path| -> Result<DataFrame, MergeError> {
        let df = Store::new(dir).read_series()?.unwrap_or_default();
        df.sort(["run_id", "second"], SortMultipleOptions::default())
            .map_err(|source| MergeError::Table {
                dir: dir.join("series"),
                source,
            })
    };
    let (a, b) = match (load(&args.a), load(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Err(Error::Compare(e)),
    };
    let (sa, sb) = match (series(&args.a), series(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Err(Error::Compare(e)),
    };
    // Columns are read by name: the same columns in another order (a grid
    // whose [set] lists its keys in another order) are the same table.
    let in_order_of = |b: DataFrame, a: &DataFrame| {
        let same = a.width() == b.width()
            && (a.get_column_names().iter()).all(|n| b.column(n.as_str()).is_ok());
        if same {
            b.select(a.get_column_names_owned()).unwrap_or(b)
        } else {
            b
        }
    };
    let (b, sb) = (in_order_of(b, &a), in_order_of(sb, &sa));
    // Runs pair by their ids (a point's levels and a seed): a sweep of
    // other points holds other runs, whose columns say nothing of each
    // other's. Those in both are compared.
    let ids = |df: &DataFrame| -> HashSet<String> {
        (df.column("run_id").ok().and_then(|c| c.str().ok()))
            .map(|c| c.iter().flatten().map(str::to_string).collect())
            .unwrap_or_default()
    };
    let (ids_a, ids_b) = (ids(&a), ids(&b));
    let unpaired = (
        ids_a.difference(&ids_b).count(),
        ids_b.difference(&ids_a).count(),
    );
    let both: HashSet<&str> = ids_a.intersection(&ids_b).map(String::as_str).collect();
    let in_both = |df: DataFrame| -> DataFrame {
        let keep: BooleanChunked = match df.column("run_id").and_then(|c| c.str()) {
            Ok(c) => (c.iter())
                .map(|id| id.is_some_and(|id| both.contains(id)))
                .collect(),
            Err(_) => return df,
        };
        df.filter(&keep).unwrap_or(df)
    };
    // A run's place in its grid's enumeration differs between grids of
    // other points or seeds: not compared then.
    let (a, b, sa, sb) = if unpaired == (0, 0) {
        (a, b, sa, sb)
    } else {
        let placed = |df: DataFrame| df.drop("run_index").unwrap_or(df);
        (
            placed(in_both(a)),
            placed(in_both(b)),
            in_both(sa),
            in_both(sb),
        )
    };
    if unpaired == (0, 0) && a.equals_missing(&b) && sa.equals_missing(&sb) {
        println!(
            "identical: {} runs, {} columns (timing columns ignored); series: {} rows, {} columns",
            a.height(),
            a.width(),
            sa.height(),
            sa.width()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if unpaired != (0, 0) {
        println!(
            "DIFFERENT runs: {} only in {}, {} only in {}, {} in both (a run id names a point's levels and a seed: these sweeps hold other points or seeds; `sweep diff` pairs two sweeps' points by their levels; the runs in both are compared without their run_index, their place in each grid)",
            unpaired.0,
            args.a.display(),
            unpaired.1,
            args.b.display(),
            a.height()
        );
        if a.height() > 0 && a.equals_missing(&b) && sa.equals_missing(&sb) {
            println!("  the {} runs in both are identical", a.height());
        }
    }
    for (table, rows, a, b) in [("runs", "runs", &a, &b), ("series", "rows", &sa, &sb)] {
        let only = |x: &DataFrame, y: &DataFrame| -> Vec<String> {
            (x.get_column_names().iter())
                .filter(|n| y.column(n.as_str()).is_err())
                .map(|n| format!("`{n}`"))
                .collect()
        };
        let one_sided = [(&args.a, only(a, b)), (&args.b, only(b, a))];
        if a.equals_missing(b) || (a.height() == 0 && one_sided.iter().all(|(_, c)| c.is_empty())) {
            continue;
        }
        if unpaired == (0, 0) {
            println!("DIFFERENT {table}: {} vs {} {rows}", a.height(), b.height());
        } else if a.height() > 0 {
            println!(
                "DIFFERENT {table} of the runs in both ({} {rows}):",
                a.height()
            );
        }
        for (dir, cols) in one_sided {
            if !cols.is_empty() {
                println!("  columns only in {}: {}", dir.display(), cols.join(", "));
            }
        }
        if a.height() == b.height() {
            for col in a.columns() {
                if let Ok(other) = b.column(col.name())
                    && !col.equals_missing(other)
                {
                    println!("  column `{}` differs", col.name());
                }
            }
        }
    }
    Ok(ExitCode::FAILURE)
}
