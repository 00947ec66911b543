//! End-to-end tests of the commands around a sweep: the overrides of
//! `slurm` and `refine`, `params`, `plan`'s estimate, `diff`, and what the
//! output tables say about their columns.

mod common;

use common::*;

#[test]
fn slurm_tasks_run_the_grid_with_the_command_line_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("o").display().to_string();
    let script = slurm_script(&[
        &grid,
        "--tasks",
        "2",
        "--out",
        &out,
        "--set",
        "svc_b.queue_cap=8",
        "--axis",
        "strategy=naive,deadline",
    ]);
    assert!(
        script.contains(" run ")
            && script.contains("--set 'svc_b.queue_cap=8' --axis 'strategy=naive,deadline' --out"),
        "{script}"
    );
    // A bad override is refused before the script is written, naming it.
    let o = sweep(&[
        "slurm",
        &grid,
        "--tasks",
        "2",
        "--set",
        "svc_b.queue_cap=-3",
    ]);
    assert_fails(&o, &["--set svc_b.queue_cap=-3", "must be >= 0"]);
    // Into another grid's results, or a directory that is not a sweep's:
    // refused before the script is written there (every task would fail).
    let other = write_grid_as(
        tmp.path(),
        "other.toml",
        &small_grid(1).replace("name = \"small\"", "name = \"other\""),
    );
    let taken = tmp.path().join("taken").display().to_string();
    assert_ok(&sweep(&[
        "run",
        &other,
        "--out",
        &taken,
        "-q",
        "--no-report",
    ]));
    let o = sweep(&["slurm", &grid, "--tasks", "2", "--out", &taken]);
    assert_fails(&o, &["holds results of another grid"]);
    assert!(!tmp.path().join("taken/slurm").exists());
    let mine = tmp.path().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "mine").unwrap();
    let o = sweep(&[
        "slurm",
        &grid,
        "--tasks",
        "2",
        "--out",
        &mine.display().to_string(),
    ]);
    assert_fails(&o, &["is not a sweep's output directory"]);
    assert!(!mine.join("slurm").exists());
}

/// A bisection whose first step stops at one end (its runs failed) still
/// shows the other end's estimate, and names every end that stopped it.
#[test]
fn refine_shows_both_ends_of_a_slice_stopped_at_one() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"name = "me"
scenario = "ch37"
seeds = [1, 2]
[set]
strategy = "naive"
"client.duration_s" = 14
horizon_s = 16
"svc_b.slow.start_s" = 2
"svc_b.slow.duration_s" = 3
[axes]
max_events = [2000, 10000000]
"#;
    let table = |text: &str, name: &str| {
        let grid = write_grid(tmp.path(), text);
        let out = tmp.path().join(name).display().to_string();
        let args = [
            "refine",
            &grid,
            "--axis",
            "max_events",
            "--precision",
            "1000",
        ];
        let o = sweep(&[&args[..], &["--out", &out, "--no-report"]].concat());
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        std::fs::read_to_string(std::path::Path::new(&out).join("analysis/boundary.md")).unwrap()
    };
    let md = table(text, "one");
    assert!(
        md.contains("| 2000 | - | 10000000 | 1.00 [0.34, 1.00] | none: 2 of 2 runs failed at max_events = 2000 |"),
        "{md}"
    );
    // Both ends without a verdict: both named.
    let md = table(&text.replace("\"svc_b.slow.duration_s\" = 3\n", ""), "both");
    assert!(
        md.contains("| 2000 | - | 10000000 | - | none: 2 of 2 runs failed at max_events = 2000; 2 of 2 runs at max_events = 10000000 cannot show recovery"),
        "{md}"
    );
}

#[test]
fn refine_applies_set_overrides() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        r#"name = "tip"
scenario = "ch37"
seeds = { first = 1, count = 2 }
[set]
"client.duration_s" = 14
horizon_s = 16
"svc_b.slow.start_s" = 2
[axes]
strategy = ["naive", "protected"]
"svc_b.slow.duration_s" = [0.5, 6]
"#,
    );
    let out = tmp.path().join("o");
    let refine = |set: &str| {
        sweep(&[
            "refine",
            &grid,
            "--axis",
            "svc_b.slow.duration_s",
            "--precision",
            "3",
            "--set",
            set,
            "--out",
            &out.display().to_string(),
            "--no-report",
        ])
    };
    assert_fails(
        &refine("svc_b.queue_cap=-3"),
        &["--set svc_b.queue_cap=-3", "must be >= 0"],
    );
    // A --set of the bisected axis replaces it: said as such.
    assert_fails(
        &refine("svc_b.slow.0.duration_s=3"),
        &[
            "--axis `svc_b.slow.duration_s`: `--set svc_b.slow.0.duration_s=3` fixes it to one value (a --set replaces the grid's axis); leave the --set out to bisect it",
        ],
    );
    // Every problem of the flags at once, each with its value.
    let o = sweep(&[
        "refine",
        &grid,
        "--axis",
        "strategy",
        "--precision",
        "nan",
        "--threshold",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: refine:\n  --axis `strategy`: not numeric, so there is no value between two levels to try\n  \
         --threshold 2: must be in (0, 1), the P(not recovered) whose crossing is searched\n  \
         --precision NaN: must be a positive number, the bracket's width at which the bisection stops\n"
    );
    // A grid's problems do not hide the flags' own.
    let o = sweep(&[
        "refine",
        &grid,
        "--set",
        "svc_b.queue_cap=-3",
        "--axis",
        "svc_b.slow.duration_s",
        "--precision",
        "0",
        "--threshold",
        "1",
    ]);
    assert_fails(
        &o,
        &[
            "--set svc_b.queue_cap=-3",
            "--threshold 1: must be in (0, 1), the P(not recovered) whose crossing is searched",
            "--precision 0: must be a positive number, the bracket's width at which the bisection stops",
        ],
    );
    // Nor a non-numeric axis.
    let o = sweep(&[
        "refine",
        &grid,
        "--set",
        "nope=1",
        "--axis",
        "strategy",
        "--precision",
        "0.1",
    ]);
    assert_fails(
        &o,
        &[
            "--set nope=1",
            "--axis `strategy`: not numeric, so there is no value between two levels to try",
        ],
    );
    // `--set` replaces the strategy axis: every slice is `protected`.
    let o = refine("strategy=protected");
    assert_ok(&o);
    let md = std::fs::read_to_string(out.join("analysis/boundary.md")).unwrap();
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 3, "a head, its rule and one row:\n{md}");
    assert!(
        table[0].starts_with("| svc_b.slow.duration_s low |"),
        "{md}"
    );
    assert_eq!(
        table[0].matches('|').count(),
        table[1].matches('|').count(),
        "{md}"
    );
}

