//! The tables of a small grid whose answers are computed by hand.

use analysis::load::Sweep;
use analysis::tables;
use polars::prelude::*;
use tempfile::TempDir;

/// strategy in {a, b} x x in {1, 2} x 2 seeds; success_rate_after and
/// recovered chosen so that every mean is easy to check.
/// The directory is removed when the returned value is dropped.
fn write_sweep() -> TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("runs")).unwrap();
    std::fs::create_dir_all(dir.join("series")).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"grid_name": "known", "axes": ["strategy", "x"], "dimensions": [["strategy"], ["x"]],
            "planned": 8, "ok": 8, "failed": 0, "events_total": 0, "status": "complete"}"#,
    )
    .unwrap();
    // run_index order: strategy slowest, then x, then seed.
    let strategy = ["a", "a", "a", "a", "b", "b", "b", "b"];
    let x = [1i64, 1, 2, 2, 1, 1, 2, 2];
    let after = [0.9, 1.0, 0.5, 0.7, 0.2, 0.4, 0.0, 0.0];
    let recovered = [true, true, true, false, false, false, false, false];
    let ids: Vec<String> = (0..8).map(|i| format!("r{i}")).collect();
    let mut runs = DataFrame::new(
        8,
        vec![
            Column::new("run_id".into(), ids.clone()),
            Column::new("run_index".into(), (0..8u64).collect::<Vec<_>>()),
            Column::new("strategy".into(), strategy.to_vec()),
            Column::new("x".into(), x.to_vec()),
            Column::new("status".into(), vec!["ok"; 8]),
            Column::new("recovered".into(), recovered.to_vec()),
            Column::new(
                "recovery_censored_s".into(),
                vec![1.0, 3.0, 2.0, 9.0, 9.0, 9.0, 9.0, 9.0],
            ),
            Column::new("success_rate_after".into(), after.to_vec()),
            Column::new("window_start_s".into(), vec![1.0; 8]),
            Column::new("window_end_s".into(), vec![2.0; 8]),
            Column::new("svc_max_queue".into(), vec![3u64, 5, 7, 9, 1, 1, 1, 1]),
        ],
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(dir.join("runs/part-s0of1-000000.parquet")).unwrap())
        .finish(&mut runs)
        .unwrap();
    let n = 8 * 3;
    let mut series = DataFrame::new(
        n,
        vec![
            Column::new(
                "run_id".into(),
                ids.iter()
                    .flat_map(|i| [i.clone(), i.clone(), i.clone()])
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "second".into(),
                (0..8).flat_map(|_| [0u32, 1, 2]).collect::<Vec<_>>(),
            ),
            Column::new(
                "success_rate".into(),
                (0..n)
                    .map(|i| Some((i % 3) as f64 / 2.0))
                    .collect::<Vec<_>>(),
            ),
            Column::new("svc_queue_len".into(), (0..n as u64).collect::<Vec<_>>()),
        ],
    )
    .unwrap();
    ParquetWriter::new(
        std::fs::File::create(dir.join("series/part-s0of1-000000.parquet")).unwrap(),
    )
    .finish(&mut series)
    .unwrap();
    tmp
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn main_effects_match_hand_computed_values() {
    let tmp = write_sweep();
    let sweep = Sweep::load(tmp.path()).unwrap();
    assert_eq!(sweep.dims.len(), 2);
    assert_eq!(sweep.dims[1].labels, ["1", "2"]);
    let effects = tables::main_effects(&sweep, &["success_rate_after".to_string()]);
    let get = |dim: &str, level: &str, strategy: Option<&str>| {
        effects
            .iter()
            .find(|e| e.dim == dim && e.level == level && e.strategy.as_deref() == strategy)
            .unwrap_or_else(|| panic!("{dim}={level} {strategy:?}"))
    };
    // x = 1, strategy a: runs 0.9 and 1.0 -> mean 0.95; s = 0.0707107,
    // t(0.975, 1) = 12.7062 -> half-width 12.7062 * 0.0707107 / sqrt(2) = 0.635310,
    // clipped to [0, 1]: a success rate is never above 1.
    let e = get("x", "1", Some("a"));
    assert_eq!((e.n, e.points), (2, 1));
    assert!(close(e.mean.unwrap(), 0.95));
    let (lo, hi) = e.ci.unwrap();
    assert!(
        hi == 1.0 && (0.95 - lo - 0.635310).abs() < 1e-5,
        "{lo} {hi}"
    );
    assert_eq!(
        e.ci_method.as_deref(),
        Some("t over shared seeds, clipped to [0, 1]")
    );
    // Strategy b at x = 2: 0.0 in both seeds, no interval of zero width.
    let e = get("x", "2", Some("b"));
    assert!(e.ci.is_none(), "{:?}", e.ci);
    assert_eq!(
        e.ci_method.as_deref(),
        Some("no seed-to-seed variation observed in 2 seeds")
    );
    // Strategy a over x: the spread over the points is 0.6 to 0.95.
    let e = get("strategy", "a", None);
    assert_eq!((e.n, e.points), (4, 2));
    let (smin, smax) = e.spread.unwrap();
    assert!(close(smin, 0.6) && close(smax, 0.95), "{smin} {smax}");
    // The interval of the marginal mean is over the shared seeds: for
    // recovery_censored_s at strategy a, points (1, 3) and (2, 9); seed 0
    // averages 1.5, seed 1 6.0: mean 3.75, s.e. 2.25, half-width
    // t(0.975, 1) * 2.25 = 28.588961, clipped at 0.
    let times = tables::main_effects(&sweep, &["recovery_censored_s".to_string()]);
    let e = times
        .iter()
        .find(|e| e.dim == "strategy" && e.level == "a")
        .unwrap();
    assert!(close(e.mean.unwrap(), 3.75));
    let (lo, hi) = e.ci.unwrap();
    assert!(lo == 0.0 && (hi - 32.338961).abs() < 1e-5, "{lo} {hi}");
    assert_eq!(
        e.ci_method.as_deref(),
        Some("t over shared seeds, clipped at 0")
    );
    assert!(close(get("x", "2", Some("a")).mean.unwrap(), 0.6));
    assert!(close(get("x", "1", Some("b")).mean.unwrap(), 0.3));
    assert!(close(get("x", "2", Some("b")).mean.unwrap(), 0.0));
    // The strategy dimension itself is not split: a = (0.9+1+0.5+0.7)/4.
    assert!(close(get("strategy", "a", None).mean.unwrap(), 0.775));
    assert!(close(get("strategy", "b", None).mean.unwrap(), 0.15));
    // The source's table: level x strategy, recovered as shares, none
    // recovering a share too (`0%`, not the recovery time's `never`).
    let effects = tables::main_effects(&sweep, &["recovered".to_string()]);
    let md = tables::effects_markdown(&effects, "recovered", "x");
    assert_eq!(
        md,
        "| x | a | b |\n|---|---|---|\n| 1 | 100% | 0% |\n| 2 | 50% | 0% |\n"
    );
}

