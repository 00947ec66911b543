//! What `sweep` trusts in an output directory: every part is the one it
//! committed (listed in the shard's `parts-*.json` with its SHA-256), every
//! runs part has its series part, every run is written once, and merge
//! checks before it writes.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `sweep run GRID --out OUT --jobs 1 --batch-runs 8 EXTRA... --no-report`:
/// several parts.
fn run(grid: &str, out: &Path, extra: &[&str]) -> Output {
    let out = out.display().to_string();
    let mut args = vec![
        "run",
        grid,
        "--out",
        &out,
        "--jobs",
        "1",
        "--batch-runs",
        "8",
    ];
    args.extend(extra);
    args.push("--no-report");
    sweep(&args)
}

fn parts(dir: &Path, sub: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Shard `k` (`I/N`) of `grid` into `out`, one thread, without a report.
fn run_shard(grid: &str, out: &str, k: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", grid, "--out", out, "--jobs", "1", "--shard", k];
    args.extend(extra);
    args.push("--no-report");
    sweep(&args)
}

/// The rows of `dir`'s parts in `sub` (`runs` or `series`).
fn rows(dir: &Path, sub: &str) -> usize {
    (parts(dir, sub).iter())
        .map(|p| {
            use polars::prelude::{ParquetReader, SerReader};
            ParquetReader::new(std::fs::File::open(p).unwrap())
                .finish()
                .unwrap()
                .height()
        })
        .sum()
}

fn compare(a: &Path, b: &Path) -> Output {
    sweep(&["compare", &s(a), &s(b)])
}

fn report(dir: &Path) -> Output {
    sweep(&["report", &s(dir)])
}

/// One complete reference sweep and a second one to damage.
fn two_sweeps(dir: &Path, seeds: u32) -> (String, PathBuf, PathBuf) {
    let grid = write_grid_as(dir, "grid.toml", &small_grid(seeds));
    let (good, bad) = (dir.join("good"), dir.join("bad"));
    assert_ok(&run(&grid, &good, &[]));
    assert_ok(&run(&grid, &bad, &[]));
    assert!(parts(&bad, "runs").len() >= 2);
    (grid, good, bad)
}

/// Compare, report, resume and merge of `bad` each refuse the file
/// `name`, naming it.
fn assert_refused_everywhere(grid: &str, good: &Path, bad: &Path, name: &str) {
    assert_fails(
        &compare(good, bad),
        &[name, "not a part this sweep committed"],
    );
    assert_fails(&report(bad), &[name, "Move it out"]);
    assert_fails(&run(grid, bad, &["--resume"]), &[name]);
    assert_fails(&sweep(&["merge", &s(bad), "--no-report"]), &[name]);
}

#[test]
fn a_copy_of_a_part_is_refused_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 2);
    let first = parts(&bad, "runs")[0].clone();
    let copy = bad.join("runs").join("part-s0of1-000000 (copy).parquet");
    std::fs::copy(&first, &copy).unwrap();
    assert_refused_everywhere(&grid, &good, &bad, "part-s0of1-000000 (copy).parquet");
    // Moved out, everything agrees again.
    std::fs::remove_file(&copy).unwrap();
    assert_ok(&compare(&good, &bad));
    assert_ok(&report(&bad));
}

/// A Parquet file in `series/` that no index lists (a backup, a user's
/// file named like a part) would be read with the series and count its
/// rows twice: every command refuses it, and none deletes it, not even a
/// resume or a merge that clears what an interrupted writer left.
#[test]
fn a_stray_series_file_is_refused_everywhere_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 2);
    let first = parts(&bad, "series")[0].clone();
    for name in [
        "backup.parquet",
        "part-s0of1-000000-copy.parquet",
        "part-s0of1-notes.parquet",
        // Named as a part of the shard, but not the one its writer was
        // committing (the next after every part its index lists).
        "part-s0of1-000007.parquet",
    ] {
        let stray = bad.join("series").join(name);
        std::fs::copy(&first, &stray).unwrap();
        assert_refused_everywhere(&grid, &good, &bad, name);
        assert!(stray.exists(), "{name} was deleted");
        std::fs::remove_file(&stray).unwrap();
    }
    assert_ok(&compare(&good, &bad));
    assert_ok(&report(&bad));
}

/// A copy of a part numbered as a part file of the sweep, but not the
/// next one its index would list, is no crash's leftover: a resume
/// refuses it and keeps it, as every other command does, instead of
/// deleting it as "written but not committed".
#[test]
fn a_numbered_copy_of_a_part_is_kept_and_refused_by_a_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 3);
    let parts_before = parts(&bad, "runs");
    assert_eq!(parts_before.len(), 3);
    let copy = bad.join("runs/part-s0of1-000009.parquet");
    std::fs::copy(&parts_before[1], &copy).unwrap();
    let o = run(&grid, &bad, &["--resume"]);
    assert_fails(
        &o,
        &[
            "part-s0of1-000009.parquet: not a part this sweep committed",
            "Move it out of the directory: a reader of runs/*.parquet would count its runs twice, and a sweep deletes only what it wrote, so report, --resume and --force stop while it is there",
        ],
    );
    assert!(!stderr(&o).contains("redone"), "{}", stderr(&o));
    assert!(copy.exists());
    assert_fails(
        &compare(&good, &bad),
        &["part-s0of1-000009.parquet: not a part this sweep committed"],
    );
    // A merge holds the directory, its own shard's lock with it: that lock
    // is not a writer committing the copy.
    assert_fails(
        &sweep(&["merge", &s(&bad), "--no-report"]),
        &["part-s0of1-000009.parquet: not a part this sweep committed"],
    );
    std::fs::remove_file(&copy).unwrap();
    assert_ok(&compare(&good, &bad));
}

