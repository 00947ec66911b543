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
use crate::records::PartMetadata;
use analysis::IoError;
pub use analysis::manifest::Manifest;
pub use analysis::manifest::Shard;
use analysis::part::{Part, list};
use polars::prelude::*;
use std::collections::{HashMap, HashSet};
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

/// The files this tool writes in a sweep directory, by folder, besides the
/// report's (listed in `analysis/.report-files`).
/// Names are matched whole (`manifest-backup.json` or `part-s0of2-000000
/// (copy).parquet` are a user's, not ours).
type Written = (&'static str, fn(&str) -> bool);

/// Present while a merge copies into the directory (see
/// [`Store::begin_merge`]).
const MERGING: &str = "merging.json";
const WRITTEN: &[Written] = &[
    ("", |n| {
        let n = committed_name(n);
        is_manifest_name(n) || is_index_name(n) || n == MERGING
    }),
    ("runs", is_part),
    ("series", is_part),
    ("slurm", |n| {
        n == "sweep.sbatch"
            || (n.strip_prefix("task-").and_then(|r| r.strip_suffix(".out")))
                .and_then(|r| r.split_once('_'))
                .is_some_and(|(job, task)| is_number(job) && is_number(task))
    }),
];

/// `.nfs` and hex digits: the name an NFS client gives a file deleted
/// while a process still has it open (a notebook reading a part that
/// `--force` removed), until it is closed. Neither a user's file nor ours:
/// it is never deleted, and it does not make a directory foreign.
fn is_nfs_placeholder(name: &str) -> bool {
    name.strip_prefix(".nfs")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `entries` (a folder's) are folders that hold no file.
fn holds_no_file(entries: &[PathBuf]) -> Result<bool, StoreError> {
    for p in entries {
        if !p.is_dir() || !holds_no_file(&list_in(p, "")?)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `manifest.json` or `manifest-s<I>of<N>.json`.
pub(crate) fn is_manifest_name(n: &str) -> bool {
    n == "manifest.json"
        || (n
            .strip_prefix("manifest-")
            .and_then(|r| r.strip_suffix(".json")))
        .is_some_and(is_tag)
}

/// `parts-s<I>of<N>.json`, a shard's index.
pub(crate) fn is_index_name(n: &str) -> bool {
    (n.strip_prefix("parts-")
        .and_then(|r| r.strip_suffix(".json")))
    .is_some_and(is_tag)
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `s<I>of<N>` ([`tag`]).
fn is_tag(s: &str) -> bool {
    (s.strip_prefix('s').and_then(|r| r.split_once("of")))
        .is_some_and(|(i, n)| is_number(i) && is_number(n))
}

/// The temporary name a file of the tool is written under before its
/// rename: hidden (`.part-...parquet.tmp`), so that a reader of the
/// directory (pyarrow's, which skips names starting with `.` or `_`) never
/// takes a half-written or uncommitted part for one.
pub fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.tmp"))
}

/// The name a file of the tool's has once committed: `name` without the
/// temporary form of [`tmp_path`] (or the unhidden `.tmp` earlier versions
/// wrote).
fn committed_name(name: &str) -> &str {
    match name.strip_suffix(".tmp") {
        Some(n) => n.strip_prefix('.').unwrap_or(n),
        None => name,
    }
}

/// `part-s<I>of<N>-<number>.parquet` (or its temporary name before the
/// rename).
fn is_part(name: &str) -> bool {
    let name = committed_name(name);
    (name
        .strip_prefix("part-")
        .and_then(|r| r.strip_suffix(".parquet")))
    .and_then(|r| r.rsplit_once('-'))
    .is_some_and(|(tag, number)| is_tag(tag) && is_number(number))
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

    /// Refuses a folder of the sweep's (`runs/`, `series/`, `analysis/`,
    /// `analysis/plots/`, `slurm/`) that is a symbolic link, and an output
    /// path that is a file or a link to nothing, before anything is written
    /// or deleted there.
    pub fn refuse_linked_dirs(&self) -> Result<(), StoreError> {
        if fs::symlink_metadata(&self.root).is_ok() && !self.root.is_dir() {
            return Err(StoreError::NotADirectory {
                path: self.root.clone(),
            });
        }
        for sub in ["runs", "series", "analysis", "analysis/plots", "slurm"] {
            let path = self.root.join(sub);
            if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                let target = fs::read_link(&path).map_err(IoError::at(&path))?;
                return Err(StoreError::Linked { path, target });
            }
        }
        Ok(())
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

    /// Every manifest in the directory (whole-grid and per-shard); a file
    /// of a manifest's name that does not read as one is an error naming
    /// it (passed over, the directory would read as one without its
    /// manifest).
    pub fn manifests(&self) -> Result<Vec<(PathBuf, Manifest)>, StoreError> {
        if !self.root.is_dir() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for p in list_in(&self.root, ".json")? {
            if !is_manifest_name(&file_name(&p)) {
                continue;
            }
            let text = fs::read_to_string(&p).map_err(IoError::at(&p))?;
            // Every field has a default (older manifests lack some), so
            // any JSON object reads: the tool's name and a fingerprint
            // tell ours from another program's `manifest.json`.
            match serde_json::from_str::<Manifest>(&text) {
                Ok(m) if m.tool.starts_with("sweep ") && !m.fingerprint.is_empty() => {
                    out.push((p, m))
                }
                Ok(_) => return Err(StoreError::ForeignManifest { path: p }),
                Err(source) => return Err(StoreError::Manifest { path: p, source }),
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Marks the directory as the target of a merge copying into it,
    /// until [`Store::end_merge`]; `command` is the merge's, to run again
    /// if it stops before it ends.
    pub fn begin_merge(&self, command: &str) -> Result<(), StoreError> {
        let path = self.root.join(MERGING);
        let text = serde_json::json!({ "command": command }).to_string() + "\n";
        Ok(write_inside(&path, text.as_bytes(), Some("merging"))?)
    }

    /// The merge into the directory has written its manifest.
    pub fn end_merge(&self) -> Result<(), StoreError> {
        let path = self.root.join(MERGING);
        if path.exists() {
            remove(&path)?;
        }
        Ok(())
    }

    /// A merge into the directory that stopped before it ended (no writer
    /// holds it): the command that finishes it.
    fn stopped_merge(&self) -> Result<Option<String>, StoreError> {
        if crate::lock::is_being_written(&self.root, Shard::WHOLE)? {
            return Ok(None);
        }
        self.unfinished_merge()
    }

    /// The command of a merge into the directory that has not ended: one
    /// running, or stopped (a caller holding the directory's lock knows
    /// which). Not once a whole-grid manifest is there: the merge wrote
    /// it, or a whole-grid run took the directory over with `--force`.
    pub fn unfinished_merge(&self) -> Result<Option<String>, StoreError> {
        let path = self.root.join(MERGING);
        if !path.exists() || self.manifest_path(Shard::WHOLE).exists() {
            return Ok(None);
        }
        let text = fs::read_to_string(&path).map_err(IoError::at(&path))?;
        let command = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["command"].as_str().map(str::to_string))
            .unwrap_or_else(|| "sweep merge ... --into DIR".to_string());
        Ok(Some(command))
    }

    pub fn write_manifest(&self, m: &Manifest) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(m).expect("a manifest serializes") + "\n";
        let path = self.manifest_path(m.shard);
        Ok(write_inside(&path, text.as_bytes(), Some("manifest"))?)
    }

    /// Refuses `manifests` (the directory's) that are shards' alone: the
    /// whole grid's results are theirs merged (`sweep merge`).
    pub fn refuse_shards_only(&self, manifests: &[(PathBuf, Manifest)]) -> Result<(), DirError> {
        let whole = self.manifest_path(Shard::WHOLE);
        if manifests.is_empty() || manifests.iter().any(|(p, _)| *p == whole) {
            return Ok(());
        }
        Err(DirError::ShardsOnly {
            dir: self.root.clone(),
            manifests: manifests.iter().map(|(p, _)| file_name(p)).collect(),
        })
    }

    /// A manifest in the directory of another sweep than `fingerprint`'s,
    /// as the error that refuses the directory; `what` names the kind of
    /// results asked for (`grid`), `fix` another way out, `changes` what
    /// differs from a manifest's results (nothing where it is not known).
    pub fn refuse_foreign(
        &self,
        fingerprint: &str,
        what: &'static str,
        fix: &'static str,
        changes: &dyn Fn(&Manifest) -> Vec<String>,
    ) -> Result<(), DirError> {
        match self
            .manifests()?
            .into_iter()
            .find(|(_, m)| m.fingerprint != fingerprint)
        {
            Some((manifest, m)) => Err(DirError::Foreign(Box::new(ForeignResults {
                dir: self.root.clone(),
                what,
                changes: changes(&m),
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
        // Exactly the names this shard's writer gives its parts: a user's
        // `part-s0of2-000000-copy.parquet` is not one, and stays.
        let own = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| parse_part_name(committed_name(n)))
                .is_some_and(|(s, _)| s == shard)
        };
        let mut removed = 0;
        for dir in [runs_dir(&self.root), series_dir(&self.root)] {
            for p in list_in(&dir, ".tmp")?.into_iter().filter(own) {
                remove(&p)?;
                removed += 1;
            }
        }
        // The series part of the runs part its writer was committing when
        // it stopped (written first): numbered next after every part its
        // index lists. Any other series file without its runs part (a
        // copy, a file from elsewhere) is not this writer's to delete:
        // `committed_parts` refuses it, naming it.
        if !self.index_path(shard).exists() {
            return Ok(removed);
        }
        let index = self.read_index(shard)?;
        let next = next_unlisted(index.parts.iter().map(|e| e.name.as_str()), shard);
        let committed: HashSet<_> = self
            .runs_parts()?
            .into_iter()
            .filter_map(|p| p.file_name().map(|n| n.to_owned()))
            .collect();
        for p in list_in(&series_dir(&self.root), ".parquet")?
            .into_iter()
            .filter(own)
        {
            let numbered_next = parse_part_name(&file_name(&p)).is_some_and(|(_, k)| k == next);
            if numbered_next && !p.file_name().is_some_and(|n| committed.contains(n)) {
                remove(&p)?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Removes the temporary files of this tool's names that a writer
    /// killed before its rename left (`kill -9` in a merge's copy); only
    /// for a writer that holds the whole directory, so none is in use.
    /// Returns how many files.
    pub fn remove_stale_tmp(&self) -> Result<usize, StoreError> {
        self.remove_written(".tmp")
    }

    /// Removes the files this tool writes (`WRITTEN`) whose names end in
    /// `suffix`; returns how many.
    fn remove_written(&self, suffix: &str) -> Result<usize, StoreError> {
        let mut removed = 0;
        for (sub, ours) in WRITTEN {
            let dir = self.root.join(sub);
            if !dir.is_dir() {
                continue;
            }
            for p in list_in(&dir, suffix)? {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if p.is_file() && ours(name) {
                    remove(&p)?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// The shards other than `shard` with part files in the directory.
    pub fn other_shards(&self, shard: Shard) -> Result<Vec<Shard>, StoreError> {
        let mut shards = Vec::new();
        for dir in [runs_dir(&self.root), series_dir(&self.root)] {
            for p in list_in(&dir, ".parquet")? {
                if let Some((s, _)) = parse_part_name(&file_name(&p))
                    && s != shard
                    && !shards.contains(&s)
                {
                    shards.push(s);
                }
            }
        }
        Ok(shards)
    }

    /// The runs parts written by `shard`.
    pub fn own_parts(&self, shard: Shard) -> Result<Vec<PathBuf>, StoreError> {
        Ok(self
            .runs_parts()?
            .into_iter()
            .filter(|p| parse_part_name(&file_name(p)).is_some_and(|(s, _)| s == shard))
            .collect())
    }

    /// `--force` of a whole grid: removes every file this tool writes in a
    /// sweep directory (the parts of every shard and their temporaries, the
    /// manifests, the report, the Slurm script and its logs), and a folder
    /// only once it is empty, so that whatever a user put there stays.
    pub fn remove_all_written(&self) -> Result<(), StoreError> {
        // A Parquet file beside the parts that is none of them would be
        // refused after the run (its runs counted twice), and is not ours
        // to delete: refused before anything is deleted.
        self.refuse_unrecorded_parts(None)?;
        // The report's files are those its list names (`.report-files`),
        // not every table or page a user may keep there.
        analysis::report::remove_report(&self.root.join("analysis"))?;
        self.remove_written("")?;
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

    /// Whether the directory holds anything this tool did not write
    /// (beside its lock files, parts, manifests, indexes, and the Slurm
    /// script and logs that `sweep slurm` leaves before the first task
    /// starts): such a directory without a manifest is not a sweep's.
    pub fn holds_foreign_files(&self) -> Result<bool, StoreError> {
        for p in list_in(&self.root, "")? {
            let name = file_name(&p);
            if is_nfs_placeholder(&name) {
                continue;
            }
            let ours = if p.is_dir() {
                let mut files = list_in(&p, "")?;
                files.retain(|f| !is_nfs_placeholder(&file_name(f)));
                // A folder without a file holds nothing to mix with (a
                // report's `analysis/plots/` whose files `--force` removed).
                holds_no_file(&files)?
                    || match WRITTEN
                        .iter()
                        .find(|(sub, _)| !sub.is_empty() && *sub == name)
                    {
                        Some((_, is_ours)) => files.iter().all(|f| is_ours(&file_name(f))),
                        None => false,
                    }
            } else {
                crate::lock::is_lock_file(&name) || (WRITTEN[0].1)(&name)
            };
            if !ours {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Refuses a directory that is not a sweep's ([`Store::holds_foreign_files`]
    /// without a manifest), before anything is written there (its lock
    /// files included).
    pub fn refuse_not_ours(&self) -> Result<(), crate::error::DirError> {
        self.refuse_not_ours_as(false)
    }

    /// [`Store::refuse_not_ours`] for a writer asked to `--force` (the
    /// error then says that nothing is deleted there either).
    pub fn refuse_not_ours_as(&self, force: bool) -> Result<(), crate::error::DirError> {
        self.refuse_linked_dirs()?;
        if self.root.is_dir() && self.manifests()?.is_empty() && self.holds_foreign_files()? {
            return Err(crate::error::DirError::NotOurs {
                dir: self.root.clone(),
                force,
            });
        }
        Ok(())
    }

    /// Refuses, naming it, a Parquet file in `runs/` or `series/` (of
    /// `shard`'s part names, or any) that the directory's records do not
    /// say this tool wrote, before `--force` deletes anything: a file named
    /// like a part is not ours by its name alone (a copy from elsewhere
    /// would be deleted), as `--resume` and every reader refuse it
    /// ([`Store::committed_parts`]). Ours are:
    /// - the parts a shard's index lists, and the one part a writer of the
    ///   shard can have left unlisted (numbered next after them: a crash
    ///   between its rename and the index, which a resume removes too);
    /// - of a shard without a readable index (written by an older version,
    ///   its index damaged, or a merge stopped before it copied it), a part
    ///   whose own Parquet metadata says this tool wrote it as that shard's,
    ///   of a sweep whose manifest is here, or of the merge stopped here.
    ///
    /// Temporary files (`.part-*.parquet.tmp`) have names only this tool
    /// writes.
    fn refuse_unrecorded_parts(&self, shard: Option<Shard>) -> Result<(), StoreError> {
        let fingerprints: Vec<String> = (self.manifests()?.into_iter())
            .map(|(_, m)| m.fingerprint)
            .collect();
        let merging = self.root.join(MERGING).exists();
        // Each shard's index, read once: `None` where it has no readable one.
        let mut indexes: HashMap<(u64, u64), Option<PartsIndex>> = HashMap::new();
        for dir in [runs_dir(&self.root), series_dir(&self.root)] {
            for path in list_in(&dir, ".parquet")? {
                let name = file_name(&path);
                let parsed = parse_part_name(&name);
                if shard.is_some() && parsed.map(|(s, _)| s) != shard {
                    continue;
                }
                let ours = match parsed {
                    None => false,
                    Some((s, k)) => {
                        let index = match indexes.entry((s.index, s.count)) {
                            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                            std::collections::hash_map::Entry::Vacant(e) => {
                                e.insert(self.readable_index(s)?)
                            }
                        };
                        match index {
                            Some(index) => {
                                let names = index.parts.iter().map(|e| e.name.as_str());
                                index.parts.iter().any(|e| e.name == name)
                                    || k == next_unlisted(names, s)
                            }
                            None => stamped_as_ours(&path, s, &fingerprints, merging),
                        }
                    }
                };
                if !ours {
                    return Err(StoreError::NotCommitted { path });
                }
            }
        }
        Ok(())
    }

    /// `shard`'s index, `None` where it has none or one that does not read
    /// (damaged or edited).
    fn readable_index(&self, shard: Shard) -> Result<Option<PartsIndex>, StoreError> {
        if !self.index_path(shard).exists() {
            return Ok(None);
        }
        match self.read_index(shard) {
            Ok(index) => Ok(Some(index)),
            Err(StoreError::Index { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes `shard`'s parts (runs and series) and manifest; refused
    /// before anything is deleted where a file named as its part is none
    /// of them ([`Store::refuse_unrecorded_parts`]).
    pub fn remove_own(&self, shard: Shard) -> Result<(), StoreError> {
        self.refuse_unrecorded_parts(Some(shard))?;
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
        self.remove_index(shard)
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
        self.committed_parts(shard, Check::All)?
            .iter()
            .map(|p| Part::read(p, Some(columns)).map_err(StoreError::from))
            .collect()
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
        Ok(number_after(max))
    }

    /// Writes one batch: series part, then runs part, each atomically, then
    /// the shard's index with both files' rows and SHA-256 (the commit).
    pub fn write_batch(
        &self,
        shard: Shard,
        part: u64,
        runs: &mut DataFrame,
        series: &mut DataFrame,
        metadata: &PartMetadata,
    ) -> Result<(), StoreError> {
        let name = format!("{}{part:06}.parquet", part_prefix(shard));
        crate::crash::next_part();
        let series_path = series_dir(&self.root).join(&name);
        let series_sum = write_parquet(&series_path, series, &metadata.series, "series")?;
        let runs_path = runs_dir(&self.root).join(&name);
        let runs_sum = write_parquet(&runs_path, runs, &metadata.runs, "runs")?;
        let mut index = self.read_index(shard)?;
        index.shard = shard;
        index.parts.retain(|e| e.name != name);
        index.parts.push(PartEntry {
            name,
            runs: runs_sum,
            series: series_sum,
        });
        self.write_index(&index)
    }

    /// The whole `runs` table (all parts), or `None` when there is none; a
    /// run id in two rows is refused, naming both files.
    pub fn read_runs(&self) -> Result<Option<DataFrame>, StoreError> {
        let parts = CommittedRuns::of_parts(self.committed_parts(None, Check::All)?)?.parts;
        read_table(&parts, |part| part.to_path_buf())
    }

    /// The series table of every committed part, as [`Store::read_runs`].
    pub fn read_series(&self) -> Result<Option<DataFrame>, StoreError> {
        let series = series_dir(&self.root);
        read_table(&self.committed_parts(None, Check::All)?, |part| {
            series.join(part.file_name().expect("a file"))
        })
    }
}

/// One table of the committed `parts`: the file `path_of` gives for each
/// runs part, read whole and stacked.
fn read_table(
    parts: &[PathBuf],
    path_of: impl Fn(&Path) -> PathBuf,
) -> Result<Option<DataFrame>, StoreError> {
    let mut all: Option<DataFrame> = None;
    for part in parts {
        let path = path_of(part);
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

/// Counts of ok and failed runs and the events of the ok ones, in the parts
/// of `shard` (or of all shards).
pub fn count_runs(store: &Store, shard: Option<Shard>) -> Result<(u64, u64, u64), StoreError> {
    let (mut ok, mut failed, mut events) = (0, 0, 0);
    for part in store.read_parts(shard, &["status", "events"])? {
        for (s, e) in part.str("status")?.iter().zip(part.count("events")?.iter()) {
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

/// The failed runs in the parts of `shard` (or of all shards): their
/// run index and error, by run index.
pub fn failed_runs(store: &Store, shard: Option<Shard>) -> Result<Vec<(u64, String)>, StoreError> {
    let mut failed = Vec::new();
    for part in store.read_parts(shard, &["status", "run_index", "error"])? {
        let (status, index, error) = (
            part.str("status")?,
            part.u64("run_index")?,
            part.str("error")?,
        );
        for ((s, i), e) in status.iter().zip(index.iter()).zip(error.iter()) {
            if s != Some("ok") {
                failed.push((i.unwrap_or(0), e.unwrap_or("").to_string()));
            }
        }
    }
    failed.sort();
    Ok(failed)
}

/// [`list`], naming the directory in an error.
fn list_in(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, StoreError> {
    Ok(list(dir, suffix).map_err(IoError::at(dir))?)
}

fn remove(path: &Path) -> Result<(), StoreError> {
    Ok(fs::remove_file(path).map_err(IoError::at(path))?)
}

/// Writes `df` atomically (temporary name, sync, rename); `what` names the
/// table for the crash points of the tests.
fn write_parquet(
    path: &Path,
    df: &mut DataFrame,
    metadata: &[(String, String)],
    what: &str,
) -> Result<FileSum, StoreError> {
    let tmp = tmp_path(path);
    let io = |source| {
        StoreError::Io(IoError {
            path: path.to_path_buf(),
            source,
        })
    };
    let bytes = encode(df, metadata).map_err(|source| StoreError::Parquet {
        path: path.to_path_buf(),
        source,
    })?;
    let mut file = create_tmp(&tmp).map_err(|e| StoreError::Io(open_error(&tmp, e)))?;
    file.write_all(&bytes).map_err(io)?;
    crate::crash::point(&format!("{what}-written"));
    file.sync_all().map_err(io)?;
    crate::crash::point(&format!("{what}-synced"));
    fs::rename(&tmp, path).map_err(io)?;
    crate::crash::point(&format!("{what}-renamed"));
    Ok(FileSum {
        rows: df.height() as u64,
        sha256: crate::grid::sha256_hex(&bytes),
    })
}

/// `df` as a part file's bytes (`sweep plan` measures a batch's size with it).
pub fn encode(df: &mut DataFrame, metadata: &[(String, String)]) -> PolarsResult<Vec<u8>> {
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes)
        .with_compression(ParquetCompression::Zstd(None))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata.to_vec())))
        .finish(df)?;
    Ok(bytes)
}

/// Whether the part file `path`, named as `shard`'s, says in its own
/// Parquet metadata that this tool wrote it as that shard's part, of a
/// sweep whose fingerprint is one of `fingerprints` (the directory's
/// manifests), or of any sweep where a merge stopped copying (`merging`:
/// its manifests may not be copied yet). A file that does not read as a
/// part is not.
fn stamped_as_ours(path: &Path, shard: Shard, fingerprints: &[String], merging: bool) -> bool {
    let key = |k: &str| analysis::part::metadata(path, k).ok().flatten();
    let by_tool = key("sweep.tool").is_some_and(|t| t.starts_with("sweep "));
    let as_shard = key("sweep.shard") == Some(format!("{}/{}", shard.index, shard.count));
    let of_sweep = merging || key("sweep.fingerprint").is_some_and(|f| fingerprints.contains(&f));
    by_tool && as_shard && of_sweep
}

/// Creates (or truncates) the temporary file `tmp` of [`tmp_path`], never
/// through a symbolic link: what is written there must land in the
/// directory, not in a file a link of that name points to.
fn create_tmp(tmp: &Path) -> std::io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    no_follow(&mut options).open(tmp)
}

/// `options` that refuse to open a symbolic link (the last component of
/// the path) instead of following it: `O_NOFOLLOW`, which fails with
/// `ELOOP` on a link ([`open_error`] says so).
pub(crate) fn no_follow(options: &mut fs::OpenOptions) -> &mut fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options
}

/// The error of opening `path` with [`no_follow`]: a link (a race past
/// [`refuse_link`]) said as one, naming its target.
pub(crate) fn open_error(path: &Path, e: std::io::Error) -> IoError {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP)
        && let Err(linked) = refuse_link(path)
    {
        return linked;
    }
    IoError::at(path)(e)
}

/// Refuses `path` when it is a symbolic link (to a file or not): a file of
/// the tool's is written only inside its directory, never through a link.
pub(crate) fn refuse_link(path: &Path) -> Result<(), IoError> {
    if !fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(());
    }
    let target = fs::read_link(path).map_err(IoError::at(path))?;
    Err(IoError {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!(
            "is a symbolic link (to {}): a sweep writes only inside its output directory, never through a link; remove the link",
            target.display()
        )),
    })
}

/// Writes `bytes` as the file `path` of an output directory (a manifest,
/// an index, `diff.md`, `sweep.sbatch`) in one rename of a synced
/// temporary file beside it, so that a reader finds the old file or the
/// new, never part of one: `path` is refused if it is a symbolic link
/// (through it, the file written would be another, elsewhere), as the
/// folders of a sweep are ([`Store::refuse_linked_dirs`], which the caller
/// checks first). `crash_points` names the file for the tests that stop a
/// sweep after each step. The error names the file and why.
pub(crate) fn write_inside(
    path: &Path,
    bytes: &[u8],
    crash_points: Option<&str>,
) -> Result<(), IoError> {
    let crash_point = |step: &str| {
        if let Some(what) = crash_points {
            crate::crash::point(&format!("{what}-{step}"));
        }
    };
    refuse_link(path)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(IoError::at(parent))?;
    }
    let tmp = tmp_path(path);
    refuse_link(&tmp)?;
    let mut file = create_tmp(&tmp).map_err(|e| open_error(&tmp, e))?;
    let written = (file.write_all(bytes))
        .inspect(|()| crash_point("written"))
        .and_then(|()| file.sync_all())
        .inspect(|()| crash_point("synced"))
        .map_err(IoError::at(&tmp))
        .and_then(|()| fs::rename(&tmp, path).map_err(IoError::at(path)))
        .inspect(|()| crash_point("renamed"));
    if written.is_err() {
        // Its own temporary file: nothing of it stays.
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// The number of the part written after part `last` (0 after none): a
/// writer's next part, and so the only one a crash can leave unlisted.
fn number_after(last: Option<u64>) -> u64 {
    last.map_or(0, |l| l + 1)
}

/// The number of the part `shard`'s writer commits after the parts of it
/// `names` lists: the only part of the shard a crash can leave unlisted.
fn next_unlisted<'a>(names: impl IntoIterator<Item = &'a str>, shard: Shard) -> u64 {
    let numbers = names.into_iter().filter_map(parse_part_name);
    number_after(numbers.filter(|(s, _)| *s == shard).map(|(_, k)| k).max())
}

/// Why a part file no index lists is refused: the part its writer was
/// committing when it stopped (numbered next after its shard's listed
/// parts; `drop_uncommitted` removes it on a resume), or one this sweep
/// never committed.
fn unlisted_part(path: PathBuf, index: &HashMap<String, (PathBuf, PartEntry)>) -> StoreError {
    match parse_part_name(&file_name(&path)) {
        Some((s, k)) if k == next_unlisted(index.keys().map(String::as_str), s) => {
            StoreError::Interrupted { path, shard: s }
        }
        _ => StoreError::NotCommitted { path },
    }
}

/// `parts-s<I>of<N>.json`: the index of the parts `shard` committed.
pub fn index_name(shard: Shard) -> String {
    format!("parts-{}.json", tag(shard))
}

/// One file of a committed part: its rows and SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileSum {
    pub rows: u64,
    pub sha256: String,
}

/// A committed part: its file name (the same under `runs/` and `series/`)
/// and what each file held when it was written.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartEntry {
    pub name: String,
    pub runs: FileSum,
    pub series: FileSum,
}

/// A shard's index of committed parts (`parts-s<I>of<N>.json`), rewritten
/// atomically after each runs part's rename: a part is committed once it
/// is listed here with its checksums.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PartsIndex {
    pub shard: Shard,
    pub parts: Vec<PartEntry>,
}

/// The shard a part file name belongs to (`part-s<I>of<N>-<k>.parquet`)
/// and its number, when it is a name this tool writes.
fn parse_part_name(name: &str) -> Option<(Shard, u64)> {
    let rest = name.strip_prefix("part-s")?.strip_suffix(".parquet")?;
    let (i, rest) = rest.split_once("of")?;
    let (n, k) = rest.split_once('-')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(all_digits(i) && all_digits(n) && k.len() == 6 && all_digits(k)) {
        return None;
    }
    let shard = Shard {
        index: i.parse().ok()?,
        count: n.parse().ok()?,
    };
    Some((shard, k.parse().ok()?))
}

pub(crate) fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// SHA-256 of a file's bytes, as hex.
pub fn file_sha256(path: &Path) -> Result<String, StoreError> {
    let bytes = fs::read(path).map_err(IoError::at(path))?;
    Ok(crate::grid::sha256_hex(&bytes))
}

/// How strictly [`Store::committed_parts`] treats parts that no index lists.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Every file in `runs/` must be committed (merge, compare, report),
    /// but for the part that a writer running now is committing (renamed,
    /// not yet in its index): skipped, not counted.
    All,
    /// Parts of other shards not (yet) listed are being written by them
    /// right now (a shared directory): skipped, not counted.
    Own(Shard),
    /// The caller holds the directory exclusively (a merge): no writer is
    /// committing anything, so every file no index lists is refused (its
    /// own shard lock would read as a writer's).
    Alone,
}

impl Store {
    pub fn index_path(&self, shard: Shard) -> PathBuf {
        self.root.join(index_name(shard))
    }

    /// `shard`'s index; empty when it has none yet.
    pub fn read_index(&self, shard: Shard) -> Result<PartsIndex, StoreError> {
        let path = self.index_path(shard);
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|source| StoreError::Index {
                path: path.clone(),
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PartsIndex {
                shard,
                parts: Vec::new(),
            }),
            Err(e) => Err(IoError { path, source: e }.into()),
        }
    }

    fn write_index(&self, index: &PartsIndex) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(index).expect("an index serializes") + "\n";
        let path = self.index_path(index.shard);
        Ok(write_inside(&path, text.as_bytes(), Some("index"))?)
    }

    /// Whether any shard wrote an index here.
    fn has_index(&self) -> Result<bool, StoreError> {
        Ok(list_in(&self.root, ".json")?
            .iter()
            .any(|p| is_index_name(&file_name(p))))
    }

    /// The names of the parts the directory's indexes list.
    pub fn indexed_parts(&self) -> Result<HashSet<String>, StoreError> {
        Ok(self.all_indexes()?.into_keys().collect())
    }

    /// Refuses a part an index lists whose runs or series file is gone,
    /// naming it and its index.
    pub fn refuse_missing_parts(&self) -> Result<(), StoreError> {
        self.refuse_missing(&self.all_indexes()?, None)
    }

    /// [`Store::refuse_missing_parts`] for `index`, of `shard`'s parts or
    /// of every shard's.
    fn refuse_missing(
        &self,
        index: &HashMap<String, (PathBuf, PartEntry)>,
        shard: Option<Shard>,
    ) -> Result<(), StoreError> {
        for (name, (index_file, _)) in index {
            let of = parse_part_name(name).map(|(s, _)| s);
            if shard.is_some() && of != shard {
                continue;
            }
            for dir in [runs_dir(&self.root), series_dir(&self.root)] {
                let p = dir.join(name);
                if !p.exists() {
                    return Err(StoreError::MissingPart {
                        path: p,
                        index: index_file.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Every index in the directory: part name -> (index file, entry).
    fn all_indexes(&self) -> Result<HashMap<String, (PathBuf, PartEntry)>, StoreError> {
        let mut out = HashMap::new();
        for path in list_in(&self.root, ".json")? {
            let name = file_name(&path);
            if !is_index_name(&name) {
                continue;
            }
            let text = fs::read_to_string(&path).map_err(IoError::at(&path))?;
            let index: PartsIndex =
                serde_json::from_str(&text).map_err(|source| StoreError::Index {
                    path: path.clone(),
                    source,
                })?;
            for e in index.parts {
                out.insert(e.name.clone(), (path.clone(), e));
            }
        }
        Ok(out)
    }

    /// The committed runs parts (of every shard, or of `shard`), each
    /// checked against its index entry: listed, same SHA-256 for the runs
    /// part and its series part. Anything else is refused, naming the file.
    pub fn committed_parts(
        &self,
        shard: Option<Shard>,
        check: Check,
    ) -> Result<Vec<PathBuf>, StoreError> {
        // A merge stopped midway left a mix of its sources' files, which
        // only the merge run again makes whole.
        if let Some(command) = self.stopped_merge()? {
            return Err(StoreError::MergeStopped {
                dir: self.root.clone(),
                command,
            });
        }
        // The files before the indexes: a part committed in between is
        // listed by the time its index is read.
        let on_disk = self.runs_parts()?;
        let mut index = self.all_indexes()?;
        let series = series_dir(&self.root);
        let mut parts = Vec::new();
        for path in on_disk {
            let name = file_name(&path);
            let of = parse_part_name(&name).map(|(s, _)| s);
            if shard.is_some() && of != shard {
                continue;
            }
            if !index.contains_key(&name) {
                match (check, of) {
                    // Between its rename and its index entry: a part that
                    // a writer running now is committing.
                    (Check::Own(own), Some(s)) if s != own => continue,
                    (Check::All, Some(s)) if crate::lock::is_being_written(&self.root, s)? => {
                        continue;
                    }
                    // Its writer is gone, so its index is final: it may
                    // have listed the part since the first read.
                    (Check::All, Some(_)) => index = self.all_indexes()?,
                    _ => {}
                }
            }
            if !index.contains_key(&name) {
                if index.is_empty() && !self.has_index()? {
                    return Err(StoreError::NoIndex {
                        dir: self.root.clone(),
                    });
                }
                return Err(unlisted_part(path, &index));
            }
            parts.push(path);
        }
        // A series file no index lists would be read with the rest of
        // `series/` (its rows counted twice): refused as in `runs/`, but
        // for the series part of the runs part a writer is committing
        // now, or was when it stopped (written first, then the runs part).
        let committing = |s: Shard| match check {
            Check::Own(own) => Ok(s != own),
            Check::All => crate::lock::is_being_written(&self.root, s),
            Check::Alone => Ok(false),
        };
        for path in list_in(&series, ".parquet")? {
            let name = file_name(&path);
            let of = parse_part_name(&name).map(|(s, _)| s);
            if (shard.is_some() && of != shard) || index.contains_key(&name) {
                continue;
            }
            if let Some(s) = of
                && committing(s)?
            {
                continue;
            }
            return Err(unlisted_part(path, &index));
        }
        self.refuse_missing(&index, shard)?;
        use rayon::prelude::*;
        parts.par_iter().try_for_each(|path| {
            let name = file_name(path);
            let (_, entry) = &index[&name];
            for (p, sum) in [
                (path.clone(), &entry.runs),
                (series.join(&name), &entry.series),
            ] {
                if file_sha256(&p)? != sum.sha256 {
                    return Err(StoreError::Damaged { path: p });
                }
            }
            Ok(())
        })?;
        Ok(parts)
    }

    /// Before a resume: what a crash or a user left of `shard`'s parts
    /// that can be redone. A runs part renamed but not yet in the index
    /// (a crash between the two) is removed; a listed part whose runs or
    /// series file is missing is removed with its entry. Their runs are
    /// then run again. Returns one line per part.
    ///
    /// The index is created (empty) before the shard's first part, so a
    /// shard with parts and no index was not written by this version: its
    /// parts are left for [`Store::committed_parts`] to refuse.
    pub fn drop_uncommitted(&self, shard: Shard) -> Result<Vec<String>, StoreError> {
        if !self.index_path(shard).exists() {
            if self.own_parts(shard)?.is_empty() {
                self.write_index(&PartsIndex {
                    shard,
                    parts: Vec::new(),
                })?;
            }
            return Ok(Vec::new());
        }
        let mut index = self.read_index(shard)?;
        let mut notes = Vec::new();
        let runs = runs_dir(&self.root);
        let series = series_dir(&self.root);
        // Only one part is ever between its rename and the index update:
        // the one numbered next after every listed part (`next_part`). Any
        // other unlisted part (a backup copy, a copy from elsewhere) is
        // not a crash's leftover: `committed_parts` refuses it, naming it.
        let next = next_unlisted(index.parts.iter().map(|e| e.name.as_str()), shard);
        let unlisted: Vec<PathBuf> = self
            .own_parts(shard)?
            .into_iter()
            .filter(|p| {
                let name = file_name(p);
                !index.parts.iter().any(|e| e.name == name)
                    && parse_part_name(&name).is_some_and(|(_, k)| k == next)
            })
            .collect();
        if let [path] = unlisted.as_slice() {
            let name = file_name(path);
            remove(path)?;
            let s = series.join(&name);
            if s.exists() {
                remove(&s)?;
            }
            notes.push(format!(
                "{}: written but not committed to {} (interrupted): its runs are redone",
                path.display(),
                index_name(shard)
            ));
        }
        let before = index.parts.len();
        let mut kept = Vec::new();
        for e in index.parts {
            let (r, s) = (runs.join(&e.name), series.join(&e.name));
            match (r.exists(), s.exists()) {
                (true, true) => kept.push(e),
                (r_exists, _) => {
                    let (gone, other) = if r_exists { (&s, &r) } else { (&r, &s) };
                    if other.exists() {
                        remove(other)?;
                    }
                    notes.push(format!(
                        "{} is missing: the runs of part {} are redone",
                        gone.display(),
                        e.name
                    ));
                }
            }
        }
        index.parts = kept;
        if index.parts.len() != before {
            self.write_index(&index)?;
        }
        Ok(notes)
    }

    /// Removes `shard`'s index (with its parts, by [`Store::remove_own`] or `--force`).
    pub fn remove_index(&self, shard: Shard) -> Result<(), StoreError> {
        let p = self.index_path(shard);
        if p.exists() {
            remove(&p)?;
        }
        Ok(())
    }

    /// Every committed run (of `shard` or all, as [`Store::committed_parts`]
    /// checks them); a run id in two rows is refused.
    pub fn committed_runs(
        &self,
        shard: Option<Shard>,
        check: Check,
    ) -> Result<CommittedRuns, StoreError> {
        CommittedRuns::of_parts(self.committed_parts(shard, check)?)
    }
}

/// The committed runs of a directory: run id -> (run index, the part in
/// `parts` that holds it).
pub struct CommittedRuns {
    pub parts: Vec<PathBuf>,
    pub runs: HashMap<String, (u64, usize)>,
}

impl CommittedRuns {
    /// The runs of `parts` (verified parts, of one directory or of the
    /// directories a merge combines); a run id in two rows is refused.
    pub fn of_parts(parts: Vec<PathBuf>) -> Result<CommittedRuns, StoreError> {
        let mut runs: HashMap<String, (u64, usize)> = HashMap::new();
        for (k, path) in parts.iter().enumerate() {
            let part = Part::read(path, Some(&["run_id", "run_index"]))?;
            for (id, index) in part
                .str("run_id")?
                .iter()
                .zip(part.u64("run_index")?.iter())
            {
                let id = id.unwrap_or_default().to_string();
                if let Some((_, first)) = runs.get(&id) {
                    return Err(StoreError::DuplicateRun {
                        run_id: id,
                        first: parts[*first].clone(),
                        second: path.clone(),
                    });
                }
                runs.insert(id, (index.unwrap_or(u64::MAX), k));
            }
        }
        Ok(CommittedRuns { parts, runs })
    }
}
