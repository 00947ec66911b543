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
    // Each as a block named by its alt text, outside any paragraph.
    let inlined: Vec<&str> = (html.match_indices("<div class=\"plot\" role=\"img\" aria-label=\""))
        .map(|(i, _)| &html[i..])
        .collect();
    assert_eq!(inlined.len(), plots);
    for div in inlined {
        let open = &div[..div.find('>').unwrap()];
        assert!(div[open.len() + 1..].starts_with("<svg"), "{open}");
        assert!(
            !open.ends_with("aria-label=\"\""),
            "a plot without its name: {open}"
        );
    }
    assert!(!html.contains("<p><div class=\"plot\""));
    assert!(!html.contains("<img src=\"plots/"));
}

/// The report's other user texts are text too: a label in the sentence
/// that says a metric was skipped, a published figure's note and source,
/// and a scenario path with backticks in the provenance line.
#[test]
fn skip_reasons_reference_notes_and_paths_are_text_in_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = tmp.path().join("s`x`");
    std::fs::create_dir(&scenarios).unwrap();
    let text = sim_core::resolve("ch37", &[]).unwrap().to_toml();
    std::fs::write(scenarios.join("c`h.toml"), text).unwrap();
    let grid = write_grid(
        tmp.path(),
        r#"name = "texts"
scenario = "s`x`/c`h.toml"
seeds = [1, 2]
[set]
"client.duration_s" = 8
horizon_s = 10
"svc_b.slow.start_s" = 2
"client.rate_per_s" = 200
[axes]
"svc_b.slow.duration_s" = [1, 3]
[[zip]]
name = ["plain", "<img src=x onerror=alert(1)> [link](http://evil.example) **bold**"]
"svc_a.attempt_timeout_s" = [0.2, 0.5]
"svc_a.max_retries" = [2, 1]
[report]
reference_source = "Source <b>bold</b> [l](http://src) & *x*"
[[report.reference]]
point = "svc_b.slow.duration_s=3"
metric = "goodput"
published = 1
note = "<script>x</script> [l](http://e) *b*"
"#,
    );
    let out = tmp.path().join("o");
    let o = sweep(&["run", &grid, "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("analysis/index.md")).unwrap();
    assert!(
        md.contains("Skipped: undefined at point"),
        "no metric skipped: the test shows nothing"
    );
    let html = std::fs::read_to_string(out.join("analysis/index.html")).unwrap();
    for bad in [
        "<img src=x",
        "<strong>bold</strong>",
        "<b>bold</b>",
        "<script>x",
        "<em>b</em>",
        "<em>x</em>",
        "href=\"http://evil.example",
        "href=\"http://e\"",
        "href=\"http://src",
    ] {
        assert!(!html.contains(bad), "`{bad}` in index.html");
    }
    assert!(html.contains("[link](http://evil.example) **bold**"));
    assert!(html.contains("Source &lt;b&gt;bold&lt;/b&gt; [l](http://src) &amp; *x*"));
    // The path in one code span, backticks and all.
    let path = format!("<code>{}</code>", scenarios.join("c`h.toml").display());
    assert!(html.contains(&path), "{}", &html[..html.len().min(3000)]);
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
