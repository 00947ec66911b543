//! The errors of `sweep`'s commands. Each module's failures are an enum
//! here that keeps the source error and, for every file, its path; the
//! CLI edge ([`Error`], used by `main`) adds the context line and prints
//! one problem per line.

use analysis::manifest::Shard;
use analysis::{IoError, PartError, PlotError, ReportError};
use polars::prelude::PolarsError;
use sim_core::ConfigError;
use sim_core::params::show;
use std::path::PathBuf;

/// One problem of a grid file, located by the file and the key to fix.
#[derive(Debug, thiserror::Error)]
pub enum GridError {
    #[error("{}: cannot read: {source}", file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", file.display())]
    Parse {
        file: PathBuf,
        source: toml::de::Error,
    },
    /// A structural problem: a name, the seeds, an axis, a zip group, the
    /// scenario, a `[report]` option.
    #[error("{}: {key}: {reason}", file.display())]
    Invalid {
        file: PathBuf,
        key: String,
        reason: String,
    },
    /// A value that its parameter path does not take.
    #[error("{}: {table}.\"{path}\" = {}{}: {}", file.display(), show(value), through(through_level), cause.message)]
    Value {
        file: PathBuf,
        table: &'static str,
        path: String,
        value: toml::Value,
        /// The last of the consecutive levels refused for the same reason
        /// from `value` on, and how many they are.
        through_level: Option<(toml::Value, usize)>,
        cause: ConfigError,
    },
    /// A `--set` or `--axis` argument that cannot be applied to the grid.
    #[error("{flag} {arg}: {reason}")]
    Flag {
        flag: &'static str,
        arg: String,
        reason: String,
    },
    /// A value of `--set` or `--axis` that its parameter path does not take.
    #[error("{flag} {path}={}{}: {}", typed.clone().unwrap_or_else(|| show(value)), through(through_level), cause.message)]
    FlagValue {
        flag: &'static str,
        path: String,
        value: toml::Value,
        /// The value as typed, where its parsed form reads otherwise
        /// (`1e400`, past a float's range, parses to `inf`).
        typed: Option<String>,
        /// As [`GridError::Value`]'s.
        through_level: Option<(toml::Value, usize)>,
        cause: ConfigError,
    },
    /// A point whose scenario does not validate. `setting` is the
    /// problem's path as the grid gives it (`horizon_s = 20`,
    /// `--set horizon_s=20`), or the path alone when the value is the
    /// scenario file's.
    #[error(
        "{}: {}{setting}: {}",
        file.display(),
        match index {
            _ if point.is_empty() => String::new(),
            Some(i) => format!("point {i} ({point}): "),
            None => format!("at {point}: "),
        },
        cause.message
    )]
    Point {
        file: PathBuf,
        /// `None` where the points checked are not the grid's own.
        index: Option<u64>,
        point: String,
        setting: String,
        cause: ConfigError,
    },
}

/// Every problem of a grid, found before anything runs.
#[derive(Debug)]
pub struct GridErrors(pub Vec<GridError>);

impl std::fmt::Display for GridErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

impl std::error::Error for GridErrors {}

#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--shard expects I/N with 0 <= I < N (e.g. 0/4), got `{text}`")]
    Spec { text: String },
    #[error("from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT: {0}")]
    FromSlurm(#[source] Box<ShardError>),
    #[error(
        "{set} is set but {unset} is not, so the shard is unknown; pass --shard I/N (or unset {set} to run the whole grid)"
    )]
    HalfSlurm {
        set: &'static str,
        unset: &'static str,
    },
    #[error(
        "the array's task indexes are not evenly spaced (SLURM_ARRAY_TASK_ID {id}, MIN {min}, MAX {max}, STEP {step}, COUNT {count}), so task {id} is no shard of {count}; submit the array as --array=0-N (as `sweep slurm` writes it) or pass --shard I/N"
    )]
    UnevenSlurm {
        id: u64,
        min: u64,
        max: String,
        step: u64,
        count: String,
    },
}

