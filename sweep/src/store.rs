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

use crate::error::{DirError, ForeignResults, ShardError, StoreError};
use analysis::IoError;
pub use analysis::manifest::Manifest;
pub use analysis::manifest::Shard;
use analysis::part::{Part, list};
use polars::prelude::*;
use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `s<I>of<N>`: the shard in file names.
fn tag(shard: Shard) -> String {
    format!("s{}of{}", shard.index, shard.count)
}

/// The start of `shard`'s part file names.
fn part_prefix(shard: Shard) -> String {
    format!("part-{}-", tag(shard))
}

/// `I/N` with `0 <= I < N`.
pub fn parse_shard(text: &str) -> Result<Shard, ShardError> {
    let bad = || ShardError::Spec {
        text: text.to_string(),
    };
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

pub struct Store {
    pub root: PathBuf,
}

/// The files this tool writes in a sweep directory, by folder.
type Written = (&'static str, fn(&str) -> bool);
const WRITTEN: &[Written] = &[
    ("", |n| {
        n.starts_with("manifest") && (n.ends_with(".json") || n.ends_with(".json.tmp"))
    }),
    ("runs", is_part),
    ("series", is_part),
    ("analysis", |n| {
        [".md", ".html", ".csv", ".parquet"]
            .iter()
            .any(|e| n.ends_with(e))
    }),
    ("analysis/plots", |n| {
        n.ends_with(".svg") || n.ends_with(".png")
    }),
    ("slurm", |n| {
        n == "sweep.sbatch" || (n.starts_with("task-") && n.ends_with(".out"))
    }),
];

fn is_part(name: &str) -> bool {
    name.starts_with("part-") && (name.ends_with(".parquet") || name.ends_with(".parquet.tmp"))
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

    pub fn create_dirs(&self) -> Result<(), StoreError> {
        for dir in [runs_dir(&self.root), series_dir(&self.root)] {
            fs::create_dir_all(&dir).map_err(IoError::at(dir))?;
        }
        Ok(())
    }

    pub fn manifest_path(&self, shard: Shard) -> PathBuf {
        if shard == Shard::WHOLE {
            self.root.join("manifest.json")
        } else {
            self.root.join(format!("manifest-{}.json", tag(shard)))
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

    pub fn write_manifest(&self, m: &Manifest) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(m).expect("a manifest serializes") + "\n";
        let path = self.manifest_path(m.shard);
        Ok(write_atomic(&path, text.as_bytes()).map_err(IoError::at(path))?)
    }

    /// A manifest in the directory of another sweep than `fingerprint`'s,
    /// as the error that refuses the directory; `what` names the kind of
    /// results asked for (`grid`), `fix` another way out.
    pub fn refuse_foreign(
        &self,
        fingerprint: &str,
        what: &'static str,
        fix: &'static str,
    ) -> Result<(), DirError> {
        match self
            .manifests()
            .into_iter()
            .find(|(_, m)| m.fingerprint != fingerprint)
        {
            Some((manifest, m)) => Err(DirError::Foreign(Box::new(ForeignResults {
                dir: self.root.clone(),
                what,
                grid_name: m.grid_name,
                grid_file: m.grid_file,
                manifest,
                fix,
            }))),
            None => Ok(()),
        }
    }

    /// Removes what an interrupted writer of `shard` left half done (other
    /// shards may be writing into the same directory); returns how many files.
    pub fn clean_incomplete(&self, shard: Shard) -> Result<usize, StoreError> {
        let prefix = part_prefix(shard);
        let own = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        };
        let mut removed = 0;
        for dir in [runs_dir(&self.root), series_dir(&self.root)] {
            for p in list_in(&dir, ".tmp")?.into_iter().filter(own) {
                remove(&p)?;
                removed += 1;
            }
        }
        let committed: HashSet<_> = self
            .runs_parts()?
            .into_iter()
            .filter_map(|p| p.file_name().map(|n| n.to_owned()))
            .collect();
        for p in list_in(&series_dir(&self.root), ".parquet")?
            .into_iter()
            .filter(own)
        {
            if !p.file_name().is_some_and(|n| committed.contains(n)) {
                remove(&p)?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The runs parts written by `shard`.
    pub fn own_parts(&self, shard: Shard) -> Result<Vec<PathBuf>, StoreError> {
        let prefix = part_prefix(shard);
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
    /// `--force` of a whole grid: removes every file this tool writes in a
    /// sweep directory (the parts of every shard and their temporaries, the
    /// manifests, the report, the Slurm script and its logs), and a folder
    /// only once it is empty, so that whatever a user put there stays.
    pub fn remove_all_written(&self) -> Result<(), StoreError> {
        for (sub, ours) in WRITTEN {
            let dir = self.root.join(sub);
            if !dir.is_dir() {
                continue;
            }
            for p in list_in(&dir, "")? {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if p.is_file() && ours(name) {
                    remove(&p)?;
                }
            }
        }
        for sub in ["analysis/plots", "analysis", "runs", "series", "slurm"] {
            let dir = self.root.join(sub);
            if !dir.is_dir() {
                continue;
            }
            match fs::remove_dir(&dir) {
                Ok(()) => {}
                // Not there, or holds a user's files: either way it stays.
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::DirectoryNotEmpty
                    ) => {}
                Err(e) => return Err(IoError::at(dir)(e).into()),
            }
        }
        Ok(())
    }

    /// Whether the directory holds anything but this tool's lock files: a
    /// directory with content and no manifest is not a sweep's.
    pub fn holds_files(&self) -> Result<bool, StoreError> {
        Ok(list_in(&self.root, "")?.iter().any(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !crate::lock::is_lock_file(name)
        }))
    }

    pub fn remove_own(&self, shard: Shard) -> Result<(), StoreError> {
        for p in self.own_parts(shard)? {
            let series = series_dir(&self.root).join(p.file_name().expect("a file"));
            if series.exists() {
                remove(&series)?;
            }
            remove(&p)?;
        }
        let manifest = self.manifest_path(shard);
        if manifest.exists() {
            remove(&manifest)?;
        }
        Ok(())
    }

    pub fn runs_parts(&self) -> Result<Vec<PathBuf>, StoreError> {
        list_in(&runs_dir(&self.root), ".parquet")
    }

    /// Every runs part (of `shard`, or of all shards), reading `columns`.
    pub fn read_parts(
        &self,
        shard: Option<Shard>,
        columns: &[&str],
    ) -> Result<Vec<Part>, StoreError> {
        let parts = match shard {
            Some(s) => self.own_parts(s)?,
            None => self.runs_parts()?,
        };
        parts
            .iter()
            .map(|p| Part::read(p, Some(columns)).map_err(StoreError::from))
            .collect()
    }

    /// Run ids already written.
    pub fn done_runs(&self) -> Result<HashSet<String>, StoreError> {
        let mut done = HashSet::new();
        for part in self.read_parts(None, &["run_id"])? {
            done.extend(part.str("run_id")?.iter().flatten().map(str::to_string));
        }
        Ok(done)
    }

    /// The next free part number of `shard`.
    pub fn next_part(&self, shard: Shard) -> Result<u64, StoreError> {
        let prefix = part_prefix(shard);
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
    ) -> Result<(), StoreError> {
        let name = format!("{}{part:06}.parquet", part_prefix(shard));
        write_parquet(&series_dir(&self.root).join(&name), series, metadata)?;
        write_parquet(&runs_dir(&self.root).join(&name), runs, metadata)
    }

    /// The whole `runs` table (all parts), or `None` when there is none.
    pub fn read_runs(&self) -> Result<Option<DataFrame>, StoreError> {
        let mut all: Option<DataFrame> = None;
        for path in self.runs_parts()? {
            let df = Part::read(&path, None)?.frame;
            match &mut all {
                None => all = Some(df),
                Some(a) => {
                    a.vstack_mut_owned(df)
                        .map_err(|source| StoreError::Parquet { path, source })?;
                }
            }
        }
        Ok(all)
    }
}

/// Counts of ok and failed runs and the events of the ok ones, in the parts
/// of `shard` (or of all shards).
pub fn count_runs(store: &Store, shard: Option<Shard>) -> Result<(u64, u64, u64), StoreError> {
    let (mut ok, mut failed, mut events) = (0, 0, 0);
    for part in store.read_parts(shard, &["status", "events"])? {
        for (s, e) in part.str("status")?.iter().zip(part.u64("events")?.iter()) {
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

/// [`list`], naming the directory in an error.
fn list_in(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, StoreError> {
    Ok(list(dir, suffix).map_err(IoError::at(dir))?)
}

fn remove(path: &Path) -> Result<(), StoreError> {
    Ok(fs::remove_file(path).map_err(IoError::at(path))?)
}

fn write_parquet(
    path: &Path,
    df: &mut DataFrame,
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    let tmp = path.with_extension("parquet.tmp");
    let io = |source| {
        StoreError::Io(IoError {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut file = File::create(&tmp).map_err(io)?;
    ParquetWriter::new(&mut file)
        .with_compression(ParquetCompression::Zstd(None))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata.to_vec())))
        .finish(df)
        .map_err(|source| StoreError::Parquet {
            path: path.to_path_buf(),
            source,
        })?;
    file.sync_all().map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    fs::rename(tmp, path)
}