/// A shard killed before a whole-grid run finished every run leaves a
/// manifest that says running; the report of the complete directory does
/// not say the sweep stopped without finishing.
#[test]
fn a_killed_shard_s_manifest_does_not_make_a_complete_sweep_partial() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 3);
    std::fs::remove_dir_all(&bad).unwrap();
    assert_ok(&run_shard(&grid, &s(&bad), "1/2", &[]));
    let shard_manifest = bad.join("manifest-s1of2.json");
    let text = std::fs::read_to_string(&shard_manifest).unwrap();
    std::fs::write(&shard_manifest, text.replace("\"complete\"", "\"running\"")).unwrap();
    assert_ok(&run(&grid, &bad, &["--resume"]));
    let o = report(&bad);
    assert_ok(&o);
    assert!(
        !stderr(&o).contains("stopped without finishing"),
        "{}",
        stderr(&o)
    );
    let md = std::fs::read_to_string(bad.join("analysis/index.md")).unwrap();
    assert!(!md.contains("Partial results"), "{md}");
    assert_ok(&compare(&good, &bad));
}

#[test]
fn a_flipped_byte_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 2);
    for sub in ["runs", "series"] {
        let part = parts(&bad, sub)[1].clone();
        let original = std::fs::read(&part).unwrap();
        let mut bytes = original.clone();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x01;
        std::fs::write(&part, &bytes).unwrap();
        let name = part.file_name().unwrap().to_str().unwrap().to_string();
        assert_fails(&compare(&good, &bad), &[&name, "SHA-256"]);
        assert_fails(&report(&bad), &[&name, "SHA-256"]);
        assert_fails(&run(&grid, &bad, &["--resume"]), &[&name, "SHA-256"]);
        std::fs::write(&part, &original).unwrap();
    }
    assert_ok(&compare(&good, &bad));
}

#[test]
fn a_deleted_or_truncated_series_part_is_noticed() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 2);
    let series = parts(&bad, "series")[0].clone();
    let bytes = std::fs::read(&series).unwrap();
    std::fs::write(&series, &bytes[..bytes.len() / 2]).unwrap();
    let name = series.file_name().unwrap().to_str().unwrap().to_string();
    assert_fails(&compare(&good, &bad), &[&name, "SHA-256"]);
    assert_fails(&report(&bad), &[&name]);
    std::fs::remove_file(&series).unwrap();
    assert_fails(&compare(&good, &bad), &[&name, "missing", "--resume"]);
    assert_fails(&report(&bad), &[&name, "missing"]);
    assert_fails(&sweep(&["merge", &s(&bad), "--no-report"]), &[&name]);
    // Resume redoes the runs of that part, and says so.
    let o = run(&grid, &bad, &["--resume"]);
    assert_ok(&o);
    assert_says(&stderr(&o), &[&name, "redone"]);
    assert_eq!(parts(&bad, "series").len(), parts(&bad, "runs").len());
    assert_ok(&compare(&good, &bad));
    assert_ok(&report(&bad));
}

/// A crash after a runs part's rename and before the index lists it: the
/// resume neither loses nor doubles those runs.
#[test]
fn a_crash_between_the_rename_and_the_index_update_redoes_the_part() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 3);
    let index_path = bad.join("parts-s0of1.json");
    let mut index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&index_path).unwrap()).unwrap();
    let entries = index["parts"].as_array_mut().unwrap();
    let last = entries.pop().unwrap();
    std::fs::write(&index_path, serde_json::to_string(&index).unwrap()).unwrap();
    // The manifest still says running, as after a kill.
    let manifest_path = bad.join("manifest.json");
    let manifest = std::fs::read_to_string(&manifest_path)
        .unwrap()
        .replace("\"complete\"", "\"running\"");
    std::fs::write(&manifest_path, manifest).unwrap();
    assert_fails(
        &compare(&good, &bad),
        &[
            last["name"].as_str().unwrap(),
            "the part being committed when its sweep stopped",
            "run the sweep again with --resume to remove it and redo them",
        ],
    );
    let o = run(&grid, &bad, &["--resume"]);
    assert_ok(&o);
    assert_says(
        &stderr(&o),
        &["not committed", "redone", "16 already done", "8 to run"],
    );
    assert_ok(&compare(&good, &bad));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    assert_eq!(m["ok"], 24);
    // An index cut short cannot vouch for its parts: said with the fix.
    let text = std::fs::read_to_string(&index_path).unwrap();
    std::fs::write(&index_path, &text[..text.len() / 2]).unwrap();
    for o in [compare(&good, &bad), run(&grid, &bad, &["--resume"])] {
        assert_fails(
            &o,
            &[
                "parts-s0of1.json: EOF while parsing",
                "the index of the shard's parts cannot be read (edited, or cut short by a full disk?), so its parts cannot be verified; restore it from a copy, or run the grid again with --force",
            ],
        );
    }
}

#[test]
fn equal_levels_spelled_differently_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid_as(
        tmp.path(),
        "grid.toml",
        &small_grid(1).replace(
            "[axes]\n",
            "[axes]\n\"svc_a.backoff_base_s\" = [0.02, 2, 2.0]\n",
        ),
    );
    let o = sweep(&["plan", &grid]);
    assert_fails(
        &o,
        &[
            "duplicate level",
            "level 2.0 appears twice (the same value as 2)",
        ],
    );
    let out = tmp.path().join("o");
    let o = run(&grid, &out, &[]);
    assert_fails(&o, &["duplicate level"]);
    assert!(!out.exists());
    // -0.0 is 0.0: two points the report would draw as one level.
    let zeros = write_grid_as(
        tmp.path(),
        "zeros.toml",
        &small_grid(1).replace("[axes]\n", "[axes]\n\"client.deadline_s\" = [0.0, -0.0]\n"),
    );
    assert_fails(
        &sweep(&["plan", &zeros]),
        &["level -0.0 appears twice (the same value as 0.0)"],
    );
    // A zip group's repeated level is the group's, named as in the file.
    let zipped = write_grid_as(
        tmp.path(),
        "zipped.toml",
        &small_grid(1)
            .replace("[0.2, 0.5]", "[0.5, 0.5]")
            .replace("[2, 1]", "[1, 1]"),
    );
    assert_fails(
        &sweep(&["plan", &zipped]),
        &["zipped.toml: zip[0]: duplicate level: level 0.5, 1 appears twice"],
    );
}

