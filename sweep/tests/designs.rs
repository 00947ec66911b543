//! Axis ranges and sampled designs, through the CLI as users run them.

mod common;
use common::*;

fn plan_json(args: &[&str]) -> serde_json::Value {
    let o = sweep(&[&["plan", "--json", "--calibrate", "1"], args].concat());
    assert_ok(&o);
    serde_json::from_str(&stdout(&o)).unwrap()
}

const SAMPLED: &str = r#"name = "sampled"
scenario = "ch37"
[set]
"client.duration_s" = 8
horizon_s = 9
"svc_b.slow.start_s" = 1
[axes]
strategy = ["naive", "protected"]
"svc_b.slow.duration_s" = { min = 0.5, max = 3 }
"client.rate_per_s" = { min = 50, max = 400, log = true }
"svc_b.queue_cap" = { min = 4, max = 64 }
[sample]
method = "sobol"
n = 4
seed = 1
replicates = 2
"#;

#[test]
fn a_range_on_the_command_line_is_the_list_it_expands_to() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write_grid(dir.path(), &small_grid(1));
    let ranged = plan_json(&[
        &grid,
        "--axis",
        "svc_a.backoff_base_s={start=0.1,stop=0.3,step=0.1}",
    ]);
    let listed = plan_json(&[&grid, "--axis", "svc_a.backoff_base_s=0.1,0.2,0.3"]);
    let levels = &ranged["axes"][2]["levels"];
    assert_eq!(*levels, serde_json::json!([[0.1], [0.2], [0.3]]));
    assert_eq!(ranged["sample_points"], listed["sample_points"]);
    let caps = plan_json(&[
        &grid,
        "--axis",
        "svc_b.queue_cap={start=8,stop=64,num=4,log=true}",
    ]);
    assert_eq!(
        caps["axes"][1]["levels"],
        serde_json::json!([[8], [16], [32], [64]])
    );
}

#[test]
fn a_bad_range_names_the_flag_or_the_file_key_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write_grid(dir.path(), &small_grid(1));
    let o = sweep(&[
        "plan",
        &grid,
        "--axis",
        "svc_a.backoff_base_s={start=0.3,stop=0.1,step=0.1}",
    ]);
    assert_fails(
        &o,
        &["--axis svc_a.backoff_base_s=", "never goes from 0.3 to 0.1"],
    );
    let text = small_grid(1).replace(
        "\"svc_b.queue_cap\" = [16, \"unbounded\"]",
        "\"svc_b.queue_cap\" = { start = 1, stop = 9, step = 0.5 }\n\"svc_a.max_retries\" = { start = 1 }",
    );
    let bad = write_grid_as(dir.path(), "bad.toml", &text);
    let o = sweep(&["plan", &bad]);
    // Both problems at once, each with the file and the key.
    assert_fails(
        &o,
        &[
            "bad.toml: axes.\"svc_b.queue_cap\"",
            "the parameter takes integers",
            "bad.toml: axes.\"svc_a.max_retries\"",
            "needs both `start` and `stop`",
        ],
    );
}

#[test]
fn plan_shows_the_design_and_runs_one_design_per_category() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write_grid(dir.path(), SAMPLED);
    let j = plan_json(&[&grid]);
    // N x (2k + 2) = 4 x 8 points, twice (two strategies), two seeds each.
    assert_eq!(j["design"]["points_per_design"], 32);
    assert_eq!(j["points"], 64);
    assert_eq!(j["runs"], 128);
    assert_eq!(j["seeds"], serde_json::json!([1, 2]));
    let o = sweep(&["plan", &grid, "--calibrate", "1"]);
    assert_ok(&o);
    assert_says(
        &stdout(&o),
        &[
            "design sobol (seed 1, k = 3 sampled axes): Saltelli on a scrambled Sobol' sequence, N = 4 x (2k + 2) = 32 points",
            "2 designs, one per combination of the categorical axes",
            "client.rate_per_s in [50, 400] (log)",
            "svc_b.queue_cap in [4, 64] (integer)",
            "first sample points",
        ],
    );
    // The same grid text gives the same design.
    assert_eq!(plan_json(&[&grid])["fingerprint"], j["fingerprint"]);
}

