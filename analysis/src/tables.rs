//! The tables of the report: per-point summary, variance-based sensitivity,
//! and main effects. Each is a `DataFrame` (written as Parquet and CSV) and
//! a Markdown rendering.

use crate::error::ReportError;
use crate::load::Sweep;
use crate::sensitivity::{self, Sensitivity};
use crate::stats::{self, Support, mean, std_dev, wilson95};
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

/// The support of metric `name` (a flag column is a yes/no).
pub fn support(sweep: &Sweep, name: &str) -> Support {
    let flag = sweep
        .runs
        .column(name)
        .is_ok_and(|c| c.dtype() == &DataType::Boolean);
    Support::of_metric(name, flag)
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
/// Wilson interval (and the exact bound on the outcome never seen when no
/// seed differed), and per
/// metric mean, std, a 95% interval of the mean by the metric's support
/// (`{m}_ci_method` names it: Wilson for yes/no, the t-interval clipped to
/// [0, 1] or at 0 otherwise, none when no seed differed), min, max and
/// count (the runs with a value) over the point's ok runs; and `recovery_s_mean`, the mean recovery time as
/// text ([`recovery_text`]: `never`, `>= X (k of n censored)` or the mean),
/// as the report's tables show it.
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
            cells.iter().map(|c| c.len() as i64).collect::<Vec<_>>(),
        ),
        Column::new(
            "failed".into(),
            cells
                .iter()
                .map(|c| c.iter().filter(|r| !ok[**r]).count() as i64)
                .collect::<Vec<_>>(),
        ),
    ];
    // Per point, the runs that did not recover of those with a verdict.
    let verdicts: Option<Vec<(u64, u64)>> = sweep.metric("recovered").map(|recovered| {
        (cells.iter())
            .map(|c| {
                let vals: Vec<f64> = c.iter().filter_map(|r| recovered[*r]).collect();
                (
                    vals.iter().filter(|v| **v == 0.0).count() as u64,
                    vals.len() as u64,
                )
            })
            .collect()
    });
    if let Some(counts) = &verdicts {
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
        cols.push(Column::new(
            "p_not_recovered_note".into(),
            counts
                .iter()
                .map(|&(k, n)| unseen_note(k, n, "not recovered", "recovered"))
                .collect::<Vec<_>>(),
        ));
        // The counts behind the rate: failed runs and those that cannot
        // show recovery have no verdict.
        cols.push(Column::new(
            "runs_with_verdict".into(),
            counts.iter().map(|(_, n)| *n as i64).collect::<Vec<_>>(),
        ));
        cols.push(Column::new(
            "runs_not_recovered".into(),
            counts.iter().map(|(k, _)| *k as i64).collect::<Vec<_>>(),
        ));
    }
    // `recovery_s` (asked for, or read by `[report] prim`) is summarised by
    // `recovery_censored_s`'s `recovery_s_mean`: its own columns, over the
    // runs that recovered, would hide those that did not (and take that
    // name).
    for m in metrics.iter().filter(|m| *m != "recovery_s") {
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
        if m == "recovery_censored_s" {
            // The mean recovery time as a person reads it, as the Markdown
            // tables show it: the censored mean reads like a recovery time
            // where runs did not recover.
            cols.push(Column::new(
                "recovery_s_mean".into(),
                (per_cell.iter().enumerate())
                    .map(|(i, v)| {
                        let censored = verdicts
                            .as_ref()
                            .map(|c| (c[i].0 as usize, c[i].1 as usize));
                        recovery_text(mean(v), censored)
                    })
                    .collect::<Vec<_>>(),
            ));
        }
        let support = support(sweep, m);
        let ci: Vec<Option<stats::Ci95>> =
            per_cell.iter().map(|v| stats::ci95(v, support)).collect();
        let bound = |suffix: &str, f: fn((f64, f64)) -> f64| {
            Column::new(
                format!("{m}_{suffix}").into(),
                ci.iter()
                    .map(|c| c.as_ref().and_then(|c| c.bounds).map(f))
                    .collect::<Vec<_>>(),
            )
        };
        cols.push(stat("mean", &mean));
        cols.push(stat("std", &std_dev));
        cols.push(bound("ci_low", |b| b.0));
        cols.push(bound("ci_high", |b| b.1));
        cols.push(Column::new(
            format!("{m}_ci_method").into(),
            ci.iter()
                .map(|c| c.as_ref().map(|c| c.method.clone()))
                .collect::<Vec<_>>(),
        ));
        if support == Support::YesNo {
            cols.push(Column::new(
                format!("{m}_unseen_high").into(),
                ci.iter()
                    .map(|c| c.as_ref().and_then(|c| c.unseen_high))
                    .collect::<Vec<_>>(),
            ));
        }
        cols.push(stat("min", &|v| v.iter().copied().reduce(f64::min)));
        cols.push(stat("max", &|v| v.iter().copied().reduce(f64::max)));
        // The runs behind the mean: a metric undefined in some runs (a
        // failed-latency median where no user failed) is a mean of fewer.
        cols.push(Column::new(
            format!("{m}_count").into(),
            per_cell.iter().map(|v| v.len() as i64).collect::<Vec<_>>(),
        ));
    }
    debug_assert!(cols.iter().all(|c| c.len() == n));
    for c in cols {
        df.with_column(c).map_err(err)?;
    }
    Ok(df)
}