/// A merge into a directory stopped before it wrote its manifest (killed
/// while copying): readers and a resume name the merge to run again, not
/// a sweep's unfinished part; run again, it finishes the directory.
#[test]
fn a_merge_stopped_midway_is_named_and_finished_by_running_it_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, _) = two_sweeps(tmp.path(), 3);
    let (s0, s1, into) = (
        tmp.path().join("s0"),
        tmp.path().join("s1"),
        tmp.path().join("into"),
    );
    assert_ok(&run_shard(&grid, &s(&s0), "0/2", &["--batch-runs", "4"]));
    assert_ok(&run_shard(&grid, &s(&s1), "1/2", &["--batch-runs", "4"]));
    let merge = [
        "merge",
        &s(&s0),
        &s(&s1),
        "--into",
        &s(&into),
        "--no-report",
    ];
    assert_ok(&sweep(&merge));
    assert!(!into.join("merging.json").exists());
    // As a kill leaves it midway: the marker, no manifest, one shard's
    // index and some of its parts not copied yet.
    let command = format!("sweep merge {} {} --into {}", s(&s0), s(&s1), s(&into));
    let marker = serde_json::json!({ "command": command }).to_string();
    std::fs::write(into.join("merging.json"), marker).unwrap();
    std::fs::remove_file(into.join("manifest.json")).unwrap();
    std::fs::remove_file(into.join("parts-s1of2.json")).unwrap();
    std::fs::remove_file(into.join("runs/part-s1of2-000001.parquet")).unwrap();
    let said = format!(
        "a merge into it stopped before it finished (killed, or its machine went down), so it holds part of its sources' results; run the merge again to finish it: {command}"
    );
    assert_fails(&compare(&good, &into), &[&said]);
    assert_fails(&report(&into), &[&said]);
    assert_fails(
        &run(&grid, &into, &["--resume"]),
        &[&said, "(or --force to start this grid over)"],
    );
    assert_ok(&sweep(&merge));
    assert!(!into.join("merging.json").exists());
    assert_ok(&compare(&good, &into));
}

/// A runs part its index lists, deleted from the shards' shared
/// directory, is named by a merge with its shard's index, as by every
/// other command, not counted as runs missing.
#[test]
fn a_merge_names_a_missing_part() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid_as(tmp.path(), "grid.toml", &small_grid(2));
    let out = tmp.path().join("o");
    for k in ["0/2", "1/2"] {
        assert_ok(&run_shard(&grid, &s(&out), k, &["--batch-runs", "4"]));
    }
    let gone = out.join("runs/part-s1of2-000000.parquet");
    std::fs::remove_file(&gone).unwrap();
    assert_fails(
        &sweep(&["merge", &s(&out), "--no-report"]),
        &[&format!(
            "{} is listed in {} but missing",
            s(&gone),
            s(&out.join("parts-s1of2.json"))
        )],
    );
}