#[test]
fn summary_has_wilson_intervals_and_moments() {
    let tmp = write_sweep();
    let sweep = Sweep::load(tmp.path()).unwrap();
    let metrics = tables::main_metrics(&sweep);
    assert!(metrics.contains(&"svc_max_queue".to_string()));
    let s = tables::summary(&sweep, &metrics).unwrap();
    assert_eq!(s.height(), 4);
    let col = |c: &str| {
        s.column(c)
            .unwrap()
            .f64()
            .unwrap()
            .iter()
            .collect::<Vec<_>>()
    };
    // a/x=2: one of two seeds did not recover.
    assert_eq!(
        col("p_not_recovered"),
        [Some(0.0), Some(0.5), Some(1.0), Some(1.0)]
    );
    // Wilson 95% for 1 of 2: (0.0945, 0.9055).
    let (lo, hi) = (
        col("p_not_recovered_low")[1].unwrap(),
        col("p_not_recovered_high")[1].unwrap(),
    );
    assert!(
        (lo - 0.094531).abs() < 1e-5 && (hi - 0.905469).abs() < 1e-5,
        "{lo} {hi}"
    );
    assert_eq!(
        col("svc_max_queue_max"),
        [Some(5.0), Some(9.0), Some(1.0), Some(1.0)]
    );
    assert!(close(
        col("success_rate_after_std")[0].unwrap(),
        0.0707106781186548
    ));
    let text = |c: &str| {
        s.column(c)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.map(str::to_string))
            .collect::<Vec<_>>()
    };
    // 0.9 and 1.0: the t-interval of a success rate stops at 1.
    assert_eq!(col("success_rate_after_ci_high")[0], Some(1.0));
    assert_eq!(
        text("success_rate_after_ci_method")[0].as_deref(),
        Some("t, clipped to [0, 1]")
    );
    // b/x=2: 0.0 in both seeds: no interval, and why.
    assert_eq!(col("success_rate_after_ci_low")[3], None);
    assert_eq!(
        text("success_rate_after_ci_method")[3].as_deref(),
        Some("no seed-to-seed variation observed in 2 seeds")
    );
    // recovered is a yes/no: Wilson, and the exact bound when constant.
    assert_eq!(text("recovered_ci_method")[1].as_deref(), Some("Wilson"));
    // 1 - 0.05^(1/2) = 0.776393 (the rule of three, 3/2, says nothing).
    assert!((col("recovered_unseen_high")[0].unwrap() - 0.776_393).abs() < 1e-6);
    assert_eq!(
        text("p_not_recovered_note")[0].as_deref(),
        Some(
            "recovered in all 2 seeds: P(not recovered) < 0.776 (exact one-sided 95% bound, 1 - 0.05^(1/2))"
        )
    );
    assert_eq!(text("p_not_recovered_note")[1], None);
}

