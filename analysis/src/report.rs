//! The report people read in the morning: `analysis/index.md` (and a
//! self-contained `index.html`), with the tables and plots it links.

use crate::error::{IoError, ReportError};
use crate::load::Sweep;
use crate::part::{self, Part};
use crate::plots::{self, Band, BandPoint, HeatPanel, IndexBars};
use crate::tables::{self, Effect, MetricSensitivity};
use polars::prelude::*;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Time plots drawn at most (one per combination of the non-line axes).
const MAX_SLICES: usize = 6;

pub struct Report {
    pub index_md: PathBuf,
    pub index_html: PathBuf,
    /// The per-point headline table (Markdown), for a terminal.
    pub headline: String,
}

/// Writes everything under `OUT_DIR/analysis/`.
pub fn write(out_dir: &Path) -> Result<Report, ReportError> {
    let sweep = Sweep::load(out_dir)?;
    let dir = out_dir.join("analysis");
    let plot_dir = dir.join("plots");
    std::fs::create_dir_all(&plot_dir).map_err(IoError::at(&plot_dir))?;
    let metrics = tables::main_metrics(&sweep);

    let mut summary = tables::summary(&sweep, &metrics)?;
    write_frame(&dir, "summary", &mut summary)?;
    let headline = headline(&sweep, &summary)?;
    write_text(&dir.join("summary.md"), &headline)?;

    let sens = tables::sensitivity(&sweep, &metrics);
    let mut sens_df = tables::sensitivity_frame(&sens)?;
    write_frame(&dir, "sensitivity", &mut sens_df)?;
    let sens_md = sensitivity_markdown(&sens);
    write_text(&dir.join("sensitivity.md"), &sens_md)?;

    let effects = tables::main_effects(&sweep, &metrics);
    let mut effects_df = tables::effects_frame(&effects)?;
    write_frame(&dir, "main_effects", &mut effects_df)?;
    let effects_md = effects_markdown(&sweep, &effects);
    write_text(&dir.join("main_effects.md"), &effects_md)?;

    let mut plot_notes = Vec::new();
    let mut plot_files = Vec::new();
    time_plots(&sweep, &plot_dir, &mut plot_files, &mut plot_notes)?;
    heatmap(&sweep, &plot_dir, &mut plot_files, &mut plot_notes)?;
    let bars: Vec<IndexBars> = sens
        .iter()
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
    if bars.is_empty() {
        plot_notes.push("No sensitivity bar chart: no metric has indices (see above).".to_string());
    } else {
        plots::sensitivity_bars(
            &plot_dir.join("sensitivity"),
            "Sensitivity: first-order (S1) and total (ST) indices per axis",
            &bars,
        )?;
        plot_files.push(("Sensitivity indices".to_string(), "sensitivity".to_string()));
    }

    let md = index_markdown(
        &sweep,
        &summary,
        &headline,
        &sens,
        &sens_md,
        &effects_md,
        &plot_files,
        &plot_notes,
    )?;
    let index_md = dir.join("index.md");
    write_text(&index_md, &md)?;
    let index_html = dir.join("index.html");
    let mut inlined = plot_files.clone();
    inlined.push(("Boundary".to_string(), "boundary".to_string()));
    write_text(&index_html, &html(&md, &plot_dir, &inlined))?;
    Ok(Report {
        index_md,
        index_html,
        headline,
    })
}

fn write_text(path: &Path, text: &str) -> Result<(), ReportError> {
    Ok(std::fs::write(path, text).map_err(IoError::at(path))?)
}