#[test]
fn merge_checks_before_it_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid_a = write_grid_as(dir, "a.toml", &small_grid(1));
    let grid_b = write_grid_as(
        dir,
        "b.toml",
        &small_grid(1).replace("first = 1", "first = 5"),
    );
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    assert_ok(&run(&grid_a, &a, &[]));
    assert_ok(&run(&grid_b, &b, &[]));
    // The results and their bookkeeping (a lock file says who last held it).
    let snapshot = |d: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        for sub in ["", "runs", "series"] {
            let is_lock = |p: &PathBuf| p.extension().is_some_and(|e| e == "lock");
            for p in (parts(d, sub).into_iter()).filter(|p| p.is_file() && !is_lock(p)) {
                let bytes = std::fs::read(&p).unwrap();
                files.push((p, bytes));
            }
        }
        files
    };
    let before = snapshot(&a);
    let o = sweep(&["merge", &s(&a), &s(&b), "--into", &s(&c), "--no-report"]);
    assert_fails(
        &o,
        &[
            "nothing was merged; what changed: seeds.first: 1 -> 5",
            &s(&b),
        ],
    );
    assert!(!c.exists(), "merge wrote into {}", c.display());
    // Files that differ in a comment alone are said to.
    let grid_d = write_grid_as(dir, "d.toml", &format!("# a comment\n{}", small_grid(1)));
    let d = dir.join("d");
    assert_ok(&run(&grid_d, &d, &[]));
    let o = sweep(&["merge", &s(&a), &s(&d), "--into", &s(&c), "--no-report"]);
    assert_fails(
        &o,
        &["nothing was merged; the two grid files differ only in comments or layout"],
    );
    let o = sweep(&["merge", &s(&a), &s(&b), "--into", &s(&a), "--no-report"]);
    assert_fails(&o, &["nothing was merged"]);
    assert_eq!(
        snapshot(&a),
        before,
        "a failed merge changed {}",
        a.display()
    );
    // A's directory is still A's: B's resume into it is refused.
    let o = run(&grid_b, &a, &["--resume"]);
    assert_fails(
        &o,
        &[
            "holds results of an earlier version of grid `small`, and the grid changed since: seeds.first: 1 -> 5",
        ],
    );
    assert_ok(&run(&grid_a, &a, &["--resume"]));

    // Two whole runs of one grid: their parts have the same names.
    let a2 = dir.join("a2");
    assert_ok(&run(&grid_a, &a2, &[]));
    let o = sweep(&["merge", &s(&a), &s(&a2), "--into", &s(&c), "--no-report"]);
    assert_fails(&o, &["different files of one name", "nothing was merged"]);
    assert!(!c.exists());
    // Shards in separate directories merge.
    let (s0, s1) = (dir.join("s0"), dir.join("s1"));
    assert_ok(&run(&grid_a, &s0, &["--shard", "0/2"]));
    assert_ok(&run(&grid_a, &s1, &["--shard", "1/2"]));
    assert_ok(&sweep(&[
        "merge",
        &s(&s0),
        &s(&s1),
        "--into",
        &s(&c),
        "--no-report",
    ]));
    assert_ok(&compare(&a, &c));
    // And again: the same files are no clash.
    assert_ok(&sweep(&[
        "merge",
        &s(&s0),
        &s(&s1),
        "--into",
        &s(&c),
        "--no-report",
    ]));
    assert_ok(&report(&c));

    // Into a directory holding a shard of another split: its runs and the
    // split's are the same runs, refused before a file is copied.
    let t = dir.join("t");
    assert_ok(&run(&grid_a, &t, &["--shard", "0/3"]));
    let before = snapshot(&t);
    let o = sweep(&["merge", &s(&s0), &s(&s1), "--into", &s(&t), "--no-report"]);
    assert_fails(&o, &["is in", "part-s0of3-", "nothing was merged"]);
    assert_eq!(
        snapshot(&t),
        before,
        "a refused merge changed {}",
        t.display()
    );

    // A part there that no index lists (a crash before its index entry)
    // is refused as such, before a file is copied.
    let u = dir.join("u");
    std::fs::create_dir_all(u.join("runs")).unwrap();
    let stray = parts(&s0, "runs")[0].clone();
    std::fs::copy(&stray, u.join("runs/part-s0of3-000009.parquet")).unwrap();
    let o = sweep(&["merge", &s(&s0), &s(&s1), "--into", &s(&u), "--no-report"]);
    assert_fails(
        &o,
        &["part-s0of3-000009.parquet: not a part this sweep committed"],
    );
    assert_eq!(
        parts(&u, "runs").len(),
        1,
        "a refused merge copied into {}",
        u.display()
    );
}

/// Eight axes of `levels` levels each.
fn big_grid(levels: usize, seeds: &str) -> String {
    let values: Vec<String> = (1..=levels)
        .map(|i| format!("{}", i as f64 / 1000.0))
        .collect();
    let list = values.join(", ");
    let mut text = format!("name = \"big\"\nscenario = \"ch37\"\nseeds = {seeds}\n[axes]\n");
    for path in [
        "client.backoff_base_s",
        "gateway.backoff_base_s",
        "svc_a.backoff_base_s",
        "gateway.reject_latency_s",
        "svc_a.reject_latency_s",
        "svc_b.reject_latency_s",
        "gateway.rate_limit_per_s",
        "svc_a.rate_limit_per_s",
    ] {
        text.push_str(&format!("\"{path}\" = [{list}]\n"));
    }
    text
}

#[test]
fn grids_too_large_are_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    // 256^8 points: wraps to 0 in u64.
    let grid = write_grid_as(tmp.path(), "g.toml", &big_grid(256, "[1, 2]"));
    let started = std::time::Instant::now();
    let out = s(&tmp.path().join("o"));
    for args in [vec!["plan", &grid], vec!["run", &grid, "--out", &out]] {
        assert_fails(
            &sweep(&args),
            &["more than 2^64", "100000000 runs a grid may have"],
        );
    }
    assert!(!tmp.path().join("o").exists());
    // 10^12 runs, no overflow: refused, not validated point by point.
    let grid = write_grid_as(
        tmp.path(),
        "g.toml",
        &big_grid(10, "{ first = 1, count = 10000 }"),
    );
    let o = sweep(&["plan", &grid]);
    assert_fails(
        &o,
        &[
            "100000000 points x 10000 seeds = 1000000000000 runs",
            "runs a grid may have",
        ],
    );
    let grid = write_grid_as(
        tmp.path(),
        "g.toml",
        &small_grid(1).replace(
            "{ first = 1, count = 1 }",
            "{ first = 1, count = 1000000000000 }",
        ),
    );
    let o = sweep(&["plan", &grid]);
    assert_fails(
        &o,
        &["seeds", "count = 1000000000000", "runs a grid may have"],
    );
    let grid = write_grid_as(
        tmp.path(),
        "g.toml",
        &small_grid(1).replace(
            "{ first = 1, count = 1 }",
            "{ first = 18446744073709551616, count = 2 }",
        ),
    );
    assert_fails(
        &sweep(&["plan", &grid]),
        &["line 3", "integer `18446744073709551616`"],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn plan_validates_a_sample_of_a_large_grid_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    // 6^8 = 1.7 million points.
    let grid = write_grid_as(tmp.path(), "g.toml", &big_grid(6, "[1]"));
    let started = std::time::Instant::now();
    let o = sweep(&["plan", &grid, "--calibrate", "1"]);
    assert_ok(&o);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains("1679616 points x 1 seed = 1679616 runs"),
        "{out}"
    );
    assert!(out.contains("500 of the 1679616 points"), "{out}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// A point near the 20-million-user cap: gigabytes for one run.
fn heavy_grid() -> String {
    r#"name = "heavy"
scenario = "ch37"
seeds = [1]
[axes]
strategy = ["naive", "protected"]
"client.rate_per_s" = [400, 330000]
"#
    .to_string()
}

#[test]
fn a_run_larger_than_its_memory_budget_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid_as(tmp.path(), "g.toml", &heavy_grid());
    let out = tmp.path().join("o");
    let o = run(&grid, &out, &["--max-run-memory", "1G"]);
    assert_fails(
        &o,
        &[
            "point 1 (strategy=\"naive\" client.rate_per_s=330000) needs about 5.1 GB",
            "more than the 1.0 GB a run may use (--max-run-memory)",
        ],
    );
    assert!(!out.exists());
    // The default budget: half the machine's memory over the workers.
    let o = sweep(&["run", &grid, "--out", &s(&out), "--jobs", "1024"]);
    assert_fails(&o, &["needs about 5.1 GB", "divided by 1024 worker(s)"]);
    assert!(!out.exists());
    // Sub-second series of a long run: 3 tiers x 10^6 s x 100 bins x 16 B,
    // for 5 users.
    let binned = "name = \"binned\"\nscenario = \"ch37\"\nseeds = [1]\n[set]\nhorizon_s = 1000000\n\"client.duration_s\" = 1\n\"client.rate_per_s\" = 5\n\"svc_b.slow.start_s\" = 0.5\nseries_bin_s = 0.01\n";
    let binned = write_grid_as(tmp.path(), "binned.toml", binned);
    let o = run(&binned, &out, &["--max-run-memory", "1G"]);
    assert_fails(
        &o,
        &[
            "point 0 needs about 5.0 GB for one run, more than the 1.0 GB a run may use (--max-run-memory); use fewer --jobs, a larger --max-run-memory, or a smaller run at that point (fewer users, a shorter horizon_s, a coarser series_bin_s)",
        ],
    );
    assert!(!out.exists());
    let o = sweep(&["plan", &grid, "--calibrate", "1"]);
    assert_ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("largest run: about 5.1 GB of memory (point #1)"),
        "{text}"
    );
    let o = run(&grid, &out, &["--max-run-memory", "lots"]);
    assert_fails(&o, &["expected a size such as 2G"]);
}

