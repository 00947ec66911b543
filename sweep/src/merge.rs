//! `sweep merge` (shards into one result) and `sweep compare` (are two
//! results the same runs with the same numbers?).

use crate::error::{Error, MergeError, StoreError};
use crate::runner::now_rfc3339;
use crate::store::{Manifest, Shard, Store, count_runs};
use analysis::IoError;
use clap::Args;
use polars::prelude::*;
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
    let (m, shards) = merge_into(&target, &args.dirs).map_err(Error::Merge)?;
    println!(
        "merged {shards} shard(s) of `{}`: {} runs ({} ok, {} failed) in {}",
        m.grid_name,
        m.ok + m.failed,
        m.ok,
        m.failed,
        target.display()
    );
    if !args.no_report {
        crate::report::write_report(&target)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The merged manifest and the number of shards it combines.
fn merge_into(target: &Path, dirs: &[PathBuf]) -> Result<(Manifest, u64), MergeError> {
    let store = Store::new(target);
    store.create_dirs()?;
    for dir in dirs.iter().filter(|d| d.as_path() != target) {
        copy_results(dir, target)?;
    }
    let shards: Vec<Manifest> = store
        .manifests()
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| m.status != "merged")
        .collect();
    let first = shards.first().ok_or_else(|| MergeError::NoManifest {
        dir: target.to_path_buf(),
    })?;
    if let Some(other) = shards.iter().find(|m| m.fingerprint != first.fingerprint) {
        return Err(MergeError::DifferentGrids {
            first: first.grid_name.clone(),
            other: other.grid_name.clone(),
        });
    }
    let count = first.shard.count;
    let mut missing = Vec::new();
    for i in 0..count {
        match shards
            .iter()
            .find(|m| m.shard == (Shard { index: i, count }))
        {
            Some(m) if m.status == "complete" => {}
            Some(m) => missing.push(format!("shard {i}/{count} is {}", m.status)),
            None => missing.push(format!("shard {i}/{count} has no manifest (not started?)")),
        }
    }
    if !missing.is_empty() {
        return Err(MergeError::Incomplete { missing });
    }
    let planned: u64 = shards
        .iter()
        .filter(|m| m.shard.count == count)
        .map(|m| m.planned)
        .sum();
    let runs = store.read_runs()?.ok_or(MergeError::NoRunsWritten)?;
    let distinct = runs
        .column("run_id")
        .and_then(|ids| ids.n_unique())
        .map_err(|source| MergeError::Table {
            dir: target.join("runs"),
            source,
        })?;
    if distinct != runs.height() {
        return Err(MergeError::Duplicates(runs.height() - distinct));
    }
    if distinct as u64 != planned {
        return Err(MergeError::Count {
            written: distinct,
            planned,
        });
    }
    let (ok, failed, events) = count_runs(&store, None)?;
    let merged = Manifest {
        shard: Shard::WHOLE,
        status: "merged".to_string(),
        planned,
        ok,
        failed,
        events_total: events,
        threads: shards.iter().map(|m| m.threads).sum(),
        host: shards
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
        ..first.clone()
    };
    store.write_manifest(&merged)?;
    Ok((merged, count))
}

fn copy_results(from: &Path, to: &Path) -> Result<(), StoreError> {
    let copy = |src: &Path, dst: &Path| {
        std::fs::copy(src, dst)
            .map(|_| ())
            .map_err(IoError::at(src))
    };
    for sub in ["runs", "series"] {
        let dir = from.join(sub);
        for entry in std::fs::read_dir(&dir).map_err(IoError::at(&dir))? {
            let p = entry.map_err(IoError::at(&dir))?.path();
            if p.extension().is_some_and(|e| e == "parquet") {
                copy(&p, &to.join(sub).join(p.file_name().expect("a file")))?;
            }
        }
    }
    for (p, m) in Store::new(from).manifests() {
        if m.status != "merged" {
            copy(&p, &to.join(p.file_name().expect("a file")))?;
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct CompareArgs {
    pub a: PathBuf,
    pub b: PathBuf,
}

/// Columns that measure the machine, not the model.
const TIMING_COLUMNS: &[&str] = &["wall_ms"];

pub fn compare(args: &CompareArgs) -> Result<ExitCode, Error> {
    let load = |dir: &Path| -> Result<DataFrame, MergeError> {
        let df = Store::new(dir)
            .read_runs()?
            .ok_or_else(|| MergeError::NoRuns {
                dir: dir.to_path_buf(),
            })?;
        df.drop_many(TIMING_COLUMNS.iter().copied())
            .sort(["run_id"], SortMultipleOptions::default())
            .map_err(|source| MergeError::Table {
                dir: dir.join("runs"),
                source,
            })
    };
    let (a, b) = match (load(&args.a), load(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Err(Error::Compare(e)),
    };
    if a.equals_missing(&b) {
        println!(
            "identical: {} runs, {} columns (timing columns ignored)",
            a.height(),
            a.width()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("DIFFERENT: {} vs {} runs", a.height(), b.height());
    if a.get_column_names() != b.get_column_names() {
        println!("  columns differ");
    } else if a.height() == b.height() {
        for col in a.columns() {
            let other = b.column(col.name()).expect("same names");
            if !col.equals_missing(other) {
                println!("  column `{}` differs", col.name());
            }
        }
    }
    Ok(ExitCode::FAILURE)
}