/// A refinement's and a boundary search's runs parts say of themselves
/// what a sweep's do (the histograms' edges, the grid, the tool), and
/// what refined them.
#[test]
fn refined_parts_carry_a_sweeps_metadata() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        "name = \"meta\"\nscenario = \"ch37\"\nseeds = [1]\n[set]\n\
         \"client.duration_s\" = 4\nhorizon_s = 5\n\"svc_b.slow.start_s\" = 1\n\
         [axes]\n\"svc_b.slow.duration_s\" = [0.5, 2.0]\n",
    );
    let out = tmp.path().join("o");
    assert_ok(&sweep(&[
        "refine",
        &grid,
        "--axis",
        "svc_b.slow.duration_s",
        "--precision",
        "1",
        "--out",
        &out.display().to_string(),
        "--no-report",
    ]));
    let parts: Vec<_> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    assert!(!parts.is_empty());
    for part in parts {
        let mut reader = ParquetReader::new(std::fs::File::open(&part).unwrap());
        let keys: Vec<String> = (reader.get_metadata().unwrap().key_value_metadata())
            .clone()
            .unwrap()
            .iter()
            .map(|k| k.key.clone())
            .collect();
        for key in [
            "sweep.columns",
            "sweep.latency_edges_s",
            "sweep.grid_name",
            "sweep.grid_sha256",
            "sweep.fingerprint",
            "sweep.tool",
            "sweep.git_commit",
            "sweep.shard",
            "sweep.refine",
        ] {
            assert!(
                keys.iter().any(|k| k == key),
                "{key} in {}: {keys:?}",
                part.display()
            );
        }
    }
}

/// Every column of both tables is described, with its unit, in each part's
/// metadata: the metrics from sim-core's list, the parameters from the
/// catalogue; `status` and string axes are categoricals.
#[test]
fn parts_describe_their_columns_and_store_strings_as_categoricals() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("o");
    assert_ok(&sweep(&[
        "run",
        &grid,
        "--out",
        &out.display().to_string(),
        "--no-report",
        "-q",
    ]));
    for table in ["runs", "series"] {
        let part = std::fs::read_dir(out.join(table))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "parquet"))
            .unwrap();
        let mut reader = ParquetReader::new(std::fs::File::open(&part).unwrap());
        let kv = reader
            .get_metadata()
            .unwrap()
            .key_value_metadata()
            .clone()
            .unwrap();
        let docs = kv
            .iter()
            .find(|k| k.key == "sweep.columns")
            .expect("sweep.columns");
        let docs: Vec<serde_json::Value> =
            serde_json::from_str(docs.value.as_deref().unwrap()).unwrap();
        let frame = reader.finish().unwrap();
        let names: Vec<&str> = docs.iter().map(|d| d["name"].as_str().unwrap()).collect();
        let columns: Vec<String> = frame
            .get_column_names()
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(names, columns, "{table}");
        assert!(
            docs.iter()
                .all(|d| !d["description"].as_str().unwrap().is_empty()),
            "{table}"
        );
        let about = |name: &str| docs.iter().find(|d| d["name"] == name).unwrap().clone();
        if table == "runs" {
            assert_eq!(about("recovery_s")["unit"], "s");
            assert_eq!(about("svc_b_rejected_full")["unit"], "count");
            let queue_cap = about("svc_b.queue_cap")["description"]
                .as_str()
                .unwrap()
                .to_string();
            let catalogue = sim_core::params::param_of("svc_b.queue_cap").unwrap().doc;
            assert_eq!(queue_cap, format!("parameter: {catalogue}"));
            for c in ["status", "strategy"] {
                assert!(
                    matches!(frame.column(c).unwrap().dtype(), DataType::Categorical(..)),
                    "{c}"
                );
            }
            assert_eq!(frame.column("error").unwrap().null_count(), frame.height());
        }
    }
}

/// Rewrites the runs part of `dir` with `edit` applied and records its new
/// size and SHA-256 in the shard's index, as if another build had written
/// other results for the same runs.
fn rewrite_runs(dir: &std::path::Path, edit: impl FnOnce(&mut polars::prelude::DataFrame)) {
    rewrite_part(dir, "runs", edit);
}

/// As [`rewrite_runs`], the first part of `table` (`runs` or `series`).
fn rewrite_part(
    dir: &std::path::Path,
    table: &str,
    edit: impl FnOnce(&mut polars::prelude::DataFrame),
) {
    rewrite_shard_part(dir, "s0of1", table, edit);
}

