//! End-to-end behaviour of the `sweep` binary: determinism across threads
//! and shards, surviving kill -9, failure isolation, and the errors a user
//! sees for bad grids and output directories.

mod common;
use common::*;
use polars::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `sweep run GRID --out OUT EXTRA... --no-report`.
fn run_grid(grid: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", grid, "--out", out];
    args.extend(extra);
    args.push("--no-report");
    sweep(&args)
}

/// The series table of a one-shard run's first part.
fn first_series_part(out: &Path) -> DataFrame {
    let part = out.join("series").join("part-s0of1-000000.parquet");
    ParquetReader::new(std::fs::File::open(part).unwrap())
        .finish()
        .unwrap()
}

fn runs_table(dir: &Path) -> DataFrame {
    let mut all: Option<DataFrame> = None;
    let mut parts: Vec<_> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    parts.sort();
    for p in parts
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
    {
        let df = ParquetReader::new(std::fs::File::open(p).unwrap())
            .finish()
            .unwrap();
        match &mut all {
            None => all = Some(df),
            Some(a) => {
                a.vstack_mut_owned(df).unwrap();
            }
        }
    }
    all.expect("some runs")
}

/// Starts a one-thread sweep that writes a part every 20 runs, and returns
/// once `parts` runs parts exist.
fn spawn_until_parts(
    grid: &str,
    out: &Path,
    parts: usize,
    stderr: std::process::Stdio,
) -> std::process::Child {
    spawn_shard_until_parts(grid, out, parts, stderr, &[])
}

/// Stops `child` as a user's Ctrl-C does (SIGINT).
fn interrupt(child: &std::process::Child) {
    let stop = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stop.success());
}

/// [`spawn_until_parts`] with further arguments (`--shard 1/4`).
fn spawn_shard_until_parts(
    grid: &str,
    out: &Path,
    parts: usize,
    stderr: std::process::Stdio,
    extra: &[&str],
) -> std::process::Child {
    let child = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args([
            "run",
            grid,
            "--out",
            &out.display().to_string(),
            "--jobs",
            "1",
            "--no-report",
        ])
        .args(["--batch-runs", "20", "--batch-secs", "0.05"])
        .args(extra)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_dir(out.join("runs"))
        .map(|d| d.count())
        .unwrap_or(0)
        < parts
    {
        assert!(Instant::now() < deadline, "no part written");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
fn runs_table_is_identical_across_threads_and_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(3));
    let out = |n: &str| dir.join(n).display().to_string();
    for (name, jobs) in [("j1", "1"), ("j2", "2")] {
        let o = sweep(&[
            "run",
            &grid,
            "--out",
            &out(name),
            "--jobs",
            jobs,
            "--no-report",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for i in 0..3 {
        let shard = format!("{i}/3");
        let o = sweep(&[
            "run",
            &grid,
            "--out",
            &out("sharded"),
            "--shard",
            &shard,
            "--no-report",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // Merging before the last shard would have been refused; now it checks
    // completeness and uniqueness.
    let o = sweep(&["merge", &out("sharded"), "--no-report"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_runs(&dir.join("j1"), &dir.join("j2"));
    assert_same_runs(&dir.join("j1"), &dir.join("sharded"));
    let t = runs_table(&dir.join("j1"));
    assert_eq!(t.height(), 24);
    // A different seed list is a different table: compare can fail.
    let other = write_grid(dir, &small_grid(3).replace("first = 1", "first = 2"));
    let o = run_grid(&other, &out("other"), &[]);
    assert!(o.status.success());
    assert!(
        !sweep(&["compare", &out("j1"), &out("other")])
            .status
            .success()
    );
}

#[test]
fn merge_refuses_missing_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o").display().to_string();
    assert!(run_grid(&grid, &out, &["--shard", "0/2"]).status.success());
    let o = sweep(&["merge", &out, "--no-report"]);
    assert!(!o.status.success());
    // Each shard to finish on its own line, with its command.
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            "error: merge:".to_string(),
            "  incomplete: 1 shard to finish before the merge:".to_string(),
            format!(
                "    shard 1/2 has no manifest (not started?): sweep run {grid} --shard 1/2 --out {out}"
            ),
        ]
    );
    // A shard whose manifest says running (killed, or running still) is
    // said with the command that finishes it.
    assert!(run_grid(&grid, &out, &["--shard", "1/2"]).status.success());
    let manifest = Path::new(&out).join("manifest-s1of2.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("\"complete\"", "\"running\"")).unwrap();
    assert_fails(
        &sweep(&["merge", &out, "--no-report"]),
        &[&format!(
            "shard 1/2 is running, or was killed (if nothing runs there: sweep run {grid} --out {out} --resume --shard 1/2)"
        )],
    );
    std::fs::write(&manifest, text).unwrap();
    // Nor is a shard's directory reported as if it were the grid.
    assert_fails(
        &sweep(&["report", &out]),
        &[&format!(
            "{out} holds shards' results (manifest-s0of2.json, manifest-s1of2.json) and no whole grid's manifest.json: a report is of the whole grid; once every shard is done, `sweep merge {out}` checks and combines them, and writes it"
        )],
    );
}

/// What merge makes of directories that are not one complete split: it
/// copies nothing before it refuses, takes the split whose shards are all
/// complete, and leaves a whole-grid run's manifest as it is.
#[test]
fn merge_decides_before_it_copies_and_keeps_a_whole_grid_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let path = |name: &str| dir.join(name).display().to_string();
    // One shard of two, merged into a new directory: refused, nothing there.
    assert!(
        run_grid(&grid, &path("half"), &["--shard", "0/2"])
            .status
            .success()
    );
    let o = sweep(&[
        "merge",
        &path("half"),
        "--into",
        &path("into"),
        "--no-report",
    ]);
    assert_says(&stderr(&o), &["shard 1/2 has no manifest"]);
    assert!(!dir.join("into/runs").exists(), "copied before refusing");
    // Shard 0/2 and then a split into 3 in one directory: the split into 3
    // is complete (it reused 0/2's runs), and the merge takes it.
    for s in ["0/3", "1/3", "2/3"] {
        assert!(
            run_grid(&grid, &path("half"), &["--shard", s])
                .status
                .success()
        );
    }
    // Each shard's manifest counts what it ran and what it found: 0/2's
    // four runs are the split into 3's reused ones.
    let mut reused = 0;
    for s in ["0of3", "1of3", "2of3"] {
        let m: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("half/manifest-s{s}.json"))).unwrap(),
        )
        .unwrap();
        let count = |k: &str| m[k].as_u64().unwrap_or(0);
        assert_eq!(
            count("planned"),
            count("ok") + count("failed") + count("reused"),
            "{m}"
        );
        reused += count("reused");
    }
    assert_eq!(reused, 4);
    let o = sweep(&["merge", &path("half"), "--no-report"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(runs_table(&dir.join("half")).height(), 8);
    // A whole-grid run's directory: merged, it is verified and left as it
    // was (its manifest became "merged", and the run no longer complete).
    let whole = path("whole");
    assert!(run_grid(&grid, &whole, &[]).status.success());
    // Also spelled two ways (the directory as given and as `--into`).
    let respelled = path("whole/../whole");
    let merges: [&[&str]; 2] = [
        &["merge", &whole, "--no-report"],
        &["merge", &whole, "--into", &respelled, "--no-report"],
    ];
    for args in merges {
        let o = sweep(args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_says(
            &stdout(&o),
            &["nothing to merge", "8 runs, every part verified"],
        );
    }
    let again = sweep(&["run", &grid, "--out", &whole]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_says(&stderr(&again), &["complete"]);
    // An interrupted whole-grid run finished by a split into 2: the split
    // is merged (the unfinished run is a split into 1 not complete).
    let path_of = dir.join("whole/manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path_of).unwrap()).unwrap();
    manifest["status"] = "interrupted".into();
    std::fs::write(&path_of, manifest.to_string()).unwrap();
    for s in ["0/2", "1/2"] {
        let o = run_grid(&grid, &whole, &["--shard", s, "--resume"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = sweep(&["merge", &whole, "--no-report"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_says(&stdout(&o), &["merged 2 shards"]);
}

/// A second Ctrl-C stops at once and says the exact command that
/// finishes the sweep (`sweep refine` takes no --resume: each command its own).
#[test]
fn a_second_interrupt_says_the_command_that_finishes_the_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(40));
    let out = dir.join("stopped");
    let mut child = spawn_until_parts(&grid, &out, 1, std::process::Stdio::piped());
    // The second once the first is taken (two pending signals are one).
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    interrupt(&child);
    let mut said = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        said += &format!("{line}\n");
        if line.contains("send it again to stop at once") {
            break;
        }
    }
    interrupt(&child);
    for line in lines {
        said += &format!("{}\n", line.unwrap());
    }
    assert_eq!(child.wait().unwrap().code(), Some(130), "{said}");
    let here = std::path::absolute(&out).unwrap();
    assert_says(
        &said,
        &[&format!(
            "again: stopping at once; every part written is kept (its manifest still says running); finish the sweep with:\n  sweep run {grid} --out {} --resume",
            here.display()
        )],
    );
}

/// A sweep run with --set and --axis flags and stopped: the report's
/// resume command carries them, and it resumes; the same command without
/// them is refused with the flags the results were made with.
#[test]
fn a_stopped_sweep_with_flags_is_resumed_by_the_command_its_report_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(40));
    let out = dir.join("stopped");
    let flags = [
        "--set",
        "svc_b.slots=12",
        "--axis",
        "client.max_retries=1,2",
    ];
    let mut child = spawn_shard_until_parts(&grid, &out, 3, std::process::Stdio::null(), &flags);
    interrupt(&child);
    child.wait().unwrap();
    let report = sweep(&["report", &out.display().to_string()]);
    assert!(report.status.success(), "{}", stderr(&report));
    let flags_typed = " --set 'svc_b.slots=12' --axis 'client.max_retries=1,2'";
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    let here = std::path::absolute(&out).unwrap();
    let command = format!(
        "sweep run {grid}{flags_typed} --out {} --resume",
        here.display()
    );
    assert!(
        md.contains(&format!("`{command}` runs the rest")),
        "{}",
        &md[..md.len().min(1200)]
    );
    // Killed instead (its manifest still running), `sweep report` says the
    // same command.
    let path_of = out.join("manifest.json");
    let text = std::fs::read_to_string(&path_of).unwrap();
    std::fs::write(&path_of, text.replace("\"interrupted\"", "\"running\"")).unwrap();
    let report = sweep(&["report", &out.display().to_string()]);
    assert!(report.status.success(), "{}", stderr(&report));
    assert_says(&stderr(&report), &[&format!("{flags_typed} --out")]);
    let without = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    assert!(!without.status.success());
    assert_says(
        &stderr(&without),
        &[&format!(
            "they were made with the flags{flags_typed}: to resume them, give the same; else choose another --out"
        )],
    );
    let words = shlex::split(&command).unwrap();
    let resumed = sweep(&words[1..].iter().map(String::as_str).collect::<Vec<_>>());
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(runs_table(&out).height(), 640);
}

#[test]
fn kill_9_then_resume_gives_the_uninterrupted_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(150)); // 1200 runs
    let out = dir.join("killed");
    let mut child = spawn_until_parts(&grid, &out, 3, std::process::Stdio::null());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let written = runs_table(&out).height();
    assert!(
        written > 0 && written < 1200,
        "killed mid-way: {written} rows"
    );
    // A report of what the kill left says so, at the top and on stderr
    // (unless a part the kill caught uncommitted makes it ask for --resume).
    let report = sweep(&["report", &out.display().to_string()]);
    if report.status.success() {
        assert_says(
            &stderr(&report),
            &[
                "stopped without finishing (killed?",
                "--resume` runs the rest",
            ],
        );
        // And beside the table the terminal shows.
        assert_says(
            &stdout(&report),
            &[&format!(
                "partial results: {written} of the 1200 planned runs; every table holds these runs only"
            )],
        );
        let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
        assert!(
            md.contains(&format!(
                "**Partial results: {written} of the 1200 planned runs.**"
            )),
            "{}",
            &md[..md.len().min(1200)]
        );
        // The command names the directory, ready to paste.
        let here = std::path::absolute(&out).unwrap();
        assert!(
            md.contains(&format!("--out {} --resume` runs the rest", here.display())),
            "{}",
            &md[..md.len().min(1200)]
        );
    } else {
        assert_says(&stderr(&report), &["--resume"]);
    }

    let again = run_grid(&grid, &out.display().to_string(), &[]);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("--resume"), "{}", stderr(&again));
    let resumed = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    // Every committed run is kept; a part the kill caught before its index
    // entry is dropped and its runs redone, and resume says so.
    let err = stderr(&resumed);
    let done: usize = err
        .split(" already done")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        done == written || (done < written && err.contains("written but not committed")),
        "{written} rows on disk, {done} kept:\n{err}"
    );

    let full = dir.join("full");
    assert!(
        run_grid(&grid, &full.display().to_string(), &[])
            .status
            .success()
    );
    assert_same_runs(&out, &full);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["ok"], 1200);
    // A resume of complete results runs nothing, and says so.
    let again = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_says(
        &stderr(&again),
        &[
            "1200 already done, 0 to run",
            "nothing left to run: every planned run is written, its part verified",
        ],
    );
    assert!(!stderr(&again).contains("runs/s"), "{}", stderr(&again));
}