#[test]
fn a_sampled_grid_refuses_what_cannot_act_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let text = SAMPLED
        .replace("replicates = 2", "replicates = 2\nlevels = 4")
        .replace("name = \"sampled\"", "name = \"sampled\"\nseeds = [1]")
        .replace(
            "{ min = 4, max = 64 }",
            "{ min = 4, max = 64, integer = false }",
        );
    let grid = write_grid(dir.path(), &text);
    assert_fails(
        &sweep(&["plan", &grid]),
        &[
            "seeds: a grid with [sample] takes its seeds from sample.replicates",
            "sample.levels: applies to method = \"morris\" only, not \"sobol\"",
            "axes.\"svc_b.queue_cap\"",
            "integer = false cannot apply",
        ],
    );
    let no_sample = SAMPLED
        .split("[sample]")
        .next()
        .unwrap()
        .replace("[axes]", "seeds = [1]\n[axes]");
    let grid = write_grid_as(dir.path(), "nosample.toml", &no_sample);
    assert_fails(
        &sweep(&["plan", &grid]),
        &["a { min, max } axis is sampled, and needs a [sample] table"],
    );
}

/// Every bad key of `[sample]` at once, each with its value and what it
/// takes; a design too large to hold is refused before it is made.
#[test]
fn a_sample_table_reports_every_bad_key_and_refuses_a_design_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let text = SAMPLED
        .replace(
            "\nn = 4",
            "\nn = \"4\"\nsecond_order = \"yes\"\nreplicate = 2",
        )
        .replace("seed = 1", "seed = -1")
        .replace("replicates = 2", "replicates = 2.5");
    let grid = write_grid(dir.path(), &text);
    assert_fails(
        &sweep(&["plan", &grid]),
        &[
            "grid.toml: sample.replicate: unknown key; did you mean `replicates`? [sample] takes method, n, seed, replicates, second_order, levels, maximin, threshold, initial, batch, spacing, tolerance, candidates",
            "grid.toml: sample.n: must be an integer >= 1, got \"4\"",
            "grid.toml: sample.seed: must be an integer >= 0, got -1",
            "grid.toml: sample.replicates: must be an integer >= 1, got 2.5",
            "grid.toml: sample.second_order: must be true or false, got \"yes\"",
        ],
    );
    // A value refused for its type leaves the other keys' rules checked.
    let text = SAMPLED
        .replace("\nn = 4", "\nn = 0\nlevels = 3")
        .replace("seed = 1", "seed = -1");
    let grid = write_grid_as(dir.path(), "typed.toml", &text);
    assert_fails(
        &sweep(&["plan", &grid]),
        &[
            "typed.toml: sample.seed: must be an integer >= 0, got -1",
            "typed.toml: sample.n: n must be at least 1",
            "typed.toml: sample.levels: applies to method = \"morris\" only, not \"sobol\"",
        ],
    );
    // The scrambling seed is 32 bits: 2^32 would give seed 0's design.
    let text = SAMPLED.replace("seed = 1", "seed = 4294967296");
    let grid = write_grid_as(dir.path(), "seed.toml", &text);
    assert_fails(
        &sweep(&["plan", &grid]),
        &[
            "seed.toml: sample.seed: must be at most 4294967295 (the design's scrambling seed is 32 bits), got 4294967296",
        ],
    );
    // One base point or trajectory has no spread to give an interval.
    for (method, reason) in [
        (
            "sobol",
            "n = 1: Sobol' indices need at least 2 base points: their intervals resample the base points, and one resampled is always itself",
        ),
        (
            "morris",
            "n = 1: Morris needs at least 2 trajectories: sigma and the intervals are spreads over trajectories",
        ),
    ] {
        let text = SAMPLED
            .replace("\"sobol\"", &format!("\"{method}\""))
            .replace("\nn = 4", "\nn = 1");
        let grid = write_grid_as(dir.path(), "one.toml", &text);
        assert_fails(
            &sweep(&["plan", &grid]),
            &[&format!("one.toml: sample.n: {reason}")],
        );
    }
    // An unknown key leaves the known keys' values checked beside it; the
    // default standing in for the key it misspells is not told as a fault.
    let text = SAMPLED
        .replace("\nn = 4", "\nn = 0\nlevels = 2")
        .replace("replicates = 2", "replicats = 2");
    let grid = write_grid_as(dir.path(), "misspelt.toml", &text);
    let o = sweep(&["plan", &grid]);
    assert_fails(
        &o,
        &[
            "misspelt.toml: sample.replicats: unknown key; did you mean `replicates`?",
            "misspelt.toml: sample.n: n must be at least 1",
            "misspelt.toml: sample.levels: applies to method = \"morris\" only, not \"sobol\"",
        ],
    );
    let text = SAMPLED
        .replace("\"sobol\"", "\"morris\"")
        .replace("replicates = 2", "levls = 2")
        .replace("{ min = 4, max = 64 }", "{ min = 4, max = 5 }");
    let grid = write_grid_as(dir.path(), "levls.toml", &text);
    let o = sweep(&["plan", &grid]);
    assert_fails(
        &o,
        &["levls.toml: sample.levls: unknown key; did you mean `levels`?"],
    );
    assert_eq!(stderr(&o).lines().count(), 2, "{}", stderr(&o));
    let missing = SAMPLED.replace("method = \"sobol\"\nn = 4\n", "");
    let grid = write_grid_as(dir.path(), "missing.toml", &missing);
    assert_fails(
        &sweep(&["plan", &grid]),
        &[
            "missing.toml: sample.method: missing: lhs, sobol, morris or boundary",
            "missing.toml: sample.n: missing: the design's size",
        ],
    );
    // A table that makes no design leaves its axes' values checked.
    let text = SAMPLED.replace("\"sobol\"", "\"sobolx\"").replace(
        "{ min = 50, max = 400, log = true }",
        "{ min = -50, max = 400 }",
    );
    let grid = write_grid_as(dir.path(), "axes.toml", &text);
    assert_fails(
        &sweep(&["plan", &grid]),
        &[
            "axes.toml: sample.method: `sobolx` is not a method: lhs, sobol, morris or boundary; did you mean `sobol`?",
            "axes.toml: axes.\"client.rate_per_s\" = { min = -50, max = 400 }: must be > 0",
        ],
    );
    // A design whose only sampled axis is refused is told that axis's
    // problem, not that it has no sampled axis.
    let text = SAMPLED
        .replace("\"svc_b.slow.duration_s\" = { min = 0.5, max = 3 }\n", "")
        .replace("\"svc_b.queue_cap\" = { min = 4, max = 64 }\n", "")
        .replace(
            "{ min = 50, max = 400, log = true }",
            "{ min = 400, max = 50 }",
        );
    let grid = write_grid_as(dir.path(), "one.toml", &text);
    let o = sweep(&["plan", &grid]);
    assert_fails(
        &o,
        &[
            "one.toml: axes.\"client.rate_per_s\": { min = 400, max = 50 }: min = 400 must be below max = 50",
        ],
    );
    assert!(
        !stderr(&o).contains("needs at least one sampled axis"),
        "{}",
        stderr(&o)
    );
    // Every end and flag of the wrong type at once.
    let text = SAMPLED.replace(
        "{ min = 50, max = 400, log = true }",
        "{ min = nan, max = inf, log = 1 }",
    );
    let grid = write_grid_as(dir.path(), "types.toml", &text);
    assert_fails(
        &sweep(&["plan", &grid]),
        &[
            "types.toml: axes.\"client.rate_per_s\": { min = nan, max = inf, log = 1 }: `min` must be a number, got nan; `max` must be a number, got inf; `log` must be true or false, got 1",
        ],
    );
    // An unknown path is said once, with the axis as written (not its two
    // ends as numbers, which read as two levels).
    let text = SAMPLED.replace("\"client.rate_per_s\" =", "\"client.rate_pers\" =");
    let grid = write_grid_as(dir.path(), "unknown.toml", &text);
    let o = sweep(&["plan", &grid]);
    assert_fails(
        &o,
        &[
            "unknown.toml: axes.\"client.rate_pers\" = { min = 50, max = 400, log = true }: unknown parameter; did you mean `client.rate_per_s`?",
        ],
    );
    assert_eq!(
        stderr(&o).matches("client.rate_pers\"").count(),
        1,
        "{}",
        stderr(&o)
    );
    // 2^20 rows of 3 axes are made; one more is refused, at once.
    for (n, method, points) in [
        (
            "1048577",
            "lhs",
            "1048577 sample points (lhs with k = 3 axes: n)",
        ),
        (
            "262145",
            "morris",
            "1048580 sample points (morris with k = 3 axes: n x (k + 1))",
        ),
    ] {
        let text = SAMPLED
            .replace("\nn = 4", &format!("\nn = {n}"))
            .replace("\"sobol\"", &format!("\"{method}\""));
        let grid = write_grid_as(dir.path(), "big.toml", &text);
        assert_fails(
            &sweep(&["plan", &grid]),
            &[&format!(
                "big.toml: sample.n: n = {n} makes {points}, more than the 1048576 a design may have: use a smaller n, or split the axes' ranges into several grids"
            )],
        );
    }
}