/// As [`rewrite_part`], the first part of shard `tag` (`s0of2`).
fn rewrite_shard_part(
    dir: &std::path::Path,
    tag: &str,
    table: &str,
    edit: impl FnOnce(&mut polars::prelude::DataFrame),
) {
    use polars::prelude::*;
    use sha2::Digest;
    let part = dir.join(table).join(format!("part-{tag}-000000.parquet"));
    let mut df = ParquetReader::new(std::fs::File::open(&part).unwrap())
        .finish()
        .unwrap();
    edit(&mut df);
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes).finish(&mut df).unwrap();
    std::fs::write(&part, &bytes).unwrap();
    let sha: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let index = dir.join(format!("parts-{tag}.json"));
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&index).unwrap()).unwrap();
    json["parts"][0][table]["sha256"] = sha.into();
    std::fs::write(&index, json.to_string()).unwrap();
}

/// A shard's part whose rows are each a run once, but one of them under
/// another run's index (a run of another grid point in its place), is
/// refused by a merge before anything is copied, naming the index no run
/// has.
#[test]
fn merge_refuses_a_run_in_another_runs_place() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(2));
    let [a, b, into] = ["a", "b", "into"].map(|d| tmp.path().join(d));
    let s = |p: &std::path::Path| p.display().to_string();
    assert_ok(&sweep(&[
        "run",
        &grid,
        "--out",
        &s(&a),
        "--shard",
        "0/2",
        "--no-report",
    ]));
    assert_ok(&sweep(&[
        "run",
        &grid,
        "--out",
        &s(&b),
        "--shard",
        "1/2",
        "--no-report",
    ]));
    let mut taken = None;
    rewrite_shard_part(&a, "s0of2", "runs", |df| {
        let mut index: Vec<u64> = (df.column("run_index").unwrap().u64().unwrap())
            .into_no_null_iter()
            .collect();
        taken = Some(index[0]);
        index[0] = index[1];
        let column = Column::new("run_index".into(), index);
        df.replace("run_index", column).unwrap();
    });
    let merge = sweep(&["merge", &s(&a), &s(&b), "--into", &s(&into), "--no-report"]);
    assert_fails(
        &merge,
        &[&format!(
            "no run has run_index {} of the 16 planned (a run of another grid point in its place): nothing was merged",
            taken.unwrap()
        )],
    );
    assert!(!into.join("runs").exists());
}

/// `compare` checks the series table too: a sweep whose runs are the same
/// but one series value differs is not identical.
#[test]
fn compare_finds_a_difference_in_the_series() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for dir in [&a, &b] {
        let out = dir.display().to_string();
        assert_ok(&sweep(&["run", &grid, "--out", &out, "--no-report", "-q"]));
    }
    let (da, db) = (a.display().to_string(), b.display().to_string());
    let same = sweep(&["compare", &da, &db]);
    assert_ok(&same);
    assert_says(&stdout(&same), &["identical: 8 runs", "series: 40 rows"]);
    rewrite_part(&b, "series", |df| {
        let queue = df.column("svc_b_queue_len").unwrap().i64().unwrap() + 1000;
        df.replace("svc_b_queue_len", queue.into_series().into_column())
            .unwrap();
    });
    let o = sweep(&["compare", &da, &db]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_says(
        &stdout(&o),
        &[
            "DIFFERENT series: 40 vs 40 rows",
            "column `svc_b_queue_len` differs",
        ],
    );
}

/// Columns are compared by name: a grid whose `[set]` lists its keys in
/// another order makes the same tables; one with a further key is told by
/// the column only one side has.
#[test]
fn compare_reads_columns_by_name_and_names_those_one_side_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = small_grid(1);
    let swapped = grid.replace(
        "\"client.duration_s\" = 4\nhorizon_s = 5\n",
        "horizon_s = 5\n\"client.duration_s\" = 4\n",
    );
    let more = grid.replace("horizon_s = 5\n", "horizon_s = 5\n\"svc_b.slots\" = 8\n");
    let run = |name: &str, text: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let grid = write_grid(&dir, text);
        let out = dir.join("o").display().to_string();
        assert_ok(&sweep(&["run", &grid, "--out", &out, "--no-report", "-q"]));
        out
    };
    let (a, b, c) = (run("a", &grid), run("b", &swapped), run("c", &more));
    let same = sweep(&["compare", &a, &b]);
    assert_ok(&same);
    assert_says(&stdout(&same), &["identical: 8 runs"]);
    let o = sweep(&["compare", &a, &c]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_says(
        &stdout(&o),
        &[
            &format!("DIFFERENT runs: 8 only in {a}, 8 only in {c}, 0 in both"),
            &format!("columns only in {c}: `svc_b.slots`"),
        ],
    );
    assert!(!stdout(&o).contains("differs"), "{}", stdout(&o));
    // Runs pair by id: a sweep of one more seed shares the other's runs,
    // which are identical; a column of its own runs is not told as a
    // difference.
    let (seeds, fewer) = (
        grid.replace("count = 1 }", "count = 2 }"),
        run("fewer", &grid),
    );
    assert_ne!(seeds, grid, "the grid names its seeds");
    let d = run("d", &seeds);
    let o = sweep(&["compare", &fewer, &d]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_says(
        &stdout(&o),
        &[
            &format!("DIFFERENT runs: 0 only in {fewer}, 8 only in {d}, 8 in both"),
            "the 8 runs in both are identical",
        ],
    );
}

/// `compare` and `diff` say why a directory has no runs to read; `diff`
/// of unmerged shards says to merge them first.
#[test]
fn compare_and_diff_say_why_a_directory_cannot_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let s = |name: &str| tmp.path().join(name).display().to_string();
    assert_ok(&sweep(&[
        "run",
        &grid,
        "--out",
        &s("a"),
        "--no-report",
        "-q",
    ]));
    let shard = [
        "run",
        &grid,
        "--out",
        &s("sh"),
        "--shard",
        "0/2",
        "--no-report",
        "-q",
    ];
    assert_ok(&sweep(&shard));
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    for command in ["compare", "diff"] {
        assert_fails(
            &sweep(&[command, &s("a"), &s("gone")]),
            &[&format!("{}: no such directory", s("gone"))],
        );
        assert_fails(
            &sweep(&[command, &s("a"), &s("empty")]),
            &[&format!(
                "{}: no runs (no runs/*.parquet): not a sweep's output directory, or none written yet",
                s("empty")
            )],
        );
    }
    assert_fails(
        &sweep(&["diff", &s("a"), &s("sh")]),
        &[&format!(
            "{} holds shards' results (manifest-s0of2.json) and no whole grid's manifest.json",
            s("sh")
        )],
    );
}