#[test]
fn parts_without_an_index_are_refused_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 2);
    std::fs::remove_file(bad.join("parts-s0of1.json")).unwrap();
    let before = parts(&bad, "runs");
    for o in [
        compare(&good, &bad),
        report(&bad),
        run(&grid, &bad, &["--resume"]),
    ] {
        assert_fails(&o, &["no parts-*.json index", "--force"]);
    }
    assert_eq!(parts(&bad, "runs"), before);
}

/// A shard of one split whose commit was cut short after its series part
/// (a time limit's SIGKILL), then the grid run again as another split into
/// the same directory: the merge removes that series part, whose runs the
/// other split redid (readers of `series/*.parquet` would count their
/// seconds twice), and names the split that wrote what it merged.
#[test]
fn a_merge_removes_what_another_split_s_cut_short_commit_left() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(2));
    let out = tmp.path().join("w");
    let out_arg = s(&out);
    let shard = |k: &str, extra: &[&str]| run_shard(&grid, &out_arg, k, extra);
    let crashed = shard(
        "0/2",
        &["--batch-runs", "2", "--inject-crash", "series-renamed:2"],
    );
    assert!(!crashed.status.success(), "the injected crash stops it");
    // As if an older build had run the abandoned split.
    let path = out.join("manifest-s0of2.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["tool"] = "sweep 0.0.9".into();
    std::fs::write(&path, m.to_string()).unwrap();
    for k in ["0/3", "1/3", "2/3"] {
        assert_ok(&shard(k, &[]));
    }
    let merge = sweep(&["merge", &out_arg, "--no-report"]);
    assert_ok(&merge);
    assert_says(
        &stderr(&merge),
        &["removed 1 incomplete file left by an interrupted run of shard 0/2"],
    );
    assert_eq!((rows(&out, "runs"), rows(&out, "series")), (16, 16 * 5));
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let split: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest-s0of3.json")).unwrap())
            .unwrap();
    assert_eq!(merged["tool"], split["tool"]);
    assert_eq!(merged["command"][1], "merge", "{merged}");
}

/// A shard's commit cut short leaves a series part without its runs part
/// (after the series part's rename), or a runs part its index does not
/// list (after the runs part's); a whole-grid run in the directory redoes
/// those runs and removes what the commit left, as that shard's resume
/// would (no writer holds the shard), so that each run is in `runs/` once
/// and its seconds in `series/` once.
#[test]
fn a_whole_grid_run_removes_what_a_shard_s_cut_short_commit_left() {
    for (step, said) in [
        (
            "series-renamed:2",
            "removed 1 incomplete file left by an interrupted run of shard 1/2",
        ),
        ("runs-renamed:2", "shard 1/2: "),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let grid = write_grid(tmp.path(), &small_grid(2));
        let out = tmp.path().join("w");
        let out_arg = s(&out);
        let shard = |k: &str, extra: &[&str]| run_shard(&grid, &out_arg, k, extra);
        assert_ok(&shard("0/2", &[]));
        let crashed = shard("1/2", &["--batch-runs", "2", "--inject-crash", step]);
        assert!(
            !crashed.status.success(),
            "{step}: the injected crash stops it"
        );
        let o = run(&grid, &out, &[]);
        assert_ok(&o);
        assert_says(&stderr(&o), &[said]);
        // 16 runs of 5 s, each once.
        assert_eq!(
            (rows(&out, "runs"), rows(&out, "series")),
            (16, 16 * 5),
            "{step}"
        );
        assert_ok(&report(&out));
    }
}