#[test]
fn failed_runs_are_recorded_and_the_sweep_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(
        dir,
        r#"name = "failing"
scenario = "ch37"
seeds = [1, 2]
[set]
"client.duration_s" = 3
horizon_s = 4
[axes]
max_events = [500, 100000000]
"#,
    );
    let out = dir.join("o");
    let o = run_grid(&grid, &out.display().to_string(), &["--inject-panic", "3"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "some runs failed: exit 1\n{}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(err.contains("3 runs failed"), "{err}");
    assert!(err.contains("event budget exceeded"), "{err}");
    assert!(err.contains("injected panic"), "{err}");
    let t = runs_table(&out)
        .sort(["run_index"], Default::default())
        .unwrap();
    let status: Vec<_> = t
        .column("status")
        .unwrap()
        .cast(&DataType::String)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|s| s.unwrap().to_string())
        .collect();
    assert_eq!(status, ["failed", "failed", "ok", "failed"]);
    let error = t.column("error").unwrap().str().unwrap();
    assert!(
        error
            .get(0)
            .unwrap()
            .contains("event budget exceeded: more than 500 events")
    );
    assert!(error.get(3).unwrap().contains("panicked"));
    assert_eq!(error.get(2), None);
    // Metrics of failed runs are null, not zero.
    assert_eq!(t.column("users").unwrap().null_count(), 3);
    // Finished by a resume that runs nothing, or asked again: `--json`
    // lists every failed run its `failed` counts.
    for extra in [&["--resume", "--json"][..], &["--json"]] {
        let o = run_grid(&grid, &out.display().to_string(), extra);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(json["failed"], 3, "{json}");
        let listed: Vec<u64> = (json["failures"].as_array().unwrap().iter())
            .map(|f| f["run_index"].as_u64().unwrap())
            .collect();
        assert_eq!(listed, [0, 1, 3], "{extra:?}: {json}");
    }
    // Its shards merged: the status is the results', as `run` gives it.
    let sharded = dir.join("sharded").display().to_string();
    for s in ["0/2", "1/2"] {
        let o = run_grid(&grid, &sharded, &["--shard", s, "--inject-panic", "3"]);
        assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    }
    let o = sweep(&["merge", &sharded, "--no-report"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_says(&stdout(&o), &["(1 ok, 3 failed)"]);
}

#[test]
fn columns_are_typed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o");
    assert!(
        run_grid(&grid, &out.display().to_string(), &[])
            .status
            .success()
    );
    let t = runs_table(&out);
    let dtype = |c: &str| t.column(c).unwrap().dtype().clone();
    assert_eq!(dtype("seed"), DataType::UInt64);
    // Few distinct strings: categoricals (dictionary-encoded, `category` in pandas).
    assert!(matches!(dtype("strategy"), DataType::Categorical(..)));
    assert!(matches!(dtype("status"), DataType::Categorical(..)));
    assert_eq!(dtype("svc_b.queue_cap"), DataType::Int64);
    assert_eq!(dtype("svc_a.attempt_timeout_s"), DataType::Float64);
    assert_eq!(dtype("horizon_s"), DataType::Float64);
    assert_eq!(dtype("recovered"), DataType::Boolean);
    assert_eq!(dtype("recovery_s"), DataType::Float64);
    assert_eq!(dtype("svc_b_arrivals"), DataType::Int64);
    // "unbounded" is null.
    assert_eq!(t.column("svc_b.queue_cap").unwrap().null_count(), 4);
    let ids = t.column("run_id").unwrap();
    assert_eq!(ids.n_unique().unwrap(), 8);
    let series = first_series_part(&out);
    assert_eq!(series.height(), 8 * 5, "5 seconds per run");
    // Counts are signed: a difference of two is negative in a notebook, not wrapped.
    assert_eq!(
        series.column("svc_b_queue_len").unwrap().dtype(),
        &DataType::Int64
    );
    assert_eq!(dtype("users_ok"), DataType::Int64);
    // So is the time coordinate (`second - 1`: since the trigger) and the
    // summary's counts of runs.
    assert_eq!(series.column("second").unwrap().dtype(), &DataType::Int64);
    assert_ok(&sweep(&["report", &out.display().to_string()]));
    let summary =
        ParquetReader::new(std::fs::File::open(out.join("analysis/summary.parquet")).unwrap())
            .finish()
            .unwrap();
    for c in ["runs", "failed", "runs_with_verdict", "runs_not_recovered"] {
        assert_eq!(summary.column(c).unwrap().dtype(), &DataType::Int64, "{c}");
    }
    // Its string axes are the runs table's categoricals: the two join on them.
    let cat = summary.column("strategy").unwrap().dtype().clone();
    assert!(matches!(cat, DataType::Categorical(..)), "{cat:?}");
    let joined = (t.clone().lazy())
        .join(
            summary.lazy(),
            [col("strategy"), col("svc_b.queue_cap")],
            [col("strategy"), col("svc_b.queue_cap")],
            JoinArgs::new(JoinType::Inner),
        )
        .collect()
        .unwrap();
    assert_eq!(joined.height(), t.height());
}

#[test]
fn bad_grids_report_every_error_with_file_key_and_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Every kind of problem at once: an unknown key, the name, the seeds,
    // the axes' shapes (and the values of a zip that cannot pair), the
    // report's keys and values, unknown parameters, wrong types, values
    // out of bounds and a flag.
    let grid = write_grid(
        dir,
        r#"name = "bad.1"
scenario = "ch37"
seeds = [1, 1]
colour = "blue"
[set]
"svc_b.queue_cpa" = 3
horizon_s = -5
"client.duration_s" = 40
[axes]
strategy = ["naive", "fastest"]
"svc_b.slots" = []
"svc_a.max_retries" = [1, "two"]
"svc_a.attempt_timeout_s" = [0.2, -0.3]
[[zip]]
"svc_b.queue_cap" = [16, 32]
"client.rate_per_s" = [1, 2, -3]
[report]
heatmap_x = "nope"
slice = ["strategy=naive"]
prim = true
[[report.reference]]
point = "strategy=naive"
metric = 3
"#,
    );
    let o = sweep(&[
        "run",
        &grid,
        "--set",
        "horizon_s=30",
        "--set",
        "client.deadline_s=inf",
        "--axis",
        "client.rate_per_s=100,200",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let f = dir.join("grid.toml").display().to_string();
    let expected = [
        "error: invalid grid:".to_string(),
        "  --axis client.rate_per_s=100,200: `client.rate_per_s` moves with other paths in the grid's zip[0]; change it in the grid file".into(),
        format!("  {f}: colour: unknown key; a grid has name, scenario, seeds, set, axes, zip, report, sample (parameters go under [set] or [axes])"),
        format!("  {f}: report.slice: unknown key; did you mean `slices`? [report] takes metrics, heatmap_x, heatmap_y, panels, slices, group, prim, reference_source, reference"),
        format!("  {f}: report.prim: must be an outcome, as a string (e.g. \"not recovered\"), got true"),
        format!("  {f}: report.reference[0].metric: must be a metric's name, as a string, got 3"),
        format!("  {f}: report.reference[0].published: missing"),
        format!("  {f}: name: `bad.1` must be letters, digits, `_` or `-` (it names the output directory out/<name>)"),
        format!("  {f}: seeds: seed 1 appears twice"),
        format!("  {f}: axes.\"svc_b.slots\": empty axis: give at least one level"),
        format!("  {f}: zip[0]: zipped lists must have equal length: \"svc_b.queue_cap\" has 2, \"client.rate_per_s\" has 3"),
        format!("  {f}: report.heatmap_x: `nope` is not an axis of this grid"),
        format!("  {f}: set.\"svc_b.queue_cpa\" = 3: unknown parameter; did you mean `svc_b.queue_cap`?"),
        "  --set client.deadline_s=inf: not a finite number (accepted: >= 0)".into(),
        format!("  {f}: axes.\"strategy\" = \"fastest\": unknown strategy `fastest`; this scenario's presets: deadline, deadline_budget, naive, protected"),
        format!("  {f}: axes.\"svc_a.max_retries\" = \"two\": expected an integer, got string \"two\""),
        format!("  {f}: axes.\"svc_a.attempt_timeout_s\" = -0.3: must be > 0: an attempt without a timeout could wait forever"),
        format!("  {f}: zip.\"client.rate_per_s\" = -3: must be > 0: at rate 0 no user arrives (a load profile or a closed loop gives the load otherwise)"),
    ];
    assert_eq!(stderr(&o).lines().collect::<Vec<_>>(), expected);
    // A level refused beside a rule between fields at a point left: both
    // at once (the points left are the grid's own).
    let horizon_35 = |axis: &str| {
        let text = format!(
            "name = \"bad\"\nscenario = \"ch37\"\nseeds = [1]\n[set]\nhorizon_s = 35\n[axes]\n{axis}\"client.duration_s\" = [30, 40]\n"
        );
        write_grid(dir, &text)
    };
    let grid = horizon_35("\"svc_a.attempt_timeout_s\" = [0.2, -0.3]\n");
    assert_eq!(
        stderr(&sweep(&["plan", &grid])).lines().collect::<Vec<_>>(),
        [
            "error: invalid grid:".to_string(),
            format!(
                "  {f}: axes.\"svc_a.attempt_timeout_s\" = -0.3: must be > 0: an attempt without a timeout could wait forever"
            ),
            format!(
                "  {f}: at svc_a.attempt_timeout_s=0.2 client.duration_s=40: horizon_s = 35: the horizon (35.0 s) ends before the arrivals do (client.duration_s = 40.0 s): raise horizon_s or shorten client.duration_s"
            ),
        ]
    );
    // A misspelt path, in [set] or as an axis, has no value of the
    // scenario's to speak for it: the points are checked without it, and
    // their problems told with it.
    for (set, axis) in [
        ("\"svc_b.queue_capp\" = 10\n", ""),
        ("", "\"svc_b.queue_capp\" = [10, 20]\n"),
    ] {
        let text = format!(
            "name = \"bad\"\nscenario = \"ch37\"\nseeds = [1]\n[set]\nhorizon_s = 35\n{set}[axes]\n{axis}\"client.duration_s\" = [30, 40]\n"
        );
        let grid = write_grid(dir, &text);
        let table = if set.is_empty() { "axes" } else { "set" };
        let values = if set.is_empty() { "10 and 20" } else { "10" };
        assert_eq!(
            stderr(&sweep(&["plan", &grid])).lines().collect::<Vec<_>>(),
            [
                "error: invalid grid:".to_string(),
                format!(
                    "  {f}: {table}.\"svc_b.queue_capp\" = {values}: unknown parameter; did you mean `svc_b.queue_cap`?"
                ),
                format!(
                    "  {f}: at client.duration_s=40: horizon_s = 35: the horizon (35.0 s) ends before the arrivals do (client.duration_s = 40.0 s): raise horizon_s or shorten client.duration_s"
                ),
            ]
        );
    }
    // A rule between fields at one point of a valid grid: the point, and
    // the value as the grid gives it.
    let grid = horizon_35("");
    let err = stderr(&sweep(&["plan", &grid]));
    assert_says(
        &err,
        &[&format!(
            "{f}: point 1 (client.duration_s=40): horizon_s = 35: the horizon (35.0 s) ends before the arrivals do (client.duration_s = 40.0 s): raise horizon_s or shorten client.duration_s"
        )],
    );
    let err = stderr(&sweep(&[
        "plan",
        &dir.join("nope.toml").display().to_string(),
    ]));
    assert!(err.contains("nope.toml: cannot read"), "{err}");
    let grid = write_grid(
        dir,
        "name = \"x\"\nscenario = \"ch37\"\nseeds = [1]\n[axis]\nstrategy = [\"naive\"]\n",
    );
    let err = stderr(&sweep(&["plan", &grid]));
    assert_says(
        &err,
        &[&format!("{f}: axis: unknown key; did you mean `axes`?")],
    );
}

/// A scenario file's every bad key is said, with its line, beside the
/// grid's own problems: one reading shows them all.
#[test]
fn a_bad_scenario_file_is_said_whole_beside_the_grid_s_problems() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let scenario = std::fs::read_to_string("../grids/scenarios/three-hop.toml").unwrap();
    let bad = scenario
        .replacen("rate_per_s = 50.0", "rate_per_s = \"fast\"", 1)
        .replacen("slots = 1000", "slots = 1000\nqueue_cpa = 5", 1);
    write_grid_as(dir, "s.toml", &bad);
    // The grid's values that the catalogue alone can judge are judged too;
    // the others wait for the scenario (a tier it may lack; `client.slots`,
    // a tier's key on the client, is no parameter at all).
    let grid = write_grid(
        dir,
        "name = \"g\"\nscenario = \"s.toml\"\nseeds = [1, 1]\n[set]\n\"a.attempt_timeout_s\" = -1\n\"client.duration_s\" = 20\n\"client.slots\" = 0\n\"b.queue_cap\" = \"unbounded\"\n\"client.attempt_timeouts_s\" = [0.5, 0]\n[axes]\n\"b.slots\" = [0, 4]\n\"c.attempt_timeout_s\" = [0, -1, 1]\n\"client.rate_per_s\" = [\"x\"]\nstrategy = [5]\n",
    );
    let o = sweep(&["plan", &grid]);
    assert_eq!(o.status.code(), Some(2));
    let (f, s) = (dir.join("grid.toml"), dir.join("s.toml"));
    let (f, s) = (f.display(), s.display());
    let err = stderr(&o);
    assert_says(
        &err,
        &[
            &format!("  {f}: scenario: {s}: TOML parse error at line 9, column 14"),
            "invalid type: string \"fast\", expected a number",
            &format!("  {f}: scenario: {s}: TOML parse error at line 22, column 1"),
            "unknown field `queue_cpa`, expected one of `name`, `slots`,",
            "did you mean `queue_cap`?",
            &format!("  {f}: seeds: seed 1 appears twice"),
            &format!("  {f}: set.\"a.attempt_timeout_s\" = -1: must be > 0"),
            &format!(
                "  {f}: set.\"client.attempt_timeouts_s\" = [0.5, 0]: every entry must be > 0"
            ),
            &format!("  {f}: axes.\"b.slots\" = 0: must be >= 1"),
            // The same problem at consecutive levels, said once.
            &format!("  {f}: axes.\"c.attempt_timeout_s\" = 0 and -1: must be > 0"),
            &format!(
                "  {f}: axes.\"client.rate_per_s\" = \"x\": expected a number, got string \"x\""
            ),
            &format!("  {f}: axes.\"strategy\" = 5: expected a string, got integer 5"),
        ],
    );
    assert_eq!(err.matches(&format!("  {f}: set.")).count(), 2, "{err}");
    assert_eq!(err.matches(&format!("  {f}: axes.")).count(), 4, "{err}");
}

/// A bad value of the scenario file that the grid does not set is said at
/// the file, not at the grid and one of its points; one the grid sets, at
/// the grid.
#[test]
fn a_scenario_file_s_own_bad_value_is_said_at_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let scenario = std::fs::read_to_string("../grids/scenarios/three-hop.toml").unwrap();
    write_grid_as(
        dir,
        "s.toml",
        &scenario.replacen("slots = 1000", "slots = 0", 1),
    );
    let grid = write_grid(
        dir,
        "name = \"g\"\nscenario = \"s.toml\"\nseeds = [1]\n[axes]\n\"client.max_retries\" = [1, 2]\n\"c.slots\" = [0, 4]\n",
    );
    let o = sweep(&["plan", &grid]);
    assert_eq!(o.status.code(), Some(2));
    let (f, s) = (dir.join("grid.toml"), dir.join("s.toml"));
    assert_says(
        &stderr(&o),
        &[
            &format!(
                "  {}: a.slots: must be >= 1: a tier without slots can never serve, and its queue would only fill (the scenario has 0)\n",
                s.display()
            ),
            &format!("  {}: axes.\"c.slots\" = 0: must be >= 1", f.display()),
        ],
    );
}

#[test]
fn an_output_directory_of_another_grid_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o").display().to_string();
    assert!(run_grid(&grid, &out, &[]).status.success());
    let other = dir.join("other.toml");
    std::fs::write(
        &other,
        small_grid(2).replace("name = \"small\"", "name = \"other\""),
    )
    .unwrap();
    let o = run_grid(&other.display().to_string(), &out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds results of another grid"),
        "{}",
        stderr(&o)
    );
    let o = run_grid(&other.display().to_string(), &out, &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(runs_table(Path::new(&out)).height(), 16);
}