/// When `k` of `n` seeds had the outcome and none or all did: the exact
/// 95% bound on the rate of the outcome never seen.
fn unseen_note(k: u64, n: u64, yes: &str, no: &str) -> Option<String> {
    if n == 0 || (k != 0 && k != n) {
        return None;
    }
    let (seen, unseen) = if k == 0 { (no, yes) } else { (yes, no) };
    Some(format!(
        "{} in all {n} seeds: P({unseen}) < {:.3} (exact one-sided 95% bound, 1 - 0.05^(1/{n}))",
        seen,
        stats::unseen_high(n as usize)
    ))
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
                        None => sensitivity::analyze(&sweep.design, &per_cell),
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
    // NaN (no confidence, no elementary effect) is written as null.
    let f = |name: &str, get: &dyn Fn(&sensitivity::AxisIndices) -> f64| {
        Column::new(
            name.into(),
            rows.iter()
                .map(|(_, _, a)| Some(get(a)).filter(|x| !x.is_nan()))
                .collect::<Vec<_>>(),
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
                // Null where it cannot be measured (one seed).
                (rows.iter())
                    .map(|r| Some(r.1.noise_share).filter(|n| !n.is_nan()))
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "seeds".into(),
                rows.iter().map(|r| r.1.seeds as i64).collect::<Vec<_>>(),
            ),
            Column::new(
                "conf_note".into(),
                rows.iter()
                    .map(|r| r.1.conf_note.as_deref())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "ee_note".into(),
                rows.iter()
                    .map(|r| r.2.ee_note.as_deref())
                    .collect::<Vec<_>>(),
            ),
        ],
    )
    .map_err(ReportError::table("sensitivity"))
}

/// One row per (dimension, level, strategy, metric): the marginal mean of
/// the metric at that level (of that strategy, when the grid varies the
/// strategy and the dimension is another one) with two different ranges:
///
/// * `ci`: the 95% confidence interval of the marginal mean, from seed
///   noise only. The marginal mean is the mean of the point means (every
///   point weighs the same, as in the indices, whatever its seed count);
///   seeds are shared by the points, so its standard error is taken over
///   seeds (each seed's summed deviations from the point means, a
///   cluster-by-seed estimate: with every seed at every point it is the
///   t-interval of the per-seed averages), with t(0.975, S − 1), S seeds,
///   clipped to the metric's support.
/// * `spread`: the lowest and highest point mean over the other axes at
///   that level: how much the other axes move the metric, not uncertainty.
pub struct Effect {
    pub dim: String,
    pub level: String,
    pub strategy: Option<String>,
    pub metric: String,
    /// Runs with a value.
    pub n: usize,
    /// Points with a value.
    pub points: usize,
    pub mean: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// How `ci` was computed, or why there is none.
    pub ci_method: Option<String>,
    pub spread: Option<(f64, f64)>,
    /// For the censored recovery time: (runs that did not recover, runs
    /// with a value); their time is a lower bound.
    pub censored: Option<(usize, usize)>,
}