#[test]
fn diff_names_changed_outcomes_and_metrics_moved_beyond_noise() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(3));
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for dir in [&a, &b] {
        assert_ok(&sweep(&[
            "run",
            &grid,
            "--out",
            &dir.display().to_string(),
            "--no-report",
            "-q",
        ]));
    }
    let (da, db) = (a.display().to_string(), b.display().to_string());
    // Identical results: nothing to say, exit 0.
    let same = sweep(&["diff", &da, &db]);
    assert_ok(&same);
    assert_says(
        &stdout(&same),
        &["8 points; 0 changed outcome, 0 (point, metric) pairs moved"],
    );
    // B: every naive run recovered, and each of its goodputs 0.1 higher
    // (a shift far beyond the noise of a per-seed difference of exactly 0.1).
    rewrite_runs(&b, |df| {
        let naive: Vec<bool> = df
            .column("strategy")
            .unwrap()
            .cast(&DataType::String)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|s| s == Some("naive"))
            .collect();
        let recovered: Vec<bool> = (df.column("recovered").unwrap().bool().unwrap().iter())
            .zip(&naive)
            .map(|(r, n)| *n || r.unwrap())
            .collect();
        let goodput: Vec<Option<f64>> = (df.column("goodput").unwrap().f64().unwrap().iter())
            .zip(&naive)
            .map(|(g, n)| g.map(|g| if *n { g + 0.1 } else { g }))
            .collect();
        df.replace("recovered", Column::new("recovered".into(), recovered))
            .unwrap();
        df.replace("goodput", Column::new("goodput".into(), goodput))
            .unwrap();
    });
    let o = sweep(&["diff", &da, &db]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let rows = |metric: &str| {
        out.lines()
            .filter(|l| l.contains("strategy=naive") && l.contains(metric))
            .count()
    };
    assert_says(
        &out,
        &[
            "4 changed outcome",
            "4 (point, metric) pairs moved",
            "Changed outcome",
            "not recovered",
        ],
    );
    assert_eq!(rows("goodput"), 4, "{out}");
    assert!(!out.contains("strategy=protected"), "{out}");
    let report = std::fs::read_to_string(b.join("analysis/diff.md")).unwrap();
    assert!(
        report.contains("| +0.100 (the same in every seed) |"),
        "{report}"
    );
    // A NaN (the tool writes null) is a value missing on its side.
    rewrite_runs(&b, |df| {
        let nan = vec![f64::NAN; df.height()];
        df.replace("wasted_share", Column::new("wasted_share".into(), nan))
            .unwrap();
    });
    let o = sweep(&["diff", &da, &db]);
    assert_says(&stdout(&o), &["8 defined on one side only"]);
    // The same grid with a change applied to every point: the points pair
    // by their levels, and the report names the change.
    // The grid run with `--set SET` into `dir`.
    let run_with = |set: &str, dir: &str| {
        let out = tmp.path().join(dir).display().to_string();
        assert_ok(&sweep(&[
            "run",
            &grid,
            "--set",
            set,
            "--out",
            &out,
            "--no-report",
            "-q",
        ]));
        out
    };
    let longer = run_with("svc_b.slow.duration_s=3", "longer");
    let o = sweep(&["diff", &da, &longer]);
    let out = stdout(&o);
    assert_says(
        &out,
        &[
            "Every point of B differs from A's in:",
            "svc_b.slow.duration_s: (the scenario's) -> 3",
            "8 points; ",
        ],
    );
    // A sweep fixing an axis of the other pairs with that level's points,
    // in either order; the other points are left out, and said.
    let naive_only = run_with("strategy=naive", "c");
    for (x, y) in [(&da, &naive_only), (&naive_only, &da)] {
        let o = sweep(&["diff", x, y]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_says(
            &stdout(&o),
            &[
                &format!(
                    "Compared: the 4 points in both. 4 more points of {da} have no counterpart in the other sweep, which holds fewer levels of its axes (e.g. "
                ),
                "strategy=protected",
                "): left out.",
                "4 points; 0 changed outcome",
            ],
        );
    }
    // Points on both sides without a counterpart are refused, saying which:
    // a grid with another level of an axis.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let other_levels = small_grid(3).replace(r#"[16, "unbounded"]"#, "[16, 8]");
    assert_ne!(other_levels, small_grid(3), "the grid has that axis");
    let eight = tmp.path().join("eight").display().to_string();
    assert_ok(&sweep(&[
        "run",
        &write_grid(&other, &other_levels),
        "--out",
        &eight,
        "--no-report",
        "-q",
    ]));
    let o = sweep(&["diff", &da, &eight]);
    assert_fails(
        &o,
        &[
            "do not hold the same points",
            &format!("4 points only in {da} (e.g. "),
            "svc_b.queue_cap=unbounded",
            &format!("4 points only in {eight} (e.g. "),
            "svc_b.queue_cap=8",
        ],
    );
    // The same points with other seeds: said so, with the seeds.
    let two = tmp.path().join("two");
    std::fs::create_dir(&two).unwrap();
    let fewer = tmp.path().join("fewer").display().to_string();
    assert_ok(&sweep(&[
        "run",
        &write_grid(&two, &small_grid(2)),
        "--out",
        &fewer,
        "--no-report",
        "-q",
    ]));
    let o = sweep(&["diff", &da, &fewer]);
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            "error: diff:".to_string(),
            format!(
                "  {da} and {fewer} hold the same points but not the same seeds (diff pairs the runs of a point by seed): {da} has seeds 1-3, {fewer} has 1, 2; run both with the same seeds"
            ),
        ]
    );
}