/// The output directory's files: parts, manifests, their directories.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Part(#[from] PartError),
    /// Writing a part, or appending one to the others.
    #[error("{}: {source}", path.display())]
    Parquet { path: PathBuf, source: PolarsError },
    /// Building a batch's tables before writing them.
    #[error("{0}")]
    Batch(#[source] PolarsError),
    #[error(
        "{}: {source}: the index of the shard's parts cannot be read (edited, or cut short by a full disk?), so its parts cannot be verified; restore it from a copy, or run the grid again with --force",
        path.display()
    )]
    Index {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A file of a manifest's name this version cannot read.
    #[error(
        "{}: not a manifest this version of the tool can read ({source}); was it edited, or written by another version?",
        path.display()
    )]
    Manifest {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A file of a manifest's name that this tool did not write (another
    /// program's `manifest.json`): the directory is not a sweep's.
    #[error(
        "{} is not a sweep's manifest (it names no sweep tool and no grid fingerprint): {} is not a sweep's output directory, so nothing is written or deleted there (--force neither); choose another --out",
        path.display(),
        path.parent().map_or(String::new(), |d| d.display().to_string())
    )]
    ForeignManifest { path: PathBuf },
    /// Parts, but no index at all: written before parts were indexed.
    #[error(
        "{} has part files but no parts-*.json index (written by an older sweep, or not by sweep): they cannot be verified; run the grid again into another --out, or with --force",
        dir.display()
    )]
    NoIndex { dir: PathBuf },
    /// A Parquet file in `runs/` or `series/` that no index lists.
    #[error(
        "{}: not a part this sweep committed (no parts-*.json lists it): a copy or a file from elsewhere? Move it out of the directory: a reader of runs/*.parquet would count its runs twice, and a sweep deletes only what it wrote, so report, --resume and --force stop while it is there",
        path.display()
    )]
    NotCommitted { path: PathBuf },
    #[error(
        "{}: a merge into it stopped before it finished (killed, or its machine went down), so it holds part of its sources' results; run the merge again to finish it: {command}",
        dir.display()
    )]
    MergeStopped { dir: PathBuf, command: String },
    /// The part a writer was committing when it stopped.
    #[error(
        "{}: the part being committed when its sweep stopped (killed, or its machine went down), in no index yet: its runs are not done; run the sweep again with --resume{} to remove it and redo them",
        path.display(),
        if *shard == Shard::WHOLE { String::new() } else { format!(" --shard {}/{}", shard.index, shard.count) }
    )]
    Interrupted { path: PathBuf, shard: Shard },
    /// A folder the sweep writes in is a symbolic link: writing or
    /// deleting through it would touch files outside the directory.
    #[error(
        "{} is a symbolic link (to {}): a sweep writes and deletes only inside its output directory, never through a link; make it a plain directory, or move the whole output directory to the other disk",
        path.display(),
        target.display()
    )]
    Linked { path: PathBuf, target: PathBuf },
    /// The output directory's path is a file, or a link to nothing.
    #[error(
        "{} is not a directory ({}): choose another --out",
        path.display(),
        if path.exists() { "a file" } else { "a link to nothing" }
    )]
    NotADirectory { path: PathBuf },
    /// A part whose bytes are not those written.
    #[error(
        "{}: its SHA-256 is not the one recorded when it was written (damaged or edited): restore it from a backup, or delete it and run the sweep again with --resume to redo its runs",
        path.display()
    )]
    Damaged { path: PathBuf },
    #[error(
        "{} is listed in {} but missing: run the sweep again with --resume to redo its runs",
        path.display(),
        index.display()
    )]
    MissingPart { path: PathBuf, index: PathBuf },
    #[error("run {run_id} is written twice: in {} and in {}", first.display(), second.display())]
    DuplicateRun {
        run_id: String,
        first: PathBuf,
        second: PathBuf,
    },
    /// A row that is not the planned run of its `run_index`.
    #[error("{}: run {run_id} (run_index {index}) is not a run of this grid: the part is from another sweep; move it out", path.display())]
    NotPlanned {
        path: PathBuf,
        run_id: String,
        index: u64,
    },
}

/// ` and <last>`, or `, ..., <last> (<n> levels)`, after the first of consecutive levels
/// refused for one reason (a range of many bad levels is one line).
fn through(level: &Option<(toml::Value, usize)>) -> String {
    match level {
        None => String::new(),
        Some((last, 2)) => format!(" and {}", show(last)),
        Some((last, n)) => format!(", ..., {} ({n} levels)", show(last)),
    }
}

/// Why `dir` has no runs to read: it is not there, or holds none.
fn no_runs_in(dir: &std::path::Path) -> &'static str {
    if !dir.exists() {
        "no such directory"
    } else if !dir.is_dir() {
        "not a directory"
    } else {
        "no runs (no runs/*.parquet): not a sweep's output directory, or none written yet"
    }
}