/// The mean recovery time of `n` runs of which `k` did not recover
/// (`censored` = `(k, n)`; their time is censored), as a person reads it:
/// `never` when none recovered, `>= X (k of n censored)` (a lower bound)
/// when some did not, the mean otherwise.
pub fn recovery_text(mean: Option<f64>, censored: Option<(usize, usize)>) -> Option<String> {
    let m = mean?;
    Some(match censored {
        Some((k, n)) if n > 0 && k >= n => "never".to_string(),
        Some((k, n)) if k > 0 => format!(">= {m:.3} ({k} of {n} censored)"),
        _ => format!("{m:.3}"),
    })
}

/// The marginal mean over `cells` (each a point's `(seed, value)`s, none
/// empty), its 95% interval over seeds and the range of the point means.
fn marginal(cells: &[Vec<(u64, f64)>], support: Support) -> Effect {
    let points = cells.len();
    let n = cells.iter().map(Vec::len).sum();
    let mut effect = Effect {
        dim: String::new(),
        level: String::new(),
        strategy: None,
        metric: String::new(),
        n,
        points,
        mean: None,
        ci: None,
        ci_method: None,
        spread: None,
        censored: None,
    };
    if points == 0 {
        return effect;
    }
    let means: Vec<f64> = cells
        .iter()
        .map(|c| c.iter().map(|x| x.1).sum::<f64>() / c.len() as f64)
        .collect();
    let m = means.iter().sum::<f64>() / points as f64;
    effect.mean = Some(m);
    effect.spread = Some((
        means.iter().copied().fold(f64::INFINITY, f64::min),
        means.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ));
    // w_s: seed s's share of the deviation of the marginal mean.
    let mut w: Vec<(u64, f64)> = Vec::new();
    for (c, mc) in cells.iter().zip(&means) {
        for &(seed, y) in c {
            let d = (y - mc) / (c.len() as f64 * points as f64);
            match w.iter_mut().find(|(s, _)| *s == seed) {
                Some(e) => e.1 += d,
                None => w.push((seed, d)),
            }
        }
    }
    let seeds = w.len();
    let ss: f64 = w.iter().map(|(_, d)| d * d).sum();
    let varied = cells.iter().any(|c| c.iter().any(|x| x.1 != c[0].1));
    effect.ci_method = Some(if seeds < 2 {
        "one seed: no interval".to_string()
    } else if !varied {
        let note = stats::no_variation(seeds);
        if support == Support::YesNo {
            format!(
                "{note}: rate of the outcome not seen < {:.3} per point (exact one-sided 95% bound, 1 - 0.05^(1/{seeds}))",
                stats::unseen_high(seeds)
            )
        } else {
            note
        }
    } else {
        let se = (ss * seeds as f64 / (seeds - 1) as f64).sqrt();
        let clip = if support == Support::YesNo {
            Support::Unit
        } else {
            support
        };
        effect.ci = stats::t_interval(m, se, seeds - 1, clip);
        match clip {
            Support::Real => "t over shared seeds".to_string(),
            Support::NonNegative | Support::Time => "t over shared seeds, clipped at 0".to_string(),
            _ => "t over shared seeds, clipped to [0, 1]".to_string(),
        }
    });
    effect
}

