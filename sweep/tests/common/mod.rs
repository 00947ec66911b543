//! Helpers shared by the end-to-end tests of the `sweep` binary.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs the binary with `args`.
pub fn sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(args)
        .output()
        .expect("sweep runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// `sweep slurm ARGS...` and the text of the script it wrote (its path is
/// the last line it prints).
pub fn slurm_script(args: &[&str]) -> String {
    let mut all = vec!["slurm"];
    all.extend(args);
    let o = sweep(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = stdout(&o).lines().last().unwrap().to_string();
    std::fs::read_to_string(&path).unwrap()
}

/// Asserts that `err` says each of `expected`.
pub fn assert_says(err: &str, expected: &[&str]) {
    for e in expected {
        assert!(err.contains(e), "missing `{e}` in:\n{err}");
    }
}

/// Asserts that `o` failed and its error output says each of `expected`.
pub fn assert_fails(o: &Output, expected: &[&str]) {
    assert!(!o.status.success(), "should fail:\n{}", stderr(o));
    assert_says(&stderr(o), expected);
}

pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
}

/// Writes `text` as `dir/grid.toml`; returns its path.
pub fn write_grid(dir: &Path, text: &str) -> String {
    write_grid_as(dir, "grid.toml", text)
}

/// Writes `text` as `dir/file`; returns its path.
pub fn write_grid_as(dir: &Path, file: &str, text: &str) -> String {
    let p = dir.join(file);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A grid of 8 points of short runs (4 s of arrivals) with `seeds` seeds.
pub fn small_grid(seeds: u32) -> String {
    format!(
        r#"name = "small"
scenario = "ch37"
seeds = {{ first = 1, count = {seeds} }}
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
"#
    )
}

/// Asserts that two sweep outputs hold the same runs table (`sweep compare`).
pub fn assert_same_runs(a: &Path, b: &Path) {
    let o = sweep(&[
        "compare",
        &a.display().to_string(),
        &b.display().to_string(),
    ]);
    assert_ok(&o);
}

/// Runs `grid` quietly into `out` and returns its report's `index.md`.
pub fn run_for_report(grid: &str, out: &Path) -> String {
    assert_ok(&sweep(&[
        "run",
        grid,
        "--out",
        &out.display().to_string(),
        "-q",
    ]));
    std::fs::read_to_string(out.join("analysis/index.md")).unwrap()
}

/// Runs `sweep ARGS`, sends it SIGINT once a runs part is in `out/runs`
/// (the next step or round is under way), and returns what it printed;
/// it must have stopped as `run` does: exit 130, how to resume.
pub fn interrupt_after_first_part<S: AsRef<std::ffi::OsStr>>(args: &[S], out: &Path) -> Output {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sweep"))
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::fs::read_dir(out.join("runs")).map_or(0, |d| d.count()) < 1 {
        assert!(std::time::Instant::now() < deadline, "no part written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert_says(&err, &["interrupted:", "Resume with", "sweep refine"]);
    o
}