#[test]
fn a_sampled_grid_gives_one_runs_table_whatever_the_threads_and_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid(dir, &SAMPLED.replace("replicates = 2", "replicates = 1"));
    let out = |n: &str| dir.join(n).display().to_string();
    for (name, jobs) in [("j1", "1"), ("j2", "2")] {
        let o = sweep(&["run", &grid, "--out", &out(name), "--jobs", jobs]);
        assert_ok(&o);
    }
    for shard in ["0/2", "1/2"] {
        let o = sweep(&[
            "run",
            &grid,
            "--out",
            &out("sharded"),
            "--shard",
            shard,
            "--no-report",
        ]);
        assert_ok(&o);
    }
    assert_ok(&sweep(&["merge", &out("sharded"), "--no-report"]));
    assert_same_runs(&dir.join("j1"), &dir.join("j2"));
    assert_same_runs(&dir.join("j1"), &dir.join("sharded"));

    // The report reads the design as a design: one row per strategy, the
    // design's answer first, no factorial tables of its 32 rows.
    let analysis = dir.join("j1/analysis");
    let md = std::fs::read_to_string(analysis.join("index.md")).unwrap();
    let short = md.split("## What happened").next().unwrap();
    assert_says(
        short,
        &[
            "- **strategy=naive**: ",
            "- **strategy=protected**: ",
            " runs recovered.",
        ],
    );
    assert_says(
        &md,
        &[
            "## Why: the sampled design",
            "each combination of the categorical axes is one point here",
        ],
    );
    assert!(!md.contains("## Why: sensitivity"), "{md}");
    assert!(!analysis.join("sensitivity.csv").exists());
    assert!(!analysis.join("main_effects.csv").exists());
    let summary = std::fs::read_to_string(analysis.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + 2, "{summary}");
}

