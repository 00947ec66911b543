//! The command-line conventions of `sweep`: overrides of a grid on the
//! command line, quiet and JSON output, shell completions, help text and
//! the parameters' defaults.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn set_and_axis_flags_make_the_grid_a_file_would_and_a_resume_must_repeat_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid_as(dir, "grid.toml", &small_grid(1));
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
    assert_says(&stderr(&o), &["16 runs (16 points x 1 seed)"]);

    // The same grid written as a file has the same runs, row for row.
    let edited = small_grid(1)
        .replace("horizon_s = 5", "horizon_s = 6")
        .replace(
            "[16, \"unbounded\"]",
            "[8, \"unbounded\"]\ndispatch = [\"fifo\", \"reply_first\"]",
        );
    let file = write_grid_as(dir, "edited.toml", &edited);
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
            "16 points x 1 seed = 16 runs",
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
    let grid = write_grid_as(tmp.path(), "grid.toml", &small_grid(1));
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
            "--axis",
            "svc_b.attempt_timeout_s=0.5,0.50",
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
                "--axis strategy=fastest: unknown strategy `fastest`",
                "--axis client.rate_per_s=\"x\": expected a number",
                "--axis svc_b.attempt_timeout_s=0.5,0.5: duplicate level: level 0.5 appears twice",
            ],
        );
    }
}