/// A folder of the sweep's that is a symbolic link (parts kept on another
/// disk) is refused before anything is written or deleted through it:
/// by a new run, by `--force` on finished results, and by a report.
#[cfg(unix)]
#[test]
fn a_linked_folder_of_the_sweep_s_is_refused_before_anything_is_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let files = |p: &Path| {
        let mut names: Vec<String> = (std::fs::read_dir(p).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let linked = |o: &Output, link: &Path| {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
        assert_says(
            &stderr(o),
            &[&format!("{} is a symbolic link (to ", link.display())],
        );
    };
    // A new run into a directory whose runs/ points elsewhere.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let fresh = dir.join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    std::os::unix::fs::symlink(&elsewhere, fresh.join("runs")).unwrap();
    linked(
        &run_grid(&grid, &fresh.display().to_string(), &[]),
        &fresh.join("runs"),
    );
    assert!(files(&elsewhere).is_empty());
    // Finished results whose runs/ was then moved and linked: --force
    // deletes nothing, and the report refuses too.
    let out = dir.join("o");
    assert!(
        run_grid(&grid, &out.display().to_string(), &[])
            .status
            .success()
    );
    let moved = dir.join("moved");
    std::fs::rename(out.join("runs"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, out.join("runs")).unwrap();
    let (before, parts) = (files(&out), files(&moved));
    linked(
        &run_grid(&grid, &out.display().to_string(), &["--force"]),
        &out.join("runs"),
    );
    linked(
        &sweep(&["report", &out.display().to_string()]),
        &out.join("runs"),
    );
    assert_eq!((files(&out), files(&moved)), (before, parts));
}

/// A grid whose comments or spacing changed is the same grid: its
/// interrupted sweep resumes (it was refused as "another grid", with
/// `--force` offered, which deletes the results). Its keys in another
/// order number the runs differently: refused, saying so.
#[test]
fn a_grid_edited_in_its_comments_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(30)); // 240 runs
    let out = tmp.path().join("o");
    let mut child = spawn_until_parts(&grid, &out, 1, std::process::Stdio::null());
    child.kill().unwrap();
    child.wait().unwrap();
    let manifest = || std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let before = manifest();
    let text = small_grid(30).replace("horizon_s = 5", "horizon_s   =   5   # spaced\n# a note");
    std::fs::write(&grid, format!("# why this grid\n{text}")).unwrap();
    let o = run_grid(&grid, out.to_str().unwrap(), &["--resume"]);
    assert_ok(&o);
    let fingerprint = |m: &str| {
        m.split("\"fingerprint\"")
            .nth(1)
            .map(|r| r[..30].to_string())
    };
    assert_eq!(fingerprint(&manifest()), fingerprint(&before));
    let whole = tmp.path().join("whole");
    assert_ok(&run_grid(&grid, whole.to_str().unwrap(), &[]));
    assert_same_runs(&out, &whole);
    // A value in another spelling of the same number (9 and 9.0 of a
    // float: one run id) is no change either.
    let nine = tmp.path().join("nine");
    assert_ok(&run_grid(
        &grid,
        nine.to_str().unwrap(),
        &["--set", "horizon_s=9"],
    ));
    assert_ok(&run_grid(
        &grid,
        nine.to_str().unwrap(),
        &["--resume", "--set", "horizon_s=9.0"],
    ));
    let o = run_grid(
        &grid,
        nine.to_str().unwrap(),
        &["--resume", "--set", "horizon_s=9.5"],
    );
    assert_says(&stderr(&o), &["set.horizon_s: 9 -> 9.5"]);
    // The same keys, [axes] before [set]: the same runs, in the same
    // columns.
    let (head, rest) = text.split_once("[set]").unwrap();
    let (set, axes) = rest.split_once("[axes]").unwrap();
    let (axes, zip) = axes.split_once("[[zip]]").unwrap();
    std::fs::write(&grid, format!("{head}[axes]{axes}[set]{set}[[zip]]{zip}")).unwrap();
    assert_says(
        &stderr(&run_grid(&grid, out.to_str().unwrap(), &[])),
        &["already holds the complete results of this grid"],
    );
    // Axes in another order number the runs differently; [set] in another
    // order puts the runs table's columns in another order.
    let refused_as = |text: &str, change: &str| {
        std::fs::write(&grid, text).unwrap();
        let o = run_grid(&grid, out.to_str().unwrap(), &["--resume"]);
        assert_eq!(o.status.code(), Some(2));
        assert_says(&stderr(&o), &[change]);
    };
    refused_as(
        &text.replace(
            "strategy = [\"naive\", \"protected\"]\n\"svc_b.queue_cap\" = [16, \"unbounded\"]",
            "\"svc_b.queue_cap\" = [16, \"unbounded\"]\nstrategy = [\"naive\", \"protected\"]",
        ),
        "the order of the axes changed, which numbers the points and runs: strategy, svc_b.queue_cap, svc_a.attempt_timeout_s+svc_a.max_retries -> svc_b.queue_cap, strategy, svc_a.attempt_timeout_s+svc_a.max_retries",
    );
    refused_as(
        &text
            .replace("horizon_s   =   5   # spaced\n", "")
            .replace("[set]\n", "[set]\nhorizon_s = 5\n"),
        "the order of [set] changed, which orders the runs table's columns: client.duration_s, horizon_s, svc_b.slow.start_s -> horizon_s, client.duration_s, svc_b.slow.start_s",
    );
}

/// A report asked for while a sweep runs holds the runs written so far
/// and says that the sweep is still being written, by whom; once the
/// writer is gone, the note is too.
#[test]
fn a_report_of_a_sweep_being_written_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(2000)); // 16,000 runs
    let out = tmp.path().join("o");
    let mut child = spawn_until_parts(&grid, &out, 1, std::process::Stdio::null());
    // Parts are committed every 0.05 s as it reads them: at once, not
    // after tries.
    let o = sweep(&["report", out.to_str().unwrap()]);
    assert_ok(&o);
    assert_says(
        &stderr(&o),
        &[
            &format!("note: {} is being written (host ", out.display()),
            "this report holds the runs written so far; a sweep that writes its report replaces it when it ends (else run `sweep report` again then)",
        ],
    );
    // Stopped as a user stops it (a kill -9 could leave the part it was
    // committing, which the next test is about).
    interrupt(&child);
    child.wait().unwrap();
    let o = sweep(&["report", out.to_str().unwrap()]);
    assert_ok(&o);
    assert!(!stderr(&o).contains("is being written"), "{}", stderr(&o));
}

/// The part a writer has renamed but not yet listed in its index is left
/// out of a report while the writer runs; once it is gone (killed between
/// the two), the report names the part and how to redo its runs.
#[test]
fn a_part_between_its_rename_and_its_index_entry_is_the_writer_s() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(10)); // 80 runs, parts of 20
    let out = tmp.path().join("o");
    let crashed = run_grid(
        &grid,
        &out.display().to_string(),
        &[
            "--jobs",
            "1",
            "--batch-runs",
            "20",
            "--batch-secs",
            "60",
            "--inject-crash",
            "runs-renamed:2",
        ],
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(crashed.status.signal(), Some(6), "{}", stderr(&crashed));
    let pending = out.join("runs/part-s0of1-000001.parquet");
    assert!(pending.exists());
    // A writer of the shard, as if the killed one were still committing.
    let lock = std::fs::File::options()
        .write(true)
        .open(out.join(".sweep-s0of1.lock"))
        .unwrap();
    lock.lock().unwrap();
    let o = sweep(&["report", out.to_str().unwrap()]);
    assert_ok(&o);
    assert_says(&stderr(&o), &["is being written (host "]);
    drop(lock);
    let o = sweep(&["report", out.to_str().unwrap()]);
    assert_fails(
        &o,
        &[&format!(
            "{}: the part being committed when its sweep stopped (killed, or its machine went down), in no index yet: its runs are not done; run the sweep again with --resume to remove it and redo them",
            pending.display()
        )],
    );
}

#[test]
fn slurm_script_runs_each_task_as_a_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o").display().to_string();
    let script = slurm_script(&[
        &grid,
        "--tasks",
        "4",
        "--out",
        &out,
        "--sbatch-arg=--time=10",
    ]);
    assert!(script.contains("#SBATCH --array=0-3"), "{script}");
    assert!(script.contains("#SBATCH --time=10"), "{script}");
    assert!(
        script.contains("--shard \"${SLURM_ARRAY_TASK_ID}/4\" --resume --no-report"),
        "{script}"
    );
    // Options the script sets itself, and what is no option, are refused
    // before anything is written; so are 0 CPUs a task.
    for (arg, says) in [
        (
            "--sbatch-arg=--array=0-9",
            "--sbatch-arg `--array=0-9`: the script sets --array itself: the array is one task per shard: give --tasks",
        ),
        (
            "--sbatch-arg=--arr=0-99",
            "--sbatch-arg `--arr=0-99`: the script sets --array itself: the array is one task per shard: give --tasks",
        ),
        (
            "--sbatch-arg=-o log.txt",
            "--sbatch-arg `-o log.txt`: the script sets --output itself: the tasks' logs go to the slurm/ folder of --out",
        ),
        (
            "--sbatch-arg=partition=long",
            "--sbatch-arg `partition=long`: not an option (an #SBATCH line holds one, such as --partition=long); did you mean --sbatch-arg=--partition=long?",
        ),
        ("--cpus-per-task=0", "'--cpus-per-task <CPUS_PER_TASK>'"),
    ] {
        let other = dir.join("other").display().to_string();
        let o = sweep(&["slurm", &grid, "--tasks", "4", "--out", &other, arg]);
        assert_eq!(o.status.code(), Some(2), "{arg}");
        assert_says(&stderr(&o), &[says]);
        assert!(!Path::new(&other).exists(), "{arg}");
    }
}

#[test]
fn shard_comes_from_slurm_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o").display().to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(["run", &grid, "--out", &out, "--no-report"])
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "4")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Path::new(&out).join("manifest-s1of4.json").exists());
    assert_eq!(runs_table(Path::new(&out)).height(), 2);
    // An array numbered from 1 (`--array=1-4`): its last task is shard 3.
    let o = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(["run", &grid, "--out", &out, "--no-report"])
        .env("SLURM_ARRAY_TASK_ID", "4")
        .env("SLURM_ARRAY_TASK_COUNT", "4")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Path::new(&out).join("manifest-s3of4.json").exists());
    // An array with a step (`--array=0-4:2`): task 2 is shard 1 of 3.
    let out = dir.join("stepped").display().to_string();
    let slurm = |id: &str, max: &str, step: &str, count: &str| {
        Command::new(env!("CARGO_BIN_EXE_sweep"))
            .args(["run", &grid, "--out", &out, "--no-report"])
            .env("SLURM_ARRAY_TASK_ID", id)
            .env("SLURM_ARRAY_TASK_COUNT", count)
            .env("SLURM_ARRAY_TASK_MIN", "0")
            .env("SLURM_ARRAY_TASK_MAX", max)
            .env("SLURM_ARRAY_TASK_STEP", step)
            .output()
            .unwrap()
    };
    let o = slurm("2", "4", "2", "3");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Path::new(&out).join("manifest-s1of3.json").exists());
    assert!(!Path::new(&out).join("manifest-s2of3.json").exists());
    // Indexes not evenly spaced (`--array=0,1,9`): refused, not guessed.
    let o = slurm("9", "9", "1", "3");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim(),
        "error: bad shard:\n  the array's task indexes are not evenly spaced (SLURM_ARRAY_TASK_ID 9, MIN 0, MAX 9, STEP 1, COUNT 3), so task 9 is no shard of 3; submit the array as --array=0-N (as `sweep slurm` writes it) or pass --shard I/N"
    );
}

/// Ctrl-C, Slurm's and Kubernetes' SIGTERM and a closed terminal's SIGHUP
/// all stop a sweep the same way, with the shell's exit status for each.
#[test]
fn stopping_signals_write_what_is_done_and_say_how_to_resume() {
    for (signal, status) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let grid = write_grid(dir, &small_grid(150));
        let out = dir.join("o");
        let child = spawn_until_parts(&grid, &out, 2, std::process::Stdio::piped());
        let kill = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(status), "SIG{signal}: {err}");
        assert_says(&err, &["Resume with:", "--resume"]);
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(manifest["status"], "interrupted", "SIG{signal}");
        let written = runs_table(&out).height() as u64;
        assert_eq!(
            manifest["ok"].as_u64().unwrap(),
            written,
            "SIG{signal}: every finished run was written"
        );
        if signal == "TERM" {
            let resumed = run_grid(&grid, &out.display().to_string(), &["--resume"]);
            assert!(resumed.status.success(), "{}", stderr(&resumed));
            assert_eq!(runs_table(&out).height(), 1200);
        }
    }
}

#[test]
fn every_shipped_grid_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grids");
    let mut grids: Vec<PathBuf> = [dir.clone(), dir.join("maps"), dir.join("published")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    grids.sort();
    assert!(grids.len() >= 20, "{grids:?}");
    for g in grids {
        let o = sweep(&["plan", &g.display().to_string(), "--calibrate", "1"]);
        assert!(o.status.success(), "{}: {}", g.display(), stderr(&o));
    }
}

#[test]
fn report_options_must_name_axes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(
        dir,
        &format!(
            "{}\n[report]\nheatmap_x = \"svc_b.queue_cap\"\nheatmap_y = \"horizon_s\"\nmetrics = [\"goodput\", \"svc_b_late\", \"svc_b_lates\"]\n",
            small_grid(1)
        ),
    );
    let err = stderr(&sweep(&["plan", &grid]));
    assert!(
        err.contains("grid.toml: report.heatmap_y: `horizon_s` is not an axis of this grid"),
        "{err}"
    );
    assert!(!err.contains("report.heatmap_x"), "{err}");
    assert!(
        err.contains("grid.toml: report.metrics: `svc_b_lates` is not a metric of this scenario; did you mean `svc_b_late`?"),
        "{err}"
    );
    assert!(!err.contains("`goodput`"), "{err}");
}