#[test]
fn the_whole_report_is_written() {
    let tmp = write_sweep();
    let dir = tmp.path();
    let report = analysis::write_report(dir).unwrap();
    let md = std::fs::read_to_string(&report.index_md).unwrap();
    assert!(
        md.contains("**Never recovered** (no seed): 2 of 4 points"),
        "{md}"
    );
    assert!(md.contains("Fastest to recover"), "{md}");
    assert!(
        md.contains("No heatmap of P(not recovered): the grid has fewer than two axes"),
        "{md}"
    );
    // PRIM: strategy b holds 4 runs, all not recovered, of the 5 that are
    // not; without that limit the density is 5/8, so the quasi-p-value is
    // P(X >= 4), X ~ Binomial(4, 5/8) = 0.625^4 = 0.153.
    assert!(
        md.contains("Never recovers when `strategy` = b (covers 80% of the runs that never recover; 100% of the runs in this box never recover)."),
        "{md}"
    );
    assert!(
        md.contains("| `strategy` | `strategy` = b | 0.153 | - |"),
        "{md}"
    );
    assert!(
        md.contains("Its limit on `strategy` (quasi-p 0.153) matters little (a quasi-p-value of 0.05 or more: without it the box would be about as dense)."),
        "{md}"
    );
    let html = std::fs::read_to_string(&report.index_html).unwrap();
    assert!(html.contains("<svg") && html.contains("<table>"));
    for f in [
        "summary.parquet",
        "summary.csv",
        "sensitivity.csv",
        "main_effects.parquet",
        "plots/success_rate_0.svg",
        "plots/sensitivity.png",
        "prim_trajectory.csv",
        "prim_limits.parquet",
        "plots/prim_trajectory.svg",
    ] {
        assert!(dir.join("analysis").join(f).exists(), "{f}");
    }
}

#[test]
fn a_level_over_fewer_points_or_runs_says_so() {
    let effect = |level: &str, n: usize, points: usize| tables::Effect {
        dim: "x".to_string(),
        level: level.to_string(),
        strategy: Some("a".to_string()),
        metric: "goodput".to_string(),
        n,
        points,
        mean: Some(0.5),
        ci: None,
        ci_method: None,
        spread: None,
        censored: None,
    };
    // Level 2 lost one of its two points (its runs failed), level 3 one
    // of its four runs (the metric is undefined there).
    let effects = [effect("1", 4, 2), effect("2", 2, 1), effect("3", 3, 2)];
    assert_eq!(
        tables::effects_markdown(&effects, "goodput", "x"),
        "| x | a |\n|---|---|\n| 1 | 0.500 |\n| 2 | 0.500 (1 of 2 points) |\n| 3 | 0.500 (3 of 4 runs) |\n"
    );
}

/// The grid's `[report] metrics` get their main-effect tables after the
/// main metrics: they are what the grid is about.
#[test]
fn the_report_metrics_have_main_effect_tables() {
    let tmp = write_sweep();
    let dir = tmp.path();
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let with = manifest.replacen('{', r#"{"report": {"metrics": ["svc_max_queue"]}, "#, 1);
    std::fs::write(dir.join("manifest.json"), with).unwrap();
    let report = analysis::write_report(dir).unwrap();
    let md = std::fs::read_to_string(&report.index_md).unwrap();
    let heading = "#### `x` x strategy: mean `svc_max_queue`";
    let (main, chosen) = (
        md.find("#### `x` x strategy: mean `success_rate_after`"),
        md.find(heading),
    );
    assert!(main.is_some() && chosen > main, "{md}");
}

/// A metric undefined in some runs: the summary counts the runs behind
/// each mean, and the per-point table says a mean over fewer than the
/// point's runs.
#[test]
fn a_mean_over_some_of_the_runs_says_how_many() {
    let tmp = write_sweep();
    let dir = tmp.path();
    let part = dir.join("runs/part-s0of1-000000.parquet");
    let mut runs = ParquetReader::new(std::fs::File::open(&part).unwrap())
        .finish()
        .unwrap();
    // success_rate_after of a/x=1's second seed unknown.
    let after = [
        Some(0.9),
        None,
        Some(0.5),
        Some(0.7),
        Some(0.2),
        Some(0.4),
        Some(0.0),
        Some(0.0),
    ];
    runs.replace(
        "success_rate_after",
        Column::new("success_rate_after".into(), after.to_vec()),
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(&part).unwrap())
        .finish(&mut runs)
        .unwrap();
    let sweep = Sweep::load(dir).unwrap();
    let s = tables::summary(&sweep, &tables::main_metrics(&sweep)).unwrap();
    let count: Vec<Option<i64>> = s
        .column("success_rate_after_count")
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(count, [Some(1), Some(2), Some(2), Some(2)]);
    let report = analysis::write_report(dir).unwrap();
    let md = std::fs::read_to_string(&report.index_md).unwrap();
    assert!(md.contains("| 0.900 (1 of 2 runs) |"), "{md}");
}