const BOUNDARY: &str = r#"name = "edge"
scenario = "ch37"
[set]
strategy = "naive"
"client.duration_s" = 12
horizon_s = 14
"svc_b.slow.start_s" = 1
[axes]
"svc_b.slow.duration_s" = { min = 0.2, max = 6 }
"client.rate_per_s" = { min = 50, max = 400 }
[sample]
method = "boundary"
n = 24
seed = 1
replicates = 2
initial = 8
batch = 4
"#;

/// The picks depend only on the outcomes before them: the same runs with
/// one worker or two, and after an interruption (a round's part lost) a
/// second invocation replays the rounds, runs only what is missing and
/// ends with the same table; a complete search runs nothing new.
#[test]
fn a_boundary_search_is_the_same_with_any_jobs_and_after_an_interruption() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write_grid(dir.path(), BOUNDARY);
    // `plan` counts what `refine` runs at most: the budget, not the
    // candidates.
    let o = sweep(&["plan", &grid, "--calibrate", "1"]);
    assert_ok(&o);
    assert_says(
        &format!("{}{}", stdout(&o), stderr(&o)),
        &["`sweep refine` runs at most 24 points x 2 seeds = 48 runs (of "],
    );
    let out = |name: &str| dir.path().join(name).display().to_string();
    for (name, jobs) in [("j1", "1"), ("j2", "2")] {
        let o = sweep(&[
            "refine",
            &grid,
            "--out",
            &out(name),
            "-j",
            jobs,
            "--no-report",
        ]);
        assert_ok(&o);
        assert_says(&stderr(&o), &["boundary round 1: 8 points, 16 new runs"]);
    }
    assert_same_runs(&dir.path().join("j1"), &dir.path().join("j2"));
    let table = std::fs::read_to_string(dir.path().join("j1/analysis/boundary_rounds.md")).unwrap();
    let (points, judged, left_out) = boundary_counts(&table);
    assert_eq!((judged, left_out), (2 * points, 0), "{table}");

    // Lose the last round's runs, as a kill before it was written would.
    let runs_dir = dir.path().join("j2/runs");
    let mut parts: Vec<_> = std::fs::read_dir(&runs_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    parts.sort();
    assert!(parts.len() >= 3, "{parts:?}");
    std::fs::remove_file(parts.last().unwrap()).unwrap();
    let o = sweep(&["refine", &grid, "--out", &out("j2"), "--no-report"]);
    assert_ok(&o);
    let err = stderr(&o);
    assert_says(&err, &["boundary round 1: 8 points, 0 new runs"]);
    assert!(
        err.lines()
            .filter(|l| l.starts_with("boundary round"))
            .any(|l| !l.ends_with(" 0 new runs")),
        "{err}"
    );
    assert_same_runs(&dir.path().join("j1"), &dir.path().join("j2"));
    let again = stderr(&sweep(&["refine", &grid, "--out", &out("j1")]));
    for l in again.lines().filter(|l| l.starts_with("boundary round")) {
        assert!(l.ends_with(" 0 new runs"), "{again}");
    }
    // The report answers with the boundary, first in "In short".
    let md = std::fs::read_to_string(dir.path().join("j1/analysis/index.md")).unwrap();
    let short = in_short(&md);
    assert!(
        short.starts_with("## In short\n\n- **all**: P(not recovered) "),
        "{short}"
    );
    assert!(
        md.contains("## Where it tips: the adaptive boundary"),
        "{md}"
    );
    // No factorial section speaks for a search's crowded points, and the
    // sampled note points to the boundary's section, which exists.
    for factorial in [
        "## Why: sensitivity",
        "### Main effects",
        "### Ranking",
        "Why: the sampled design",
    ] {
        assert!(!md.contains(factorial), "{factorial} in:\n{md}");
    }
    assert!(
        md.contains("is in *Where it tips: the adaptive boundary*"),
        "{md}"
    );
    assert!(md.contains("the search puts them where P(not recovered) is closest to its threshold"));
    assert!(
        dir.path()
            .join("j1/analysis/plots/boundary_contour.png")
            .exists()
    );
    assert!(dir.path().join("j1/analysis/boundary_contour.csv").exists());
}