/// A run that fails in B changes its point's outcome, whatever its
/// other seeds do (its metrics were left out, and the others decided).
#[test]
fn diff_counts_a_run_that_fails_in_b() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(3));
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let run = |dir: &std::path::Path, extra: &[&str]| {
        let out = dir.display().to_string();
        let mut args = vec![
            "run",
            &grid,
            "--out",
            &out,
            "--no-report",
            "-q",
            "--jobs",
            "1",
        ];
        args.extend(extra);
        sweep(&args)
    };
    assert_ok(&run(&a, &[]));
    let failing = run(&b, &["--inject-panic", "2"]);
    assert_eq!(failing.status.code(), Some(1), "one run failed");
    let o = sweep(&["diff", &a.display().to_string(), &b.display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_says(&stdout(&o), &["1 changed outcome", ", 1 failed"]);
}

/// `sweep params`: a table with a head, the values each path accepts
/// from the catalogue's bounds, and each doc in a line.
#[test]
fn params_shows_the_values_each_path_accepts() {
    let o = sweep(&["params"]);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(out.starts_with("path "), "{out:.200}");
    let line = |path: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(path))
            .unwrap_or_else(|| panic!("no line for {path}"))
            .to_string()
    };
    assert!(line("svc_b.queue_cap").contains(">= 0, \"unbounded\""));
    assert!(line("svc_a.max_retries").contains("0 to 100"));
    assert!(line("svc_b.service.mean_s").contains(">= 0"));
    assert!(line("recovery.threshold").contains("(0, 1]"));
    assert!(line("dispatch").contains("fifo / reply_first"));
    assert!(line("dispatch").contains("a name of the type"));
    // A choice's line explains each of its names, not only the first.
    assert!(line("dispatch").contains("reply_first: a finishing non-leaf server"));
    assert!(line("svc_a.cancel").contains("hedge_losers: the other copy"));
    // Any other path's, its first sentence.
    assert!(line("client.deadline_s").ends_with("from its arrival (0: none, the default)."));
}

/// `sweep params <text>`: each path containing the text in full, with
/// when it acts and its whole doc; a text no path contains is an error
/// naming it.
#[test]
fn params_with_a_filter_shows_each_matching_path_in_full() {
    let o = sweep(&["params", "hedge_budget_percent"]);
    assert_ok(&o);
    let out = stdout(&o);
    let full = sim_core::params::param_of("svc_a.hedge_budget_percent")
        .unwrap()
        .doc;
    for path in ["client.hedge_budget_percent", "svc_a.hedge_budget_percent"] {
        assert!(out.lines().any(|l| l == path), "{out}");
    }
    assert!(!out.contains("svc_a.max_retries"), "{out}");
    assert_says(
        &out,
        &[
            "  type      number\n",
            "  accepted  0 to 100\n",
            "  acts when hedge_delay_s > 0 or hedge_quantile > 0\n",
            full.trim(),
        ],
    );
    let o = sweep(&["params", "no_such_knob"]);
    assert_fails(
        &o,
        &[
            "no parameter path of the scenario `ch37` matches",
            "no_such_knob",
            "no path contains it",
        ],
    );
    let o = sweep(&["params", "dispatch", "--markdown"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "clap refuses a filter with --markdown"
    );
}

/// `sweep params` of a scenario with client groups: each group's paths
/// under its own header, with the group's values.
#[test]
fn params_lists_each_client_group_with_its_values() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../grids/scenarios/mixed-clients.toml"
    );
    let o = sweep(&["params", "--scenario", file]);
    assert_ok(&o);
    let out = stdout(&o);
    let line = |path: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(path))
            .unwrap_or_else(|| panic!("no line for {path}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(line("batch.closed.users").starts_with("batch.closed.users integer 20 "));
    assert!(line("client.rate_per_s").starts_with("client.rate_per_s number 300.0 "));
    assert!(line("batch.max_retries").starts_with("batch.max_retries integer 2 "));
    let header = |h: &str| out.lines().position(|l| l.trim() == h).unwrap();
    assert!(header("[client]") < header("[batch]") && header("[batch]") < header("[gateway]"));
}

/// A calibration run that fails is said, not timed: with an event budget
/// no run can meet, every one fails and the estimate says nothing.
#[test]
fn plan_says_which_calibration_runs_failed() {
    let text = "name = \"budget\"\nscenario = \"ch37\"\nseeds = [1, 2]\n[set]\nmax_events = 100\n";
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), text);
    let o = sweep(&["plan", &grid]);
    assert_ok(&o);
    assert_says(
        &stdout(&o),
        &[
            "(calibrated on 0 runs here,",
            "failed: 2 of the 2 calibration runs (every calibration run failed, so the times above say nothing; `sweep run` records such runs as failed); the first, point #0 seed 1: event budget",
        ],
    );
    let o = sweep(&["plan", &grid, "--json"]);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(plan["estimate"]["calibration_runs_failed"], 2);
}