#[test]
fn quiet_runs_say_only_the_results_and_json_summarises_run_and_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let grid = write_grid_as(dir, "grid.toml", &small_grid(1));
    let out = dir.join("quiet").display().to_string();
    let o = sweep(&["run", &grid, "--out", &out, "--quiet", "--no-report"]);
    assert!(o.status.success());
    assert_eq!(stderr(&o), "", "no progress and no notes");
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("results: ") && lines[0].contains("(8 ok, 0 failed)"));

    // A failed run: still said (an error), and the exit status is 1.
    let out = dir.join("json").display().to_string();
    let o = sweep(&[
        "run",
        &grid,
        "--out",
        &out,
        "--json",
        "--quiet",
        "--inject-panic",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    // Named with what reproduces it: its point's levels and its seed.
    assert_says(
        &stderr(&o),
        &[
            "1 run failed:",
            r#"  run 3 (point 3: client.duration_s=4 horizon_s=5 svc_b.slow.start_s=1 strategy="naive" svc_b.queue_cap="unbounded" svc_a.attempt_timeout_s=0.5 svc_a.max_retries=1, seed 1): panicked: injected panic (test) (at sweep/src/runner.rs:"#,
        ],
    );
    let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON");
    assert_eq!(summary["status"], "complete");
    assert_eq!(summary["grid"], "small");
    assert_eq!(summary["planned"], 8);
    assert_eq!(summary["ran"], 8);
    assert_eq!(summary["ok"], 7);
    assert_eq!(summary["failed"], 1);
    assert_eq!(summary["failures"][0]["run_index"], 3);
    assert_eq!(summary["failures"][0]["point"], 3);
    assert_eq!(summary["failures"][0]["seed"], 1);
    assert!((summary["failures"][0]["levels"].as_str().unwrap()).contains(r#"strategy="naive""#));
    assert!(
        summary["failures"][0]["error"]
            .as_str()
            .unwrap()
            .contains("injected panic")
    );
    assert_eq!(summary["paths"]["manifest"], format!("{out}/manifest.json"));
    assert_eq!(
        summary["paths"]["report"],
        format!("{out}/analysis/index.md")
    );
    assert!(summary["timings"]["wall_s"].as_f64().unwrap() > 0.0);
    assert!(summary["timings"]["threads"].as_u64().unwrap() >= 1);

    // Run again: nothing to do, said in JSON too; the results still hold a
    // failed run, so the status is 1 as it was, with or without --resume.
    let o = sweep(&["run", &grid, "--out", &out, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_says(&stderr(&o), &["1 of its 8 runs failed"]);
    let resumed = sweep(&["run", &grid, "--out", &out, "--resume", "--quiet"]);
    assert_eq!(resumed.status.code(), Some(1), "{}", stderr(&resumed));
    let again: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(again["status"], "already_complete");
    assert_eq!(again["ran"], 0);
    assert_eq!(again["failed"], 1);
    // The failed run is listed as when it ran.
    assert_eq!(again["failures"], summary["failures"]);

    let o = sweep(&["plan", &grid, "--json", "--calibrate", "2", "--jobs", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON");
    assert_eq!(plan["points"], 8);
    assert_eq!(plan["runs"], 8);
    assert_eq!(plan["seeds"], serde_json::json!([1]));
    assert_eq!(plan["set"]["horizon_s"], 5);
    assert_eq!(plan["axes"][0]["paths"], serde_json::json!(["strategy"]));
    assert_eq!(
        plan["axes"][2]["paths"],
        serde_json::json!(["svc_a.attempt_timeout_s", "svc_a.max_retries"])
    );
    assert_eq!(
        plan["axes"][1]["levels"],
        serde_json::json!([[16], ["unbounded"]])
    );
    assert_eq!(plan["estimate"]["threads"], 3);
    // The 2 spread points, and the cheapest and dearest if they are others.
    let calibrated = plan["estimate"]["calibration_runs"].as_u64().unwrap();
    assert!((2..=4).contains(&calibrated), "{calibrated}");
    let (low, high) = (
        plan["estimate"]["wall_s_low"].as_f64().unwrap(),
        plan["estimate"]["wall_s_high"].as_f64().unwrap(),
    );
    assert!(0.0 < low && low <= high);
    assert!(plan["estimate"]["output_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn completions_are_printed_for_bash_zsh_and_fish() {
    for (shell, marker) in [
        ("bash", "complete -F _sweep"),
        ("zsh", "#compdef sweep"),
        ("fish", "complete -c sweep"),
    ] {
        let o = sweep(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: no `{marker}`");
        for command in ["run", "plan", "params", "completions"] {
            assert!(
                script.contains(command),
                "{shell}: `{command}` is not completed"
            );
        }
        for flag in ["set", "axis", "quiet", "json"] {
            let written = if shell == "fish" {
                format!("-l {flag}")
            } else {
                format!("--{flag}")
            };
            assert!(
                script.contains(&written),
                "{shell}: `--{flag}` is not completed"
            );
        }
    }
    let o = sweep(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert_says(&stderr(&o), &["possible values: bash"]);

    // Bash completes subcommands and flags with it.
    let bash = Path::new("/bin/bash");
    if bash.exists() {
        let script = format!(
            r#"source <("{bin}" completions bash)
COMP_WORDS=(sweep ru); COMP_CWORD=1; _sweep sweep ru sweep; echo "${{COMPREPLY[@]}}"
COMP_WORDS=(sweep run g.toml --qu); COMP_CWORD=3; _sweep sweep --qu g.toml; echo "${{COMPREPLY[@]}}""#,
            bin = env!("CARGO_BIN_EXE_sweep")
        );
        let o = Command::new(bash).args(["-c", &script]).output().unwrap();
        assert_eq!(stdout(&o), "run\n--quiet\n", "{}", stderr(&o));
    }
}

#[test]
fn help_documents_every_argument_and_the_exit_statuses() {
    let o = sweep(&["--help"]);
    assert!(o.status.success());
    assert_says(
        &stdout(&o),
        &[
            "Exit status:",
            "0        success, or nothing to do",
            "1        some runs failed",
            "2        bad input",
            "128+N    stopped by signal N",
            "completions",
        ],
    );
    let o = sweep(&["compare", "--help"]);
    assert_says(
        &stdout(&o),
        &[
            "<DIR_A>  A sweep's output directory",
            "<DIR_B>  The output directory to compare it with",
        ],
    );
    let o = sweep(&["one", "--help"]);
    assert_says(
        &stdout(&o),
        &["--seed <SEED>          Seed of the run's random streams"],
    );
    // Every option of every subcommand has a line of help after its name.
    for command in [
        "run",
        "plan",
        "one",
        "params",
        "merge",
        "report",
        "compare",
        "refine",
        "slurm",
        "completions",
    ] {
        let o = sweep(&[command, "--help"]);
        assert!(o.status.success(), "{command}");
        for line in stdout(&o).lines().filter(|l| l.starts_with("  ")) {
            let spec = line.trim_start();
            let help = spec.split_once("  ").map(|(_, h)| h.trim()).unwrap_or("");
            assert!(
                !help.is_empty() && !help.starts_with('['),
                "sweep {command}: `{spec}` has no help"
            );
        }
    }
}

#[test]
fn params_shows_each_path_s_default_by_tier() {
    let o = sweep(&["params"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let line = |path: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{path} ")))
            .unwrap_or_else(|| panic!("no `{path}` in:\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        line("horizon_s").starts_with("horizon_s number 70.0 "),
        "{}",
        line("horizon_s")
    );
    assert!(line("svc_b.slots").starts_with("svc_b.slots integer 16 >= 1 Concurrent"));
    assert!(line("svc_b.queue_cap").contains("\"unbounded\" >= 0, \"unbounded\" Longest queue"));
    assert!(line("svc_b.slow.factor").starts_with("svc_b.slow.factor number 10.0 "));
    assert!(line("svc_a.max_retries").starts_with("svc_a.max_retries integer"));
    assert!(line("client.rate_per_s").starts_with("client.rate_per_s number 400.0 "));
    // Grouped: the scenario's own paths, the client, then each tier in order.
    assert!(text.starts_with("path "));
    assert!(text.lines().nth(2).unwrap().starts_with("strategy "));
    let headers: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(headers, ["[client]", "[gateway]", "[svc_a]", "[svc_b]"]);
    let at = |s: &str| text.find(s).unwrap();
    assert!(at("[svc_b]") < at("\nsvc_b.slots ") && at("[svc_a]") < at("\nsvc_a.slots "));
    assert!(at("\nsvc_a.slots ") < at("[svc_b]"));

    // Another scenario's values are its defaults.
    let tmp = tempfile::tempdir().unwrap();
    let show = sweep(&["scenario", "show", "ch37", "--set", "svc_b.slots=40"]);
    let file = write_grid_as(tmp.path(), "s.toml", &stdout(&show));
    let o = sweep(&["params", "--scenario", &file]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("svc_b.slots"));
    let slots = stdout(&o)
        .lines()
        .find(|l| l.trim_start().starts_with("svc_b.slots "))
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    assert_eq!(slots, "40");
    // The Markdown page is unchanged.
    let o = sweep(&["params", "--markdown"]);
    assert!(stdout(&o).starts_with("# Parameter paths"));
}

#[test]
fn release_builds_carry_no_debug_info_and_profiling_builds_line_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let manifest: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    let profile = |name: &str| manifest["profile"][name].as_table().unwrap().clone();
    let release = profile("release");
    assert!(
        release
            .get("debug")
            .is_none_or(|d| d.as_bool() == Some(false)
                || d.as_str() == Some("none")
                || d.as_integer() == Some(0)),
        "release: {release:?}"
    );
    let profiling = profile("profiling");
    assert_eq!(profiling["inherits"].as_str(), Some("release"));
    assert_eq!(profiling["debug"].as_str(), Some("line-tables-only"));
    // The bench profile stays a profile cargo knows (no `inherits` of its own).
    let bench = profile("bench");
    assert!(bench.get("inherits").is_none());
}
