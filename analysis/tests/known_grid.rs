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
    // t(0.975, 1) = 12.7062 -> half-width 12.7062 * 0.0707107 / sqrt(2) = 0.635310.
    let e = get("x", "1", Some("a"));
    assert_eq!(e.n, 2);
    assert!(close(e.mean.unwrap(), 0.95));
    let (lo, hi) = e.ci.unwrap();
    assert!(
        (hi - 0.95 - 0.635310).abs() < 1e-5 && (0.95 - lo - 0.635310).abs() < 1e-5,
        "{lo} {hi}"
    );
    assert!(close(get("x", "2", Some("a")).mean.unwrap(), 0.6));
    assert!(close(get("x", "1", Some("b")).mean.unwrap(), 0.3));
    assert!(close(get("x", "2", Some("b")).mean.unwrap(), 0.0));
    // The strategy dimension itself is not split: a = (0.9+1+0.5+0.7)/4.
    assert!(close(get("strategy", "a", None).mean.unwrap(), 0.775));
    assert!(close(get("strategy", "b", None).mean.unwrap(), 0.15));
    // The source's table: level x strategy, recovered as shares or "never".
    let effects = tables::main_effects(&sweep, &["recovered".to_string()]);
    let md = tables::effects_markdown(&effects, "recovered", "x");
    assert_eq!(
        md,
        "| x | a | b |\n|---|---|---|\n| 1 | 100% | never |\n| 2 | 50% | never |\n"
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
    let html = std::fs::read_to_string(&report.index_html).unwrap();
    assert!(html.contains("<svg") && html.contains("<table>"));
    for f in [
        "summary.parquet",
        "summary.csv",
        "sensitivity.csv",
        "main_effects.parquet",
        "plots/success_rate_0.svg",
        "plots/sensitivity.png",
    ] {
        assert!(dir.join("analysis").join(f).exists(), "{f}");
    }
}