/// `plan` says what `run` will write: its size on disk within a factor of
/// two of what `run` then writes, and a time range low <= high; for a
/// grid of one point too (calibrated on two seeds of it: one run alone
/// cannot tell a part's fixed overhead from a run's share).
#[test]
fn plan_estimates_a_time_range_and_the_size_on_disk() {
    let one_point = "name = \"one\"\nscenario = \"ch37\"\nseeds = { first = 1, count = 60 }\n[set]\n\"client.duration_s\" = 8\nhorizon_s = 10\n";
    // The 8 points of the first grid, the cheapest and dearest among them.
    for (text, calibration_runs) in [(small_grid(3), 8), (one_point.to_string(), 2)] {
        let tmp = tempfile::tempdir().unwrap();
        let grid = write_grid(tmp.path(), &text);
        let o = sweep(&["plan", &grid, "--json"]);
        assert_ok(&o);
        let plan: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let est = &plan["estimate"];
        let (low, high) = (
            est["wall_s_low"].as_f64().unwrap(),
            est["wall_s_high"].as_f64().unwrap(),
        );
        assert!(0.0 < low && low <= high, "{est}");
        assert_eq!(est["calibration_runs"], calibration_runs, "{est}");
        let out = tmp.path().join("o");
        assert_ok(&sweep(&[
            "run",
            &grid,
            "--out",
            &out.display().to_string(),
            "--no-report",
            "-q",
        ]));
        let written: u64 = ["runs", "series"]
            .iter()
            .flat_map(|t| std::fs::read_dir(out.join(t)).unwrap())
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        let expected = est["output_bytes"].as_u64().unwrap();
        assert!(
            written / 2 <= expected && expected <= written * 2,
            "{text}: expected {expected} bytes, written {written}"
        );
    }
}

/// The per-point table on stdout is aligned columns; `--markdown` keeps
/// the Markdown of summary.md.
#[test]
fn report_prints_aligned_columns_or_markdown() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &small_grid(1));
    let out = tmp.path().join("o").display().to_string();
    assert_ok(&sweep(&["run", &grid, "--out", &out, "--no-report", "-q"]));
    let plain = stdout(&sweep(&["report", &out]));
    let head = plain.lines().find(|l| l.contains("strategy")).unwrap();
    assert!(
        !head.contains('|') && head.starts_with("strategy"),
        "{plain}"
    );
    let md = stdout(&sweep(&["report", &out, "--markdown"]));
    assert!(md.lines().any(|l| l.starts_with("| strategy |")), "{md}");
}

