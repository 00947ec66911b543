//! `sweep merge` (shards into one result) and `sweep compare` (are two
//! results the same runs with the same numbers?).

use crate::runner::now_rfc3339;
use crate::store::{Manifest, Shard, Store, count_runs};
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

pub fn merge(args: &MergeArgs) -> ExitCode {
    let target = match (&args.into, args.dirs.as_slice()) {
        (Some(t), _) => t.clone(),
        (None, [one]) => one.clone(),
        (None, _) => {
            return crate::fail_all(
                "merge",
                &["several directories need --into DIR".to_string()],
            );
        }
    };
    match merge_into(&target, &args.dirs) {
        Ok((m, shards)) => {
            println!(
                "merged {shards} shard(s) of `{}`: {} runs ({} ok, {} failed) in {}",
                m.grid_name,
                m.ok + m.failed,
                m.ok,
                m.failed,
                target.display()
            );
            if !args.no_report
                && let Err(e) = crate::report::write_report(&target)
            {
                return crate::fail_all("report", &[e]);
            }
            ExitCode::SUCCESS
        }
        Err(e) => crate::fail_all("merge", &[e]),
    }
}

/// The merged manifest and the number of shards it combines.
fn merge_into(target: &Path, dirs: &[PathBuf]) -> Result<(Manifest, u64), String> {
    let store = Store::new(target);
    store.create_dirs().map_err(|e| e.to_string())?;
    for dir in dirs.iter().filter(|d| d.as_path() != target) {
        copy_results(dir, target)?;
    }
    let shards: Vec<Manifest> = store
        .manifests()
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| m.status != "merged")
        .collect();
    let first = shards
        .first()
        .ok_or_else(|| format!("{}: no manifest found", target.display()))?;
    if let Some(other) = shards.iter().find(|m| m.fingerprint != first.fingerprint) {
        return Err(format!(
            "manifests of different grids: `{}` and `{}`",
            first.grid_name, other.grid_name
        ));
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
        return Err(format!("incomplete: {}", missing.join("; ")));
    }
    let planned: u64 = shards
        .iter()
        .filter(|m| m.shard.count == count)
        .map(|m| m.planned)
        .sum();
    let runs = store.read_runs()?.ok_or("no runs written")?;
    let ids = runs.column("run_id").map_err(|e| e.to_string())?;
    let distinct = ids.n_unique().map_err(|e| e.to_string())?;
    if distinct != runs.height() {
        return Err(format!("{} duplicate run rows", runs.height() - distinct));
    }
    if distinct as u64 != planned {
        return Err(format!("{distinct} runs written, {planned} planned"));
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
    store.write_manifest(&merged).map_err(|e| e.to_string())?;
    Ok((merged, count))
}

fn copy_results(from: &Path, to: &Path) -> Result<(), String> {
    let copy = |src: &Path, dst: &Path| {
        std::fs::copy(src, dst)
            .map(|_| ())
            .map_err(|e| format!("{}: {e}", src.display()))
    };
    for sub in ["runs", "series"] {
        let dir = from.join(sub);
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let p = entry.map_err(|e| e.to_string())?.path();
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

pub fn compare(args: &CompareArgs) -> ExitCode {
    let load = |dir: &Path| -> Result<DataFrame, String> {
        let df = Store::new(dir)
            .read_runs()?
            .ok_or_else(|| format!("{}: no runs", dir.display()))?;
        df.drop_many(TIMING_COLUMNS.iter().copied())
            .sort(["run_id"], SortMultipleOptions::default())
            .map_err(|e| e.to_string())
    };
    let (a, b) = match (load(&args.a), load(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return crate::fail_all("compare", &[e]),
    };
    if a.equals_missing(&b) {
        println!(
            "identical: {} runs, {} columns (timing columns ignored)",
            a.height(),
            a.width()
        );
        return ExitCode::SUCCESS;
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
    ExitCode::FAILURE
}