/// A boundary search that mostly does not recover says why at the end of
/// "What happened", as a factorial grid does, though it has no "Why"
/// section to stand before: not after the per-point table.
#[test]
fn a_boundary_search_says_why_it_did_not_recover_in_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let text = BOUNDARY
        .replace(
            "\"svc_b.slow.duration_s\" = { min = 0.2, max = 6 }",
            "\"svc_b.slow.duration_s\" = { min = 2, max = 6 }",
        )
        .replace(
            "\"client.rate_per_s\" = { min = 50, max = 400 }",
            "\"client.rate_per_s\" = { min = 300, max = 400 }",
        );
    assert_ne!(text, BOUNDARY);
    let grid = write_grid(dir.path(), &text);
    let out = dir.path().join("o");
    assert_ok(&sweep(&[
        "refine",
        &grid,
        "--out",
        &out.display().to_string(),
    ]));
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    let at = |heading: &str| {
        md.find(heading)
            .unwrap_or_else(|| panic!("{heading}:\n{md}"))
    };
    assert!(at("## What happened") < at("### Why it did not recover"));
    assert!(at("### Why it did not recover") < at("## Where it tips"));
}

/// The points, runs with a verdict and runs left out of the table's `all` row.
/// The "In short" section of a report.
fn in_short(md: &str) -> &str {
    &md[md.find("## In short").unwrap()..md.find("## What happened").unwrap()]
}

