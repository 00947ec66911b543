//! The tables of the report: per-point summary, variance-based sensitivity,
//! and main effects. Each is a `DataFrame` (written as Parquet and CSV) and
//! a Markdown rendering.

use crate::error::ReportError;
use crate::load::Sweep;
use crate::sensitivity::{self, Sensitivity};
use crate::stats::{mean, mean_ci95, std_dev, wilson95};
use polars::prelude::*;

/// One of the metrics the report is about: a `runs` column of the whole
/// chain, or one named after a tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportMetric {
    /// A chain-level column (`goodput`).
    Chain(&'static str),
    /// `<last tier><suffix>`: the leaf of the chain.
    Leaf(&'static str),
    /// `<tier><suffix>` for every tier, in chain order.
    EachTier(&'static str),
}

/// The metrics the report is about, in the order of its tables: the one
/// list that both the columns read from `runs` ([`Sweep::load`]) and the
/// summary, sensitivity and main-effect tables ([`main_metrics`]) come from.
/// Recovery time is censored: its indices and means use
/// `recovery_censored_s` (not recovered = the first recovery time the run
/// could not observe), and `recovered` carries the yes/no.
pub const METRICS: &[ReportMetric] = &[
    ReportMetric::Chain("recovered"),
    ReportMetric::Chain("recovery_censored_s"),
    ReportMetric::Chain("success_rate_during"),
    ReportMetric::Chain("success_rate_after"),
    ReportMetric::Leaf("_arrivals_per_user_during"),
    ReportMetric::Chain("goodput"),
    ReportMetric::Chain("wasted_share"),
    ReportMetric::Chain("failed_latency_median_s"),
    ReportMetric::Chain("success_latency_p99_s"),
    ReportMetric::EachTier("_max_queue"),
];

/// [`METRICS`] as column names for a chain of `tiers`.
pub fn metric_names(tiers: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for m in METRICS {
        match *m {
            ReportMetric::Chain(name) => out.push(name.to_string()),
            ReportMetric::Leaf(suffix) => out.extend(tiers.last().map(|t| format!("{t}{suffix}"))),
            ReportMetric::EachTier(suffix) => {
                out.extend(tiers.iter().map(|t| format!("{t}{suffix}")))
            }
        }
    }
    out
}

/// The metrics the report is about: [`METRICS`], then those the grid's
/// `[report]` asks for, each once, those without a column left out.
pub fn main_metrics(sweep: &Sweep) -> Vec<String> {
    let mut m = metric_names(&sweep.tiers);
    for asked in &sweep.report_metrics {
        if !m.contains(asked) {
            m.push(asked.clone());
        }
    }
    m.retain(|name| sweep.runs.column(name).is_ok());
    m
}

/// Rows of each grid cell (point), in grid order.
fn rows_by_cell(sweep: &Sweep) -> Vec<Vec<usize>> {
    let mut cells = vec![Vec::new(); sweep.design.cells()];
    for run in 0..sweep.runs.height() {
        cells[sweep.cell(run)].push(run);
    }
    cells
}

/// One row per point: axis values, run counts, P(not recovered) with its
/// Wilson interval, and per metric mean, std, 95% t-interval, min and max
/// over the point's ok runs.
pub fn summary(sweep: &Sweep, metrics: &[String]) -> Result<DataFrame, ReportError> {
    let err = |source| ReportError::Table {
        what: "summary",
        source,
    };
    let cells: Vec<Vec<usize>> = rows_by_cell(sweep)
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect();
    let first: Vec<IdxSize> = cells.iter().map(|c| c[0] as IdxSize).collect();
    let axis_cols: Vec<String> = sweep.dims.iter().flat_map(|d| d.paths.clone()).collect();
    let mut df = sweep
        .runs
        .select(axis_cols.iter().map(String::as_str))
        .map_err(err)?
        .take(&IdxCa::from_vec("idx".into(), first))
        .map_err(err)?;
    let ok = sweep.ok();
    let n = cells.len();
    let mut cols: Vec<Column> = vec![
        Column::new(
            "runs".into(),
            cells.iter().map(|c| c.len() as u64).collect::<Vec<_>>(),
        ),
        Column::new(
            "failed".into(),
            cells
                .iter()
                .map(|c| c.iter().filter(|r| !ok[**r]).count() as u64)
                .collect::<Vec<_>>(),
        ),
    ];
    if let Some(recovered) = sweep.metric("recovered") {
        let counts: Vec<(u64, u64)> = cells
            .iter()
            .map(|c| {
                let vals: Vec<f64> = c.iter().filter_map(|r| recovered[*r]).collect();
                (
                    vals.iter().filter(|v| **v == 0.0).count() as u64,
                    vals.len() as u64,
                )
            })
            .collect();
        let wilson: Vec<Option<(f64, f64)>> =
            counts.iter().map(|(k, n)| wilson95(*k, *n)).collect();
        cols.push(Column::new(
            "p_not_recovered".into(),
            counts
                .iter()
                .map(|(k, n)| (*n > 0).then(|| *k as f64 / *n as f64))
                .collect::<Vec<_>>(),
        ));
        cols.push(Column::new(
            "p_not_recovered_low".into(),
            wilson.iter().map(|w| w.map(|x| x.0)).collect::<Vec<_>>(),
        ));
        cols.push(Column::new(
            "p_not_recovered_high".into(),
            wilson.iter().map(|w| w.map(|x| x.1)).collect::<Vec<_>>(),
        ));
    }
    for m in metrics {
        let Some(values) = sweep.metric(m) else {
            continue;
        };
        let per_cell: Vec<Vec<f64>> = cells
            .iter()
            .map(|c| c.iter().filter_map(|r| values[*r]).collect())
            .collect();
        let stat = |suffix: &str, f: &dyn Fn(&[f64]) -> Option<f64>| {
            Column::new(
                format!("{m}_{suffix}").into(),
                per_cell.iter().map(|v| f(v)).collect::<Vec<_>>(),
            )
        };
        cols.push(stat("mean", &mean));
        cols.push(stat("std", &std_dev));
        cols.push(stat("ci_low", &|v| mean_ci95(v).map(|c| c.0)));
        cols.push(stat("ci_high", &|v| mean_ci95(v).map(|c| c.1)));
        cols.push(stat("min", &|v| v.iter().copied().reduce(f64::min)));
        cols.push(stat("max", &|v| v.iter().copied().reduce(f64::max)));
    }
    debug_assert!(cols.iter().all(|c| c.len() == n));
    for c in cols {
        df.with_column(c).map_err(err)?;
    }
    Ok(df)
}

/// Sensitivity of one metric, or why there is none.
pub struct MetricSensitivity {
    pub metric: String,
    pub result: Result<Sensitivity, String>,
}

/// Variance-based indices (first and total order, seed noise removed,
/// bootstrap confidence) and elementary effects of every dimension, for each
/// metric. A metric undefined somewhere in the grid (e.g. no failed request
/// to take a latency of) is skipped with the reason.
pub fn sensitivity(sweep: &Sweep, metrics: &[String]) -> Vec<MetricSensitivity> {
    let cells = rows_by_cell(sweep);
    metrics
        .iter()
        .map(|m| {
            let result = match sweep.metric(m) {
                None => Err("no such column".to_string()),
                Some(_) if sweep.dims.is_empty() => Err("the grid has no axis".to_string()),
                Some(values) => {
                    let per_cell: Vec<Vec<(u64, f64)>> = cells.iter().map(|c| c.iter().filter_map(|r| values[*r].map(|v| (sweep.seeds[*r], v))).collect()).collect();
                    match per_cell.iter().position(Vec::is_empty) {
                        Some(c) => Err(format!(
                            "undefined at point {} (no ok run has a value), so the grid is not complete for it",
                            sweep.describe_cell(c)
                        )),
                        None => sensitivity::analyze(&sweep.design, &per_cell, 200, 1),
                    }
                }
            };
            MetricSensitivity { metric: m.clone(), result }
        })
        .collect()
}

pub fn sensitivity_frame(results: &[MetricSensitivity]) -> Result<DataFrame, ReportError> {
    let rows: Vec<(&str, &Sensitivity, &sensitivity::AxisIndices)> = results
        .iter()
        .filter_map(|r| r.result.as_ref().ok().map(|s| (r.metric.as_str(), s)))
        .flat_map(|(m, s)| s.axes.iter().map(move |a| (m, s, a)))
        .collect();
    let f = |name: &str, get: &dyn Fn(&sensitivity::AxisIndices) -> f64| {
        Column::new(
            name.into(),
            rows.iter().map(|(_, _, a)| get(a)).collect::<Vec<_>>(),
        )
    };
    DataFrame::new(
        rows.len(),
        vec![
            Column::new(
                "metric".into(),
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            ),
            Column::new(
                "axis".into(),
                rows.iter().map(|r| r.2.axis.as_str()).collect::<Vec<_>>(),
            ),
            f("S1", &|a| a.s1),
            f("S1_conf", &|a| a.s1_conf),
            f("ST", &|a| a.st),
            f("ST_conf", &|a| a.st_conf),
            f("mu", &|a| a.mu),
            f("mu_star", &|a| a.mu_star),
            f("sigma", &|a| a.sigma),
            Column::new(
                "noise_share".into(),
                rows.iter().map(|r| r.1.noise_share).collect::<Vec<_>>(),
            ),
        ],
    )
    .map_err(ReportError::table("sensitivity"))
}

/// One row per (dimension, level, strategy, metric): the metric's mean and
/// 95% interval over the ok runs at that level (of that strategy, when the
/// grid varies the strategy and the dimension is another one).
pub struct Effect {
    pub dim: String,
    pub level: String,
    pub strategy: Option<String>,
    pub metric: String,
    pub n: usize,
    pub mean: Option<f64>,
    pub ci: Option<(f64, f64)>,
}

pub fn main_effects(sweep: &Sweep, metrics: &[String]) -> Vec<Effect> {
    let strategy = sweep.strategy_dim();
    let strategies = strategy.map_or(0, |s| sweep.dims[s].labels.len());
    let mut out = Vec::new();
    for m in metrics {
        let Some(values) = sweep.metric(m) else {
            continue;
        };
        for (d, dim) in sweep.dims.iter().enumerate() {
            // Split by strategy unless this is the strategy dimension.
            let split = strategy.filter(|s| *s != d);
            let groups = split.map_or(1, |_| strategies);
            // One pass over the runs: values by (level, strategy).
            let mut by_group: Vec<Vec<f64>> = vec![Vec::new(); dim.labels.len() * groups];
            for (run, value) in values.iter().enumerate() {
                if let Some(v) = value {
                    let pos = &sweep.positions[run];
                    by_group[pos[d] * groups + split.map_or(0, |s| pos[s])].push(*v);
                }
            }
            for (l, level) in dim.labels.iter().enumerate() {
                for g in 0..groups {
                    let xs = &by_group[l * groups + g];
                    out.push(Effect {
                        dim: dim.name.clone(),
                        level: level.clone(),
                        strategy: split.map(|s| sweep.dims[s].labels[g].clone()),
                        metric: m.clone(),
                        n: xs.len(),
                        mean: mean(xs),
                        ci: mean_ci95(xs),
                    });
                }
            }
        }
    }
    out
}

pub fn effects_frame(effects: &[Effect]) -> Result<DataFrame, ReportError> {
    DataFrame::new(
        effects.len(),
        vec![
            Column::new(
                "dimension".into(),
                effects.iter().map(|e| e.dim.as_str()).collect::<Vec<_>>(),
            ),
            Column::new(
                "level".into(),
                effects.iter().map(|e| e.level.as_str()).collect::<Vec<_>>(),
            ),
            Column::new(
                "strategy".into(),
                effects
                    .iter()
                    .map(|e| e.strategy.as_deref())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "metric".into(),
                effects
                    .iter()
                    .map(|e| e.metric.as_str())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "n".into(),
                effects.iter().map(|e| e.n as u64).collect::<Vec<_>>(),
            ),
            Column::new(
                "mean".into(),
                effects.iter().map(|e| e.mean).collect::<Vec<_>>(),
            ),
            Column::new(
                "ci_low".into(),
                effects
                    .iter()
                    .map(|e| e.ci.map(|c| c.0))
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "ci_high".into(),
                effects
                    .iter()
                    .map(|e| e.ci.map(|c| c.1))
                    .collect::<Vec<_>>(),
            ),
        ],
    )
    .map_err(ReportError::table("main effects"))
}

/// Main effects of one metric as a level x strategy table (the source's
/// "window length x strategy -> recovery time" falls out of this).
pub fn effects_markdown(effects: &[Effect], metric: &str, dim: &str) -> String {
    let rows: Vec<&Effect> = effects
        .iter()
        .filter(|e| e.metric == metric && e.dim == dim)
        .collect();
    let mut strategies: Vec<Option<&str>> = Vec::new();
    let mut levels: Vec<&str> = Vec::new();
    for e in &rows {
        if !strategies.contains(&e.strategy.as_deref()) {
            strategies.push(e.strategy.as_deref());
        }
        if !levels.contains(&e.level.as_str()) {
            levels.push(&e.level);
        }
    }
    let head: Vec<String> = strategies
        .iter()
        .map(|s| s.unwrap_or("all").to_string())
        .collect();
    let mut md = format!(
        "| {dim} | {} |\n|---|{}\n",
        head.join(" | "),
        "---|".repeat(head.len())
    );
    for level in levels {
        let cells: Vec<String> = strategies
            .iter()
            .map(|s| {
                rows.iter()
                    .find(|e| e.level == level && e.strategy.as_deref() == *s)
                    .map_or("-".to_string(), |e| cell(metric, e))
            })
            .collect();
        md.push_str(&format!("| {level} | {} |\n", cells.join(" | ")));
    }
    md
}

fn cell(metric: &str, e: &Effect) -> String {
    match (metric, e.mean) {
        (_, None) => "-".to_string(),
        ("recovered", Some(0.0)) => "never".to_string(),
        ("recovered", Some(p)) => format!("{:.0}%", p * 100.0),
        (_, Some(m)) => match e.ci {
            Some((lo, hi)) if hi - lo > 1e-9 => format!("{m:.3} [{lo:.3}, {hi:.3}]"),
            _ => format!("{m:.3}"),
        },
    }
}

/// A Markdown table; floats with 3 decimals, nulls as `-`.
pub fn markdown(df: &DataFrame) -> String {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let mut out = format!(
        "| {} |\n|{}|\n",
        names.join(" | "),
        names.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for i in 0..df.height() {
        let cells: Vec<String> = df
            .columns()
            .iter()
            .map(|c| match c.get(i) {
                Ok(AnyValue::Null) | Err(_) => "-".to_string(),
                Ok(AnyValue::Float64(x)) if x.is_nan() => "-".to_string(),
                Ok(AnyValue::Float64(x)) => format!("{x:.3}"),
                Ok(AnyValue::String(s)) => s.to_string(),
                Ok(v) => v.to_string(),
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}