/// Published figures must name a metric and a point of the grid's axes;
/// the report prints each beside the mean of the point's runs.
#[test]
fn published_figures_are_checked_and_shown_beside_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let reference = |point: &str, metric: &str| {
        format!(
            "[[report.reference]]\npoint = \"{point}\"\nmetric = \"{metric}\"\npublished = 100\nnote = \"a <b>\"\n"
        )
    };
    let bad = write_grid(
        dir,
        &format!(
            "{}\n[report]\nslices = [\"svc_b.queue_cap=unbounded\", \"svc_b.queue_cap=17, strategy=naive\"]\n{}{}{}{}",
            small_grid(1),
            reference("strategy=naive", "users_okk"),
            reference("svc_b.slots=4", "users_ok"),
            reference("strategy=protectd", "users_ok"),
            "[[report.reference]]\npoint = \"strategy=nave\"\nmetric = \"goodpt\"\npublished = \"x\"\n",
        ),
    );
    let err = stderr(&sweep(&["plan", &bad]));
    // A row's every problem at once: its type error does not hide the
    // others.
    for line in [
        "grid.toml: report.reference[3].published: must be a number, got \"x\"",
        "grid.toml: report.reference[3].metric: `goodpt` is not a metric of this scenario; did you mean `goodput`?",
        "grid.toml: report.reference[3].point: `nave` is not a level of `strategy` (its levels: naive, protected)",
    ] {
        assert!(err.contains(line), "{err}");
    }
    // Each pair names an axis and one of its levels, as the report labels
    // them (a null cap `unbounded`), before any run.
    assert!(
        err.contains("grid.toml: report.reference[2].point: `protectd` is not a level of `strategy` (its levels: naive, protected)"),
        "{err}"
    );
    assert!(
        err.contains("grid.toml: report.slices[1]: `17` is not a level of `svc_b.queue_cap` (its levels: 16, unbounded)"),
        "{err}"
    );
    assert!(!err.contains("report.slices[0]"), "{err}");
    assert!(
        err.contains("grid.toml: report.reference[0].metric: `users_okk` is not a metric of this scenario; did you mean `users_ok`?"),
        "{err}"
    );
    assert!(
        err.contains(
            "grid.toml: report.reference[1].point: `svc_b.slots` is not a path of this grid's axes"
        ),
        "{err}"
    );
    let good = write_grid(
        dir,
        &format!(
            // `recovery_s` among the metrics: the headline's censored
            // recovery column takes its name (it once failed the report).
            "{}\n[report]\nmetrics = [\"recovery_s\"]\n{}",
            small_grid(2),
            reference("strategy=protected, svc_b.queue_cap=16", "users_ok")
        ),
    );
    let out = dir.join("out");
    let o = sweep(&["run", &good, "--out", &out.display().to_string(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = runs_table(&out)
        .lazy()
        .filter(col("strategy").cast(DataType::String).eq(lit("protected")))
        .filter(col("svc_b.queue_cap").eq(lit(16)))
        .collect()
        .unwrap();
    let users = runs
        .column("users_ok")
        .unwrap()
        .cast(&DataType::Float64)
        .unwrap();
    let users: Vec<f64> = users.f64().unwrap().into_no_null_iter().collect();
    assert_eq!(users.len(), 4, "2 zip levels x 2 seeds");
    let mean = users.iter().sum::<f64>() / 4.0;
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| `strategy=protected, svc_b.queue_cap=16` | `users_ok` | 100 |"))
        .unwrap_or_else(|| panic!("no row in:\n{md}"));
    let model: f64 = row
        .split('|')
        .nth(4)
        .unwrap()
        .split('[')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{row}"));
    assert!(
        (model - mean).abs() <= mean * 0.005,
        "{model} vs {mean}: {row}"
    );
    let html = std::fs::read_to_string(out.join("analysis/index.html")).unwrap();
    assert!(
        html.contains("a &lt;b&gt;") && !html.contains("a <b>"),
        "the note is escaped"
    );
}

/// `[report] prim` is checked with the rest of the grid, before any work:
/// the file, the key, the expression and the metric or token to fix.
#[test]
fn report_prim_names_the_bad_metric_or_token() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let deep = format!("{}recovered", "(".repeat(2000));
    for (prim, want) in [
        (
            "success_rate_after < 0.9 and recovery_ss > 5",
            "grid.toml: report.prim: `success_rate_after < 0.9 and recovery_ss > 5`: `recovery_ss` is not a metric of this scenario; did you mean `recovery_s`?",
        ),
        (
            "gooput < 1 or svc_b_max_queu > 3",
            "grid.toml: report.prim: `gooput < 1 or svc_b_max_queu > 3`: `gooput` and `svc_b_max_queu` are not metrics of this scenario; did you mean `goodput` for `gooput`, `svc_b_max_queue` for `svc_b_max_queu`?",
        ),
        (
            deep.as_str(),
            "grid.toml: report.prim: (2009 characters): 2001 tokens, more than the 1000 an outcome may have",
        ),
        (
            "success_rate_after < 0.9 and (recovered or goodput => 1)",
            "grid.toml: report.prim: `success_rate_after < 0.9 and (recovered or goodput => 1)`: unexpected `=` at character 52: comparisons are <, <=, >, >=, == and !=",
        ),
    ] {
        let grid = write_grid(
            dir,
            &format!(
                "{}\n[report]\nheatmap_y = \"horizon_s\"\nprim = \"{prim}\"\n",
                small_grid(1)
            ),
        );
        let o = sweep(&["plan", &grid]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(err.contains("report.heatmap_y"), "all at once: {err}");
    }
    let grid = write_grid(
        dir,
        &format!(
            "{}\n[report]\nprim = \"not recovered or (success_rate_after < 0.9 and recovery_censored_s > 5)\"\n",
            small_grid(1)
        ),
    );
    let o = sweep(&["plan", &grid]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn refine_brackets_the_tipping_point_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(
        dir,
        r#"name = "tip"
scenario = "ch37"
seeds = { first = 1, count = 4 }
[set]
strategy = "naive"
"client.duration_s" = 30
horizon_s = 35
"svc_b.slow.start_s" = 5
[axes]
"client.rate_per_s" = [250, 400]
"svc_b.slow.duration_s" = [0.5, 8]
"#,
    );
    let out = dir.join("o").display().to_string();
    let args = [
        "refine",
        &grid,
        "--axis",
        "svc_b.slow.duration_s",
        "--precision",
        "0.5",
        "--out",
        &out,
    ];
    let o = sweep(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(Path::new(&out).join("analysis/boundary.md")).unwrap();
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| 250") || l.starts_with("| 400"))
        .collect();
    assert_eq!(rows.len(), 2, "{md}");
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (lo, hi): (f64, f64) = (cells[2].parse().unwrap(), cells[4].parse().unwrap());
        assert!(hi - lo <= 0.5 && lo < hi, "{row}");
        let p = |c: &str| c.split_whitespace().next().unwrap().parse::<f64>().unwrap();
        assert!(p(cells[3]) < 0.5 && p(cells[5]) >= 0.5, "{row}");
    }
    assert!(
        std::fs::read_to_string(Path::new(&out).join("analysis/index.md"))
            .unwrap()
            .contains("## Boundary")
    );
    // The boundary's plot, drawn by refine beside the report's, is inlined.
    let html = std::fs::read_to_string(Path::new(&out).join("analysis/index.html")).unwrap();
    for (i, _) in html.match_indices("<div class=\"plot\"") {
        let div = &html[i..];
        let open = div.find('>').unwrap();
        assert!(div[open + 1..].starts_with("<svg"), "an empty plot");
    }
    // Everything is reused the second time, with the grid's comments and
    // spacing edited too.
    let text = std::fs::read_to_string(&grid).unwrap();
    std::fs::write(
        &grid,
        format!(
            "# why\n{}",
            text.replace("horizon_s = 35", "horizon_s=35 # s")
        ),
    )
    .unwrap();
    let again = sweep(&args);
    assert!(again.status.success(), "{}", stderr(&again));
    let err = stderr(&again);
    assert!(
        err.lines()
            .all(|l| !l.contains("new runs") || l.ends_with(" 0 new runs")),
        "{err}"
    );
    // The axis in its other spelling is the same axis, and the same runs.
    let mut other = args;
    other[3] = "svc_b.slow.0.duration_s";
    let again = sweep(&other);
    assert!(again.status.success(), "{}", stderr(&again));
    let err = stderr(&again);
    assert!(
        err.lines()
            .all(|l| !l.contains("new runs") || l.ends_with(" 0 new runs")),
        "{err}"
    );
    // Killed mid-search, its manifest says running with nothing planned
    // yet: the report says so, and how to finish it is `sweep refine`
    // (`sweep run` would refuse the directory as another grid's).
    let manifest = Path::new(&out).join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["status"] = "running".into();
    m["planned"] = 0.into();
    std::fs::write(&manifest, m.to_string()).unwrap();
    let o = sweep(&["report", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let resume = format!(
        "sweep refine {grid} --axis svc_b.slow.duration_s --precision 0.5 --threshold 0.5 --out {out}"
    );
    assert!(
        stderr(&o).contains(&format!("`{resume}` runs the rest")),
        "{}",
        stderr(&o)
    );
    let md = std::fs::read_to_string(Path::new(&out).join("analysis/index.md")).unwrap();
    assert!(
        md.contains("**Partial results: the ")
            && md.contains(" runs of a search that stopped before its end.**"),
        "{md}"
    );
    assert!(md.contains(&format!("`{resume}` runs the rest")), "{md}");
    // Another precision is another refinement: refused, saying so.
    let mut finer = args;
    finer[5] = "0.25";
    assert_fails(
        &sweep(&finer),
        &[&format!(
            "what differs: they were made by `sweep refine {grid} --axis svc_b.slow.duration_s --precision 0.5 --threshold 0.5`, this is `sweep refine {grid} --axis svc_b.slow.duration_s --precision 0.25 --threshold 0.5`; choose another --out"
        )],
    );
}

/// `sweep one` and `sweep scenario show` report every problem of their
/// `--set` values at once, each naming the flag and the value: an unknown
/// path beside a value out of its bounds, `inf`, and a rule between fields.
#[test]
fn one_reports_every_bad_set_at_once_naming_the_flag() {
    for command in [
        &["one", "--scenario", "ch37"][..],
        &["scenario", "show", "ch37"],
    ] {
        let mut args = command.to_vec();
        args.extend([
            "--set",
            "svc_b.nosuch=3",
            "--set",
            "horizon_s=-5",
            "--set",
            "client.rate_per_s=inf",
        ]);
        let o = sweep(&args);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            stderr(&o).lines().collect::<Vec<_>>(),
            [
                "error: invalid scenario `ch37`:",
                "  --set svc_b.nosuch=3: unknown parameter (see docs/params.md, or `sweep params`)",
                "  --set client.rate_per_s=inf: not a finite number (accepted: >= 0)",
                "  --set horizon_s=-5: must be a positive number of seconds",
            ]
        );
    }
    let o = sweep(&["one", "--scenario", "ch37", "--set", "horizon_s=30"]);
    assert_says(
        &stderr(&o),
        &[
            "  --set horizon_s=30: the horizon (30.0 s) ends before the arrivals do (client.duration_s = 60.0 s): raise horizon_s or shorten client.duration_s",
        ],
    );
    // A --set that does not parse hides neither the others nor the preset.
    let o = sweep(&[
        "one",
        "--set",
        "foo",
        "--set",
        "svc_b.slots=0",
        "--preset",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "  --set: expected PATH=VALUE (e.g. svc_b.queue_cap=32), got `foo`",
            "  --preset nope: unknown strategy `nope`",
            "  --set svc_b.slots=0: must be >= 1",
        ],
    );
    assert_fails(
        &sweep(&["one", "--preset", "nope", "--preset", "all"]),
        &["--preset: `all` runs every preset of the scenario: give it alone, not with `nope`"],
    );
    // A scenario without presets: `all` is refused beside the other problems.
    let three_hop = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../grids/scenarios/three-hop.toml"
    );
    assert_fails(
        &sweep(&[
            "one",
            "--scenario",
            three_hop,
            "--preset",
            "all",
            "--set",
            "nosuch=1",
        ]),
        &[
            "--preset: `all`: this scenario defines no presets",
            "--set nosuch=1: unknown parameter",
        ],
    );
    // A run that fails does not hide the others.
    let o = sweep(&["one", "--preset", "all", "--set", "max_events=200000"]);
    assert_eq!(o.status.code(), Some(1));
    assert_says(
        &stderr(&o),
        &["error: run `naive` seed 1 failed: event budget exceeded"],
    );
    assert_says(&stdout(&o), &["deadline  deadline_budget      protected"]);
    // A refused value does not hide another override's idle key (unless
    // the refused one is what would make it act).
    let o = sweep(&[
        "one",
        "--set",
        "svc_a.limit_latency_s=0.1",
        "--set",
        "svc_b.queue_cap=-1",
    ]);
    assert_fails(
        &o,
        &[
            "  --set svc_b.queue_cap=-1: must be >= 0, got -1",
            "  --set svc_a.limit_latency_s=0.1: 0.1 has no effect: limit_latency_s is a setting of the AIMD adaptive limit",
        ],
    );
    let o = sweep(&[
        "one",
        "--set",
        "svc_b.adaptive_limit=maybe",
        "--set",
        "svc_b.limit_latency_s=0.1",
    ]);
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            "error: invalid scenario `ch37`:",
            "  --set svc_b.adaptive_limit=maybe: expected true or false, got string \"maybe\"",
        ]
    );
    // The same path twice is asked about, not decided by the last one.
    let o = sweep(&["one", "--set", "horizon_s=70", "--set", "horizon_s=0"]);
    assert_fails(
        &o,
        &["  --set horizon_s=0: `horizon_s` is given more than once on the command line"],
    );
    // Two choices of the strategy: refused once, whatever the presets.
    let o = sweep(&["one", "--preset", "all", "--set", "strategy=protected"]);
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            "error: invalid scenario `ch37`:",
            "  --set strategy=protected: not with --preset: both choose the strategy (a preset)",
        ]
    );
    // A value is echoed as typed, not as it parses (`1e400` is infinite,
    // `1e-400` is 0), and a number in its shortest form.
    let o = sweep(&[
        "one",
        "--set",
        "client.rate_per_s=1e400",
        "--set",
        "horizon_s = 1e-400",
    ]);
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            "error: invalid scenario `ch37`:",
            "  --set client.rate_per_s=1e400: not a finite number (accepted: >= 0)",
            "  --set horizon_s = 1e-400: must be a positive number of seconds",
        ]
    );
    let o = sweep(&["one", "--set", "svc_a.breaker_open_s=1e300"]);
    assert_fails(
        &o,
        &[
            "  --set svc_a.breaker_open_s=1e300: 1e300 has no effect: breaker_open_s is a setting of the circuit breaker",
        ],
    );
}

