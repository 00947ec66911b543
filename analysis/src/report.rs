//! The report people read in the morning: `analysis/index.md` (and a
//! self-contained `index.html`), with the tables and plots it links.

use crate::error::{IoError, ReportError};
use crate::load::Sweep;
use crate::part::{self, Part};
use crate::plots::{self, Band, BandPoint, HeatPanel, IndexBars, Shade, ShadeKind};
use crate::tables::{self, Effect, MetricSensitivity};
use polars::prelude::*;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Time plots drawn at most (one per combination of the non-line axes).
const MAX_SLICES: usize = 6;

/// Which part of the page a plot belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// What happened: the map of P(not recovered).
    Map,
    /// What happened: recovery time against a numeric axis.
    Recovery,
    /// What happened: success rate over time.
    Success,
    /// What happened: queue length over time (collapsed).
    Queue,
    /// What happened: offered load against capacity at the bottleneck.
    Load,
    /// What happened: the latency distribution.
    Latency,
    /// Why: the sensitivity indices.
    Sensitivity,
}

/// A plot written under `plots/`, with the sentence that says why it is
/// there.
#[derive(Debug, Clone)]
struct PlotFile {
    title: String,
    stem: String,
    caption: String,
    group: Group,
}

pub struct Report {
    pub index_md: PathBuf,
    pub index_html: PathBuf,
    /// What a sweep not yet complete holds ([`partial_runs`]).
    pub partial: Option<String>,
    /// The per-point headline table (Markdown), for a terminal.
    pub headline: String,
    /// Whose users its user-level figures are ([`users_note`]).
    pub users: Option<String>,
    /// The tables written (their `.csv`; each has a `.parquet` beside it).
    pub tables: Vec<PathBuf>,
}

/// The runs of a sweep not yet complete ("338 of the 480 planned runs"),
/// or `None` when every planned run is written.
pub fn partial_runs(sweep: &Sweep) -> Option<String> {
    let m = &sweep.manifest;
    let written = sweep.ok().len() as u64;
    // A refinement plans as it goes: unfinished, it has no planned count.
    let searching = m.planned == 0 && (m.status == "running" || m.status == "interrupted");
    if searching {
        Some(format!(
            "the {written} runs of a search that stopped before its end"
        ))
    } else if written < m.planned {
        Some(format!("{written} of the {} planned runs", m.planned))
    } else {
        None
    }
}

/// Writes everything under `OUT_DIR/analysis/`.
pub fn write(out_dir: &Path) -> Result<Report, ReportError> {
    let full = Sweep::load(out_dir)?;
    // A sampled design's dimension is no factorial axis: the factorial
    // sections read the categorical axes only (see `Sweep::without_design`).
    let factorial = full.without_design();
    let sampled = factorial.is_some();
    let sweep = factorial.as_ref().unwrap_or(&full);
    let analysis = out_dir.join("analysis");
    // Written aside and moved into place at the end, so that a report
    // killed halfway leaves no file of its own unlisted (see `publish`),
    // and the report before it stands until this one replaces it.
    let dir = analysis.join(STAGING);
    gone(&dir, std::fs::remove_dir_all(&dir))?;
    let plot_dir = dir.join("plots");
    std::fs::create_dir_all(&plot_dir).map_err(IoError::at(&plot_dir))?;
    let metrics = tables::main_metrics(sweep);

    let summary = tables::summary(sweep, &metrics)?;
    // Written with the runs table's types; read on as text below.
    let mut written = summary.clone();
    as_runs_categoricals(sweep, &mut written)?;
    write_frame(&dir, "summary", &mut written)?;
    let headline = headline(sweep, &summary)?;
    let users = users_note(&sweep.manifest);
    let above = users.as_ref().map_or(String::new(), |u| format!("{u}\n\n"));
    write_text(&dir.join("summary.md"), &format!("{above}{headline}"))?;

    // A sampled design has its own indices (the design section); over the
    // categorical axes alone, with a whole design as each point's runs and
    // one seed for all, the factorial ANOVA and main effects would only
    // restate the per-point table.
    let (sens, effects) = if sampled {
        (Vec::new(), Vec::new())
    } else {
        (
            tables::sensitivity(sweep, &metrics),
            tables::main_effects(sweep, &metrics),
        )
    };
    let sens_md = sensitivity_markdown(&sens, sweep.has_trigger());
    let effects_md = effects_markdown(sweep, &effects);
    if !sampled {
        let mut sens_df = tables::sensitivity_frame(&sens)?;
        write_frame(&dir, "sensitivity", &mut sens_df)?;
        write_text(&dir.join("sensitivity.md"), &sens_md)?;
        let mut effects_df = tables::effects_frame(&effects)?;
        write_frame(&dir, "main_effects", &mut effects_df)?;
        write_text(&dir.join("main_effects.md"), &effects_md)?;
    }

    let mut plot_notes = Vec::new();
    let mut plot_files = Vec::new();
    if sampled {
        plot_notes.push(sampled_note(sweep));
    } else {
        heatmap(sweep, &plot_dir, &mut plot_files, &mut plot_notes)?;
        recovery_plot(sweep, &plot_dir, &mut plot_files, &mut plot_notes)?;
    }
    time_plots(sweep, &plot_dir, &mut plot_files, &mut plot_notes)?;
    load_plots(sweep, &plot_dir, &mut plot_files)?;
    latency_plots(sweep, &plot_dir, &mut plot_files)?;
    // A metric the same in every run has indices of 0 and no interval: an
    // empty panel. It is left out, and named under the figure.
    let constant: Vec<&str> = (sens.iter())
        .filter(|m| m.result.is_ok() && same_in_every_run(sweep, &m.metric))
        .map(|m| m.metric.as_str())
        .collect();
    let bars: Vec<IndexBars> = sens
        .iter()
        .filter(|m| !constant.contains(&m.metric.as_str()))
        .filter_map(|m| {
            let s = m.result.as_ref().ok()?;
            Some(IndexBars {
                metric: m.metric.clone(),
                axes: s.axes.iter().map(|a| a.axis.clone()).collect(),
                s1: s.axes.iter().map(|a| a.s1).collect(),
                s1_conf: s.axes.iter().map(|a| a.s1_conf).collect(),
                st: s.axes.iter().map(|a| a.st).collect(),
                st_conf: s.axes.iter().map(|a| a.st_conf).collect(),
            })
        })
        .collect();
    let constant_note = constant_metrics_note(&constant);
    if bars.is_empty() {
        if !sampled && constant.is_empty() {
            plot_notes
                .push("No sensitivity bar chart: no metric has indices (the reasons are in the sensitivity tables below).".to_string());
        } else if !sampled {
            plot_notes.push(format!(
                "No sensitivity bar chart: no metric has indices that vary. {constant_note}"
            ));
        }
    } else {
        plots::sensitivity_bars(
            &plot_dir.join("sensitivity"),
            "Sensitivity: first-order (S1) and total (ST) indices per axis",
            &bars,
        )?;
        plot_files.push(PlotFile {
            title: "Sensitivity indices".to_string(),
            stem: "sensitivity".to_string(),
            caption: constant_note,
            group: Group::Sensitivity,
        });
    }

    let design = design_section(&full, &dir, &metrics)?;
    let md = index_markdown(
        sweep,
        &summary,
        &headline,
        &sens,
        &sens_md,
        &effects_md,
        &plot_files,
        &plot_notes,
        design.as_ref(),
    )?;
    let md = match crate::why::section::write(sweep, &dir)? {
        // At the end of "What happened": before the section after it (a
        // "Why", or the tables of a design that has none).
        Some(why) => {
            let after = md.find("\n## What happened").map_or(0, |at| at + 1);
            let at = md[after..].find("\n## ").map_or(md.len(), |i| after + i);
            format!(
                "{}\n### Why it did not recover\n\n{why}{}",
                &md[..at],
                &md[at..]
            )
        }
        None => md,
    };
    let boundary = crate::boundary_section::section(&full, &dir, &plot_dir)?;
    // A boundary search's answer is "In short" (the per-category words of
    // a sampled grid would be about whole designs).
    let md = match (
        &boundary,
        md.find("## In short\n\n"),
        md.find("\n## What happened"),
    ) {
        (Some(b), Some(from), Some(to)) => {
            let from = from + "## In short\n\n".len();
            format!("{}{}{}", &md[..from], b.in_short, &md[to..])
        }
        _ => md,
    };
    let discovery =
        boundary.map_or(String::new(), |b| b.body) + &discovery(&full, &dir, &plot_dir)?;
    // A "why" of its own: before the tables.
    let md = match md.find("\n## Tables") {
        Some(at) => format!(
            "{}\n{}{}",
            &md[..at],
            discovery.trim_start_matches('\n'),
            &md[at..]
        ),
        None => md + &discovery,
    };
    write_text(&dir.join("index.md"), &md)?;
    let mut inlined: Vec<String> = plot_files.iter().map(|p| p.stem.clone()).collect();
    inlined.push("boundary".to_string());
    inlined.push(PRIM_PLOT.to_string());
    inlined.push(crate::boundary_section::PLOT.to_string());
    // The report's plots, and those `sweep refine` drew beside them.
    let plot_dirs = [plot_dir.clone(), analysis.join("plots")];
    write_text(&dir.join("index.html"), &html(&md, &plot_dirs, &inlined))?;
    publish(&dir, &analysis)?;
    let tables = ["summary", "sensitivity", "main_effects"]
        .into_iter()
        .filter(|t| !sampled || *t == "summary")
        .chain(design.iter().flat_map(|d| d.tables.iter().copied()))
        .map(|t| analysis.join(format!("{t}.csv")))
        .collect();
    Ok(Report {
        index_md: analysis.join("index.md"),
        index_html: analysis.join("index.html"),
        partial: partial_runs(&full),
        headline,
        users,
        tables,
    })
}

/// Lists the files a report wrote under `analysis/`, so that the next one
/// removes them first: a plot of a slice or metric no longer drawn would
/// otherwise stay beside the new report, from other data.
pub const REPORT_FILES: &str = ".report-files";

/// The folder under `analysis/` a report is written in before its files
/// are moved into place; only the report creates it.
const STAGING: &str = ".report-in-progress";

/// Removes the report in `dir` (a sweep's `analysis/`): the files its list
/// names, and nothing else of `analysis/` (a name that leaves `dir` is
/// skipped), the list, and what a report killed before it was published
/// left in its staging folder. What `run --force` deletes of a report, too.
pub fn remove_report(dir: &Path) -> Result<(), IoError> {
    if !dir.is_dir() {
        return Ok(());
    }
    if let Ok(text) = std::fs::read_to_string(dir.join(REPORT_FILES)) {
        for name in text.lines().map(Path::new).filter(|n| inside(n)) {
            let path = dir.join(name);
            gone(&path, std::fs::remove_file(&path))?;
        }
    }
    let list = dir.join(REPORT_FILES);
    gone(&list, std::fs::remove_file(&list))?;
    let staging = dir.join(STAGING);
    gone(&staging, std::fs::remove_dir_all(&staging))
}

/// Whether a name the report's list holds stays inside the folder it is
/// read in (no `..`, no root): an edited list deletes nothing elsewhere.
fn inside(name: &Path) -> bool {
    (name.components()).all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// The outcome of removing `path`: one already absent is gone too.
fn gone(path: &Path, removed: std::io::Result<()>) -> Result<(), IoError> {
    match removed {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(IoError::at(path)(e)),
        _ => Ok(()),
    }
}

/// Moves the report written in `staging` into `dir` over the one before
/// it, each file replaced in one rename, so that a kill at any moment
/// leaves a whole page (the old or the new); the list names the old files
/// and the new while they move, so that none is left unlisted, and the
/// next report (or `run --force`) removes exactly those. The old report's
/// files the new one lacks go last.
fn publish(staging: &Path, dir: &Path) -> Result<(), ReportError> {
    let files = files_under(staging)?;
    let list_path = dir.join(REPORT_FILES);
    let old: Vec<PathBuf> = std::fs::read_to_string(&list_path)
        .map(|t| t.lines().map(PathBuf::from).collect())
        .unwrap_or_default();
    let listing = |names: &mut dyn Iterator<Item = &PathBuf>| -> String {
        names.map(|p| format!("{}\n", p.display())).collect()
    };
    let stale: Vec<&PathBuf> = old.iter().filter(|p| !files.contains(p)).collect();
    write_text(
        &list_path,
        &listing(&mut files.iter().chain(stale.iter().copied())),
    )?;
    for rel in &files {
        let to = dir.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(IoError::at(parent))?;
        }
        std::fs::rename(staging.join(rel), &to).map_err(IoError::at(&to))?;
    }
    for rel in stale.into_iter().filter(|rel| inside(rel)) {
        let path = dir.join(rel);
        gone(&path, std::fs::remove_file(&path))?;
    }
    write_text(&list_path, &listing(&mut files.iter()))?;
    Ok(std::fs::remove_dir_all(staging).map_err(IoError::at(staging))?)
}

/// Every file under `dir`, relative to it, in order.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).map_err(IoError::at(&d))? {
            let path = entry.map_err(IoError::at(&d))?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                files.push(rel.to_path_buf());
            }
        }
    }
    files.sort();
    Ok(files)
}

fn write_text(path: &Path, text: &str) -> Result<(), ReportError> {
    Ok(std::fs::write(path, text).map_err(IoError::at(path))?)
}

/// The string axes of `df` as categoricals, as the runs table has them,
/// so that a notebook joins the two on them (polars refuses a join of a
/// categorical key with a string one).
fn as_runs_categoricals(sweep: &Sweep, df: &mut DataFrame) -> Result<(), ReportError> {
    for path in sweep.dims.iter().flat_map(|d| &d.paths) {
        if df
            .column(path)
            .is_ok_and(|c| c.dtype() == &DataType::String)
        {
            let cat = (df.column(path))
                .and_then(|c| c.cast(&DataType::from_categories(Categories::global())))
                .map_err(ReportError::table("summary"))?;
            df.replace(path, cat)
                .map_err(ReportError::table("summary"))?;
        }
    }
    Ok(())
}

/// `name.parquet` and `name.csv` in `dir`.
pub(crate) fn write_frame(dir: &Path, name: &str, df: &mut DataFrame) -> Result<(), ReportError> {
    let path = |ext: &str| dir.join(format!("{name}.{ext}"));
    let create = |p: &Path| File::create(p).map_err(IoError::at(p));
    let failed = |path: PathBuf| move |source| ReportError::File { path, source };
    let parquet = path("parquet");
    ParquetWriter::new(create(&parquet)?)
        .finish(df)
        .map_err(failed(parquet))?;
    let csv = path("csv");
    CsvWriter::new(create(&csv)?)
        .finish(df)
        .map_err(failed(csv))
}

/// The per-point table with the columns people read first.
/// The columns that name each dimension's levels (a labelled zip group
/// shows its labels only).
fn level_columns(sweep: &Sweep) -> Vec<String> {
    sweep
        .dims
        .iter()
        .flat_map(|d| d.name.split('+').map(str::to_string))
        .collect()
}

/// The ranking's recovery time: the censored mean, none where no seed
/// recovered.
const RANK_RECOVERY: &str = "_rank_recovery_s";

/// The points ranked: recovered in more seeds first, then faster recovery,
/// higher success rate, higher goodput, lower failed-request latency; the
/// first `n`.
fn ranking(sweep: &Sweep, summary: &DataFrame, n: usize) -> Result<String, ReportError> {
    let keys = [
        ("p_not_recovered", false),
        (RANK_RECOVERY, false),
        ("success_rate_mean", true),
        ("goodput_mean", true),
        ("failed_latency_median_s_mean", false),
    ];
    let trigger = sweep.has_trigger();
    // Sorted by the censored recovery time, shown as text (`never`, `>=
    // X`); among points that never recovered it is only when their
    // arrivals ended, so they tie on it.
    let ranked;
    let has = |c: &str| summary.column(c).is_ok();
    let summary = if trigger && has("p_not_recovered") && has("recovery_censored_s_mean") {
        ranked = (summary.clone().lazy())
            .with_column(
                when(col("p_not_recovered").eq(lit(1.0)))
                    .then(lit(NULL).cast(DataType::Float64))
                    .otherwise(col("recovery_censored_s_mean"))
                    .alias(RANK_RECOVERY),
            )
            .collect()
            .map_err(ReportError::table("ranking"))?;
        &ranked
    } else {
        summary
    };
    let keys: Vec<(&str, bool)> = keys
        .into_iter()
        .filter(|(k, _)| summary.column(k).is_ok())
        .filter(|(k, _)| trigger || !k.starts_with("p_not") && *k != RANK_RECOVERY)
        .collect();
    if keys.is_empty() || summary.height() < 2 {
        return Ok(String::new());
    }
    let mut cols = level_columns(sweep);
    cols.extend(keys.iter().map(|(k, _)| match *k {
        RANK_RECOVERY => "recovery_s_mean".to_string(),
        k => k.to_string(),
    }));
    let sorted = summary
        .sort(
            keys.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            SortMultipleOptions::default()
                .with_order_descending_multi(keys.iter().map(|(_, d)| *d).collect::<Vec<_>>())
                .with_nulls_last(true),
        )
        .map_err(ReportError::table("ranking"))?;
    Ok(tables::markdown(&shown(
        sweep,
        &sorted.head(Some(n)),
        &cols,
    )?))
}

/// Whose users the report's user-level figures are, with `[report] group`.
pub fn users_note(m: &crate::manifest::Manifest) -> Option<String> {
    let g = m.report.group.as_ref()?;
    Some(format!(
        "Users: client group `{g}`'s (`[report] group`). Its own users' are `{}`, the recovery, P(not recovered), the heatmap and the success-rate plots; every other metric (the classes' and tenants' rates, goodput, amplification, the latency distributions, the tiers' figures) is the whole system's.",
        crate::manifest::GROUP_VIEW.join("`, `")
    ))
}

/// The per-point table people read first: recovery with its interval and
/// the main metrics, then the grid's `[report] metrics`. Without a trigger
/// recovery means nothing: the `[report] metrics` come first and no
/// recovery column is shown.
fn headline(sweep: &Sweep, summary: &DataFrame) -> Result<String, ReportError> {
    let mut cols: Vec<String> = level_columns(sweep);
    cols.extend(["runs", "failed"].map(String::from));
    let report: Vec<String> = sweep
        .report_metrics
        .iter()
        .map(|m| format!("{m}_mean"))
        .collect();
    if sweep.has_trigger() {
        cols.extend(
            [
                "p_not_recovered",
                "p_not_recovered_low",
                "p_not_recovered_high",
            ]
            .map(String::from),
        );
        let leaf = sweep
            .tiers
            .last()
            .map(|l| format!("{l}_arrivals_per_user_during_mean"));
        cols.extend(
            [
                "recovery_s_mean",
                "success_rate_after_mean",
                "goodput_mean",
                "failed_latency_median_s_mean",
            ]
            .into_iter()
            .map(String::from)
            .chain(leaf)
            .chain(report),
        );
    } else {
        cols.extend(report);
        cols.extend(["goodput_mean", "failed_latency_median_s_mean"].map(String::from));
    }
    let mut seen = std::collections::HashSet::new();
    cols.retain(|c| summary.column(c).is_ok() && seen.insert(c.clone()));
    Ok(tables::markdown(&shown(sweep, summary, &cols)?))
}

/// A per-point table as a person reads it: the levels as written
/// everywhere else (`30`, not `30.000`; a null cap `unbounded`, not `-`).
fn shown(sweep: &Sweep, table: &DataFrame, cols: &[String]) -> Result<DataFrame, ReportError> {
    let err = || ReportError::table("per-point table");
    let mut out = table
        .select(cols.iter().map(String::as_str))
        .map_err(err())?;
    for name in level_columns(sweep).iter().filter(|l| cols.contains(l)) {
        let c = out.column(name).map_err(err())?;
        let text: Vec<String> = (0..c.len()).map(|i| crate::load::label(c, i)).collect();
        out.replace(name, Column::new(name.into(), text))
            .map_err(err())?;
    }
    // A mean over fewer than the point's ok runs says over how many.
    let (Ok(runs), Ok(failed)) = (table.column("runs"), table.column("failed")) else {
        return Ok(out);
    };
    let int = |c: &Column, i: usize| c.get(i).ok().and_then(|v| v.extract::<i64>());
    for name in cols.iter().filter_map(|c| c.strip_suffix("_mean")) {
        let (Ok(mean), Ok(count)) = (
            out.column(&format!("{name}_mean")),
            table.column(&format!("{name}_count")),
        ) else {
            continue;
        };
        let partial = |i: usize| {
            let ok = int(runs, i)? - int(failed, i)?;
            int(count, i).filter(|k| *k < ok).map(|k| (k, ok))
        };
        if !(0..out.height()).any(|i| partial(i).is_some()) {
            continue;
        }
        let text: Vec<String> = (0..out.height())
            .map(|i| {
                match (
                    mean.get(i).ok().and_then(|v| v.extract::<f64>()),
                    partial(i),
                ) {
                    (None, _) => "-".to_string(),
                    (Some(x), _) if x.is_nan() => "-".to_string(),
                    (Some(x), Some((k, ok))) => format!("{x:.3} ({k} of {ok} runs)"),
                    (Some(x), None) => format!("{x:.3}"),
                }
            })
            .collect();
        let column = format!("{name}_mean");
        out.replace(&column, Column::new(column.as_str().into(), text))
            .map_err(err())?;
    }
    Ok(out)
}

/// Metrics about recovery, not reported for a grid without a trigger.
fn about_recovery(metric: &str) -> bool {
    matches!(
        metric,
        "recovered" | "recovery_s" | "recovery_censored_s" | "success_rate_after"
    )
}