/// A manifest of another sweep in the output directory.
#[derive(Debug)]
pub struct ForeignResults {
    pub dir: PathBuf,
    /// What this directory was asked for: `grid`, or `sweep or refinement`.
    pub what: &'static str,
    pub grid_name: String,
    pub grid_file: String,
    pub manifest: PathBuf,
    /// How else to go on, if there is a way.
    pub fix: &'static str,
    /// What differs from them, where it is known.
    pub changes: Vec<String>,
}

/// Why an output directory cannot be used (as it is) for this sweep.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error(
        "{} holds results of another {} (`{}` from {}, see {}){}; choose another --out{}",
        .0.dir.display(),
        .0.what,
        .0.grid_name,
        .0.grid_file,
        .0.manifest.display(),
        if .0.changes.is_empty() {
            String::new()
        } else {
            format!("; what differs: {}", .0.changes.join("; "))
        },
        .0.fix
    )]
    Foreign(Box<ForeignResults>),
    #[error(
        "{} holds run files but no manifest: they are not this tool's (or their manifest was deleted); choose another --out, or move them away yourself",
        dir.display()
    )]
    NoManifest { dir: PathBuf },
    #[error(
        "{} is not a sweep's output directory (it holds files but no manifest.json), so {}; choose another output directory",
        dir.display(),
        if *force { "--force deletes nothing there" } else { "nothing is written there (a sweep's results and report would mix with those files)" }
    )]
    NotOurs { dir: PathBuf, force: bool },
    #[error(
        "{} holds shards' results ({}) and no whole grid's manifest.json: a report is of the whole grid; once every shard is done, `sweep merge {}` checks and combines them, and writes it",
        dir.display(),
        manifests.join(", "),
        crate::slurm::shell_quote(&dir.display().to_string())
    )]
    ShardsOnly {
        dir: PathBuf,
        manifests: Vec<String>,
    },
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error(
        "{} holds results of an earlier version of grid `{name}`, and the grid changed since: {}; {}choose another --out, or {}",
        dir.display(),
        changes.join("; "),
        match flags.as_deref() {
            Some("") => "they were made without --set or --axis: to resume them, give none; else ".to_string(),
            Some(flags) => format!("they were made with the flags{flags}: to resume them, give the same; else "),
            None => String::new(),
        },
        if *shard { "put the grid back to run this shard beside the others (or delete the directory first)" } else { "--force to delete them" }
    )]
    Edited {
        dir: PathBuf,
        name: String,
        changes: Vec<String>,
        /// The flags the results were made with, when this command's
        /// differ.
        flags: Option<String>,
        /// A shard of the grid writes: `--force` would delete only its own.
        shard: bool,
    },
    #[error(
        "{} holds results written by {recorded}; this is {now}. Results of two versions would mix: {start_over}, or --allow-version-change to continue (each part records the version that wrote it)",
        dir.display()
    )]
    VersionChanged {
        dir: PathBuf,
        recorded: String,
        now: String,
        start_over: &'static str,
    },
    #[error(
        "{} already holds {parts} part file(s) of this grid; to finish it: sweep run {} --out {} --resume{shard_flag}  (or --force to start over)",
        dir.display(),
        crate::slurm::shell_quote(&grid.display().to_string()),
        crate::slurm::shell_quote(&dir.display().to_string())
    )]
    Unfinished {
        dir: PathBuf,
        parts: usize,
        grid: PathBuf,
        shard_flag: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Io(#[from] IoError),
}

/// `sweep run` after the directory is prepared.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Pool(#[from] rayon::ThreadPoolBuildError),
    #[error("point 0 is invalid")]
    InvalidFirstPoint,
    #[error(
        "point {point}{describe} needs about {estimate} for one run, more than the {budget} a run may use ({why}); use fewer --jobs, a larger --max-run-memory, or a smaller run at that point (fewer users, a shorter horizon_s, a coarser series_bin_s)"
    )]
    RunTooLarge {
        point: u64,
        describe: String,
        estimate: String,
        budget: String,
        why: String,
    },
    #[error("writing results failed, sweep stopped: {0}")]
    WriteStopped(#[source] StoreError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Dir(#[from] DirError),
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
}