/// What a tier does to a traced request is in its trace (a drop, a
/// rejection), and requests still there when the run ends are counted,
/// not said to be nothing.
#[test]
fn a_trace_shows_the_tiers_drops_and_what_the_horizon_cut() {
    let queue = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grids/scenarios/single-queue.toml");
    let o = sweep(&[
        "one",
        "--scenario",
        &queue.display().to_string(),
        "--set",
        "client.propagate_deadline=true",
        "--set",
        "server.drop_expired=true",
        "--trace",
        "1910",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    // At the server, for the client's first attempt (a tier's step is
    // numbered by the attempt its request serves), after the request
    // waited there.
    for event in [" queued ", "dropped: expired"] {
        let step = out.lines().find(|l| l.contains(event));
        let fields: Vec<&str> = step.map_or(vec![], |l| l.split_whitespace().collect());
        let expected = ["server", "#1", "#0", "1"];
        assert_eq!(fields.get(1..5), Some(&expected[..]), "{out}");
    }
    // ch37's naive gateway still holds three requests of user 12033 when
    // the run ends, 36.8 s after it failed.
    let o = sweep(&["one", "--trace", "12033"]);
    assert_ok(&o);
    let out = stdout(&o);
    assert_eq!(out.matches("queued at the horizon").count(), 3, "{out}");
    assert!(
        out.contains(
            "The user request ended at t = 3.100 s; work for it was still pending when the run ended at t = 39.946 s (3 requests queued): an overrun of at least 36.846 s."
        ),
        "{out}"
    );
}

#[test]
fn one_traces_a_request_still_on_its_way_at_the_horizon() {
    // A 12 s hop into b: the last user's request, sent 10.125 s before the
    // run ends, is still crossing it; it never queued.
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../grids/scenarios/published-two-hop.toml"
    );
    let o = sweep(&[
        "one",
        "--scenario",
        scenario,
        "--set",
        "b.latency.mean_s=12",
        "--trace",
        "39",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    assert_eq!(out.matches("in transit at the horizon").count(), 1, "{out}");
    assert!(!out.contains("queued"), "{out}");
    assert!(
        out.contains(
            "The user request ended at t = 1.000 s; work for it was still pending when the run ended at t = 10.125 s (1 request in transit): an overrun of at least 9.125 s."
        ),
        "{out}"
    );
}

#[test]
fn one_traces_a_user_request_and_reports_the_overrun() {
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../grids/scenarios/budget-admission.toml"
    );
    let o = sweep(&[
        "one",
        "--scenario",
        scenario,
        "--trace",
        "0",
        "--set",
        "gateway.attempt_timeout_s=0.6",
        "--set",
        "client.propagate_deadline=false",
        "--set",
        "gateway.budget_admission=false",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let sends = out
        .lines()
        .filter(|l| l.contains("gateway") && l.contains(" send "))
        .count();
    assert_eq!(sends, 3, "{out}");
    assert!(
        out.contains("work for it went on until t = 2.060 s: an overrun of 1.260 s"),
        "{out}"
    );
    // As JSON lines: one object per step, with the budget left.
    let o = sweep(&["one", "--scenario", scenario, "--trace", "0", "--json"]);
    let first_send: serde_json::Value = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["who"] == "gateway" && v["event"] == "send")
        .unwrap();
    assert_eq!(first_send["remaining_s"], 0.7);
    assert_eq!(first_send["t_s"], 0.1);
    // A user past the last to arrive is a mistyped number, not an empty story.
    let o = sweep(&["one", "--scenario", scenario, "--trace", "11"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "error: --trace 11: `custom` seed 1 has no user request 11; 11 arrived before the horizon, numbered 0 to 10"
    );
    assert!(o.stdout.is_empty());
}

/// `dir/queue.toml`, the single-queue scenario with its load from
/// `dir/load.csv` holding `csv`; its path.
fn csv_profile_scenario(dir: &Path, csv: &str) -> String {
    let queue = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../grids/scenarios/single-queue.toml"),
    )
    .unwrap();
    let scenario = queue.replace(
        "rate_per_s = 80.0\nduration_s = 30.0\n",
        "rate_per_s = 0.0\nduration_s = 30.0\nprofile_csv = \"load.csv\"\n",
    );
    let file = dir.join("queue.toml").display().to_string();
    std::fs::write(&file, scenario).unwrap();
    std::fs::write(dir.join("load.csv"), csv).unwrap();
    file
}

/// A bad row of a scenario's CSV profile is the file's problem, named by
/// its line, even when a flag also sets `profile_csv` (refused on its own
/// once the file is right).
#[test]
fn a_csv_profile_s_problem_is_the_file_s_not_a_flag_s() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let file = csv_profile_scenario(dir, "time_s,rate_per_s\n0,20\n30,x\n");
    let o = sweep(&[
        "one",
        "--scenario",
        &file,
        "--set",
        "client.profile_csv=other.csv",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let csv = dir.join("load.csv").display().to_string();
    assert_says(
        &stderr(&o),
        &[&format!(
            "  client.profile_csv: `{csv}` line 3: expected `time_s,rate_per_s` (two numbers), got `30,x`"
        )],
    );
    assert!(!stderr(&o).contains("--set"), "{}", stderr(&o));
}

#[test]
fn a_grid_reads_its_scenario_s_csv_load_profile_and_its_points_build_on_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    csv_profile_scenario(dir, "time_s,rate_per_s\n0,20\n30,60\n");
    // Profile points set by index in [set] build on each other.
    let grid = write_grid(
        dir,
        "name = \"csv\"\nscenario = \"queue.toml\"\nseeds = [1]\n[axes]\n\"server.slots\" = [1, 2]\n",
    );
    let out = dir.join("o").display().to_string();
    let o = run_grid(&grid, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let users: Vec<Option<i64>> = runs_table(Path::new(&out))
        .column("users")
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .collect();
    // 20/s rising to 60/s over 30 s: about 1,200 users, not 80/s's 2,400.
    assert!(
        users.iter().all(|u| (1000..1400).contains(&u.unwrap())),
        "{users:?}"
    );
    let ramp = write_grid(
        dir,
        "name = \"ramp\"\nscenario = \"ch37\"\nseeds = [1]\n[set]\n\"client.rate_per_s\" = 0\n\"client.profile.0.at_s\" = 0\n\"client.profile.0.rate_per_s\" = 100\n\"client.profile.1.at_s\" = 60\n\"client.profile.1.rate_per_s\" = 200\n",
    );
    let o = sweep(&["plan", &ramp]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_grid_name_cannot_lead_out_of_the_output_folder() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["..", ".", ".hidden", "a/b", "a.b"] {
        let text = small_grid(1).replace("name = \"small\"", &format!("name = {name:?}"));
        let o = sweep(&["plan", &write_grid(tmp.path(), &text)]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert_says(
            &stderr(&o),
            &[&format!(
                "name: `{name}` must be letters, digits, `_` or `-` (it names the output directory out/<name>)"
            )],
        );
    }
}

/// A seeds range ends at first + count - 1, from a TOML integer (at most
/// 2^63 - 1, so the last seed always fits), and a key it does not have is
/// refused, not ignored, with the value and what is expected.
#[test]
fn a_seeds_range_is_exact_and_has_only_its_two_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = |seeds: &str| {
        let text = small_grid(1).replace("{ first = 1, count = 1 }", seeds);
        write_grid(tmp.path(), &text)
    };
    let o = sweep(&["plan", &grid("{ first = 9223372036854775807, count = 2 }")]);
    assert_ok(&o);
    assert_says(
        &stdout(&o),
        &["seeds 2 (9223372036854775807, 9223372036854775808)"],
    );
    let o = sweep(&["plan", &grid("{ first = 1, count = 3, step = 2 }")]);
    assert_eq!(o.status.code(), Some(2));
    let file = tmp.path().join("grid.toml");
    assert_eq!(
        stderr(&o).lines().skip(1).collect::<Vec<_>>(),
        [format!(
            "  {}: seeds.step: unknown key; a range of seeds is {{ first = 1, count = 20 }}",
            file.display()
        )]
    );
    // Each wrong part is named: the misspelt key, the key it leaves
    // missing, a negative first seed.
    let o = sweep(&["plan", &grid("{ first = -1, cnt = 3 }")]);
    assert_fails(
        &o,
        &[
            "seeds.cnt: unknown key; did you mean `count`? a range of seeds is { first = 1, count = 20 }",
            "seeds.count: missing: a range of seeds is { first = 1, count = 20 }",
            "seeds.first: must be an integer >= 0, got -1",
        ],
    );
    let o = sweep(&["plan", &grid("\"1-5\"")]);
    assert_fails(
        &o,
        &[
            "seeds = \"1-5\": expected a list of seeds (integers >= 0, e.g. [1, 2, 7]) or { first = 1, count = 20 }",
        ],
    );
}

/// `svc_b.slow.start_s` is `svc_b.slow.0.start_s` (the first window): two
/// spellings in one grid are refused as one path given twice, and a flag
/// in the other spelling replaces the grid's.
#[test]
fn two_spellings_of_one_parameter_are_one_path() {
    let tmp = tempfile::tempdir().unwrap();
    let base = small_grid(1);
    let both = base.replace("[axes]", "[axes]\n\"svc_b.slow.00.start_s\" = [1, 2]");
    let o = sweep(&["plan", &write_grid(tmp.path(), &both)]);
    assert_fails(
        &o,
        &[
            "\"svc_b.slow.00.start_s\": duplicate axis: the same parameter as `svc_b.slow.start_s` (both are `svc_b.slow.0.start_s`)",
        ],
    );
    let grid = write_grid(tmp.path(), &base);
    let o = sweep(&[
        "plan",
        &grid,
        "--set",
        "svc_b.slow.start_s=1",
        "--set",
        "svc_b.slow.0.start_s=2",
    ]);
    assert_fails(
        &o,
        &[
            "--set svc_b.slow.0.start_s=2: `svc_b.slow.start_s` is given more than once on the command line",
        ],
    );
    let o = sweep(&["plan", &grid, "--set", "svc_b.slow.0.start_s=3"]);
    assert_ok(&o);
    assert_says(&stdout(&o), &["set   svc_b.slow.start_s = 3"]);
    let o = sweep(&["plan", &grid, "--axis", "svc_b.slow.0.start_s=2,3"]);
    assert_ok(&o);
    assert_says(&stdout(&o), &["axis  svc_b.slow.start_s (2 levels): 2, 3"]);
}

/// A zip group's `name`, a strategy and a reference's note stand in
/// Markdown tables: a `|`, a backtick or a line break in them is refused,
/// naming the text.
#[test]
fn a_label_that_would_break_a_table_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = small_grid(1)
        .replace(
            "[[zip]]\n",
            "[[zip]]\nname = [\"a | b\", \"two\\nlines\"]\n",
        )
        .replace("\"protected\"]", "\"pro|tected\"]")
        + "[[report.reference]]\npoint = \"strategy=naive\"\nmetric = \"users_ok\"\npublished = 1\nnote = \"see | there\"\n";
    let o = sweep(&["plan", &write_grid(tmp.path(), &text)]);
    assert_fails(
        &o,
        &[
            "zip[0].\"name\": \"a | b\": a zip group's name labels its level in the report's tables: it may not hold `|`",
            "zip[0].\"name\": \"two\\nlines\": a zip group's name labels its level in the report's tables: it may not hold a control character ('\\n')",
            "axes.strategy: \"pro|tected\": a strategy labels its level in the report's tables: it may not hold `|`",
            "report.reference[0].note: a note is a cell in the report's tables: it may not hold `|`",
        ],
    );
}

/// Levels the report could not tell apart, or that run the same model,
/// are refused before any run: two levels of a zip group under one name
/// (its figures would pool them), a zip group or an axis of `name` alone
/// (it labels the scenario and changes nothing), and a heatmap whose
/// sides or panels are one axis.
#[test]
fn levels_the_report_could_not_tell_apart_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = small_grid(1).replace("[[zip]]\n", "[[zip]]\nname = [\"a\", \"a\"]\n")
        + "[[zip]]\nname = [\"x\", \"y\"]\n"
        + "[report]\nheatmap_x = \"strategy\"\nheatmap_y = \"svc_b.queue_cap\"\npanels = \"svc_b.queue_cap\"\n";
    let o = sweep(&["plan", &write_grid(tmp.path(), &text)]);
    assert_fails(
        &o,
        &[
            "zip[0].\"name\": \"a\" names two levels: each level of a zip group needs a name of its own",
            "zip[1]: a zip group of `name` alone varies nothing",
            "report.panels: `svc_b.queue_cap` is heatmap_y too",
        ],
    );
    let axis = small_grid(1).replace("[axes]\n", "[axes]\nname = [\"x\", \"y\"]\n");
    let o = sweep(&["plan", &write_grid(tmp.path(), &axis)]);
    assert_fails(
        &o,
        &["axes.\"name\": `name` labels the scenario and changes nothing it runs"],
    );
    let blank = small_grid(1).replace("[[zip]]\n", "[[zip]]\nname = [\" \", \"b\"]\n")
        + "[report]\nmetrics = [\"goodput\", \"c_late\", \"goodput\"]\n";
    let o = sweep(&["plan", &write_grid(tmp.path(), &blank)]);
    assert_fails(
        &o,
        &[
            "zip[0].\"name\": \" \" is a blank name: the report would show its level as an empty cell",
            "report.metrics: `goodput` is listed twice",
        ],
    );
}

/// A path written as a TOML dotted key without its quotes
/// (`svc_b.queue_cap = 16`, which TOML reads as a table `svc_b`) is the
/// path it spells, in `[set]`, `[axes]` and `[[zip]]`: the plan is the
/// quoted grid's; a misspelt one is named as the path, with a hint.
#[test]
fn unquoted_dotted_paths_are_the_paths_they_spell() {
    let tmp = tempfile::tempdir().unwrap();
    let quoted = small_grid(1);
    let unquoted = quoted
        .replace("\"client.duration_s\"", "client.duration_s")
        .replace("\"svc_b.queue_cap\"", "svc_b.queue_cap")
        .replace("\"svc_a.max_retries\"", "svc_a.max_retries");
    assert_ne!(quoted, unquoted);
    let plan = |text: &str, file: &str| {
        let o = sweep(&["plan", &write_grid_as(tmp.path(), file, text)]);
        assert_ok(&o);
        // The points, not the timing of the calibration runs.
        (stdout(&o).lines())
            .filter(|l| !l.starts_with("estimated"))
            .map(|l| l.replace(file, "grid.toml"))
            .collect::<Vec<_>>()
    };
    assert_eq!(plan(&unquoted, "a.toml"), plan(&quoted, "b.toml"));
    let misspelt = unquoted.replace("client.duration_s", "client.duraton_s");
    let o = sweep(&["plan", &write_grid_as(tmp.path(), "c.toml", &misspelt)]);
    assert_fails(
        &o,
        &["set.\"client.duraton_s\" = 4: unknown parameter; did you mean `client.duration_s`?"],
    );
}

/// A directory whose name is a glob pattern (`gx[1]` matches `gx1`) is
/// read as itself: its report is of its own runs, never of a neighbour's.
#[test]
fn a_report_reads_its_own_directory_whatever_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (small_grid(1), small_grid(2));
    let (grid1, grid2) = (
        write_grid_as(tmp.path(), "one.toml", &one),
        write_grid_as(tmp.path(), "two.toml", &two),
    );
    let (neighbour, own) = (tmp.path().join("gx1"), tmp.path().join("gx[1]"));
    assert_ok(&run_grid(&grid2, neighbour.to_str().unwrap(), &["-q"]));
    let o = sweep(&["run", &grid1, "--out", own.to_str().unwrap(), "-q"]);
    assert_ok(&o);
    let summary = std::fs::read_to_string(own.join("analysis/summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let runs = header
        .iter()
        .position(|c| *c == "runs")
        .expect("a runs column");
    for row in summary.lines().skip(1) {
        assert_eq!(row.split(',').nth(runs), Some("1"), "{row}");
    }
    // Before its first part, a report says there are no runs yet.
    let empty = tmp.path().join("empty[1]");
    std::fs::create_dir_all(empty.join("runs")).unwrap();
    std::fs::copy(own.join("manifest.json"), empty.join("manifest.json")).unwrap();
    let o = sweep(&["report", empty.to_str().unwrap()]);
    assert_fails(
        &o,
        &[&format!(
            "{}: no runs written yet",
            empty.join("runs").display()
        )],
    );
}

/// An NFS client keeps a file deleted while open (a notebook reading a
/// part that `--force` removed) as `.nfs<hex>` until it is closed: such a
/// file does not make a directory a user's, and is never deleted.
#[test]
fn nfs_placeholders_of_deleted_parts_do_not_make_a_directory_foreign() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("o");
    std::fs::create_dir_all(out.join("runs")).unwrap();
    let placeholders = [
        out.join("runs/.nfs000000000012ab3400000001"),
        out.join(".nfs0000000000cd567800000002"),
    ];
    for p in &placeholders {
        std::fs::write(p, "a deleted part still open").unwrap();
    }
    for extra in [&[][..], &["--force"]] {
        let o = run_grid(&grid, &out.display().to_string(), extra);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
    }
    assert!(placeholders.iter().all(|p| p.exists()));
    assert_eq!(runs_table(&out).height(), 8);
}

#[test]
fn force_removes_only_what_this_tool_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    // A folder that is not a sweep's: --force deletes nothing there.
    let foreign = dir.join("project");
    std::fs::create_dir_all(foreign.join("analysis")).unwrap();
    std::fs::write(foreign.join("analysis/lib.rs"), "// code").unwrap();
    let o = run_grid(&grid, &foreign.display().to_string(), &["--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "is not a sweep's output directory (it holds files but no manifest.json), so --force deletes nothing there",
        ],
    );
    assert!(foreign.join("analysis/lib.rs").exists());
    assert!(!foreign.join("runs").exists());
    // Another program's manifest.json (any JSON object reads as a
    // manifest whose fields all default) does not make it a sweep's.
    let dataset = dir.join("dataset");
    std::fs::create_dir_all(dataset.join("analysis")).unwrap();
    std::fs::write(dataset.join("manifest.json"), r#"{"name": "my-dataset"}"#).unwrap();
    std::fs::write(dataset.join("analysis/index.md"), "my notes").unwrap();
    for extra in [&[][..], &["--force"]] {
        let o = run_grid(&grid, &dataset.display().to_string(), extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert_says(
            &stderr(&o),
            &[
                "manifest.json is not a sweep's manifest (it names no sweep tool and no grid fingerprint)",
            ],
        );
    }
    assert_eq!(
        std::fs::read_to_string(dataset.join("manifest.json")).unwrap(),
        r#"{"name": "my-dataset"}"#
    );
    assert_eq!(
        std::fs::read_to_string(dataset.join("analysis/index.md")).unwrap(),
        "my notes"
    );
    // Not even a lock file is written there.
    let lock_files = |d: &Path| {
        (std::fs::read_dir(d).unwrap())
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".lock")
            })
            .count()
    };
    assert_eq!(lock_files(&foreign), 0);
    // Empty folders hold nothing to mix with: accepted.
    let empty = dir.join("empty");
    std::fs::create_dir_all(empty.join("analysis/plots")).unwrap();
    let o = run_grid(&grid, &empty.display().to_string(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Nor does a run, a refinement or a merge write its results and report
    // among those files (they overwrote a user's analysis/index.md).
    let not_ours = "is not a sweep's output directory (it holds files but no manifest.json), so nothing is written there";
    let o = run_grid(&grid, &foreign.display().to_string(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(&stderr(&o), &[not_ours]);
    let tip = write_grid_as(
        dir,
        "tip.toml",
        "name = \"tip\"\nscenario = \"ch37\"\nseeds = [1]\n[axes]\n\"svc_b.slow.duration_s\" = [0.5, 2]\n",
    );
    let o = sweep(&[
        "refine",
        &tip,
        "--axis",
        "svc_b.slow.duration_s",
        "--precision",
        "1",
        "--out",
        &foreign.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&stderr(&o), &[not_ours]);
    assert!(!foreign.join("runs").exists());
    assert_eq!(lock_files(&foreign), 0);
    // A sweep's folder: its results go, a user's files beside them stay.
    let out = dir.join("o");
    let o = sweep(&["run", &grid, "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("analysis/index.html").exists());
    // A user's table and page among the report's (which lists its own).
    let mine = [
        "notes.txt",
        "analysis/notes.txt",
        "runs/keep.txt",
        "analysis/keep.csv",
        "analysis/mine.md",
        "analysis/plots/mine.png",
        // Named like ours at first sight (they were deleted by prefix).
        "manifest-backup.json",
        "parts-list-mine.json",
        "slurm/task-notes.out",
    ];
    std::fs::create_dir_all(out.join("slurm")).unwrap();
    for m in mine {
        std::fs::write(out.join(m), "mine").unwrap();
    }
    let o = run_grid(&grid, &out.display().to_string(), &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for m in mine {
        assert!(out.join(m).exists(), "{m} was deleted");
    }
    assert!(
        !out.join("analysis/index.html").exists(),
        "the old report stays"
    );
    assert!(!out.join("analysis/summary.csv").exists());
    assert_eq!(runs_table(&out).height(), 8);
    // A Parquet file beside the parts that is none of them: refused before
    // anything is deleted (it was refused after, the results gone).
    std::fs::write(out.join("runs/mine.parquet"), "mine").unwrap();
    let o = run_grid(&grid, &out.display().to_string(), &["--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &["runs/mine.parquet", "not a part this sweep committed"],
    );
    assert_eq!(runs_table_of_parts(&out), 8, "the results are kept");
}

/// The rows of the runs parts (`part-*.parquet`) of `dir`.
fn runs_table_of_parts(dir: &Path) -> usize {
    rows_of_parts(dir, "part-")
}

/// The rows of the runs parts of `dir` whose names start with `prefix`.
fn rows_of_parts(dir: &Path, prefix: &str) -> usize {
    let mut rows = 0;
    for e in std::fs::read_dir(dir.join("runs")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_str().unwrap().starts_with(prefix) {
            rows += ParquetReader::new(std::fs::File::open(p).unwrap())
                .finish()
                .unwrap()
                .height();
        }
    }
    rows
}

#[test]
fn a_second_writer_of_the_same_shard_is_refused_naming_the_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(150));
    let out = dir.join("o");
    let mut first = spawn_until_parts(&grid, &out, 1, std::process::Stdio::null());
    let second = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert_says(
        &err,
        &[
            "is being written by another sweep (host ",
            &format!(", pid {}, since ", first.id()),
            "wait for it to finish, or choose another output directory",
        ],
    );
    // Nor may a whole-grid --force delete under a running shard.
    let forced = run_grid(&grid, &out.display().to_string(), &["--force"]);
    assert_says(&stderr(&forced), &["is being written by another sweep"]);
    // The OS releases the lock of a killed writer: resume takes over.
    first.kill().unwrap();
    first.wait().unwrap();
    let resumed = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(runs_table(&out).height(), 1200);
}

/// A merge takes the target's lock before it reads a shard: beside a
/// shard still writing into the directory it is refused naming the writer
/// (not read as an incomplete split), and merges once the shard is done.
#[test]
fn a_merge_beside_a_running_shard_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(150));
    let out = dir.join("o");
    let o = out.display().to_string();
    assert_ok(&run_grid(&grid, &o, &["--shard", "0/2"]));
    let mut shard = spawn_shard_until_parts(
        &grid,
        &out,
        files_in_runs(&out) + 1,
        std::process::Stdio::null(),
        &["--shard", "1/2"],
    );
    let merge = sweep(&["merge", &o, "--no-report"]);
    let err = stderr(&merge);
    assert_eq!(merge.status.code(), Some(2), "{err}");
    assert_says(
        &err,
        &[
            "is being written by another sweep (shard 1/2: host ",
            &format!(", pid {}, since ", shard.id()),
        ],
    );
    shard.kill().unwrap();
    shard.wait().unwrap();
    assert_ok(&run_grid(&grid, &o, &["--shard", "1/2", "--resume"]));
    assert_ok(&sweep(&["merge", &o, "--no-report"]));
    assert_eq!(runs_table(&out).height(), 1200);
}

/// `small_grid(seeds)` in `dir`, its shard 0/2 run into `dir/a` and 1/2
/// into `dir/b`: the grid file and the directories a, b and into (not made).
fn split_in_two_dirs(dir: &Path, seeds: u32) -> (String, [PathBuf; 3]) {
    let grid = write_grid(dir, &small_grid(seeds));
    let dirs = ["a", "b", "into"].map(|d| dir.join(d));
    for (shard, d) in ["0/2", "1/2"].iter().zip(&dirs) {
        assert_ok(&run_grid(
            &grid,
            &d.display().to_string(),
            &["--shard", shard],
        ));
    }
    (grid, dirs)
}

/// What a shard prints names its own manifest, and the commands it
/// prints can be pasted: a directory with a space is quoted.
#[test]
fn a_shard_names_its_manifest_and_quotes_the_commands_it_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("my out");
    let o = out.display().to_string();
    let shard = run_grid(&grid, &o, &["--shard", "0/2"]);
    assert_ok(&shard);
    assert_says(
        &stdout(&shard),
        &[
            &format!("{o}/manifest-s0of2.json"),
            &format!("when all shards are: sweep merge '{o}'"),
        ],
    );
    let json = run_grid(&grid, &o, &["--shard", "1/2", "--json"]);
    assert_ok(&json);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let manifest = summary["paths"]["manifest"].as_str().unwrap();
    assert!(manifest.ends_with("manifest-s1of2.json"), "{summary}");
    assert!(Path::new(manifest).exists());
}

/// A manifest this version cannot read (edited, or with a `[report]` key
/// of another version) is named with the reason by a resume and a merge,
/// which read it as missing before ("holds run files but no manifest").
#[test]
fn an_unreadable_manifest_is_named_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("o");
    let o = out.display().to_string();
    assert_ok(&run_grid(&grid, &o, &[]));
    let path = out.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["report"]["colour"] = "red".into();
    std::fs::write(&path, m.to_string()).unwrap();
    let said = format!(
        "{}: not a manifest this version of the tool can read (unknown field `colour`",
        path.display()
    );
    for args in [
        vec!["run", &grid, "--out", &o, "--resume"],
        vec!["merge", &o],
    ] {
        let r = sweep(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {}", stderr(&r));
        assert_says(
            &stderr(&r),
            &[&said, "was it edited, or written by another version?"],
        );
    }
}

/// A merge reads its source directories with no writer there: beside a
/// shard of another split writing into a source, it is refused naming the
/// writer before the target is made (it would have copied that shard's
/// unfinished parts).
#[test]
fn a_merge_while_a_source_is_being_written_is_refused_naming_the_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, [a, b, into]) = split_in_two_dirs(tmp.path(), 150);
    let s = |p: &Path| p.display().to_string();
    let mut shard = spawn_shard_until_parts(
        &grid,
        &a,
        files_in_runs(&a) + 1,
        std::process::Stdio::null(),
        &["--shard", "0/3"],
    );
    let merge = sweep(&["merge", &s(&a), &s(&b), "--into", &s(&into), "--no-report"]);
    shard.kill().unwrap();
    shard.wait().unwrap();
    let err = stderr(&merge);
    assert_eq!(merge.status.code(), Some(2), "{err}");
    assert_says(
        &err,
        &[
            &format!(
                "{} is being written by another sweep (shard 0/3: host ",
                s(&a)
            ),
            &format!(", pid {}, since ", shard.id()),
        ],
    );
    assert!(!into.exists());
}

/// A source given twice, or the target spelled another way, is one
/// directory: the merge does not lock it against itself. A source that is
/// not a sweep's gets no lock file.
#[test]
fn a_merge_knows_a_directory_however_it_is_spelled() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, [a, b, into]) = split_in_two_dirs(tmp.path(), 2);
    let s = |p: &Path| p.display().to_string();
    let twice = [
        "merge",
        &s(&a),
        &s(&a),
        &s(&b),
        "--into",
        &s(&into),
        "--no-report",
    ];
    assert_ok(&sweep(&twice));
    let dotted = into.join(".").display().to_string();
    assert_ok(&sweep(&[
        "merge",
        &dotted,
        "--into",
        &s(&into),
        "--no-report",
    ]));
    assert_eq!(runs_table(&into).height(), 16);
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("data.csv"), "x").unwrap();
    let o = sweep(&[
        "merge",
        &s(&user),
        &s(&b),
        "--into",
        &s(&tmp.path().join("t")),
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&user).unwrap().count(), 1);
}

