//! The output directory of a sweep:
//!
//! ```text
//! out/<grid>/manifest.json                 provenance and counts (per shard: manifest-s<I>of<N>.json)
//! out/<grid>/runs/part-s<I>of<N>-<k>.parquet   one row per run
//! out/<grid>/series/part-s<I>of<N>-<k>.parquet per-second series of the same runs
//! ```
//!
//! A part is written to a temporary name and renamed, series first, runs
//! last: a runs part is the commit record of its batch. After a crash,
//! temporary files and series parts without their runs part are removed,
//! and the run ids found in runs parts are done.

use polars::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Which runs of the enumeration this process owns: run `i` belongs to
/// shard `i % count` (round-robin, so every shard gets a fair mix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn owns(&self, run: u64) -> bool {
        run % self.count == self.index
    }

    fn tag(&self) -> String {
        format!("s{}of{}", self.index, self.count)
    }

    /// The start of this shard's part file names.
    fn part_prefix(&self) -> String {
        format!("part-{}-", self.tag())
    }

    /// `I/N` with `0 <= I < N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("--shard expects I/N with 0 <= I < N (e.g. 0/4), got `{text}`");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Provenance and counts, written beside the data (and as file metadata).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub tool: String,
    pub git_commit: String,
    pub grid_name: String,
    pub grid_file: String,
    pub grid_sha256: String,
    pub grid_text: String,
    pub scenario: String,
    pub scenario_id: String,
    /// Grid and scenario content; a directory is resumed only by the same.
    pub fingerprint: String,
    pub shard: Shard,
    pub host: String,
    pub threads: usize,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// `running`, `complete`, `interrupted`, or `merged`.
    pub status: String,
    /// The grid's axis paths (columns of the runs table that vary), in order.
    pub axes: Vec<String>,
    /// The grid's dimensions: one axis, or the paths of one zip group.
    pub dimensions: Vec<Vec<String>>,
    /// The fixed overrides' paths (columns that do not vary).
    pub fixed: Vec<String>,
    /// The grid's `[report]` options.
    #[serde(default)]
    pub report: crate::grid::ReportOptions,
    /// Runs this manifest covers (the shard's, or the whole grid's).
    pub planned: u64,
    pub ok: u64,
    pub failed: u64,
    pub events_total: u64,
    pub command: Vec<String>,
}

pub struct Store {
    pub root: PathBuf,
}

fn runs_dir(root: &Path) -> PathBuf {
    root.join("runs")
}
fn series_dir(root: &Path) -> PathBuf {
    root.join("series")
}

impl Store {
    pub fn new(root: &Path) -> Store {
        Store {
            root: root.to_path_buf(),
        }
    }

    pub fn create_dirs(&self) -> std::io::Result<()> {
        fs::create_dir_all(runs_dir(&self.root))?;
        fs::create_dir_all(series_dir(&self.root))
    }

    pub fn manifest_path(&self, shard: Shard) -> PathBuf {
        if shard == Shard::WHOLE {
            self.root.join("manifest.json")
        } else {
            self.root.join(format!("manifest-{}.json", shard.tag()))
        }
    }