/// `sweep merge` and `sweep compare`.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("several directories need --into DIR")]
    NeedsInto,
    #[error("{}: no manifest found", dir.display())]
    NoManifest { dir: PathBuf },
    #[error(
        "{} holds grid `{other}` and {} grid `{first}` (another grid, or another version of its file): nothing was merged{differs}",
        other_dir.display(),
        first_dir.display()
    )]
    GridMismatch {
        first: String,
        first_dir: PathBuf,
        other: String,
        other_dir: PathBuf,
        /// What differs, when it is a version of the same grid.
        differs: String,
    },
    #[error(
        "{} and {} are different files of one name (the same shard from two sweeps?): nothing was merged",
        src.display(),
        other.display()
    )]
    Collision { src: PathBuf, other: PathBuf },
    #[error("incomplete: {}", missing.join("; "))]
    Incomplete { missing: Vec<String> },
    #[error("no runs written")]
    NoRunsWritten,
    #[error("{}: {}", dir.display(), no_runs_in(dir))]
    NoRuns { dir: PathBuf },
    #[error(
        "{} holds the results of two grids ({} and {}: another grid, or other --set or --axis flags): their runs make no one table; compare directories of one grid each",
        dir.display(),
        first.display(),
        other.display()
    )]
    MixedGrids {
        dir: PathBuf,
        first: PathBuf,
        other: PathBuf,
    },
    #[error(
        "{written} runs {}, {planned} planned{}",
        if *before_copy { "in the parts to merge" } else { "written" },
        if *before_copy { ": nothing was merged" } else { "" }
    )]
    Count {
        written: usize,
        planned: u64,
        before_copy: bool,
    },
    #[error(
        "no run has run_index {missing} of the {planned} planned (a run of another grid point in its place){}",
        if *before_copy { ": nothing was merged" } else { "" }
    )]
    Indexes {
        missing: u64,
        planned: u64,
        before_copy: bool,
    },
    #[error(
        "run {run_id} is in {} and in {} (shards of two sweeps, or of two splits that both ran it?): nothing was merged",
        first.display(),
        second.display()
    )]
    Duplicate {
        run_id: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error("{}: {source}", dir.display())]
    Table { dir: PathBuf, source: PolarsError },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Dir(#[from] DirError),
    #[error(
        "{} is a whole-grid run's or a refinement's manifest: its directory holds the grid's results already, with no shards to merge into another (`sweep merge {}` alone verifies it)",
        manifest.display(),
        manifest.parent().map_or(String::new(), |d| d.display().to_string())
    )]
    NotShards { manifest: PathBuf },
}

/// `sweep diff`.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{}: {message}", dir.display())]
    Load { dir: PathBuf, message: String },
    #[error("{}: {}", dir.display(), no_runs_in(dir))]
    NoRuns { dir: PathBuf },
    #[error(transparent)]
    Refused(Box<DirError>),
    #[error("{}: {source}", dir.display())]
    Table { dir: PathBuf, source: PolarsError },
    #[error(
        "{}'s report is about {users_a} and {}'s about {users_b} (`[report] group`): their user-level metrics are not the same figures",
        a.display(),
        b.display()
    )]
    Groups {
        a: PathBuf,
        b: PathBuf,
        users_a: String,
        users_b: String,
    },
    #[error(
        "{}: two points have the levels {point}: the points cannot be paired by their levels",
        dir.display()
    )]
    SameLevels { dir: PathBuf, point: String },
    #[error("{} and {} do not hold the same points", a.display(), b.display())]
    Points {
        a: PathBuf,
        b: PathBuf,
        problems: Vec<String>,
    },
    #[error(
        "{} and {} hold the same points but not the same seeds (diff pairs the runs of a point by seed): {} has seeds {seeds_a}, {} has {seeds_b}; run both with the same seeds",
        a.display(),
        b.display(),
        a.display(),
        b.display()
    )]
    Seeds {
        a: PathBuf,
        b: PathBuf,
        seeds_a: String,
        seeds_b: String,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// `sweep refine`.
#[derive(Debug, thiserror::Error)]
pub enum RefineError {
    #[error(transparent)]
    Grid(GridErrors),
    #[error(
        "{flags}: {} has [sample] method = \"boundary\", which searches its sampled axes with its own sample.threshold; leave them out",
        grid.display()
    )]
    BoundaryFlags { flags: String, grid: PathBuf },
    #[error(
        "--axis and --precision are needed to bisect an axis of {} (or a grid with [sample] method = \"boundary\")",
        grid.display()
    )]
    NoAxis { grid: PathBuf },
    /// A stopping signal (its number) ended a round: what was written stays.
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
    /// Every problem of the bisection's flags, one per entry.
    #[error("{}", .0.join("\n  "))]
    Flags(Vec<String>),
    /// The grid's first point does not validate (one problem per entry).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    InvalidPoint(Vec<ConfigError>),
    #[error(transparent)]
    Dir(#[from] DirError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Pool(#[from] rayon::ThreadPoolBuildError),
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// `sweep slurm`.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error(
        "{what} `{value}` is not valid UTF-8: the script would name another path; choose one that is"
    )]
    NotUtf8 { what: &'static str, value: String },
    #[error(
        "--out `{value}` contains a backslash: sbatch then replaces no %A / %a in the tasks' log paths (#SBATCH --output), and every task would write one log; choose a path without one"
    )]
    Backslash { value: String },
    #[error(
        "{what} `{value}` contains the control character `{char}`: it would end its line of the script; choose another"
    )]
    ControlCharacter {
        what: &'static str,
        value: String,
        char: String,
    },
    #[error(
        "--tasks {tasks}: more array tasks than the grid has runs ({runs}), so {} would run nothing; give at most {runs}",
        tasks - runs
    )]
    TooManyTasks { tasks: u64, runs: u64 },
    #[error("--sbatch-arg `{value}`: {reason}")]
    SbatchArg { value: String, reason: String },
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{stderr}")]
    Sbatch { stderr: String },
    #[error(transparent)]
    Spawn(std::io::Error),
}