/// `compare` refuses what a report refuses, naming the files: a run in two
/// parts (a shard's files copied beside the whole run), and shards of two
/// grids in one directory (their tables have other columns).
#[test]
fn compare_names_the_files_of_a_run_written_twice_and_of_two_grids() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 2);
    let shard = tmp.path().join("shard");
    assert_ok(&run(&grid, &shard, &["--shard", "0/2"]));
    for sub in ["runs", "series"] {
        for p in parts(&shard, sub) {
            std::fs::copy(&p, bad.join(sub).join(p.file_name().unwrap())).unwrap();
        }
    }
    for name in ["parts-s0of2.json", "manifest-s0of2.json"] {
        std::fs::copy(shard.join(name), bad.join(name)).unwrap();
    }
    assert_fails(
        &compare(&good, &bad),
        &[
            "is written twice: in",
            "part-s0of1-000000.parquet and in",
            "part-s0of2-000000.parquet",
        ],
    );
    let other = tmp.path().join("other");
    assert_ok(&run(
        &grid,
        &other,
        &["--shard", "1/2", "--set", "svc_b.queue_cap=7"],
    ));
    let mixed = tmp.path().join("mixed");
    for from in [&shard, &other] {
        for sub in ["", "runs", "series"] {
            std::fs::create_dir_all(mixed.join(sub)).unwrap();
            for p in parts(from, sub).into_iter().filter(|p| p.is_file()) {
                std::fs::copy(&p, mixed.join(sub).join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    assert_fails(
        &compare(&mixed, &good),
        &[
            "holds the results of two grids",
            "manifest-s0of2.json and",
            "manifest-s1of2.json: another grid, or other --set or --axis flags",
        ],
    );
}

/// A part removed with its index entry (as a shard redone with `--force`
/// in a merged directory leaves it): the report's counts are the runs
/// present, not the manifest's, beside its "Partial results" line.
#[test]
fn the_report_counts_the_runs_present_not_the_manifest_s() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, _, bad) = two_sweeps(tmp.path(), 3);
    let index_path = bad.join("parts-s0of1.json");
    let mut index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&index_path).unwrap()).unwrap();
    let last = index["parts"].as_array_mut().unwrap().pop().unwrap();
    std::fs::write(&index_path, serde_json::to_string(&index).unwrap()).unwrap();
    let name = last["name"].as_str().unwrap();
    let removed = last["runs"]["rows"].as_u64().unwrap();
    for sub in ["runs", "series"] {
        std::fs::remove_file(bad.join(sub).join(name)).unwrap();
    }
    assert_ok(&report(&bad));
    let md = std::fs::read_to_string(bad.join("analysis/index.md")).unwrap();
    let present = 24 - removed;
    assert!(
        md.contains(&format!(
            "- runs: 24 planned, {present} ok, 0 failed; ? events"
        )) && md.contains(&format!(
            "**Partial results: {present} of the 24 planned runs.**"
        )),
        "{}",
        &md[..md.len().min(900)]
    );
}

/// Every file and folder under `dir`, hidden ones too, relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.symlink_metadata().unwrap().is_dir() {
                dirs.push(p.clone());
            }
            all.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    all.sort();
    all
}

/// How a file of the sweep's that is a symbolic link is refused.
fn refused_link(path: &Path, target: &Path) -> String {
    format!(
        "{}: is a symbolic link (to {}): a sweep writes only inside its output directory, never through a link; remove the link",
        path.display(),
        target.display()
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// A lock file is never opened through a symbolic link: its holder's name
/// would be written into the link's target, outside the directory (a link
/// to nothing would create its target).
#[test]
fn a_lock_file_that_is_a_symbolic_link_is_refused_and_its_target_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("out");
    assert_ok(&run(&grid, &out, &[]));
    let target = tmp.path().join("precious.txt");
    for name in [".sweep.lock", ".sweep-s0of1.lock", ".sweep-report.lock"] {
        let lock = out.join(name);
        let _ = std::fs::remove_file(&lock);
        std::os::unix::fs::symlink(&target, &lock).unwrap();
        for target_there in [true, false] {
            if target_there {
                std::fs::write(&target, "precious").unwrap();
            } else {
                std::fs::remove_file(&target).unwrap();
            }
            let o = if name == ".sweep-report.lock" {
                report(&out)
            } else {
                run(&grid, &out, &["--resume"])
            };
            assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
            assert_says(&stderr(&o), &[&refused_link(&lock, &target)]);
            if target_there {
                assert_eq!(read(&target), "precious", "{name}'s target was written");
            } else {
                assert!(!target.exists(), "{name}'s target was created");
            }
        }
        std::fs::remove_file(&lock).unwrap();
    }
    // Without the links, the sweep and its report go on, their locks files.
    assert_ok(&run(&grid, &out, &["--resume"]));
    assert_ok(&report(&out));
    for name in [".sweep.lock", ".sweep-s0of1.lock", ".sweep-report.lock"] {
        assert!(out.join(name).symlink_metadata().unwrap().is_file());
    }
}

/// A merge reads its sources (outside its output directory) and creates
/// no file there: no lock file either (a source's own, where there is
/// one, it uses).
#[test]
fn a_merge_creates_no_file_in_its_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, _) = two_sweeps(tmp.path(), 2);
    let sources: Vec<PathBuf> = ["s0", "s1"].map(|d| tmp.path().join(d)).into();
    for (k, dir) in sources.iter().enumerate() {
        assert_ok(&run_shard(&grid, &s(dir), &format!("{k}/2"), &[]));
    }
    // Copied without their hidden files (or never run there): no lock file.
    for dir in &sources {
        for lock in [".sweep.lock", &format!(".sweep-s{}of2.lock", 0)] {
            let _ = std::fs::remove_file(dir.join(lock));
        }
        let _ = std::fs::remove_file(dir.join(".sweep-s1of2.lock"));
    }
    // One source keeps its directory lock, which the merge may hold.
    std::fs::write(sources[1].join(".sweep.lock"), "").unwrap();
    let before: Vec<Vec<PathBuf>> = sources.iter().map(|d| files_under(d)).collect();
    let into = tmp.path().join("into");
    assert_ok(&sweep(&[
        "merge",
        &s(&sources[0]),
        &s(&sources[1]),
        "--into",
        &s(&into),
        "--no-report",
    ]));
    let after: Vec<Vec<PathBuf>> = sources.iter().map(|d| files_under(d)).collect();
    assert_eq!(after, before, "the merge created files in its sources");
    assert_ok(&compare(&good, &into));
}

