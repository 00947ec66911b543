//! The command-line conventions of `sweep`: overrides of a grid on the
//! command line, quiet and JSON output, shell completions, help text and
//! the parameters' defaults.

use std::path::Path;
use std::process::{Command, Output};

fn sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(args)
        .output()
        .expect("sweep runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn assert_says(text: &str, expected: &[&str]) {
    for e in expected {
        assert!(text.contains(e), "missing `{e}` in:\n{text}");
    }
}

/// A grid of short runs (4 s of arrivals), one seed.
const SMALL: &str = r#"name = "small"
scenario = "ch37"
seeds = [1]
[set]
"client.duration_s" = 4
horizon_s = 5
"svc_b.slow.start_s" = 1
[axes]
strategy = ["naive", "protected"]
"svc_b.queue_cap" = [16, "unbounded"]
[[zip]]
"svc_a.attempt_timeout_s" = [0.2, 0.5]
"svc_a.max_retries" = [2, 1]
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn set_and_axis_flags_make_the_grid_a_file_would_and_a_resume_must_repeat_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write(dir, "grid.toml", SMALL);
    let flags = [
        "--set",
        "horizon_s=6",
        "--axis",
        "svc_b.queue_cap=8,unbounded",
        "--axis",
        "dispatch=fifo,reply_first",
    ];
    let out = dir.join("flags").display().to_string();
    let mut args = vec!["run", &grid, "--out", &out, "--no-report"];
    args.extend(flags);
    let o = sweep(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_says(&stderr(&o), &["16 runs (16 points x 1 seeds)"]);

    // The same grid written as a file has the same runs, row for row.
    let edited = SMALL.replace("horizon_s = 5", "horizon_s = 6").replace(
        "[16, \"unbounded\"]",
        "[8, \"unbounded\"]\ndispatch = [\"fifo\", \"reply_first\"]",
    );
    let file = write(dir, "edited.toml", &edited);
    let out_file = dir.join("file").display().to_string();
    assert!(
        sweep(&["run", &file, "--out", &out_file, "--no-report"])
            .status
            .success()
    );
    let o = sweep(&["compare", &out, &out_file]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));

    // `plan` shows them and says how to run the same grid.
    let mut plan = vec!["plan", &grid, "--calibrate", "1"];
    plan.extend(flags);
    let o = sweep(&plan);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_says(
        &stdout(&o),
        &[
            "set   horizon_s = 6",
            "axis  svc_b.queue_cap (2 levels): 8, \"unbounded\"",
            "axis  dispatch (2 levels): \"fifo\", \"reply_first\"",
            "16 points x 1 seeds = 16 runs",
            "sweep run ",
            " --set 'horizon_s=6' --axis 'svc_b.queue_cap=8,unbounded'",
        ],
    );

    // The same flags again: complete. Others, or none: refused like an edited grid.
    let o = sweep(&args);
    assert!(o.status.success());
    assert_says(
        &stderr(&o),
        &["already holds the complete results of this grid"],
    );
    let o = sweep(&[
        "run",
        &grid,
        "--out",
        &out,
        "--resume",
        "--no-report",
        "--set",
        "horizon_s=7",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(
        &stderr(&o),
        &[
            "holds results of an earlier version of grid `small`, and the grid changed since: ",
            "axes.\"svc_b.queue_cap\": [8, \"unbounded\"] -> [16, \"unbounded\"]",
            "axes.dispatch = [\"fifo\", \"reply_first\"] removed",
            "set.horizon_s: 6 -> 7",
        ],
    );
    let o = sweep(&["run", &grid, "--out", &out, "--resume", "--no-report"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(&stderr(&o), &["set.horizon_s: 6 -> 5"]);
}

#[test]
fn bad_set_and_axis_values_are_all_reported_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write(tmp.path(), "grid.toml", SMALL);
    for command in ["run", "plan"] {
        let o = sweep(&[
            command,
            &grid,
            "--set",
            "svc_b.queue_cpa=3",
            "--set",
            "horizon_s",
            "--axis",
            "svc_a.max_retries=1,2",
            "--axis",
            "strategy=naive,fastest",
            "--axis",
            "svc_b.slots=",
            "--axis",
            "client.rate_per_s=[1, \"x\"]",
            "--axis",
            "svc_b.queue_cpa=1,2",
        ]);
        assert_eq!(o.status.code(), Some(2), "{command}");
        assert_says(
            &stderr(&o),
            &[
                "error: invalid grid:",
                "--set horizon_s: expected PATH=VALUE",
                "--axis svc_a.max_retries=1,2: `svc_a.max_retries` moves with other paths in the grid's zip[0]",
                "--axis svc_b.slots=: empty level",
                "--axis svc_b.queue_cpa=1,2: `svc_b.queue_cpa` is given more than once on the command line",
                "--set svc_b.queue_cpa=3: unknown parameter; did you mean `svc_b.queue_cap`?",
                "--axis strategy=\"fastest\": unknown strategy `fastest`",
                "--axis client.rate_per_s=\"x\": expected a number",
            ],
        );
    }
}
