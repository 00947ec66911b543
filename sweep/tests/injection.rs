//! User text never becomes markup or commands: zip labels in the report's
//! HTML, paths and options in `sweep slurm`'s script.

mod common;
use common::*;
use std::process::Command;

const LABELS: &str = r#"name = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "[x](javascript:alert(3)) *b* _c_"]"#;

fn labelled_grid() -> String {
    format!(
        r#"name = "labels"
scenario = "ch37"
seeds = [1, 2]
[set]
"client.duration_s" = 4
horizon_s = 5
"svc_b.slow.start_s" = 1
[axes]
strategy = ["naive", "protected"]
[[zip]]
{LABELS}
"svc_a.attempt_timeout_s" = [0.2, 0.3, 0.5]
"#
    )
}

#[test]
fn zip_labels_are_text_in_the_html_report() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &labelled_grid());
    let out = tmp.path().join("o");
    let o = sweep(&["run", &grid, "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("analysis/index.html")).unwrap();
    for bad in [
        "<script>alert",
        "<img src=x",
        "href=\"javascript:",
        "onerror=alert(2)>",
    ] {
        assert!(!html.contains(bad), "`{bad}` in index.html");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // Nor emphasis or a link: the label reads as written.
    assert!(!html.contains("<em>b</em>") && !html.contains("<em>c</em>"));
    assert!(html.contains("[x](javascript:alert(3)) *b* _c_"));
    // Every plot is still inlined (the report's own markup), those whose
    // title holds the label's `]` too.
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    let plots = md.matches("](plots/").count();
    assert!(plots > 0);
    assert_eq!(html.matches("<div class=\"plot\"><svg").count(), plots);
    assert!(!html.contains("<img src=\"plots/"));
}

#[test]
fn slurm_script_quotes_every_value_and_refuses_control_characters() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(tmp.path(), &labelled_grid());
    let out = tmp.path().join("out dir; touch pwned");
    let script = slurm_script(&[
        &grid,
        "--tasks",
        "2",
        "--out",
        &out.display().to_string(),
        "--sbatch-arg=--comment=two words",
    ]);
    let dir = out.display().to_string();
    assert!(
        script.contains(&format!("#SBATCH \"--output={dir}/slurm/task-%A_%a.out\"")),
        "{script}"
    );
    assert!(
        script.contains("#SBATCH \"--comment=two words\""),
        "{script}"
    );
    assert!(
        script.contains(&format!("--out '{dir}' --shard")),
        "{script}"
    );
    // bash reads the exec line's --out as one word.
    let exec = script.lines().find(|l| l.starts_with("exec ")).unwrap();
    let words = Command::new("bash")
        .args([
            "-c",
            &format!("printf '%s\\n' {}", &exec[5..].trim_end_matches('\\')),
        ])
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&words.stdout).to_string();
    assert!(words.lines().any(|w| w == dir), "{words}");
    // sbatch expands `%j` in a path: the directory's `%` are doubled.
    let percent = tmp.path().join("q%j");
    let script = slurm_script(&[
        &grid,
        "--tasks",
        "2",
        "--out",
        &percent.display().to_string(),
    ]);
    let dir = tmp.path().join("q%%j").display().to_string();
    assert!(
        script.contains(&format!("--output={dir}/slurm/task-%A_%a.out")),
        "{script}"
    );

    // A backslash turns sbatch's replacement off in the whole pattern.
    let o = sweep(&["slurm", &grid, "--tasks", "2", "--out", "back\\slash"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_says(
        &stderr(&o),
        &[
            "--out `",
            "back\\slash` contains a backslash: sbatch then replaces no %A / %a",
        ],
    );
    for (flag, value) in [
        ("--out", "x\nrm -rf ~"),
        ("--sbatch-arg", "--time=10\nrm -rf ~"),
    ] {
        let arg = format!("{flag}={value}");
        let o = sweep(&["slurm", &grid, "--tasks", "2", &arg]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("control character"), "{}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{}", stderr(&o));
    }
}