pub fn main_effects(sweep: &Sweep, metrics: &[String]) -> Vec<Effect> {
    let strategy = sweep.strategy_dim();
    let strategies = strategy.map_or(0, |s| sweep.dims[s].labels.len());
    let by_cell = rows_by_cell(sweep);
    let mut out = Vec::new();
    for m in metrics {
        // A metric no run has (recovery without a trigger) has no effects.
        let Some(values) = sweep.metric(m).filter(|v| v.iter().any(Option::is_some)) else {
            continue;
        };
        let support = support(sweep, m);
        // The censored recovery time: each point's (not recovered, runs).
        let recovered = sweep
            .metric("recovered")
            .filter(|_| m == "recovery_censored_s");
        let censored_of: Vec<(usize, usize)> = by_cell
            .iter()
            .map(|rows| {
                let rec = recovered.as_ref();
                let with_value = rows.iter().filter(|r| values[**r].is_some());
                with_value.fold((0, 0), |(k, n), r| {
                    let not = rec.is_some_and(|v| v[*r] == Some(0.0));
                    (k + not as usize, n + 1)
                })
            })
            .collect();
        // Each point's (seed, value)s.
        let cells: Vec<Vec<(u64, f64)>> = by_cell
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| values[*r].map(|v| (sweep.seeds[*r], v)))
                    .collect()
            })
            .collect();
        for (d, dim) in sweep.dims.iter().enumerate() {
            // Split by strategy unless this is the strategy dimension.
            let split = strategy.filter(|s| *s != d);
            let groups = split.map_or(1, |_| strategies);
            // The points of each (level, strategy).
            let mut by_group: Vec<Vec<Vec<(u64, f64)>>> =
                vec![Vec::new(); dim.labels.len() * groups];
            let mut censored = vec![(0usize, 0usize); dim.labels.len() * groups];
            for (c, cell) in cells.iter().enumerate() {
                if cell.is_empty() {
                    continue;
                }
                let pos = sweep.design.positions(c);
                let g = pos[d] * groups + split.map_or(0, |s| pos[s]);
                by_group[g].push(cell.clone());
                censored[g].0 += censored_of[c].0;
                censored[g].1 += censored_of[c].1;
            }
            for (l, level) in dim.labels.iter().enumerate() {
                for g in 0..groups {
                    let mut e = marginal(&by_group[l * groups + g], support);
                    e.dim = dim.name.clone();
                    e.level = level.clone();
                    e.strategy = split.map(|s| sweep.dims[s].labels[g].clone());
                    e.metric = m.clone();
                    e.censored = recovered.is_some().then_some(censored[l * groups + g]);
                    out.push(e);
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
                effects.iter().map(|e| e.n as i64).collect::<Vec<_>>(),
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
            Column::new(
                "ci_method".into(),
                effects
                    .iter()
                    .map(|e| e.ci_method.as_deref())
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "points".into(),
                effects.iter().map(|e| e.points as i64).collect::<Vec<_>>(),
            ),
            Column::new(
                "spread_min".into(),
                effects
                    .iter()
                    .map(|e| e.spread.map(|c| c.0))
                    .collect::<Vec<_>>(),
            ),
            Column::new(
                "spread_max".into(),
                effects
                    .iter()
                    .map(|e| e.spread.map(|c| c.1))
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
        .map(|s| markdown_text(s.unwrap_or("all")))
        .collect();
    let mut md = format!(
        "| {dim} | {} |\n|---|{}\n",
        head.join(" | "),
        "---|".repeat(head.len())
    );
    // Every level of a complete grid has the same points and runs; a level
    // with fewer (its runs failed, or the metric is undefined there) is a
    // mean over other points than its neighbours', and says so.
    let full_points = rows.iter().map(|e| e.points).max().unwrap_or(0);
    let full_runs = rows.iter().map(|e| e.n).max().unwrap_or(0);
    for level in levels {
        let cells: Vec<String> = strategies
            .iter()
            .map(|s| {
                rows.iter()
                    .find(|e| e.level == level && e.strategy.as_deref() == *s)
                    .map_or("-".to_string(), |e| {
                        let text = cell(metric, e);
                        if e.mean.is_none() {
                            text
                        } else if e.points < full_points {
                            format!("{text} ({} of {full_points} points)", e.points)
                        } else if e.n < full_runs {
                            format!("{text} ({} of {full_runs} runs)", e.n)
                        } else {
                            text
                        }
                    })
            })
            .collect();
        let level = markdown_text(level);
        md.push_str(&format!("| {level} | {} |\n", cells.join(" | ")));
    }
    md
}

fn cell(metric: &str, e: &Effect) -> String {
    match (metric, e.mean) {
        (_, None) => "-".to_string(),
        // A share, 0% included: `never` is for a recovery time that did
        // not happen.
        ("recovered", Some(p)) => format!("{:.0}%", p * 100.0),
        (_, Some(m)) if e.censored.is_some_and(|(k, _)| k > 0) => {
            recovery_text(Some(m), e.censored).unwrap_or_default()
        }
        (_, Some(m)) => {
            let ci = match (e.ci, e.ci_method.as_deref()) {
                (Some((lo, hi)), _) => format!("{m:.3} [{lo:.3}, {hi:.3}]"),
                (None, Some(why)) if why.starts_with("no seed-to-seed") => {
                    format!("{m:.3} [no seed variation]")
                }
                _ => format!("{m:.3}"),
            };
            match e.spread {
                Some((lo, hi)) if e.points > 1 && hi > lo => {
                    format!("{ci}, points {lo:.3} to {hi:.3}")
                }
                _ => ci,
            }
        }
    }
}

/// A user's text (a level, a strategy's name) as Markdown that shows it
/// as written: the characters Markdown reads as links, emphasis, code
/// spans, HTML or escapes are escaped (an underscore only where it can
/// open or close emphasis, so that `svc_b` stays as it reads).
pub fn markdown_text(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let escaped = match c {
            '\\' | '[' | ']' | '*' | '<' | '&' | '`' => true,
            '_' => !(word(i.checked_sub(1)) && word(Some(i + 1))),
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(*c);
    }
    out
}

/// `text` as a Markdown code span, whatever backticks it holds: fenced by
/// one backtick more than its longest run of them, and padded with a space
/// inside where it begins or ends with one (CommonMark's rule).
pub fn code_span(text: &str) -> String {
    let longest = (text.split(|c| c != '`')).map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A Markdown table; floats with 3 decimals, nulls as `-`, text as
/// written ([`markdown_text`]).
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
                Ok(AnyValue::String(s)) => markdown_text(s),
                Ok(v) => markdown_text(&v.to_string()),
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::markdown_text;
    use pulldown_cmark::{Event, Options, Parser};

    /// What a Markdown reader shows of `md`: its text, no markup.
    fn shown(md: &str) -> (String, usize) {
        let mut text = String::new();
        let mut markup = 0;
        for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
            match e {
                Event::Text(t) => text.push_str(&t),
                Event::Start(pulldown_cmark::Tag::Paragraph)
                | Event::End(pulldown_cmark::TagEnd::Paragraph) => {}
                _ => markup += 1,
            }
        }
        (text, markup)
    }

    /// A user's text reads as written: no link, emphasis, code span, HTML or entity
    /// is made of it, and an underscore inside a word is left alone.
    #[test]
    fn a_user_s_text_reads_as_written() {
        for label in [
            "x]y",
            "[a](b)",
            "![a](b)",
            "*fast* retry",
            "a*b*c",
            "_slow_",
            "back\\slash \\*",
            "<b>bold</b>",
            "a &amp; b",
            "deadline_budget",
            "30 s, cap 10",
            "a `code` span",
        ] {
            assert_eq!(
                shown(&markdown_text(label)),
                (label.to_string(), 0),
                "{label}"
            );
        }
        assert_eq!(markdown_text("deadline_budget"), "deadline_budget");
        assert_eq!(markdown_text("_slow_"), "\\_slow\\_");
    }
}