/// What a merge killed in its copy left under a temporary name is removed
/// by the next merge into that directory (it holds the directory, so no
/// writer is using it); the runs are each there once.
#[test]
fn a_merge_removes_the_temporary_copies_a_killed_merge_left() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, [a, b, into]) = split_in_two_dirs(tmp.path(), 2);
    let s = |p: &Path| p.display().to_string();
    let merge = ["merge", &s(&a), &s(&b), "--into", &s(&into), "--no-report"];
    assert_ok(&sweep(&merge));
    // Hidden temporary names, and those of earlier versions.
    let left = [
        into.join("runs/.part-s1of2-000000.parquet.tmp"),
        into.join("series/.part-s1of2-000000.parquet.tmp"),
        into.join(".manifest-s1of2.json.tmp"),
        into.join("runs/part-s1of2-000000.parquet.tmp"),
        into.join("series/part-s1of2-000000.parquet.tmp"),
        into.join("manifest-s1of2.json.tmp"),
    ];
    for p in &left {
        std::fs::write(p, "half a copy").unwrap();
    }
    assert_ok(&sweep(&merge));
    for p in &left {
        assert!(!p.exists(), "{} is still there", p.display());
    }
    assert_eq!(runs_table(&into).height(), 16);
}

/// An interrupted shard of a second split counts, in "X of Y runs are
/// written", the runs of its share the first split wrote for it (reused,
/// not run again) as well as those it wrote itself.
#[test]
fn an_interrupted_shard_counts_the_runs_another_split_wrote_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(150));
    let out = dir.join("o");
    let o = out.display().to_string();
    assert_ok(&run_grid(&grid, &o, &["--shard", "0/2"]));
    let child = spawn_shard_until_parts(
        &grid,
        &out,
        files_in_runs(&out) + 1,
        std::process::Stdio::piped(),
        &["--shard", "0/3"],
    );
    interrupt(&child);
    let stopped = child.wait_with_output().unwrap();
    let err = stderr(&stopped);
    assert_eq!(stopped.status.code(), Some(130), "{err}");
    let own = rows_of_parts(&out, "part-s0of3-");
    // Finished, the shard's manifest says how many of its 400 runs the
    // split into 2 had written.
    assert_ok(&run_grid(&grid, &o, &["--shard", "0/3", "--resume"]));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest-s0of3.json")).unwrap())
            .unwrap();
    let reused = m["reused"].as_u64().unwrap() as usize;
    assert!(reused > 0 && own > 0, "reused {reused}, own {own}: {m}");
    assert_says(
        &err,
        &[&format!(
            "interrupted: {} of 400 runs are written",
            reused + own
        )],
    );
}

/// The number of files in `out/runs`.
fn files_in_runs(out: &Path) -> usize {
    std::fs::read_dir(out.join("runs")).map_or(0, |d| d.count())
}

/// A whole-grid run redoes what shards left: beside a running shard it
/// would redo the runs that shard is about to commit, and the table would
/// hold them twice. It is refused naming the shard's writer, and once the
/// shard is gone it finishes the grid with every run once.
#[test]
fn a_whole_grid_run_beside_a_running_shard_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(150));
    let out = dir.join("o");
    let mut shard = spawn_shard_until_parts(
        &grid,
        &out,
        1,
        std::process::Stdio::null(),
        &["--shard", "1/4"],
    );
    let whole = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    let err = stderr(&whole);
    assert_eq!(whole.status.code(), Some(2), "{err}");
    assert_says(
        &err,
        &[
            "is being written by another sweep (shard 1/4: host ",
            &format!(", pid {}, since ", shard.id()),
        ],
    );
    // Nor does a shard of another split (its runs are the running one's
    // too): a resubmitted array with another --tasks.
    let other = run_grid(&grid, &out.display().to_string(), &["--shard", "0/2"]);
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));
    assert_says(
        &stderr(&other),
        &["is being written by another sweep (shard 1/4 of a split into 4, not 2: host "],
    );
    shard.kill().unwrap();
    shard.wait().unwrap();
    let whole = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let runs = runs_table(&out);
    assert_eq!(runs.height(), 1200);
    assert_eq!(runs.column("run_index").unwrap().n_unique().unwrap(), 1200);
}