    /// Every manifest in the directory (whole-grid and per-shard).
    pub fn manifests(&self) -> Vec<(PathBuf, Manifest)> {
        let Ok(entries) = fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, Manifest)> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.starts_with("manifest") && name.ends_with(".json")
            })
            .filter_map(|p| {
                let text = fs::read_to_string(&p).ok()?;
                serde_json::from_str(&text).ok().map(|m| (p, m))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    pub fn write_manifest(&self, m: &Manifest) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(m).expect("a manifest serializes") + "\n";
        write_atomic(&self.manifest_path(m.shard), text.as_bytes())
    }

    /// Removes what an interrupted writer of `shard` left half done (other
    /// shards may be writing into the same directory); returns how many files.
    pub fn clean_incomplete(&self, shard: Shard) -> std::io::Result<usize> {
        let prefix = shard.part_prefix();
        let own = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        };
        let mut removed = 0;
        for dir in [runs_dir(&self.root), series_dir(&self.root)] {
            for p in list(&dir, ".tmp")?.into_iter().filter(own) {
                fs::remove_file(p)?;
                removed += 1;
            }
        }
        let committed: HashSet<_> = list(&runs_dir(&self.root), ".parquet")?
            .into_iter()
            .filter_map(|p| p.file_name().map(|n| n.to_owned()))
            .collect();
        for p in list(&series_dir(&self.root), ".parquet")?
            .into_iter()
            .filter(own)
        {
            if !p.file_name().is_some_and(|n| committed.contains(n)) {
                fs::remove_file(p)?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The runs parts written by `shard`.
    pub fn own_parts(&self, shard: Shard) -> std::io::Result<Vec<PathBuf>> {
        let prefix = shard.part_prefix();
        Ok(self
            .runs_parts()?
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .collect())
    }

    /// Deletes `shard`'s parts (runs and series) and manifest.
    pub fn remove_own(&self, shard: Shard) -> std::io::Result<()> {
        for p in self.own_parts(shard)? {
            let series = series_dir(&self.root).join(p.file_name().expect("a file"));
            if series.exists() {
                fs::remove_file(series)?;
            }
            fs::remove_file(p)?;
        }
        let manifest = self.manifest_path(shard);
        if manifest.exists() {
            fs::remove_file(manifest)?;
        }
        Ok(())
    }

    pub fn runs_parts(&self) -> std::io::Result<Vec<PathBuf>> {
        list(&runs_dir(&self.root), ".parquet")
    }

    /// Run ids already written.
    pub fn done_runs(&self) -> Result<HashSet<String>, String> {
        let mut done = HashSet::new();
        for part in self.runs_parts().map_err(|e| e.to_string())? {
            let df = read_parquet(&part, Some(&["run_id"]))?;
            let ids = df
                .column("run_id")
                .and_then(|c| c.str().cloned())
                .map_err(|e| e.to_string())?;
            done.extend(ids.iter().flatten().map(str::to_string));
        }
        Ok(done)
    }

    /// The next free part number of `shard`.
    pub fn next_part(&self, shard: Shard) -> std::io::Result<u64> {
        let prefix = shard.part_prefix();
        let max = self
            .runs_parts()?
            .iter()
            .filter_map(|p| {
                p.file_stem()?
                    .to_str()?
                    .strip_prefix(&prefix)?
                    .parse::<u64>()
                    .ok()
            })
            .max();
        Ok(max.map_or(0, |m| m + 1))
    }

    /// Writes one batch: series part, then runs part, each atomically.
    pub fn write_batch(
        &self,
        shard: Shard,
        part: u64,
        runs: &mut DataFrame,
        series: &mut DataFrame,
        metadata: &[(String, String)],
    ) -> Result<(), String> {
        let name = format!("{}{part:06}.parquet", shard.part_prefix());
        write_parquet(&series_dir(&self.root).join(&name), series, metadata)?;
        write_parquet(&runs_dir(&self.root).join(&name), runs, metadata)
    }

    /// The whole `runs` table (all parts), or `None` when there is none.
    pub fn read_runs(&self) -> Result<Option<DataFrame>, String> {
        let mut all: Option<DataFrame> = None;
        for part in self.runs_parts().map_err(|e| e.to_string())? {
            let df = read_parquet(&part, None)?;
            match &mut all {
                None => all = Some(df),
                Some(a) => {
                    a.vstack_mut_owned(df)
                        .map_err(|e| format!("{}: {e}", part.display()))?;
                }
            }
        }
        Ok(all)
    }
}

/// Counts of ok and failed runs and the events of the ok ones, in the parts
/// of `shard` (or of all shards).
pub fn count_runs(store: &Store, shard: Option<Shard>) -> Result<(u64, u64, u64), String> {
    let (mut ok, mut failed, mut events) = (0, 0, 0);
    let parts = match shard {
        Some(s) => store.own_parts(s),
        None => store.runs_parts(),
    };
    for part in parts.map_err(|e| e.to_string())? {
        let df = read_parquet(&part, Some(&["status", "events"]))?;
        let status = df
            .column("status")
            .and_then(|c| c.str().cloned())
            .map_err(|e| e.to_string())?;
        let ev = df
            .column("events")
            .and_then(|c| c.u64().cloned())
            .map_err(|e| e.to_string())?;
        for (s, e) in status.iter().zip(ev.iter()) {
            if s == Some("ok") {
                ok += 1;
                events += e.unwrap_or(0);
            } else {
                failed += 1;
            }
        }
    }
    Ok((ok, failed, events))
}

fn list(dir: &Path, suffix: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    match fs::read_dir(dir) {
        Ok(entries) => {
            for e in entries {
                let p = e?.path();
                if p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(suffix))
                {
                    out.push(p);
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    out.sort();
    Ok(out)
}

pub fn read_parquet(path: &Path, columns: Option<&[&str]>) -> Result<DataFrame, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader = ParquetReader::new(file);
    if let Some(cols) = columns {
        reader = reader.with_columns(Some(cols.iter().map(|c| c.to_string()).collect()));
    }
    reader
        .finish()
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn write_parquet(
    path: &Path,
    df: &mut DataFrame,
    metadata: &[(String, String)],
) -> Result<(), String> {
    let tmp = path.with_extension("parquet.tmp");
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut file = File::create(&tmp).map_err(|e| fail(&e))?;
    ParquetWriter::new(&mut file)
        .with_compression(ParquetCompression::Zstd(None))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata.to_vec())))
        .finish(df)
        .map_err(|e| fail(&e))?;
    file.sync_all().map_err(|e| fail(&e))?;
    fs::rename(&tmp, path).map_err(|e| fail(&e))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    fs::rename(tmp, path)
}