/// What a command reports to the user: the context line `main` prints
/// (`error: invalid grid:`) and the problems under it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid grid")]
    Grid(#[from] GridErrors),
    #[error("bad shard")]
    Shard(#[from] ShardError),
    #[error("cannot use the output directory")]
    OutputDir(#[from] DirError),
    #[error("sweep failed")]
    Run(#[from] RunnerError),
    #[error("refine")]
    Refine(#[from] RefineError),
    #[error("merge")]
    Merge(#[source] MergeError),
    #[error("compare")]
    Compare(#[source] MergeError),
    #[error("diff")]
    Diff(#[from] DiffError),
    #[error("report")]
    Report(#[from] ReportError),
    #[error("{}", match .0 {
        SlurmError::Sbatch { .. } => "sbatch failed",
        SlurmError::Spawn(_) => "cannot run sbatch",
        _ => "slurm",
    })]
    Slurm(#[from] SlurmError),
    /// Overrides or a scenario that do not validate.
    #[error("{context}")]
    Config {
        context: String,
        errors: Vec<ConfigError>,
    },
}

impl Error {
    /// One line per problem.
    pub fn problems(&self) -> Vec<String> {
        let all = |errors: &[ConfigError]| errors.iter().map(ToString::to_string).collect();
        match self {
            Error::Grid(errors) | Error::Refine(RefineError::Grid(errors)) => {
                errors.0.iter().map(ToString::to_string).collect()
            }
            Error::Refine(RefineError::InvalidPoint(errors)) => all(errors),
            Error::Config { errors, .. } => all(errors),
            Error::Shard(e) => vec![e.to_string()],
            Error::OutputDir(e) => vec![e.to_string()],
            Error::Run(e) => vec![e.to_string()],
            Error::Refine(e) => vec![e.to_string()],
            // One line per shard to finish: a split into many lists many.
            Error::Merge(MergeError::Incomplete { missing }) => {
                let mut lines = vec![format!(
                    "incomplete: {} to finish before the merge:",
                    crate::progress::counted(missing.len() as u64, "shard", "shards")
                )];
                lines.extend(missing.iter().map(|m| format!("  {m}")));
                lines
            }
            Error::Merge(e) | Error::Compare(e) => vec![e.to_string()],
            Error::Diff(DiffError::Points { a, b, problems }) => {
                let mut all = vec![format!(
                    "{} and {} do not hold the same points (diff pairs the points of two sweeps by their levels, and their runs by seed; `compare` checks equality):",
                    a.display(),
                    b.display()
                )];
                all.extend(problems.iter().cloned());
                all
            }
            Error::Diff(e) => vec![e.to_string()],
            Error::Report(e) => vec![e.to_string()],
            Error::Slurm(e) => vec![e.to_string()],
        }
    }
}