/// `sweep diff` writes its report in B's `analysis/` as B's report is
/// written there: never through a link (a linked `analysis/` or
/// `diff.md` would put it outside B).
#[test]
fn diff_writes_its_report_in_b_never_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, a, b) = two_sweeps(tmp.path(), 2);
    let diff = || sweep(&["diff", &s(&a), &s(&b)]);
    let analysis = b.join("analysis");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &analysis).unwrap();
    let o = diff();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &[&format!(
            "{} is a symbolic link (to {}): a sweep writes and deletes only inside its output directory, never through a link; make it a plain directory, or move the whole output directory to the other disk",
            analysis.display(),
            elsewhere.display()
        )],
    );
    assert!(
        files_under(&elsewhere).is_empty(),
        "written through the link"
    );
    std::fs::remove_file(&analysis).unwrap();
    std::fs::create_dir(&analysis).unwrap();
    let md = analysis.join("diff.md");
    let precious = tmp.path().join("precious.md");
    std::fs::write(&precious, "precious").unwrap();
    std::os::unix::fs::symlink(&precious, &md).unwrap();
    let o = diff();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &[&format!("cannot write {}", refused_link(&md, &precious))],
    );
    assert_eq!(read(&precious), "precious");
    // Its own file, once the link is gone: written whole, nothing beside.
    std::fs::remove_file(&md).unwrap();
    assert_ok(&diff());
    assert!(md.symlink_metadata().unwrap().is_file());
    assert!(read(&md).starts_with(&format!("# {} against {}\n", b.display(), a.display())));
    assert_eq!(files_under(&analysis), [PathBuf::from("diff.md")]);
}

/// `sweep slurm` writes its script into `--out`'s `slurm/` only, never
/// through a link of the script's name.
#[test]
fn slurm_writes_its_script_never_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("out");
    let slurm = || sweep(&["slurm", &grid, "--tasks", "2", "--out", &s(&out)]);
    assert_ok(&slurm());
    let script = out.join("slurm/sweep.sbatch");
    let precious = tmp.path().join("precious.sh");
    std::fs::write(&precious, "precious").unwrap();
    std::fs::remove_file(&script).unwrap();
    std::os::unix::fs::symlink(&precious, &script).unwrap();
    let o = slurm();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&stderr(&o), &[&refused_link(&script, &precious)]);
    assert_eq!(read(&precious), "precious");
    std::fs::remove_file(&script).unwrap();
    assert_ok(&slurm());
    assert!(read(&script).starts_with("#!/bin/bash\n"));
}

