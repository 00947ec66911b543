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
"client.duration_s" = 10
horizon_s = 12
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