fn boundary_counts(table: &str) -> (u64, u64, u64) {
    let row = (table.lines())
        .find(|l| l.starts_with("| all |"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<u64> = (row.split('|').skip(3).take(3))
        .map(|c| c.trim().parse().unwrap())
        .collect();
    (cells[0], cells[1], cells[2])
}

/// Runs without a verdict (arrivals end before a recovery window after
/// the trigger fits) are left out of the boundary's counts, and its table
/// says how many.
#[test]
fn a_boundary_table_counts_the_runs_it_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let short = BOUNDARY
        .replace("\"client.duration_s\" = 12", "\"client.duration_s\" = 8")
        .replace("horizon_s = 14", "horizon_s = 10")
        .replace("n = 24", "n = 8");
    let grid = write_grid(dir.path(), &short);
    let out = dir.path().join("o");
    assert_ok(&sweep(&[
        "refine",
        &grid,
        "--out",
        &out.display().to_string(),
        "--no-report",
    ]));
    let table = std::fs::read_to_string(out.join("analysis/boundary_rounds.md")).unwrap();
    let (points, judged, left_out) = boundary_counts(&table);
    assert!(left_out > 0 && judged > 0, "{table}");
    assert_eq!(judged + left_out, 2 * points, "{table}");
}

/// A boundary search whose runs fail exits 1 and says so, as `run` does;
/// a category where every run failed stops after its first round and is
/// said to have no verdict, not to be below the threshold throughout.
#[test]
fn a_boundary_search_with_failed_runs_fails_and_judges_no_category_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let failing = BOUNDARY
        .replace("[axes]\n", "[axes]\nmax_events = [2000, 10000000]\n")
        .replace("n = 24", "n = 12");
    let grid = write_grid(dir.path(), &failing);
    let out = dir.path().join("o");
    let o = sweep(&["refine", &grid, "--out", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("16 runs failed (their errors: `status` and `error` in"),
        "{}",
        stderr(&o)
    );
    let table = std::fs::read_to_string(out.join("analysis/boundary_rounds.md")).unwrap();
    assert!(
        table.contains("no run gave a verdict (failed, or cannot show recovery)"),
        "{table}"
    );
    let report = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    assert!(
        report.contains(
            "max_events=2000**: no verdict: none of its runs can say whether it recovered"
        ),
        "{report}"
    );
}

/// Ctrl-C during a boundary search stops it as it stops `run`: the runs
/// in progress finish and are written with the rest of the round, the
/// manifest says `interrupted`, the exit status is 130, and running it again
/// finishes the search (it died at once, losing the round, with the
/// manifest left `running`).
#[test]
fn an_interrupted_boundary_search_writes_its_runs_and_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let long = BOUNDARY
        .replace("replicates = 2", "replicates = 12")
        .replace(
            "\"client.duration_s\" = 12\nhorizon_s = 14",
            "\"client.duration_s\" = 40\nhorizon_s = 42",
        );
    let grid = write_grid(dir.path(), &long);
    let out = dir.path().join("o");
    interrupt_after_first_part(
        &[
            "refine",
            &grid,
            "--out",
            &out.display().to_string(),
            "-j",
            "1",
            "--no-report",
        ],
        &out,
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "interrupted");
    let o = sweep(&[
        "refine",
        &grid,
        "--out",
        &out.display().to_string(),
        "--no-report",
    ]);
    assert_ok(&o);
    assert_says(&stderr(&o), &["boundary round 1: 8 points, 0 new runs"]);
}

/// A boundary grid's problems at once, each with the file and the key;
/// `sweep run` and refine's bisection flags are refused with the reason.
#[test]
fn a_boundary_grid_is_checked_and_run_only_by_refine() {
    let dir = tempfile::tempdir().unwrap();
    let bad = BOUNDARY
        .replace("\"client.rate_per_s\" = { min = 50, max = 400 }\n", "")
        .replace(
            "initial = 8\nbatch = 4",
            "batch = 0\nthreshold = 1.5\ninitial = 30\ntolerance = 1\ncandidates = 10\nlevels = 4",
        );
    let bad = write_grid_as(dir.path(), "bad.toml", &bad);
    assert_fails(
        &sweep(&["plan", &bad]),
        &[
            "bad.toml: axes: method = \"boundary\" takes 2 to 4 sampled axes, got 1 (for one axis, `sweep refine --axis` bisects it)",
            "bad.toml: sample.levels: applies to method = \"morris\" only, not \"boundary\"",
            "bad.toml: sample.threshold: threshold = 1.5: P(not recovered) at the boundary must be in (0, 1)",
            "bad.toml: sample.initial: initial = 30: the first round's points must be at least 1 and at most n = 24",
            "bad.toml: sample.batch: batch (points per round) must be at least 1",
            "bad.toml: sample.tolerance: tolerance = 1: a share of the candidates, from 0 (stop at the budget) to below 1",
            "bad.toml: sample.candidates: candidates = 10 must be at least n = 24 (the points are picked from them) and at most 65536",
        ],
    );
    let grid = write_grid(dir.path(), BOUNDARY);
    assert_fails(
        &sweep(&["run", &grid]),
        &[&format!(
            "grid.toml: sample.method: \"boundary\" is adaptive (each round's points depend on the outcomes of the rounds before): run it with `sweep refine {grid}`"
        )],
    );
    assert_fails(
        &sweep(&[
            "refine",
            &grid,
            "--axis",
            "client.rate_per_s",
            "--precision",
            "1",
        ]),
        &[
            "--axis, --precision: ",
            "has [sample] method = \"boundary\", which searches its sampled axes with its own sample.threshold; leave them out",
        ],
    );
    let plain = write_grid_as(dir.path(), "plain.toml", &small_grid(1));
    assert_fails(
        &sweep(&["refine", &plain]),
        &["--axis and --precision are needed to bisect an axis of"],
    );
}