/// Ctrl-C during `refine` stops it as it stops `run`: the runs in progress
/// finish and are written, the manifest says `interrupted`, the exit status
/// is 130, and the command printed to resume finishes the refinement,
/// reusing what was written.
#[test]
fn an_interrupted_refinement_writes_its_runs_and_says_how_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        r#"name = "tip-stop"
scenario = "ch37"
seeds = { first = 1, count = 30 }
[set]
"client.duration_s" = 14
horizon_s = 16
"svc_b.slow.start_s" = 2
[axes]
strategy = ["naive", "protected"]
"svc_b.slow.duration_s" = [0.5, 6]
"#,
    );
    let out = tmp.path().join("o");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["refine", &grid, "--axis", "svc_b.slow.duration_s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(
            [
                "--precision",
                "0.5",
                "--out",
                &out.display().to_string(),
                "--no-report",
            ]
            .map(String::from),
        );
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // Stopped while the second step is under way.
    interrupt_after_first_part(&args(&["--jobs", "1"]), &out);
    let manifest = |out: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap()
    };
    assert_eq!(manifest(&out)["status"], "interrupted");
    let written = manifest(&out)["ok"].as_u64().unwrap();
    assert!(
        written >= 120,
        "the first step's 4 values x 30 seeds: {written}"
    );
    // Running it again (the printed command) finishes it.
    let o = sweep(&args(&[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert_ok(&o);
    assert_eq!(manifest(&out)["status"], "complete");
    assert!(manifest(&out)["ok"].as_u64().unwrap() > written);
    // What it left is what an uninterrupted refinement leaves, run
    // indexes included (the runs the signal kept from starting had theirs).
    let full = tmp.path().join("full");
    let mut uninterrupted = args(&[]);
    let at = uninterrupted.iter().position(|a| a == "--out").unwrap() + 1;
    uninterrupted[at] = full.display().to_string();
    assert_ok(&sweep(
        &uninterrupted.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    assert_ok(&sweep(&[
        "compare",
        &out.display().to_string(),
        &full.display().to_string(),
    ]));
}

/// A refinement does not reuse the runs of another version of the tool
/// unless allowed, and then its manifest names that version.
#[test]
fn a_refinement_across_tool_versions_is_refused_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        "name = \"tip-version\"\nscenario = \"ch37\"\nseeds = [1]\n\
         [set]\n\"client.duration_s\" = 6\nhorizon_s = 8\n\"svc_b.slow.start_s\" = 1\n\
         [axes]\n\"svc_b.slow.duration_s\" = [0.5, 2]\n",
    );
    let out = tmp.path().join("o").display().to_string();
    let refine = |extra: &[&str]| {
        let mut a = vec![
            "refine",
            &grid,
            "--axis",
            "svc_b.slow.duration_s",
            "--precision",
            "1",
            "--out",
            &out,
            "--no-report",
        ];
        a.extend_from_slice(extra);
        sweep(&a)
    };
    assert_ok(&refine(&[]));
    let path = tmp.path().join("o/manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["git_commit"] = "0000000".into();
    std::fs::write(&path, manifest.to_string()).unwrap();
    let o = refine(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &[
            "holds results written by sweep 0.1.0 (commit 0000000)",
            "--allow-version-change",
        ],
    );
    assert_ok(&refine(&["--allow-version-change"]));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        manifest["earlier_versions"],
        serde_json::json!(["sweep 0.1.0 (commit 0000000)"])
    );
}

/// A refinement whose runs fail at a value stops that slice there without
/// an estimate (an estimate without them could move the bracket the wrong
/// way), says so in its table, and exits 1 as `run` does.
#[test]
fn a_refinement_whose_runs_fail_says_so_and_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        r#"name = "tip-fail"
scenario = "ch37"
seeds = [1, 2]
[set]
"client.duration_s" = 10
horizon_s = 12
"svc_b.slow.start_s" = 2
max_events = 20000
[axes]
strategy = ["naive"]
"svc_b.slow.duration_s" = [0.1, 4]
"#,
    );
    let refine = |out: &std::path::Path| {
        sweep(&[
            "refine",
            &grid,
            "--axis",
            "svc_b.slow.duration_s",
            "--precision",
            "0.5",
            "--out",
            &out.display().to_string(),
            "--no-report",
        ])
    };
    let out = tmp.path().join("o");
    let o = refine(&out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &[
            "failed (their errors",
            "1 of 1 slices stopped without a boundary",
        ],
    );
    let table = std::fs::read_to_string(out.join("analysis/boundary.md")).unwrap();
    assert_says(
        &table,
        &["none: 2 of 2 runs failed at svc_b.slow.duration_s = "],
    );
    // Without the budget, but arrivals ending 1 s after the longest
    // window: its runs cannot show recovery (they read as not recovered,
    // and the bisection found a boundary there).
    let short = std::fs::read_to_string(&grid)
        .unwrap()
        .replace("max_events = 20000\n", "")
        .replace("\"client.duration_s\" = 10", "\"client.duration_s\" = 7");
    std::fs::write(&grid, short).unwrap();
    let out = tmp.path().join("short");
    let o = refine(&out);
    assert_ok(&o);
    assert_says(
        &stderr(&o),
        &[
            "warning: 1 of 1 slices stopped without a boundary where their runs cannot show recovery",
        ],
    );
    let table = std::fs::read_to_string(out.join("analysis/boundary.md")).unwrap();
    assert_says(
        &table,
        &["none: 2 of 2 runs at svc_b.slow.duration_s = 4 cannot show recovery"],
    );
}

/// A run whose trigger ends less than a recovery window before its
/// arrivals end cannot show recovery: it has no verdict (it was counted as
/// not recovered), and the report says how many such runs it left out.
#[test]
fn runs_that_cannot_show_recovery_have_no_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        "name = \"verdict\"\nscenario = \"ch37\"\nseeds = [1, 2]\n\
         [set]\nhorizon_s = 14\n\"svc_b.slow.start_s\" = 2\n\"svc_b.slow.duration_s\" = 3.5\n\
         [axes]\n\"client.duration_s\" = [4, 12]\nstrategy = [\"naive\", \"protected\"]\n",
    );
    let out = tmp.path().join("out");
    let index = run_for_report(&grid, &out);
    assert_says(&index, &["4 of the ok runs cannot show recovery"]);
    let summary = std::fs::read_to_string(out.join("analysis/summary.csv")).unwrap();
    let p_of = |duration: &str, strategy: &str| {
        let line = (summary.lines())
            .find(|l| l.starts_with(&format!("{duration},{strategy},")))
            .unwrap_or_else(|| panic!("{duration} {strategy}: {summary}"));
        line.split(',').nth(4).unwrap().to_string()
    };
    // The window ends at 5.5 s: none of [6, 9) fits in 4 s of arrivals.
    assert_eq!(
        (p_of("4.0", "naive"), p_of("4.0", "protected")),
        (String::new(), String::new())
    );
    assert_eq!(
        (p_of("12.0", "naive"), p_of("12.0", "protected")),
        ("1.0".into(), "0.0".into())
    );
}

/// `[report] heatmap_x` given alone keeps its side of the heatmap; the
/// other is the axis with the most levels besides it (it was ignored, and
/// the default pair drawn).
#[test]
fn a_heatmap_axis_chosen_alone_is_drawn() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        &small_grid(1).replace(
            "[axes]",
            "[report]\nheatmap_x = \"svc_a.max_retries\"\n[axes]\n\"svc_b.slow.duration_s\" = [0.5, 1, 2]",
        ),
    );
    let index = run_for_report(&grid, &tmp.path().join("out"));
    let line = (index.lines())
        .find(|l| l.contains("P(not recovered) over"))
        .unwrap_or_else(|| panic!("{index}"));
    assert!(
        line.contains("svc_a.max_retries") && line.contains("svc_b.slow.duration_s"),
        "{line}"
    );
    assert!(!line.contains("svc_b.queue_cap"), "{line}");
}