#[test]
fn a_resume_across_tool_versions_is_refused_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o");
    let o = run_grid(&grid, &out.display().to_string(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = out.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["git_commit"] = "0000000".into();
    std::fs::write(&path, manifest.to_string()).unwrap();
    let o = run_grid(&grid, &out.display().to_string(), &["--resume"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "holds results written by sweep 0.1.0 (commit 0000000); this is sweep 0.1.0 (commit ",
            "--allow-version-change to continue",
        ],
    );
    let o = run_grid(
        &grid,
        &out.display().to_string(),
        &["--resume", "--allow-version-change"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        manifest["earlier_versions"],
        serde_json::json!(["sweep 0.1.0 (commit 0000000)"])
    );
    // The report's provenance names them too.
    assert_ok(&sweep(&["report", &out.display().to_string()]));
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    assert!(
        md.contains(", parts of the runs by sweep 0.1.0 (commit 0000000) on "),
        "{}",
        &md[..md.len().min(800)]
    );
    // A whole-grid run reuses every shard's runs: a shard of another
    // version is refused too (only its own manifest was checked).
    let sharded = dir.join("sharded");
    let sharded_s = sharded.display().to_string();
    assert!(
        run_grid(&grid, &sharded_s, &["--shard", "0/2"])
            .status
            .success()
    );
    let shard_manifest = sharded.join("manifest-s0of2.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&shard_manifest).unwrap()).unwrap();
    m["git_commit"] = "0000000".into();
    std::fs::write(&shard_manifest, m.to_string()).unwrap();
    let o = run_grid(&grid, &sharded_s, &["--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &["holds results written by sweep 0.1.0 (commit 0000000)"],
    );
    let o = run_grid(&grid, &sharded_s, &["--resume", "--allow-version-change"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sharded.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        m["earlier_versions"],
        serde_json::json!(["sweep 0.1.0 (commit 0000000)"])
    );
}

#[test]
fn a_complete_sweep_run_again_says_where_its_report_is_or_how_to_write_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o").display().to_string();
    assert!(run_grid(&grid, &out, &[]).status.success());
    let again = sweep(&["run", &grid, "--out", &out]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_says(
        &stderr(&again),
        &[&format!(
            "already holds the complete results of this grid (no report yet: sweep report {out})"
        )],
    );
    assert!(sweep(&["report", &out]).status.success());
    let again = sweep(&["run", &grid, "--out", &out]);
    assert_says(
        &stderr(&again),
        &["(report: ", "index.md); --force to run it again"],
    );
    // A report that cannot be written does not undo complete results.
    let broken = dir.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let o = sweep(&["run", &grid, "--out", &broken.display().to_string()]);
    assert!(o.status.success());
    std::fs::remove_dir_all(broken.join("analysis")).unwrap();
    std::fs::write(broken.join("analysis"), "a file where the report goes").unwrap();
    let o = sweep(&[
        "run",
        &grid,
        "--out",
        &broken.display().to_string(),
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &[
            "the results are complete, but writing the report failed: ",
            "write it again with: sweep report ",
        ],
    );
}

#[test]
fn an_edited_grid_is_refused_with_what_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o").display().to_string();
    assert!(run_grid(&grid, &out, &[]).status.success());
    let edited = small_grid(2).replace("[16, \"unbounded\"]", "[32, \"unbounded\"]");
    let grid = write_grid(dir, &edited);
    let o = run_grid(&grid, &out, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "holds results of an earlier version of grid `small`, and the grid changed since: ",
            "axes.\"svc_b.queue_cap\": [16, \"unbounded\"] -> [32, \"unbounded\"]",
            "seeds.count: 1 -> 2",
        ],
    );
    // A shard of the edited grid beside another shard's results (a grid
    // edited between two submissions of an array) is told the same way.
    let sharded = dir.join("s").display().to_string();
    let grid = write_grid(dir, &small_grid(1));
    assert!(
        run_grid(&grid, &sharded, &["--shard", "0/2"])
            .status
            .success()
    );
    let grid = write_grid(dir, &small_grid(2));
    let o = run_grid(&grid, &sharded, &["--shard", "1/2"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "holds results of an earlier version of grid `small`, and the grid changed since: seeds.count: 1 -> 2; ",
            "choose another --out, or put the grid back to run this shard beside the others (or delete the directory first)",
        ],
    );
}

/// An edited scenario file is told key by key, from the text the
/// manifest keeps; one edited in its comments only is the same scenario,
/// resumed under the id its results were written with.
#[test]
fn an_edited_scenario_file_is_refused_with_what_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let original = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../grids/scenarios/three-hop.toml"),
    )
    .unwrap();
    std::fs::write(dir.join("sc.toml"), &original).unwrap();
    let grid = write_grid(
        dir,
        "name = \"sc\"\nscenario = \"sc.toml\"\nseeds = [1]\n[set]\nhorizon_s = 5\n\
         \"client.duration_s\" = 4\n[axes]\n\"client.rate_per_s\" = [50, 100]\n",
    );
    let out = dir.join("o").display().to_string();
    // One shard of two, then the whole grid after the edit.
    let o = run_grid(&grid, &out, &["--shard", "0/2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let resumed = |scenario: &str| {
        std::fs::write(dir.join("sc.toml"), scenario).unwrap();
        run_grid(&grid, &out, &["--resume"])
    };
    let sc = dir.join("sc.toml").display().to_string();
    let slower = original.replacen("slow_p = 0.1", "slow_p = 0.2", 1);
    assert_ne!(slower, original, "the file has a slow mixture");
    let o = resumed(&slower);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &[&format!(
            "the grid changed since: the scenario {sc} changed: tiers[2].service.slow_p: 0.1 -> 0.2;"
        )],
    );
    // Comments and layout only: the other shard's points run under the
    // first's ids.
    let relaid = format!("# a note\n{}", original.replace(" = ", "="));
    let o = resumed(&relaid);
    assert!(o.status.success(), "{}", stderr(&o));
    let fresh = dir.join("fresh").display().to_string();
    std::fs::write(dir.join("sc.toml"), &original).unwrap();
    assert!(run_grid(&grid, &fresh, &[]).status.success());
    assert_same_runs(Path::new(&out), Path::new(&fresh));
}

/// A scenario whose text is the same but whose CSV load profile changed
/// is another scenario, and says where it changed.
#[test]
fn a_changed_csv_profile_is_told() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    csv_profile_scenario(dir, "time_s,rate_per_s\n0,20\n30,60\n");
    let grid = write_grid(
        dir,
        "name = \"q\"\nscenario = \"queue.toml\"\nseeds = [1]\n[set]\nhorizon_s = 35\n\
         [axes]\n\"server.slots\" = [1, 2]\n",
    );
    let out = dir.join("o").display().to_string();
    let o = run_grid(&grid, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(dir.join("load.csv"), "time_s,rate_per_s\n0,20\n30,70\n").unwrap();
    let o = run_grid(&grid, &out, &["--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let sc = dir.join("queue.toml").display().to_string();
    assert_says(
        &stderr(&o),
        &[&format!(
            "the grid changed since: the scenario {sc} changed in the load profile it reads from a CSV file"
        )],
    );
}

#[test]
fn bad_command_line_values_and_environments_are_refused_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(1));
    let out = dir.join("o").display().to_string();
    let o = run_grid(&grid, &out, &["--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(&stderr(&o), &["'--jobs <JOBS>': must be at least 1"]);
    let o = run_grid(&grid, &out, &["-j", "100000"]);
    assert_says(&stderr(&o), &["100000 workers is more than 1024"]);
    for command in ["plan", "refine"] {
        let o = sweep(&[command, &grid, "--jobs", "0"]);
        assert_eq!(o.status.code(), Some(2), "{command}");
        assert_says(&stderr(&o), &["'--jobs <JOBS>': must be at least 1"]);
    }
    // Before the grid is read: a bad grid does not hide it.
    let o = sweep(&["slurm", "no-such-grid.toml", "--tasks", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &["invalid value '0' for '--tasks <TASKS>': must be at least 1 (one array task per shard)"],
    );
    // More tasks than runs: the extra ones would have nothing to do.
    let o = sweep(&["slurm", &grid, "--tasks", "30", "--out", &out]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            "error: slurm:",
            "  --tasks 30: more array tasks than the grid has runs (8), so 22 would run nothing; give at most 8",
        ]
    );
    let o = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(["run", &grid, "--out", &out])
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env_remove("SLURM_ARRAY_TASK_COUNT")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not, so the shard is unknown; pass --shard I/N",
        ],
    );
    let seeds = small_grid(1).replace("seeds = { first = 1, count = 1 }", "seeds = [1, 1, -2]");
    let o = sweep(&["plan", &write_grid(dir, &seeds)]);
    assert_says(
        &stderr(&o),
        &["seeds[2]: a seed is an integer >= 0, got -2"],
    );
}

#[test]
fn printing_commands_end_quietly_when_the_reader_goes_away() {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(["params"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("path "), "the table's head: {first}");
    let o = child.wait_with_output().unwrap();
    assert_eq!(stderr(&o), "", "no panic, no message");
}

#[test]
fn a_grid_with_replicas_writes_its_report() {
    let tmp = tempfile::tempdir().unwrap();
    let grids = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grids");
    let text = std::fs::read_to_string(grids.join("bad-replica.toml"))
        .unwrap()
        .replace("seeds = { first = 1, count = 5 }", "seeds = [1]")
        .replace(
            "scenario = \"scenarios/bad-replica.toml\"",
            &format!(
                "scenario = {:?}",
                grids
                    .join("scenarios/bad-replica.toml")
                    .display()
                    .to_string()
            ),
        );
    let grid = write_grid(tmp.path(), &text);
    let out = tmp.path().join("o").display().to_string();
    let o = sweep(&["run", &grid, "--out", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Replica columns (svc_b_r1_max_queue) are not mistaken for tiers.
    let index = std::fs::read_to_string(Path::new(&out).join("analysis/index.md")).unwrap();
    assert!(!index.contains("svc_b_r1 "), "{index}");
}

/// A crash (abort: no flush, no destructor) at every step of committing a
/// part, the first part or the second: the resume gives the uninterrupted
/// table, every part verified against its index.
#[test]
fn a_crash_at_any_step_of_a_commit_resumes_to_the_exact_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &small_grid(10)); // 80 runs, parts of 20
    let batches = ["--jobs", "1", "--batch-runs", "20", "--batch-secs", "60"];
    let full = dir.join("full");
    assert!(
        run_grid(&grid, &full.display().to_string(), &batches)
            .status
            .success()
    );
    let steps = [
        "series-written",
        "series-synced",
        "series-renamed",
        "runs-written",
        "runs-synced",
        "runs-renamed",
        "index-written",
        "index-synced",
        "index-renamed",
    ];
    for step in steps {
        for part in [1, 2] {
            let out = dir.join(format!("{step}-{part}"));
            let at = format!("{step}:{part}");
            let mut args = batches.to_vec();
            args.extend(["--inject-crash", &at]);
            let crashed = run_grid(&grid, &out.display().to_string(), &args);
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                crashed.status.signal(),
                Some(6),
                "{at}: {}",
                stderr(&crashed)
            );
            let resumed = run_grid(&grid, &out.display().to_string(), &["--resume"]);
            assert!(resumed.status.success(), "{at}: {}", stderr(&resumed));
            assert_same_runs(&out, &full);
            assert_eq!(runs_table(&out).height(), 80, "{at}");
        }
    }
}

/// With client groups, the series carry each group's users by arrival,
/// which add up to the totals row by row, and the runs table each group's
/// recovery; a scenario without groups has none of these columns.
#[test]
fn group_series_add_up_and_groups_report_their_recovery() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../grids/scenarios/mixed-clients.toml"
    );
    let grid = write_grid(
        dir,
        &format!(
            r#"name = "groups"
scenario = "{scenario}"
seeds = [1]
[set]
"client.duration_s" = 16
"batch.duration_s" = 16
horizon_s = 18
"svc_b.slow.duration_s" = 2
[axes]
strategy = ["naive", "deadline"]
"#
        ),
    );
    let out = dir.join("o");
    assert_ok(&run_grid(&grid, &out.display().to_string(), &[]));
    let series = first_series_part(&out);
    let col = |c: &str| series.column(c).unwrap().i64().unwrap().clone();
    for total in ["user_arrivals", "user_ok_by_arrival"] {
        let (all, client, batch) = (
            col(total),
            col(&format!("group_client_{total}")),
            col(&format!("group_batch_{total}")),
        );
        for row in 0..series.height() {
            assert_eq!(
                client.get(row).unwrap() + batch.get(row).unwrap(),
                all.get(row).unwrap(),
                "{total}, row {row}"
            );
        }
        assert!(batch.iter().flatten().sum::<i64>() > 0, "the batch loads");
    }
    let t = runs_table(&out);
    for name in [
        "group_client_recovery_s",
        "group_batch_recovered",
        "group_batch_recovery_censored_s",
    ] {
        assert!(t.column(name).is_ok(), "{name}");
    }
    let recovered = t
        .column("group_client_recovered")
        .unwrap()
        .bool()
        .unwrap()
        .clone();
    assert_eq!(
        recovered.iter().flatten().filter(|r| *r).count(),
        1,
        "deadline recovers, naive not"
    );
}

/// The traffic columns: each replica's queue and busy counts (a list per
/// second, empty where the tier has one instance) add up to the tier's;
/// retries are at most the arrivals; the latency histograms count every
/// finished user once.
#[test]
fn replica_series_and_latency_histograms_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(
        dir,
        r#"name = "replicas"
scenario = "ch37"
seeds = [1, 2]
[set]
"client.duration_s" = 4
horizon_s = 5
"svc_b.slow.start_s" = 1
[axes]
"svc_b.replicas" = [1, 3]
strategy = ["naive", "protected"]
"#,
    );
    let out = dir.join("o");
    assert_ok(&run_grid(&grid, &out.display().to_string(), &[]));
    let series = first_series_part(&out);
    let lists = |c: &str| series.column(c).unwrap().list().unwrap().clone();
    let (queues, busy) = (
        lists("svc_b_replica_queue_len"),
        lists("svc_b_replica_busy"),
    );
    let total = |c: &str| series.column(c).unwrap().i64().unwrap().clone();
    let (queue_len, busy_total) = (total("svc_b_queue_len"), total("svc_b_busy"));
    let mut lengths = std::collections::BTreeSet::new();
    for row in 0..series.height() {
        let sum = |l: &ListChunked| {
            let s = l.get_as_series(row).unwrap();
            (s.len(), s.i64().unwrap().iter().flatten().sum::<i64>())
        };
        let (n, q) = sum(&queues);
        lengths.insert(n);
        if n > 0 {
            assert_eq!(q, queue_len.get(row).unwrap(), "row {row}");
            assert_eq!(sum(&busy).1, busy_total.get(row).unwrap(), "row {row}");
        }
    }
    assert_eq!(
        lengths,
        [0, 3].into(),
        "one instance: empty; three: one count each"
    );
    assert!(
        series.column("gateway_replica_queue_len").is_err(),
        "gateway has no replicas"
    );
    assert!(
        (series.get_column_names().iter()).all(|c| !c.starts_with("group_")),
        "no client groups"
    );
    let (arrivals, retries) = (total("svc_b_arrivals"), total("svc_b_retries"));
    assert!(arrivals.iter().zip(retries.iter()).all(|(a, r)| r <= a));
    let t = runs_table(&out);
    let hist = |c: &str, row: usize| {
        let l = t
            .column(c)
            .unwrap()
            .list()
            .unwrap()
            .get_as_series(row)
            .unwrap();
        assert_eq!(l.len(), 72, "71 edges, one bucket more");
        l.i64().unwrap().iter().flatten().sum::<i64>()
    };
    let count = |c: &str, row: usize| t.column(c).unwrap().i64().unwrap().get(row).unwrap();
    for row in 0..t.height() {
        assert_eq!(
            hist("success_latency_histogram", row),
            count("users_ok", row)
        );
        assert_eq!(
            hist("failed_latency_histogram", row),
            count("users_failed", row) - count("users_unfinished", row)
        );
    }
}

/// A run that does not recover is explained: `sweep one` names the
/// bottleneck and the loop, and the report (with `why_not_recovered.csv`)
/// adds the smallest change that recovers.
#[test]
fn why_a_run_did_not_recover() {
    let one = sweep(&["one", "--preset", "naive", "--preset", "protected"]);
    assert_ok(&one);
    let out = stdout(&one);
    assert!(
        out.contains("why `naive` did not recover: at svc_b after the trigger")
            && out.contains("retry amplification keeps it saturated, gateway's retries most")
            && out.contains("% from gateway, "),
        "{out}"
    );
    assert!(
        !out.contains("why `protected`"),
        "protected recovers: {out}"
    );
    // GC pauses that grow with svc_b's queue (5 ms per request queued):
    // its queue never empties, yet it finishes a third of its capacity.
    let gc = sweep(&[
        "one",
        "--preset",
        "naive",
        "--set",
        "svc_b.gc.every_s=1",
        "--set",
        "svc_b.gc.pause_s=0.05",
        "--set",
        "svc_b.gc.per_queued_s=0.005",
        "--set",
        "svc_b.slow.duration_s=5",
    ]);
    assert_ok(&gc);
    let out = stdout(&gc);
    assert!(
        out.contains(
            "degraded capacity sustains it: it finished 30% of what its slots serve at low load"
        ),
        "{out}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(
        dir,
        r#"name = "why"
scenario = "ch37"
seeds = [1, 2]
[axes]
strategy = ["naive", "protected"]
"#,
    );
    let out = dir.join("o");
    assert_ok(&sweep(&["run", &grid, "--out", &out.display().to_string()]));
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    let at = md.find("### Why it did not recover").expect("the section");
    assert!(
        at < md.find("## Why: sensitivity").unwrap(),
        "in What happened"
    );
    assert!(
        md.contains("- **strategy=naive**: 2 of 2 runs never recover; at svc_b")
            && md.contains("Smallest change that recovers: `strategy` naive -> protected (2 of 2 runs recover)."),
        "{md}"
    );
    let csv = std::fs::read_to_string(out.join("analysis/why_not_recovered.csv")).unwrap();
    assert!(csv.starts_with("point,not_recovered,runs,bottleneck,load,first_try_load,retry_share,retries_from,hedge_share,dead_share,sustainer,sustained_by,smallest_flip"), "{csv}");
    assert!(csv.contains("retry amplification,gateway,"), "{csv}");
}