/// Two sweeps of one Morris design pair up point by point, though a
/// trajectory comes back to levels another of its points has: by the
/// levels and the sample.
#[test]
fn diff_pairs_a_design_s_points_by_their_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let morris = SAMPLED
        .replace("method = \"sobol\"\nn = 4", "method = \"morris\"\nn = 20")
        .replace("replicates = 2\n", "replicates = 1\n");
    let grid = write_grid(tmp.path(), &morris);
    let run = |dir: &str, extra: &[&str]| {
        let out = tmp.path().join(dir).display().to_string();
        assert_ok(&sweep(
            &[&["run", &grid, "--out", &out, "--no-report", "-q"], extra].concat(),
        ));
        out
    };
    let (a, b) = (run("a", &[]), run("b", &["--set", "svc_a.max_retries=0"]));
    let o = sweep(&["diff", &a, &b]);
    assert_says(
        &stdout(&o),
        &[
            "Every point of B differs from A's in:",
            "svc_a.max_retries: (the scenario's) -> 0",
            "160 points; ",
        ],
    );
}

/// A Sobol' design that spends for less than it could says so before it
/// runs, as SALib warns: an n that is not a power of two, and second-order
/// rows with one sampled axis (copies of its points).
#[test]
fn a_sobol_design_says_what_it_spends_for_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_grid(dir.path(), SAMPLED);
    let o = sweep(&["plan", &good]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("note: "), "{}", stdout(&o));
    let text = SAMPLED
        .replace(
            "\"client.rate_per_s\" = { min = 50, max = 400, log = true }\n",
            "",
        )
        .replace("\"svc_b.queue_cap\" = { min = 4, max = 64 }\n", "")
        .replace("n = 4", "n = 3");
    let one = write_grid_as(dir.path(), "one.toml", &text);
    let notes = [
        "note: sample.n = 3 is not a power of two: a Sobol' sequence is balanced at 2^m points, so the indices converge more slowly than at n = 4",
        "note: with one sampled axis there are no second-order terms, and second_order = true repeats every point: second_order = false halves the runs",
    ];
    let o = sweep(&["plan", &one]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_says(&stdout(&o), &notes);
    let out = dir.path().join("o").display().to_string();
    let o = sweep(&["run", &one, "--out", &out, "--no-report"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_says(&stderr(&o), &notes);
}

/// A Morris design whose usable trajectories all agree: the effect they
/// show is no certainty, the advice after it is the one for the
/// parameters never seen to move the metric (none is "not resolved"), and
/// where it tips is told at the grid's levels.
#[test]
fn a_morris_design_says_what_too_few_trajectories_cannot_tell() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write_grid_as(
        dir.path(),
        "m.toml",
        r#"name = "morris-few"
scenario = "ch37"
[set]
"client.duration_s" = 12
horizon_s = 14
"svc_b.slow.start_s" = 2
[axes]
strategy = ["naive"]
"svc_b.slow.duration_s" = { min = 1, max = 8 }
"client.rate_per_s" = { min = 150, max = 400 }
"svc_a.max_retries" = { min = 0, max = 3, integer = true }
[sample]
method = "morris"
n = 20
levels = 4
seed = 3
"#,
    );
    let out = dir.path().join("o");
    let o = sweep(&["run", &grid, "--out", &out.display().to_string(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    let short = in_short(&md);
    assert!(
        short.contains("depends most on `svc_b.slow.duration_s` (mu_star 1.50, alike in all 8 trajectories: too few for an interval)"),
        "{short}"
    );
    assert!(
        short.contains("- A parameter never seen to move a metric needs more sample points to be told from one that barely does: `sample.n` = 64 would."),
        "{short}"
    );
    assert!(!short.contains("not resolved"), "{short}");
    // Where it tips: at the grid's levels, not in fifths of the range,
    // which left a fifth between two levels empty.
    assert!(
        short.contains("From `svc_b.slow.duration_s` = 1 to 8, at its 4 levels, the share recovered goes 100% → 19% → 0% → -; the steepest step is between 1 and 3.333."),
        "{short}"
    );
}