/// `[report] group`: the report's recovery and success rates are that
/// client group's users' (here the online users beside a batch that is
/// most of the load), and a group the scenario has not is refused.
#[test]
fn a_report_group_reads_the_groups_own_users() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../grids/scenarios/mixed-clients.toml"
    );
    let grid_of = |report: &str| {
        format!(
            "name = \"groups\"\nscenario = \"{scenario}\"\nseeds = [1, 2]\n\
             [set]\n\"svc_b.slow.duration_s\" = 2\nstrategy = \"naive\"\n\
             \"batch.attempt_timeout_s\" = 0.3\n\
             [axes]\n\"client.rate_per_s\" = [200, 300]\n\"batch.closed.users\" = [1, 60]\n\
             [report]\n{report}\n"
        )
    };
    let bad = write_grid_as(tmp.path(), "bad.toml", &grid_of("group = \"clients\""));
    assert_fails(
        &sweep(&["plan", &bad]),
        &[
            "bad.toml: report.group: `clients` is not a client group of this scenario (its groups: client, batch); did you mean `client`?",
        ],
    );
    let one = write_grid_as(
        tmp.path(),
        "one.toml",
        &small_grid(1).replace("[axes]", "[report]\ngroup = \"client\"\n[axes]"),
    );
    assert_fails(
        &sweep(&["plan", &one]),
        &[
            "one.toml: report.group: `client`: this scenario has one client group, whose users the report is about already",
        ],
    );

    let grid = write_grid(
        tmp.path(),
        &grid_of(
            "group = \"client\"\nmetrics = [\"group_client_recovered\", \"group_client_success_rate_after\", \"success_rate_before\", \"group_client_success_rate_before\", \"users_during\", \"group_client_users_during\", \"group_client_failed_latency_median_s\", \"group_client_users_unfinished\", \"users_unfinished\"]",
        ),
    );
    let out = tmp.path().join("out");
    let index = run_for_report(&grid, &out);
    assert_says(
        &index,
        &["Users: client group `client`'s (`[report] group`)"],
    );
    let grouped = analysis::load::Sweep::load(&out).unwrap();
    for (name, of_group) in [
        ("recovered", "group_client_recovered"),
        ("success_rate_after", "group_client_success_rate_after"),
        ("success_rate_before", "group_client_success_rate_before"),
        ("users_during", "group_client_users_during"),
        (
            "failed_latency_median_s",
            "group_client_failed_latency_median_s",
        ),
        ("users_unfinished", "group_client_users_unfinished"),
    ] {
        assert!(grouped.metric(name).is_some(), "{name}");
        assert_eq!(grouped.metric(name), grouped.metric(of_group), "{name}");
    }
    let summary = std::fs::read_to_string(out.join("analysis/summary.md")).unwrap();
    assert!(
        summary.starts_with("Users: client group `client`'s"),
        "{summary}"
    );
    let o = sweep(&[
        "diff",
        &out.display().to_string(),
        &out.display().to_string(),
    ]);
    assert_ok(&o);
    let diff = std::fs::read_to_string(out.join("analysis/diff.md")).unwrap();
    assert_says(&diff, &["Users: client group `client`'s"]);
    // Without the option, the same runs read every user's; diff refuses
    // to compare the two.
    let all_dir = tmp.path().join("all");
    let copied = std::process::Command::new("cp")
        .args([
            "-r",
            &out.display().to_string(),
            &all_dir.display().to_string(),
        ])
        .status()
        .unwrap();
    assert!(copied.success());
    let edit = |group: Option<&str>| {
        let path = all_dir.join("manifest.json");
        let mut manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let report = manifest["report"].as_object_mut().unwrap();
        match group {
            Some(g) => report.insert("group".into(), g.into()),
            None => report.remove("group"),
        };
        std::fs::write(&path, manifest.to_string()).unwrap();
    };
    edit(None);
    let all = analysis::load::Sweep::load(&all_dir).unwrap();
    for name in [
        "success_rate_after",
        "users_during",
        "failed_latency_median_s",
    ] {
        assert_ne!(all.metric(name), grouped.metric(name), "{name}");
    }
    assert_fails(
        &sweep(&[
            "diff",
            &out.display().to_string(),
            &all_dir.display().to_string(),
        ]),
        &[
            "report is about client group `client`'s users and",
            "'s about all users (`[report] group`)",
        ],
    );
    // A group the runs do not have is an error, not every user's figures.
    edit(Some("nobody"));
    let err = analysis::load::Sweep::load(&all_dir)
        .err()
        .unwrap()
        .to_string();
    assert_says(
        &err,
        &["the grid's `[report] group = \"nobody\"` reads column `group_nobody_"],
    );
}

/// A scenario file given for a grid, or a grid for a scenario, is named as
/// the mix-up it is, not refused key by key.
#[test]
fn a_scenario_given_for_a_grid_and_a_grid_for_a_scenario_are_named() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let scenario = format!("{root}/grids/scenarios/three-hop.toml");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = sweep(&["run", &scenario, "--out", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            "error: invalid grid:".to_string(),
            format!(
                "  {scenario}: scenario: missing, and the file has [client] and [[tiers]]: this is a scenario file, not a grid; a grid names it (`scenario = \"...\"`) beside its axes, and `sweep one --scenario FILE` runs it alone"
            ),
        ]
    );
    assert!(!out.exists());
    let grid = format!("{root}/grids/ch37.toml");
    let o = sweep(&["one", "--scenario", &grid]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).lines().collect::<Vec<_>>(),
        [
            format!("error: invalid scenario `{grid}`:"),
            format!(
                "  scenario: {grid}: this is a grid file, not a scenario (it has no [[tiers]] and names its scenario, `ch37`): run the grid with `sweep run {grid}`, or give its scenario"
            ),
        ]
    );
}