/// A grid that sweeps a group's `calls`: at gateway, the batch's retries
/// have their own column even though the first point's batch calls svc_b
/// directly, so that at every point each tier's retries by caller add up
/// to its retries, second by second.
#[test]
fn a_swept_calls_keeps_every_callers_retries_in_the_series() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../grids/scenarios/mixed-clients.toml");
    let grid = write_grid(
        dir,
        &format!(
            r#"name = "calls"
scenario = "{}"
seeds = [1]
[set]
"client.duration_s" = 6
"batch.duration_s" = 6
horizon_s = 8
"svc_b.slow.start_s" = 1
"svc_b.slow.duration_s" = 2
"client.rate_per_s" = 300
"batch.closed.users" = 60
[axes]
"batch.calls" = ["svc_b", "gateway"]
"#,
            scenario.display()
        ),
    );
    let out = dir.join("o");
    assert_ok(&run_grid(&grid, &out.display().to_string(), &[]));
    let series = first_series_part(&out);
    let names: Vec<String> = (series.get_column_names().iter())
        .map(|c| c.to_string())
        .collect();
    assert!(
        names.contains(&"gateway_retries_from_batch".to_string()),
        "{names:?}"
    );
    let total = |c: &str| series.column(c).unwrap().i64().unwrap().clone();
    let mut batch_retries_at_gateway = 0;
    for tier in ["gateway", "svc_a", "svc_b"] {
        let retries = total(&format!("{tier}_retries"));
        let from: Vec<_> = (names.iter())
            .filter(|c| c.starts_with(&format!("{tier}_retries_from_")))
            .map(|c| total(c))
            .collect();
        for row in 0..series.height() {
            let sum: i64 = from.iter().map(|c| c.get(row).unwrap()).sum();
            assert_eq!(sum, retries.get(row).unwrap(), "{tier}, row {row}");
        }
        if tier == "gateway" {
            batch_retries_at_gateway = total("gateway_retries_from_batch").sum().unwrap();
        }
    }
    assert!(
        batch_retries_at_gateway > 0,
        "the batch retries at gateway at its second point"
    );
}

/// A point with more replicas than the first has metrics the first lacks
/// (per-replica counts, its callers' ejections): the runs table has a
/// column for each, every run's values sit under their own names, as
/// `sim_core::run` gives them, and a run without such a metric has null.
/// (The table's columns came from the first point, and the values were
/// written by position: the second point's landed under other names.)
#[test]
fn each_metric_of_every_point_lands_under_its_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write_grid(
        dir.path(),
        "name = \"replicas\"\nscenario = \"ch37\"\nseeds = [1]\n\
         [set]\nhorizon_s = 5\n\"client.duration_s\" = 5\n\
         [axes]\n\"svc_b.replicas\" = [1, 4]\n",
    );
    let out = dir.path().join("out");
    assert_ok(&run_grid(
        &grid,
        &out.display().to_string(),
        &["--jobs", "1"],
    ));
    let runs = runs_table(&out);
    let number = |v: AnyValue| match v {
        AnyValue::Null => None,
        AnyValue::Boolean(b) => Some(f64::from(u8::from(b))),
        other => other.extract::<f64>(),
    };
    let expected = |v: sim_core::Value| match v {
        sim_core::Value::Count(n) => Some(n as f64),
        sim_core::Value::Real(x) => Some(x),
        sim_core::Value::MaybeReal(x) => x,
        sim_core::Value::Flag(b) => Some(f64::from(u8::from(b))),
        sim_core::Value::MaybeFlag(b) => b.map(|b| f64::from(u8::from(b))),
    };
    let replicas_column = runs
        .column("svc_b.replicas")
        .unwrap()
        .i64()
        .unwrap()
        .clone();
    let mut absent = 0;
    for replicas in [1, 4] {
        let row = (replicas_column.iter())
            .position(|v| v == Some(replicas))
            .expect("a run of each point");
        let overrides: Vec<_> = [
            ("horizon_s", "5"),
            ("client.duration_s", "5"),
            ("svc_b.replicas", &replicas.to_string()),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), sim_core::parse_value(v)))
        .collect();
        // As the grid ran it: the scenario's slow window, past this
        // horizon, is the file's, not the overrides' to answer for.
        let scenario = sim_core::resolve("ch37", &overrides).unwrap();
        let scratch = &mut sim_core::Scratch::default();
        let metrics = (sim_core::run_validated(&scenario, 1, scratch).unwrap()).metrics();
        for m in &metrics {
            let got = number(runs.column(&m.name).unwrap().get(row).unwrap());
            let want = expected(m.value);
            assert!(
                got == want || got.is_some_and(|g| want.is_some_and(|w| g.is_nan() && w.is_nan())),
                "{replicas} replicas, {}: {got:?} in the table, {want:?} in the run",
                m.name
            );
        }
        for name in ["svc_b_r1_arrivals", "svc_a_ejections"] {
            let value = runs.column(name).unwrap().get(row).unwrap();
            if !metrics.iter().any(|m| m.name == name) {
                assert_eq!(value, AnyValue::Null, "{replicas} replicas, {name}");
                absent += 1;
            }
        }
    }
    assert_eq!(absent, 2, "the one-replica point lacks both");
}

/// A preset that gives a tier replicas or the series sub-second bins (a
/// `strategy` axis applies it at some points) gets its series columns:
/// they were decided from the first point and the axes alone, so the
/// preset's points lost their per-replica and per-bin series.
#[test]
fn a_preset_s_replicas_and_bins_have_their_series() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = stdout(&sweep(&["scenario", "show", "ch37"])).replace(
        "[presets.protected]\n",
        "[presets.protected]\n\"svc_b.replicas\" = 3\n\"series_bin_s\" = 0.5\n",
    );
    assert!(
        scenario.contains("\"svc_b.replicas\" = 3"),
        "the preset is edited"
    );
    std::fs::write(dir.path().join("scen.toml"), scenario).unwrap();
    let grid = write_grid(
        dir.path(),
        "name = \"preset\"\nscenario = \"scen.toml\"\nseeds = [1]\n\
         [set]\nhorizon_s = 5\n\"client.duration_s\" = 5\n\
         [axes]\nstrategy = [\"naive\", \"protected\"]\n",
    );
    let out = dir.path().join("out");
    assert_ok(&run_grid(
        &grid,
        &out.display().to_string(),
        &["--jobs", "1"],
    ));
    let series = first_series_part(&out);
    let runs = runs_table(&out);
    let strategy = runs
        .column("strategy")
        .unwrap()
        .cast(&DataType::String)
        .unwrap();
    let protected = (strategy.str().unwrap().iter())
        .position(|s| s == Some("protected"))
        .unwrap();
    let run_id = runs.column("run_id").unwrap().get(protected).unwrap();
    let rows: Vec<usize> = (0..series.height())
        .filter(|&i| series.column("run_id").unwrap().get(i).unwrap() == run_id)
        .collect();
    assert_eq!(rows.len(), 5, "one row a second");
    for name in ["svc_b_replica_queue_len", "svc_b_arrivals_by_bin"] {
        let column = series.column(name).unwrap_or_else(|_| panic!("{name}"));
        let list = column.get(rows[1]).unwrap();
        let AnyValue::List(values) = list else {
            panic!("{name}: {list:?}")
        };
        assert!(!values.is_empty(), "{name}: values for the protected run");
    }
}

/// A flag's value out of its range is refused with the range, not taken
/// for another flag (`-1`) nor quietly raised (`--calibrate 0`).
#[test]
fn flag_values_out_of_range_are_refused_with_their_bounds() {
    let o = sweep(&["one", "--seed", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "invalid value '-1' for '--seed <SEED>': a seed is a whole number from 0 to 18446744073709551615",
        ],
    );
    let tmp = tempfile::tempdir().unwrap();
    let o = sweep(&[
        "plan",
        &write_grid(tmp.path(), &small_grid(1)),
        "--calibrate",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &["invalid value '0' for '--calibrate <CALIBRATE>': 0 is not in 1.."],
    );
    // A grid's flag value is echoed as typed, not as it parses (`1e400`
    // is infinite, `1e-400` is 0, `fastest` a TOML string).
    let grid = write_grid(tmp.path(), &small_grid(1));
    for (flag, arg, said) in [
        (
            "--set",
            "strategy=fastest",
            "  --set strategy=fastest: unknown strategy `fastest`; this scenario's presets: deadline, deadline_budget, naive, protected",
        ),
        (
            "--set",
            "horizon_s=1e-400",
            "  --set horizon_s=1e-400: must be a positive number of seconds",
        ),
        (
            "--axis",
            "client.rate_per_s=100, 1e400",
            "  --axis client.rate_per_s=1e400: not a finite number (accepted: >= 0)",
        ),
    ] {
        let o = sweep(&["plan", &grid, flag, arg]);
        assert_eq!(
            stderr(&o).lines().collect::<Vec<_>>(),
            ["error: invalid grid:", said],
            "{flag} {arg}"
        );
    }
}

/// A key a preset sets where it cannot act is refused once it acts at
/// none of the points of that preset, and accepted where an axis turns
/// its mechanism on at some of them.
#[test]
fn a_preset_key_that_acts_nowhere_is_refused_naming_its_point() {
    let tmp = tempfile::tempdir().unwrap();
    let shown = sweep(&["scenario", "show", "ch37"]);
    assert_ok(&shown);
    let scenario = stdout(&shown).replace(
        "[presets.naive]\n",
        "[presets.naive]\n\"svc_a.breaker_window\" = 37\n",
    );
    std::fs::write(tmp.path().join("inert.toml"), scenario).unwrap();
    let grid = small_grid(1)
        .replace("scenario = \"ch37\"", "scenario = \"inert.toml\"")
        .replace(
            "[[zip]]\n\"svc_a.attempt_timeout_s\" = [0.2, 0.5]\n\"svc_a.max_retries\" = [2, 1]\n",
            "",
        );
    let o = sweep(&["plan", &write_grid(tmp.path(), &grid)]);
    assert_fails(
        &o,
        &[
            "grid.toml: point 0 (strategy=\"naive\" svc_b.queue_cap=16): svc_a.breaker_window: 37 has no effect: breaker_window is a setting of the circuit breaker, and svc_a.breaker is off; set svc_a.breaker = true, or leave breaker_window at its default (20) (at each of the points whose strategy sets it)",
        ],
    );
    let on_somewhere = grid.replace("[axes]\n", "[axes]\n\"svc_a.breaker\" = [false, true]\n");
    assert_ok(&sweep(&["plan", &write_grid(tmp.path(), &on_somewhere)]));
}

/// An output path that is a file, or a link to nothing, is refused as
/// such (it was "File exists (os error 17)").
#[test]
fn an_output_path_that_is_no_directory_is_refused_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let file = tmp.path().join("afile");
    std::fs::write(&file, "mine").unwrap();
    let o = run_grid(&grid, &file.display().to_string(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &["afile is not a directory (a file): choose another --out"],
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    let dangling = tmp.path().join("dangling");
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
    let o = run_grid(&grid, &dangling.display().to_string(), &["--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &["dangling is not a directory (a link to nothing): choose another --out"],
    );
    assert!(!tmp.path().join("nowhere").exists());
}

/// A device that never ends, given as the scenario or the grid, is refused
/// at the input size limit (it was read until memory ran out); a pipe
/// still reads.
#[test]
fn an_endless_input_is_refused_at_the_size_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let zero = small_grid(1).replace("scenario = \"ch37\"", "scenario = \"/dev/zero\"");
    let o = sweep(&["plan", &write_grid(tmp.path(), &zero)]);
    assert_fails(
        &o,
        &[
            "scenario: `/dev/zero` is neither a built-in scenario (ch37) nor a readable file (/dev/zero: larger than 64 MiB, so not an input file)",
        ],
    );
    assert_fails(
        &sweep(&["plan", "/dev/zero"]),
        &["/dev/zero: cannot read: larger than 64 MiB, so not an input file"],
    );
}

/// A report killed at any moment leaves a whole page (the one before it
/// or the new one), never none: each file is replaced in one rename. The
/// next report removes what the killed one left.
#[test]
fn a_report_killed_at_any_moment_leaves_a_whole_page() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("o");
    let out_s = out.display().to_string();
    assert_ok(&sweep(&["run", &grid, "--out", &out_s, "-q"]));
    let index = out.join("analysis/index.md");
    let whole = |text: &str| text.starts_with("# Sweep `small`") && text.contains("## Tables");
    for delay_ms in [5, 30, 80, 150, 300, 600] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sweep"))
            .args(["report", &out_s])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        let text = std::fs::read_to_string(&index).unwrap();
        assert!(whole(&text), "killed after {delay_ms} ms: {text}");
    }
    assert!(sweep(&["report", &out_s]).status.success());
    assert!(!out.join("analysis/.report-in-progress").exists());
    assert!(whole(&std::fs::read_to_string(&index).unwrap()));
}

/// Levels at the ends of a float's range are shown by `plan` in exponent
/// form, as written, not as hundreds of digits (the report's labels:
/// `analysis::load`'s `numbers_read_as_written`).
#[test]
fn extreme_levels_are_shown_in_exponent_form() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let text = small_grid(1).replace(
        "[axes]\n",
        "[axes]\n\"svc_a.backoff_base_s\" = [1e308, 1e-320, 0.05]\n",
    );
    assert_ne!(text, small_grid(1));
    let grid = write_grid(dir, &text);
    let o = sweep(&["plan", &grid, "--calibrate", "1"]);
    assert_says(
        &stdout(&o),
        &["svc_a.backoff_base_s (3 levels): 1e308, 1e-320, 0.05"],
    );
}

/// The offered-load caption names why the drawn tier turned arrivals
/// away, each cause's share as the runs table counts it over the slice.
#[test]
fn the_load_caption_names_why_the_tier_turned_arrivals_away() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        r#"name = "causes"
scenario = "ch37"
seeds = [1, 2]
[set]
strategy = "protected"
"client.duration_s" = 8
horizon_s = 10
"svc_b.slow.start_s" = 2
"svc_b.slow.duration_s" = 3
"svc_b.rate_limit_per_s" = 300
[axes]
"svc_b.queue_cap" = [4, 16]
"#,
    );
    let out = tmp.path().join("out");
    let md = run_for_report(&grid, &out);
    let runs = runs_table(&out);
    let total = |c: &str| -> f64 {
        let v = runs.column(c).unwrap().cast(&DataType::Float64).unwrap();
        v.f64().unwrap().into_no_null_iter().sum()
    };
    let (full, limited) = (total("svc_b_rejected_full"), total("svc_b_rate_limited"));
    assert!(
        full > 0.0 && limited > 0.0,
        "both causes: {full}, {limited}"
    );
    assert_eq!(total("svc_b_shed") + total("svc_b_refused_down"), 0.0);
    let pct = |n: f64| format!("{:.0}%", 100.0 * n / (full + limited));
    let (first, second) = match full >= limited {
        true => (
            format!(
                "{} for a full queue or a concurrency limit (`svc_b_rejected_full`)",
                pct(full)
            ),
            format!("{} by its rate limit (`svc_b_rate_limited`)", pct(limited)),
        ),
        false => (
            format!("{} by its rate limit (`svc_b_rate_limited`)", pct(limited)),
            format!(
                "{} for a full queue or a concurrency limit (`svc_b_rejected_full`)",
                pct(full)
            ),
        ),
    };
    let expected =
        format!("(the solid line is what it let in): over the slice's runs, {first}, {second}.");
    assert!(md.contains(&expected), "no `{expected}` in:\n{md}");
}