/// `name.parquet` and `name.csv` in `dir`.
fn write_frame(dir: &Path, name: &str, df: &mut DataFrame) -> Result<(), ReportError> {
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

/// The points ranked: recovered in more seeds first, then faster recovery,
/// higher goodput, lower failed-request latency; the first `n`.
fn ranking(sweep: &Sweep, summary: &DataFrame, n: usize) -> Result<String, ReportError> {
    let keys = [
        ("p_not_recovered", false),
        ("recovery_censored_s_mean", false),
        ("goodput_mean", true),
        ("failed_latency_median_s_mean", false),
    ];
    let keys: Vec<(&str, bool)> = keys
        .into_iter()
        .filter(|(k, _)| summary.column(k).is_ok())
        .collect();
    if keys.is_empty() || summary.height() < 2 {
        return Ok(String::new());
    }
    let mut cols = level_columns(sweep);
    cols.extend(keys.iter().map(|(k, _)| k.to_string()));
    let sorted = summary
        .sort(
            keys.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            SortMultipleOptions::default()
                .with_order_descending_multi(keys.iter().map(|(_, d)| *d).collect::<Vec<_>>())
                .with_nulls_last(true),
        )
        .and_then(|df| df.select(cols.iter().map(String::as_str)))
        .map_err(ReportError::table("ranking"))?;
    Ok(tables::markdown(&sorted.head(Some(n))))
}

fn headline(sweep: &Sweep, summary: &DataFrame) -> Result<String, ReportError> {
    let mut cols: Vec<String> = level_columns(sweep);
    cols.extend(
        [
            "runs",
            "failed",
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
    for m in [
        "recovery_censored_s_mean",
        "success_rate_after_mean",
        "goodput_mean",
        "failed_latency_median_s_mean",
    ]
    .into_iter()
    .map(String::from)
    .chain(leaf)
    .chain(sweep.report_metrics.iter().map(|m| format!("{m}_mean")))
    {
        cols.push(m);
    }
    cols.retain(|c| summary.column(c).is_ok());
    let table = summary
        .select(cols.iter().map(String::as_str))
        .map_err(ReportError::table("headline"))?;
    Ok(tables::markdown(&table))
}

fn sensitivity_markdown(sens: &[MetricSensitivity]) -> String {
    let mut md = String::new();
    for m in sens {
        md.push_str(&format!("\n#### `{}`\n\n", m.metric));
        match &m.result {
            Err(reason) => md.push_str(&format!("Skipped: {reason}.\n")),
            Ok(s) => {
                md.push_str(&format!(
                    "Seed noise: {:.1}% of the variance of single runs (removed from the indices); {} seeds.\n\n",
                    100.0 * s.noise_share,
                    s.seeds
                ));
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
    for metric in [
        "recovered",
        "recovery_censored_s",
        "success_rate_after",
        "goodput",
    ] {
        for (d, dim) in sweep.dims.iter().enumerate() {
            if Some(d) == strategy && sweep.dims.len() > 1 {
                continue;
            }
            let what = if metric == "recovered" {
                "share of seeds that recovered".to_string()
            } else {
                format!(
                    "mean `{metric}` [95% CI of the mean, seed noise only], points: range of the point means over the other axes"
                )
            };
            md.push_str(&format!("\n#### `{}` x strategy: {what}\n\n", dim.name));
            md.push_str(&tables::effects_markdown(effects, metric, &dim.name));
        }
    }
    md
}

/// Runs grouped for the time plots: lines are the strategy's levels (or the
/// first axis'), slices are the combinations of the other axes.
struct Slicing {
    line_dim: Option<usize>,
    slices: Vec<Vec<(usize, usize)>>,
    /// run row -> (slice, line)
    of_run: HashMap<usize, (usize, usize)>,
}

fn slicing(sweep: &Sweep) -> (Slicing, usize) {
    let line_dim = sweep
        .strategy_dim()
        .or(if sweep.dims.is_empty() { None } else { Some(0) });
    let ok = sweep.ok();
    // Every combination of the other axes, in grid order; the first
    // MAX_SLICES are drawn.
    let mut keys: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut of_run = HashMap::new();
    for (run, (position, ok)) in sweep.positions.iter().zip(ok).enumerate() {
        let key: Vec<(usize, usize)> = position
            .iter()
            .copied()
            .enumerate()
            .filter(|(d, _)| Some(*d) != line_dim)
            .collect();
        let slice = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            keys.push(key);
            keys.len() - 1
        });
        if *ok && slice < MAX_SLICES {
            of_run.insert(run, (slice, line_dim.map_or(0, |d| position[d])));
        }
    }
    let total = keys.len();
    keys.truncate(MAX_SLICES);
    let slices = keys;
    (
        Slicing {
            line_dim,
            slices,
            of_run,
        },
        total,
    )
}

fn slice_name(sweep: &Sweep, slice: &[(usize, usize)]) -> String {
    if slice.is_empty() {
        return "all runs".to_string();
    }
    sweep.describe_levels(slice.iter().copied(), ", ")
}

/// Per-second success rate and queue length per tier: median over seeds
/// with the interquartile band, one line per strategy, the window shaded.
fn time_plots(
    sweep: &Sweep,
    plot_dir: &Path,
    files: &mut Vec<(String, String)>,
    notes: &mut Vec<String>,
) -> Result<(), ReportError> {
    let (s, total) = slicing(sweep);
    if total > s.slices.len() {
        notes.push(format!(
            "Time plots are drawn for the first {} of {total} combinations of the other axes (in grid order).",
            s.slices.len()
        ));
    }
    let run_ids: HashMap<String, usize> =
        part::column(&sweep.runs, &sweep.dir.join("runs"), "run_id", Column::str)?
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (v.to_string(), i)))
            .collect();
    let mut series_cols = vec!["success_rate".to_string()];
    series_cols.extend(sweep.tiers.iter().map(|t| format!("{t}_queue_len")));
    // values[column][(slice, line, second)] = one value per run
    let mut values: Vec<HashMap<(usize, usize, u32), Vec<f64>>> =
        vec![HashMap::new(); series_cols.len()];
    let series_dir = sweep.dir.join("series");
    let mut wanted = vec!["run_id", "second"];
    wanted.extend(series_cols.iter().map(String::as_str));
    for path in part::list(&series_dir, ".parquet").map_err(IoError::at(&series_dir))? {
        let part = Part::read(&path, Some(&wanted))?;
        let ids = part.str("run_id")?;
        let secs = part.u32("second")?;
        let cols: Vec<Float64Chunked> = series_cols
            .iter()
            .map(|c| part.f64(c))
            .collect::<Result<_, _>>()?;
        for (i, (id, sec)) in ids.iter().zip(secs.iter()).enumerate() {
            let (Some(id), Some(sec)) = (id, sec) else {
                continue;
            };
            let Some(&(slice, line)) = run_ids.get(id).and_then(|r| s.of_run.get(r)) else {
                continue;
            };
            for (k, c) in cols.iter().enumerate() {
                if let Some(v) = c.get(i) {
                    values[k].entry((slice, line, sec)).or_default().push(v);
                }
            }
        }
    }
    let line_labels: Vec<String> = s
        .line_dim
        .map_or(vec!["all".to_string()], |d| sweep.dims[d].labels.clone());
    let window = window_of(sweep);
    for (slice_idx, slice) in s.slices.iter().enumerate() {
        let name = slice_name(sweep, slice);
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
            if bands.is_empty() {
                continue;
            }
            let (title, y_label, y_range, stem) = if col == "success_rate" {
                (
                    "Success rate of requests by arrival second".to_string(),
                    "success rate (share of users)",
                    Some((0.0, 1.0)),
                    format!("success_rate_{slice_idx}"),
                )
            } else {
                let tier = col.trim_end_matches("_queue_len");
                (
                    format!("Queue length at {tier}"),
                    "queue length (requests, end of second)",
                    None,
                    format!("queue_{tier}_{slice_idx}"),
                )
            };
            plots::time_bands(
                &plot_dir.join(&stem),
                &format!("{title} ({name})"),
                "simulated time (s)",
                y_label,
                &bands,
                window,
                y_range,
            )?;
            files.push((format!("{title}, {name}"), stem));
        }
    }
    Ok(())
}

/// The slow window of the first ok run (the report shades it).
fn window_of(sweep: &Sweep) -> Option<(f64, f64)> {
    let row = sweep.ok().iter().position(|o| *o)?;
    let get = |c: &str| match sweep.runs.column(c).ok()?.get(row).ok()? {
        AnyValue::Float64(x) => Some(x),
        _ => None,
    };
    match (get("window_start_s"), get("window_end_s")) {
        (Some(a), Some(b)) if b > a => Some((a, b)),
        _ => None,
    }
}

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
    files: &mut Vec<(String, String)>,
    notes: &mut Vec<String>,
) -> Result<(), ReportError> {
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
    let xy = match (chosen(&options.heatmap_x), chosen(&options.heatmap_y)) {
        (Some(x), Some(y)) => Some((x, y)),
        _ => default_xy,
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
    plots::heatmaps(
        &plot_dir.join("not_recovered"),
        "Probability of not recovering",
        &sweep.dims[x].name,
        &sweep.dims[x].labels,
        &sweep.dims[y].name,
        &sweep.dims[y].labels,
        &panels,
        "P(not recovered)",
    )?;
    files.push((
        "Probability of not recovering".to_string(),
        "not_recovered".to_string(),
    ));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn index_markdown(
    sweep: &Sweep,
    summary: &DataFrame,
    headline: &str,
    sens: &[MetricSensitivity],
    sens_md: &str,
    effects_md: &str,
    plot_files: &[(String, String)],
    plot_notes: &[String],
) -> Result<String, ReportError> {
    let m = &sweep.manifest;
    let mut md = format!("# Sweep `{}`\n\n", m.grid_name);
    md.push_str(&format!(
        "- grid: `{}` (SHA-256 `{}`), scenario `{}`\n- runs: {} planned, {} ok, {} failed; {} events\n- by {} ({}) on {}, {} threads, {} to {} ({})\n\n",
        m.grid_file,
        &m.grid_sha256[..12.min(m.grid_sha256.len())],
        m.scenario,
        m.planned,
        m.ok,
        m.failed,
        m.events_total,
        m.tool,
        m.git_commit,
        m.host,
        m.threads,
        m.started_at,
        m.finished_at.as_deref().unwrap_or("?"),
        m.status,
    ));
    md.push_str("## In short\n\n");
    md.push_str(&plain_words(sweep, sens)?);
    md.push_str("\n## Per point\n\nMeans over seeds (ok runs); P(not recovered) with its Wilson 95% interval, and the rule of three (3/N) where no seed differed (`p_not_recovered_note`). Recovery time is censored: `recovery_censored_s` counts a run that did not recover as the first recovery time it could not observe, so its mean is a lower bound wherever P(not recovered) > 0. Full table with std, 95% interval of the mean over the point's seeds, min and max: `summary.csv` / `summary.parquet`; `<metric>_ci_method` names each interval: Wilson for yes/no metrics (with `<metric>_rule_of_three` when no seed differed), the t-interval clipped to [0, 1] for rates and shares and at 0 for times and counts (clipping never lowers coverage), none when no seed-to-seed variation was observed.\n\n");
    md.push_str(headline);
    let ranked = ranking(sweep, summary, 10)?;
    if !ranked.is_empty() {
        md.push_str("\n## Ranking\n\nThe best points: recovered in the most seeds, then the fastest recovery, the highest goodput, the lowest failed-request median (first 10).\n\n");
        md.push_str(&ranked);
    }
    md.push_str("\n## Sensitivity\n\nVariance-based indices computed on the full-factorial grid itself (an ANOVA decomposition, no extra sampling): `S1` first order, `ST` total (interactions included), with the seed noise removed. `S1_conf` / `ST_conf`: half-widths of 95% bootstrap intervals; seeds are shared by the points, so each resample draws one set of seeds for every point, and the half-width is t(0.975, S-1) x sqrt(S/(S-1)) x the bootstrap std over S seeds; none when no seed varied anything. Every point weighs the same whatever its number of seeds (not every run, as ordinary least squares would). `mu_star`, `sigma`: elementary effects between levels adjacent in value, the values scaled to the axis range; none for categorical axes (strategies, zip groups, unbounded caps), whose levels have no order. A zip group counts as one axis. `recovered` is the yes/no of recovery; `recovery_censored_s` is the censored time. Table: `sensitivity.csv`.\n");
    md.push_str(sens_md);
    md.push_str("\n## Main effects\n\nThe marginal mean of the metric at each level of each axis, per strategy: the mean of the point means over the other axes (every point weighs the same). Two ranges, not to be confused: `ci_low`/`ci_high` is the 95% confidence interval of that mean from seed noise only (t over the shared seeds, clipped to the metric's range; `ci_method`), `spread_min`/`spread_max` the lowest and highest point mean over the other axes at that level (how much they move it, not uncertainty). Table: `main_effects.csv`.\n");
    md.push_str(effects_md);
    // Written by `sweep refine`: the located boundary.
    if let Ok(boundary) = std::fs::read_to_string(sweep.dir.join("analysis").join("boundary.md")) {
        md.push_str("\n## Boundary\n\n");
        md.push_str(&boundary);
        if sweep.dir.join("analysis/plots/boundary.svg").exists() {
            md.push_str("\n![Boundary](plots/boundary.svg)\n");
        }
    }
    md.push_str("\n## Plots\n\n");
    for note in plot_notes {
        md.push_str(&format!("{note}\n\n"));
    }
    for (title, stem) in plot_files {
        md.push_str(&format!("![{title}](plots/{stem}.svg)\n\n"));
    }
    Ok(md)
}

/// Which points never recover, the fastest to recover, and the most
/// influential axis for each metric, in sentences.
fn plain_words(sweep: &Sweep, sens: &[MetricSensitivity]) -> Result<String, ReportError> {
    let mut out = String::new();
    let recovered = sweep.metric("recovered");
    let recovery = sweep.metric("recovery_censored_s");
    if let (Some(rec), Some(time)) = (recovered, recovery) {
        let mut per_cell: HashMap<usize, (usize, usize, Vec<f64>)> = HashMap::new();
        for run in 0..sweep.runs.height() {
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
        let never: Vec<String> = cells
            .iter()
            .filter(|(_, (n, t, _))| n == t)
            .map(|(c, _)| describe(*c))
            .collect();
        if never.is_empty() {
            out.push_str("- Every point recovered in at least one seed.\n");
        } else {
            out.push_str(&format!(
                "- **Never recovered** (no seed): {} of {} points",
                never.len(),
                cells.len()
            ));
            let shown: Vec<String> = never.iter().take(8).map(|d| format!("`{d}`")).collect();
            out.push_str(&format!(
                ": {}{}.\n",
                shown.join(", "),
                if never.len() > 8 { ", ..." } else { "" }
            ));
        }
        let fastest = cells
            .iter()
            .filter(|(_, (n, _, ts))| *n == 0 && !ts.is_empty())
            .map(|(c, (_, _, ts))| (*c, ts.iter().sum::<f64>() / ts.len() as f64))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((c, t)) = fastest {
            out.push_str(&format!("- **Fastest to recover** (every seed): `{}`, {t:.2} s on average after the window.\n", describe(c)));
        }
    }
    for m in sens {
        if let Ok(s) = &m.result
            && let Some(top) = s.axes.iter().max_by(|a, b| a.st.total_cmp(&b.st))
            && top.st > 0.0
        {
            out.push_str(&format!(
                "- `{}` is moved most by **{}** (ST {:.2}, S1 {:.2}); seed noise {:.0}% of its variance.\n",
                m.metric,
                top.axis,
                top.st,
                top.s1,
                100.0 * s.noise_share
            ));
        }
    }
    Ok(out)
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
fn html(md: &str, plot_dir: &Path, plot_files: &[(String, String)]) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html::push_html};
    // The Markdown holds user text (zip labels, axis names and levels):
    // raw HTML in it becomes text (escaped by push_html), and links and
    // images other than relative or http(s) ones become their text. The
    // report's own HTML is added below: the plots, SVG that plotters
    // escapes, in place of their `![..](plots/..svg)` images.
    let mut open_links: Vec<bool> = Vec::new();
    let events = Parser::new_ext(md, Options::ENABLE_TABLES).filter_map(|e| match e {
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
    for (_, stem) in plot_files {
        let tag_start = format!("<img src=\"plots/{stem}.svg\"");
        let Some(start) = body.find(&tag_start) else {
            continue;
        };
        let Some(len) = body[start..].find("/>") else {
            continue;
        };
        let svg = std::fs::read_to_string(plot_dir.join(format!("{stem}.svg"))).unwrap_or_default();
        let svg = svg.find("<svg").map_or("", |i| &svg[i..]);
        body.replace_range(
            start..start + len + 2,
            &format!("<div class=\"plot\">{svg}</div>"),
        );
    }
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>sweep report</title>\n<style>\
         body{{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}}\
         table{{border-collapse:collapse;font-size:90%;margin:1em 0}}td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}\
         th{{background:#f3f3f3}}.plot svg{{max-width:100%;height:auto}}code{{background:#f6f6f6}}\
         </style></head><body>\n{body}</body></html>\n"
    )
}