/// `--force` deletes the files the sweep's records say it wrote, not a
/// file by its name: a copy named as a part of the sweep, which a resume
/// refuses as not committed, is refused the same, and nothing is deleted.
/// What a crash left of the sweep's own, and parts whose index is gone
/// but that say they are this sweep's, still go.
#[test]
fn force_deletes_only_the_parts_the_sweep_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, good, bad) = two_sweeps(tmp.path(), 2);
    let refused = |stray: &Path| {
        format!(
            "{}: not a part this sweep committed (no parts-*.json lists it): a copy or a file from elsewhere? Move it out of the directory",
            stray.display()
        )
    };
    for sub in ["runs", "series"] {
        let stray = bad.join(sub).join("part-s0of1-000007.parquet");
        std::fs::copy(&parts(&good, sub)[0], &stray).unwrap();
        let before = files_under(&bad);
        for o in [
            run(&grid, &bad, &["--resume"]),
            run(&grid, &bad, &["--force"]),
        ] {
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert_says(&stderr(&o), &[&refused(&stray)]);
            assert_eq!(files_under(&bad), before, "a file was deleted");
        }
        std::fs::remove_file(&stray).unwrap();
    }
    // A shard's --force, of its own parts' names.
    let shards = tmp.path().join("shards");
    assert_ok(&run_shard(&grid, &s(&shards), "0/2", &[]));
    let stray = shards.join("runs/part-s0of2-000007.parquet");
    std::fs::copy(&parts(&good, "runs")[0], &stray).unwrap();
    let o = run_shard(&grid, &s(&shards), "0/2", &["--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&stderr(&o), &[&refused(&stray)]);
    assert!(stray.exists());
    // A crash between a part's rename and its index: that part is the
    // sweep's own.
    let crashed = tmp.path().join("crashed");
    let o = run(&grid, &crashed, &["--inject-crash", "runs-renamed:2"]);
    assert!(!o.status.success(), "the injected crash stops it");
    assert_ok(&run(&grid, &crashed, &["--force"]));
    assert_ok(&compare(&good, &crashed));
    // Its index deleted or cut short ("run the grid again with --force"):
    // the parts that say they are this sweep's shard's.
    let index = bad.join("parts-s0of1.json");
    std::fs::write(&index, &read(&index)[..10]).unwrap();
    assert_ok(&run(&grid, &bad, &["--force"]));
    std::fs::remove_file(&index).unwrap();
    assert_ok(&run(&grid, &bad, &["--force"]));
    assert_ok(&compare(&good, &bad));
    // But not a part of another sweep, there in their place.
    std::fs::remove_file(&index).unwrap();
    let other = write_grid_as(tmp.path(), "other.toml", &small_grid(1));
    let elsewhere = tmp.path().join("elsewhere");
    assert_ok(&run(&other, &elsewhere, &[]));
    let stray = bad.join("runs/part-s0of1-000009.parquet");
    std::fs::copy(&parts(&elsewhere, "runs")[0], &stray).unwrap();
    let o = run(&grid, &bad, &["--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(&stderr(&o), &[&refused(&stray)]);
    assert!(stray.exists());
}

/// `grid` run into `out` and stopped by a crash after its second series
/// part, `batch` runs a part: an incomplete sweep, its manifest running.
fn interrupted(grid: &str, out: &Path, batch: &str) {
    let o = sweep(&[
        "run",
        grid,
        "--out",
        &s(out),
        "--jobs",
        "1",
        "--batch-runs",
        batch,
        "--inject-crash",
        "series-written:2",
        "--no-report",
    ]);
    assert!(!o.status.success(), "the injected crash stops it");
}

/// A sweep interrupted (here killed in its second part's commit) holds
/// fewer runs than planned: `diff` compares the runs both hold, as the
/// report of a partial sweep does, and says first that it is incomplete
/// and how to finish it, not that it holds fewer levels or other seeds.
#[test]
fn diff_of_an_incomplete_sweep_compares_the_runs_it_holds_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, full, _) = two_sweeps(tmp.path(), 2);
    // 3 runs (a point and half of the next) and 4 (two whole points).
    for (batch, held) in [("3", 3), ("4", 4)] {
        let part = tmp.path().join(format!("part{batch}"));
        interrupted(&grid, &part, batch);
        let note = format!(
            "{} is incomplete: {held} of the 16 planned runs (its manifest says running). Compared: the {held} runs both sweeps hold; {} runs of {} that it does not hold yet are left out. `sweep run {grid} --out {} --resume` runs the rest.",
            part.display(),
            16 - held,
            full.display(),
            part.display(),
        );
        for (a, b) in [(&full, &part), (&part, &full)] {
            let o = sweep(&["diff", &s(a), &s(b)]);
            assert_ok(&o);
            let out = stdout(&o);
            assert_says(&out, &[&note, "\n\n2 points; 0 changed outcome"]);
            assert!(!out.contains("levels of its axes"), "{out}");
            assert_says(&read(&b.join("analysis/diff.md")), &[&note]);
        }
    }
}

/// An incomplete sweep pairs by the seeds its grid plans, not the ones it
/// has run so far: against a sweep of other seeds it is refused as a
/// complete one is.
#[test]
fn diff_of_an_incomplete_sweep_pairs_by_the_seeds_it_plans() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, _, _) = two_sweeps(tmp.path(), 2);
    let three = write_grid_as(tmp.path(), "three.toml", &small_grid(3));
    let full3 = tmp.path().join("three");
    assert_ok(&run(&three, &full3, &[]));
    let part = tmp.path().join("part");
    interrupted(&grid, &part, "3");
    let refused = format!(
        "{x} and {y} hold the same points but not the same seeds (diff pairs the runs of a point by seed): {x} has seeds 1-3, {y} has 1, 2 (its grid's plan); run both with the same seeds",
        x = full3.display(),
        y = part.display()
    );
    assert_fails(&sweep(&["diff", &s(&full3), &s(&part)]), &[&refused]);
}

/// Two complete sweeps whose points hold other seeds: the seeds said are
/// each sweep's, and where both lists read the same (every seed held at
/// some point), those of the point where they differ, named.
#[test]
fn diff_names_the_seeds_that_differ_where_they_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let (grid, a, b) = two_sweeps(tmp.path(), 2);
    let three = write_grid_as(tmp.path(), "three.toml", &small_grid(3));
    let c = tmp.path().join("three");
    assert_ok(&run(&three, &c, &[]));
    let seeds = |x: &Path, y: &Path, sx: &str, sy: &str| {
        format!(
            "{x} and {y} hold the same points but not the same seeds (diff pairs the runs of a point by seed): {x} has seeds {sx}, {y} has {sy}; run both with the same seeds",
            x = x.display(),
            y = y.display()
        )
    };
    assert_fails(
        &sweep(&["diff", &s(&a), &s(&c)]),
        &[&seeds(&a, &c, "1, 2", "1-3")],
    );
    // B without its first part (runs 0 to 2: the first point, and the
    // second's first seed), its manifest planning what is left: complete.
    std::fs::remove_dir_all(&b).unwrap();
    assert_ok(&sweep(&[
        "run",
        &grid,
        "--out",
        &s(&b),
        "--jobs",
        "1",
        "--batch-runs",
        "3",
        "--no-report",
    ]));
    let index_path = b.join("parts-s0of1.json");
    let mut index: serde_json::Value = serde_json::from_str(&read(&index_path)).unwrap();
    let first = index["parts"].as_array_mut().unwrap().remove(0);
    std::fs::write(&index_path, index.to_string()).unwrap();
    for sub in ["runs", "series"] {
        std::fs::remove_file(b.join(sub).join(first["name"].as_str().unwrap())).unwrap();
    }
    let manifest_path = b.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_str(&read(&manifest_path)).unwrap();
    (m["planned"], m["ok"]) = (13.into(), 13.into());
    std::fs::write(&manifest_path, m.to_string()).unwrap();
    let point = "strategy=naive svc_b.queue_cap=16 svc_a.attempt_timeout_s=0.5 svc_a.max_retries=1";
    assert_fails(
        &sweep(&["diff", &s(&a), &s(&b)]),
        &[&seeds(&a, &b, &format!("1, 2 at {point}"), "2")],
    );
}