fn sensitivity_markdown(sens: &[MetricSensitivity], trigger: bool) -> String {
    let mut md = String::new();
    for m in sens
        .iter()
        .filter(|m| trigger || !about_recovery(&m.metric))
    {
        md.push_str(&format!("\n#### `{}`\n\n", m.metric));
        match &m.result {
            Err(reason) => md.push_str(&format!("Skipped: {}.\n", tables::markdown_text(reason))),
            Ok(s) => {
                md.push_str(&if s.noise_share.is_nan() {
                    "Seed noise: not measured (one seed); the indices include it.\n\n".to_string()
                } else {
                    format!(
                        "Seed noise: {:.1}% of the variance of single runs (removed from the indices); {} seeds.\n\n",
                        100.0 * s.noise_share,
                        s.seeds
                    )
                });
                if let Some(note) = &s.conf_note {
                    md.push_str(&format!("No confidence: {note} (an interval of zero width would claim certainty).\n\n"));
                }
                md.push_str("| axis | S1 | S1_conf | ST | ST_conf | mu_star | sigma |\n|---|---|---|---|---|---|---|\n");
                let num = |x: f64| {
                    if x.is_nan() {
                        "-".to_string()
                    } else {
                        format!("{x:.3}")
                    }
                };
                for a in &s.axes {
                    md.push_str(&format!(
                        "| {} | {:.3} | {} | {:.3} | {} | {} | {} |\n",
                        a.axis,
                        a.s1,
                        num(a.s1_conf),
                        a.st,
                        num(a.st_conf),
                        num(a.mu_star),
                        num(a.sigma)
                    ));
                }
                let categorical: Vec<&str> = s
                    .axes
                    .iter()
                    .filter(|a| a.ee_note.is_some())
                    .map(|a| a.axis.as_str())
                    .collect();
                if !categorical.is_empty() {
                    md.push_str(&format!(
                        "\nNo elementary effects for {}: categorical, its levels have no order or distance.\n",
                        categorical.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
    }
    md
}

fn effects_markdown(sweep: &Sweep, effects: &[Effect]) -> String {
    let strategy = sweep.strategy_dim();
    let mut md = String::new();
    let trigger = sweep.has_trigger();
    // The main metrics, then the grid's `[report] metrics`: what it is about.
    let main = [
        "recovered",
        "recovery_censored_s",
        "success_rate_after",
        "goodput",
    ];
    let chosen = (sweep.report_metrics.iter()).filter(|m| !main.contains(&m.as_str()));
    for metric in (main.into_iter().chain(chosen.map(String::as_str)))
        .filter(|m| trigger || !about_recovery(m))
        .filter(|m| effects.iter().any(|e| e.metric == *m))
    {
        for (d, dim) in sweep.dims.iter().enumerate() {
            if Some(d) == strategy && sweep.dims.len() > 1 {
                continue;
            }
            // A range over the other axes only where there are some besides
            // this one and the strategy (each cell is then one point).
            let others = sweep.dims.len() - 1 - usize::from(strategy.is_some_and(|s| s != d));
            let range = if others > 0 {
                ", points: range of the point means over the other axes"
            } else {
                ""
            };
            let what = if metric == "recovered" {
                "share of seeds that recovered".to_string()
            } else if metric == "recovery_censored_s" {
                format!(
                    "mean recovery time (s) [95% CI of the mean, seed noise only]{range}; `never` where no run recovered, `>= X (k of n censored)` where some did not (a lower bound: a run that did not recover counts as the first recovery time it could not observe)"
                )
            } else {
                format!("mean `{metric}` [95% CI of the mean, seed noise only]{range}")
            };
            md.push_str(&format!("\n#### `{}` x strategy: {what}\n\n", dim.name));
            md.push_str(&tables::effects_markdown(effects, metric, &dim.name));
        }
    }
    md
}

/// One combination of the non-line axes: the runs drawn in one time plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// Its place among all combinations, in grid order (the file stems').
    pub index: usize,
    /// (dimension, level) of every axis but the line axis.
    pub key: Vec<(usize, usize)>,
    /// Why it is drawn (empty when every slice is).
    pub reason: String,
}

/// Runs grouped for the time plots: lines are the strategy's levels (or the
/// first axis'), slices are the combinations of the other axes; at most
/// [`MAX_SLICES`] are drawn, chosen by [`choose_slices`].
struct Slicing {
    line_dim: Option<usize>,
    slices: Vec<Slice>,
    /// run row -> (position in `slices`, line)
    of_run: HashMap<usize, (usize, usize)>,
    /// The first ok run of each drawn slice (its triggers are shaded).
    first_run: Vec<Option<usize>>,
    /// Whether a drawn slice's runs differ in their trigger (a sampled
    /// design's trigger parameter): no single window to shade.
    trigger_varies: Vec<bool>,
    /// How the slices were chosen, for the report.
    note: Option<String>,
}

impl Slicing {
    /// The triggers to shade in drawn slice `at`: its runs' common ones,
    /// none when they differ.
    fn shades(&self, sweep: &Sweep, at: usize) -> Vec<Shade> {
        match self.first_run[at] {
            Some(r) if !self.trigger_varies[at] => triggers_of(sweep, r),
            _ => Vec::new(),
        }
    }

    /// What a caption says of slice `at`'s trigger when none is shaded.
    fn trigger_note(&self, at: usize) -> &'static str {
        if self.trigger_varies[at] {
            " No trigger is shaded: it differs between the slice's runs (a sampled parameter)."
        } else {
            ""
        }
    }
}

/// A path as a word of a command the report shows in a code span: as it
/// is when the shell reads it so, else single-quoted; a path that neither
/// can carry (a quote or backtick in it) is named by a placeholder.
fn command_word(path: &str, placeholder: &str) -> String {
    if !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:%,@".contains(c))
    {
        path.to_string()
    } else if path.contains(['\'', '`']) || path.chars().any(char::is_control) {
        placeholder.to_string()
    } else {
        format!("'{path}'")
    }
}

/// A slice's reason as the caption's first sentence, with a space after
/// it (`the worst: ...` -> `The worst: ....`); nothing for none.
fn sentence(reason: &str) -> String {
    let mut chars = reason.chars();
    match chars.next() {
        None => String::new(),
        Some(first) => format!(
            "{}{}. ",
            first.to_uppercase(),
            chars.as_str().trim_end_matches('.')
        ),
    }
}

/// The legend's names of dimension `d`'s lines: a number with its axis
/// (`client.max_retries=2`, not `2`), and so `unbounded` beside numbers
/// (`svc_b.max_in_flight=unbounded`: a null cap of a numeric axis); a
/// strategy, a zip group's level or any other word by itself.
fn line_labels_of(sweep: &Sweep, d: usize) -> Vec<String> {
    line_labels(&sweep.dims[d])
}

/// [`line_labels_of`] of one dimension.
fn line_labels(dim: &crate::load::Dim) -> Vec<String> {
    let numeric = dim.values.is_some()
        || (dim.paths.len() == 1
            && (dim.labels.iter())
                .all(|l| l == crate::load::UNBOUNDED || l.parse::<f64>().is_ok()));
    match numeric {
        true => (dim.labels.iter())
            .map(|l| format!("{}={l}", dim.name))
            .collect(),
        false => dim.labels.clone(),
    }
}

fn line_dim(sweep: &Sweep) -> Option<usize> {
    // Lines that differ in their trigger could share no shaded window:
    // without a strategy axis, the first axis that sets no trigger.
    let sets_trigger = |d: &crate::load::Dim| {
        d.paths
            .iter()
            .any(|p| crate::load::trigger_key(p).is_some())
    };
    sweep
        .strategy_dim()
        .or_else(|| sweep.dims.iter().position(|d| !sets_trigger(d)))
        .or(if sweep.dims.is_empty() { None } else { Some(0) })
}

/// A combination of the non-line axes ((dimension, level) pairs) and its
/// ok runs.
type SliceRuns = (Vec<(usize, usize)>, Vec<usize>);

/// A trigger's parameters found in the runs table: (path prefix, is a
/// spike, start, duration, factor).
type TriggerColumns = (String, bool, Option<f64>, Option<f64>, Option<f64>);

/// Every combination of the non-line axes in grid order, with the ok runs
/// of each.
fn all_slices(sweep: &Sweep, line_dim: Option<usize>) -> Vec<SliceRuns> {
    let mut out: Vec<SliceRuns> = Vec::new();
    for (run, (position, ok)) in sweep.positions.iter().zip(sweep.ok()).enumerate() {
        let key: Vec<(usize, usize)> = position
            .iter()
            .copied()
            .enumerate()
            .filter(|(d, _)| Some(*d) != line_dim)
            .collect();
        let at = out.iter().position(|(k, _)| *k == key).unwrap_or_else(|| {
            out.push((key, Vec::new()));
            out.len() - 1
        });
        if *ok {
            out[at].1.push(run);
        }
    }
    out
}

/// The slices worth drawing, at most `max`, in grid order, each with its
/// reason: those named in the grid's `[report] slices` first, then the
/// worst (highest P(not recovered) over the lines, then the lowest
/// success after the trigger: the censored recovery time is a lower bound
/// that shrinks as the trigger ends later, so it cannot rank), the
/// mildest for contrast, then both sides of the steepest tipping steps
/// (adjacent levels of one axis between which a line's P(not recovered)
/// changes most; one step of an axis per line, so that an axis that
/// changes nothing does not repeat it at each of its levels). Without a
/// trigger (nothing to rank by) the first `max` in grid order.
fn choose_slices(
    sweep: &Sweep,
    line_dim: Option<usize>,
    max: usize,
) -> (Vec<Slice>, Option<String>) {
    let all = all_slices(sweep, line_dim);
    let total = all.len();
    let slice = |i: usize, reason: String| Slice {
        index: i,
        key: all[i].0.clone(),
        reason,
    };
    if total <= max {
        return ((0..total).map(|i| slice(i, String::new())).collect(), None);
    }
    let mut chosen: Vec<(usize, String)> = Vec::new();
    let add = |i: usize, why: String, chosen: &mut Vec<(usize, String)>| {
        if chosen.len() < max && !chosen.iter().any(|(c, _)| *c == i) {
            chosen.push((i, why));
        }
    };
    // Named in [report] slices: "path=level, path=level"; every named
    // pair must match.
    let mut unknown = Vec::new();
    for spec in &sweep.manifest.report.slices {
        let Some(want) = sweep.levels_of(spec) else {
            unknown.push(spec.clone());
            continue;
        };
        for (i, (key, _)) in all.iter().enumerate() {
            if !want.is_empty() && want.iter().all(|w| key.contains(w)) {
                add(i, "named in [report]".to_string(), &mut chosen);
            }
        }
    }
    let recovered = sweep.metric("recovered").filter(|_| sweep.has_trigger());
    let note_unknown = if unknown.is_empty() {
        String::new()
    } else {
        format!(
            " `[report] slices` names no level in: {}.",
            unknown
                .iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let Some(recovered) = recovered else {
        for i in 0..total {
            add(i, String::new(), &mut chosen);
        }
        chosen.sort();
        let note = format!(
            "Time plots are drawn for {} of {total} combinations of the other axes: {}the first in grid order (no trigger, so no recovery to choose by).{note_unknown}",
            chosen.len(),
            if sweep.manifest.report.slices.is_empty() {
                ""
            } else {
                "those named in `[report] slices`, then "
            },
        );
        return (
            chosen.into_iter().map(|(i, r)| slice(i, r)).collect(),
            Some(note),
        );
    };
    let after = sweep.metric("success_rate_after");
    let lines = line_dim.map_or(1, |d| sweep.dims[d].labels.len());
    // P(not recovered) per slice and line, and the mean success after the
    // trigger (1 where no run has it: nothing to say it is worse).
    let stats: Vec<(Vec<Option<f64>>, f64)> = all
        .iter()
        .map(|(_, runs)| {
            let mut per_line = vec![(0usize, 0usize); lines];
            let (mut a_sum, mut a_n) = (0.0, 0usize);
            for &r in runs {
                let line = line_dim.map_or(0, |d| sweep.positions[r][d]);
                if let Some(v) = recovered[r] {
                    per_line[line].1 += 1;
                    per_line[line].0 += (v == 0.0) as usize;
                }
                if let Some(a) = after.as_ref().and_then(|a| a[r]) {
                    a_sum += a;
                    a_n += 1;
                }
            }
            let p = per_line
                .iter()
                .map(|(n, t)| (*t > 0).then(|| *n as f64 / *t as f64))
                .collect();
            (p, if a_n > 0 { a_sum / a_n as f64 } else { 1.0 })
        })
        .collect();
    let mean_p = |i: usize| {
        let v: Vec<f64> = stats[i].0.iter().flatten().copied().collect();
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let line_name =
        |l: usize| line_dim.map_or("all".to_string(), |d| sweep.dims[d].labels[l].clone());
    // The worst.
    let worst = (0..total).max_by(|&a, &b| {
        mean_p(a)
            .total_cmp(&mean_p(b))
            .then(stats[b].1.total_cmp(&stats[a].1))
            .then(b.cmp(&a))
    });
    if let Some(w) = worst {
        add(
            w,
            format!(
                "the worst: P(not recovered) {:.2} on average over the lines, success after the trigger {:.1}%",
                mean_p(w),
                100.0 * stats[w].1
            ),
            &mut chosen,
        );
    }
    // The mildest, for contrast.
    if let Some(m) = (0..total).min_by(|&a, &b| {
        mean_p(a)
            .total_cmp(&mean_p(b))
            .then(stats[b].1.total_cmp(&stats[a].1))
            .then(a.cmp(&b))
    }) {
        add(
            m,
            format!(
                "the mildest, for contrast: P(not recovered) {:.2} on average, success after the trigger {:.1}%",
                mean_p(m),
                100.0 * stats[m].1
            ),
            &mut chosen,
        );
    }
    // Tipping steps: slices differing by adjacent levels of one numeric
    // axis (the levels of strings, zip groups and caps with `unbounded`
    // have no order, so no two of them are a step).
    let mut steps: Vec<(f64, usize, usize, usize)> = Vec::new(); // (change, a, b, line)
    for a in 0..total {
        for b in a + 1..total {
            let (ka, kb) = (&all[a].0, &all[b].0);
            let diff: Vec<_> = ka.iter().zip(kb).filter(|(x, y)| x != y).collect();
            if diff.len() != 1
                || diff[0].0.1.abs_diff(diff[0].1.1) != 1
                || sweep.dims[diff[0].0.0].values.is_none()
            {
                continue;
            }
            for l in 0..lines {
                if let (Some(pa), Some(pb)) = (stats[a].0[l], stats[b].0[l])
                    && (pa - pb).abs() > 0.0
                {
                    steps.push(((pa - pb).abs(), a, b, l));
                }
            }
        }
    }
    steps.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    // (axis, lower level, line) of the steps drawn.
    let mut drawn: Vec<(usize, usize, usize)> = Vec::new();
    for (_, a, b, l) in steps {
        let step = (all[a].0.iter().zip(&all[b].0))
            .find(|(x, y)| x != y)
            .map(|(x, y)| (x.0, x.1.min(y.1), l));
        if let Some(step) = step {
            if drawn.contains(&step) {
                continue;
            }
            drawn.push(step);
        }
        for (here, there) in [(a, b), (b, a)] {
            let (ph, pt) = (
                stats[here].0[l].unwrap_or(0.0),
                stats[there].0[l].unwrap_or(0.0),
            );
            let other = all[there]
                .0
                .iter()
                .zip(&all[here].0)
                .find(|(x, y)| x != y)
                .map(|(x, _)| sweep.describe_levels([*x], ""))
                .unwrap_or_default();
            add(
                here,
                format!(
                    "tipping: P(not recovered) of {} is {ph:.2} here, {pt:.2} at {other}",
                    line_name(l)
                ),
                &mut chosen,
            );
        }
    }
    let no_step = drawn.is_empty();
    for i in 0..total {
        add(i, NEXT_IN_GRID_ORDER.to_string(), &mut chosen);
    }
    chosen.sort();
    let reasons: Vec<&str> = chosen.iter().map(|(_, r)| r.as_str()).collect();
    let note = format!(
        "Time plots are drawn for {} of {total} combinations of the other axes: {}; each plot says why it is here.{note_unknown}",
        chosen.len(),
        why_chosen(&reasons, no_step)
    );
    (
        chosen.into_iter().map(|(i, r)| slice(i, r)).collect(),
        Some(note),
    )
}

/// The reason of a slice chosen for no other: the first left in grid
/// order.
const NEXT_IN_GRID_ORDER: &str = "next in grid order";

/// What the chosen slices are, from their reasons, counted: those named in
/// `[report] slices`, the worst, the mildest, the sides of tipping steps,
/// and those next in grid order (with why none is a tipping step, when
/// `no_step`: no two slices one level apart on a numeric axis differ in
/// P(not recovered)).
fn why_chosen(reasons: &[&str], no_step: bool) -> String {
    let count = |prefix: &str| reasons.iter().filter(|r| r.starts_with(prefix)).count();
    let mut parts: Vec<String> = Vec::new();
    let named = count("named in [report]");
    if named > 0 {
        parts.push(format!("{named} named in `[report] slices`"));
    }
    match (count("the worst") > 0, count("the mildest") > 0) {
        (true, true) => parts.push("the worst and the mildest by P(not recovered)".to_string()),
        (true, false) => parts.push("the worst by P(not recovered)".to_string()),
        (false, true) => parts.push("the mildest by P(not recovered)".to_string()),
        (false, false) => {}
    }
    let tipping = count("tipping");
    if tipping > 0 {
        parts.push(format!(
            "{tipping} on the sides of the steepest tipping steps of P(not recovered)"
        ));
    }
    let next = count(NEXT_IN_GRID_ORDER);
    if next > 0 {
        parts.push(format!(
            "{next} next in grid order{}",
            if no_step {
                " (no two combinations one level apart on a numeric axis differ in P(not recovered): no tipping step to show)"
            } else {
                ""
            }
        ));
    }
    match parts.len() {
        0 => String::new(),
        1 => parts.remove(0),
        n => format!("{}, then {}", parts[..n - 1].join(", "), parts[n - 1]),
    }
}

fn slicing(sweep: &Sweep) -> Slicing {
    let line_dim = line_dim(sweep);
    let (slices, note) = choose_slices(sweep, line_dim, MAX_SLICES);
    let all = all_slices(sweep, line_dim);
    let mut of_run = HashMap::new();
    let mut first_run = Vec::new();
    let mut trigger_varies = Vec::new();
    let trigger_columns: Vec<Vec<Option<f64>>> = (sweep.runs.get_column_names().into_iter())
        .map(|c| c.as_str())
        .filter(|c| crate::load::trigger_key(c).is_some())
        .chain(["window_start_s", "window_end_s"])
        .filter_map(|c| sweep.metric(c))
        .collect();
    for (at, s) in slices.iter().enumerate() {
        let runs = &all[s.index].1;
        first_run.push(runs.first().copied());
        trigger_varies.push(
            trigger_columns
                .iter()
                .any(|v| runs.iter().any(|r| v[*r] != v[runs[0]])),
        );
        for &run in runs {
            of_run.insert(run, (at, line_dim.map_or(0, |d| sweep.positions[run][d])));
        }
    }
    Slicing {
        line_dim,
        slices,
        of_run,
        first_run,
        trigger_varies,
        note,
    }
}

fn slice_name(sweep: &Sweep, slice: &[(usize, usize)]) -> String {
    if slice.is_empty() {
        return "all runs".to_string();
    }
    sweep.describe_levels(slice.iter().copied(), ", ")
}

/// The triggers of run `run`, to shade: each slow window and load spike
/// whose parameters are columns of the runs table (an axis or a fixed
/// override), a missing start or length taken from the run's trigger span
/// (`window_start_s`, `window_end_s`); a window of length 0 or a spike of
/// factor 1 is none. When no column describes a trigger, the trigger span
/// itself, of unknown kind.
pub fn triggers_of(sweep: &Sweep, run: usize) -> Vec<Shade> {
    let get = |c: &str| sweep.metric(c).and_then(|v| v[run]);
    let span = match (get("window_start_s"), get("window_end_s")) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    // prefix -> (spike, start, duration, factor): the scenario's own
    // windows first, then what the runs' columns say of each.
    let mut found: Vec<TriggerColumns> = (sweep.manifest.triggers.iter())
        .map(|t| {
            let spike = t.path.contains(".spike");
            (
                t.path.clone(),
                spike,
                Some(t.start_s),
                Some(t.duration_s),
                t.factor,
            )
        })
        .collect();
    for name in sweep.runs.get_column_names() {
        let Some((prefix, spike, key)) = crate::load::trigger_key(name.as_str()) else {
            continue;
        };
        let at = found.iter().position(|f| f.0 == prefix).unwrap_or_else(|| {
            found.push((prefix.to_string(), spike, None, None, None));
            found.len() - 1
        });
        let v = get(name.as_str());
        match key {
            "start_s" => found[at].2 = v,
            "duration_s" => found[at].3 = v,
            _ => found[at].4 = v,
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for (prefix, spike, start, duration, factor) in &found {
        if duration.is_some_and(|d| d <= 0.0) || factor.is_some_and(|f| f == 1.0) {
            continue;
        }
        let Some(from) = start.or(span.map(|s| s.0)) else {
            continue;
        };
        let Some(to) = duration.map(|d| from + d).or(span.map(|s| s.1)) else {
            continue;
        };
        if to > from {
            out.push(Shade {
                kind: if *spike {
                    ShadeKind::Spike
                } else if prefix
                    .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
                    .ends_with(".slow")
                {
                    ShadeKind::Slow
                } else {
                    ShadeKind::Outage
                },
                from,
                to,
            });
        }
    }
    if out.is_empty()
        && found.is_empty()
        && let Some((a, b)) = span
        && b > a
    {
        // No column says what it is; ch37's built-in trigger is a slow window.
        let kind = if sweep.manifest.scenario == "ch37" {
            ShadeKind::Slow
        } else {
            ShadeKind::Trigger
        };
        out.push(Shade {
            kind,
            from: a,
            to: b,
        });
    }
    if out.is_empty()
        && let Some((a, b)) = span
        && a == b
        && b > 0.0
    {
        // A trigger of length 0 marks the instant recovery is measured
        // from (a load profile's end of overload): a line there.
        out.push(Shade {
            kind: ShadeKind::Mark,
            from: a,
            to: a,
        });
    }
    out
}

/// Per-second success rate and queue length per tier: median over seeds
/// with the interquartile band, one line per strategy, each slice's own
/// triggers shaded.
fn time_plots(
    sweep: &Sweep,
    plot_dir: &Path,
    files: &mut Vec<PlotFile>,
    notes: &mut Vec<String>,
) -> Result<(), ReportError> {
    let s = slicing(sweep);
    if let Some(note) = &s.note {
        notes.push(note.clone());
    }
    let mut series_cols = vec!["success_rate".to_string()];
    series_cols.extend(sweep.tiers.iter().map(|t| format!("{t}_queue_len")));
    // The adaptive limit over time, at the tiers where one acts in some run
    // (series written before the limit's column have none).
    for t in &sweep.tiers {
        let limited = (sweep.metric(&format!("{t}_limit_lowest")))
            .is_some_and(|v| v.iter().flatten().any(|x| *x > 0.0));
        let col = format!("{t}_limit");
        if limited && series_has(sweep, std::slice::from_ref(&col))? {
            series_cols.push(col);
        }
    }
    let values = slice_series(sweep, &s, &series_cols)?;
    let line_labels: Vec<String> = s
        .line_dim
        .map_or(vec!["all".to_string()], |d| line_labels_of(sweep, d));
    // Drawn once all are known: every one gets the widest legend of any,
    // so that their plots, stacked on the page, share one time axis.
    let mut figures: Vec<TimeFigure> = Vec::new();
    for (slice_idx, slice) in s.slices.iter().enumerate() {
        let name = slice_name(sweep, &slice.key);
        let shades = s.shades(sweep, slice_idx);
        let stem_idx = slice.index;
        for (k, col) in series_cols.iter().enumerate() {
            let bands: Vec<Band> = line_labels
                .iter()
                .enumerate()
                .filter_map(|(line, label)| {
                    let mut points: Vec<BandPoint> = values[k]
                        .iter()
                        .filter(|((sl, ln, _), _)| *sl == slice_idx && *ln == line)
                        .map(|((_, _, sec), vals)| {
                            let q = |p| quantile(vals, p);
                            BandPoint {
                                x: *sec as f64 + 0.5,
                                median: q(0.5),
                                q25: q(0.25),
                                q75: q(0.75),
                            }
                        })
                        .collect();
                    points.sort_by(|a, b| a.x.total_cmp(&b.x));
                    (!points.is_empty()).then(|| Band {
                        label: label.clone(),
                        points,
                    })
                })
                .collect();
            // A slice whose runs have no adaptive limit draws no flat 0.
            let idle = |b: &Band| b.points.iter().all(|p| p.q75 == 0.0 && p.q25 == 0.0);
            if bands.is_empty() || (col.ends_with("_limit") && bands.iter().all(idle)) {
                continue;
            }
            let (title, y_label, y_range, stem) = if col == "success_rate" {
                (
                    "Success rate of users by arrival second".to_string(),
                    match &sweep.manifest.report.group {
                        Some(g) => format!("success rate (share of group {g}'s users)"),
                        None => "success rate (share of users)".to_string(),
                    },
                    Some((0.0, 1.0)),
                    format!("success_rate_{stem_idx}"),
                )
            } else if let Some(tier) = col.strip_suffix("_limit") {
                (
                    format!("Adaptive concurrency limit at {tier}"),
                    "limit (requests in service allowed, end of second)".to_string(),
                    None,
                    format!("limit_{tier}_{stem_idx}"),
                )
            } else {
                let tier = col.trim_end_matches("_queue_len");
                (
                    format!("Queue length at {tier}"),
                    "queue length (requests, end of second)".to_string(),
                    None,
                    format!("queue_{tier}_{stem_idx}"),
                )
            };
            figures.push(TimeFigure {
                title: format!("{title} ({name})"),
                y_label,
                y_range,
                bands,
                shades: shades.clone(),
                file: PlotFile {
                    title: format!("{title}, {name}"),
                    stem,
                    caption: format!(
                        "{}{}",
                        sentence(&slice.reason).trim_end(),
                        s.trigger_note(slice_idx)
                    )
                    .trim()
                    .to_string(),
                    group: if col == "success_rate" {
                        Group::Success
                    } else {
                        Group::Queue
                    },
                },
            });
        }
    }
    let mut legend_w = 0;
    for f in &figures {
        legend_w = legend_w.max(plots::time_legend_width(&f.bands, &f.shades)?);
    }
    for f in figures {
        plots::time_bands(
            &plot_dir.join(&f.file.stem),
            &f.title,
            "simulated time (s)",
            &f.y_label,
            &f.bands,
            &f.shades,
            f.y_range,
            legend_w,
        )?;
        files.push(f.file);
    }
    Ok(())
}

/// A figure of [`time_plots`], to draw.
struct TimeFigure {
    title: String,
    y_label: String,
    y_range: Option<(f64, f64)>,
    bands: Vec<Band>,
    shades: Vec<Shade>,
    file: PlotFile,
}

/// One series column: per `(slice, line, second)`, the values of the runs
/// of the drawn slices (one a run).
type SliceColumn = HashMap<(usize, usize, u32), Vec<f64>>;
/// Per series column, its [`SliceColumn`].
type SliceSeries = Vec<SliceColumn>;

/// Reads `cols` of the series parts for the runs of the drawn slices.
fn slice_series(sweep: &Sweep, s: &Slicing, cols: &[String]) -> Result<SliceSeries, ReportError> {
    let run_ids = run_rows(sweep)?;
    let mut values: SliceSeries = vec![HashMap::new(); cols.len()];
    let series_dir = sweep.dir.join("series");
    // A `[report] group`'s success rate by arrival is its own users' (the
    // series keep the run-wide one).
    let (ok, arrivals) = (
        sweep.manifest.report.series_of("user_ok_by_arrival"),
        sweep.manifest.report.series_of("user_arrivals"),
    );
    let by_group = |c: &String| c == "success_rate" && sweep.manifest.report.group.is_some();
    let mut wanted = vec!["run_id", "second"];
    for c in cols {
        if by_group(c) {
            wanted.extend([ok.as_str(), arrivals.as_str()]);
        } else {
            wanted.push(c);
        }
    }
    for path in part::series_parts(&sweep.dir).map_err(IoError::at(&series_dir))? {
        let part = Part::read(&path, Some(&wanted))?;
        let ids = part.str("run_id")?;
        let secs = part.count("second")?;
        let columns: Vec<Float64Chunked> = (cols.iter())
            .map(|c| {
                if by_group(c) {
                    let (ok, arrivals) = (part.f64(&ok)?, part.f64(&arrivals)?);
                    Ok((ok.iter().zip(arrivals.iter()))
                        .map(|(o, a)| Some(o? / a.filter(|a| *a > 0.0)?))
                        .collect())
                } else {
                    part.f64(c)
                }
            })
            .collect::<Result<_, crate::part::PartError>>()?;
        for (i, (id, sec)) in ids
            .iter()
            .zip(secs.iter().map(|s| s.map(|s| s as u32)))
            .enumerate()
        {
            let (Some(id), Some(sec)) = (id, sec) else {
                continue;
            };
            let Some(&(slice, line)) = run_ids.get(id).and_then(|r| s.of_run.get(r)) else {
                continue;
            };
            for (k, c) in columns.iter().enumerate() {
                if let Some(v) = c.get(i) {
                    values[k].entry((slice, line, sec)).or_default().push(v);
                }
            }
        }
    }
    Ok(values)
}

/// Whether the sweep's series parts have every column of `cols` (output
/// written before a column was added lacks it); false without parts.
pub(crate) fn series_has(sweep: &Sweep, cols: &[String]) -> Result<bool, ReportError> {
    let dir = sweep.dir.join("series");
    let parts = part::series_parts(&sweep.dir).map_err(IoError::at(&dir))?;
    let Some(first) = parts.first() else {
        return Ok(false);
    };
    let present = part::column_names(first)?;
    Ok(cols.iter().all(|c| present.contains(c)))
}

/// `run_id` -> row of the runs table.
pub(crate) fn run_rows(sweep: &Sweep) -> Result<HashMap<String, usize>, ReportError> {
    Ok(
        part::column(&sweep.runs, &sweep.dir.join("runs"), "run_id", Column::str)?
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (v.to_string(), i)))
            .collect(),
    )
}

/// The tier of a slice whose load came closest to, or furthest past, its
/// capacity: the largest median arrivals / capacity of any second and line.
/// `values` holds, per tier, its arrivals and capacity (two columns each).
fn bottleneck(values: &SliceSeries, tiers: usize, slice: usize) -> Option<(usize, f64)> {
    (0..tiers)
        .filter_map(|t| {
            let (arrivals, capacity) = (&values[3 * t], &values[3 * t + 2]);
            let peak = (arrivals.iter())
                .filter(|((sl, _, _), _)| *sl == slice)
                .filter_map(|(key, a)| {
                    let c = capacity.get(key).map(|c| quantile(c, 0.5))?;
                    (c > 0.0).then(|| quantile(a, 0.5) / c)
                })
                .fold(f64::NEG_INFINITY, f64::max);
            peak.is_finite().then_some((t, peak))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// What the load at a slice's bottleneck came to: at its `peak`, the most
/// any second's median arrivals were of its capacity.
fn load_verdict(tier: &str, peak: f64) -> String {
    let peak_text = format!("{peak:.2}x");
    match peak {
        p if p >= 1.0 => {
            format!("{tier} is this slice's bottleneck: its load reached {peak_text} its capacity.")
        }
        p if p >= 0.9 => format!(
            "{tier} is this slice's bottleneck: its load came to {peak_text} its capacity, near it."
        ),
        _ => format!(
            "No tier came near its capacity: {tier}, the closest, at most {peak_text} of it."
        ),
    }
}

/// Offered load against capacity at each drawn slice's bottleneck: first
/// tries and retries stacked (medians over seeds), one panel per line.
fn load_plots(
    sweep: &Sweep,
    plot_dir: &Path,
    files: &mut Vec<PlotFile>,
) -> Result<(), ReportError> {
    let cols: Vec<String> = (sweep.tiers.iter())
        .flat_map(|t| ["arrivals", "retries", "capacity_per_s"].map(|c| format!("{t}_{c}")))
        .collect();
    // Output written before the series split retries out has nothing to draw.
    if !series_has(sweep, &cols)? {
        return Ok(());
    }
    // What each tier let in, after the others (`bottleneck` reads the
    // first three columns of each tier).
    let admitted: Vec<String> = (sweep.tiers.iter())
        .map(|t| format!("{t}_admitted"))
        .collect();
    let with_admitted = series_has(sweep, &admitted)?;
    let cols = match with_admitted {
        true => [cols, admitted].concat(),
        false => cols,
    };
    let s = slicing(sweep);
    let values = slice_series(sweep, &s, &cols)?;
    let line_labels: Vec<String> = s
        .line_dim
        .map_or(vec!["all".to_string()], |d| line_labels_of(sweep, d));
    let bottlenecks: Vec<Option<(usize, f64)>> = (0..s.slices.len())
        .map(|slice| bottleneck(&values, sweep.tiers.len(), slice))
        .collect();
    let drawn: Vec<Option<&str>> = (bottlenecks.iter())
        .map(|b| b.map(|(t, _)| sweep.tiers[t].as_str()))
        .collect();
    let causes = turned_away_causes(sweep, &s, &drawn)?;
    for (slice_idx, slice) in s.slices.iter().enumerate() {
        let Some((t, peak)) = bottlenecks[slice_idx] else {
            continue;
        };
        let tier = &sweep.tiers[t];
        let let_in = (values.get(3 * sweep.tiers.len() + t)).filter(|_| with_admitted);
        let mut panels = load_panels(&values, t, slice_idx, &line_labels, let_in);
        let retried = (panels.iter()).any(|p| p.points.iter().any(|x| x.retries > 0.0));
        if panels.is_empty() {
            continue;
        }
        let turned_away = (panels.iter()).map(turned_away_share).fold(0.0, f64::max);
        if turned_away < MIN_TURNED_AWAY {
            (panels.iter_mut().flat_map(|p| &mut p.points)).for_each(|q| q.admitted = None);
        }
        let name = slice_name(sweep, &slice.key);
        let shades = s.shades(sweep, slice_idx);
        let stem = format!("load_{}", slice.index);
        let title = format!("Offered load at {tier}");
        plots::offered_load(
            &plot_dir.join(&stem),
            &format!("{title} ({name})"),
            &panels,
            &shades,
        )?;
        files.push(PlotFile {
            title: format!("{title}, {name}"),
            stem,
            caption: format!(
                "{}{}{} Requests arriving per second (medians over the slice's runs), first tries and retries stacked{}{}",
                sentence(&slice.reason),
                load_verdict(tier, peak),
                turned_away_note(
                    tier,
                    turned_away,
                    panels.len(),
                    &causes[slice_idx]
                ),
                match (retried, peak >= 0.9) {
                    (true, true) => "; where retries fill the gap above capacity, the retry storm sustains the overload.",
                    (true, false) => ".",
                    (false, _) => "; no retry reached it.",
                },
                s.trigger_note(slice_idx)
            ),
            group: Group::Load,
        });
        fine_load_plot(sweep, &s, slice_idx, t, &line_labels, plot_dir, files)?;
    }
    Ok(())
}

/// Per line, second and bin of `series_bin_s`, a slice's runs' arrivals
/// and retries at one tier (a list of bins per run), and its capacity.
type BinRuns = HashMap<(usize, u32), Vec<BinRun>>;
type BinRun = (Vec<i64>, Vec<i64>, Option<f64>);

/// With sub-second series (`series_bin_s`), the offered load at drawn
/// slice `slice`'s bottleneck `t` per bin, from 2 s before its triggers to
/// 10 s after: what per-second counts blur (retries every 800 ms are one
/// spike each, not a beat of the seconds). Nothing without bins.
fn fine_load_plot(
    sweep: &Sweep,
    s: &Slicing,
    slice: usize,
    t: usize,
    labels: &[String],
    plot_dir: &Path,
    files: &mut Vec<PlotFile>,
) -> Result<(), ReportError> {
    let tier = &sweep.tiers[t];
    let cols =
        ["arrivals_by_bin", "retries_by_bin", "capacity_per_s"].map(|c| format!("{tier}_{c}"));
    if !series_has(sweep, &cols)? {
        return Ok(());
    }
    let run_ids = run_rows(sweep)?;
    let series_dir = sweep.dir.join("series");
    let mut wanted = vec!["run_id", "second"];
    wanted.extend(cols.iter().map(String::as_str));
    let mut runs: BinRuns = HashMap::new();
    for path in part::series_parts(&sweep.dir).map_err(IoError::at(&series_dir))? {
        let part = Part::read(&path, Some(&wanted))?;
        let ids = part.str("run_id")?;
        let secs = part.count("second")?;
        let capacity = part.f64(&cols[2])?;
        for (i, (id, sec)) in ids
            .iter()
            .zip(secs.iter().map(|s| s.map(|s| s as u32)))
            .enumerate()
        {
            let (Some(id), Some(sec)) = (id, sec) else {
                continue;
            };
            let Some(&(sl, line)) = run_ids.get(id).and_then(|r| s.of_run.get(r)) else {
                continue;
            };
            if sl != slice {
                continue;
            }
            let arrivals = part.i64_list(&cols[0], i)?.unwrap_or_default();
            let retries = part.i64_list(&cols[1], i)?.unwrap_or_default();
            if !arrivals.is_empty() {
                let entry = runs.entry((line, sec)).or_default();
                entry.push((arrivals, retries, capacity.get(i)));
            }
        }
    }
    let shades = s.shades(sweep, slice);
    let from = shades
        .iter()
        .map(|x| x.from)
        .reduce(f64::min)
        .map_or(0.0, |x| x - 2.0);
    let to = shades
        .iter()
        .map(|x| x.to)
        .reduce(f64::max)
        .map_or(f64::MAX, |x| x + 10.0);
    let mut panels = Vec::new();
    for (line, label) in labels.iter().enumerate() {
        let mut points = Vec::new();
        let mut bin_s = 1.0;
        for ((ln, sec), per_run) in &runs {
            if *ln != line || (*sec as f64) + 1.0 <= from || *sec as f64 >= to {
                continue;
            }
            let bins = per_run[0].0.len();
            bin_s = 1.0 / bins as f64;
            let capacity: Vec<f64> = per_run.iter().filter_map(|r| r.2).collect();
            for b in 0..bins {
                let median = |get: &dyn Fn(&BinRun) -> i64| {
                    let v: Vec<f64> = per_run.iter().map(|r| get(r) as f64).collect();
                    quantile(&v, 0.5) / bin_s
                };
                let retries = median(&|r| r.1.get(b).copied().unwrap_or(0));
                points.push(plots::LoadPoint {
                    second: *sec as f64 + b as f64 * bin_s,
                    first: median(&|r| r.0.get(b).copied().unwrap_or(0)) - retries,
                    retries,
                    capacity: (!capacity.is_empty()).then(|| quantile(&capacity, 0.5)),
                    admitted: None,
                });
            }
        }
        points.sort_by(|a, b| a.second.total_cmp(&b.second));
        if !points.is_empty() {
            panels.push(plots::LoadPanel {
                label: label.clone(),
                bin_s,
                points,
            });
        }
    }
    let Some(bin_s) = panels.first().map(|p| p.bin_s) else {
        return Ok(());
    };
    let name = slice_name(sweep, &s.slices[slice].key);
    let stem = format!("load_fine_{}", s.slices[slice].index);
    let title = format!("Offered load at {tier} per {:.0} ms", bin_s * 1000.0);
    plots::offered_load(
        &plot_dir.join(&stem),
        &format!("{title} ({name})"),
        &panels,
        &shades,
    )?;
    files.push(PlotFile {
        title: format!("{title}, {name}"),
        stem,
        caption: format!(
            "The offered load above per bin of `series_bin_s` ({:.0} ms) around the triggers, as requests per second (medians over the slice's runs): retries that leave together show as spikes one wait apart, which the per-second counts blur into a beat.",
            bin_s * 1000.0
        ),
        group: Group::Load,
    });
    Ok(())
}

/// The share of a tier's arrivals it turned away at admission below which
/// the line of what it let in is not drawn (it would lie on the bars).
const MIN_TURNED_AWAY: f64 = 0.01;

/// The share of a panel's arrivals its tier did not let in (0 where what
/// it let in is not known).
fn turned_away_share(panel: &plots::LoadPanel) -> f64 {
    let (mut arrived, mut let_in) = (0.0, 0.0);
    for q in &panel.points {
        let Some(a) = q.admitted else { continue };
        arrived += q.first + q.retries;
        let_in += a;
    }
    if arrived > 0.0 {
        (1.0 - let_in / arrived).max(0.0)
    } else {
        0.0
    }
}

/// Why a tier turns an arrival away at admission: the suffix of its
/// runs column, and the words for it.
const TURNED_AWAY_CAUSES: [(&str, &str); 5] = [
    ("rejected_full", "for a full queue or a concurrency limit"),
    ("rate_limited", "by its rate limit"),
    ("shed", "shed by their class's shedding length"),
    ("refused_down", "refused while it was down"),
    ("black_holed", "lost in a black hole while it was down"),
];

/// Arrivals a tier turned away, and why: per cause of
/// [`TURNED_AWAY_CAUSES`] that did, the count, its words and its runs
/// column, most first.
type Causes = Vec<(f64, &'static str, String)>;

/// Over the runs of each drawn slice, why its drawn tier (`drawn[slice]`,
/// if any) turned arrivals away ([`Causes`]). Read from the runs parts:
/// the report keeps in memory only the columns it uses throughout, so
/// that a million runs stay small.
fn turned_away_causes(
    sweep: &Sweep,
    s: &Slicing,
    drawn: &[Option<&str>],
) -> Result<Vec<Causes>, ReportError> {
    if drawn.iter().all(Option::is_none) {
        return Ok(vec![Vec::new(); drawn.len()]);
    }
    let runs_dir = sweep.dir.join("runs");
    let rows = run_rows(sweep)?;
    let mut counts = vec![[0.0; TURNED_AWAY_CAUSES.len()]; drawn.len()];
    for path in part::list(&runs_dir, ".parquet").map_err(IoError::at(&runs_dir))? {
        let present = part::column_names(&path)?;
        // Each cause column the part has, and the (slice, cause) counts it
        // adds to: a tier drawn for several slices is read once.
        let mut columns: Vec<(String, Vec<(usize, usize)>)> = Vec::new();
        for (slice, tier) in drawn.iter().enumerate() {
            let Some(tier) = tier else { continue };
            for (k, (suffix, _)) in TURNED_AWAY_CAUSES.iter().enumerate() {
                let c = format!("{tier}_{suffix}");
                if !present.contains(&c) {
                    continue;
                }
                match columns.iter_mut().find(|(name, _)| *name == c) {
                    Some((_, cells)) => cells.push((slice, k)),
                    None => columns.push((c, vec![(slice, k)])),
                }
            }
        }
        let mut wanted = vec!["run_id"];
        wanted.extend(columns.iter().map(|(c, _)| c.as_str()));
        let part = Part::read(&path, Some(&wanted))?;
        let slice_of: Vec<Option<usize>> = (part.str("run_id")?.iter())
            .map(|id| Some(s.of_run.get(rows.get(id?)?)?.0))
            .collect();
        for (c, cells) in &columns {
            let values = part.f64(c)?;
            for &(slice, k) in cells {
                counts[slice][k] += (values.iter().zip(&slice_of))
                    .filter(|(_, at)| **at == Some(slice))
                    .filter_map(|(v, _)| v)
                    .sum::<f64>();
            }
        }
    }
    Ok((drawn.iter().zip(counts))
        .map(|(tier, counts)| {
            let mut causes: Causes = (TURNED_AWAY_CAUSES.iter().zip(counts))
                .filter(|(_, n)| *n > 0.0)
                .map(|((suffix, words), n)| (n, *words, format!("{}_{suffix}", tier.unwrap_or(""))))
                .collect();
            causes.sort_by(|a, b| b.0.total_cmp(&a.0));
            causes
        })
        .collect())
}

/// What the load caption says of the arrivals the plotted tier turned away
/// at admission (`share`, in the panel of the `panels` that turned away
/// most), and why (`causes`, from [`turned_away_causes`]: where the runs
/// table has none, the columns to read).
fn turned_away_note(
    tier: &str,
    share: f64,
    panels: usize,
    causes: &[(f64, &'static str, String)],
) -> String {
    if share < MIN_TURNED_AWAY {
        return String::new();
    }
    let total: f64 = causes.iter().map(|c| c.0).sum();
    let why = match causes {
        [] => format!(
            "; the runs' `{tier}_rejected_full` (a full queue or a concurrency limit), `{tier}_rate_limited`, `{tier}_shed` and `{tier}_refused_down` say why"
        ),
        [(_, words, column)] => {
            format!(": over the slice's runs, all of them {words} (`{column}`)")
        }
        _ => {
            let parts: Vec<String> = (causes.iter())
                .map(|(n, words, column)| {
                    let pct = 100.0 * n / total;
                    let pct = if pct < 0.5 {
                        "under 1".to_string()
                    } else {
                        format!("{pct:.0}")
                    };
                    format!("{pct}% {words} (`{column}`)")
                })
                .collect();
            format!(": over the slice's runs, {}", parts.join(", "))
        }
    };
    format!(
        " {tier} turned away {:.0}% of its arrivals{} (the solid line is what it let in){why}.",
        100.0 * share,
        if panels > 1 {
            " in the panel that turned away most"
        } else {
            ""
        },
    )
}

/// The panels of one slice's offered-load plot at tier `t`: per line, per
/// second, the medians over seeds of the retries and of the other arrivals
/// (the first tries), of the capacity and (with `let_in`, that column of
/// `values`) of what the tier let in. `values` as for [`bottleneck`].
fn load_panels(
    values: &SliceSeries,
    t: usize,
    slice: usize,
    labels: &[String],
    let_in: Option<&SliceColumn>,
) -> Vec<plots::LoadPanel> {
    let [arrivals, retries, capacity] = [0, 1, 2].map(|k| &values[3 * t + k]);
    (labels.iter().enumerate())
        .filter_map(|(line, label)| {
            let mut points: Vec<plots::LoadPoint> = (arrivals.iter())
                .filter(|((sl, ln, _), _)| *sl == slice && *ln == line)
                .map(|(key, a)| {
                    let median = |m: &HashMap<_, Vec<f64>>| m.get(key).map(|v| quantile(v, 0.5));
                    let r = median(retries).unwrap_or(0.0);
                    plots::LoadPoint {
                        second: key.2 as f64,
                        first: quantile(a, 0.5) - r,
                        retries: r,
                        capacity: median(capacity),
                        admitted: let_in.and_then(median),
                    }
                })
                .collect();
            points.sort_by(|a, b| a.second.total_cmp(&b.second));
            (!points.is_empty()).then(|| plots::LoadPanel {
                label: label.clone(),
                bin_s: 1.0,
                points,
            })
        })
        .collect()
}

/// The latency distribution of each drawn slice, one line per strategy,
/// successes and failures apart, users pooled over the slice's seeds.
fn latency_plots(
    sweep: &Sweep,
    plot_dir: &Path,
    files: &mut Vec<PlotFile>,
) -> Result<(), ReportError> {
    let Some(edges) = latency_edges(sweep)? else {
        return Ok(());
    };
    let runs_dir = sweep.dir.join("runs");
    let s = slicing(sweep);
    let run_ids = run_rows(sweep)?;
    let lines = s.line_dim.map_or(1, |d| sweep.dims[d].labels.len());
    let buckets = edges.len() + 1;
    // counts[slice][line] = (ok, failed)
    let mut counts = vec![vec![(vec![0u64; buckets], vec![0u64; buckets]); lines]; s.slices.len()];
    let wanted = [
        "run_id",
        "success_latency_histogram",
        "failed_latency_histogram",
    ];
    for path in part::list(&runs_dir, ".parquet").map_err(IoError::at(&runs_dir))? {
        let part = Part::read(&path, Some(&wanted))?;
        let ids = part.str("run_id")?;
        for (i, id) in ids.iter().enumerate() {
            let Some(&(slice, line)) = id
                .and_then(|id| run_ids.get(id))
                .and_then(|r| s.of_run.get(r))
            else {
                continue;
            };
            let (ok, failed) = &mut counts[slice][line];
            for (column, into) in [(wanted[1], ok), (wanted[2], failed)] {
                for (b, c) in part
                    .i64_list(column, i)?
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .take(buckets)
                {
                    into[b] += (*c).max(0) as u64;
                }
            }
        }
    }
    let labels: Vec<String> = s
        .line_dim
        .map_or(vec!["all".to_string()], |d| line_labels_of(sweep, d));
    for (slice_idx, slice) in s.slices.iter().enumerate() {
        let cdf_lines: Vec<plots::CdfLine> = (labels.iter().zip(&counts[slice_idx]))
            .filter(|(_, (o, f))| o.iter().chain(f).any(|c| *c > 0))
            .map(|(label, (ok, failed))| plots::CdfLine {
                label: label.clone(),
                ok: ok.clone(),
                failed: failed.clone(),
            })
            .collect();
        if cdf_lines.is_empty() {
            continue;
        }
        let name = slice_name(sweep, &slice.key);
        let stem = format!("latency_{}", slice.index);
        let title = "Latency of finished users";
        plots::latency_cdfs(
            &plot_dir.join(&stem),
            &format!("{title} ({name})"),
            &edges,
            &cdf_lines,
        )?;
        files.push(PlotFile {
            title: format!("{title}, {name}"),
            stem,
            caption: format!(
                "{}The share of users finished within each latency, successes in the left panel and failures in the right, all users of the slice's runs pooled{}; the curve is exact at the histogram's bucket edges (ten a decade).",
                sentence(&slice.reason),
                if sweep.manifest.report.group.is_some() { " (every group's)" } else { "" }
            ),
            group: Group::Latency,
        });
    }
    Ok(())
}

/// The latency histogram's bucket edges in seconds, as the runs parts
/// record them (`None`: written before the histogram was kept).
fn latency_edges(sweep: &Sweep) -> Result<Option<Vec<f64>>, ReportError> {
    let runs_dir = sweep.dir.join("runs");
    let Some(first) = part::list(&runs_dir, ".parquet")
        .map_err(IoError::at(&runs_dir))?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    let Some(text) = part::metadata(&first, "sweep.latency_edges_s")? else {
        return Ok(None);
    };
    let edges = serde_json::from_str(&text).map_err(|e| crate::part::PartError::Metadata {
        path: first.clone(),
        key: "sweep.latency_edges_s".to_string(),
        problem: e.to_string(),
    })?;
    Ok(Some(edges))
}

/// The numeric axis the recovery plot is drawn against: a trigger's length
/// if it is an axis, else the numeric axis (not the line axis) with the
/// most levels. `None` without one of at least two levels.
fn recovery_axis(sweep: &Sweep, line_dim: Option<usize>) -> Option<usize> {
    let numeric = |d: &usize| {
        sweep.dims[*d].labels.len() > 1
            && sweep.dims[*d]
                .labels
                .iter()
                .all(|l| l.parse::<f64>().is_ok())
    };
    let candidates: Vec<usize> = (0..sweep.dims.len())
        .filter(|d| Some(*d) != line_dim)
        .filter(numeric)
        .collect();
    candidates
        .iter()
        .copied()
        .find(|d| {
            sweep.dims[*d]
                .paths
                .iter()
                .any(|p| p.ends_with("duration_s") && crate::load::trigger_key(p).is_some())
        })
        .or_else(|| {
            candidates
                .iter()
                .copied()
                .max_by_key(|d| (sweep.dims[*d].labels.len(), std::cmp::Reverse(*d)))
        })
}

/// The data of the recovery plot: per line (strategy), per level of `axis`
/// (other axes pooled), the median recovery time of the runs that
/// recovered and the share that never did.
fn recovery_data(sweep: &Sweep, line_dim: Option<usize>, axis: usize) -> Vec<plots::RecoveryLine> {
    let (Some(rec), Some(time)) = (sweep.metric("recovered"), sweep.metric("recovery_s")) else {
        return Vec::new();
    };
    let labels = line_dim.map_or(vec!["all runs".to_string()], |d| line_labels_of(sweep, d));
    let levels = &sweep.dims[axis].labels;
    labels
        .iter()
        .enumerate()
        .map(|(line, label)| {
            let points = levels
                .iter()
                .enumerate()
                .filter_map(|(lv, text)| {
                    let (mut never, mut n, mut times) = (0usize, 0usize, Vec::new());
                    for run in 0..sweep.runs.height() {
                        let p = &sweep.positions[run];
                        if p[axis] != lv || line_dim.is_some_and(|d| p[d] != line) {
                            continue;
                        }
                        let Some(r) = rec[run] else { continue };
                        n += 1;
                        if r == 0.0 {
                            never += 1;
                        } else if let Some(t) = time[run] {
                            times.push(t);
                        }
                    }
                    (n > 0).then(|| plots::RecoveryPoint {
                        x: text.parse().unwrap_or(lv as f64),
                        median: (!times.is_empty()).then(|| quantile(&times, 0.5)),
                        never: never as f64 / n as f64,
                    })
                })
                .collect();
            plots::RecoveryLine {
                label: label.clone(),
                points,
            }
        })
        .collect()
}

/// Recovery time against a numeric axis, one line per strategy, `never`
/// marked.
fn recovery_plot(
    sweep: &Sweep,
    plot_dir: &Path,
    files: &mut Vec<PlotFile>,
    notes: &mut Vec<String>,
) -> Result<(), ReportError> {
    if !sweep.has_trigger() || sweep.metric("recovered").is_none() {
        return Ok(());
    }
    let line_dim = line_dim(sweep);
    let Some(axis) = recovery_axis(sweep, line_dim) else {
        notes.push("No plot of recovery time against an axis: no axis (besides the lines') has two levels or more that are all numbers.".to_string());
        return Ok(());
    };
    let lines = recovery_data(sweep, line_dim, axis);
    if lines.iter().all(|l| l.points.is_empty()) {
        return Ok(());
    }
    let name = &sweep.dims[axis].name;
    let pooled: Vec<&str> = (0..sweep.dims.len())
        .filter(|d| *d != axis && Some(*d) != line_dim)
        .map(|d| sweep.dims[d].name.as_str())
        .collect();
    plots::recovery_lines(
        &plot_dir.join("recovery"),
        &format!("Recovery time against {name}{}", sweep.of_users()),
        name,
        &lines,
    )?;
    files.push(PlotFile {
        title: format!("Recovery time against {name}{}", sweep.of_users()),
        stem: "recovery".to_string(),
        caption: format!(
            "Median recovery time of the runs that recovered, per {}{}; the `never` row marks levels where runs did not recover.",
            line_dim.map_or("grid", |d| sweep.dims[d].name.as_str()),
            if pooled.is_empty() {
                String::new()
            } else {
                format!(" ({} pooled)", pooled.join(", "))
            }
        ),
        group: Group::Recovery,
    });
    Ok(())
}

/// The pictures the data cannot support, and why.
/// Linear-interpolated quantile.
fn quantile(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = p * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// P(not recovered) over the two non-strategy axes with the most levels,
/// one panel per strategy, other axes pooled.
fn heatmap(
    sweep: &Sweep,
    plot_dir: &Path,
    files: &mut Vec<PlotFile>,
    notes: &mut Vec<String>,
) -> Result<(), ReportError> {
    if !sweep.has_trigger() {
        notes.push("No heatmap of P(not recovered): the grid has no slow window or load spike, so there is nothing to recover from.".to_string());
        return Ok(());
    }
    let Some(recovered) = sweep.metric("recovered") else {
        notes.push("No heatmap: the runs have no `recovered` column.".to_string());
        return Ok(());
    };
    // The grid's [report] choice, else strategy panels and the two other
    // axes with the most levels.
    let options = &sweep.manifest.report;
    let chosen = |axis: &Option<String>| axis.as_deref().and_then(|p| sweep.dim_of(p));
    let panel_dim = chosen(&options.panels).or(sweep.strategy_dim());
    let mut candidates: Vec<usize> = (0..sweep.dims.len())
        .filter(|d| Some(*d) != panel_dim && sweep.dims[*d].labels.len() > 1)
        .collect();
    candidates.sort_by_key(|d| std::cmp::Reverse(sweep.dims[*d].labels.len()));
    let default_xy = match candidates[..] {
        [a, b, ..] => Some((a.min(b), a.max(b))),
        _ => None,
    };
    // One axis chosen alone keeps its side; the other is the axis with the
    // most levels besides it.
    let other = |taken: usize| candidates.iter().copied().find(|d| *d != taken);
    let xy = match (chosen(&options.heatmap_x), chosen(&options.heatmap_y)) {
        (Some(x), Some(y)) => Some((x, y)),
        (Some(x), None) => other(x).map(|y| (x, y)),
        (None, Some(y)) => other(y).map(|x| (x, y)),
        (None, None) => default_xy,
    };
    candidates.retain(|d| xy.is_none_or(|(x, y)| *d != x && *d != y));
    let (x, y) = match xy {
        Some(xy) => xy,
        None => {
            notes.push("No heatmap of P(not recovered): the grid has fewer than two axes (besides strategy) with several levels.".to_string());
            return Ok(());
        }
    };
    let panels_n = panel_dim.map_or(1, |d| sweep.dims[d].labels.len());
    let (nx, ny) = (sweep.dims[x].labels.len(), sweep.dims[y].labels.len());
    let mut counts = vec![vec![vec![(0u64, 0u64); nx]; ny]; panels_n];
    for (run, r) in recovered.iter().enumerate() {
        let Some(r) = r else { continue };
        let p = &sweep.positions[run];
        let cell = &mut counts[panel_dim.map_or(0, |d| p[d])][p[y]][p[x]];
        cell.0 += (*r == 0.0) as u64;
        cell.1 += 1;
    }
    let panels: Vec<HeatPanel> = counts
        .iter()
        .enumerate()
        .map(|(k, grid)| HeatPanel {
            title: panel_dim.map_or("all runs".to_string(), |d| {
                let dim = &sweep.dims[d];
                if dim.name == "strategy" {
                    dim.labels[k].clone()
                } else {
                    format!("{} = {}", dim.name, dim.labels[k])
                }
            }),
            values: grid
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|(n, t)| (*t > 0).then(|| *n as f64 / *t as f64))
                        .collect()
                })
                .collect(),
        })
        .collect();
    if !candidates.is_empty() {
        notes.push(format!(
            "The heatmap pools the other axes ({}).",
            candidates
                .iter()
                .map(|d| sweep.dims[*d].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let title = format!("Probability of not recovering{}", sweep.of_users());
    plots::heatmaps(
        &plot_dir.join("not_recovered"),
        &title,
        &sweep.dims[x].name,
        &sweep.dims[x].labels,
        &sweep.dims[y].name,
        &sweep.dims[y].labels,
        &panels,
        "P(not recovered)",
    )?;
    files.push(PlotFile {
        title,
        stem: "not_recovered".to_string(),
        caption: format!(
            "P(not recovered) over {} x {}{}.",
            sweep.dims[x].name,
            sweep.dims[y].name,
            panel_dim.map_or(String::new(), |d| format!(
                ", one panel per {}",
                sweep.dims[d].name
            ))
        ),
        group: Group::Map,
    });
    Ok(())
}

/// `![title](plots/stem.svg)` with its caption.
fn plot_md(p: &PlotFile) -> String {
    let title = tables::markdown_text(&p.title);
    let mut md = format!("![{title}](plots/{}.svg)\n\n", p.stem);
    let caption = p.caption.trim();
    if !caption.is_empty() {
        md.push_str(&format!("*{caption}*\n\n"));
    }
    md
}

/// Whether `metric` took one value in every ok run that has it (and some
/// run has it): its sensitivity indices are all 0, its panel empty.
fn same_in_every_run(sweep: &Sweep, metric: &str) -> bool {
    let Some(values) = sweep.metric(metric) else {
        return false;
    };
    let mut seen = (values.iter().zip(sweep.ok()))
        .filter(|(_, ok)| **ok)
        .filter_map(|(v, _)| *v);
    seen.next()
        .is_some_and(|first| seen.all(|v| v == first || (v.is_nan() && first.is_nan())))
}

/// The sentence under the sensitivity figure naming the metrics left out
/// of it for being the same in every run; empty for none.
fn constant_metrics_note(constant: &[&str]) -> String {
    match constant {
        [] => String::new(),
        [one] => format!("Not drawn: `{one}`, the same in every run (no index to show)."),
        many => format!(
            "Not drawn: {}, each the same in every run (no index to show).",
            many.iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A table collapsed under `summary` (it is wide or long; the page stays
/// readable and the table is one click away).
/// The report's own raw HTML, which [`html`] keeps: the lines of
/// [`collapsed`] (a summary of plain text, no tag), nothing from user text.
fn is_own_block(html: &str) -> bool {
    let line = html.trim();
    line == "</details>"
        || line
            .strip_prefix("<details><summary>")
            .and_then(|rest| rest.strip_suffix("</summary>"))
            .is_some_and(|summary| !summary.contains(['<', '>']))
}

pub(crate) fn collapsed(summary: &str, body: &str) -> String {
    // A blank line after it: a heading that follows must start its own block.
    format!("\n<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n")
}

/// The note that opens a sampled design's plots: what the page shows in
/// place of the factorial sections it leaves out, by the design's method.
fn sampled_note(sweep: &Sweep) -> String {
    let method = sweep.manifest.design.as_ref().map(|d| d.method.as_str());
    let why = match method {
        Some("sobol" | "morris") => {
            "What depends on each parameter is in *Why: the sampled design*"
        }
        Some("boundary") => {
            "Where the outcome tips over the parameters is in *Where it tips: the adaptive boundary*"
        }
        _ => {
            "Where the outcome tips over the parameters is in *Where it tips: scenario discovery (PRIM)*"
        }
    };
    format!(
        "This grid samples its continuous parameters (`[sample]`): each combination of the categorical axes is one point here, its runs the whole design, so the tables' rates and means are over the sampled region and the time plots' bands are the median and interquartile range over the design's runs (different parameter values, not seeds of one point). {why}; the factorial map, the recovery-against-an-axis plot, the factorial sensitivity indices and the main effects are left out: over thousands of distinct sample points they would be one level per point."
    )
}

/// A sampled design's Sobol or Morris indices: the lines that lead "In
/// short", and the section "Why: the sampled design".
struct DesignSection {
    in_short: String,
    body: String,
    /// The tables written.
    tables: Vec<&'static str>,
}

/// Writes the design's tables (`design_indices.*`, `design_s2.*`) and
/// returns its text; `None` without a Sobol or Morris design.
fn design_section(
    sweep: &Sweep,
    dir: &Path,
    metrics: &[String],
) -> Result<Option<DesignSection>, ReportError> {
    use crate::design_analysis;
    let (Some(design), Some(all)) = (
        sweep.manifest.design.as_ref(),
        design_analysis::analyze(sweep, metrics),
    ) else {
        return Ok(None);
    };
    let mut indices =
        design_analysis::frame(design, &all).map_err(ReportError::table("the design's indices"))?;
    write_frame(dir, "design_indices", &mut indices)?;
    let trigger = sweep.has_trigger();
    let mut tables = vec!["design_indices"];
    if design.method == "sobol" && design.second_order {
        let mut s2 = design_analysis::s2_frame(design, &all)
            .map_err(ReportError::table("the design's second-order indices"))?;
        write_frame(dir, "design_s2", &mut s2)?;
        tables.push("design_s2");
    }
    Ok(Some(DesignSection {
        in_short: design_analysis::in_short(sweep, design, &all, trigger),
        body: design_analysis::markdown(
            sweep,
            design,
            &all,
            design_analysis::lead_metric(sweep, trigger),
        ),
        tables,
    }))
}

/// success rate and queues over time), then why (sensitivity), then the
/// tables.
#[allow(clippy::too_many_arguments)]
fn index_markdown(
    sweep: &Sweep,
    summary: &DataFrame,
    headline: &str,
    sens: &[MetricSensitivity],
    sens_md: &str,
    effects_md: &str,
    plot_files: &[PlotFile],
    plot_notes: &[String],
    design: Option<&DesignSection>,
) -> Result<String, ReportError> {
    let m = &sweep.manifest;
    let trigger = sweep.has_trigger();
    let mut md = format!("# Sweep `{}`\n\n", m.grid_name);
    // A manifest still "running" counts nothing yet: its sweep is being
    // written, or was killed before it could say so. The runs say.
    let running = m.status == "running";
    let ok_here = sweep.ok().iter().filter(|ok| **ok).count() as u64;
    // The counts are the runs present; the manifest's events only where
    // its counts are theirs (a shard redone with --force in a merged
    // directory leaves the merged manifest counting runs no longer there).
    let present = sweep.ok().len() as u64;
    let (ok, failed) = (ok_here, present - ok_here);
    let events = if !running && m.ok + m.failed + m.reused == present {
        m.events_total.to_string()
    } else {
        "?".to_string()
    };
    md.push_str(&format!(
        "- grid: {} (SHA-256 `{}`), scenario {}\n- runs: {} planned, {} ok, {} failed; {} events\n- by {} ({}){} on {}, {} threads, {} to {} ({})\n\n",
        tables::code_span(&m.grid_file),
        &m.grid_sha256[..12.min(m.grid_sha256.len())],
        tables::code_span(&m.scenario),
        m.planned,
        ok,
        failed,
        events,
        m.tool,
        m.git_commit,
        // A resume allowed to change the version: who wrote the rest.
        if m.earlier_versions.is_empty() {
            String::new()
        } else {
            format!(", parts of the runs by {}", m.earlier_versions.join(", "))
        },
        m.host,
        m.threads,
        m.started_at,
        m.finished_at.as_deref().unwrap_or("?"),
        m.status,
    ));
    if let Some(partial) = partial_runs(sweep) {
        let here = std::path::absolute(&sweep.dir).unwrap_or_else(|_| sweep.dir.clone());
        let here = command_word(&here.display().to_string(), "<this directory>");
        let resume = m.resume_command(&here).unwrap_or_else(|| {
            format!(
                "sweep run {}{} --out {here} --resume",
                command_word(&m.grid_file, "<grid file>"),
                // Its --set and --axis flags: without them, a resume is refused.
                m.flags.as_deref().unwrap_or_default(),
            )
        });
        md.push_str(&format!(
            "**Partial results: {partial}.** {} Every table and figure below holds these runs only; {} runs the rest.\n\n",
            if running {
                "The sweep is still being written, or it stopped without finishing its manifest, which still says running (killed, or stopped at once by a second signal)."
            } else {
                "The sweep was interrupted."
            },
            tables::code_span(&resume),
        ));
    }
    if let Some(users) = users_note(m) {
        md.push_str(&format!("{users}\n\n"));
    }
    md.push_str("## In short\n\n");
    let no_verdict = sweep.without_verdict().len();
    if trigger && no_verdict > 0 {
        md.push_str(&format!(
            "{no_verdict} of the ok runs cannot show recovery: their trigger ends less than the recovery window before their arrivals end, or no user arrives in a window after it (lengthen `{}`, or add load). They have no verdict: every rate, table and index below leaves them out.\n\n",
            m.report.duration_path()
        ));
    }
    match design {
        Some(d) => {
            if !trigger {
                md.push_str(NO_TRIGGER);
            }
            md.push_str(&d.in_short);
        }
        None => md.push_str(&plain_words(sweep, sens)?),
    }
    let of = |g: Group| plot_files.iter().filter(move |p| p.group == g);
    md.push_str("\n## What happened\n\n");
    if let Some(published) = crate::published::section(sweep) {
        md.push_str(&published);
    }
    for note in plot_notes {
        md.push_str(&format!("{note}\n\n"));
    }
    for p in of(Group::Map).chain(of(Group::Recovery)) {
        md.push_str(&plot_md(p));
    }
    if of(Group::Success).next().is_some() {
        md.push_str("### Success rate over time\n\n");
        for p in of(Group::Success) {
            md.push_str(&plot_md(p));
        }
    }
    let queues: Vec<&PlotFile> = of(Group::Queue).collect();
    if !queues.is_empty() {
        md.push_str("### Queue length over time\n\n");
        let body: String = queues.iter().map(|p| plot_md(p)).collect();
        md.push_str(&collapsed(
            &format!("{} plots: queue length per tier and slice", queues.len()),
            &body,
        ));
    }
    let loads: Vec<&PlotFile> = of(Group::Load).collect();
    if !loads.is_empty() {
        md.push_str("### Offered load against capacity\n\n");
        for p in &loads {
            md.push_str(&plot_md(p));
        }
    }
    let latencies: Vec<&PlotFile> = of(Group::Latency).collect();
    if !latencies.is_empty() {
        md.push_str("### Latency distribution\n\n");
        let body: String = latencies.iter().map(|p| plot_md(p)).collect();
        md.push_str(&collapsed(
            &format!(
                "{} plots: latency of finished users per slice",
                latencies.len()
            ),
            &body,
        ));
    }
    // Written by `sweep refine`: the located boundary.
    if let Ok(boundary) = std::fs::read_to_string(sweep.dir.join("analysis").join("boundary.md")) {
        md.push_str("\n### Boundary\n\n");
        md.push_str(&boundary);
        if sweep.dir.join("analysis/plots/boundary.svg").exists() {
            md.push_str("\n![Boundary](plots/boundary.svg)\n");
        }
    }
    // A sampled design without indices (a boundary search, a Latin
    // hypercube) has no factorial indices either: its parameters are read
    // by the boundary or by scenario discovery.
    let sampled = sweep.manifest.design.is_some();
    if let Some(d) = design {
        md.push_str("\n## Why: the sampled design\n\n");
        md.push_str(&d.body);
    } else if !sampled {
        // The seeds behind the indices, as the jackknife counted them.
        let seeds = (sens.iter().filter_map(|s| s.result.as_ref().ok()))
            .map(|s| s.seeds)
            .max()
            .unwrap_or(0);
        why_sensitivity(&mut md, trigger, seeds, plot_files, sens_md);
    }
    tables_markdown(&mut md, sweep, summary, headline, effects_md, !sampled)?;
    Ok(md)
}

/// "Why: sensitivity": the factorial grid's own indices.
fn why_sensitivity(
    md: &mut String,
    trigger: bool,
    seeds: usize,
    plot_files: &[PlotFile],
    sens_md: &str,
) {
    // The coverage was measured at 5 to 20 seeds: outside them, say so.
    let coverage = if (5..=20).contains(&seeds) {
        "93.9-95.0% coverage measured at 5 to 20 seeds".to_string()
    } else {
        format!("93.9-95.0% coverage measured at 5 to 20 seeds, not at the {seeds} seeds here")
    };
    md.push_str(&format!("\n## Why: sensitivity\n\nVariance-based indices computed on the full-factorial grid itself (an ANOVA decomposition, no extra sampling): `S1` first order, `ST` total (interactions included), with the seed noise removed. `S1_conf` / `ST_conf`: half-widths of 95% intervals from a delete-one-seed jackknife: seeds are shared by the points, so each seed is left out of every point at once, and the half-width is t(0.975, S-1) x the jackknife standard error over S seeds ({coverage}); none when no seed varied anything. Every point weighs the same whatever its number of seeds (not every run, as ordinary least squares would). `mu_star`, `sigma`: elementary effects between levels adjacent in value, the values scaled to the axis range; none for categorical axes (strategies, zip groups, unbounded caps), whose levels have no order. A zip group counts as one axis. `recovered` is the yes/no of recovery; `recovery_censored_s` is the censored time. Table: `sensitivity.csv`.\n\n"));
    if !trigger {
        md.push_str("Recovery metrics are left out: the grid has no trigger.\n\n");
    }
    for p in plot_files.iter().filter(|p| p.group == Group::Sensitivity) {
        md.push_str(&plot_md(p));
    }
    md.push_str(&collapsed("Sensitivity tables, per metric", sens_md));
}

/// "Tables": the per-point table, the ranking and (factorial grids) the
/// main effects.
fn tables_markdown(
    md: &mut String,
    sweep: &Sweep,
    summary: &DataFrame,
    headline: &str,
    effects_md: &str,
    factorial: bool,
) -> Result<(), ReportError> {
    let trigger = sweep.has_trigger();
    md.push_str("\n## Tables\n\n### Per point\n\n");
    if !factorial {
        let boundary = sweep
            .manifest
            .design
            .as_ref()
            .is_some_and(|d| d.method == "boundary");
        md.push_str(if boundary {
            "One row per combination of the categorical axes, over the points its boundary search ran: the search puts them where P(not recovered) is closest to its threshold, so these rates and means describe the points searched, not the region (the share of the region at or above the threshold is in *Where it tips: the adaptive boundary*). Each run's own values are in `runs/*.parquet`; the table with std, min and max in `summary.csv` / `summary.parquet`.\n\n"
        } else {
            "One row per combination of the categorical axes, over its whole sampled design (every parameter value as drawn): P(not recovered) and the means are over the sampled region, with intervals over its runs. Each run's own values are in `runs/*.parquet`; the table with std, min and max in `summary.csv` / `summary.parquet`.\n\n"
        });
        md.push_str(headline);
        return Ok(());
    }
    if trigger {
        md.push_str("Means over seeds (ok runs); P(not recovered) with its Wilson 95% interval; where no seed differed, `summary.csv` also gives the exact one-sided 95% bound on the outcome never seen, 1 − 0.05^(1/N) (`p_not_recovered_note`, e.g. 0.632 at 3 seeds). Recovery time is censored: `recovery_s_mean` (text, in `summary.csv` too) is `never` where no seed recovered and `>= X (k of n censored)` where some did not (X counts a run that did not recover as the first recovery time it could not observe, a lower bound); the number itself is `recovery_censored_s_mean` in `summary.csv`. ");
    } else {
        md.push_str("Means over seeds (ok runs), the grid's `[report] metrics` first; no recovery columns (no trigger). ");
    }
    md.push_str("Full table with std, 95% interval of the mean over the point's seeds, min and max: `summary.csv` / `summary.parquet`; `<metric>_ci_method` names each interval: Wilson for yes/no metrics (with `<metric>_unseen_high` when no seed differed), the t-interval clipped to [0, 1] for rates and shares and at 0 for counts (clipping never lowers coverage), bootstrap-t clipped at 0 for times (`_s`: skewed, where the t-interval is short on the long side), none when no seed-to-seed variation was observed. `goodput` is the successful users per completion at the last tier of the chain: the share of its work that served a user who succeeded (above 1 where a cache or a fan-in serves users without a completion there each).\n\n");
    let points = summary.height();
    if points > 12 {
        md.push_str(&collapsed(&format!("{points} points"), headline));
    } else {
        md.push_str(headline);
    }
    let ranked = ranking(sweep, summary, 10)?;
    if !ranked.is_empty() {
        md.push_str(if trigger {
            "\n### Ranking\n\nThe best points: recovered in the most seeds, then the fastest recovery (points that never recovered tie on it), the highest success rate, the highest goodput, the lowest failed-request median (first 10).\n\n"
        } else {
            "\n### Ranking\n\nThe best points: the highest success rate, then the highest goodput, the lowest failed-request median (first 10).\n\n"
        });
        md.push_str(&ranked);
    }
    md.push_str("\n### Main effects\n\nThe marginal mean of the metric at each level of each axis, per strategy: the mean of the point means over the other axes (every point weighs the same). Two ranges, not to be confused: `ci_low`/`ci_high` is the 95% confidence interval of that mean from seed noise only (t over the shared seeds, clipped to the metric's range; `ci_method`), `spread_min`/`spread_max` the lowest and highest point mean over the other axes at that level (how much they move it, not uncertainty). A cell marked `(k of N points)` or `(k of N runs)` is a mean over fewer than its neighbours' (the others failed or have no value there): not over the same points, so compare it with care. Table: `main_effects.csv`.\n");
    md.push_str(&collapsed(
        "Main-effect tables, per metric and axis",
        effects_md,
    ));
    Ok(())
}

/// The first line of "In short" for a grid without a trigger.
const NO_TRIGGER: &str = "- **No slow window or load spike** in this grid: there is nothing to recover from, so recovery (P(not recovered), recovery time, success after) is not reported; the headline shows the grid's `[report] metrics`.\n";

/// When the trigger cost no point any users: every run with a verdict
/// recovered at once (0 s) and kept its success rate during the trigger
/// at or above its recovery threshold. Then recovery cannot tell the
/// points apart, and "In short" says so in place of a verdict: that no
/// user failed at all, or, when some did, the lowest success rate during
/// the trigger against the threshold. `None` otherwise, or with no run
/// judged.
fn no_users_lost(sweep: &Sweep, rec: &[Option<f64>], time: &[Option<f64>]) -> Option<String> {
    let during = sweep.metric("success_rate_during")?;
    let failed = sweep.metric("users_failed");
    let thresholds = sweep.recovery_thresholds();
    let threshold = |run: usize| thresholds[run];
    let judged: Vec<usize> = (0..rec.len()).filter(|r| rec[*r].is_some()).collect();
    let unharmed = |r: &usize| {
        rec[*r] == Some(1.0)
            && time[*r] == Some(0.0)
            && during[*r].is_some_and(|d| d >= threshold(*r))
    };
    if judged.is_empty() || !judged.iter().all(unharmed) {
        return None;
    }
    let instead = "every run counts as recovered at 0 s, so recovery cannot tell the points apart; look at latency (`success_latency_p99_s`) and the other metrics below instead";
    let none_failed = (failed.as_ref()).is_some_and(|f| judged.iter().all(|r| f[*r] == Some(0.0)));
    if none_failed {
        return Some(format!(
            "- **No point lost users to the trigger**: no user failed in any of the {} runs (success rate 1 during the trigger in every one): {instead}.\n",
            judged.len()
        ));
    }
    let lowest = (judged.iter())
        .filter_map(|r| during[*r])
        .fold(f64::INFINITY, f64::min);
    let first = threshold(judged[0]);
    let against = match judged.iter().all(|r| threshold(*r) == first) {
        true => format!("the recovery threshold, {}", crate::load::number(first)),
        false => "each run's recovery threshold".to_string(),
    };
    // Floored, so that a rate just under 1 is not printed as 1.
    let shown = (lowest * 1000.0 + 1e-9).floor() / 1000.0;
    Some(format!(
        "- **No point fell below the recovery threshold during the trigger**: some users failed, but the success rate during the trigger was at least {shown:.3} in every one of the {} runs, at or above {against}: {instead}.\n",
        judged.len()
    ))
}

/// Which points never recover, the fastest to recover, and the most
/// influential axis for each metric, in sentences.
fn plain_words(sweep: &Sweep, sens: &[MetricSensitivity]) -> Result<String, ReportError> {
    let mut out = String::new();
    let trigger = sweep.has_trigger();
    if !trigger {
        out.push_str(NO_TRIGGER);
    }
    let recovered = sweep.metric("recovered").filter(|_| trigger);
    let recovery = sweep.metric("recovery_censored_s");
    if let (Some(rec), Some(time)) = (recovered, recovery) {
        // Per point: runs that did not recover, runs with a verdict, the
        // recovery times, and all its runs (failed ones and those without
        // a verdict too).
        let mut per_cell: HashMap<usize, (usize, usize, Vec<f64>)> = HashMap::new();
        let mut all_runs: HashMap<usize, usize> = HashMap::new();
        for run in 0..sweep.runs.height() {
            *all_runs.entry(sweep.cell(run)).or_default() += 1;
            let Some(r) = rec[run] else { continue };
            let e = per_cell.entry(sweep.cell(run)).or_default();
            e.1 += 1;
            if r == 0.0 {
                e.0 += 1;
            } else if let Some(t) = time[run] {
                e.2.push(t);
            }
        }
        let mut cells: Vec<_> = per_cell.into_iter().collect();
        cells.sort_by_key(|(c, _)| *c);
        let describe = |c: usize| {
            if sweep.dims.is_empty() {
                "the single point".to_string()
            } else {
                sweep.describe_cell(c)
            }
        };
        let never: Vec<usize> = (cells.iter())
            .filter(|(_, (n, t, _))| n == t)
            .map(|(c, _)| *c)
            .collect();
        // Points none of whose runs has a verdict (all failed, or none
        // can show recovery) are neither recovered nor not.
        let mut unjudged: Vec<usize> = (all_runs.keys())
            .filter(|c| !cells.iter().any(|(judged, _)| judged == *c))
            .copied()
            .collect();
        unjudged.sort_unstable();
        if !unjudged.is_empty() {
            let shown: Vec<String> = (unjudged.iter().take(8))
                .map(|c| format!("`{}`", describe(*c)))
                .collect();
            out.push_str(&format!(
                "- **No verdict** (every run failed or cannot show recovery): {} of {} points: {}{}.\n",
                unjudged.len(),
                all_runs.len(),
                shown.join(", "),
                if unjudged.len() > 8 {
                    format!(" and {} more", unjudged.len() - 8)
                } else {
                    String::new()
                },
            ));
        }
        let unharmed = unjudged
            .is_empty()
            .then(|| no_users_lost(sweep, &rec, &time))
            .flatten();
        if let Some(line) = &unharmed {
            // Every point "recovered" at once: no verdict to rank by.
            out.push_str(line);
        } else if never.is_empty() && unjudged.is_empty() {
            out.push_str("- Every point recovered in at least one seed.\n");
        } else if never.is_empty() {
            // With no point judged, there is no other point to speak of.
            if !cells.is_empty() {
                out.push_str("- Every other point recovered in at least one seed.\n");
            }
        } else {
            out.push_str(&format!(
                "- **Never recovered** (no seed): {} of {} points",
                never.len(),
                cells.len()
            ));
            // Eight of them: first one of each level of the first axis that
            // has any (a strategy's lone point is not hidden behind
            // another's many), then the rest in grid order.
            let mut picked: Vec<usize> = Vec::new();
            if !sweep.dims.is_empty() {
                let mut levels = Vec::new();
                for c in &never {
                    let level = sweep.design.positions(*c)[0];
                    if !levels.contains(&level) {
                        levels.push(level);
                        picked.push(*c);
                    }
                }
            }
            for c in &never {
                if !picked.contains(c) {
                    picked.push(*c);
                }
            }
            picked.truncate(8);
            picked.sort_unstable();
            let shown: Vec<String> = picked
                .iter()
                .map(|c| format!("`{}`", describe(*c)))
                .collect();
            let partly = (cells.iter())
                .filter(|(c, (n, t, _))| n == t && *t < all_runs[c])
                .count();
            out.push_str(&format!(
                ": {}{}{}.\n",
                shown.join(", "),
                if never.len() > 8 {
                    format!(" and {} more (in the table below)", never.len() - 8)
                } else {
                    String::new()
                },
                if partly > 0 {
                    format!(" ({partly} of them judged on fewer runs than they have: the others failed or have no verdict)")
                } else {
                    String::new()
                }
            ));
        }
        let recovering: Vec<(usize, f64, usize)> = cells
            .iter()
            .filter(|(_, (n, _, ts))| *n == 0 && !ts.is_empty())
            .map(|(c, (_, judged, ts))| (*c, ts.iter().sum::<f64>() / ts.len() as f64, *judged))
            .collect();
        let best = recovering.iter().map(|r| r.1).min_by(f64::total_cmp);
        // Every point at the fastest time: a tie is said, not broken by order.
        let tied: Vec<&(usize, f64, usize)> =
            (recovering.iter()).filter(|r| Some(r.1) == best).collect();
        if let Some(&&(c, t, judged)) = tied.first().filter(|_| unharmed.is_none()) {
            let runs = all_runs[&c];
            let which = if tied.len() == 1 && judged == runs {
                "every seed".to_string()
            } else if tied.len() == 1 {
                format!(
                    "every run with a verdict: {judged} of {runs}, the others failed or have none"
                )
            } else if tied.iter().all(|(c, _, judged)| *judged == all_runs[c]) {
                format!("every seed; {} points tied", tied.len())
            } else {
                format!(
                    "{} points tied, judged on their runs with a verdict",
                    tied.len()
                )
            };
            let named: Vec<String> = (tied.iter().take(4))
                .map(|(c, _, _)| format!("`{}`", describe(*c)))
                .collect();
            out.push_str(&format!(
                "- **Fastest to recover** ({which}): {}{}, {t:.3} s on average after the window.\n",
                named.join(", "),
                if tied.len() > 4 {
                    format!(" and {} more", tied.len() - 4)
                } else {
                    String::new()
                }
            ));
        }
    }
    // The axis that moves each metric most, metrics grouped by it: one
    // line per axis, the axes in order of the metrics they move.
    let mut by_axis: Vec<(&str, Vec<String>)> = Vec::new();
    // Metrics no axis moves beyond the seeds' noise, with that noise.
    let mut unmoved: Vec<String> = Vec::new();
    let mut noise: f64 = 0.0;
    for m in sens
        .iter()
        .filter(|m| trigger || !about_recovery(&m.metric))
    {
        let Ok(s) = &m.result else {
            continue;
        };
        let top = (s.axes.iter()).max_by(|a, b| a.st.total_cmp(&b.st));
        if top.is_none_or(|t| t.st <= 0.0) {
            unmoved.push(if s.noise_share > 0.0 {
                format!(
                    "`{}` (seed noise {:.0}% of its variance{})",
                    m.metric,
                    100.0 * s.noise_share,
                    noisiest_point(sweep, &m.metric).map_or(String::new(), |(c, share)| {
                        format!(
                            ", {:.0}% of that noise from the seeds of one point, `{}`",
                            100.0 * share,
                            sweep.describe_cell(c)
                        )
                    })
                )
            } else {
                format!("`{}` (the same in every run)", m.metric)
            });
        }
        if let Some(top) = top
            && top.st > 0.0
        {
            noise = noise.max(s.noise_share);
            let at = by_axis
                .iter()
                .position(|(a, _)| *a == top.axis)
                .unwrap_or_else(|| {
                    by_axis.push((top.axis.as_str(), Vec::new()));
                    by_axis.len() - 1
                });
            // An axis as influential is named too: a tie is not broken by
            // the axes' order.
            let tied: Vec<String> = (s.axes.iter())
                .filter(|a| a.axis != top.axis && (a.st - top.st).abs() <= 1e-9)
                .map(|a| format!("`{}`", a.axis))
                .collect();
            by_axis[at].1.push(if tied.is_empty() {
                format!("`{}` ({:.2})", m.metric, top.st)
            } else {
                format!(
                    "`{}` ({:.2}, as much as {})",
                    m.metric,
                    top.st,
                    tied.join(", ")
                )
            });
        }
    }
    by_axis.sort_by_key(|(_, ms)| std::cmp::Reverse(ms.len()));
    let one_seed = (sens.iter()).any(|m| m.result.as_ref().is_ok_and(|s| s.noise_share.is_nan()));
    if !by_axis.is_empty() {
        out.push_str(&if one_seed {
            "- What moves each metric most (total index ST; one seed, so the seeds' noise is in it, not removed: more seeds tell an effect from noise):\n".to_string()
        } else {
            format!(
                "- What moves each metric most (total index ST, with the seeds' noise removed: at most {:.1}% of the variance of a metric listed here):\n",
                100.0 * noise
            )
        });
        for (axis, ms) in &by_axis {
            out.push_str(&format!("  - **{axis}** moves most: {}\n", ms.join(", ")));
        }
    }
    if !unmoved.is_empty() {
        out.push_str(&format!(
            "- No axis moves these beyond the seeds' noise, which may hide an effect: {}.\n",
            unmoved.join(", ")
        ));
    }
    Ok(out)
}

/// The point whose seeds vary most in `metric`, with its share of the
/// within-point sum of squares (the pooled seed noise), when one point
/// holds at least half of it: the noise then says more about that point
/// than about the grid.
fn noisiest_point(sweep: &Sweep, metric: &str) -> Option<(usize, f64)> {
    let values = sweep.metric(metric)?;
    let mut cells: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for (run, v) in values.iter().enumerate() {
        if let (Some(v), true) = (v, sweep.ok()[run]) {
            cells.entry(sweep.cell(run)).or_default().push(*v);
        }
    }
    let squares: Vec<(usize, f64)> = (cells.iter())
        .map(|(c, v)| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            (*c, v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>())
        })
        .collect();
    let total: f64 = squares.iter().map(|(_, q)| q).sum();
    let (c, most) = squares.into_iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (total > 0.0 && most >= 0.5 * total).then_some((c, most / total))
}

/// A link target the report may keep: relative, or http(s).
fn safe_url(url: &str) -> bool {
    let scheme_end = url.find(':');
    let path_start = url.find(['/', '?', '#']).unwrap_or(url.len());
    match scheme_end {
        Some(i) if i < path_start => {
            let scheme = url[..i].to_ascii_lowercase();
            scheme == "http" || scheme == "https"
        }
        _ => true,
    }
}

/// `index.md` as one HTML file, the SVG plots inlined.
fn html(md: &str, plot_dirs: &[PathBuf], plot_files: &[String]) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html::push_html};
    // The Markdown holds user text (zip labels, axis names and levels):
    // raw HTML in it becomes text (escaped by push_html), and links and
    // images other than relative or http(s) ones become their text. The
    // report's own HTML is added below: the plots, SVG that plotters
    // escapes, in place of their `![..](plots/..svg)` images.
    let mut open_links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(md, Options::ENABLE_TABLES).filter_map(|e| match e {
        Event::Html(t) if is_own_block(&t) => Some(Event::Html(t)),
        Event::Html(t) | Event::InlineHtml(t) => Some(Event::Text(t)),
        Event::Start(Tag::Link { ref dest_url, .. } | Tag::Image { ref dest_url, .. }) => {
            let keep = safe_url(dest_url);
            open_links.push(keep);
            keep.then_some(e)
        }
        Event::End(TagEnd::Link | TagEnd::Image) => open_links.pop().unwrap_or(false).then_some(e),
        other => Some(other),
    });
    let mut body = String::new();
    push_html(&mut body, events);
    for stem in plot_files {
        let tag_start = format!("<img src=\"plots/{stem}.svg\"");
        let Some(start) = body.find(&tag_start) else {
            continue;
        };
        let Some(len) = body[start..].find("/>") else {
            continue;
        };
        // The image's alt text (escaped by push_html) names the plot to a
        // screen reader; a block of its own, not inside the paragraph that
        // held the image.
        let tag = &body[start..start + len];
        let alt = (tag
            .split_once("alt=\"")
            .and_then(|(_, rest)| rest.split_once('"')))
        .map_or(String::new(), |(alt, _)| alt.to_string());
        let (mut from, mut to) = (start, start + len + 2);
        if body[..from].ends_with("<p>") && body[to..].starts_with("</p>") {
            (from, to) = (from - 3, to + 4);
        }
        let svg = (plot_dirs.iter())
            .find_map(|d| std::fs::read_to_string(d.join(format!("{stem}.svg"))).ok())
            .unwrap_or_default();
        let svg = svg.find("<svg").map_or("", |i| &svg[i..]);
        body.replace_range(
            from..to,
            &format!("<div class=\"plot\" role=\"img\" aria-label=\"{alt}\">{svg}</div>"),
        );
    }
    let body = body
        .replace("<table>", "<div class=\"scroll\"><table>")
        .replace("</table>", "</table></div>");
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>sweep report</title>\n<style>\
         body{{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}}\
         table{{border-collapse:collapse;font-size:90%;margin:1em 0}}td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}\
         th{{background:#f3f3f3;position:sticky;top:0}}.plot svg{{max-width:100%;height:auto}}code{{background:#f6f6f6}}\
         .scroll{{overflow:auto;max-height:32em;max-width:100%}}details{{margin:1em 0}}summary{{cursor:pointer;font-weight:bold}}\
         </style></head><body>\n{body}</body></html>\n"
    )
}

// ------------------------------------------------------------ scenario discovery

/// The stem of the PRIM trajectory plot under `plots/`.
const PRIM_PLOT: &str = "prim_trajectory";

/// The sweep's parameters (every axis path) over the runs `rows`, typed
/// for PRIM: floats as real, integers as integer, anything else (strings,
/// flags, a cap that is `unbounded` somewhere) as categories.
fn prim_params(sweep: &Sweep, rows: &[usize]) -> Vec<crate::prim::Param> {
    use crate::prim;
    let mut params = Vec::new();
    for path in sweep.dims.iter().flat_map(|d| &d.paths) {
        let Ok(c) = sweep.runs.column(path) else {
            continue;
        };
        let numeric = c.null_count() == 0 && c.dtype().is_primitive_numeric();
        let floats = c.cast(&DataType::Float64).ok();
        let values = match floats.as_ref().and_then(|f| f.f64().ok()) {
            Some(f) if numeric => prim::Values::Numeric {
                values: rows.iter().map(|r| f.get(*r).unwrap_or(f64::NAN)).collect(),
                integer: c.dtype().is_integer(),
            },
            _ => {
                prim::Values::Categorical(rows.iter().map(|r| crate::load::label(c, *r)).collect())
            }
        };
        params.push(prim::Param {
            name: path.clone(),
            values,
        });
    }
    params
}

/// Below this a PRIM limit's quasi-p-value says it matters (the EMA
/// Workbench's customary threshold).
const QUASI_P_MATTERS: f64 = 0.05;

/// A quasi-p-value as a person reads it.
fn p_value(p: Option<f64>) -> String {
    match p {
        None => "-".to_string(),
        Some(p) if p < 0.001 => format!("{p:.1e}"),
        Some(p) => format!("{p:.3}"),
    }
}

/// How the discovery section names its outcome: "not recovered" in the
/// words the report always used, a grid's own expression as written.
struct OutcomeWords {
    holds: String,
    runs: String,
    in_box: String,
    of_them: String,
    column: String,
    verdict: String,
    /// Whether a grid's own expression was given.
    custom: Option<String>,
    skipped: String,
}

impl OutcomeWords {
    fn of(custom: Option<&str>) -> OutcomeWords {
        let s = str::to_string;
        match custom {
            None => OutcomeWords {
                holds: s("Never recovers"),
                runs: s("runs that never recover"),
                in_box: s("never recover"),
                of_them: s("that never recover"),
                column: s("never recover"),
                verdict: s("with a recovery verdict"),
                custom: None,
                skipped: s("runs without a verdict"),
            },
            Some(t) => OutcomeWords {
                holds: format!("`{t}`"),
                runs: format!("runs where `{t}`"),
                in_box: s("have it"),
                of_them: s("that have it"),
                column: format!("`{t}`"),
                verdict: format!("where `{t}` is true or false"),
                custom: Some(s(t)),
                skipped: s("runs where it is unknown (failed, or a metric it reads is null)"),
            },
        }
    }

    /// No run has the outcome (`none`), or every run has it.
    fn uniform(&self, none: bool, runs: usize) -> String {
        match &self.custom {
            None => format!(
                "{} of the {runs} runs with a recovery verdict recovered",
                if none { "All" } else { "None" }
            ),
            Some(t) => format!(
                "{} of the {runs} runs where `{t}` is known have it",
                if none { "None" } else { "All" }
            ),
        }
    }
}

/// Each run's outcome for PRIM (`text`, validated with the grid), None
/// where it is unknown; None when a metric it reads is not in the table.
fn outcome_of_runs(sweep: &Sweep, text: &str) -> Option<Vec<Option<bool>>> {
    let names: Vec<&str> = sweep
        .runs
        .get_column_names()
        .into_iter()
        .map(|n| n.as_str())
        .collect();
    let outcome = crate::outcome::Outcome::parse(text, &names).ok()?;
    let columns: Vec<(&str, Vec<Option<f64>>)> = (outcome.metrics().into_iter())
        .map(|m| sweep.metric(m).map(|v| (m, v)))
        .collect::<Option<_>>()?;
    Some(
        (0..sweep.runs.height())
            .map(|r| {
                let value = |m: &str| {
                    columns
                        .iter()
                        .find(|(name, _)| *name == m)
                        .and_then(|(_, v)| v[r])
                };
                outcome.eval(&value)
            })
            .collect(),
    )
}

/// Scenario discovery: PRIM on the runs for "not recovered"; writes
/// `prim_trajectory` and `prim_limits` (Parquet and CSV) and the trajectory
/// plot, and returns the report's section (empty without a trigger).
fn discovery(sweep: &Sweep, dir: &Path, plot_dir: &Path) -> Result<String, ReportError> {
    use crate::prim;
    let custom = sweep.manifest.report.prim.as_deref();
    if sweep.dims.is_empty() || (custom.is_none() && !sweep.has_trigger()) {
        return Ok(String::new());
    }
    let text = custom.unwrap_or(crate::outcome::NOT_RECOVERED);
    let Some(verdicts) = outcome_of_runs(sweep, text) else {
        return Ok(String::new());
    };
    let rows: Vec<usize> = (0..verdicts.len())
        .filter(|r| verdicts[*r].is_some())
        .collect();
    if rows.is_empty() {
        return Ok(String::new());
    }
    let y: Vec<bool> = rows.iter().map(|r| verdicts[*r] == Some(true)).collect();
    let say = OutcomeWords::of(custom);
    let params = prim_params(sweep, &rows);
    let t = prim::prim(&params, &y)?;

    let words = |b: &prim::PrimBox| -> Vec<String> {
        b.restricted.iter().map(|r| t.describe(b, r)).collect()
    };
    let mut trajectory = DataFrame::new(
        t.boxes.len(),
        vec![
            Column::new("box".into(), (0..t.boxes.len() as u64).collect::<Vec<_>>()),
            Column::new(
                "phase".into(),
                (0..t.boxes.len())
                    .map(|i| if i < t.peeled { "peel" } else { "paste" })
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "coverage".into(),
                t.boxes.iter().map(|b| b.coverage).collect::<Vec<_>>(),
            ),
            Column::new(
                "density".into(),
                t.boxes.iter().map(|b| b.density).collect::<Vec<_>>(),
            ),
            Column::new(
                "mass".into(),
                t.boxes.iter().map(|b| b.mass).collect::<Vec<_>>(),
            ),
            Column::new(
                "n".into(),
                t.boxes.iter().map(|b| b.n as i64).collect::<Vec<_>>(),
            ),
            Column::new(
                "k".into(),
                t.boxes.iter().map(|b| b.k as i64).collect::<Vec<_>>(),
            ),
            Column::new(
                "restricted".into(),
                t.boxes
                    .iter()
                    .map(|b| b.restricted.len() as i64)
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "chosen".into(),
                (0..t.boxes.len())
                    .map(|i| i == t.chosen)
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "box_limits".into(),
                t.boxes
                    .iter()
                    .map(|b| words(b).join(" and "))
                    .collect::<Vec<_>>(),
            ),
        ],
    )
    .map_err(ReportError::table("PRIM trajectory"))?;
    write_frame(dir, "prim_trajectory", &mut trajectory)?;
    // One row per restricted parameter of each box.
    let limits: Vec<(usize, &prim::Restriction, &prim::Limit)> = t
        .boxes
        .iter()
        .enumerate()
        .flat_map(|(i, b)| {
            b.restricted
                .iter()
                .map(move |r| (i, r, &b.limits[r.column]))
        })
        .collect();
    let range = |l: &prim::Limit, side: usize| match l {
        prim::Limit::Range(lo, hi) => Some([*lo, *hi][side]),
        prim::Limit::Categories(_) => None,
    };
    let mut limits_df = DataFrame::new(
        limits.len(),
        vec![
            Column::new(
                "box".into(),
                limits.iter().map(|l| l.0 as u64).collect::<Vec<_>>(),
            ),
            Column::new(
                "parameter".into(),
                limits
                    .iter()
                    .map(|l| t.columns[l.1.column].name.as_str())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "kind".into(),
                limits
                    .iter()
                    .map(|l| match t.columns[l.1.column].kind {
                        prim::Kind::Real => "real",
                        prim::Kind::Integer => "integer",
                        prim::Kind::Categorical => "categorical",
                    })
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "low".into(),
                limits.iter().map(|l| range(l.2, 0)).collect::<Vec<_>>(),
            ),
            Column::new(
                "high".into(),
                limits.iter().map(|l| range(l.2, 1)).collect::<Vec<_>>(),
            ),
            Column::new(
                "categories".into(),
                limits
                    .iter()
                    .map(|l| match l.2 {
                        prim::Limit::Categories(keep) => Some(
                            keep.iter()
                                .map(|k| t.columns[l.1.column].categories[*k].as_str())
                                .collect::<Vec<_>>()
                                .join("|"),
                        ),
                        prim::Limit::Range(..) => None,
                    })
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "qp_low".into(),
                limits.iter().map(|l| l.1.quasi_p[0]).collect::<Vec<_>>(),
            ),
            Column::new(
                "qp_high".into(),
                limits.iter().map(|l| l.1.quasi_p[1]).collect::<Vec<_>>(),
            ),
        ],
    )
    .map_err(ReportError::table("PRIM limits"))?;
    write_frame(dir, "prim_limits", &mut limits_df)?;

    let mut md = String::from("\n## Where it tips: scenario discovery (PRIM)\n\n");
    let skipped = verdicts.len() - rows.len();
    let b = t.chosen_box();
    if t.outcomes == 0 || t.outcomes == t.runs {
        md.push_str(&format!(
            "{}: there is no boundary to find.\n",
            say.uniform(t.outcomes == 0, t.runs)
        ));
        return Ok(md);
    }
    if b.restricted.is_empty() {
        md.push_str(&format!(
            "PRIM found no box of the parameters where {} are denser than in the whole grid ({} of {} runs).\n\n",
            say.runs, t.outcomes, t.runs
        ));
    } else {
        md.push_str(&format!(
            "{} when {} (covers {:.0}% of the {}; {:.0}% of the runs in this box {}).\n\n",
            say.holds,
            (b.restricted.iter())
                .map(|r| t.describe_md(b, r))
                .collect::<Vec<_>>()
                .join(" and "),
            100.0 * b.coverage,
            say.runs,
            100.0 * b.density,
            say.in_box
        ));
        // A limit whose every side has a quasi-p-value above 0.05 is part
        // of the box, but would not hold the density up on its own.
        let weak: Vec<String> = (b.restricted.iter())
            .filter_map(|r| {
                let sides: Vec<f64> = r.quasi_p.iter().flatten().copied().collect();
                let least = sides.iter().copied().reduce(f64::min)?;
                (least >= QUASI_P_MATTERS).then(|| {
                    format!(
                        "`{}` (quasi-p {})",
                        t.columns[r.column].name,
                        p_value(Some(least))
                    )
                })
            })
            .collect();
        if !weak.is_empty() {
            md.push_str(&format!(
                "{} (a quasi-p-value of {QUASI_P_MATTERS} or more: without it the box would be about as dense).\n\n",
                match weak.split_last() {
                    Some((last, [])) => format!("Its limit on {last} matters little"),
                    Some((last, rest)) => format!(
                        "Its limits on {} and {last} each matter little",
                        rest.join(", ")
                    ),
                    None => String::new(),
                }
            ));
        }
        md.push_str("| parameter | box | quasi-p, lower limit | quasi-p, upper limit |\n|---|---|---|---|\n");
        for r in &b.restricted {
            md.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                t.columns[r.column].name,
                t.describe_md(b, r),
                p_value(r.quasi_p[0]),
                p_value(r.quasi_p[1])
            ));
        }
        md.push_str(&format!(
            "\nThe box holds {} of the {} runs (mass {:.0}%), {} of the {} {}.\n\n",
            b.n,
            t.runs,
            100.0 * b.mass,
            b.k,
            t.outcomes,
            say.of_them
        ));
    }
    let points: Vec<plots::TrajectoryPoint> = t
        .boxes
        .iter()
        .enumerate()
        .map(|(i, b)| plots::TrajectoryPoint {
            coverage: b.coverage,
            density: b.density,
            restricted: b.restricted.len(),
            pasted: i >= t.peeled,
        })
        .collect();
    plots::prim_trajectory(
        &plot_dir.join(PRIM_PLOT),
        &format!("PRIM trajectory: {}", say.runs),
        &points,
        t.chosen,
    )?;
    md.push_str(&format!("![PRIM trajectory](plots/{PRIM_PLOT}.svg)\n\n"));
    md.push_str(&format!(
        "*PRIM (Friedman and Fisher 1999) as the EMA Workbench runs it (peel and paste alpha 0.05, minimum mass 0.05, its default objective) on the {} runs {}{}, over every axis path (numbers as numbers, anything else as categories). Each marker is a box of the peeling (filled) and pasting (hollow) trajectory; the reported box (ringed) has the highest harmonic mean of coverage and density. A quasi-p-value is the one-sided binomial probability of the box's density were its runs drawn from the box without that limit (Bryant and Lempert 2010): small means the limit matters. Tables: `prim_trajectory.csv` (every box), `prim_limits.csv` (every restricted parameter of every box).*\n\n",
        t.runs,
        say.verdict,
        if skipped > 0 {
            // "runs without ..." / "runs where ...": one is a run.
            let what = match skipped {
                1 => say.skipped.replacen("runs", "run", 1),
                _ => say.skipped.clone(),
            };
            format!(" ({skipped} {what} left out)")
        } else {
            String::new()
        }
    ));
    // The alternative view: a classification tree's leaves, most runs that
    // never recover first.
    let tree = crate::cart::cart(&params, &y)?;
    let mut leaves: Vec<&crate::cart::Leaf> = tree.leaves.iter().collect();
    leaves.sort_by(|a, b| b.k.cmp(&a.k).then(a.n.cmp(&b.n)));
    let mut rows_md = format!(
        "A classification tree (CART) on the same runs, as the EMA Workbench's `CART` grows it (Gini splits, every leaf at least 5% of the runs): its leaves, most {} first.\n\n| leaf | runs | {} | share |\n|---|---|---|---|\n",
        say.runs, say.column
    );
    for l in &leaves {
        rows_md.push_str(&format!(
            "| {} | {} | {} | {:.0}% |\n",
            tree.describe(l),
            l.n,
            l.k,
            100.0 * l.k as f64 / l.n as f64
        ));
    }
    md.push_str(&collapsed(
        &format!("CART tree: {} leaves", leaves.len()),
        &rows_md,
    ));
    md.push('\n');
    Ok(md)
}

#[cfg(test)]
mod tests {
    /// A plot's title holds a user's labels: whatever they hold, the
    /// Markdown still shows the plot (a `]` ended its image before).
    #[test]
    fn a_plot_is_shown_whatever_its_title_holds() {
        use pulldown_cmark::{Event, Parser, Tag};
        let p = PlotFile {
            title: "Success rate, name=x]y [a](b) *c*".to_string(),
            stem: "success_rate_1".to_string(),
            caption: String::new(),
            group: Group::Success,
        };
        let images: Vec<String> = Parser::new(&plot_md(&p))
            .filter_map(|e| match e {
                Event::Start(Tag::Image { dest_url, .. }) => Some(dest_url.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(images, ["plots/success_rate_1.svg"]);
    }

    use super::*;
    use crate::plots::{Band, BandPoint};

    /// shared-db: `svc_b.max_in_flight` = unbounded, 8 is one numeric
    /// axis with a null cap (its `values` are `None`); its lines are
    /// named with the axis, as without `unbounded`; a word axis is not.
    #[test]
    fn a_numeric_axis_with_unbounded_names_its_lines() {
        let dim = |name: &str, labels: &[&str], values: Option<Vec<f64>>| crate::load::Dim {
            name: name.to_string(),
            paths: vec![name.to_string()],
            labels: labels.iter().map(|l| l.to_string()).collect(),
            values,
        };
        assert_eq!(
            line_labels(&dim("svc_b.max_in_flight", &["unbounded", "8"], None)),
            ["svc_b.max_in_flight=unbounded", "svc_b.max_in_flight=8"]
        );
        assert_eq!(
            line_labels(&dim(
                "svc_b.max_in_flight",
                &["4", "8"],
                Some(vec![4.0, 8.0])
            )),
            ["svc_b.max_in_flight=4", "svc_b.max_in_flight=8"]
        );
        assert_eq!(
            line_labels(&dim("strategy", &["naive", "deadline"], None)),
            ["naive", "deadline"]
        );
    }

    /// A column's value for (strategy, level).
    type Value = dyn Fn(usize, usize) -> f64;

    /// A sweep directory: strategy in {a, b} x `axis` over `levels`, one
    /// seed; `row(strategy, level)` gives the extra columns' values of a
    /// run; every run's series is 3 seconds of success rate 1.
    fn write_sweep(
        axis: &str,
        levels: &[f64],
        extra: &[(&str, &Value)],
        report: &str,
    ) -> tempfile::TempDir {
        write_sweep_on("strategy", axis, levels, extra, report)
    }

    /// [`write_sweep`] with another first axis than `strategy` (levels
    /// "a" and "b").
    fn write_sweep_on(
        first: &str,
        axis: &str,
        levels: &[f64],
        extra: &[(&str, &Value)],
        report: &str,
    ) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("runs")).unwrap();
        std::fs::create_dir_all(dir.join("series")).unwrap();
        std::fs::write(
            dir.join("manifest.json"),
            format!(
                r#"{{"grid_name": "t", "scenario": "file.toml", "axes": ["{first}", "{axis}"], "dimensions": [["{first}"], ["{axis}"]],
                "status": "complete", "report": {report}}}"#
            ),
        )
        .unwrap();
        let n = 2 * levels.len();
        let (s_of, l_of) = (|i: usize| i / levels.len(), |i: usize| i % levels.len());
        let ids: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
        let mut cols = vec![
            Column::new("run_id".into(), ids.clone()),
            Column::new("run_index".into(), (0..n as u64).collect::<Vec<_>>()),
            Column::new(
                first.into(),
                (0..n).map(|i| ["a", "b"][s_of(i)]).collect::<Vec<_>>(),
            ),
            Column::new(
                axis.into(),
                (0..n).map(|i| levels[l_of(i)]).collect::<Vec<_>>(),
            ),
            Column::new("status".into(), vec!["ok"; n]),
            Column::new("svc_max_queue".into(), vec![1u64; n]),
        ];
        for (name, f) in extra {
            cols.push(Column::new(
                (*name).into(),
                (0..n).map(|i| f(s_of(i), l_of(i))).collect::<Vec<_>>(),
            ));
        }
        let mut runs = DataFrame::new(n, cols).unwrap();
        ParquetWriter::new(File::create(dir.join("runs/part-s0of1-000000.parquet")).unwrap())
            .finish(&mut runs)
            .unwrap();
        let mut series = DataFrame::new(
            3 * n,
            vec![
                Column::new(
                    "run_id".into(),
                    ids.iter()
                        .flat_map(|i| [i.clone(), i.clone(), i.clone()])
                        .collect::<Vec<_>>(),
                ),
                Column::new(
                    "second".into(),
                    (0..n).flat_map(|_| [0i64, 1, 2]).collect::<Vec<_>>(),
                ),
                Column::new("success_rate".into(), vec![Some(1.0f64); 3 * n]),
                Column::new("svc_queue_len".into(), vec![0u64; 3 * n]),
            ],
        )
        .unwrap();
        ParquetWriter::new(File::create(dir.join("series/part-s0of1-000000.parquet")).unwrap())
            .finish(&mut series)
            .unwrap();
        tmp
    }

    const DURATIONS: [f64; 5] = [2.0, 5.0, 10.0, 20.0, 30.0];

    /// ch37-window: the slow window's length is the axis; each slice's
    /// shading is its own window (it used to be the first run's, 10-12 s,
    /// for every slice).
    #[test]
    fn each_slice_shades_its_own_slow_window() {
        let tmp = write_sweep(
            "svc_b.slow.duration_s",
            &DURATIONS,
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, l| 10.0 + DURATIONS[l]),
            ],
            "{}",
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        let s = slicing(&sweep);
        assert_eq!(s.slices.len(), 5);
        for (at, slice) in s.slices.iter().enumerate() {
            let run = s.first_run[at].unwrap();
            let d = DURATIONS[slice.key[0].1];
            assert_eq!(
                triggers_of(&sweep, run),
                [Shade {
                    kind: ShadeKind::Slow,
                    from: 10.0,
                    to: 10.0 + d
                }],
                "slice {}",
                slice_name(&sweep, &slice.key)
            );
        }
        // The levels read as written: 30, not 30.0.
        assert_eq!(sweep.dims[1].labels, ["2", "5", "10", "20", "30"]);
        // The recovery plot's data: one line per strategy, never marked.
        let _ = write(tmp.path()).unwrap();
        assert!(
            tmp.path()
                .join("analysis/plots/success_rate_4.png")
                .exists()
        );
    }

    /// Without a strategy axis the lines are the first axis that sets no
    /// trigger: lines that differ in their trigger would share no window.
    #[test]
    fn without_a_strategy_the_lines_are_the_first_axis_setting_no_trigger() {
        let tmp = write_sweep_on(
            "svc_b.slow.duration_s",
            "svc.max_queue",
            &[1.0, 2.0],
            &[],
            "{}",
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        assert_eq!(line_dim(&sweep), Some(1));
        let tmp = write_sweep_on(
            "svc.max_queue",
            "svc_b.slow.duration_s",
            &[1.0, 2.0],
            &[],
            "{}",
        );
        assert_eq!(line_dim(&Sweep::load(tmp.path()).unwrap()), Some(0));
        let tmp = write_sweep("svc_b.slow.duration_s", &[1.0, 2.0], &[], "{}");
        assert_eq!(line_dim(&Sweep::load(tmp.path()).unwrap()), Some(0));
    }

    /// A second report removes the files the first one wrote and no longer
    /// writes (a slice not drawn any more), and nothing else: not a file of
    /// the user's beside them, not a listed name outside `analysis/`.
    #[test]
    fn a_report_removes_its_own_stale_files_only() {
        let tmp = write_sweep("svc_b.slow.duration_s", &[1.0, 2.0], &[], "{}");
        let analysis = tmp.path().join("analysis");
        write(tmp.path()).unwrap();
        let listed = std::fs::read_to_string(analysis.join(REPORT_FILES)).unwrap();
        assert!(listed.lines().any(|l| l == "index.md"), "{listed}");
        assert!(
            listed.lines().any(|l| l == "plots/success_rate_1.png"),
            "{listed}"
        );
        // A plot of the first report that the second does not draw, a file
        // of the user's, and a listed name that leaves analysis/.
        std::fs::write(analysis.join("plots/success_rate_9.png"), "old").unwrap();
        std::fs::write(analysis.join("plots/mine.png"), "user").unwrap();
        std::fs::write(tmp.path().join("keep.txt"), "user").unwrap();
        std::fs::write(
            analysis.join(REPORT_FILES),
            format!("{listed}plots/success_rate_9.png\n../keep.txt\n"),
        )
        .unwrap();
        write(tmp.path()).unwrap();
        assert!(!analysis.join("plots/success_rate_9.png").exists());
        assert!(analysis.join("plots/success_rate_1.png").exists());
        assert!(analysis.join("plots/mine.png").exists());
        assert!(tmp.path().join("keep.txt").exists());
        let listed = std::fs::read_to_string(analysis.join(REPORT_FILES)).unwrap();
        assert!(!listed.contains("mine.png"), "{listed}");
        assert!(listed.lines().any(|l| l == "index.md"), "{listed}");
    }

    /// A report killed halfway leaves nothing the next one keeps: killed
    /// while writing, its files are in the staging folder; killed while
    /// moving them into place, they are listed already.
    #[test]
    fn a_killed_report_leaves_nothing_the_next_one_keeps() {
        let tmp = write_sweep("svc_b.slow.duration_s", &[1.0, 2.0], &[], "{}");
        let analysis = tmp.path().join("analysis");
        write(tmp.path()).unwrap();
        assert!(!analysis.join(STAGING).exists());
        // Killed while moving: a listed plot of a slice the next report
        // does not draw is in place; killed before: another is staged.
        let listed = std::fs::read_to_string(analysis.join(REPORT_FILES)).unwrap();
        std::fs::write(analysis.join("plots/success_rate_8.png"), "moved").unwrap();
        std::fs::write(
            analysis.join(REPORT_FILES),
            format!("{listed}plots/success_rate_8.png\n"),
        )
        .unwrap();
        std::fs::create_dir_all(analysis.join(STAGING).join("plots")).unwrap();
        std::fs::write(
            analysis.join(STAGING).join("plots/success_rate_9.png"),
            "half",
        )
        .unwrap();
        std::fs::write(analysis.join("plots/mine.png"), "user").unwrap();
        write(tmp.path()).unwrap();
        assert!(!analysis.join("plots/success_rate_8.png").exists());
        assert!(!analysis.join("plots/success_rate_9.png").exists());
        assert!(!analysis.join(STAGING).exists());
        assert!(analysis.join("plots/mine.png").exists());
        let listed = std::fs::read_to_string(analysis.join(REPORT_FILES)).unwrap();
        let on_disk: Vec<String> = files_under(&analysis)
            .unwrap()
            .iter()
            .map(|p| p.display().to_string())
            .filter(|p| p != "plots/mine.png" && p != REPORT_FILES)
            .collect();
        assert_eq!(listed.lines().collect::<Vec<_>>(), on_disk);
    }

    /// A tier whose adaptive limit acts in some run gets a plot of the
    /// limit over time; one without (its lowest limit 0) does not.
    #[test]
    fn the_adaptive_limit_is_drawn_where_one_acts() {
        for (lowest, drawn) in [(0.0, false), (60.0, true)] {
            let tmp = write_sweep(
                "svc_b.slow.duration_s",
                &[1.0, 2.0],
                &[("svc_limit_lowest", &move |_, _| lowest)],
                "{}",
            );
            let path = tmp.path().join("series/part-s0of1-000000.parquet");
            let mut series = ParquetReader::new(File::open(&path).unwrap())
                .finish()
                .unwrap();
            let n = series.height();
            series
                .with_column(Column::new("svc_limit".into(), vec![60u64; n]))
                .unwrap();
            ParquetWriter::new(File::create(&path).unwrap())
                .finish(&mut series)
                .unwrap();
            write(tmp.path()).unwrap();
            let plot = tmp.path().join("analysis/plots/limit_svc_0.png");
            assert_eq!(plot.exists(), drawn, "lowest limit {lowest}");
        }
    }

    /// A trigger set in the scenario file, which no column of the runs
    /// names, is shaded as what it is: a crash as an outage, from the
    /// manifest's record of the scenario's windows.
    #[test]
    fn a_trigger_of_the_scenario_file_is_shaded_as_what_it_is() {
        let tmp = write_sweep(
            "db.slots",
            &[4.0, 8.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 30.0),
            ],
            "{}",
        );
        let mut sweep = Sweep::load(tmp.path()).unwrap();
        let generic = triggers_of(&sweep, 0);
        assert_eq!(
            generic.iter().map(|s| s.kind).collect::<Vec<_>>(),
            [ShadeKind::Trigger]
        );
        sweep.manifest.triggers = vec![crate::manifest::TriggerWindow {
            path: "db.crash".into(),
            start_s: 10.0,
            duration_s: 20.0,
            factor: None,
        }];
        assert_eq!(
            triggers_of(&sweep, 0),
            [Shade {
                kind: ShadeKind::Outage,
                from: 10.0,
                to: 30.0
            }]
        );
        // A slow window of factor 1 changes nothing: not shaded.
        sweep
            .manifest
            .triggers
            .push(crate::manifest::TriggerWindow {
                path: "db.slow".into(),
                start_s: 40.0,
                duration_s: 5.0,
                factor: Some(1.0),
            });
        assert_eq!(triggers_of(&sweep, 0).len(), 1);
    }

    /// An error, crash or cache-flush window is shaded as what it is.
    #[test]
    fn a_cache_flush_is_shaded_as_an_outage() {
        let tmp = write_sweep(
            "svc_b.cache.flush_duration_s",
            &DURATIONS,
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, l| 10.0 + DURATIONS[l]),
            ],
            "{}",
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        let s = slicing(&sweep);
        let run = s.first_run[0].unwrap();
        let d = DURATIONS[s.slices[0].key[0].1];
        assert_eq!(
            triggers_of(&sweep, run),
            [Shade {
                kind: ShadeKind::Outage,
                from: 10.0,
                to: 10.0 + d
            }]
        );
    }

    /// The offered-load plot is drawn at the tier whose load came closest
    /// to its capacity, and stacks the median retries on the median first
    /// tries (arrivals less retries).
    #[test]
    fn offered_load_is_drawn_at_the_bottleneck_with_retries_on_top() {
        let key = |line, sec| (0usize, line, sec);
        let mut values: SliceSeries = vec![HashMap::new(); 6];
        // Tier 0: 300 arrivals against 1,000/s; tier 1: 300 (of them 100,
        // then 200 retries) against 200/s: the bottleneck.
        for t in 0..2 {
            for sec in 0..2u32 {
                values[3 * t].insert(key(0, sec), vec![300.0, 300.0, 300.0]);
                values[3 * t + 2].insert(key(0, sec), vec![[1000.0, 200.0][t]; 3]);
            }
        }
        values[4].insert(key(0, 0), vec![100.0, 90.0, 110.0]);
        values[4].insert(key(0, 1), vec![200.0, 200.0, 250.0]);
        assert_eq!(bottleneck(&values, 2, 0), Some((1, 1.5)));
        assert_eq!(
            load_verdict("b", 1.5),
            "b is this slice's bottleneck: its load reached 1.50x its capacity."
        );
        assert_eq!(
            load_verdict("api", 0.0625),
            "No tier came near its capacity: api, the closest, at most 0.06x of it."
        );
        assert_eq!(bottleneck(&values, 2, 1), None, "no such slice");
        let panels = load_panels(&values, 1, 0, &["naive".to_string()], None);
        assert_eq!(panels.len(), 1);
        let p = &panels[0].points;
        assert_eq!(
            (p[0].first, p[0].retries, p[0].capacity, p[0].admitted),
            (200.0, 100.0, Some(200.0), None)
        );
        assert_eq!((p[1].first, p[1].retries), (100.0, 200.0));
        assert_eq!(turned_away_share(&panels[0]), 0.0, "not known");
        // What tier 1 let in: 150 of the 300 in each second.
        let mut let_in = HashMap::new();
        for sec in 0..2u32 {
            let_in.insert(key(0, sec), vec![140.0, 150.0, 160.0]);
        }
        let panels = load_panels(&values, 1, 0, &["naive".to_string()], Some(&let_in));
        assert_eq!(panels[0].points[1].admitted, Some(150.0));
        assert_eq!(turned_away_share(&panels[0]), 0.5);
        assert_eq!(
            turned_away_note("b", 0.5, 2, &[]),
            " b turned away 50% of its arrivals in the panel that turned away most (the solid line is what it let in); the runs' `b_rejected_full` (a full queue or a concurrency limit), `b_rate_limited`, `b_shed` and `b_refused_down` say why."
        );
        let full = (30.0, TURNED_AWAY_CAUSES[0].1, "b_rejected_full".to_string());
        assert_eq!(
            turned_away_note("b", 0.5, 1, std::slice::from_ref(&full)),
            " b turned away 50% of its arrivals (the solid line is what it let in): over the slice's runs, all of them for a full queue or a concurrency limit (`b_rejected_full`)."
        );
        let limited = (10.0, TURNED_AWAY_CAUSES[1].1, "b_rate_limited".to_string());
        let down = (0.1, TURNED_AWAY_CAUSES[3].1, "b_refused_down".to_string());
        assert_eq!(
            turned_away_note("b", 0.5, 1, &[full, limited, down]),
            " b turned away 50% of its arrivals (the solid line is what it let in): over the slice's runs, 75% for a full queue or a concurrency limit (`b_rejected_full`), 25% by its rate limit (`b_rate_limited`), under 1% refused while it was down (`b_refused_down`)."
        );
        assert_eq!(turned_away_note("b", 0.005, 1, &[]), "");
    }

    /// A heading right after a collapsed block renders as a heading, not as
    /// raw text inside the block (the page showed "### Offered load ...").
    #[test]
    fn a_heading_after_a_collapsed_block_is_a_heading() {
        let md = collapsed("2 plots", "body") + "### Next\n";
        let page = html(&md, &[PathBuf::from("/nonexistent")], &[]);
        assert!(page.contains("<h3>Next</h3>"), "{page}");
    }

    /// A load spike is shaded as a spike, not as a slow window, and a slow
    /// window of length 0 is none.
    #[test]
    fn a_load_spike_is_shaded_as_a_spike() {
        let tmp = write_sweep(
            "client.spike.duration_s",
            &[2.0, 5.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, l| [12.0, 15.0][l]),
                ("client.spike.start_s", &|_, _| 10.0),
                ("client.spike.factor", &|_, _| 2.0),
                ("svc_b.slow.duration_s", &|_, _| 0.0),
            ],
            "{}",
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        assert_eq!(
            triggers_of(&sweep, 1),
            [Shade {
                kind: ShadeKind::Spike,
                from: 10.0,
                to: 15.0
            }]
        );
    }

    /// A slow window of length 0 (a load profile's grid marks where the
    /// overload ends so) is the line recovery is measured from.
    #[test]
    fn a_trigger_of_length_0_is_a_mark() {
        let tmp = write_sweep(
            "x",
            &[1.0, 2.0],
            &[
                ("window_start_s", &|_, _| 30.0),
                ("window_end_s", &|_, _| 30.0),
                ("svc_b.slow.start_s", &|_, _| 30.0),
                ("svc_b.slow.duration_s", &|_, _| 0.0),
            ],
            "{}",
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        assert_eq!(
            triggers_of(&sweep, 1),
            [Shade {
                kind: ShadeKind::Mark,
                from: 30.0,
                to: 30.0
            }]
        );
    }

    /// No trigger: no recovery in the headline, the `[report] metrics` are
    /// there, and the page says why.
    #[test]
    fn without_a_trigger_recovery_is_not_reported() {
        let tmp = write_sweep(
            "x",
            &[1.0, 2.0],
            &[
                ("window_start_s", &|_, _| 0.0),
                ("window_end_s", &|_, _| 0.0),
                ("recovered", &|_, _| 0.0),
                ("recovery_censored_s", &|_, _| 3.0),
                ("goodput", &|s, _| s as f64),
                ("c_busy_s", &|s, l| (s + l) as f64),
            ],
            r#"{"metrics": ["c_busy_s"]}"#,
        );
        let report = write(tmp.path()).unwrap();
        assert!(
            !report.headline.contains("p_not_recovered"),
            "{}",
            report.headline
        );
        assert!(
            report.headline.contains("c_busy_s_mean"),
            "{}",
            report.headline
        );
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        assert!(md.contains("**No slow window or load spike**"), "{md}");
        assert!(!md.contains("Never recovered"), "{md}");
        // Nor in the tables: no run has a verdict.
        let csv = std::fs::read_to_string(tmp.path().join("analysis/summary.csv")).unwrap();
        let mut lines = csv.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let p = head.iter().position(|c| *c == "p_not_recovered").unwrap();
        assert!(lines.all(|l| l.split(',').nth(p) == Some("")), "{csv}");
        let effects =
            std::fs::read_to_string(tmp.path().join("analysis/main_effects.csv")).unwrap();
        assert!(!effects.contains(",recovered,"), "{effects}");
    }

    /// Points that never recovered tie on recovery time in the ranking
    /// (their censored time is only when their arrivals ended): the next
    /// key, goodput, orders them.
    #[test]
    fn never_recovered_points_tie_on_recovery_in_the_ranking() {
        let tmp = write_sweep(
            "x",
            &[1.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|_, _| 0.0),
                ("recovery_censored_s", &|_, l| [20.0, 30.0][l]),
                ("goodput", &|s, l| [[0.1, 0.9], [0.2, 0.8]][s][l]),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let ranking = &md[md.find("### Ranking").unwrap()..md.find("### Main effects").unwrap()];
        let rows: Vec<&str> = (ranking.lines())
            .filter(|l| l.starts_with("| a |") || l.starts_with("| b |"))
            .collect();
        assert!(rows[0].starts_with("| a | 2 |"), "{ranking}");
        assert!(rows[1].starts_with("| b | 2 |"), "{ranking}");
        assert!(rows[3].starts_with("| a | 1 |"), "{ranking}");
    }

    /// An axis that changes nothing does not repeat a tipping step at each
    /// of its levels: the step of `x` from 6 to 7 is drawn at one level of
    /// `noise`, and the other slots go to other slices.
    #[test]
    fn a_tipping_step_is_drawn_once_per_axis_and_line() {
        let levels: Vec<f64> = (1..=10).map(f64::from).collect();
        let tmp = write_sweep_on(
            "noise",
            "x",
            &levels,
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|_, l| if l >= 6 { 0.0 } else { 1.0 }),
                ("recovery_censored_s", &|_, _| 3.0),
                ("success_rate_after", &|_, l| 1.0 - l as f64 / 100.0),
            ],
            "{}",
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        let (slices, _) = choose_slices(&sweep, None, 6);
        let tipping: Vec<&Slice> = (slices.iter())
            .filter(|s| s.reason.starts_with("tipping"))
            .collect();
        assert_eq!(tipping.len(), 2, "{slices:?}");
        assert_eq!(tipping[0].key[0], tipping[1].key[0], "{slices:?}");
    }

    /// More combinations than plots: the worst, the mildest and both sides
    /// of the tipping step are drawn, each with its reason; `[report]
    /// slices` comes first. Ties of P(not recovered) are broken by the
    /// success after the trigger, not by the censored recovery time (a
    /// lower bound: here it grows with x while success falls).
    #[test]
    fn time_plots_pick_the_slices_that_matter() {
        let levels: Vec<f64> = (1..=10).map(f64::from).collect();
        // b tips from recovering to not at x = 7; a never tips.
        let tmp = write_sweep(
            "x",
            &levels,
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|s, l| {
                    if s == 1 && l >= 6 { 0.0 } else { 1.0 }
                }),
                ("recovery_censored_s", &|_, l| 10.0 - l as f64),
                ("success_rate_after", &|_, l| 1.0 - l as f64 / 100.0),
            ],
            r#"{"slices": ["x=2"]}"#,
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        let line = sweep.dim_of("x").map(|_| 0);
        let (slices, note) = choose_slices(&sweep, line, 5);
        let levels: Vec<&str> = slices
            .iter()
            .map(|s| sweep.dims[1].labels[s.key[0].1].as_str())
            .collect();
        // x=1 the mildest; x=2 named; 6 and 7 the tipping step; x=10 the
        // worst.
        assert_eq!(levels, ["1", "2", "6", "7", "10"], "{slices:?}");
        let reasons: Vec<&str> = slices.iter().map(|s| s.reason.as_str()).collect();
        assert!(reasons[0].starts_with("the mildest"), "{reasons:?}");
        assert!(reasons[1].contains("[report]"), "{reasons:?}");
        assert!(reasons[2].starts_with("tipping"), "{reasons:?}");
        assert_eq!(
            reasons[4],
            "the worst: P(not recovered) 0.50 on average over the lines, success after the trigger 91.0%"
        );
        assert_eq!(
            note.unwrap(),
            "Time plots are drawn for 5 of 10 combinations of the other axes: 1 named in `[report] slices`, the worst and the mildest by P(not recovered), then 2 on the sides of the steepest tipping steps of P(not recovered); each plot says why it is here."
        );
    }

    /// As in ch37-protections, no tipping step (here every point
    /// recovers), so all but the worst and the mildest are next in grid
    /// order, and the note says that, not "chosen for what they show".
    #[test]
    fn the_time_plot_note_says_which_were_next_in_grid_order() {
        let levels: Vec<f64> = (1..=10).map(f64::from).collect();
        let tmp = write_sweep(
            "x",
            &levels,
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|_, _| 1.0),
                ("recovery_censored_s", &|_, _| 3.0),
                ("success_rate_after", &|_, l| 1.0 - l as f64 / 100.0),
            ],
            "{}",
        );
        let sweep = Sweep::load(tmp.path()).unwrap();
        let line = sweep.dim_of("x").map(|_| 0);
        let (slices, note) = choose_slices(&sweep, line, 5);
        let next = (slices.iter())
            .filter(|s| s.reason == NEXT_IN_GRID_ORDER)
            .count();
        assert_eq!(next, 3, "{slices:?}");
        assert_eq!(
            note.unwrap(),
            "Time plots are drawn for 5 of 10 combinations of the other axes: the worst and the mildest by P(not recovered), then 3 next in grid order (no two combinations one level apart on a numeric axis differ in P(not recovered): no tipping step to show); each plot says why it is here."
        );
    }

    /// The runs of [`runs_without_a_verdict_are_neither_counted_nor_called_recovered`]
    /// that cannot show recovery: strategy `a`'s first at x=1, and its one
    /// at x=2.
    fn no_verdict(s: usize, l: usize) -> bool {
        s == 0 && (l == 0 || l == 3)
    }

    /// A metric no axis moves beyond the seeds' noise is named with its
    /// noise in "In short", not left out (and its noise is not the one
    /// the other metrics' line gives as the most removed).
    #[test]
    fn a_metric_of_noise_alone_is_named_in_short() {
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 2.0, 2.0],
            &[
                ("goodput", &|s, _| s as f64),
                ("wasted_share", &|_, l| (l % 2) as f64),
                // All the noise at one point, a's x=1 (its seeds 0 and 10).
                ("success_latency_p99_s", &|s, l| {
                    if s == 0 && l < 2 {
                        10.0 * l as f64
                    } else {
                        1.0
                    }
                }),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        assert!(
            md.contains("- No axis moves these beyond the seeds' noise, which may hide an effect: `wasted_share` (seed noise 100% of its variance), `success_latency_p99_s` (seed noise 100% of its variance, 100% of that noise from the seeds of one point, `strategy=a x=1`), `svc_max_queue` (the same in every run)."),
            "{md}"
        );
        assert!(
            md.contains("with the seeds' noise removed: at most 0.0% of the variance of a metric listed here"),
            "{md}"
        );
    }

    /// bad-replica: a metric the same in every run has an empty panel; it
    /// is left out of the figure and named under it.
    #[test]
    fn a_metric_the_same_in_every_run_is_named_not_drawn() {
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 2.0, 2.0],
            &[
                ("goodput", &|s, _| s as f64),
                ("wasted_share", &|_, _| 0.25),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        assert!(
            md.contains("![Sensitivity indices](plots/sensitivity.svg)\n\n*Not drawn: `wasted_share`, `svc_max_queue`, each the same in every run (no index to show).*"),
            "{md}"
        );
        let svg =
            std::fs::read_to_string(tmp.path().join("analysis/plots/sensitivity.svg")).unwrap();
        let panel = |m: &str| svg.contains(&format!("\n{m}\n</text>"));
        assert!(panel("goodput"), "{svg}");
        assert!(!panel("wasted_share") && !panel("svc_max_queue"));
    }

    /// Two axes that move a metric as much (a pure interaction) are both
    /// named: the tie is not broken by the axes' order.
    #[test]
    fn in_short_names_an_axis_as_influential_as_the_top_one() {
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 2.0, 2.0],
            &[("goodput", &|s, l| ((s + l / 2) % 2) as f64)],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        assert!(
            md.contains("moves most: `goodput` (1.00, as much as `"),
            "{md}"
        );
    }

    /// A grid none of whose runs has a verdict says so, and nothing of
    /// "every other point": there is none.
    #[test]
    fn a_grid_without_any_verdict_speaks_of_no_other_point() {
        let tmp = write_sweep(
            "x",
            &[1.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|_, _| 0.0),
                ("recovery_censored_s", &|_, _| 0.5),
                ("goodput", &|s, _| s as f64),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        assert!(
            md.contains(
                "- **No verdict** (every run failed or cannot show recovery): 4 of 4 points"
            ),
            "{md}"
        );
        assert!(
            !md.contains("- Every other point") && !md.contains("- Every point"),
            "{md}"
        );
    }

    /// Runs without a verdict (here: cannot show recovery) are left out of
    /// the censored count beside the mean, which is over the others; a
    /// point none of whose runs has one is named as such, and "In short"
    /// does not say that every point recovered. At strategy `a`, x=1: one
    /// run without a verdict, one not recovered (28 s censored), one
    /// recovered in 2 s; `b` recovers everywhere.
    #[test]
    fn runs_without_a_verdict_are_neither_counted_nor_called_recovered() {
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 1.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|s, l| {
                    if s == 0 && l <= 1 || no_verdict(s, l) {
                        0.0
                    } else {
                        1.0
                    }
                }),
                ("recovery_censored_s", &|s, l| match (s, l) {
                    _ if no_verdict(s, l) => 0.5,
                    (0, 1) => 28.0,
                    _ => 2.0,
                }),
                ("goodput", &|s, _| s as f64),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let h = &report.headline;
        let rows: Vec<&str> = h.lines().skip(2).collect();
        assert!(
            rows[0].starts_with("| a |") && rows[0].contains("| >= 15.000 (1 of 2 censored) |"),
            "{h}"
        );
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        assert!(
            md.contains(
                "- **No verdict** (every run failed or cannot show recovery): 1 of 4 points: `"
            ),
            "{md}"
        );
        assert!(
            md.contains("- Every other point recovered in at least one seed."),
            "{md}"
        );
        assert!(!md.contains("- Every point recovered"), "{md}");
    }

    /// "Never recovered" reads as such, not as the censored number (28.000
    /// read as a recovery time): `never` where no seed recovered, `>= X (k
    /// of n censored)` where some did not, in the per-point table (stdout),
    /// the ranking and the main effects; the number stays in summary.csv.
    #[test]
    fn never_recovered_is_not_printed_as_a_time() {
        // Two seeds per point: levels 1, 1, 2, 2 are two points of x.
        // a never recovers; b at x=1 recovers in one seed of two, at x=2 in both.
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 2.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|s, l| {
                    if s == 0 || l == 1 { 0.0 } else { 1.0 }
                }),
                ("recovery_censored_s", &|s, l| {
                    if s == 0 || l == 1 { 28.0 } else { 2.0 }
                }),
                ("goodput", &|s, _| s as f64),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let h = &report.headline;
        assert!(h.contains("| recovery_s_mean |"), "{h}");
        assert!(!h.contains("recovery_censored_s_mean"), "{h}");
        assert!(!h.contains("28.000"), "{h}");
        let rows: Vec<&str> = h.lines().skip(2).collect();
        assert!(
            rows[0].starts_with("| a |") && rows[0].contains("| never |"),
            "{h}"
        );
        assert!(
            rows[1].starts_with("| a |") && rows[1].contains("| never |"),
            "{h}"
        );
        assert!(rows[2].contains("| >= 15.000 (1 of 2 censored) |"), "{h}");
        assert!(rows[3].contains("| 2.000 |"), "{h}");
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let ranking = &md[md.find("### Ranking").unwrap()..md.find("### Main effects").unwrap()];
        assert!(ranking.contains("| 2.000 |"), "{ranking}");
        assert!(
            ranking.contains("never") && !ranking.contains("28.000"),
            "{ranking}"
        );
        let effects = std::fs::read_to_string(tmp.path().join("analysis/main_effects.md")).unwrap();
        let times = &effects[effects.find("mean recovery time").unwrap()..];
        assert!(
            times.contains("| 1 | never | >= 15.000 (1 of 2 censored) |"),
            "{times}"
        );
        assert!(times.contains("| 2 | never | 2.000"), "{times}");
        assert!(!times.contains("28.000"), "{times}");
        // The censored number stays in the columns that say so.
        let csv = std::fs::read_to_string(tmp.path().join("analysis/summary.csv")).unwrap();
        assert!(
            csv.lines()
                .next()
                .unwrap()
                .contains("recovery_censored_s_mean")
        );
        assert!(csv.contains("28.0"), "{csv}");
        // The Markdown's columns are the tables' (recovery_s_mean among
        // them, as the same text).
        let summary_md = std::fs::read_to_string(tmp.path().join("analysis/summary.md")).unwrap();
        let md_columns: Vec<&str> = (summary_md.lines().next().unwrap().split('|'))
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let csv_columns: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let parquet = tmp.path().join("analysis/summary.parquet");
        let parquet = ParquetReader::new(File::open(parquet).unwrap())
            .finish()
            .unwrap();
        for c in &md_columns {
            assert!(csv_columns.contains(c), "{c} not in summary.csv");
            assert!(parquet.column(c).is_ok(), "{c} not in summary.parquet");
        }
        assert!(md_columns.contains(&"recovery_s_mean"), "{summary_md}");
        assert!(csv.contains(",never,"), "{csv}");
        assert!(csv.contains(",>= 15.000 (1 of 2 censored),"), "{csv}");
        // The share that recovered is a share, none a share too: `never`
        // is the recovery time's.
        let shares = &effects[..effects.find("mean recovery time").unwrap()];
        assert!(shares.contains("| 1 | 0% | 50% |"), "{shares}");
        assert!(shares.contains("| 2 | 0% | 100% |"), "{shares}");
        assert!(!shares.contains("never"), "{shares}");
    }

    /// "Never recovered" shows eight of its points: one of each level of
    /// the first axis first, so that b's lone point is not hidden behind
    /// a's ten.
    #[test]
    fn never_recovered_shows_a_point_of_each_strategy() {
        let levels: Vec<f64> = (1..=10).map(f64::from).collect();
        let tmp = write_sweep(
            "x",
            &levels,
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|s, l| if s == 1 && l < 9 { 1.0 } else { 0.0 }),
                ("recovery_censored_s", &|_, _| 5.0),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let line = (md.lines())
            .find(|l| l.starts_with("- **Never recovered**"))
            .expect(&md);
        assert!(
            line.starts_with("- **Never recovered** (no seed): 11 of 20 points: "),
            "{line}"
        );
        assert!(line.contains("`strategy=b x=10`"), "{line}");
        assert!(
            line.contains("`strategy=a x=1`") && line.contains(" and 3 more"),
            "{line}"
        );
    }

    /// `[report] prim` names the outcome PRIM looks for: here the runs of
    /// strategy a at x <= 5, where goodput is below 0.45; the box and its
    /// words follow the expression, not "never recovers".
    #[test]
    fn prim_looks_for_the_grid_s_own_outcome() {
        let levels: Vec<f64> = (1..=10).map(f64::from).collect();
        let tmp = write_sweep(
            "x",
            &levels,
            &[("goodput", &|s, l| {
                if s == 0 { l as f64 / 10.0 } else { 1.0 }
            })],
            r#"{"prim": "goodput < 0.45 and not goodput > 2"}"#,
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let section = &md[md.find("## Where it tips: scenario discovery").expect(&md)..];
        assert!(
            section.contains(
                "`goodput < 0.45 and not goodput > 2` when `x` <= 5.5 and `strategy` = a (covers 100% of the runs where `goodput < 0.45 and not goodput > 2`; 100% of the runs in this box have it)"
            ),
            "{section}"
        );
        assert!(!section.contains("never recover"), "{section}");
        assert!(
            section.contains(
                "on the 20 runs where `goodput < 0.45 and not goodput > 2` is true or false,"
            ),
            "{section}"
        );
        // A count, Int64 as every count of the tables (`restricted - 1`
        // of an unsigned 0 would wrap).
        let path = tmp.path().join("analysis/prim_trajectory.parquet");
        let trajectory = ParquetReader::new(std::fs::File::open(&path).unwrap())
            .finish()
            .unwrap();
        assert_eq!(
            trajectory.column("restricted").unwrap().dtype(),
            &DataType::Int64
        );
    }

    /// "In short" names the fastest point "every seed" only when each of its
    /// runs has a verdict: one of b/x=1's two runs cannot show recovery.
    #[test]
    fn in_short_says_the_fastest_point_was_judged_on_fewer_runs() {
        fn lone(s: usize, l: usize) -> bool {
            s == 1 && l == 0
        }
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 2.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|s, l| if lone(s, l) { 0.0 } else { s as f64 }),
                ("recovery_censored_s", &|s, l| {
                    if lone(s, l) {
                        0.5
                    } else {
                        [28.0, 1.0][s] + l as f64 * 0.1
                    }
                }),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let short = &md[md.find("## In short").unwrap()..md.find("## What happened").unwrap()];
        let fastest = short
            .lines()
            .find(|l| l.contains("**Fastest to recover**"))
            .expect(short);
        assert!(
            fastest.contains("(every run with a verdict: 1 of 2, the others failed or have none)")
                && fastest.contains("1.100 s on average"),
            "{short}"
        );
    }

    /// "In short" of a sweep whose every run recovered at once: the
    /// success rate during the trigger and the users failed per run.
    fn in_short_unharmed(during: &Value, failed: &Value) -> String {
        let tmp = write_sweep(
            "x",
            &[1.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|_, _| 1.0),
                ("recovery_censored_s", &|_, _| 0.0),
                ("success_rate_during", during),
                ("users_failed", failed),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        md[md.find("## In short").unwrap()..md.find("## What happened").unwrap()].to_string()
    }

    /// bad-replica: no user failed in any run. "In short" says so, not
    /// that every point recovered, nor which was fastest (all at 0 s).
    #[test]
    fn in_short_says_when_no_point_lost_users_to_the_trigger() {
        let short = in_short_unharmed(&|_, _| 1.0, &|_, _| 0.0);
        assert!(
            short.contains("- **No point lost users to the trigger**: no user failed in any of the 4 runs (success rate 1 during the trigger in every one): every run counts as recovered at 0 s, so recovery cannot tell the points apart; look at latency (`success_latency_p99_s`) and the other metrics below instead.\n"),
            "{short}"
        );
        assert!(!short.contains("Every point recovered"), "{short}");
        assert!(!short.contains("Fastest to recover"), "{short}");
        // Some users failed, none below the threshold (0.99 by default).
        let short = in_short_unharmed(&|s, l| [1.0, 1.0, 1.0, 0.9951][s * 2 + l], &|s, l| {
            [0.0, 0.0, 0.0, 3.0][s * 2 + l]
        });
        assert!(
            short.contains("- **No point fell below the recovery threshold during the trigger**: some users failed, but the success rate during the trigger was at least 0.995 in every one of the 4 runs, at or above the recovery threshold, 0.99: every run counts"),
            "{short}"
        );
        assert!(!short.contains("Fastest to recover"), "{short}");
        // One run below the threshold during the trigger: a recovery
        // verdict as before.
        let short = in_short_unharmed(&|s, l| [1.0, 1.0, 1.0, 0.5][s * 2 + l], &|s, l| {
            [0.0, 0.0, 0.0, 30.0][s * 2 + l]
        });
        assert!(!short.contains("No point"), "{short}");
        assert!(
            short.contains("- Every point recovered in at least one seed.\n"),
            "{short}"
        );
        assert!(short.contains("**Fastest to recover**"), "{short}");
    }

    /// Points tied for the fastest recovery are named together, not the
    /// first of them alone (the ranking may order them otherwise).
    #[test]
    fn in_short_names_every_point_tied_for_the_fastest_recovery() {
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 2.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|_, _| 1.0),
                ("recovery_censored_s", &|s, _| [5.0, 3.0][s]),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let fastest = (md.lines())
            .find(|l| l.contains("**Fastest to recover**"))
            .expect(&md);
        assert_eq!(
            fastest,
            "- **Fastest to recover** (every seed; 2 points tied): `strategy=b x=1`, `strategy=b x=2`, 3.000 s on average after the window."
        );
    }

    /// "In short" says once per axis which metrics it moves most, after the
    /// answer to the grid's question (never recovered, fastest), instead of
    /// "is moved most by" once per metric.
    #[test]
    fn in_short_groups_the_metrics_by_the_axis_that_moves_them() {
        let tmp = write_sweep(
            "x",
            &[1.0, 1.0, 2.0, 2.0],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|s, _| s as f64),
                ("recovery_censored_s", &|s, l| {
                    [28.0, 1.0][s] + l as f64 * 0.1
                }),
                ("goodput", &|s, l| 0.5 * s as f64 + 0.01 * (l % 2) as f64),
                ("wasted_share", &|s, l| {
                    0.3 * (l / 2) as f64 + 0.01 * s as f64
                }),
            ],
            "{}",
        );
        let report = write(tmp.path()).unwrap();
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let short = &md[md.find("## In short").unwrap()..md.find("## What happened").unwrap()];
        assert!(!short.contains("is moved most by"), "{short}");
        let never = short.find("**Never recovered**").expect(short);
        let fastest = short.find("**Fastest to recover**").expect(short);
        let groups = short.find("What moves each metric most").expect(short);
        assert!(never < fastest && fastest < groups, "{short}");
        let strategy: Vec<&str> = short
            .lines()
            .filter(|l| l.contains("**strategy** moves most:"))
            .collect();
        assert_eq!(strategy.len(), 1, "{short}");
        assert!(
            strategy[0].contains("`recovered`") && strategy[0].contains("`goodput`"),
            "{short}"
        );
        assert!(!strategy[0].contains("`wasted_share`"), "{short}");
        let x: Vec<&str> = short
            .lines()
            .filter(|l| l.contains("**x** moves most:"))
            .collect();
        assert_eq!(x.len(), 1, "{short}");
        assert!(x[0].contains("`wasted_share`"), "{short}");
    }

    /// One spelling of no limit: a null cap is `unbounded` in the per-point
    /// table and the ranking (it was `-`, like a missing value), and levels
    /// read as in the grid (`2`, not `2.000`).
    #[test]
    fn a_null_cap_reads_unbounded_in_the_tables() {
        let tmp = write_sweep(
            "x",
            &[2.0, f64::NAN],
            &[
                ("window_start_s", &|_, _| 10.0),
                ("window_end_s", &|_, _| 12.0),
                ("recovered", &|_, _| 1.0),
                ("recovery_censored_s", &|_, l| l as f64),
                ("goodput", &|s, _| s as f64),
            ],
            "{}",
        );
        // The second level is a null cap, as `sweep run` writes "unbounded".
        let path = tmp.path().join("runs/part-s0of1-000000.parquet");
        let mut runs = ParquetReader::new(File::open(&path).unwrap())
            .finish()
            .unwrap();
        let x: Vec<Option<i64>> = [Some(2), None, Some(2), None].into();
        runs.replace("x", Column::new("x".into(), x)).unwrap();
        ParquetWriter::new(File::create(&path).unwrap())
            .finish(&mut runs)
            .unwrap();
        let report = write(tmp.path()).unwrap();
        let h = &report.headline;
        assert!(
            h.contains("| a | unbounded |") && h.contains("| b | 2 |"),
            "{h}"
        );
        assert!(!h.contains("| a | - |"), "{h}");
        let md = std::fs::read_to_string(&report.index_md).unwrap();
        let ranking = &md[md.find("### Ranking").unwrap()..];
        assert!(ranking.contains("| unbounded |"), "{ranking}");
    }

    #[test]
    fn identical_lines_are_named_in_the_legend() {
        let band = |label: &str, m: f64| Band {
            label: label.to_string(),
            points: (0..5)
                .map(|i| BandPoint {
                    x: i as f64,
                    median: m + i as f64,
                    q25: m,
                    q75: m + 5.0,
                })
                .collect(),
        };
        let bands = [
            band("deadline", 0.0),
            band("deadline_budget", 0.0),
            band("naive", 3.0),
        ];
        assert_eq!(plots::coinciding(&bands), [None, Some(0), None]);
        assert_eq!(
            plots::legend_labels(&bands),
            ["deadline", "deadline_budget (on top of deadline)", "naive"]
        );
    }
}
